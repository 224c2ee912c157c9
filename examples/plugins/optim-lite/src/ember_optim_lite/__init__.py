"""ember-optim-lite: a small, pure-Python optimizer library for Ember, and a drop-in
provider of Ember's ``optim`` slot (``ember.use(optim="lite")`` or ``EMBER_OPTIM=lite``).

It implements the optim interface (version 1) on ``ember_tensor`` tensors: ``Optimizer``
(parameter groups, per-parameter state, ``state_dict``/``load_state_dict`` in PyTorch's
layout, ``zero_grad``, ``step(closure)``, step and state-dict hooks), the algorithms
``SGD``, ``Adam``, ``AdamW``, ``Adamax``, ``NAdam``, ``RAdam``, ``RMSprop``, ``Adagrad``,
``Adadelta``, ``LBFGS`` and ``Lion``, and the schedulers of ``lr_scheduler``. Updates are
written one parameter at a time with the tensor core's ops (no fused or multi-tensor
kernels), and run under the active autograd provider's ``no_grad``.

>>> import ember_tensor as et
>>> import ember_optim_lite as optim
>>> w = et.tensor([1.0, -2.0], dtype=et.float64)
>>> w.grad = et.tensor([0.5, 0.5], dtype=et.float64)
>>> optim.SGD([w], lr=0.1).step()
>>> w.tolist()
[0.95, -2.05]
"""

from __future__ import annotations

from . import lr_scheduler
from .algorithms import SGD, Adadelta, Adagrad, Adam, Adamax, AdamW, Lion, NAdam, RAdam, RMSprop
from .lbfgs import LBFGS
from .optimizer import (
    Optimizer,
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)

__version__ = "0.1.0"
INTERFACE_VERSION = 1  # the version of Ember's optim interface this package implements

__all__ = [
    "LBFGS",
    "SGD",
    "Adadelta",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Lion",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "lr_scheduler",
    "register_optimizer_step_post_hook",
    "register_optimizer_step_pre_hook",
]
