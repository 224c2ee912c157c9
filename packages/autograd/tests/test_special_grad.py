"""Gradients of ember_tensor.special's composites (polynomials, entr, xlog1py,
spherical_bessel_j0): float64, against finite differences, and against PyTorch where it
has a derivative (not for the polynomials: Ember differentiates them, PyTorch does not)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_autograd as ea
import ember_tensor as et

CASES = {
    "chebyshev_polynomial_t": lambda m, x: m.special.chebyshev_polynomial_t(x, 5),
    "shifted_chebyshev_polynomial_w": lambda m, x: m.special.shifted_chebyshev_polynomial_w(
        x, 3),
    "hermite_polynomial_he": lambda m, x: m.special.hermite_polynomial_he(x, 4),
    "laguerre_polynomial_l": lambda m, x: m.special.laguerre_polynomial_l(x, 3),
    "legendre_polynomial_p": lambda m, x: m.special.legendre_polynomial_p(x, 6),
    "entr": lambda m, x: m.special.entr(x.abs() + 0.1),
    "xlog1py": lambda m, x: m.special.xlog1py(x, x * x),
    "spherical_bessel_j0": lambda m, x: m.special.spherical_bessel_j0(3 * x),
}

X = np.array([[0.3, -0.6, 0.9], [0.05, -0.2, 0.75]])


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient(name):
    fn = CASES[name]
    x = et.tensor(X, dtype=et.float64, requires_grad=True)
    assert ea.gradcheck(lambda t: fn(et, t), (x,))
    t = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    want = fn(torch, t)
    if not want.requires_grad:  # PyTorch defines no derivative of the polynomials
        return
    cot = np.random.default_rng(1).uniform(-1, 1, X.shape)
    fn(et, x).backward(et.tensor(cot))
    want.backward(torch.tensor(cot))
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
