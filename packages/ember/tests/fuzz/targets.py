"""The callables the fuzzer calls, each paired with its PyTorch twin where one exists.

``all_targets()`` returns a list, in a fixed order, of ``Target``: one per variant (function,
method, in-place method, ``out=``) of every op in ``ops_schema.json`` that Ember exposes,
then the public functions of ``ember``, ``ember.nn.functional`` and ``ember.linalg`` and the
public ``Tensor`` methods (operators included) that the schema does not cover. Parameters
of the schema ops come from the schema; those of the other callables from their signature
(``inspect.signature`` or the pybind11 docstring), with types read from annotations,
defaults and parameter names. The order, and so a call index, depends only on the
installed Ember, PyTorch and schema.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import re
from dataclasses import dataclass
from pathlib import Path

#: Words in an op's name that make its values random: only shape and dtype are compared.
RANDOM_WORDS = ("rand", "dropout", "multinomial", "bernoulli", "normal", "uniform", "empty",
                "rrelu", "gumbel", "fractional")
#: Callables whose values differ by construction between two processes or libraries.
NONDETERMINISTIC = {"Tensor.data_ptr", "initial_seed"}

#: ops.yaml ops whose PyTorch kernels trust their index arguments: given indices out of range
#: they read and write out of bounds (adaptive_max_pool2d_backward segfaults, or corrupts the
#: worker's heap so that glibc aborts later inside another call). Their PyTorch twin never
#: runs: Ember's side is still called and checked for crashes, hangs and leaked exceptions.
#: (Ember alone ran 250 000 calls of seed 0 without a crash where the run with PyTorch died.)
TORCH_TRUSTS_INDICES = frozenset(
    {"adaptive_max_pool2d_backward", "max_pool2d_with_indices_backward",
     "max_pool1d_with_indices_backward", "max_pool3d_with_indices_backward",
     "embedding_dense_backward", "embedding_backward", "max_unpool2d", "max_unpool1d"}
)  # fmt: skip

#: Public callables not called, and why. Everything else public is called.
SKIP = {
    "load": "reads files",
    "save": "writes files",
    "manual_seed": "changes the global generator",
    "set_num_threads": "changes the global thread pool",
    "set_default_dtype": "changes a global default",
    "set_printoptions": "changes a global default",
    "set_autocast_enabled": "changes global autocast state",
    "set_autocast_dtype": "changes global autocast state",
    "use": "loads a component into the process",
    "empty_cache": "changes the global allocator's cache",
    "reset_accumulated_memory_stats": "changes global memory statistics",
    "reset_peak_memory_stats": "changes global memory statistics",
    "Tensor.share_memory_": "creates shared-memory files",
    "compile": "PyTorch's compiles the callable (minutes); Ember's is the identity",
    "Tensor._make_subclass": "makes instances of arbitrary classes; tests/test_legacy_surface",
    "Tensor.__init__": "re-initialises the receiver in place; covered by ember.tensor",
    "Tensor.__setattr__": "object protocol, not part of the tensor API",
    "Tensor.__delattr__": "object protocol, not part of the tensor API",
    "Tensor.__iter__": "returns a lazy iterator; covered by unbind",
    "Tensor.__array_namespace__": "planned, not implemented (differences-from-pytorch.md)",
    # torch 2.13 alone: a = torch.arange(81, dtype=torch.int8).reshape(3, 3, 3, 3);
    # torch.tril(a, out=torch.zeros_like(a).transpose(0, 2)) -> "double free or corruption";
    # the corruption aborts the worker calls later, at random
    "tril(out=)": "PyTorch's tril with a transposed out= corrupts the heap",
    "triu(out=)": "PyTorch's triu with a transposed out= corrupts the heap",
}

def _alias_names() -> dict[str, str]:
    """The names ember_tensor/_aliases.py adds (functions and Tensor methods): each is its op
    itself, or a one-line call of it, and is fuzzed under the op's own name."""
    from ember_tensor import _aliases

    why = "an alias of a fuzzed op (ember_tensor/_aliases.py)"
    names = [*_aliases.ALIASES, *_aliases.FUNCTION_ALIASES, "ger", "concatenate",
             *(alias for alias, _, _ in _aliases.LINALG_ALIASES), *_aliases.INPLACE_FUNCTIONS]
    methods = [*_aliases.ALIASES, *(a + "_" for a in _aliases.ALIASES), "ger",
               *(alias for alias, _, method in _aliases.LINALG_ALIASES if method)]
    return {**{n: why for n in names}, **{f"Tensor.{n}": why for n in methods}}


SKIP.update(_alias_names())

#: Dunder methods of ``Tensor`` that are part of the API; the rest is the object protocol.
DUNDERS = frozenset(
    "abs add and bool eq float floordiv ge getitem gt iadd iand ifloordiv imod imul index int "
    "invert ior ipow isub itruediv ixor le len lt matmul mod mul ne neg or pow radd rand "
    "rfloordiv rmatmul rmod rmul ror rpow rsub rtruediv rxor setitem sub truediv xor "
    "array dlpack dlpack_device".split()
)

#: ops.yaml names whose PyTorch twin has another name, or None where the namesake differs.
TORCH_ALIASES = {
    "log_sigmoid": "torch.nn.functional.logsigmoid",
    "_fused_adam_": None,  # torch._fused_adam_ takes different arguments
    "_fused_sgd_": None,
    "_lstm_forward_": None,
    "_lstm_backward_": None,
}

#: Method names of the in-place schema ops that are not ``<name>_``.
INPLACE_NAMES = {"normal": "normal_", "uniform": "uniform_", "fill": "fill_", "zero": "zero_"}


@dataclass(frozen=True)
class Param:
    """One parameter: ``type`` is a schema type (``Tensor``, ``int[]?``, ...) or ``any``."""

    name: str
    type: str
    required: bool
    kwonly: bool = False


@dataclass(frozen=True)
class Target:
    """One callable.

    ``name`` is the group key in reports (``add``, ``add(out=)``, ``Tensor.add_``,
    ``F.relu``, ``max#2`` for an overload). ``ember`` and ``torch`` are dotted paths from
    ``ember``/``torch``, or ``Tensor.<method>`` for a method called on the first argument;
    ``torch`` is None where there is no twin (the call is then checked for crashes, hangs
    and leaked exceptions only). ``style`` is ``function``, ``method`` or ``out`` (a
    function called with ``out=``). ``dtypes`` are the dtypes the op declares (None: all).
    """

    name: str
    op: str
    ember: str
    torch: str | None
    params: tuple[Param, ...]
    style: str
    random: bool
    dtypes: tuple[str, ...] | None = None


def schema_path() -> Path:
    """The installed ``ops_schema.json``."""
    import ember_tensor

    return Path(ember_tensor.__file__).parent / "ops_schema.json"


def resolve(path: str):
    """The object at dotted ``path`` (``ember.linalg.qr``, ``torch.ops.aten.im2col``,
    ``fuzz.selftest.segfault``), or None. ``Tensor.<method>`` paths are bound by the caller."""
    parts = path.split(".")
    obj, i = importlib.import_module(parts[0]), 1
    while i < len(parts):
        try:
            obj = getattr(obj, parts[i])
        except AttributeError:
            try:
                obj = importlib.import_module(".".join(parts[: i + 1]))
            except ImportError:
                return None
        except RuntimeError:
            return None
        i += 1
    return obj


def _is_random(name: str) -> bool:
    return any(w in name for w in RANDOM_WORDS) or name in NONDETERMINISTIC


def _torch_function(op: str) -> str | None:
    if op in TORCH_ALIASES:
        return TORCH_ALIASES[op]
    if op.startswith("linalg_"):
        cands = [f"torch.linalg.{op[7:]}"]
    else:
        cands = [f"torch.{op}", f"torch._C._nn.{op}", f"torch.ops.aten.{op}"]
    for cand in cands:
        if callable(resolve(cand)):
            return cand
    return None


def _method_exists(lib: str, name: str) -> bool:
    return hasattr(resolve(f"{lib}.Tensor"), name)


def _schema_targets() -> list[Target]:
    ops = json.loads(schema_path().read_text())
    counts: dict[str, int] = {}
    for op in ops:
        counts[op["name"]] = counts.get(op["name"], 0) + 1
    seen: dict[str, int] = {}
    out: list[Target] = []
    for op in ops:
        name = op["name"]
        seen[name] = seen.get(name, 0) + 1
        label = f"{name}#{seen[name]}" if counts[name] > 1 else name
        params = tuple(
            Param(a["name"], a["type"], a["default"] is None and "?" not in a["type"], a["kwonly"])
            for a in op["args"]
        )
        rnd = _is_random(name)
        dtypes = tuple(op["dtypes"]) if op.get("dtypes") else None
        variants = op["variants"]
        fn_path = f"ember.linalg.{name[7:]}" if name.startswith("linalg_") else f"ember.{name}"
        if "function" in variants or "out" in variants:
            has_fn = callable(resolve(fn_path))
            twin = _torch_function(name)
            if "function" in variants and has_fn:
                out.append(Target(label, name, fn_path, twin, params, "function", rnd, dtypes))
            if "out" in variants and has_fn and f"{label}(out=)" not in SKIP:
                out_params = params + (Param("out", "Tensor", False, True),)
                out.append(
                    Target(f"{label}(out=)", name, fn_path, twin, out_params, "out", rnd, dtypes)
                )
        if "method" in variants and _method_exists("ember", name) and params:
            twin = f"Tensor.{name}" if _method_exists("torch", name) else None
            out.append(
                Target(
                    f"Tensor.{label}", name, f"Tensor.{name}", twin, params, "method", rnd, dtypes
                )
            )
        if "inplace" in variants and params:
            meth = INPLACE_NAMES.get(name, name + "_")
            if _method_exists("ember", meth):
                twin = f"Tensor.{meth}" if _method_exists("torch", meth) else None
                out.append(
                    Target(
                        f"Tensor.{meth}" + (f"#{seen[name]}" if counts[name] > 1 else ""),
                        name,
                        f"Tensor.{meth}",
                        twin,
                        params,
                        "method",
                        rnd,
                        dtypes,
                    )
                )
    return out


# --- parameters of callables outside the schema -------------------------------------------

_TENSOR_NAMES = {
    "input", "self", "x", "other", "tensor", "tensors", "target", "weight", "bias", "A", "B",
    "mat1", "mat2", "query", "key", "value", "mask", "condition", "src", "index", "indices",
    "input1", "input2", "x1", "x2", "y", "grad", "gradient", "attn_mask", "log_input",
    "running_mean", "running_var", "pos_weight", "exponent", "end", "start",
}  # fmt: skip
_INT_NAMES = {
    "dim", "dim0", "dim1", "dim2", "axis", "start_dim", "end_dim", "groups", "num_classes",
    "k", "n", "m", "num_groups", "chunks", "offset", "diagonal", "padding_idx", "rank",
    "ignore_index", "steps", "num_heads", "embed_dim_to_check", "rcond",
}  # fmt: skip
_INTLIST_NAMES = {
    "size", "shape", "sizes", "kernel_size", "stride", "padding", "dilation", "output_size",
    "output_padding", "normalized_shape", "pad", "dims", "repeats", "source", "destination",
}  # fmt: skip
_FLOAT_NAMES = {
    "p", "eps", "momentum", "alpha", "beta", "lambd", "margin", "negative_slope", "min_val",
    "max_val", "threshold", "scale_factor", "delta", "rtol", "atol", "fill_value", "ord",
    "label_smoothing", "dropout_p", "scale", "tol",
}  # fmt: skip
#: Parameter names with one meaning wherever they appear.
_SPECIAL_TYPES = {
    "arg0": "Tensor|Scalar",  # the operand of a pybind11 operator (``__add__``, ...)
    "key": "index",  # ``__getitem__`` / ``__setitem__``
    "value": "Tensor|Scalar",
    "data": "data",  # ``tensor``, ``as_tensor``, ``new_tensor``: nested lists of numbers
    "reduction": "str",
}
_ANNOTATION_TYPES = (
    ("Tensor", "Tensor"),
    ("list[int]", "int[]"),
    ("Sequence[int]", "int[]"),
    ("tuple[int", "int[]"),
    ("bool", "bool"),
    ("float", "float"),
    ("int", "int"),
    ("str", "str"),
    ("dtype", "ScalarType"),
)


def _param_type(name: str, annotation: str, default: object, required: bool) -> str:
    suffix = "?" if default is None and not required else ""
    if name in _SPECIAL_TYPES:
        return _SPECIAL_TYPES[name]
    if name == "dtype":
        return "ScalarType?"
    if name == "device":
        return "Device?"
    if name == "generator":
        return "Generator?"
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, int):
        return "int[]" if name in _INTLIST_NAMES else "int"
    if isinstance(default, float):
        return "float"
    if isinstance(default, str):
        return "str"
    if isinstance(default, (tuple, list)):
        return "int[]"
    if name in _TENSOR_NAMES:
        return "Tensor" + suffix
    if name in _INTLIST_NAMES:
        return "int[]" + suffix
    if name in _INT_NAMES:
        return "int" + suffix
    if name in _FLOAT_NAMES:
        return "float" + suffix
    for word, typ in _ANNOTATION_TYPES:
        if word in annotation:
            return typ + suffix
    return "any"


_NO_DEFAULT = object()
_PYBIND_SIG = re.compile(r"^\s*(?:\d+\.\s*)?\w+\((.*)\)\s*->")


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _pybind_params(doc: str) -> list[tuple[str, str, object, bool]] | None:
    """(name, annotation, default, kwonly) of the first signature in a pybind11 docstring."""
    for line in doc.splitlines():
        m = _PYBIND_SIG.match(line)
        if not m:
            continue
        out, kwonly = [], False
        for part in _split_top(m.group(1)):
            if part == "*":
                kwonly = True
                continue
            if part.startswith("*"):
                return None
            head, _, default = part.partition("=")
            pname, _, ann = head.partition(":")
            value: object = _NO_DEFAULT
            if default:
                try:
                    value = eval(default.strip(), {"__builtins__": {}}, {})  # noqa: S307
                except Exception:
                    value = None
            out.append((pname.strip(), ann.strip(), value, kwonly))
        return out
    return None


def _signature_params(obj) -> list[tuple[str, str, object, bool]] | None:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return _pybind_params(obj.__doc__ or "")
    out = []
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            # f(*size): generate the size as separate positional ints.
            if p.kind is p.VAR_POSITIONAL:
                out.append((p.name, "*", _NO_DEFAULT, False))
            continue
        default = _NO_DEFAULT if p.default is p.empty else p.default
        ann = "" if p.annotation is p.empty else str(p.annotation)
        out.append((p.name, ann, default, p.kind is p.KEYWORD_ONLY))
    return out


def _surface_params(obj, method: bool) -> tuple[Param, ...] | None:
    raw = _signature_params(obj)
    if raw is None:
        return None
    params = []
    for i, (name, ann, default, kwonly) in enumerate(raw):
        if method and i == 0 and name == "self":
            params.append(Param("self", "Tensor", True))
            continue
        if ann == "*":
            params.append(Param(name, "*int", False))
            continue
        required = default is _NO_DEFAULT
        typ = _param_type(name, ann, None if required else default, required)
        params.append(Param(name, typ, required, kwonly))
    if method and (not params or params[0].name != "self"):
        params.insert(0, Param("self", "Tensor", True))
    return tuple(params)


def _surface_targets(covered: set[str]) -> list[Target]:
    import torch

    import ember
    import ember.linalg
    import ember.nn.functional

    out: list[Target] = []
    modules = (
        ("ember", ember, "", "torch"),
        ("ember.nn.functional", ember.nn.functional, "F.", "torch.nn.functional"),
        ("ember.linalg", ember.linalg, "linalg.", "torch.linalg"),
    )
    for path, mod, prefix, torch_mod in modules:
        for name in sorted(dir(mod)):
            full = f"{path}.{name}"
            obj = getattr(mod, name)
            if name.startswith("_") or full in covered or inspect.isclass(obj):
                continue
            if inspect.ismodule(obj) or not callable(obj) or name in SKIP:
                continue
            if getattr(obj, "__module__", "") in ("builtins", "math", "warnings", "__future__"):
                continue
            params = _surface_params(obj, method=False)
            if params is None:
                continue
            twin = f"{torch_mod}.{name}" if callable(resolve(f"{torch_mod}.{name}")) else None
            out.append(
                Target(prefix + name, name, full, twin, params, "function", _is_random(name))
            )
    for name in sorted(dir(ember.Tensor)):
        label = f"Tensor.{name}"
        if label in covered or label in SKIP:
            continue
        dunder = name.startswith("__") and name.endswith("__")
        if (dunder and name[2:-2] not in DUNDERS) or (name.startswith("_") and not dunder):
            continue
        obj = getattr(ember.Tensor, name)
        if not callable(obj) or isinstance(obj, property):
            continue
        params = _surface_params(obj, method=True)
        if params is None:
            continue
        twin = label if hasattr(torch.Tensor, name) else None
        out.append(Target(label, name, label, twin, params, "method", _is_random(label)))
    return out


@functools.cache
def all_targets() -> tuple[Target, ...]:
    """Every target, in a fixed order (see the module docstring)."""
    schema = _schema_targets()
    covered = {t.ember for t in schema}
    return tuple(schema + _surface_targets(covered))
