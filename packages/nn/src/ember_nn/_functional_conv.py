"""Convolutions, ``unfold``/``fold`` and ``interpolate`` of ``ember.nn.functional``.

The convolutions are the tensor core's ``conv2d``/``conv_transpose2d`` (im2col + GEMM);
this module adds what PyTorch's Python layer adds on top: unbatched inputs, the
``'same'``/``'valid'`` padding strings (an even effective kernel pads the input on the right
first, as PyTorch does), the 1-d variants, which run as 2-d convolutions over a
unit-height image, and the 3-d ones, which sum one 2-d convolution per depth tap of the
kernel (each over the depth slices that tap meets, as one batch). Integer convolutions
(PyTorch's CPU kernels take int64) run as ``im2col`` and an integer ``matmul`` (exact,
wrapping as int64 arithmetic does). ``interpolate`` is separable: each spatial dimension
in turn is resampled with ``index_select`` (nearest) or a weighted sum of
``index_select``s (linear, cubic), so the gradient is that of index ops; the source
indices and weights are computed in the input's precision with PyTorch's formulas
(``align_corners``, ``scale_factor`` vs ``size``).

>>> import ember_tensor as et
>>> from ember_nn import functional as F
>>> tuple(F.conv2d(et.ones(1, 2, 5, 5), et.ones(3, 2, 3, 3), padding="same").shape)
(1, 3, 5, 5)
>>> F.interpolate(et.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist()
[[[1.0, 1.0, 2.0, 2.0]]]
"""

from __future__ import annotations

import math
import warnings

import numpy as np

import ember_tensor as et

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "fold",
    "interpolate",
    "unfold",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]


_KERNEL_DIMS = {1: "kL", 2: "kH, kW", 3: "kD, kH, kW"}


def _ntuple(value, n: int, name: str) -> tuple:
    """A convolution's stride, padding, dilation or output_padding for n spatial dims: an
    int, or a list of 1 (repeated) or n ints; PyTorch's error otherwise."""
    if isinstance(value, (list, tuple)):
        if len(value) not in (1, n):
            raise RuntimeError(
                f"expected {name} to be a single integer value or a list of {n} values to "
                f"match the convolution dimensions, but got {name}={list(value)}")
        return tuple(value) * n if len(value) == 1 else tuple(value)
    return (value,) * n


def _pair(value) -> tuple:
    """fold/unfold's arguments: an int (repeated) or a sequence taken as it is (its length
    checked against 2 by the caller, as PyTorch's im2col does)."""
    return tuple(value) if isinstance(value, (list, tuple)) else (value, value)


def _shape(t) -> list[int]:
    return list(t.shape)


# ----------------------------------------------------------------------------- convolution


def _same_padding(op: str, kernel, dilation, stride):
    """``'same'`` as (left, right) amounts per spatial dim: the total ``d * (k - 1)`` split
    with the extra element on the right."""
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    left, right = [], []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        left.append(total // 2)
        right.append(total - total // 2)
    return left, right


def _conv_nd(op: str, nd: int, input, weight, bias, stride, padding, dilation, groups):
    """conv1d/conv2d: checks the ranks, strips a missing batch dim, resolves string
    paddings and runs the core's conv2d (1-d as a height-1 image)."""
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {op}, but got "
            f"input of size: {_shape(input)}"
        )
    if weight.dim() != nd + 2:
        raise RuntimeError(
            f"{op}: Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional "
            f"weight {_shape(weight)}, but got {input.dim()}-dimensional input of size "
            f"{_shape(input)} instead (the weight of {op} is (out_channels, "
            f"in_channels / groups, {_KERNEL_DIMS[nd]}))"
        )
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    stride = _ntuple(stride, nd, "stride")
    dilation = _ntuple(dilation, nd, "dilation")
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            left, right = _same_padding(op, kernel, dilation, stride)
            if left != right:
                from .functional import pad

                amounts = []
                for lo, hi in reversed(list(zip(left, right))):
                    amounts += [0, hi - lo]
                x = pad(x, amounts)
            padding = tuple(left)
        else:
            raise RuntimeError(f"Invalid padding string: {padding!r}")
    padding = _ntuple(padding, nd, "padding")
    if nd == 1:
        out = _conv2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, stride[0]),
                      (0, padding[0]), (1, dilation[0]), groups).squeeze(2)
    elif nd == 2:
        out = _conv2d(x, weight, bias, stride, padding, dilation, groups)
    else:
        out = _conv3d(x, weight, bias, stride, padding, dilation, groups)
    return out.squeeze(0) if unbatched else out


def _is_integer(t) -> bool:
    return not (t.is_floating_point() or t.is_complex())


def _conv2d(x, weight, bias, stride, padding, dilation, groups):
    """The core's conv2d, or for integer tensors im2col and a grouped integer matmul."""
    if not _is_integer(x):
        return et.conv2d(x, weight, bias, stride, padding, dilation, groups)
    if weight.dtype != x.dtype or (bias is not None and bias.dtype != x.dtype):
        raise RuntimeError(f"conv2d: expected input, weight and bias of the same dtype, but got "
                           f"{x.dtype}, {weight.dtype} and "
                           f"{None if bias is None else bias.dtype}")
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    if c != cg * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
                           f"input{list(x.shape)} to have {cg * groups} channels, but got {c} "
                           "channels instead")
    cols = et.im2col(x, [kh, kw], list(dilation), list(padding), list(stride))
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    cols = cols.reshape(n, groups, cg * kh * kw, oh * ow)
    out = et.matmul(weight.reshape(1, groups, o // groups, cg * kh * kw), cols)
    out = out.reshape(n, o, oh, ow)
    return out if bias is None else out + bias.reshape(1, o, 1, 1)


def _conv_transpose2d(x, weight, bias, stride, padding, output_padding, groups, dilation):
    """The core's conv_transpose2d, or for integer tensors a grouped integer matmul and
    col2im (the adjoint of _conv2d's integer path)."""
    if not _is_integer(x):
        return et.conv_transpose2d(x, weight, bias, stride, padding, output_padding, groups,
                                   dilation)
    n, c, h, w = x.shape
    _, og, kh, kw = weight.shape
    oh = (h - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + output_padding[0] + 1
    ow = (w - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + output_padding[1] + 1
    wg = weight.reshape(groups, c // groups, og * kh * kw).transpose(1, 2)
    cols = et.matmul(wg.unsqueeze(0), x.reshape(n, groups, c // groups, h * w))
    # folded without padding (every block inside), widened by output_padding, then cropped:
    # output_padding may reach past what col2im's own grid of blocks covers
    full = [(h - 1) * stride[0] + dilation[0] * (kh - 1) + 1,
            (w - 1) * stride[1] + dilation[1] * (kw - 1) + 1]
    out = et.col2im(cols.reshape(n, groups * og * kh * kw, h * w), full, [kh, kw],
                    list(dilation), [0, 0], list(stride))
    out = et.constant_pad_nd(out, [0, output_padding[1], 0, output_padding[0]])
    out = out[:, :, padding[0]:padding[0] + oh, padding[1]:padding[1] + ow]
    return out if bias is None else out + bias.reshape(1, groups * og, 1, 1)


def _conv3d(x, weight, bias, stride, padding, dilation, groups):
    """(N, C, D, H, W) * (O, C/groups, kD, kH, kW): for each depth tap kd, the 2-d
    convolution of the depth slices it meets (all output depths as one batch) with the
    weight's slice kd, summed over the taps."""
    n, c, depth, h, w = x.shape
    o, cg, kd_size = weight.shape[:3]
    if c != cg * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
                           f"input{list(x.shape)} to have {cg * groups} channels, but got {c} "
                           "channels instead")
    sd, pd, dd = stride[0], padding[0], dilation[0]
    od = (depth + 2 * pd - dd * (kd_size - 1) - 1) // sd + 1
    if od < 1:
        raise RuntimeError(f"Calculated padded input size per channel: ({depth + 2 * pd} x "
                           f"{h + 2 * padding[1]} x {w + 2 * padding[2]}). Kernel size: "
                           f"({dd * (kd_size - 1) + 1} x ...). Kernel size can't be greater than "
                           "actual input size")
    if pd:
        x = et.constant_pad_nd(x, [0, 0, 0, 0, pd, pd])
    total = None
    for kd in range(kd_size):
        start = kd * dd
        taps = x[:, :, start:start + (od - 1) * sd + 1:sd]  # (N, C, OD, H, W)
        taps = taps.transpose(1, 2).reshape(n * od, c, h, w)
        y = _conv2d(taps, weight[:, :, kd], None, stride[1:], padding[1:], dilation[1:], groups)
        total = y if total is None else total + y
    out = total.reshape(n, od, o, *total.shape[-2:]).transpose(1, 2)
    return out if bias is None else out + bias.reshape(1, o, 1, 1, 1)


def _conv_transpose3d(x, weight, bias, stride, padding, output_padding, groups, dilation):
    """The adjoint of _conv3d: for each depth tap kd, the 2-d transposed convolution of every
    input depth slice with the weight's slice kd, added at depths ``i * stride + kd *
    dilation`` of the uncropped output, whose padding is then cut off."""
    n, c, depth, h, w = x.shape
    og, kd_size = weight.shape[1], weight.shape[2]
    sd, pd, dd, opd = stride[0], padding[0], dilation[0], output_padding[0]
    od = (depth - 1) * sd - 2 * pd + dd * (kd_size - 1) + opd + 1
    full = (depth - 1) * sd + dd * (kd_size - 1) + opd + 1
    slices = x.transpose(1, 2).reshape(n * depth, c, h, w)
    at = et.arange(depth, device=x.device) * sd
    out = None
    for kd in range(kd_size):
        y = _conv_transpose2d(slices, weight[:, :, kd], None, stride[1:], padding[1:],
                              output_padding[1:], groups, dilation[1:])
        y = y.reshape(n, depth, *y.shape[1:])
        if out is None:
            out = et.zeros(n, full, *y.shape[2:], dtype=y.dtype, device=y.device)
        out = et.index_add(out, 1, at + kd * dd, y)
    out = out[:, pd:pd + od].transpose(1, 2)
    return out if bias is None else out + bias.reshape(1, groups * og, 1, 1, 1)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d cross-correlation: input ``(N, C_in, L)`` or ``(C_in, L)``, weight ``(C_out,
    C_in / groups, kL)``, bias ``(C_out,)``; ``padding`` an int, a 1-tuple, ``'valid'`` or
    ``'same'`` (stride 1 only)."""
    return _conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d cross-correlation: input ``(N, C_in, H, W)`` or ``(C_in, H, W)``, weight
    ``(C_out, C_in / groups, kH, kW)``, bias ``(C_out,)``; ``padding`` an int, a pair,
    ``'valid'`` or ``'same'`` (stride 1 only)."""
    return _conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d cross-correlation: input ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``, weight
    ``(C_out, C_in / groups, kD, kH, kW)``, bias ``(C_out,)``; ``padding`` an int, a triple,
    ``'valid'`` or ``'same'`` (stride 1 only)."""
    return _conv_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose_nd(op, nd, input, weight, bias, stride, padding, output_padding, groups,
                       dilation):
    if isinstance(padding, str):
        raise TypeError(f"{op}(): argument 'padding' must be tuple of ints, not str")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {op}, but got "
            f"input of size: {_shape(input)}"
        )
    if weight.dim() != nd + 2:
        raise RuntimeError(
            f"{op}: expected a {nd + 2}-dimensional weight (in_channels, out_channels / "
            f"groups, {_KERNEL_DIMS[nd]}), but got weight of size "
            f"{_shape(weight)}"
        )
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    stride, padding = _ntuple(stride, nd, "stride"), _ntuple(padding, nd, "padding")
    output_padding = _ntuple(output_padding, nd, "output_padding")
    dilation = _ntuple(dilation, nd, "dilation")
    if nd == 1:
        out = _conv_transpose2d(x.unsqueeze(2), weight.unsqueeze(2), bias, (1, stride[0]),
                                (0, padding[0]), (0, output_padding[0]), groups,
                                (1, dilation[0])).squeeze(2)
    elif nd == 2:
        out = _conv_transpose2d(x, weight, bias, stride, padding, output_padding, groups,
                                dilation)
    else:
        out = _conv_transpose3d(x, weight, bias, stride, padding, output_padding, groups,
                                dilation)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """The transpose of ``conv1d`` (a "deconvolution"): input ``(N, C_in, L)`` or ``(C_in,
    L)``, weight ``(C_in, C_out / groups, kL)``."""
    return _conv_transpose_nd("conv_transpose1d", 1, input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """The transpose of ``conv2d`` (its gradient with respect to the input): input ``(N,
    C_in, H, W)`` or ``(C_in, H, W)``, weight ``(C_in, C_out / groups, kH, kW)``; the
    output is ``(H - 1) * stride - 2 * padding + dilation * (kH - 1) + output_padding + 1``
    high (likewise wide)."""
    return _conv_transpose_nd("conv_transpose2d", 2, input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """The transpose of ``conv3d``: input ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``,
    weight ``(C_in, C_out / groups, kD, kH, kW)``."""
    return _conv_transpose_nd("conv_transpose3d", 3, input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


# ----------------------------------------------------------------------------- unfold/fold


def _check_fold_dtype(op: str, input) -> None:
    """PyTorch's unfold/fold take floating, complex and bool tensors (the core's im2col and
    col2im, which the integer convolutions use, take integers too)."""
    if _is_integer(input) and input.dtype != et.bool:
        raise NotImplementedError(f'"{op}_out_cpu" not implemented for '
                                  f"'{input.dtype._scalar_type_name}'")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding ``kernel_size`` blocks of a ``(N, C, H, W)`` (or ``(C, H, W)``) input as
    columns: ``(N, C * kH * kW, L)``, ``L`` the number of blocks."""
    if input.dim() not in (3, 4):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
            f"non-zero dimensions for input, but got: {_shape(input)}"
        )
    _check_fold_dtype("im2col", input)
    args = [_pair(a) for a in (kernel_size, dilation, padding, stride)]
    for name, a in zip(("kernel_size", "dilation", "padding", "stride"), args):
        if len(a) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(a)}")
    if input.dim() == 3:
        return et.im2col(input.unsqueeze(0), *args).squeeze(0)
    return et.im2col(input, *args)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of ``unfold``: ``(N, C * kH * kW, L)`` (or ``(C * kH * kW, L)``) columns
    summed into a ``(N, C, *output_size)`` image (overlapping values add up)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
            f"non-zero dimensions for input, but got: {_shape(input)}"
        )
    _check_fold_dtype("col2im", input)
    args = [_pair(a) for a in (output_size, kernel_size, dilation, padding, stride)]
    for name, a in zip(("output_size", "kernel_size", "dilation", "padding", "stride"), args):
        if len(a) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(a)}")
    if input.dim() == 2:
        return et.col2im(input.unsqueeze(0), *args).squeeze(0)
    return et.col2im(input, *args)


# ----------------------------------------------------------------------------- interpolate

_INTERP_MODES = ("nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                 "nearest-exact")
_MODE_DIMS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def _np_float(dtype):
    """NumPy float type of the arithmetic PyTorch does for ``dtype`` (float for all but
    double)."""
    return np.float64 if dtype == et.float64 else np.float32


def _scale_value(ft, scale, in_size: int, out_size: int):
    """PyTorch's source/destination ratio: ``1 / scale_factor`` when one is used, ``in /
    out`` otherwise (in ``ft``)."""
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(in_size) / ft(out_size)


def _nearest_index(in_size, out_size, scale, exact: bool) -> np.ndarray:
    dst = np.arange(out_size)
    if not exact and out_size == in_size:
        return dst
    if not exact and out_size == 2 * in_size:
        return dst >> 1
    s = _scale_value(np.float32, scale, in_size, out_size)
    if exact:
        src = np.floor(((dst + 0.5) * np.float64(s)).astype(np.float32))
    else:
        src = np.floor(dst.astype(np.float32) * s)
    return np.minimum(src.astype(np.int64), in_size - 1)


def _area_scale(ft, in_size, out_size, align_corners, scale):
    if align_corners:
        return ft(in_size - 1) / ft(out_size - 1) if out_size > 1 else ft(0)
    return _scale_value(ft, scale, in_size, out_size)


def _source_index(ft, ratio, out_size, align_corners, cubic: bool) -> np.ndarray:
    dst = np.arange(out_size).astype(ft)
    if align_corners:
        return ratio * dst
    src = ratio * (dst + ft(0.5)) - ft(0.5)
    return src if cubic else np.maximum(src, ft(0))


def _linear_taps(ft, in_size, out_size, align_corners, scale):
    """(indices, weights) of the two taps of each output position."""
    if in_size == out_size:
        i = np.arange(out_size)
        return [i, i], [np.ones(out_size, ft), np.zeros(out_size, ft)]
    ratio = _area_scale(ft, in_size, out_size, align_corners, scale)
    src = _source_index(ft, ratio, out_size, align_corners, cubic=False)
    i0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    lam1 = np.clip(src - i0.astype(ft), ft(0), ft(1)).astype(ft)
    i1 = i0 + (i0 < in_size - 1)
    return [i0, i1], [(ft(1) - lam1).astype(ft), lam1]


def _cubic_taps(ft, in_size, out_size, align_corners, scale):
    """(indices, weights) of the four taps (Keys' cubic convolution, A = -0.75), indices
    clamped to the input."""
    ratio = _area_scale(ft, in_size, out_size, align_corners, scale)
    src = _source_index(ft, ratio, out_size, align_corners, cubic=True)
    base = np.floor(src).astype(np.int64)
    t = (src - base.astype(ft)).astype(ft)
    a = ft(-0.75)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    index = [np.clip(base - 1 + j, 0, in_size - 1) for j in range(4)]
    return index, [w.astype(ft) for w in weights]


def _area_matrix(in_size, out_size) -> np.ndarray:
    """Adaptive average pooling along one dim as an (out, in) averaging matrix."""
    m = np.zeros((out_size, in_size))
    for i in range(out_size):
        start = (i * in_size) // out_size
        end = ((i + 1) * in_size + out_size - 1) // out_size
        m[i, start:end] = 1.0 / (end - start)
    return m


def _host(array, like, dtype=None):
    """The NumPy ``array`` as a tensor on ``like``'s device (of ``dtype``, else its own)."""
    t = et.from_numpy(np.ascontiguousarray(array))
    return t.to(like.device, dtype) if dtype is not None else t.to(like.device)


def _resample_dim(x, dim: int, index, weights):
    """``sum_k weights[k][j] * x.index_select(dim, index[k])[..., j, ...]``."""
    shape = [1] * x.dim()
    shape[dim] = -1
    out = None
    for idx, w in zip(index, weights):
        if not np.any(w):
            continue
        term = x.index_select(dim, _host(idx.astype(np.int64), x))
        if not np.all(w == 1):
            term = term * _host(w, x, x.dtype).reshape(shape)
        out = term if out is None else out + term
    if out is None:  # every weight zero (cannot happen for valid sizes)
        out = x.index_select(dim, _host(index[0].astype(np.int64), x)) * 0
    return out


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest",
                align_corners=None, recompute_scale_factor=None, antialias: bool = False):
    """Resamples the spatial dims of an ``(N, C, d1[, d2[, d3]])`` input to ``size`` or by
    ``scale_factor``. Modes: ``'nearest'``, ``'nearest-exact'``, ``'linear'`` (3-d input),
    ``'bilinear'``/``'bicubic'`` (4-d), ``'trilinear'`` (5-d), ``'area'`` (adaptive average
    pooling); ``align_corners`` for the interpolating ones. ``antialias`` and
    ``'lanczos'`` are not implemented."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    spatial = _shape(input)[2:]
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {spatial} and output size of "
                    f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format."
                )
            if not all(hasattr(type(s), "__index__") for s in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    "Tuple[int, int, int], but got size with types "
                    f"{[type(s) for s in size]}"
                )
            output_size = [int(s) for s in size]
        else:
            output_size = [int(size)] * dim
        scales = [None] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {spatial} and scale_factor of "
                    f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, "
                    "...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
        output_size = None
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if output_size is None:
        output_size = [int(math.floor(float(n) * s)) for n, s in zip(spatial, scales)]
        if recompute_scale_factor:
            scales = [None] * dim
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            "requires a 4-D tensor as input"
        )
    known = ("nearest", "nearest-exact", "area") + tuple(_MODE_DIMS)
    need = _MODE_DIMS.get(mode)
    if mode != "bicubic" and need is not None and input.dim() in (3, 4, 5) \
            and input.dim() != need:
        raise NotImplementedError(
            f"Got {input.dim()}D input, but {mode} mode needs {need}D input"
        )
    if mode not in known or input.dim() not in (3, 4, 5) or (
        mode == "bicubic" and input.dim() != 4
    ):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
            f"for the modes: {_INTERP_MODES} (got {mode})"
        )
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not implemented in Ember")
    # what PyTorch's parser refuses in the size it passes to the op: a bool or float, an int
    # beyond int64 (never an attempt to compute with it)
    op = {"nearest-exact": "_upsample_nearest_exact", "area": "adaptive_avg_pool"}.get(
        mode, f"upsample_{mode}") + f"{dim}d"
    given = list(size) if isinstance(size, (list, tuple)) else [size]
    if size is not None and any(isinstance(s, bool) or not hasattr(type(s), "__index__")
                                for s in given):
        raise TypeError(f"{op}() received an invalid combination of arguments: output_size "
                        f"must be a tuple of ints, got {size!r}")
    for i, o in enumerate(output_size):
        if not -(2**63) <= o < 2**63:
            if size is None:  # computed from scale_factor
                raise RuntimeError("value cannot be converted to type int64_t without overflow")
            raise TypeError(f"{op}(): argument 'output_size' failed to unpack the object at pos "
                            f"{i + 1} with error \"Overflow when unpacking long long\"")
    if any(o <= 0 for o in output_size) or any(n <= 0 for n in spatial):
        names = "DHW"[3 - dim:]
        ins = ", ".join(f"{c}: {n}" for c, n in zip(names, spatial))
        outs = ", ".join(f"{c}: {n}" for c, n in zip(names, output_size))
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input "
            f"({ins}) output ({outs})"
        )
    if mode not in ("nearest", "nearest-exact") and not input.is_floating_point():
        raise NotImplementedError(
            f"interpolate: mode {mode!r} is not implemented for dtype "
            f"{str(input.dtype).rsplit('.', 1)[-1]} (expected a floating point tensor)"
        )
    ft = _np_float(input.dtype)
    out = input
    for k in range(dim):
        d = k + 2
        n, m, s = spatial[k], output_size[k], scales[k]
        if mode in ("nearest", "nearest-exact"):
            idx = _nearest_index(n, m, s, exact=mode == "nearest-exact")
            if m != n or np.any(idx != np.arange(m)):
                out = out.index_select(d, _host(idx, input))
        elif mode == "area":
            if m != n:
                mat = _host(_area_matrix(n, m), input, input.dtype)
                out = out.movedim(d, -1).matmul(mat.t()).movedim(-1, d)
        elif mode == "bicubic":
            out = _resample_dim(out, d, *_cubic_taps(ft, n, m, align_corners, s))
        else:
            out = _resample_dim(out, d, *_linear_taps(ft, n, m, align_corners, s))
    if out is input:  # the identity resampling still returns a new tensor
        out = input.clone()
    return out


def upsample(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None):
    """Deprecated name of ``interpolate`` (warns, as PyTorch)."""
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')`` (warns, as PyTorch)."""
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` "
        "instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)`` (warns, as
    PyTorch)."""
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` "
        "instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
