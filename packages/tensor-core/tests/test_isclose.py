"""isclose / allclose against PyTorch: tolerances, infinities, NaN, dtypes, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from conftest import tensor

A = [1.0, math.inf, -math.inf, math.nan, 1e-9, 2.0, math.nan, 0.0, -3.0]
B = [1.0 + 1e-6, math.inf, math.inf, math.nan, 0.0, 2.1, 1.0, 0.0, -3.00002]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("equal_nan", [False, True])
@pytest.mark.parametrize("tols", [(1e-5, 1e-8), (0.1, 0.0), (0.0, 0.2)], ids=str)
def test_isclose_matches_torch(lib, dtype, equal_nan, tols):
    a, b = np.array(A), np.array(B)
    got = lib.isclose(tensor(lib, a, dtype), tensor(lib, b, dtype), *tols, equal_nan=equal_nan)
    want = torch.isclose(torch.from_numpy(a).to(getattr(torch, dtype)),
                         torch.from_numpy(b).to(getattr(torch, dtype)), *tols,
                         equal_nan=equal_nan)
    assert got.dtype == lib.bool
    assert got.tolist() == want.tolist()
    assert lib.allclose(tensor(lib, a, dtype), tensor(lib, b, dtype), *tols, equal_nan) is \
        torch.allclose(torch.from_numpy(a).to(getattr(torch, dtype)),
                       torch.from_numpy(b).to(getattr(torch, dtype)), *tols, equal_nan)


def test_isclose_integers_and_broadcast(lib):
    a = lib.tensor([[1, 2, 3]])
    b = lib.tensor([[1], [3]])
    assert lib.isclose(a, b).tolist() == [[True, False, False], [False, False, True]]
    assert lib.allclose(lib.ones(3), lib.ones(3)) is True


def test_isclose_dtype_mismatch(lib):
    with pytest.raises(RuntimeError, match="Float did not match Double"):
        lib.isclose(lib.ones(2), lib.ones(2, dtype=lib.float64))
