"""Recognise divergences that ``docs/differences-from-pytorch.md`` documents.

``explain(call, e_exc, t_exc, t_result, e_env)`` returns the heading of the documented
difference that accounts for a call where only one library raised, or None. Each check
tests the documented situation itself (the shapes, the memory overlap, the slice step),
not the callable, so a divergence of the same callable for another reason is still
reported.
"""

from __future__ import annotations

import itertools

from .recipes import Lit, Ref, Seq
from .recipes import Tensor as TensorRecipe

OUT_SHAPE = "`out=` with the wrong shape"
OVERLAP = "Writes into overlapping memory"
NEGATIVE_STEP = "Negative slice steps and NumPy operands"
#: Not in the docs: C++ leaves the conversion of a float outside an integer type's range
#: undefined, and the two libraries' kernels produce different (arbitrary) values.
FLOAT_TO_INT = "float to integer conversion out of range (undefined in C++)"
INT_LIMITS = {"uint8": 255, "int8": 127, "int16": 2**15 - 1, "int32": 2**31 - 1, "int64": 2**63 - 1}


def _internal_overlap(t) -> bool:
    """Whether two elements of tensor ``t`` share memory."""
    if t.numel() <= 1:
        return False
    offsets = set()
    for idx in itertools.product(*(range(n) for n in t.shape)):
        off = sum(i * s for i, s in zip(idx, t.stride(), strict=True))
        if off in offsets:
            return True
        offsets.add(off)
    return False


def _destination(call):
    """The recipe written by the call: ``out=`` or the receiver of an in-place method."""
    for name, recipe in call.kwargs:
        if name == "out":
            return recipe
    method = call.target.ember
    if method.startswith("Tensor.") and (method.endswith("_") or method.startswith("Tensor.__i")):
        return call.args[0] if call.args else None
    return None


def _negative_step(recipe) -> bool:
    if isinstance(recipe, Lit) and isinstance(recipe.value, slice):
        return recipe.value.step is not None and recipe.value.step < 0
    if isinstance(recipe, Seq):
        return any(_negative_step(r) for r in recipe.items)
    return False


def explain(call, e_exc, t_exc, t_result, e_env) -> str | None:
    """The documented difference behind a one-sided exception, or None."""
    if e_exc is not None and t_exc is None:
        dest = _destination(call)
        if isinstance(dest, (TensorRecipe, Ref)) and isinstance(e_exc, RuntimeError):
            out = e_env[dest.var]  # PyTorch may have resized its twin
            message = str(e_exc).lower()
            if call.target.style == "out" and hasattr(t_result, "shape"):
                if out.numel() and tuple(out.shape) != tuple(t_result.shape):
                    return OUT_SHAPE
            if "overlap" in message or "share" in message or "memory" in message:
                shared = isinstance(dest, Ref) or any(isinstance(r, Ref) for _, r in call.kwargs)
                if shared or _internal_overlap(out):
                    return OVERLAP
    if t_exc is not None and e_exc is None and isinstance(t_exc, ValueError):
        if call.target.ember == "Tensor.__getitem__" or call.target.ember == "Tensor.__setitem__":
            if len(call.args) > 1 and _negative_step(call.args[1]):
                return NEGATIVE_STEP
    return None


#: In the docs' "Writes into overlapping memory": a destination whose elements overlap in a
#: way neither library detects (as_strided with strides smaller than the sizes) is written in
#: an order each kernel chooses.
OVERLAP_ORDER = "Writes into overlapping memory (order undefined in both)"


def explain_values(call, kind: str, detail: str, e_env=None) -> str | None:
    """The reason two results may differ in value by construction, or None."""
    dest = _destination(call)
    if e_env is not None and isinstance(dest, (TensorRecipe, Ref)):
        written = e_env.get(dest.var)
        if written is not None and _internal_overlap(written):
            return OVERLAP_ORDER
    dtype = detail.split(": ", 1)[-1].split(" ", 1)[0]
    if kind not in ("value", "mutation") or dtype not in INT_LIMITS:
        return None
    limit = INT_LIMITS[dtype]
    for t in call.tensor_recipes():
        if t.dtype.startswith(("float", "bfloat")):
            if any(not (-limit - 1 <= v <= limit) for v in t.values):  # NaN fails both
                return FLOAT_TO_INT
    for _, recipe in call.kwargs + tuple((None, r) for r in call.args):
        if isinstance(recipe, Lit) and isinstance(recipe.value, float):
            if not (-limit - 1 <= recipe.value <= limit):
                return FLOAT_TO_INT
    return None
