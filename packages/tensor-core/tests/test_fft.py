"""ember_tensor.fft against torch.fft and numpy.fft: every transform, norm mode, dtype and
n= / s= / dim= form, on lengths that are powers of two, primes and products of small
primes; under each CPU FFT library this build has (MKL's and the built-in one); the errors
are PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_tensor as et
from ember_tensor import _C

LIBRARIES = ["mkl", "builtin"] if et.backends.mkl.is_available() else ["builtin"]


@pytest.fixture(params=LIBRARIES)
def library(request):
    before = _C._fft_library()
    _C._fft_set_library(request.param)
    yield request.param
    _C._fft_set_library(before)


RNG = np.random.default_rng(2026)
ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
TWO_D = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"]
N_D = ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}
NORMS = [None, "backward", "ortho", "forward"]


def _inputs(name, shape, dtype):
    """The dtypes each transform takes: real ones for rfft / ihfft, any otherwise."""
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _compare(got, want, dtype):
    want = want.resolve_conj().numpy()
    got = got.numpy()
    assert got.shape == want.shape
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    single = np.dtype(dtype) in (np.float32, np.complex64)
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=0, atol=(2e-5 if single else 1e-12) * scale)


def _dtypes(name):
    real = ["float32", "float64"]
    return real if name in REAL_ONLY else real + ["complex64", "complex128"]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [1, 2, 7, 8, 12, 17, 64, 100, 243, 1000])
@pytest.mark.parametrize("name", ONE_D)
def test_one_dimensional_transforms(library, name, n, norm):
    for dtype in _dtypes(name):
        if name in ("irfft", "hfft") and n == 1:
            continue  # a one-entry half spectrum gives the invalid length 0 (tested below)
        x = _inputs(name, (3, n), dtype)
        got = getattr(et.fft, name)(et.tensor(x), norm=norm)
        _compare(got, getattr(torch.fft, name)(torch.tensor(x), norm=norm), dtype)


@pytest.mark.parametrize("name", ONE_D)
def test_n_trims_or_pads_and_dim_picks_the_axis(library, name):
    x = _inputs(name, (5, 6, 4), "complex128" if name not in REAL_ONLY else "float64")
    for n, dim in [(3, 1), (9, 1), (6, 0), (11, -1), (2, -3)]:
        got = getattr(et.fft, name)(et.tensor(x), n=n, dim=dim)
        _compare(got, getattr(torch.fft, name)(torch.tensor(x), n=n, dim=dim), x.dtype)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("name", TWO_D + N_D)
def test_multi_dimensional_transforms(library, name, norm):
    cases = [
        ((4, 6), {}),
        ((3, 5, 7), {}),
        ((2, 8, 9), {"dim": (0, 2)}),
        ((6, 5, 4), {"s": (4, 7)}),
        ((3, 4, 5), {"s": (5, 3), "dim": (2, 0)}),
    ]
    if name in N_D:
        cases += [((3, 4, 5), {"dim": (1,)}), ((2, 3, 4), {"s": (3, 3, 6)})]
    for shape, kw in cases:
        for dtype in _dtypes(name):
            x = _inputs(name, shape, dtype)
            got = getattr(et.fft, name)(et.tensor(x), norm=norm, **kw)
            _compare(got, getattr(torch.fft, name)(torch.tensor(x), norm=norm, **kw), dtype)


@pytest.mark.parametrize(
    "name", ["fft", "ifft", "rfft", "irfft", "fft2", "rfftn", "irfftn", "hfft", "ihfft"]
)
def test_agrees_with_numpy(library, name):
    x = _inputs(name, (6, 10), "float64" if name in REAL_ONLY else "complex128")
    got = getattr(et.fft, name)(et.tensor(x)).numpy()
    np.testing.assert_allclose(got, getattr(np.fft, name)(x), atol=1e-12)


@pytest.fixture
def two_threads():
    before = et.get_num_threads()
    et.set_num_threads(2)
    yield
    et.set_num_threads(before)


def test_large_and_awkward_lengths(library, two_threads):
    """Long signals take the threaded paths (from 1 MB a four-step split into transforms of
    about sqrt(n) computed side by side; a large prime length in one piece)."""
    for n in [2**14, 2**16, 3**10, 5**7, 7**6, 65537, 2 * 3 * 5 * 7 * 11 * 13]:
        x = _inputs("fft", (n,), "complex128")
        _compare(et.fft.fft(et.tensor(x)), torch.fft.fft(torch.tensor(x)), "complex128")
        r = x.real.copy()
        _compare(et.fft.irfft(et.fft.rfft(et.tensor(r)), n=n), torch.tensor(r), "float64")


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", [2**17, 2**20, 3**12, 5**8, 2 * 16 * 7919, 2 * 65537, 1000**2])
def test_four_step_lengths(library, two_threads, n, dtype):
    """The four-step split of one long signal (n1 x n2 columns then rows, twiddled between,
    written transposed): forward and inverse, every norm, in place through out=, and a batch
    smaller than the threads; against numpy.fft in double precision (MKL's own transform of
    2 * 16 * 7919 in single precision, torch.fft's, is 100 times less accurate)."""
    if library == "builtin" and n > 2**17:
        pytest.skip("the built-in FFT has no four-step path; one long size is enough for it")

    def reference(name, x, norm=None):
        return torch.from_numpy(
            getattr(np.fft, name)(x.astype(np.complex128), norm=norm).astype(dtype)
        )

    x = _inputs("fft", (n,), dtype)
    for name, norm in [("fft", None), ("ifft", None), ("fft", "ortho"), ("ifft", "forward")]:
        _compare(getattr(et.fft, name)(et.tensor(x), norm=norm), reference(name, x, norm), dtype)
    y = et.tensor(x)
    et.fft.fft(y, out=y)
    _compare(y, reference("fft", x), dtype)
    if n <= 2**17:  # a batch of 3 signals on 4 threads: each signal split on its own
        before = et.get_num_threads()
        et.set_num_threads(4)
        try:
            xb = _inputs("fft", (3, n), dtype)
            _compare(et.fft.fft(et.tensor(xb)), reference("fft", xb), dtype)
        finally:
            et.set_num_threads(before)


def test_large_multi_dimensional_transforms(library, two_threads):
    """n-D transforms of a small batch: one threaded pass per dim (rows, strided columns)."""
    for shape, dim in [((256, 256), (0, 1)), ((1, 96, 80, 12), (1, 2, 3)), ((2, 300, 200), (2, 1))]:
        for dtype in ("complex64", "complex128", "float32", "float64"):
            x = _inputs("fftn", shape, dtype)
            _compare(
                et.fft.fftn(et.tensor(x), dim=dim), torch.fft.fftn(torch.tensor(x), dim=dim), dtype
            )
            if dtype.startswith("float"):
                _compare(
                    et.fft.rfftn(et.tensor(x), dim=dim),
                    torch.fft.rfftn(torch.tensor(x), dim=dim),
                    dtype,
                )
            else:
                _compare(
                    et.fft.irfftn(et.tensor(x), dim=dim),
                    torch.fft.irfftn(torch.tensor(x), dim=dim),
                    dtype,
                )


def test_integer_and_bool_inputs_use_the_default_float_dtype(library):
    for x in (torch.arange(6), torch.tensor([True, False, True])):
        e = et.tensor(x.numpy())
        _compare(et.fft.fft(e), torch.fft.fft(x), "complex64")
        _compare(et.fft.rfft(e), torch.fft.rfft(x), "complex64")


def test_non_contiguous_and_batched_inputs(library):
    x = _inputs("fft", (8, 6, 10), "complex128")
    e, t = et.tensor(x), torch.tensor(x)
    _compare(
        et.fft.fft(e.transpose(0, 2)[:, ::2], dim=1),
        torch.fft.fft(t.transpose(0, 2)[:, ::2], dim=1),
        "complex128",
    )
    _compare(et.fft.rfft2(e.real[..., ::3]), torch.fft.rfft2(t.real[..., ::3]), "float64")


def test_the_input_is_left_unchanged(library):
    x = _inputs("irfft", (4, 5), "complex128")
    e = et.tensor(x)
    et.fft.irfft(e)
    et.fft.irfftn(e)
    et.fft.hfft2(e)
    np.testing.assert_array_equal(e.numpy(), x)


def test_empty_batches(library):
    """An empty batch gives an empty result of the right shape (NumPy's; PyTorch 2.13's MKL
    path raises "Inconsistent configuration parameters" instead)."""
    for name in ("fft", "rfft", "irfft"):
        x = _inputs(name, (0, 6), "float64")
        got = getattr(et.fft, name)(et.tensor(x))
        assert tuple(got.shape) == getattr(np.fft, name)(x).shape


def test_round_trips(library):
    x = _inputs("fft", (3, 7, 10), "complex128")
    e = et.tensor(x)
    for norm in NORMS:
        np.testing.assert_allclose(
            et.fft.ifftn(et.fft.fftn(e, norm=norm), norm=norm).numpy(), x, atol=1e-12
        )
        np.testing.assert_allclose(
            et.fft.hfft(et.fft.ihfft(e.real, norm=norm), n=10, norm=norm).numpy(),
            x.real,
            atol=1e-12,
        )


def test_empty_dim_list_is_a_complex_copy():
    x = torch.randn(4)
    got = et.fft.fftn(et.tensor(x.numpy()), dim=())
    _compare(got, torch.fft.fftn(x, dim=()), "complex64")


def test_out_argument():
    x = torch.randn(2, 8, dtype=torch.float64)
    out = et.empty(2, 5, dtype=et.complex128)
    res = et.fft.rfft(et.tensor(x.numpy()), out=out)
    assert res is out
    _compare(out, torch.fft.rfft(x), "complex128")
    with pytest.raises(RuntimeError, match="out= must have the result's shape"):
        et.fft.rfft(et.tensor(x.numpy()), out=et.empty(3, dtype=et.complex128))


def test_frequencies_and_shifts():
    for n, d in [(1, 1.0), (8, 1.0), (9, 0.1), (10, 2.5)]:
        _compare(et.fft.fftfreq(n, d), torch.fft.fftfreq(n, d), "float32")
        _compare(et.fft.rfftfreq(n, d), torch.fft.rfftfreq(n, d), "float32")
        _compare(
            et.fft.fftfreq(n, d, dtype=et.float64),
            torch.fft.fftfreq(n, d, dtype=torch.float64),
            "float64",
        )
    x = torch.arange(30.0).reshape(5, 6)
    e = et.tensor(x.numpy())
    for dim in (None, 0, 1, (0, 1), -1):
        _compare(et.fft.fftshift(e, dim), torch.fft.fftshift(x, dim), "float32")
        _compare(et.fft.ifftshift(e, dim), torch.fft.ifftshift(x, dim), "float32")
        _compare(et.fft.ifftshift(et.fft.fftshift(e, dim), dim), x, "float32")


ERRORS = [
    (lambda m, x, z: m.fft.fft(x, norm="bad"), RuntimeError, 'Invalid normalization mode: "bad"'),
    (
        lambda m, x, z: m.fft.rfft(z),
        RuntimeError,
        "rfft expects a real input tensor, but got ComplexFloat",
    ),
    (
        lambda m, x, z: m.fft.ihfft(z),
        RuntimeError,
        "ihfft expects a real input tensor, but got ComplexFloat",
    ),
    (lambda m, x, z: m.fft.fft(x, n=0), RuntimeError, r"Invalid number of data points \(0\)"),
    (lambda m, x, z: m.fft.irfft(z[:1]), RuntimeError, r"Invalid number of data points \(0\)"),
    (lambda m, x, z: m.fft.fft(x.half()), RuntimeError, "Unsupported dtype Half"),
    (
        lambda m, x, z: m.fft.fftn(x.reshape(2, 2), dim=(0, 0)),
        RuntimeError,
        "FFT dims must be unique",
    ),
    (
        lambda m, x, z: m.fft.fft(x, dim=2),
        IndexError,
        r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 2\)",
    ),
    (
        lambda m, x, z: m.fft.fft(x[0]),
        IndexError,
        "Dimension specified as -1 but tensor has no dimensions",
    ),
    (
        lambda m, x, z: m.fft.fftn(x, s=(2, 2)),
        RuntimeError,
        "Got shape with 2 values but input tensor only has 1 dimensions.",
    ),
    (
        lambda m, x, z: m.fft.fftn(x.reshape(2, 2), s=(2,), dim=(0, 1)),
        RuntimeError,
        "When given, dim and shape arguments must have the same length",
    ),
    (
        lambda m, x, z: m.fft.rfftn(x, dim=()),
        RuntimeError,
        "rfftn must transform at least one axis",
    ),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_are_pytorchs(case):
    fn, exc, msg = ERRORS[case]
    for m in (torch, et):
        x = m.tensor([1.0, 2.0, 3.0, 4.0])
        z = m.tensor([1 + 1j, 2.0, 3.0, 4.0], dtype=m.complex64)
        with pytest.raises(exc, match=msg):
            fn(m, x, z)


def test_the_core_ops_check_their_arguments():
    z = et.tensor([1 + 1j, 2, 3, 4], dtype=et.complex64)
    with pytest.raises(RuntimeError, match="normalization must be 0"):
        et._fft_c2c(z, [0], 3, True)
    with pytest.raises(RuntimeError, match="takes 3 input entries there, got 4"):
        et._fft_c2r(z, [0], 0, 5)
    with pytest.raises(RuntimeError, match="dtype"):
        et._fft_r2c(z, [0], 0, True)


def test_mkl_is_reported():
    assert et.backends.mkl.is_available() == ("mkl" in LIBRARIES)
    assert _C._fft_library() in LIBRARIES
    if not et.backends.mkl.is_available():
        with pytest.raises(RuntimeError, match="did not link MKL"):
            _C._fft_set_library("mkl")


WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
def test_windows(name):
    for n in (0, 1, 2, 7, 64):
        for periodic in (True, False):
            for e_dt, t_dt in ((et.float32, torch.float32), (et.float64, torch.float64)):
                got = getattr(et, name)(n, periodic, dtype=e_dt)
                want = getattr(torch, name)(n, periodic, dtype=t_dt)
                _compare(got, want, str(t_dt).split(".")[1])
    assert getattr(et, name)(4).dtype == et.float32
    for m in (et, torch):
        with pytest.raises(RuntimeError, match="expects floating point dtypes"):
            getattr(m, name)(4, dtype=m.int64)


def test_window_parameters():
    for alpha, beta in ((0.5, 0.5), (0.54, 0.46), (0.6, 0.3)):
        _compare(
            et.hamming_window(9, False, alpha, beta, dtype=et.float64),
            torch.hamming_window(9, False, alpha, beta, dtype=torch.float64),
            "float64",
        )
    for beta in (0.0, 1.0, 8.6, 30.0):
        _compare(
            et.kaiser_window(11, True, beta, dtype=et.float64),
            torch.kaiser_window(11, True, beta, dtype=torch.float64),
            "float64",
        )


@pytest.mark.parametrize(
    "beta", [-9223372036854775809, -800.0, 1e6, 713.5, float("nan"), float("inf")]
)
def test_kaiser_window_of_huge_or_non_finite_beta_matches_torch_without_hanging(beta):
    """The power series of I0 needs ~|beta| / 2 terms: beyond float64's range (|x| > 714) it
    is infinite, and a NaN or infinite beta gives NaN, as in PyTorch (this hung before)."""
    got = et.kaiser_window(5, False, beta, dtype=et.float64).numpy()
    want = torch.kaiser_window(5, False, beta, dtype=torch.float64).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, equal_nan=True)


def test_window_float_parameters_take_python_ints_of_any_size():
    big = -9223372036854775809
    _compare(
        et.hamming_window(3, False, 1, big, dtype=et.float64),
        torch.hamming_window(3, False, 1, big, dtype=torch.float64),
        "float64",
    )


STFT_CASES = [
    dict(n_fft=64),
    dict(n_fft=64, hop_length=10, win_length=50),
    dict(n_fft=32, center=False),
    dict(n_fft=64, normalized=True),
    dict(n_fft=64, onesided=False),
    dict(n_fft=16, pad_mode="constant"),
    dict(n_fft=16, pad_mode="replicate"),
    dict(n_fft=16, pad_mode="circular"),
]


@pytest.mark.parametrize("case", range(len(STFT_CASES)))
def test_stft_and_istft(case):
    kw = STFT_CASES[case]
    x = RNG.standard_normal((2, 300))
    win = kw.get("win_length", kw["n_fft"])
    for batched in (True, False):
        xe, xt = et.tensor(x if batched else x[0]), torch.tensor(x if batched else x[0])
        we, wt = et.hann_window(win, dtype=et.float64), torch.hann_window(win, dtype=torch.float64)
        se = et.stft(xe, window=we, return_complex=True, **kw)
        st = torch.stft(xt, window=wt, return_complex=True, **kw)
        _compare(se, st, "complex128")
        _compare(xe.stft(window=we, return_complex=True, **kw), st, "complex128")
        inv = {k: v for k, v in kw.items() if k != "pad_mode"}
        if kw.get("center", True):
            ie = et.istft(se, window=we, length=300, **inv)
            _compare(ie, torch.istft(st, window=wt, length=300, **inv), "float64")
            np.testing.assert_allclose(ie.numpy(), x if batched else x[0], atol=1e-12)


def test_stft_of_complex_signals_and_real_views():
    z = RNG.standard_normal((3, 80)) + 1j * RNG.standard_normal((3, 80))
    w = torch.hann_window(16, dtype=torch.float64)
    st = torch.stft(torch.tensor(z), 16, window=w, return_complex=True)
    se = et.stft(et.tensor(z), 16, window=et.tensor(w.numpy()), return_complex=True)
    _compare(se, st, "complex128")
    x = RNG.standard_normal(80)
    real = et.stft(et.tensor(x), 16, window=et.tensor(w.numpy()), return_complex=False)
    _compare(
        real,
        torch.view_as_real(torch.stft(torch.tensor(x), 16, window=w, return_complex=True)),
        "float64",
    )
    ie = et.istft(se, 16, window=et.tensor(w.numpy()), return_complex=True, onesided=False)
    _compare(ie, torch.istft(st, 16, window=w, return_complex=True, onesided=False), "complex128")


STFT_ERRORS = [
    (lambda m, x, w: m.stft(x, 16, window=w), "stft requires the return_complex parameter"),
    (
        lambda m, x, w: m.stft(x, 16, window=w[:8], return_complex=True),
        "expected a 1D window tensor of size equal to win_length=16",
    ),
    (lambda m, x, w: m.stft(x, 0, window=w, return_complex=True), "n_fft"),
    (
        lambda m, x, w: m.stft(x.reshape(1, 2, 20), 16, window=w, return_complex=True),
        "expected a 1D or 2D tensor",
    ),
    (
        lambda m, x, w: m.istft(
            m.stft(x, 16, window=w, return_complex=True), 16, window=w, center=False, hop_length=16
        ),
        "window overlap add min",
    ),
]


@pytest.mark.parametrize("case", range(len(STFT_ERRORS)))
def test_stft_errors_are_pytorchs(case):
    fn, msg = STFT_ERRORS[case]
    for m in (torch, et):
        x = m.tensor(RNG.standard_normal(40))
        w = m.hann_window(16, dtype=m.float64)
        with pytest.raises(RuntimeError, match=msg):
            fn(m, x, w)


def test_stft_without_a_window_warns_as_pytorch():
    x = RNG.standard_normal(64)
    for m in (torch, et):
        with pytest.warns(UserWarning, match="A window was not provided"):
            m.stft(m.tensor(x), 16, return_complex=True)
