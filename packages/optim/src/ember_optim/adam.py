"""Adam and AdamW (Adam with decoupled weight decay), with AMSGrad and maximisation."""

from __future__ import annotations

import ember_tensor as et

from . import _fused
from ._common import choose_impl, multi_tensor, new_step, store_state
from ._grad_mode import grad_disabled
from ._ops import addcdiv_, addcmul_, lerp_
from .optimizer import (
    Optimizer,
    _check_fused_flags,
    _check_lr,
    _reject_differentiable,
    _to_scalar,
)

__all__ = ["Adam", "AdamW", "adam", "adamw"]

Tensor = et.Tensor


def _check_adam_args(lr, betas, eps, weight_decay, foreach, capturable) -> None:
    if isinstance(lr, Tensor):
        if foreach and not capturable:
            raise ValueError(
                "lr as a Tensor is not supported for capturable=False and foreach=True"
            )
    _check_lr(lr)
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    if not (
        (isinstance(betas[0], float) and isinstance(betas[1], float))
        or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))
    ):
        raise ValueError("betas must be either both floats or both Tensors")
    for index in (0, 1):
        if isinstance(betas[index], Tensor):
            if not capturable and foreach:
                raise ValueError(
                    f"betas[{index}] as a Tensor is not supported for capturable=False and "
                    "foreach=True"
                )
            if betas[index].numel() != 1:
                raise ValueError(f"Tensor betas[{index}] must be 1-element")


class Adam(Optimizer):
    """Adam (Kingma and Ba, 2015), optionally AMSGrad (Reddi et al., 2018).

    For each parameter ``p`` with gradient ``g`` (negated when ``maximize``), at step
    ``t``::

        p = p * (1 - lr * weight_decay)     (decoupled_weight_decay; AdamW)
        g = g + weight_decay * p            (otherwise, when weight_decay != 0)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)               (amsgrad; v_max replaces v below)
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Arguments, defaults and errors are PyTorch's. ``capturable`` is accepted and has no
    effect (Ember has no CUDA graphs). The step runs the core's fused kernel
    (``fused=True``, and by default when the tensors are contiguous float32/float64 CPU
    tensors), the multi-tensor path (``foreach=True``) or one op per tensor
    (``foreach=False``): the same result bit for bit. State per parameter: ``step`` (a
    0-d float32 tensor), ``exp_avg``, ``exp_avg_sq`` and, with ``amsgrad``, ``max_exp_avg_sq``.
    """

    _name = "Adam"

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-3,
        betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        _check_adam_args(lr, betas, eps, weight_decay, foreach, capturable)
        _reject_differentiable(self._name, differentiable)
        betas = tuple(_to_scalar(b) if isinstance(b, Tensor) else b for b in betas)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        if fused:
            _check_fused_flags(self._name, foreach, fused, differentiable)
            _fused.fused_kernel("adam", self._name)

    _setstate_defaults = {
        "amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
        "differentiable": False, "decoupled_weight_decay": False, "fused": None,
    }
    _scalar_state = ("step",)

    def _init_group(
        self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
        state_steps,
    ) -> None:
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
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = et.zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            if group["amsgrad"]:
                max_exp_avg_sqs.append(state["max_exp_avg_sq"])
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
            max_exp_avg_sqs: list[Tensor] = []
            state_steps: list[Tensor] = []
            beta1, beta2 = group["betas"]
            self._init_group(
                group, params_with_grad, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                state_steps,
            )
            changed = adam(
                params_with_grad,
                grads,
                exp_avgs,
                exp_avg_sqs,
                max_exp_avg_sqs,
                state_steps,
                foreach=group["foreach"],
                fused=group["fused"],
                amsgrad=group["amsgrad"],
                beta1=beta1,
                beta2=beta2,
                lr=group["lr"],
                weight_decay=group["weight_decay"],
                eps=group["eps"],
                maximize=group["maximize"],
                decoupled_weight_decay=group["decoupled_weight_decay"],
                _name=self._name,
            )
            store_state(changed, self.state, params_with_grad, exp_avg=exp_avgs,
                            exp_avg_sq=exp_avg_sqs, max_exp_avg_sq=max_exp_avg_sqs,
                            step=state_steps)
        return loss


class AdamW(Adam):
    """AdamW (Loshchilov and Hutter, 2019): Adam whose weight decay scales the parameters
    directly (``p = p * (1 - lr * weight_decay)``) instead of entering the moments.
    ``weight_decay`` defaults to ``1e-2``; otherwise as ``Adam`` (PyTorch's arguments)."""

    _name = "AdamW"

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-3,
        betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


def adam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    max_exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor],
    *,
    foreach: bool | None = None,
    fused: bool | None = None,
    amsgrad: bool,
    beta1: float,
    beta2: float,
    lr: float | Tensor,
    weight_decay: float,
    eps: float,
    maximize: bool,
    decoupled_weight_decay: bool = False,
    _name: str = "Adam",
) -> bool | None:
    """The Adam update on lists (functional form), in place. This signature, less
    ``foreach``/``fused``/``_name``, is what a fused kernel for ``"adam"`` takes."""
    impl = choose_impl(_name, "adam", foreach, fused, _single_tensor_adam, _multi_tensor_adam)
    return impl(
        params,
        grads,
        exp_avgs,
        exp_avg_sqs,
        max_exp_avg_sqs,
        state_steps,
        amsgrad=amsgrad,
        beta1=_to_scalar(beta1),
        beta2=_to_scalar(beta2),
        lr=_to_scalar(lr),
        weight_decay=weight_decay,
        eps=eps,
        maximize=maximize,
        decoupled_weight_decay=decoupled_weight_decay,
    )


def adamw(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, **kwargs):
    """The AdamW update on lists: ``adam`` with ``decoupled_weight_decay=True``."""
    kwargs["decoupled_weight_decay"] = True
    kwargs.setdefault("_name", "AdamW")
    return adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, **kwargs)


def _single_tensor_adam(
    params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, amsgrad, beta1,
    beta2, lr, weight_decay, eps, maximize, decoupled_weight_decay,
) -> None:
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else grads[i].neg()
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        step_t = state_steps[i]
        step_t.add_(1)

        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        # one scratch tensor holds each temporary in turn (fewer allocations)
        scratch = et.empty_like(param)
        lerp_(exp_avg, grad, 1 - beta1, scratch=scratch)
        exp_avg_sq.mul_(beta2)
        addcmul_(exp_avg_sq, grad, grad, 1 - beta2, scratch=scratch)

        step = step_t.item()
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2**0.5

        if amsgrad:
            et.maximum(max_exp_avg_sqs[i], exp_avg_sq, out=max_exp_avg_sqs[i])
            denom = max_exp_avg_sqs[i].sqrt()
        else:
            denom = exp_avg_sq.sqrt()
        denom.div_(bias_correction2_sqrt).add_(eps)
        addcdiv_(param, exp_avg, denom, -step_size, scratch=scratch)


_multi_tensor_adam = multi_tensor(_single_tensor_adam, scalars=(3,))
