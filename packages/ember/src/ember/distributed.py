"""``ember.distributed``: PyTorch's ``torch.distributed`` API (process groups, collectives,
``DistributedDataParallel``), provided by the ``ember-distributed`` component.

When that component is installed, ``ember.distributed`` *is* the provider of the
``distributed`` slot (``ember_distributed`` by default). Without it, the module imports all
the same, as ``torch.distributed`` does in a PyTorch built without distributed support, so
that programs that guard their distributed code run on one process:

>>> import ember.distributed as dist
>>> dist.is_available() or dist.is_initialized()  # doctest: +SKIP
False

Every other name is an ``AttributeError`` that says what is missing. Single-machine
multi-process training is in ``ember.multiprocessing`` (shared-memory tensors and
collectives between local processes).
"""

from __future__ import annotations

import sys as _sys

import ember as _ember

try:
    _provider = _ember._resolve("distributed")
except ModuleNotFoundError:  # not installed (a provider that fails to import: SlotError)
    _provider = None

if _provider is not None:  # the component: use it whole
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
