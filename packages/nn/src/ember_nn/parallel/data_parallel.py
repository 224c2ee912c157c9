"""``DataParallel`` on one device (see the package docstring for why)."""

from __future__ import annotations

import warnings

import ember_tensor as et

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]

_warned = False


def _device_of(device_ids, output_device):
    """The one device the module runs on: the first of ``device_ids`` when CUDA is present,
    else the CPU (``device_ids`` is then ``[]``, as in PyTorch)."""
    global _warned
    if not et.cuda.is_available():
        return [], None
    ids = list(range(et.cuda.device_count())) if device_ids is None else [
        d.index if isinstance(d, et.device) else int(d) for d in device_ids]
    if not ids:
        raise RuntimeError("no available devices were found")
    if len(ids) > 1 and not _warned:
        _warned = True
        warnings.warn(f"DataParallel: Ember runs the module on cuda:{ids[0]} only, not "
                      f"replicated over devices {ids}; use DistributedDataParallel to train "
                      "on several GPUs", UserWarning, stacklevel=3)
    return ids, et.device("cuda", ids[0])


class DataParallel(Module):
    """Wraps ``module`` (kept as ``self.module``) and runs it on one device: the CPU when
    there is no CUDA device, else ``cuda:device_ids[0]`` (the module is moved there).
    ``output_device`` and ``dim`` are kept for PyTorch's attributes."""

    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids, device = _device_of(device_ids, output_device)
        self.dim = dim
        self.output_device = output_device if output_device is not None else (
            self.device_ids[0] if self.device_ids else None)
        if device is not None:
            self.module.to(device)

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim: int = 0,
                  module_kwargs=None):
    """``module(*inputs, **module_kwargs)`` on one device: the functional ``DataParallel``.
    ``inputs`` is a tuple of positional arguments (or one argument)."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
