"""PyTorch's other names for Ember's ops: NumPy's spellings (``arccos``, ``multiply``,
``greater_equal``, ``moveaxis``, ...), older names (``ger``, ``inverse``, ``det``), and the
function forms of in-place methods (``torch.abs_(x)`` is ``x.abs_()``).

An alias is the op itself (the same function object, so autograd, ``out=`` and the
in-place form behave identically); nothing here is an op of its own. ``install`` puts the
names on the ember_tensor namespace and on Tensor, where PyTorch has them there.
"""

from __future__ import annotations

# alias -> op, as a function and as a Tensor method (with the in-place form alias_ -> op_
# where the op has one)
ALIASES = {
    "absolute": "abs",
    "arccos": "acos",
    "arccosh": "acosh",
    "arcsin": "asin",
    "arcsinh": "asinh",
    "arctan": "atan",
    "arctan2": "atan2",
    "arctanh": "atanh",
    "divide": "div",
    "fix": "trunc",
    "greater": "gt",
    "greater_equal": "ge",
    "less": "lt",
    "less_equal": "le",
    "multiply": "mul",
    "negative": "neg",
    "not_equal": "ne",
    "subtract": "sub",
    "swapdims": "transpose",
    "moveaxis": "movedim",
}

# alias -> op for the function only (PyTorch has no such method)
FUNCTION_ALIASES = {
    "row_stack": "vstack",
}

# linalg ops under their torch names: (alias, linalg op, also a Tensor method)
LINALG_ALIASES = (
    ("det", "det", True),
    ("inverse", "inv", True),
    ("slogdet", "slogdet", True),
    ("matrix_power", "matrix_power", True),
    ("orgqr", "householder_product", True),
)

# torch.X_(tensor, ...) is tensor.X_(...) for these in-place methods
INPLACE_FUNCTIONS = (
    "abs_", "acos_", "acosh_", "addmv_", "asin_", "asinh_", "atan_", "atanh_", "ceil_",
    "celu_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "conj_physical_", "cos_", "cosh_",
    "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "floor_",
    "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_",
    "log_", "logit_", "nan_to_num_", "neg_", "rad2deg_", "reciprocal_", "relu_", "round_",
    "rsqrt_", "selu_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_",
    "tanh_", "threshold_", "trunc_", "xlogy_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "fix_", "negative_",
)


def _inplace_function(name: str):
    def inplace(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    inplace.__name__ = inplace.__qualname__ = name
    inplace.__doc__ = f"``input.{name}(...)``: the function form of the in-place method."
    return inplace


def _linalg_method(name: str, fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    return method


def concatenate(tensors, dim=0, *, axis=None, out=None):
    """cat under NumPy's name (``axis=`` is ``dim=``)."""
    from . import cat

    return cat(tensors, dim if axis is None else axis, out=out)


def install(namespace: dict, tensor_class, linalg) -> list[str]:
    """Put the aliases into namespace (a module's globals) and onto tensor_class; returns
    the function names added (for ``__all__``)."""
    added = []
    for alias, op in {**ALIASES, **FUNCTION_ALIASES}.items():
        namespace[alias] = namespace[op]
        added.append(alias)
    for alias, op in ALIASES.items():
        setattr(tensor_class, alias, getattr(tensor_class, op))
        if hasattr(tensor_class, op + "_"):
            setattr(tensor_class, alias + "_", getattr(tensor_class, op + "_"))
    for alias, op, method in LINALG_ALIASES:
        fn = getattr(linalg, op)
        namespace[alias] = fn
        added.append(alias)
        if method:
            setattr(tensor_class, alias, _linalg_method(alias, fn))
    tensor_class.ger = tensor_class.outer
    namespace["ger"] = namespace["outer"]
    namespace["concatenate"] = concatenate
    added += ["ger", "concatenate"]
    for name in INPLACE_FUNCTIONS:
        if name not in namespace:
            namespace[name] = _inplace_function(name)
            added.append(name)
    return added
