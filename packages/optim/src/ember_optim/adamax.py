"""Adamax: Adam with the infinity norm."""

from __future__ import annotations

import ember_tensor as et

from ._common import choose_impl, multi_tensor, new_step, store_state
from ._grad_mode import grad_disabled
from ._ops import addcdiv_, lerp_
from .optimizer import Optimizer, _check_betas, _check_lr, _reject_differentiable, _to_scalar

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
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _reject_differentiable("Adamax", differentiable)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    _setstate_defaults = {
        "foreach": None, "maximize": False, "differentiable": False, "capturable": False,
    }
    _scalar_state = ("step",)

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_infs, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["exp_avg"] = et.zeros_like(p)
                state["exp_inf"] = et.zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_infs.append(state["exp_inf"])
            state_steps.append(state["step"])

    @grad_disabled
    def step(self, closure=None):
        """Performs one step; ``closure`` (optional) re-evaluates the loss, which is
        returned."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params_with_grad: list[Tensor] = []
            grads: list[Tensor] = []
            exp_avgs: list[Tensor] = []
            exp_infs: list[Tensor] = []
            state_steps: list[Tensor] = []
            beta1, beta2 = group["betas"]
            self._init_group(group, params_with_grad, grads, exp_avgs, exp_infs, state_steps)
            changed = adamax(
                params_with_grad,
                grads,
                exp_avgs,
                exp_infs,
                state_steps,
                eps=group["eps"],
                beta1=beta1,
                beta2=beta2,
                lr=group["lr"],
                weight_decay=group["weight_decay"],
                foreach=group["foreach"],
                maximize=group["maximize"],
            )
            store_state(changed, self.state, params_with_grad, exp_avg=exp_avgs, exp_inf=exp_infs,
                            step=state_steps)
        return loss


def adamax(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_infs: list[Tensor],
    state_steps: list[Tensor],
    *,
    foreach: bool | None = None,
    eps: float,
    beta1: float,
    beta2: float,
    lr: float | Tensor,
    weight_decay: float,
    maximize: bool,
) -> bool | None:
    """The Adamax update on lists (functional form), in place."""
    impl = choose_impl("Adamax", "adamax", foreach, None, _single_tensor_adamax,
                       _multi_tensor_adamax)
    return impl(
        params,
        grads,
        exp_avgs,
        exp_infs,
        state_steps,
        eps=eps,
        beta1=beta1,
        beta2=beta2,
        lr=_to_scalar(lr),
        weight_decay=weight_decay,
        maximize=maximize,
    )


def _update(param, grad, exp_avg, exp_inf, step_t, *, eps, beta1, beta2, lr, weight_decay,
            maximize) -> None:
    if maximize:
        grad = grad.neg()
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)
    lerp_(exp_avg, grad, 1 - beta1)
    et.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
    clr = lr / (1 - beta1 ** step_t.item())
    addcdiv_(param, exp_avg, exp_inf, -clr)


def _single_tensor_adamax(params, grads, exp_avgs, exp_infs, state_steps, **hyper) -> None:
    for param, grad, exp_avg, exp_inf, step_t in zip(
        params, grads, exp_avgs, exp_infs, state_steps
    ):
        step_t.add_(1)
        _update(param, grad, exp_avg, exp_inf, step_t, **hyper)


_multi_tensor_adamax = multi_tensor(_single_tensor_adamax, scalars=(2,))
