"""How a worker's batch reaches the main process: all its tensors in one shared segment.

The worker copies every tensor of the collated batch (inside dicts, lists, tuples and
namedtuples) into one new ``file_descriptor`` segment, sends the segment's descriptor over
its own socket to the main process, and puts the batch on the result queue with each tensor
replaced by a ``_Slot`` (dtype, shape, strides, offset). The main process takes the
descriptors from each worker's socket in the order that worker's batches arrive, maps the
segment once and rebuilds the tensors as views of it.

Per batch that is one segment, one descriptor passed and one mapping, instead of one of each
per tensor plus a connection to the sender per tensor (ember-mp's general path, which a
batch holding other objects with tensors inside still takes).
"""

from __future__ import annotations

import collections.abc
from dataclasses import dataclass
from multiprocessing import reduction

import ember_tensor as et
from ember_mp import _segments

_ALIGN = 64


@dataclass(frozen=True)
class _Slot:
    dtype: str
    shape: tuple
    stride: tuple
    offset: int  # in elements of dtype


@dataclass(frozen=True)
class Packed:
    """A batch whose tensors are in a segment sent over worker ``worker_id``'s socket."""

    worker_id: int
    nbytes: int
    structure: object


def _walk(obj, kind, leaf):
    """``obj`` with every ``kind`` instance x replaced by ``leaf(x)``, through dicts, lists,
    tuples and namedtuples (other objects unchanged)."""
    if isinstance(obj, kind):
        return leaf(obj)
    if isinstance(obj, collections.abc.Mapping):
        items = {k: _walk(v, kind, leaf) for k, v in obj.items()}
        try:
            return type(obj)(items)
        except TypeError:
            return items
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_walk(v, kind, leaf) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_walk(v, kind, leaf) for v in obj)
    return obj


def _contiguous_strides(shape: tuple) -> tuple:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def pack(batch, channel, worker_id: int):
    """In a worker: ``batch`` as a ``Packed`` whose segment went over ``channel`` (a duplex
    ``Connection``); ``batch`` itself when it holds no tensor to move."""
    tensors = []
    _walk(batch, et.Tensor, lambda t: tensors.append(t) or t)
    if not tensors or any(not t.is_cpu or t.requires_grad for t in tensors):
        return batch
    offsets, total = [], 0
    for t in tensors:
        total = -(-total // _ALIGN) * _ALIGN
        offsets.append(total)
        total += t.numel() * t.element_size()
    if total == 0:
        return batch
    segment = _segments.create(total, "file_descriptor")
    base = _segments.base_tensor(segment)
    slots = {}
    for t, offset in zip(tensors, offsets):
        item = t.element_size()
        shape = tuple(t.shape)
        stride = _contiguous_strides(shape)
        view = base._reinterpret(t.dtype, shape, stride, offset // item)
        view.copy_(t)
        slots[id(t)] = _Slot(str(t.dtype).split(".")[1], shape, stride, offset // item)
    reduction.send_handle(channel, segment.fd, 0)
    return Packed(worker_id, total, _walk(batch, et.Tensor, lambda t: slots[id(t)]))


def unpack(packed: Packed, channel):
    """In the main process: the batch of ``packed``, its tensors views of the segment taken
    from ``channel`` (the socket of the worker that sent it)."""
    fd = reduction.recv_handle(channel)
    base = _segments.base_tensor(_segments.adopt_fd(fd, packed.nbytes))

    return _walk(packed.structure, _Slot, lambda slot: base._reinterpret(
        getattr(et, slot.dtype), slot.shape, slot.stride, slot.offset))
