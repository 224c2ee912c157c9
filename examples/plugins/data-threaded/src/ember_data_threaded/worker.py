"""``get_worker_info`` and ``WorkerInfo``: which loader thread is running this code."""

from __future__ import annotations

import threading

__all__ = ["WorkerInfo", "get_worker_info"]

_local = threading.local()


class WorkerInfo:
    """Inside a worker thread: ``id`` (0 .. num_workers - 1), ``num_workers``, ``seed``
    (this worker's: the loader's base seed plus ``id``) and ``dataset`` (the loader's
    dataset, shared by every worker thread). Read-only."""

    __slots__ = ("id", "num_workers", "seed", "dataset")

    def __init__(self, id: int, num_workers: int, seed: int, dataset) -> None:  # noqa: A002
        for name, value in (("id", id), ("num_workers", num_workers), ("seed", seed),
                            ("dataset", dataset)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value) -> None:
        raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")

    def __repr__(self) -> str:
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
                f"dataset={type(self.dataset).__name__})")


def get_worker_info() -> WorkerInfo | None:
    """The ``WorkerInfo`` of the DataLoader worker thread calling it; None elsewhere (the
    main thread, or a loader with ``num_workers=0``)."""
    return getattr(_local, "info", None)


def _set_worker_info(info: WorkerInfo | None) -> None:
    _local.info = info
