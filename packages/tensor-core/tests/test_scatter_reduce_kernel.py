"""scatter_reduce's kernel (_scatter_reduce_flat, index_cpu.cpp) on inputs large enough for
its parallel extremes (many values into few positions, one copy of the output per chunk),
against PyTorch: NaNs win wherever they are, include_self either way, positions never
written keep self's value."""

import numpy as np
import pytest
import torch

import ember_tensor as et

RNG = np.random.default_rng(0)
N = 400_000


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["amax", "amin", "sum", "mean"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_many_values_into_few_positions(reduce, include_self, dtype):
    size = 700
    index = RNG.integers(0, size - 50, N)  # the last 50 positions are never written
    if dtype == "float32":
        src = RNG.standard_normal(N).astype(np.float32)
        src[[3, N // 2, N - 1]] = np.nan
        self_ = RNG.standard_normal(size).astype(np.float32)
    else:
        src = RNG.integers(-1000, 1000, N)
        self_ = RNG.integers(-1000, 1000, size)
    got = et.tensor(self_).scatter_reduce(0, et.tensor(index), et.tensor(src), reduce,
                                          include_self=include_self)
    want = torch.tensor(self_).scatter_reduce(0, torch.tensor(index), torch.tensor(src), reduce,
                                              include_self=include_self)
    if reduce in ("amax", "amin") or dtype == "int64":
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    else:  # the sums' order of addition is PyTorch's, up to rounding
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-4)


def test_two_dims_and_one_thread():
    self_ = RNG.standard_normal((3, 40)).astype(np.float32)
    index = RNG.integers(0, 3, (200_000, 40))
    src = RNG.standard_normal((200_000, 40)).astype(np.float32)
    want = torch.tensor(self_).scatter_reduce(0, torch.tensor(index), torch.tensor(src), "amax")
    threads = et.get_num_threads()
    try:
        for n in (1, 2):
            et.set_num_threads(n)
            got = et.tensor(self_).scatter_reduce(0, et.tensor(index), et.tensor(src), "amax")
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    finally:
        et.set_num_threads(threads)


@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("bad", [10, -3, -50])
def test_index_out_of_range_is_pytorchs_error(reduce, bad):
    # N values into 10 positions take the threaded kernel, which must stop at negative
    # offsets too (they once went through as a silent no-op)
    index = RNG.integers(0, 10, N)
    index[N - 7] = bad
    message = f"index {bad} is out of bounds for dimension 0 with size 10"
    with pytest.raises(RuntimeError, match=message):
        et.zeros(10).scatter_reduce(0, et.tensor(index), et.ones(N), reduce)


@pytest.mark.parametrize("reduce", ["amax", "amin", "sum", "prod", "mean"])
@pytest.mark.parametrize("dim, bad", [(0, -1), (0, 3), (1, -1), (1, 5)])
def test_index_out_of_range_along_each_dim(reduce, dim, bad):
    # along dim 0 the kernel finds a bad index as a flat offset out of range (no separate pass
    # over the index); along dim 1 a bad index could name a neighbouring row's element, so the
    # composite checks it first. Either way PyTorch's error, and self unchanged.
    self_ = np.arange(15, dtype=np.float32).reshape(3, 5)
    index = np.zeros((3, 5), dtype=np.int64)
    index[1, 2] = bad
    src = np.ones((3, 5), dtype=np.float32)
    with pytest.raises(RuntimeError) as want:
        torch.tensor(self_).scatter_reduce(dim, torch.tensor(index), torch.tensor(src), reduce)
    ours = et.tensor(self_)
    with pytest.raises(RuntimeError, match=str(want.value).replace("[", r"\[")):
        ours.scatter_reduce(dim, et.tensor(index), et.tensor(src), reduce)
    np.testing.assert_array_equal(ours.numpy(), self_)
