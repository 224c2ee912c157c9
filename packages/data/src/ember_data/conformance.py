"""The conformance kit of Ember's ``data`` slot: a pytest plugin, enabled explicitly.

    python -m pytest -p ember_data.conformance [--data-provider=MODULE] [--data-xfail=FILE]

Run from any directory: the plugin adds one aggregate test class, ``TestDataConformance``.
Its tests check what makes an implementation a drop-in ``ember.data``: the names, map-style
and iterable datasets, the samplers' contracts, ``default_collate``'s batch structure, and a
``DataLoader`` with and without worker processes (batches in order, every sample once per
epoch with shuffling, ``get_worker_info`` in workers, a worker's exception raised in the
main process, PyTorch's argument errors).

``--data-provider=MODULE``: the implementation under test (default: ``ember_data``), an
importable module with the names below and ``INTERFACE_VERSION``.
``--data-xfail=FILE``: expected failures (see ``ember_tensor.conformance_kit``).
"""

from __future__ import annotations

import importlib

import pytest

import ember_tensor as et
from ember_tensor.conformance_kit import ConformanceKit

INTERFACE_VERSION = 1

INTERFACE_NAMES = (
    "Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
    "ChainDataset", "Subset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
    "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "DistributedSampler",
    "DataLoader", "default_collate", "default_convert", "get_worker_info",
)

_SPEC = ConformanceKit(
    component="data",
    class_name="TestDataConformance",
    default_provider="ember_data",
    plugin_module=__name__,
)
pytest_addoption = _SPEC.pytest_addoption
pytest_configure = _SPEC.pytest_configure
parse_xfail_file = _SPEC.parse_xfail_file
_KIT = _SPEC.stash_key


class _Squares:
    """A map-style dataset by protocol alone (no base class): sample i is (i, i * i)."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        if not 0 <= i < 10:
            raise IndexError(i)
        return i, float(i * i)


class _WorkerIds:
    """Sample i: the id of the worker that loads it (the provider's ``get_worker_info``)."""

    def __init__(self, provider: str):
        self.provider = provider

    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = importlib.import_module(self.provider).get_worker_info()
        return -1 if info is None else info.id


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

    def test_worker_info(self) -> None:
        ids = [int(b) for b in self.data.DataLoader(_WorkerIds(self.data.__name__), batch_size=None,
                                                     num_workers=2)]
        assert sorted(set(ids)) == [0, 1]
        assert self.data.get_worker_info() is None

    def test_worker_exception(self) -> None:
        with pytest.raises(ValueError, match="sample 2 is broken"):
            list(self.data.DataLoader(_Failing(), batch_size=1, num_workers=2))

    def test_argument_errors(self) -> None:
        with pytest.raises(ValueError, match="num_workers option should be non-negative"):
            self.data.DataLoader(_Squares(), num_workers=-1)
        with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
            self.data.DataLoader(_Squares(), sampler=[0], shuffle=True)
