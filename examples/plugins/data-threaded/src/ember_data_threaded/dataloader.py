"""``DataLoader`` with worker *threads*: batches are fetched and collated by a pool of
background threads that keep ``prefetch_factor * num_workers`` batches in flight, and come
back to the iterating thread in sampler order.

Threads share the process: no pickling, no shared memory, no start-up cost, and the
dataset object itself is what every worker reads (it must tolerate concurrent
``__getitem__`` calls). Loading runs in parallel wherever the GIL is released: file and
network I/O, NumPy, and the tensor core's kernels.
"""

from __future__ import annotations

import itertools
import queue
import threading

import ember_tensor as et
from ember_data import (
    BatchSampler,
    IterableDataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    default_collate,
    default_convert,
)

from .worker import WorkerInfo, _set_worker_info

__all__ = ["DataLoader"]

_OK, _END, _FAILED = "ok", "end", "failed"  # what a worker reports for a task
_END_OF_DATA = object()  # an iterable dataset has no (full) batch left


class _InfiniteConstantSampler(Sampler):
    """The sampler of an iterable dataset: None forever (the dataset yields the samples)."""

    def __iter__(self):
        return itertools.repeat(None)


def _fetch(dataset, iterator, index, batched: bool, batch_size, drop_last: bool):
    """The samples of one task: a list (``batched``) or one sample; ``_END_OF_DATA`` when an
    iterable dataset's ``iterator`` has no (full) batch left."""
    if iterator is not None:
        if not batched:
            return next(iterator, _END_OF_DATA)
        items = list(itertools.islice(iterator, batch_size))
        if not items or (drop_last and len(items) < batch_size):
            return _END_OF_DATA
        return items
    if batched:
        getitems = getattr(dataset, "__getitems__", None)
        return getitems(index) if getitems is not None else [dataset[i] for i in index]
    return dataset[index]


class DataLoader:
    """Iterates over ``dataset`` in batches, loading them on background threads.

    PyTorch's arguments and defaults. ``batch_size`` samples (None: no batching; each sample
    goes through ``default_convert``) drawn by ``sampler`` (default: ``SequentialSampler``,
    or ``RandomSampler`` with ``shuffle=True``), or whole index lists by ``batch_sampler``,
    collated by ``collate_fn`` (default ``default_collate``). ``num_workers > 0`` loads on
    that many worker threads, each with at most ``prefetch_factor`` (default 2) batches in
    flight, handed out round robin; ``in_order=False`` yields batches as they complete.
    ``persistent_workers`` keeps the threads across epochs. ``timeout`` (seconds, 0 = none)
    bounds the wait for one batch. ``worker_init_fn(worker_id)`` runs first in each worker
    thread. ``generator`` seeds the random sampler and the workers' base seed.
    ``pin_memory``, ``pin_memory_device`` and ``multiprocessing_context`` are accepted for
    compatibility and have no effect (there are no worker processes).
    """

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if prefetch_factor is not None and prefetch_factor <= 0:
            raise ValueError(f"prefetch_factor option should be a positive integer, got "
                             f"{prefetch_factor}")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None and num_workers == 0:
            raise ValueError("multiprocessing_context can only be used with multi-process "
                             f"loading (num_workers > 0), but got num_workers={num_workers}")
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            if shuffle not in (False, None):
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            if sampler is not None and shuffle:
                raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor if prefetch_factor is not None else (
            2 if num_workers > 0 else None)
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if batch_sampler is not None else default_convert)
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._pool: _Pool | None = None  # the persistent workers, once started
        self._epoch = 0

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._is_iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)

    def _base_seed(self) -> int:
        """A fresh seed for the workers, drawn (before the sampler draws) by every iterator
        without workers and by every start of workers, as Ember's own loader does."""
        return int(et.randint(0, 2**62, (), generator=self.generator).item())

    def __iter__(self):
        self._epoch += 1
        if self.num_workers == 0:
            self._base_seed()  # drawn all the same: the sampler sees the same stream
            return _SerialIterator(self)
        if not self.persistent_workers:
            pool = _Pool(self, self._base_seed())
            return _ThreadedIterator(self, pool, self._epoch, owns_pool=True)
        if self._pool is None or not self._pool.alive:
            self._pool = _Pool(self, self._base_seed())  # persistent: one seed for all epochs
        return _ThreadedIterator(self, self._pool, self._epoch, owns_pool=False)

    def __del__(self) -> None:
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown()


class _SerialIterator:
    """``num_workers=0``: every batch loaded in the iterating thread."""

    def __init__(self, loader: DataLoader) -> None:
        self.loader = loader
        self.indices = iter(loader._index_sampler)
        self.data = iter(loader.dataset) if loader._is_iterable else None

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self.loader)

    def __next__(self):
        loader = self.loader
        index = None if self.data is not None else next(self.indices)
        samples = _fetch(loader.dataset, self.data, index, loader._auto_collation,
                         loader.batch_size, loader.drop_last)
        if samples is _END_OF_DATA:
            raise StopIteration
        return loader.collate_fn(samples)


def _worker_loop(info: WorkerInfo, tasks: queue.SimpleQueue, results: queue.Queue, dataset,
                 is_iterable: bool, batched: bool, batch_size, drop_last: bool, collate_fn,
                 init_fn) -> None:
    """One worker thread: runs tasks ``(epoch, seq, index)`` until it gets None, and reports
    ``(epoch, seq, worker id, status, value)`` for each."""
    _set_worker_info(info)
    init_error = None
    if init_fn is not None:
        try:
            init_fn(info.id)
        except BaseException as exc:  # noqa: BLE001 - reported for every task instead
            init_error = exc
    iterator, iterator_epoch, exhausted = None, None, False
    while True:
        task = tasks.get()
        if task is None:
            return
        epoch, seq, index = task
        if init_error is not None:
            results.put((epoch, seq, info.id, _FAILED, init_error))
            continue
        try:
            if is_iterable:
                if iterator_epoch != epoch:  # a new epoch: a new pass over the dataset
                    iterator, iterator_epoch, exhausted = iter(dataset), epoch, False
                samples = _END_OF_DATA if exhausted else _fetch(
                    dataset, iterator, None, batched, batch_size, drop_last)
                if samples is _END_OF_DATA:
                    exhausted = True
                    results.put((epoch, seq, info.id, _END, None))
                    continue
            else:
                samples = _fetch(dataset, None, index, batched, batch_size, drop_last)
            batch = collate_fn(samples)
        except BaseException as exc:  # noqa: BLE001 - raised again in the iterating thread
            results.put((epoch, seq, info.id, _FAILED, exc))
            continue
        results.put((epoch, seq, info.id, _OK, batch))
        del samples, batch


class _Pool:
    """``num_workers`` daemon threads, each with its own task queue, one result queue."""

    def __init__(self, loader: DataLoader, base_seed: int) -> None:
        n = loader.num_workers
        self.results: queue.Queue = queue.Queue()
        self.tasks = [queue.SimpleQueue() for _ in range(n)]
        self.alive = True
        self.threads = []
        for wid in range(n):
            info = WorkerInfo(id=wid, num_workers=n, seed=base_seed + wid,
                              dataset=loader.dataset)
            thread = threading.Thread(
                target=_worker_loop, name=f"ember-data-threaded-worker-{wid}", daemon=True,
                args=(info, self.tasks[wid], self.results, loader.dataset, loader._is_iterable,
                      loader._auto_collation, loader.batch_size, loader.drop_last,
                      loader.collate_fn, loader.worker_init_fn))
            thread.start()
            self.threads.append(thread)

    def shutdown(self, wait: float = 0.0) -> None:
        """Stops the threads once their current task is done (waits up to ``wait``
        seconds for them)."""
        if not self.alive:
            return
        self.alive = False
        for tasks in self.tasks:
            tasks.put(None)
        if wait:
            for thread in self.threads:
                if thread is not threading.current_thread():
                    thread.join(wait)


class _ThreadedIterator:
    """One epoch over the loader with a pool of worker threads."""

    def __init__(self, loader: DataLoader, pool: _Pool, epoch: int, owns_pool: bool) -> None:
        self.loader = loader
        self.pool = pool
        self.epoch = epoch
        self.owns_pool = owns_pool
        self.indices = iter(loader._index_sampler) if not loader._is_iterable else None
        self.active = [True] * loader.num_workers  # iterable datasets: not yet exhausted
        self.next_worker = 0
        self.sent = 0  # tasks handed out
        self.next_seq = 0  # in order: the task whose batch comes next
        self.pending: set[int] = set()  # tasks handed out, not yet reported
        self.ready: dict[int, tuple] = {}  # reported, not yet yielded
        self.sampler_done = False
        self.finished = False
        for _ in range(loader.prefetch_factor * loader.num_workers):
            if not self._send():
                break

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self.loader)

    def _send(self) -> bool:
        """Hands the next task to the next active worker (round robin); False when there is
        nothing left to hand out."""
        if self.sampler_done or not any(self.active):
            return False
        index = None
        if self.indices is not None:
            try:
                index = next(self.indices)
            except StopIteration:
                self.sampler_done = True
                return False
        n = len(self.active)
        while not self.active[self.next_worker]:
            self.next_worker = (self.next_worker + 1) % n
        worker = self.next_worker
        self.next_worker = (worker + 1) % n
        self.pool.tasks[worker].put((self.epoch, self.sent, index))
        self.pending.add(self.sent)
        self.sent += 1
        return True

    def _receive(self) -> None:
        """Waits for one report of this epoch's tasks and files it."""
        timeout = self.loader.timeout
        while True:
            try:
                epoch, seq, worker, status, value = self.pool.results.get(
                    timeout=timeout if timeout > 0 else None)
            except queue.Empty:
                raise RuntimeError(f"DataLoader timed out after {timeout} seconds") from None
            if epoch != self.epoch:
                continue  # left over from an epoch abandoned early (persistent workers)
            self.pending.discard(seq)
            if status == _END:
                self.active[worker] = False
            self.ready[seq] = (worker, status, value)
            return

    def _next_report(self) -> tuple | None:
        """The next report to act on: the next task's in order, any finished one
        otherwise; None when every task has been reported and used."""
        while True:
            if self.loader.in_order:
                if self.next_seq in self.ready:
                    report = self.ready.pop(self.next_seq)
                    self.next_seq += 1
                    return report
                if self.next_seq not in self.pending:
                    return None
            else:
                if self.ready:
                    return self.ready.pop(next(iter(self.ready)))
                if not self.pending:
                    return None
            self._receive()

    def __next__(self):
        while not self.finished:
            report = self._next_report()
            if report is None:
                self._finish()
                break
            worker, status, value = report
            self._send()  # keep the workers busy: one task out for each one back
            if status == _END:
                continue
            if status == _FAILED:
                if hasattr(value, "add_note"):
                    value.add_note(f"(raised in DataLoader worker thread {worker})")
                raise value
            return value
        raise StopIteration

    def _finish(self) -> None:
        self.finished = True
        if self.owns_pool:
            self.pool.shutdown(wait=1.0)

    def __del__(self) -> None:
        if getattr(self, "owns_pool", False) and not self.finished:
            self.pool.shutdown()
