"""Automatic mixed precision, as ``torch.amp``: ``autocast`` regions run the ops of PyTorch's
autocast lists in lower precision (matmuls, linear) or float32 (reductions, losses), and
``GradScaler`` scales the loss so that float16 gradients do not underflow.

The casts happen in the core's op bindings (``src/ember/autocast.h``) through the same path as
``Tensor.to``, so autograd records them and the gradients of float32 leaves are float32.
"""

from ._autocast import (
    autocast,
    clear_autocast_cache,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from ._grad_scaler import GradScaler, OptState

__all__ = [
    "GradScaler",
    "OptState",
    "autocast",
    "clear_autocast_cache",
    "get_autocast_dtype",
    "is_autocast_available",
    "is_autocast_cache_enabled",
    "is_autocast_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
]
