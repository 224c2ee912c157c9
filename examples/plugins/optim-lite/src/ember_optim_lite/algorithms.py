"""The first-order algorithms: SGD, Adam, AdamW, Adamax, NAdam, RAdam, RMSprop, Adagrad,
Adadelta and Lion, one parameter at a time with plain tensor ops (no fused or multi-tensor
kernels). Every update follows the algorithm box of PyTorch's documentation for the
optimizer of the same name; the state of a parameter has the same keys and meaning.
"""

from __future__ import annotations

import math

import ember_tensor as et

from . import _grad
from .optimizer import (
    Optimizer,
    call_closure,
    check_betas,
    check_eps,
    check_flags,
    check_lr,
    check_weight_decay,
    params_with_grad,
    step_counter,
)

__all__ = ["SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "Lion", "NAdam", "RAdam",
           "RMSprop"]


def _decay(p, g, group: dict, decoupled: bool = False):
    """Applies the group's weight decay: decoupled (shrinks ``p`` in place) or L2 (returns
    the gradient plus ``weight_decay * p``)."""
    wd = group["weight_decay"]
    if wd == 0:
        return g
    if decoupled:
        p.mul_(1.0 - group["lr"] * wd)
        return g
    return g.add(p, alpha=wd)


class SGD(Optimizer):
    """Stochastic gradient descent, with momentum, dampening, Nesterov momentum, weight
    decay and ``maximize``. State: ``momentum_buffer`` (when ``momentum != 0``), the
    gradient itself at the first step."""

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        check_weight_decay(weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_flags("SGD", differentiable, fused)
        super().__init__(params, {
            "lr": lr, "momentum": momentum, "dampening": dampening,
            "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
            "foreach": foreach, "differentiable": differentiable, "fused": fused})

    def step(self, closure=None):
        loss = call_closure(closure)
        with _grad.no_grad():
            for group in self.param_groups:
                momentum = group["momentum"]
                for p, g in params_with_grad(group):
                    g = _decay(p, g, group)
                    if momentum != 0:
                        state = self.state[p]
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = state["momentum_buffer"] = g.clone()
                        else:
                            buf.mul_(momentum).add_(g, alpha=1.0 - group["dampening"])
                        g = g.add(buf, alpha=momentum) if group["nesterov"] else buf
                    p.add_(g, alpha=-group["lr"])
        return loss


class Adam(Optimizer):
    """Adam (Kingma & Ba), with ``amsgrad`` (the running maximum of the second moment),
    L2 ``weight_decay`` or, with ``decoupled_weight_decay=True``, AdamW's decoupled decay.
    State: ``step`` (a float32 scalar tensor), ``exp_avg``, ``exp_avg_sq`` and, with
    ``amsgrad``, ``max_exp_avg_sq``."""

    _decoupled_default = False

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        check_lr(lr)
        check_eps(eps)
        check_betas(betas)
        check_weight_decay(weight_decay)
        check_flags(type(self).__name__, differentiable, fused)
        super().__init__(params, {
            "lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
            "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
            "capturable": capturable, "differentiable": differentiable, "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay})

    def step(self, closure=None):
        loss = call_closure(closure)
        with _grad.no_grad():
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                lr, eps = group["lr"], group["eps"]
                decoupled = group.get("decoupled_weight_decay", self._decoupled_default)
                for p, g in params_with_grad(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = et.tensor(0.0, dtype=et.float32)
                        state["exp_avg"] = et.zeros_like(p)
                        state["exp_avg_sq"] = et.zeros_like(p)
                        if group["amsgrad"]:
                            state["max_exp_avg_sq"] = et.zeros_like(p)
                    t = step_counter(state)
                    g = _decay(p, g, group, decoupled)
                    m, v = state["exp_avg"], state["exp_avg_sq"]
                    m.mul_(beta1).add_(g, alpha=1.0 - beta1)
                    v.mul_(beta2).add_(g.mul(g), alpha=1.0 - beta2)
                    if group["amsgrad"]:
                        vmax = state["max_exp_avg_sq"]
                        vmax.copy_(et.maximum(vmax, v))
                        v = vmax
                    denom = v.sqrt().div_(math.sqrt(1.0 - beta2**t)).add_(eps)
                    p.add_(m.div(denom), alpha=-lr / (1.0 - beta1**t))
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): ``p *= 1 - lr * weight_decay``
    before the Adam update. Default ``weight_decay=1e-2``."""

    _decoupled_default = True

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class Adamax(Optimizer):
    """Adamax: Adam with the infinity norm. State: ``step``, ``exp_avg``, ``exp_inf``."""

    def __init__(self, params, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        check_lr(lr)
        check_eps(eps)
        check_betas(betas)
        check_weight_decay(weight_decay)
        check_flags("Adamax", differentiable)
        super().__init__(params, {
            "lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable})

    def step(self, closure=None):
        loss = call_closure(closure)
        with _grad.no_grad():
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                for p, g in params_with_grad(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = et.tensor(0.0, dtype=et.float32)
                        state["exp_avg"] = et.zeros_like(p)
                        state["exp_inf"] = et.zeros_like(p)
                    t = step_counter(state)
                    g = _decay(p, g, group)
                    m, u = state["exp_avg"], state["exp_inf"]
                    m.mul_(beta1).add_(g, alpha=1.0 - beta1)
                    u.copy_(et.maximum(u.mul(beta2), g.abs().add_(group["eps"])))
                    p.add_(m.div(u), alpha=-group["lr"] / (1.0 - beta1**t))
        return loss


class NAdam(Optimizer):
    """Adam with Nesterov momentum (Dozat), with the momentum-decay schedule
    ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))``; L2 or decoupled weight
    decay. State: ``step``, ``mu_product`` (float32 scalar tensors), ``exp_avg``,
    ``exp_avg_sq``."""

    def __init__(self, params, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_lr(lr)
        check_eps(eps)
        check_betas(betas)
        check_weight_decay(weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        check_flags("NAdam", differentiable)
        super().__init__(params, {
            "lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
            "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "differentiable": differentiable})

    def step(self, closure=None):
        loss = call_closure(closure)
        with _grad.no_grad():
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                lr, psi = group["lr"], group["momentum_decay"]
                for p, g in params_with_grad(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = et.tensor(0.0, dtype=et.float32)
                        state["mu_product"] = et.tensor(1.0, dtype=et.float32)
                        state["exp_avg"] = et.zeros_like(p)
                        state["exp_avg_sq"] = et.zeros_like(p)
                    t = step_counter(state)
                    g = _decay(p, g, group, group["decoupled_weight_decay"])
                    mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * psi))
                    mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
                    mu_product = state["mu_product"].mul_(mu).item()
                    m, v = state["exp_avg"], state["exp_avg_sq"]
                    m.mul_(beta1).add_(g, alpha=1.0 - beta1)
                    v.mul_(beta2).add_(g.mul(g), alpha=1.0 - beta2)
                    denom = v.div(1.0 - beta2**t).sqrt_().add_(group["eps"])
                    p.add_(g.div(denom), alpha=-lr * (1.0 - mu) / (1.0 - mu_product))
                    p.add_(m.div(denom), alpha=-lr * mu_next / (1.0 - mu_product * mu_next))
        return loss


class RAdam(Optimizer):
    """Rectified Adam (Liu et al.): plain momentum SGD while the variance of the adaptive
    learning rate is intractable (``rho_t <= 5``), rectified Adam after. L2 or decoupled
    weight decay. State: ``step``, ``exp_avg``, ``exp_avg_sq``."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_lr(lr)
        check_eps(eps)
        check_betas(betas)
        check_weight_decay(weight_decay)
        check_flags("RAdam", differentiable)
        super().__init__(params, {
            "lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
            "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
            "foreach": foreach, "capturable": capturable, "differentiable": differentiable})

    def step(self, closure=None):
        loss = call_closure(closure)
        with _grad.no_grad():
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                lr = group["lr"]
                rho_inf = 2.0 / (1.0 - beta2) - 1.0
                for p, g in params_with_grad(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = et.tensor(0.0, dtype=et.float32)
                        state["exp_avg"] = et.zeros_like(p)
                        state["exp_avg_sq"] = et.zeros_like(p)
                    t = step_counter(state)
                    g = _decay(p, g, group, group["decoupled_weight_decay"])
                    m, v = state["exp_avg"], state["exp_avg_sq"]
                    m.mul_(beta1).add_(g, alpha=1.0 - beta1)
                    v.mul_(beta2).add_(g.mul(g), alpha=1.0 - beta2)
                    bc2 = 1.0 - beta2**t
                    m_hat = m.div(1.0 - beta1**t)
                    rho_t = rho_inf - 2.0 * t * beta2**t / bc2
                    if rho_t > 5.0:
                        rect = math.sqrt((rho_t - 4.0) * (rho_t - 2.0) * rho_inf
                                         / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t))
                        adaptive = v.sqrt().add_(group["eps"]).reciprocal_().mul_(math.sqrt(bc2))
                        p.add_(m_hat.mul_(lr).mul_(adaptive).mul_(rect), alpha=-1.0)
                    else:
                        p.add_(m_hat.mul_(lr), alpha=-1.0)
        return loss


class RMSprop(Optimizer):
    """RMSprop (Hinton), with ``centered`` (variance instead of the raw second moment),
    ``momentum`` and weight decay. State: ``step``, ``square_avg``, ``momentum_buffer``
    (when ``momentum > 0``), ``grad_avg`` (when ``centered``)."""

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_lr(lr)
        check_eps(eps)
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        check_weight_decay(weight_decay)
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        check_flags("RMSprop", differentiable)
        super().__init__(params, {
            "lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
            "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable})

    def step(self, closure=None):
        loss = call_closure(closure)
        with _grad.no_grad():
            for group in self.param_groups:
                alpha, momentum = group["alpha"], group["momentum"]
                for p, g in params_with_grad(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = et.tensor(0.0, dtype=et.float32)
                        state["square_avg"] = et.zeros_like(p)
                        if momentum > 0:
                            state["momentum_buffer"] = et.zeros_like(p)
                        if group["centered"]:
                            state["grad_avg"] = et.zeros_like(p)
                    step_counter(state)
                    g = _decay(p, g, group)
                    sq = state["square_avg"]
                    sq.mul_(alpha).add_(g.mul(g), alpha=1.0 - alpha)
                    if group["centered"]:
                        ga = state["grad_avg"]
                        ga.mul_(alpha).add_(g, alpha=1.0 - alpha)
                        avg = sq.sub(ga.mul(ga)).sqrt_()
                    else:
                        avg = sq.sqrt()
                    avg.add_(group["eps"])
                    if momentum > 0:
                        buf = state["momentum_buffer"]
                        buf.mul_(momentum).add_(g.div(avg))
                        p.add_(buf, alpha=-group["lr"])
                    else:
                        p.add_(g.div(avg), alpha=-group["lr"])
        return loss


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.), with ``lr_decay`` and weight decay. Its state is created
    for every parameter when the optimizer is built (as PyTorch's): ``step`` and ``sum``
    (starting at ``initial_accumulator_value``)."""

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10,
                 foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        check_weight_decay(weight_decay)
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        check_eps(eps)
        check_flags("Adagrad", differentiable, fused)
        super().__init__(params, {
            "lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "fused": fused})
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = et.tensor(0.0, dtype=et.float32)
                state["sum"] = et.full_like(p, group["initial_accumulator_value"])

    def step(self, closure=None):
        loss = call_closure(closure)
        with _grad.no_grad():
            for group in self.param_groups:
                for p, g in params_with_grad(group):
                    state = self.state[p]
                    if not state:  # a parameter of a group added after construction
                        state["step"] = et.tensor(0.0, dtype=et.float32)
                        state["sum"] = et.full_like(p, group["initial_accumulator_value"])
                    t = step_counter(state)
                    g = _decay(p, g, group)
                    clr = group["lr"] / (1.0 + (t - 1.0) * group["lr_decay"])
                    total = state["sum"]
                    total.add_(g.mul(g))
                    p.add_(g.div(total.sqrt().add_(group["eps"])), alpha=-clr)
        return loss


class Adadelta(Optimizer):
    """Adadelta (Zeiler), with weight decay. State: ``step``, ``square_avg``,
    ``acc_delta``."""

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_eps(eps)
        check_weight_decay(weight_decay)
        check_flags("Adadelta", differentiable)
        super().__init__(params, {
            "lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "capturable": capturable, "foreach": foreach,
            "differentiable": differentiable})

    def step(self, closure=None):
        loss = call_closure(closure)
        with _grad.no_grad():
            for group in self.param_groups:
                rho, eps = group["rho"], group["eps"]
                for p, g in params_with_grad(group):
                    state = self.state[p]
                    if not state:
                        state["step"] = et.tensor(0.0, dtype=et.float32)
                        state["square_avg"] = et.zeros_like(p)
                        state["acc_delta"] = et.zeros_like(p)
                    step_counter(state)
                    g = _decay(p, g, group)
                    sq, acc = state["square_avg"], state["acc_delta"]
                    sq.mul_(rho).add_(g.mul(g), alpha=1.0 - rho)
                    delta = acc.add(eps).sqrt_().div_(sq.add(eps).sqrt_()).mul_(g)
                    acc.mul_(rho).add_(delta.mul(delta), alpha=1.0 - rho)
                    p.add_(delta, alpha=-group["lr"])
        return loss


class Lion(Optimizer):
    """Lion (Chen et al., 2023), Ember's addition to PyTorch's set: ``c = beta1 * m +
    (1 - beta1) * g``; ``p = p * (1 - lr * weight_decay) - lr * sign(c)``; ``m = beta2 * m +
    (1 - beta2) * g``. State: ``exp_avg``."""

    def __init__(self, params, lr: float = 1e-4, betas: tuple[float, float] = (0.9, 0.99),
                 weight_decay: float = 0.0, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        check_lr(lr)
        check_betas(betas)
        check_weight_decay(weight_decay)
        check_flags("Lion", differentiable, fused)
        super().__init__(params, {
            "lr": lr, "betas": tuple(betas), "weight_decay": weight_decay,
            "maximize": maximize, "foreach": foreach, "differentiable": differentiable,
            "fused": fused})

    def step(self, closure=None):
        loss = call_closure(closure)
        with _grad.no_grad():
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                for p, g in params_with_grad(group):
                    state = self.state[p]
                    if not state:
                        state["exp_avg"] = et.zeros_like(p)
                    m = state["exp_avg"]
                    _decay(p, g, group, decoupled=True)
                    p.add_(m.mul(beta1).add_(g, alpha=1.0 - beta1).sign_(), alpha=-group["lr"])
                    m.mul_(beta2).add_(g, alpha=1.0 - beta2)
        return loss
