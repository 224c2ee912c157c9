"""``ember.distributed``: PyTorch's ``torch.distributed`` API (process groups, collectives,
``DistributedDataParallel``), provided by the ``ember-distributed`` component.

When that component is installed, ``ember.distributed`` *is* its module ``ember_distributed``.
Without it (the component does not exist yet: multi-machine training is still to come), the
module imports all the same, as ``torch.distributed`` does in a PyTorch built without
distributed support, so that programs that guard their distributed code run on one process:

>>> import ember.distributed as dist
>>> dist.is_available() or dist.is_initialized()
False

Every other name is an ``AttributeError`` that says what is missing. Single-machine
multi-process training is in ``ember.multiprocessing`` (shared-memory tensors and
collectives between local processes).
"""

from __future__ import annotations

import importlib.util as _importlib_util
import sys as _sys

if _importlib_util.find_spec("ember_distributed") is not None:  # the component: use it whole
    import ember_distributed as _provider

    _sys.modules[__name__] = _provider
else:
    __all__ = ["is_available", "is_initialized"]

    def is_available() -> bool:
        """Whether distributed training can be used: False, ``ember-distributed`` is not
        installed."""
        return False

    def is_initialized() -> bool:
        """Whether the default process group is initialised: never without a backend."""
        return False

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"ember.distributed.{name} needs the ember-distributed component, which is not "
            "installed: ember.distributed.is_available() is False (single-machine "
            "multi-process training: ember.multiprocessing)"
        )
