"""Sparse COO tensors (ember_tensor/sparse.py) against torch.sparse: construction,
coalescing, to_dense/to_sparse, sparse x dense products (values and gradients through the
autograd provider when present), sums, transposes and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_tensor as et

IDX = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]
VALS = [3.0, 4.0, 5.0, 1.0, -2.0]


def _pair(size=(3, 3)):
    e = et.sparse_coo_tensor(et.tensor(IDX), et.tensor(VALS, dtype=et.float64), size)
    t = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VALS, dtype=torch.float64), size)
    return e, t


def _np(x):
    return np.asarray(x.detach().numpy() if hasattr(x, "detach") else x)


def test_to_dense_and_coalesce_sum_duplicates():
    e, t = _pair()
    np.testing.assert_array_equal(_np(e.to_dense()), _np(t.to_dense()))
    ec, tc = e.coalesce(), t.coalesce()
    assert ec.indices().tolist() == tc.indices().tolist()
    assert ec.values().tolist() == tc.values().tolist()
    assert ec.is_coalesced() and not e.is_coalesced() and ec._nnz() == tc._nnz() == 4
    with pytest.raises(RuntimeError, match="coalesce"):
        e.indices()
    assert e.shape == (3, 3) and e.layout is et.sparse_coo and e.is_sparse
    assert et.ones(1).layout is et.strided and not et.ones(1).is_sparse


def test_default_size_and_to_sparse():
    e = et.sparse_coo_tensor(IDX, VALS)
    t = torch.sparse_coo_tensor(IDX, VALS)
    assert tuple(e.shape) == tuple(t.shape)
    dense = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    es, ts = et.tensor(dense).to_sparse(), torch.tensor(dense).to_sparse()
    assert es.indices().tolist() == ts.indices().tolist()
    assert es.values().tolist() == ts.values().tolist()
    np.testing.assert_array_equal(_np(es.to_dense()), dense)


@pytest.mark.parametrize("how", ["mm", "spmm", "matmul", "addmm"])
def test_products_with_a_dense_operand(how):
    e, t = _pair()
    x = np.random.default_rng(0).standard_normal((3, 4))
    ex, tx = et.tensor(x), torch.tensor(x)
    got = {"mm": lambda: et.sparse.mm(e, ex), "spmm": lambda: et.spmm(e, ex),
           "matmul": lambda: e @ ex,
           "addmm": lambda: et.sparse.addmm(et.ones(3, 4, dtype=et.float64), e, ex,
                                            beta=0.5, alpha=2.0)}[how]()
    want = {"mm": lambda: torch.sparse.mm(t, tx), "spmm": lambda: torch.spmm(t, tx),
            "matmul": lambda: t @ tx,
            "addmm": lambda: torch.sparse.addmm(torch.ones(3, 4, dtype=torch.float64), t, tx,
                                                beta=0.5, alpha=2.0)}[how]()
    np.testing.assert_allclose(_np(got), _np(want), rtol=1e-12, atol=1e-12)


def test_sums_transposes_scaling_and_conversions():
    e, t = _pair()
    assert float(et.sparse.sum(e)) == float(torch.sparse.sum(t))
    np.testing.assert_array_equal(_np(et.sparse.sum(e, 0)), _np(torch.sparse.sum(t, 0).to_dense()))
    np.testing.assert_array_equal(_np(e.t().to_dense()), _np(t.t().to_dense()))
    np.testing.assert_array_equal(_np((e * 2).to_dense()), _np((t * 2).to_dense()))
    np.testing.assert_array_equal(_np((-e / 2).to_dense()), _np((-t / 2).to_dense()))
    assert e.float().dtype == et.float32 and e.to("cpu").device.type == "cpu"
    legacy = et.sparse.FloatTensor(et.tensor(IDX), et.tensor(VALS), et.Size([3, 3]))
    assert legacy.dtype == et.float32


@pytest.mark.parametrize("call,match", [
    (lambda: et.sparse_coo_tensor([[0, -1]], [1.0, 2.0]), "negative"),
    (lambda: et.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (3,)), "inconsistent"),
    (lambda: et.sparse_coo_tensor([[0, 1]], [1.0], (3,)), "same nnz"),
    (lambda: et.sparse_coo_tensor([0, 1], [1.0, 2.0], (3,)), "sparse_dim x nnz"),
    (lambda: et.sparse.mm(_pair()[0], et.ones(2, 2, dtype=et.float64)), "cannot be multiplied"),
    (lambda: et.sparse.mm(_pair()[0], et.ones(3, 2)), "same dtype"),
])
def test_errors(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()
    with pytest.raises(TypeError, match="sparse COO"):
        et.sparse.sum(et.ones(2, 2))
    # two dense matrices: ember.mm, as torch.sparse.mm and torch.spmm do
    assert et.spmm(et.ones(2, 3), et.ones(3, 1)).tolist() == [[3.0], [3.0]]
