"""The nccl backend on a real GPU (skipped without one): one process per GPU; with one GPU a
job of one rank, which still runs every call of the engine (communicator, streams, events,
the collectives' NCCL calls) against the CPU result."""

from __future__ import annotations

import numpy as np
import pytest

import ember_tensor as et
from ember_distributed import nccl
from ember_distributed._testing import describe, run_ranks

pytestmark = pytest.mark.skipif(
    nccl.library_path() is None or not et.cuda.is_available(),
    reason="needs NCCL (pip install nvidia-nccl-cu13) and a CUDA device")


def _ok(ranks):
    assert all(r.returncode == 0 for r in ranks), describe(ranks)
    return [r.results for r in ranks]


BODY = """
et.cuda.set_device(rank % et.cuda.device_count())
dist.init_process_group("cpu:gloo,cuda:nccl")
dev = f"cuda:{et.cuda.current_device()}"
n = dist.get_world_size()
out = {}
x = et.arange(6, dtype=et.float32, device=dev) + rank
dist.all_reduce(x)
out["all_reduce"] = x.cpu().tolist()
y = et.arange(6, dtype=et.bfloat16, device=dev) * (rank + 1)
w = dist.all_reduce(y, op=dist.ReduceOp.AVG, async_op=True)
w.wait()
out["avg"] = y.float().cpu().tolist()
outs = [et.zeros(3, device=dev) for _ in range(n)]
dist.all_gather(outs, et.full((3,), float(rank), device=dev))
out["all_gather"] = [o.cpu().tolist() for o in outs]
b = et.full((4,), float(rank), device=dev)
dist.broadcast(b, src=0)
out["broadcast"] = b.cpu().tolist()
rs = et.zeros(2, device=dev)
dist.reduce_scatter_tensor(rs, et.arange(2 * n, dtype=et.float32, device=dev))
out["reduce_scatter"] = rs.cpu().tolist()
dist.barrier()
objs = [None] * n
dist.all_gather_object(objs, {"rank": rank})
out["objects"] = objs
import ember_nn as nn
from ember_distributed.parallel import DistributedDataParallel as DDP
et.manual_seed(rank)
model = nn.Linear(4, 2).to(dev)
ddp = DDP(model)
ddp(et.ones(3, 4, device=dev) * (rank + 1)).sum().backward()
et.cuda.synchronize()
out["grad"] = model.weight.grad.cpu().tolist()
report(**out)
"""


def test_collectives_and_ddp_on_the_gpus():
    world = max(1, et.cuda.device_count())
    got = _ok(run_ranks(BODY, world))
    for r, g in enumerate(got):
        assert g["all_reduce"] == (np.arange(6) * world + sum(range(world))).tolist()
        np.testing.assert_allclose(g["avg"], np.arange(6) * (world + 1) / 2, rtol=1e-2)
        assert g["all_gather"] == [[float(q)] * 3 for q in range(world)]
        assert g["broadcast"] == [0.0] * 4
        assert g["reduce_scatter"] == (np.arange(2 * world) * world)[2 * r:2 * r + 2].tolist()
        assert g["objects"] == [{"rank": q} for q in range(world)]
        # d(sum(W x + b))/dW = sum of rows of x, averaged over ranks (x = ones * (q + 1))
        assert g["grad"] == [[3 * (world + 1) / 2] * 4] * 2
