"""More of ``ember.nn.functional``, composed of core ops (differentiable, device-generic):
shrinkage activations and PReLU, distances and similarities, pixel and channel shuffles,
RMS and local response normalization, and the margin, hinge, Poisson, Gaussian and
multi-label losses, with PyTorch's arguments, defaults, reductions and errors."""

from __future__ import annotations

import math

import ember_tensor as et

from . import _reduction
from .functional import _bool_arg, _check_float, _float_arg, _in_input_dtype, _tensor_args

__all__ = [
    "channel_shuffle",
    "cosine_similarity",
    "gaussian_nll_loss",
    "hardshrink",
    "hinge_embedding_loss",
    "local_response_norm",
    "margin_ranking_loss",
    "linear_cross_entropy",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "pairwise_distance",
    "pdist",
    "pixel_shuffle",
    "pixel_unshuffle",
    "poisson_nll_loss",
    "prelu",
    "rms_norm",
    "soft_margin_loss",
    "softshrink",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]


# --------------------------------------------------------------------- activations


def _lambd(op: str, value) -> float:
    """``lambd`` as PyTorch's parser reads a Scalar: a bool is 0 or 1, an int must fit
    int64."""
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        raise OverflowError("int too big to convert")
    return _float_arg(op, "lambd", value)


def hardshrink(input, lambd: float = 0.5):
    """0 where -lambd <= input <= lambd, else input (NaN stays NaN)."""
    lambd = _lambd("hardshrink", lambd)
    _check_float("hardshrink", input)  # PyTorch has no integer kernel (a float lambd promotes)
    inside = et.logical_and(et.ge(input, -lambd), et.le(input, lambd))
    return et.where(inside, et.zeros_like(input), input)


def softshrink(input, lambd: float = 0.5):
    """input - lambd above lambd, input + lambd below -lambd, else 0."""
    lambd = _lambd("softshrink", lambd)
    _check_float("softshrink", input)
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return et.where(et.gt(input, lambd), input - lambd,
                    et.where(et.lt(input, -lambd), input + lambd, input * 0))  # NaN stays


def prelu(input, weight):
    """max(0, x) + weight * min(0, x), weight one value or one per channel (dim 1)."""
    if weight.dtype != input.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{input.dtype._scalar_type_name} and {weight.dtype._scalar_type_name}")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    if weight.numel() != 1 and (input.dim() < 2 or weight.numel() != input.shape[1]):
        raise RuntimeError(
            f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
            f"{weight.numel()} and channel size = {input.shape[1] if input.dim() > 1 else 1}.")
    w = weight.reshape(()) if weight.numel() == 1 else weight
    if weight.numel() != 1:
        w = weight.reshape([-1] + [1] * (input.dim() - 2))
    return et.where(et.gt(input, 0), input, w * input)


# --------------------------------------------------------------------- distances


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along dim (broadcast): each vector
    normalized first, as PyTorch computes it."""
    eps = _float_arg("cosine_similarity", "eps", eps)
    if eps < 0:
        raise RuntimeError(f"eps must be non-negative, got: {eps:g}")
    common = et.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{common._scalar_type_name}")
    # an integer or bool operand in the common dtype; a float one keeps its own, as PyTorch
    # normalizes it (a float16 x1 beside a float64 x2 is divided by its norm in float16)
    x1, x2 = (x if x.is_floating_point() else x.to(common) for x in (x1, x2))
    x1, x2 = et.broadcast_tensors(x1, x2)
    n1 = et.clamp(et.linalg.vector_norm(x1, 2, dim, True), min=eps)
    n2 = et.clamp(et.linalg.vector_norm(x2, 2, dim, True), min=eps)
    return et.sum((x1 / n1) * (x2 / n2), (dim,))


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """||x1 - x2 + eps||_p over the last dim."""
    p = _float_arg("pairwise_distance", "p", p)
    eps = _float_arg("pairwise_distance", "eps", eps)
    nd = max(x1.dim(), x2.dim())
    dim = -1 if nd else 0
    diff = x1 - x2 + float(eps)  # a float: integer inputs give a float distance
    if diff.dim() == 0:
        return et.linalg.vector_norm(diff.reshape(1), p, 0, keepdim).reshape(())
    return et.linalg.vector_norm(diff, p, dim, keepdim)


def pdist(input, p: float = 2.0):
    """The p-norm distances between the rows of an (N, M) input, the upper triangle in
    row-major order: N (N - 1) / 2 values."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if input.dtype == et.float16:  # PyTorch's CPU kernel has no float16
        raise NotImplementedError(f'"pdist" not implemented for '
                                  f"'{input.dtype._scalar_type_name}'")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    if n < 2:  # empty, hanging from input in the graph as PyTorch's
        return input.reshape(-1)[:0]
    i, j = et.triu_indices(n, n, 1, device=input.device)
    return et.linalg.vector_norm(input.index_select(0, i) - input.index_select(0, j), p, -1)


# --------------------------------------------------------------------- shuffles


def _shuffle_factor(op: str, input, r: int, name: str) -> int:
    if input.dim() < 3:
        raise RuntimeError(f"{op} expects input to have at least 3 dimensions, but got input "
                           f"with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{op} expects a positive {name}, but got {r}")
    return r


def pixel_shuffle(input, upscale_factor: int):
    """(*, C r², H, W) -> (*, C, H r, W r)."""
    r = _shuffle_factor("pixel_shuffle", input, upscale_factor, "upscale_factor")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    nb = len(batch)
    x = x.permute(*range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor: int):
    """(*, C, H r, W r) -> (*, C r², H, W)."""
    r = _shuffle_factor("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    *batch, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by "
                           f"downscale_factor, but got {h} and {w} for {r}")
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    nb = len(batch)
    x = x.permute(*range(nb), nb, nb + 2, nb + 4, nb + 1, nb + 3)
    return x.reshape(*batch, c * r * r, h // r, w // r)


def channel_shuffle(input, groups: int):
    """(N, C, *) with C = g k -> channels reordered as (k, g) (ShuffleNet)."""
    if input.dim() < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


# --------------------------------------------------------------------- normalization


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """input / sqrt(mean(input², over the last len(normalized_shape) dims) + eps) * weight;
    eps defaults to the dtype's machine epsilon."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    _tensor_args("rms_norm", ("weight", 3, weight))
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(shape)}")
    if tuple(input.shape[input.dim() - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    if eps is None:
        eps = {et.float16: 0.0009765625, et.bfloat16: 0.0078125,
               et.float64: 2.220446049250313e-16}.get(input.dtype, 1.1920928955078125e-07)
    dims = tuple(range(input.dim() - len(shape), input.dim()))
    x = input.float() if input.dtype in (et.float16, et.bfloat16) else input
    r = x * et.rsqrt(et.mean(x * x, dims, True) + eps)
    r = r.to(input.dtype)
    return r * weight if weight is not None else r


def local_response_norm(input, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0):
    """input / (k + alpha / size * sum of squares over ``size`` neighbouring channels)**beta."""
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    if isinstance(size, bool):  # PyTorch pools with kernel (size, 1[, 1]): a bool is refused
        raise TypeError(f"avg_pool{2 if input.dim() == 3 else 3}d(): argument 'kernel_size' "
                        "(position 2) must be tuple of ints, but found element of type bool at "
                        "pos 0")
    sq = (input * input).unsqueeze(1)  # (N, 1, C, *)
    pad_lo, pad_hi = size // 2, (size - 1) // 2
    zeros = lambda n: et.zeros(*sq.shape[:2], n, *sq.shape[3:], dtype=sq.dtype,  # noqa: E731
                               device=sq.device)
    padded = et.cat([zeros(pad_lo), sq, zeros(pad_hi)], 2)
    c = input.shape[1]
    win = sum(padded.narrow(2, i, c) for i in range(size)).squeeze(1)  # channel window sums
    if input.is_floating_point() or input.is_complex():
        mean = win / size
    else:  # PyTorch's average pooling of integers truncates
        mean = et.div(win, size, rounding_mode="trunc")
    div = (mean * alpha + k) ** beta
    return input / div


# --------------------------------------------------------------------- losses


def margin_ranking_loss(input1, input2, target, margin: float = 0, size_average=None,
                        reduce=None, reduction: str = "mean"):
    """max(0, -target * (input1 - input2) + margin), reduced."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {list(input1.shape)}, input2: "
                           f"{list(input2.shape)}, target: {list(target.shape)} ")
    margin = _float_arg("margin_ranking_loss", "margin", margin)
    loss = et.clamp(-target * (input1 - input2) + margin, min=0)
    return _reduction.reduce(loss, reduction)


def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean"):
    """input where target == 1, max(0, margin - input) where target == -1, reduced."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    margin = _float_arg("hinge_embedding_loss", "margin", margin)
    zeros = et.zeros_like(input)
    margin_clamp = et.clamp(margin - input, min=0)
    loss = et.where(et.ne(target, 1), margin_clamp, zeros) + et.where(et.ne(target, -1),
                                                                      input, zeros)
    return _reduction.reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """log(1 + exp(-target * input)), reduced; of the input's dtype (as PyTorch's kernel
    writes it: an integer input is its error)."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    loss = et.log1p(et.exp(-input * target))  # PyTorch's order: -input refuses a bool input
    if loss.shape != input.shape:  # PyTorch writes into a tensor of input's shape
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast "
                           f"shape {list(loss.shape)}")
    return _reduction.reduce(_in_input_dtype(loss, input), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean"):
    """-(target log sigmoid(x) + (1 - target) log sigmoid(-x)), averaged over classes, then
    reduced over the batch."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if input.dim() == 0:  # PyTorch averages over dim -1, which a 0-d input lacks
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    loss = -(target * et.log_sigmoid(input) + (1 - target) * et.log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    # summed over the classes and divided by input's class count, as PyTorch (a target that
    # broadcasts the class dim away sums to 0, not a mean of nothing)
    loss = et.sum(loss, (input.dim() - 1,)) / input.size(-1)
    return _reduction.reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean"):
    """exp(input) - target * input (log_input) or input - target * log(input + eps), plus
    Stirling's term for target > 1 with full, reduced."""
    _bool_arg("poisson_nll_loss", "log_input", log_input)
    _bool_arg("poisson_nll_loss", "full", full)
    eps = _float_arg("poisson_nll_loss", "eps", eps)
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if log_input:
        loss = et.exp(input) - target * input
    else:
        loss = input - target * et.log(input + eps)
    if full:
        stirling = target * et.log(target) - target + 0.5 * et.log(2 * math.pi * target)
        # added into the loss, whose dtype it takes (PyTorch adds in place)
        loss = loss + et.where(et.gt(target, 1), stirling, et.zeros_like(stirling)).to(
            loss.dtype)
    return _reduction.reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean"):
    """0.5 (log(max(var, eps)) + (input - target)² / max(var, eps)) (+ 0.5 log 2π with full),
    reduced; var may omit the last dim, or be 1 along one dim of the input's shape (a
    variance shared along that dim)."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = float(var) * et.ones_like(input)  # as PyTorch: float even for integer input
    elif bool(et.any(et.lt(var, 0)).item()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and sum(
                v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction != "none" and reduction not in ("mean", "sum"):
        raise ValueError(reduction + " is not valid")
    # clamped to eps without autograd seeing the clamp (PyTorch clamps in place under no_grad)
    v = var + (et.clamp(var, min=eps) - var).detach()
    loss = 0.5 * (et.log(v) + (input - target) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduction.reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with d the pairwise p-distance (and the swap of
    Balntas et al.), reduced."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    margin = _float_arg("triplet_margin_loss", "margin", margin)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    nd = anchor.dim()
    if positive.dim() != nd or negative.dim() != nd:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {nd}D, positive "
                           f"{positive.dim()}D, and negative {negative.dim()}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = et.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    loss = et.clamp(margin + d_pos - d_neg, min=0)
    return _reduction.reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean"):
    """``triplet_margin_loss`` with any ``distance_function(x1, x2)`` (default
    ``pairwise_distance``); ``margin`` must be positive."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.dim() == positive.dim() == negative.dim():
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {anchor.dim()}D, positive "
                           f"{positive.dim()}D, and negative {negative.dim()}D inputs")
    distance = distance_function if distance_function is not None else pairwise_distance
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = et.minimum(d_neg, distance(positive, negative))
    loss = et.clamp(margin + d_pos - d_neg, min=0)
    return _reduction.reduce(loss, reduction)


def multi_margin_loss(input, target, p: int = 1, margin: float = 1.0, weight=None,
                      size_average=None, reduce=None, reduction: str = "mean"):
    """sum over classes i != y of max(0, margin - x[y] + x[i])**p / C (weighted by
    weight[y]), reduced over the batch."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    margin = _float_arg("multi_margin_loss", "margin", margin)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    frames = input.shape[0] if input.dim() > 1 else 1
    if target.dim() > 1 or target.numel() != frames:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{frames}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}.")
    x = input if input.dim() > 1 else input.reshape(1, -1)
    t = target.reshape(-1)
    c = x.shape[-1]
    xy = et.gather(x, 1, t.unsqueeze(1))
    z = et.clamp(margin - xy + x, min=0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.index_select(0, t).unsqueeze(1)
    others = et.ne(et.arange(c, device=x.device).unsqueeze(0), t.unsqueeze(1))
    loss = et.sum(et.where(others, z, et.zeros_like(z)), (1,)) / c
    if input.dim() <= 1:
        loss = loss.reshape(()) if input.dim() == 1 else loss.reshape(())
    return _reduction.reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None,
                           reduction: str = "mean"):
    """sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i])) / C;
    ``target`` (int64, the shape of ``input``: ``(C,)`` or ``(N, C)``) lists each sample's
    classes, ended by the first -1."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    nd = input.dim()
    if not (nd == 0 or (nd in (1, 2) and input.shape[-1] != 0)):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")
    # one frame of C classes (a 0-d input: of 1) takes a target of C elements, 0-d or 1-d
    if (target.dim() > 1 or target.numel() != input.numel()) if nd < 2 else (
            tuple(target.shape) != tuple(input.shape)):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    if not input.is_floating_point():
        raise NotImplementedError('"multilabel_margin_loss_forward_out_frame" not implemented '
                                  f"for '{input.dtype._scalar_type_name}'")
    if target.dtype != et.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._scalar_type_name}")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    t = target.reshape(x.shape)
    c = x.shape[1]
    if t.numel() and bool(((t < -1) | (t >= c)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    listed = et.cumsum((t == -1).to(et.int64), 1) == 0  # the entries before the first -1
    classes = et.where(listed, t, et.zeros_like(t))
    is_target = et.zeros_like(t).scatter_add(1, classes, listed.to(et.int64)) > 0
    xy = et.gather(x, 1, classes)  # (N, slots): the score of each listed class
    hinge = et.clamp(1 - xy.unsqueeze(2) + x.unsqueeze(1), min=0)  # (N, slot, class)
    keep = listed.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = et.sum(et.where(keep, hinge, et.zeros_like(hinge)), (1, 2)) / c
    if input.dim() < 2:
        loss = loss.reshape(())
    return _reduction.reduce(loss, reduction)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction: str = "mean", ignore_index=None, label_smoothing: float = 0.0,
                         options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``: input ``(in,)``
    or ``(N, in)``, linear_weight ``(C, in)`` or ``(C, d_1, ..., d_K, in)`` (a K-dimensional
    loss, batched input only), ``ignore_index`` None meaning -100 (refused with probability
    targets). ``options`` (PyTorch's ``LinearCrossEntropyOptions``, for its batch-chunked
    path) is accepted and changes nothing: Ember computes the reference path."""
    from ._functional_loss import cross_entropy

    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions "
                           f"(in_features), got {in_features} and {linear_weight.shape[-1]}, "
                           "respectively")
    classes_shape = tuple(linear_weight.shape[:-1])  # (C, d_1, ..., d_K)
    if linear_bias is not None and tuple(linear_bias.shape) != classes_shape:
        raise RuntimeError(f"expected linear_bias shape {classes_shape}, got "
                           f"{tuple(linear_bias.shape)}")
    if len(classes_shape) > 1 and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, "
                           f"{in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits = et.matmul(input, linear_weight.reshape(-1, in_features).t())
    logits = logits.reshape(*batch, *classes_shape)
    if linear_bias is not None:
        logits = logits + linear_bias
    if tuple(target.shape) == tuple(logits.shape) and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    return cross_entropy(logits, target, weight=weight,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)
