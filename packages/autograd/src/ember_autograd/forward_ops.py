"""What the generated forward module (``ember_autograd._generated.forward``) calls at run
time: ``resolve_op`` (the op an ``auto_linear`` rule applies to the tangents) and
``zeros_for`` (a zero tangent). Kept apart from ``forward_codegen`` so that forward mode does
not import the generator."""

from __future__ import annotations

import ember_tensor as et

__all__ = ["resolve_op", "zeros_for"]


def resolve_op(op_name: str, variants: tuple, hand_bound: bool = False):
    """A callable running the op out of place with its arguments in signature order."""
    if hand_bound or op_name == "__getitem__":
        if op_name == "__setitem__":
            return _out_of_place("__setitem__")
        return getattr(et.Tensor, op_name)
    if "function" in variants and hasattr(et, op_name):
        return getattr(et, op_name)
    if "method" in variants and hasattr(et.Tensor, op_name):
        return getattr(et.Tensor, op_name)
    if "inplace" in variants:
        return _out_of_place(op_name + "_")
    fn = getattr(et.Tensor, op_name, None) or getattr(et, op_name, None)
    if fn is None:
        raise RuntimeError(f"forward mode: no callable for op {op_name!r}")
    return fn


def _out_of_place(method: str):
    def run(self, *args, **kwargs):
        out = self.clone()
        getattr(out, method)(*args, **kwargs)
        return out

    run.__name__ = method.strip("_") + "_out_of_place"
    return run


def zeros_for(x):
    """The zero tangent of an argument: a zero tensor like it, None for None, 0 for numbers."""
    if isinstance(x, et.Tensor):
        return et.zeros_like(x)
    if x is None:
        return None
    return 0
