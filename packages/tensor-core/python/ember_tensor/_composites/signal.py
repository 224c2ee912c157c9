"""Signal processing written once in terms of other ops (``composite: python`` in ops.yaml):
the window functions and the short-time Fourier transform, with PyTorch's names, signatures,
defaults and errors (``torch.hann_window``, ..., ``torch.stft``, ``torch.istft``).

The windows are computed in float64 on the target device and rounded once to the requested
dtype. ``stft`` frames the (centre-padded) signal as a strided view and transforms the
windowed frames with ``ember_tensor.fft``; ``istft`` transforms back, overlap-adds the frames
with ``index_add`` and divides by the window's squared envelope, so autograd differentiates
both through their ops.
"""

from __future__ import annotations

import math
import warnings

import ember_tensor as _et

__all__ = [
    "bartlett_window",
    "blackman_window",
    "hamming_window",
    "hann_window",
    "istft",
    "kaiser_window",
    "stft",
]


def _window(name, window_length, periodic, dtype, device, requires_grad, fn):
    """fn(n, N) (float64 positions n = 0 .. N - 1 of a symmetric window of N points) as a
    window of window_length points (periodic: N = window_length + 1, the last dropped)."""
    if isinstance(window_length, bool) or not isinstance(window_length, int):
        raise TypeError(f"{name}(): argument 'window_length' must be int, not "
                        f"{type(window_length).__name__}")
    if not isinstance(periodic, bool):
        raise TypeError(f"{name}(): argument 'periodic' must be bool, not "
                        f"{type(periodic).__name__}")
    requires_grad = bool(requires_grad) if requires_grad is None else requires_grad
    if not isinstance(requires_grad, bool):
        raise TypeError(f"{name}(): argument 'requires_grad' must be bool, not "
                        f"{type(requires_grad).__name__}")
    if dtype is not None and not isinstance(dtype, _et.dtype):
        raise TypeError(f"{name}(): argument 'dtype' must be ember.dtype, not "
                        f"{type(dtype).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length="
                           f"{window_length}")
    dtype = dtype or _et.get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length <= 1:
        w = _et.ones(window_length, dtype=dtype, device=device)
        return w.requires_grad_(requires_grad)
    n_points = window_length + 1 if periodic else window_length
    n = _et.arange(n_points, dtype=_et.float64, device=device)
    w = fn(n, n_points)
    if periodic:
        w = w[:window_length]
    return w.to(dtype).contiguous().requires_grad_(requires_grad)


def _cosine_sum(coeffs):
    """sum_k (-1)^k a_k cos(2 pi k n / (N - 1)): the generalised cosine windows."""
    def fn(n, n_points):
        phase = n * (2.0 * math.pi / (n_points - 1))
        w = _et.full_like(n, coeffs[0])
        for k, a in enumerate(coeffs[1:], start=1):
            w = w + ((-1) ** k) * a * _et.cos(phase * k)
        return w
    return fn


def hann_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False):
    """0.5 - 0.5 cos(2 pi n / (N - 1))."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum((0.5, 0.5)))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   device=None, requires_grad=False):
    """alpha - beta cos(2 pi n / (N - 1)). alpha and beta are floats (a Python int of any
    size is read as the nearest float, as PyTorch's double arguments read it)."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum((float(alpha), float(beta))))


def blackman_window(window_length, periodic=True, *, dtype=None, device=None,
                    requires_grad=False):
    """0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum((0.42, 0.5, 0.08)))


def bartlett_window(window_length, periodic=True, *, dtype=None, device=None,
                    requires_grad=False):
    """1 - |2 n / (N - 1) - 1|."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   _bartlett)


def _bartlett(n, n_points):
    """The triangular window's fn(n, N) (also torch.signal.windows.bartlett's)."""
    return 1.0 - _et.abs(n * (2.0 / (n_points - 1)) - 1.0)


_I0_OVERFLOW = 713.987  # I0(x) exceeds float64's range above this


def _bessel_i0(x, largest: float):
    """I0(x) for |x| <= largest by its power series sum_k ((x / 2)^k / k!)^2 (float64;
    enough terms that the last is below 1e-17 of the sum at x = largest). inf where float64
    overflows; NaN everywhere for a NaN or infinite ``largest`` (as PyTorch's window)."""
    if not math.isfinite(largest):
        return _et.full_like(x, math.nan)
    if largest > _I0_OVERFLOW:  # the series would need ~largest / 2 terms: inf beyond
        big = _et.abs(x) > _I0_OVERFLOW
        small = _bessel_i0(_et.where(big, _et.zeros_like(x), x), _I0_OVERFLOW)
        return _et.where(big, _et.full_like(x, math.inf), small)
    q = (x * 0.5) ** 2
    term = _et.ones_like(x)
    total = _et.ones_like(x)
    k = 1
    qmax = (largest * 0.5) ** 2
    tmax = 1.0
    smax = 1.0
    while True:
        term = term * q / (k * k)
        total = total + term
        tmax *= qmax / (k * k)
        smax += tmax
        if tmax < 1e-17 * smax and k > qmax ** 0.5:
            return total
        k += 1


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, device=None,
                  requires_grad=False):
    """I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta); beta is a float (a Python int of
    any size read as the nearest float)."""
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   _kaiser(float(beta)))


def _kaiser(beta: float):
    """The Kaiser window's fn(n, N) (also torch.signal.windows.kaiser's)."""
    def fn(n, n_points):
        r = n * (2.0 / (n_points - 1)) - 1.0
        arg = beta * _et.sqrt(_et.clamp(1.0 - r * r, min=0.0))
        largest = abs(beta)
        num = _bessel_i0(arg, largest)
        den = _bessel_i0(_et.full_like(n[:1], abs(beta)), largest)
        return num / den
    return fn


# ----------------------------------------------------------------------------- stft


def _pad_1d(x, left, right, mode):
    """x padded along its last dim (reflect, replicate, circular or constant zeros)."""
    n = x.shape[-1]
    if left == 0 and right == 0:
        return x
    if mode == "constant":
        shape = list(x.shape)
        parts = []
        if left:
            shape[-1] = left
            parts.append(_et.zeros(shape, dtype=x.dtype, device=x.device))
        parts.append(x)
        if right:
            shape[-1] = right
            parts.append(_et.zeros(shape, dtype=x.dtype, device=x.device))
        return _et.cat(parts, -1)
    pos = _et.arange(-left, n + right, device=x.device)
    if mode == "reflect":
        if left >= n or right >= n:
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({left}, {right}) at dimension {x.dim() - 1} of "
                f"input {list(x.shape)}")
        period = 2 * (n - 1)
        pos = pos % period if period else pos * 0
        pos = _et.where(pos >= n, period - pos, pos)
    elif mode == "replicate":
        pos = _et.clamp(pos, 0, n - 1)
    elif mode == "circular":
        pos = pos % n
    else:
        raise RuntimeError(f"Unrecognised padding mode {mode}")
    return x.index_select(-1, pos)


def _full_window(window, win_length, n_fft, dtype, device, name):
    """The window, centred and zero-padded to n_fft points (ones when None)."""
    if window is None:
        window = _et.ones(win_length, dtype=dtype, device=device)
    elif window.dim() != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{name}: expected a 1D window tensor of size equal to win_length="
                           f"{win_length}, but got window with size {list(window.shape)}")
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = _pad_1d(window, left, n_fft - win_length - left, "constant")
    return window


def _lengths(name, n_fft, hop_length, win_length):
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if n_fft <= 0:
        raise RuntimeError(f"{name}: expected 0 < n_fft, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"{name}: expected hop_length > 0, but got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{name}: expected 0 < win_length <= n_fft, but got win_length="
                           f"{win_length}")
    return hop_length, win_length


def stft(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None):
    """The short-time Fourier transform (PyTorch's ``torch.stft``): frames of n_fft samples,
    hop_length apart (default n_fft // 4), multiplied by the window (win_length points,
    centred in n_fft; default ones) and transformed. center pads n_fft // 2 samples on each
    side first (pad_mode). Result: (B?, n_fft // 2 + 1, frames) for a real signal and window
    (onesided, the default) or (B?, n_fft, frames); normalized multiplies by n_fft^-0.5;
    return_complex=False gives the real view (..., 2)."""
    x = self
    if return_complex is None:
        if not (x.dtype.is_complex or (window is not None and window.dtype.is_complex)):
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if x.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {x.dim()}D tensor")
    if window is None:
        warnings.warn(
            "A window was not provided. A rectangular window will be applied,which is known to "
            "cause spectral leakage. Other windows such as ember.hann_window or "
            "ember.hamming_window are recommended to reduce spectral leakage.To suppress this "
            "warning and use a rectangular window, explicitly set "
            "`window=ember.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=3)
    hop_length, win_length = _lengths("stft", n_fft, hop_length, win_length)
    batched = x.dim() == 2
    if not batched:
        x = x.unsqueeze(0)
    if center:
        if pad_mode not in ("constant", "reflect", "replicate", "circular"):
            raise NotImplementedError(f"Unrecognised padding mode {pad_mode}")  # PyTorch's
        if pad_mode in ("reflect", "replicate") and n_fft // 2 and 0 in x.shape:
            # PyTorch pads the signals as one (1, B, L) batch: no dim of it may be empty
            raise RuntimeError("Expected 2D or 3D (batch mode) tensor with possibly 0 batch size "
                               "and other non-zero dimensions for input, but got: "
                               f"{[1, *x.shape]}")
        x = _pad_1d(x, n_fft // 2, n_fft // 2, pad_mode)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    frames = 1 + (length - n_fft) // hop_length
    x = x.contiguous()
    b = x.shape[0]
    seg = x.as_strided((b, frames, n_fft), (length, hop_length, 1), x.storage_offset())
    w = _full_window(window, win_length, n_fft, x.dtype if not x.dtype.is_complex
                     else x.dtype.to_real(), x.device, "stft")
    seg = seg * w
    complex_input = seg.dtype.is_complex
    if onesided is None:
        onesided = not complex_input
    if onesided and complex_input:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spec = _et.fft.rfft(seg, norm=norm) if onesided else _et.fft.fft(seg, norm=norm)
    spec = spec.transpose(1, 2)
    if not batched:
        spec = spec.squeeze(0)
    return spec if return_complex else _et.view_as_real(spec)


def istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of :func:`stft` (PyTorch's ``torch.istft``): the frames transformed back,
    windowed, overlap-added and divided by the sum of the squared windows; center removes
    the n_fft // 2 samples stft padded; length trims or zero-pads the result."""
    x = self
    if x.dim() not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex dtype, "
                           f"but got {x.dim()}D")
    hop_length, win_length = _lengths("istft", n_fft, hop_length, win_length)
    batched = x.dim() == 3
    if not batched:
        x = x.unsqueeze(0)
    n_freq, frames = x.shape[1], x.shape[2]
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided:
        if n_fft // 2 + 1 != n_freq:
            raise RuntimeError(
                "istft: expected the frequency dimension (3rd to the last) of the input tensor "
                f"to match n_fft / 2 + 1 when onesided=True, but got {n_freq}")
        if return_complex:
            raise RuntimeError("cannot have onesided output if window or input is complex")
    elif n_fft != n_freq:
        raise RuntimeError(
            "istft: expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match n_fft when onesided=False, but got {n_freq}")
    real = x.dtype.to_real()
    w = _full_window(window, win_length, n_fft, real, x.device, "istft")
    norm = "ortho" if normalized else "backward"
    seg = x.transpose(1, 2)
    if onesided:
        seg = _et.fft.irfft(seg, n=n_fft, norm=norm)
    else:
        seg = _et.fft.ifft(seg, n=n_fft, norm=norm)
        if not return_complex:
            seg = seg.real
    seg = seg * w  # (B, frames, n_fft)
    expected = n_fft + hop_length * (frames - 1)
    idx = (_et.arange(frames, device=x.device) * hop_length).unsqueeze(1) + _et.arange(
        n_fft, device=x.device)
    idx = idx.reshape(-1)
    b = seg.shape[0]
    y = _et.zeros((b, expected), dtype=seg.dtype, device=x.device)
    y = y.index_add(1, idx, seg.reshape(b, -1))
    env = _et.zeros(expected, dtype=real, device=x.device)
    env = env.index_add(0, idx, (w * w).expand(frames, n_fft).reshape(-1))
    start = n_fft // 2 if center else 0
    end = expected if length is None else start + length
    if center and length is None:
        end = expected - n_fft // 2
    end = min(end, expected)
    y = y[:, start:end]
    env = env[start:end]
    if env.numel() and float(env.abs().min()) < 1e-11:
        raise RuntimeError("istft: window overlap add min: 1e-11 (the window's squared "
                           "envelope is zero somewhere: nonzero overlap-add required)")
    y = y / env
    if length is not None and y.shape[1] < length:
        y = _pad_1d(y, 0, length - y.shape[1], "constant")
    if not batched:
        y = y.squeeze(0)
    return y
