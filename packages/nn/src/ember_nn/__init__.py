"""ember_nn: neural networks for Ember, the default provider of the ``nn`` slot
(``ember.nn``).

``Module`` and ``Parameter`` with PyTorch's contract, containers, layers, activation and
loss modules, ``functional``, ``init`` and ``utils``; everything is composed of the tensor
core's ops and differentiated by the ``autograd`` provider.

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
>>> tuple(model(et.ones(2, 3)).shape)
(2, 1)
"""

from __future__ import annotations

import ember_autograd  # noqa: F401  (the autograd provider: Parameter requires grad)

from . import functional, init, parallel, utils
from .modules import *  # noqa: F403  (the layer, activation and loss modules)
from .modules import __all__ as _modules_all
from .parallel import DataParallel
from .parameter import Buffer, Parameter

__version__ = "0.1.0"
INTERFACE_VERSION = 1

__all__ = ["Buffer", "DataParallel", "Parameter", *_modules_all, "functional", "init",
           "parallel", "utils"]
