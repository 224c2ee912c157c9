"""``ember.nn.utils.weight_norm``: weight normalization with a forward pre-hook, PyTorch's
older form (deprecated there, and here, in favour of ``utils.parametrizations.weight_norm``).

The parameter ``<name>`` is replaced by ``<name>_g`` (magnitude) and ``<name>_v``
(direction); before each forward a pre-hook recomputes ``<name> = g * v / ||v||``.

>>> import warnings
>>> import ember_nn as nn
>>> from ember_nn.utils import weight_norm, remove_weight_norm
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", FutureWarning)
...     m = weight_norm(nn.Linear(3, 4))
>>> sorted(m.state_dict())
['bias', 'weight_g', 'weight_v']
>>> sorted(remove_weight_norm(m).state_dict())
['bias', 'weight']
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from ..parameter import Parameter

if TYPE_CHECKING:  # the layer modules import utils.hooks: no import cycle at run time
    from ..modules.module import Module

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


def _norm_except_dim(v, pow: float = 2, dim: int = 0):
    """PyTorch's ``norm_except_dim``: the ``pow``-norm of ``v`` over every dimension but
    ``dim``, with size-1 dimensions kept (``dim == -1``: one 0-d norm of the whole
    tensor)."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        out_shape = (v.size(0),) + (1,) * (v.dim() - 1)
        return v.reshape(v.size(0), -1).norm(pow, dim=1).reshape(out_shape)
    if dim == v.dim() - 1:
        out_shape = (1,) * (v.dim() - 1) + (v.size(-1),)
        return v.reshape(-1, v.size(-1)).norm(pow, dim=0).reshape(out_shape)
    return _norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v, g, dim: int = 0):
    """PyTorch's ``_weight_norm``: ``v * (g / norm_except_dim(v, 2, dim))``."""
    return v * (g / _norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook of ``weight_norm`` on one parameter: recomputes
    ``module.<name>`` from ``<name>_g`` and ``<name>_v`` before each forward."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int) -> None:
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module: Module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int) -> WeightNorm:
        warnings.warn(
            "`ember.nn.utils.weight_norm` is deprecated in favor of "
            "`ember.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            stacklevel=3,
        )
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(_norm_except_dim(weight, 2, dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Replaces the parameter ``module.<name>`` by ``<name>_g`` (its norm over every
    dimension but ``dim``, kept as size 1; ``dim=None``: one norm for the whole tensor)
    and ``<name>_v`` (the direction), and recomputes ``module.<name> = g * v / ||v||``
    before each forward (a forward pre-hook). Returns ``module``. Issues a
    ``FutureWarning``: ``utils.parametrizations.weight_norm`` is the current form.

    Raises ``RuntimeError`` when ``name`` already has a weight_norm hook,
    ``AttributeError`` when ``module`` has no attribute ``name`` (``KeyError`` when it is
    not a parameter).

    >>> import warnings
    >>> import ember_nn as nn
    >>> from ember_nn.utils import weight_norm
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     m = weight_norm(nn.Linear(20, 40), name="weight")
    >>> tuple(m.weight_g.shape), tuple(m.weight_v.shape)
    ((40, 1), (40, 20))
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undoes ``weight_norm``: ``module.<name>`` is a Parameter again, holding the current
    ``g * v / ||v||``. Returns ``module``.

    Raises ``ValueError`` when ``module`` has no weight_norm hook on ``name``.

    >>> import ember_nn as nn
    >>> from ember_nn.utils import remove_weight_norm
    >>> remove_weight_norm(nn.Linear(2, 2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: weight_norm of 'weight' not found in Linear(in_features=2, ...)
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
