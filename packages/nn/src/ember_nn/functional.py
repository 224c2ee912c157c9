"""``ember.nn.functional``: the stateless operations behind the layers.

Same names, signatures, defaults, errors and warnings as ``torch.nn.functional``. The
activations and ``binary_cross_entropy`` are ops of the tensor core (``ember_tensor.elu``,
``ember_tensor.hardtanh``, ..., its composite layer: ops.yaml ``composite: python``); this
module adds what its API has on top of them: the ``inplace=`` flag (the ops' in-place
variants), argument checks (``hardtanh``'s bounds, the floating-point dtype check with
PyTorch's NotImplementedError), the losses' target-size checks and reduction names. Their
gradients are PyTorch's everywhere, kinks included (``hardtanh`` passes no gradient at its
bounds, ``softplus`` and the log-sigmoid terms never overflow or produce NaN gradients,
``binary_cross_entropy`` has PyTorch's clamped derivative at 0 and 1).
"""

from __future__ import annotations

import warnings

import ember_tensor as et

from . import _reduction

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "bilinear",
    "celu",
    "celu_",
    "conv_tbc",
    "cosine_embedding_loss",
    "elu",
    "elu_",
    "gelu",
    "glu",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "leaky_relu",
    "leaky_relu_",
    "linear",
    "log_softmax",
    "logsigmoid",
    "mish",
    "mse_loss",
    "normalize",
    "one_hot",
    "pad",
    "relu",
    "relu6",
    "relu_",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softmin",
    "softplus",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
]


def _dtype_name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _check_float(name: str, input) -> None:
    if not input.is_floating_point():
        raise NotImplementedError(
            f"{name}: not implemented for dtype {_dtype_name(input.dtype)} (expected a floating "
            "point tensor)"
        )


def _bool_arg(op: str, arg: str, value, position: int | None = None) -> bool:
    """A bool argument as PyTorch's parser takes it: True or False, else TypeError."""
    if not isinstance(value, bool):
        where = f" (position {position})" if position else ""
        raise TypeError(
            f"{op}(): argument '{arg}'{where} must be bool, not {type(value).__name__}")
    return value


def _tensor_args(op: str, *args) -> None:
    """Tensor-or-None arguments, given as ``(name, position, value)``, as PyTorch's parser
    takes them: anything else is its TypeError."""
    for arg, position, value in args:
        if value is not None and not isinstance(value, et.Tensor):
            raise TypeError(f"{op}(): argument '{arg}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")


def _float_arg(op: str, arg: str, value) -> float:
    """A float argument as PyTorch's parser takes it: a Python or NumPy number of any size (an
    int beyond int64 too), or a 0-d tensor that does not require grad; TypeError otherwise."""
    if isinstance(value, et.Tensor) and value.dim() == 0 and not value.requires_grad:
        return float(value.item())
    if isinstance(value, (int, float)) or (hasattr(type(value), "__float__")
                                           and not isinstance(value, (str, et.Tensor))):
        return float(value)
    raise TypeError(f"{op}(): argument '{arg}' must be float, not {type(value).__name__}")


def _in_input_dtype(loss, input):
    """loss as the kernels of PyTorch that write into ``empty_like(input)`` return it: in
    input's dtype, and their error when the loss's dtype cannot be cast to it (a float loss
    of an integer or bool input)."""
    if not et.can_cast(loss.dtype, input.dtype):
        raise RuntimeError(f"result type {loss.dtype._scalar_type_name} can't be cast to the "
                           f"desired output type {input.dtype._scalar_type_name}")
    return loss.to(input.dtype)


def _difference(name: str, input, target):
    """``input - target`` as the regression losses' kernels form it: in the dtype input and
    target promote to (a bool operand is a number there, not the `-` operator's error).
    PyTorch has no integer or bool kernel for these losses (NotImplementedError), so neither
    does Ember."""
    # broadcast first, as PyTorch's losses do: a 0-d target of a wider dtype then promotes
    # (l1_loss of uint8 input and an int64 0-d target is int64)
    if input.shape != target.shape:
        input, target = et.broadcast_tensors(input, target)
    dtype = et.result_type(input, target)
    if not dtype.is_floating_point:
        raise NotImplementedError(
            f"{name}: not implemented for dtype {_dtype_name(dtype)} (expected "
            "floating point input and target)"
        )
    if input.dtype == et.bool or target.dtype == et.bool:
        input, target = input.to(dtype), target.to(dtype)
    return input - target


# ----------------------------------------------------------------------------- linear


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``: input ``(*, in_features)``, weight ``(out_features,
    in_features)`` (or ``(in_features,)``), bias ``(out_features,)`` or ``()``."""
    return et.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``."""
    if input1.dim() != input2.dim():
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}"
        )
    for d in range(input1.dim() - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {d}: got "
                f"{input1.shape[d]} and {input2.shape[d]}"
            )
    if weight.dim() != 3:
        raise RuntimeError(
            f"bilinear(): weight must be 3-dimensional (out, in1, in2), got {weight.dim()} "
            "dimensions"
        )
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            "bilinear(): input1 size does not match weight size: got "
            f"{input1.shape[-1]} but expected {weight.shape[1]}"
        )
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(
            "bilinear(): input2 size does not match weight size: got "
            f"{input2.shape[-1]} but expected {weight.shape[2]}"
        )
    if bias is not None and bias.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if bias is not None and bias.shape[0] != weight.shape[0]:  # PyTorch checks dim 0 only,
        raise RuntimeError(  # then broadcasts the sum
            f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but "
            f"expected {weight.shape[0]}"
        )
    # (..., 1, 1, in1) @ (out, in1, in2) -> (..., out, 1, in2)
    left = input1.unsqueeze(-2).unsqueeze(-3).matmul(weight).squeeze(-2)
    prod = left * input2.unsqueeze(-2)
    out = prod.sum(-1, dtype=prod.dtype)  # integers stay in their dtype, as PyTorch's
    if bias is not None:
        out = out + bias
    return out


# ----------------------------------------------------------------------------- activations


def relu(input, inplace: bool = False):
    """``max(input, 0)``."""
    return input.relu_() if inplace else et.relu(input)


def relu_(input):
    """In-place ``relu``."""
    return input.relu_()


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    """``input`` where positive, ``negative_slope * input`` elsewhere."""
    _check_float("leaky_relu", input)
    if inplace:
        return input.leaky_relu_(negative_slope)
    return et.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope: float = 0.01):
    """In-place ``leaky_relu``."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input, alpha: float = 1.0, inplace: bool = False):
    """``input`` where positive, ``alpha * (exp(input) - 1)`` elsewhere."""
    _check_float("elu", input)
    return input.elu_(alpha) if inplace else et.elu(input, alpha)


def elu_(input, alpha: float = 1.0):
    """In-place ``elu``."""
    return elu(input, alpha, inplace=True)


def selu(input, inplace: bool = False):
    """``scale * elu(input, alpha)`` with the self-normalising constants (Klambauer et
    al. 2017)."""
    _check_float("selu", input)
    return input.selu_() if inplace else et.selu(input)


def celu(input, alpha: float = 1.0, inplace: bool = False):
    """``input`` where positive, ``alpha * (exp(input / alpha) - 1)`` elsewhere."""
    _check_float("celu", input)
    return input.celu_(alpha) if inplace else et.celu(input, alpha)


def threshold(input, threshold: float, value: float, inplace: bool = False):
    """``input`` where it is greater than ``threshold``, ``value`` elsewhere."""
    if inplace:
        return input.threshold_(threshold, value)
    return et.threshold(input, threshold, value)


def threshold_(input, threshold: float, value: float):
    """In-place ``threshold``."""
    return input.threshold_(threshold, value)


def selu_(input):
    """In-place ``selu``."""
    return selu(input, inplace=True)


def celu_(input, alpha: float = 1.0):
    """In-place ``celu``."""
    return celu(input, alpha, inplace=True)


def glu(input, dim: int = -1):
    """Gated linear unit: ``a * sigmoid(b)`` for the two halves ``a, b`` of ``dim``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return et.glu(input, dim)


def hardsigmoid(input, inplace: bool = False):
    """``relu6(input + 3) / 6``; no gradient at or beyond -3 and 3."""
    _check_float("hardsigmoid", input)
    return input.hardsigmoid_() if inplace else et.hardsigmoid(input)


def hardswish(input, inplace: bool = False):
    """``input * relu6(input + 3) / 6`` (MobileNetV3)."""
    _check_float("hardswish", input)
    return input.hardswish_() if inplace else et.hardswish(input)


def mish(input, inplace: bool = False):
    """``input * tanh(softplus(input))``."""
    _check_float("mish", input)
    return input.mish_() if inplace else et.mish(input)


def softsign(input):
    """``input / (1 + |input|)``."""
    return et.softsign(input)


def tanhshrink(input):
    """``input - tanh(input)``."""
    return et.tanhshrink(input)


def gelu(input, approximate: str = "none"):
    """``input * Phi(input)`` (Phi: the standard normal CDF); ``approximate='tanh'`` uses
    ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))``."""
    _check_float("gelu", input)
    return et.gelu(input, approximate=approximate)


def silu(input, inplace: bool = False):
    """``input * sigmoid(input)`` (also called swish)."""
    _check_float("silu", input)
    return input.silu_() if inplace else et.silu(input)


def sigmoid(input):
    """``1 / (1 + exp(-input))``."""
    return et.sigmoid(input)


def tanh(input):
    """Hyperbolic tangent."""
    return et.tanh(input)


def softplus(input, beta: float = 1.0, threshold: float = 20.0):
    """``log(1 + exp(beta * input)) / beta``, and ``input`` itself where ``beta * input >
    threshold``."""
    _check_float("softplus", input)
    return et.softplus(input, beta, threshold)


def logsigmoid(input):
    """``log(sigmoid(input))``, computed without overflow."""
    _check_float("log_sigmoid", input)
    return et.log_sigmoid(input)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
    """``input`` clamped to ``[min_val, max_val]``; no gradient reaches the input at or
    beyond the bounds."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return input.hardtanh_(min_val, max_val) if inplace else et.hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0):
    """In-place ``hardtanh`` (PyTorch's ``hardtanh_`` leaves min_val > max_val unchecked: every
    element becomes max_val)."""
    return input.hardtanh_(min_val, max_val)


def relu6(input, inplace: bool = False):
    """``min(max(input, 0), 6)``."""
    return input.relu6_() if inplace else et.relu6(input)


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to "
        "include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """``exp(input) / exp(input).sum(dim)``, computed stably (in ``dtype`` if given)."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return et.softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel: int = 3, dtype=None):
    """``softmax(-input)``."""
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return et.softmax(-input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel: int = 3, dtype=None):
    """``log(softmax(input))``, computed stably."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return et.log_softmax(input, dim, dtype=dtype)


# ----------------------------------------------------------------------------- losses


_REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}  # the ops' reduction argument


def _warn_size(input, target) -> None:
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def _weighted(loss, weight, input, reduction: str, mean_by_weight: bool):
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    raise ValueError(
        f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'."
    )


def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
             weight=None):
    """Mean squared error ``(input - target)**2``, reduced; with ``weight``, the weighted
    sum divided by ``weight.sum()`` for ``'mean'``."""
    _warn_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    if weight is not None:  # PyTorch's weighted path is plain arithmetic: integers too
        loss = (input - target).square()
        return _weighted(loss, weight, input, reduction, mean_by_weight=True)
    loss = _difference("mse_loss", input, target).square()
    return _reduction.reduce(loss, _reduction.check(reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
            weight=None):
    """Mean absolute error ``|input - target|``, reduced; with ``weight`` as in
    ``mse_loss``."""
    _warn_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    a, b = et.broadcast_tensors(input, target) if input.shape != target.shape else (input, target)
    loss = (a - b).abs()  # (broadcast first: a 0-d target of a wider dtype promotes)
    if weight is not None:
        return _weighted(loss, weight, input, reduction, mean_by_weight=True)
    return _reduction.reduce(loss, _reduction.check(reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0):
    """``0.5 * d**2 / beta`` where ``|d| < beta``, ``|d| - 0.5 * beta`` elsewhere
    (``d = input - target``); ``beta=0`` is ``l1_loss``."""
    _warn_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    reduction = _reduction.check(reduction)
    if beta == 0:  # PyTorch's l1_loss then, which takes integers too
        a, b = et.broadcast_tensors(input, target) if input.shape != target.shape else (
            input, target)
        return _reduction.reduce((a - b).abs(), reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = _difference("smooth_l1_loss", input, target)
    ad = d.abs()
    loss = et.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta)
    return _reduction.reduce(loss, reduction)


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None):
    """``0.5 * d**2`` where ``|d| < delta``, ``delta * (|d| - 0.5 * delta)`` elsewhere;
    with ``weight``, the weighted losses reduced (``'mean'`` is their plain mean)."""
    _warn_size(input, target)
    delta = _float_arg("huber_loss", "delta", delta)
    if weight is None:
        reduction = _reduction.check(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = _difference("huber_loss", input, target)
    ad = d.abs()
    # float16 input, float32 target: a float16 loss
    loss = _in_input_dtype(et.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta)), input)
    if weight is not None:
        return _weighted(loss, weight, input, reduction, mean_by_weight=False)
    return _reduction.reduce(loss, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction: str = "mean"):
    """``-w * (t * log(x) + (1 - t) * log(1 - x))`` for probabilities ``x`` and targets
    ``t`` in [0, 1], each log clamped at -100; ``weight`` broadcasts to the target."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        weight = weight.expand(et.broadcast_shapes(target.shape, weight.shape))
    return et.binary_cross_entropy(input, target, weight, _REDUCTION_ENUM[reduction])


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction: str = "mean", pos_weight=None):
    """``binary_cross_entropy(sigmoid(input), target)`` computed stably from the logits;
    ``pos_weight`` weighs the positive term (broadcast along the last dimension)."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    if input.is_floating_point() and not (target.is_floating_point() or target.is_complex()):
        # PyTorch forms (1 - target) in target's dtype and multiplies input into it in place
        if target.dtype == et.bool:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. Use the `^` or `logical_xor()` operator instead.")
        raise RuntimeError(f"result type {et.result_type(input, target)._scalar_type_name} can't "
                           f"be cast to the desired output type {target.dtype._scalar_type_name}")
    # in input's dtype, as PyTorch's (a float16 input rounds it; an integer one is refused)
    neg_log_sigmoid = -et.log_sigmoid(input)
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * input + log_weight * neg_log_sigmoid
    else:
        loss = (1 - target) * input + neg_log_sigmoid
    if weight is not None:
        loss = loss * weight
    return _reduction.reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False):
    """Kullback-Leibler divergence pointwise ``target * (log(target) - input)`` for
    log-probabilities ``input`` (``log_target``: the target is given as log-probabilities
    too); ``reduction='batchmean'`` divides the sum by the batch size (the mathematical
    KL divergence), ``'mean'`` by the number of elements (with a warning, as PyTorch)."""
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the "
                "support size.'batchmean' divides only by the batch size, and aligns with the "
                "KL div math definition.'mean' will be changed to behave the same as "
                "'batchmean' in the next major release.",
                stacklevel=2,
            )
        if reduction != "batchmean":
            reduction = _reduction.check(reduction)
    if log_target:
        loss = et.exp(target) * (target - input)
    else:
        safe = et.where(target == 0, 1, target)
        loss = target * et.log(safe) - target * input  # xlogy(t, t) - t * x
    if reduction == "batchmean":
        out = loss.sum()
        return out / input.shape[0] if input.dim() != 0 else out
    return _reduction.reduce(loss, reduction)


def _shape_list(t) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def cosine_embedding_loss(input1, input2, target, margin: float = 0, size_average=None,
                          reduce=None, reduction: str = "mean"):
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1`` (cosine over the last dimension of 2-d inputs, or of 1-d inputs with a
    0-d target)."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    margin = _float_arg("cosine_embedding_loss", "margin", margin)
    if target.dim() not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.dim() == 1 and (input1.dim() != 2 or input2.dim() != 2):
        raise RuntimeError(
            "1D target tensor expects 2D input tensors, but found inputs with sizes "
            f"{_shape_list(input1)} and {_shape_list(input2)}."
        )
    if target.dim() == 0 and (input1.dim() != 1 or input2.dim() != 1):
        raise RuntimeError(
            "0D target tensor expects 1D input tensors, but found inputs with sizes "
            f"{_shape_list(input1)} and {_shape_list(input2)}."
        )
    dim = target.dim()  # 1 for batches, 0 for single vectors
    eps = 1e-12
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = prod / (mag1 * mag2).sqrt()
    pos = 1 - cos
    neg = (cos - margin).clamp(min=0)
    loss = et.where(target == 1, pos, 0) + et.where(target == -1, neg, 0)
    return _reduction.reduce(loss, reduction)


# ----------------------------------------------------------------------------- utilities


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``."""
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    if out is None:
        return input / denom
    return et.div(input, denom, out=out)


def one_hot(tensor, num_classes: int = -1):
    """int64 tensor of shape ``(*tensor.shape, num_classes)`` with a 1 at each index of
    ``tensor`` (an int64 tensor of class indices); ``num_classes=-1`` takes ``max + 1``."""
    if tensor.dtype != et.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return et.zeros((*tensor.shape, num_classes), dtype=et.int64, device=tensor.device)
    if bool((tensor < 0).any()):
        raise RuntimeError("Class values must be non-negative.")
    largest = int(tensor.max().item())
    if num_classes == -1:
        num_classes = largest + 1
    elif largest >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = et.arange(num_classes, dtype=et.int64, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()


_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_index(mode: str, size: int, left: int, right: int, dim: int, shape, device):
    """The source index of every output position of one padded dimension (an int64 tensor on
    ``device``, computed with tensor ops: a huge padding is one failed allocation, not a
    Python loop)."""
    n = size + left + right
    if mode == "reflect" and (left >= size or right >= size):
        raise RuntimeError(
            "Argument #4: Padding size should be less than the corresponding input "
            f"dimension, but got: padding ({left}, {right}) at dimension {dim} of input "
            f"{list(shape)}"
        )
    if mode == "circular" and (left > size or right > size):
        raise RuntimeError("Padding value causes wrapping around more than once.")
    j = et.arange(n, dtype=et.int64, device=device)
    if mode == "reflect":
        return (size - 1) - ((size - 1) - (j - left).abs()).abs()
    if mode == "replicate":
        return (j - left).clamp(0, size - 1)
    # circular: negative amounts crop first, the rest wraps around what is left
    start = max(-left, 0)
    kept = size - start - max(-right, 0)
    return start + (j - max(left, 0)).remainder(kept)


def pad(input, pad, mode: str = "constant", value=None):
    """Pads (or, with negative amounts, crops) the last ``len(pad) // 2`` dimensions:
    ``pad = (left_last, right_last, left_second_last, right_second_last, ...)``. Modes:
    ``'constant'`` (with ``value``, default 0; any number of dimensions), ``'reflect'``,
    ``'replicate'`` and ``'circular'`` (the last 1 to 3 dimensions of a batched or unbatched
    input, as PyTorch)."""
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension "
            f"but got padding length {len(pad)} and input of dimension {input.dim()}"
        )
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    n = len(pad) // 2
    if mode != "constant":
        if value is not None and value != 0:
            raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
        if n not in (1, 2, 3) or input.dim() not in (n + 1, n + 2):
            raise NotImplementedError(
                f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
                "Supported combinations for non-constant padding:\n"
                "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
            )
        # reflect and replicate read an edge: every dim but the batch's must have one
        first = 1 if input.dim() == n + 2 else 0
        if mode in ("reflect", "replicate") and 0 in tuple(input.shape)[first:]:
            raise RuntimeError(
                f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with possibly 0 batch size and "
                f"other non-zero dimensions for input, but got: {list(input.shape)}"
            )
    out = input
    shape = tuple(input.shape)
    for k in range(n):
        dim = input.dim() - 1 - k
        left, right = pad[2 * k], pad[2 * k + 1]
        if left == 0 and right == 0:
            continue
        size = out.shape[dim]
        if size + left + right < 0:
            raise RuntimeError(
                f"pad: the padded size of dimension {dim} would be negative: {size} with "
                f"padding ({left}, {right})"
            )
        if mode != "constant":
            index = _pad_index(mode, size, left, right, dim, shape, input.device)
            out = out.index_select(dim, index)
            continue
        if left < 0 or right < 0:  # negative padding crops
            start = max(-left, 0)
            out = out.narrow(dim, start, size - start - max(-right, 0))
        pieces = []
        fill = 0 if value is None else value
        for amount in (left, right):
            piece_shape = list(out.shape)
            piece_shape[dim] = max(amount, 0)
            pieces.append(et.full(piece_shape, fill, dtype=out.dtype, device=out.device))
        out = et.cat([pieces[0], out, pieces[1]], dim)
    return out


# ----------------------------------------------------------------------------- convolution,
# fold/unfold and interpolation (in _functional_conv.py)

from . import _functional_conv  # noqa: E402
from ._functional_conv import *  # noqa: E402, F403

__all__ += _functional_conv.__all__


# ----------------------------------------------------------------------------- attention
# (in _functional_attention.py)

from ._functional_attention import (  # noqa: E402
    multi_head_attention_forward,
    scaled_dot_product_attention,
)

__all__ += ["multi_head_attention_forward", "scaled_dot_product_attention"]


# ----------------------------------------------------------------------------- pooling,
# normalization, embedding, nll_loss/cross_entropy (in _functional_pooling.py,
# _functional_norm.py, _functional_sparse.py, _functional_loss.py)

from . import _functional_pooling  # noqa: E402
from ._functional_ctc import ctc_loss  # noqa: E402
from ._functional_grid import affine_grid, grid_sample  # noqa: E402
from ._functional_loss import cross_entropy, nll_loss  # noqa: E402
from ._functional_norm import batch_norm, group_norm, instance_norm, layer_norm  # noqa: E402
from ._functional_pooling import *  # noqa: E402, F403
from ._functional_sparse import embedding, embedding_bag  # noqa: E402

__all__ += _functional_pooling.__all__
__all__ += [
    "affine_grid",
    "grid_sample",
    "batch_norm",
    "cross_entropy",
    "ctc_loss",
    "embedding",
    "embedding_bag",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "nll_loss",
]


# ----------------------------------------------------------------------------- shrinkage,
# distances, shuffles, RMS/LRN normalization and more losses (in _functional_more.py)

from . import _functional_more  # noqa: E402
from ._functional_more import *  # noqa: E402, F403

__all__ += _functional_more.__all__



# ----------------------------------------------------------------------------- dropout (also
# channel-wise and alpha), rrelu, gumbel_softmax (in _functional_random.py)

from . import _functional_random  # noqa: E402
from ._functional_random import *  # noqa: E402, F403

__all__ += _functional_random.__all__
__all__ += ["native_channel_shuffle"]

native_channel_shuffle = channel_shuffle  # noqa: F405  (PyTorch's name of the same op)


def conv_tbc(input, weight, bias, pad: int = 0):
    """1-D convolution in time-batch-channel layout: input ``(T, N, C_in)``, weight ``(k,
    C_in, C_out)``, bias ``(C_out,)``, ``pad`` zeros on both ends of time; gives ``(T + 2 pad
    - k + 1, N, C_out)``."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias,  # noqa: F405
                 padding=pad)
    return out.permute(2, 0, 1)
