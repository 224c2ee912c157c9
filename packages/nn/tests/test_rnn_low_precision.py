"""LSTM under autocast (ember_tensor.amp, which ember.autocast re-exports): the projections
come in bfloat16, the core's recurrence runs in float32, and the results and gradients agree
with the float32 run within bfloat16's precision."""

import numpy as np
import pytest

import ember_nn as nn
import ember_tensor as et


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_under_bfloat16_autocast_matches_float32(bidirectional):
    et.manual_seed(0)
    lstm = nn.LSTM(6, 8, num_layers=2, bidirectional=bidirectional)
    x = et.tensor(np.random.default_rng(0).standard_normal((5, 3, 6)), dtype=et.float32)

    x32 = x.clone().requires_grad_()
    out32, _ = lstm(x32)
    out32.sum().backward()
    want_out, want_grad = out32.detach().numpy(), x32.grad.numpy()
    want_w = lstm.weight_hh_l0.grad.numpy().copy()
    lstm.zero_grad()

    xb = x.clone().requires_grad_()
    with et.amp.autocast("cpu", dtype=et.bfloat16):
        out, (h, c) = lstm(xb)
    assert out.dtype == h.dtype == c.dtype == et.bfloat16
    out.float().sum().backward()
    assert xb.grad.dtype == et.float32 and lstm.weight_hh_l0.grad.dtype == et.float32
    np.testing.assert_allclose(out.float().detach().numpy(), want_out, atol=5e-2)
    np.testing.assert_allclose(xb.grad.numpy(), want_grad, atol=1e-1, rtol=5e-2)
    np.testing.assert_allclose(lstm.weight_hh_l0.grad.numpy(), want_w, atol=1e-1, rtol=5e-2)
