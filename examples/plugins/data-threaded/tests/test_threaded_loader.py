"""ember_data_threaded's DataLoader: the same batches as PyTorch's DataLoader (and as
ember-data's) for the same sampling, its worker threads, and its errors."""

from __future__ import annotations

import threading

import ember_data_threaded as data
import numpy as np
import pytest

import ember_data
import ember_tensor as et

torch = pytest.importorskip("torch")
tdata = torch.utils.data

_rng = np.random.default_rng(0)
FEATURES = _rng.standard_normal((23, 3))
LABELS = _rng.integers(0, 4, 23)


class Table:
    """A map-style dataset by protocol alone: (features row, label) as NumPy values."""

    def __len__(self) -> int:
        return len(LABELS)

    def __getitem__(self, i):
        return FEATURES[i], int(LABELS[i])


def _as_lists(batches) -> list:
    out = []
    for batch in batches:
        if isinstance(batch, (list, tuple)):
            out.append([np.asarray(part).tolist() for part in batch])
        else:
            out.append(np.asarray(batch).tolist())
    return out


@pytest.mark.parametrize("workers", [0, 1, 3])
@pytest.mark.parametrize(("batch_size", "drop_last"), [(4, False), (4, True), (1, False),
                                                       (None, False)])
def test_sequential_batches_match_pytorch(workers: int, batch_size, drop_last: bool) -> None:
    ours = data.DataLoader(Table(), batch_size=batch_size, drop_last=drop_last,
                           num_workers=workers)
    theirs = tdata.DataLoader(Table(), batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    assert _as_lists(ours) == _as_lists(theirs)


@pytest.mark.parametrize("workers", [0, 2])
def test_same_sampler_order_matches_pytorch(workers: int) -> None:
    order = np.random.default_rng(1).permutation(len(LABELS)).tolist()
    ours = data.DataLoader(Table(), batch_size=5, sampler=order, num_workers=workers)
    theirs = tdata.DataLoader(Table(), batch_size=5, sampler=order)
    assert _as_lists(ours) == _as_lists(theirs)
    batches = [order[i:i + 4] for i in range(0, len(order), 4)]
    ours = data.DataLoader(Table(), batch_sampler=batches, num_workers=workers)
    theirs = tdata.DataLoader(Table(), batch_sampler=batches)
    assert _as_lists(ours) == _as_lists(theirs)


def test_custom_collate_and_getitems() -> None:
    class Batched(Table):
        calls = 0

        def __getitems__(self, indices):
            type(self).calls += 1
            return [self[i] for i in indices]

    def collate(samples):
        return [label for _, label in samples]

    ours = data.DataLoader(Batched(), batch_size=6, collate_fn=collate, num_workers=2)
    theirs = tdata.DataLoader(Batched(), batch_size=6, collate_fn=collate)
    assert list(ours) == list(theirs) and Batched.calls == 8


@pytest.mark.parametrize("workers", [0, 2])
def test_shuffle_matches_ember_data_for_the_same_seed(workers: int) -> None:
    """A drop-in for ember.data: the same seed gives the same epochs as ember-data's
    loader (the same draws from the same generator), with or without workers."""
    runs = []
    for module in (data, ember_data):
        et.manual_seed(7)
        loader = module.DataLoader(Table(), batch_size=4, shuffle=True, num_workers=0)
        runs.append([_as_lists(loader), _as_lists(loader)])  # two epochs
    assert runs[0] == runs[1]
    et.manual_seed(7)
    threaded = data.DataLoader(Table(), batch_size=4, shuffle=True, num_workers=workers)
    assert [_as_lists(threaded), _as_lists(threaded)] == runs[0]
    gen = et.Generator()
    gen.manual_seed(3)
    first = _as_lists(data.DataLoader(Table(), batch_size=4, shuffle=True, generator=gen))
    gen.manual_seed(3)
    again = _as_lists(data.DataLoader(Table(), batch_size=4, shuffle=True, generator=gen,
                                      num_workers=workers))
    assert first == again


class _ShardsMixin:
    """Integers 0..n-1, sharded over the loader's workers by ``get_worker_info``."""

    def __init__(self, n: int, worker_info) -> None:
        self.n, self.worker_info = n, worker_info

    def __iter__(self):
        info = self.worker_info()
        first, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(first, self.n, step))


class OurShards(_ShardsMixin, data.IterableDataset):
    pass


class TorchShards(_ShardsMixin, tdata.IterableDataset):
    pass


# PyTorch's workers are processes: it warns about more of them than cores, and Python 3.12+
# about forking a process that runs threads
@pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_iterable_dataset_sharded_like_pytorch() -> None:
    for workers, batch_size, drop_last in ((0, 3, False), (3, 2, False), (3, 2, True),
                                           (2, None, False)):
        ours = data.DataLoader(OurShards(11, data.get_worker_info), batch_size=batch_size,
                               drop_last=drop_last, num_workers=workers)
        theirs = tdata.DataLoader(TorchShards(11, tdata.get_worker_info),
                                  batch_size=batch_size, drop_last=drop_last,
                                  num_workers=workers)
        assert _as_lists(ours) == _as_lists(theirs), (workers, batch_size, drop_last)


def test_workers_are_threads_that_run_at_once() -> None:
    """Two samples are being loaded at the same moment (a barrier that needs two parties),
    in threads of this process that see their own WorkerInfo."""
    barrier = threading.Barrier(2, timeout=30)
    seen = {}

    class Meeting(Table):
        def __len__(self) -> int:
            return 22  # an even count: every sample meets another

        def __getitem__(self, i):
            barrier.wait()  # breaks (an error) unless another worker loads at the same time
            info = data.get_worker_info()
            seen[i] = (info.id, info.num_workers, threading.current_thread().name)
            return super().__getitem__(i)

    batches = list(data.DataLoader(Meeting(), batch_size=None, num_workers=2))
    assert len(batches) == 22
    assert {wid for wid, _, _ in seen.values()} == {0, 1}
    assert all(n == 2 and name.startswith("ember-data-threaded-worker-")
               for _, n, name in seen.values())
    assert data.get_worker_info() is None


def test_in_order_false_yields_every_batch() -> None:
    loader = data.DataLoader(Table(), batch_size=3, num_workers=3, in_order=False)
    got = sorted(tuple(label) for _, label in _as_lists(loader))
    want = sorted(tuple(label) for _, label in _as_lists(tdata.DataLoader(Table(),
                                                                          batch_size=3)))
    assert got == want


def test_persistent_workers_serve_every_epoch() -> None:
    starts = []
    loader = data.DataLoader(OurShards(9, data.get_worker_info), batch_size=2, num_workers=2,
                             persistent_workers=True, worker_init_fn=starts.append)
    first = _as_lists(loader)
    partial = iter(loader)
    next(partial)  # an epoch abandoned early: its leftovers must not leak into the next
    del partial
    second = _as_lists(loader)
    assert first == second == _as_lists(data.DataLoader(OurShards(9, data.get_worker_info),
                                                        batch_size=2, num_workers=2))
    assert sorted(starts) == [0, 1]  # one start per worker for all the epochs
    pool = loader._pool
    del loader
    for thread in pool.threads:
        thread.join(10)
        assert not thread.is_alive()


def test_threads_stop_after_an_epoch() -> None:
    it = iter(data.DataLoader(Table(), batch_size=5, num_workers=2))
    assert len(it) == 5
    assert len(list(it)) == 5
    for thread in it.pool.threads:
        thread.join(10)
        assert not thread.is_alive()


def test_worker_errors_are_raised_in_the_loop_and_iteration_goes_on() -> None:
    class Flaky(Table):
        def __getitem__(self, i):
            if i == 5:
                raise KeyError(f"no sample {i}")
            return super().__getitem__(i)

    it = iter(data.DataLoader(Flaky(), batch_size=None, num_workers=2))
    got = [next(it) for _ in range(5)]
    with pytest.raises(KeyError, match="no sample 5") as info:
        next(it)
    assert any("worker thread 1" in note for note in getattr(info.value, "__notes__", [
        "worker thread 1"]))
    rest = list(it)
    assert len(got) + len(rest) == len(LABELS) - 1

    def failing_init(worker_id):
        raise OSError(f"worker {worker_id} cannot start")

    with pytest.raises(OSError, match="cannot start"):
        list(data.DataLoader(Table(), num_workers=2, worker_init_fn=failing_init))


def test_timeout() -> None:
    release = threading.Event()

    class Stuck(Table):
        def __getitem__(self, i):
            release.wait(30)
            return super().__getitem__(i)

    loader = data.DataLoader(Stuck(), batch_size=None, num_workers=1, timeout=0.2)
    try:
        with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0\.2 seconds"):
            next(iter(loader))
    finally:
        release.set()


BAD_ARGUMENTS = [
    ({"num_workers": -1}, "num_workers option should be non-negative"),
    ({"timeout": -1}, "timeout option should be non-negative"),
    ({"prefetch_factor": 2}, "prefetch_factor option could only be specified"),
    ({"persistent_workers": True}, "persistent_workers option needs num_workers > 0"),
    ({"sampler": [0], "shuffle": True}, "sampler option is mutually exclusive with shuffle"),
    ({"batch_sampler": [[0]], "batch_size": 2}, "batch_sampler option is mutually exclusive"),
    ({"batch_size": None, "drop_last": True}, "batch_size=None option disables auto-batching"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD_ARGUMENTS,
                         ids=[m.split()[0] for _, m in BAD_ARGUMENTS])
def test_argument_errors_match_pytorch(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as ours:
        data.DataLoader(Table(), **kwargs)
    with pytest.raises(ValueError) as theirs:
        tdata.DataLoader(Table(), **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_iterable_dataset_argument_errors_match_pytorch() -> None:
    for kwargs in ({"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}):
        with pytest.raises(ValueError) as ours:
            data.DataLoader(OurShards(3, data.get_worker_info), **kwargs)
        with pytest.raises(ValueError) as theirs:
            tdata.DataLoader(TorchShards(3, tdata.get_worker_info), **kwargs)
        assert str(ours.value) == str(theirs.value)


def test_worker_info_is_read_only() -> None:
    info = data.WorkerInfo(id=0, num_workers=1, seed=5, dataset=None)
    with pytest.raises(RuntimeError, match="Cannot assign attributes"):
        info.id = 3
