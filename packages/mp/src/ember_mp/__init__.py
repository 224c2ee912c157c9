"""ember-mp: Python's ``multiprocessing`` with tensors moved through shared memory.

``import ember_mp as mp`` (``ember.multiprocessing``) gives everything Python's
``multiprocessing`` has (``Process``, ``Queue``, ``SimpleQueue``, ``Pool``, ``Pipe``,
``Manager``, ``get_context``, ``set_start_method``, ...), which stay Python's own objects:
importing this package registers a reducer for ``ember_tensor.Tensor`` with
multiprocessing's pickler, so a tensor put on any queue or pipe, or passed to a process,
travels as a handle to shared memory (see ``_reductions``), under every start method. It
also installs ``Tensor.share_memory_``, and adds:

- ``get_sharing_strategy`` / ``set_sharing_strategy`` / ``get_all_sharing_strategies``:
  ``'file_descriptor'`` (default) or ``'file_system'`` (see ``_segments``);
- ``ipc_collect``: frees the memory of sent CUDA tensors that their receivers released
  (CUDA tensors travel as CUDA IPC handles, see ``_cuda``);
- ``spawn`` / ``start_processes`` and their exceptions;
- collectives between local processes: ``ProcessGroup``, ``init_process_group``,
  ``all_reduce``, ``broadcast``, ``barrier``, ``ReduceOp``.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing import *  # noqa: F403  (the drop-in: Python's own API)

from . import _reductions
from ._cuda import ipc_collect
from ._segments import get_all_sharing_strategies, get_sharing_strategy, set_sharing_strategy
from .collectives import (
    ProcessGroup,
    ReduceOp,
    all_reduce,
    barrier,
    broadcast,
    destroy_process_group,
    get_rank,
    get_world_size,
    init_process_group,
    is_initialized,
)
from .spawn import (
    ProcessContext,
    ProcessException,
    ProcessExitedException,
    ProcessRaisedException,
    spawn,
    start_processes,
)

__version__ = "0.1.0"
INTERFACE_VERSION = 1

_reductions.init_reductions()

__all__ = list(multiprocessing.__all__) + [
    "get_sharing_strategy", "set_sharing_strategy", "get_all_sharing_strategies", "ipc_collect",
    "spawn", "start_processes", "ProcessContext", "ProcessException",
    "ProcessRaisedException", "ProcessExitedException",
    "ProcessGroup", "ReduceOp", "init_process_group", "destroy_process_group",
    "is_initialized", "get_rank", "get_world_size", "all_reduce", "broadcast", "barrier",
]
