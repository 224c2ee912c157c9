"""NAdam: Adam with Nesterov momentum (and NAdamW, its decoupled weight decay form)."""

from __future__ import annotations

import ember_tensor as et

from ._common import choose_impl, multi_tensor, new_step, store_state
from ._grad_mode import grad_disabled
from ._ops import addcdiv_, addcmul_, lerp_
from .optimizer import (
    Optimizer,
    _check_betas,
    _check_lr,
    _reject_differentiable,
    _scalar_dtype,
    _to_scalar,
)

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
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        _reject_differentiable("NAdam", differentiable)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    _setstate_defaults = {
        "maximize": False, "foreach": None, "capturable": False, "differentiable": False,
        "decoupled_weight_decay": False,
    }
    _scalar_state = ("step", "mu_product")

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs,
                    mu_products, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["mu_product"] = et.tensor(1.0, dtype=_scalar_dtype())
                state["exp_avg"] = et.zeros_like(p)
                state["exp_avg_sq"] = et.zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            mu_products.append(state["mu_product"])
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
            mu_products: list[Tensor] = []
            state_steps: list[Tensor] = []
            beta1, beta2 = group["betas"]
            self._init_group(group, params_with_grad, grads, exp_avgs, exp_avg_sqs,
                             mu_products, state_steps)
            changed = nadam(
                params_with_grad,
                grads,
                exp_avgs,
                exp_avg_sqs,
                mu_products,
                state_steps,
                beta1=beta1,
                beta2=beta2,
                lr=group["lr"],
                weight_decay=group["weight_decay"],
                momentum_decay=group["momentum_decay"],
                eps=group["eps"],
                maximize=group["maximize"],
                decoupled_weight_decay=group["decoupled_weight_decay"],
                foreach=group["foreach"],
            )
            store_state(changed, self.state, params_with_grad, exp_avg=exp_avgs,
                            exp_avg_sq=exp_avg_sqs, mu_product=mu_products, step=state_steps)
        return loss


def nadam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    mu_products: list[Tensor],
    state_steps: list[Tensor],
    *,
    foreach: bool | None = None,
    decoupled_weight_decay: bool = False,
    beta1: float,
    beta2: float,
    lr: float | Tensor,
    weight_decay: float,
    momentum_decay: float,
    eps: float,
    maximize: bool,
) -> bool | None:
    """The NAdam update on lists (functional form), in place."""
    impl = choose_impl("NAdam", "nadam", foreach, None, _single_tensor_nadam,
                       _multi_tensor_nadam)
    return impl(
        params,
        grads,
        exp_avgs,
        exp_avg_sqs,
        mu_products,
        state_steps,
        beta1=beta1,
        beta2=beta2,
        lr=_to_scalar(lr),
        weight_decay=weight_decay,
        momentum_decay=momentum_decay,
        eps=eps,
        maximize=maximize,
        decoupled_weight_decay=decoupled_weight_decay,
    )


def _single_tensor_nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, *,
                         beta1, beta2, lr, weight_decay, momentum_decay, eps, maximize,
                         decoupled_weight_decay) -> None:
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else grads[i].neg()
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        mu_product = mu_products[i]
        step_t = state_steps[i]
        step_t.add_(1)
        step = step_t.item()
        bias_correction2 = 1 - beta2**step
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product.mul_(mu)
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq.mul_(beta2)
        addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt_()
        prod = mu_product.item()
        prod_next = prod * mu_next
        denom.add_(eps)
        addcdiv_(param, grad, denom, -lr * (1.0 - mu) / (1.0 - prod))
        addcdiv_(param, exp_avg, denom, (-lr * mu_next) / (1.0 - prod_next))


_multi_tensor_nadam = multi_tensor(_single_tensor_nadam, scalars=(2, 3))
