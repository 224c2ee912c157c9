"""Adagrad."""

from __future__ import annotations

import ember_tensor as et

from ._common import functional_form, new_step
from ._ops import addcdiv_, addcmul_
from .optimizer import Optimizer

__all__ = ["Adagrad", "adagrad"]

Tensor = et.Tensor


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011).

    For each parameter ``p`` with gradient ``g`` (negated when ``maximize``), at step
    ``t``::

        g = g + weight_decay * p              (when weight_decay != 0)
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g                         (s starts at initial_accumulator_value)
        p = p - clr * g / (sqrt(s) + eps)

    Arguments, defaults (``lr=1e-2``, ``eps=1e-10``) and errors are PyTorch's. As in
    PyTorch, the state (``step``, ``sum``) is created for every parameter when the
    optimizer is, from the constructor's ``initial_accumulator_value``. ``fused=True``
    needs a registered fused kernel (none yet: ``NotImplementedError``). Ember has no
    sparse gradients.
    """

    _checks = ("lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps")
    _algorithm = "adagrad"
    _state_keys = ("sum", "step")
    _scalar_state = ("step",)
    _init_options = ("initial_accumulator_value",)
    _setstate_defaults = {
        "foreach": None, "maximize": False, "differentiable": False, "fused": None,
    }

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(params, {
            "lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "fused": fused,
        })
        for group in self.param_groups:
            for p in group["params"]:
                self._create_state(self.state[p], p, group)

    def _init_state(self, state, param, group) -> None:
        state["step"] = new_step()
        state["sum"] = et.full_like(param, self.defaults["initial_accumulator_value"])

    def share_memory(self) -> None:
        """Moves the ``sum`` accumulators to shared memory (for multiprocess training),
        where the core supports it."""
        for group in self.param_groups:
            for p in group["params"]:
                state_sum = self.state[p]["sum"]
                share = getattr(state_sum, "share_memory_", None)
                if share is None:
                    raise NotImplementedError(
                        "Adagrad.share_memory: this ember_tensor has no share_memory_ "
                        "(shared-memory tensors come with ember-mp)"
                    )
                share()

    @staticmethod
    def _update(param, grad, state, h) -> None:
        step_t, state_sum = state["step"], state["sum"]
        step_t.add_(1)
        clr = h.lr / (1 + (step_t.item() - 1) * h.lr_decay)
        addcmul_(state_sum, grad, grad, 1)
        std = state_sum.sqrt().add_(h.eps)
        addcdiv_(param, grad, std, -clr)


adagrad = functional_form(Adagrad, "adagrad")
