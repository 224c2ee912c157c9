"""The collectives of CUDA tensors, on an NCCL communicator (``nccl.Communicator``).

Each function queues its work (the NCCL call, and any copy into output lists) on the
communicator's current stream and returns the request of that work (``comm.completion``):
as with PyTorch's NCCL backend, the host goes on once the work is queued, and the tensors
are ready for the work queued after it on the same stream. ``barrier`` alone makes the host
wait. The arguments were checked by ``distributed_c10d``; what NCCL cannot do is refused
here, with PyTorch's messages: bitwise reductions, dtypes NCCL has no type for (int16,
uint16), receiving from any rank.

Reductions: bool SUM/MAX is a logical or and PRODUCT/MIN a logical and (on bytes), complex
tensors reduce as pairs of reals (SUM and AVG only). Data that is only moved (gathers,
scatters, all-to-all, send/recv) travels as bytes.
"""

from __future__ import annotations

import ember_tensor as et

from . import nccl

__all__ = ["all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
           "gather", "scatter", "reduce_scatter_tensor", "all_to_all_single", "all_to_all",
           "send", "recv", "barrier"]

_BYTES = nccl.dtype_code("uint8")


def _code(op_name: str, t) -> int:
    code = nccl.dtype_code(t.dtype)
    if code is None:
        raise RuntimeError(f"{op_name}: Unsupported data type for NCCL process group: "
                           f"{t.dtype}")
    return code


def _count(t) -> int:
    return t.numel() * (2 if t.dtype.is_complex else 1)


def _nbytes(t) -> int:
    return t.numel() * t.element_size()


def _reduce_op(op_name: str, t, op) -> int:
    """NCCL's code of a ``ReduceOp`` on ``t``'s dtype."""
    name = op.name
    if name in ("BAND", "BOR", "BXOR"):
        raise RuntimeError(f"{op_name}: Cannot use ReduceOp.{name} with NCCL")
    if t.dtype == et.bool:
        if name == "AVG":
            raise RuntimeError(f"{op_name}: Cannot use ReduceOp.AVG with boolean inputs")
        name = {"SUM": "MAX", "PRODUCT": "MIN"}.get(name, name)
    elif t.dtype.is_complex and name not in ("SUM", "AVG"):
        raise TypeError(f"{op_name}: ReduceOp.{name} is not defined for complex tensors "
                        "(NCCL reduces them as pairs of reals: SUM and AVG only)")
    elif name == "AVG" and not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise TypeError(f"{op_name}: ReduceOp.AVG needs a floating point or complex tensor, "
                        f"got {t.dtype}")
    return nccl.REDUCE_OPS["PROD" if name == "PRODUCT" else name]


def all_reduce(comm, t, op):
    code, red = _code("all_reduce", t), _reduce_op("all_reduce", t, op)
    s = comm.current_stream()
    comm.all_reduce(t.data_ptr(), t.data_ptr(), _count(t), code, red, s)
    return comm.completion(s)


def broadcast(comm, t, root: int):
    s = comm.current_stream()
    comm.broadcast(t.data_ptr(), t.data_ptr(), _nbytes(t), _BYTES, root, s)
    return comm.completion(s)


def reduce(comm, t, op, root: int):
    """Into ``t`` of rank ``root``; the others' ``t`` is left as it is."""
    code, red = _code("reduce", t), _reduce_op("reduce", t, op)
    s = comm.current_stream()
    comm.reduce(t.data_ptr(), t.data_ptr(), _count(t), code, red, root, s)
    return comm.completion(s)


def all_gather_into_tensor(comm, out, t):
    s = comm.current_stream()
    comm.all_gather(t.data_ptr(), out.data_ptr(), _nbytes(t), _BYTES, s)
    return comm.completion(s)


def all_gather(comm, outs: list, t):
    """Through one gathered tensor, copied into ``outs`` on the same stream."""
    flat = et.empty(comm.size() * t.numel(), dtype=t.dtype, device=t.device)
    s = comm.current_stream()
    comm.all_gather(t.data_ptr(), flat.data_ptr(), _nbytes(t), _BYTES, s)
    n = t.numel()
    for r, o in enumerate(outs):
        o.copy_(flat[r * n:(r + 1) * n].view(o.shape))
    return comm.completion(s)


def _with_root(comm, t, blocks: list | None, root: int, gathering: bool):
    """Rank ``root`` receives ``blocks[r]`` from (gathering) or sends it to (scattering)
    every other rank r, whose side is ``t``; the root's own block is copied."""
    s = comm.current_stream()
    me = comm.rank()
    at_root, elsewhere = (comm.recv, comm.send) if gathering else (comm.send, comm.recv)
    with comm.group():
        if me == root:
            for r, b in enumerate(blocks):
                if r != me:
                    at_root(b.data_ptr(), _nbytes(b), _BYTES, r, s)
        else:
            elsewhere(t.data_ptr(), _nbytes(t), _BYTES, root, s)
    if me == root and gathering:
        blocks[me].copy_(t)
    elif me == root:
        t.copy_(blocks[me])
    return comm.completion(s)


def gather(comm, t, outs: list | None, root: int):
    return _with_root(comm, t, outs, root, gathering=True)


def scatter(comm, t, ins: list | None, root: int):
    return _with_root(comm, t, ins, root, gathering=False)


def reduce_scatter_tensor(comm, out, t, op):
    code, red = _code("reduce_scatter_tensor", t), _reduce_op("reduce_scatter_tensor", t, op)
    s = comm.current_stream()
    comm.reduce_scatter(t.data_ptr(), out.data_ptr(), _count(out), code, red, s)
    return comm.completion(s)


def _exchange(comm, sends: list, recvs: list):
    """One grouped round: ``sends[r]`` / ``recvs[r]`` are (address, bytes) to and from rank
    r; this rank's own block is copied."""
    s = comm.current_stream()
    me = comm.rank()
    with comm.group():
        for r in range(comm.size()):
            if r == me:
                continue
            if sends[r][1]:
                comm.send(sends[r][0], sends[r][1], _BYTES, r, s)
            if recvs[r][1]:
                comm.recv(recvs[r][0], recvs[r][1], _BYTES, r, s)
    return s


def _blocks(t, byte_counts: list) -> list:
    out, pos, base = [], 0, t.data_ptr()
    for n in byte_counts:
        out.append((base + pos, n))
        pos += n
    return out


def all_to_all_single(comm, out, t, send_bytes: list, recv_bytes: list):
    """Block r of ``t`` (``send_bytes[r]`` bytes) to rank r; rank r's block for this rank
    into ``out`` at rank r's place (``recv_bytes``)."""
    sends, recvs = _blocks(t, send_bytes), _blocks(out, recv_bytes)
    s = _exchange(comm, sends, recvs)
    me = comm.rank()
    if send_bytes[me]:  # byte counts of whole elements
        es = t.element_size()
        src, dst = sum(send_bytes[:me]) // es, sum(recv_bytes[:me]) // es
        n = send_bytes[me] // es
        out.reshape(-1)[dst:dst + n].copy_(t.reshape(-1)[src:src + n])
    return comm.completion(s)


def all_to_all(comm, outs: list, ins: list):
    me = comm.rank()
    s = _exchange(comm, [(i.data_ptr(), _nbytes(i)) for i in ins],
                  [(o.data_ptr(), _nbytes(o)) for o in outs])
    outs[me].copy_(ins[me])
    return comm.completion(s)


def send(comm, t, peer: int):
    s = comm.current_stream()
    comm.send(t.data_ptr(), _nbytes(t), _BYTES, peer, s)
    return comm.completion(s)


def recv(comm, t, peer: int | None):
    if peer is None:
        raise RuntimeError("recv: ProcessGroupNCCL does not support recvAnysource; pass src")
    s = comm.current_stream()
    comm.recv(t.data_ptr(), _nbytes(t), _BYTES, peer, s)
    return comm.completion(s)


def barrier(comm):
    """An all_reduce of one element that the host waits for."""
    one = et.zeros(1, device=f"cuda:{comm.device_index}")
    s = comm.current_stream()
    comm.all_reduce(one.data_ptr(), one.data_ptr(), 1, nccl.dtype_code("float32"),
                    nccl.REDUCE_OPS["SUM"], s)
    done = comm.completion(s)
    done.stream_ordered = False  # the host waits: what a barrier is for
    return done
