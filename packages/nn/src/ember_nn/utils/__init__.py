"""``ember.nn.utils``: gradient clipping, parameter/vector conversion, hook handles,
parametrizations (``parametrize``, ``parametrizations``), the hook-based ``weight_norm``
and ``spectral_norm``, pruning (``prune``), ``stateless.functional_call``, conv/linear and
batch-norm fusion (``fusion``), the convolution weights' memory format (``memory_format``)
and ``skip_init``.

``parametrize`` and ``parametrizations`` subclass the layer modules' classes, and the layer
modules import ``utils.hooks``: those two load on first use (``ember_nn.utils.parametrize``
or ``from ember_nn.utils import parametrize``), so that importing the package in any order
has no cycle.
"""

from __future__ import annotations

import importlib

from . import fusion, hooks, memory_format, prune, rnn, stateless
from ._spectral_norm import remove_spectral_norm, spectral_norm
from ._weight_norm import remove_weight_norm, weight_norm
from .clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from .init import skip_init
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format

_LAZY = ("parametrizations", "parametrize")

__all__ = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "convert_conv2d_weight_memory_format",
    "convert_conv3d_weight_memory_format",
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
    "fusion",
    "get_total_norm",
    "hooks",
    "memory_format",
    "parameters_to_vector",
    "parametrizations",
    "parametrize",
    "prune",
    "remove_spectral_norm",
    "remove_weight_norm",
    "rnn",
    "skip_init",
    "spectral_norm",
    "stateless",
    "vector_to_parameters",
    "weight_norm",
]


def __getattr__(name: str):
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
