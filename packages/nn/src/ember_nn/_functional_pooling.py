"""The pooling functions of ``ember.nn.functional``: ``max_pool1d/2d/3d``
(``return_indices``), ``avg_pool1d/2d/3d``, ``adaptive_avg_pool1d/2d/3d``,
``adaptive_max_pool1d/2d/3d``, ``max_unpool1d/2d/3d``, ``lp_pool1d/2d/3d`` and
``fractional_max_pool2d/3d``, on the core's 2-D pooling ops (a
1-D pooling is the 2-D one over a height of 1; a 3-D pooling is two 2-D ones, see below)."""

from __future__ import annotations

import operator

import ember_tensor as et

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]


def _int(value) -> int:
    """One int of a size argument: a bool or a float is PyTorch's TypeError, not truncated."""
    if isinstance(value, (bool, float)):
        raise TypeError(f"argument must be tuple of ints, not {type(value).__name__}")
    return operator.index(value)


def _ints(value) -> list[int]:
    """An int argument, or a sequence of them, as a list (None: empty)."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [_int(v) for v in value]
    return [_int(value)]


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


def _output_size_ints(name: str, sizes) -> list[int]:
    """``output_size`` entries as PyTorch's parser reads a tuple of ints: a bool, a float or
    None is its TypeError (not truncated, nor read as 1)."""
    for i, s in enumerate(sizes):
        if isinstance(s, bool) or not hasattr(type(s), "__index__"):
            raise TypeError(f"{name}(): argument 'output_size' (position 2) must be tuple of ints, "
                            f"but found element of type {type(s).__name__} at pos {i}")
    return [operator.index(s) for s in sizes]


def _adaptive_size(name: str, input, output_size, dims: int) -> list[int]:
    """``output_size`` as ``dims`` ints, a None entry taking the input's size."""
    if isinstance(output_size, bool):
        raise TypeError(f"{name}(): argument 'output_size' (position 2) must be tuple of ints, "
                        "not bool")
    if isinstance(output_size, (list, tuple)):
        sizes = list(output_size)
    elif isinstance(output_size, int):
        sizes = [output_size] * dims
    else:  # PyTorch's _list_with_default takes len() of anything but an int (None too)
        raise TypeError(f"object of type '{type(output_size).__name__}' has no len()")
    if len(sizes) != dims:  # the core names the op and the expected length
        return _output_size_ints(name, sizes)
    shape = tuple(input.shape)
    return _output_size_ints(
        name, [shape[len(shape) - dims + i] if s is None else s for i, s in enumerate(sizes)])


def adaptive_avg_pool2d(input, output_size):
    """Average pooling onto an ``output_size`` grid (an int, or a pair whose None entries
    keep the input's size)."""
    return et.adaptive_avg_pool2d(input,
                                  _adaptive_size("adaptive_avg_pool2d", input, output_size, 2))


def adaptive_max_pool2d_with_indices(input, output_size, return_indices: bool = False):
    """Max pooling onto an ``output_size`` grid, and the flat index of each maximum."""
    return et.adaptive_max_pool2d(input,
                                  _adaptive_size("adaptive_max_pool2d", input, output_size, 2))


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
        return _output_size_ints(name, output_size)[0]
    if isinstance(output_size, bool) or not hasattr(type(output_size), "__index__"):
        raise TypeError(f"{name}(): argument 'output_size' (position 2) must be tuple of ints, "
                        f"not {type(output_size).__name__}")
    return operator.index(output_size)


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


# ----------------------------------------------------------------------------- 3-D
#
# Pooling is separable: a window's maximum (or sum) over (d, h, w) is the maximum (sum) over
# d of the maxima (sums) over (h, w). So each 3-D pooling is the core's 2-D pooling twice:
# over (h, w) of every depth slice, then over (d, 1) of the result seen as (N, C, D, OH*OW).
# Max pooling's indices compose through a gather (the depth chosen, then that slice's
# (h, w) index); the first maximum in (d, h, w) order wins and a NaN wins (the last one), as
# in PyTorch's 3-D kernels. Averages divide by the product of the per-axis divisors, which
# is PyTorch's divisor (count_include_pad or not). The gradients are the 2-D ops'.


def _triple(name: str, arg: str, value, default=None) -> list[int]:
    """A 3-D pooling argument: an int or three ints (None or empty: ``default``)."""
    v = _ints(value)
    if not v and default is not None:
        return list(default)
    if len(v) == 1:
        v = v * 3
    if len(v) != 3:
        raise RuntimeError(f"{name}: {arg} must either be a single int, or a tuple of three ints")
    return v


def _batched_5d(name: str, input):
    """(N, C, D, H, W) input and whether it was unbatched (C, D, H, W)."""
    if input.dim() not in (4, 5):
        raise RuntimeError(
            f"{name}: Expected 4D or 5D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got: {list(input.shape)}"
        )
    return (input.unsqueeze(0), True) if input.dim() == 4 else (input, False)


def _depth_planes(x):
    """(N, C, D, H, W) as (N, C*D, H, W): every depth slice a 2-D plane."""
    n, c, d, h, w = x.shape
    return x.reshape(n, c * d, h, w)


def _finish(out, unbatched: bool):
    return out.squeeze(0) if unbatched else out


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):
    """3-D max pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs and the flat index
    (``(z * H + y) * W + x``) of each maximum in its input volume."""
    name = "max_pool3d"
    x, unbatched = _batched_5d(name, input)
    k = _triple(name, "kernel_size", kernel_size)
    s = _triple(name, "stride", stride, default=k)
    p = _triple(name, "padding", padding)
    d = _triple(name, "dilation", dilation)
    n, c, depth, h, w = x.shape
    plane, plane_idx = et.max_pool2d_with_indices(_depth_planes(x), k[1:], s[1:], p[1:], d[1:],
                                                  ceil_mode)
    oh, ow = plane.shape[-2:]
    out, at = et.max_pool2d_with_indices(plane.reshape(n, c, depth, oh * ow), [k[0], 1],
                                         [s[0], 1], [p[0], 0], [d[0], 1], ceil_mode)
    z = et.div(at, oh * ow, rounding_mode="floor")
    within = et.gather(plane_idx.reshape(n, c, depth, oh * ow), 2, z)
    od = out.shape[2]
    out = out.reshape(n, c, od, oh, ow)
    indices = (z * (h * w) + within).reshape(n, c, od, oh, ow)
    return _finish(out, unbatched), _finish(indices, unbatched)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """3-D max pooling (with the indices of the maxima when ``return_indices``)."""
    out, indices = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation,
                                           ceil_mode)
    return (out, indices) if return_indices else out


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None):
    """3-D average pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs; the zero padding
    counts in each window's divisor when ``count_include_pad``, and ``divisor_override``
    replaces the divisor."""
    name = "avg_pool3d"
    x, unbatched = _batched_5d(name, input)
    k = _triple(name, "kernel_size", kernel_size)
    s = _triple(name, "stride", stride, default=k)
    p = _triple(name, "padding", padding)
    if divisor_override is not None and int(divisor_override) == 0:
        raise RuntimeError("avg_pool3d: divisor must be not zero")
    integer = not (x.is_floating_point() or x.is_complex())
    each = None if divisor_override is None and not integer else 1  # 1: sums, divided below
    n, c, depth, h, w = x.shape
    plane = et.avg_pool2d(_depth_planes(x), k[1:], s[1:], p[1:], ceil_mode, count_include_pad,
                          each)
    oh, ow = plane.shape[-2:]
    out = et.avg_pool2d(plane.reshape(n, c, depth, oh * ow), [k[0], 1], [s[0], 1], [p[0], 0],
                        ceil_mode, count_include_pad, each)
    out = out.reshape(n, c, out.shape[2], oh, ow)
    if integer:  # one truncating division of the integer sum, as PyTorch's kernel
        if divisor_override is None:
            sizes = (depth, h, w)
            divisor = [_avg_divisors(sizes[i], out.shape[2 + i], k[i], s[i], p[i],
                                     count_include_pad) for i in range(3)]
            divisor = (et.tensor(divisor[0]).reshape(-1, 1, 1)
                       * et.tensor(divisor[1]).reshape(1, -1, 1)
                       * et.tensor(divisor[2]).reshape(1, 1, -1)).to(device=out.device)
        else:
            divisor = int(divisor_override)
        out = et.div(out, divisor, rounding_mode="trunc")
    elif divisor_override is not None:
        out = out / int(divisor_override)
    return _finish(out, unbatched)


def _avg_divisors(size: int, out: int, k: int, s: int, p: int, count_include_pad: bool):
    """PyTorch's average-pooling divisor along one axis, for each output position: the
    window clipped to the padded input, or to the input unless ``count_include_pad``."""
    counts = []
    for o in range(out):
        start = o * s - p
        end = min(start + k, size + p)
        if count_include_pad:
            counts.append(end - start)
        else:
            counts.append(min(end, size) - max(start, 0))
    return counts


def _adaptive_3d(name: str, input, output_size):
    x, unbatched = _batched_5d(name, input)
    return x, unbatched, _adaptive_size(name, x, output_size, 3)


def adaptive_avg_pool3d(input, output_size):
    """Average pooling onto an ``output_size`` grid of depth, height and width (an int, or a
    triple whose None entries keep the input's size)."""
    x, unbatched, size = _adaptive_3d("adaptive_avg_pool3d", input, output_size)
    if len(size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    n, c, depth = x.shape[:3]
    plane = et.adaptive_avg_pool2d(_depth_planes(x), size[1:])
    out = et.adaptive_avg_pool2d(plane.reshape(n, c, depth, size[1] * size[2]),
                                 [size[0], size[1] * size[2]])
    return _finish(out.reshape(n, c, *size), unbatched)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices: bool = False):
    """Max pooling onto an ``output_size`` grid of depth, height and width, and the flat index
    of each maximum in its input volume."""
    x, unbatched, size = _adaptive_3d("adaptive_max_pool3d", input, output_size)
    if len(size) != 3:
        raise RuntimeError("adaptive_max_pool3d: internal error: output_size.size() must be 3")
    n, c, depth, h, w = x.shape
    plane, plane_idx = et.adaptive_max_pool2d(_depth_planes(x), size[1:])
    hw = size[1] * size[2]
    out, at = et.adaptive_max_pool2d(plane.reshape(n, c, depth, hw), [size[0], hw])
    z = et.div(at, hw, rounding_mode="floor")
    within = et.gather(plane_idx.reshape(n, c, depth, hw), 2, z)
    indices = (z * (h * w) + within).reshape(n, c, *size)
    return _finish(out.reshape(n, c, *size), unbatched), _finish(indices, unbatched)


def adaptive_max_pool3d(input, output_size, return_indices: bool = False):
    """Max pooling onto an ``output_size`` grid (with the indices when ``return_indices``)."""
    out, indices = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, indices) if return_indices else out


# ----------------------------------------------------------------------------- max_unpool


def _unpool_size(nd: int, input, kernel_size, stride, padding, output_size) -> list[int]:
    """The spatial size of max_unpool's output: ``output_size`` (its last ``nd`` entries),
    checked against PyTorch's bounds, or ``(in - 1) * stride - 2 * padding + kernel``."""
    k = _ints(kernel_size) or [1]
    k = k * nd if len(k) == 1 else k
    s = _ints(stride) or k
    s = s * nd if len(s) == 1 else s
    p = _ints(padding)
    p = p * nd if len(p) == 1 else p
    spatial = list(input.shape[-nd:])
    default = [(spatial[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(nd)]
    if output_size is None:
        return default
    size = [int(v) for v in output_size]
    if len(size) == nd + 2:
        size = size[2:]
    if len(size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(size)}'")
    for i in range(nd):
        lo, hi = default[i] - s[i], default[i] + s[i]
        if not lo < size[i] < hi:
            raise ValueError(f'invalid output_size "{tuple(size)}" (dim {i} must be between '
                             f"{lo} and {hi})")
    return size


def _max_unpool(nd: int, input, indices, kernel_size, stride, padding, output_size):
    """Scatters each value of ``input`` to the flat ``indices`` of its (N, C) plane in a
    zeroed output of the unpooled size; the gradient gathers from the same places. Checked
    in PyTorch's order: the output size, then the indices' dtype, the rank (a 1-D unpooling
    is a 2-D one of ``input.unsqueeze(-1)``), the indices' shape."""
    size = _unpool_size(nd, input, kernel_size, stride, padding, output_size)
    if indices.dtype != et.int64:
        raise RuntimeError("elements in indices should be type int64" + (
            "" if nd == 3 else f" but got: {indices.dtype._scalar_type_name}"))
    rank, shape, idx_shape = input.dim(), list(input.shape), list(indices.shape)
    if nd == 1:
        rank, shape, idx_shape = rank + 1, shape + [1], idx_shape + [1]
    if rank not in (max(nd, 2) + 1, max(nd, 2) + 2):
        raise RuntimeError(f"Input to max_unpooling{max(nd, 2)}d should be a {max(nd, 2) + 1}d "
                           f"or {max(nd, 2) + 2}d Tensor, but got a tensor with {rank} "
                           "dimensions.")
    if idx_shape != shape:
        raise RuntimeError("Expected shape of indices to be same as that of the input tensor "
                           f"({shape}) but got indices tensor with shape: {idx_shape}")
    if nd == 1:  # PyTorch unpools a 1-D input as an (L, 1) image
        size = [size[0], 1]
    volume = 1
    for v in size:
        volume *= v
    lead = list(input.shape[:-nd])
    flat_in = input.reshape(*lead, -1)
    flat_idx = indices.reshape(*lead, -1)
    if flat_idx.numel():
        bad = (flat_idx < 0) | (flat_idx >= volume)
        if bool(bad.any()):
            first = int(flat_idx[bad].reshape(-1)[0])
            raise RuntimeError(f"Found an invalid max index: {first} (output volumes are of "
                               f"size {'x'.join(str(v) for v in size)})")
    out = et.zeros(*lead, volume, dtype=input.dtype, device=input.device)
    out = out.scatter(-1, flat_idx, flat_in)
    if nd == 1:
        size = size[:1]
    return out.reshape(*lead, *size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool1d``: ``(N, C, L)`` or ``(C, L)`` values put back at
    their ``indices`` (from ``max_pool1d(..., return_indices=True)``), zeros elsewhere."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d``: ``(N, C, H, W)`` or ``(C, H, W)`` values put back
    at their flat ``indices`` (``y * W + x``), zeros elsewhere."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool3d``: ``(N, C, D, H, W)`` or ``(C, D, H, W)`` values
    put back at their flat ``indices`` (``(z * H + y) * W + x``), zeros elsewhere."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


# ----------------------------------------------------------------------------- power-average


def _lp_pool(nd: int, input, norm_type, kernel_size, stride, ceil_mode: bool):
    """``(sum over each window of x**p) ** (1/p)`` through average pooling, as PyTorch
    computes it (windows in the right padding are dropped; a window summing to zero has
    zero gradient); ``p = inf`` is max pooling of ``|x|``."""
    max_pool = (max_pool1d, max_pool2d, max_pool3d)[nd - 1]
    avg_pool = (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1]
    if isinstance(kernel_size, (list, tuple)):
        if nd == 1:  # PyTorch's lp_pool1d multiplies by kernel_size itself
            raise TypeError("mul(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(kernel_size).__name__}")
        if len(kernel_size) != nd:  # PyTorch unpacks it into nd values
            raise ValueError(f"not enough values to unpack (expected {nd}, got "
                             f"{len(kernel_size)})" if len(kernel_size) < nd else
                             f"too many values to unpack (expected {nd})")
    if isinstance(norm_type, (int, float)) and abs(norm_type) == float("inf"):
        sign = 1 if norm_type > 0 else -1
        return sign * max_pool(sign * input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    k = _ints(kernel_size)
    window = k[0] ** nd if len(k) == 1 else _prod(k)
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (et.sign(out) * et.relu(et.abs(out))).mul(window).pow(1.0 / norm_type)


def _prod(values) -> int:
    n = 1
    for v in values:
        n *= v
    return n


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
    """1-D power-average pooling of ``(N, C, L)`` or ``(C, L)`` input."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
    """2-D power-average pooling of ``(N, C, H, W)`` or ``(C, H, W)`` input."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
    """3-D power-average pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


# ----------------------------------------------------------------------------- fractional


def _window_starts(sample, size: int, out: int, pool: int):
    """Graham's pseudo-random window starts along one dim: ``(..., out)`` int64 from one
    ``u`` in [0, 1) per plane, ``trunc((i + u) a) - trunc(u a)`` with ``a = (size - pool) /
    (out - 1)`` (in the sample's dtype, as PyTorch's kernel) and the last window flush with
    the end."""
    last = et.full([*sample.shape, 1], size - pool, dtype=et.int64, device=sample.device)
    if out == 1:
        return last
    a = (size - pool) / (out - 1)
    i = et.arange(out - 1, dtype=sample.dtype, device=sample.device)
    u = sample.unsqueeze(-1)
    starts = ((i + u) * a).to(et.int64) - (u * a).to(et.int64)
    return et.cat([starts, last], -1)


def _fractional_arg(name: str, arg: str, value, nd: int) -> list[int]:
    """A fractional pooling size: one int for every dim, or a sequence of ``nd`` of them (a
    sequence of one is refused, as PyTorch's)."""
    v = _ints(value)
    if not isinstance(value, (list, tuple)) and len(v) == 1:
        v = v * nd
    if len(v) != nd:
        raise RuntimeError(f"{name}: {arg} must either be a single Int or tuple of "
                           f"{'three ' if nd == 3 else ''}Ints")
    return v


def _fractional_max_pool(nd: int, input, kernel_size, output_size, output_ratio,
                         _random_samples):
    """(values, indices) of fractional max pooling over the last ``nd`` dims of a batched
    ``(N, C, *)`` or unbatched ``(C, *)`` input; indices are flat within each plane."""
    name = f"fractional_max_pool{nd}d"
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    sizes = list(input.shape[-nd:])
    kernel = _fractional_arg(name, "kernel_size", kernel_size, nd)
    if output_size is None:
        ratio = list(output_ratio) if isinstance(output_ratio, (list, tuple)) else \
            [output_ratio] * nd
        if len(ratio) == 1:
            ratio = ratio * nd
        if len(ratio) != nd:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or "
                             "tuple of Ints.")
        out = [int(s * r) for s, r in zip(sizes, ratio)]
    else:
        out = _fractional_arg(name, "output_size", output_size, nd)
    for axis, (s, k, o) in enumerate(zip(sizes, kernel, out)):
        if o + k - 1 > s:
            raise RuntimeError(f"{name}(): pool size {k} too large relative to input size {s} "
                               f"for output size {o} along dim {axis - nd}")
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    n, c = x.shape[0], x.shape[1]
    if _random_samples is None:
        _random_samples = et.rand(n, c, nd, dtype=input.dtype, device=input.device)
    else:  # PyTorch reads the first n rows: more are allowed
        shape = tuple(_random_samples.shape)
        if len(shape) != 3 or shape[0] < n or shape[1:] != (c, nd):
            raise RuntimeError(f"{name}(): Expect _random_samples to be of shape "
                               f"({n}, {c}, {nd}), but got {list(shape)}")
        _random_samples = _random_samples[:n]
    # PyTorch's kernels read the samples last dim first in 2-D (w, h), in order in 3-D
    order = [1, 0] if nd == 2 else list(range(nd))
    flat = None
    for axis in range(nd):
        starts = _window_starts(_random_samples[..., order[axis]], sizes[axis], out[axis],
                                kernel[axis])
        pos = starts.unsqueeze(-1) + et.arange(kernel[axis], device=input.device)  # (n,c,o,k)
        # place this axis' (out, kernel) pair among the others': (n, c, o0, .., k0, ..)
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + axis] = out[axis]
        shape[2 + nd + axis] = kernel[axis]
        pos = pos.reshape(shape)
        flat = pos if flat is None else flat * sizes[axis] + pos
    flat = flat.expand([n, c] + out + kernel).reshape(n, c, _prod(out), _prod(kernel))
    values = x.reshape(n, c, -1).gather(2, flat.reshape(n, c, -1)).reshape(flat.shape)
    best, at = values.max(-1, keepdim=True)
    indices = flat.gather(-1, at).reshape([n, c] + out)
    best = best.reshape([n, c] + out)
    if unbatched:
        best, indices = best.squeeze(0), indices.squeeze(0)
    return best, indices


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples=None):
    """Fractional max pooling (Graham 2014) of ``(N, C, H, W)`` or ``(C, H, W)`` input:
    ``kernel_size`` windows at pseudo-random steps giving ``output_size`` (or
    ``output_ratio`` of the input size); returns (values, flat indices within each plane).
    ``_random_samples`` ``(N, C, 2)`` in [0, 1) fixes the steps."""
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio,
                                _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    """``fractional_max_pool2d_with_indices``'s values, or both if ``return_indices``."""
    got = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return got if return_indices else got[0]


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples=None):
    """Fractional max pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input;
    ``_random_samples`` is ``(N, C, 3)``. See ``fractional_max_pool2d_with_indices``."""
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio,
                                _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    """``fractional_max_pool3d_with_indices``'s values, or both if ``return_indices``."""
    got = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return got if return_indices else got[0]
