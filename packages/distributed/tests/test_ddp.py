"""DistributedDataParallel across real processes against PyTorch trained on one process with
the whole batch: same starting weights (rank 0's), same data, same optimizer."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ember_distributed._testing import describe, run_ranks

pytest.importorskip("mpi4py")

WORLD = 2

PRELUDE = """
import ember_autograd, ember_nn as nn, ember_optim as optim
from ember_distributed.parallel import DistributedDataParallel as DDP
dist.init_process_group("gloo")
data = np.random.default_rng(0)
X = data.standard_normal((8, 5)).astype(np.float32)
Y = data.standard_normal((8, 3)).astype(np.float32)
lo, hi = rank * 8 // world, (rank + 1) * 8 // world
def shard(a, i=0):
    n = (hi - lo) // 2
    return et.tensor(a[lo:hi]) if i == 0 else et.tensor(a[lo + (i - 1) * n:lo + i * n])
et.manual_seed(100 + rank)  # a different start on every rank: DDP broadcasts rank 0's
model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
def params(m):
    return [p.detach().numpy().tolist() for p in m.parameters()]
"""


def _torch_model(start):
    m = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    with torch.no_grad():
        for p, v in zip(m.parameters(), start):
            p.copy_(torch.tensor(v))
    return m


def _data():
    rng = np.random.default_rng(0)
    return (
        torch.tensor(rng.standard_normal((8, 5)).astype(np.float32)),
        torch.tensor(rng.standard_normal((8, 3)).astype(np.float32)),
    )


def _ok(ranks):
    assert all(r.returncode == 0 for r in ranks), describe(ranks)
    return [r.results for r in ranks]


def test_training_matches_one_process_on_the_whole_batch():
    body = (
        PRELUDE
        + """
ddp = DDP(model, bucket_cap_mb=0.0001)  # several buckets
start = params(model)
opt = optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
for step in range(20):
    opt.zero_grad()
    loss = ((ddp(shard(X)) - shard(Y)) ** 2).mean()
    loss.backward()
    opt.step()
report(start=start, end=params(model), buckets=len(ddp._buckets),
       keys=list(ddp.state_dict()))
"""
    )
    got = _ok(run_ranks(body, WORLD))
    assert got[0]["start"] == got[1]["start"] and got[0]["end"] == got[1]["end"]
    assert got[0]["buckets"] >= 3
    assert got[0]["keys"] == [
        "module.0.weight",
        "module.0.bias",
        "module.2.weight",
        "module.2.bias",
    ]
    X, Y = _data()
    ref = _torch_model(got[0]["start"])
    opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    for _ in range(20):
        opt.zero_grad()
        ((ref(X) - Y) ** 2).mean().backward()  # equal shards: the mean of the ranks' means
        opt.step()
    for mine, theirs in zip(got[0]["end"], ref.parameters()):
        np.testing.assert_allclose(mine, theirs.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_no_sync_accumulates_locally_then_averages_the_sum():
    body = (
        PRELUDE
        + """
ddp = DDP(model)
start = params(model)
with ddp.no_sync():
    ((ddp(shard(X, 1)) - shard(Y, 1)) ** 2).sum().backward()
local = [p.grad.numpy().tolist() for p in model.parameters()]
((ddp(shard(X, 2)) - shard(Y, 2)) ** 2).sum().backward()
report(start=start, local=local, grads=[p.grad.numpy().tolist() for p in model.parameters()])
"""
    )
    got = _ok(run_ranks(body, WORLD))
    assert got[0]["local"] != got[1]["local"]  # not averaged inside no_sync
    assert got[0]["grads"] == got[1]["grads"]
    X, Y = _data()
    ref = _torch_model(got[0]["start"])
    ((ref(X) - Y) ** 2).sum().backward()
    for mine, theirs in zip(got[0]["grads"], ref.parameters()):
        np.testing.assert_allclose(mine, theirs.grad.numpy() / WORLD, rtol=1e-5, atol=1e-6)


def test_unused_parameters():
    body = (
        PRELUDE
        + """
class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.never = nn.Linear(5, 3), nn.Linear(5, 3), nn.Linear(5, 3)
    def forward(self, x, use_b):
        return self.a(x) + (self.b(x) if use_b else 0)
m = Branchy()
ddp = DDP(m, find_unused_parameters=True)
ddp(shard(X), use_b=(rank == 0)).sum().backward()
out = {"never": m.never.weight.grad is None,
       "b": m.b.weight.grad.numpy().tolist(), "a": m.a.weight.grad.numpy().tolist()}
# again, both ranks leaving b out: its gradient is left as it was
m.zero_grad(set_to_none=True)
ddp(shard(X), use_b=False).sum().backward()
out["b_none"] = m.b.weight.grad is None
strict = DDP(Branchy())
strict(shard(X), use_b=False).sum().backward()
try:
    strict(shard(X), use_b=False)
except RuntimeError as e:
    out["error"] = str(e)
report(**out)
"""
    )
    got = _ok(run_ranks(body, WORLD))
    for g in got:
        assert g["never"] and g["b_none"]
        assert g["error"].startswith("Expected to have finished reduction in the prior iteration")
        assert "find_unused_parameters=True" in g["error"]
    assert got[0]["b"] == got[1]["b"] and got[0]["a"] == got[1]["a"]
    # b's gradient: rank 0's local one averaged with rank 1's zeros
    X, _ = _data()
    local_b = X[:4].sum(0).repeat(3, 1).numpy()  # d(sum(W x))/dW over rank 0's rows
    np.testing.assert_allclose(got[0]["b"], local_b / WORLD, rtol=1e-5)


def test_buffers_and_parameters_start_as_rank_zeros_and_checkpoints_load_everywhere(tmp_path):
    body = (
        PRELUDE
        + f"""
bn = nn.BatchNorm1d(5)
with ember_autograd.no_grad():
    bn.running_mean.fill_(float(rank + 1))
ddp = DDP(nn.Sequential(bn, nn.Linear(5, 2)))
after_init = bn.running_mean.numpy().tolist()
ddp(shard(X)).sum().backward()
path = {str(tmp_path / "ckpt.safetensors")!r}
if rank == 0:
    et.save(ddp.state_dict(), path)
dist.barrier()
state = et.load(path)
fresh = DDP(nn.Sequential(nn.BatchNorm1d(5), nn.Linear(5, 2)))
fresh.load_state_dict(state)
report(after_init=after_init,
       loaded=[v.numpy().tolist() for v in fresh.state_dict().values()],
       saved=[v.numpy().tolist() for v in ddp.state_dict().values()] if rank == 0 else None)
"""
    )
    got = _ok(run_ranks(body, WORLD))
    assert got[0]["after_init"] == got[1]["after_init"] == [1.0] * 5
    assert got[0]["loaded"] == got[1]["loaded"] == got[0]["saved"]


def test_ddp_needs_a_process_group_and_parameters():
    body = """
import ember_nn as nn
from ember_distributed.parallel import DistributedDataParallel as DDP
out = {}
try:
    DDP(nn.Linear(2, 2))
except RuntimeError as e:
    out["no_group"] = str(e)
dist.init_process_group("gloo")
try:
    DDP(nn.ReLU())
except RuntimeError as e:
    out["no_params"] = str(e)
report(**out)
"""
    got = _ok(run_ranks(body, 1))[0]
    assert "Default process group has not been initialized" in got["no_group"]
    assert "doesn't have any parameter that requires a gradient" in got["no_params"]


SYNC_BN = """
import ember_autograd, ember_nn as nn
dist.init_process_group("gloo")
rng = np.random.default_rng(5)
full = rng.standard_normal((8, 3, 4)) * 2 + 1
sizes = [3, 5]
lo = sum(sizes[:rank])
x = et.tensor(full[lo:lo + sizes[rank]], dtype=et.float64, requires_grad=True)
bn = nn.SyncBatchNorm(3, momentum=0.3).double()
with ember_autograd.no_grad():
    bn.weight.copy_(et.tensor([1.0, 2.0, -0.5], dtype=et.float64))
    bn.bias.copy_(et.tensor([0.1, 0.0, 0.3], dtype=et.float64))
y = bn(x)
coef = et.tensor(np.arange(y.numel()).reshape(y.shape) % 7 + lo, dtype=et.float64)
(y * coef).sum().backward()
report(y=y.detach().numpy().tolist(), gx=x.grad.numpy().tolist(),
       gw=bn.weight.grad.numpy().tolist(), gb=bn.bias.grad.numpy().tolist(),
       rm=bn.running_mean.numpy().tolist(), rv=bn.running_var.numpy().tolist())
"""


def test_sync_batch_norm_matches_batch_norm_over_all_ranks_batches():
    got = _ok(run_ranks(SYNC_BN, 2))
    rng = np.random.default_rng(5)
    full = torch.tensor(rng.standard_normal((8, 3, 4)) * 2 + 1, requires_grad=True)
    bn = torch.nn.BatchNorm1d(3, momentum=0.3).double()
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([1.0, 2.0, -0.5], dtype=torch.float64))
        bn.bias.copy_(torch.tensor([0.1, 0.0, 0.3], dtype=torch.float64))
    y = bn(full)
    coefs = []
    for lo, n in ((0, 3), (3, 5)):
        coefs.append(torch.tensor(np.arange(n * 12).reshape(n, 3, 4) % 7 + lo, dtype=torch.float64))
    (y * torch.cat(coefs)).sum().backward()
    for r, lo, n in ((0, 0, 3), (1, 3, 5)):
        np.testing.assert_allclose(got[r]["y"], y[lo : lo + n].detach().numpy(), rtol=1e-10)
        np.testing.assert_allclose(got[r]["gx"], full.grad[lo : lo + n].numpy(), rtol=1e-9)
        np.testing.assert_allclose(got[r]["rm"], bn.running_mean.numpy(), rtol=1e-10)
        np.testing.assert_allclose(got[r]["rv"], bn.running_var.numpy(), rtol=1e-10)
    # each rank's parameter gradient is its own loss's: together, the whole batch's
    np.testing.assert_allclose(
        np.add(got[0]["gw"], got[1]["gw"]), bn.weight.grad.numpy(), rtol=1e-9
    )
    np.testing.assert_allclose(np.add(got[0]["gb"], got[1]["gb"]), bn.bias.grad.numpy(), rtol=1e-9)


def test_differentiable_collectives():
    body = """
import ember_autograd
from ember_distributed.nn.functional import all_gather, all_reduce
dist.init_process_group("gloo")
x = et.full((2,), float(rank + 1), requires_grad=True)
parts = all_gather(x)
loss = sum((k + 1) * p.sum() for k, p in enumerate(parts)) + (all_reduce(x * x)).sum()
loss.backward()
report(parts=[p.tolist() for p in parts], grad=x.grad.tolist())
"""
    got = _ok(run_ranks(body, 3))
    for r, g in enumerate(got):
        assert g["parts"] == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]
        # every rank's loss takes (r + 1) * x_r from the gather and sum_k x_k^2 from the
        # reduce: summed over the 3 losses, d/dx_r = 3 (r + 1) + 3 * 2 x_r
        x = r + 1.0
        assert g["grad"] == [3 * (r + 1) + 6 * x] * 2


def test_autocast_and_fused_adam_train_like_one_process():
    """bfloat16 autocast around forward, gradients bucketed while backward runs, and Adam's
    fused kernel: every rank ends with the same parameters, close to PyTorch's one-process
    training on the whole batch under the same autocast (bfloat16 products: rtol 2e-2)."""
    body = (
        PRELUDE
        + """
ddp = DDP(model, bucket_cap_mb=0.0001)
start = params(model)
opt = optim.Adam(ddp.parameters(), lr=1e-2, fused=True)
for step in range(10):
    opt.zero_grad()
    with et.autocast("cpu", dtype=et.bfloat16):
        out = ddp(shard(X))
    loss = ((out.float() - shard(Y)) ** 2).mean()
    loss.backward()
    opt.step()
report(start=start, end=params(model), out_dtype=str(out.dtype),
       grad_dtype=str(model[0].weight.grad.dtype))
"""
    )
    got = _ok(run_ranks(body, WORLD))
    assert got[0]["start"] == got[1]["start"] and got[0]["end"] == got[1]["end"]
    assert got[0]["out_dtype"].endswith("bfloat16") and got[0]["grad_dtype"].endswith("float32")
    X, Y = _data()
    ref = _torch_model(got[0]["start"])
    opt = torch.optim.Adam(ref.parameters(), lr=1e-2, fused=True)
    for _ in range(10):
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = ref(X)
        ((out.float() - Y) ** 2).mean().backward()
        opt.step()
    moved = 0.0
    for mine, theirs, first in zip(got[0]["end"], ref.parameters(), got[0]["start"]):
        np.testing.assert_allclose(mine, theirs.detach().numpy(), rtol=2e-2, atol=2e-3)
        moved = max(moved, float(np.abs(np.subtract(mine, first)).max()))
    assert moved > 0.05  # ten Adam steps of lr 1e-2 moved the weights
