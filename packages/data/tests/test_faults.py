"""DataLoader faults: each reported with its message, and afterwards no worker process and
no shared-memory segment of a worker is left."""

from __future__ import annotations

import gc
import multiprocessing
import os
import time

import pytest

import data_helpers as H
import ember_data as D


def leftovers(pids) -> tuple[list, list]:
    """(worker processes still alive, /dev/shm entries named after a worker's pid)."""
    deadline = time.monotonic() + 10
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    names = [n for n in os.listdir("/dev/shm") if any(f"_{pid}_" in n for pid in pids)]
    return multiprocessing.active_children(), names


def run_to_error(dataset, match: str) -> None:
    loader = D.DataLoader(dataset, batch_size=1, num_workers=2)
    it = iter(loader)
    pids = [w.pid for w in it.workers]
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=match):
        for _ in it:
            pass
    assert time.monotonic() - start < 10
    assert leftovers(pids) == ([], [])


def test_worker_exit_code_is_reported():
    run_to_error(H.Exiting(), r"DataLoader worker \(pid \d+\) exited unexpectedly with exit "
                              r"code 7\.")


def test_sigbus_names_shared_memory():
    run_to_error(H.Bus(), r"DataLoader worker \(pid \d+\) is killed by signal: SIGBUS\. It is "
                          r"possible that dataloader's workers are out of shared memory")


def test_deleting_a_half_read_iterator_joins_the_workers():
    it = iter(D.DataLoader(H.Squares(), batch_size=2, num_workers=2))
    pids = [w.pid for w in it.workers]
    next(it)
    del it
    gc.collect()
    assert leftovers(pids) == ([], [])


def test_iterable_dataset_sharded_across_workers():
    got = sorted(i for b in D.DataLoader(H.Shards(), batch_size=4, num_workers=2)
                 for i in b.tolist())
    assert got == list(range(30))


def test_worker_init_fn_runs_in_each_worker():
    seen = [s for b in D.DataLoader(H.InitSeen(), batch_size=None, num_workers=2,
                                    worker_init_fn=H.record_init) for s in b]
    assert set(seen) == {0, 1}
