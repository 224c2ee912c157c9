"""max_pool2d_with_indices, avg_pool2d, adaptive_avg_pool2d, adaptive_max_pool2d and their
backward ops against PyTorch: kernel sizes, strides, padding, dilation, ceil mode, batched and
unbatched inputs, dtypes, layouts, NaN, and errors. Names PyTorch has only in
torch.nn.functional or torch.ops.aten are reached through ``_fn``."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from conftest import IS_TORCH, assert_close, tensor, to_np

aten = torch.ops.aten


def _fn(lib, name):
    """The op under test: ember_tensor's, or PyTorch's function of the same name."""
    if lib is torch:
        return {
            "max_pool2d_with_indices": aten.max_pool2d_with_indices,
            "max_pool2d_with_indices_backward": aten.max_pool2d_with_indices_backward,
            "avg_pool2d": aten.avg_pool2d,
            "avg_pool2d_backward": aten.avg_pool2d_backward,
            "adaptive_avg_pool2d": torch._C._nn.adaptive_avg_pool2d,
            "adaptive_avg_pool2d_backward": aten._adaptive_avg_pool2d_backward,
            "adaptive_max_pool2d": torch._C._nn.adaptive_max_pool2d,
            "adaptive_max_pool2d_backward": aten.adaptive_max_pool2d_backward,
        }[name]
    return getattr(lib, name)


# shape, kernel, stride, padding, dilation, ceil_mode
MAX = [
    ((2, 3, 8, 8), [2], [], [0], [1], False),
    ((2, 3, 7, 9), [3, 2], [2, 1], [1, 0], [1, 1], False),
    ((1, 2, 9, 9), [3], [2], [1], [2], False),
    ((2, 2, 5, 5), [2], [2], [0], [1], True),
    ((3, 7, 6), [3], [2], [1], [1], True),  # unbatched
    ((0, 2, 4, 4), [2], [], [0], [1], False),  # empty batch
    ((1, 1, 6, 7), [4, 3], [3, 2], [2, 1], [1, 2], True),
]


def _t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("case", MAX, ids=str)
@pytest.mark.parametrize("layout", ["contig", "transposed"])
def test_max_pool2d_with_indices(lib, rng, dtype, case, layout):
    shape, k, s, p, d, ceil = case
    x = rng.permutation(np.arange(np.prod(shape))).reshape(shape) / 8.0  # distinct values
    out, idx = _fn(lib, "max_pool2d_with_indices")(tensor(lib, x, dtype, layout), k, s, p, d, ceil)
    tx = tensor(torch, x, dtype)
    want, widx = aten.max_pool2d_with_indices(tx, k, s, p, d, ceil)
    assert_close(out, to_np(want), dtype)
    assert str(idx.dtype).endswith("int64")
    np.testing.assert_array_equal(to_np(idx), widx.numpy())


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_max_pool2d_integers(lib, rng, dtype):
    x = rng.integers(0, 100, size=(2, 3, 6, 6))
    out, idx = _fn(lib, "max_pool2d_with_indices")(tensor(lib, x, dtype), [3], [2], [1])
    want, widx = aten.max_pool2d_with_indices(tensor(torch, x, dtype), [3], [2], [1])
    np.testing.assert_array_equal(to_np(out), want.numpy())
    np.testing.assert_array_equal(to_np(idx), widx.numpy())


def test_max_pool2d_nan_ties_and_padding(lib):
    x = np.array([[[1.0, np.nan, 2.0, 2.0], [3.0, 2.0, 2.0, 2.0],
                   [-np.inf, -np.inf, 5.0, np.nan], [-np.inf, -np.inf, np.nan, 1.0]]])
    fn = _fn(lib, "max_pool2d_with_indices")
    for args in (([2],), ([2], [1], [1]), ([3], [1], [1]), ([2], [2], [0], [1], True)):
        out, idx = fn(tensor(lib, x, "float64"), *args)
        want, widx = aten.max_pool2d_with_indices(_t(x), *args)
        np.testing.assert_array_equal(to_np(out), want.numpy())
        np.testing.assert_array_equal(to_np(idx), widx.numpy())


AVG = [
    ((2, 3, 8, 8), [2], [], [0], False, True, None),
    ((2, 3, 7, 9), [3, 2], [2, 1], [1, 0], False, True, None),
    ((2, 3, 7, 9), [3, 2], [2, 1], [1, 0], False, False, None),
    ((2, 2, 5, 5), [3], [2], [1], True, True, None),
    ((2, 2, 5, 5), [3], [2], [1], True, False, None),
    ((3, 7, 6), [3], [2], [1], True, False, None),
    ((1, 2, 6, 6), [3], [3], [1], False, True, 5),
    ((1, 2, 6, 6), [2], [1], [1], True, False, -2),
    ((0, 2, 4, 4), [2], [], [0], False, True, None),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("case", AVG, ids=str)
def test_avg_pool2d(lib, rng, dtype, case):
    shape, k, s, p, ceil, cip, div = case
    x = rng.standard_normal(shape)
    out = _fn(lib, "avg_pool2d")(tensor(lib, x, dtype, "transposed"), k, s, p, ceil, cip, div)
    want = aten.avg_pool2d(_t(x), k, s, p, ceil, cip, div)
    assert_close(out, want.numpy(), dtype, scale=4)


@pytest.mark.parametrize("case", AVG, ids=str)
def test_avg_pool2d_backward_is_the_adjoint(lib, rng, case):
    shape, k, s, p, ceil, cip, div = case
    x = rng.standard_normal(shape)
    out = aten.avg_pool2d(_t(x), k, s, p, ceil, cip, div)
    g = rng.standard_normal(tuple(out.shape))
    got = _fn(lib, "avg_pool2d_backward")(tensor(lib, g, "float64"), tensor(lib, x, "float64"),
                                          k, s if s else k, p, ceil, cip, div)
    want = aten.avg_pool2d_backward(_t(g), _t(x), k, s if s else k, p, ceil, cip, div)
    assert_close(got, want.numpy(), "float64")


@pytest.mark.parametrize("case", MAX, ids=str)
def test_max_pool2d_backward(lib, rng, case):
    shape, k, s, p, d, ceil = case
    x = rng.permutation(np.arange(np.prod(shape))).reshape(shape) * 1.0
    out, idx = aten.max_pool2d_with_indices(_t(x), k, s, p, d, ceil)
    g = rng.standard_normal(tuple(out.shape))
    got = _fn(lib, "max_pool2d_with_indices_backward")(
        tensor(lib, g, "float64"), tensor(lib, x, "float64"), k, s, p, d, ceil,
        lib.tensor(idx.numpy()))
    want = aten.max_pool2d_with_indices_backward(_t(g), _t(x), k, s, p, d, ceil, idx)
    assert_close(got, want.numpy(), "float64")


ADAPTIVE = [
    ((2, 3, 8, 8), [4, 4]),
    ((2, 3, 7, 9), [3, 5]),
    ((2, 3, 5, 4), [7, 6]),  # larger than the input: overlapping windows
    ((3, 7, 6), [1, 1]),
    ((2, 3, 5, 5), [0, 3]),
    ((0, 2, 4, 4), [2, 2]),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("case", ADAPTIVE, ids=str)
def test_adaptive_pools(lib, rng, dtype, case):
    shape, size = case
    x = rng.permutation(np.arange(np.prod(shape))).reshape(shape) / 8.0
    out = _fn(lib, "adaptive_avg_pool2d")(tensor(lib, x, dtype, "transposed"), size)
    assert_close(out, torch._C._nn.adaptive_avg_pool2d(_t(x), size).numpy(), dtype, scale=4)
    out, idx = _fn(lib, "adaptive_max_pool2d")(tensor(lib, x, dtype), size)
    want, widx = torch._C._nn.adaptive_max_pool2d(tensor(torch, x, dtype), size)
    assert_close(out, to_np(want), dtype)
    np.testing.assert_array_equal(to_np(idx), widx.numpy())


@pytest.mark.parametrize("case", [c for c in ADAPTIVE if 0 not in c[1]], ids=str)
def test_adaptive_backward_ops(lib, rng, case):
    shape, size = case
    x = rng.permutation(np.arange(np.prod(shape))).reshape(shape) * 1.0
    g = rng.standard_normal(tuple(shape[:-2]) + tuple(size))
    got = _fn(lib, "adaptive_avg_pool2d_backward")(tensor(lib, g, "float64"),
                                                   tensor(lib, x, "float64"))
    want = aten._adaptive_avg_pool2d_backward(_t(g), _t(x))
    assert_close(got, want.numpy(), "float64")
    _, idx = torch._C._nn.adaptive_max_pool2d(_t(x), size)
    got = _fn(lib, "adaptive_max_pool2d_backward")(tensor(lib, g, "float64"),
                                                   tensor(lib, x, "float64"),
                                                   lib.tensor(idx.numpy()))
    want = aten.adaptive_max_pool2d_backward(_t(g), _t(x), idx)
    assert_close(got, want.numpy(), "float64")


def test_pools_match_functional_forms(lib, rng):
    """The functional spellings torch users know give the same values."""
    x = rng.standard_normal((2, 3, 9, 7))
    ex = tensor(lib, x, "float64")
    tx = _t(x)
    out, _ = _fn(lib, "max_pool2d_with_indices")(ex, [3], [2], [1])
    assert_close(out, F.max_pool2d(tx, 3, 2, 1).numpy(), "float64")
    out = _fn(lib, "avg_pool2d")(ex, [3], [2], [1], True, False)
    assert_close(out, F.avg_pool2d(tx, 3, 2, 1, True, False).numpy(), "float64")


ERRORS = [
    (lambda L: _fn(L, "max_pool2d_with_indices")(L.ones(1, 1, 4, 4), [2, 2, 2]),
     "max_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    (lambda L: _fn(L, "max_pool2d_with_indices")(L.ones(1, 1, 4, 4), [2], [1, 1, 1]),
     "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints"),
    (lambda L: _fn(L, "max_pool2d_with_indices")(L.ones(1, 1, 4, 4), [2], [1], [0, 0, 0]),
     "max_pool2d: padding must either be a single int, or a tuple of two ints"),
    (lambda L: _fn(L, "max_pool2d_with_indices")(L.ones(1, 1, 4, 4), [2], [1], [0], [1, 1, 1]),
     "max_pool2d: dilation must be either a single int, or a tuple of two ints"),
    (lambda L: _fn(L, "max_pool2d_with_indices")(L.ones(1, 1, 4, 4), [0, 2]),
     "stride should not be zero"),
    (lambda L: _fn(L, "max_pool2d_with_indices")(L.ones(1, 1, 4, 4), [0, 2], [1]),
     "kernel size should be greater than zero, but got kH: 0 kW: 2"),
    (lambda L: _fn(L, "max_pool2d_with_indices")(L.ones(1, 1, 4, 4), [2], [1], [2]),
     "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 and "
     "dilation=1"),
    (lambda L: _fn(L, "max_pool2d_with_indices")(L.ones(1, 1, 4, 4), [2], [1], [-1, 0]),
     "pad must be non-negative, but got pad: -1"),
    (lambda L: _fn(L, "max_pool2d_with_indices")(L.ones(1, 1, 4, 4), [2], [1], [0], [0, 1]),
     "dilation should be greater than zero, but got dilationH: 0 dilationW: 1"),
    (lambda L: _fn(L, "max_pool2d_with_indices")(L.ones(1, 2, 2, 2), [3]),
     r"Given input size: \(2x2x2\). Calculated output size: \(2x0x0\). Output size is too small"),
    (lambda L: _fn(L, "max_pool2d_with_indices")(L.ones(4, 4), [2]),
     "non-empty 3D or 4D"),
    (lambda L: _fn(L, "max_pool2d_with_indices")(L.ones(1, 0, 4, 4), [2]),
     r"Expected 3D or 4D \(batch mode\) tensor with optional 0 dim batch size for input, but "
     r"got:\[1, 0, 4, 4\]"),
    (lambda L: _fn(L, "avg_pool2d")(L.ones(1, 1, 4, 4), [2, 2, 2]),
     "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
    (lambda L: _fn(L, "avg_pool2d")(L.ones(1, 1, 4, 4), [2], [1], [0], False, True, 0),
     "divisor must be not zero"),
    (lambda L: _fn(L, "avg_pool2d")(L.ones(1, 1, 4, 4), [2], [1], [2]),
     "pad should be at most half of effective kernel size"),
    (lambda L: _fn(L, "adaptive_avg_pool2d")(L.ones(1, 1, 4, 4), [3]),
     "adaptive_avg_pool2d: output_size must be 2"),
    (lambda L: _fn(L, "adaptive_avg_pool2d")(L.ones(1, 1, 4, 4), [-1, 3]),
     r"adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
     r"received \{-1, 3\}"),
    (lambda L: _fn(L, "adaptive_avg_pool2d")(L.ones(4, 4), [2, 2]),
     r"adaptive_avg_pool2d\(\): Expected 3D or 4D tensor, but got \[4, 4\]"),
    (lambda L: _fn(L, "adaptive_avg_pool2d")(L.ones(1, 2, 0, 4), [2, 2]),
     r"Expected input to have non-zero size for non-batch dimensions, but input has sizes "
     r"\[1, 2, 0, 4\] with dimension 2 being empty"),
    (lambda L: _fn(L, "adaptive_max_pool2d")(L.ones(4, 4), [2, 2]),
     r"adaptive_max_pool2d\(\): Expected 3D or 4D tensor, but got: \[4, 4\]"),
    (lambda L: _fn(L, "adaptive_max_pool2d")(L.ones(1, 1, 4, 4), [2]),
     "adaptive_max_pool2d"),
]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c[1][:40] if isinstance(c, tuple) else c)
def test_errors(lib, case):
    fn, match = case
    with pytest.raises(RuntimeError, match=match):
        fn(lib)


@pytest.mark.parametrize("name", ["avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d"])
def test_integer_inputs_are_refused(lib, name):  # avg_pool2d takes int64 alone (below)
    x = lib.ones(1, 1, 4, 4, dtype=lib.int32 if name == "avg_pool2d" else lib.int64)
    args = ([2],) if name == "avg_pool2d" else ([2, 2],)
    with pytest.raises(RuntimeError):
        _fn(lib, name)(x, *args)


@pytest.mark.skipif(IS_TORCH, reason="ember's own checks of the backward ops' arguments")
def test_backward_op_argument_checks(lib):
    x = lib.ones(1, 1, 4, 4, dtype=lib.float64)
    g = lib.ones(1, 1, 2, 2, dtype=lib.float64)
    bad = lib.full((1, 1, 2, 2), 16, dtype=lib.int64)
    with pytest.raises(RuntimeError, match="invalid max index 16"):
        lib.max_pool2d_with_indices_backward(g, x, [2], [2], [0], [1], False, bad)
    with pytest.raises(RuntimeError, match=r"expected grad_output of size \[1, 1, 2, 2\]"):
        lib.max_pool2d_with_indices_backward(lib.ones(1, 1, 3, 3, dtype=lib.float64), x, [2], [2],
                                             [0], [1], False, bad)
    with pytest.raises(RuntimeError, match="expected indices of dtype int64"):
        lib.adaptive_max_pool2d_backward(g, x, bad.int())
    with pytest.raises(RuntimeError, match=r"expected grad_output of size \[1, 1, 2, 2\]"):
        lib.avg_pool2d_backward(lib.ones(1, 1, 3, 3, dtype=lib.float64), x, [2], [2], [0], False,
                                True, None)


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("divisor", [None, 3])
def test_avg_pool2d_of_int64_truncates_as_torch(lib, count_include_pad, divisor):
    x = np.random.default_rng(0).integers(-50, 50, (2, 3, 7, 6))
    args = ([3, 2], [2, 2], [1, 1], True, count_include_pad, divisor)
    got = _fn(lib, "avg_pool2d")(lib.from_numpy(x), *args)
    want = torch.nn.functional.avg_pool2d(torch.from_numpy(x), *args)
    assert got.dtype == lib.int64
    np.testing.assert_array_equal(to_np(got), want.numpy())
