"""What a DataLoader worker process runs, and ``get_worker_info``."""

from __future__ import annotations

import pickle
import queue
import random
import traceback
from dataclasses import dataclass

import numpy as np

import ember_tensor as et

from . import _transfer
from ._fetch import END, fetch
from .collate import default_collate


@dataclass(frozen=True)
class WorkerInfo:
    """Inside a worker: ``id`` (0..num_workers-1), ``num_workers``, ``seed`` (this worker's,
    this epoch's) and ``dataset`` (the worker's copy)."""

    id: int
    num_workers: int
    seed: int
    dataset: object


_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """This worker's ``WorkerInfo``, or None in the main process."""
    return _info


@dataclass
class WorkerError:
    """An exception raised in a worker, sent to the main process."""

    worker_id: int
    kind: type | None  # the exception's type, when it can be pickled
    type_name: str
    traceback: str

    @classmethod
    def of(cls, worker_id: int, exc: BaseException) -> WorkerError:
        kind = type(exc)
        try:
            pickle.dumps(kind)
        except Exception:  # noqa: BLE001  (a local class: its name is enough)
            kind = None
        return cls(worker_id, kind, type(exc).__qualname__, traceback.format_exc())

    def exception(self) -> Exception:
        """The exception to raise in the main process: the worker's type where it takes a
        message, else RuntimeError; the message holds the worker id and its traceback."""
        text = (f"Caught {self.type_name} in DataLoader worker process {self.worker_id}.\n"
                f"Original {self.traceback}")
        if self.kind is not None and issubclass(self.kind, Exception):
            try:
                return self.kind(text)
            except Exception:  # noqa: BLE001  (a type whose constructor takes other args)
                pass
        return RuntimeError(text)


@dataclass
class IterableEnd:
    """A worker's iterable dataset is exhausted (for this epoch)."""

    worker_id: int


RESET = "reset"  # an index-queue message: restart the iterable dataset (a new epoch)


def seed_worker(seed: int) -> None:
    random.seed(seed)
    et.manual_seed(seed)
    np.random.seed(seed % 2**32)


def worker_loop(is_iterable: bool, dataset, index_queue, result_queue, done_event, collate_fn,
                auto_collation: bool, drop_last: bool, batch_size, seed: int, init_fn,
                worker_id: int, num_workers: int, channel) -> None:
    """Serves (task id, indices) from ``index_queue`` until None or ``done_event``: each
    answer is (task id, batch or WorkerError or IterableEnd); a batch's tensors travel in
    one segment whose descriptor goes over ``channel`` (``_transfer``)."""
    global _info
    et.set_num_threads(1)  # the workers share the cores
    seed_worker(seed)
    _info = WorkerInfo(worker_id, num_workers, seed, dataset)
    init_error = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
    except Exception as exc:  # noqa: BLE001  (reported with the first task)
        init_error = WorkerError.of(worker_id, exc)
    iterator = iter(dataset) if is_iterable else None
    exhausted = False
    while not done_event.is_set():
        try:
            task = index_queue.get(timeout=1.0)
        except queue.Empty:
            continue
        if task is None:
            break
        if task == RESET:
            iterator, exhausted = iter(dataset), False
            continue
        task_id, indices = task
        if init_error is not None:
            result_queue.put((task_id, init_error))
            continue
        if exhausted:
            result_queue.put((task_id, IterableEnd(worker_id)))
            continue
        try:
            samples = fetch(dataset, iterator, indices, auto_collation, batch_size, drop_last)
            if samples is END:
                exhausted = True
                result_queue.put((task_id, IterableEnd(worker_id)))
                continue
            if auto_collation and collate_fn is default_collate:
                batch = _transfer.collate_packed(samples, channel, worker_id)
            else:
                batch = collate_fn(samples)
            if not isinstance(batch, _transfer.Packed):
                batch = _transfer.pack(batch, channel, worker_id)
        except Exception as exc:  # noqa: BLE001  (sent to the main process)
            batch = WorkerError.of(worker_id, exc)
        result_queue.put((task_id, batch))
        del batch
