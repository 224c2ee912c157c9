"""Lion (EvoLved Sign Momentum): Ember's addition, not in PyTorch's core."""

from __future__ import annotations

import ember_tensor as et

from ._common import functional_form
from ._ops import lerp_
from .optimizer import Optimizer

__all__ = ["Lion", "lion"]

Tensor = et.Tensor


class Lion(Optimizer):
    """Lion (Chen et al., 2023, "Symbolic Discovery of Optimization Algorithms").

    Not part of PyTorch: Ember's addition, with the paper's defaults (``lr=1e-4``,
    ``betas=(0.9, 0.99)``, ``weight_decay=0``). For each parameter ``p`` with gradient
    ``g`` (negated when ``maximize``)::

        c = beta1 * m + (1 - beta1) * g
        p = p * (1 - lr * weight_decay) - lr * sign(c)
        m = beta2 * m + (1 - beta2) * g

    Every coordinate moves by ``lr`` (or 0): the update has a larger norm than Adam's,
    so Lion wants a learning rate 3-10x smaller than AdamW's and a weight decay 3-10x
    larger, as the paper advises. State per parameter: ``exp_avg`` (``m``). ``foreach``
    and ``fused`` work as for ``Adam``.
    """

    _checks = ("lr", "betas", "weight_decay")
    _algorithm = "lion"
    _state_keys = ("exp_avg",)
    _decoupled_weight_decay = True
    _setstate_defaults = {
        "maximize": False, "foreach": None, "differentiable": False, "fused": None,
    }

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-4,
        betas: tuple[float, float] = (0.9, 0.99),
        weight_decay: float = 0.0,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(params, {
            "lr": lr, "betas": betas, "weight_decay": weight_decay, "maximize": maximize,
            "foreach": foreach, "differentiable": differentiable, "fused": fused,
        })

    def _init_state(self, state, param, group) -> None:
        state["exp_avg"] = et.zeros_like(param)

    @staticmethod
    def _update(param, grad, state, h) -> None:
        exp_avg = state["exp_avg"]
        update = exp_avg.clone()
        lerp_(update, grad, 1 - h.beta1)
        param.add_(update.sign_(), alpha=-h.lr)
        lerp_(exp_avg, grad, 1 - h.beta2, scratch=update)


lion = functional_form(Lion, "lion")
