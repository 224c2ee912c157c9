"""The NCCL engine without a GPU: the library's binding (loading, version, unique ids, its
errors), the backend's refusals, and the collectives of ``nccl_collectives`` run across real
processes on a stand-in communicator that does NCCL's calls with MPI on CPU memory (same
addresses, counts, type codes and groups), checked against NumPy. What needs a GPU (the
communicator itself, streams) runs where one is lent: tests/test_cuda_nccl.py."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from ember_distributed import nccl
from ember_distributed._testing import describe, run_ranks

pytest.importorskip("mpi4py")

needs_library = pytest.mark.skipif(
    nccl.library_path() is None, reason="NCCL is not installed (pip install nvidia-nccl-cu13)")


def _ok(ranks):
    assert all(r.returncode == 0 for r in ranks), describe(ranks)
    return [r.results for r in ranks]


@needs_library
def test_library_version_and_unique_ids():
    major, minor, _ = nccl.version()
    assert (major, minor) >= (2, 18)
    a, b = nccl.unique_id(), nccl.unique_id()
    assert len(a) == len(b) == 128 and a != b


@needs_library
def test_an_nccl_failure_is_a_backend_error_with_nccls_words():
    import ctypes

    from ember_distributed.work import DistBackendError

    lib = nccl.load()
    ident = nccl.UniqueId()
    ctypes.memmove(ctypes.addressof(ident), nccl.unique_id(), 128)
    handle = ctypes.c_void_p()
    result = lib.ncclCommInitRank(ctypes.byref(handle), 2, ident, 5)  # rank 5 of 2
    with pytest.raises(DistBackendError, match=r"NCCL error in ncclCommInitRank: \w+"):
        nccl._check(result, "ncclCommInitRank")


def test_backend_names_and_refusals():
    body = """
out = {"available": dist.is_nccl_available()}
for name in ["nccl", "cpu:gloo,cuda:nccl"]:
    try:
        dist.init_process_group(name)
        out[name] = "initialized"
        dist.destroy_process_group()
    except RuntimeError as e:
        out[name] = str(e)
for bad in ["cuda:gloo", "cpu:nccl", "tpu:gloo"]:
    try:
        dist.init_process_group(bad)
    except ValueError as e:
        out[bad] = str(e)
report(**out)
"""
    got = _ok(run_ranks(body, 1))[0]
    assert got["available"] == (nccl.library_path() is not None)
    import ember_tensor as et

    if not et.cuda.is_available():
        for name in ["nccl", "cpu:gloo,cuda:nccl"]:
            want = ("ProcessGroupNCCL is only supported with GPUs, no GPUs found!"
                    if got["available"] else "pip install nvidia-nccl-cu13")
            assert want in got[name]
    for bad in ["cuda:gloo", "cpu:nccl", "tpu:gloo"]:
        assert got[bad].startswith(f"Invalid backend: '{bad}'")


class StandIn:
    """NCCL's communicator interface done with MPI on CPU memory (for the ranks)."""

    TYPES = {0: "int8", 1: "uint8", 2: "int32", 3: "uint32", 4: "int64", 5: "uint64",
             6: "float16", 7: "float32", 8: "float64"}

    def __init__(self, comm):
        from mpi4py import MPI

        self.MPI, self.comm, self.device_index = MPI, comm, 0
        self.grouped = None
        self.calls = []

    def rank(self):
        return self.comm.Get_rank()

    def size(self):
        return self.comm.Get_size()

    def current_stream(self):
        return 7  # a stream handle: passed through to every call

    def completion(self, stream):
        assert stream == 7

        class Done:
            stream_ordered = True

            def check(self):
                pass

            def Test(self):  # noqa: N802
                return True

            def abort(self):
                pass

        return Done()

    def _array(self, address, count, dtype):
        import ctypes

        dt = np.dtype(self.TYPES[dtype])
        raw = (ctypes.c_uint8 * (count * dt.itemsize)).from_address(address)
        return np.frombuffer(raw, dt)

    def _op(self, op):
        return [self.MPI.SUM, self.MPI.PROD, self.MPI.MAX, self.MPI.MIN, self.MPI.SUM][op]

    def group(self):
        import contextlib

        @contextlib.contextmanager
        def run():
            self.grouped = []
            yield
            requests = [start() for start in self.grouped]
            self.grouped = None
            self.MPI.Request.Waitall(requests)
        return run()

    def all_reduce(self, send, recv, count, dtype, op, stream):
        self.calls.append("all_reduce")
        buf = self._array(recv, count, dtype)
        self.comm.Allreduce(self.MPI.IN_PLACE, buf, op=self._op(op))
        if op == 4:
            buf /= self.size()

    def broadcast(self, send, recv, count, dtype, root, stream):
        self.comm.Bcast(self._array(recv, count, dtype), root=root)

    def reduce(self, send, recv, count, dtype, op, root, stream):
        buf = self._array(send, count, dtype)
        if self.rank() == root:
            self.comm.Reduce(self.MPI.IN_PLACE, buf, op=self._op(op), root=root)
            if op == 4:
                buf /= self.size()
        else:
            self.comm.Reduce(buf.copy(), None, op=self._op(op), root=root)

    def all_gather(self, send, recv, count, dtype, stream):
        self.comm.Allgather(self._array(send, count, dtype).copy(),
                            self._array(recv, count * self.size(), dtype))

    def reduce_scatter(self, send, recv, count, dtype, op, stream):
        self.comm.Reduce_scatter_block(self._array(send, count * self.size(), dtype).copy(),
                                       self._array(recv, count, dtype), op=self._op(op))
        if op == 4:
            self._array(recv, count, dtype)[...] /= self.size()

    def send(self, buf, count, dtype, peer, stream):
        arr = self._array(buf, count, dtype)
        if self.grouped is None:
            self.comm.Send(arr, dest=peer)
        else:
            self.grouped.append(lambda: self.comm.Isend(arr, dest=peer))

    def recv(self, buf, count, dtype, peer, stream):
        arr = self._array(buf, count, dtype)
        if self.grouped is None:
            self.comm.Recv(arr, source=peer)
        else:
            self.grouped.append(lambda: self.comm.Irecv(arr, source=peer))


def inp(r, n=6):
    return (np.arange(n, dtype=np.float64) - 2) * (r + 1) + r


PRELUDE = "\n" + inspect.getsource(inp) + inspect.getsource(StandIn) + """
from ember_distributed import nccl_collectives as nc
from ember_distributed.distributed_c10d import ReduceOp
dist.init_process_group("gloo")
c = StandIn(dist.group.WORLD._engine.comm)
"""


@pytest.mark.parametrize("world", [2, 3])
def test_collectives_on_the_stand_in_communicator(world):
    body = PRELUDE + """
out = {}
for dt, op in [("float32", "SUM"), ("float64", "AVG"), ("int64", "MAX"), ("int32", "MIN"),
               ("float64", "PRODUCT"), ("float16", "SUM")]:
    t = et.tensor(inp(rank)).to(getattr(et, dt))
    nc.all_reduce(c, t, getattr(ReduceOp, op)).check()
    out[f"all_reduce {dt} {op}"] = t.double().tolist()
b = et.tensor([rank % 2 == 0, True, False])
nc.all_reduce(c, b, ReduceOp.SUM)
out["bool or"] = b.tolist()
b = et.tensor([rank % 2 == 0, True, False])
nc.all_reduce(c, b, ReduceOp.PRODUCT)
out["bool and"] = b.tolist()
z = et.complex(et.tensor(inp(rank)), et.tensor(inp(rank + 1)))
nc.all_reduce(c, z, ReduceOp.SUM)
out["complex sum"] = [z.real.tolist(), z.imag.tolist()]
t = et.tensor(inp(rank))
nc.broadcast(c, t, world - 1)
out["broadcast"] = t.tolist()
t = et.tensor(inp(rank))
nc.reduce(c, t, ReduceOp.SUM, 1)
out["reduce"] = t.tolist()
outs = [et.zeros(6, dtype=et.float64) for _ in range(world)]
nc.all_gather(c, outs, et.tensor(inp(rank)))
out["all_gather"] = [o.tolist() for o in outs]
big = et.zeros(world, 6, dtype=et.float64)
nc.all_gather_into_tensor(c, big, et.tensor(inp(rank)))
out["all_gather_into_tensor"] = big.tolist()
outs = [et.zeros(6, dtype=et.float64) for _ in range(world)] if rank == 0 else None
nc.gather(c, et.tensor(inp(rank)), outs, 0)
out["gather"] = [o.tolist() for o in outs] if rank == 0 else None
t = et.zeros(6, dtype=et.float64)
ins = [et.tensor(inp(10 * r)) for r in range(world)] if rank == world - 1 else None
nc.scatter(c, t, ins, world - 1)
out["scatter"] = t.tolist()
t = et.zeros(2, dtype=et.float64)
nc.reduce_scatter_tensor(c, t, et.tensor(inp(rank, 2 * world)), ReduceOp.SUM)
out["reduce_scatter"] = t.tolist()
# uneven all-to-all: rank r sends r + j + 1 rows of 2 int32 to rank j
send_rows = [rank + j + 1 for j in range(world)]
recv_rows = [j + rank + 1 for j in range(world)]
src = et.arange(2 * sum(send_rows), dtype=et.int32).reshape(-1, 2) + 1000 * rank
dst = et.zeros(sum(recv_rows), 2, dtype=et.int32)
nc.all_to_all_single(c, dst, src, [8 * n for n in send_rows], [8 * n for n in recv_rows])
out["all_to_all_single"] = dst.tolist()
ins = [et.full((j + 1,), float(10 * rank + j)) for j in range(world)]
outs = [et.zeros(rank + 1) for _ in range(world)]
nc.all_to_all(c, outs, ins)
out["all_to_all"] = [o.tolist() for o in outs]
if rank == 0:
    nc.send(c, et.tensor([5.0, 6.0]), 1)
elif rank == 1:
    t = et.zeros(2)
    nc.recv(c, t, 0)
    out["recv"] = t.tolist()
for call, want in [(lambda: nc.all_reduce(c, et.ones(2, dtype=et.int64), ReduceOp.BAND),
                    RuntimeError),
                   (lambda: nc.all_reduce(c, et.ones(2, dtype=et.int16), ReduceOp.SUM),
                    RuntimeError),
                   (lambda: nc.all_reduce(c, et.ones(2, dtype=et.bool), ReduceOp.AVG),
                    RuntimeError),
                   (lambda: nc.all_reduce(c, et.ones(2, dtype=et.complex64), ReduceOp.MAX),
                    TypeError),
                   (lambda: nc.recv(c, et.ones(2), None), RuntimeError)]:
    try:
        call()
        out.setdefault("errors", []).append(None)
    except want as e:
        out.setdefault("errors", []).append(str(e))
report(**out)
"""
    got = _ok(run_ranks(body, world))
    x = np.stack([inp(r) for r in range(world)])
    for r, g in enumerate(got):
        np.testing.assert_allclose(g["all_reduce float32 SUM"], x.sum(0), rtol=1e-6)
        np.testing.assert_allclose(g["all_reduce float64 AVG"], x.mean(0), rtol=1e-12)
        assert g["all_reduce int64 MAX"] == x.astype(np.int64).max(0).tolist()
        assert g["all_reduce int32 MIN"] == x.astype(np.int32).min(0).tolist()
        np.testing.assert_allclose(g["all_reduce float64 PRODUCT"], x.prod(0), rtol=1e-12)
        np.testing.assert_allclose(g["all_reduce float16 SUM"], x.sum(0), rtol=1e-3)
        assert g["bool or"] == [True, True, False] and g["bool and"] == [False, True, False]
        xi = np.stack([inp(q + 1) for q in range(world)])
        np.testing.assert_allclose(g["complex sum"], [x.sum(0), xi.sum(0)], rtol=1e-12)
        assert g["broadcast"] == inp(world - 1).tolist()
        assert g["reduce"] == (x.sum(0).tolist() if r == 1 else inp(r).tolist())
        assert g["all_gather"] == g["all_gather_into_tensor"] == x.tolist()
        assert g["gather"] == (x.tolist() if r == 0 else None)
        assert g["scatter"] == inp(10 * r).tolist()
        full = np.stack([inp(q, 2 * world) for q in range(world)]).sum(0)
        assert g["reduce_scatter"] == full[2 * r:2 * r + 2].tolist()
        want = []
        for j in range(world):  # rank j's block for rank r, in rank order
            rows = [j + q + 1 for q in range(world)]
            start = sum(rows[:r])
            block = np.arange(2 * sum(rows)).reshape(-1, 2)[start:start + rows[r]] + 1000 * j
            want += block.tolist()
        assert g["all_to_all_single"] == want
        assert g["all_to_all"] == [[float(10 * j + r)] * (r + 1) for j in range(world)]
        if r == 1:
            assert g["recv"] == [5.0, 6.0]
        errors = g["errors"]
        assert errors[0].endswith("Cannot use ReduceOp.BAND with NCCL")
        assert errors[1].endswith("Unsupported data type for NCCL process group: ember.int16")
        assert errors[2].endswith("Cannot use ReduceOp.AVG with boolean inputs")
        assert "ReduceOp.MAX is not defined for complex tensors" in errors[3]
        assert "does not support recvAnysource" in errors[4]


WATCHED = """
import datetime, time
from ember_distributed import work
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3))
class Stuck:  # device work that never completes (a peer that is gone)
    stream_ordered = True
    def check(self):
        pass
    def Test(self):
        return False
    def abort(self):
        print("aborted", flush=True)
pg = dist.group.WORLD
if rank == 1:
    time.sleep(1)
    os._exit(0)  # leaves without a word
start = time.monotonic()
w = work.launch("all_reduce", pg, pg._next(), lambda: Stuck(), None, False)
w.wait()  # stream-ordered: the host goes on
report(returned=time.monotonic() - start)
time.sleep(60)
report(still_running=True)
"""


@pytest.mark.parametrize("world", [1, 2])
def test_the_watchdog_ends_a_process_whose_device_work_is_stuck(world):
    import time

    start = time.monotonic()
    ranks = run_ranks(WATCHED, world)
    took = time.monotonic() - start
    r0 = ranks[0]
    assert r0.returncode == 1, describe(ranks)
    assert r0.results["returned"] < 1.0 and "still_running" not in r0.results
    assert "aborted" in r0.stdout
    assert "ending this process (as PyTorch's NCCL watchdog)" in r0.stderr
    if world == 1:  # the group's timeout (3 s), naming the operation
        assert "all_reduce (operation 1 of process group 'default' of 1 ranks) timed out " \
            "after 3 seconds" in r0.stderr
    else:  # rank 1 died: named within about a second, before the timeout
        assert "stopped: rank 1 died" in r0.stderr
    assert took < 30
