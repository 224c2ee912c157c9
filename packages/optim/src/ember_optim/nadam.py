"""NAdam: Adam with Nesterov momentum (and NAdamW, its decoupled weight decay form)."""

from __future__ import annotations

import ember_tensor as et

from ._common import _scalar_dtype, functional_form, new_step
from ._ops import addcdiv_, addcmul_, lerp_
from .optimizer import Optimizer

__all__ = ["NAdam", "nadam"]

Tensor = et.Tensor


class NAdam(Optimizer):
    """NAdam (Dozat, 2016): Adam with Nesterov momentum and a momentum schedule.

    For each parameter ``p`` with gradient ``g`` (negated when ``maximize``), at step
    ``t``::

        p = p * (1 - lr * weight_decay)        (decoupled_weight_decay: NAdamW)
        g = g + weight_decay * p               (otherwise, when weight_decay != 0)
        mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay)), mu_{t+1} likewise
        prod = prod * mu_t                     (kept in the state as mu_product)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        d = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr * (1 - mu_t) / (1 - prod) * g / d
              - lr * mu_{t+1} / (1 - prod * mu_{t+1}) * m / d

    Arguments, defaults (``lr=2e-3``, ``momentum_decay=4e-3``) and errors are PyTorch's;
    ``capturable`` is accepted and has no effect. State per parameter: ``step``,
    ``mu_product`` (0-d float32 tensors), ``exp_avg``, ``exp_avg_sq``.
    """

    _checks = ("lr", "eps", "betas", "weight_decay", "momentum_decay")
    _algorithm = "nadam"
    _state_keys = ("exp_avg", "exp_avg_sq", "mu_product", "step")
    _scalar_state = ("step", "mu_product")
    _setstate_defaults = {
        "maximize": False, "foreach": None, "capturable": False, "differentiable": False,
        "decoupled_weight_decay": False,
    }

    def __init__(
        self,
        params,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        super().__init__(params, {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "differentiable": differentiable,
        })

    def _init_state(self, state, param, group) -> None:
        state["step"] = new_step()
        state["mu_product"] = et.tensor(1.0, dtype=_scalar_dtype())
        state["exp_avg"] = et.zeros_like(param)
        state["exp_avg_sq"] = et.zeros_like(param)

    @staticmethod
    def _update(param, grad, state, h) -> None:
        beta1, beta2, lr, momentum_decay = h.beta1, h.beta2, h.lr, h.momentum_decay
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        mu_product, step_t = state["mu_product"], state["step"]
        step_t.add_(1)
        step = step_t.item()
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product.mul_(mu)
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq.mul_(beta2)
        addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
        denom = exp_avg_sq.div(1 - beta2**step).sqrt_()
        prod = mu_product.item()
        prod_next = prod * mu_next
        denom.add_(h.eps)
        addcdiv_(param, grad, denom, -lr * (1.0 - mu) / (1.0 - prod))
        addcdiv_(param, exp_avg, denom, (-lr * mu_next) / (1.0 - prod_next))


nadam = functional_form(NAdam, "nadam")
