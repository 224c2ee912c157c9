"""Gradients of ember_tensor.fft: every transform (and the three core ops _fft_c2c, _fft_r2c
and _fft_c2r it is made of) against finite differences (gradcheck, gradgradcheck; complex
inputs and outputs as pairs of reals) and against PyTorch's gradients for the same random
grad_output."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_autograd
import ember_tensor as et
from ember_autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(7)
REAL_ONLY = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}
TRANSFORMS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft",
              "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
              "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]


def _array(shape, complex_):
    x = RNG.standard_normal(shape)
    return x + 1j * RNG.standard_normal(shape) if complex_ else x


def _check(fn, array, gradgrad=True):
    e = et.tensor(array, requires_grad=True)
    t = torch.tensor(array, requires_grad=True)
    e_out, t_out = fn(et, e), fn(torch, t)
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().resolve_conj().numpy(),
                               atol=1e-12)
    go = _array(tuple(t_out.shape), t_out.is_complex())
    (ge,) = ember_autograd.grad(e_out, e, et.tensor(go))
    (gt,) = torch.autograd.grad(t_out, t, torch.tensor(go))
    assert ge.dtype == e.dtype
    np.testing.assert_allclose(ge.numpy(), gt.resolve_conj().numpy(), atol=1e-10)
    assert gradcheck(lambda x: fn(et, x), (e,))
    if gradgrad:
        assert gradgradcheck(lambda x: fn(et, x), (e,))


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("name", TRANSFORMS)
def test_transform_gradients(name, norm):
    for complex_ in ([False] if name in REAL_ONLY else [False, True]):
        _check(lambda m, x: getattr(m.fft, name)(x, norm=norm), _array((3, 4), complex_),
               gradgrad=norm is None)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "ihfft"])
def test_gradients_with_n_trimming_and_padding(name):
    complex_ = name not in REAL_ONLY
    for n in (3, 7):
        _check(lambda m, x, n=n: getattr(m.fft, name)(x, n=n, dim=0), _array((5, 2), complex_),
               gradgrad=False)


def test_multi_dimensional_gradients_with_s_and_dim():
    _check(lambda m, x: m.fft.rfftn(x, s=(3, 6), dim=(0, 2)), _array((2, 3, 5), False))
    _check(lambda m, x: m.fft.irfftn(x, s=(4, 4), dim=(2, 0)), _array((3, 2, 3), True))
    _check(lambda m, x: m.fft.hfft2(x, s=(3, 5)), _array((2, 3, 3), True))


@pytest.mark.parametrize("args", [([1], 0, True), ([0, 1], 1, False), ([1, 0], 2, True)])
def test_fft_c2c_gradients(args):
    _check(lambda m, x: m._fft_c2c(x, *args), _array((3, 4), True))


@pytest.mark.parametrize("args", [([1], 0, True), ([1], 1, False), ([0, 1], 2, True)])
def test_fft_r2c_gradients(args):
    _check(lambda m, x: m._fft_r2c(x, *args), _array((3, 5), False))


@pytest.mark.parametrize("args", [([1], 0, 6), ([1], 2, 5), ([0, 1], 1, 4)])
def test_fft_c2r_gradients(args):
    """The one-sided input need not be Hermitian: the gradient counts the entries whose
    mirror image lies outside it twice, as PyTorch's."""
    _check(lambda m, x: m._fft_c2r(x, *args), _array((3, args[2] // 2 + 1), True))


def test_spectral_loss_trains_a_filter():
    """A learnable frequency response fitted through rfft / irfft matches PyTorch's step."""
    sig = RNG.standard_normal((4, 32))
    target = RNG.standard_normal((4, 32))
    resp = RNG.standard_normal(17)
    results = []
    for m in (et, torch):
        w = m.tensor(resp, requires_grad=True)
        out = m.fft.irfft(m.fft.rfft(m.tensor(sig)) * w, n=32)
        loss = ((out - m.tensor(target)) ** 2).mean()
        loss.backward()
        results.append((loss.item(), w.grad.numpy().copy()))
    assert abs(results[0][0] - results[1][0]) < 1e-12
    np.testing.assert_allclose(results[0][1], results[1][1], atol=1e-12)


def test_stft_and_istft_gradients():
    """The short-time transform and its inverse (through their ops: framing, windowing, the
    transforms, overlap-add)."""
    _check(lambda m, t: m.stft(t, 16, 4, window=m.hann_window(16, dtype=m.float64),
                               return_complex=True), _array((2, 40), False), gradgrad=False)
    _check(lambda m, t: m.stft(t, 8, 3, 6, window=m.hamming_window(6, dtype=m.float64),
                               center=False, return_complex=True), _array((30,), True),
           gradgrad=False)
    _check(lambda m, t: m.istft(t, 16, 4, window=m.hann_window(16, dtype=m.float64)),
           _array((9, 11), True), gradgrad=False)
