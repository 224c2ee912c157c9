"""RMSprop, optionally centered and with momentum."""

from __future__ import annotations

import ember_tensor as et

from ._common import choose_impl, multi_tensor, new_step, store_state
from ._grad_mode import grad_disabled
from ._ops import addcdiv_, addcmul_, lerp_
from .optimizer import Optimizer, _check_lr, _reject_differentiable, _to_scalar

__all__ = ["RMSprop", "rmsprop"]

Tensor = et.Tensor


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture notes), optionally centered (Graves, 2013).

    For each parameter ``p`` with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p               (when weight_decay != 0)
        v = alpha * v + (1 - alpha) * g * g
        a = alpha * a + (1 - alpha) * g        (centered)
        d = sqrt(v - a * a) + eps if centered else sqrt(v) + eps
        b = momentum * b + g / d;  p = p - lr * b      (when momentum > 0)
        p = p - lr * g / d                             (otherwise)

    Arguments, defaults (``lr=1e-2``, ``alpha=0.99``) and errors are PyTorch's;
    ``capturable`` is accepted and has no effect. State per parameter: ``step``,
    ``square_avg``, ``momentum_buffer`` (momentum > 0), ``grad_avg`` (centered).
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        _reject_differentiable("RMSprop", differentiable)
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    _setstate_defaults = {
        "momentum": 0, "centered": False, "foreach": None, "maximize": False,
        "differentiable": False, "capturable": False,
    }
    _scalar_state = ("step",)

    def _init_group(self, group, params_with_grad, grads, square_avgs, momentum_buffer_list,
                    grad_avgs, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["square_avg"] = et.zeros_like(p)
                if group["momentum"] > 0:
                    state["momentum_buffer"] = et.zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = et.zeros_like(p)
            square_avgs.append(state["square_avg"])
            state_steps.append(state["step"])
            if group["momentum"] > 0:
                momentum_buffer_list.append(state["momentum_buffer"])
            if group["centered"]:
                grad_avgs.append(state["grad_avg"])

    @grad_disabled
    def step(self, closure=None):
        """Performs one step; ``closure`` (optional) re-evaluates the loss, which is
        returned."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params_with_grad: list[Tensor] = []
            grads: list[Tensor] = []
            square_avgs: list[Tensor] = []
            grad_avgs: list[Tensor] = []
            momentum_buffer_list: list[Tensor] = []
            state_steps: list[Tensor] = []
            self._init_group(group, params_with_grad, grads, square_avgs,
                             momentum_buffer_list, grad_avgs, state_steps)
            changed = rmsprop(
                params_with_grad,
                grads,
                square_avgs,
                grad_avgs,
                momentum_buffer_list,
                state_steps,
                lr=group["lr"],
                alpha=group["alpha"],
                eps=group["eps"],
                weight_decay=group["weight_decay"],
                momentum=group["momentum"],
                centered=group["centered"],
                foreach=group["foreach"],
                maximize=group["maximize"],
            )
            store_state(changed, self.state, params_with_grad, square_avg=square_avgs,
                            grad_avg=grad_avgs, momentum_buffer=momentum_buffer_list,
                            step=state_steps)
        return loss


def rmsprop(
    params: list[Tensor],
    grads: list[Tensor],
    square_avgs: list[Tensor],
    grad_avgs: list[Tensor],
    momentum_buffer_list: list[Tensor],
    state_steps: list[Tensor],
    *,
    foreach: bool | None = None,
    maximize: bool = False,
    lr: float | Tensor,
    alpha: float,
    eps: float,
    weight_decay: float,
    momentum: float,
    centered: bool,
) -> bool | None:
    """The RMSprop update on lists (functional form), in place."""
    impl = choose_impl("RMSprop", "rmsprop", foreach, None, _single_tensor_rmsprop,
                       _multi_tensor_rmsprop)
    return impl(
        params,
        grads,
        square_avgs,
        grad_avgs,
        momentum_buffer_list,
        state_steps,
        lr=_to_scalar(lr),
        alpha=alpha,
        eps=eps,
        weight_decay=weight_decay,
        momentum=momentum,
        centered=centered,
        maximize=maximize,
    )


def _update(param, grad, square_avg, grad_avg, buf, *, lr, alpha, eps, weight_decay,
            momentum, centered) -> None:
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)
    square_avg.mul_(alpha)
    addcmul_(square_avg, grad, grad, 1 - alpha)
    if centered:
        lerp_(grad_avg, grad, 1 - alpha)
        avg = square_avg.clone()
        addcmul_(avg, grad_avg, grad_avg, -1)
        avg.sqrt_()
    else:
        avg = square_avg.sqrt()
    avg.add_(eps)
    if momentum > 0:
        buf.mul_(momentum)
        addcdiv_(buf, grad, avg)
        param.add_(buf, alpha=-lr)
    else:
        addcdiv_(param, grad, avg, -lr)


def _single_tensor_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list,
                           state_steps, *, maximize, **hyper) -> None:
    for i, param in enumerate(params):
        state_steps[i].add_(1)
        grad = grads[i] if not maximize else grads[i].neg()
        _update(param, grad, square_avgs[i], grad_avgs[i] if hyper["centered"] else None,
                momentum_buffer_list[i] if hyper["momentum"] > 0 else None, **hyper)


_multi_tensor_rmsprop = multi_tensor(_single_tensor_rmsprop, scalars=(3,))
