"""ember_tensor.fft on CUDA (cuFFT, loaded at first use) against the CPU's transforms: every
1-, 2- and n-dimensional transform, every norm= mode, n= / s= / dim=, lengths that are powers
of two, primes and products of small primes, batched and non-contiguous inputs, more than three
transformed dims (cuFFT's limit), float64 / complex128, and stft / istft on the device.

Runs only where a GPU is present; ``EMBER_CUDA_TEST_DEVICE=cpu`` (``nox -s cuda_cpu_mode``)
runs it against the CPU, which checks the tests themselves.
"""

import numpy as np
import pytest

import ember_tensor as et
from cuda_testing import DEV, on, requires_device

pytestmark = requires_device

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
MULTI = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]
REAL_INPUT = {"rfft", "ihfft", "rfft2", "rfftn", "ihfftn"}
NORMS = [None, "backward", "ortho", "forward"]


def signal(name, shape, double=False, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if name not in REAL_INPUT:
        x = x + 1j * rng.standard_normal(shape)
        return et.tensor(x).to(et.complex128 if double else et.complex64)
    return et.tensor(x).to(et.float64 if double else et.float32)


def assert_spectrum_close(got, want, double=False):
    """got (on DEV) has want's dtype and shape, and the largest error is within a few ulps
    of the largest value times log2 of the size (FFT round-off grows with log n)."""
    assert got.device.type == DEV
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    g, w = got.cpu().numpy(), want.numpy()
    if w.size == 0:
        return
    eps = 1e-15 if double else 2e-7
    bound = 20 * eps * max(1.0, np.log2(w.size)) * max(np.abs(w).max(), 1e-300)
    assert np.abs(g.astype(np.complex128) - w.astype(np.complex128)).max() <= bound


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("n", [1, 16, 17, 243, 1000, 4096])
@pytest.mark.parametrize("norm", NORMS)
def test_one_dimensional_transforms(name, n, norm):
    if n == 1 and name in ("irfft", "hfft"):
        pytest.skip("one input point gives 0 output points: an error on every device")
    x = signal(name, (3, n), seed=n)
    f = getattr(et.fft, name)
    assert_spectrum_close(f(on(x), norm=norm), f(x, norm=norm))


@pytest.mark.parametrize("name", ONE_D)
def test_float64_n_and_dim(name):
    x = signal(name, (10, 6), double=True, seed=1)
    f = getattr(et.fft, name)
    for n in (4, 6, 15):
        assert_spectrum_close(f(on(x), n=n, dim=0), f(x, n=n, dim=0), double=True)
    assert_spectrum_close(f(on(x).t(), dim=-1), f(x.t(), dim=-1), double=True)


@pytest.mark.parametrize("name", MULTI)
@pytest.mark.parametrize("norm", NORMS)
def test_multi_dimensional_transforms(name, norm):
    x = signal(name, (2, 12, 10), seed=2)
    f = getattr(et.fft, name)
    assert_spectrum_close(f(on(x), norm=norm), f(x, norm=norm))
    if name.endswith("n"):
        kw = {"s": (9, 8), "dim": (0, 2)}
        assert_spectrum_close(f(on(x), norm=norm, **kw), f(x, norm=norm, **kw))


def test_more_than_three_transformed_dims_and_batches():
    x = signal("fftn", (3, 4, 5, 6, 7), double=True, seed=3)
    assert_spectrum_close(et.fft.fftn(on(x)), et.fft.fftn(x), double=True)
    assert_spectrum_close(
        et.fft.ifftn(on(x), dim=(1, 2, 3, 4)), et.fft.ifftn(x, dim=(1, 2, 3, 4)), double=True
    )
    r = signal("rfftn", (3, 4, 5, 6, 7), double=True, seed=4)
    assert_spectrum_close(et.fft.rfftn(on(r)), et.fft.rfftn(r), double=True)
    assert_spectrum_close(et.fft.irfftn(on(x)), et.fft.irfftn(x), double=True)


def test_large_transforms():
    for n in (2**20, 3**12, 2 * 3 * 5 * 7 * 11 * 13 * 17):
        x = signal("fft", (n,), seed=n)
        assert_spectrum_close(et.fft.fft(on(x)), et.fft.fft(x))
        r = signal("rfft", (n,), seed=n)
        assert_spectrum_close(et.fft.rfft(on(r)), et.fft.rfft(r))
    x = signal("fft2", (512, 512), seed=5)
    assert_spectrum_close(et.fft.fft2(on(x)), et.fft.fft2(x))


def test_round_trips_and_the_input_unchanged():
    x = signal("fft", (4, 64), double=True, seed=6)
    d = on(x)
    back = et.fft.ifft(et.fft.fft(d))
    np.testing.assert_allclose(back.cpu().numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_array_equal(d.cpu().numpy(), x.numpy())
    r = signal("rfft", (4, 63), double=True, seed=7)
    spec = et.fft.rfft(on(r))
    before = spec.cpu().numpy().copy()
    np.testing.assert_allclose(et.fft.irfft(spec, n=63).cpu().numpy(), r.numpy(), atol=1e-12)
    np.testing.assert_array_equal(spec.cpu().numpy(), before)  # c2r must not overwrite its input


def test_integer_input_and_empty_batches():
    i = et.arange(12).reshape(3, 4)
    assert_spectrum_close(et.fft.fft(on(i)), et.fft.fft(i))
    e = et.empty((0, 8))
    assert_spectrum_close(et.fft.rfft(on(e)), et.fft.rfft(e))


def test_stft_and_istft():
    rng = np.random.default_rng(8)
    x = et.tensor(rng.standard_normal((2, 400)))
    w = et.hann_window(64, dtype=et.float64)
    spec = et.stft(x, 64, hop_length=16, window=w, return_complex=True)
    dspec = et.stft(on(x), 64, hop_length=16, window=on(w), return_complex=True)
    assert_spectrum_close(dspec, spec, double=True)
    back = et.istft(dspec, 64, hop_length=16, window=on(w), length=400)
    assert back.device.type == DEV
    np.testing.assert_allclose(back.cpu().numpy(), x.numpy(), atol=1e-10)
