"""``Identity``, ``Linear`` and ``Bilinear``."""

from __future__ import annotations

import math

import ember_tensor as et

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Bilinear", "Identity", "Linear", "NonDynamicallyQuantizableLinear"]


class Identity(Module):
    """Returns its input; takes (and ignores) any constructor arguments."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``.

    Shape: input ``(*, in_features)``, output ``(*, out_features)``. ``weight`` is
    ``(out_features, in_features)``, ``bias`` ``(out_features,)``, both initialised from
    U(-1/sqrt(in_features), 1/sqrt(in_features)) (PyTorch's ``kaiming_uniform_`` with
    ``a=sqrt(5)`` for the weight).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(et.empty((out_features, in_features), dtype=dtype,
                                         device=device))
        if bias:
            self.bias = Parameter(et.empty((out_features,), dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    """A ``Linear`` under the name PyTorch gives ``MultiheadAttention.out_proj`` (a marker
    for its quantisation tools; nothing else differs)."""


class Bilinear(Module):
    """``y = x1^T A x2 + b``, one bilinear form per output feature.

    Shape: inputs ``(*, in1_features)`` and ``(*, in2_features)``, output
    ``(*, out_features)``; ``weight`` is ``(out_features, in1_features, in2_features)``,
    weight and bias initialised from U(-1/sqrt(in1_features), 1/sqrt(in1_features)).
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(
            et.empty((out_features, in1_features, in2_features), dtype=dtype, device=device)
        )
        if bias:
            self.bias = Parameter(et.empty((out_features,), dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.in1_features <= 0:
            raise ValueError(
                f"in1_features must be > 0, but got (in1_features={self.in1_features})"
            )
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
