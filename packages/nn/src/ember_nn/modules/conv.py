"""Convolution layers: ``Conv1d``, ``Conv2d``, ``ConvTranspose1d``, ``ConvTranspose2d``.

PyTorch's attributes (``kernel_size``, ``stride``, ``padding`` (a tuple or the string
``'same'``/``'valid'``), ``dilation``, ``groups``, ``padding_mode``, ``output_padding``,
``transposed``), parameter shapes, initialisation and repr.

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> conv = nn.Conv2d(3, 8, 3, padding="same", padding_mode="reflect")
>>> conv
Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=same, padding_mode=reflect)
>>> tuple(conv(et.ones(2, 3, 10, 10)).shape)
(2, 8, 10, 10)
"""

from __future__ import annotations

import math

import ember_tensor as et

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n: int) -> tuple:
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,) * n


class _ConvNd(Module):
    """What the convolutions share: argument checks, parameters and their initialisation,
    ``extra_repr``."""

    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None) -> None:
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        kernel_size = _ntuple(kernel_size, nd)
        stride = _ntuple(stride, nd)
        dilation = _ntuple(dilation, nd)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(
                    f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}"
                )
            if transposed:
                raise ValueError(
                    f"{type(self).__name__}: padding must be an int or a tuple of ints, not "
                    f"{padding!r} (the string paddings are for the convolutions)"
                )
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _ntuple(padding, nd)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                "padding_mode must be one of {'zeros', 'circular', 'reflect', 'replicate'}, "
                f"but got padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, nd)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad amounts (last dim first, left then right) for the non-zero padding modes
        if isinstance(padding, str):
            amounts = [0, 0] * nd
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(nd - 1, -1, -1)):
                    total = d * (k - 1)
                    amounts[2 * i] = total // 2
                    amounts[2 * i + 1] = total - total // 2
            self._reversed_padding_repeated_twice = amounts
        else:
            self._reversed_padding_repeated_twice = tuple(
                p for p in reversed(padding) for _ in "lr"
            )
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(et.empty(shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(et.empty((out_channels,), dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        nd = len(self.kernel_size)
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    _fn = None

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return type(self)._fn(padded, weight, bias, self.stride, 0, self.dilation,
                                  self.groups)
        return type(self)._fn(input, weight, bias, self.stride, self.padding, self.dilation,
                              self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-d convolution (cross-correlation) over ``(N, C_in, L)`` or ``(C_in, L)`` inputs.

    ``weight``: ``(out_channels, in_channels / groups, kernel_size)``, ``bias``:
    ``(out_channels,)``, both from U(-1/sqrt(fan_in), 1/sqrt(fan_in)), ``fan_in =
    in_channels / groups * kernel_size`` (PyTorch's ``kaiming_uniform_(a=sqrt(5))``).
    ``padding``: int, 1-tuple, ``'valid'`` or ``'same'``; ``padding_mode``: ``'zeros'``,
    ``'reflect'``, ``'replicate'`` or ``'circular'``.
    """

    _nd = 1
    _fn = staticmethod(F.conv1d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)


class Conv2d(_Conv):
    """2-d convolution (cross-correlation) over ``(N, C_in, H, W)`` or ``(C_in, H, W)``
    inputs.

    ``weight``: ``(out_channels, in_channels / groups, kH, kW)``, ``bias``:
    ``(out_channels,)``, initialised as PyTorch's. ``padding``: int, pair, ``'valid'`` or
    ``'same'`` (an even kernel pads one more on the right/bottom); ``padding_mode``:
    ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.
    """

    _nd = 2
    _fn = staticmethod(F.conv2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)


class Conv3d(_Conv):
    """3-d convolution (cross-correlation) over ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``
    inputs.

    ``weight``: ``(out_channels, in_channels / groups, kD, kH, kW)``, ``bias``:
    ``(out_channels,)``, initialised as PyTorch's. ``padding``: int, triple, ``'valid'`` or
    ``'same'``; ``padding_mode``: ``'zeros'``, ``'reflect'``, ``'replicate'`` or
    ``'circular'``.
    """

    _nd = 3
    _fn = staticmethod(F.conv3d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)


class _ConvTransposeNd(_ConvNd):
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {type(self).__name__}'
            )
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         transposed, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size,
                        num_spatial_dims: int, dilation=None) -> list[int]:
        """The ``output_padding`` that makes the output ``output_size`` (which may include
        the batch and channel dims), checked against the sizes the stride allows."""
        if output_size is None:
            return list(self.output_padding)
        batched = input.dim() == num_spatial_dims + 2
        leading = 2 if batched else 1
        output_size = [int(s) for s in output_size]
        if len(output_size) == num_spatial_dims + leading:
            output_size = output_size[leading:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size "
                f"must have {num_spatial_dims} or {num_spatial_dims + leading} elements "
                f"(got {len(output_size)})"
            )
        lows, highs = [], []
        for d in range(num_spatial_dims):
            dil = dilation[d] if dilation is not None else 1
            low = ((input.shape[d + leading] - 1) * stride[d] - 2 * padding[d]
                   + dil * (kernel_size[d] - 1) + 1)
            lows.append(low)
            highs.append(low + stride[d] - 1)
        for d, size in enumerate(output_size):
            if size < lows[d] or size > highs[d]:
                raise ValueError(
                    f"requested an output size of {tuple(output_size)}, but valid sizes range "
                    f"from {lows} to {highs} (for an input of "
                    f"{et.Size(tuple(input.shape)[leading:])})"
                )
        return [output_size[d] - lows[d] for d in range(num_spatial_dims)]

    def forward(self, input, output_size=None):
        nd = self._nd
        if input.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(
                f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                f"conv_transpose{nd}d, but got input of size: {list(input.shape)}"
            )
        output_padding = self._output_padding(input, output_size, self.stride, self.padding,
                                              self.kernel_size, nd, self.dilation)
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding,
                              output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """The transpose of ``Conv1d`` over ``(N, C_in, L)`` or ``(C_in, L)`` inputs;
    ``weight``: ``(in_channels, out_channels / groups, kernel_size)``. ``forward(input,
    output_size=None)``: ``output_size`` picks among the lengths a stride allows."""

    _nd = 1
    _fn = staticmethod(F.conv_transpose1d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)


class ConvTranspose2d(_ConvTransposeNd):
    """The transpose of ``Conv2d`` (a "deconvolution") over ``(N, C_in, H, W)`` or ``(C_in,
    H, W)`` inputs; ``weight``: ``(in_channels, out_channels / groups, kH, kW)``, initialised
    as PyTorch's (``fan_in = out_channels / groups * kH * kW``). ``forward(input,
    output_size=None)``: ``output_size`` (spatial, or with the leading dims) picks among the
    sizes a stride allows, by choosing ``output_padding``."""

    _nd = 2
    _fn = staticmethod(F.conv_transpose2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)


class ConvTranspose3d(_ConvTransposeNd):
    """The transpose of ``Conv3d`` over ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)`` inputs;
    ``weight``: ``(in_channels, out_channels / groups, kD, kH, kW)``. ``forward(input,
    output_size=None)``: ``output_size`` picks among the sizes a stride allows."""

    _nd = 3
    _fn = staticmethod(F.conv_transpose3d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)
