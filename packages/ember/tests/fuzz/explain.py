"""Recognise divergences that ``docs/differences-from-pytorch.md`` documents.

``explain(call, e_exc, t_exc, t_result, e_env)`` returns the heading of the documented
difference that accounts for a call where only one library raised, or None. Each check
tests the documented situation itself (the shapes, the memory overlap, the slice step),
not the callable, so a divergence of the same callable for another reason is still
reported.
"""

from __future__ import annotations

import itertools
import math

from .recipes import Lit, Ref, Seq
from .recipes import Tensor as TensorRecipe

OUT_SHAPE = "`out=` with the wrong shape"
MERGED_OVERLOADS = "Signatures: one signature for PyTorch's overloads"
EMPTY_RESULT = "Checks on calls without elements"
OUT_DTYPE = "`out=` of another dtype"
DTYPE_SUPERSET = "Dtypes PyTorch's CPU kernels lack"
#: PyTorch's words when an op of its own wants out= of exactly the result's dtype
_EXACT_OUT_DTYPE = ("Found dtype", "Expected out tensor to have dtype",
                    "does not match dtype of out", "Expected the dtype for input and out to match",
                    "should be same as input",
                    "out tensor must be same dtype", "hist tensor should have the same dtype",
                    "Expected self.dtype() == output.dtype()", "expected scalar type",
                    "expected scalar_type", "provided dtype must match dtype of result")
#: PyTorch's argument parser's words when no overload takes the arguments' arrangement (an
#: argument that only another overload has, or a missing one); a wrong *type* for an argument
#: ("argument 'dim' must be int, not bool") is not among them: Ember refuses those as well.
_ARRANGEMENT_ERRORS = ("received an invalid combination of arguments",
                       "missing 3 required positional",
                       "missing 1 required positional", "missing 2 required positional",
                       "got an unexpected keyword argument",
                       # a keyword-only argument given by position (gelu's approximate)
                       "positional argument but", "positional arguments but",
                       # None for an argument that only another overload lacks (median's dim)
                       "must be int, not NoneType", "must be bool, not NoneType",
                       # tensors as one list where PyTorch takes them one by one
                       "expected Tensor as element 0 in argument 0, but got list",
                       "expected Tensor as element 0 in argument 0, but got tuple")
OVERLAP = "Writes into overlapping memory"
NEGATIVE_STEP = "Negative slice steps and NumPy operands"
#: Not in the docs: C++ leaves the conversion of a float outside an integer type's range
#: undefined, and the two libraries' kernels produce different (arbitrary) values.
FLOAT_TO_INT = "float to integer conversion out of range (undefined in C++)"
OUT_GRAD = "`out=` with an input that requires grad"
UINT_PROMOTION = "Promotion of uint16, uint32 and uint64"
_UINT_PROMOTION_WORDS = "Promotion for uint16, uint32, uint64 types is not supported"
INT64_MIN = "int64's minimum as a size"
_SYMINT_WORDS = ("cannot be represented as a SymInt",
                 "SymIntArrayRef expected to contain only concrete")
BIG_INTS = "Python ints beyond int64 as numbers"
TENSOR_ARGS = "Tensors as numbers and sizes"
_TENSOR_ARG_WORDS = tuple(f"must be {kind}, not Tensor" for kind in (
    "float", "Number", "tuple of ints", "tuple of floats", "bool", "int", "torch.dtype")) + tuple(
    f"must be Tensor, not {kind}" for kind in ("float", "int", "bool"))
_SHARED_WORDS = "refer to a single memory location"
_OUT_GRAD_WORDS = "functions with out=... arguments don't support automatic differentiation"
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


def _inplace_flag(call) -> bool:
    """Whether an ``inplace`` parameter (``F.elu(x, inplace=True)``) is given as True."""
    for pos, param in enumerate(call.target.params):
        if param.name != "inplace":
            continue
        given = dict(call.kwargs).get("inplace")
        if given is None and pos < len(call.args):
            given = call.args[pos]
        # by truth, as the functions read it (F.leaky_relu(x, 0.5, [1]) is in place)
        return isinstance(given, Lit) and bool(given.value)
    return False


def _destination(call):
    """The recipe written by the call: ``out=``, the receiver of an in-place method, or the
    input of a function called with ``inplace=True``."""
    for name, recipe in call.kwargs:
        if name == "out":
            return recipe
    method = call.target.ember
    if method.startswith("Tensor.") and (method.endswith("_") or method.startswith("Tensor.__i")):
        return call.args[0] if call.args else None
    if method.startswith("ember.nn.functional.") and method.endswith("_"):  # F.relu_(x)
        return call.args[0] if call.args else None
    if call.args and _inplace_flag(call):
        return call.args[0]
    return None


#: In the docs' "Writes into overlapping memory": a destination that is also one of the op's
#: inputs (``mm(a, b, out=a)``, ``a.atan2_(a)``). PyTorch's kernels that are not elementwise
#: read values they have already overwritten; Ember's result is the op's value on the inputs
#: as given. Accepted only when PyTorch, given a copy instead (``aliased_twin``), agrees with
#: Ember.
ALIASED_INPUT = "Writes into overlapping memory (a destination that is also an input)"


def aliased(call) -> bool:
    """Whether an argument is the same tensor as another (a ``Ref``)."""
    return any(isinstance(r, Ref) for r in (*call.args, *(r for _, r in call.kwargs)))


def unaliased_args(call, args: list, kwargs: dict) -> None:
    """Replaces, in the built arguments, each one that is another's tensor by a copy."""
    for pos, recipe in enumerate(call.args):
        if isinstance(recipe, Ref):
            args[pos] = args[pos].clone()
    for name, recipe in call.kwargs:
        if isinstance(recipe, Ref):
            kwargs[name] = kwargs[name].clone()


def _no_elements(result) -> bool:
    """Whether a result is a tensor, or a tuple of tensors, without a single element."""
    parts = result if isinstance(result, (tuple, list)) else (result,)
    return bool(parts) and all(hasattr(p, "numel") and p.numel() == 0 for p in parts)


#: Ember's words when an op refuses its input's dtype
_DTYPE_REFUSALS = ("is not supported (supported:", "Expected a floating point",
                   "not implemented for dtype", "not implemented for '")


def _dtype_refusal(exc) -> bool:
    return isinstance(exc, (RuntimeError, NotImplementedError)) and any(
        words in str(exc) for words in _DTYPE_REFUSALS)


def _empty_input(env) -> bool:
    """Whether one of the call's tensors has no elements."""
    return any(hasattr(v, "numel") and v.numel() == 0 for v in env.values())


def _big_int_literal(call) -> bool:
    """Whether a Python int beyond int64 is among the call's number arguments."""
    def big(r):
        if isinstance(r, Lit) and isinstance(r.value, int) and not isinstance(r.value, bool):
            return not -(2**63) <= r.value < 2**63
        return isinstance(r, Seq) and any(big(i) for i in r.items)
    return any(big(r) for r in (*call.args, *(r for _, r in call.kwargs)))


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
            given_out = call.target.style == "out" or "out" in dict(call.kwargs)
            if given_out and hasattr(t_result, "shape") and out.numel():
                # PyTorch resized out, or kept its shape where the element counts agree
                if tuple(out.shape) != tuple(t_result.shape) or "match the result shape" in message:
                    return OUT_SHAPE
            if given_out and "can't be cast to the desired output type" in message:
                return OUT_DTYPE  # Ember's one can_cast rule, where PyTorch's op truncates
            if "overlap" in message or "share" in message or "memory" in message:
                shared = isinstance(dest, Ref) or any(isinstance(r, Ref) for _, r in call.kwargs)
                if shared or _internal_overlap(out):
                    return OVERLAP
    if e_exc is not None and t_exc is None and _no_elements(t_result):
        if isinstance(e_exc, (RuntimeError, ValueError, IndexError, NotImplementedError)):
            return EMPTY_RESULT
    if e_exc is not None and t_exc is None and _OUT_GRAD_WORDS in str(e_exc):
        return OUT_GRAD  # Ember's one rule; PyTorch refuses it only in ops with autograd kernels
    if e_exc is not None and t_exc is None and _dtype_refusal(e_exc) and _empty_input(e_env):
        return EMPTY_RESULT  # a dtype check PyTorch's kernel skips for an input without elements
    if t_exc is not None and e_exc is None and isinstance(t_exc, NotImplementedError):
        if "not implemented for '" in str(t_exc):
            return DTYPE_SUPERSET
    if t_exc is not None and e_exc is None and "out" in dict(call.kwargs):
        if isinstance(t_exc, RuntimeError) and any(w in str(t_exc) for w in _EXACT_OUT_DTYPE):
            return OUT_DTYPE
    if t_exc is not None and e_exc is None and type(t_exc) is TypeError:
        if any(words in str(t_exc) for words in _ARRANGEMENT_ERRORS):
            return MERGED_OVERLOADS
        if any(words in str(t_exc) for words in _TENSOR_ARG_WORDS):
            return TENSOR_ARGS  # Ember computes with the tensor given for a number or a size
    if t_exc is not None and e_exc is None and isinstance(t_exc, RuntimeError):
        message = str(t_exc)
        if _UINT_PROMOTION_WORDS in message:
            return UINT_PROMOTION  # Ember promotes them as the array API standard's table
        if any(words in message for words in _SYMINT_WORDS):
            return INT64_MIN  # PyTorch's SymInt cannot hold -2**63; Ember's int64 sizes can
        dest = _destination(call)
        shared = isinstance(dest, Ref) or any(isinstance(r, Ref) for r in call.args)
        if _SHARED_WORDS in message and shared:
            return ALIASED_INPUT  # Ember computes from the inputs as given, then writes
        if "doesn't match the broadcast shape" in message and isinstance(dest, Ref):
            out = e_env.get(dest.var)
            if out is not None and "out" in dict(call.kwargs):
                return OUT_SHAPE  # an empty out= that is also an input, resized by Ember
    if isinstance(t_exc, OverflowError) and e_exc is None and _big_int_literal(call):
        return BIG_INTS  # PyTorch's Scalar refuses them; Ember reads them as floats
    if t_exc is not None and e_exc is None and isinstance(t_exc, ValueError):
        if call.target.ember == "Tensor.__getitem__" or call.target.ember == "Tensor.__setitem__":
            if len(call.args) > 1 and _negative_step(call.args[1]):
                return NEGATIVE_STEP
    return None


#: In the docs' "Writes into overlapping memory": a destination whose elements overlap in a
#: way neither library detects (as_strided with strides smaller than the sizes) is written in
#: an order each kernel chooses.
OVERLAP_ORDER = "Writes into overlapping memory (order undefined in both)"


#: In the docs' "Infinities and NaN from overflow": with an infinity, a NaN or a value whose
#: square overflows its dtype among the inputs, which non-finite value (or whether one) comes
#: out depends on the order of the arithmetic (a product's blocking, a fused multiply-add,
#: a computation in a wider type), which differs between the libraries' kernels.
NON_FINITE = "Infinities and NaN from overflow"
_FINITE_MAX = {"float16": 65504.0, "bfloat16": 3.3895e38, "float32": 3.4028e38,
               "float64": 1.7976931348623157e308}  # (1.7977e308 would be inf)


def _extreme(v: float, dtype: str) -> bool:
    largest = _FINITE_MAX.get(dtype, _FINITE_MAX["float64"])
    return v != v or abs(v) == float("inf") or abs(v) >= largest**0.5


def _non_finite_side(detail: str) -> bool:
    """Whether the differing element of a value detail is inf or NaN on either side."""
    values = detail.rpartition(": ember ")[2].split(" vs torch ")
    try:
        return any(not math.isfinite(float(v)) for v in values)
    except ValueError:
        return False


def _extreme_inputs(call) -> bool:
    for t in call.tensor_recipes():
        if t.dtype in _FINITE_MAX and any(_extreme(v, t.dtype) for v in t.values):
            return True
    for t in call.tensor_recipes():  # int64 values no float but float64 holds exactly
        if t.dtype in ("int64", "uint64") and any(abs(v) >= 2**62 for v in t.values):
            return True
    literals = [r for _, r in call.kwargs] + list(call.args)
    return any(isinstance(r, Lit) and (
        (isinstance(r.value, float) and _extreme(r.value, "float64"))
        or (isinstance(r.value, int) and not isinstance(r.value, bool) and abs(r.value) >= 2**62))
        for r in literals)


#: In the docs' "`out=` of another dtype": inputs of a narrower dtype written into a float64
#: out=: PyTorch computes in the inputs' result dtype, then widens; Ember computes in out's.
WIDER_OUT = "`out=` of another dtype (inputs computed in out's wider float dtype)"


def _computed_in_wider_out(call, detail: str) -> bool:
    out = dict(call.kwargs).get("out")
    if not isinstance(out, TensorRecipe) or out.dtype not in ("float64", "complex128"):
        return False
    inputs = [t for t in call.tensor_recipes() if t.var != out.var]
    if not inputs or any(t.dtype in ("float64", "complex64", "complex128") for t in inputs):
        return False
    values = detail.rpartition(": ember ")[2].split(" vs torch ")
    try:
        e, t = (float(v) for v in values)
    except ValueError:
        return False
    return math.isfinite(e) and math.isfinite(t) and abs(e - t) <= 1e-6 * max(abs(e), abs(t))


def explain_values(call, kind: str, detail: str, e_env=None) -> str | None:
    """The reason two results may differ in value by construction, or None."""
    if kind == "value" and _computed_in_wider_out(call, detail):
        return WIDER_OUT
    dest = _destination(call)
    if e_env is not None and isinstance(dest, (TensorRecipe, Ref)):
        written = e_env.get(dest.var)
        if written is not None and _internal_overlap(written):
            return OVERLAP_ORDER
    if kind in ("value", "mutation") and _non_finite_side(detail) and _extreme_inputs(call):
        return NON_FINITE
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
