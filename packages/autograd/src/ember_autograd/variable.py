"""``Variable``: the wrapper PyTorch merged into ``Tensor`` in 0.4, kept for old programs.
``Variable(t)`` is ``t`` itself (``requires_grad=True`` marks it), and ``isinstance(x,
Variable)`` holds for every tensor, as in PyTorch. ``volatile`` is gone there too: passing
it warns and changes nothing.

>>> import ember_tensor as et, ember_autograd
>>> from ember_autograd import Variable
>>> x = Variable(et.ones(2), requires_grad=True)
>>> x.requires_grad, isinstance(et.zeros(1), Variable)
(True, True)
"""

from __future__ import annotations

import warnings

import ember_tensor as et

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, et.Tensor)

    def __call__(cls, data=None, requires_grad: bool = False, volatile=None):
        if volatile is not None:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        if data is None:
            data = et.empty(0)
        if not isinstance(data, et.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if requires_grad:
            data.requires_grad_(True)
        return data


class Variable(metaclass=_VariableMeta):
    """``Variable(tensor, requires_grad=False)``: the tensor itself (see the module)."""
