"""Adamax: Adam with the infinity norm."""

from __future__ import annotations

import ember_tensor as et

from ._common import functional_form, new_step
from ._ops import addcdiv_, lerp_
from .optimizer import Optimizer

__all__ = ["Adamax", "adamax"]

Tensor = et.Tensor


class Adamax(Optimizer):
    """Adamax (Kingma and Ba, 2015, section 7), the infinity-norm variant of Adam.

    For each parameter ``p`` with gradient ``g`` (negated when ``maximize``), at step
    ``t``::

        g = g + weight_decay * p                  (when weight_decay != 0)
        m = beta1 * m + (1 - beta1) * g
        u = max(beta2 * u, |g| + eps)
        p = p - lr / (1 - beta1**t) * m / u

    Arguments, defaults (``lr=2e-3``) and errors are PyTorch's; ``capturable`` is accepted
    and has no effect. State per parameter: ``step``, ``exp_avg``, ``exp_inf``.
    """

    _checks = ("lr", "eps", "betas", "weight_decay")
    _algorithm = "adamax"
    _state_keys = ("exp_avg", "exp_inf", "step")
    _scalar_state = ("step",)
    _setstate_defaults = {
        "foreach": None, "maximize": False, "differentiable": False, "capturable": False,
    }

    def __init__(
        self,
        params,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        super().__init__(params, {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable,
        })

    def _init_state(self, state, param, group) -> None:
        state["step"] = new_step()
        state["exp_avg"] = et.zeros_like(param)
        state["exp_inf"] = et.zeros_like(param)

    @staticmethod
    def _update(param, grad, state, h) -> None:
        exp_avg, exp_inf, step_t = state["exp_avg"], state["exp_inf"], state["step"]
        step_t.add_(1)
        lerp_(exp_avg, grad, 1 - h.beta1)
        et.maximum(exp_inf.mul_(h.beta2), grad.abs().add_(h.eps), out=exp_inf)
        clr = h.lr / (1 - h.beta1 ** step_t.item())
        addcdiv_(param, exp_avg, exp_inf, -clr)


adamax = functional_form(Adamax, "adamax")
