"""The ``"nccl"`` engine: NVIDIA's NCCL library, called through ``ctypes`` on the memory of
CUDA tensors, each operation queued on the current stream of the tensor's device.

NCCL is found, in this order, in the ``nvidia-nccl-cu13`` / ``nvidia-nccl-cu12`` wheel
(``pip install nvidia-nccl-cu13``), or as the system's ``libnccl.so.2``; nothing is loaded
before a process group uses it, so an installation without NCCL (or without a GPU) imports
``ember_distributed`` and says what is missing when the backend is asked for.

A ``Communicator`` is one rank of an NCCL communicator on one device (NCCL's
``ncclComm_t``), made from a unique id that rank 0 draws and the others receive through the
rendezvous store. Its operations take device addresses, element counts and NCCL type codes
(``dtype_code``), and queue their work on a stream (``current_stream()``): they return once
the work is queued. ``completion(stream)`` gives the request of the work queued so far: an
event recorded on the stream, complete when the device has done it, which reports NCCL's
asynchronous errors (a peer that died or a broken network) as ``DistBackendError``.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os

from .work import DistBackendError

__all__ = ["library_path", "load", "version", "unique_id", "dtype_code", "REDUCE_OPS",
           "Communicator"]

# ncclRedOp_t
REDUCE_OPS = {"SUM": 0, "PROD": 1, "MAX": 2, "MIN": 3, "AVG": 4}

# ncclDataType_t of each dtype NCCL carries (bool as bytes; complex as pairs of reals)
_DTYPES = {"int8": 0, "uint8": 1, "bool": 1, "int32": 2, "uint32": 3, "int64": 4,
           "uint64": 5, "float16": 6, "float32": 7, "float64": 8, "bfloat16": 9,
           "float8_e4m3fn": 10, "float8_e5m2": 11, "complex64": 7, "complex128": 8}

_UNIQUE_ID_BYTES = 128  # NCCL_UNIQUE_ID_BYTES
_IN_PROGRESS = 7  # ncclInProgress


class UniqueId(ctypes.Structure):
    """``ncclUniqueId``: passed by value to ``ncclCommInitRank``."""

    _fields_ = [("internal", ctypes.c_char * _UNIQUE_ID_BYTES)]


_lib = None


def library_path() -> str | None:
    """Where ``libnccl.so.2`` is: the NVIDIA wheel's copy, else the system's; None when
    there is none."""
    try:
        import nvidia.nccl  # a namespace package of the nvidia-nccl-cu* wheels
    except ImportError:
        pass
    else:
        for root in getattr(nvidia.nccl, "__path__", []):
            path = os.path.join(root, "lib", "libnccl.so.2")
            if os.path.exists(path):
                return path
    return ctypes.util.find_library("nccl")


def _declare(lib) -> None:
    c_int, c_size, p = ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p
    sigs = {
        "ncclGetVersion": [ctypes.POINTER(c_int)],
        "ncclGetUniqueId": [ctypes.POINTER(UniqueId)],
        "ncclCommInitRank": [ctypes.POINTER(p), c_int, UniqueId, c_int],
        "ncclCommDestroy": [p],
        "ncclCommAbort": [p],
        "ncclCommGetAsyncError": [p, ctypes.POINTER(c_int)],
        "ncclCommSplit": [p, c_int, c_int, ctypes.POINTER(p), p],
        "ncclAllReduce": [p, p, c_size, c_int, c_int, p, p],
        "ncclBroadcast": [p, p, c_size, c_int, c_int, p, p],
        "ncclReduce": [p, p, c_size, c_int, c_int, c_int, p, p],
        "ncclAllGather": [p, p, c_size, c_int, p, p],
        "ncclReduceScatter": [p, p, c_size, c_int, c_int, p, p],
        "ncclSend": [p, c_size, c_int, c_int, p, p],
        "ncclRecv": [p, c_size, c_int, c_int, p, p],
        "ncclGroupStart": [],
        "ncclGroupEnd": [],
    }
    for name, args in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, c_int
    lib.ncclGetErrorString.argtypes, lib.ncclGetErrorString.restype = [c_int], ctypes.c_char_p
    lib.ncclGetLastError.argtypes, lib.ncclGetLastError.restype = [p], ctypes.c_char_p


def load():
    """The NCCL library (loaded once); RuntimeError saying what to install when there is
    none."""
    global _lib
    if _lib is None:
        path = library_path()
        if path is None:
            raise RuntimeError(
                "ember.distributed: the 'nccl' backend needs NCCL: pip install "
                "nvidia-nccl-cu13 (or nvidia-nccl-cu12, matching your CUDA), or install "
                "libnccl2 on the system")
        lib = ctypes.CDLL(path)
        _declare(lib)
        _lib = lib
    return _lib


def version() -> tuple[int, int, int]:
    """NCCL's version as (major, minor, patch)."""
    code = ctypes.c_int()
    _check(load().ncclGetVersion(ctypes.byref(code)), "ncclGetVersion")
    v = code.value  # NCCL_VERSION(X, Y, Z): X * 10000 + Y * 100 + Z since 2.9
    return (v // 10000, v // 100 % 100, v % 100) if v >= 20900 else (
        v // 1000, v // 100 % 10, v % 100)


def _check(result: int, call: str, comm=None) -> None:
    if result in (0, _IN_PROGRESS):
        return
    lib = load()
    what = lib.ncclGetErrorString(result).decode(errors="replace")
    last = (lib.ncclGetLastError(comm) or b"").decode(errors="replace")
    detail = f" ({last})" if last else ""
    raise DistBackendError(f"ember.distributed: NCCL error in {call}: {what}{detail}")


def unique_id() -> bytes:
    """A new NCCL unique id (what rank 0 gives the others to make a communicator)."""
    uid = UniqueId()
    _check(load().ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
    return ctypes.string_at(ctypes.addressof(uid), _UNIQUE_ID_BYTES)  # NULs included


def dtype_code(dtype) -> int | None:
    """NCCL's type code of an Ember dtype (None: NCCL cannot carry it)."""
    return _DTYPES.get(str(dtype).rsplit(".", 1)[-1])


class _Completion:
    """The request of the work a communicator queued on a stream up to now: ``Test()`` is
    whether the device has done it (raising NCCL's asynchronous error, if any). Stream-
    ordered: the host need not wait for it (``Work.wait`` only checks the error)."""

    stream_ordered = True

    def __init__(self, comm: Communicator, event) -> None:
        self.comm, self.event = comm, event

    def check(self) -> None:
        self.comm.check_async_error()

    def Test(self) -> bool:  # noqa: N802  (the name of the engines' requests)
        self.check()
        return self.event.query()

    def abort(self) -> None:
        """Ends the communicator (its stuck kernels return)."""
        self.comm.abort()


class Communicator:
    """One rank of an NCCL communicator on CUDA device ``device_index``."""

    def __init__(self, handle: ctypes.c_void_p, size: int, rank: int, device_index: int):
        self._handle, self._size, self._rank = handle, size, rank
        self.device_index = device_index

    @classmethod
    def create(cls, uid: bytes, size: int, rank: int, device_index: int) -> Communicator:
        """``ncclCommInitRank`` on ``device_index``: collective over the ``size`` ranks that
        received ``uid``."""
        import ember_tensor as et

        lib = load()
        if len(uid) != _UNIQUE_ID_BYTES:
            raise ValueError(f"an NCCL unique id has {_UNIQUE_ID_BYTES} bytes, got {len(uid)}")
        handle, ident = ctypes.c_void_p(), UniqueId()
        ctypes.memmove(ctypes.addressof(ident), uid, _UNIQUE_ID_BYTES)
        with et.cuda.device(device_index):
            _check(lib.ncclCommInitRank(ctypes.byref(handle), size, ident, rank),
                   "ncclCommInitRank")
        return cls(handle, size, rank, device_index)

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def current_stream(self) -> int:
        import ember_tensor as et

        return et.cuda.current_stream(self.device_index).cuda_stream

    def completion(self, stream: int) -> _Completion:
        import ember_tensor as et

        s = et.cuda.Stream(stream_id=stream, device_index=self.device_index)
        return _Completion(self, s.record_event())

    def check_async_error(self) -> None:
        err = ctypes.c_int()
        _check(load().ncclCommGetAsyncError(self._handle, ctypes.byref(err)),
               "ncclCommGetAsyncError", self._handle)
        _check(err.value, "a queued operation", self._handle)

    @contextlib.contextmanager
    def group(self):
        """Operations queued inside run as one (``ncclGroupStart`` / ``ncclGroupEnd``): how
        sends and receives to several peers make gathers and all-to-alls."""
        lib = load()
        _check(lib.ncclGroupStart(), "ncclGroupStart")
        try:
            yield
        finally:
            _check(lib.ncclGroupEnd(), "ncclGroupEnd", self._handle)

    # -- the operations: device addresses, counts of elements, NCCL codes, a stream --------

    def all_reduce(self, send: int, recv: int, count: int, dtype: int, op: int, stream: int):
        _check(load().ncclAllReduce(send, recv, count, dtype, op, self._handle, stream),
               "ncclAllReduce", self._handle)

    def broadcast(self, send: int, recv: int, count: int, dtype: int, root: int, stream: int):
        _check(load().ncclBroadcast(send, recv, count, dtype, root, self._handle, stream),
               "ncclBroadcast", self._handle)

    def reduce(self, send: int, recv: int, count: int, dtype: int, op: int, root: int,
               stream: int):
        _check(load().ncclReduce(send, recv, count, dtype, op, root, self._handle, stream),
               "ncclReduce", self._handle)

    def all_gather(self, send: int, recv: int, count: int, dtype: int, stream: int):
        """recv: ``size()`` blocks of ``count`` elements."""
        _check(load().ncclAllGather(send, recv, count, dtype, self._handle, stream),
               "ncclAllGather", self._handle)

    def reduce_scatter(self, send: int, recv: int, count: int, dtype: int, op: int,
                       stream: int):
        """send: ``size()`` blocks of ``count`` elements; block r reduced into rank r."""
        _check(load().ncclReduceScatter(send, recv, count, dtype, op, self._handle, stream),
               "ncclReduceScatter", self._handle)

    def send(self, buf: int, count: int, dtype: int, peer: int, stream: int):
        _check(load().ncclSend(buf, count, dtype, peer, self._handle, stream), "ncclSend",
               self._handle)

    def recv(self, buf: int, count: int, dtype: int, peer: int, stream: int):
        _check(load().ncclRecv(buf, count, dtype, peer, self._handle, stream), "ncclRecv",
               self._handle)

    def abort(self) -> None:
        """Ends the communicator at once, even with operations stuck (a peer died)."""
        if self._handle:
            load().ncclCommAbort(self._handle)
            self._handle = ctypes.c_void_p()

    def free(self) -> None:
        if self._handle:
            _check(load().ncclCommDestroy(self._handle), "ncclCommDestroy")
            self._handle = ctypes.c_void_p()
