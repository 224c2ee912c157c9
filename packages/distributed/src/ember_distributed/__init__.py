"""ember-distributed: training across processes and machines (``ember.distributed``,
PyTorch's ``torch.distributed`` API) on the communication engines clusters already run.

- process groups and collectives (``init_process_group``, ``all_reduce``, ``broadcast``,
  ``all_gather``, ``reduce_scatter``, ``all_to_all``, ``send``/``recv``, ``barrier``, the
  object collectives, ...): ``distributed_c10d``;
- the ``"mpi"`` backend (also ``"gloo"``): an MPI library through mpi4py (``mpi``), loaded on
  first use;
- rendezvous stores (``TCPStore``, ``FileStore``, ``HashStore``, ``PrefixStore``):
  ``store``;
- ``DistributedDataParallel``: ``parallel`` (also ``ember.nn.parallel``), its communication
  hooks (``algorithms.ddp_comm_hooks``) and ``futures.Future``;
- ``SyncBatchNorm`` synchronised across ranks (``sync_batch_norm``) and differentiable
  collectives (``nn.functional``);
- the launcher: ``python -m ember.distributed.run`` (torchrun's flags): ``run``.

>>> import ember_distributed as dist
>>> dist.is_available(), dist.is_initialized()
(True, False)
"""

from __future__ import annotations

from . import nn, sync_batch_norm  # noqa: F401  (SyncBatchNorm's statistics across ranks)
from .distributed_c10d import *  # noqa: F403
from .distributed_c10d import __all__ as _c10d_all
from .parallel import GradBucket
from .store import DistStoreError, FileStore, HashStore, PrefixStore, Store, TCPStore

__version__ = "0.1.0"
INTERFACE_VERSION = 1

__all__ = list(_c10d_all) + ["Store", "TCPStore", "FileStore", "HashStore", "PrefixStore",
                             "DistStoreError", "GradBucket"]
