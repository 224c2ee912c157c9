"""``InstanceNorm1d/2d/3d`` under the module path where PyTorch defines them
(``torch.nn.modules.instancenorm``); Ember writes them beside batch normalization, whose
parameters and buffers they share (``batchnorm.py``)."""

from __future__ import annotations

from .batchnorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
