"""How tensors cross process boundaries: reducers registered with multiprocessing's pickler.

Pickling a CPU tensor for another process moves its storage into shared memory (once: a storage
that is shared already is sent as it is) and sends only the segment's handle (a descriptor
or a name) with the tensor's dtype, sizes, strides and offset. The receiver maps the same
memory, so a write on either side is seen by the other. A segment received twice in one
process is mapped once (the two tensors then share memory, though not one storage object).
A CUDA tensor travels as a CUDA IPC handle of its device memory (``_cuda``).
"""

from __future__ import annotations

import errno
import threading
import weakref
from multiprocessing import reduction

import ember_tensor as et

from . import _cuda, _segments

# (device, inode) of a segment -> this process's Segment of it (alive while a tensor uses it)
_received: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_received_lock = threading.Lock()


def _dtype_name(dtype) -> str:
    return str(dtype).split(".")[1]


def _rebuild(base, dtype_name, size, stride, offset, requires_grad):
    t = base._reinterpret(getattr(et, dtype_name), size, stride, offset)
    if requires_grad:
        t.requires_grad_()
    return t


def _base_of(segment: _segments.Segment):
    """A uint8 tensor over ``segment``, through this process's earlier mapping of the same
    segment when there is one (the new descriptor or lock is then given up)."""
    key = segment.identity()
    with _received_lock:
        known = _received.get(key)
        if known is not None and known.fd >= 0:
            segment.close()
            segment = known
        else:
            _received[key] = segment
    return _segments.base_tensor(segment)


def rebuild_empty(*meta):
    base = et.empty(0, dtype=et.uint8)
    base._storage_record = _segments.EMPTY
    return _rebuild(base, *meta)


def rebuild_from_fd(dup, nbytes, *meta):
    try:
        fd = dup.detach()
    except (FileNotFoundError, ConnectionError):
        raise RuntimeError(
            f"ember.multiprocessing: the process that sent a tensor of {nbytes} bytes exited "
            "before it was received; under the 'file_descriptor' sharing strategy the "
            "sender hands the descriptor over itself, so it must stay alive until the "
            "receiver has the tensor") from None
    except OSError as exc:
        raise _segments._fd_error(exc, "receiving", nbytes) from None
    except RuntimeError as exc:
        if "ancdata" not in str(exc):
            raise
        # the kernel drops a passed descriptor that would exceed the receiver's limit
        raise _segments._fd_error(OSError(errno.EMFILE, str(exc)), "receiving",
                                  nbytes) from None
    return _rebuild(_base_of(_segments.adopt_fd(fd, nbytes)), *meta)


def rebuild_from_name(name, nbytes, *meta):
    return _rebuild(_base_of(_segments.open_named(name, nbytes)), *meta)


def reduce_tensor(tensor):
    et._refuse_non_leaf(tensor)
    meta = (_dtype_name(tensor.dtype), tuple(tensor.shape), tuple(tensor.stride()),
            tensor.storage_offset(), tensor.requires_grad)
    if tensor.is_cuda:
        return _cuda.reduce_cuda_tensor(tensor, meta)
    if not tensor.is_cpu:
        raise RuntimeError(f"ember.multiprocessing: only CPU and CUDA tensors can be sent to "
                           f"other processes, got one on {tensor.device}")
    tensor.share_memory_()
    segment = tensor._storage_record
    if segment is _segments.EMPTY:
        return rebuild_empty, meta
    if segment.strategy == "file_system":
        _segments.keep_alive(segment)
        return rebuild_from_name, (segment.name, segment.nbytes, *meta)
    try:
        dup = reduction.DupFd(segment.fd)
    except OSError as exc:
        raise _segments._fd_error(exc, "sending", segment.nbytes) from None
    return rebuild_from_fd, (dup, segment.nbytes, *meta)


def init_reductions() -> None:
    """Registers the reducer (idempotent) and the core's memory sharer."""
    reduction.ForkingPickler.register(et.Tensor, reduce_tensor)
    et._set_memory_sharer(_segments.share)
