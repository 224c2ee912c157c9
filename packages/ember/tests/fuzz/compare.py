"""Comparison of an Ember result with its PyTorch twin.

``compare(e, t, rule)`` returns None when they agree, else ``(kind, detail)`` with kind one
of ``structure`` (different types or lengths), ``shape``, ``dtype`` or ``value``. Tensors
agree when shapes and dtypes are equal and values are within the tolerance of their dtype
(NaN equals NaN, infinities must match); strides are not compared (Ember's copies are
contiguous by design, docs/differences-from-pytorch.md). ``rule`` relaxes what cannot be
equal by construction: random values, the order of equal elements of an unstable sort,
the signs of singular and eigenvectors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: (rtol, atol) per dtype.
TOLERANCE = {
    "float16": (1e-2, 1e-3),
    "bfloat16": (2e-2, 1e-2),
    "float32": (1e-4, 1e-5),
    "float64": (1e-7, 1e-10),
}
#: Words in op names whose results add up many terms: atol grows with the result's size.
ACCUMULATING = (
    "sum", "mean", "prod", "var", "std", "norm", "logsumexp", "softmax", "cum", "mm", "matmul",
    "dot", "linear", "linalg", "conv", "pool", "bilinear", "loss", "entropy", "attention",
    "batch_norm", "layer_norm", "group_norm", "instance_norm", "normalize", "kl_div", "col2im",
    "fold", "interpolate", "upsample", "cosine", "lstm", "cond", "pinv", "det", "inv", "solve",
    "multi_dot", "embedding", "index_add", "scatter_add", "__matmul__", "__rmatmul__", "vecdot",
)  # fmt: skip


@dataclass(frozen=True)
class Rule:
    """What to relax. ``random``: compare types, shapes and dtypes only. ``loose_ints``:
    integer tensors (indices) too. ``only``: compare just these positions of a tuple result
    (the rest by shape and dtype). ``absolute``: compare absolute values."""

    random: bool = False
    loose_ints: bool = False
    accumulating: bool = False
    only: tuple[int, ...] | None = None
    absolute: bool = False


def rule_for(target) -> Rule:
    """The comparison rule of a target."""
    op = target.op
    acc = any(w in op for w in ACCUMULATING)
    if target.random:
        return Rule(random=True)
    if op in ("sort", "argsort", "topk"):
        return Rule(loose_ints=True)
    if op in ("linalg_svd", "svd"):
        return Rule(accumulating=True, only=(1,))
    if op in ("linalg_eigh", "eigh"):
        return Rule(accumulating=True, only=(0,))
    if op in ("linalg_qr", "qr"):
        return Rule(accumulating=True, absolute=True)
    return Rule(accumulating=acc)


def dtype_name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _is_tensor(x) -> bool:
    return type(x).__name__ == "Tensor" or type(x).__name__ == "Parameter"


def to_numpy(x) -> tuple[np.ndarray, str]:
    """Values of an Ember or PyTorch tensor as a NumPy array (floats as float64)."""
    name = dtype_name(x.dtype)
    x = x.detach()
    if name in ("complex64", "complex128"):  # the parts side by side, as floats
        z = np.array(x.resolve_conj().numpy(), copy=True)
        part = "float32" if name == "complex64" else "float64"
        return np.stack([z.real, z.imag], axis=-1).astype(np.float64), part
    if name in ("float16", "bfloat16", "float32"):
        x = x.double()
    return np.array(x.numpy(), copy=True), name


def _values_differ(a: np.ndarray, b: np.ndarray, dtype: str, rule: Rule) -> str | None:
    if a.size == 0:
        return None
    if rule.absolute:
        a, b = np.abs(a), np.abs(b)
    if dtype not in TOLERANCE:
        if np.array_equal(a, b):
            return None
        bad = np.argwhere(a != b)[0]
    else:
        rtol, atol = TOLERANCE[dtype]
        if rule.accumulating:
            finite = np.abs(b[np.isfinite(b)])
            atol += rtol * (float(finite.max()) if finite.size else 0.0) * 10
        close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        if close.all():
            return None
        bad = np.argwhere(~close)[0]
    where = tuple(int(i) for i in bad)
    return f"{dtype} at {where}: ember {a[where].item()!r} vs torch {b[where].item()!r}"


#: Results with more elements than this are views too large to read back (expand and
#: broadcast_to make 2**40 elements of one): their values are compared once per distinct
#: element (the dimensions of stride 0 in both collapsed to size 1), else not at all.
MAX_COMPARED = 10_000_000


def _compare_tensors(e, t, rule: Rule):
    if tuple(e.shape) != tuple(t.shape):
        return "shape", f"ember {tuple(e.shape)} vs torch {tuple(t.shape)}"
    if dtype_name(e.dtype) != dtype_name(t.dtype):
        return "dtype", f"ember {dtype_name(e.dtype)} vs torch {dtype_name(t.dtype)}"
    if rule.random or e.numel() == 0:  # no values (NumPy cannot hold a (0, 2**62) array)
        return None
    if e.numel() > MAX_COMPARED:  # a huge view (expand, broadcast_to): its values once
        index = tuple(
            slice(0, 1) if se == 0 and st == 0 else slice(None)
            for se, st in zip(e.stride(), t.stride(), strict=True)
        )
        e, t = e[index], t[index]
        if e.numel() > MAX_COMPARED:
            return None  # nothing to collapse: shape and dtype only
    a, dtype = to_numpy(e)
    b, _ = to_numpy(t)
    if rule.loose_ints and dtype not in TOLERANCE:
        return None
    diff = _values_differ(a, b, dtype, rule)
    return None if diff is None else ("value", diff)


def _category(x) -> str:
    if _is_tensor(x):
        return "tensor"
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int"
    if isinstance(x, float):
        return "float"
    if isinstance(x, (tuple, list)):
        return "sequence"
    if isinstance(x, np.ndarray):
        return "ndarray"
    if x is None or isinstance(x, str):
        return repr(x)
    return type(x).__name__


def compare(e, t, rule: Rule, path: str = "r"):
    """None if ``e`` (Ember) and ``t`` (PyTorch) agree, else (kind, detail)."""
    ce, ct = _category(e), _category(t)
    if ce != ct:
        return "structure", f"{path}: ember {ce} vs torch {ct}"
    if ce == "tensor":
        found = _compare_tensors(e, t, rule)
        return None if found is None else (found[0], f"{path}: {found[1]}")
    if ce == "sequence":
        if len(e) != len(t):
            return "structure", f"{path}: ember length {len(e)} vs torch {len(t)}"
        for i, (x, y) in enumerate(zip(e, t, strict=True)):
            sub = rule
            if rule.only is not None and i not in rule.only:
                sub = Rule(random=True)
            found = compare(x, y, Rule(sub.random, sub.loose_ints, sub.accumulating, None,
                                       sub.absolute), f"{path}[{i}]")  # fmt: skip
            if found:
                return found
        return None
    if rule.random:
        return None
    if ce == "ndarray":
        if e.shape != t.shape or e.dtype != t.dtype:
            return "structure", f"{path}: ember {e.shape} {e.dtype} vs torch {t.shape} {t.dtype}"
        diff = _values_differ(e.astype(np.float64) if e.dtype.kind == "f" else e,
                              t.astype(np.float64) if t.dtype.kind == "f" else t,
                              "float64" if e.dtype.kind == "f" else str(e.dtype), rule)  # fmt: skip
        return None if diff is None else ("value", f"{path}: {diff}")
    if ce == "float":
        if math.isnan(e) and math.isnan(t):
            return None
        if e == t or math.isclose(e, t, rel_tol=1e-4, abs_tol=1e-6):
            return None
        return "value", f"{path}: ember {e!r} vs torch {t!r}"
    if ce in ("int", "bool", "None", "str") or ce.startswith("'"):
        return None if e == t else ("value", f"{path}: ember {e!r} vs torch {t!r}")
    if ce in ("dtype", "device"):
        return None if str(e).split(".")[-1] == str(t).split(".")[-1] else (
            "value", f"{path}: ember {e} vs torch {t}")  # fmt: skip
    return None  # objects of library-specific types (handles, capsules): types only
