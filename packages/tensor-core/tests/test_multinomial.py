"""multinomial: the law of the draws (frequencies against the weights, with and without
replacement), shapes, reproducibility with a generator, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_tensor as et


def draws(weights, n, replacement, seed=0, dtype=et.float64):
    g = et.Generator().manual_seed(seed)
    return et.multinomial(et.tensor(weights, dtype=dtype), n, replacement,
                          generator=g).numpy()


@pytest.mark.parametrize("dtype", [et.float32, et.float64])
def test_frequencies_with_replacement(dtype):
    w = np.array([1.0, 0.0, 2.0, 3.0, 4.0])
    n = 200_000
    got = draws(w, n, True, dtype=dtype)
    assert got.dtype == np.int64 and got.shape == (n,)
    freq = np.bincount(got, minlength=5) / n
    p = w / w.sum()
    sigma = np.sqrt(p * (1 - p) / n)
    assert freq[1] == 0  # a zero weight is never drawn
    np.testing.assert_array_less(np.abs(freq - p), 5 * sigma + 1e-12)


def test_without_replacement_law_and_uniqueness():
    w = np.array([5.0, 1.0, 3.0, 0.0, 1.0])
    rows = 40_000
    got = et.multinomial(et.tensor(np.tile(w, (rows, 1))), 3,
                         generator=et.Generator().manual_seed(1)).numpy()
    assert got.shape == (rows, 3)
    assert all(len(set(r)) == 3 for r in got[:2000])
    assert not (got == 3).any()  # zero weight: never, while others remain
    # the first draw follows the weights; the second is the first of what remains
    p = w / w.sum()
    first = np.bincount(got[:, 0], minlength=5) / rows
    np.testing.assert_array_less(np.abs(first - p), 5 * np.sqrt(p * (1 - p) / rows) + 1e-12)
    second = np.bincount(got[:, 1], minlength=5) / rows
    expected = np.zeros(5)
    for i in range(5):
        for j in range(5):
            if i != j and p[i] > 0:
                expected[j] += p[i] * p[j] / (1 - p[i])
    np.testing.assert_allclose(second, expected, atol=5 * np.sqrt(0.25 / rows))


def test_all_categories_is_a_permutation_and_reproducible():
    w = [[1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0]]
    a = draws(w, 4, False, seed=7)
    assert sorted(a[0]) == [0, 1, 2, 3] and sorted(a[1]) == [0, 1, 2, 3]
    np.testing.assert_array_equal(a, draws(w, 4, False, seed=7))
    assert not np.array_equal(draws(w, 4, True, seed=7), draws(w, 4, True, seed=8))
    t = et.tensor(w)
    assert tuple(t.multinomial(6, replacement=True).shape) == (2, 6)  # the method


@pytest.mark.parametrize("weights, n, replacement", [
    ([1.0, 2.0], 3, False),
    ([0.0, 0.0], 1, True),
    ([1.0, -1.0], 1, True),
    ([1.0, float("nan")], 1, True),
    ([1.0, float("inf")], 1, True),
    ([1.0, 2.0], 0, True),
    ([[[1.0]]], 1, True),
])
def test_errors_match_pytorch(weights, n, replacement):
    with pytest.raises(RuntimeError) as theirs:
        torch.multinomial(torch.tensor(weights, dtype=torch.float64), n, replacement)
    with pytest.raises(RuntimeError) as ours:
        et.multinomial(et.tensor(weights, dtype=et.float64), n, replacement)
    # the same cause, in PyTorch's words (Ember adds which row and values)
    key = str(theirs.value).split("(")[0].strip().rstrip(",")
    assert key.split(":")[-1].strip()[:30] in str(ours.value), (str(theirs.value), str(ours.value))


def test_integer_weights_are_refused():
    with pytest.raises(RuntimeError, match="multinomial: dtype int64 is not supported"):
        et.multinomial(et.tensor([1, 2]), 1)


def test_zero_weights_come_last_without_replacement():
    got = [draws([1.0, 0.0, 0.0, 2.0], 4, False, seed=s) for s in range(200)]
    assert all(sorted(g[:2]) == [0, 3] and sorted(g[2:]) == [1, 2] for g in got)
    assert {tuple(g[2:]) for g in got} == {(1, 2), (2, 1)}  # the zeros in random order
