"""The seam where fused (single-kernel) optimizer steps plug in.

``fused=True`` asks an optimizer to run its whole update as one kernel per parameter
list. Ember has no such kernels yet; when one is written (a C++ kernel of the tensor core,
or a plugin), it registers itself here under the algorithm's name::

    ember_optim._fused.register_fused_kernel("adam", my_fused_adam)

A kernel has the signature of the algorithm's functional form without ``foreach`` and
``fused`` (``ember_optim.adam._fused_adam_signature`` documents Adam's): lists of
parameters, gradients and state tensors, keyword hyperparameters; it updates them in
place. Until a kernel is registered, ``fused=True`` raises ``NotImplementedError`` (a
``RuntimeError``) when the optimizer is created and when it steps.
"""

from __future__ import annotations

from collections.abc import Callable

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
