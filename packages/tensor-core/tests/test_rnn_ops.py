"""_lstm_cell_ and _lstm_cell_backward_ (the kernels behind ember_nn's LSTM) against a
NumPy reference, and their argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import ember_tensor as et


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lstm_cell_forward_and_backward_match_numpy(dtype):
    rng = np.random.default_rng(0)
    n, h = 5, 37  # an odd width: the vector loops' tails
    gates = rng.standard_normal((n, 4 * h)) * 2
    c_prev, dh, dc = (rng.standard_normal((n, h)) for _ in range(3))
    i, f, g, o = sigmoid(gates[:, :h]), sigmoid(gates[:, h:2 * h]), np.tanh(
        gates[:, 2 * h:3 * h]), sigmoid(gates[:, 3 * h:])
    c = f * c_prev + i * g
    tc = np.tanh(c)
    want_h = o * tc
    dct = dc + dh * o * (1 - tc ** 2)
    want_dg = np.concatenate([dct * g * i * (1 - i), dct * c_prev * f * (1 - f),
                              dct * i * (1 - g ** 2), dh * tc * o * (1 - o)], 1)

    def t(a):
        return et.from_numpy(np.ascontiguousarray(a.astype(dtype)))

    eg, ecp = t(gates), t(c_prev)
    ec, eh = et.empty((n, h), dtype=getattr(et, dtype)), et.empty((n, h), dtype=getattr(et, dtype))
    assert len(et._lstm_cell_(eg, ecp, ec, eh)) == 0
    tol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(eg.numpy(), np.concatenate([i, f, g, o], 1), rtol=tol, atol=tol)
    np.testing.assert_allclose(ec.numpy(), c, rtol=tol, atol=tol)
    np.testing.assert_allclose(eh.numpy(), want_h, rtol=tol, atol=tol)
    edc, edg = t(dc), et.empty((n, 4 * h), dtype=getattr(et, dtype))
    et._lstm_cell_backward_(eg, ec, ecp, t(dh), edc, edg)
    np.testing.assert_allclose(edg.numpy(), want_dg, rtol=tol, atol=tol)
    np.testing.assert_allclose(edc.numpy(), dct * f, rtol=tol, atol=tol)


def test_lstm_cell_errors():
    g, s = et.zeros(2, 8), et.zeros(2, 2)
    with pytest.raises(RuntimeError, match=r"^_lstm_cell_: expected gates of shape \(N, 4 \* H\), "
                                           r"got \[2, 7\]$"):
        et._lstm_cell_(et.zeros(2, 7), s, s, s)
    with pytest.raises(RuntimeError, match=r"^_lstm_cell_: expected c to be a contiguous "
                                           r"float32 tensor of shape \[2, 2\], got float32 of "
                                           r"shape \[2, 3\]$"):
        et._lstm_cell_(g, s, et.zeros(2, 3), s)
    with pytest.raises(RuntimeError, match=r"expected h to be .* \(not contiguous\)$"):
        et._lstm_cell_(g, s, s, et.zeros(2, 2).t())
    with pytest.raises(RuntimeError, match=r"expected c_prev to be a contiguous float32 tensor"):
        et._lstm_cell_(g, s.double(), s, s)
    with pytest.raises(RuntimeError, match="_lstm_cell_: dtype int64 is not supported"):
        et._lstm_cell_(et.zeros(2, 8, dtype=et.int64), s, s, s)
    with pytest.raises(NotImplementedError, match="expected float32 or float64 tensors, got "
                                                  "float16"):
        et._lstm_cell_(et.zeros(2, 8, dtype=et.float16), s, s, s)
    with pytest.raises(RuntimeError, match=r"^_lstm_cell_backward_: expected d_gates to be"):
        et._lstm_cell_backward_(g, s, s, s, s, et.zeros(2, 4))
