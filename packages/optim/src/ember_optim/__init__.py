"""ember_optim: optimizers and learning-rate schedulers for Ember, the default provider of
the ``optim`` slot (``ember.optim``).

``Optimizer`` with PyTorch's contract (parameter groups, per-parameter state,
``state_dict``/``load_state_dict``, ``zero_grad``, ``step(closure)``, hooks) and the
algorithms ``SGD``, ``Adam``, ``AdamW``, ``Adamax``, ``NAdam``, ``RAdam``, ``RMSprop``,
``Adagrad``, ``Adadelta``, ``LBFGS`` and ``Lion`` (Ember's addition), plus
``lr_scheduler``. The package depends on the tensor core only; steps run under the
autograd provider's ``no_grad`` when one is installed.

>>> import ember_tensor as et
>>> import ember_optim as optim
>>> w = et.tensor([1.0, -2.0])
>>> w.grad = et.tensor([0.5, 0.5])
>>> opt = optim.SGD([w], lr=0.1)
>>> opt.step()
>>> w.tolist()
[0.949999988079071, -2.049999952316284]
"""

from __future__ import annotations

from . import lr_scheduler
from ._fused import register_fused_kernel
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .lbfgs import LBFGS
from .lion import Lion
from .nadam import NAdam
from .optimizer import (
    Optimizer,
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)
from .radam import RAdam
from .rmsprop import RMSprop
from .sgd import SGD

__version__ = "0.1.0"
INTERFACE_VERSION = 1

__all__ = [
    "Adadelta",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "LBFGS",
    "Lion",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "SGD",
    "lr_scheduler",
    "register_fused_kernel",
    "register_optimizer_step_post_hook",
    "register_optimizer_step_pre_hook",
]
