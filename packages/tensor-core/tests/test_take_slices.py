"""index_select, x[idx] / x[:, idx] (one index tensor into a contiguous tensor) and take copy
whole slices per index: one element, a short slice element by element, or a slice of 64
bytes and more with one memcpy (an embedding's rows). Negative indices (advanced indexing and
take) are wrapped in a second pass over the ranges that hold them. Checked against NumPy at
1 and 2 threads, for every slice class and item size, with PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import IS_TORCH, to_np

# (shape, dim): slices of 1 element, of 3, of 16 float32 (64 bytes), of 40
CASES = [((1000,), 0), ((50, 3), 0), ((20, 16), 0), ((7, 40), 0), ((6, 30, 3), 1), ((4, 9, 40), 1),
         ((3, 500), 1)]
DTYPES = ["float32", "float64", "int16", "uint8", "complex64"]


def _values(rng, shape, dtype):
    a = rng.standard_normal(shape) * 50
    if dtype == "complex64":
        return (a + 1j * rng.standard_normal(shape)).astype(np.complex64)
    return a.astype(dtype)


@pytest.mark.parametrize("shape,dim", CASES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_index_select_and_getitem_take_slices(lib, rng, lib_threads, shape, dim, dtype):
    a = _values(rng, shape, dtype)
    x = lib.from_numpy(a)
    size = shape[dim]
    idx = rng.integers(0, size, 40000 if size > 100 else 3000)  # above the parallel grain
    i = lib.from_numpy(idx)
    np.testing.assert_array_equal(to_np(x.index_select(dim, i)), np.take(a, idx, axis=dim))
    # advanced indexing wraps negative indices; a 2-d index tensor lands in place of dim
    neg = idx - np.where(rng.random(idx.shape) < 0.3, size, 0)
    grid = neg[: (len(neg) // 4) * 4].reshape(-1, 4)
    key = (slice(None),) * dim + (lib.from_numpy(grid),)
    np.testing.assert_array_equal(to_np(x[key]), a[(slice(None),) * dim + (grid,)])
    assert x[key].dtype == x.dtype


def test_take_wraps_negative_indices(lib, rng, lib_threads):
    a = rng.standard_normal((37, 29))
    idx = rng.integers(-a.size, a.size, (300, 200))
    got = lib.from_numpy(a).take(lib.from_numpy(idx))
    np.testing.assert_array_equal(to_np(got), np.take(a, idx))
    # a transposed (non-contiguous) self is taken in its logical order
    np.testing.assert_array_equal(to_np(lib.from_numpy(a).t().take(lib.from_numpy(idx))),
                                  np.take(a.T, idx))


def test_index_select_out_and_non_contiguous(lib, rng):
    a = rng.standard_normal((30, 20))
    idx = rng.integers(0, 30, 500)
    x, i = lib.from_numpy(a), lib.from_numpy(idx)
    out = lib.empty(0, dtype=lib.float64)
    r = lib.index_select(x, 0, i, out=out)
    np.testing.assert_array_equal(to_np(out), a[idx])
    assert r.data_ptr() == out.data_ptr()
    np.testing.assert_array_equal(to_np(x.t().index_select(1, i)), a.T[:, idx])
    np.testing.assert_array_equal(to_np(x[:, ::2][lib.from_numpy(idx % 10)]),
                                  a[:, ::2][idx % 10])


@pytest.mark.parametrize("bad", [30, -31, 10**12])
def test_out_of_range_errors(lib, rng, bad):
    a = lib.from_numpy(rng.standard_normal((30, 20)))
    idx = np.zeros(70000, np.int64)
    idx[50000] = bad
    i = lib.from_numpy(idx)

    def out_of_bounds(position):
        return f"index {bad} is out of bounds for dimension {position} with size 30"

    with pytest.raises(IndexError, match=out_of_bounds(0)):
        a[i]
    # PyTorch names the index tensor's position among the indexed dims, not self's dim
    with pytest.raises(IndexError, match=out_of_bounds(0)):
        a.t()[:, i]  # not contiguous: the offsets path
    with pytest.raises(IndexError, match=out_of_bounds(1)):
        a.t()[lib.zeros_like(i), i]
    with pytest.raises(IndexError, match="index out of range in self"):
        a.index_select(0, lib.from_numpy(np.abs(idx)))
    with pytest.raises(IndexError, match="index out of range in self"):
        lib.index_select(a, 0, lib.from_numpy(np.abs(idx)), out=lib.empty(0, dtype=lib.float64))
    far = np.where(idx == bad, bad * 20, idx)
    with pytest.raises(IndexError, match=f"out of range: tried to access index {bad * 20} on a "
                                         "tensor of 600 elements"):
        a.take(lib.from_numpy(far))


@pytest.mark.parametrize("shape,dim", CASES, ids=str)
def test_index_put_by_one_index_tensor(lib, rng, lib_threads, shape, dim):
    """x[..., idx] = values writes slices per index (values contiguous, a number, or
    broadcast: the last takes the offsets path), negative indices wrapped."""
    a = rng.standard_normal(shape)
    size = shape[dim]
    idx = rng.permutation(size)[: max(1, size // 2)]
    idx = np.where(rng.random(idx.shape) < 0.3, idx - size, idx)  # unique targets, some negative
    key_np = (slice(None),) * dim + (idx,)
    key = (slice(None),) * dim + (lib.from_numpy(idx),)
    vals = rng.standard_normal(a[key_np].shape)
    for value, v_np in ((lib.from_numpy(vals), vals), (2.5, 2.5),
                        (lib.from_numpy(vals[..., :1]), vals[..., :1])):
        x, want = lib.from_numpy(a.copy()), a.copy()
        x[key] = value
        want[key_np] = v_np
        np.testing.assert_array_equal(to_np(x), want)


def test_index_put_errors_leave_self(lib, rng):
    """PyTorch's errors; Ember also leaves self unchanged (PyTorch's kernel has written the
    values before the bad index)."""
    a = rng.standard_normal((1000, 3))
    idx = rng.integers(0, 1000, 50000)
    idx[30000] = 1000
    x = lib.from_numpy(a.copy())
    message = "index 1000 is out of bounds for dimension 0 with size 1000"
    with pytest.raises(IndexError, match=message):
        x[lib.from_numpy(idx)] = lib.from_numpy(rng.standard_normal((50000, 3)))
    if not IS_TORCH:
        np.testing.assert_array_equal(to_np(x), a)
    x = lib.from_numpy(a.copy())
    with pytest.raises(RuntimeError, match="shape mismatch"):
        x[lib.from_numpy(idx[:10] % 1000)] = lib.zeros(4, 3, dtype=lib.float64)
    np.testing.assert_array_equal(to_np(x), a)
