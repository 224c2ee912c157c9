"""nonzero, masked_select and x[mask] on large tensors: chunks of 32768 elements counted and
written in parallel, each element written branch-free at the current slot (a chunk stops at
its last selected element so that no slot is left wrong). Checked against NumPy at 1 and 2
threads: 1-d to 4-d, chunks with nothing selected, chunks ending in unselected elements,
all / nothing selected, float values where -0.0 is zero and NaN is not."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import to_np

CHUNK = 32768


def _masks(rng, n):
    """Flat bool masks of n elements: random, sparse, dense, empty chunks, runs that end a
    chunk unselected, nothing and everything selected."""
    sparse = rng.random(n) < 0.001
    gaps = rng.random(n) < 0.5
    gaps[CHUNK: 3 * CHUNK] = False  # two chunks with nothing
    tail = rng.random(n) < 0.5
    tail[CHUNK - 100: CHUNK] = False  # a chunk whose last elements are unselected
    tail[-50:] = False
    return [rng.random(n) < 0.5, sparse, rng.random(n) < 0.99, gaps, tail,
            np.zeros(n, bool), np.ones(n, bool)]


@pytest.mark.parametrize("shape", [(200_000,), (300, 700), (7, 111, 150), (3, 5, 70, 97)],
                         ids=str)
def test_nonzero_masked_select_and_getitem(lib, rng, lib_threads, shape):
    n = int(np.prod(shape))
    a = rng.standard_normal(shape)
    for flat in _masks(rng, n):
        m = flat.reshape(shape)
        mask = lib.from_numpy(m)
        np.testing.assert_array_equal(to_np(mask.nonzero()), np.argwhere(m))
        x = lib.from_numpy(a)
        np.testing.assert_array_equal(to_np(x.masked_select(mask)), a[m])
        np.testing.assert_array_equal(to_np(x[mask]), a[m])
        # a mask of the leading dims selects whole rows
        lead = m.reshape(shape[0], -1)[:, 0]
        np.testing.assert_array_equal(to_np(x[lib.from_numpy(lead)]), a[lead])


def test_nonzero_of_floats_and_integers(lib, rng, lib_threads):
    a = rng.standard_normal(100_000)
    a[rng.random(a.size) < 0.4] = 0.0
    a[rng.random(a.size) < 0.1] = -0.0
    a[rng.random(a.size) < 0.01] = np.nan
    for dtype in ("float32", "float64", "int32", "uint8"):
        v = a if dtype.startswith("float") else np.nan_to_num(a * 5)
        v = v.astype(dtype)
        np.testing.assert_array_equal(to_np(lib.from_numpy(v).nonzero()), np.argwhere(v))
        t = lib.from_numpy(v.reshape(250, 400))
        np.testing.assert_array_equal(to_np(t.nonzero()), np.argwhere(v.reshape(250, 400)))


@pytest.mark.parametrize("dtype", ["complex64", "uint16", "bool", "float16"])
def test_getitem_mask_of_every_dtype(lib, rng, dtype):
    """x[mask] takes masked_select where it can (complex too) and the index path for the
    dtypes masked_select refuses (uint16 to uint64, as PyTorch's)."""
    a = (rng.standard_normal((300, 200)) * 100).astype(np.float64)
    v = (a + 1j * a[::-1]).astype(dtype) if dtype == "complex64" else a.astype(dtype)
    m = rng.random(a.shape) < 0.5
    x = lib.from_numpy(v)
    got = x[lib.from_numpy(m)]
    np.testing.assert_array_equal(to_np(got.float() if dtype == "float16" else got), v[m])
