"""ember_tensor.special against torch.special: the orthogonal polynomials for tensor and
number degrees (negative, truncated, broadcast), entr, xlog1py, spherical_bessel_j0 and the
aliases (their gradients: ember-autograd's test_special_grad.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_tensor as et

POLYNOMIALS = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p",
]

X = np.array([[-1.5, -1.0, -0.3, 0.0], [0.2, 0.7, 1.0, 2.5]])
N = np.array([[-1.0, 0.0, 1.0, 2.0], [3.0, 5.0, 8.0, 2.7]])


@pytest.mark.parametrize("name", POLYNOMIALS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_polynomials_match_torch(name, dtype):
    ex, tx = et.tensor(X, dtype=getattr(et, dtype)), torch.tensor(X, dtype=getattr(torch, dtype))
    for n_e, n_t in [(et.tensor(N), torch.tensor(N)), (4, 4), (et.tensor(3), torch.tensor(3))]:
        got = getattr(et.special, name)(ex, n_e)
        want = getattr(torch.special, name)(tx, n_t)
        assert str(got.dtype).rpartition(".")[2] == str(want.dtype).rpartition(".")[2]
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_integer_inputs_give_the_default_float():
    got = et.special.legendre_polynomial_p(et.tensor([2, 3]), et.tensor([2, 2]))
    want = torch.special.legendre_polynomial_p(torch.tensor([2, 3]), torch.tensor([2, 2]))
    assert got.dtype == et.float32 and got.tolist() == want.tolist()


def test_a_huge_degree_is_refused_not_looped():
    with pytest.raises(RuntimeError, match="beyond the 100000"):
        et.special.hermite_polynomial_h(et.tensor([0.5]), 10**9)


@pytest.mark.parametrize("name", ["entr", "spherical_bessel_j0", "expit", "erf", "expm1",
                                  "log1p", "sinc", "exp2"])
def test_unary_match_torch(name):
    a = np.array([-2.0, -0.0, 0.0, 1e-3, 0.5, 3.0, np.inf, np.nan])
    got = getattr(et.special, name)(et.tensor(a))
    want = getattr(torch.special, name)(torch.tensor(a))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)


def test_xlog1py_matches_torch():
    x = np.array([0.0, 0.0, 1.5, -2.0, 3.0])
    y = np.array([-1.0, np.nan, 0.5, 2.0, -0.5])
    np.testing.assert_allclose(et.special.xlog1py(et.tensor(x), et.tensor(y)).numpy(),
                               torch.special.xlog1py(torch.tensor(x), torch.tensor(y)).numpy())
    np.testing.assert_allclose(et.special.xlog1py(2.0, et.tensor(y)).numpy(),
                               torch.special.xlog1py(2.0, torch.tensor(y)).numpy())
