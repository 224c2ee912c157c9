"""``convert_conv2d_weight_memory_format`` and ``convert_conv3d_weight_memory_format``:
give the weights of the convolutions in a module a memory format, as PyTorch's
``torch.nn.utils.memory_format``.

Ember tensors have one layout (dense, row-major) and the core has no memory-format objects
yet: a format is named by a string (``"channels_last"``, ``"channels_last_3d"``,
``"contiguous_format"``), by an object whose ``str`` ends with such a name
(``torch.channels_last``), or ``None`` (the layout kept). The converted weight is a fresh
contiguous copy of the same values in every case (the same ``Parameter``, its gradient
kept). As in PyTorch, a channels-last format asked of a weight of the wrong rank and
``preserve_format`` are ``RuntimeError``s, and a value that is no memory format a
``TypeError``, each only once there is a convolution to convert.
"""

from __future__ import annotations

from ember_autograd import no_grad

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]

# format name -> the rank of tensor it applies to (None: any)
_FORMATS = {"contiguous_format": None, "preserve_format": None, "channels_last": 4,
            "channels_last_3d": 5}


def _format_name(memory_format) -> str | None:
    if memory_format is None:
        return None
    name = memory_format if isinstance(memory_format, str) else (
        str(memory_format).rpartition(".")[2])
    if name not in _FORMATS:
        raise TypeError(
            "memory_format must be a memory format (one of "
            f"{', '.join(repr(n) for n in _FORMATS)}, or torch's objects of those names), "
            f"not {type(memory_format).__name__}"
        )
    return name


def _convert(module, memory_format, types):
    """The weight of ``module`` and of every descendant that is an instance of ``types``
    replaced by a copy in ``memory_format``; returns ``module``."""
    if isinstance(module, types):
        name = _format_name(memory_format)
        if name == "preserve_format":  # (PyTorch's resize_ refuses it)
            raise RuntimeError("Unsupported memory format Preserve")
        rank = _FORMATS.get(name)
        weight = module.weight
        if rank is not None and weight.dim() != rank:
            raise RuntimeError(f"required rank {rank} tensor to use {name} format")
        with no_grad():
            weight.data = weight.detach().clone()
    for child in module.children():
        _convert(child, memory_format, types)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Gives the weight of every ``Conv2d`` and ``ConvTranspose2d`` in ``module`` (itself
    included, recursively) the memory format ``memory_format`` and returns ``module``
    (see the module's docstring for the formats Ember reads and what the copy is)."""
    from ..modules.conv import Conv2d, ConvTranspose2d

    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Gives the weight of every ``Conv3d`` and ``ConvTranspose3d`` in ``module`` (itself
    included, recursively) the memory format ``memory_format`` and returns ``module``."""
    from ..modules.conv import Conv3d, ConvTranspose3d

    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
