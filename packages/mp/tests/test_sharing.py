"""Tensors sent between processes through shared memory, under every start method and both
sharing strategies: values, views, offsets, strides, dtypes, containers, writes seen on
both sides, and no copy for a storage sent again."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

import ember_mp as mp
import ember_tensor as et
import mp_helpers

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
          "uint8", "bool"]


def values(t):
    """A tensor's values as float64 NumPy (bfloat16 has no NumPy dtype)."""
    return t.to(et.float64).numpy() if t.dtype != et.bool else t.numpy()


class Echo:
    """A child process that sends back what it receives."""

    def __init__(self, method: str, target=mp_helpers.echo):
        ctx = mp.get_context(method)
        self.q_in, self.q_out = ctx.Queue(), ctx.Queue()
        self.proc = ctx.Process(target=target, args=(self.q_in, self.q_out))
        self.proc.start()

    def __call__(self, item, timeout=60):
        self.q_in.put(item)
        return self.q_out.get(timeout=timeout)

    def close(self):
        self.q_in.put(None)
        self.proc.join(30)
        assert self.proc.exitcode == 0


@pytest.fixture(scope="module", params=mp_helpers.START_METHODS)
def echo(request):
    e = Echo(request.param)
    yield e
    e.close()


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_dtype(echo, strategy, dtype):
    rng = np.random.default_rng(0)
    t = et.from_numpy(rng.standard_normal((3, 5)) * 50).to(getattr(et, dtype))
    back = echo(t)
    assert back.dtype == t.dtype and tuple(back.shape) == (3, 5)
    np.testing.assert_array_equal(values(back), values(t))
    assert t.is_shared() and back.is_shared()


def test_views_offsets_and_strides_survive(echo, strategy):
    base = et.arange(60.0).reshape(6, 10)
    cases = {"row view": base[2], "offset slice": base[1:4, 3:9],
             "strided": base[::2, 1::3], "transposed": base.t(), "0-d": base[5, 7],
             "expanded": et.arange(3.0).reshape(3, 1).expand(3, 4)}
    for name, view in cases.items():
        back = echo(view)
        assert tuple(back.shape) == tuple(view.shape), name
        assert back.stride() == view.stride(), name
        assert back.storage_offset() == view.storage_offset(), name
        np.testing.assert_array_equal(back.numpy(), view.numpy(), err_msg=name)


def test_zero_size_and_nested_containers(echo, strategy):
    a, b = et.zeros(0, 3), et.ones(2, dtype=et.int64)
    back = echo({"empty": a, "list": [b, (b * 2, "text")], "n": 3})
    assert tuple(back["empty"].shape) == (0, 3) and back["empty"].dtype == et.float32
    assert back["list"][0].tolist() == [1, 1] and back["list"][1][0].tolist() == [2, 2]
    assert back["list"][1][1] == "text" and back["n"] == 3


@pytest.mark.parametrize("method", mp_helpers.START_METHODS)
def test_writes_are_seen_by_both_processes(method, strategy):
    child = Echo(method, target=mp_helpers.double_in_place)
    try:
        t = et.arange(10.0)
        view = t[2:6]
        assert child(view) == "done"
        # the child's write went into the sender's own memory, views included
        np.testing.assert_array_equal(t.numpy(), [0, 1, 4, 6, 8, 10, 6, 7, 8, 9])
        assert child(t) == "done"
        np.testing.assert_array_equal(view.numpy(), [8, 12, 16, 20])
    finally:
        child.close()


def test_and_back_into_the_sender(echo, strategy):
    t = et.zeros(4)
    back = echo(t)
    back[1] = 7.0  # the received copy maps the same memory as the original
    assert t[1].item() == 7.0


def test_the_same_storage_sent_twice_is_not_copied_again(echo, strategy):
    t = et.arange(1000.0)
    echo(t)
    record, ptr = t._storage_record, t._storage_data_ptr()
    before = mp_helpers.shm_segments(os.getpid())
    echo(t[10:20])
    echo(t)
    assert t._storage_record is record and t._storage_data_ptr() == ptr
    assert mp_helpers.shm_segments(os.getpid()) <= before  # no new segment


def test_share_memory_in_place():
    t = et.arange(6.0).reshape(2, 3)
    view = t[1]
    assert not t.is_shared()
    assert t.share_memory_() is t
    assert t.is_shared() and view.is_shared()
    view.add_(10)
    np.testing.assert_array_equal(t.numpy(), [[0, 1, 2], [13, 14, 15]])
    ptr = t._storage_data_ptr()
    t.share_memory_()  # already shared: nothing moves
    assert t._storage_data_ptr() == ptr


def test_module_share_memory_keeps_parameter_objects():
    nn = pytest.importorskip("ember_nn")
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    model(et.randn(5, 3)).sum().backward()
    params = list(model.parameters())
    assert model.share_memory() is model
    assert [p is q for p, q in zip(params, model.parameters())] == [True] * len(params)
    assert all(p.is_shared() and p.grad.is_shared() for p in model.parameters())
    assert all(b.is_shared() for b in model.buffers())


def test_non_leaf_requiring_grad_is_refused():
    pytest.importorskip("ember_autograd")
    x = et.ones(3, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        pickle.dumps(y)
    q = mp.SimpleQueue()
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        q.put(y)
    q.put(x)  # a leaf goes, requires_grad and all
    got = q.get()
    assert got.requires_grad and got.tolist() == [1.0, 1.0, 1.0]


def test_sharing_strategy_choice():
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    assert mp.get_sharing_strategy() == "file_descriptor"
    with pytest.raises(ValueError, match="unknown strategy 'shm'"):
        mp.set_sharing_strategy("shm")


def test_same_api_as_multiprocessing():
    import multiprocessing

    for name in multiprocessing.__all__:
        assert getattr(mp, name) is getattr(multiprocessing, name), name
    assert {"spawn", "all_reduce", "set_sharing_strategy"} <= set(mp.__all__)


def test_core_without_a_sharer_says_what_to_install(monkeypatch):
    monkeypatch.setattr(et, "_memory_sharer", None)
    with pytest.raises(RuntimeError, match=r"share_memory_: no memory sharer is installed; "
                                           r"import ember.multiprocessing"):
        et.ones(2).share_memory_()
