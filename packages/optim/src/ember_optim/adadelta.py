"""Adadelta."""

from __future__ import annotations

import ember_tensor as et

from ._common import choose_impl, multi_tensor, new_step, store_state
from ._grad_mode import grad_disabled
from ._ops import addcmul_
from .optimizer import Optimizer, _check_lr, _reject_differentiable, _to_scalar

__all__ = ["Adadelta", "adadelta"]

Tensor = et.Tensor


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012).

    For each parameter ``p`` with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p                       (when weight_decay != 0)
        v = rho * v + (1 - rho) * g * g
        d = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * d * d
        p = p - lr * d

    Arguments, defaults (``lr=1.0``, ``rho=0.9``, ``eps=1e-6``) and errors are PyTorch's;
    ``capturable`` is accepted and has no effect. State per parameter: ``step``,
    ``square_avg``, ``acc_delta``.
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _reject_differentiable("Adadelta", differentiable)
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    _setstate_defaults = {
        "foreach": None, "maximize": False, "differentiable": False, "capturable": False,
    }
    _scalar_state = ("step",)

    def _init_group(self, group, params_with_grad, grads, square_avgs, acc_deltas,
                    state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["square_avg"] = et.zeros_like(p)
                state["acc_delta"] = et.zeros_like(p)
            square_avgs.append(state["square_avg"])
            acc_deltas.append(state["acc_delta"])
            state_steps.append(state["step"])

    @grad_disabled
    def step(self, closure=None):
        """Performs one step; ``closure`` (optional) re-evaluates the loss, which is
        returned."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params_with_grad: list[Tensor] = []
            grads: list[Tensor] = []
            square_avgs: list[Tensor] = []
            acc_deltas: list[Tensor] = []
            state_steps: list[Tensor] = []
            self._init_group(group, params_with_grad, grads, square_avgs, acc_deltas,
                             state_steps)
            changed = adadelta(
                params_with_grad,
                grads,
                square_avgs,
                acc_deltas,
                state_steps,
                lr=group["lr"],
                rho=group["rho"],
                eps=group["eps"],
                weight_decay=group["weight_decay"],
                foreach=group["foreach"],
                maximize=group["maximize"],
            )
            store_state(changed, self.state, params_with_grad, square_avg=square_avgs,
                            acc_delta=acc_deltas, step=state_steps)
        return loss


def adadelta(
    params: list[Tensor],
    grads: list[Tensor],
    square_avgs: list[Tensor],
    acc_deltas: list[Tensor],
    state_steps: list[Tensor],
    *,
    foreach: bool | None = None,
    maximize: bool = False,
    lr: float | Tensor,
    rho: float,
    eps: float,
    weight_decay: float,
) -> bool | None:
    """The Adadelta update on lists (functional form), in place."""
    impl = choose_impl("Adadelta", "adadelta", foreach, None, _single_tensor_adadelta,
                       _multi_tensor_adadelta)
    return impl(
        params,
        grads,
        square_avgs,
        acc_deltas,
        state_steps,
        lr=_to_scalar(lr),
        rho=rho,
        eps=eps,
        weight_decay=weight_decay,
        maximize=maximize,
    )


def _update(param, grad, square_avg, acc_delta, *, lr, rho, eps, weight_decay) -> None:
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)
    square_avg.mul_(rho)
    addcmul_(square_avg, grad, grad, 1 - rho)
    std = square_avg.add(eps).sqrt_()
    delta = acc_delta.add(eps).sqrt_()
    delta.div_(std).mul_(grad)
    acc_delta.mul_(rho)
    addcmul_(acc_delta, delta, delta, 1 - rho)
    param.add_(delta, alpha=-lr)


def _single_tensor_adadelta(params, grads, square_avgs, acc_deltas, state_steps, *,
                            maximize, **hyper) -> None:
    for param, grad, square_avg, acc_delta, step in zip(
        params, grads, square_avgs, acc_deltas, state_steps
    ):
        step.add_(1)
        _update(param, grad if not maximize else grad.neg(), square_avg, acc_delta, **hyper)


_multi_tensor_adadelta = multi_tensor(_single_tensor_adadelta, scalars=(2,))
