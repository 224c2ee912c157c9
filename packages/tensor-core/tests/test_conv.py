"""conv2d, conv_transpose2d, im2col, col2im against PyTorch: shapes, strides, padding,
dilation, groups, dtypes, layouts and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from conftest import IS_TORCH, assert_close, tensor

# (N, C, H, W), O, kernel, stride, padding, dilation, groups
CONV = [
    ((2, 4, 7, 6), 6, 3, 1, 1, 1, 1),
    ((2, 4, 9, 8), 6, 3, 2, 0, 1, 2),
    ((1, 6, 10, 10), 3, (3, 2), (2, 1), (1, 2), (2, 1), 3),
    ((3, 1, 5, 5), 2, 5, 1, 2, 1, 1),
    ((2, 8, 6, 6), 8, 1, 1, 0, 1, 8),  # depthwise 1x1
    ((0, 2, 4, 4), 2, 3, 1, 1, 1, 1),  # empty batch
]


def _pair(k):
    return (k, k) if isinstance(k, int) else k


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", CONV, ids=str)
@pytest.mark.parametrize("layout", ["contig", "transposed"])
def test_conv2d(lib, rng, dtype, bias, case, layout):
    shape, o, k, s, p, d, g = case
    x = rng.standard_normal(shape)
    w = rng.standard_normal((o, shape[1] // g, *_pair(k)))
    b = rng.standard_normal(o) if bias else None
    got = lib.conv2d(tensor(lib, x, dtype, layout), tensor(lib, w, dtype),
                     tensor(lib, b, dtype) if bias else None, s, p, d, g)
    want = torch.conv2d(torch.from_numpy(x), torch.from_numpy(w),
                        torch.from_numpy(b) if bias else None, s, p, d, g)
    assert_close(got, want.numpy(), dtype, scale=10 * np.prod(_pair(k)) * shape[1])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CONV, ids=str)
def test_conv_transpose2d(lib, rng, dtype, case):
    shape, o, k, s, p, d, g = case
    out_pad = tuple(1 if si > 1 else 0 for si in _pair(s))
    x = rng.standard_normal(shape)
    w = rng.standard_normal((shape[1], o // g, *_pair(k)))
    b = rng.standard_normal(o)
    got = lib.conv_transpose2d(tensor(lib, x, dtype), tensor(lib, w, dtype), tensor(lib, b, dtype),
                               s, p, out_pad, g, d)
    want = torch.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b),
                                  s, p, out_pad, g, d)
    assert_close(got, want.numpy(), dtype, scale=10 * np.prod(_pair(k)) * shape[1])


@pytest.mark.skipif(IS_TORCH, reason="im2col/col2im are torch.nn.functional.unfold/fold there")
@pytest.mark.parametrize(
    "args", [((2, 3), 1, 1, 2), (3, 2, 0, 1), ((1, 2), (1, 2), (0, 1), (2, 1))], ids=str
)
def test_im2col_col2im_match_unfold_fold(lib, rng, args):
    k, d, p, s = args
    x = rng.standard_normal((2, 3, 7, 6))
    got = lib.im2col(tensor(lib, x, "float64"), k, d, p, s)
    want = F.unfold(torch.from_numpy(x), k, d, p, s)
    assert_close(got, want.numpy(), "float64")
    c = rng.standard_normal(tuple(want.shape))
    got = lib.col2im(tensor(lib, c, "float64"), [7, 6], k, d, p, s)
    want = F.fold(torch.from_numpy(c), (7, 6), k, d, p, s)
    assert_close(got, want.numpy(), "float64")


ERRORS = [
    (lambda L: L.conv2d(L.ones(1, 3, 5, 5), L.ones(2, 2, 3, 3)), "to have 2 channels, but got 3"),
    (lambda L: L.conv2d(L.ones(1, 1, 2, 2), L.ones(1, 1, 3, 3)),
     "Kernel size can't be greater than actual input size"),
    (lambda L: L.conv2d(L.ones(1, 1, 5, 5), L.ones(1, 1, 3, 3), L.ones(2)),
     "expected bias to be 1-dimensional with 1 elements"),
    (lambda L: L.conv2d(L.ones(1, 1, 5, 5), L.ones(1, 1, 3, 3), None, 0), "stride"),
    (lambda L: L.conv2d(L.ones(1, 1, 5, 5), L.ones(1, 1, 3, 3).double()), "Float.*Double"),
    (lambda L: L.conv_transpose2d(L.ones(1, 1, 3, 3), L.ones(1, 1, 3, 3), None, 1, 0, 1),
     "output padding must be smaller than either stride or dilation"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_conv_errors(lib, case):
    fn, text = ERRORS[case]
    with pytest.raises(RuntimeError, match=text):
        fn(lib)


@pytest.mark.skipif(IS_TORCH, reason="Ember's message")
def test_conv_integer_input_not_implemented(lib):
    with pytest.raises(RuntimeError, match="conv2d"):
        lib.conv2d(lib.ones(1, 1, 3, 3, dtype=lib.int64), lib.ones(1, 1, 2, 2, dtype=lib.int64))


# --- the direct kernel (float32, stride 1, >= 16 channels, rows >= 85% of 16-wide vectors:
# ops/conv/conv_direct_cpu.cpp, AVX-512 only) and the two backward ops; (N, C, H, W), O,
# kernel, padding. Rows 14-16 and 28-32 wide (odd heights, ragged last vectors), channel
# counts not a multiple of the 8-channel register block, padding 0/1/2.
DIRECT = [
    ((1, 16, 16, 16), 16, 3, 1),
    ((3, 24, 13, 30), 20, 3, 0),
    ((2, 17, 9, 31), 33, 5, 2),
    ((2, 32, 15, 14), 16, 3, 1),
    ((1, 16, 7, 32), 40, 5, 1),
    ((2, 20, 11, 18), 16, 5, 0),
]
# shapes the im2col + GEMM path keeps: strides, dilation, groups, 1x1, few channels, narrow rows
IM2COL = [
    ((2, 16, 9, 9), 16, 3, 1, 2, 1, 1),
    ((2, 16, 9, 9), 16, 3, 2, 1, 2, 1),
    ((2, 16, 9, 9), 32, 3, 1, 1, 1, 2),
    ((2, 32, 8, 16), 16, 1, 1, 0, 1, 1),
    ((2, 8, 12, 12), 16, 3, 1, 1, 1, 1),
    ((2, 16, 10, 12), 16, 3, 1, 1, 1, 1),
    # small images, many channels: the weight gradient folds the batch into one product
    ((3, 32, 3, 3), 48, 3, 2, 1, 1, 1),
    ((2, 32, 2, 4), 64, 1, 1, 0, 1, 2),
]


def _conv_refs(x, w, b, s, p, d, g, gy):
    """conv2d output and input/weight gradients for grad_output gy, by torch in float64."""
    tx = torch.from_numpy(x).requires_grad_()
    tw = torch.from_numpy(w).requires_grad_()
    y = torch.conv2d(tx, tw, None if b is None else torch.from_numpy(b), s, p, d, g)
    gx, gw = torch.autograd.grad(y, (tx, tw), torch.from_numpy(gy))
    return y.detach().numpy(), gx.numpy(), gw.numpy()


def _conv_inputs(rng, shape, o, k, s=1, p=0, d=1, g=1, bias=True):
    n, c, h, w_ = shape
    oh = (h + 2 * p - d * (k - 1) - 1) // s + 1
    ow = (w_ + 2 * p - d * (k - 1) - 1) // s + 1
    x = rng.standard_normal(shape)
    w = rng.standard_normal((o, c // g, k, k))
    b = rng.standard_normal(o) if bias else None
    gy = rng.standard_normal((n, o, oh, ow))
    return x, w, b, gy


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", DIRECT, ids=str)
@pytest.mark.parametrize("layout", ["contig", "transposed"])
def test_conv2d_direct_shapes(lib, rng, bias, case, layout):
    shape, o, k, p = case
    x, w, b, gy = _conv_inputs(rng, shape, o, k, 1, p, bias=bias)
    got = lib.conv2d(tensor(lib, x, "float32", layout), tensor(lib, w, "float32"),
                     tensor(lib, b, "float32") if bias else None, 1, p)
    want, _, _ = _conv_refs(x, w, b, 1, p, 1, 1, gy)
    assert_close(got, want, "float32", scale=10 * k * k * shape[1])


@pytest.mark.usefixtures("ember_only")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", [(*c[:3], 1, c[3], 1, 1) for c in DIRECT] + IM2COL, ids=str)
def test_conv2d_backward_ops(lib, rng, dtype, case):
    shape, o, k, s, p, d, g = case
    x, w, _, gy = _conv_inputs(rng, shape, o, k, s, p, d, g)
    _, want_gx, want_gw = _conv_refs(x, w, None, s, p, d, g, gy)
    gx = lib.conv2d_backward_input(tensor(lib, gy, dtype), tensor(lib, w, dtype), list(shape),
                                   s, p, d, g)
    gw = lib.conv2d_backward_weight(tensor(lib, gy, dtype), tensor(lib, x, dtype), list(w.shape),
                                    s, p, d, g)
    assert_close(gx, want_gx, dtype, scale=10 * k * k * o)
    assert_close(gw, want_gw, dtype, scale=10 * gy.shape[2] * gy.shape[3] * shape[0])


@pytest.mark.usefixtures("ember_only")
def test_conv2d_backward_ops_check_shapes(lib):
    gy, w, x = lib.ones(2, 4, 3, 3), lib.ones(4, 3, 3, 3), lib.ones(2, 3, 5, 5)
    with pytest.raises(RuntimeError, match="expected grad_output of size"):
        lib.conv2d_backward_input(gy, w, [2, 3, 6, 6])
    with pytest.raises(RuntimeError, match="groups"):
        lib.conv2d_backward_weight(gy, x, [4, 2, 3, 3])
    with pytest.raises(RuntimeError, match="dtype"):
        lib.conv2d_backward_input(gy, w.double(), [2, 3, 5, 5])


# Every CPU level (and the im2col path, EMBER_CONV_DIRECT=0), with oneDNN off, and with oneDNN on
# (where it is available), in a child process: conv2d and both backward ops on the direct shapes,
# float32, against torch in float64 here.
LEVEL_CHILD = r"""
import json, sys
import numpy as np
import ember_tensor as et
out = {"level": et._C._cpu_capability(), "results": []}
for x, w, b, gy, p in json.loads(sys.stdin.read()):
    x, w, b, gy = (et.from_numpy(np.asarray(a, dtype=np.float32)) for a in (x, w, b, gy))
    y = et.conv2d(x, w, b, 1, p)
    gx = et.conv2d_backward_input(gy, w, list(x.shape), 1, p)
    gw = et.conv2d_backward_weight(gy, x, list(w.shape), 1, p)
    out["results"].append([t.numpy().astype(np.float64).tolist() for t in (y, gx, gw)])
print(json.dumps(out))
"""


@pytest.mark.usefixtures("ember_only")
@pytest.mark.parametrize("env", [{"EMBER_CPU_CAPABILITY": v, "EMBER_ONEDNN": "0"}
                                 for v in ("default", "avx2", "avx512")]
                         + [{"EMBER_CONV_DIRECT": "0", "EMBER_ONEDNN": "0"}, {}],
                         ids=["default", "avx2", "avx512", "im2col", "onednn"])
def test_conv2d_direct_shapes_at_every_cpu_level(rng, env):
    import json
    import os
    import subprocess
    import sys

    cases = [_conv_inputs(rng, shape, o, k, 1, p) + (p,) for shape, o, k, p in DIRECT[:4]]
    payload = json.dumps([[a.tolist() for a in c[:4]] + [c[4]] for c in cases])
    done = subprocess.run([sys.executable, "-c", LEVEL_CHILD], input=payload, capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, **env))
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)["results"]
    for (x, w, b, gy, p), (y, gx, gw) in zip(cases, got):
        xf, wf, bf, gyf = (a.astype(np.float32).astype(np.float64) for a in (x, w, b, gy))
        want = _conv_refs(xf, wf, bf, 1, p, 1, 1, gyf)
        n, c, _, _ = x.shape
        o, _, k, _ = w.shape
        for name, a, ref, terms in (("y", y, want[0], c * k * k), ("gx", gx, want[1], o * k * k),
                                    ("gw", gw, want[2], n * gy.shape[2] * gy.shape[3])):
            np.testing.assert_allclose(np.asarray(a), ref, rtol=1e-4, atol=2e-6 * terms,
                                       err_msg=f"{name} {x.shape} {w.shape} p={p} {env}")
