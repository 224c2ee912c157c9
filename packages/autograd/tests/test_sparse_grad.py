"""Gradients through ember.sparse.mm (a composite of index_select and index_add): with
respect to the dense operand and to the sparse tensor's values, against torch.sparse."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_autograd  # noqa: F401  (the provider the gradients need)
import ember_tensor as et

IDX = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]
VALS = [3.0, 4.0, 5.0, 1.0, -2.0]


# torch warns that it skips its sparse invariant checks (not this test's concern)
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")


def _pair(size=(3, 3)):
    e = et.sparse_coo_tensor(et.tensor(IDX), et.tensor(VALS, dtype=et.float64), size)
    t = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VALS, dtype=torch.float64), size)
    return e, t


def _np(x):
    return np.asarray(x.detach().numpy())


def test_gradients_of_the_dense_operand_and_the_values():
    e, t = _pair()
    e.requires_grad_()
    t.requires_grad_()
    x = np.random.default_rng(1).standard_normal((3, 2))
    ex, tx = et.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    g = np.random.default_rng(2).standard_normal((3, 2))
    (et.sparse.mm(e, ex) * et.tensor(g)).sum().backward()
    (torch.sparse.mm(t, tx) * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(_np(ex.grad), _np(tx.grad), rtol=1e-12)
    # torch's gradient is a coalesced sparse tensor; Ember's is the values' gradient (the
    # duplicates' gradients equal, since they multiply the same dense row)
    want = dict(zip(map(tuple, t.grad.coalesce().indices().T.tolist()),
                    t.grad.coalesce().values().tolist()))
    for k, gval in zip(zip(*IDX), e.grad.tolist()):
        assert gval == pytest.approx(want[k])
