"""Collectives across real processes on the MPI engine, against NumPy's result of the same
reduction / permutation computed here from every rank's input."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from ember_distributed._testing import describe, run_ranks

pytest.importorskip("mpi4py")

WORLD = 3
# every launcher, with 2 and 4 processes
JOBS = [("env", 3), ("run", 2), ("run", 4), ("mpiexec", 2), ("mpiexec", 4)]


def inp(r, n=6):
    """Every rank's input, as a function of its rank (run by the ranks and by the test)."""
    return (np.arange(n, dtype=np.float64) - 2) * (r + 1) + r


INPUTS = "\n" + inspect.getsource(inp)


def _ok(ranks):
    assert all(r.returncode == 0 for r in ranks), describe(ranks)
    return [r.results for r in ranks]


REDUCTIONS = """
ops = {"SUM": np.sum, "PRODUCT": np.prod, "MIN": np.min, "MAX": np.max}
dist.init_process_group("gloo")
out = {}
for dt in ["float32", "float64", "int64", "int32", "uint8", "int8", "bfloat16", "float16"]:
    for op in ["SUM", "PRODUCT", "MIN", "MAX"] + (["AVG"] if "float" in dt else []):
        t = et.tensor(inp(rank)).to(getattr(et, dt)) if dt != "uint8" else \\
            et.tensor(np.abs(inp(rank))).to(et.uint8)
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        out[f"{dt}/{op}"] = t.float().tolist()
for op in ["BAND", "BOR", "BXOR"]:
    t = et.tensor(inp(rank)).to(et.int64)
    dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
    out[f"int64/{op}"] = t.tolist()
for op in ["SUM", "MAX", "MIN", "PRODUCT"]:
    t = et.tensor(inp(rank) > 0)
    dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
    out[f"bool/{op}"] = t.tolist()
z = et.tensor(inp(rank) + 1j * inp(rank + 1)).to(et.complex64)
dist.all_reduce(z)
out["complex64/SUM"] = [z.real.tolist(), z.imag.tolist()]
m = et.tensor(inp(rank), dtype=et.float64).reshape(2, 3)
dist.reduce(m, dst=world - 1, op=dist.ReduceOp.MAX)
out["reduce"] = m.tolist()
report(**out)
dist.destroy_process_group()
"""


def _cast(a, dt):
    if dt == "uint8":
        return np.abs(a).astype(np.uint8)
    if dt in ("bfloat16", "float16"):
        return a.astype(np.float32)
    return a.astype(dt)


@pytest.mark.parametrize("launcher,world", JOBS)
def test_all_reduce_every_op_and_dtype_matches_numpy(launcher, world):
    got = _ok(run_ranks(INPUTS + REDUCTIONS, world, launcher=launcher))
    per_rank = [inp(r) for r in range(world)]
    for key, value in got[0].items():
        for other in got[1:]:
            if key != "reduce":
                assert other[key] == value, key
        dt, _, op = key.partition("/")
        if key == "reduce":
            continue
        if dt == "bool":
            b = np.stack([a > 0 for a in per_rank])
            want = b.any(0) if op in ("SUM", "MAX") else b.all(0)
            assert value == want.tolist(), key
            continue
        if dt == "complex64":
            z = sum(a + 1j * inp(r + 1) for r, a in enumerate(per_rank))
            np.testing.assert_allclose(value, [z.real, z.imag], rtol=1e-6)
            continue
        xs = np.stack([_cast(a, dt) for a in per_rank])
        if op in ("BAND", "BOR", "BXOR"):
            f = {"BAND": np.bitwise_and, "BOR": np.bitwise_or, "BXOR": np.bitwise_xor}[op]
            want = f.reduce(xs, axis=0)
        elif op == "AVG":
            want = xs.mean(0)
        else:
            want = {"SUM": np.sum, "PRODUCT": np.prod, "MIN": np.min, "MAX": np.max}[op](xs, 0)
        if dt in ("int64", "int32", "uint8", "int8"):
            want = want.astype(dt)  # integer sums and products wrap, as in C
            assert np.array_equal(np.asarray(value).astype(dt), want), key
        else:
            tol = {"bfloat16": 2e-2, "float16": 2e-3}.get(dt, 1e-6)
            np.testing.assert_allclose(value, want, rtol=tol, atol=tol, err_msg=key)
    want = np.max(np.stack(per_rank), 0).reshape(2, 3)
    np.testing.assert_array_equal(got[world - 1]["reduce"], want)
    # the other ranks' tensors are left as they were
    np.testing.assert_array_equal(got[0]["reduce"], inp(0).reshape(2, 3))


MOVES = """
dist.init_process_group("gloo")
x = et.tensor(inp(rank, 2 * world), dtype=et.float32)
out = {}
b = x.clone(); dist.broadcast(b, src=1); out["broadcast"] = b.tolist()
h = et.tensor(inp(rank, 2 * world)).to(et.bfloat16)
dist.broadcast(h, src=world - 1)
out["broadcast_bf16"] = h.float().tolist()
lst = [et.zeros(2 * world) for _ in range(world)]
dist.all_gather(lst, x); out["all_gather"] = [t.tolist() for t in lst]
flat = et.zeros(world * 2 * world)
dist.all_gather_into_tensor(flat, x)
out["agit"] = flat.tolist()
stacked = et.zeros(world, 2 * world)
dist.all_gather_into_tensor(stacked, x)
out["agit2"] = stacked.tolist()
g = [et.zeros(2 * world) for _ in range(world)] if rank == 1 else None
dist.gather(x, g, dst=1); out["gather"] = None if g is None else [t.tolist() for t in g]
s = et.zeros(2)
parts = [et.full((2,), 10.0 * r + 7) for r in range(world)] if rank == 0 else None
dist.scatter(s, parts, src=0); out["scatter"] = s.tolist()
rs = et.zeros(2); dist.reduce_scatter_tensor(rs, x); out["rst"] = rs.tolist()
rs2 = et.zeros(2); dist.reduce_scatter(rs2, list(x.split(2))); out["rs"] = rs2.tolist()
outs = [et.zeros(2) for _ in range(world)]
dist.all_to_all(outs, list(x.split(2))); out["a2a"] = [t.tolist() for t in outs]
# uneven: rank r sends j + 1 rows to rank j (rows of 2 elements)
rows = np.arange(2 * sum(range(1, world + 1))) + 100 * rank
send = et.tensor(rows, dtype=et.float32).reshape(-1, 2)
recv = et.zeros(world * (rank + 1), 2)
dist.all_to_all_single(recv, send, [rank + 1] * world, [j + 1 for j in range(world)])
out["a2as"] = recv.tolist()
objs = [None] * world
dist.all_gather_object(objs, {"rank": rank, "name": f"r{rank}", "t": et.ones(2) * rank})
out["objects"] = [[o["rank"], o["name"], o["t"].tolist()] for o in objs]
lst = ["a", 1, None] if rank == world - 1 else [None, None, None]
dist.broadcast_object_list(lst, src=world - 1)
out["bol"] = lst
w = dist.all_reduce(x.clone(), async_op=True)
out["work"] = [w.wait(), w.is_completed(), w.is_success()]
report(**out)
dist.barrier()
dist.destroy_process_group()
"""


@pytest.mark.parametrize("launcher,world", JOBS)
def test_data_movement_collectives_match_numpy(launcher, world):
    got = _ok(run_ranks(INPUTS + MOVES, world, launcher=launcher))
    xs = [inp(r, 2 * world).astype(np.float32) for r in range(world)]
    for r, res in enumerate(got):
        np.testing.assert_array_equal(res["broadcast"], xs[1])
        # small integers: exact in bfloat16
        np.testing.assert_array_equal(res["broadcast_bf16"], inp(world - 1, 2 * world))
        np.testing.assert_array_equal(res["all_gather"], xs)
        np.testing.assert_array_equal(res["agit"], np.concatenate(xs))
        np.testing.assert_array_equal(res["agit2"], np.stack(xs))
        assert (res["gather"] is None) == (r != 1)
        np.testing.assert_array_equal(res["scatter"], [10.0 * r + 7] * 2)
        total = np.sum(xs, 0)
        np.testing.assert_allclose(res["rst"], total[2 * r : 2 * r + 2])
        np.testing.assert_allclose(res["rs"], total[2 * r : 2 * r + 2])
        np.testing.assert_array_equal(res["a2a"], [x[2 * r : 2 * r + 2] for x in xs])
        # rows rank j sent to r: its block r of (r + 1) rows, after the blocks for 0 .. r-1
        want = []
        for j in range(world):
            rows = (np.arange(2 * sum(range(1, world + 1))) + 100 * j).reshape(-1, 2)
            start = sum(range(1, r + 1))
            want.extend(rows[start : start + r + 1].tolist())
        np.testing.assert_array_equal(res["a2as"], want)
        assert res["objects"] == [[j, f"r{j}", [float(j)] * 2] for j in range(world)]
        assert res["bol"] == ["a", 1, None]
        assert res["work"] == [True, True, True]
    np.testing.assert_array_equal(got[1]["gather"], xs)


POINT_TO_POINT_AND_GROUPS = """
dist.init_process_group("gloo")
out = {}
if rank == 0:
    dist.send(et.arange(4.0) * 3, dst=2, tag=5)
    w = dist.isend(et.tensor([1, 2, 3]), dst=1)
    w.wait()
elif rank == 1:
    t = et.zeros(3, dtype=et.int64)
    w = dist.irecv(t, src=0)
    w.wait()
    out["irecv"] = t.tolist()
else:
    t = et.zeros(4)
    out["src"] = dist.recv(t, tag=5)
    out["recv"] = t.tolist()
g = dist.new_group([0, 2])
if rank in (0, 2):
    v = et.full((2,), float(rank + 1))
    dist.all_reduce(v, group=g)
    b = et.full((1,), float(rank))
    dist.broadcast(b, src=2, group=g)
    out["group"] = [v.tolist(), b.tolist(), dist.get_rank(g), dist.get_world_size(g),
                    dist.get_process_group_ranks(g), dist.get_global_rank(g, 1),
                    dist.get_group_rank(g, 2)]
else:
    out["group"] = [g is dist.GroupMember.NON_GROUP_MEMBER, dist.get_rank(g)]
out["meta"] = [dist.get_rank(), dist.get_world_size(), dist.get_backend(), dist.is_initialized()]
report(**out)
dist.destroy_process_group()
report(after=dist.is_initialized())
"""


def test_point_to_point_and_subgroups():
    got = _ok(run_ranks(POINT_TO_POINT_AND_GROUPS, WORLD))
    assert got[1]["irecv"] == [1, 2, 3]
    assert got[2]["src"] == 0 and got[2]["recv"] == [0.0, 3.0, 6.0, 9.0]
    for r in (0, 2):
        assert got[r]["group"] == [[4.0, 4.0], [2.0], r // 2, 2, [0, 2], 2, 1]
    assert got[1]["group"] == [True, -1]
    for r, res in enumerate(got):
        assert res["meta"] == [r, WORLD, "gloo", True]
        assert res["after"] is False


ERRORS = """
import datetime
def err(fn):
    try:
        fn()
    except Exception as e:
        return [type(e).__name__, str(e)]
    return None
out = {}
out["uninit"] = err(lambda: dist.get_rank())
out["backend"] = err(lambda: dist.Backend("fancy"))
out["method"] = err(lambda: dist.init_process_group("gloo", init_method="udp://host:1",
                                                  rank=0, world_size=1))
out["timeout_type"] = err(lambda: dist.init_process_group("gloo", timeout=5))
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
out["twice"] = err(lambda: dist.init_process_group("gloo"))
out["noncontig"] = err(lambda: dist.all_reduce(et.zeros(3, 2).t()))
out["avg_int"] = err(lambda: dist.all_reduce(et.zeros(3, dtype=et.int64), op=dist.ReduceOp.AVG))
out["max_complex"] = err(lambda: dist.all_reduce(et.zeros(3, dtype=et.complex64),
                                               op=dist.ReduceOp.MAX))
out["band_float"] = err(lambda: dist.all_reduce(et.zeros(3), op=dist.ReduceOp.BAND))
out["src"] = err(lambda: dist.broadcast(et.zeros(3), src=world))
out["list"] = err(lambda: dist.all_gather([et.zeros(3)], et.zeros(3)))
out["shape"] = err(lambda: dist.all_gather([et.zeros(2)] * world, et.zeros(3)))
out["self_send"] = err(lambda: dist.send(et.zeros(1), dst=rank))
out["not_tensor"] = err(lambda: dist.all_reduce([1.0]))
out["nccl"] = err(lambda: dist.new_group(backend="nccl"))
report(**out)
dist.destroy_process_group()
"""


def test_errors_name_the_call_and_the_problem():
    got = _ok(run_ranks(ERRORS, 2))[0]
    assert got["uninit"] == [
        "RuntimeError",
        "Default process group has not been initialized, "
        "please make sure to call init_process_group.",
    ]
    assert got["backend"] == ["ValueError", "Invalid backend: 'fancy'"]
    assert got["method"][0] == "ValueError" and "udp://host:1" in got["method"][1]
    assert got["timeout_type"][0] == "TypeError"
    assert got["twice"] == ["ValueError", "trying to initialize the default process group twice!"]
    assert got["noncontig"][0] == "ValueError"
    assert "Tensors must be contiguous" in got["noncontig"][1]
    assert got["avg_int"][0] == "TypeError" and "int64" in got["avg_int"][1]
    assert got["max_complex"][0] == "TypeError" and "complex" in got["max_complex"][1]
    assert got["band_float"][0] == "TypeError" and "float32" in got["band_float"][1]
    assert got["src"][0] == "ValueError" and "src rank 2" in got["src"][1]
    assert got["list"][0] == "ValueError" and "one tensor per rank" in got["list"][1]
    assert got["shape"][0] == "ValueError" and "tensor_list[0]" in got["shape"][1]
    assert got["self_send"][0] == "ValueError" and "same rank" in got["self_send"][1]
    assert got["not_tensor"][0] == "TypeError"
    assert got["nccl"][0] == "RuntimeError" and "nccl" in got["nccl"][1].lower()  # no GPU


def test_env_rendezvous_names_the_missing_variable():
    ranks = run_ranks("dist.init_process_group('gloo')", 1, env={"WORLD_SIZE": ""})
    # an empty WORLD_SIZE is not a number: the launcher's variables are required
    assert ranks[0].returncode != 0
    body = """
import os
del os.environ["MASTER_ADDR"]
try:
    dist.init_process_group("gloo")
except ValueError as e:
    report(msg=str(e))
"""
    got = _ok(run_ranks(body, 1))[0]
    assert "MASTER_ADDR expected, but not set" in got["msg"]


def test_tcp_rendezvous():
    body = """
port = int(os.environ["MASTER_PORT"])
dist.init_process_group("mpi", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                        world_size=world)
t = et.ones(2) * (rank + 1)
dist.all_reduce(t)
report(t=t.tolist(), backend=dist.get_backend())
"""
    got = _ok(run_ranks(body, 2))
    assert got[0] == got[1] == {"t": [3.0, 3.0], "backend": "mpi"}
