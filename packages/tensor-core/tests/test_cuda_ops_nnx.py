"""CUDA kernels against the CPU kernels: native_batch_norm and native_group_norm (and their
fused backward ops; ops/norm/norm_cuda.cu), addmm, dot (ops/linalg/blas_cuda.cu),
conv_transpose2d (ops/conv/conv_cuda.cu), the fused Adam/AdamW and SGD steps
(ops/optim/optim_cuda.cu) and the LSTM recurrence (ops/rnn/rnn_cuda.cu).

Every op runs on the same inputs on both devices. Sums taken in another order (statistics,
matrix products) are compared within a tolerance; integer products and dot exactly. The shapes
cover each reduction strategy of the normalizations (a thread per statistic, per column, per
chunk of a statistic) and multi-block, multi-launch paths. Errors must match the CPU's.

Runs only where a GPU is present; skipped elsewhere (``EMBER_CUDA_TEST_DEVICE=cpu``, as in
``nox -s cuda_cpu_mode``, runs it against the CPU, which checks the tests themselves).
"""

import numpy as np
import pytest

import ember_tensor as et
from cuda_testing import (  # noqa: E402
    DEV,
    FLOATS,
    INTS,
    assert_close,
    assert_equal,
    assert_same_error,
    normal,
    on,
    requires_device,
    values,
)

pytestmark = requires_device

HALF = (et.float16, et.bfloat16)
# the normalizations' statistics (sums over a channel or a group) in another order: 3x the
# tolerance table (cuda_testing.assert_close's scale); the batch norm backward sums twice (2x
# that), the group norm backward's parameter gradients over whole groups (10x)
NORM = 3


def dev_copy(t):
    """A copy of t on DEV that in-place ops may change without touching t."""
    return None if t is None else on(t.clone())


def cpu_copy(t):
    return None if t is None else t.clone()


def assert_all_close(got, want, scale):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w, scale)


# ---------------------------------------------------------------------------------------------
# batch norm

# (shape, what it exercises): a thread per channel, per column, chunks of each channel
BN_SHAPES = [
    (3, 5, 7),  # 21 values per channel: one thread each
    (64, 8),  # (N, C), 64 values per channel
    (500, 300),  # (N, C) with many channels: per column
    (300, 40, 3),  # 3 values per plane, 120 columns: chunks
    (4, 3, 40, 40),  # images: chunks of each channel
    (2, 2, 300, 300),  # few channels, many values: several chunks per channel
]


def param_dtype(dtype):
    return et.float32 if dtype in HALF else dtype


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", BN_SHAPES)
def test_batch_norm_training_matches_cpu(dtype, shape):
    C = shape[1]
    x = (normal(shape, et.float32, 1) * 2 + 0.5).to(dtype)
    pdt = param_dtype(dtype)
    w, b = normal((C,), et.float32, 2).to(pdt), normal((C,), et.float32, 3).to(pdt)
    rm, rv = normal((C,), et.float32, 4).to(pdt), (normal((C,), et.float32, 5).abs() + 0.5).to(pdt)
    scale = NORM
    for weight, bias, stats in [
        (w, b, True),
        (None, None, True),
        (w, None, False),
        (None, b, False),
    ]:
        crm, crv = (cpu_copy(rm), cpu_copy(rv)) if stats else (None, None)
        drm, drv = (dev_copy(rm), dev_copy(rv)) if stats else (None, None)
        want = et.native_batch_norm(x, weight, bias, crm, crv, True, 0.1, 1e-5)
        got = et.native_batch_norm(
            on(x), dev_copy(weight), dev_copy(bias), drm, drv, True, 0.1, 1e-5
        )
        assert_all_close(got, want, scale)
        if stats:
            assert_close(drm, crm, scale)
            assert_close(drv, crv, scale)


@pytest.mark.parametrize("dtype", FLOATS)
def test_batch_norm_evaluation_and_layouts_match_cpu(dtype):
    x = (normal((6, 4, 5, 3), et.float32, 6) * 3).to(dtype)
    pdt = param_dtype(dtype)
    w, b = normal((4,), et.float32, 7).to(pdt), normal((4,), et.float32, 8).to(pdt)
    rm, rv = normal((4,), et.float32, 9).to(pdt), (normal((4,), et.float32, 10).abs() + 0.2).to(pdt)
    scale = NORM
    for weight, bias in [(w, b), (None, None), (w.to(dtype), b.to(dtype))]:
        want = et.native_batch_norm(x, weight, bias, rm, rv, False, 0.1, 1e-3)
        got = et.native_batch_norm(
            on(x), dev_copy(weight), dev_copy(bias), on(rm), on(rv), False, 0.1, 1e-3
        )
        assert_all_close(got, want, scale)
        assert tuple(got[1].shape) == (0,) and got[1].dtype == want[1].dtype
    # a non-contiguous input, and running statistics that are strided views
    xt = x.transpose(0, 2)
    big_m, big_v = et.zeros((8,), dtype=pdt), et.ones((8,), dtype=pdt)
    dbig_m, dbig_v = dev_copy(big_m), dev_copy(big_v)
    want = et.native_batch_norm(xt, None, None, big_m[::2], big_v[::2], True, 0.3, 1e-5)
    got = et.native_batch_norm(on(xt), None, None, dbig_m[::2], dbig_v[::2], True, 0.3, 1e-5)
    assert_all_close(got, want, scale)
    assert_close(dbig_m, big_m, scale)
    assert_close(dbig_v, big_v, scale)


def test_batch_norm_edge_cases_match_cpu():
    # one value per channel: the unbiased variance is NaN, as on the CPU
    x = normal((1, 3), et.float64, 11)
    rm, rv = et.zeros((3,), dtype=et.float64), et.ones((3,), dtype=et.float64)
    drm, drv = dev_copy(rm), dev_copy(rv)
    want = et.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5)
    got = et.native_batch_norm(on(x), None, None, drm, drv, True, 0.1, 1e-5)
    assert_all_close(got, want, 0.01)  # float64 statistics of one value: a rounding apart
    assert_close(drv, rv, 0.01)
    # an empty batch in evaluation
    e = et.zeros((0, 3, 2))
    want = et.native_batch_norm(e, None, None, rm.float(), rv.float(), False, 0.1, 1e-5)
    got = et.native_batch_norm(on(e), None, None, on(rm.float()), on(rv.float()), False, 0.1, 1e-5)
    assert_all_close(got, want, 0)
    # NaN and inf in the input propagate through their channel
    s = values((5, 4, 3), et.float32, 12, special=True)
    want = et.native_batch_norm(s, None, None, None, None, True, 0.1, 1e-5)
    got = et.native_batch_norm(on(s), None, None, None, None, True, 0.1, 1e-5)
    assert_all_close(got, want, 1)


def test_batch_norm_errors_match_cpu():
    x = normal((4, 3, 2))

    def cases():
        yield lambda d: et.native_batch_norm(x.to(d)[0, 0], None, None, None, None, True, 0.1, 1e-5)
        yield lambda d: et.native_batch_norm(
            x.to(d), et.ones(4).to(d), None, None, None, True, 0.1, 1e-5
        )
        yield lambda d: et.native_batch_norm(
            x.to(d), None, None, et.zeros(3).to(d), None, True, 0.1, 1e-5
        )
        yield lambda d: et.native_batch_norm(x.to(d), None, None, None, None, False, 0.1, 1e-5)
        yield lambda d: et.native_batch_norm(
            x.to(d), et.ones(3, dtype=et.float64).to(d), None, None, None, True, 0.1, 1e-5
        )
        yield lambda d: et.native_batch_norm(
            et.zeros((0, 3)).to(d), None, None, None, None, True, 0.1, 1e-5
        )
        g = normal((4, 3, 2))
        yield lambda d: et.native_batch_norm_backward(
            g.to(d), x.to(d), None, None, None, None, None, True, 1e-5
        )
        yield lambda d: et.native_batch_norm_backward(
            g.to(d),
            x.to(d),
            None,
            None,
            None,
            et.zeros(3).to(d),
            et.zeros(3, dtype=et.int32).to(d),
            True,
            1e-5,
        )
        yield lambda d: et.native_batch_norm_backward(
            g[:2].to(d), x.to(d), None, None, None, et.zeros(3).to(d), et.ones(3).to(d), True, 1e-5
        )

    for run in cases():
        assert_same_error(run)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 5, 7), (500, 300), (4, 3, 40, 40), (2, 2, 300, 300)])
def test_batch_norm_backward_matches_cpu(dtype, shape):
    C = shape[1]
    x = (normal(shape, et.float32, 13) * 2 + 1).to(dtype)
    g = normal(shape, et.float32, 14).to(dtype)
    pdt = param_dtype(dtype)
    w = normal((C,), et.float32, 15).to(pdt)
    rm, rv = (
        normal((C,), et.float32, 16).to(pdt),
        (normal((C,), et.float32, 17).abs() + 0.5).to(pdt),
    )
    _, sm, si = et.native_batch_norm(x, w, None, None, None, True, 0.1, 1e-5)
    scale = 2 * NORM
    for weight in [w, None]:
        for train in [True, False]:
            args = (weight, rm, rv, sm, si, train, 1e-5)
            want = et.native_batch_norm_backward(g, x, *args)
            got = et.native_batch_norm_backward(
                on(g), on(x), *(dev_copy(a) if isinstance(a, et.Tensor) else a for a in args)
            )
            assert_all_close(got, want, scale)


# ---------------------------------------------------------------------------------------------
# group norm

GN_CASES = [  # (shape, groups)
    ((2, 6, 5), 3),  # short rows: a thread each
    ((3, 8, 20, 20), 4),  # chunks of each row
    ((1, 4, 200, 200), 1),  # one long row in many chunks
    ((5, 6), 2),  # no spatial dims
    ((4, 32, 7, 7), 8),  # 49 values per plane in the backward
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", GN_CASES)
def test_group_norm_and_its_backward_match_cpu(dtype, case):
    shape, group = case
    N, C = shape[0], shape[1]
    hxw = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    x = (normal(shape, et.float32, 18) * 2 - 1).to(dtype)
    g = normal(shape, et.float32, 19).to(dtype)
    pdt = param_dtype(dtype)
    w, b = normal((C,), et.float32, 20).to(pdt), normal((C,), et.float32, 21).to(pdt)
    scale = NORM
    for weight, bias in [(w, b), (None, None), (w, None), (None, b)]:
        want = et.native_group_norm(x, weight, bias, N, C, hxw, group, 1e-5)
        got = et.native_group_norm(on(x), dev_copy(weight), dev_copy(bias), N, C, hxw, group, 1e-5)
        assert_all_close(got, want, scale)
        _, mean, rstd = want
        want_b = et.native_group_norm_backward(g, x, mean, rstd, weight, N, C, hxw, group)
        got_b = et.native_group_norm_backward(
            on(g), on(x), on(mean), on(rstd), dev_copy(weight), N, C, hxw, group
        )
        assert_all_close(got_b, want_b, 10 * NORM)


def test_group_norm_edge_cases_and_errors_match_cpu():
    # an empty batch; a non-contiguous input
    e = et.zeros((0, 4, 3))
    assert_all_close(
        et.native_group_norm(on(e), None, None, 0, 4, 3, 2, 1e-5),
        et.native_group_norm(e, None, None, 0, 4, 3, 2, 1e-5),
        0,
    )
    xt = normal((5, 4, 3), et.float64, 23).transpose(0, 2)
    for t in (xt, xt[:, :, ::1]):
        assert_all_close(
            et.native_group_norm(on(t), None, None, 3, 4, 5, 2, 1e-5),
            et.native_group_norm(t, None, None, 3, 4, 5, 2, 1e-5),
            1,
        )
    y = normal((2, 6, 4))

    def cases():
        yield lambda d: et.native_group_norm(y.to(d), None, None, 2, 6, 4, 4, 1e-5)
        yield lambda d: et.native_group_norm(y.to(d), None, None, 2, 6, 4, 0, 1e-5)
        yield lambda d: et.native_group_norm(y.to(d), et.ones(5).to(d), None, 2, 6, 4, 3, 1e-5)
        yield lambda d: et.native_group_norm(y.to(d), None, None, 2, 6, 5, 3, 1e-5)
        yield lambda d: et.native_group_norm(
            y.to(d), et.ones(6, dtype=et.float64).to(d), None, 2, 6, 4, 3, 1e-5
        )
        m = et.zeros((2, 3))
        yield lambda d: et.native_group_norm_backward(
            y.to(d), y.to(d), m.to(d), m[:, :2].to(d), None, 2, 6, 4, 3
        )
        yield lambda d: et.native_group_norm_backward(
            y.to(d), y.to(d), m.to(d), m.to(et.int64).to(d), None, 2, 6, 4, 3
        )
        yield lambda d: et.native_group_norm_backward(
            y[:1].to(d), y.to(d), m.to(d), m.to(d), None, 2, 6, 4, 3
        )

    for run in cases():
        assert_same_error(run)


# ---------------------------------------------------------------------------------------------
# conv_transpose2d

CT_CASES = [  # (stride, padding, output_padding, dilation, groups)
    (1, 0, 0, 1, 1),
    (2, 1, 1, 1, 1),
    ((2, 3), (0, 1), (1, 2), 1, 2),
    (1, 1, 1, 2, 1),  # output_padding below the dilation, not the stride
    (3, 2, 0, (2, 1), 3),
    (2, 0, 0, 1, 6),  # depthwise
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", CT_CASES)
def test_conv_transpose2d_matches_cpu(dtype, case):
    stride, padding, output_padding, dilation, groups = case
    x = normal((2, 6, 5, 7), dtype, 24)
    w = normal((6, 2, 3, 2), dtype, 25)  # (C, O / groups, kh, kw)
    out_ch = w.shape[1] * groups
    b = normal((out_ch,), dtype, 26)
    # float16 and bfloat16 are computed in float32 on both devices and rounded once at the
    # end: the tolerance table; float32 and float64 sum in another order: 5x
    scale = 1 if dtype in HALF else 5
    for bias in [b, None]:
        want = et.conv_transpose2d(x, w, bias, stride, padding, output_padding, groups, dilation)
        got = et.conv_transpose2d(
            on(x), on(w), dev_copy(bias), stride, padding, output_padding, groups, dilation
        )
        assert_close(got, want, scale)
    # non-contiguous input and weight
    xt = normal((2, 6, 7, 5), dtype, 27).transpose(2, 3)
    wt = normal((2, 6, 3, 2), dtype, 28).transpose(0, 1)
    assert_close(
        et.conv_transpose2d(
            on(xt), on(wt), None, stride, padding, output_padding, groups, dilation
        ),
        et.conv_transpose2d(xt, wt, None, stride, padding, output_padding, groups, dilation),
        scale,
    )


def test_conv_transpose2d_large_and_empty_match_cpu():
    x = normal((4, 16, 20, 20), et.float32, 27)
    w = normal((16, 8, 4, 4), et.float32, 28)
    # sums of 256 products: near-zero outputs carry the operands' rounding, so 5x the table's
    # rtol and 100x its atol (1e-4 both)
    assert_close(
        et.conv_transpose2d(on(x), on(w), None, 2, 1, 0, 1, 1),
        et.conv_transpose2d(x, w, None, 2, 1, 0, 1, 1),
        5,
        100,
    )
    e = et.zeros((0, 16, 5, 5))
    assert_close(
        et.conv_transpose2d(on(e), on(w), None, 1, 0, 0, 1, 1),
        et.conv_transpose2d(e, w, None, 1, 0, 0, 1, 1),
        0,
    )


def test_conv_transpose2d_errors_match_cpu():
    x, w = normal((1, 4, 5, 5)), normal((4, 2, 3, 3))

    def cases():
        yield lambda d: et.conv_transpose2d(x.to(d), w.to(d), None, 1, 0, 1, 1, 1)
        yield lambda d: et.conv_transpose2d(x.to(d), w.to(d), None, 1, 0, 0, 3, 1)
        yield lambda d: et.conv_transpose2d(x.to(d), w.to(d), et.ones(3).to(d), 1, 0, 0, 1, 1)
        yield lambda d: et.conv_transpose2d(x.to(d), w.to(d), None, 1, 4, 0, 1, 1)
        # float16 and bfloat16 are computed in float32 (test_conv_transpose2d_matches_cpu);
        # integers are still an error
        yield lambda d: et.conv_transpose2d(x.long().to(d), w.long().to(d), None, 1, 0, 0, 1, 1)
        yield lambda d: et.conv_transpose2d(x.half().to(d), w.to(d), None, 1, 0, 0, 1, 1)
        yield lambda d: et.conv_transpose2d(x.to(d), w.double().to(d), None, 1, 0, 0, 1, 1)
        yield lambda d: et.conv_transpose2d(x.to(d), w.to(d), None, [1, 2, 3], 0, 0, 1, 1)
        yield lambda d: et.conv_transpose2d(
            et.zeros((1, 4, 0, 5)).to(d), w.to(d), None, 1, 0, 0, 1, 1
        )

    for run in cases():
        assert_same_error(run)


# ---------------------------------------------------------------------------------------------
# addmm and dot

ADDMM_SCALARS = [(1, 1), (0, 2), (0.5, -1.5), (2, 0), (1, 0.25)]


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_addmm_matches_cpu(dtype):
    exact = dtype in INTS
    a, b = values((5, 7), dtype, 29), values((7, 4), dtype, 30)
    big_a, big_b = normal((70, 300), et.float32, 31).to(dtype), normal((300, 50), et.float32, 32)
    scale = 3  # sums of products in another order
    check = assert_equal if exact else (lambda g, w: assert_close(g, w, scale))
    for self_shape in [(5, 4), (4,), (1, 4), (5, 1), ()]:
        s = values(self_shape, dtype, 33, special=not exact)
        for beta, alpha in ADDMM_SCALARS:
            if dtype == et.uint8 and min(beta, alpha) < 0:  # not a uint8: PyTorch's overflow error
                continue
            want = et.addmm(s, a, b, beta=beta, alpha=alpha)
            check(et.addmm(on(s), on(a), on(b), beta=beta, alpha=alpha), want)
    s = values((), dtype, 34)  # a CPU 0-d self joins the CUDA product
    check(et.addmm(s, on(a), on(b), beta=2, alpha=3), et.addmm(s, a, b, beta=2, alpha=3))
    # transposed and strided operands (no copy for the transposed ones)
    at, bt = values((7, 5), dtype, 35).t(), values((4, 7), dtype, 36).t()
    check(et.addmm(on(s), on(at), on(bt)), et.addmm(s, at, bt))
    a2 = values((10, 14), dtype, 37)[::2, ::2]
    check(et.addmm(on(s), on(a2), on(b)), et.addmm(s, a2, b))
    # multi-block sizes
    bb = big_b.to(dtype)
    sb = values((50,), dtype, 38)
    want = et.addmm(sb, big_a, bb, beta=0.5 if not exact else 2, alpha=2)
    got = et.addmm(on(sb), on(big_a), on(bb), beta=0.5 if not exact else 2, alpha=2)
    if exact:
        assert_equal(got, want)
    else:
        # 300-term sums: 10x; float32's near-zero results carry the operands' rounding: 1000x
        # the table's atol (1e-3)
        assert_close(got, want, 10 * scale, 1000 if dtype == et.float32 else None)
    # k = 0, empty results
    e1, e2 = et.zeros((5, 0), dtype=dtype), et.zeros((0, 4), dtype=dtype)
    s = values((5, 4), dtype, 39)
    for beta in (1, 0, 3):
        check(et.addmm(on(s), on(e1), on(e2), beta=beta), et.addmm(s, e1, e2, beta=beta))
    check(et.addmm(on(s[:0]), on(a[:0]), on(b)), et.addmm(s[:0], a[:0], b))


@pytest.mark.parametrize("dtype", [et.float32, et.int64, et.float16])
def test_addmm_out_and_in_place_match_cpu(dtype):
    a, b = values((5, 7), dtype, 40), values((7, 4), dtype, 41)
    s = values((5, 4), dtype, 42)
    out_c, out_d = et.zeros((5, 4), dtype=dtype), on(et.zeros((5, 4), dtype=dtype))
    et.addmm(s, a, b, beta=2, out=out_c)
    r = et.addmm(on(s), on(a), on(b), beta=2, out=out_d)
    assert r is out_d
    scale = 3  # as test_addmm_matches_cpu
    assert_close(out_d, out_c, scale)
    # a non-contiguous out, an out aliasing self
    out_c, out_d = et.zeros((4, 5), dtype=dtype).t(), on(et.zeros((4, 5), dtype=dtype)).t()
    et.addmm(s, a, b, out=out_c)
    et.addmm(on(s), on(a), on(b), out=out_d)
    assert_close(out_d, out_c, scale)
    sc, sd = s.clone(), dev_copy(s)
    sc.addmm_(a, b, beta=0.5 if dtype not in INTS else 3, alpha=2)
    sd.addmm_(on(a), on(b), beta=0.5 if dtype not in INTS else 3, alpha=2)
    assert_close(sd, sc, scale)


def test_addmm_errors_match_cpu():
    a, b = normal((3, 4)), normal((4, 2))

    def cases():
        yield lambda d: et.addmm(normal((3, 2)).to(d), a.to(d), normal((5, 2)).to(d))
        yield lambda d: et.addmm(normal((3, 2)).to(d), a.to(d), b.double().to(d))
        yield lambda d: et.addmm(normal((3, 2)).double().to(d), a.to(d), b.to(d))
        yield lambda d: et.addmm(normal((3, 3)).to(d), a.to(d), b.to(d))
        yield lambda d: et.addmm(normal((3, 2)).to(d), a[0].to(d), b.to(d))
        yield lambda d: et.addmm(
            et.zeros((3, 2), dtype=et.bool).to(d),
            et.zeros((3, 4), dtype=et.bool).to(d),
            et.zeros((4, 2), dtype=et.bool).to(d),
        )
        yield lambda d: et.addmm(
            normal((3, 2)).to(d), a.to(d), b.to(d), out=et.zeros((3, 2), dtype=et.float64).to(d)
        )

    for run in cases():
        assert_same_error(run)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_dot_matches_cpu(dtype):
    exact = dtype in INTS
    scale = 3  # sums of products in another order
    check = assert_equal if exact else (lambda g, w: assert_close(g, w, scale))
    x, y = values((37,), dtype, 43), values((37,), dtype, 44)
    check(et.dot(on(x), on(y)), et.dot(x, y))
    xs, ys = values((80,), dtype, 45)[::2], values((120,), dtype, 46)[::3]
    check(et.dot(on(xs), on(ys)), et.dot(xs, ys))
    e = et.zeros((0,), dtype=dtype)
    check(et.dot(on(e), on(e)), et.dot(e, e))
    n = 1_000_003  # many blocks
    big_x, big_y = values((n,), dtype, 47), values((n,), dtype, 48)
    if exact:
        assert_equal(et.dot(on(big_x), on(big_y)), et.dot(big_x, big_y))
    else:
        assert_close(et.dot(on(big_x), on(big_y)), et.dot(big_x, big_y), 10 * scale)
    out_c, out_d = et.zeros((), dtype=dtype), on(et.zeros((), dtype=dtype))
    et.dot(x, y, out=out_c)
    et.dot(on(x), on(y), out=out_d)
    check(out_d, out_c)


def test_dot_special_values_and_errors_match_cpu():
    x = values((20,), et.float32, 49, special=True)
    y = values((20,), et.float32, 50)
    assert_close(et.dot(on(x), on(y)), et.dot(x, y))

    def cases():
        yield lambda d: et.dot(et.ones(3).to(d), et.ones(4).to(d))
        yield lambda d: et.dot(et.ones((3, 1)).to(d), et.ones(3).to(d))
        yield lambda d: et.dot(et.ones(3).to(d), et.ones(3, dtype=et.float64).to(d))
        yield lambda d: et.dot(et.ones(3, dtype=et.bool).to(d), et.ones(3, dtype=et.bool).to(d))
        yield lambda d: et.dot(
            et.ones(3).to(d), et.ones(3).to(d), out=et.zeros((), dtype=et.int32).to(d)
        )

    for run in cases():
        assert_same_error(run)


# ---------------------------------------------------------------------------------------------
# fused optimizer steps

# sizes: one element (unfused arithmetic), empty, odd, several chunks of a block
PARAM_SHAPES = [(1,), (0,), (7, 3), (50_000,), (33, 65)]


def make_lists(dtype, count, seed, shapes=PARAM_SHAPES):
    rng = np.random.default_rng(seed)
    shapes = [shapes[i % len(shapes)] for i in range(count)]
    return [et.tensor(rng.standard_normal(s)).to(dtype) for s in shapes]


def compare_lists(got, want, scale):
    for g, w in zip(got, want):
        assert_close(g, w, scale)


# the fused steps: the same arithmetic as the CPU's, contracted (FMA) differently, over a few
# steps: half the tolerance table
STEP = 0.5


SGD_CONFIGS = [
    dict(weight_decay=0.0, momentum=0.0, lr=0.1, dampening=0.0, nesterov=False, maximize=False),
    dict(weight_decay=0.01, momentum=0.9, lr=0.05, dampening=0.0, nesterov=True, maximize=False),
    dict(weight_decay=0.0, momentum=0.8, lr=0.2, dampening=0.3, nesterov=False, maximize=True),
    dict(weight_decay=0.1, momentum=0.5, lr=0.01, dampening=0.1, nesterov=False, maximize=False),
]


@pytest.mark.parametrize("dtype", [et.float32, et.float64])
@pytest.mark.parametrize("config", SGD_CONFIGS)
def test_fused_sgd_matches_cpu_over_steps(dtype, config):
    params = make_lists(dtype, 5, 51)
    cparams, dparams = [cpu_copy(p) for p in params], [dev_copy(p) for p in params]
    momentum = config["momentum"]
    cbufs = [et.zeros_like(p) for p in params] if momentum else []
    dbufs = [dev_copy(b) for b in cbufs]
    for step in range(3):
        grads = make_lists(dtype, 5, 60 + step)
        et._fused_sgd_(cparams, grads, cbufs, is_first_step=step == 0, **config)
        et._fused_sgd_(dparams, [on(g) for g in grads], dbufs, is_first_step=step == 0, **config)
        compare_lists(dparams, cparams, STEP)
        compare_lists(dbufs, cbufs, STEP)


def test_fused_sgd_many_tensors_match_cpu():
    """More tensors than one launch takes."""
    params = make_lists(et.float32, 40, 52, shapes=[(3,), (17,), (20_000,)])
    cparams, dparams = [cpu_copy(p) for p in params], [dev_copy(p) for p in params]
    cbufs = [et.zeros_like(p) for p in params]
    dbufs = [dev_copy(b) for b in cbufs]
    config = dict(
        weight_decay=0.0, momentum=0.9, lr=0.1, dampening=0.0, nesterov=False, maximize=False
    )
    for step in range(2):
        grads = make_lists(et.float32, 40, 70 + step, shapes=[(3,), (17,), (20_000,)])
        et._fused_sgd_(cparams, grads, cbufs, is_first_step=step == 0, **config)
        et._fused_sgd_(dparams, [on(g) for g in grads], dbufs, is_first_step=step == 0, **config)
    compare_lists(dparams, cparams, STEP)
    compare_lists(dbufs, cbufs, STEP)


ADAM_CONFIGS = [
    dict(amsgrad=False, maximize=False, weight_decay=0.0, decoupled_weight_decay=False),
    dict(amsgrad=True, maximize=False, weight_decay=0.01, decoupled_weight_decay=False),
    dict(amsgrad=False, maximize=True, weight_decay=0.05, decoupled_weight_decay=True),
    dict(amsgrad=True, maximize=True, weight_decay=0.01, decoupled_weight_decay=True),
]


@pytest.mark.parametrize("dtype", [et.float32, et.float64])
@pytest.mark.parametrize("config", ADAM_CONFIGS)
@pytest.mark.parametrize("steps_on_device", [False, True])
def test_fused_adam_matches_cpu_over_steps(dtype, config, steps_on_device):
    count = 5
    params = make_lists(dtype, count, 53)
    cp, dp = [cpu_copy(p) for p in params], [dev_copy(p) for p in params]
    cm, cv = [et.zeros_like(p) for p in params], [et.zeros_like(p) for p in params]
    dm, dv = [dev_copy(t) for t in cm], [dev_copy(t) for t in cv]
    cx = [et.zeros_like(p) for p in params] if config["amsgrad"] else []
    dx = [dev_copy(t) for t in cx]
    csteps = [et.tensor(0.0, dtype=et.float32 if i % 2 else et.float64) for i in range(count)]
    dsteps = [dev_copy(s) if steps_on_device else cpu_copy(s) for s in csteps]
    hyper = dict(lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8, **config)
    for step in range(3):
        grads = make_lists(dtype, count, 80 + step)
        et._fused_adam_(cp, grads, cm, cv, cx, csteps, **hyper)
        et._fused_adam_(dp, [on(g) for g in grads], dm, dv, dx, dsteps, **hyper)
        for got, want in [(dp, cp), (dm, cm), (dv, cv), (dx, cx)]:
            compare_lists(got, want, STEP)
    for got, want in zip(dsteps, csteps):
        assert float(got.cpu()) == float(want) == 3.0


def test_fused_adam_many_device_steps_match_cpu():
    """More tensors than one launch takes, and more device step counters than one launch
    advances; a counter listed twice advances twice, as on the CPU."""
    count = 140
    params = make_lists(et.float32, count, 54, shapes=[(2,), (9,)])
    cp, dp = [cpu_copy(p) for p in params], [dev_copy(p) for p in params]
    cm, cv = [et.zeros_like(p) for p in params], [et.zeros_like(p) for p in params]
    dm, dv = [dev_copy(t) for t in cm], [dev_copy(t) for t in cv]
    shared = et.tensor(0.0)
    csteps = [et.tensor(0.0) for _ in range(count - 2)] + [shared, shared]
    dshared = dev_copy(shared)
    dsteps = [dev_copy(s) for s in csteps[:-2]] + [dshared, dshared]
    hyper = dict(
        lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, amsgrad=False, maximize=False
    )
    grads = make_lists(et.float32, count, 90, shapes=[(2,), (9,)])
    et._fused_adam_(cp, grads, cm, cv, [], csteps, **hyper)
    et._fused_adam_(dp, [on(g) for g in grads], dm, dv, [], dsteps, **hyper)
    compare_lists(dp, cp, STEP)
    assert float(dshared.cpu()) == float(shared) == 2.0


def test_fused_step_errors_match_cpu():
    p = normal((3, 2))

    # (float16 params are not among the cases: the CUDA steps take them and the CPU's do not
    # yet, the strict xfail of _fused_sgd_ / _fused_adam_ in op_registry.py)
    def cases():
        yield lambda d: et._fused_sgd_(
            [p.to(d)],
            [normal((2, 3)).to(d).t()],  # strided on the device (copies are contiguous)
            [],
            weight_decay=0.0,
            momentum=0.0,
            lr=0.1,
            dampening=0.0,
            nesterov=False,
            maximize=False,
            is_first_step=False,
        )
        yield lambda d: et._fused_sgd_(
            [p.to(d)],
            [p.to(d)],
            [],
            weight_decay=0.0,
            momentum=0.9,
            lr=0.1,
            dampening=0.0,
            nesterov=False,
            maximize=False,
            is_first_step=False,
        )
        yield lambda d: et._fused_sgd_(
            [p.to(d), p.double().to(d)],
            [p.to(d), p.double().to(d)],
            [],
            weight_decay=0.0,
            momentum=0.0,
            lr=0.1,
            dampening=0.0,
            nesterov=False,
            maximize=False,
            is_first_step=False,
        )
        hyper = dict(
            lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False
        )
        yield lambda d: et._fused_adam_(
            [p.to(d)], [p.to(d)], [p.to(d)], [p.to(d)], [], [et.tensor(0, dtype=et.int64)], **hyper
        )
        yield lambda d: et._fused_adam_(
            [p.to(d)], [p.to(d)], [p.to(d)], [p.to(d)], [], [et.zeros(2).to(d)], **hyper
        )
        yield lambda d: et._fused_adam_([p.to(d)], [p.to(d)], [p.to(d)], [p.to(d)], [], [], **hyper)
        yield lambda d: et._fused_adam_(
            [p.to(d)],
            [p.to(d)],
            [p.to(d)],
            [p.to(d)],
            [],
            [et.tensor(0.0)],
            **{**hyper, "amsgrad": True},
        )

    for run in cases():
        assert_same_error(run)

    # a mismatched state tensor: the message names the devices
    def mismatched(d):
        et._fused_adam_(
            [p.to(d)],
            [p.to(d)],
            [p[:2].to(d)],
            [p.to(d)],
            [],
            [et.tensor(0.0)],
            lr=0.1,
            beta1=0.9,
            beta2=0.99,
            weight_decay=0.0,
            eps=1e-8,
            amsgrad=False,
            maximize=False,
        )

    with pytest.raises(RuntimeError) as cpu_error:
        mismatched("cpu")
    with pytest.raises(RuntimeError) as dev_error:
        mismatched(DEV)
    name = str(on(p).device)
    assert str(dev_error.value) == str(cpu_error.value).replace("device cpu", f"device {name}")


# ---------------------------------------------------------------------------------------------
# LSTM recurrence


@pytest.mark.parametrize("dtype", [et.float32, et.float64])
@pytest.mark.parametrize("shape", [(4, 7, 37), (3, 12, 70), (2, 1, 1), (6, 33, 128)])
@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_forward_and_backward_match_cpu(dtype, shape, reverse):
    steps, n, h = shape
    x = normal((steps, n, 4 * h), dtype, 100)
    h0, c0 = normal((n, h), dtype, 101), normal((n, h), dtype, 102)
    w = normal((4 * h, h), dtype, 103) * float(1 / np.sqrt(h))
    scale = 5  # per step a GEMM (cuBLAS) and the gates' math functions (CUDA's own)

    def forward(dev):
        acts = et.empty((steps, n, 4 * h), dtype=dtype).to(dev)
        cells = et.empty((steps, n, h), dtype=dtype).to(dev)
        outs = et.empty((steps, n, h), dtype=dtype).to(dev)
        r = et._lstm_forward_(
            x.to(dev), h0.to(dev), c0.to(dev), w.to(dev), reverse, acts, cells, outs
        )
        assert len(r) == 0
        return acts, cells, outs

    want, got = forward("cpu"), forward(DEV)
    for g, c in zip(got, want):
        assert_close(g, c, scale)
    d_outs = normal((steps, n, h), dtype, 104)
    dh_in, dc_in = normal((n, h), dtype, 105), normal((n, h), dtype, 106)

    def backward(dev, acts, cells, with_outs):
        dh, dc = dh_in.clone().to(dev), dc_in.clone().to(dev)
        d_gates = et.empty((steps, n, 4 * h), dtype=dtype).to(dev)
        d_o = d_outs.to(dev) if with_outs else None
        et._lstm_backward_(acts, cells, c0.to(dev), w.to(dev), d_o, reverse, dh, dc, d_gates)
        return d_gates, dh, dc

    for with_outs in (True, False):
        # both from the CPU's forward, so that only the backward is compared
        want_b = backward("cpu", *want[:2], with_outs)
        got_b = backward(DEV, on(want[0]), on(want[1]), with_outs)
        for g, c in zip(got_b, want_b):
            assert_close(g, c, scale * 10)


def test_lstm_empty_and_errors_match_cpu():
    s = et.zeros((2, 0))
    gates, states = et.zeros((0, 2, 0)), et.zeros((0, 2, 0))
    r = et._lstm_forward_(
        on(gates), on(s), on(s), on(et.zeros((0, 0))), False, on(gates), on(states), on(states)
    )
    assert len(r) == 0
    x, h0 = normal((2, 3, 8)), normal((3, 2))
    w = normal((8, 2))

    def fwd(d, **bad):
        args = dict(
            x_proj=x,
            h0=h0,
            c0=h0,
            w_hh=w,
            acts=et.empty((2, 3, 8)),
            cells=et.empty((2, 3, 2)),
            outs=et.empty((2, 3, 2)),
        )
        args.update(bad)
        a = {k: v.to(d) for k, v in args.items()}
        et._lstm_forward_(
            a["x_proj"], a["h0"], a["c0"], a["w_hh"], False, a["acts"], a["cells"], a["outs"]
        )

    for bad in [
        dict(x_proj=normal((2, 3, 7))),
        dict(h0=normal((3, 3))),
        # contiguous: .to() copies make contiguous tensors, so a non-contiguous w_hh would
        # reach the CUDA kernel contiguous (docs/differences-from-pytorch.md)
        dict(w_hh=w.t().contiguous()),
        dict(cells=et.empty((2, 3, 2), dtype=et.float64)),
        dict(x_proj=x.half(), h0=h0.half(), c0=h0.half(), w_hh=w.half()),
    ]:
        assert_same_error(lambda d, bad=bad: fwd(d, **bad))
    assert_same_error(
        lambda d: et._lstm_backward_(
            x.to(d),
            et.empty((2, 3, 2)).to(d),
            h0.to(d),
            w.to(d),
            None,
            False,
            h0.to(d),
            normal((3, 3)).to(d),
            x.to(d),
        )
    )
