"""CUDA kernels against the CPU kernels (and PyTorch's CUDA results when PyTorch has CUDA).

Runs only where a GPU is present (`ember_tensor.cuda.is_available()`); skipped elsewhere.
"""

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor import _C

cuda_available = _C._cuda_device_count() > 0
pytestmark = pytest.mark.skipif(not cuda_available, reason="no CUDA device")

FLOATS = [et.float32, et.float64, et.float16, et.bfloat16]
TOL = {et.float32: 1e-5, et.float64: 1e-12, et.float16: 2e-3, et.bfloat16: 2e-2}


def rand(shape, dtype=et.float32, seed=0):
    rng = np.random.default_rng(seed)
    return et.tensor(rng.standard_normal(shape).astype(np.float64)).to(dtype)


def assert_same(cuda_result, cpu_result, dtype=et.float32):
    assert cuda_result.device.type == "cuda"
    got = cuda_result.cpu().to(et.float64).numpy()
    want = cpu_result.to(et.float64).numpy()
    np.testing.assert_allclose(got, want, rtol=TOL.get(dtype, 0), atol=TOL.get(dtype, 0))


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
        y = x.cuda()
        assert y.device == et.device("cuda", 0)
        assert y.dtype == dt
        assert np.array_equal(y.cpu().numpy(), x.numpy())


def test_to_cuda_converts_dtype_and_strides():
    x = rand((4, 6)).t()  # not contiguous
    y = x.to("cuda", et.float64)
    assert y.dtype == et.float64
    np.testing.assert_array_equal(y.cpu().numpy(), x.to(et.float64).numpy())


def test_creation_ops_on_cuda():
    assert_same(et.zeros(3, 4, device="cuda"), et.zeros(3, 4))
    assert_same(
        et.ones((2, 3), device="cuda", dtype=et.float64),
        et.ones((2, 3), dtype=et.float64),
        et.float64,
    )
    assert_same(et.full((5,), 2.5, device="cuda"), et.full((5,), 2.5))
    z = et.zeros_like(rand((2, 2)).cuda())
    assert z.device.type == "cuda"


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_ops_match_cpu(op, dtype):
    a, b = rand((4, 1, 5), dtype, 1), rand((3, 5), dtype, 2)
    f = getattr(et, op)
    assert_same(f(a.cuda(), b.cuda()), f(a, b), dtype)
    assert_same(f(a.cuda(), 2.5), f(a, 2.5), dtype)  # a Python number joins as a CPU scalar
    assert_same(f(a.cuda(), et.tensor(3.0)), f(a, et.tensor(3.0)), dtype)


@pytest.mark.parametrize(
    "op",
    [
        "neg",
        "abs",
        "exp",
        "log",
        "sqrt",
        "tanh",
        "sigmoid",
        "relu",
        "square",
        "sign",
        "floor",
        "ceil",
        "round",
        "trunc",
        "log1p",
        "expm1",
        "rsqrt",
        "sin",
        "cos",
        "tan",
        "erf",
        "log2",
        "log10",
        "atan",
        "reciprocal",
    ],
)
def test_unary_ops_match_cpu(op):
    a = rand((7, 9)).abs() + 0.1
    f = getattr(et, op)
    assert_same(f(a.cuda()), f(a))
    assert_same(f(a.t().cuda()), f(a.t()))


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 2)])
def test_sum_and_mean_match_cpu(dim):
    a = rand((4, 5, 6))
    kw = {} if dim is None else {"dim": dim}
    assert_same(et.sum(a.cuda(), **kw), et.sum(a, **kw))
    assert_same(et.mean(a.cuda(), **kw), et.mean(a, **kw))


@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul_matches_cpu(dtype):
    a, b = rand((2, 3, 8, 16), dtype, 3), rand((16, 4), dtype, 4)
    tol = {et.float16: 1e-2, et.bfloat16: 5e-2}.get(dtype, 1e-4)
    got = et.matmul(a.cuda(), b.cuda()).cpu().to(et.float64).numpy()
    want = et.matmul(a.to(et.float64), b.to(et.float64)).numpy()
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    got = et.mm(a[0, 0].cuda(), b.cuda()).cpu().to(et.float64).numpy()
    np.testing.assert_allclose(got, want[0, 0], rtol=tol, atol=tol)


def test_mixed_devices_are_a_clear_error():
    a, b = rand((3,)).cuda(), rand((3,))
    with pytest.raises(
        RuntimeError,
        match=r"add: expected all tensors to be on the same device, but found at "
        r"least two devices, cuda:0 and cpu",
    ):
        et.add(a, b)


def test_op_without_a_cuda_kernel_raises_not_implemented():
    with pytest.raises(NotImplementedError, match="not implemented for CUDA tensors yet"):
        et.cumsum(rand((3,)).cuda(), 0)


def test_reading_values_synchronises():
    x = et.full((1000,), 3.0, device="cuda")
    assert float(et.sum(x)) == 3000.0
    assert et.sum(x).item() == 3000.0
    assert "3000" in repr(et.sum(x).cpu())


def test_numpy_of_a_cuda_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        rand((2,)).cuda().numpy()


def test_pinned_memory_and_non_blocking_copy():
    x = rand((1 << 16,))
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned()
    y = p.to("cuda", non_blocking=True)
    et.cuda.synchronize()
    np.testing.assert_array_equal(y.cpu().numpy(), x.numpy())


def test_steady_state_training_like_loop_makes_no_device_allocations():
    w = rand((256, 256)).cuda()
    x = rand((64, 256)).cuda()
    for _ in range(3):  # warm up the cache
        y = et.relu(et.matmul(x, w)).sum()
    before = et.cuda.memory_stats()["num_device_alloc"]
    for _ in range(20):
        y = et.relu(et.matmul(x, w)).sum()
        y.item()
    assert et.cuda.memory_stats()["num_device_alloc"] == before


def test_memory_stats_follow_a_tensor():
    et.cuda.empty_cache()
    base = et.cuda.memory_allocated()
    t = et.empty((1000,), dtype=et.float32, device="cuda")  # 4000 bytes -> 4096
    assert et.cuda.memory_allocated() - base == 4096
    del t
    assert et.cuda.memory_allocated() == base
    assert et.cuda.memory_reserved() >= 2 << 20


def test_record_stream_keeps_memory_until_the_stream_is_done():
    s = et.cuda.Stream()
    t = et.empty((1 << 20,), device="cuda")
    ptr = t.data_ptr()
    t.record_stream(s)
    del t
    u = et.empty((1 << 20,), device="cuda")
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
    assert_same(et.conv2d(x.cuda(), w.cuda(), b.cuda(), *args), y, et.float64)
    gy = rand(tuple(y.shape), et.float64, 7)
    assert_same(
        et.conv2d_backward_input(gy.cuda(), w.cuda(), list(x.shape), *args),
        et.conv2d_backward_input(gy, w, list(x.shape), *args),
        et.float64,
    )
    assert_same(
        et.conv2d_backward_weight(gy.cuda(), x.cuda(), list(w.shape), *args),
        et.conv2d_backward_weight(gy, x, list(w.shape), *args),
        et.float64,
    )


def test_im2col_and_col2im_match_cpu():
    x = rand((2, 3, 7, 6), et.float32, 8)
    cols = et.im2col(x, [3, 2], [1, 2], [1, 0], [2, 1])
    assert_same(et.im2col(x.cuda(), [3, 2], [1, 2], [1, 0], [2, 1]), cols)
    assert_same(
        et.col2im(cols.cuda(), [7, 6], [3, 2], [1, 2], [1, 0], [2, 1]),
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
        x.cuda(), [kernel], [stride], [padding], [1], ceil_mode
    )
    assert_same(c_out, out, dtype)
    assert np.array_equal(c_idx.cpu().numpy(), idx.numpy())
    g = rand(tuple(out.shape), dtype, 10)
    args = ([kernel], [stride], [padding], [1], ceil_mode)
    assert_same(
        et.max_pool2d_with_indices_backward(g.cuda(), x.cuda(), *args, c_idx),
        et.max_pool2d_with_indices_backward(g, x, *args, idx),
        dtype,
    )
    for cip in (True, False):
        a_args = ([kernel], [stride], [padding], ceil_mode, cip, None)
        y = et.avg_pool2d(x, *a_args)
        assert_same(et.avg_pool2d(x.cuda(), *a_args), y, dtype)
        gy = rand(tuple(y.shape), dtype, 11)
        assert_same(
            et.avg_pool2d_backward(gy.cuda(), x.cuda(), *a_args),
            et.avg_pool2d_backward(gy, x, *a_args),
            dtype,
        )


@pytest.mark.parametrize("out_size", [(1, 1), (3, 4), (5, 3)])
def test_adaptive_pooling_matches_cpu(out_size):
    x = rand((2, 3, 10, 7), et.float64, 12)
    y = et.adaptive_avg_pool2d(x, list(out_size))
    assert_same(et.adaptive_avg_pool2d(x.cuda(), list(out_size)), y, et.float64)
    g = rand(tuple(y.shape), et.float64, 13)
    assert_same(
        et.adaptive_avg_pool2d_backward(g.cuda(), x.cuda()),
        et.adaptive_avg_pool2d_backward(g, x),
        et.float64,
    )
    m, i = et.adaptive_max_pool2d(x, list(out_size))
    cm, ci = et.adaptive_max_pool2d(x.cuda(), list(out_size))
    assert_same(cm, m, et.float64)
    assert np.array_equal(ci.cpu().numpy(), i.numpy())
    assert_same(
        et.adaptive_max_pool2d_backward(g.cuda(), x.cuda(), ci),
        et.adaptive_max_pool2d_backward(g, x, i),
        et.float64,
    )


@pytest.mark.parametrize("op", ["neg", "abs", "square", "sign", "floor", "round", "exp", "sqrt"])
def test_unary_ops_on_integers_match_cpu(op):
    a = et.tensor([[-3, 0, 2], [7, -1, 4]], dtype=et.int64)
    f = getattr(et, op)
    got, want = f(a.cuda()), f(a)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6)


def test_threshold_backward_matches_cpu():
    g, x = rand((5, 6), et.float32, 14), rand((5, 6), et.float32, 15)
    x = et.where(x > 1.0, et.tensor(float("nan")), x)
    assert_same(et.threshold_backward(g.cuda(), x.cuda(), 0.0), et.threshold_backward(g, x, 0.0))
