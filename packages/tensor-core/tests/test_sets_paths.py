"""unique and isin take two paths (_composites/sets.py): integers of a range no wider than
about their number are counted (bincount) or looked up in a table; other inputs are sorted
and searched. Both paths against PyTorch, on every integer dtype the counting takes, with
return_inverse / return_counts and invert."""

import numpy as np
import pytest
import torch

import ember_tensor as et

RNG = np.random.default_rng(0)
CASES = {
    "narrow": RNG.integers(-60, 60, (40, 50)),  # counted
    "wide": RNG.integers(-2**40, 2**40, 300),  # sorted (the range is far wider than n)
    "one value": np.full(7, 5),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "float32"])
def test_unique_paths_match_torch(case, dtype):
    info = np.iinfo(dtype) if dtype != "float32" else None
    a = CASES[case] if info is None else np.clip(CASES[case], info.min, info.max)
    a = a.astype(dtype)
    for inverse in (False, True):
        for counts in (False, True):
            got = et.unique(et.tensor(a), return_inverse=inverse, return_counts=counts)
            want = torch.unique(torch.tensor(a), return_inverse=inverse, return_counts=counts)
            got = got if isinstance(got, tuple) else (got,)
            want = want if isinstance(want, tuple) else (want,)
            for g, w in zip(got, want):
                assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
                np.testing.assert_array_equal(g.numpy(), w.numpy())


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("dtype", ["int64", "int16", "uint8", "float64"])
def test_isin_paths_match_torch(case, dtype):
    info = np.iinfo(dtype) if dtype != "float64" else None
    a = CASES[case] if info is None else np.clip(CASES[case], info.min, info.max)
    a = a.astype(dtype)
    tests = a.reshape(-1)[::3]
    outside = RNG.integers(-200, 200, 50)
    elements = np.concatenate([a.reshape(-1), outside.astype(a.dtype)])
    for invert in (False, True):
        got = et.isin(et.tensor(elements), et.tensor(tests), invert=invert)
        want = torch.isin(torch.tensor(elements), torch.tensor(tests), invert=invert)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
