"""PyTorch's other names for ops (_aliases.py): each alias gives the op's result, as a
function, a method and an in-place method where PyTorch has those, against PyTorch's alias
on the same input; the function forms of in-place methods."""

import numpy as np
import pytest
import torch

import ember_tensor as et
from ember_tensor import _aliases

RNG = np.random.default_rng(0)
X = RNG.uniform(-0.9, 0.9, (3, 3))
Y = RNG.uniform(0.5, 1.5, (3, 3))
BINARY = {"arctan2", "divide", "greater", "greater_equal", "less", "less_equal", "multiply",
          "not_equal", "subtract"}
EXTRA_ARGS = {"swapdims": (0, 1), "moveaxis": (0, 1)}


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.numpy()


@pytest.mark.parametrize("alias", sorted(_aliases.ALIASES))
def test_alias_matches_torch(alias):
    e, t = et.tensor(X), torch.tensor(X)
    args = (et.tensor(Y),) if alias in BINARY else EXTRA_ARGS.get(alias, ())
    targs = (torch.tensor(Y),) if alias in BINARY else EXTRA_ARGS.get(alias, ())
    want = getattr(torch, alias)(t, *targs)
    np.testing.assert_allclose(_np(getattr(et, alias)(e, *args)), _np(want), rtol=1e-12)
    np.testing.assert_allclose(_np(getattr(e, alias)(*args)), _np(want), rtol=1e-12)
    if hasattr(torch.Tensor, alias + "_") and alias not in ("swapdims",):
        e2, t2 = et.tensor(X), torch.tensor(X)
        if alias in ("greater", "greater_equal", "less", "less_equal", "not_equal"):
            pytest.skip("comparisons in place write 0/1 into the float input")
        got = getattr(e2, alias + "_")(*args)
        getattr(t2, alias + "_")(*targs)
        assert got is e2
        np.testing.assert_allclose(_np(e2), _np(t2), rtol=1e-12)


@pytest.mark.parametrize("alias,op,method", _aliases.LINALG_ALIASES)
def test_linalg_aliases_match_torch(alias, op, method):
    a = X + 3 * np.eye(3)
    args = (3,) if alias == "matrix_power" else ()
    e, t = et.tensor(a), torch.tensor(a)
    if alias == "orgqr":
        tau = RNG.uniform(0.5, 1.5, 2)
        got, want = et.orgqr(e, et.tensor(tau)), torch.orgqr(t, torch.tensor(tau))
        np.testing.assert_allclose(_np(got), _np(want), rtol=1e-10, atol=1e-12)
        return
    got, want = getattr(et, alias)(e, *args), getattr(torch, alias)(t, *args)
    if alias == "slogdet":
        got, want = np.array([_np(g) for g in got]), np.array([_np(w) for w in want])
    else:
        got, want = _np(got), _np(want)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    want = getattr(torch, alias)(t, *args)
    if method:
        m = getattr(e, alias)(*args)
        np.testing.assert_allclose(_np(m[1] if alias == "slogdet" else m),
                                   _np(want[1] if alias == "slogdet" else want), rtol=1e-10)


def test_other_function_aliases():
    a, b = et.tensor(X), et.tensor(Y)
    np.testing.assert_array_equal(et.row_stack([a, b]).numpy(), np.vstack([X, Y]))
    np.testing.assert_array_equal(et.concatenate([a, b], axis=1).numpy(), np.hstack([X, Y]))
    np.testing.assert_array_equal(et.concatenate([a, b]).numpy(), np.vstack([X, Y]))
    np.testing.assert_array_equal(et.ger(a[0], b[0]).numpy(), np.outer(X[0], Y[0]))
    np.testing.assert_array_equal(a[0].ger(b[0]).numpy(), np.outer(X[0], Y[0]))


@pytest.mark.parametrize("name", ["abs_", "sqrt_", "clamp_", "fix_", "negative_", "arccos_"])
def test_inplace_function_forms(name):
    data = np.abs(X) if name == "sqrt_" else X
    e, t = et.tensor(data), torch.tensor(data)
    args = (-0.5, 0.5) if name == "clamp_" else ()
    got = getattr(et, name)(e, *args)
    getattr(torch, name)(t, *args)
    assert got is e
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)


def test_aliases_are_exported():
    for name in [*_aliases.ALIASES, *_aliases.FUNCTION_ALIASES, "concatenate", "ger", "det",
                 *_aliases.INPLACE_FUNCTIONS]:
        assert name in et.__all__, name
