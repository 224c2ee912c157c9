"""The seam where fused (single-kernel) optimizer steps plug in.

``fused=True`` asks an optimizer to run its whole update as one kernel per parameter
list: one pass over each tensor's memory instead of one per elementwise op. A kernel
registers itself here under the algorithm's name::

    ember_optim.register_fused_kernel("adam", my_fused_adam)

The tensor core's kernels (``ember_tensor._fused_adam_`` for Adam and AdamW,
``ember_tensor._fused_sgd_``) are registered at import, for CPU and CUDA tensors of
float32 or float64; a plugin may register its own (another device, another algorithm) in
their place.

A kernel has the signature of the algorithm's functional form without ``foreach`` and
``fused`` (``ember_optim.adam.adam``'s, ``ember_optim.sgd.sgd``'s): lists of parameters,
gradients and state tensors (in the order of the optimizer's ``_state_keys``; a state the
group does not use is an empty list), keyword hyperparameters (every option of the group
but ``foreach``, ``fused``, ``capturable`` and ``differentiable``, ``betas`` as ``beta1`` and
``beta2``); it updates them in place and returns whether it replaced entries of the state
lists. For an algorithm without a
kernel, ``fused=True`` raises ``NotImplementedError`` (a ``RuntimeError``) when the
optimizer is created and when it steps.

With neither ``foreach`` nor ``fused`` given, an optimizer takes the fused kernel when
there is one and ``usable`` accepts the tensors (all contiguous tensors of one float dtype
on one device), else the per-tensor path.
"""

from __future__ import annotations

from collections.abc import Callable

import ember_tensor as et

__all__ = ["register_fused_kernel", "fused_kernel", "has_fused_kernel"]

_KERNELS: dict[str, Callable] = {}


def register_fused_kernel(algorithm: str, kernel: Callable) -> None:
    """Makes ``kernel`` the fused implementation of ``algorithm`` (``"sgd"``, ``"adam"``
    (Adam and AdamW), ``"adagrad"``, ``"lion"``)."""
    if not callable(kernel):
        raise TypeError(f"register_fused_kernel: kernel must be callable, got {kernel!r}")
    _KERNELS[algorithm] = kernel


def has_fused_kernel(algorithm: str) -> bool:
    return algorithm in _KERNELS


def fused_kernel(algorithm: str, optimizer: str) -> Callable:
    """The registered kernel of ``algorithm``; ``NotImplementedError`` naming the
    optimizer when there is none."""
    kernel = _KERNELS.get(algorithm)
    if kernel is None:
        raise NotImplementedError(
            f"fused=True is not available yet for {optimizer}: Ember has no fused "
            f"{optimizer} kernel (use foreach=True, or the default, for the same result)"
        )
    return kernel


_FUSED_DTYPES = (et.float32, et.float64)


def usable(params, grads, *states) -> bool:
    """Whether the core's kernels take these lists: contiguous tensors of float32 or
    float64 on one device (the CPU or a GPU), each parameter's gradient and state of the
    parameter's dtype. ``states``: the state lists less the 0-d scalar ones (``step``),
    which are not checked; ``None`` entries are state still to be created."""
    device = params[0].device if params else None
    for i, p in enumerate(params):
        dtype = p.dtype
        if dtype not in _FUSED_DTYPES or p.device != device or not p.is_contiguous():
            return False
        for lst in (grads, *states):
            t = lst[i] if lst else None
            if t is not None and (t.dtype != dtype or not t.is_contiguous()):
                return False
    return True


def _by_dtype(params, *lists):
    """``(params, *lists)`` split into one such tuple per dtype of ``params`` (empty lists
    stay empty): the kernels take one dtype per call, as PyTorch's group theirs."""
    groups: dict = {}
    for i, p in enumerate(params):
        groups.setdefault(p.dtype, []).append(i)
    if len(groups) <= 1:
        return [(params, *lists)]
    return [([params[i] for i in idx], *([lst[i] for i in idx] if lst else [] for lst in lists))
            for idx in groups.values()]


def _core_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *,
               amsgrad, beta1, beta2, lr, weight_decay, eps, maximize,
               decoupled_weight_decay=False) -> bool:
    if not params:
        return False
    for lists in _by_dtype(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                           state_steps):
        et._fused_adam_(*lists, lr=lr, beta1=beta1, beta2=beta2, weight_decay=weight_decay,
                        eps=eps, amsgrad=amsgrad, maximize=maximize,
                        decoupled_weight_decay=decoupled_weight_decay)
    return False


def _core_sgd(params, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening,
              nesterov, maximize) -> bool:
    """Parameters whose momentum buffer does not exist yet take a first step that sets it
    to the gradient (PyTorch's rule); the new buffers go into ``momentum_buffer_list``."""
    hyper = dict(weight_decay=weight_decay, momentum=momentum, lr=lr, dampening=dampening,
                 nesterov=nesterov, maximize=maximize)
    if momentum == 0:
        for p, g in _by_dtype(params, grads):
            et._fused_sgd_(p, g, [], is_first_step=False, **hyper)
        return False
    new = [i for i, b in enumerate(momentum_buffer_list) if b is None]
    old = [i for i, b in enumerate(momentum_buffer_list) if b is not None]
    for i in new:
        momentum_buffer_list[i] = et.empty_like(params[i])
    for indices, first in ((old, False), (new, True)):
        if indices:
            for p, g, b in _by_dtype([params[i] for i in indices], [grads[i] for i in indices],
                                     [momentum_buffer_list[i] for i in indices]):
                et._fused_sgd_(p, g, b, is_first_step=first, **hyper)
    return bool(new)


if hasattr(et, "_fused_adam_"):
    register_fused_kernel("adam", _core_adam)
if hasattr(et, "_fused_sgd_"):
    register_fused_kernel("sgd", _core_sgd)
