"""Adam and AdamW (Adam with decoupled weight decay), with AMSGrad and maximisation."""

from __future__ import annotations

import functools

import ember_tensor as et

from . import _checks
from ._common import _to_scalar, functional_form, new_step
from ._ops import addcdiv_, addcmul_, lerp_
from .optimizer import Optimizer

__all__ = ["Adam", "AdamW", "adam", "adamw"]

Tensor = et.Tensor


def _check_tensor_options(lr, betas, foreach, capturable) -> None:
    """PyTorch's checks of a tensor ``lr`` and tensor ``betas`` (Adam's alone)."""
    if isinstance(lr, Tensor) and foreach and not capturable:
        raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
    _checks.check_betas(betas)
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

    _checks = ("lr", "eps", "weight_decay")  # betas: _check_tensor_options
    _algorithm = "adam"
    _state_keys = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step")
    _optional_state = {"max_exp_avg_sq": "amsgrad"}
    _scalar_state = ("step",)
    _setstate_defaults = {
        "amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
        "differentiable": False, "decoupled_weight_decay": False, "fused": None,
    }

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
        _check_tensor_options(lr, betas, foreach, capturable)
        super().__init__(params, {
            "lr": lr, "betas": tuple(_to_scalar(b) for b in betas), "eps": eps,
            "weight_decay": weight_decay, "amsgrad": amsgrad, "maximize": maximize,
            "foreach": foreach, "capturable": capturable, "differentiable": differentiable,
            "fused": fused, "decoupled_weight_decay": decoupled_weight_decay,
        })

    def _init_state(self, state, param, group) -> None:
        state["step"] = new_step()
        state["exp_avg"] = et.zeros_like(param)
        state["exp_avg_sq"] = et.zeros_like(param)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = et.zeros_like(param)

    @staticmethod
    def _update(param, grad, state, h) -> None:
        beta1, beta2 = h.beta1, h.beta2
        exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
        step_t.add_(1)
        # one scratch tensor holds each temporary in turn (fewer allocations)
        scratch = et.empty_like(param)
        lerp_(exp_avg, grad, 1 - beta1, scratch=scratch)
        exp_avg_sq.mul_(beta2)
        addcmul_(exp_avg_sq, grad, grad, 1 - beta2, scratch=scratch)

        step = step_t.item()
        step_size = h.lr / (1 - beta1**step)
        bias_correction2_sqrt = (1 - beta2**step) ** 0.5
        if h.amsgrad:
            max_exp_avg_sq = state["max_exp_avg_sq"]
            et.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
            denom = max_exp_avg_sq.sqrt()
        else:
            denom = exp_avg_sq.sqrt()
        denom.div_(bias_correction2_sqrt).add_(h.eps)
        addcdiv_(param, exp_avg, denom, -step_size, scratch=scratch)


class AdamW(Adam):
    """AdamW (Loshchilov and Hutter, 2019): Adam whose weight decay scales the parameters
    directly (``p = p * (1 - lr * weight_decay)``) instead of entering the moments.
    ``weight_decay`` defaults to ``1e-2``; otherwise as ``Adam`` (PyTorch's arguments)."""

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
            params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
            maximize=maximize, capturable=capturable, differentiable=differentiable,
            fused=fused, decoupled_weight_decay=True,
        )

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


adam = functional_form(Adam, "adam")
adamw = functional_form(AdamW, "adamw", decoupled_weight_decay=True)
# the multi-tensor path alone (what a fused kernel may fall back on)
_multi_tensor_adam = functools.partial(adam, foreach=True)
