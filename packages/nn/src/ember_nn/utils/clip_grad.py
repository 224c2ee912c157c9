"""Gradient clipping: ``clip_grad_norm_``, ``clip_grad_value_``, ``get_total_norm`` and
``clip_grads_with_norm_`` (and ``clip_grad_norm``, the deprecated alias of
``clip_grad_norm_``). The ``foreach`` argument is accepted for compatibility; Ember
has one implementation (a loop over the gradients), so it changes nothing."""

from __future__ import annotations

import functools
import types
import warnings

import ember_tensor as et
from ember_autograd import no_grad

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]


def _no_grad(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with no_grad():
            return fn(*args, **kwargs)

    return wrapper


def _as_list(tensors) -> list:
    return [tensors] if isinstance(tensors, et.Tensor) else list(tensors)


@_no_grad
def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None):
    """The ``norm_type``-norm of all ``tensors`` together, as if concatenated into one
    vector (``inf``: the largest absolute value), on the first tensor's device (a CPU
    ``tensor(0.)`` when there is none)."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return et.tensor(0.0)
    norms = [et.norm(t, norm_type) for t in tensors]
    device, dtype = norms[0].device, norms[0].dtype
    total = et.norm(et.stack([n.to(device, dtype) for n in norms]), norm_type)
    if error_if_nonfinite and not bool(et.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total


@_no_grad
def clip_grads_with_norm_(parameters, max_norm: float, total_norm, foreach=None) -> None:
    """Scales the gradients of ``parameters`` by ``min(1, max_norm / (total_norm +
    1e-6))``, in place."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef.to(g.device, g.dtype))


@_no_grad
def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None):
    """Rescales the gradients of ``parameters`` in place so that their total
    ``norm_type``-norm is at most ``max_norm``; returns the total norm before clipping.
    ``error_if_nonfinite``: a non-finite total norm is an error instead."""
    if isinstance(parameters, et.Tensor):
        parameters = [parameters]
    else:
        was_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if was_generator and not parameters:
            warnings.warn(
                "`parameters` is an empty generator, no gradient clipping will occur.",
                stacklevel=3,
            )
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


_CLIP_GRAD_NORM_DEPRECATED = ("`ember.nn.utils.clip_grad_norm` is now deprecated in favor of "
                              "`ember.nn.utils.clip_grad_norm_`.")


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach=None):
    """Deprecated: ``clip_grad_norm_`` (same arguments, same result), after a
    ``FutureWarning``."""
    warnings.warn(_CLIP_GRAD_NORM_DEPRECATED, FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


clip_grad_norm.__deprecated__ = _CLIP_GRAD_NORM_DEPRECATED  # as PEP 702's decorator marks it


@_no_grad
def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamps every gradient of ``parameters`` to ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)
