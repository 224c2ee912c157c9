"""embedding, embedding_dense_backward and nll_loss against PyTorch: shapes, index dtypes,
padding_idx and scale_grad_by_freq, reductions, class weights, ignore_index, (N, C, d1, ...)
inputs, and errors. PyTorch's nll_loss is torch.nn.functional.nll_loss (reduction as a
string) for inputs of more than two dimensions."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from conftest import IS_TORCH, assert_close, tensor, to_np

REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _nll(lib, x, t, w=None, reduction=1, ignore_index=-100):
    if lib is torch and x.dim() <= 2:
        return torch._C._nn.nll_loss(x, t, w, reduction, ignore_index)
    if lib is torch:
        return F.nll_loss(x, t, w, ignore_index=ignore_index, reduction=REDUCTIONS[reduction])
    return lib.nll_loss(x, t, w, reduction, ignore_index)


def _edb(lib):
    return torch.ops.aten.embedding_dense_backward if lib is torch else lib.embedding_dense_backward


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16", "int64"])
@pytest.mark.parametrize("idx_dtype", ["int64", "int32"])
@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 0), (), (2, 2, 2)], ids=str)
def test_embedding(lib, rng, dtype, idx_dtype, shape):
    w = rng.standard_normal((6, 3)) if dtype != "int64" else rng.integers(-9, 9, (6, 3))
    idx = rng.integers(0, 6, size=shape)
    got = lib.embedding(tensor(lib, w, dtype, "transposed"), tensor(lib, idx, idx_dtype))
    want = torch.embedding(tensor(torch, w, dtype), tensor(torch, idx, idx_dtype))
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(to_np(got), to_np(want))


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
@pytest.mark.parametrize(("padding_idx", "scale"), [(-1, False), (2, False), (-1, True), (0, True)])
def test_embedding_dense_backward(lib, rng, dtype, padding_idx, scale):
    idx = rng.integers(0, 5, size=(3, 4))
    g = rng.standard_normal((3, 4, 2))
    got = _edb(lib)(tensor(lib, g, dtype), tensor(lib, idx, "int64"), 6, padding_idx, scale)
    want = torch.ops.aten.embedding_dense_backward(tensor(torch, g, dtype),
                                                   torch.from_numpy(idx), 6, padding_idx, scale)
    assert_close(got, to_np(want), dtype, scale=4)


def test_embedding_dense_backward_many_rows(lib, rng):
    """Many indices over a large table (the rows split across threads)."""
    idx = rng.integers(0, 3000, size=(64, 50))
    g = rng.standard_normal((64, 50, 8))
    got = _edb(lib)(tensor(lib, g, "float64"), tensor(lib, idx, "int64"), 3000, 7, True)
    want = torch.ops.aten.embedding_dense_backward(torch.from_numpy(g), torch.from_numpy(idx),
                                                   3000, 7, True)
    assert_close(got, want.numpy(), "float64")


CASES = [
    ((5, 4), (5,)),
    ((4,), ()),
    ((3, 4, 5), (3, 5)),
    ((2, 3, 4, 2), (2, 4, 2)),
    ((0, 4), (0,)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [-100, 1])
def test_nll_loss(lib, rng, dtype, case, reduction, weighted, ignore):
    xs, ts = case
    C = xs[1] if len(xs) > 1 else xs[0]
    x = rng.standard_normal(xs)
    t = rng.integers(0, C, size=ts)
    w = rng.uniform(0.5, 2.0, C) if weighted else None
    got = _nll(lib, tensor(lib, x, dtype, "transposed"), tensor(lib, t, "int64"),
               None if w is None else tensor(lib, w, dtype), reduction, ignore)
    want = _nll(torch, torch.from_numpy(x), torch.from_numpy(t),
                None if w is None else torch.from_numpy(w), reduction, ignore)
    assert_close(got, want.numpy(), dtype, check_dtype=False, scale=4)
    assert str(got.dtype).endswith(dtype)


def test_nll_loss_all_ignored_and_uint8_targets(lib):
    x = lib.zeros(3, 4, dtype=lib.float64)
    t = lib.full((3,), -100, dtype=lib.int64)
    assert np.isnan(to_np(_nll(lib, x, t)))
    assert to_np(_nll(lib, x, t, reduction=2)) == 0
    x = tensor(lib, np.arange(12.0).reshape(3, 4), "float64")
    got = _nll(lib, x, lib.tensor([1, 0, 3], dtype=lib.uint8), reduction=2)
    assert to_np(got) == -(1 + 4 + 11)


ERRORS = [
    (lambda L: _nll(L, L.ones(4, 5), L.tensor([0, 1, 5, 2])), IndexError,
     "Target 5 is out of bounds."),
    (lambda L: _nll(L, L.ones(4, 5), L.tensor([0, 1, -1, 2])), IndexError,
     "Target -1 is out of bounds."),
    (lambda L: _nll(L, L.ones(4, 5), L.tensor([0, 1, 4])), RuntimeError,
     r"size mismatch \(got input: \[4, 5\], target: \[3\]\)"),
    (lambda L: _nll(L, L.ones(4, 5), L.tensor([0.0, 1, 4, 2])), RuntimeError,
     "expected target dtype to be Long or Byte, but got Float"),
    (lambda L: _nll(L, L.ones(4, 5), L.tensor([0, 1, 4, 2]), L.ones(4)), RuntimeError,
     "weight tensor should be defined either for all 5 classes or no classes but got weight "
     r"tensor of shape: \[4\]"),
    (lambda L: _nll(L, L.ones(2, 5, 3), L.zeros(2, 4, dtype=L.int64)), RuntimeError,
     r"Expected target size \[2, 3\], got \[2, 4\]"),
    (lambda L: L.embedding(L.ones(5, 3), L.tensor([5])), IndexError, "index out of range in self"),
    (lambda L: L.embedding(L.ones(5, 3), L.tensor([-1])), IndexError,
     "index out of range in self"),
    (lambda L: L.embedding(L.ones(5), L.tensor([1])), RuntimeError, "'weight' must be 2-D"),
    (lambda L: L.embedding(L.ones(5, 3), L.tensor([1.0])), RuntimeError,
     "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
     r"Long, Int; but got (torch|ember).FloatTensor instead \(while checking arguments for "
     r"embedding\)"),
]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c[2][:40])
def test_errors(lib, case):
    fn, exc, match = case
    with pytest.raises(exc, match=match):
        fn(lib)


@pytest.mark.skipif(IS_TORCH, reason="ember's own checks")
def test_ember_checks(lib):
    with pytest.raises(RuntimeError, match="reduction must be 0"):
        lib.nll_loss(lib.ones(2, 3), lib.tensor([0, 1]), None, 3)
    with pytest.raises(RuntimeError, match="Expected 1 or more dimensions"):
        lib.nll_loss(lib.ones(()), lib.tensor(0))
    with pytest.raises(RuntimeError, match=r"expected grad_output of size indices.shape"):
        lib.embedding_dense_backward(lib.ones(3, 2), lib.tensor([0, 1]), 4, -1, False)
    with pytest.raises(IndexError, match="index out of range"):
        lib.embedding_dense_backward(lib.ones(2, 2), lib.tensor([0, 4]), 4, -1, False)
