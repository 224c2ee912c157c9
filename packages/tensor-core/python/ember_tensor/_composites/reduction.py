"""Reduction, scan and order-statistic composites (``composite: python`` in ops.yaml): NaN-aware
sums and means, moments, medians, modes and quantiles from the (stable) sort, cumulative maxima
and log-sum-exp by a doubling scan, differences and integrals, histograms and bucketing, with
PyTorch's names, defaults, results and errors. Autograd records the ops they call; they run
on every device those ops run on."""

from __future__ import annotations

import math

import ember_tensor as _et

from . import _dtype_name as _name
from . import _number_operand, _opmath, _tensor_arg

__all__ = [
    "aminmax",
    "bincount",
    "bucketize",
    "corrcoef",
    "count_nonzero",
    "cov",
    "cummax",
    "cummin",
    "cumulative_trapezoid",
    "diff",
    "dist",
    "equal",
    "gradient",
    "histc",
    "histogram",
    "histogramdd",
    "kthvalue",
    "median",
    "mode",
    "nanmean",
    "nanmedian",
    "nanquantile",
    "nansum",
    "quantile",
    "renorm",
    "searchsorted",
    "std_mean",
    "trapezoid",
    "trapz",
    "var_mean",
]




def _wrap(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


# --------------------------------------------------------------------- sums, means, moments


def count_nonzero(self, dim=None):
    """The number of non-zero elements over dim (all dims if None), as int64."""
    return _et.sum(_et.ne(self, 0), dim)


def nansum(self, dim=None, keepdim=False, *, dtype=None):
    """sum treating NaN as zero."""
    if self.is_complex():
        raise RuntimeError("nansum does not support complex inputs")
    x = _et.where(_et.isnan(self), 0, self) if self.is_floating_point() else self
    return _et.sum(x, dim, keepdim, dtype=dtype)


def nanmean(self, dim=None, keepdim=False, *, dtype=None):
    """mean of the non-NaN elements (NaN where there are none)."""
    if not (self.is_floating_point() or self.is_complex()):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {self.dtype._scalar_type_name}")
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be either "
                           f"a floating point or complex dtype. Got: {dtype._scalar_type_name}")
    count = _et.sum(_et.logical_not(_et.isnan(self)), dim, keepdim)
    return _et.div(nansum(self, dim, keepdim, dtype=dtype), count)


def _moment_args(dim, unbiased):
    """PyTorch's var_mean(x, unbiased) overload: a bool in dim's place is unbiased."""
    if isinstance(dim, bool):
        return None, dim
    return dim, unbiased


def var_mean(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) over dim (int, ints or None: every element), var with the given correction
    (1 by default; unbiased=False: 0); var_mean(x, unbiased) as PyTorch's overload."""
    dim, unbiased = _moment_args(dim, unbiased)
    return (_et.var(self, dim, unbiased, keepdim, correction=correction),
            _et.mean(self, dim, keepdim))


def std_mean(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) over dim, std with the given correction (1 by default; unbiased=False: 0);
    std_mean(x, unbiased) as PyTorch's overload."""
    dim, unbiased = _moment_args(dim, unbiased)
    return (_et.std(self, dim, unbiased, keepdim, correction=correction),
            _et.mean(self, dim, keepdim))


def aminmax(self, *, dim=None, keepdim=False):
    """(min, max) over dim (all elements if None)."""
    if self.numel() == 0 and dim is None:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    dims = None if dim is None else (_wrap(dim, self.dim()),)
    if self.dim() == 0:
        return self.clone(), self.clone()
    return _et.amin(self, dims or (), keepdim), _et.amax(self, dims or (), keepdim)


def dist(self, other, p=2):
    """The p-norm of self - other (broadcast)."""
    _tensor_arg("dist", other, "other", 2)
    return _et.linalg.vector_norm(_et.sub(self, other), p)


def equal(self, other):
    """Whether self and other have the same shape and elements (a Python bool)."""
    if tuple(self.shape) != tuple(other.shape):
        return False
    return bool(_et.all(_et.eq(self, other)).item())


# --------------------------------------------------------------------- scans


def cummax(self, dim):
    """(values, indices): the running maximum along dim and where it was found (the latest
    of equal maxima; NaN propagates)."""
    return _et._C._cumextreme(self, dim, True)


def cummin(self, dim):
    """(values, indices): the running minimum along dim and where it was found (the latest
    of equal minima; NaN propagates)."""
    return _et._C._cumextreme(self, dim, False)


# --------------------------------------------------------------------- order statistics


def _nan_count(x, dim: int):
    if not x.is_floating_point():
        return None
    return _et.sum(_et.isnan(x), (dim,), True)


def _order_stat(op: str, self, dim, keepdim: bool, position):
    """(values, indices) at ``position(n_valid, n)`` of each slice's stable ascending order
    along dim (NaN last); ``n_valid`` counts the non-NaN elements (a tensor, keepdim shape)
    or is None. The kernel _order_select_indices selects; the values are gathered (so the
    gradient is gather's)."""
    if self.is_complex():
        raise RuntimeError(f"{op}(): dtype {_name(self.dtype)} is not supported")
    x = self.reshape(1) if self.dim() == 0 else self
    d = _wrap(dim, x.dim())
    if x.size(d) == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
    nan = _nan_count(x, d)
    n = x.size(d)
    valid = None if nan is None else n - nan
    pos = position(valid, n, x, d)
    i = _et._C._order_select_indices(x, d, pos)
    v = _et.gather(x, d, i)
    if not (keepdim or self.dim() == 0):
        v, i = v.squeeze(d), i.squeeze(d)
    if self.dim() == 0:
        v, i = v.reshape(()), i.reshape(())
    return v, i


def _full_pos(value, sv, d):
    shape = list(sv.shape)
    shape[d] = 1
    return _et.full(shape, value, dtype=_et.int64, device=sv.device)


def _of_all_elements(stat, self):
    """stat's value over all of self's elements (NaN for none): median(x), nanmedian(x)."""
    flat = self.reshape(-1)
    if flat.numel() == 0:
        return _et.full((), math.nan, dtype=self.dtype, device=self.device)
    return stat(flat, 0)[0]


def median(self, dim=None, keepdim=False):
    """Without dim: the lower median of all elements (NaN if any is NaN). With dim:
    (values, indices) of the lower median of each slice (NaN, at its index, where the slice
    has one)."""
    if dim is None:
        return _of_all_elements(median, self)

    def position(valid, n, sv, d):
        lower = _full_pos((n - 1) // 2, sv, d)
        if valid is None:
            return lower
        # a slice with NaN: its first NaN (sorted last), as PyTorch reports it
        return _et.where(_et.lt(valid, n), valid, lower)

    return _order_stat("median", self, dim, keepdim, position)


def nanmedian(self, dim=None, keepdim=False):
    """median ignoring NaN: the lower median of each slice's non-NaN elements (NaN where there
    are none)."""
    if dim is None:
        return _of_all_elements(nanmedian, self)

    def position(valid, n, sv, d):
        if valid is None:
            return _full_pos((n - 1) // 2, sv, d)
        return _et.clamp(_et.floor_divide(_et.sub(valid, 1), 2), min=0)

    return _order_stat("nanmedian", self, dim, keepdim, position)


def kthvalue(self, k, dim=-1, keepdim=False):
    """(values, indices): the k-th smallest element of each slice along dim (1-based; NaN
    sorts last)."""
    n = self.size(dim) if self.dim() else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension "
                           f"{_wrap(dim, self.dim())}")
    return _order_stat("kthvalue", self, dim, keepdim,
                       lambda valid, n, sv, d: _full_pos(k - 1, sv, d))


def mode(self, dim=-1, keepdim=False):
    """(values, indices): the most frequent value of each slice along dim (the smallest of
    equally frequent ones) and the last index where it occurs."""
    if self.is_complex():
        raise RuntimeError(f"mode(): dtype {_name(self.dtype)} is not supported")
    x = self.reshape(1) if self.dim() == 0 else self
    d = _wrap(dim, x.dim())
    n = x.size(d)
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    sv, si = _et.sort(x, d, stable=True)
    # runs of equal values in the sorted slice: their ids, lengths, and the longest (first)
    first = _et.ones_like(sv.narrow(d, 0, 1), dtype=_et.int64)
    starts = _et.cat([first, _et.ne(sv.narrow(d, 1, n - 1), sv.narrow(d, 0, n - 1))
                      .to(_et.int64)], d)
    run = _et.sub(_et.cumsum(starts, d), 1)
    length = _et.scatter_add(_et.zeros_like(run), d, run, _et.ones_like(run))
    best = _et.argmax(length, d, True)
    in_best = _et.eq(run, best)
    pos = _et.argmax(_et.where(in_best, run, -1), d, True)  # the run's first position
    value = _et.gather(sv, d, pos)
    index = _et.amax(_et.where(in_best, si, -1), (d,), True)
    if not keepdim or self.dim() == 0:
        value, index = value.squeeze(d), index.squeeze(d)
    if self.dim() == 0:
        value, index = value.reshape(()), index.reshape(())
    return value, index


# --------------------------------------------------------------------- differences, integrals


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(op: str, self, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool):
    """PyTorch's quantile / nanquantile: the sorted slice read at rank q (n - 1) (n: the
    slice's non-NaN count for nanquantile), interpolated; NaN where quantile's slice holds a
    NaN or nanquantile's holds nothing else. A 1-d q puts its dim first."""
    if self.dtype not in (_et.float32, _et.float64):
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{op}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    if isinstance(q, _et.Tensor):
        if q.dim() > 1:
            raise RuntimeError(f"{op}() q must be a scalar or 1D tensor")
        if q.dtype != self.dtype:
            raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor")
        qt, q_dims = q, q.dim()
    else:
        qt, q_dims = _et.tensor(float(q), dtype=self.dtype, device=self.device), 0
    if self.numel() == 0:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    inside = _et.logical_and(_et.ge(qt, 0), _et.le(qt, 1))  # NaN is outside
    if not bool(inside.all()):
        if q_dims == 0 and not isinstance(q, _et.Tensor):
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
        raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
    if dim is None:
        x = self.reshape(-1)
    else:
        dim = _wrap(dim, self.dim())
        x = self.reshape(1) if self.dim() == 0 else self.movedim(dim, -1)
    values = _et.sort(x, dim=-1).values  # NaNs last
    n = values.shape[-1]
    nan = _et.isnan(values)
    last = _et.full((), n - 1, dtype=self.dtype, device=self.device)
    qs = qt.reshape(-1)
    if ignore_nan:
        valid = _et.sum(_et.logical_not(nan), -1, keepdim=True).to(self.dtype)
        ranks = _et.where(_et.eq(valid, 0), last, _et.mul(qs, _et.sub(valid, 1)))
    else:
        ranks = _et.where(nan.any(-1, keepdim=True), last, _et.mul(qs, n - 1))
    if interpolation == "lower":
        ranks = _et.floor(ranks)
    elif interpolation == "higher":
        ranks = _et.ceil(ranks)
    elif interpolation == "nearest":
        ranks = _et.round(ranks)
    below = _et.floor(ranks).to(_et.int64)
    above = _et.ceil(ranks).to(_et.int64)
    lo, hi = _et.gather(values, -1, below), _et.gather(values, -1, above)
    if interpolation == "midpoint":
        weights = _et.where(_et.eq(below, above), _et.zeros_like(ranks), _et.full_like(ranks, 0.5))
    else:
        weights = _et.sub(ranks, below.to(self.dtype))
    result = _et.lerp(lo, hi, weights).movedim(-1, 0)  # (q, *batch)
    if keepdim:
        if dim is None:
            result = result.reshape((result.shape[0],) + (1,) * self.dim())
        elif self.dim():
            result = result.unsqueeze(dim + 1)
    return result[0] if q_dims == 0 else result


def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles of self along dim (of all elements if None): q a number or a 1-d
    tensor in [0, 1]; interpolation linear, lower, higher, midpoint or nearest between the
    two order statistics around rank q (n - 1). NaN where the slice holds a NaN."""
    return _quantile("quantile", self, q, dim, keepdim, interpolation, False)


def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile ignoring NaNs (NaN only where a slice holds nothing else)."""
    return _quantile("nanquantile", self, q, dim, keepdim, interpolation, True)


def diff(self, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along dim (out[i] = x[i + 1] - x[i]), after joining
    prepend and append to self along dim; bool uses logical xor."""
    if self.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    if n == 0 and prepend is None and append is None:  # PyTorch returns before wrapping dim
        return self.clone()
    d = _wrap(dim, self.dim())
    if any(t is not None and t.dim() != self.dim() for t in (prepend, append)):
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for t in (prepend, append):
        for i in range(self.dim()):
            if t is not None and i != d and t.size(i) != self.size(i):
                raise RuntimeError(
                    "diff expects the shape of tensor to prepend or append to match that of input "
                    f"except along the differencing dimension; input.size({i}) = {self.size(i)}, "
                    f"but got tensor.size({i}) = {t.size(i)}")
    if n == 0:  # PyTorch's zeroth difference is self, prepend and append left out
        return self.clone()
    parts = [t for t in (prepend, self, append) if t is not None]
    x = _et.cat(parts, d) if len(parts) > 1 else self
    for _ in range(n):
        size = x.size(d)
        if size == 0:
            break
        hi, lo = x.narrow(d, 1, size - 1), x.narrow(d, 0, size - 1)
        x = _et.logical_xor(hi, lo) if x.dtype == _et.bool else _et.sub(hi, lo)
    return x


def _trapezoid_args(op: str, y, x, dim: int):
    if y.dtype == _et.bool:
        raise RuntimeError(f"{op}: received a bool input for `y`, but bool is not supported")
    if x is not None and x.dtype == _et.bool:
        raise RuntimeError(f"{op}: received a bool input for `x` or `y`, but bool is not "
                           "supported")
    d = _wrap(dim, y.dim())
    if x is not None and x.dim() == 1 and x.size(0) != y.size(d):
        raise RuntimeError(f"{op}: There must be one `x` value for each sample point")
    if x is not None and x.dim() == 1:  # the sample points of dim: their spacing, broadcast
        shape = [1] * y.dim()
        shape[d] = -1
        x = x.reshape(shape)
    elif x is not None and x.dim() < y.dim():  # leading dims of 1, as PyTorch views it
        x = x.reshape([1] * (y.dim() - x.dim()) + list(x.shape))
    # other sample points: their differences along y's dim (PyTorch's; then broadcast)
    return d, None if x is None else diff(x, 1, d)


def _pair_sums(y, d: int):
    n = y.size(d)
    return _et.add(y.narrow(d, 1, n - 1), y.narrow(d, 0, n - 1))  # in y's dtype, as PyTorch


def _real_dx(op: str, dx) -> None:
    if isinstance(dx, (bool, complex)):  # PyTorch's check (a bool is not a real number there)
        raise RuntimeError(f"{op}: Currently, we only support dx as a real number.")


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoid rule along dim: sum((y[i] + y[i + 1]) / 2 * spacing), spacing from the
    sample points x or the constant dx (1 by default; a real number). PyTorch's formulas,
    integer arithmetic included: sum(y) - (y[0] + y[-1]) / 2 for a constant spacing."""
    _real_dx("trapezoid", dx)
    d, h = _trapezoid_args("trapezoid", y, x, dim)
    if y.size(d) == 0:  # zeros of y's dtype, as PyTorch
        return _et.zeros([n for i, n in enumerate(y.shape) if i != d], dtype=y.dtype,
                         device=y.device)
    if h is not None:
        return _et.div(_et.sum(_et.mul(h, _pair_sums(y, d)), (d,)), 2)
    ends = _et.add(y.select(d, 0), y.select(d, -1))
    r = _et.sub(_et.sum(y, (d,)), _et.mul(ends, 0.5))
    return r if dx is None else _et.mul(r, dx)


def trapz(y, x=None, *, dx=None, dim=-1):
    """trapezoid (PyTorch's older name, whose dx is a float: True is 1.0, any int its float)."""
    return trapezoid(y, x, dx=float(dx) if isinstance(dx, int) else dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid rule along dim (one element shorter than y there); PyTorch's
    formulas, integer arithmetic included."""
    _real_dx("cumulative_trapezoid", dx)
    d, h = _trapezoid_args("cumulative_trapezoid", y, x, dim)
    if y.size(d) == 0:
        if h is not None:  # the spacings must still broadcast against y, as PyTorch's
            _et.broadcast_shapes(tuple(h.shape), tuple(y.shape))
        return y.to(_et.get_default_dtype()) if not (y.is_floating_point() or y.is_complex()) \
            else y.clone()
    if h is not None:
        return _et.div(_et.cumsum(_et.mul(h, _pair_sums(y, d)), d), 2)
    return _et.mul(_et.cumsum(_pair_sums(y, d), d), (1.0 if dx is None else dx) / 2)


def renorm(self, p, dim, maxnorm):
    """self with each sub-tensor along dim whose p-norm exceeds maxnorm scaled down to norm
    maxnorm."""
    if not (self.is_floating_point() or self.is_complex()):
        raise RuntimeError(f"renorm: expected a floating point or complex tensor as input. Got "
                           f"{self.dtype._scalar_type_name}")
    if not p > 0:  # (NaN too, as PyTorch)
        raise RuntimeError("renorm: non-positive-norm not supported")
    if not maxnorm >= 0:  # (NaN too, as PyTorch)
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if self.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.dim()} "
                           f"dimensions")
    d = _wrap(dim, self.dim())
    others = tuple(i for i in range(self.dim()) if i != d)
    # the norm of float16 / bfloat16 in float32, as PyTorch (beyond float16's range it is
    # finite); the factor is then rounded to self's dtype
    norm = _et.linalg.vector_norm(self, p, others, True, dtype=_opmath(self.dtype))
    factor = _et.where(_et.gt(norm, maxnorm), maxnorm / _et.add(norm, 1e-7), 1.0)
    return _et.mul(self, factor.to(self.dtype) if not self.is_complex() else factor)


# --------------------------------------------------------------------- counting, bucketing


def bincount(self, weights=None, minlength=0):
    """Counts (or sums of weights) of each value of a 1-d non-negative integer tensor, of
    length max(self) + 1 or minlength."""
    if self.dim() != 1 or self.is_floating_point() or self.is_complex() or (
            self.dtype == _et.bool):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and self.numel() and (weights.dim() != 1 or
                                                 weights.size(0) != self.size(0)):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if self.numel() and _et.amin(self, (0,)).item() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    size = max(minlength, int(_et.amax(self, (0,)).item()) + 1 if self.numel() else 0)
    idx = self.to(_et.int64)
    if weights is None or not self.numel():  # PyTorch: no input, int64 zeros, weights or not
        return _et.zeros(size, dtype=_et.int64, device=self.device).index_add(
            0, idx, _et.ones_like(idx))
    wdt = _et.float32 if weights.dtype == _et.float32 else _et.float64  # as PyTorch
    w = weights.to(wdt)
    return _et.zeros(size, dtype=wdt, device=self.device).index_add(0, idx, w)


def histc(self, bins=100, min=0, max=0):
    """A histogram of self's elements in ``bins`` equal bins over [min, max] (the data's range
    when both are 0); elements outside are ignored, max falls in the last bin."""
    if not self.is_floating_point():
        raise NotImplementedError(
            f"\"histogram_cpu\" not implemented for '{self.dtype._scalar_type_name}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histc: bins must be > 0, but got {bins} for bins")
    for v in (min, max):  # in self's dtype, with PyTorch's overflow check
        _et._C._check_scalar(self.dtype, v)
    lo, hi = float(min), float(max)
    if lo == hi and self.numel():
        lo, hi = _et.amin(self, ()).item(), _et.amax(self, ()).item()
    if lo == hi:
        lo, hi = lo - 1, hi + 1  # (no wider beyond 2**53: then every element is in bin 0)
    if lo > hi:
        raise RuntimeError(f"torch.histc: max must be larger than min, but got min {lo} max "
                           f"{hi}")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    x = self.reshape(-1).to(_et.float64)
    inside = _et.logical_and(_et.ge(x, lo), _et.le(x, hi))
    b = _et.floor(_et.mul(_et.sub(x, lo), bins / (hi - lo) if hi > lo else 0.0)).to(_et.int64)
    b = _et.clamp(b, 0, bins - 1)
    counts = _et.zeros(bins, dtype=self.dtype, device=self.device)
    return counts.index_add(0, b, inside.to(self.dtype))


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """For each value of input, the index where it would be inserted into the sorted last dim
    of sorted_sequence to keep it sorted (the first such index; the last with right=True or
    side='right'); leading dims of a multi-dim sequence match input's."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence
    if sorter is not None:
        if sorter.dtype != _et.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but "
                               f"got dtype {sorter.dtype._scalar_type_name}")
        if tuple(sorter.shape) != tuple(seq.shape):
            raise RuntimeError(
                "torch.searchsorted(): boundary and sorter must have the same size, but got "
                f"boundary tensor {list(seq.shape)}and got sorter tensor {list(sorter.shape)}")
        seq = _et.gather(seq, -1, sorter)
    scalar = not isinstance(input, _et.Tensor)
    values = _number_operand(input, seq) if scalar else input
    if seq.dim() > 1 and tuple(seq.shape[:-1]) != tuple(values.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor {list(values.shape)}")
    dt = _et.result_type(seq, values)
    seq, values = seq.to(dt), values.to(dt)
    out = _et._C._searchsorted_bounds(seq, values, right)  # PyTorch's binary search, as a kernel
    return out.to(_et.int32) if out_int32 else out


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """For each value of input, the index of its bucket among the sorted 1-d boundaries
    (boundaries[i - 1] < x <= boundaries[i]; with right=True, boundaries[i - 1] <= x <
    boundaries[i])."""
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def _check_cov_weights(name, w, observations, kind_ok, kind):
    """PyTorch's checks of cov's fweights / aweights, in its order and words."""
    if w is None:
        return
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} "
                           f"with {w.dim()} dimensions")
    if not kind_ok(w):
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{w.dtype._scalar_type_name} dtype")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {observations}")
    if w.numel() and bool(_et.lt(w, 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(self, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in input's rows (1-d: one variable), the
    observations in its columns, optionally weighted by integer frequency weights and
    observation weights; divided by (sum of weights - correction) (PyTorch's torch.cov)."""
    if self.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {self.dim()} dimensions")
    if self.dtype == _et.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = self if self.dim() == 2 else self.reshape(1, -1)
    _check_cov_weights("fweights", fweights, x.shape[1], lambda w: not w.is_floating_point()
                       and not w.is_complex() and w.dtype != _et.bool, "integral")
    _check_cov_weights("aweights", aweights, x.shape[1], lambda w: w.is_floating_point(),
                       "floating point")
    if not (x.is_floating_point() or x.is_complex()):
        x = x.to(_et.get_default_dtype())
    if aweights is not None and (aweights.is_floating_point() or aweights.is_complex()):
        x = x.to(_et.promote_types(x.dtype, aweights.dtype))
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else _et.mul(w, aweights)
    if w is None:
        total = float(n)
        mean = x.mean(1, keepdim=True)
    else:
        w = w.to(x.dtype)
        total = w.sum()
        if w.device.type == "cpu" and bool(_et.eq(total, 0).item()):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        mean = _et.div(_et.mul(x, w).sum(1, keepdim=True), total)
    if w is None:
        factor = total - correction
    elif correction == 0:
        factor = total
    elif aweights is None:
        factor = _et.sub(total, correction)
    else:
        factor = _et.sub(total, _et.div(_et.mul(w, aweights.to(x.dtype)).sum(), total) * correction)
    factor = _et.clamp(_et.as_tensor(factor, dtype=x.real.dtype, device=x.device), min=0)
    centred = _et.sub(x, mean)
    weighted = centred if w is None else _et.mul(centred, w)
    c = _et.div(_et.matmul(weighted, centred.t().conj()), factor)
    return c.squeeze()


def corrcoef(self):
    """The Pearson correlation coefficients of input's rows: cov(input) normalised by the
    standard deviations, clipped to [-1, 1]."""
    c = cov(self)
    if c.dim() == 0:
        return _et.div(c, c)
    d = _et.diagonal(c)
    std = _et.sqrt(d.real if c.is_complex() else d)
    c = _et.div(_et.div(c, std.unsqueeze(1)), std.unsqueeze(0))
    if c.is_complex():
        return _et.complex(_et.clamp(c.real, -1, 1), _et.clamp(c.imag, -1, 1))
    return _et.clamp(c, -1, 1)


def _bin_of(x, edges):
    """(bin index, inside) of each element of the 1-d x among the 1-d edges: each bin holds its
    left edge, the last one its right edge too; inside is False outside all bins."""
    n = edges.shape[0] - 1
    idx = _et.sub(_et.searchsorted(edges, x, right=True), 1)
    idx = _et.where(_et.eq(x, edges[-1]), _et.full_like(idx, n - 1), idx)
    return idx, _et.logical_and(_et.ge(idx, 0), _et.lt(idx, n))


def _equal_width_edges(x, bins: int, lo_hi, dtype, device):
    """bins + 1 equal-width edges over lo_hi (x's min and max when None, [0, 1] without data;
    widened by 1/2 on each side when they are equal, as NumPy)."""
    if lo_hi is not None:
        lo, hi = float(lo_hi[0]), float(lo_hi[1])
    elif x.numel():
        lo, hi = float(x.min()), float(x.max())
    else:
        lo, hi = 0.0, 1.0
    if not (math.isfinite(lo) and math.isfinite(hi)):  # (histogram's message is histogramdd's)
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is not "
                           "finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _et.linspace(lo, hi, bins + 1, dtype=dtype, device=device)


def histogramdd(self, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """(hist, bin_edges) of self's rows as points in D = self.shape[-1] dims (the leading dims
    flattened), as NumPy's histogramdd: bins is an int (that many equal-width bins in every
    dim), D ints, or D 1-d tensors of edges; range: 2D floats (each dim's lowest and highest
    edge; its min and max by default); weight: one per point; density: normalised so that
    the histogram integrates to 1. hist has one dim per point dim; bin_edges is a list of D
    1-d tensors. float32 and float64 only (PyTorch's errors for the others); RuntimeError
    for fewer than 2 dims."""
    if self.dim() < 2:
        raise RuntimeError(f"torch.histogramdd: input tensor should have at least 2 "
                           f"dimensions, but got {self.dim()}")
    if not self.is_floating_point():
        raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the "
                           f"same dtype, but got input {self.dtype._scalar_type_name}")
    if self.dtype not in (_et.float32, _et.float64):
        raise NotImplementedError(f'"histogramdd" not implemented for '
                                  f"'{self.dtype._scalar_type_name}'")
    n_dims = self.shape[-1]
    if n_dims == 0:  # points of no dims: a 0-d histogram (0, NaN with density), no edges
        hist = _et.full((), math.nan if density else 0.0, dtype=self.dtype, device=self.device)
        return hist, []
    points = self.reshape(-1, n_dims)
    if isinstance(bins, (bool, _et.Tensor)):
        raise TypeError("histogramdd(): argument 'bins' must be an int, a sequence of ints or "
                        f"a sequence of Tensors, not {type(bins).__name__}")
    if isinstance(bins, int):
        bins = [bins] * n_dims
    if len(bins) != n_dims:
        raise RuntimeError(f"torch.histogramdd: expected {n_dims} sequences of bin edges for "
                           f"each of the {n_dims} dimensions of the input, but got "
                           f"{len(bins)}")
    if range is not None and len(range) != 2 * n_dims:
        raise RuntimeError(f"torch.histogramdd: for a {n_dims}-dimensional histogram range "
                           f"should have {2 * n_dims} elements, but got {len(range)}")
    edges, flat = [], None
    inside = _et.ones(points.shape[0], dtype=_et.bool, device=self.device)
    for d, b in enumerate(bins):
        column = points[:, d]
        if isinstance(b, _et.Tensor):
            e = b.to(self.dtype)
        else:
            lo_hi = None if range is None else range[2 * d:2 * d + 2]
            if lo_hi is None and column.numel():
                lo_hi = (float(column.min()), float(column.max()))
            if lo_hi is not None and not all(math.isfinite(float(v)) for v in lo_hi):
                raise RuntimeError(f"torch.histogramdd: dimension {d}'s range "
                                   f"[{float(lo_hi[0]):g}, {float(lo_hi[1]):g}] is not finite")
            e = _equal_width_edges(column, int(b), lo_hi, self.dtype, self.device)
        idx, ok = _bin_of(column, e)
        n = e.shape[0] - 1
        flat = idx if flat is None else _et.add(_et.mul(flat, n), idx)
        inside = _et.logical_and(inside, ok)
        edges.append(e)
    shape = [e.shape[0] - 1 for e in edges]
    w = (_et.ones(points.shape[0], dtype=self.dtype, device=self.device) if weight is None
         else weight.reshape(-1).to(self.dtype))
    total = 1
    for n in shape:
        total *= n
    hist = _et.index_add(_et.zeros(total, dtype=self.dtype, device=self.device), 0,
                         flat[inside], w[inside]).reshape(shape)
    if density:
        volume = _et.ones(shape, dtype=self.dtype, device=self.device)
        for d, e in enumerate(edges):
            view = [1] * n_dims
            view[d] = shape[d]
            volume = _et.mul(volume, _et.sub(e[1:], e[:-1]).reshape(view))
        hist = _et.div(hist, _et.mul(hist.sum(), volume))
    return hist, edges


def _c10_name(dtype) -> str:
    """The C++ type name PyTorch's histogram messages give a dtype ('float', 'c10::Half')."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16"}.get(_name(dtype), _name(dtype))


def histogram(self, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """(hist, bin_edges) of self's elements as NumPy's histogram: bins equal-width bins over
    range (self's min and max by default) or the given 1-d edges; each bin holds its left
    edge, the last one both; elements outside are not counted. weight: each element's weight;
    density: normalised to integrate to 1. Floating inputs only."""
    if isinstance(bins, bool):  # a count, never True / False
        raise TypeError("histogram(): argument 'bins' (position 1) must be int, not bool")
    if not self.is_floating_point():
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the "
                           f"same dtype, but got input {self.dtype._scalar_type_name}")
    x = self.reshape(-1)
    if isinstance(bins, _et.Tensor):
        if bins.dtype != self.dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {_c10_name(self.dtype)} and bins for dimension 0 "
                f"with dtype {_c10_name(bins.dtype)}")
        edges = bins
        if bins.numel() < 2:  # fewer than two edges: no bin
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got "
                               f"{max(bins.numel() - 1, 0)} for dimension 0")
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                               "dimension 0")
        edges = _equal_width_edges(x, bins, range, self.dtype, self.device)
    n = edges.shape[0] - 1
    idx, inside = _bin_of(x, edges)
    w = _et.ones_like(x) if weight is None else weight.reshape(-1).to(self.dtype)
    hist = _et.index_add(_et.zeros(n, dtype=self.dtype, device=self.device), 0,
                         idx[inside], w[inside])
    if density:
        widths = _et.sub(edges[1:], edges[:-1])
        hist = _et.div(hist, _et.mul(hist.sum(), widths))
    return hist, edges


def _spacings(spacing, dims, x):
    """Per dim in dims: a number (uniform spacing) or 1-d coordinates."""
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                               f"it's spacing and dim arguments to have the same length, but "
                               f"got a spacing argument of length {len(spacing)} and a dim "
                               f"argument of length {len(dims)}.")
        return list(spacing)
    return [spacing] * len(dims)


def _gradient_along(f, d: int, h, edge_order: int):
    n = f.shape[d]
    if isinstance(h, _et.Tensor) and h.dim() == 1:
        c = h.to(f.dtype)
        step = _et.sub(c[1:], c[:-1])  # (n - 1,)
        view = [1] * f.dim()
        view[d] = n - 1
        step = step.reshape(view)
    else:
        hv = h.item() if isinstance(h, _et.Tensor) else h
        step = None
    left, mid, right = f.narrow(d, 0, n - 2), f.narrow(d, 1, n - 2), f.narrow(d, 2, n - 2)
    if step is None:
        interior = _et.div(_et.sub(right, left), 2 * hv)
        first = _et.div(_et.sub(f.narrow(d, 1, 1), f.narrow(d, 0, 1)), hv)
        last = _et.div(_et.sub(f.narrow(d, n - 1, 1), f.narrow(d, n - 2, 1)), hv)
        if edge_order == 2:
            first = _et.div(-1.5 * f.narrow(d, 0, 1) + 2 * f.narrow(d, 1, 1)
                            - 0.5 * f.narrow(d, 2, 1), hv)
            last = _et.div(0.5 * f.narrow(d, n - 3, 1) - 2 * f.narrow(d, n - 2, 1)
                           + 1.5 * f.narrow(d, n - 1, 1), hv)
    else:
        hl, hr = step.narrow(d, 0, n - 2), step.narrow(d, 1, n - 2)
        a = -hr / (hl * (hl + hr))
        b = (hr - hl) / (hl * hr)
        c = hl / (hr * (hl + hr))
        interior = a * left + b * mid + c * right
        h0, hn = step.narrow(d, 0, 1), step.narrow(d, n - 2, 1)
        first = (f.narrow(d, 1, 1) - f.narrow(d, 0, 1)) / h0
        last = (f.narrow(d, n - 1, 1) - f.narrow(d, n - 2, 1)) / hn
        if edge_order == 2:
            h1, hm = step.narrow(d, 1, 1), step.narrow(d, n - 3, 1)
            first = (-(2 * h0 + h1) / (h0 * (h0 + h1)) * f.narrow(d, 0, 1)
                     + (h0 + h1) / (h0 * h1) * f.narrow(d, 1, 1)
                     - h0 / (h1 * (h0 + h1)) * f.narrow(d, 2, 1))
            last = (hn / (hm * (hm + hn)) * f.narrow(d, n - 3, 1)
                    - (hm + hn) / (hm * hn) * f.narrow(d, n - 2, 1)
                    + (2 * hn + hm) / (hn * (hm + hn)) * f.narrow(d, n - 1, 1))
    return _et.cat([first, interior, last], d)


def gradient(self, *, spacing=1, dim=None, edge_order=1):
    """The gradient of the sampled function self along each dim of dim (all if None) by
    central differences inside and one-sided ones of edge_order (1 or 2) at the edges;
    spacing: a number, one per dim, or per dim the 1-d coordinates. A tuple of tensors."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if self.dtype == _et.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if self.dtype == _et.bool and self.dim():  # (a 0-d input has no gradient: an empty tuple)
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if dim is None:
        dims = list(range(self.dim()))
    elif isinstance(dim, int) or (isinstance(dim, _et.Tensor) and dim.dim() == 0):
        dims = [_wrap(dim.__index__(), self.dim())]  # a 0-d integer tensor is one dim too
    else:
        dims = [_wrap(d, self.dim()) for d in dim]
    x = self if (self.is_floating_point() or self.is_complex()) else \
        self.to(_et.get_default_dtype())
    for d in dims:
        if x.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    steps = _spacings(1 if spacing is None else spacing, dims, x)
    return tuple(_gradient_along(x, d, h, edge_order) for d, h in zip(dims, steps))
