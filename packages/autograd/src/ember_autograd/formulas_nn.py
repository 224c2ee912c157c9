"""Derivative helpers of the neural-network ops: pooling, normalization (batch, layer and
group norm), embedding, nll_loss, hardtanh and binary_cross_entropy, written with ember_tensor
ops so that derivatives of derivatives come from the same table.

The normalization ops return their statistics (mean and inverse standard deviation) as
outputs 1 and 2; the backward formulas take the gradients of all three outputs (``grads``)
and read the statistics as saved outputs, which the engine re-attaches to the node when a
graph of the backward pass is recorded: a gradient reaching a statistic in a second
derivative comes back to the same formulas as ``grads[1]``/``grads[2]``, so second
derivatives are exact without a double-backward formula of their own."""

from __future__ import annotations

import threading

import ember_tensor as et

from . import forward_ad, grad_mode

__all__ = [
    "batch_norm_backward",
    "binary_cross_entropy_dself",
    "binary_cross_entropy_dtarget",
    "binary_cross_entropy_grad",
    "binary_cross_entropy_loss",
    "binary_cross_entropy_reduce",
    "channel_sum",
    "batch_norm_jvp",
    "embedding_double_backward",
    "gelu_second_derivative",
    "group_norm_backward",
    "group_norm_jvp",
    "hardtanh_backward",
    "layer_norm_backward",
    "layer_norm_jvp",
    "leading_sum",
    "linear_input_backward",
    "linear_weight_backward",
    "nll_loss_backward",
    "take_at_indices",
]


# ----------------------------------------------------------------------------- linear


def linear_input_backward(grad, weight):
    """The input gradient of ``linear``: ``grad @ weight`` (``grad`` outer ``weight`` for a
    1-d weight), leading dims folded into one product."""
    if weight.dim() == 1:
        return grad.unsqueeze(-1) * weight
    out, n_in = weight.shape
    if grad.dim() == 2:
        return grad.mm(weight)
    return grad.reshape(-1, out).mm(weight).reshape(*grad.shape[:-1], n_in)


def linear_weight_backward(grad, input, weight):
    """The weight gradient of ``linear``: ``grad^T @ input`` over all leading dims, a fresh
    (out, in) tensor (so that it becomes ``.grad`` without a copy)."""
    n_in = input.shape[-1]
    if weight.dim() == 1:
        return (grad.unsqueeze(-1) * input).reshape(-1, n_in).sum(0)
    return grad.reshape(-1, weight.shape[0]).t().mm(input.reshape(-1, n_in))


# ----------------------------------------------------------------------------- pooling


def take_at_indices(values, indices):
    """``values`` (..., H, W) read at the flat per-plane ``indices`` (..., OH, OW) of a max
    pooling: the forward derivative of the pooling, and the derivative of its backward op."""
    flat = values.flatten(-2)
    return flat.gather(-1, indices.flatten(-2)).view(tuple(indices.shape))


# ----------------------------------------------------------------------------- normalization


def channel_sum(grad):
    """The bias gradient of batch_norm and group_norm: ``grad`` (N, C, *) summed to (C,)."""
    if grad is None:
        return None
    return grad.sum([0] + list(range(2, grad.dim())))


def leading_sum(grad, k: int):
    """The bias gradient of layer_norm: ``grad`` summed over all but its last ``k`` dims."""
    if grad is None:
        return None
    lead = list(range(grad.dim() - k))
    return grad.sum(lead) if lead else grad


def _numel(shape, dims) -> int:
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _normalize_backward(gy, x, mean, rstd, dims, g_mean, g_rstd):
    """The gradient with respect to ``x`` of ``xhat = (x - mean) * rstd`` whose statistics are
    taken over ``dims`` (biased variance), given ``gy`` (the gradient of xhat), and of the two
    statistics themselves given their gradients (None: zero); ``mean`` and ``rstd`` broadcast
    against ``x``."""
    count = _numel(x.shape, dims)
    xhat = (x - mean) * rstd
    gx = None
    if gy is not None:
        gx = rstd * (gy - gy.mean(dims, keepdim=True)
                     - xhat * (gy * xhat).mean(dims, keepdim=True))
    if g_mean is not None:
        term = g_mean / count
        gx = term.expand_as(x) if gx is None else gx + term
    if g_rstd is not None:
        term = -(g_rstd * rstd * rstd / count) * xhat
        gx = term if gx is None else gx + term
    return gx


def _normalize_jvp(x_t, x, mean, rstd, dims):
    """Tangents of (xhat, mean, rstd) for a tangent ``x_t`` of ``x`` (see _normalize_backward)."""
    xhat = (x - mean) * rstd
    mean_t = x_t.mean(dims, keepdim=True)
    rstd_t = -(rstd * rstd) * (xhat * x_t).mean(dims, keepdim=True)
    xhat_t = (x_t - mean_t) * rstd + (x - mean) * rstd_t
    return xhat_t, mean_t, rstd_t


# First derivatives through the core's fused backward kernels (two passes over the data)
# when the backward pass records no graph, no forward-mode level is open and the statistics
# got no gradient; the composed formulas otherwise. The input's formula runs first and leaves
# the weight's gradient here for the weight's formula of the same node (matched by the
# identity of that node's ``grads``).


class _Stash(threading.local):
    def __init__(self) -> None:
        self.item = None


_stash = _Stash()


def _fused(grads) -> bool:
    return (
        not grad_mode._state.enabled
        and forward_ad._levels == 0
        and grads[0] is not None
        and all(g is None for g in list(grads)[1:])
    )


def _fused_weight_grad(grads, weight, compute):
    """The weight gradient the input's formula left for this node, or ``compute()``."""
    item, _stash.item = _stash.item, None
    if item is not None and item[0] is grads:
        return item[1]
    return compute()


def _keep_weight_grad(grads, weight, gw) -> None:
    _stash.item = (grads, gw) if weight is not None and weight.requires_grad else None


def _bn_view(t, ndim: int):
    """A per-channel (C,) tensor as (1, C, 1, ...) against an (N, C, *) input."""
    return t.reshape([1, -1] + [1] * (ndim - 2))


def batch_norm_backward(grads, input, weight, running_mean, running_var, save_mean, save_invstd,
                        training: bool, eps: float, which: int):
    """native_batch_norm's gradient for input (which=0), weight (1) or bias (2)."""
    g, g_mean, g_invstd = (list(grads) + [None, None])[:3]
    nd = input.dim()
    dims = [0] + list(range(2, nd))
    if which == 2:
        return None if g is None else g.sum(dims)
    if _fused(grads):
        def fused():
            return et.native_batch_norm_backward(g, input, weight, running_mean, running_var,
                                                 save_mean, save_invstd, training, eps)
        if which == 1:
            return _fused_weight_grad(grads, weight, lambda: fused()[1])
        gi, gw, _ = fused()
        _keep_weight_grad(grads, weight, gw)
        return gi
    if training:
        mean, rstd = _bn_view(save_mean, nd), _bn_view(save_invstd, nd)
    else:
        mean = _bn_view(running_mean, nd)
        rstd = _bn_view((running_var + eps).rsqrt(), nd)
    if which == 1:
        return None if g is None else (g * ((input - mean) * rstd)).sum(dims)
    gy = None if g is None else (g if weight is None else g * _bn_view(weight, nd))
    if not training:
        return None if gy is None else gy * rstd
    return _normalize_backward(
        gy, input, mean, rstd, dims,
        None if g_mean is None else _bn_view(g_mean, nd),
        None if g_invstd is None else _bn_view(g_invstd, nd),
    )


def batch_norm_jvp(input_t, weight_t, bias_t, input, weight, running_mean, running_var,
                   save_mean, save_invstd, training: bool, eps: float):
    """Tangents of (output, save_mean, save_invstd) of native_batch_norm."""
    nd = input.dim()
    dims = [0] + list(range(2, nd))
    if training:
        mean, rstd = _bn_view(save_mean, nd), _bn_view(save_invstd, nd)
    else:
        mean = _bn_view(running_mean, nd)
        rstd = _bn_view((running_var + eps).rsqrt(), nd)
    xhat = (input - mean) * rstd
    mean_t = rstd_t = None
    out_t = None
    if input_t is not None:
        if training:
            xhat_t, mean_t, rstd_t = _normalize_jvp(input_t, input, mean, rstd, dims)
        else:
            xhat_t = input_t * rstd
        out_t = xhat_t if weight is None else xhat_t * _bn_view(weight, nd)
    if weight_t is not None:
        term = xhat * _bn_view(weight_t, nd)
        out_t = term if out_t is None else out_t + term
    if bias_t is not None:
        term = _bn_view(bias_t, nd).expand_as(input)
        out_t = term if out_t is None else out_t + term
    if mean_t is not None:
        mean_t, rstd_t = mean_t.reshape(-1), rstd_t.reshape(-1)
    return out_t, mean_t, rstd_t


def _ln_dims(input, normalized_shape):
    nd = input.dim()
    return list(range(nd - len(normalized_shape), nd))


def layer_norm_backward(grads, input, normalized_shape, weight, mean, rstd, which: int):
    """native_layer_norm's gradient for input (which=0), weight (1) or bias (2)."""
    g, g_mean, g_rstd = (list(grads) + [None, None])[:3]
    dims = _ln_dims(input, normalized_shape)
    outer = list(range(input.dim() - len(dims)))
    if which == 2:
        return None if g is None else (g.sum(outer) if outer else g)
    if _fused(grads):
        def fused():
            return et.native_layer_norm_backward(g, input, normalized_shape, mean, rstd, weight,
                                                 None)
        if which == 1:
            return _fused_weight_grad(grads, weight, lambda: fused()[1])
        gi, gw, _ = fused()
        _keep_weight_grad(grads, weight, gw)
        return gi
    if which == 1:
        if g is None:
            return None
        gw = g * ((input - mean) * rstd)
        return gw.sum(outer) if outer else gw
    gy = None if g is None else (g if weight is None else g * weight)
    return _normalize_backward(gy, input, mean, rstd, dims, g_mean, g_rstd)


def layer_norm_jvp(input_t, weight_t, bias_t, input, normalized_shape, weight, mean, rstd):
    """Tangents of (output, mean, rstd) of native_layer_norm."""
    dims = _ln_dims(input, normalized_shape)
    out_t = mean_t = rstd_t = None
    if input_t is not None:
        xhat_t, mean_t, rstd_t = _normalize_jvp(input_t, input, mean, rstd, dims)
        out_t = xhat_t if weight is None else xhat_t * weight
    if weight_t is not None:
        term = (input - mean) * rstd * weight_t
        out_t = term if out_t is None else out_t + term
    if bias_t is not None:
        term = bias_t.expand_as(input)
        out_t = term if out_t is None else out_t + term
    return out_t, mean_t, rstd_t


def _gn_channel(t, C: int, ndim: int):
    return t.reshape([1, C] + [1] * (ndim - 2))


def group_norm_backward(grads, input, weight, N: int, C: int, HxW: int, group: int,
                        mean, rstd, which: int):
    """native_group_norm's gradient for input (which=0), weight (1) or bias (2); the
    statistics are (N, group), taken over the C/group channels of a group and the HxW
    positions."""
    g, g_mean, g_rstd = (list(grads) + [None, None])[:3]
    nd = input.dim()
    dims = [0] + list(range(2, nd))
    if which == 2:
        return None if g is None else g.sum(dims)
    if _fused(grads):
        def fused():
            return et.native_group_norm_backward(g, input, mean, rstd, weight, N, C, HxW, group)
        if which == 1:
            return _fused_weight_grad(grads, weight, lambda: fused()[1])
        gi, gw, _ = fused()
        _keep_weight_grad(grads, weight, gw)
        return gi
    x = input.reshape(N, group, -1)
    m, r = mean.unsqueeze(-1), rstd.unsqueeze(-1)
    if which == 1:
        if g is None:
            return None
        xhat = ((x - m) * r).reshape(tuple(input.shape))
        return (g * xhat).sum(dims)
    gy = None
    if g is not None:
        gy = (g if weight is None else g * _gn_channel(weight, C, nd)).reshape(N, group, -1)
    gx = _normalize_backward(
        gy, x, m, r, [2],
        None if g_mean is None else g_mean.unsqueeze(-1),
        None if g_rstd is None else g_rstd.unsqueeze(-1),
    )
    return None if gx is None else gx.reshape(tuple(input.shape))


def group_norm_jvp(input_t, weight_t, bias_t, input, weight, N: int, C: int, HxW: int,
                   group: int, mean, rstd):
    """Tangents of (output, mean, rstd) of native_group_norm."""
    nd = input.dim()
    shape = tuple(input.shape)
    x = input.reshape(N, group, -1)
    m, r = mean.unsqueeze(-1), rstd.unsqueeze(-1)
    out_t = mean_t = rstd_t = None
    if input_t is not None:
        xhat_t, mean_t, rstd_t = _normalize_jvp(input_t.reshape(N, group, -1), x, m, r, [2])
        xhat_t = xhat_t.reshape(shape)
        out_t = xhat_t if weight is None else xhat_t * _gn_channel(weight, C, nd)
        mean_t, rstd_t = mean_t.squeeze(-1), rstd_t.squeeze(-1)
    if weight_t is not None:
        term = ((x - m) * r).reshape(shape) * _gn_channel(weight_t, C, nd)
        out_t = term if out_t is None else out_t + term
    if bias_t is not None:
        term = _gn_channel(bias_t, C, nd).expand_as(input)
        out_t = term if out_t is None else out_t + term
    return out_t, mean_t, rstd_t


# ----------------------------------------------------------------------------- embedding


def embedding_double_backward(grad, indices, padding_idx: int, scale_grad_by_freq: bool):
    """The derivative of embedding_dense_backward with respect to its grad_output: the rows of
    ``grad`` (num_weights, D) at ``indices``, zero where the index is padding_idx and divided
    by the index's count with scale_grad_by_freq."""
    rows = et.embedding(grad, indices)
    keep = None
    if padding_idx >= 0:
        keep = (indices != padding_idx).unsqueeze(-1)
    if scale_grad_by_freq:
        flat = indices.reshape(-1).long()
        counts = et.zeros(grad.shape[0], dtype=grad.dtype).index_add(
            0, flat, et.ones(flat.shape[0], dtype=grad.dtype))
        rows = rows / et.embedding(counts.unsqueeze(-1), indices)
    if keep is not None:
        rows = rows * keep
    return rows


# ----------------------------------------------------------------------------- nll_loss


def nll_loss_backward(grad, self_shape, target, weight, reduction: int, ignore_index: int):
    """``-w[t] * grad`` (divided by the total weight of the counted targets for 'mean'), written
    at each target's class along the class dimension; zero elsewhere and for ignored targets."""
    cdim = 0 if len(self_shape) == 1 else 1
    t = target.long()
    if len(self_shape) == 1:  # an unbatched input's target: 0-d, or of one element
        t = t.reshape(())
    valid = t != ignore_index
    t = et.where(valid, t, 0)
    if weight is not None:
        w = weight.index_select(0, t.reshape(-1)).view(tuple(t.shape))
        w = et.where(valid, w, 0)
    else:
        w = valid.to(grad.dtype)
    coef = -w * grad
    if reduction == 1:
        coef = coef / w.sum()
    coef = et.where(valid, coef, 0)
    out = grad.new_zeros(list(self_shape))
    if not coef.requires_grad:  # written in place: no copy of the zeros
        return out.scatter_(cdim, t.unsqueeze(cdim), coef.unsqueeze(cdim))
    return out.scatter(cdim, t.unsqueeze(cdim), coef.unsqueeze(cdim))


# ----------------------------------------------------------------------------- activations, BCE


def hardtanh_backward(grad, result, min_val, max_val):
    """PyTorch's gradient of hardtanh: ``grad`` where ``min_val < x < max_val``, zero at and
    beyond the bounds (a NaN passes ``grad``; PyTorch 2.13 gives 0 there). Read from the
    result, which is strictly inside exactly where the input is (so an in-place hardtanh keeps
    no copy of its input); two threshold_backward passes (a ``where`` over two comparisons is
    3.5x slower)."""
    inside_lo = et.threshold_backward(grad, result, min_val)
    return et.threshold_backward(inside_lo, -result, -max_val)


_INV_SQRT_2PI = 0.3989422804014327
_GELU_BETA = 0.7978845608028654  # sqrt(2 / pi)
_GELU_KAPPA = 0.044715


def gelu_second_derivative(self, approximate: str):
    """gelu''(self), in ops (so that it differentiates again): ``phi(x) (2 - x^2)`` for the
    exact gelu (phi: the standard normal density); for ``approximate='tanh'``, with
    ``u = beta (x + kappa x^3)`` and ``T = tanh(u)``, ``(1 - T^2) (u' + x (u'' - 2 T u'^2) / 2)``
    where ``u' = beta (1 + 3 kappa x^2)`` and ``u'' = 6 beta kappa x``."""
    x = self
    if approximate == "tanh":
        x2 = x * x
        t = et.tanh(_GELU_BETA * (x + _GELU_KAPPA * x2 * x))
        du = _GELU_BETA * (1 + 3 * _GELU_KAPPA * x2)
        d2u = (6 * _GELU_BETA * _GELU_KAPPA) * x
        return (1 - t * t) * (du + 0.5 * x * (d2u - 2 * t * du * du))
    return _INV_SQRT_2PI * et.exp(-0.5 * x * x) * (2 - x * x)


def _bce_shape(self, target, weight) -> tuple:
    shapes = [self.shape, target.shape] + ([] if weight is None else [weight.shape])
    return tuple(et.broadcast_shapes(*shapes))


def binary_cross_entropy_grad(grad, self, target, weight, reduction: int):
    """The gradient reaching each element of the (weighted) elementwise loss: ``grad``
    spread over the loss's elements for 'mean' (divided by their number) and 'sum', times
    the weight."""
    shape = _bce_shape(self, target, weight)
    if reduction == 1:
        n = 1
        for d in shape:
            n *= d
        grad = (grad / n).expand(shape)
    elif reduction == 2:
        grad = grad.expand(shape)
    return grad if weight is None else grad * weight


def binary_cross_entropy_loss(self, target):
    """The unweighted elementwise loss, each log clamped at -100 (the forward's formula)."""
    return (target - 1) * et.log1p(-self).clamp(min=-100) - target * et.log(self).clamp(min=-100)


# PyTorch's epsilon: 1e-12 as a float32, in every dtype
_BCE_EPSILON = 9.999999960041972e-13


def binary_cross_entropy_dself(grad, self, target):
    """PyTorch's derivative for the input: ``grad * (x - t) / max(x (1 - x), 1e-12)``, finite
    at 0 and 1."""
    return grad * (self - target) / ((1 - self) * self).clamp(min=_BCE_EPSILON)


def binary_cross_entropy_dtarget(grad, self):
    """The derivative for the target: ``grad * (log(1 - x) - log(x))``, each log clamped at
    -100 as in the loss (PyTorch leaves them unclamped: +-inf at 0 and 1)."""
    return grad * (et.log1p(-self).clamp(min=-100) - et.log(self).clamp(min=-100))


def binary_cross_entropy_reduce(loss_t, reduction: int):
    """The tangent of the elementwise loss reduced as the loss is."""
    if reduction == 1:
        return loss_t.mean()
    if reduction == 2:
        return loss_t.sum()
    return loss_t
