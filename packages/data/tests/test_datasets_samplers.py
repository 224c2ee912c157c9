"""Datasets, samplers and collation against PyTorch 2.13: the same structure always, the
same indices where the order does not depend on the random stream."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import ember_data as D
import ember_tensor as et


def plain(x):
    """Nested containers of tensors -> the same of NumPy arrays (type names kept)."""
    if isinstance(x, (et.Tensor, torch.Tensor)):
        return ("tensor", str(x.dtype).split(".")[1], x.numpy().tolist())
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, *[plain(v) for v in x])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [plain(v) for v in x])
    return x


Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize("make", [
    lambda lib: [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])],
    lambda lib: [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)],
    lambda lib: [np.float64(1.5), np.float64(2.5)],
    lambda lib: [1.5, 2.5],
    lambda lib: [1, 2],
    lambda lib: [True, False],
    lambda lib: ["a", "b"],
    lambda lib: [{"x": 1, "y": [1.0, 2.0]}, {"x": 2, "y": [3.0, 4.0]}],
    lambda lib: [(1, "a"), (2, "b")],
    lambda lib: [Point(1, 2.0), Point(3, 4.0)],
    lambda lib: [[lib.tensor([1]), 2], [lib.tensor([3]), 4]],
], ids=["tensors", "numpy", "numpy-scalars", "floats", "ints", "bools", "strings", "dicts",
        "tuples", "namedtuples", "lists"])
def test_default_collate_matches_pytorch(make):
    ours = D.default_collate(make(et))
    theirs = tud.default_collate(make(torch))
    assert plain(ours) == plain(theirs)


def test_default_convert_matches_pytorch():
    sample = {"a": np.arange(3), "b": (np.float32(2.0), "s"), "c": [np.ones(2)]}
    assert plain(D.default_convert(sample)) == plain(tud.default_convert(sample))


def test_collate_errors():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        D.default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy "
                                        "arrays, numbers, dicts or lists; found <class 'object'>"):
        D.default_collate([object(), object()])


def test_datasets_match_pytorch():
    xs = np.arange(12.0).reshape(6, 2)
    ours = D.TensorDataset(et.from_numpy(xs), et.arange(6))
    theirs = tud.TensorDataset(torch.from_numpy(xs), torch.arange(6))
    assert len(ours) == len(theirs) and plain(ours[4]) == plain(theirs[4])
    cat, tcat = ours + ours, theirs + theirs
    assert isinstance(cat, D.ConcatDataset) and cat.cumulative_sizes == tcat.cumulative_sizes
    for i in (0, 5, 6, 11, -1, -12):
        assert plain(cat[i]) == plain(tcat[i])
    sub, tsub = D.Subset(ours, [5, 0, 3]), tud.Subset(theirs, [5, 0, 3])
    assert [plain(sub[i]) for i in range(3)] == [plain(tsub[i]) for i in range(3)]
    st = D.StackDataset(a=ours, b=ours)
    assert set(st[1]) == {"a", "b"} and len(st) == 6
    with pytest.raises(ValueError, match="Size mismatch between tensors"):
        D.TensorDataset(et.ones(3), et.ones(4))
    with pytest.raises(ValueError, match="absolute value of index should not exceed"):
        cat[-13]


def test_random_split_lengths_and_fractions():
    parts = D.random_split(range(10), [0.5, 0.3, 0.2], generator=et.Generator().manual_seed(0))
    tparts = tud.random_split(range(10), [0.5, 0.3, 0.2])
    assert [len(p) for p in parts] == [len(p) for p in tparts] == [5, 3, 2]
    assert sorted(i for p in parts for i in p) == list(range(10))
    parts = D.random_split(range(11), [0.5, 0.5])
    assert [len(p) for p in parts] == [len(p) for p in tud.random_split(range(11), [0.5, 0.5])]
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        D.random_split(range(10), [3, 3])


def test_samplers():
    ds = range(10)
    assert list(D.SequentialSampler(ds)) == list(tud.SequentialSampler(ds))
    g = et.Generator().manual_seed(1)
    order = list(D.RandomSampler(ds, generator=g))
    assert sorted(order) == list(range(10))
    again = list(D.RandomSampler(ds, generator=et.Generator().manual_seed(1)))
    assert order == again  # reproducible with a generator
    drawn = list(D.RandomSampler(ds, replacement=True, num_samples=70))
    assert len(drawn) == 70 and set(drawn) <= set(ds)
    assert len(list(D.RandomSampler(ds, num_samples=25))) == 25
    sub = list(D.SubsetRandomSampler([3, 5, 7]))
    assert sorted(sub) == [3, 5, 7]
    for drop_last in (False, True):
        ours = list(D.BatchSampler(D.SequentialSampler(ds), 4, drop_last))
        theirs = list(tud.BatchSampler(tud.SequentialSampler(ds), 4, drop_last))
        assert ours == theirs
        assert len(D.BatchSampler(range(10), 4, drop_last)) == len(theirs)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        D.RandomSampler(ds, num_samples=0)
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        D.BatchSampler(ds, 0, False)


def test_weighted_random_sampler_follows_the_weights():
    w = [0.0, 1.0, 3.0]
    drawn = np.array(list(D.WeightedRandomSampler(w, 40000,
                                                  generator=et.Generator().manual_seed(0))))
    freq = np.bincount(drawn, minlength=3) / len(drawn)
    np.testing.assert_allclose(freq, [0.0, 0.25, 0.75], atol=0.01)
    no_repl = list(D.WeightedRandomSampler(w, 2, replacement=False))
    assert sorted(no_repl) == [1, 2]
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
        D.WeightedRandomSampler(w, 3, replacement=False)


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("shuffle", [False, True])
def test_distributed_sampler_matches_pytorch_shares(shuffle, drop_last):
    ds = range(11)
    ours = [list(D.DistributedSampler(ds, 3, r, shuffle=shuffle, drop_last=drop_last))
            for r in range(3)]
    theirs = [list(tud.DistributedSampler(ds, 3, r, shuffle=shuffle, drop_last=drop_last))
              for r in range(3)]
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    if not shuffle:
        assert ours == theirs
    flat = sorted(i for s in ours for i in s)
    assert set(flat) <= set(ds) and (drop_last or set(flat) == set(ds))
    s = D.DistributedSampler(ds, 3, 0, shuffle=True)
    first = list(s)
    s.set_epoch(1)
    assert list(s) != first  # another order per epoch
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval "
                                         r"\[0, 2\]"):
        D.DistributedSampler(ds, 3, 3)
