"""The conformance kit of Ember's ``mp`` slot: a pytest plugin, enabled explicitly.

    python -m pytest -p ember_mp.conformance [--mp-provider=MODULE] [--mp-xfail=FILE]

Run from any directory: the plugin adds one aggregate test class, ``TestMPConformance``, to
whatever else pytest collects there. Its tests check what makes an implementation a drop-in
``ember.multiprocessing``: Python's multiprocessing API, tensors sent through its queues
arriving with their values, views and offsets and sharing memory with the sender (under
fork and spawn), ``Tensor.share_memory_`` in place, the sharing strategies, the refusal of
non-leaf tensors that require grad, ``spawn`` with error propagation, and ``all_reduce`` /
``broadcast`` over a ``ProcessGroup``.

``--mp-provider=MODULE``: the implementation under test, an importable module exposing
the interface below and ``INTERFACE_VERSION`` (default: ``ember_mp``). Importing it must
install the tensor reducers and the core's memory sharer.

``--mp-xfail=FILE``: expected failures, one ``<test id> : <reason>`` a line (see
``ember_tensor.conformance_kit``).
"""

from __future__ import annotations

import importlib
import multiprocessing
import pickle

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor.conformance_kit import define_kit

INTERFACE_VERSION = 1

INTERFACE_NAMES = tuple(multiprocessing.__all__) + (
    "get_sharing_strategy", "set_sharing_strategy", "get_all_sharing_strategies", "spawn",
    "start_processes", "ProcessRaisedException", "ProcessExitedException", "ProcessGroup",
    "ReduceOp", "init_process_group", "all_reduce", "broadcast", "barrier",
)

# the pytest plugin: its hooks come from ember_tensor.conformance_kit
_KIT = define_kit(globals(), component="mp", class_name="TestMPConformance",
                  default_provider="ember_mp")


# --------------------------------------------------------------------------------------
# What the child processes run (module level: importable under every start method)


def _double_and_echo(provider_name, q_in, q_out) -> None:
    importlib.import_module(provider_name)
    while (t := q_in.get()) is not None:
        t.mul_(2)
        q_out.put(t)


def _raise_in_one(i) -> None:
    if i == 1:
        raise KeyError(f"conformance failure in {i}")


def _collectives(rank, provider_name, group, out) -> None:
    mp = importlib.import_module(provider_name)
    mp.init_process_group(group, rank)
    t = et.full((5,), float(rank + 1))
    mp.all_reduce(t)
    b = et.full((3,), float(rank))
    mp.broadcast(b, 1)
    out.put((rank, t.tolist(), b.tolist()))


# --------------------------------------------------------------------------------------
# The aggregate test class


class TestMPConformance:
    """What an ``mp`` provider must do. ``self.mp`` is the provider under test."""

    @pytest.fixture(autouse=True)
    def _provider(self, request: pytest.FixtureRequest):
        self.mp = request.config.stash[_KIT].provider

    @pytest.mark.parametrize("name", INTERFACE_NAMES)
    def test_interface_name(self, name: str) -> None:
        assert hasattr(self.mp, name), f"the provider has no {name!r}"

    def test_interface_version(self) -> None:
        assert self.mp.INTERFACE_VERSION == INTERFACE_VERSION

    def test_share_memory_in_place(self) -> None:
        t = et.arange(6.0)
        view = t[2:4]
        assert t.share_memory_() is t and t.is_shared() and view.is_shared()
        view.fill_(9.0)
        assert t.tolist() == [0.0, 1.0, 9.0, 9.0, 4.0, 5.0]

    def test_sharing_strategies(self) -> None:
        strategies = self.mp.get_all_sharing_strategies()
        assert {"file_descriptor", "file_system"} <= set(strategies)
        assert self.mp.get_sharing_strategy() in strategies
        with pytest.raises(ValueError):
            self.mp.set_sharing_strategy("no such strategy")

    @pytest.mark.parametrize("method", ["fork", "spawn"])
    def test_tensors_travel_through_shared_memory(self, method: str) -> None:
        ctx = self.mp.get_context(method)
        q_in, q_out = ctx.Queue(), ctx.Queue()
        child = ctx.Process(target=_double_and_echo, args=(self.mp.__name__, q_in, q_out))
        child.start()
        try:
            base = et.arange(12.0).reshape(3, 4)
            view = base[1:, 1::2]
            q_in.put(view)
            back = q_out.get(timeout=120)
            assert tuple(back.shape) == (2, 2) and back.stride() == view.stride()
            assert back.storage_offset() == view.storage_offset()
            np.testing.assert_array_equal(back.numpy(), [[10.0, 14.0], [18.0, 22.0]])
            # the child's write happened in the sender's memory
            np.testing.assert_array_equal(base.numpy()[1:, 1::2], [[10.0, 14.0], [18.0, 22.0]])
            back[0, 0] = -1.0
            assert base[1, 1].item() == -1.0
        finally:
            q_in.put(None)
            child.join(60)
        assert child.exitcode == 0

    def test_non_leaf_requiring_grad_is_refused(self) -> None:
        pytest.importorskip("ember_autograd")
        y = et.ones(2, requires_grad=True) * 2
        with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf"):
            pickle.dumps(y)

    def test_spawn_propagates_the_error(self) -> None:
        with pytest.raises(self.mp.ProcessRaisedException,
                           match="KeyError: 'conformance failure in 1'"):
            self.mp.spawn(_raise_in_one, nprocs=2)

    def test_all_reduce_and_broadcast(self) -> None:
        ctx = self.mp.get_context("spawn")
        group = self.mp.ProcessGroup(2, ctx=ctx)
        out = ctx.Queue()
        procs = [ctx.Process(target=_collectives, args=(r, self.mp.__name__, group, out))
                 for r in range(2)]
        for p in procs:
            p.start()
        got = sorted(out.get(timeout=120) for _ in procs)
        for p in procs:
            p.join(60)
        assert got == [(0, [3.0] * 5, [1.0] * 3), (1, [3.0] * 5, [1.0] * 3)]
