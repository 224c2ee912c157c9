"""RAdam: Adam with a rectified adaptive learning rate (and RAdamW, its decoupled weight
decay form)."""

from __future__ import annotations

import ember_tensor as et

from ._common import choose_impl, multi_tensor, new_step, store_state
from ._grad_mode import grad_disabled
from ._ops import addcmul_, lerp_
from .optimizer import Optimizer, _check_betas, _check_lr, _reject_differentiable, _to_scalar

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
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _reject_differentiable("RAdam", differentiable)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    _setstate_defaults = {
        "foreach": None, "maximize": False, "differentiable": False,
        "decoupled_weight_decay": False, "capturable": False,
    }
    _scalar_state = ("step",)

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["exp_avg"] = et.zeros_like(p)
                state["exp_avg_sq"] = et.zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
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
            exp_avg_sqs: list[Tensor] = []
            state_steps: list[Tensor] = []
            beta1, beta2 = group["betas"]
            self._init_group(group, params_with_grad, grads, exp_avgs, exp_avg_sqs,
                             state_steps)
            changed = radam(
                params_with_grad,
                grads,
                exp_avgs,
                exp_avg_sqs,
                state_steps,
                beta1=beta1,
                beta2=beta2,
                lr=group["lr"],
                weight_decay=group["weight_decay"],
                eps=group["eps"],
                maximize=group["maximize"],
                foreach=group["foreach"],
                decoupled_weight_decay=group["decoupled_weight_decay"],
            )
            store_state(changed, self.state, params_with_grad, exp_avg=exp_avgs,
                            exp_avg_sq=exp_avg_sqs, step=state_steps)
        return loss


def radam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor],
    *,
    foreach: bool | None = None,
    decoupled_weight_decay: bool = False,
    beta1: float,
    beta2: float,
    lr: float | Tensor,
    weight_decay: float,
    eps: float,
    maximize: bool,
) -> bool | None:
    """The RAdam update on lists (functional form), in place."""
    impl = choose_impl("RAdam", "radam", foreach, None, _single_tensor_radam,
                       _multi_tensor_radam)
    return impl(
        params,
        grads,
        exp_avgs,
        exp_avg_sqs,
        state_steps,
        beta1=beta1,
        beta2=beta2,
        lr=_to_scalar(lr),
        weight_decay=weight_decay,
        eps=eps,
        maximize=maximize,
        decoupled_weight_decay=decoupled_weight_decay,
    )


def _apply(param, exp_avg, exp_avg_sq, step, *, beta1, beta2, lr, eps) -> None:
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    corrected = exp_avg.div(bias_correction1)
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
    if rho_t > 5.0:
        rect = (
            (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
        ) ** 0.5
        # PyTorch evaluates number / tensor as reciprocal(tensor) * number
        adaptive = exp_avg_sq.sqrt().add_(eps).reciprocal_().mul_(bias_correction2**0.5)
        param.add_(corrected.mul_(lr).mul_(adaptive).mul_(rect), alpha=-1.0)
    else:
        param.add_(corrected.mul_(lr), alpha=-1.0)


def _single_tensor_radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, beta1, beta2,
                         lr, weight_decay, eps, maximize, decoupled_weight_decay) -> None:
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else grads[i].neg()
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        step_t = state_steps[i]
        step_t.add_(1)
        step = step_t.item()
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq.mul_(beta2)
        addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
        _apply(param, exp_avg, exp_avg_sq, step, beta1=beta1, beta2=beta2, lr=lr, eps=eps)


_multi_tensor_radam = multi_tensor(_single_tensor_radam, scalars=(2,))
