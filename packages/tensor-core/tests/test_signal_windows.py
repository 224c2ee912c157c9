"""ember_tensor.signal.windows against torch.signal.windows: every window, symmetric and
periodic, both dtypes, the edge lengths and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_tensor as et

WINDOWS = {
    "bartlett": {}, "blackman": {}, "cosine": {}, "hamming": {}, "hann": {}, "nuttall": {},
    "exponential": {"tau": 2.5}, "gaussian": {"std": 0.7}, "kaiser": {"beta": 8.0},
    "general_cosine": {"a": [0.46, 0.23, 0.31]}, "general_hamming": {"alpha": 0.6},
}


@pytest.mark.parametrize("name", sorted(WINDOWS))
@pytest.mark.parametrize("M", [0, 1, 2, 7, 16])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_window_matches_torch(name, M, sym, dtype):
    kw = WINDOWS[name]
    got = getattr(et.signal.windows, name)(M, sym=sym, dtype=getattr(et, dtype), **kw)
    want = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dtype), **kw)
    assert str(got.dtype).rpartition(".")[2] == dtype and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize(("call", "match"), [
    (lambda m: m.signal.windows.hann(-1), "requires non-negative window length, got M=-1"),
    (lambda m: m.signal.windows.hann(3, dtype=m.int64), "expects float32 or float64 dtypes"),
    (lambda m: m.signal.windows.exponential(3, center=1.0), "Center must be None"),
    (lambda m: m.signal.windows.exponential(3, tau=-1.0), "Tau must be positive"),
    (lambda m: m.signal.windows.gaussian(3, std=0.0), "Standard deviation must be positive"),
    (lambda m: m.signal.windows.kaiser(3, beta=-1.0), "beta must be non-negative"),
])
def test_window_errors_match_torch(call, match):
    for m in (et, torch):
        with pytest.raises(ValueError, match=match):
            call(m)


def test_periodic_exponential_takes_a_center():
    got = et.signal.windows.exponential(6, center=1.5, sym=False)
    want = torch.signal.windows.exponential(6, center=1.5, sym=False)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6)
