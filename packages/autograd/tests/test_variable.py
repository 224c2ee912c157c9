"""ember.autograd.Variable: PyTorch's pre-0.4 wrapper, now the tensor itself."""

from __future__ import annotations

import pytest
import torch

import ember_tensor as et
from ember_autograd import Variable


def test_variable_is_the_tensor():
    t = et.ones(2)
    v = Variable(t, requires_grad=True)
    assert v is t and v.requires_grad
    assert isinstance(et.zeros(1), Variable) and not isinstance(3, Variable)
    assert isinstance(torch.zeros(1), torch.autograd.Variable)  # PyTorch's answer too
    (v * 3).sum().backward()
    assert t.grad.tolist() == [3.0, 3.0]
    assert tuple(Variable().shape) == (0,)


def test_variable_volatile_warns_and_bad_data_is_a_type_error():
    with pytest.warns(UserWarning, match="volatile was removed"):
        Variable(et.ones(1), volatile=True)
    with pytest.raises(TypeError, match="has to be a tensor"):
        Variable([1.0])
