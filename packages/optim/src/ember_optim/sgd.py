"""Stochastic gradient descent, with momentum, dampening, Nesterov momentum, weight decay
and maximisation."""

from __future__ import annotations

import ember_tensor as et

from . import _fused
from ._common import choose_impl, multi_tensor
from ._grad_mode import grad_disabled
from .optimizer import (
    Optimizer,
    _check_fused_flags,
    _check_lr,
    _reject_differentiable,
    _to_scalar,
)

__all__ = ["SGD", "sgd"]

Tensor = et.Tensor


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum).

    For each parameter ``p`` with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p                        (when weight_decay != 0)
        b = g            on the first step, then
        b = momentum * b + (1 - dampening) * g          (when momentum != 0)
        g = g + momentum * b if nesterov else b
        p = p - lr * g

    Arguments, defaults and errors are PyTorch's (``lr=1e-3``). The step runs the
    core's fused kernel (``fused=True``, and by default when the tensors are contiguous
    float32/float64 CPU tensors), the multi-tensor path (``foreach=True``) or one op per
    tensor (``foreach=False``): the same result bit for bit. State per parameter:
    ``momentum_buffer`` (when momentum is used; ``None`` until the first step).
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float | Tensor = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _reject_differentiable("SGD", differentiable)
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        if fused:
            _check_fused_flags("SGD", foreach, fused, differentiable)
            _fused.fused_kernel("sgd", "SGD")

    _setstate_defaults = {
        "nesterov": False, "maximize": False, "foreach": None, "differentiable": False,
        "fused": False,
    }

    def _init_group(self, group, params, grads, momentum_buffer_list) -> None:
        for p in group["params"]:
            if p.grad is not None:
                params.append(p)
                grads.append(p.grad)
                if group["momentum"] != 0:
                    momentum_buffer_list.append(self.state[p].get("momentum_buffer"))

    @grad_disabled
    def step(self, closure=None):
        """Performs one step; ``closure`` (optional) re-evaluates the loss, which is
        returned."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            params: list[Tensor] = []
            grads: list[Tensor] = []
            momentum_buffer_list: list[Tensor | None] = []
            self._init_group(group, params, grads, momentum_buffer_list)
            sgd(
                params,
                grads,
                momentum_buffer_list,
                weight_decay=group["weight_decay"],
                momentum=group["momentum"],
                lr=group["lr"],
                dampening=group["dampening"],
                nesterov=group["nesterov"],
                maximize=group["maximize"],
                foreach=group["foreach"],
                fused=group["fused"],
            )
            if group["momentum"] != 0:
                for p, buf in zip(params, momentum_buffer_list):
                    self.state[p]["momentum_buffer"] = buf
        return loss


def sgd(
    params: list[Tensor],
    d_p_list: list[Tensor],
    momentum_buffer_list: list[Tensor | None],
    *,
    foreach: bool | None = None,
    fused: bool | None = None,
    weight_decay: float,
    momentum: float,
    lr: float,
    dampening: float,
    nesterov: bool,
    maximize: bool,
) -> bool | None:
    """The SGD update on lists (functional form): updates ``params`` in place and fills
    the ``None`` entries of ``momentum_buffer_list`` with new buffers."""
    impl = choose_impl("SGD", "sgd", foreach, fused, _single_tensor_sgd, _multi_tensor_sgd)
    return impl(
        params,
        d_p_list,
        momentum_buffer_list,
        weight_decay=_to_scalar(weight_decay),
        momentum=momentum,
        lr=_to_scalar(lr),
        dampening=dampening,
        nesterov=nesterov,
        maximize=maximize,
    )


def _single_tensor_sgd(
    params, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov,
    maximize,
) -> None:
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else grads[i].neg()
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = grad.detach().clone()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        param.add_(grad, alpha=-lr)


_multi_tensor_sgd = multi_tensor(_single_tensor_sgd, scalars=())
