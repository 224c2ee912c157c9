"""CUDA kernels against the CPU kernels: the first ops ported to CUDA (creation, the
arithmetic and unary ops, sum/mean, matmul, conv2d and its derivatives, im2col/col2im, the
pooling ops and their derivatives, threshold_backward), device moves and the device rules.

Runs only where a GPU is present; skipped elsewhere. ``EMBER_CUDA_TEST_DEVICE=cpu`` runs
the comparisons against the CPU instead (``nox -s cuda_cpu_mode``), which checks the tests
themselves; the tests of what only a real device has (two devices in one call, pinned
memory, the caching allocator's statistics, streams) stay skipped there.
"""

import numpy as np
import pytest

import ember_tensor as et
from cuda_testing import DEV, FLOATS, assert_close, host, on, requires_device, tolerance
from op_registry import unary_math_ops

pytestmark = requires_device
# what only a CUDA device has: these tests keep skipping under EMBER_CUDA_TEST_DEVICE=cpu
needs_cuda = pytest.mark.skipif(DEV != "cuda", reason="needs a real CUDA device")


def rand(shape, dtype=et.float32, seed=0):
    rng = np.random.default_rng(seed)
    return et.tensor(rng.standard_normal(shape).astype(np.float64)).to(dtype)


def assert_same(dev_result, cpu_result, dtype=et.float32):
    """Values within the tolerance table's (rtol, atol) for dtype (cuda_testing.tolerance)."""
    assert dev_result.device.type == DEV
    got = dev_result.cpu().to(et.float64).numpy()
    want = cpu_result.to(et.float64).numpy()
    rtol, atol = tolerance(dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def test_round_trip_keeps_values_and_dtype():
    for dt in [
        et.float32,
        et.float64,
        et.float16,
        et.bfloat16,
        et.int64,
        et.int32,
        et.uint8,
        et.bool,
    ]:
        x = (rand((3, 5)) * 10).to(dt)
        y = on(x)
        assert y.device == (et.device("cuda", 0) if DEV == "cuda" else et.device("cpu"))
        assert y.dtype == dt
        assert np.array_equal(host(y), host(x))  # bfloat16 through float64


def test_to_cuda_converts_dtype_and_strides():
    x = rand((4, 6)).t()  # not contiguous
    y = x.to(DEV, et.float64)
    assert y.dtype == et.float64
    np.testing.assert_array_equal(y.cpu().numpy(), x.to(et.float64).numpy())


def test_creation_ops_on_cuda():
    assert_same(et.zeros(3, 4, device=DEV), et.zeros(3, 4))
    assert_same(
        et.ones((2, 3), device=DEV, dtype=et.float64),
        et.ones((2, 3), dtype=et.float64),
        et.float64,
    )
    assert_same(et.full((5,), 2.5, device=DEV), et.full((5,), 2.5))
    z = et.zeros_like(on(rand((2, 2))))
    assert z.device.type == DEV


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_ops_match_cpu(op, dtype):
    a, b = rand((4, 1, 5), dtype, 1), rand((3, 5), dtype, 2)
    f = getattr(et, op)
    assert_same(f(on(a), on(b)), f(a, b), dtype)
    assert_same(f(on(a), 2.5), f(a, 2.5), dtype)  # a Python number joins as a CPU scalar
    assert_same(f(on(a), et.tensor(3.0)), f(a, et.tensor(3.0)), dtype)


# every elementwise unary math op with a CUDA kernel (the registry's query over the schema)
@pytest.mark.parametrize("op", unary_math_ops())
def test_unary_ops_match_cpu(op):
    a = rand((7, 9)).abs() + 0.1
    f = getattr(et, op)
    assert_same(f(on(a)), f(a))
    assert_same(f(on(a.t())), f(a.t()))


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 2)])
def test_sum_and_mean_match_cpu(dim):
    a = rand((4, 5, 6))
    kw = {} if dim is None else {"dim": dim}
    assert_same(et.sum(on(a), **kw), et.sum(a, **kw))
    assert_same(et.mean(on(a), **kw), et.mean(a, **kw))


@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul_matches_cpu(dtype):
    a, b = rand((2, 3, 8, 16), dtype, 3), rand((16, 4), dtype, 4)
    # against the float64 product: sums of 16 products, rounded in dtype (the 16-bit floats
    # accumulate in float32 and round once, or in their own precision)
    rtol, atol = tolerance(dtype, 3)
    got = et.matmul(on(a), on(b)).cpu().to(et.float64).numpy()
    want = et.matmul(a.to(et.float64), b.to(et.float64)).numpy()
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    got = et.mm(on(a[0, 0]), on(b)).cpu().to(et.float64).numpy()
    np.testing.assert_allclose(got, want[0, 0], rtol=rtol, atol=atol)


@needs_cuda
def test_mixed_devices_are_a_clear_error():
    a, b = on(rand((3,))), rand((3,))
    with pytest.raises(
        RuntimeError,
        match=r"add: expected all tensors to be on the same device, but found at "
        r"least two devices, cuda:0 and cpu",
    ):
        et.add(a, b)


# Every op with per-device kernels has its CUDA kernel now (test_cuda_build.py checks the
# dispatcher's table; cumsum, once the example of a missing kernel, is in
# test_cuda_ops_reduce.py). What the CUDA kernels still lack raises NotImplementedError,
# never a silent fallback: div's rounding modes.
@pytest.mark.xfail(
    DEV == "cuda",
    raises=NotImplementedError,
    strict=True,
    reason="the CUDA div kernel has no rounding_mode yet (NotImplementedError)",
)
@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_div_rounding_modes_match_cpu(mode):
    a, b = rand((4, 5), et.float32, 16) * 4, rand((5,), et.float32, 17)
    assert_same(et.div(on(a), on(b), rounding_mode=mode), et.div(a, b, rounding_mode=mode))
    assert_same(et.div(on(a), 0.75, rounding_mode=mode), et.div(a, 0.75, rounding_mode=mode))


def test_reading_values_synchronises():
    x = et.full((1000,), 3.0, device=DEV)
    assert float(et.sum(x)) == 3000.0
    assert et.sum(x).item() == 3000.0
    assert "3000" in repr(et.sum(x).cpu())


@needs_cuda
def test_numpy_of_a_cuda_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        on(rand((2,))).numpy()


@needs_cuda
def test_pinned_memory_and_non_blocking_copy():
    x = rand((1 << 16,))
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned()
    y = p.to("cuda", non_blocking=True)
    et.cuda.synchronize()
    np.testing.assert_array_equal(y.cpu().numpy(), x.numpy())


@needs_cuda
def test_steady_state_training_like_loop_makes_no_device_allocations():
    w = on(rand((256, 256)))
    x = on(rand((64, 256)))
    for _ in range(3):  # warm up the cache
        y = et.relu(et.matmul(x, w)).sum()
    before = et.cuda.memory_stats()["num_device_alloc"]
    for _ in range(20):
        y = et.relu(et.matmul(x, w)).sum()
        y.item()
    assert et.cuda.memory_stats()["num_device_alloc"] == before


@needs_cuda
def test_memory_stats_follow_a_tensor():
    et.cuda.empty_cache()
    base = et.cuda.memory_allocated()
    t = et.empty((1000,), dtype=et.float32, device=DEV)  # 4000 bytes -> 4096
    assert et.cuda.memory_allocated() - base == 4096
    del t
    assert et.cuda.memory_allocated() == base
    assert et.cuda.memory_reserved() >= 2 << 20


@needs_cuda
def test_record_stream_keeps_memory_until_the_stream_is_done():
    s = et.cuda.Stream()
    t = et.empty((1 << 20,), device=DEV)
    ptr = t.data_ptr()
    t.record_stream(s)
    del t
    u = et.empty((1 << 20,), device=DEV)
    assert u.data_ptr() != ptr or s.query()


@pytest.mark.parametrize(
    ("stride", "padding", "dilation", "groups"),
    [(1, 0, 1, 1), (2, 1, 1, 1), (1, 2, 2, 1), (1, 1, 1, 2), (3, 0, 1, 4)],
)
def test_conv2d_and_its_derivatives_match_cpu(stride, padding, dilation, groups):
    x, w, b = (
        rand((2, 8, 11, 9), et.float64, 5),
        rand((4, 8 // groups, 3, 3), et.float64, 6),
        rand((4,), et.float64),
    )
    args = ([stride], [padding], [dilation], groups)
    y = et.conv2d(x, w, b, *args)
    assert_same(et.conv2d(on(x), on(w), on(b), *args), y, et.float64)
    gy = rand(tuple(y.shape), et.float64, 7)
    assert_same(
        et.conv2d_backward_input(on(gy), on(w), list(x.shape), *args),
        et.conv2d_backward_input(gy, w, list(x.shape), *args),
        et.float64,
    )
    assert_same(
        et.conv2d_backward_weight(on(gy), on(x), list(w.shape), *args),
        et.conv2d_backward_weight(gy, x, list(w.shape), *args),
        et.float64,
    )


def test_im2col_and_col2im_match_cpu():
    x = rand((2, 3, 7, 6), et.float32, 8)
    cols = et.im2col(x, [3, 2], [1, 2], [1, 0], [2, 1])
    assert_same(et.im2col(on(x), [3, 2], [1, 2], [1, 0], [2, 1]), cols)
    assert_same(
        et.col2im(on(cols), [7, 6], [3, 2], [1, 2], [1, 0], [2, 1]),
        et.col2im(cols, [7, 6], [3, 2], [1, 2], [1, 0], [2, 1]),
    )


@pytest.mark.parametrize("dtype", [et.float32, et.float64])
@pytest.mark.parametrize(
    ("kernel", "stride", "padding", "ceil_mode"),
    [(2, 2, 0, False), (3, 2, 1, True), (3, 1, 1, False)],
)
def test_pooling_and_its_derivatives_match_cpu(dtype, kernel, stride, padding, ceil_mode):
    x = rand((2, 3, 9, 8), dtype, 9)
    out, idx = et.max_pool2d_with_indices(x, [kernel], [stride], [padding], [1], ceil_mode)
    c_out, c_idx = et.max_pool2d_with_indices(
        on(x), [kernel], [stride], [padding], [1], ceil_mode
    )
    assert_same(c_out, out, dtype)
    assert np.array_equal(c_idx.cpu().numpy(), idx.numpy())
    g = rand(tuple(out.shape), dtype, 10)
    args = ([kernel], [stride], [padding], [1], ceil_mode)
    assert_same(
        et.max_pool2d_with_indices_backward(on(g), on(x), *args, c_idx),
        et.max_pool2d_with_indices_backward(g, x, *args, idx),
        dtype,
    )
    for cip in (True, False):
        a_args = ([kernel], [stride], [padding], ceil_mode, cip, None)
        y = et.avg_pool2d(x, *a_args)
        assert_same(et.avg_pool2d(on(x), *a_args), y, dtype)
        gy = rand(tuple(y.shape), dtype, 11)
        assert_same(
            et.avg_pool2d_backward(on(gy), on(x), *a_args),
            et.avg_pool2d_backward(gy, x, *a_args),
            dtype,
        )


@pytest.mark.parametrize("out_size", [(1, 1), (3, 4), (5, 3)])
def test_adaptive_pooling_matches_cpu(out_size):
    x = rand((2, 3, 10, 7), et.float64, 12)
    y = et.adaptive_avg_pool2d(x, list(out_size))
    assert_same(et.adaptive_avg_pool2d(on(x), list(out_size)), y, et.float64)
    g = rand(tuple(y.shape), et.float64, 13)
    assert_same(
        et.adaptive_avg_pool2d_backward(on(g), on(x)),
        et.adaptive_avg_pool2d_backward(g, x),
        et.float64,
    )
    m, i = et.adaptive_max_pool2d(x, list(out_size))
    cm, ci = et.adaptive_max_pool2d(on(x), list(out_size))
    assert_same(cm, m, et.float64)
    assert np.array_equal(ci.cpu().numpy(), i.numpy())
    assert_same(
        et.adaptive_max_pool2d_backward(on(g), on(x), ci),
        et.adaptive_max_pool2d_backward(g, x, i),
        et.float64,
    )


@pytest.mark.parametrize("op", ["neg", "abs", "square", "sign", "floor", "round", "exp", "sqrt"])
def test_unary_ops_on_integers_match_cpu(op):
    a = et.tensor([[-3, 0, 2], [7, -1, 4]], dtype=et.int64)
    f = getattr(et, op)
    # integer results exactly, float ones (exp, sqrt: float32) within 1/20 of the table
    assert_close(f(on(a)), f(a), 0.05)


def test_threshold_backward_matches_cpu():
    g, x = rand((5, 6), et.float32, 14), rand((5, 6), et.float32, 15)
    x = et.where(x > 1.0, et.tensor(float("nan")), x)
    assert_same(et.threshold_backward(on(g), on(x), 0.0), et.threshold_backward(g, x, 0.0))
