"""How a worker's batch reaches the main process: all its tensors in one shared segment.

The worker copies every tensor of the collated batch (inside dicts, lists, tuples and
namedtuples) into one new ``file_descriptor`` segment, sends the segment's descriptor over
its own socket to the main process, and puts the batch on the result queue with each tensor
replaced by a ``_Slot`` (dtype, shape, strides, offset). The main process takes the
descriptors from each worker's socket in the order that worker's batches arrive, maps the
segment once and rebuilds the tensors as views of it.

With ``default_collate`` (``collate_packed``) the worker stacks each batch tensor straight
into the segment, so the batch's data is written once; with another ``collate_fn``
(``pack``) its result is copied in. Per batch that is one segment, one descriptor passed and
one mapping, instead of one of each per tensor plus a connection to the sender per tensor
(ember-mp's general path, which a batch holding other objects with tensors inside still
takes).
"""

from __future__ import annotations

import collections.abc
from dataclasses import dataclass
from multiprocessing import reduction

import numpy as np

import ember_tensor as et
from ember_mp import _segments

from .collate import collate_with

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


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


def _send(segment, base, batch, placed: dict, channel, worker_id: int) -> Packed:
    """``batch`` as a Packed: the tensors of ``placed`` (id -> (tensor, offset in bytes)) are
    in the segment already; the others are copied into it after them."""
    end = max((o + t.numel() * t.element_size() for t, o in placed.values()), default=0)
    slots = {}

    def slot(t):
        if id(t) not in placed:
            nonlocal end
            end = _aligned(end)
            stride = _contiguous_strides(tuple(t.shape))
            base._reinterpret(t.dtype, tuple(t.shape), stride, end // t.element_size()).copy_(t)
            placed[id(t)] = (t, end)
            end += t.numel() * t.element_size()
        offset = placed[id(t)][1]
        return _Slot(str(t.dtype).split(".")[1], tuple(t.shape),
                     _contiguous_strides(tuple(t.shape)), offset // t.element_size())

    structure = _walk(batch, et.Tensor, lambda t: slots.setdefault(id(t), slot(t)))
    reduction.send_handle(channel, segment.fd, 0)
    return Packed(worker_id, segment.nbytes, structure)


def collate_packed(items: list, channel, worker_id: int):
    """In a worker: ``default_collate(items)`` with every stacked tensor written straight into
    one new segment (the other tensors, made from numbers, copied in after them), sent as a
    ``Packed``. A batch without tensors is returned as it is."""
    shapes, stand_ins = [], []  # pass 1: each stacked tensor's dtype and shape, unstacked

    def measure(tensors):
        shapes.append((tensors[0].dtype, (len(tensors), *tensors[0].shape)))
        stand_ins.append(et.empty(0))
        return stand_ins[-1]

    leaves = []
    _walk(collate_with(items, measure), et.Tensor, lambda t: leaves.append(t) or t)
    stood = {id(t) for t in stand_ins}
    others = [t for t in leaves if id(t) not in stood]
    offsets, total = [], 0
    for dtype, shape in shapes:
        total = _aligned(total)
        offsets.append(total)
        total += int(np.prod(shape, dtype=np.int64)) * et.empty(0, dtype=dtype).element_size()
    for t in others:  # made from numbers
        total = _aligned(total) + t.numel() * t.element_size()
    if total == 0:
        return collate_with(items, lambda ts: et.stack(list(ts), 0))
    segment = _segments.create(total, "file_descriptor")
    base = _segments.base_tensor(segment)
    placed = {}
    order = iter(offsets)

    def stack_into(tensors):  # pass 2: into the segment
        offset = next(order)
        shape = (len(tensors), *tensors[0].shape)
        out = base._reinterpret(tensors[0].dtype, shape, _contiguous_strides(shape),
                                offset // tensors[0].element_size())
        et.stack(list(tensors), 0, out=out)
        placed[id(out)] = (out, offset)
        return out

    batch = collate_with(items, stack_into)
    return _send(segment, base, batch, placed, channel, worker_id)


def pack(batch, channel, worker_id: int):
    """In a worker: ``batch`` (any collate_fn's result) as a ``Packed`` whose segment went
    over ``channel`` (a duplex ``Connection``); ``batch`` itself when it holds no tensor to
    move."""
    tensors = []
    _walk(batch, et.Tensor, lambda t: tensors.append(t) or t)
    if not tensors or any(not t.is_cpu or t.requires_grad for t in tensors):
        return batch
    total = 0
    for t in tensors:
        total = _aligned(total) + t.numel() * t.element_size()
    if total == 0:
        return batch
    segment = _segments.create(total, "file_descriptor")
    return _send(segment, _segments.base_tensor(segment), batch, {}, channel, worker_id)


def unpack(packed: Packed, channel):
    """In the main process: the batch of ``packed``, its tensors views of the segment taken
    from ``channel`` (the socket of the worker that sent it)."""
    fd = reduction.recv_handle(channel)
    base = _segments.base_tensor(_segments.adopt_fd(fd, packed.nbytes))

    return _walk(packed.structure, _Slot, lambda slot: base._reinterpret(
        getattr(et, slot.dtype), slot.shape, slot.stride, slot.offset))
