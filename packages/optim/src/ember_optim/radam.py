"""RAdam: Adam with a rectified adaptive learning rate (and RAdamW, its decoupled weight
decay form)."""

from __future__ import annotations

import ember_tensor as et

from ._common import functional_form, new_step
from ._ops import addcmul_, lerp_
from .optimizer import Optimizer

__all__ = ["RAdam", "radam"]

Tensor = et.Tensor


class RAdam(Optimizer):
    """RAdam (Liu et al., 2020): Adam whose adaptive term is switched on only once the
    variance of its estimate is tractable, and then rectified.

    For each parameter ``p`` with gradient ``g`` (negated when ``maximize``), at step
    ``t``::

        p = p * (1 - lr * weight_decay)       (decoupled_weight_decay: RAdamW)
        g = g + weight_decay * p              (otherwise, when weight_decay != 0)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        m_hat = m / (1 - beta1**t)
        if rho_t > 5:
            r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
            p = p - lr * m_hat * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r
        else:
            p = p - lr * m_hat

    Arguments, defaults and errors are PyTorch's; ``capturable`` is accepted and has no
    effect. State per parameter: ``step``, ``exp_avg``, ``exp_avg_sq``.
    """

    _checks = ("lr", "eps", "betas", "weight_decay")
    _algorithm = "radam"
    _state_keys = ("exp_avg", "exp_avg_sq", "step")
    _scalar_state = ("step",)
    _setstate_defaults = {
        "foreach": None, "maximize": False, "differentiable": False,
        "decoupled_weight_decay": False, "capturable": False,
    }

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        super().__init__(params, {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay, "differentiable": differentiable,
        })

    def _init_state(self, state, param, group) -> None:
        state["step"] = new_step()
        state["exp_avg"] = et.zeros_like(param)
        state["exp_avg_sq"] = et.zeros_like(param)

    @staticmethod
    def _update(param, grad, state, h) -> None:
        beta1, beta2, lr = h.beta1, h.beta2, h.lr
        exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
        step_t.add_(1)
        step = step_t.item()
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq.mul_(beta2)
        addcmul_(exp_avg_sq, grad, grad, 1 - beta2)

        bias_correction2 = 1 - beta2**step
        corrected = exp_avg.div(1 - beta1**step)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = (
                (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
            ) ** 0.5
            # PyTorch evaluates number / tensor as reciprocal(tensor) * number
            adaptive = exp_avg_sq.sqrt().add_(h.eps).reciprocal_().mul_(bias_correction2**0.5)
            param.add_(corrected.mul_(lr).mul_(adaptive).mul_(rect), alpha=-1.0)
        else:
            param.add_(corrected.mul_(lr), alpha=-1.0)


radam = functional_form(RAdam, "radam")
