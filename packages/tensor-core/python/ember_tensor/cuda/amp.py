"""``ember.cuda.amp``: PyTorch's deprecated CUDA-only spelling of ``ember.amp``.
``autocast(...)`` is ``ember.amp.autocast("cuda", ...)`` and ``GradScaler(...)`` is
``ember.amp.GradScaler("cuda", ...)``, each with PyTorch's ``FutureWarning``; new code
should use ``ember.amp`` directly."""

from __future__ import annotations

import warnings

from .. import _C
from ..amp import GradScaler as _GradScaler
from ..amp import autocast as _autocast

__all__ = ["GradScaler", "autocast"]


class autocast(_autocast):  # noqa: N801 - PyTorch's name
    """``ember.amp.autocast("cuda", ...)`` under its deprecated name."""

    def __init__(self, enabled: bool = True, dtype=_C.float16,
                 cache_enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``ember.amp.GradScaler("cuda", ...)`` under its deprecated name."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)
