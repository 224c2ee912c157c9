"""``batch_norm``, ``layer_norm``, ``group_norm`` and ``instance_norm`` of
``ember.nn.functional``, on the core's ``native_batch_norm``, ``native_layer_norm`` and
``native_group_norm`` (whose derivatives ember_autograd has, second derivatives included)."""

from __future__ import annotations

import ember_tensor as et

from .functional import _tensor_args

__all__ = ["batch_norm", "group_norm", "instance_norm", "layer_norm"]


def _verify_batch_size(size) -> None:
    n = size[0]
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}"
        )


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5):
    """Normalizes each channel of an ``(N, C, *)`` input: with the batch's statistics when
    ``training`` (and then, when given, ``running_mean``/``running_var`` move towards them by
    ``momentum``, in place; the running variance is the unbiased one), with the running ones
    otherwise; then ``* weight + bias`` per channel. An empty input gives an empty result
    and leaves the running statistics alone, as in PyTorch."""
    if training:
        _verify_batch_size(input.shape)
    _tensor_args("batch_norm", ("weight", 2, weight), ("bias", 3, bias),
                 ("running_mean", 4, running_mean), ("running_var", 5, running_var))
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``native_batch_norm``'s output with what PyTorch's batch_norm does around its kernel.
    An empty input is cloned, times ``weight[0]``, plus ``bias[0]``: 0-d operands, so a bool
    or integer input keeps its dtype beside a tensor of its kind, and the shapes and the
    running statistics go unchecked. Otherwise the statistics' and parameters' sizes are
    checked in PyTorch's order, then its float-only kernel refuses any other dtype."""
    if input.numel() == 0:
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    if input.dim() >= 2:
        c = input.shape[1]
        for name, t in (("running_mean", running_mean), ("running_var", running_var),
                        ("weight", weight), ("bias", bias)):
            if t is not None:
                if t.numel() != c:
                    raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
            elif not training and name.startswith("running"):
                raise RuntimeError(f"{name} must be defined in evaluation mode")
        if (running_mean is None) != (running_var is None):
            raise ValueError("running_mean and running_var must either both be None or neither "
                             "be None")
        if not input.is_floating_point():
            raise NotImplementedError(
                f"\"batch_norm\" not implemented for '{input.dtype._scalar_type_name}'")
    return et.native_batch_norm(input, weight, bias, running_mean, running_var, training,
                                momentum, eps)[0]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """Normalizes over the last ``len(normalized_shape)`` dimensions (which must be
    ``normalized_shape``), then ``* weight + bias`` elementwise."""
    _tensor_args("layer_norm", ("weight", 3, weight), ("bias", 4, bias))
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return et.native_layer_norm(input, list(normalized_shape), weight, bias, eps)[0]


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    """Normalizes each group of ``C / num_groups`` channels of an ``(N, C, *)`` input over
    its channels and positions, then ``* weight + bias`` per channel."""
    if input.dim() < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.dim()}"
        )
    shape = tuple(input.shape)
    n, c = shape[0], shape[1]
    _verify_batch_size([n * c // num_groups, num_groups, *shape[2:]])
    _tensor_args("group_norm", ("weight", 3, weight), ("bias", 4, bias))
    hxw = 1
    for s in shape[2:]:
        hxw *= s
    return et.native_group_norm(input, weight, bias, n, c, hxw, num_groups, eps)[0]


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5):
    """Normalizes each channel of each sample of an ``(N, C, *)`` input over its positions
    (batch_norm of the input seen as one sample of N * C channels); running statistics, when
    given, are the average over the batch of the per-sample ones."""
    if use_input_stats:
        shape = tuple(input.shape)
        n = 1
        for s in shape[2:]:
            n *= s
        if n == 1:
            raise ValueError(
                "Expected more than 1 spatial element when training, got input size "
                f"{input.shape}"
            )
    _tensor_args("instance_norm", ("weight", 2, weight), ("bias", 3, bias),
                 ("running_mean", 4, running_mean), ("running_var", 5, running_var))
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    n, c = input.shape[0], input.shape[1]
    x = input.reshape(1, n * c, *input.shape[2:])
    rm = None if running_mean is None else running_mean.repeat(n)
    rv = None if running_var is None else running_var.repeat(n)
    w = None if weight is None else weight.repeat(n)
    b = None if bias is None else bias.repeat(n)
    out = _batch_norm(x, w, b, rm, rv, use_input_stats, momentum, eps)
    if use_input_stats:  # each given statistic, the mean over the batch (its view checks it)
        with _no_grad():
            for stat, repeated in ((running_mean, rm), (running_var, rv)):
                if stat is not None:
                    stat.copy_(repeated.view(n, c).mean(0))
    return out.view(tuple(input.shape))


def _no_grad():
    from ember_autograd import no_grad

    return no_grad()
