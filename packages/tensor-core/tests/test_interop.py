"""NumPy and DLPack interop: memory sharing, copies, dtypes and strides."""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest
import torch

from conftest import (
    ALL_DTYPES,
    assert_close,
    dtype_name,
    rand_array,
    tensor,
    to_np,
)

NUMPY_DTYPES = [d for d in ALL_DTYPES if d != "bfloat16"]

_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]


def capsule_name(cap) -> bytes:
    return _get_name(cap)


# ---------------------------------------------------------------------------------------------
# from_numpy / numpy / __array__


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_from_numpy_shares_memory(lib, rng, dtype):
    a = rand_array(rng, (3, 4), dtype)
    t = lib.from_numpy(a)
    assert dtype_name(t.dtype) == dtype
    assert_close(t, a, dtype)
    one = np.array(1).astype(a.dtype)
    a[1, 2] = one  # write through NumPy, read through lib
    assert to_np(t)[1, 2] == one
    t[0, 0] = 0  # write through lib, read through NumPy
    assert a[0, 0] == 0
    before = a.copy()
    if dtype == "bool":
        t.logical_not_()
        np.testing.assert_array_equal(a, ~before)
    else:
        t.add_(1)
        np.testing.assert_array_equal(a, (before + 1).astype(a.dtype))


def test_from_numpy_strides_and_lifetime(lib):
    a = np.arange(12.0).reshape(3, 4)
    t = lib.from_numpy(a.T)
    assert t.stride() == (1, 4)
    assert not t.is_contiguous()
    assert_close(t, a.T, "float64")
    s = lib.from_numpy(a[:, 1::2])
    assert s.stride() == (4, 2)
    a[0, 1] = -5.0
    assert float(s[0, 0]) == -5.0
    # the tensor keeps the array's memory alive
    b = np.arange(5, dtype=np.int32)
    tb = lib.from_numpy(b)
    del b
    gc.collect()
    assert to_np(tb).tolist() == [0, 1, 2, 3, 4]
    z = lib.from_numpy(np.zeros((0, 3), dtype=np.float32))
    assert tuple(z.shape) == (0, 3)
    assert tuple(lib.from_numpy(np.array(2.5)).shape) == ()


def test_from_numpy_rejects(lib):
    with pytest.raises(ValueError):
        lib.from_numpy(np.arange(4)[::-1])
    with pytest.raises(TypeError):
        lib.from_numpy([1, 2, 3])
    with pytest.raises(TypeError):
        lib.from_numpy(np.array(["a"]))


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_numpy_shares_memory(lib, rng, dtype):
    a = rand_array(rng, (2, 5), dtype)
    t = tensor(lib, a, dtype)
    n = t.numpy()
    assert n.dtype == a.dtype and n.shape == (2, 5)
    np.testing.assert_array_equal(n, a)
    t.zero_()
    assert not n.any()
    n[1, 1] = 1
    assert bool(t[1, 1])


def test_numpy_of_views(lib):
    t = lib.arange(12, dtype=lib.float32).reshape(3, 4)
    v = t.t().numpy()
    assert v.shape == (4, 3)
    assert v.strides == (4, 16)
    s = t[1:, ::2].numpy()
    np.testing.assert_array_equal(s, np.arange(12.0).reshape(3, 4)[1:, ::2])
    t[2, 2] = 100.0
    assert s[1, 1] == 100.0 and v[2, 2] == 100.0
    assert t[1].numpy().tolist() == [4.0, 5.0, 6.0, 7.0]
    assert lib.tensor(3.0).numpy().shape == ()


def test_numpy_rejects_bfloat16(lib):
    with pytest.raises(TypeError):
        lib.ones(2, dtype=lib.bfloat16).numpy()


def test_array_protocol(lib):
    t = lib.arange(6, dtype=lib.int32).reshape(2, 3)
    a = np.asarray(t)
    assert a.dtype == np.int32 and a.shape == (2, 3)
    t[0, 0] = 42
    assert a[0, 0] == 42
    f = np.asarray(t, dtype=np.float64)
    assert f.dtype == np.float64 and f[0, 0] == 42.0
    assert np.array(t).tolist() == [[42, 1, 2], [3, 4, 5]]
    np.testing.assert_array_equal(np.asarray(t.t()), np.asarray(t).T)


# ---------------------------------------------------------------------------------------------
# DLPack


def test_dlpack_device(lib):
    dev = lib.zeros(2).__dlpack_device__()
    assert tuple(int(v) for v in dev) == (1, 0)


def test_dlpack_capsule_names(lib):
    t = lib.arange(4.0)
    assert capsule_name(t.__dlpack__()) == b"dltensor"
    assert capsule_name(t.__dlpack__(max_version=(1, 0))) == b"dltensor_versioned"
    assert capsule_name(t.__dlpack__(max_version=(1, 3))) == b"dltensor_versioned"
    assert capsule_name(t.__dlpack__(max_version=(0, 8))) == b"dltensor"


def test_dlpack_capsule_roundtrip_lib(lib):
    t = lib.arange(6.0).reshape(2, 3)
    u = lib.from_dlpack(t.__dlpack__(max_version=(1, 0)))
    assert_close(u, np.arange(6.0).reshape(2, 3), "float32")
    u[0, 0] = 9.0
    assert float(t[0, 0]) == 9.0
    w = lib.from_dlpack(t)
    w[1, 2] = -1.0
    assert float(t[1, 2]) == -1.0


@pytest.mark.parametrize("layout", ["contig", "transposed", "stepped"])
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_dlpack_to_numpy(lib, rng, dtype, layout):
    a = rand_array(rng, (3, 4), dtype)
    t = tensor(lib, a, dtype, layout)
    n = np.from_dlpack(t)
    assert n.dtype == a.dtype
    np.testing.assert_array_equal(n, a)
    if dtype != "bool":
        t.mul_(0)
        assert not n.any()
        n[0, 0] = 3
        assert int(t[0, 0]) == 3
    snapshot = n.copy()
    c = np.from_dlpack(t, copy=True)
    np.testing.assert_array_equal(c, snapshot)
    c[...] = ~snapshot if dtype == "bool" else snapshot + 1
    np.testing.assert_array_equal(n, snapshot)
    np.testing.assert_array_equal(to_np(t), snapshot)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_dlpack_from_numpy(lib, rng, dtype):
    a = rand_array(rng, (2, 3), dtype)
    t = lib.from_dlpack(a)
    assert dtype_name(t.dtype) == dtype
    assert_close(t, a, dtype)
    a[0, 1] = np.array(0).astype(a.dtype)
    assert not bool(t[0, 1])
    tt = lib.from_dlpack(np.arange(12, dtype=np.int64).reshape(3, 4).T)
    assert tt.stride() == (1, 4)
    assert_close(tt, np.arange(12).reshape(3, 4).T, "int64")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_dlpack_with_torch_both_ways(lib, rng, dtype):
    a = rand_array(rng, (3, 4), dtype)
    # lib -> torch
    t = tensor(lib, a, dtype, "transposed")
    pt = torch.from_dlpack(t)
    assert dtype_name(pt.dtype) == dtype
    assert tuple(pt.shape) == (3, 4) and pt.stride() == t.stride()
    pt[0, 0] = 0
    assert not bool(t[0, 0])
    # torch -> lib
    src = torch.zeros(2, 3, dtype=getattr(torch, dtype))
    e = lib.from_dlpack(src)
    assert dtype_name(e.dtype) == dtype
    assert tuple(e.shape) == (2, 3)
    src[1, 2] = 1
    assert bool(e[1, 2])
    e[0, 0] = 1
    assert bool(src[0, 0])
    # a torch view with an offset and strides
    v = lib.from_dlpack(torch.arange(20).reshape(4, 5)[1:, ::2])
    assert_close(v, np.arange(20).reshape(4, 5)[1:, ::2], "int64")


def test_dlpack_copy_true(lib):
    t = lib.arange(4.0)
    c = lib.from_dlpack(t.__dlpack__(max_version=(1, 0), copy=True))
    c[0] = 100.0
    assert float(t[0]) == 0.0
    c2 = lib.from_dlpack(t, copy=True)
    c2.fill_(5.0)
    assert to_np(t).tolist() == [0.0, 1.0, 2.0, 3.0]
    n = np.arange(3.0)
    c3 = lib.from_dlpack(n, copy=True)
    c3[0] = 7.0
    assert n[0] == 0.0
    c4 = torch.from_dlpack(t, copy=True)
    c4[1] = 50.0
    assert float(t[1]) == 1.0


def test_dlpack_zero_size_and_zero_dim(lib):
    e = lib.zeros(0, 3)
    assert np.from_dlpack(e).shape == (0, 3)
    s = lib.tensor(2.5)
    n = np.from_dlpack(s)
    assert n.shape == () and float(n) == 2.5
    assert tuple(lib.from_dlpack(torch.zeros(0)).shape) == (0,)
    assert float(lib.from_dlpack(torch.tensor(1.5))) == 1.5


def test_dlpack_keeps_producer_alive(lib):
    def make():
        return np.from_dlpack(lib.arange(1000, dtype=lib.int64))

    n = make()
    gc.collect()
    lib.zeros(1000, dtype=lib.int64)  # would reuse freed memory
    assert n.tolist() == list(range(1000))

    def make_torch():
        return lib.from_dlpack(torch.arange(1000))

    e = make_torch()
    gc.collect()
    torch.zeros(1000, dtype=torch.int64)
    assert to_np(e).tolist() == list(range(1000))


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3)], ids=str)
def test_pickle_and_deepcopy_keep_the_shape(lib, shape):
    import copy
    import pickle

    t = lib.arange(int(np.prod(shape)), dtype=lib.float64).reshape(shape)
    for back in (copy.deepcopy(t), pickle.loads(pickle.dumps(t))):
        assert tuple(back.shape) == shape and back.dtype == t.dtype
        assert back.tolist() == t.tolist()
