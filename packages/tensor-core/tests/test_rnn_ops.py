"""_lstm_forward_ / _lstm_backward_ and _gru_forward_ / _gru_backward_ (the recurrences
behind ember_nn's LSTM and GRU) against NumPy references of the recurrence and of its
backpropagation through time (the LSTM's at every SIMD level), and their argument errors."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import ember_tensor as et

# (steps, batch, hidden): ragged row blocks and partial unit panels at every vector width
SHAPES = [(4, 7, 37), (3, 12, 70), (2, 1, 1)]


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def reference(x_proj, h0, c0, w, reverse, d_outs, dh, dc):
    """Forward (acts, cells, outs) and backward (d_gates, dh0, dc0) in float64 NumPy."""
    steps, _, four_h = x_proj.shape
    size = four_h // 4
    order = list(range(steps))[::-1] if reverse else list(range(steps))
    acts = np.empty_like(x_proj)
    cells = np.empty((steps, *h0.shape))
    outs = np.empty((steps, *h0.shape))
    h, c = h0, c0
    for t in order:
        z = x_proj[t] + h @ w.T
        i, f, g, o = (sigmoid(z[:, :size]), sigmoid(z[:, size:2 * size]),
                      np.tanh(z[:, 2 * size:3 * size]), sigmoid(z[:, 3 * size:]))
        c = f * c + i * g
        h = o * np.tanh(c)
        acts[t], cells[t], outs[t] = np.concatenate([i, f, g, o], 1), c, h
    d_gates = np.empty_like(x_proj)
    for k, t in enumerate(order[::-1]):
        c_prev = c0 if k == steps - 1 else cells[order[steps - 2 - k]]
        if d_outs is not None:
            dh = dh + d_outs[t]
        i, f, g, o = np.split(acts[t], 4, 1)
        tc = np.tanh(cells[t])
        dct = dc + dh * o * (1 - tc ** 2)
        d_gates[t] = np.concatenate([dct * g * i * (1 - i), dct * c_prev * f * (1 - f),
                                     dct * i * (1 - g ** 2), dh * tc * o * (1 - o)], 1)
        dc = dct * f
        dh = d_gates[t] @ w
    return acts, cells, outs, d_gates, dh, dc


def check_all() -> None:
    """Every shape, dtype, direction and d_outs given or not; raises AssertionError."""
    rng = np.random.default_rng(0)
    for steps, n, h in SHAPES:
        for dtype in ("float32", "float64"):
            for reverse in (False, True):
                for with_d_outs in (True, False):
                    x = rng.standard_normal((steps, n, 4 * h)) * 1.5
                    h0, c0, dh, dc = (rng.standard_normal((n, h)) for _ in range(4))
                    w = rng.standard_normal((4 * h, h)) / np.sqrt(h)
                    d_outs = rng.standard_normal((steps, n, h)) if with_d_outs else None
                    want = reference(x, h0, c0, w, reverse, d_outs, dh, dc)

                    def t(a, dtype=dtype):
                        return et.from_numpy(np.ascontiguousarray(a.astype(dtype)))

                    dt = getattr(et, dtype)
                    acts = et.empty((steps, n, 4 * h), dtype=dt)
                    cells, outs = (et.empty((steps, n, h), dtype=dt) for _ in range(2))
                    assert et._lstm_forward_(t(x), t(h0), t(c0), t(w), reverse, acts, cells,
                                             outs) == ()
                    e_dh, e_dc = t(dh), t(dc)
                    d_gates = et.empty((steps, n, 4 * h), dtype=dt)
                    et._lstm_backward_(acts, cells, t(c0), t(w),
                                       None if d_outs is None else t(d_outs), reverse, e_dh,
                                       e_dc, d_gates)
                    tol = 2e-5 if dtype == "float32" else 1e-12
                    for name, got, expect in zip(
                            ("acts", "cells", "outs", "d_gates", "dh0", "dc0"),
                            (acts, cells, outs, d_gates, e_dh, e_dc), want):
                        np.testing.assert_allclose(
                            got.numpy(), expect, rtol=tol, atol=tol,
                            err_msg=f"{name}: shape {(steps, n, h)} {dtype} reverse={reverse} "
                                    f"d_outs={with_d_outs}")


def test_lstm_recurrence_matches_numpy():
    check_all()


@pytest.mark.parametrize("level", ["default", "avx2"])
def test_lstm_recurrence_other_levels(level):
    """The narrower vector widths (their own packing and tiles) in a child process."""
    here = os.path.dirname(os.path.abspath(__file__))
    code = (f"import sys; sys.path.insert(0, {here!r}); import test_rnn_ops; "
            "test_rnn_ops.check_all()")
    env = {**os.environ, "EMBER_CPU_CAPABILITY": level}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_lstm_recurrence_zero_steps_leaves_gradients():
    w, s = et.zeros(8, 2), et.ones(3, 2)
    empty_gates, empty_states = et.zeros(0, 3, 8), et.zeros(0, 3, 2)
    et._lstm_forward_(empty_gates, s, s, w, False, empty_gates, empty_states, empty_states)
    dh, dc = et.full((3, 2), 2.0), et.full((3, 2), 3.0)
    et._lstm_backward_(empty_gates, empty_states, s, w, None, False, dh, dc, empty_gates)
    assert dh.tolist() == [[2.0, 2.0]] * 3 and dc.tolist() == [[3.0, 3.0]] * 3


def test_lstm_recurrence_errors():
    g, s, w = et.zeros(3, 2, 8), et.zeros(2, 2), et.zeros(8, 2)
    st = et.zeros(3, 2, 2)
    with pytest.raises(RuntimeError, match=r"^_lstm_forward_: expected x_proj of shape "
                                           r"\(T, N, 4 \* H\), got \[3, 2, 7\]$"):
        et._lstm_forward_(et.zeros(3, 2, 7), s, s, w, False, g, st, st)
    with pytest.raises(RuntimeError, match=r"^_lstm_forward_: expected w_hh to be a contiguous "
                                           r"float32 tensor of shape \[8, 2\], got float32 of "
                                           r"shape \[2, 8\] \(not contiguous\)$"):
        et._lstm_forward_(g, s, s, w.t(), False, g, st, st)
    with pytest.raises(RuntimeError, match=r"expected cells to be a contiguous float32 tensor of "
                                           r"shape \[3, 2, 2\], got float64"):
        et._lstm_forward_(g, s, s, w, False, g, st.double(), st)
    with pytest.raises(RuntimeError, match=r"expected h0 to be .* shape \[2, 2\], got float32 of "
                                           r"shape \[3, 2\]$"):
        et._lstm_forward_(g, et.zeros(3, 2), s, w, False, g, st, st)
    with pytest.raises(RuntimeError, match="_lstm_forward_: dtype int64 is not supported"):
        et._lstm_forward_(g.long(), s, s, w, False, g, st, st)
    with pytest.raises(RuntimeError, match=r"^_lstm_backward_: expected d_outs to be a contiguous "
                                           r"float32 tensor of shape \[3, 2, 2\]"):
        et._lstm_backward_(g, st, s, w, et.zeros(3, 2, 3), False, s, s, g)
    with pytest.raises(RuntimeError, match=r"^_lstm_backward_: expected d_gates to be"):
        et._lstm_backward_(g, st, s, w, None, False, s, s, et.zeros(3, 2, 4))


# ---- GRU: _gru_forward_ and _gru_backward_ ----

def gru_reference(x_proj, h0, w, b, reverse, d_outs, dh):
    """Forward (acts, hidden_n, outs) and backward (d_x, d_gh, dh0) in float64 NumPy."""
    steps, _, three_h = x_proj.shape
    size = three_h // 3
    order = list(range(steps))[::-1] if reverse else list(range(steps))
    acts = np.empty_like(x_proj)
    hidden_n = np.empty((steps, *h0.shape))
    outs = np.empty((steps, *h0.shape))
    h = h0
    for t in order:
        gh = h @ w.T + (b if b is not None else 0)
        r = sigmoid(x_proj[t, :, :size] + gh[:, :size])
        z = sigmoid(x_proj[t, :, size:2 * size] + gh[:, size:2 * size])
        n = np.tanh(x_proj[t, :, 2 * size:] + r * gh[:, 2 * size:])
        h = n + z * (h - n)
        acts[t], hidden_n[t], outs[t] = np.concatenate([r, z, n], 1), gh[:, 2 * size:], h
    d_x, d_gh = np.empty_like(x_proj), np.empty_like(x_proj)
    for k, t in enumerate(order[::-1]):
        h_prev = h0 if k == steps - 1 else outs[order[steps - 2 - k]]
        if d_outs is not None:
            dh = dh + d_outs[t]
        r, z, n = np.split(acts[t], 3, 1)
        d_n = dh * (1 - z) * (1 - n ** 2)
        d_z = dh * (h_prev - n) * z * (1 - z)
        d_r = d_n * hidden_n[t] * r * (1 - r)
        d_x[t] = np.concatenate([d_r, d_z, d_n], 1)
        d_gh[t] = np.concatenate([d_r, d_z, d_n * r], 1)
        dh = d_gh[t] @ w + dh * z
    return acts, hidden_n, outs, d_x, d_gh, dh


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("with_d_outs,with_bias", [(True, True), (False, False)])
@pytest.mark.parametrize("shape", [(4, 7, 37), (1, 1, 50), (2, 3, 1)])
def test_gru_recurrence_matches_numpy(dtype, reverse, with_d_outs, with_bias, shape):
    steps, n, h = shape
    rng = np.random.default_rng(1)
    x = rng.standard_normal((steps, n, 3 * h)) * 1.5
    h0, dh = (rng.standard_normal((n, h)) for _ in range(2))
    w = rng.standard_normal((3 * h, h)) / np.sqrt(h)
    b = rng.standard_normal(3 * h) if with_bias else None
    d_outs = rng.standard_normal((steps, n, h)) if with_d_outs else None
    want = gru_reference(x, h0, w, b, reverse, d_outs, dh)

    def t(a):
        return None if a is None else et.from_numpy(np.ascontiguousarray(a.astype(dtype)))

    dt = getattr(et, dtype)
    acts = et.empty((steps, n, 3 * h), dtype=dt)
    hidden_n, outs = (et.empty((steps, n, h), dtype=dt) for _ in range(2))
    assert et._gru_forward_(t(x), t(h0), t(w), t(b), reverse, acts, hidden_n, outs) == ()
    e_dh = t(dh)
    d_x, d_gh = (et.empty((steps, n, 3 * h), dtype=dt) for _ in range(2))
    et._gru_backward_(acts, hidden_n, outs, t(h0), t(w), t(d_outs), reverse, e_dh, d_x, d_gh)
    tol = 2e-5 if dtype == "float32" else 1e-12
    for name, got, expect in zip(("acts", "hidden_n", "outs", "d_x", "d_gh", "dh0"),
                                 (acts, hidden_n, outs, d_x, d_gh, e_dh), want):
        np.testing.assert_allclose(got.numpy(), expect, rtol=tol, atol=tol, err_msg=name)


def test_gru_recurrence_zero_steps_and_errors():
    w, s = et.zeros(6, 2), et.ones(3, 2)
    gates, states = et.zeros(0, 3, 6), et.zeros(0, 3, 2)
    et._gru_forward_(gates, s, w, None, False, gates, states, states)
    dh = et.full((3, 2), 2.0)
    et._gru_backward_(gates, states, states, s, w, None, False, dh, gates, gates)
    assert dh.tolist() == [[2.0, 2.0]] * 3
    g, s, w, st = et.zeros(3, 2, 6), et.zeros(2, 2), et.zeros(6, 2), et.zeros(3, 2, 2)
    with pytest.raises(RuntimeError, match=r"^_gru_forward_: expected x_proj of shape "
                                           r"\(T, N, 3 \* H\), got \[3, 2, 7\]$"):
        et._gru_forward_(et.zeros(3, 2, 7), s, w, None, False, g, st, st)
    with pytest.raises(RuntimeError, match=r"^_gru_forward_: expected w_hh to be a contiguous "
                                           r"float32 tensor of shape \[6, 2\] on cpu, got "
                                           r"float32 of shape \[2, 6\] on cpu \(not contiguous\)$"):
        et._gru_forward_(g, s, w.t(), None, False, g, st, st)
    with pytest.raises(RuntimeError, match=r"expected b_hh to be a contiguous float32 tensor "
                                           r"of shape \[6\] on cpu, got float64"):
        et._gru_forward_(g, s, w, et.zeros(6, dtype=et.float64), False, g, st, st)
    with pytest.raises(RuntimeError, match=r"^_gru_backward_: expected d_outs to be a contiguous "
                                           r"float32 tensor of shape \[3, 2, 2\]"):
        et._gru_backward_(g, st, st, s, w, et.zeros(3, 2, 3), False, s, g, g)
    with pytest.raises(RuntimeError, match="_gru_forward_"):
        et._gru_forward_(g.long(), s, w, None, False, g, st, st)
