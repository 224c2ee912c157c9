"""The random functions of ``ember.nn.functional``: ``dropout``, channel-wise dropout
(``dropout1d/2d/3d``), the SELU-preserving ``alpha_dropout`` and ``feature_alpha_dropout``,
the randomized leaky ReLU ``rrelu`` and ``gumbel_softmax``. All draw from the core's
generator (``ember.manual_seed``), are composed of core ops (differentiable, any device),
and take PyTorch's arguments, defaults, warnings and errors. Ember's random stream is not
PyTorch's: the same seed gives other masks."""

from __future__ import annotations

import math
import warnings

import ember_tensor as et

from .functional import _bool_arg

__all__ = [
    "alpha_dropout",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "feature_alpha_dropout",
    "gumbel_softmax",
    "rrelu",
    "rrelu_",
]

# SELU's alpha * scale: the value alpha dropout sets dropped units to (before the affine fix)
_SELU_NEGATIVE = 1.7580993408473766


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _check_nan_p(p: float) -> None:
    """The alpha dropouts' kernels refuse a NaN probability (it passes _check_p's bounds)."""
    if p != p:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(input, p: float, feature: bool):
    """Bernoulli(1 - p) keep-mask: one per element, or one per (sample, channel)."""
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = list(input.shape[:2]) + [1] * (input.dim() - 2)
    else:
        shape = list(input.shape)
    return et.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)


def _dropout(input, p: float, training: bool, inplace: bool, feature: bool, alpha: bool):
    """The dropout family's one kernel: ``input * mask / (1 - p)``, or for alpha dropout
    ``a * (input * mask + alpha' * (1 - mask)) + b`` that keeps zero mean and unit variance
    of SELU activations (Klambauer et al. 2017). ``training`` must be a bool (PyTorch's
    ``TypeError`` otherwise, naming its aten op)."""
    inplace = bool(inplace)
    op = ("feature_" if feature else "") + ("alpha_" if alpha else "") + "dropout"
    _bool_arg(op, "train", training, 3)  # PyTorch's words name the aten op's argument
    if not training or p == 0 or input.numel() == 0:
        return input
    if p == 1:  # times a zero of the input's dtype: NaN stays NaN, bool stays bool
        zero = et.zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    noise = _noise(input, p, feature)  # of the input's dtype: integers are refused below
    if alpha:
        a = 1.0 / math.sqrt((_SELU_NEGATIVE ** 2 * p + 1) * (1 - p))
        shift = (noise - 1) * (_SELU_NEGATIVE * a) + _SELU_NEGATIVE * a * p
        noise.mul_(a)
        return input.mul_(noise).add_(shift) if inplace else input * noise + shift
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


def _check_unsqueeze_(input) -> None:
    """PyTorch's dropout1d/3d give an unbatched input its batch dim in place
    (``input.unsqueeze_(0)``) when ``inplace``, training or not: autograd's error for an
    in-place op on a leaf that requires grad, or on a view of one."""
    from ember_autograd import is_grad_enabled

    if not is_grad_enabled():
        return
    base = input._base
    leaf = input.requires_grad and input.grad_fn is None  # (a view made before it required grad)
    if leaf or (base is not None and base.requires_grad and base.grad_fn is None):
        view = "a view of " if base is not None else ""
        raise RuntimeError(f"{view}a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


def _channel_dropout(input, p: float, training: bool, inplace: bool, unbatched: bool):
    """Feature dropout of ``input`` seen with a batch dim of 1 when ``unbatched``."""
    if inplace and unbatched:
        _check_unsqueeze_(input)
    x = input.unsqueeze(0) if unbatched else input
    out = _dropout(x, p, training, inplace, feature=True, alpha=False)
    if inplace or out is x:
        return input  # written through the view, or left alone
    return out.squeeze(0) if unbatched else out


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """During training, zeroes each element with probability ``p`` and scales the others
    by ``1 / (1 - p)``; the identity otherwise (the input itself is returned). Integer
    inputs are refused in training (the scaled mask is not an integer)."""
    _check_p(p)
    return _dropout(input, p, training, inplace, feature=False, alpha=False)


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zeroes whole channels of ``(N, C, L)`` or ``(C, L)`` input with probability ``p``
    and scales the kept ones by ``1 / (1 - p)``; other ranks are a ``RuntimeError``."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note "
            "that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    return _channel_dropout(input, p, training, inplace, unbatched=input.dim() == 2)


def _warn_rank(name: str, ranks: tuple[int, int], spatial: int, ndim: int) -> None:
    if ndim not in ranks:
        warnings.warn(
            f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will result "
            "in an error in a future release. To retain the behavior and silence this warning, "
            f"please use dropout instead. Note that {name} exists to provide channel-wise "
            f"dropout on inputs with {spatial} spatial dimensions, a channel dimension, and an "
            f"optional batch dimension (i.e. {ranks[0]}D or {ranks[1]}D inputs).", stacklevel=3)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zeroes whole channels of ``(N, C, H, W)`` input with probability ``p``. A 3-D input
    is read as ``(N, C, L)`` with PyTorch's warning (channel-wise 1-D dropout); other ranks
    warn that the use is deprecated."""
    _check_p(p)
    _warn_rank("dropout2d", (3, 4), 2, input.dim())
    if input.dim() == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _dropout(input, p, training, inplace, feature=True, alpha=False)


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zeroes whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input with
    probability ``p``; other ranks warn that the use is deprecated."""
    _check_p(p)
    _warn_rank("dropout3d", (4, 5), 3, input.dim())
    return _channel_dropout(input, p, training, inplace, unbatched=input.dim() != 5)


def _check_tensor(name: str, input) -> None:
    if not isinstance(input, et.Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Dropout for SELU networks: dropped elements take SELU's negative saturation value and
    an affine map keeps the input's mean and variance. The identity unless ``training``."""
    _check_p(p)
    _check_nan_p(p)
    _check_tensor("alpha_dropout", input)
    return _dropout(input, p, training, inplace, feature=False, alpha=True)


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False,
                          inplace: bool = False):
    """``alpha_dropout`` of whole channels (dim 1) of an input of at least 2 dims."""
    _check_p(p)
    _check_nan_p(p)
    _check_tensor("feature_alpha_dropout", input)
    return _dropout(input, p, training, inplace, feature=True, alpha=True)


def _rrelu_slopes(name: str, input, lower: float, upper: float, training: bool):
    _bool_arg(name, "training", training)
    for bound, value in (("lower", lower), ("upper", upper)):
        if not math.isfinite(value):
            raise RuntimeError(f"rrelu: {bound} bound must be finite, got {value}")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return (lower + upper) / 2
    slopes = et.empty_like(input).uniform_(lower, upper)
    return et.where(et.le(input, 0), slopes, et.ones_like(input))


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False):
    """Randomized leaky ReLU: negative elements are multiplied by a slope drawn uniformly
    from ``[lower, upper]`` per element in training, by ``(lower + upper) / 2`` otherwise."""
    slopes = _rrelu_slopes("rrelu_" if inplace else "rrelu", input, lower, upper, training)
    if not training:  # a leaky ReLU of the mean slope
        return input.leaky_relu_(slopes) if inplace else et.leaky_relu(input, slopes)
    return input.mul_(slopes) if inplace else input * slopes


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False):
    """In-place ``rrelu``."""
    return rrelu(input, lower, upper, training, inplace=True)


def gumbel_softmax(logits, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1):
    """A sample of the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with
    ``g`` standard Gumbel noise. ``hard=True`` returns one-hot vectors whose gradient is the
    soft sample's (straight-through). ``eps`` is deprecated and unused, as in PyTorch."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    floating = logits.is_floating_point()
    if not floating and logits.numel():
        raise RuntimeError("Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {logits.dtype}")
    uniform = et.empty(logits.shape, dtype=logits.dtype if floating else et.float32,
                       device=logits.device).uniform_(0, 1)
    gumbels = -et.log(-et.log1p(-uniform))  # -log(Exponential(1))
    if isinstance(tau, int) and not isinstance(tau, bool):
        tau = float(tau)  # a Python int of any size divides a float tensor, as in PyTorch
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = et.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
