"""Creation composites: ``logspace`` and ``scalar_tensor``, with PyTorch's defaults (the
default float dtype)."""

from __future__ import annotations

import ember_tensor as _et

__all__ = ["logspace", "scalar_tensor"]


def _number(x):
    return x.item() if isinstance(x, _et.Tensor) else x


def _check_0d_ends(op, start, end):
    """PyTorch's check that tensor ends of linspace/logspace are 0-d, in its words."""
    dims = {n: v.dim() for n, v in (("start", start), ("end", end)) if isinstance(v, _et.Tensor)}
    if any(dims.values()):
        got = " and ".join(f"{n} with {d} dimension(s)" for n, d in dims.items())
        raise RuntimeError(f"{op} only supports 0-dimensional start and end tensors, but got "
                           f"{got}.")


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """steps values base ** v for v evenly spaced from start to end inclusive (start and end
    numbers or 0-d tensors), computed in float64 and rounded once to dtype (the default
    float dtype if None)."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    _check_0d_ends("logspace", start, end)
    dt = dtype if dtype is not None else _et.get_default_dtype()
    if not (dt.is_floating_point or dt.is_complex) or steps > 1:  # as linspace: PyTorch's
        for v in (start, end):  # overflow check of the ends in the result dtype
            _et._C._check_scalar(dt, _number(v))
    exponents = _et.linspace(_number(start), _number(end), steps, dtype=_et.float64,
                             device=device)
    values = _et.pow(float(base), exponents)
    out = values.to(dtype if dtype is not None else _et.get_default_dtype())
    return out.requires_grad_() if requires_grad else out


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    """A 0-d tensor holding s, of dtype (the default float dtype if None)."""
    out = _et.full((), _number(s), dtype=dtype if dtype is not None else _et.get_default_dtype(),
                   device=device)
    return out.requires_grad_() if requires_grad else out

