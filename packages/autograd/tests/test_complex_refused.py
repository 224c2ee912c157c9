"""Autograd refuses complex tensors until every derivative formula follows PyTorch's complex
convention (issue 25): a gradient computed with the real formulas (mul's grad * other
instead of grad * other.conj()) would be silently wrong. The refusals are clear errors, and
real tensors keep their gradients through the complex ops that return them unchanged."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_autograd  # noqa: F401  (installs the provider)
import ember_tensor as et


def test_requires_grad_on_a_complex_tensor_is_refused():
    z = et.tensor([1 + 2j])
    with pytest.raises(NotImplementedError, match="does not support complex tensors yet"):
        z.requires_grad_()
    with pytest.raises(NotImplementedError, match="does not support complex tensors yet"):
        et.zeros(2, dtype=et.complex64, requires_grad=True)


@pytest.mark.parametrize("make", [
    lambda x: x * 1j,
    lambda x: et.complex(x, x),
    lambda x: et.polar(x, x),
    lambda x: et.view_as_complex(x.reshape(2, 2)),
    lambda x: x.to(et.complex64),
    lambda x: x + et.tensor([1j]),
], ids=["mul_1j", "complex", "polar", "view_as_complex", "to", "add"])
def test_a_complex_result_of_inputs_requiring_grad_is_refused(make):
    x = et.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="does not support complex tensors yet"):
        make(x)


def test_without_grad_the_complex_ops_run():
    x = et.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    with ember_autograd.no_grad():
        assert (x * 1j).dtype is et.complex64
    assert (x.detach() * 1j).dtype is et.complex64


@pytest.mark.parametrize("op", ["sgn", "angle", "conj", "conj_physical", "real"])
def test_real_inputs_keep_their_gradients(op):
    a = np.array([-1.5, 0.5, 2.0])
    x, xt = et.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    f = {"conj": lambda m, v: v.conj(), "real": lambda m, v: m.real(v)}.get(
        op, lambda m, v: getattr(m, op)(v))
    (f(et, x) * et.tensor([1.0, 2.0, 3.0], dtype=et.float64)).sum().backward()
    (f(torch, xt) * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    # torch's gradient may be a ZeroTensor (numpy() wants force=True)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(force=True))
