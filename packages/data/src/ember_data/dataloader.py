"""``DataLoader``: batches of a dataset, in the main process or from worker processes, with
PyTorch's arguments, defaults and errors."""

from __future__ import annotations

import functools
import itertools
import queue
import signal
import time
import warnings
import weakref

import ember_tensor as et

from . import _pin, _transfer, _worker
from ._fetch import END, fetch
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

# how often the main process checks its workers while it waits for a batch
_POLL_SECONDS = 1.0


class _InfiniteConstant:
    """The sampler of an iterable dataset: None forever (the workers draw the samples)."""

    def __iter__(self):
        return itertools.repeat(None)


class DataLoader:
    """Iterates over ``dataset`` in batches.

    ``batch_size`` samples (None: no batching, samples one by one through
    ``default_convert``) drawn by ``sampler`` (default: sequential, or random with
    ``shuffle=True``), or whole index lists by ``batch_sampler``, collated by ``collate_fn``
    (default ``default_collate``). ``num_workers > 0`` loads in that many worker processes
    (``multiprocessing_context``: a start method name or context), each keeping at most
    ``prefetch_factor`` (default 2) batches in flight; their batches arrive through shared
    memory. ``persistent_workers`` keeps the workers across epochs. ``timeout`` (seconds,
    0 = none) bounds the wait for a worker's batch. ``in_order=False`` yields batches as they
    come. ``generator`` seeds the random sampler and the workers' base seed.

    ``pin_memory=True`` with CUDA available: a background thread copies every tensor of each
    batch into pinned host memory (``_pin``) while the previous batch is in use, so that
    ``x.to("cuda", non_blocking=True)`` overlaps the copy with compute; without CUDA it warns
    and loads as usual. ``pin_memory_device`` is deprecated in PyTorch and ignored likewise
    (with a warning): the current accelerator is used.
    """

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            if shuffle not in (None, False):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
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
                sampler = _InfiniteConstant()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        if pin_memory and pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used "
                          f"as the device,ignore pin_memory_device='{pin_memory_device}'.",
                          stacklevel=2)
        if pin_memory and not _pin.accelerator_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=2)
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.num_workers, self.prefetch_factor = num_workers, prefetch_factor
        self.pin_memory, self.pin_memory_device = pin_memory, pin_memory_device
        self.timeout, self.worker_init_fn, self.generator = timeout, worker_init_fn, generator
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers, self.in_order = persistent_workers, in_order
        self.collate_fn = collate_fn or (default_collate if self._auto_collation
                                         else default_convert)
        self._iterator = None

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

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            if self._iterator is None:
                # the loader owns its persistent iterator, which must not keep the loader
                # alive in turn: deleting the loader shuts the workers down at once
                self._iterator = _MultiProcessIter(weakref.proxy(self))
            else:
                self._iterator._reset()
            return self._iterator
        return _MultiProcessIter(self)


def _pin_thread(loader: DataLoader, take) -> _pin.PinThread | None:
    """The thread pinning what ``take`` gives, when the loader pins and CUDA is there."""
    if loader.pin_memory and _pin.accelerator_available():
        return _pin.PinThread(take, "cuda")
    return None


def _base_seed(loader: DataLoader) -> int:
    """The epoch's seed of the workers, drawn from the loader's generator by every iterator
    (with or without workers), so that the sampler sees the same stream either way."""
    return int(et.randint(0, 2**62, (), generator=loader.generator).item())


class _SingleProcessIter:
    """Batches fetched in the main process. When pinning, the main process fetches one
    batch ahead and hands it to the pin thread, so that the next batch is pinned while this
    one is in use; the dataset's code (and its random draws) stays on the main thread."""

    def __init__(self, loader: DataLoader):
        self.loader = loader
        _base_seed(loader)
        self.indices = iter(loader._index_sampler)
        self.data = iter(loader.dataset) if loader._is_iterable else None
        fed = queue.Queue()
        # the thread's source holds the queue, not the iterator (dropping it stops the thread)
        self.pinner = _pin_thread(loader, lambda timeout: fed.get(timeout=timeout))
        self.fed, self.in_flight, self.exhausted = fed, 0, False

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self.loader)

    def _fetch(self):
        loader = self.loader
        samples = fetch(loader.dataset, self.data, next(self.indices), loader._auto_collation,
                        loader.batch_size, loader.drop_last)
        if samples is END:
            raise StopIteration
        return loader.collate_fn(samples)

    def _feed(self) -> None:
        """Fetches the next batch for the pin thread; an exception goes the same way, to be
        raised in its turn."""
        if self.exhausted:
            return
        try:
            batch = self._fetch()
        except StopIteration:
            self.exhausted = True
            return
        except Exception as exc:  # noqa: BLE001  (raised when its batch is due)
            batch = _pin.Raised(exc)
        self.fed.put((None, batch))
        self.in_flight += 1

    def __next__(self):
        if self.pinner is None:
            return self._fetch()
        if self.in_flight == 0:
            self._feed()
        self._feed()
        if self.in_flight == 0:
            self.pinner.stop()
            raise StopIteration
        while True:
            try:
                _, data = self.pinner.get(timeout=_POLL_SECONDS)
                break
            except queue.Empty:
                continue
        self.in_flight -= 1
        if isinstance(data, _pin.Raised):
            raise data.exception
        if isinstance(data, _pin.PinError):
            raise data.exception()
        return data

    def __del__(self):
        pinner = getattr(self, "pinner", None)
        if pinner is not None:
            pinner.stop()


def _take_unpacked(result_queue, channels, timeout: float):
    """The next (task id, data) of the workers, a packed batch rebuilt from its segment
    (``queue.Empty`` after ``timeout`` seconds)."""
    task_id, data = result_queue.get(timeout=timeout)
    if isinstance(data, _transfer.Packed):
        data = _transfer.unpack(data, channels[data.worker_id])
    return task_id, data


class _MultiProcessIter:
    """Workers fed index lists round-robin, at most ``prefetch_factor`` each in flight."""

    def __init__(self, loader: DataLoader):
        import ember_mp

        self.loader = loader
        ctx = loader.multiprocessing_context
        if ctx is None or isinstance(ctx, str):
            ctx = ember_mp.get_context(ctx)
        self.result_queue = ctx.Queue()
        self.done_event = ctx.Event()
        self.index_queues, self.workers, self.channels = [], [], []
        self.base_seed = _base_seed(loader)
        for wid in range(loader.num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            ours, theirs = ctx.Pipe(duplex=True)  # a socket pair: batches' descriptors
            w = ctx.Process(
                target=_worker.worker_loop,
                args=(loader._is_iterable, loader.dataset, index_queue, self.result_queue,
                      self.done_event, loader.collate_fn, loader._auto_collation,
                      loader.drop_last, loader.batch_size, self.base_seed + wid,
                      loader.worker_init_fn, wid, loader.num_workers, theirs),
                daemon=True)
            w.start()
            theirs.close()
            self.channels.append(ours)
            self.index_queues.append(index_queue)
            self.workers.append(w)
        self.shut = False
        self.pinner = _pin_thread(
            loader, functools.partial(_take_unpacked, self.result_queue, self.channels))
        self._start_epoch(first=True)

    def _start_epoch(self, first: bool) -> None:
        loader = self.loader
        self.indices = iter(loader._index_sampler)
        self.sent = self.rcvd = 0  # task ids sent, and the next one to yield (in order)
        self.pending: dict[int, object] = {}
        self.task_worker: dict[int, int] = {}
        self.active = [True] * loader.num_workers  # iterable: workers not yet exhausted
        self.next_worker = 0
        if not first and loader._is_iterable:
            for q in self.index_queues:
                q.put(_worker.RESET)
        for _ in range(loader.prefetch_factor * loader.num_workers):
            if not self._send():
                break

    def _reset(self) -> None:
        """A new epoch on the same (persistent) workers."""
        self._start_epoch(first=False)

    def _send(self) -> bool:
        """Sends the next task to the next active worker; False when none is left."""
        if not any(self.active):
            return False
        try:
            index = next(self.indices)
        except StopIteration:
            return False
        n = self.loader.num_workers
        while not self.active[self.next_worker]:
            self.next_worker = (self.next_worker + 1) % n
        wid = self.next_worker
        self.next_worker = (wid + 1) % n
        self.index_queues[wid].put((self.sent, index))
        self.task_worker[self.sent] = wid
        self.sent += 1
        return True

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self.loader)

    def __next__(self):
        while True:
            if not self.in_flight():
                if not self.loader.persistent_workers:
                    self._shutdown()
                raise StopIteration
            if self.loader.in_order and self.rcvd in self.pending:
                task_id = self.rcvd
                data = self.pending.pop(task_id)
            elif not self.loader.in_order and self.pending:
                task_id, data = self.pending.popitem()
            else:
                task_id, data = self._get()
                if self.loader.in_order and task_id != self.rcvd:
                    self.pending[task_id] = data
                    continue
            if self.loader.in_order:
                self.rcvd = task_id + 1
            self.task_worker.pop(task_id, None)
            if isinstance(data, _worker.IterableEnd):
                self.active[data.worker_id] = False
                self._send()
                continue
            self._send()
            if isinstance(data, (_worker.WorkerError, _pin.PinError)):
                self._shutdown()
                raise data.exception()
            return data

    def in_flight(self) -> bool:
        return bool(self.task_worker)

    def _get(self):
        timeout = self.loader.timeout
        waited = 0.0
        while True:
            step = min(_POLL_SECONDS, timeout - waited) if timeout else _POLL_SECONDS
            try:
                if self.pinner is None:
                    return _take_unpacked(self.result_queue, self.channels, step)
                task_id, data = self.pinner.get(timeout=step)
                if isinstance(data, _pin.Raised):  # the thread could not take a batch
                    raise data.exception
                return task_id, data
            except (RuntimeError, OSError, EOFError):
                # a batch whose worker died before it was handed over: report the death
                time.sleep(0.1)
                self._check_workers()
                raise
            except queue.Empty:
                waited += step
                self._check_workers()
                if timeout and waited >= timeout:
                    self._shutdown(grace=0.0)  # the workers are stuck: no wait to join them
                    raise RuntimeError(f"DataLoader timed out after {timeout} seconds") from None

    def _check_workers(self) -> None:
        for w in self.workers:
            if w.exitcode is not None and not self.shut:
                pid, code = w.pid, w.exitcode
                self._shutdown()
                if code < 0:
                    name = signal.Signals(-code).name
                    hint = (" It is possible that dataloader's workers are out of shared "
                            "memory. Please try to raise your shared memory limit."
                            if -code == signal.SIGBUS else "")
                    raise RuntimeError(f"DataLoader worker (pid {pid}) is killed by signal: "
                                       f"{name}.{hint}")
                raise RuntimeError(f"DataLoader worker (pid {pid}) exited unexpectedly with "
                                   f"exit code {code}.")

    def _shutdown(self, grace: float = 5.0) -> None:
        """Stops the pin thread and the workers; a worker still running ``grace`` seconds
        after it was told to stop is terminated."""
        if self.shut:
            return
        self.shut = True
        self.done_event.set()
        if self.pinner is not None:  # first: it reads the queue closed below
            self.pinner.stop()
        for q in self.index_queues:
            try:
                q.put(None)
            except (ValueError, OSError):
                pass
        for w in self.workers:
            w.join(timeout=grace)
            if w.is_alive():
                w.terminate()
                w.join()
        self.result_queue.cancel_join_thread()
        for q in self.index_queues:
            q.close()
        self.result_queue.close()
        for c in self.channels:
            c.close()

    def __del__(self):
        try:
            self._shutdown()
        except Exception:  # noqa: BLE001  (interpreter shutdown)
            pass
