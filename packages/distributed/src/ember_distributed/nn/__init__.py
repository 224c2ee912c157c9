"""``ember.distributed.nn``: collectives that autograd differentiates through
(``torch.distributed.nn``), and the cross-process statistics of ``SyncBatchNorm``."""

from __future__ import annotations

from . import functional

__all__ = ["functional"]
