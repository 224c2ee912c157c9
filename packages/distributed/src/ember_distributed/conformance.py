"""The conformance kit of Ember's ``distributed`` component: a pytest plugin, enabled
explicitly.

    python -m pytest -p ember_distributed.conformance [--distributed-provider=MODULE]
                     [--distributed-xfail=FILE]

Run from any directory: the plugin adds one aggregate test class,
``TestDistributedConformance``, to whatever else pytest collects there. Its tests check what
makes an implementation a drop-in ``ember.distributed``: ``torch.distributed``'s names and
``INTERFACE_VERSION``; in jobs of real processes (``env://`` rendezvous on a free local
port): ``all_reduce`` with every ``ReduceOp``, ``broadcast``, ``all_gather``,
``reduce_scatter_tensor``, ``all_to_all_single``, ``send``/``recv``, ``async_op`` works,
subgroups and the object collectives against NumPy; PyTorch's error before
``init_process_group``; a rank that dies named by the others; the provider's
``parallel.DistributedDataParallel`` averaging gradients; its launcher (``python -m
<provider>.run``) setting torchrun's environment.

Options:

``--distributed-provider=MODULE``
    The implementation under test: an importable module exposing the interface below,
    ``INTERFACE_VERSION``, a ``parallel`` submodule with ``DistributedDataParallel`` and a
    ``run`` submodule (the launcher). Default: ``ember_distributed``.

``--distributed-xfail=FILE``
    Expected failures: every non-blank line that does not start with ``#`` reads
    ``<test id> : <reason>``. Each listed test is marked ``xfail(strict=True)``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from ember_tensor.conformance_kit import define_kit

from ._testing import describe, free_port, run_ranks, script

CLASS_NAME = "TestDistributedConformance"
INTERFACE_VERSION = 1

INTERFACE_NAMES = (
    "Backend", "ReduceOp", "GroupMember", "group", "ProcessGroup", "Work", "Store", "TCPStore",
    "HashStore", "PrefixStore", "is_available", "is_initialized", "init_process_group",
    "destroy_process_group", "new_group", "get_rank", "get_world_size", "get_backend",
    "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "gather",
    "scatter", "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single",
    "send", "recv", "isend", "irecv", "barrier", "monitored_barrier", "broadcast_object_list",
    "all_gather_object",
)

_KIT = define_kit(globals(), component="distributed", class_name=CLASS_NAME,
                  default_provider="ember_distributed")

COLLECTIVES = """
dist.init_process_group("gloo")
x = et.tensor(np.arange(4.0) + 10 * rank)
out = {}
for op in ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]:
    t = x.clone()
    dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
    out[op] = t.tolist()
b = x.clone()
dist.broadcast(b, src=world - 1)
out["broadcast"] = b.tolist()
g = [et.zeros(4, dtype=et.float64) for _ in range(world)]
dist.all_gather(g, x)
out["all_gather"] = [t.tolist() for t in g]
rs = et.zeros(2, dtype=et.float64)
dist.reduce_scatter_tensor(rs, et.tensor(np.arange(2.0 * world) * (rank + 1)))
out["reduce_scatter"] = rs.tolist()
a2a = et.zeros(world, dtype=et.float64)
dist.all_to_all_single(a2a, et.tensor(np.arange(world) + 100.0 * rank))
out["all_to_all"] = a2a.tolist()
if rank == 0:
    dist.send(et.tensor([7.0, 8.0]), dst=1)
elif rank == 1:
    r = et.zeros(2)
    out["recv"] = [dist.recv(r, src=0), r.tolist()]
w = dist.all_reduce(et.ones(3), async_op=True)
out["work"] = w.wait()
sub = dist.new_group([0, 1])
if rank < 2:
    s = et.ones(1)
    dist.all_reduce(s, group=sub)
    out["sub"] = [s.item(), dist.get_world_size(sub)]
objs = [None] * world
dist.all_gather_object(objs, {"r": rank})
out["objects"] = objs
dist.barrier()
report(**out)
dist.destroy_process_group()
"""

DDP = """
import importlib
import ember_autograd, ember_nn as nn
DDP = importlib.import_module(dist.__name__ + ".parallel").DistributedDataParallel
dist.init_process_group("gloo")
et.manual_seed(rank)
model = nn.Linear(3, 1)
ddp = DDP(model)
x = et.tensor(np.full((2, 3), rank + 1.0), dtype=et.float32)
ddp(x).sum().backward()
report(w=model.weight.detach().numpy().tolist(), g=model.weight.grad.numpy().tolist())
"""


class TestDistributedConformance:
    """What a ``distributed`` provider must do. ``self.dist`` is the provider under test."""

    @pytest.fixture(autouse=True)
    def _provider(self, request: pytest.FixtureRequest):
        self.dist = request.config.stash[_KIT].provider

    def _ranks(self, body: str, n: int, **kw):
        return run_ranks(body, n, provider=self.dist.__name__, **kw)

    @pytest.mark.parametrize("name", INTERFACE_NAMES)
    def test_interface_name(self, name: str) -> None:
        assert hasattr(self.dist, name), f"the provider has no {name!r}"

    def test_interface_version(self) -> None:
        assert self.dist.INTERFACE_VERSION == INTERFACE_VERSION

    def test_not_initialized_is_pytorchs_error(self) -> None:
        assert self.dist.is_available() and not self.dist.is_initialized()
        with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
            self.dist.get_rank()

    def test_collectives_match_numpy(self) -> None:
        world = 3
        ranks = self._ranks(COLLECTIVES, world)
        assert all(r.returncode == 0 for r in ranks), describe(ranks)
        xs = np.stack([np.arange(4.0) + 10 * r for r in range(world)])
        for r, res in enumerate(rk.results for rk in ranks):
            np.testing.assert_allclose(res["SUM"], xs.sum(0))
            np.testing.assert_allclose(res["AVG"], xs.mean(0))
            np.testing.assert_allclose(res["PRODUCT"], xs.prod(0))
            np.testing.assert_allclose(res["MIN"], xs.min(0))
            np.testing.assert_allclose(res["MAX"], xs.max(0))
            np.testing.assert_allclose(res["broadcast"], xs[-1])
            np.testing.assert_allclose(res["all_gather"], xs)
            total = sum(np.arange(2.0 * world) * (k + 1) for k in range(world))
            np.testing.assert_allclose(res["reduce_scatter"], total[2 * r:2 * r + 2])
            np.testing.assert_allclose(res["all_to_all"], [r + 100.0 * k for k in range(world)])
            assert res["work"] is True
            assert res["objects"] == [{"r": k} for k in range(world)]
            if r < 2:
                assert res["sub"] == [2.0, 2]
        assert ranks[1].results["recv"] == [0, [7.0, 8.0]]

    def test_a_dead_rank_is_named(self) -> None:
        body = """
import datetime, time
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
dist.barrier()
if rank == 1:
    os._exit(5)
try:
    dist.all_reduce(et.ones(1))
except Exception as e:
    report(msg=str(e))
time.sleep(3)  # both survivors stay until the other has read who died
os._exit(0)
"""
        ranks = self._ranks(body, 3, timeout=90)
        assert ranks[1].returncode == 5
        for r in (0, 2):
            assert ranks[r].returncode == 0, describe(ranks)
            # rank 1 named among the dead ("rank 1", "ranks 1, 2": on a loaded machine a
            # survivor may read the other's exit too)
            msg = ranks[r].results.get("msg", "")
            assert re.search(r"\branks? (\d+, )*1\b", msg), describe(ranks)

    def test_distributed_data_parallel_averages_gradients(self) -> None:
        ranks = self._ranks(DDP, 2)
        assert all(r.returncode == 0 for r in ranks), describe(ranks)
        a, b = (r.results for r in ranks)
        assert a["w"] == b["w"] and a["g"] == b["g"]  # rank 0's weights, averaged gradients
        np.testing.assert_allclose(a["g"], [[3.0, 3.0, 3.0]])  # mean of 2 * 1 and 2 * 2

    def test_the_launcher_sets_torchruns_environment(self, tmp_path) -> None:
        path = tmp_path / "job.py"
        path.write_text(script("""
dist.init_process_group("gloo")
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"]
with open(f"rank{dist.get_rank()}.json", "w") as f:
    json.dump({k: os.environ[k] for k in keys}, f)
"""))
        port = free_port()
        proc = subprocess.run(
            [sys.executable, "-m", f"{self.dist.__name__}.run", "--nproc-per-node", "2",
             "--master-port", str(port), str(path)],
            capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        for r in range(2):
            env = json.loads((tmp_path / f"rank{r}.json").read_text())
            assert env == {"RANK": str(r), "LOCAL_RANK": str(r), "WORLD_SIZE": "2",
                           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
