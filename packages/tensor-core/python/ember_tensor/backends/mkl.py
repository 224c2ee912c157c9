"""Intel MKL (as ``torch.backends.mkl``): ``is_available()`` says whether this build of the
core linked MKL, which then computes the CPU discrete Fourier transforms of
``ember_tensor.fft`` (otherwise the built-in FFT does; docs/fft.md)."""

from __future__ import annotations

from .. import _C

__all__ = ["is_available"]


def is_available() -> bool:
    """Whether the core was built with MKL (its FFT runs the CPU transforms)."""
    return bool(_C._has_mkl())
