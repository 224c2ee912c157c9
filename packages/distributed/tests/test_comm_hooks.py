"""Futures (``Work.get_future``) and DistributedDataParallel's communication hooks across
real processes: PyTorch's default hooks give DDP's averaged gradients (the compressing ones
to their precision), a custom hook's result is what the gradients become."""

from __future__ import annotations

import numpy as np
import pytest

from ember_distributed._testing import describe, run_ranks
from ember_distributed.futures import Future

pytest.importorskip("mpi4py")


def test_future_then_chains_values_and_errors():
    f = Future()
    seen = []
    f.add_done_callback(lambda fut: seen.append(fut.value()))
    doubled = f.then(lambda fut: fut.value() * 2)
    failed = f.then(lambda fut: 1 / 0)
    assert not f.done()
    with pytest.raises(RuntimeError, match="not completed"):
        f.value()
    f.set_result(21)
    assert f.done() and seen == [21] and doubled.wait() == 42
    with pytest.raises(ZeroDivisionError):
        failed.wait()
    with pytest.raises(RuntimeError, match="only be marked completed once"):
        f.set_result(1)
    late = f.then(lambda fut: fut.value() + 1)  # on a completed future: at once
    assert late.done() and late.value() == 22
    g = Future()
    g.set_exception(ValueError("boom"))
    with pytest.raises(ValueError, match="boom"):
        g.then(lambda fut: fut.value()).wait()


BODY = """
import ember_autograd, ember_nn as nn
from ember_distributed.parallel import DistributedDataParallel as DDP
from ember_distributed.algorithms.ddp_comm_hooks import default_hooks
dist.init_process_group("gloo")
out = {}
w = dist.all_reduce(et.full((2,), float(rank + 1)), async_op=True)
fut = w.get_future()
out["future"] = [t.tolist() for t in fut.wait()]
out["then"] = fut.then(lambda f: f.value()[0].sum().item()).wait()
x = et.tensor(np.arange(12.0).reshape(4, 3) * (rank + 1), dtype=et.float32)

def grads(hook=None, state=None):
    et.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    ddp = DDP(model, bucket_cap_mb=0.00005)  # several buckets
    if hook is not None:
        ddp.register_comm_hook(state, hook)
    ddp(x).pow(2).sum().backward()
    return [p.grad.tolist() for p in model.parameters()], ddp

out["plain"], _ = grads()
out["allreduce"], _ = grads(default_hooks.allreduce_hook)
out["fp16"], _ = grads(default_hooks.fp16_compress_hook)
out["bf16"], _ = grads(default_hooks.bf16_compress_hook)
seen = []
def summed(state, bucket):
    seen.append((bucket.index(), bucket.is_last(), len(bucket.parameters()),
                 sum(g.numel() for g in bucket.gradients()) == bucket.buffer().numel()))
    return dist.all_reduce(bucket.buffer(), async_op=True).get_future().then(
        lambda f: f.value()[0] * state)
out["summed"], ddp = grads(summed, 10.0)
out["seen"] = seen
try:
    ddp.register_comm_hook(None, summed)
except RuntimeError as e:
    out["twice"] = str(e)
def noop(state, bucket):
    f = Future()
    f.set_result(bucket.buffer())
    return f
from ember_distributed.futures import Future
out["noop"], _ = grads(noop)
try:
    grads(lambda state, bucket: 5)
except RuntimeError as e:
    out["not_future"] = str(e)
report(**out)
"""


def test_communication_hooks():
    got = [r.results for r in _ok(run_ranks(BODY, 2))]
    for r, g in enumerate(got):
        assert g["future"] == [[3.0, 3.0]] and g["then"] == 6.0
        plain = g["plain"]
        for a, b in zip(plain, got[1 - r]["plain"]):
            assert a == b  # averaged: the same on both ranks
        for name, rtol in (("allreduce", 1e-6), ("fp16", 2e-3), ("bf16", 2e-2)):
            for a, b in zip(g[name], plain):
                np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 1e-2, err_msg=name)
        for a, b in zip(g["summed"], plain):  # sum over 2 ranks * 10 = average * 20
            np.testing.assert_allclose(a, np.multiply(b, 20.0), rtol=1e-5)
        indices = sorted(s[0] for s in g["seen"])
        assert indices == list(range(len(indices))) and len(indices) >= 2
        assert [s[1] for s in g["seen"] if s[0] == indices[-1]] == [True]
        assert all(s[3] for s in g["seen"])
        assert "can only be called once" in g["twice"]
        assert "must return a Future (with wait()), got int" in g["not_future"]
    # a hook that sends nothing leaves each rank its own gradients
    assert got[0]["noop"] != got[1]["noop"]


def _ok(ranks):
    assert all(r.returncode == 0 for r in ranks), describe(ranks)
    return ranks
