"""The Tensor attributes read or written on every op of a model (requires_grad, grad, grad_fn,
is_leaf, is_cpu, _version), which the core reads straight from the Python object, and
tensor arguments that are instances of a Python subclass of Tensor.

Errors and results are PyTorch's: the whole module also runs with ``EMBER_TEST_LIB=torch``."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import to_np


@pytest.mark.parametrize("value", [1, 0, None, 1.0, np.True_, "yes"])
def test_requires_grad_takes_only_a_bool(lib, value):
    x = lib.ones(2)
    with pytest.raises(RuntimeError, match="requires_grad must be a bool"):
        x.requires_grad = value
    assert x.requires_grad is False


def test_requires_grad_cannot_be_deleted(lib):
    x = lib.ones(2)
    with pytest.raises(RuntimeError, match="requires_grad must be a bool"):
        del x.requires_grad
    assert x.requires_grad is False


def test_requires_grad_set_and_read(lib, autograd):
    x = lib.ones(2)
    x.requires_grad = True
    assert x.requires_grad is True and x.is_leaf is True and x.grad_fn is None
    x.requires_grad = False
    assert x.requires_grad is False


def test_requires_grad_of_a_result_cannot_be_cleared(lib, autograd):
    y = lib.ones(2, requires_grad=True) * 2
    assert y.requires_grad is True and y.is_leaf is False and y.grad_fn is not None
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        y.requires_grad = False


def test_grad_assignment_checks_type_size_and_dtype(lib):
    x = lib.ones(2, 3)
    with pytest.raises(TypeError, match="expected to be a Tensor or None but got grad of type int"):
        x.grad = 3
    with pytest.raises(RuntimeError,
                       match=r"assign a gradient of size '\[3\]' to a tensor of size '\[2, 3\]'"):
        x.grad = lib.ones(3)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype"):
        x.grad = lib.ones(2, 3, dtype=lib.float64)
    assert x.grad is None
    g = lib.full((2, 3), 2.0)
    x.grad = g
    assert x.grad is g
    x.grad = None
    assert x.grad is None


def test_del_grad_clears_it(lib):
    x = lib.ones(2)
    x.grad = lib.ones(2)
    del x.grad
    assert x.grad is None


def test_version_and_device_flags(lib):
    x = lib.zeros(3)
    v = x._version
    x.add_(1)
    assert x._version == v + 1
    assert x.is_cpu is True and x.is_cuda is False
    assert x[1:]._base is x and x._base is None


def test_subclass_instances_are_tensor_arguments(lib, autograd):
    class Mine(lib.Tensor):
        pass

    p = lib.tensor([1.0, 2.0, 3.0]).as_subclass(Mine).requires_grad_()
    m = lib.tensor([4.0, 5.0, 6.0]).as_subclass(Mine)
    np.testing.assert_array_equal(to_np((p * 2).detach()), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(to_np(lib.add(m, p).detach()), [5.0, 7.0, 9.0])
    assert type(m) is Mine and type(p) is Mine
    picked = lib.where(lib.tensor([True, False, True]), m, p)
    np.testing.assert_array_equal(to_np(picked.detach()), [4.0, 2.0, 6.0])
    assert p.requires_grad is True and p.is_leaf is True


def test_number_operands(lib):
    x = lib.tensor([1.0, 2.0])
    np.testing.assert_array_equal(to_np(x * 0.5), [0.5, 1.0])
    np.testing.assert_array_equal(to_np(3 - x), [2.0, 1.0])
    assert (x * 2).dtype == lib.float32 and (x * True).dtype == lib.float32
    assert (x * (1 + 2j)).dtype == lib.complex64
    with pytest.raises(TypeError):
        x * "a"
