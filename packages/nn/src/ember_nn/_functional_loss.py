"""``nll_loss`` and ``cross_entropy`` of ``ember.nn.functional``: the core's ``nll_loss``
(class weights, ``ignore_index``, the weighted mean) and ``log_softmax``; ``cross_entropy``
takes class indices or class probabilities, and ``label_smoothing``."""

from __future__ import annotations

import ember_tensor as et

from . import _reduction

__all__ = ["cross_entropy", "nll_loss"]

_ENUM = {"none": 0, "mean": 1, "sum": 2}
_TYPE_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
               "bool": "Bool"}


def _check_batch(input, target) -> None:
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() != 1 and target.dim() >= 1 and input.shape[0] != target.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0]})."
        )


def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100,
             reduce=None, reduction: str = "mean"):
    """Negative log likelihood of the log-probabilities ``input`` ((C), (N, C) or
    (N, C, d1, ...)) at the class indices ``target`` ((), (N) or (N, d1, ...)), times
    ``weight[class]``; targets equal to ``ignore_index`` count for nothing, and ``'mean'``
    divides by the total weight of the others."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    _check_batch(input, target)
    return et.nll_loss(input, target, weight, _ENUM[reduction], ignore_index)


def _class_view(t, input, class_dim: int):
    """A (C,) tensor shaped to broadcast along the class dimension of ``input``."""
    shape = [1] * input.dim()
    shape[class_dim] = -1
    return t.reshape(shape)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean", label_smoothing: float = 0.0):
    """``nll_loss(log_softmax(input, class_dim), target)`` for class indices, or
    ``-(target * log_softmax(input)).sum(class_dim)`` for class probabilities (a ``target``
    of the input's shape), with ``weight`` per class; ``label_smoothing`` mixes the target
    with the uniform distribution over the classes."""
    reduction = _reduction.resolve(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(
            f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}"
        )
    class_dim = 0 if input.dim() == 1 else 1
    logp = et.log_softmax(input, class_dim)
    n_classes = input.shape[class_dim] if input.dim() else 1
    if tuple(target.shape) == tuple(input.shape):
        if not target.is_floating_point():
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{_TYPE_NAMES.get(str(target.dtype).rsplit('.', 1)[-1], target.dtype)}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        terms = logp * target
        if weight is not None:
            terms = terms * _class_view(weight, input, class_dim)
        loss = -terms.sum(class_dim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // n_classes) if input.numel() else loss.sum() / 0
        return _reduction.reduce(loss, reduction)
    _check_batch(input, target)
    nll = et.nll_loss(logp, target, weight, _ENUM[reduction], ignore_index)
    if label_smoothing <= 0:
        return nll
    ignored = target == ignore_index
    if weight is not None:
        smooth = -(logp * _class_view(weight, input, class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill(ignored, 0)
    if reduction == "mean":
        if weight is not None:
            kept = target.masked_select(et.logical_not(ignored)).reshape(-1).long()
            smooth = smooth.sum() / weight.index_select(0, kept).sum()
        else:
            smooth = smooth.sum() / et.logical_not(ignored).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / n_classes)
