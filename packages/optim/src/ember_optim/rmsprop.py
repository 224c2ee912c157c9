"""RMSprop, optionally centered and with momentum."""

from __future__ import annotations

import ember_tensor as et

from ._common import functional_form, new_step
from ._ops import addcdiv_, addcmul_, lerp_
from .optimizer import Optimizer

__all__ = ["RMSprop", "rmsprop"]

Tensor = et.Tensor


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture notes), optionally centered (Graves, 2013).

    For each parameter ``p`` with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p               (when weight_decay != 0)
        v = alpha * v + (1 - alpha) * g * g
        a = alpha * a + (1 - alpha) * g        (centered)
        d = sqrt(v - a * a) + eps if centered else sqrt(v) + eps
        b = momentum * b + g / d;  p = p - lr * b      (when momentum > 0)
        p = p - lr * g / d                             (otherwise)

    Arguments, defaults (``lr=1e-2``, ``alpha=0.99``) and errors are PyTorch's;
    ``capturable`` is accepted and has no effect. State per parameter: ``step``,
    ``square_avg``, ``momentum_buffer`` (momentum > 0), ``grad_avg`` (centered).
    """

    _checks = ("lr", "eps", "momentum", "weight_decay", "alpha")
    _algorithm = "rmsprop"
    _state_keys = ("square_avg", "grad_avg", "momentum_buffer", "step")
    _optional_state = {"grad_avg": "centered", "momentum_buffer": "momentum"}
    _scalar_state = ("step",)
    _setstate_defaults = {
        "momentum": 0, "centered": False, "foreach": None, "maximize": False,
        "differentiable": False, "capturable": False,
    }

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        super().__init__(params, {
            "lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
            "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable,
        })

    def _init_state(self, state, param, group) -> None:
        state["step"] = new_step()
        state["square_avg"] = et.zeros_like(param)
        if group["momentum"] > 0:
            state["momentum_buffer"] = et.zeros_like(param)
        if group["centered"]:
            state["grad_avg"] = et.zeros_like(param)

    @staticmethod
    def _update(param, grad, state, h) -> None:
        alpha, momentum = h.alpha, h.momentum
        square_avg = state["square_avg"]
        state["step"].add_(1)
        square_avg.mul_(alpha)
        addcmul_(square_avg, grad, grad, 1 - alpha)
        if h.centered:
            grad_avg = state["grad_avg"]
            lerp_(grad_avg, grad, 1 - alpha)
            avg = square_avg.clone()
            addcmul_(avg, grad_avg, grad_avg, -1)
            avg.sqrt_()
        else:
            avg = square_avg.sqrt()
        avg.add_(h.eps)
        if momentum > 0:
            buf = state["momentum_buffer"]
            buf.mul_(momentum)
            addcdiv_(buf, grad, avg)
            param.add_(buf, alpha=-h.lr)
        else:
            addcdiv_(param, grad, avg, -h.lr)


rmsprop = functional_form(RMSprop, "rmsprop")
