"""``ember.nn.init``: in-place initialisation of parameters, PyTorch's functions, fan
computation, gains and errors. Every function writes under ``no_grad`` and returns the
tensor it filled; those that draw random numbers take a ``generator=``.

Ember draws its own random streams (see "Random numbers" in the differences page): the
distributions are PyTorch's, the values are not.
"""

from __future__ import annotations

import math
import warnings

import ember_tensor as et
from ember_autograd import no_grad

__all__ = [
    "calculate_gain",
    "constant_",
    "dirac_",
    "eye_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "orthogonal_",
    "sparse_",
    "trunc_normal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]

_LINEAR = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity (``param``: leaky_relu's negative slope):
    1 for linear/conv/sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + slope**2))
    for leaky_relu, 3/4 for selu."""
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif (isinstance(param, int) and not isinstance(param, bool)) or isinstance(
            param, float
        ):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)``: dims 1 and 0 times the product of the remaining (receptive
    field) dims."""
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = 1
    for s in tuple(tensor.shape)[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode: str) -> int:
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    """Fills with draws from U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    """Fills with draws from N(mean, std**2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor, val: float):
    """Fills with ``val``."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fills with 1."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fills with 0."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fills a 2-d tensor with the identity (ones on the main diagonal)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.copy_(et.eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype,
                            device=tensor.device))
    return tensor


def dirac_(tensor, groups: int = 1):
    """Fills a 3-, 4- or 5-d (convolution) weight with the Dirac delta: each of the first
    in-channels of each group passes through unchanged."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    centre = tuple(s // 2 for s in sizes[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min(per_group, sizes[1])):
                tensor[(g * per_group + d, d, *centre)] = 1
    return tensor


def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    """U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))`` (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -math.sqrt(3.0) * std, math.sqrt(3.0) * std, generator)


def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    """N(0, std**2) with ``std = gain * sqrt(2 / (fan_in + fan_out))`` (Glorot)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity) -> float | None:
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None):
    """U(-bound, bound) with ``bound = gain * sqrt(3 / fan)`` (He); ``a`` is the negative
    slope of leaky_relu, ``mode`` picks fan_in (forward) or fan_out (backward)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None):
    """N(0, std**2) with ``std = gain / sqrt(fan)`` (He)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def trunc_normal_(tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None):
    """Fills with draws from N(mean, std**2) restricted to [a, b] (exact rejection
    sampling: normal draws outside the interval are redrawn; when the interval holds little
    of the normal's mass, uniform proposals on [a, b] are accepted with the normal's
    relative density)."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution "
            "of values may be incorrect.",
            stacklevel=2,
        )
    if tensor.numel() == 0:
        return tensor
    mass = _normal_cdf((b - mean) / std) - _normal_cdf((a - mean) / std)
    with no_grad():
        if mass > 0.3:
            out = et.empty_like(tensor).normal_(mean, std, generator=generator)
            while True:
                outside = et.logical_or(out < a, out > b)
                if not bool(outside.any()):
                    break
                fresh = et.empty_like(out).normal_(mean, std, generator=generator)
                out = et.where(outside, fresh, out)
        else:
            mode = max(a, min(mean, b))  # where the density on [a, b] peaks
            out = et.empty_like(tensor)
            pending = et.ones(tuple(tensor.shape), dtype=et.bool, device=tensor.device)
            while True:
                proposal = et.empty_like(tensor).uniform_(a, b, generator=generator)
                log_ratio = -0.5 * ((proposal - mean) / std).square() + 0.5 * (
                    (mode - mean) / std
                ) ** 2
                accept = et.empty_like(tensor).uniform_(0, 1, generator=generator).log()
                accepted = et.logical_and(pending, accept <= log_ratio)
                out = et.where(accepted, proposal, out)
                pending = et.logical_and(pending, et.logical_not(accepted))
                if not bool(pending.any()):
                    break
        tensor.copy_(out)
    return tensor


def _normal_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def orthogonal_(tensor, gain: float = 1, generator=None):
    """Fills with a (semi-)orthogonal matrix (trailing dims flattened), from the QR
    decomposition of a Gaussian matrix with the signs fixed so that the draw is uniform
    (Saxe et al. 2013), times ``gain``."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with no_grad():
        work = et.float64 if tensor.dtype == et.float64 else et.float32  # what QR takes
        flat = et.empty((rows, cols), dtype=work, device=tensor.device).normal_(
            0, 1, generator=generator)
        if rows < cols:
            flat = flat.t()
        q, r = et.linalg.qr(flat)
        q = q * r.diagonal().sign()
        if rows < cols:
            q = q.t()
        tensor.copy_(q.reshape(tuple(tensor.shape)) * gain)
    return tensor


def sparse_(tensor, sparsity: float, std: float = 0.01, generator=None):
    """Fills a 2-d tensor with N(0, std**2) draws and zeroes ``ceil(sparsity * rows)``
    random rows of every column."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tuple(tensor.shape)
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            # on the CPU, where the generator is; a CPU index may index a CUDA tensor
            zero_rows = et.randperm(rows, generator=generator)[:num_zeros]
            tensor[zero_rows, col] = 0
    return tensor


# ----------------------------------------------------------------------------- the names
# PyTorch deprecated in 0.4 (without the trailing underscore): the same functions, with its
# FutureWarning


def _deprecated(fn):
    old = fn.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{fn.__name__}`.",
                      FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old
    deprecated_init.__doc__ = f"Deprecated: ``{fn.__name__}`` (warns)."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
