"""The direct depthwise convolution (groups == C; ops/conv/conv_depthwise_cpu.cpp): conv2d
and its two backward ops against PyTorch in float64 and float32, over MobileNetV2's layers and
odd shapes (kernels, strides, padding, dilation, multipliers, tiny planes, empty batches),
non-contiguous arguments, a finite-difference check of the backward ops against the forward,
determinism across thread counts, infinities and NaNs, and every CPU level and the im2col
fallback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import assert_close, tensor


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


# (N, C, H, W), multiplier, kernel, stride, padding, dilation
MOBILENET = [
    ((2, 32, 32, 32), 1, 3, 1, 1, 1),
    ((8, 96, 32, 32), 1, 3, 2, 1, 1),
    ((4, 144, 16, 16), 1, 3, 1, 1, 1),
    ((4, 144, 16, 16), 1, 3, 2, 1, 1),
    ((8, 96, 8, 8), 1, 3, 1, 1, 1),
    ((8, 96, 8, 8), 1, 3, 2, 1, 1),
    ((8, 96, 4, 4), 1, 3, 1, 1, 1),
    ((8, 96, 4, 4), 1, 3, 2, 1, 1),
    ((8, 96, 2, 2), 1, 3, 1, 1, 1),
    ((2, 16, 56, 56), 1, 3, 1, 1, 1),
    ((3, 24, 56, 56), 1, 3, 2, 1, 1),
    ((4, 64, 7, 7), 1, 3, 1, 1, 1),
    ((4, 64, 7, 7), 1, 3, 2, 1, 1),
    ((2, 16, 14, 14), 1, 3, 2, 1, 1),
]
ODD = [
    ((2, 5, 11, 9), 1, 5, 1, 2, 1),  # kernel 5
    ((2, 4, 12, 10), 1, 3, 1, 2, 2),  # dilation 2
    ((2, 6, 9, 13), 1, (3, 2), (2, 3), (0, 1), (1, 2)),  # nothing square
    ((2, 4, 10, 10), 2, 3, 1, 0, 1),  # multiplier 2, no padding
    ((3, 3, 8, 8), 4, 2, 2, 0, 1),  # multiplier 4, even kernel
    ((1, 2, 2, 2), 1, 3, 1, 1, 1),  # a plane smaller than the kernel
    ((2, 3, 1, 1), 2, 3, 1, 1, 1),  # 1x1 planes
    ((1, 8, 5, 5), 1, 3, 1, 1, 1),  # N = 1
    ((4, 1, 9, 9), 3, 3, 2, 1, 1),  # C = 1 (groups 1), three filters
    ((2, 3, 20, 33), 1, 3, 2, 1, 1),  # wide, odd width, stride 2
    ((2, 3, 18, 40), 1, 3, 2, 3, 1),  # odd padding at stride 2
    ((2, 2, 17, 21), 2, (5, 3), (3, 2), (2, 0), (1, 2)),  # stride 3
    ((3, 4, 34, 34), 1, 3, 2, 0, 1),  # a last column no window reaches
    ((2, 3, 40, 17), 1, 4, 2, 3, 2),
    ((2, 2, 64, 5), 1, 3, (2, 1), 1, 1),
    ((2, 3, 30, 30), 1, 7, 1, 3, 1),  # 49 taps: several passes
    ((2, 8, 6, 6), 1, 1, 1, 0, 1),  # 1x1 kernel
    ((9, 5, 2, 2), 1, 3, 1, 1, 1),
    ((0, 4, 5, 5), 1, 3, 1, 1, 1),  # empty batch
]
CASES = MOBILENET + ODD


def _inputs(rng, case, bias=True):
    """x, w, b, gy (float64) and the conv2d arguments (stride, padding, dilation, groups)."""
    shape, mult, k, s, p, d = case
    n, c, h, w_ = shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = _pair(k), _pair(s), _pair(p), _pair(d)
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w_ + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    x = rng.standard_normal(shape)
    w = rng.standard_normal((c * mult, 1, kh, kw))
    b = rng.standard_normal(c * mult) if bias else None
    gy = rng.standard_normal((n, c * mult, oh, ow))
    return x, w, b, gy, (_pair(s), _pair(p), _pair(d), c)


def _refs(x, w, b, gy, args):
    """conv2d's output and input/weight gradients for gy, by torch in float64."""
    s, p, d, g = args
    tx = torch.from_numpy(x).requires_grad_()
    tw = torch.from_numpy(w).requires_grad_()
    y = torch.nn.functional.conv2d(tx, tw, None if b is None else torch.from_numpy(b), s, p, d, g)
    if y.numel() == 0:
        return y.detach().numpy(), np.zeros_like(x), np.zeros_like(w)
    gx, gw = torch.autograd.grad(y, (tx, tw), torch.from_numpy(gy))
    return y.detach().numpy(), gx.numpy(), gw.numpy()


def _terms(case, x, gy):
    """Products summed into one element of y, gx and gw (the tolerance's scale)."""
    _, mult, k, *_ = case
    taps = int(np.prod(_pair(k)))
    return taps, taps * mult, max(1, gy.shape[0] * gy.shape[2] * gy.shape[3])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_depthwise_forward(lib, rng, dtype, bias, case):
    x, w, b, gy, args = _inputs(rng, case, bias)
    got = lib.conv2d(
        tensor(lib, x, dtype), tensor(lib, w, dtype), tensor(lib, b, dtype) if bias else None, *args
    )
    want, _, _ = _refs(x, w, b, gy, args)
    assert_close(got, want, dtype, scale=10 * _terms(case, x, gy)[0])


@pytest.mark.usefixtures("ember_only")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_depthwise_backward_ops(lib, rng, dtype, case):
    x, w, _, gy, args = _inputs(rng, case, bias=False)
    _, want_gx, want_gw = _refs(x, w, None, gy, args)
    gx = lib.conv2d_backward_input(
        tensor(lib, gy, dtype), tensor(lib, w, dtype), list(x.shape), *args
    )
    gw = lib.conv2d_backward_weight(
        tensor(lib, gy, dtype), tensor(lib, x, dtype), list(w.shape), *args
    )
    _, tx, tw = _terms(case, x, gy)
    assert_close(gx, want_gx, dtype, scale=10 * tx)
    assert_close(gw, want_gw, dtype, scale=10 * tw)


# non-contiguous arguments: permuted and strided views of every tensor
@pytest.mark.usefixtures("ember_only")
@pytest.mark.parametrize("layout", ["transposed", "stepped"])
@pytest.mark.parametrize("case", [MOBILENET[3], MOBILENET[7], ODD[2], ODD[3]], ids=str)
def test_depthwise_non_contiguous(lib, rng, layout, case):
    x, w, b, gy, args = _inputs(rng, case)
    want_y, want_gx, want_gw = _refs(x, w, b, gy, args)
    tx, tw, tb, tgy = (tensor(lib, a, "float64", layout) for a in (x, w, b, gy))
    assert not tx.is_contiguous() and not tgy.is_contiguous()
    terms = _terms(case, x, gy)
    assert_close(lib.conv2d(tx, tw, tb, *args), want_y, "float64", scale=10 * terms[0])
    assert_close(
        lib.conv2d_backward_input(tgy, tw, list(x.shape), *args),
        want_gx,
        "float64",
        scale=10 * terms[1],
    )
    assert_close(
        lib.conv2d_backward_weight(tgy, tx, list(w.shape), *args),
        want_gw,
        "float64",
        scale=10 * terms[2],
    )


# The backward ops against the forward by central differences of <conv2d(x, w), gy> along a
# random direction (dx, dw), in float64: conv2d is bilinear, so the difference quotient is
# exact up to rounding.
@pytest.mark.usefixtures("ember_only")
@pytest.mark.parametrize(
    "case", [MOBILENET[8], ODD[0], ODD[2], ODD[4], ODD[5], ODD[11], ODD[12]], ids=str
)
def test_depthwise_gradients_by_finite_differences(lib, rng, case):
    x, w, _, gy, args = _inputs(rng, case, bias=False)
    dx, dw = rng.standard_normal(x.shape), rng.standard_normal(w.shape)

    def loss(xv, wv):
        y = lib.conv2d(tensor(lib, xv, "float64"), tensor(lib, wv, "float64"), None, *args)
        return float(np.sum(np.asarray(y.numpy()) * gy))

    h = 1e-3
    numeric = (loss(x + h * dx, w + h * dw) - loss(x - h * dx, w - h * dw)) / (2 * h)
    gx = lib.conv2d_backward_input(
        tensor(lib, gy, "float64"), tensor(lib, w, "float64"), list(x.shape), *args
    )
    gw = lib.conv2d_backward_weight(
        tensor(lib, gy, "float64"), tensor(lib, x, "float64"), list(w.shape), *args
    )
    analytic = float(np.sum(gx.numpy() * dx) + np.sum(gw.numpy() * dw))
    assert analytic == pytest.approx(numeric, rel=1e-8, abs=1e-8)


@pytest.mark.usefixtures("ember_only")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_depthwise_backward_weight_does_not_depend_on_threads(lib, rng, dtype):
    x, w, _, gy, args = _inputs(rng, ((16, 6, 20, 20), 1, 3, 1, 1, 1), bias=False)
    tgy, tx = tensor(lib, gy, dtype), tensor(lib, x, dtype)
    threads = lib.get_num_threads()
    try:
        results = []
        for n in (1, 2, 3):
            lib.set_num_threads(n)
            results.append(lib.conv2d_backward_weight(tgy, tx, list(w.shape), *args).numpy())
    finally:
        lib.set_num_threads(threads)
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


# Infinities and NaNs give PyTorch's results: the zero padding of the flat layouts must not
# turn an infinite weight or input into NaNs where the convolution has none.
@pytest.mark.usefixtures("ember_only")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_depthwise_non_finite_values(lib, rng, dtype):
    case = ((2, 3, 10, 10), 1, 3, 2, 0, 1)  # row 9 and column 9: in no window
    x, w, _, gy, args = _inputs(rng, case, bias=False)
    w[1, 0, 0, 2] = np.inf
    x[0, 2, 3, 9] = np.nan
    x[1, 2, 9, 4] = np.inf
    x[1, 0, 2, 2] = -np.inf  # in windows: channel 0's weight gradient is not finite
    want_y, want_gx, want_gw = _refs(x, w, None, gy, args)
    assert np.isfinite(want_gw[2]).all() and not np.isfinite(want_gw[0]).all()
    tx, tw, tgy = (tensor(lib, a, dtype) for a in (x, w, gy))
    for got, want in (
        (lib.conv2d(tx, tw, None, *args), want_y),
        (lib.conv2d_backward_input(tgy, tw, list(x.shape), *args), want_gx),
        (lib.conv2d_backward_weight(tgy, tx, list(w.shape), *args), want_gw),
    ):
        got = got.numpy().astype(np.float64)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
        fin = np.isfinite(want)
        np.testing.assert_allclose(got[fin], want[fin], rtol=1e-4, atol=1e-4)


# Every CPU level, the im2col path (EMBER_CONV_DEPTHWISE=0 EMBER_ONEDNN=0) and oneDNN
# (EMBER_CONV_DEPTHWISE=0 alone, where oneDNN loads), in a child process: the three
# ops in float32 and float64 on a few shapes, against torch here.
LEVEL_CHILD = r"""
import json, sys
import numpy as np
import ember_tensor as et
out = []
for dtype, (x, w, b, gy, s, p, d, g) in json.loads(sys.stdin.read()):
    x, w, b, gy = (et.from_numpy(np.asarray(a, dtype=dtype)) for a in (x, w, b, gy))
    y = et.conv2d(x, w, b, s, p, d, g)
    gx = et.conv2d_backward_input(gy, w, list(x.shape), s, p, d, g)
    gw = et.conv2d_backward_weight(gy, x, list(w.shape), s, p, d, g)
    out.append([t.numpy().astype(np.float64).tolist() for t in (y, gx, gw)])
print(json.dumps(out))
"""


@pytest.mark.usefixtures("ember_only")
@pytest.mark.parametrize(
    "env",
    [{"EMBER_CPU_CAPABILITY": v} for v in ("default", "avx2", "avx512")]
    + [{"EMBER_CONV_DEPTHWISE": "0", "EMBER_ONEDNN": "0"}, {"EMBER_CONV_DEPTHWISE": "0"}],
    ids=["default", "avx2", "avx512", "im2col", "onednn"],
)
def test_depthwise_at_every_cpu_level(rng, env):
    cases = [MOBILENET[1], MOBILENET[7], MOBILENET[8], ODD[2], ODD[3], ODD[9], ODD[15]]
    inputs = [_inputs(rng, c) for c in cases]
    payload = [
        [
            dtype,
            [a.tolist() for a in i[:4]] + [list(v) if isinstance(v, tuple) else v for v in i[4]],
        ]
        for dtype in ("float32", "float64")
        for i in inputs
    ]
    done = subprocess.run(
        [sys.executable, "-c", LEVEL_CHILD],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, **env),
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    for k, (dtype, _) in enumerate(payload):
        case, (x, w, b, gy, args) = cases[k % len(cases)], inputs[k % len(cases)]
        rounded = [a.astype(dtype).astype(np.float64) for a in (x, w, b, gy)]
        want = _refs(*rounded, args)
        rtol, atol = (1e-4, 2e-6) if dtype == "float32" else (1e-10, 1e-13)
        for name, a, ref, terms in zip(("y", "gx", "gw"), got[k], want, _terms(case, x, gy)):
            np.testing.assert_allclose(
                np.asarray(a),
                ref,
                rtol=rtol,
                atol=atol * terms,
                err_msg=f"{name} {case} {dtype} {env}",
            )
