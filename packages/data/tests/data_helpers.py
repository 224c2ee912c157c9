"""Datasets the DataLoader tests use in worker processes (importable by name)."""

from __future__ import annotations

import os
import random
import signal
import time

import numpy as np

import ember_data as D
import ember_tensor as et


class Squares(D.Dataset):
    def __len__(self):
        return 20

    def __getitem__(self, i):
        return {"i": i, "sq": et.tensor([float(i * i)])}


class Seeds(D.Dataset):
    """Each sample: the worker id and draws of Python's, NumPy's and Ember's generators."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = D.get_worker_info()
        return (info.id, random.random(), float(np.random.random()), et.rand(1).item(), os.getpid())


class Failing(D.Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        if i == 7:
            raise KeyError(f"no sample {i}")
        return i


class Dying(D.Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        if i == 5:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


class Slow(D.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(5)
        return i


class Mixed(D.Dataset):
    """Samples of many kinds: every dtype, non-contiguous and empty tensors, nesting."""

    def __len__(self):
        return 12

    def __getitem__(self, i):
        base = et.arange(24.0).reshape(4, 6) + i
        return {
            "strided": base[:, ::2],
            "empty": et.zeros(0, 3),
            "ints": et.tensor([i, -i], dtype=et.int16),
            "flag": et.tensor(i % 2 == 0),
            "half": et.full((2,), i / 4, dtype=et.bfloat16),
            "pair": (et.ones(1, dtype=et.uint8) * i, str(i)),
            "n": i,
        }


class Exiting(D.Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        if i == 3:
            os._exit(7)
        return i


class Bus(D.Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        if i == 3:
            os.kill(os.getpid(), signal.SIGBUS)
        return i


class Shards(D.IterableDataset):
    """0..29, each worker taking every num_workers-th item."""

    def __iter__(self):
        info = D.get_worker_info()
        start, step = (info.id, info.num_workers) if info else (0, 1)
        return iter(range(start, 30, step))


def record_init(worker_id):
    D.get_worker_info().dataset.inits.append(worker_id)


class InitSeen(D.Dataset):
    def __init__(self):
        self.inits = []

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return list(self.inits)
