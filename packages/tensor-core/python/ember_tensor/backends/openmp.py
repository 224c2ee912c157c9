"""OpenMP (as ``torch.backends.openmp``): ``is_available()`` is False, since Ember's CPU
kernels run on its own fork-safe thread pool (``ember.set_num_threads``), not on OpenMP."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """False: Ember's CPU parallelism is its own thread pool, not OpenMP."""
    return False
