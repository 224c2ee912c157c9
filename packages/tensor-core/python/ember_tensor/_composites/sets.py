"""Set composites: ``unique``, ``unique_consecutive`` and ``isin``, from the stable sort,
searchsorted and cumulative sums, with PyTorch's results (NaNs are never equal to each other,
so each is its own value) and errors. Integers whose range is no wider than about their
number take an O(n) path instead: unique counts them (bincount), isin looks them up in a
table of the test elements' range."""

from __future__ import annotations

import ember_tensor as _et

from . import _number_operand
from .reduction import _wrap

__all__ = ["isin", "unique", "unique_consecutive"]


def _rows(self, dim):
    """self as a 2-d tensor of the slices to compare (one per row), and how to rebuild a
    tensor of such rows: dim None compares elements."""
    if dim is None:
        flat = self.reshape(-1)
        return flat.unsqueeze(-1), lambda rows: rows.reshape(-1)
    d = _wrap(dim, self.dim())
    moved = self.movedim(d, 0)
    rest = tuple(moved.shape[1:])
    if 0 in rest:  # PyTorch's check: slices without elements cannot be told apart
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    width = 1
    for n in rest:
        width *= n
    return (moved.reshape(moved.shape[0], width),
            lambda rows: rows.reshape((rows.shape[0],) + rest).movedim(0, d))


def _new_group(rows):
    """Per row: whether it differs from the one before it (the first row always does)."""
    n = rows.shape[0]
    if n == 0:
        return _et.ones(0, dtype=_et.bool, device=rows.device)
    differs = _et.ne(rows[1:], rows[:-1]).any(-1) if rows.shape[1] else \
        _et.zeros(n - 1, dtype=_et.bool, device=rows.device)
    return _et.cat([_et.ones(1, dtype=_et.bool, device=rows.device), differs])


def _lexicographic_order(rows):
    """The stable order that sorts the rows lexicographically (one stable sort per column,
    last column first)."""
    order = _et.arange(rows.shape[0], device=rows.device)
    for c in range(rows.shape[1] - 1, -1, -1):
        column = rows[order, c] if rows.shape[0] else rows[:, c]
        order = order[_et.argsort(column, stable=True)]
    return order


def _results(values, inverse, counts, return_inverse: bool, return_counts: bool):
    out = (values,)
    if return_inverse:
        out += (inverse,)
    if return_counts:
        out += (counts,)
    return out[0] if len(out) == 1 else out


def _grouped(rows, starts):
    """(the group id of each row, the number of rows of each group) from the group starts."""
    group = _et.sub(_et.cumsum(starts.to(_et.int64), 0), 1)
    n_groups = int(starts.sum())
    counts = _et.zeros(n_groups, dtype=_et.int64, device=rows.device)
    counts = _et.index_add(counts, 0, group, _et.ones_like(group)) if group.numel() else counts
    return group, counts


def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of self (dim None: flattened, sorted), or its distinct slices
    along dim (sorted lexicographically); with return_inverse, each element's (slice's)
    position among them (self's shape, or dim's length); with return_counts, how often each
    occurs. A tensor, or a tuple when either flag is set."""
    if dim is None:
        return _unique_elements(self, return_inverse, return_counts)
    rows, rebuild = _rows(self, dim)
    order = _lexicographic_order(rows)
    sorted_rows = rows[order]
    starts = _new_group(sorted_rows)
    group, counts = _grouped(sorted_rows, starts)
    values = rebuild(sorted_rows[starts])
    inverse = _et.empty_like(group)
    if group.numel():
        inverse = _et.index_put(inverse, (order,), group)
    inverse = inverse.reshape(self.shape) if dim is None else inverse
    return _results(values, inverse, counts, return_inverse, return_counts)


_COUNTABLE = (_et.uint8, _et.int8, _et.int16, _et.int32, _et.int64)


def _unique_by_counting(flat, shape, return_inverse: bool, return_counts: bool):
    """unique of integers whose range is at most about their number: each value's count
    (bincount of value - min) instead of a sort, O(n); None when the range is wider."""
    if flat.dtype not in _COUNTABLE or not flat.numel():
        return None
    lowest, highest = (int(v) for v in flat.aminmax())
    span = highest - lowest + 1
    if span > max(flat.numel(), 1024):
        return None
    shifted = _et.sub(flat.to(_et.int64), lowest)  # (in int64: int8 - min may wrap in int8)
    counts_all = _et.bincount(shifted, minlength=span)
    present = _et.gt(counts_all, 0)
    values = _et.add(present.nonzero().reshape(-1), lowest).to(flat.dtype)
    inverse = counts = None
    if return_inverse:
        rank = _et.sub(_et.cumsum(present.to(_et.int64), 0), 1)
        inverse = rank[shifted].reshape(shape)
    if return_counts:
        counts = counts_all[present]
    return _results(values, inverse, counts, return_inverse, return_counts)


def _unique_elements(self, return_inverse: bool, return_counts: bool):
    """unique over all elements: integers of a narrow range by counting, others by one
    stable sort, the run starts of equal values, and the inverse and counts only when asked
    for."""
    flat = self.reshape(-1)
    counted = _unique_by_counting(flat, self.shape, return_inverse, return_counts)
    if counted is not None:
        return counted
    values, order = _et.sort(flat, stable=True)
    n = flat.numel()
    if n:
        starts = _et.cat([_et.ones(1, dtype=_et.bool, device=flat.device),
                          _et.ne(values[1:], values[:-1])])
        values = values[starts]
    inverse = counts = None
    if return_inverse:
        inverse = _et.empty_like(order)
        if n:
            inverse = _et.index_put(inverse, (order,), _et.sub(_et.cumsum(starts, 0), 1))
        inverse = inverse.reshape(self.shape)
    if return_counts:
        at = starts.nonzero().reshape(-1) if n else _et.zeros(0, dtype=_et.int64,
                                                              device=flat.device)
        ends = _et.cat([at[1:], _et.full((min(n, 1),), n, dtype=_et.int64, device=flat.device)])
        counts = _et.sub(ends, at)
    return _results(values, inverse, counts, return_inverse, return_counts)


def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    """self with each run of equal consecutive elements (dim None: of the flattened tensor;
    else slices along dim) collapsed into one; inverse and counts as unique's."""
    rows, rebuild = _rows(self, dim)
    starts = _new_group(rows)
    group, counts = _grouped(rows, starts)
    values = rebuild(rows[starts])
    inverse = group.reshape(self.shape) if dim is None else group
    return _results(values, inverse, counts, return_inverse, return_counts)


def _membership_table(t, n: int):
    """(min, a bool table over [min, max] marking t's values) for integer test elements whose
    range is at most about n (the elements tested); None otherwise."""
    if t.dtype not in _COUNTABLE:
        return None
    lowest, highest = (int(v) for v in t.aminmax())
    span = highest - lowest + 1
    if span > max(n, 1024):
        return None
    member = _et.zeros(span, dtype=_et.bool, device=t.device)
    ones = _et.ones(t.numel(), dtype=_et.bool, device=t.device)
    return lowest, _et.index_put(member, (_et.sub(t.to(_et.int64), lowest),), ones)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of elements occurs in test_elements (either may be a number);
    invert=True negates. The result has elements' shape, bool."""
    like = elements if isinstance(elements, _et.Tensor) else test_elements
    if not isinstance(elements, _et.Tensor):
        elements = _number_operand(elements, like)
    if not isinstance(test_elements, _et.Tensor):
        test_elements = _number_operand(test_elements, like)
    dt = _et.result_type(elements, test_elements)
    x, t = elements.to(dt), test_elements.to(dt).reshape(-1)
    if t.numel() == 0:
        found = _et.zeros(x.shape, dtype=_et.bool, device=x.device)
    elif (table := _membership_table(t, x.numel())) is not None:
        # integers of a narrow range: a lookup table of it, O(n), instead of binary searches
        lowest, member = table
        flat = _et.sub(x.reshape(-1).to(_et.int64), lowest)
        inside = _et.logical_and(_et.ge(flat, 0), _et.lt(flat, member.numel()))
        found = _et.logical_and(member[flat.clamp(0, member.numel() - 1)], inside)
        found = found.reshape(x.shape)
    else:
        t = _et.sort(t).values
        pos = _et.searchsorted(t, x.reshape(-1)).clamp(max=t.numel() - 1)
        found = _et.eq(t[pos], x.reshape(-1)).reshape(x.shape)
    return _et.logical_not(found) if invert else found
