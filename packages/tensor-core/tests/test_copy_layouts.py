"""copy_ between tensors whose dims lie in different memory orders: the copy walks the
destination in its own memory order (a column-major destination, LAPACK's layout, is written
line by line) and transposes in tiles where the source runs along another dim. Checked against
NumPy on every pair of orders of 2-d and 3-d shapes, ragged tile edges, size-1 dims, and
conversions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from conftest import tensor, to_np

SHAPES = [(33, 70), (64, 64), (1, 40), (40, 1), (5, 31, 97), (3, 1, 65), (2, 64, 33)]


def in_order(lib, shape, order, dtype):
    """An uninitialised `dtype` tensor of `shape` whose dims lie in memory in `order`
    (outermost first)."""
    stored = lib.empty(tuple(shape[d] for d in order), dtype=getattr(lib, dtype))
    return stored.permute(*np.argsort(order))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_copy_between_memory_orders(lib, rng, shape, lib_threads):
    a = rng.standard_normal(shape)
    orders = list(itertools.permutations(range(len(shape))))
    for src_order, dst_order in itertools.product(orders, orders):
        src = in_order(lib, shape, src_order, "float64")
        src.copy_(tensor(lib, a))
        dst = in_order(lib, shape, dst_order, "float64")
        dst.copy_(src)
        np.testing.assert_array_equal(to_np(dst), a, err_msg=f"{src_order} -> {dst_order}")
        assert dst.stride() == in_order(lib, shape, dst_order, "float64").stride()


@pytest.mark.parametrize("dtype", ["float32", "int16", "bool", "complex64", "int64"])
def test_transposing_copy_of_each_item_size(lib, rng, dtype):
    a = rng.standard_normal((70, 45)) * 100
    if dtype == "complex64":
        a = a + 1j * rng.standard_normal((70, 45))
    a = a.astype(dtype if dtype != "bool" else "float64")
    if dtype == "bool":
        a = a > 0
    src = tensor(lib, a)
    column_major = in_order(lib, a.shape, (1, 0), dtype)
    for dst in (column_major, lib.empty(a.shape, dtype=getattr(lib, dtype))):
        dst.copy_(src.t().contiguous().t())  # a column-major source
        np.testing.assert_array_equal(to_np(dst), a)
        dst.copy_(src)
        np.testing.assert_array_equal(to_np(dst), a)


def test_converting_copy_into_column_major(lib, rng):
    a = rng.standard_normal((3, 50, 40)).astype(np.float32)
    for dtype in ["float64", "float16", "bfloat16", "int32"]:
        dst = in_order(lib, a.shape, (0, 2, 1), dtype)
        dst.copy_(tensor(lib, a))
        want = to_np(tensor(lib, a).to(getattr(lib, dtype)))
        np.testing.assert_array_equal(to_np(dst), want)


def test_copy_into_a_broadcast_source_and_errors(lib):
    dst = in_order(lib, (40, 50), (1, 0), "float32")
    dst.copy_(lib.arange(50, dtype=lib.float32))
    want = np.broadcast_to(np.arange(50, dtype=np.float32), (40, 50))
    np.testing.assert_array_equal(to_np(dst), want)
    # (Ember names the shapes, PyTorch the sizes)
    with pytest.raises(RuntimeError, match=r"shape \[3\] to shape \[40, 50\]|tensor b \(3\)"):
        dst.copy_(lib.zeros(3))
    empty = lib.empty((0, 5)).t()
    with pytest.raises(RuntimeError, match=r"shape \[3, 3\] to shape \[5, 0\]|tensor b \(3\)"):
        empty.copy_(lib.zeros(3, 3))
