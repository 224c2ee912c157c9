"""ember-data-threaded: a DataLoader that loads batches on a pool of background threads,
and a drop-in provider of Ember's ``data`` slot (``ember.data``, ``ember.utils.data``;
choose it with ``ember.use(data="threaded")`` or ``EMBER_DATA=threaded``).

``DataLoader`` and ``get_worker_info``/``WorkerInfo`` are this package's own; the datasets,
samplers and collate functions are ember-data's, re-exported unchanged (they hold no
loading policy). Worker threads share the process with the training loop: nothing is
pickled or copied, and loading overlaps with compute wherever the GIL is released.

>>> import ember_data_threaded as data
>>> import ember_tensor as et
>>> ds = data.TensorDataset(et.arange(6), et.arange(6) * 10)
>>> [b[1].tolist() for b in data.DataLoader(ds, batch_size=4, num_workers=2)]
[[0, 10, 20, 30], [40, 50]]
"""

from __future__ import annotations

from ember_data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    Dataset,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    random_split,
)

from . import datasets
from .dataloader import DataLoader
from .worker import WorkerInfo, get_worker_info

__version__ = "0.1.0"
INTERFACE_VERSION = 1  # the version of Ember's data interface this package implements

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
    "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler",
    "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
    "WorkerInfo", "datasets", "default_collate", "default_convert", "get_worker_info",
    "random_split",
]
