"""The DataLoader: batches with and without workers, seeds, errors from workers, and the
arguments PyTorch rejects."""

from __future__ import annotations

import multiprocessing
import time

import pytest
import torch.utils.data as tud

import data_helpers as H
import ember_data as D
import ember_tensor as et


def batches(loader):
    return [(b["i"].tolist(), b["sq"].reshape(-1).tolist()) for b in loader]


@pytest.mark.parametrize("workers", [0, 2])
def test_batches_in_order(workers):
    got = batches(D.DataLoader(H.Squares(), batch_size=6, num_workers=workers))
    assert [i for i, _ in got] == [list(range(k, min(k + 6, 20))) for k in range(0, 20, 6)]
    assert all(sq == [float(i * i) for i in idx] for idx, sq in got)
    assert not multiprocessing.active_children()  # the workers were joined


def test_shuffle_is_reproducible_with_a_generator():
    def epoch(seed, workers):
        g = et.Generator().manual_seed(seed)
        return [i for idx, _ in batches(D.DataLoader(H.Squares(), batch_size=5, shuffle=True,
                                                     generator=g, num_workers=workers))
                for i in idx]
    a = epoch(3, 0)
    assert sorted(a) == list(range(20)) and a != list(range(20))
    assert epoch(3, 2) == a and epoch(4, 0) != a


def test_worker_seeds_and_info():
    loader = D.DataLoader(H.Seeds(), batch_size=None, num_workers=2)
    first, second = list(loader), list(loader)
    ids = {s[0] for s in first}
    assert ids == {0, 1}
    for k in (1, 2, 3):  # random, NumPy and Ember draws differ across workers and epochs
        by_worker = {s[0]: s[k] for s in first}
        assert by_worker[0] != by_worker[1]
        assert [s[k] for s in first] != [s[k] for s in second]
    assert D.get_worker_info() is None


def test_persistent_workers_keep_their_processes():
    loader = D.DataLoader(H.Seeds(), batch_size=None, num_workers=2, persistent_workers=True)
    pids = [{s[4] for s in loader} for _ in range(2)]
    assert pids[0] == pids[1] and len(pids[0]) == 2
    del loader
    deadline = time.monotonic() + 10
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not multiprocessing.active_children()


def test_worker_exception_reaches_the_main_process():
    with pytest.raises(KeyError, match=r"Caught KeyError in DataLoader worker process \d") as info:
        list(D.DataLoader(H.Failing(), batch_size=2, num_workers=2))
    assert "no sample 7" in str(info.value) and "Traceback" in str(info.value)
    assert not multiprocessing.active_children()


def test_killed_worker_is_reported():
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid \d+\) is killed by "
                                           r"signal: SIGKILL"):
        list(D.DataLoader(H.Dying(), batch_size=1, num_workers=2))
    assert time.monotonic() - start < 10
    assert not multiprocessing.active_children()


def test_timeout():
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="DataLoader timed out after 1 seconds"):
        list(D.DataLoader(H.Slow(), batch_size=1, num_workers=1, timeout=1))
    # at the timeout, as PyTorch: the stuck worker is terminated, not waited for
    assert time.monotonic() - start < 3.5
    assert not multiprocessing.active_children()


def iterable(base):
    class Numbers(base):
        def __iter__(self):
            return iter(range(5))
    return Numbers()


@pytest.mark.parametrize("kwargs", [
    {"num_workers": -1}, {"timeout": -1}, {"prefetch_factor": 2},
    {"persistent_workers": True}, {"sampler": [0, 1], "shuffle": True},
    {"batch_sampler": [[0]], "batch_size": 2}, {"batch_size": None, "drop_last": True},
])
def test_bad_arguments_raise_what_pytorch_raises(kwargs):
    with pytest.raises(ValueError) as theirs:
        tud.DataLoader(range(5), **kwargs)
    with pytest.raises(ValueError) as ours:
        D.DataLoader(range(5), **kwargs)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("kwargs", [{"shuffle": True}, {"sampler": [0]}])
def test_iterable_dataset_arguments(kwargs):
    with pytest.raises(ValueError) as theirs:
        tud.DataLoader(iterable(tud.IterableDataset), **kwargs)
    with pytest.raises(ValueError) as ours:
        D.DataLoader(iterable(D.IterableDataset), **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_len_matches_pytorch():
    for kw in ({"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None}):
        assert len(D.DataLoader(range(10), **kw)) == len(tud.DataLoader(range(10), **kw))


def test_progress_bar_knows_the_length():
    tqdm = pytest.importorskip("tqdm")
    loader = D.DataLoader(H.Squares(), batch_size=6)
    with tqdm.tqdm(loader, disable=True) as bar:
        assert bar.total == len(loader) == 4
        assert sum(len(b["i"]) for b in bar) == 20


@pytest.mark.parametrize("in_order", [True, False])
def test_worker_batches_match_the_main_process(in_order):
    """Every kind of tensor comes back from the workers (one shared segment per batch) with
    the values, dtypes and shapes a loader without workers gives."""
    want = list(D.DataLoader(H.Mixed(), batch_size=5))
    got = list(D.DataLoader(H.Mixed(), batch_size=5, num_workers=2, in_order=in_order))
    if not in_order:
        got.sort(key=lambda b: b["n"][0].item())
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g["pair"][1] == w["pair"][1] and g["n"].tolist() == w["n"].tolist()
        for key in ("strided", "empty", "ints", "flag", "half"):
            assert g[key].dtype == w[key].dtype and tuple(g[key].shape) == tuple(w[key].shape)
            assert g[key].to(et.float64).tolist() == w[key].to(et.float64).tolist(), key
        assert g["pair"][0].tolist() == w["pair"][0].tolist()


def test_worker_seeds_are_reproducible_with_a_generator():
    def draws(seed):
        loader = D.DataLoader(H.Seeds(), batch_size=None, num_workers=2,
                              generator=et.Generator().manual_seed(seed))
        return sorted((s[0], s[1], s[2], s[3]) for s in loader)
    assert draws(5) == draws(5)
    assert draws(5) != draws(6)
