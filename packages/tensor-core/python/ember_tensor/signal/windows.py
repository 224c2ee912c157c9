"""Window functions with PyTorch's ``torch.signal.windows`` names, arguments and results
(SciPy's definitions): ``M`` points, symmetric by default (``sym=False``: the periodic
window, ``M + 1`` points with the last dropped), float32 or float64 (the default dtype),
computed in float64 and rounded once.

Example::

    >>> import ember_tensor as et
    >>> et.signal.windows.hann(5).tolist()
    [0.0, 0.5, 1.0, 0.5, 0.0]
"""

from __future__ import annotations

import math

import ember_tensor as _et

from .._composites.signal import _bartlett, _cosine_sum, _kaiser

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]


def _window(name, M, sym, dtype, device, requires_grad, fn):
    """fn(n, N) at the float64 positions n = 0 .. N - 1 of a symmetric window of N points,
    as M points in dtype (N = M + 1, the last dropped, when not sym)."""
    if isinstance(M, bool) or not isinstance(M, int):
        raise TypeError(f"{name}(): argument 'M' must be int, not {type(M).__name__}")
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    dtype = dtype or _et.get_default_dtype()
    if dtype not in (_et.float32, _et.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    if M <= 1:
        return _et.ones(M, dtype=dtype, device=device).requires_grad_(requires_grad)
    n_points = M if sym else M + 1
    n = _et.arange(n_points, dtype=_et.float64, device=device)
    w = fn(n, n_points)[:M]
    return w.to(dtype).contiguous().requires_grad_(requires_grad)


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """sum_k (-1)^k a[k] cos(2 pi k n / (M - 1))."""
    coeffs = [float(c) for c in a]
    if not coeffs:
        raise ValueError("Coefficients cannot be empty")
    return _window("general_cosine", M, sym, dtype, device, requires_grad, _cosine_sum(coeffs))


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return _window("general_hamming", M, sym, dtype, device, requires_grad,
                   _cosine_sum((float(alpha), 1.0 - float(alpha))))


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """0.5 - 0.5 cos(2 pi n / (M - 1))."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, device=device,
                           requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """0.54 - 0.46 cos(2 pi n / (M - 1))."""
    return general_hamming(M, sym=sym, dtype=dtype, device=device, requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))."""
    return general_cosine(M, a=(0.42, 0.5, 0.08), sym=sym, dtype=dtype, device=device,
                          requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(M, a=(0.3635819, 0.4891775, 0.1365995, 0.0106411), sym=sym,
                          dtype=dtype, device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """1 - |2 n / (M - 1) - 1| (triangular)."""
    return _window("bartlett", M, sym, dtype, device, requires_grad, _bartlett)


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """sin(pi (n + 0.5) / M) (the sine window)."""
    def fn(n, N):
        return _et.sin((n + 0.5) * (math.pi / N))

    return _window("cosine", M, sym, dtype, device, requires_grad, fn)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None,
                requires_grad=False):
    """exp(-|n - center| / tau), centered by default."""
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")

    def fn(n, N):
        c = (N - 1) / 2 if center is None else float(center)
        return _et.exp(-_et.abs(n - c) / float(tau))

    return _window("exponential", M, sym, dtype, device, requires_grad, fn)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    """exp(-((n - (M - 1) / 2) / std)² / 2)."""
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")

    def fn(n, N):
        return _et.exp(-(((n - (N - 1) / 2) / float(std)) ** 2) / 2)

    return _window("gaussian", M, sym, dtype, device, requires_grad, fn)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None,
           requires_grad=False):
    """I0(beta sqrt(1 - (2 n / (M - 1) - 1)²)) / I0(beta)."""
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    return _window("kaiser", M, sym, dtype, device, requires_grad, _kaiser(float(beta)))
