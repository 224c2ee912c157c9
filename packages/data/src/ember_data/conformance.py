"""The conformance kit of Ember's ``data`` slot: a pytest plugin, enabled explicitly.

    python -m pytest -p ember_data.conformance [--data-provider=MODULE] [--data-xfail=FILE]

Run from any directory: the plugin adds one aggregate test class, ``TestDataConformance``.
Its tests check what makes an implementation a drop-in ``ember.data``: the names, map-style
and iterable datasets, the samplers' contracts, ``default_collate``'s batch structure, and a
``DataLoader`` with and without workers (batches in order, ``drop_last``, ``collate_fn``,
``batch_sampler``, ``sampler``, ``batch_size=None``, every sample once per epoch with
shuffling, shuffles that follow ``generator``, ``get_worker_info`` and ``worker_init_fn`` in
workers, persistent workers over several epochs, a
worker's exception raised in the main process, PyTorch's argument errors).

``--data-provider=MODULE``: the implementation under test (default: ``ember_data``), an
importable module with the names below and ``INTERFACE_VERSION``.
``--data-xfail=FILE``: expected failures (see ``ember_tensor.conformance_kit``).
"""

from __future__ import annotations

import importlib

import pytest

import ember_tensor as et
from ember_tensor.conformance_kit import define_kit

INTERFACE_VERSION = 1

INTERFACE_NAMES = (
    "Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
    "ChainDataset", "Subset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
    "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "DistributedSampler",
    "DataLoader", "default_collate", "default_convert", "get_worker_info",
)

# the pytest plugin: its hooks come from ember_tensor.conformance_kit
_KIT = define_kit(globals(), component="data", class_name="TestDataConformance",
                  default_provider="ember_data")


class _Squares:
    """A map-style dataset by protocol alone (no base class): sample i is (i, i * i)."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        if not 0 <= i < 10:
            raise IndexError(i)
        return i, float(i * i)


class _WorkerIds:
    """Sample i: (the id of the worker that loads it, the number of workers), from the
    provider's ``get_worker_info``, and what ``_init_worker`` recorded for that worker."""

    def __init__(self, provider: str):
        self.provider = provider

    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = importlib.import_module(self.provider).get_worker_info()
        if info is None:
            return -1, 0, -1
        return info.id, info.num_workers, _INITIALIZED.get(_worker_key(), -1)


# worker_init_fn's record, keyed by process and thread (workers may be either)
_INITIALIZED: dict[tuple[int, int], int] = {}


def _worker_key() -> tuple[int, int]:
    import os
    import threading

    return os.getpid(), threading.get_ident()


def _init_worker(worker_id: int) -> None:
    _INITIALIZED[_worker_key()] = worker_id


def _pairs(batch):
    """A collate_fn: the batch as a list of (index, square) pairs of Python numbers."""
    return [(int(i), float(v)) for i, v in batch]


class _Failing:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise ValueError("sample 2 is broken")
        return i


class TestDataConformance:
    """What a ``data`` provider must do. ``self.data`` is the provider under test."""

    @pytest.fixture(autouse=True)
    def _provider(self, request: pytest.FixtureRequest):
        self.data = request.config.stash[_KIT].provider

    @pytest.mark.parametrize("name", INTERFACE_NAMES)
    def test_interface_name(self, name: str) -> None:
        assert hasattr(self.data, name), f"the provider has no {name!r}"

    def test_interface_version(self) -> None:
        assert self.data.INTERFACE_VERSION == INTERFACE_VERSION

    def test_collate_structure(self) -> None:
        batch = self.data.default_collate([{"x": et.ones(2), "n": 1, "s": "a"},
                                           {"x": et.zeros(2), "n": 2, "s": "b"}])
        assert tuple(batch["x"].shape) == (2, 2) and batch["n"].dtype == et.int64
        assert list(batch["s"]) == ["a", "b"]

    def test_samplers(self) -> None:
        d = self.data
        assert list(d.SequentialSampler(range(4))) == [0, 1, 2, 3]
        assert sorted(d.RandomSampler(range(6))) == list(range(6))
        assert list(d.BatchSampler(range(5), 2, False)) == [[0, 1], [2, 3], [4]]
        assert list(d.BatchSampler(range(5), 2, True)) == [[0, 1], [2, 3]]
        shares = [list(d.DistributedSampler(range(7), 2, r, shuffle=False)) for r in (0, 1)]
        assert shares == [[0, 2, 4, 6], [1, 3, 5, 0]]

    @pytest.mark.parametrize("workers", [0, 2])
    def test_loader_batches(self, workers: int) -> None:
        loader = self.data.DataLoader(_Squares(), batch_size=4, num_workers=workers)
        got = [(i.tolist(), sq.tolist()) for i, sq in loader]
        assert len(loader) == 3
        assert got == [([0, 1, 2, 3], [0.0, 1.0, 4.0, 9.0]), ([4, 5, 6, 7], [16.0, 25.0, 36.0,
                       49.0]), ([8, 9], [64.0, 81.0])]
        shuffled = [int(v) for i, _ in self.data.DataLoader(_Squares(), batch_size=3,
                                                           shuffle=True, num_workers=workers)
                    for v in i.tolist()]
        assert sorted(shuffled) == list(range(10))

    def test_worker_info_and_init_fn(self) -> None:
        loader = self.data.DataLoader(_WorkerIds(self.data.__name__), batch_size=None,
                                      num_workers=2, worker_init_fn=_init_worker)
        samples = [tuple(int(v) for v in s) for s in loader]
        assert len(samples) == 6
        assert all(n == 2 and wid in (0, 1) for wid, n, _ in samples), samples
        # worker_init_fn ran in the worker that loaded the sample, with that worker's id
        assert all(init == wid for wid, _, init in samples), samples
        assert self.data.get_worker_info() is None

    @pytest.mark.parametrize("workers", [0, 2])
    def test_loader_options(self, workers: int) -> None:
        d = self.data
        dropped = d.DataLoader(_Squares(), batch_size=4, drop_last=True, num_workers=workers)
        assert len(dropped) == 2 and [b[0].tolist() for b in dropped] == [[0, 1, 2, 3],
                                                                          [4, 5, 6, 7]]
        custom = list(d.DataLoader(_Squares(), batch_size=3, collate_fn=_pairs,
                                   num_workers=workers))
        assert custom[0] == [(0, 0.0), (1, 1.0), (2, 4.0)] and custom[-1] == [(9, 81.0)]
        by_batches = d.DataLoader(_Squares(), batch_sampler=[[9, 0], [3], [5, 6, 7]],
                                  num_workers=workers)
        assert [b[0].tolist() for b in by_batches] == [[9, 0], [3], [5, 6, 7]]
        ordered = d.DataLoader(_Squares(), sampler=[7, 2, 2], batch_size=2, num_workers=workers)
        assert [b[0].tolist() for b in ordered] == [[7, 2], [2]]
        single = [tuple(s) for s in d.DataLoader(_Squares(), batch_size=None,
                                                 num_workers=workers)]
        assert [int(i) for i, _ in single] == list(range(10))

    def test_shuffle_follows_the_generator(self) -> None:
        def order(seed: int) -> list[int]:
            loader = self.data.DataLoader(_Squares(), batch_size=5, shuffle=True,
                                          generator=et.Generator().manual_seed(seed))
            return [int(v) for b in loader for v in b[0].tolist()]

        assert order(3) == order(3)
        assert sorted(order(3)) == list(range(10)) and order(3) != order(4)

    def test_persistent_workers_serve_every_epoch(self) -> None:
        loader = self.data.DataLoader(_Squares(), batch_size=3, shuffle=True, num_workers=2,
                                      persistent_workers=True)
        for _ in range(3):
            assert sorted(int(v) for b in loader for v in b[0].tolist()) == list(range(10))

    def test_worker_exception(self) -> None:
        with pytest.raises(ValueError, match="sample 2 is broken"):
            list(self.data.DataLoader(_Failing(), batch_size=1, num_workers=2))

    def test_argument_errors(self) -> None:
        with pytest.raises(ValueError, match="num_workers option should be non-negative"):
            self.data.DataLoader(_Squares(), num_workers=-1)
        with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
            self.data.DataLoader(_Squares(), sampler=[0], shuffle=True)
