"""Stochastic gradient descent, with momentum, dampening, Nesterov momentum, weight decay
and maximisation."""

from __future__ import annotations

import ember_tensor as et

from ._common import functional_form
from .optimizer import Optimizer

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

    _checks = ("lr",)
    _algorithm = "sgd"
    _state_keys = ("momentum_buffer",)
    _optional_state = {"momentum_buffer": "momentum"}
    _setstate_defaults = {
        "nesterov": False, "maximize": False, "foreach": None, "differentiable": False,
        "fused": False,
    }

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
        super().__init__(params, {
            "lr": lr, "momentum": momentum, "dampening": dampening,
            "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
            "foreach": foreach, "differentiable": differentiable, "fused": fused,
        })

    def _check_defaults(self, defaults) -> None:
        super()._check_defaults(defaults)
        # PyTorch's SGD compares with `<` (a NaN passes), unlike the shared checks
        if defaults["momentum"] < 0.0:
            raise ValueError(f"Invalid momentum value: {defaults['momentum']}")
        if defaults["weight_decay"] < 0.0:
            raise ValueError(f"Invalid weight_decay value: {defaults['weight_decay']}")
        if defaults["nesterov"] and (defaults["momentum"] <= 0 or defaults["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")

    @staticmethod
    def _update(param, grad, state, h) -> None:
        momentum = h.momentum
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.detach().clone()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - h.dampening)
            grad = grad.add(buf, alpha=momentum) if h.nesterov else buf
        param.add_(grad, alpha=-h.lr)


sgd = functional_form(SGD, "sgd")
