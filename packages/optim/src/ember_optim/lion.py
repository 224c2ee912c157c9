"""Lion (EvoLved Sign Momentum): Ember's addition, not in PyTorch's core."""

from __future__ import annotations

import ember_tensor as et

from . import _fused
from ._common import choose_impl, multi_tensor, store_state
from ._grad_mode import grad_disabled
from ._ops import lerp_
from .optimizer import (
    Optimizer,
    _check_betas,
    _check_fused_flags,
    _check_lr,
    _reject_differentiable,
    _to_scalar,
)

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
        _check_lr(lr)
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _reject_differentiable("Lion", differentiable)
        defaults = {
            "lr": lr,
            "betas": betas,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        if fused:
            _check_fused_flags("Lion", foreach, fused, differentiable)
            _fused.fused_kernel("lion", "Lion")

    _setstate_defaults = {
        "maximize": False, "foreach": None, "differentiable": False, "fused": None,
    }

    @grad_disabled
    def step(self, closure=None):
        """Performs one step; ``closure`` (optional) re-evaluates the loss, which is
        returned."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            exp_avgs: list[Tensor] = []
            for p in group["params"]:
                if p.grad is None:
                    continue
                params.append(p)
                grads.append(p.grad)
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = et.zeros_like(p)
                exp_avgs.append(state["exp_avg"])
            beta1, beta2 = group["betas"]
            changed = lion(
                params,
                grads,
                exp_avgs,
                lr=group["lr"],
                beta1=beta1,
                beta2=beta2,
                weight_decay=group["weight_decay"],
                maximize=group["maximize"],
                foreach=group["foreach"],
                fused=group["fused"],
            )
            store_state(changed, self.state, params, exp_avg=exp_avgs)
        return loss


def lion(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    *,
    foreach: bool | None = None,
    fused: bool | None = None,
    lr: float | Tensor,
    beta1: float,
    beta2: float,
    weight_decay: float,
    maximize: bool,
) -> bool | None:
    """The Lion update on lists (functional form), in place."""
    impl = choose_impl("Lion", "lion", foreach, fused, _single_tensor_lion, _multi_tensor_lion)
    return impl(
        params,
        grads,
        exp_avgs,
        lr=_to_scalar(lr),
        beta1=beta1,
        beta2=beta2,
        weight_decay=weight_decay,
        maximize=maximize,
    )


def _single_tensor_lion(params, grads, exp_avgs, *, lr, beta1, beta2, weight_decay,
                        maximize) -> None:
    for param, grad, exp_avg in zip(params, grads, exp_avgs):
        if maximize:
            grad = grad.neg()
        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)
        update = exp_avg.clone()
        lerp_(update, grad, 1 - beta1)
        param.add_(update.sign_(), alpha=-lr)
        lerp_(exp_avg, grad, 1 - beta2, scratch=update)


_multi_tensor_lion = multi_tensor(_single_tensor_lion, scalars=())
