"""Discrete Fourier transforms with PyTorch's ``torch.fft`` names, arguments and semantics.

Every transform is composed of three ops of the core, so autograd differentiates them (first
and higher order) and each device runs its own kernels: ``_fft_c2c`` (complex to complex),
``_fft_r2c`` (real to complex) and ``_fft_c2r`` (one-sided Hermitian to real). On the CPU
they call Intel MKL's FFT where the core was built with it, else the built-in FFT (see
docs/fft.md); every length is supported, not only powers of two.

- ``fft``, ``ifft``, ``fft2``, ``ifft2``, ``fftn``, ``ifftn``: complex transforms (a real
  input gives the full complex spectrum);
- ``rfft``, ``irfft`` (and 2-D / n-D forms): real signals and their one-sided spectra of
  ``n // 2 + 1`` entries along the last transformed dim;
- ``hfft``, ``ihfft`` (and 2-D / n-D forms): signals with a Hermitian-symmetric time domain;
- ``fftfreq``, ``rfftfreq``: the sample frequencies; ``fftshift``, ``ifftshift``: the
  zero frequency moved to the centre and back.

``n`` / ``s`` trims or zero-pads the input along the transformed dims first; ``norm`` is
``"backward"`` (the default: the inverse transforms divide by n), ``"ortho"`` (both by
sqrt(n)) or ``"forward"`` (the forward transforms divide by n). Integer and bool inputs
compute in the default float dtype; float16 and bfloat16 are refused (as PyTorch's CPU).

Example::

    >>> import ember_tensor as et
    >>> x = et.tensor([1.0, 2.0, 3.0, 4.0])
    >>> et.fft.fft(x)
    tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
    >>> et.fft.irfft(et.fft.rfft(x), n=4)
    tensor([1., 2., 3., 4.])
"""

from __future__ import annotations

from . import _C

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "hfft2",
    "hfftn",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "ihfft2",
    "ihfftn",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

_NORMS = ("backward", "ortho", "forward")


def _normalization(norm, forward: bool) -> int:
    """The core's normalization code (0 none, 1 by 1/sqrt(n), 2 by 1/n) of a norm mode."""
    if norm is None:
        norm = "backward"
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    if norm == "ortho":
        return 1
    return 0 if (norm == "backward") == forward else 2


def _float_input(name: str, x):
    """x as a floating or complex tensor: integers and bool in the default float dtype."""
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    dt = x.dtype
    if dt.is_complex or dt in (_C.float32, _C.float64):
        return x
    if dt in (_C.float16, _C.bfloat16):
        raise RuntimeError(f"Unsupported dtype {dt._scalar_type_name}")
    return x.to(_C.get_default_dtype())


def _complex_input(name: str, x):
    x = _float_input(name, x)
    return x if x.dtype.is_complex else x.to(x.dtype.to_complex())


def _real_input(name: str, x):
    x = _float_input(name, x)
    if x.dtype.is_complex:
        raise RuntimeError(
            f"{name} expects a real input tensor, but got {x.dtype._scalar_type_name}")
    return x




def _dims_and_sizes(name: str, x, s, dim, default_dims=None):
    """The wrapped, unique transformed dims and their signal sizes (None: the input's)."""
    nd = x.dim()
    if dim is None:
        if s is not None:
            dims = list(range(nd - len(s), nd))
        elif default_dims is not None:
            dims = list(default_dims)
        else:
            dims = list(range(nd))
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = list(dim)
    if s is not None:
        s = [s] if isinstance(s, int) else list(s)
        if len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > nd:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {nd} "
                               "dimensions.")
    wrapped = []
    for d in dims:
        if nd == 0:
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                             f"{nd - 1}], but got {d})")
        w = d % nd
        if w in wrapped:
            raise RuntimeError("FFT dims must be unique")
        wrapped.append(w)
    sizes = [None] * len(wrapped) if s is None else [None if v == -1 else v for v in s]
    for v in sizes:
        if v is not None and v < 1:
            raise RuntimeError(f"Invalid number of data points ({v}) specified")
    return wrapped, sizes


def _resize(x, dims, sizes):
    """x trimmed or zero-padded (at the end) to sizes along dims (None: unchanged)."""
    for d, n in zip(dims, sizes):
        if n is None:
            continue
        have = x.shape[d]
        if have > n:
            x = x.narrow(d, 0, n)
        elif have < n:
            pad = list(x.shape)
            pad[d] = n - have
            x = _C.cat([x, _C.zeros(pad, dtype=x.dtype, device=x.device)], d)
    return x


def _out(result, out):
    if out is None:
        return result
    if tuple(out.shape) != tuple(result.shape) or out.dtype != result.dtype:
        raise RuntimeError(f"fft: out= must have the result's shape {tuple(result.shape)} and "
                           f"dtype {result.dtype}, got {tuple(out.shape)} and {out.dtype}")
    out.copy_(result)
    return out


# ----------------------------------------------------------------------------- complex


def _c2c(name, input, s, dim, norm, out, forward, default_dims=None):
    x = _float_input(name, input)
    dims, sizes = _dims_and_sizes(name, x, s, dim, default_dims)
    x = _resize(x, dims, sizes)
    code = _normalization(norm, forward)
    if not dims:  # nothing to transform: a complex copy
        return _out(x.to(x.dtype if x.dtype.is_complex else x.dtype.to_complex(), copy=True), out)
    if x.dtype.is_complex:
        y = _C._fft_c2c(x, dims, code, forward)
    elif forward:
        y = _C._fft_r2c(x, dims, code, False)
    else:  # the inverse of a real signal: the conjugate of its forward transform
        y = _C._fft_r2c(x, dims, code, False).conj()
    return _out(y, out)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D discrete Fourier transform of ``input`` along ``dim`` (``n``: the signal length,
    trimming or zero-padding the input). Complex result."""
    return _c2c("fft", input, None if n is None else [n], [dim], norm, out, True)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D inverse discrete Fourier transform (divided by n with ``norm="backward"``)."""
    return _c2c("ifft", input, None if n is None else [n], [dim], norm, out, False)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D discrete Fourier transform over ``dim`` (default: the last two dims)."""
    return _c2c("fft2", input, s, dim, norm, out, True)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D inverse discrete Fourier transform."""
    return _c2c("ifft2", input, s, dim, norm, out, False)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-D discrete Fourier transform over ``dim`` (default: the last ``len(s)`` dims, or
    every dim)."""
    return _c2c("fftn", input, s, dim, norm, out, True)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-D inverse discrete Fourier transform."""
    return _c2c("ifftn", input, s, dim, norm, out, False)


# ----------------------------------------------------------------------------- real


def _r2c(name, input, s, dim, norm, out, default_dims=None):
    x = _real_input(name, input)
    dims, sizes = _dims_and_sizes(name, x, s, dim, default_dims)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resize(x, dims, sizes)
    return _out(_C._fft_r2c(x, dims, _normalization(norm, True), True), out)


def _one_sided_input(name, input, s, dim, default_dims):
    """(x resized to a one-sided spectrum, the dims, the real length of the last one): what
    the transforms to a real signal (irfft, hfft and their n-D forms) start from."""
    x = _complex_input(name, input)
    dims, sizes = _dims_and_sizes(name, x, s, dim, default_dims)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = sizes[-1] if sizes[-1] is not None else 2 * (x.shape[dims[-1]] - 1)
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    return _resize(x, dims, sizes[:-1] + [last // 2 + 1]), dims, last


def _c2r(name, input, s, dim, norm, out, default_dims=None):
    x, dims, last = _one_sided_input(name, input, s, dim, default_dims)
    return _out(_C._fft_c2r(x, dims, _normalization(norm, False), last), out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D DFT of a real signal: its ``n // 2 + 1`` non-negative frequencies."""
    return _r2c("rfft", input, None if n is None else [n], [dim], norm, out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of :func:`rfft`: a real signal of length ``n`` (default ``2 * (m - 1)``
    for ``m`` input entries) from its one-sided spectrum."""
    return _c2r("irfft", input, None if n is None else [n], [dim], norm, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D DFT of a real signal, one-sided along the last of ``dim``."""
    return _r2c("rfft2", input, s, dim, norm, out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of :func:`rfft2`."""
    return _c2r("irfft2", input, s, dim, norm, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-D DFT of a real signal, one-sided along the last of ``dim``."""
    return _r2c("rfftn", input, s, dim, norm, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of :func:`rfftn`."""
    return _c2r("irfftn", input, s, dim, norm, out)


# ----------------------------------------------------------------------------- Hermitian


def _hermitian(name, input, s, dim, norm, out, default_dims=None):
    """hfft / hfft2 / hfftn: the real spectrum of a signal whose time domain is Hermitian,
    given by its one-sided half: ``irfftn(conj(x))`` scaled as a forward transform."""
    x, dims, last = _one_sided_input(name, input, s, dim, default_dims)
    x = x.conj()
    code = _normalization(norm, True)
    if len(dims) > 1:
        x = _C._fft_c2c(x, dims[:-1], code, False)
    return _out(_C._fft_c2r(x, dims[-1:], code, last), out)


def _inverse_hermitian(name, input, s, dim, norm, out, default_dims=None):
    """ihfft / ihfft2 / ihfftn: the inverse of the Hermitian transforms, one-sided:
    ``conj(rfftn(x))`` scaled as an inverse transform."""
    x = _real_input(name, input)
    dims, sizes = _dims_and_sizes(name, x, s, dim, default_dims)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resize(x, dims, sizes)
    code = _normalization(norm, False)
    y = _C._fft_r2c(x, dims[-1:], code, True).conj()
    if len(dims) > 1:
        y = _C._fft_c2c(y, dims[:-1], code, False)
    return _out(y, out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D DFT of a signal with Hermitian symmetry given by its first ``n // 2 + 1``
    entries: a real result of length ``n`` (default ``2 * (m - 1)``)."""
    return _hermitian("hfft", input, None if n is None else [n], [dim], norm, out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of :func:`hfft`: the one-sided inverse DFT of a real signal."""
    return _inverse_hermitian("ihfft", input, None if n is None else [n], [dim], norm, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D form of :func:`hfft`."""
    return _hermitian("hfft2", input, s, dim, norm, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The 2-D form of :func:`ihfft`."""
    return _inverse_hermitian("ihfft2", input, s, dim, norm, out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-D form of :func:`hfft`."""
    return _hermitian("hfftn", input, s, dim, norm, out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-D form of :func:`ihfft`."""
    return _inverse_hermitian("ihfftn", input, s, dim, norm, out)


# ----------------------------------------------------------------------------- helpers


def fftfreq(n, d=1.0, *, out=None, dtype=None, device=None, requires_grad=False, layout=None):
    """The sample frequencies of a length-``n`` transform with sample spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``."""
    del layout
    dtype = dtype or _C.get_default_dtype()
    k = _C.arange(n, dtype=_C.int64, device=device)
    k = _C.where(k < (n + 1) // 2, k, k - n)
    res = (k.to(dtype) * (1.0 / (d * n))).requires_grad_(requires_grad)
    return _out(res, out)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, device=None, requires_grad=False, layout=None):
    """The non-negative sample frequencies of :func:`rfft`: ``[0, 1, ..., n // 2] / (d * n)``."""
    del layout
    dtype = dtype or _C.get_default_dtype()
    k = _C.arange(n // 2 + 1, dtype=_C.int64, device=device)
    res = (k.to(dtype) * (1.0 / (d * n))).requires_grad_(requires_grad)
    return _out(res, out)


def _roll(x, shifts, dims):
    for shift, d in zip(shifts, dims):
        n = x.shape[d]
        if n == 0:
            continue
        shift %= n
        if shift:
            x = _C.cat([x.narrow(d, n - shift, shift), x.narrow(d, 0, n - shift)], d)
    return x


def _shift_dims(x, dim):
    if dim is None:
        return list(range(x.dim()))
    return [dim] if isinstance(dim, int) else list(dim)


def fftshift(input, dim=None):
    """Moves the zero frequency to the centre of the spectrum along ``dim`` (default: every
    dim): a roll by ``n // 2``."""
    dims = _shift_dims(input, dim)
    return _roll(input, [input.shape[d] // 2 for d in dims], dims)


def ifftshift(input, dim=None):
    """The inverse of :func:`fftshift`: a roll by ``-(n // 2)``."""
    dims = _shift_dims(input, dim)
    return _roll(input, [-(input.shape[d] // 2) for d in dims], dims)
