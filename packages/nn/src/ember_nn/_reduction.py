"""The ``reduction`` argument of the losses, and its legacy spelling (``size_average``,
``reduce``)."""

from __future__ import annotations

import warnings

__all__ = ["check", "legacy_get_string", "reduce"]

_VALID = ("none", "mean", "sum")


def check(reduction: str) -> str:
    """``reduction`` if valid (``'elementwise_mean'`` is the deprecated ``'mean'``), else a
    ValueError."""
    if reduction in _VALID:
        return reduction
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
            stacklevel=4,
        )
        return "mean"
    raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_get_string(size_average, reduce, emit_warning: bool = True) -> str:
    """The reduction that the legacy pair ``(size_average, reduce)`` stands for (None means
    True for both), with a deprecation warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        out = "mean"
    elif reduce:
        out = "sum"
    else:
        out = "none"
    if emit_warning:
        warnings.warn(
            f"size_average and reduce args will be deprecated, please use reduction='{out}' "
            "instead.",
            stacklevel=4,
        )
    return out


def resolve(size_average, reduce, reduction: str) -> str:
    """The reduction to apply, from the legacy arguments when either is given."""
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    return check(reduction)


def reduce(loss, reduction: str):
    """The elementwise ``loss`` reduced: as is, its mean, or its sum."""
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    return loss.sum()
