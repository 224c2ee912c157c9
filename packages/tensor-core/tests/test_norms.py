"""native_batch_norm (training and evaluation, running statistics updated in place),
native_layer_norm and native_group_norm against PyTorch: shapes, optional parameters, dtypes
(16-bit floats with float32 parameters), layouts and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conftest import IS_TORCH, assert_close, tensor, to_np, tol


def _t(a, dtype="float64"):
    return tensor(torch, np.asarray(a), dtype)


def _opt(lib, a, dtype):
    return None if a is None else tensor(lib, a, dtype)


BN_SHAPES = [(4, 3), (4, 3, 5), (2, 3, 4, 5), (5, 2, 1, 3, 2), (1, 4, 3)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", BN_SHAPES, ids=str)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("layout", ["contig", "transposed"])
def test_native_batch_norm(lib, rng, dtype, shape, affine, training, layout):
    C = shape[1]
    x = rng.standard_normal(shape) * 2 + 1
    w = rng.standard_normal(C) if affine else None
    b = rng.standard_normal(C) if affine else None
    rm0, rv0 = rng.standard_normal(C), rng.uniform(0.5, 2, C)
    rm, rv = tensor(lib, rm0, dtype), tensor(lib, rv0, dtype)
    out = lib.native_batch_norm(tensor(lib, x, dtype, layout), _opt(lib, w, dtype),
                                _opt(lib, b, dtype), rm, rv, training, 0.3, 1e-3)
    trm, trv = _t(rm0, dtype), _t(rv0, dtype)
    want = torch.native_batch_norm(_t(x, dtype), None if w is None else _t(w, dtype),
                                   None if b is None else _t(b, dtype), trm, trv, training, 0.3,
                                   1e-3)
    for o, t in zip(out, want):
        assert_close(o, to_np(t), dtype, scale=10)
    assert_close(rm, trm.numpy(), dtype, scale=10)
    assert_close(rv, trv.numpy(), dtype, scale=10)


def test_batch_norm_running_stats_over_steps(lib, rng):
    """Several training steps: the running statistics follow PyTorch's (the unbiased batch
    variance enters the running estimate), then evaluation uses them."""
    rm, rv = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    for step in range(4):
        x = rng.standard_normal((5, 3, 2)) * (step + 1) + step
        lib.native_batch_norm(tensor(lib, x, "float64"), None, None, rm, rv, True, 0.1, 1e-5)
        torch.native_batch_norm(_t(x), None, None, trm, trv, True, 0.1, 1e-5)
    assert_close(rm, trm.numpy(), "float64")
    assert_close(rv, trv.numpy(), "float64")
    x = rng.standard_normal((2, 3, 2))
    out = lib.native_batch_norm(tensor(lib, x, "float64"), None, None, rm, rv, False, 0.1, 1e-5)
    want = torch.native_batch_norm(_t(x), None, None, trm, trv, False, 0.1, 1e-5)
    assert_close(out[0], want[0].numpy(), "float64")
    assert tuple(out[1].shape) == tuple(want[1].shape) == (0,)


def test_batch_norm_without_running_stats(lib, rng):
    x = rng.standard_normal((4, 3, 2))
    out = lib.native_batch_norm(tensor(lib, x, "float64"), None, None, None, None, True, 0.1, 1e-5)
    want = torch.native_batch_norm(_t(x), None, None, None, None, True, 0.1, 1e-5)
    for o, t in zip(out, want):
        assert_close(o, t.numpy(), "float64")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_norms_half_inputs_with_float_parameters(lib, rng, dtype):
    x = rng.standard_normal((4, 6, 5))
    w, b = rng.standard_normal(6), rng.standard_normal(6)
    rm, rv = tensor(lib, np.zeros(6), "float32"), tensor(lib, np.ones(6), "float32")
    trm, trv = _t(np.zeros(6), "float32"), _t(np.ones(6), "float32")
    out = lib.native_batch_norm(tensor(lib, x, dtype), tensor(lib, w, "float32"),
                                tensor(lib, b, "float32"), rm, rv, True, 0.1, 1e-5)
    want = torch.native_batch_norm(_t(x, dtype), _t(w, "float32"), _t(b, "float32"), trm, trv,
                                   True, 0.1, 1e-5)
    assert_close(out[0], to_np(want[0]), dtype, scale=4)
    assert_close(rm, trm.numpy(), "float32", scale=1e3)
    out = lib.native_layer_norm(tensor(lib, x, dtype), [5], None, None, 1e-5)
    want = torch.native_layer_norm(_t(x, dtype), [5], None, None, 1e-5)
    for o, t in zip(out, want):
        assert_close(o, to_np(t), dtype, scale=4)
    out = lib.native_group_norm(tensor(lib, x, dtype), None, None, 4, 6, 5, 3, 1e-5)
    want = torch.native_group_norm(_t(x, dtype), None, None, 4, 6, 5, 3, 1e-5)
    for o, t in zip(out, want):
        assert_close(o, to_np(t), dtype, scale=4)


LN = [((2, 3, 4), [4]), ((2, 3, 4), [3, 4]), ((5,), [5]), ((2, 0, 3), [3]),
      ((3, 2, 2, 2), [2, 2, 2])]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", LN, ids=str)
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
@pytest.mark.parametrize("layout", ["contig", "transposed"])
def test_native_layer_norm(lib, rng, dtype, case, affine, layout):
    shape, ns = case
    x = rng.standard_normal(shape) * 3 + 2
    w = rng.standard_normal(ns) if affine != "none" else None
    b = rng.standard_normal(ns) if affine == "both" else None
    out = lib.native_layer_norm(tensor(lib, x, dtype, layout), ns, _opt(lib, w, dtype),
                                _opt(lib, b, dtype), 1e-5)
    want = torch.native_layer_norm(_t(x, dtype), ns, None if w is None else _t(w, dtype),
                                   None if b is None else _t(b, dtype), 1e-5)
    for o, t in zip(out, want):
        assert_close(o, t.numpy(), dtype, scale=10)


GN = [((2, 6, 5), 3), ((2, 6, 5), 6), ((3, 4, 2, 3), 1), ((1, 4), 2), ((0, 4, 3), 2)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", GN, ids=str)
@pytest.mark.parametrize("affine", [True, False])
def test_native_group_norm(lib, rng, dtype, case, affine):
    shape, G = case
    N, C = shape[:2]
    HxW = int(np.prod(shape[2:]))
    x = rng.standard_normal(shape) * 3 - 1
    w = rng.standard_normal(C) if affine else None
    b = rng.standard_normal(C) if affine else None
    layout = "contig" if IS_TORCH else "transposed"  # torch's kernel wants contiguous inputs
    out = lib.native_group_norm(tensor(lib, x, dtype, layout), _opt(lib, w, dtype),
                                _opt(lib, b, dtype), N, C, HxW, G, 1e-5)
    want = torch.native_group_norm(_t(x, dtype), None if w is None else _t(w, dtype),
                                   None if b is None else _t(b, dtype), N, C, HxW, G, 1e-5)
    for o, t in zip(out, want):
        assert_close(o, t.numpy(), dtype, scale=10)


def test_layer_norm_of_empty_rows(lib):
    out, mean, rstd = lib.native_layer_norm(lib.ones(2, 0), [0], None, None, 1e-5)
    assert tuple(out.shape) == (2, 0) and tuple(mean.shape) == (2, 1)
    np.testing.assert_array_equal(to_np(mean), np.zeros((2, 1)))
    assert np.isnan(to_np(rstd)).all()


ERRORS = [
    (lambda L: L.native_batch_norm(L.ones(4, 3, dtype=L.float64), L.ones(3), None, None, None,
                                   True, 0.1, 1e-5),
     RuntimeError, r"mixed dtype \(CPU\): all inputs must share same datatype."),
    (lambda L: L.native_batch_norm(L.ones(0, 3), None, None, L.zeros(3), L.ones(3), True, 0.1,
                                   1e-5),
     RuntimeError, r"input tensor must have at least one element, but got input_sizes = \[0, 3\]"),
    (lambda L: L.native_batch_norm(L.ones(2, 3), None, None, L.zeros(3), None, False, 0.1, 1e-5),
     ValueError, "running_mean and running_var must either both be None or neither be None"),
    (lambda L: L.native_batch_norm(L.ones(3), None, None, None, None, True, 0.1, 1e-5),
     IndexError, "Dimension out of range"),
    (lambda L: L.native_batch_norm(L.ones(2, 3, dtype=L.int64), None, None, None, None, True,
                                   0.1, 1e-5), RuntimeError, "not"),
    (lambda L: L.native_layer_norm(L.ones(2, 3, 4), [3, 5], None, None, 1e-5), RuntimeError,
     r"Given normalized_shape=\[3, 5\], expected input with shape \[\*, 3, 5\], but got input "
     r"of size\[2, 3, 4\]"),
    (lambda L: L.native_layer_norm(L.ones(2, 3, 4), [4], L.ones(3), None, 1e-5), RuntimeError,
     r"Expected weight to be of same shape as normalized_shape, but got weight of shape \[3\] "
     r"and normalized_shape = \[4\]"),
    (lambda L: L.native_layer_norm(L.ones(2, 3, 4), [4], None, L.ones(3), 1e-5), RuntimeError,
     "Expected bias to be of same shape as normalized_shape"),
    (lambda L: L.native_layer_norm(L.ones(2, 3, 4), [], None, None, 1e-5), RuntimeError,
     "Expected normalized_shape to be at least 1-dimensional"),
    (lambda L: L.native_layer_norm(L.ones(3, 4), [1, 3, 4], None, None, 1e-5), RuntimeError,
     r"expected input with shape \[\*, 1, 3, 4\]"),
    (lambda L: L.native_group_norm(L.ones(2, 6, 5), None, None, 2, 6, 5, 4, 1e-5), RuntimeError,
     r"Expected number of channels in input to be divisible by num_groups, but got input of "
     r"shape \[2, 6, 5\] and num_groups=4"),
    (lambda L: L.native_group_norm(L.ones(2, 6, 5), L.ones(5), None, 2, 6, 5, 3, 1e-5),
     RuntimeError, r"Expected weight to be a vector of size equal to the number of channels in "
     r"input, but got weight of shape \[5\] and input of shape \[2, 6, 5\]"),
    (lambda L: L.native_group_norm(L.ones(2, 6, 5), None, L.ones(5), 2, 6, 5, 3, 1e-5),
     RuntimeError, "Expected bias to be a vector of size equal to the number of channels"),
]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c[2][:40])
def test_errors(lib, case):
    fn, exc, match = case
    with pytest.raises(exc, match=match):
        fn(lib)


@pytest.mark.skipif(IS_TORCH, reason="ember's own message (torch's is an internal assert)")
def test_group_norm_numel_mismatch(lib):
    with pytest.raises(RuntimeError, match=r"N \* C \* HxW = 2 \* 6 \* 6 elements"):
        lib.native_group_norm(lib.ones(2, 6, 5), None, None, 2, 6, 6, 3, 1e-5)
    with pytest.raises(RuntimeError, match="must be defined in evaluation mode"):
        lib.native_batch_norm(lib.ones(2, 3), None, None, None, None, False, 0.1, 1e-5)
    # PyTorch checks these sizes in torch.nn.functional.batch_norm (same messages)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        lib.native_batch_norm(lib.ones(4, 3), None, None, lib.ones(4), lib.ones(3), True, 0.1, 1e-5)
    with pytest.raises(RuntimeError, match="weight should contain 3 elements not 2"):
        lib.native_batch_norm(lib.ones(4, 3), lib.ones(2), None, None, None, True, 0.1, 1e-5)


@pytest.mark.skipif(IS_TORCH, reason="ember's version counter")
def test_running_stats_update_does_not_bump_the_version(lib):
    """As in PyTorch: a running statistic is module state, written in place without a
    version bump, so that a graph holding it (two forward passes, one backward) stays valid."""
    rm, rv = lib.zeros(3), lib.ones(3)
    v = rm._version
    lib.native_batch_norm(lib.randn(4, 3), None, None, rm, rv, True, 0.1, 1e-5)
    assert rm._version == v and rm.abs().sum().item() > 0


# ----------------------------------------------------------------------------- fused backward


def _bwd(lib, name):
    """ember_tensor's fused backward op, or torch's (which takes an output mask too)."""
    if lib is torch:
        op = getattr(torch.ops.aten, name)
        if name == "native_layer_norm_backward":
            return lambda *a: op(*a, [True, a[5] is not None, a[6] is not None])
        if name == "native_group_norm_backward":
            return lambda *a: op(*a, [True, a[4] is not None, a[4] is not None])
        return lambda *args: op(*args, [True, True, True])
    return getattr(lib, name)


def _grads_close(got, want, dtype, scale=10):
    """grad_input, then the parameters' gradients: ember's are empty without a weight
    (PyTorch's may be given or None)."""
    assert_close(got[0], to_np(want[0]), dtype, scale=scale)
    for g, w in zip(got[1:], want[1:]):
        if g is None or (tuple(g.shape) == (0,) and not IS_TORCH):
            continue
        assert_close(g, to_np(w), scale=scale, check_dtype=False,
                     rtol=tol(dtype, scale)[0], atol=tol(dtype, scale)[1])


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 5)], ids=str)
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_native_batch_norm_backward(lib, rng, dtype, shape, train, affine):
    C = shape[1]
    x, g = rng.standard_normal(shape) * 2 + 1, rng.standard_normal(shape)
    w = rng.uniform(0.5, 1.5, C) if affine else None
    rm, rv = rng.standard_normal(C), rng.uniform(0.5, 2, C)
    pdt = "float32" if dtype == "bfloat16" else dtype
    tx = tensor(torch, x, dtype)
    _, sm, si = torch.native_batch_norm(tx, None, None, _t(rm, pdt), _t(rv, pdt), train, 0.1,
                                        1e-5)
    args = [g, x, w, rm, rv]
    dts = [dtype, dtype, pdt, pdt, pdt]
    ours = [None if a is None else tensor(lib, a, d) for a, d in zip(args, dts)]
    theirs = [None if a is None else tensor(torch, a, d) for a, d in zip(args, dts)]
    stats = [tensor(lib, to_np(sm), pdt), tensor(lib, to_np(si), pdt)] if train else [None, None]
    got = _bwd(lib, "native_batch_norm_backward")(*ours, *stats, train, 1e-5)
    want = torch.ops.aten.native_batch_norm_backward(*theirs, sm if train else None,
                                                     si if train else None, train, 1e-5,
                                                     [True, True, True])
    _grads_close(got, want, dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
@pytest.mark.parametrize("case", [((2, 3, 4), [4]), ((2, 3, 4), [3, 4]), ((5,), [5])], ids=str)
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
def test_native_layer_norm_backward(lib, rng, dtype, case, affine):
    shape, ns = case
    x, g = rng.standard_normal(shape) * 2 + 1, rng.standard_normal(shape)
    w = rng.uniform(0.5, 1.5, ns) if affine != "none" else None
    b = rng.standard_normal(ns) if affine == "both" else None
    _, m, r = torch.native_layer_norm(tensor(torch, x, dtype), ns, None, None, 1e-5)
    got = _bwd(lib, "native_layer_norm_backward")(
        tensor(lib, g, dtype), tensor(lib, x, dtype, "transposed"), ns,
        tensor(lib, to_np(m), dtype), tensor(lib, to_np(r), dtype), _opt(lib, w, dtype),
        _opt(lib, b, dtype))
    want = torch.ops.aten.native_layer_norm_backward(
        tensor(torch, g, dtype), tensor(torch, x, dtype), ns, m, r,
        None if w is None else tensor(torch, w, dtype),
        None if b is None else tensor(torch, b, dtype), [True, w is not None, b is not None])
    _grads_close(got, want, dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", [((2, 6, 5), 3), ((3, 4, 2, 3), 1), ((2, 6), 3)], ids=str)
@pytest.mark.parametrize("affine", [True, False])
def test_native_group_norm_backward(lib, rng, dtype, case, affine):
    shape, G = case
    N, C = shape[:2]
    HxW = int(np.prod(shape[2:]))
    x, g = rng.standard_normal(shape) * 2 + 1, rng.standard_normal(shape)
    w = rng.uniform(0.5, 1.5, C) if affine else None
    _, m, r = torch.native_group_norm(_t(x, dtype), None, None, N, C, HxW, G, 1e-5)
    got = _bwd(lib, "native_group_norm_backward")(
        tensor(lib, g, dtype), tensor(lib, x, dtype), tensor(lib, to_np(m), dtype),
        tensor(lib, to_np(r), dtype), _opt(lib, w, dtype), N, C, HxW, G)
    want = torch.ops.aten.native_group_norm_backward(
        _t(g, dtype), _t(x, dtype), m, r, None if w is None else _t(w, dtype), N, C, HxW, G,
        [True, w is not None, w is not None])
    _grads_close(got, want, dtype)
