"""Adagrad."""

from __future__ import annotations

import ember_tensor as et

from . import _fused
from ._common import choose_impl, multi_tensor, new_step, store_state
from ._grad_mode import grad_disabled
from ._ops import addcdiv_, addcmul_
from .optimizer import (
    Optimizer,
    _check_fused_flags,
    _check_lr,
    _reject_differentiable,
    _to_scalar,
)

__all__ = ["Adagrad", "adagrad"]

Tensor = et.Tensor


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011).

    For each parameter ``p`` with gradient ``g`` (negated when ``maximize``), at step
    ``t``::

        g = g + weight_decay * p              (when weight_decay != 0)
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g                         (s starts at initial_accumulator_value)
        p = p - clr * g / (sqrt(s) + eps)

    Arguments, defaults (``lr=1e-2``, ``eps=1e-10``) and errors are PyTorch's. As in
    PyTorch, the state (``step``, ``sum``) is created for every parameter when the
    optimizer is. ``fused=True`` needs a registered fused kernel (none yet:
    ``NotImplementedError``). Ember has no sparse gradients.
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _reject_differentiable("Adagrad", differentiable)
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        if fused:
            _check_fused_flags("Adagrad", foreach, fused, differentiable)
            _fused.fused_kernel("adagrad", "Adagrad")
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = new_step()
                state["sum"] = et.full_like(p, initial_accumulator_value)

    _setstate_defaults = {
        "foreach": None, "maximize": False, "differentiable": False, "fused": None,
    }
    _scalar_state = ("step",)

    def share_memory(self) -> None:
        """Moves the ``sum`` accumulators to shared memory (for multiprocess training),
        where the core supports it."""
        for group in self.param_groups:
            for p in group["params"]:
                state_sum = self.state[p]["sum"]
                share = getattr(state_sum, "share_memory_", None)
                if share is None:
                    raise NotImplementedError(
                        "Adagrad.share_memory: this ember_tensor has no share_memory_ "
                        "(shared-memory tensors come with ember-mp)"
                    )
                share()

    def _init_group(self, group, params_with_grad, grads, state_sums, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:  # a parameter added after the optimizer was created
                state["step"] = new_step()
                state["sum"] = et.full_like(p, self.defaults["initial_accumulator_value"])
            state_sums.append(state["sum"])
            state_steps.append(state["step"])

    @grad_disabled
    def step(self, closure=None):
        """Performs one step; ``closure`` (optional) re-evaluates the loss, which is
        returned."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params_with_grad: list[Tensor] = []
            grads: list[Tensor] = []
            state_sums: list[Tensor] = []
            state_steps: list[Tensor] = []
            self._init_group(group, params_with_grad, grads, state_sums, state_steps)
            changed = adagrad(
                params_with_grad,
                grads,
                state_sums,
                state_steps,
                lr=group["lr"],
                weight_decay=group["weight_decay"],
                lr_decay=group["lr_decay"],
                eps=group["eps"],
                foreach=group["foreach"],
                maximize=group["maximize"],
                fused=group["fused"],
            )
            store_state(changed, self.state, params_with_grad, sum=state_sums, step=state_steps)
        return loss


def adagrad(
    params: list[Tensor],
    grads: list[Tensor],
    state_sums: list[Tensor],
    state_steps: list[Tensor],
    *,
    fused: bool | None = None,
    foreach: bool | None = None,
    lr: float | Tensor,
    weight_decay: float,
    lr_decay: float,
    eps: float,
    maximize: bool,
) -> bool | None:
    """The Adagrad update on lists (functional form), in place."""
    impl = choose_impl("Adagrad", "adagrad", foreach, fused, _single_tensor_adagrad,
                       _multi_tensor_adagrad)
    return impl(
        params,
        grads,
        state_sums,
        state_steps,
        lr=_to_scalar(lr),
        weight_decay=weight_decay,
        lr_decay=lr_decay,
        eps=eps,
        maximize=maximize,
    )


def _update(param, grad, state_sum, step, *, lr, weight_decay, lr_decay, eps) -> None:
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)
    clr = lr / (1 + (step - 1) * lr_decay)
    addcmul_(state_sum, grad, grad, 1)
    std = state_sum.sqrt().add_(eps)
    addcdiv_(param, grad, std, -clr)


def _single_tensor_adagrad(params, grads, state_sums, state_steps, *, maximize,
                           **hyper) -> None:
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t.add_(1)
        _update(param, grad if not maximize else grad.neg(), state_sum, step_t.item(),
                **hyper)


_multi_tensor_adagrad = multi_tensor(_single_tensor_adagrad, scalars=(1,))
