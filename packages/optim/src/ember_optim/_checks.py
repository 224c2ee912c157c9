"""Hyperparameter validation, written once for every algorithm: PyTorch's error types and
messages.

An algorithm names the options to check, in PyTorch's order, in ``Optimizer._checks``
(``("lr", "eps", "betas", "weight_decay")`` for Adam); ``Optimizer.__init__`` runs
``check(name, value)`` for each before it looks at the parameters, then, for an optimizer
with an update rule, ``check_flags`` (``differentiable``, ``fused`` with ``foreach``).
"""

from __future__ import annotations

import ember_tensor as et

from ._common import _to_scalar

__all__ = ["check", "check_betas", "check_flags", "check_lr"]


def check_lr(lr) -> None:
    if isinstance(lr, et.Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= _to_scalar(lr):
        raise ValueError(f"Invalid learning rate: {lr}")


def check_betas(betas) -> None:
    for index in (0, 1):
        if not 0.0 <= betas[index] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {index}: {betas[index]}")


def _check_rho(rho) -> None:
    if not 0.0 <= rho <= 1.0:
        raise ValueError(f"Invalid rho value: {rho}")


_SPECIAL = {"lr": check_lr, "betas": check_betas, "rho": _check_rho}
# the word PyTorch's message uses for an option, where it is not the option's name
_LABELS = {"eps": "epsilon"}


def check(name: str, value) -> None:
    """Raises PyTorch's ``ValueError`` for an invalid value of the option ``name``: ``lr``,
    ``betas`` (each in [0, 1)), ``rho`` (in [0, 1]); any other option must be ``>= 0``
    (``Invalid <name> value: <value>``; NaN fails too)."""
    special = _SPECIAL.get(name)
    if special is not None:
        special(value)
    elif not 0.0 <= value:
        raise ValueError(f"Invalid {_LABELS.get(name, name)} value: {value}")


def check_flags(name: str, defaults: dict) -> None:
    """``differentiable=True`` is refused (steps update in place under ``no_grad``);
    ``fused=True`` excludes ``foreach=True``. Whether a fused kernel exists is checked once
    the parameters are known (``Optimizer.__init__``)."""
    if defaults.get("differentiable"):
        raise NotImplementedError(
            f"{name}(differentiable=True) is not supported by ember_optim: steps update the "
            "parameters in place under no_grad, so no graph runs through them"
        )
    if defaults.get("fused") and defaults.get("foreach"):
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
