"""ember-data: datasets, samplers and a DataLoader with worker processes
(``ember.data``, also ``ember.utils.data``), with PyTorch's names, arguments and defaults.

A dataset is anything with ``__getitem__`` and ``__len__`` (map-style) or ``__iter__``
(``IterableDataset``); ``DataLoader`` shuffles, batches (``default_collate``) and loads in
parallel worker processes (``num_workers``), whose batches come back through shared memory
(ember-mp).
"""

from __future__ import annotations

from . import datasets
from ._worker import WorkerInfo, get_worker_info
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__version__ = "0.1.0"
INTERFACE_VERSION = 1

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
    "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler",
    "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
    "WorkerInfo", "datasets", "default_collate", "default_convert", "get_worker_info",
    "random_split",
]
