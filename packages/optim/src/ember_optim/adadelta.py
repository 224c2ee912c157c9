"""Adadelta."""

from __future__ import annotations

import ember_tensor as et

from ._common import functional_form, new_step
from ._ops import addcmul_
from .optimizer import Optimizer

__all__ = ["Adadelta", "adadelta"]

Tensor = et.Tensor


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012).

    For each parameter ``p`` with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p                       (when weight_decay != 0)
        v = rho * v + (1 - rho) * g * g
        d = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * d * d
        p = p - lr * d

    Arguments, defaults (``lr=1.0``, ``rho=0.9``, ``eps=1e-6``) and errors are PyTorch's;
    ``capturable`` is accepted and has no effect. State per parameter: ``step``,
    ``square_avg``, ``acc_delta``.
    """

    _checks = ("lr", "rho", "eps", "weight_decay")
    _algorithm = "adadelta"
    _state_keys = ("square_avg", "acc_delta", "step")
    _scalar_state = ("step",)
    _setstate_defaults = {
        "foreach": None, "maximize": False, "differentiable": False, "capturable": False,
    }

    def __init__(
        self,
        params,
        lr: float | Tensor = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        super().__init__(params, {
            "lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "capturable": capturable, "foreach": foreach,
            "differentiable": differentiable,
        })

    def _init_state(self, state, param, group) -> None:
        state["step"] = new_step()
        state["square_avg"] = et.zeros_like(param)
        state["acc_delta"] = et.zeros_like(param)

    @staticmethod
    def _update(param, grad, state, h) -> None:
        rho, eps = h.rho, h.eps
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        state["step"].add_(1)
        square_avg.mul_(rho)
        addcmul_(square_avg, grad, grad, 1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho)
        addcmul_(acc_delta, delta, delta, 1 - rho)
        param.add_(delta, alpha=-h.lr)


adadelta = functional_form(Adadelta, "adadelta")
