"""Parameter and Buffer: marks on plain tensors that behave like PyTorch's subclasses."""

from __future__ import annotations

import copy
import gc
import pickle

import pytest
import torch

import ember_nn as nn
import ember_tensor as et
from ember_nn import parameter as parameter_module


def test_parameter_is_a_leaf_requiring_grad_that_shares_storage() -> None:
    data = et.ones(2, 3)
    p = nn.Parameter(data)
    assert isinstance(p, nn.Parameter) and isinstance(p, et.Tensor)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.data_ptr() == data.data_ptr()
    assert not data.requires_grad
    assert type(p) is nn.Parameter and isinstance(p, et.Tensor)  # a real subclass
    assert issubclass(nn.Parameter, et.Tensor)


def test_parameter_of_a_non_leaf_is_a_leaf() -> None:
    x = et.ones(3, requires_grad=True)
    p = nn.Parameter(x * 2)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None


def test_parameter_requires_grad_false_and_default_data() -> None:
    p = nn.Parameter(et.ones(2), requires_grad=False)
    assert isinstance(p, nn.Parameter) and not p.requires_grad
    empty = nn.Parameter()
    assert tuple(empty.shape) == (0,) and empty.requires_grad
    assert tuple(torch.nn.Parameter().shape) == (0,)


def test_parameter_of_an_integer_tensor_cannot_require_grad() -> None:
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(et.ones(2, dtype=et.int64))
    with pytest.raises(RuntimeError, match="floating point"):
        torch.nn.Parameter(torch.ones(2, dtype=torch.int64))
    p = nn.Parameter(et.ones(2, dtype=et.int64), requires_grad=False)
    assert isinstance(p, nn.Parameter)


def test_parameter_needs_a_tensor() -> None:
    with pytest.raises(TypeError, match=r"Parameter\(\): data must be a Tensor, got list"):
        nn.Parameter([1.0, 2.0])


def test_what_is_not_a_parameter() -> None:
    p = nn.Parameter(et.ones(3))
    for what, t in (
        ("plain tensor", et.ones(3)),
        ("detach()", p.detach()),
        (".data", p.data),
        ("an op result", p * 2),
        ("a view", p[1:]),
        ("a buffer", nn.Buffer(et.ones(3))),
    ):
        assert not isinstance(t, nn.Parameter), what
    assert not isinstance(3.0, nn.Parameter)
    assert p.requires_grad_() is p and isinstance(p.requires_grad_(), nn.Parameter)


def test_parameter_repr_matches_torch() -> None:
    p = nn.Parameter(et.tensor([[1.0, 2.5], [-3.0, 4.0]]))
    t = torch.nn.Parameter(torch.tensor([[1.0, 2.5], [-3.0, 4.0]]))
    assert repr(p) == repr(t)
    assert str(p) == str(t)
    assert f"{p}" == f"{t}"
    assert repr(nn.Parameter(et.ones(2), requires_grad=False)) == repr(
        torch.nn.Parameter(torch.ones(2), requires_grad=False)
    )
    assert repr(et.ones(2)) == "tensor([1., 1.])"  # plain tensors unchanged


def test_parameter_deepcopy_and_pickle() -> None:
    p = nn.Parameter(et.tensor([1.0, 2.0]))
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert isinstance(q, nn.Parameter) and q.requires_grad
        assert q.tolist() == [1.0, 2.0] and q.data_ptr() != p.data_ptr()
    frozen = nn.Parameter(et.ones(1), requires_grad=False)
    assert not copy.deepcopy(frozen).requires_grad
    memo_copy = copy.deepcopy([p, p])
    assert memo_copy[0] is memo_copy[1]
    plain = copy.deepcopy(et.ones(2))
    assert not isinstance(plain, nn.Parameter)


def test_marks_leave_with_their_tensors() -> None:
    gc.collect()
    before = len(parameter_module._marks)
    p = nn.Buffer(et.ones(2))
    assert len(parameter_module._marks) == before + 1
    del p
    gc.collect()
    assert len(parameter_module._marks) == before


def test_buffer() -> None:
    b = nn.Buffer(et.ones(2))
    assert isinstance(b, nn.Buffer) and not isinstance(b, nn.Parameter)
    assert b.persistent is True and not b.requires_grad
    nb = nn.Buffer(et.ones(2), persistent=False)
    assert nb.persistent is False
    nb.persistent = True
    assert nb.persistent is True
    tb = torch.nn.Buffer(torch.ones(2))
    assert type(tb) is torch.Tensor and tb.persistent  # torch's Buffer is a marked tensor too
    g = nn.Buffer(et.ones(2, requires_grad=True))
    assert g.requires_grad and g.is_leaf
    assert isinstance(copy.deepcopy(nb), nn.Buffer)


def test_persistent_is_an_attribute_of_buffers_only() -> None:
    with pytest.raises(AttributeError, match="no attribute 'persistent'"):
        _ = et.ones(2).persistent
    assert not hasattr(nn.Parameter(et.ones(2)), "persistent")
    with pytest.raises(AttributeError):
        et.ones(2).persistent = True
    with pytest.raises(AttributeError):
        _ = torch.ones(2).persistent


class _Tagged(et.Tensor):
    pass


def test_tensor_subclass_leaf_requires_grad() -> None:
    leaf = et.Tensor._make_subclass(_Tagged, et.ones(2), True)
    assert type(leaf) is _Tagged and leaf.requires_grad and leaf.is_leaf
    (leaf * 3).sum().backward()
    assert leaf.grad.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("cast", ["float", "to", "contiguous"])
def test_an_op_returning_the_parameter_itself_is_not_taken_for_a_sequence(monkeypatch, cast):
    # p.float() of a float32 Parameter returns p (a Tensor subclass); autograd's recording
    # once took such a result for a tuple of outputs and iterated it: a (1024, 256) weight
    # became 1024 recorded views on every call (an LSTM under autocast ran 4x slower).
    p = nn.Parameter(et.randn(1024, 256))
    iterated = []
    original = et.Tensor.__iter__
    monkeypatch.setattr(et.Tensor, "__iter__", lambda t: iterated.append(t) or original(t))
    out = {"float": lambda: p.float(), "to": lambda: p.to(et.float32),
           "contiguous": lambda: p.contiguous()}[cast]()
    assert out is p and out.is_leaf and out.grad_fn is None
    assert iterated == []
    torch_p = torch.nn.Parameter(torch.randn(3, 2))
    assert torch_p.float() is torch_p  # PyTorch returns the same object too
