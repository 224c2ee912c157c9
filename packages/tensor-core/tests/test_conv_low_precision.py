"""float16 and bfloat16 convolutions (conv2d, its two gradients, conv_transpose2d) against
PyTorch: they compute in float32 and round the result once, and autocast runs conv2d and
conv_transpose2d in the lower precision, as torch.autocast does."""

from __future__ import annotations

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor import amp

torch = pytest.importorskip("torch")

# dtype, unit roundoff of the dtype
LOW = [("bfloat16", 2.0**-8), ("float16", 2.0**-11)]
# (N, C, H, W), O, kernel, stride, padding, dilation, groups
CASES = [
    ((2, 4, 7, 6), 6, 3, 1, 1, 1, 1),
    ((2, 4, 9, 8), 6, 3, 2, 0, 1, 2),
    ((1, 6, 10, 10), 3, (3, 2), (2, 1), (1, 2), (2, 1), 3),
    ((2, 8, 6, 6), 8, 3, 1, 1, 1, 8),  # depthwise
    ((2, 16, 8, 8), 16, 3, 1, 1, 1, 1),  # the float32 direct kernel's shapes
]


def rounded(rng, shape, dtype):
    """A float32 array of values exactly representable in `dtype`, and the ember tensor."""
    t = torch.from_numpy(rng.standard_normal(shape).astype(np.float32)).to(getattr(torch, dtype))
    return t, et.from_numpy(t.float().numpy()).to(getattr(et, dtype))


def check(got, want_f32, dtype, eps, scale):
    """got (ember, dtype) is want (torch float32 on the same rounded inputs) rounded once."""
    assert got.dtype == getattr(et, dtype)
    want = want_f32.to(getattr(torch, dtype)).float().numpy()
    # within one rounding of the exact result; accumulation order moves it by a few float32 ulps
    np.testing.assert_allclose(got.float().numpy(), want, rtol=2 * eps, atol=1e-6 * scale)


@pytest.mark.parametrize("dtype,eps", LOW)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_conv2d_and_gradients(dtype, eps, case):
    shape, o, k, s, p, d, g = case
    rng = np.random.default_rng(0)
    kk = (k, k) if isinstance(k, int) else k
    xt, x = rounded(rng, shape, dtype)
    wt, w = rounded(rng, (o, shape[1] // g, *kk), dtype)
    bt, b = rounded(rng, (o,), dtype)
    xf, wf = xt.float().requires_grad_(), wt.float().requires_grad_()
    yf = torch.nn.functional.conv2d(xf, wf, bt.float(), s, p, d, g)
    y = et.conv2d(x, w, b, s, p, d, g)
    scale = shape[1] * kk[0] * kk[1]
    check(y, yf.detach(), dtype, eps, scale)

    gyt, gy = rounded(rng, tuple(yf.shape), dtype)
    gxf, gwf = torch.autograd.grad(yf, (xf, wf), gyt.float())
    gx = et.conv2d_backward_input(gy, w, list(shape), s, p, d, g)
    gw = et.conv2d_backward_weight(gy, x, list(wt.shape), s, p, d, g)
    check(gx, gxf, dtype, eps, scale)
    check(gw, gwf, dtype, eps, shape[0] * yf.shape[2] * yf.shape[3])


# without a bias: where the products multiply bfloat16 natively (bf16_gemm in the build info),
# these run as bfloat16 products rather than on widened copies: 1x1 convolutions (all three
# passes), the deep layers of small outputs (forward and a batch-folded weight gradient), one
# image; a grouped 1x1 stays on widened copies
NO_BIAS_CASES = [
    ((4, 32, 8, 8), 48, 1, 1, 0, 1, 1),
    ((4, 64, 4, 4), 64, 3, 1, 1, 1, 1),
    ((1, 16, 5, 5), 8, 3, 1, 1, 1, 1),
    ((4, 32, 6, 6), 32, 1, 1, 0, 1, 4),
]


@pytest.mark.parametrize("dtype,eps", LOW)
@pytest.mark.parametrize("case", NO_BIAS_CASES, ids=str)
@pytest.mark.parametrize("threads", [1, 2])
def test_conv2d_without_bias(dtype, eps, case, threads):
    shape, o, k, s, p, d, g = case
    before = et.get_num_threads()
    et.set_num_threads(threads)
    try:
        rng = np.random.default_rng(1)
        xt, x = rounded(rng, shape, dtype)
        wt, w = rounded(rng, (o, shape[1] // g, k, k), dtype)
        xf, wf = xt.float().requires_grad_(), wt.float().requires_grad_()
        yf = torch.nn.functional.conv2d(xf, wf, None, s, p, d, g)
        y = et.conv2d(x, w, None, s, p, d, g)
        scale = shape[1] * k * k
        check(y, yf.detach(), dtype, eps, scale)
        gyt, gy = rounded(rng, tuple(yf.shape), dtype)
        gxf, gwf = torch.autograd.grad(yf, (xf, wf), gyt.float())
        check(et.conv2d_backward_input(gy, w, list(shape), s, p, d, g), gxf, dtype, eps, scale)
        check(et.conv2d_backward_weight(gy, x, list(wt.shape), s, p, d, g), gwf, dtype, eps,
              shape[0] * yf.shape[2] * yf.shape[3])
    finally:
        et.set_num_threads(before)


@pytest.mark.parametrize("dtype,eps", LOW)
def test_conv_transpose2d(dtype, eps):
    rng = np.random.default_rng(1)
    xt, x = rounded(rng, (2, 4, 5, 6), dtype)
    wt, w = rounded(rng, (4, 3, 3, 3), dtype)
    bt, b = rounded(rng, (6,), dtype)
    want = torch.nn.functional.conv_transpose2d(xt.float(), wt.float(), bt.float(), 2, 1, 1, 2)
    got = et.conv_transpose2d(x, w, b, 2, 1, 1, 2)
    check(got, want, dtype, eps, 4 * 9)


@pytest.mark.parametrize("dtype,eps", LOW)
@pytest.mark.parametrize("output_padding", [0, 1])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
def test_conv_transpose2d_dcgan_layer(dtype, eps, output_padding, bias, threads):
    # a DCGAN generator's layer (4x4, stride 2, padding 1): with output_padding 0 it is conv2d's
    # input gradient, run in the 16-bit dtype where the CPU computes it (with a bias, oneDNN's
    # bfloat16 kernel writes it in float32 so that the bias is added before the one rounding);
    # 1 goes through col2im. The same values as on widened copies (oneDNN off).
    rng = np.random.default_rng(2)
    xt, x = rounded(rng, (4, 32, 8, 8), dtype)
    wt, w = rounded(rng, (32, 16, 4, 4), dtype)
    bt, b = rounded(rng, (16,), dtype) if bias else (None, None)
    prev = et.get_num_threads()
    et.set_num_threads(threads)
    try:
        want = torch.nn.functional.conv_transpose2d(xt.float(), wt.float(),
                                                    bt.float() if bias else None, 2, 1,
                                                    output_padding)
        got = et.conv_transpose2d(x, w, b, 2, 1, output_padding)
        check(got, want, dtype, eps, 32 * 16)
        with et.backends.mkldnn.flags(enabled=False):
            widened = et.conv_transpose2d(x, w, b, 2, 1, output_padding)
        # one rounding of float32 sums of 32 * 16 terms that differ only in their order
        np.testing.assert_allclose(got.float().numpy(), widened.float().numpy(), rtol=2 * eps,
                                   atol=1e-6 * 32 * 16)
    finally:
        et.set_num_threads(prev)


def test_mixed_dtypes_are_an_error():
    x, w = et.ones((1, 2, 4, 4), dtype=et.bfloat16), et.ones((3, 2, 3, 3))
    with pytest.raises(RuntimeError, match=r"conv2d: Input type \(BFloat16\) and weight type "
                                           r"\(Float\) should be the same"):
        et.conv2d(x, w)
    with pytest.raises(RuntimeError, match="conv2d_backward_input: expected a 4-D weight of "
                                           "grad_output's dtype"):
        et.conv2d_backward_input(et.ones((1, 3, 2, 2), dtype=et.float16), w, [1, 2, 4, 4])


def test_im2col_moves_16_bit_floats_exactly():
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype(np.float32)
    for name in ("bfloat16", "float16"):
        got = et.im2col(et.from_numpy(x).to(getattr(et, name)), (3, 3))
        want = torch.nn.functional.unfold(torch.from_numpy(x).to(getattr(torch, name)), (3, 3))
        assert got.dtype == getattr(et, name)
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("dtype,eps", LOW)
@pytest.mark.parametrize("op", ["conv2d", "conv_transpose2d"])
def test_autocast_runs_convolutions_in_lower_precision(autograd, dtype, eps, op):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 4, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    xe, we, be = (et.from_numpy(a).requires_grad_() for a in (x, w, b))
    xt, wt, bt = (torch.from_numpy(a).requires_grad_() for a in (x, w, b))
    with amp.autocast("cpu", dtype=getattr(et, dtype)):
        ye = getattr(et, op)(xe, we, be, 1, 1)
    with torch.autocast("cpu", dtype=getattr(torch, dtype)):
        yt = getattr(torch.nn.functional, op)(xt, wt, bt, 1, 1)
    assert ye.dtype == getattr(et, dtype) and yt.dtype == getattr(torch, dtype)
    np.testing.assert_allclose(ye.detach().float().numpy(), yt.detach().float().numpy(),
                               rtol=4 * eps, atol=8 * eps * 36)
    ye.float().sum().backward()
    yt.float().sum().backward()
    for e, t in ((xe, xt), (we, wt), (be, bt)):
        assert e.grad.dtype == et.float32  # the casts are recorded: float32 leaves, float32 grads
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=8 * eps, atol=64 * eps * 36)

