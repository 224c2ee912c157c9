"""The pooling functions of ``ember.nn.functional``: ``max_pool1d/2d`` (``return_indices``),
``avg_pool1d/2d``, ``adaptive_avg_pool1d/2d``, ``adaptive_max_pool1d/2d``, on the core's
2-D pooling ops (a 1-D pooling is the 2-D one over a height of 1)."""

from __future__ import annotations

import ember_tensor as et

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
]


def _ints(value) -> list[int]:
    """An int argument, or a sequence of them, as a list (None: empty)."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [int(v) for v in value]
    return [int(value)]


def _one(name: str, arg: str, value, allow_none: bool = False) -> int:
    """A 1-D pooling argument: an int or a sequence of one int (PyTorch's message otherwise)."""
    if value is None and allow_none:
        return None
    v = _ints(value)
    if len(v) != 1:
        omitted = "omitted, " if allow_none else ""
        raise RuntimeError(
            f"{name}: {arg} must be {'either ' if not allow_none else ''}"
            f"{omitted}a single int, or a tuple of one int"
        )
    return v[0]


# ----------------------------------------------------------------------------- 2-D


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):
    """2-D max pooling and the flat index (``y * W + x``) of each maximum in its input
    plane, over ``(N, C, H, W)`` or ``(C, H, W)`` inputs; ``stride`` defaults to
    ``kernel_size``."""
    return et.max_pool2d_with_indices(input, _ints(kernel_size), _ints(stride), _ints(padding),
                                      _ints(dilation), ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """2-D max pooling (with the indices of the maxima too when ``return_indices``)."""
    out, indices = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                           ceil_mode)
    return (out, indices) if return_indices else out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None):
    """2-D average pooling; the zero padding counts in each window's divisor when
    ``count_include_pad``, and ``divisor_override`` replaces the divisor."""
    return et.avg_pool2d(input, _ints(kernel_size), _ints(stride), _ints(padding), ceil_mode,
                         count_include_pad, divisor_override)


def _adaptive_size(input, output_size, dims: int) -> list[int]:
    """``output_size`` as ``dims`` ints, a None entry taking the input's size."""
    if isinstance(output_size, (list, tuple)):
        sizes = list(output_size)
    else:
        sizes = [output_size] * dims
    if len(sizes) != dims:
        return [int(s) for s in sizes]  # the core names the op and the expected length
    shape = tuple(input.shape)
    return [shape[len(shape) - dims + i] if s is None else int(s) for i, s in enumerate(sizes)]


def adaptive_avg_pool2d(input, output_size):
    """Average pooling onto an ``output_size`` grid (an int, or a pair whose None entries
    keep the input's size)."""
    return et.adaptive_avg_pool2d(input, _adaptive_size(input, output_size, 2))


def adaptive_max_pool2d_with_indices(input, output_size, return_indices: bool = False):
    """Max pooling onto an ``output_size`` grid, and the flat index of each maximum."""
    return et.adaptive_max_pool2d(input, _adaptive_size(input, output_size, 2))


def adaptive_max_pool2d(input, output_size, return_indices: bool = False):
    """Max pooling onto an ``output_size`` grid (with the indices when ``return_indices``)."""
    out, indices = adaptive_max_pool2d_with_indices(input, output_size)
    return (out, indices) if return_indices else out


# ----------------------------------------------------------------------------- 1-D


def _check_1d(name: str, input) -> None:
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"{name}() Expected 2D or 3D input tensor, but got {list(input.shape)}"
        )


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):
    """1-D max pooling of ``(N, C, L)`` or ``(C, L)`` inputs, and the index of each maximum."""
    name = "max_pool1d"
    _check_1d(name, input)
    k = _one(name, "kernel_size", kernel_size)
    s = _one(name, "stride", stride if _ints(stride) else None, allow_none=True)
    p = _one(name, "padding", padding)
    d = _one(name, "dilation", dilation)
    out, indices = et.max_pool2d_with_indices(input.unsqueeze(-2), [1, k],
                                              [] if s is None else [1, s], [0, p], [1, d],
                                              ceil_mode)
    return out.squeeze(-2), indices.squeeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """1-D max pooling (with the indices of the maxima when ``return_indices``)."""
    out, indices = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation,
                                           ceil_mode)
    return (out, indices) if return_indices else out


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True):
    """1-D average pooling of ``(N, C, L)`` or ``(C, L)`` inputs."""
    name = "avg_pool1d"
    _check_1d(name, input)
    k = _one(name, "kernel_size", kernel_size)
    s = _one(name, "stride", stride if _ints(stride) else None, allow_none=True)
    p = _one(name, "padding", padding)
    out = et.avg_pool2d(input.unsqueeze(-2), [1, k], [] if s is None else [1, s], [0, p],
                        ceil_mode, count_include_pad, None)
    return out.squeeze(-2)


def _adaptive_1d_size(name: str, output_size) -> int:
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != 1:
            raise RuntimeError(f"{name}: output_size must be 1")
        output_size = output_size[0]
    return int(output_size)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of ``(N, C, L)`` or ``(C, L)`` inputs onto ``output_size`` positions."""
    name = "adaptive_avg_pool1d"
    _check_1d(name, input)
    size = _adaptive_1d_size(name, output_size)
    return et.adaptive_avg_pool2d(input.unsqueeze(-2), [1, size]).squeeze(-2)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices: bool = False):
    """Max pooling onto ``output_size`` positions, and the index of each maximum."""
    name = "adaptive_max_pool1d"
    _check_1d(name, input)
    size = _adaptive_1d_size(name, output_size)
    out, indices = et.adaptive_max_pool2d(input.unsqueeze(-2), [1, size])
    return out.squeeze(-2), indices.squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices: bool = False):
    """Max pooling onto ``output_size`` positions (with the indices when
    ``return_indices``)."""
    out, indices = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, indices) if return_indices else out
