"""``default_collate`` (a list of samples -> one batch) and ``default_convert`` (NumPy to
tensors, for loaders without batching), with PyTorch's rules."""

from __future__ import annotations

import collections.abc
import re

import numpy as np

import ember_tensor as et

_NOT_NUMERIC = re.compile(r"[SaUO]")  # NumPy string, bytes and object dtypes

_COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                  "or lists; found {}")


def _is_namedtuple(obj) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def _numpy_to_tensor(a: np.ndarray):
    return et.from_numpy(np.ascontiguousarray(a))


def default_convert(data):
    """NumPy arrays and scalars become tensors, inside dicts, namedtuples, tuples and lists
    too; everything else is returned as is."""
    if isinstance(data, et.Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if _NOT_NUMERIC.search(data.dtype.str) else _numpy_to_tensor(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return et.tensor(data.item(), dtype=getattr(et, data.dtype.name, None))
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """One batch from a list of samples, recursively:

    - tensors are stacked along a new first dim (same shapes needed);
    - NumPy arrays and scalars become tensors, then are stacked;
    - Python floats become a float64 tensor, ints an int64 tensor (bools a bool tensor);
    - strings and bytes stay the sequence they came in;
    - dicts are collated key by key (keeping the mapping type), namedtuples field by
      field; other sequences (tuples included) become lists of collated positions, and
      must be of equal length.
    """
    return collate_with(batch, lambda tensors: et.stack(list(tensors), 0))


def collate_with(batch, stack):
    """``default_collate`` with ``stack(tensors)`` making each stacked batch tensor (the
    DataLoader's workers stack straight into shared memory)."""
    elem = batch[0]
    if isinstance(elem, et.Tensor):
        return stack(batch)
    if isinstance(elem, np.ndarray):
        if _NOT_NUMERIC.search(elem.dtype.str):
            raise TypeError(_COLLATE_ERROR.format(elem.dtype))
        return collate_with([_numpy_to_tensor(b) for b in batch], stack)
    if isinstance(elem, np.generic) and not isinstance(elem, (np.str_, np.bytes_)):
        return _numpy_to_tensor(np.array(batch))
    if isinstance(elem, bool):
        return et.tensor(list(batch), dtype=et.bool)
    if isinstance(elem, float):
        return et.tensor(list(batch), dtype=et.float64)
    if isinstance(elem, int):
        return et.tensor(list(batch), dtype=et.int64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: collate_with([d[key] for d in batch], stack) for key in elem}
        try:
            return type(elem)(collated)
        except TypeError:
            return collated
    if _is_namedtuple(elem):
        return type(elem)(*(collate_with(s, stack) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [collate_with(s, stack) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return transposed
        try:
            return type(elem)(transposed)
        except TypeError:
            return transposed
    raise TypeError(_COLLATE_ERROR.format(type(elem)))
