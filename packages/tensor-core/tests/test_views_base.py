"""as_strided and the view bookkeeping autograd relies on (_base, _is_view), checked against
NumPy and (with EMBER_TEST_LIB=torch) PyTorch itself."""

from __future__ import annotations

import numpy as np
import pytest


def test_as_strided_matches_numpy(lib):
    base = lib.arange(12.0)
    got = base.as_strided((3, 2), (4, 1), 1)
    ref = np.lib.stride_tricks.as_strided(np.arange(12.0)[1:], (3, 2), (32, 8))
    np.testing.assert_array_equal(got.numpy(), ref)
    assert got._base is base  # a view of base


def test_as_strided_defaults_to_the_tensors_offset(lib):
    v = lib.arange(10.0)[3:]
    np.testing.assert_array_equal(v.as_strided((2,), (2,)).numpy(), [3.0, 5.0])


@pytest.mark.parametrize(
    "args",
    [((3,), (1,), 8), ((2, 2), (1,)), ((2,), (-1,)), ((-1,), (1,))],
)
def test_as_strided_out_of_bounds_or_malformed_is_an_error(lib, args):
    with pytest.raises(RuntimeError):
        lib.arange(10.0).as_strided(*args)


def test_base_is_the_root_and_detach_is_not_a_view(lib):
    x = lib.zeros(3, 4)
    v = x[1:].t()[0]
    assert v._is_view() and v._base is x
    assert x._base is None and not x._is_view()
    assert not x.detach()._is_view()
    assert not (x + 1)._is_view()
    assert not x.t().contiguous()._is_view()  # a copy


def test_result_of_a_copying_reshape_is_not_a_view(lib):
    x = lib.zeros(3, 4).t()
    r = x.reshape(12)  # x is not contiguous: reshape copies
    assert not r._is_view()



@pytest.mark.parametrize("op", ["index_select", "index_add", "gather", "scatter_add", "take"])
def test_index_tensors_with_a_storage_offset(lib, op):
    """An index tensor that is a slice (storage offset > 0) reads its own elements."""
    idx = lib.arange(12)[1:4]  # [1, 2, 3], offset 1
    x = lib.arange(10.0)
    if op == "index_select":
        got = lib.index_select(x, 0, idx)
        ref = [1.0, 2.0, 3.0]
    elif op == "index_add":
        got = lib.zeros(10).index_add(0, idx, lib.ones(3))
        ref = [0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    elif op == "gather":
        got = x.gather(0, idx)
        ref = [1.0, 2.0, 3.0]
    elif op == "scatter_add":
        got = lib.zeros(10).scatter_add(0, idx, lib.ones(3))
        ref = [0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    else:
        got = x[idx]
        ref = [1.0, 2.0, 3.0]
    assert got.tolist() == ref


def test_masks_and_conditions_with_a_storage_offset(lib):
    m = lib.tensor([False, True, False, True, True])[1:]  # [T, F, T, T], offset 1
    x = lib.arange(4.0)
    assert lib.masked_select(x, m).tolist() == [0.0, 2.0, 3.0]
    assert x.masked_fill(m, -1.0).tolist() == [-1.0, 1.0, -1.0, -1.0]
    assert lib.where(m, x, lib.zeros(4)).tolist() == [0.0, 0.0, 2.0, 3.0]
    assert x[m].tolist() == [0.0, 2.0, 3.0]


def test_read_only_numpy_memory_is_copied_by_from_dlpack(ember_only):
    import ember_tensor as et

    a = np.arange(3.0)
    a.flags.writeable = False
    t = et.from_dlpack(a)  # DLPack 1.0 marks it read-only: Ember copies
    t.add_(1)
    assert a.tolist() == [0.0, 1.0, 2.0]


def test_from_numpy_of_a_read_only_array_warns(lib):
    a = np.arange(3.0)
    a.flags.writeable = False
    with pytest.warns(UserWarning, match="not writable"):
        lib.from_numpy(a)


def test_data_assignment_takes_shape_and_dtype(lib):
    t = lib.zeros(2)
    src = lib.ones(3, dtype=lib.float64)
    t.data = src
    assert t.dtype == lib.float64 and tuple(t.shape) == (3,)
    assert t.tolist() == [1.0, 1.0, 1.0]
    src[0] = 5.0
    assert t[0].item() == 5.0  # t views src's memory


def test_detach_in_place_refuses_views(lib):
    with pytest.raises(RuntimeError, match="Can't detach views in-place. Use detach"):
        lib.ones(3)[:2].detach_()


def test_tensor_new_never_makes_uninitialised_tensors(ember_only):
    import ember_tensor as et

    class Sub(et.Tensor):
        pass

    # __new__ itself builds the tensor (PyTorch's legacy constructor): nothing can reach an
    # instance without one
    for make in (lambda: et.Tensor.__new__(Sub), lambda: Sub(), lambda: et.Tensor()):
        t = make()
        assert tuple(t.shape) == (0,) and t.dtype == et.float32
        assert (t + 1).shape == (0,)
