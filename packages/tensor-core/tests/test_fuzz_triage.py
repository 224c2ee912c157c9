"""Regression tests of divergences from PyTorch that the differential fuzzer found
(packages/ember/tests/fuzz), each against PyTorch on the fuzzer's call."""

import numpy as np
import pytest
import torch

import ember_tensor as et


def _both(fn):
    return fn(et), fn(torch)


@pytest.mark.parametrize("name", ["trapezoid", "cumulative_trapezoid"])
def test_trapezoid_sample_points_of_more_dims_difference_along_y_dim(name):
    y, x = [1.0, 4.0], [[6.0, 6, 0], [0, 1, 0], [4, 5, 4]]
    got, want = _both(lambda lib: getattr(lib, name)(lib.tensor(y), lib.tensor(x), dim=-1))
    np.testing.assert_allclose(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int32", "bool"])
def test_bincount_weights_dtype(dtype):
    got, want = _both(lambda lib: lib.bincount(lib.tensor([0, 1, 1]),
                                               lib.ones(3, dtype=getattr(lib, dtype))))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_index_copy_source_of_other_rank():
    msg = "When source and destination are not scalars, their dimensionality must match"
    for lib in (et, torch):
        with pytest.raises(IndexError, match=msg):
            lib.zeros(2, 3).index_copy(0, lib.tensor([1]), lib.tensor([3.0]))


def test_put_takes_only_int64_indices():
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match="Expected a long tensor for index, but got Int"):
            lib.put(lib.zeros(4), lib.tensor([1, 2], dtype=lib.int32), lib.ones(2))


def test_histogramdd_refuses_bool_bins():
    for lib in (et, torch):
        with pytest.raises(TypeError):
            lib.histogramdd(lib.zeros(4, 2), True)


def test_histogramdd_refuses_a_tensor_of_bins_16_bit_floats_and_infinite_ranges():
    for lib in (et, torch):
        with pytest.raises(TypeError):
            lib.histogramdd(lib.zeros(1, 1), lib.tensor([[3.0]]))
        with pytest.raises(NotImplementedError, match="not implemented for 'BFloat16'"):
            lib.histogramdd(lib.zeros(3, 3, dtype=lib.bfloat16), 1)
        with pytest.raises(RuntimeError, match=r"dimension 1's range \[nan, nan\] is not finite"):
            lib.histogramdd(lib.tensor([[1.0, float("nan")], [2.0, 3.0]]), 2)


def test_index_copy_slice_shapes_must_match():
    msg = "Source/destination tensor must have same slice shapes"
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match=msg):
            lib.zeros(2, 3, 3).index_copy(0, lib.tensor([0]), lib.tensor(1.0))
        with pytest.raises(RuntimeError, match=msg):
            lib.zeros(2, 3).index_copy(0, lib.tensor([0]), lib.ones(1, 4))


def test_unsafe_masked_index_arguments_as_pytorchs():
    x = [[0.0, 1, 2], [3, 4, 5]]
    for lib in (et, torch):
        with pytest.raises(IndexError, match="at least one index must be provided"):
            lib._unsafe_masked_index(lib.tensor(x), lib.tensor([True]), [], 1.0)
        with pytest.raises(TypeError, match="expected Tensor as element 1"):
            lib._unsafe_masked_index(lib.tensor(x), lib.tensor([True]),
                                     [lib.tensor([0]), None], 1.0)
    # a mask of another dtype reads nonzero as true
    got, want = _both(lambda lib: lib._unsafe_masked_index(
        lib.tensor(x), lib.tensor([1, 0, 2]), [lib.tensor([0, 1, 5])], 0.5))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
