"""Generate the op bindings, C++ declarations, type stubs and docs table from ops.yaml.

Usage:
    gen.py --yaml ops.yaml --out DIR [--shards N]   # ops_decl.h, bind_ops_<k>.cpp, _C.pyi,
                                                    # ops_schema.json, composite_ops.py
    gen.py --yaml ops.yaml --docs FILE              # the op table for the docs (Markdown)

A malformed entry stops the build with a message that names the entry.
"""

from __future__ import annotations

import argparse
import json
import keyword
import os
import re
import sys
from dataclasses import dataclass, field, replace

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_YAML = os.path.join(HERE, "..", "ops.yaml")

# schema type -> (C++ parameter type in ops_decl.h, binding lambda parameter type, stub type)
TYPES = {
    "Tensor": ("const Tensor&", "const Tensor&", "Tensor"),
    "Tensor?": ("const Tensor&", "std::optional<Tensor>", "Tensor | None"),
    "Tensor|Scalar": ("const Tensor&", "const Operand&", "Tensor | float"),
    "Tensor|Scalar?": ("const Tensor&", "std::optional<Operand>", "Tensor | float | None"),
    "Tensor[]": ("const std::vector<Tensor>&", "const std::vector<Tensor>&", "Sequence[Tensor]"),
    "Tensor?[]": (
        "const std::vector<Tensor>&",
        "const std::vector<std::optional<Tensor>>&",
        "Sequence[Tensor | None]",
    ),
    "Scalar": ("const Scalar&", "const Scalar&", "float"),
    "Scalar?": ("std::optional<Scalar>", "std::optional<Scalar>", "float | None"),
    "int": ("int64_t", "IntArg", "int"),
    "int?": ("std::optional<int64_t>", "std::optional<IntArg>", "int | None"),
    "int[]": ("const Shape&", "const Shape&", "Sequence[int] | int"),
    "int[]?": ("const std::optional<Shape>&", "std::optional<Shape>", "Sequence[int] | int | None"),
    "bool": ("bool", "BoolArg", "bool"),
    "bool?": ("std::optional<bool>", "std::optional<BoolArg>", "bool | None"),
    "float": ("double", "double", "float"),
    "float?": ("std::optional<double>", "std::optional<double>", "float | None"),
    "str": ("const std::string&", "const std::string&", "str"),
    "str?": ("const std::optional<std::string>&", "std::optional<std::string>", "str | None"),
    "ScalarType?": ("std::optional<ScalarType>", "std::optional<ScalarType>", "dtype | None"),
    "Device?": ("std::optional<Device>", "std::optional<Device>", "device | str | None"),
    "Generator?": ("Generator*", "Generator*", "Generator | None"),
}
# argument types only a Python composite may declare: its body reads and checks the value
# (tensordot's dims: an int, or two lists of dims)
PYTHON_ONLY_TYPES = {"object": "Any"}
RETURNS = {
    "Tensor": ("Tensor", "Tensor"),
    "Tensor[]": ("std::vector<Tensor>", "tuple[Tensor, ...]"),
    "Scalar": ("Scalar", "float"),
    "int": ("int64_t", "int"),
    "bool": ("bool", "bool"),
    # Python composites only: a result whose structure depends on the arguments (unique's
    # tensor, or tuple with return_inverse / return_counts)
    "object": ("", "Any"),
}
VARIANTS = {"function", "method", "inplace", "out"}
ALL_DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "uint16",
    "uint32",
    "uint64",
]  # ScalarType order
# "all" is the first ten dtypes (those of dispatch_all); the complex and wide unsigned types,
# added later, are named where an op supports them: "any" is every dtype.
DTYPE_SETS = {
    "any": ALL_DTYPES,
    "all": ALL_DTYPES[:10],
    "numeric": ALL_DTYPES[1:10],
    "integral": ALL_DTYPES[:6],
    "float": ALL_DTYPES[6:10],
    "complex": ALL_DTYPES[10:12],
    "unsigned": ALL_DTYPES[12:15],
}
DTYPE_INDEX = {n: i for i, n in enumerate(ALL_DTYPES)}
OPERATOR_KINDS = {"self", "reflected", "inplace"}
KEYS = {
    "name",
    "signature",
    "variants",
    "dtypes",
    "doc",
    "operators",
    "varargs",
    "cpp",
    "composite",
    "differentiable",
    "dispatch",
    "autocast",
    "overlap",
    "number_self",
    "dtypes_of",
}
# dtypes_of: promoted -- `dtypes` is checked on PyTorch's result_type of the tensor arguments
#   (and numbers given for Tensor|Scalar ones) instead of on the first tensor: ops whose kernel
#   computes in the common dtype (addcmul of a bool self with int tensors runs in int).
# number_self: the function also takes a Python number for self (torch.add(2, x): PyTorch's
#   parser lets numbers stand for the tensors of these ops): a second overload, registered
#   after the tensor one, so that calls with a tensor first never reach it.
#     true         the second argument keeps its type (add(2, 3) is a tensor, as in PyTorch)
#     with_tensor  only with a tensor second (remainder(2, x); remainder(2, 3) is PyTorch's
#                  TypeError)
# overlap: allowed -- the in-place / out= variants skip check_written (ops_util.h): PyTorch
#   lets these ops write into a tensor whose elements share memory (fill_, zero_, masked_fill_,
#   index_put_: every aliased element gets the same value, or the op defines the order).
# autocast: the op's policy under ember.autocast (src/ember/autocast.h), as PyTorch's autocast
#   op lists give it: lower | fp32 | promote for both device types, or a mapping
#   {cpu: ..., cuda: ...} where the lists of the two device types differ.
AUTOCAST_POLICIES = {"lower": "Lower", "fp32": "Fp32", "promote": "Promote"}
AUTOCAST_DEVICES = ("cpu", "cuda")
# dispatch: how an op finds its kernel for the tensors' device.
#   device  (default) one kernel per device: ember::cpu::<cpp>, ember::cuda::<cpp>; all
#           tensor arguments on one device (CPU 0-d tensors may join CUDA ones as scalars)
#   mixed   like device, but the tensors may be on different devices (copies)
#   generic one implementation for every device (metadata-only views; composite ops)
DISPATCH_KINDS = {"device", "mixed", "generic"}
# composite: the op is written in terms of other ops (no kernels):
#   true    a C++ body in ember::ops (dispatch generic), bound like any op; autograd sees the op
#           itself, so it needs a derivatives.yaml entry (views, and ops whose fused formula is
#           better than the one their ops would give)
#   python  a Python body: the function of the same name in ember_tensor/_composites/ (one
#           module per family), installed with its variants from composite_ops.py; autograd
#           records the ops it calls, so it needs no derivatives.yaml entry (it may have one,
#           saying why: then it is recorded as one node with that formula)
COMPOSITE_BODIES = {False: "", True: "cpp", "python": "python"}


class SchemaError(Exception):
    pass


@dataclass
class Arg:
    name: str
    type: str
    default: str | None = None
    kwonly: bool = False


@dataclass
class Op:
    name: str
    args: list[Arg]
    returns: list[tuple[str, str]]  # (type, field name)
    variants: list[str]
    dtypes: list[str]
    doc: str
    operators: dict[str, str] = field(default_factory=dict)
    varargs: str | None = None  # an int[] (Tensor[] too: python composites) arg also taken as *args
    cpp: str = ""
    composite: bool = False
    signature: str = ""
    differentiable: bool = True  # false: outputs never require grad (random fills, *_like)
    key: str = ""  # the op's name for the autograd hook: the name, or cpp for overloads
    dispatch: str = "device"  # see DISPATCH_KINDS
    autocast: dict[str, str] = field(default_factory=dict)  # device type -> policy
    body: str = ""  # a composite's body: "cpp" or "python" (see COMPOSITE_BODIES)
    overlap_allowed: bool = False  # the `overlap: allowed` key
    number_self: str = ""  # the `number_self` key: "", "true" or "with_tensor"
    dtypes_promoted: bool = False  # the `dtypes_of: promoted` key

    @property
    def has_kernels(self) -> bool:
        """Whether the op has per-device kernels (ember::cpu / ember::cuda) behind a dispatcher."""
        return self.dispatch != "generic"

    @property
    def tensor_args(self) -> list[Arg]:
        return [a for a in self.args if a.type.startswith("Tensor")]


def split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


SIG_RE = re.compile(r"^\((?P<args>.*)\)\s*->\s*(?P<ret>.+)$")
ARG_RE = re.compile(
    r"^(?P<type>[A-Za-z|\[\]?]+)\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)(\s*=\s*(?P<default>.+))?$"
)


def parse_default(arg: Arg) -> None:
    d = arg.default
    if d is None:
        return
    ok = (
        d == "None"
        and arg.type.endswith("?")
        or d in ("True", "False")
        and arg.type.startswith("bool")
        or re.fullmatch(r"-?\d+", d)
        and arg.type.split("?")[0] in ("int", "Scalar", "float", "int[]")
        or re.fullmatch(r"-?(\d+\.\d*|inf|\d+e-?\d+)", d)
        and arg.type.split("?")[0] in ("float", "Scalar")
        or re.fullmatch(r"\[[-\d, ]*\]", d)
        and arg.type.startswith("int[]")
        or re.fullmatch(r"'[A-Za-z_]*'", d)
        and arg.type.startswith("str")
        or arg.type == "object"
    )
    if not ok:
        raise SchemaError(f"argument '{arg.name}': default {d!r} does not fit type {arg.type}")


def parse_op(entry: dict, seen: set[str]) -> Op:
    if not isinstance(entry, dict):
        raise SchemaError("entry is not a mapping")
    unknown = set(entry) - KEYS
    if unknown:
        raise SchemaError(f"unknown keys {sorted(unknown)}; allowed: {sorted(KEYS)}")
    for key in ("name", "signature", "variants", "dtypes", "doc"):
        if key not in entry:
            raise SchemaError(f"missing required key '{key}'")
    name = entry["name"]
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", str(name)):
        raise SchemaError(f"bad op name {name!r}")
    cpp = entry.get("cpp", name)
    if (name, cpp) in seen:
        raise SchemaError("duplicate op: entries that share a name need distinct 'cpp' names")
    m = SIG_RE.match(entry["signature"].strip())
    if not m:
        raise SchemaError(f"signature {entry['signature']!r} is not '(args) -> ret'")
    args: list[Arg] = []
    kwonly = False
    for part in split_top(m.group("args")):
        if part == "*":
            kwonly = True
            continue
        am = ARG_RE.match(part)
        if not am:
            raise SchemaError(f"cannot parse argument {part!r}")
        if am.group("type") not in TYPES and not (
            am.group("type") in PYTHON_ONLY_TYPES and entry.get("composite") == "python"
        ):
            raise SchemaError(
                f"argument {am.group('name')!r} has unknown type {am.group('type')!r}"
            )
        arg = Arg(am.group("name"), am.group("type"), am.group("default"), kwonly)
        parse_default(arg)
        if arg.name == "out":
            raise SchemaError("'out' is implied by the 'out' variant; do not declare it")
        args.append(arg)
    names = [a.name for a in args]
    if len(set(names)) != len(names):
        raise SchemaError("duplicate argument names")
    ret = m.group("ret").strip()
    returns: list[tuple[str, str]] = []
    if ret.startswith("("):
        for part in split_top(ret[1:-1]):
            t, _, fname = part.partition(" ")
            if t != "Tensor" or not fname:
                raise SchemaError(f"tuple returns must be 'Tensor name' fields, got {part!r}")
            returns.append((t, fname.strip()))
    else:
        if ret not in RETURNS or (ret == "object" and entry.get("composite") != "python"):
            raise SchemaError(f"unknown return type {ret!r}")
        returns.append((ret, ""))
    variants = entry["variants"]
    if not isinstance(variants, list) or not variants or set(variants) - VARIANTS:
        raise SchemaError(f"variants must be a non-empty list drawn from {sorted(VARIANTS)}")
    # a Python composite's function may also take a number first (xlogy(2, x)); its method
    # is then called on a tensor
    self_types = ("Tensor", "Tensor|Scalar") if entry.get("composite") == "python" else ("Tensor",)
    has_self = bool(args) and args[0].name == "self" and args[0].type in self_types
    if ("method" in variants or "inplace" in variants) and not has_self:
        raise SchemaError("method and inplace variants need a first argument 'Tensor self'")
    if ("out" in variants or "inplace" in variants) and returns != [("Tensor", "")]:
        raise SchemaError("out and inplace variants need a single Tensor return")
    dtypes = entry["dtypes"]
    if isinstance(dtypes, str):
        if dtypes not in DTYPE_SETS:
            raise SchemaError(f"dtypes {dtypes!r} is not one of {sorted(DTYPE_SETS)} or a list")
        dtypes = DTYPE_SETS[dtypes]
    elif isinstance(dtypes, list) and not set(dtypes) - set(DTYPE_INDEX) - set(DTYPE_SETS):
        # a list of dtype names and set names, e.g. [all, complex]: kept in ScalarType order
        named = {d for n in dtypes for d in DTYPE_SETS.get(n, [n])}
        dtypes = [d for d in ALL_DTYPES if d in named]
    else:
        raise SchemaError(
            f"dtypes must be a set name or a list of dtype and set names, got {dtypes!r}"
        )
    operators = entry.get("operators", {}) or {}
    if not isinstance(operators, dict) or set(operators.values()) - OPERATOR_KINDS:
        raise SchemaError(f"operators must map dunder names to one of {sorted(OPERATOR_KINDS)}")
    for dunder, kind in operators.items():
        if not re.fullmatch(r"__[a-z]+__", dunder):
            raise SchemaError(f"bad operator name {dunder!r}")
        if kind == "inplace" and "inplace" not in variants:
            raise SchemaError(f"operator {dunder} is in-place but the op has no inplace variant")
        if len([a for a in args if a.default is None]) != 2 and kind != "self":
            raise SchemaError(f"operator {dunder} needs a binary op")
    varargs = entry.get("varargs")
    composite = entry.get("composite", False)
    if varargs is not None:
        spread = ("int[]", "Tensor[]") if composite == "python" else ("int[]",)
        if varargs not in names or next(a for a in args if a.name == varargs).type not in spread:
            raise SchemaError(f"varargs {varargs!r} must name an argument of type "
                              f"{' or '.join(spread)}")
    if composite not in COMPOSITE_BODIES:
        raise SchemaError(f"composite must be one of {COMPOSITE_BODIES}, got {composite!r}")
    body = COMPOSITE_BODIES[composite]
    dispatch = entry.get("dispatch", "generic" if composite else "device")
    if dispatch not in DISPATCH_KINDS:
        raise SchemaError(f"dispatch must be one of {sorted(DISPATCH_KINDS)}, got {dispatch!r}")
    if composite and dispatch != "generic":
        raise SchemaError("a composite op is generic: it runs its ops on any device")
    if body == "python" and (entry.get("cpp") or entry.get("autocast")):
        raise SchemaError("a Python composite has no cpp name or autocast policy: the ops it "
                          "calls carry theirs")
    differentiable = entry.get("differentiable", True)
    if not isinstance(differentiable, bool):
        raise SchemaError(f"differentiable must be true or false, got {differentiable!r}")
    doc = str(entry["doc"]).strip()
    if not doc:
        raise SchemaError("empty doc")
    autocast = parse_autocast(entry.get("autocast"))
    if autocast and not any(a.type.startswith("Tensor") for a in args):
        raise SchemaError("an autocast policy needs a tensor argument")
    overlap = entry.get("overlap")
    if overlap not in (None, "allowed"):
        raise SchemaError(f"overlap must be 'allowed' when given, got {overlap!r}")
    if overlap and not ({"inplace", "out"} & set(variants)):
        raise SchemaError("overlap: allowed needs an inplace or out variant")
    dtypes_of = entry.get("dtypes_of")
    if dtypes_of not in (None, "promoted"):
        raise SchemaError(f"dtypes_of must be 'promoted' when given, got {dtypes_of!r}")
    return Op(
        name,
        args,
        returns,
        variants,
        dtypes,
        doc,
        operators,
        varargs,
        entry.get("cpp", name),
        bool(composite),
        entry["signature"],
        differentiable,
        body=body,
        dispatch=dispatch,
        autocast=autocast,
        overlap_allowed=overlap == "allowed",
        number_self=parse_number_self(entry.get("number_self")),
        dtypes_promoted=dtypes_of == "promoted",
    )


def parse_number_self(value) -> str:
    if value is None or value is False:
        return ""
    if value is True or value == "with_tensor":
        return "true" if value is True else value
    raise SchemaError(f"number_self must be true or 'with_tensor', got {value!r}")


def parse_autocast(value) -> dict[str, str]:
    """The `autocast` key: one policy for both device types, or a {device type: policy} map."""
    if value is None:
        return {}
    if isinstance(value, str):
        value = dict.fromkeys(AUTOCAST_DEVICES, value)
    if not isinstance(value, dict) or not value or set(value) - set(AUTOCAST_DEVICES):
        raise SchemaError(f"autocast must be a policy or a mapping from {AUTOCAST_DEVICES}")
    for policy in value.values():
        if policy not in AUTOCAST_POLICIES:
            raise SchemaError(f"autocast policy must be one of {sorted(AUTOCAST_POLICIES)}")
    return dict(value)


def autocast_wrap(op: Op, variant: str, inner: str, params: list[str], bound: list[Arg]) -> str:
    """The binding lambda of an op on an autocast list: when autocast is on for the device type
    of its first tensor argument, its floating-point tensor arguments are cast (through
    Tensor.to's path, so autograd sees the casts) before the op runs. As in PyTorch, in-place
    and out= calls, and calls that give an explicit dtype=, are not autocast."""
    names = [a.name for a in bound] + (["out"] if variant == "out" else [])
    cond = "autocast::any_enabled()"
    if variant == "out":
        cond += " && !out"
    if any(a.name == "dtype" and a.type == "ScalarType?" for a in bound):
        cond += " && !dtype"
    pol = [
        f"autocast::Policy::{AUTOCAST_POLICIES[op.autocast[d]] if d in op.autocast else 'None'}"
        for d in AUTOCAST_DEVICES
    ]
    tensors = [a.name for a in bound if a.type.startswith("Tensor")]
    see = "".join(f" ac_.see({n});" for n in tensors)
    widen = "".join(f" ac_.widen({n});" for n in tensors)
    cast = [f"ac_.cast({n})" if n in tensors else n for n in names]
    return (
        f"[]({', '.join(params)}) -> py::object {{\n"
        f"  auto impl_ = {inner};\n"
        f"  if ({cond}) {{\n"
        f"    autocast::Plan ac_({', '.join(pol)});\n   {see}\n"
        "    if (ac_.resolve()) {\n"
        f"      if (ac_.promotes()) {{{widen} }}\n"
        f"      return impl_({', '.join(cast)});\n"
        "    }\n  }\n"
        f"  return impl_({', '.join(names)});\n}}"
    )


def load(path: str) -> list[Op]:
    with open(path) as f:
        try:
            data = yaml.safe_load(f)
        except yaml.YAMLError as e:
            raise SystemExit(f"{path} is not valid YAML: {e}") from None
    if not isinstance(data, list):
        raise SystemExit(f"{path}: top level must be a list of op entries")
    ops, seen = [], set()
    for i, entry in enumerate(data):
        label = entry.get("name", f"#{i}") if isinstance(entry, dict) else f"#{i}"
        try:
            op = parse_op(entry, seen)
        except SchemaError as e:
            raise SystemExit(f"{path}: malformed op entry {i} ('{label}'): {e}") from None
        seen.add((op.name, op.cpp))
        ops.append(op)
    counts: dict[str, int] = {}
    for op in ops:
        counts[op.name] = counts.get(op.name, 0) + 1
    for op in ops:
        op.key = op.name if counts[op.name] == 1 else op.cpp
    return ops


# ----------------------------------------------------------------------------- C++ emission


def cpp_return(op: Op) -> str:
    if len(op.returns) > 1:
        return "std::tuple<" + ", ".join("Tensor" for _ in op.returns) + ">"
    return RETURNS[op.returns[0][0]][0]


def cpp_params(op: Op) -> list[str]:
    params = [f"{TYPES[a.type][0]} {a.name}" for a in op.args]
    if "out" in op.variants or "inplace" in op.variants:
        params.append("const Tensor& out")
    return params


def unique_cpp(ops: list[Op]) -> list[Op]:
    """One op per C++ function (overloads of a name may share one)."""
    seen: set[str] = set()
    out = []
    for op in ops:
        if op.cpp not in seen:
            seen.add(op.cpp)
            out.append(op)
    return out


def cpp_param_types(op: Op) -> list[str]:
    """The C++ parameter types, without names (weak definitions, function pointers)."""
    return [p.rsplit(" ", 1)[0] for p in cpp_params(op)]


def emit_decl(ops: list[Op]) -> str:
    """ember::ops::<cpp> for every op (a dispatcher, or the generic implementation), and the
    per-device kernels ember::cpu::<cpp> / ember::cuda::<cpp> of ops that have them."""
    lines = [
        "// Generated by codegen/gen.py from ops.yaml. Do not edit.",
        "#pragma once",
        '#include "ember/core/tensor.h"',
        '#include "ember/core/generator.h"',
        "#include <string>",
        "#include <tuple>",
        "#include <vector>",
        "",
        "namespace ember::ops {",
        "",
    ]
    ops = unique_cpp(ops)
    for op in ops:
        lines.append(f"// {op.name}{op.signature}")
        lines.append(f"{cpp_return(op)} {op.cpp}({', '.join(cpp_params(op))});")
    lines += ["", "}  // namespace ember::ops", ""]
    for ns in ("cpu", "cuda"):
        lines += [f"namespace ember::{ns} {{", ""]
        if ns == "cpu":  # CPU kernels call the generic ops (views) unqualified
            lines += ["using namespace ember::ops;", ""]
        kernels = [op for op in ops if op.has_kernels]
        lines += [f"{cpp_return(op)} {op.cpp}({', '.join(cpp_params(op))});" for op in kernels]
        lines += ["", f"}}  // namespace ember::{ns}", ""]
    # CUDA kernels register themselves here (EMBER_REGISTER_CUDA_KERNEL in a .cu file); the
    # dispatcher raises NotImplementedError for an op whose entry is still null
    lines += ["namespace ember {", "", "struct CudaKernelTable {"]
    for op in ops:
        if op.has_kernels:
            lines.append(
                f"  {cpp_return(op)} (*{op.cpp})({', '.join(cpp_param_types(op))}) = nullptr;"
            )
    lines += [
        "};",
        "CudaKernelTable& cuda_kernels();",
        "// The C++ names of the ops with a CUDA kernel registered, and of those without.",
        "std::vector<std::string> cuda_kernel_coverage(bool registered);",
        "",
        "}  // namespace ember",
        "",
        "#define EMBER_REGISTER_CUDA_KERNEL(op) \\",
        "  static const bool ember_cuda_kernel_registered_##op = "
        "(::ember::cuda_kernels().op = &::ember::cuda::op, true)",
        "",
    ]
    return "\n".join(lines)


def py_default(arg: Arg) -> str:
    d = arg.default
    if d == "None":
        return "py::none()"
    if d in ("True", "False"):
        return f"py::bool_({d.lower()})"
    if d.startswith("["):
        items = [x.strip() for x in d[1:-1].split(",") if x.strip()]
        return "py::make_tuple(" + ", ".join(items) + ")" if items else "py::tuple()"
    if d.startswith("'"):
        return f'py::str("{d[1:-1]}")'
    if d == "inf":
        return "py::float_(INFINITY)"
    if re.fullmatch(r"-?\d+", d) and not arg.type.startswith("float"):
        return f"py::int_({d})"
    return f"py::float_({float(d)!r})"


# The TensorImpl* of a binding parameter of a tensor type (None: not a single tensor).
IMPL_EXPR = {
    "Tensor": "{n}.get()",
    "Tensor?": "({n} ? {n}->get() : nullptr)",
    "Tensor|Scalar": "{n}.t.get()",
    "Tensor|Scalar?": "({n} ? {n}->t.get() : nullptr)",
}


def written_check(op: Op, variant: str, bound: list[Arg]) -> str:
    """check_written for the tensor an in-place or out= variant writes (ops_util.h); an
    in-place variant with a dtype= also checks that it is self's (check_inplace_dtype)."""
    if op.overlap_allowed or variant not in ("inplace", "out"):
        return ""
    inputs = [
        IMPL_EXPR[a.type].format(n=a.name)
        for a in bound
        if a.type in IMPL_EXPR and not (variant == "inplace" and a.name == "self")
    ]
    if variant == "inplace":
        check = f'  check_written("{op.name}_", self.get(), {{{", ".join(inputs)}}});\n'
        if any(a.name == "dtype" and a.type == "ScalarType?" for a in bound):
            check += f'  check_inplace_dtype("{op.name}_", self, dtype);\n'
        return check
    return f'  if (out) check_written("{op.name}", out->get(), {{{", ".join(inputs)}}});\n'


def none_is_default(arg: Arg) -> bool:
    """An int[] argument whose default is [] takes None for it, as PyTorch's parser does
    (``amax(x, None)``, ``roll(x, 1, None)``)."""
    return arg.type == "int[]" and arg.default == "[]"


def binding_type(arg: Arg) -> str:
    """The C++ type of the binding's parameter for arg (it converts to the op's type)."""
    if arg.name == "requires_grad" and arg.type == "bool":
        return "FlagArg"  # PyTorch's factories take requires_grad=None as False
    if none_is_default(arg):
        return "std::optional<Shape>"
    return TYPES[arg.type][1]


def takes_none(arg: Arg) -> bool:
    return arg.type.endswith("?") or binding_type(arg) == "FlagArg" or none_is_default(arg)


def unwrap(arg: Arg) -> str:
    """Expression converting the binding parameter into the C++ op argument."""
    if arg.type == "Tensor?":
        return f"({arg.name} ? *{arg.name} : Tensor())"
    if arg.type == "Tensor|Scalar":
        return f"{arg.name}.t"
    if arg.type == "Tensor|Scalar?":
        return f"({arg.name} ? {arg.name}->t : Tensor())"
    if arg.type == "Tensor?[]":
        return f"unwrap_optionals({arg.name})"
    if arg.type == "bool?":  # std::optional<bool> takes no std::optional<BoolArg>
        return f"unwrap_bool({arg.name})"
    if none_is_default(arg):
        return f"({arg.name} ? *{arg.name} : Shape{{}})"
    return arg.name


def work_expr(op: Op) -> str:
    """Expression estimating the elements an op touches (decides GIL release)."""
    terms = []
    for a in op.args:
        if a.type in ("Tensor",):
            terms.append(f"{a.name}->numel()")
        elif a.type == "Tensor|Scalar":
            terms.append(f"{a.name}.t->numel()")
        elif a.type == "Tensor[]":
            terms.append(f"list_numel({a.name})")
        elif a.type == "int[]" and a.name in ("size",):
            terms.append(f"shape_numel({a.name})")
    if not terms:
        return "0"
    return "std::max<int64_t>({" + ", ".join(terms) + "})" if len(terms) > 1 else terms[0]


def cpp_default(arg: Arg) -> str:
    """C++ expression for a default, used where operators fill in trailing arguments."""
    d, t = arg.default, arg.type
    if d == "None":
        return "Tensor()" if t.startswith("Tensor") else "std::nullopt"
    if t == "Scalar":
        return (
            f"Scalar::from_int({d})" if re.fullmatch(r"-?\d+", d) else f"Scalar::from_double({d})"
        )
    if d in ("True", "False"):
        return d.lower()
    return d


def grad_check(op: Op) -> str:
    terms = []
    for a in op.args:
        if a.type in ("Tensor[]", "Tensor?[]"):
            terms.append(f"any_requires_grad({unwrap(a)})")
        elif a.type.startswith("Tensor"):
            terms.append(f"needs_grad({unwrap(a)})")
    return " || ".join(terms) if terms else "false"


def dtype_mask(op: Op) -> int:
    return sum(1 << DTYPE_INDEX[d] for d in op.dtypes)


def record_scope(name: str, key: str, kind: str, kernel: str | None = None) -> str:
    """The profiler's range of one op call (src/ember/profiler.h): `rec_` from here to the end
    of the enclosing block."""
    extra = f', "{kernel}"' if kernel else ""
    scope = f'"ember::{name}", "{key}", profiler::Kind::{kind}{extra}'
    return f"  profiler::RecordScope rec_({scope});\n"


def record_inputs(args: list[Arg], exprs: list[str]) -> str:
    """The line giving the profiler each argument of an op (record_shapes): tensors and lists of
    tensors by value, other arguments by their schema type."""
    items = []
    for a, e in zip(args, exprs):
        if a.type.startswith("Tensor"):
            items.append(f"rec_.input({e});")
        else:
            items.append(f'rec_.input("{a.type.rstrip("?")}");')
    if not items:
        return ""
    return f"  if (rec_.wants_inputs()) {{ {' '.join(items)} }}\n"


def emit_lambda(op: Op, variant: str, swap: bool = False, operator: bool = False) -> str:
    """One binding lambda. variant: function | method | inplace | out.

    operator: only the arguments without defaults are parameters (Python passes one or two);
    swap: the first two are exchanged (reflected operators such as __rsub__)."""
    bound = [a for a in op.args if not operator or a.default is None]
    params = [f"{binding_type(a)} {a.name}" for a in bound]
    if variant == "out":
        params.append("std::optional<Tensor> out")
    locals_ = "".join(
        f"  {TYPES[a.type][0].replace('const ', '').replace('&', '')} {a.name} = "
        f"{cpp_default(a)};\n"
        for a in op.args
        if a not in bound
    )
    call_args = [unwrap(a) if a in bound else a.name for a in op.args]
    if swap:
        call_args[0], call_args[1] = call_args[1], call_args[0]
    hook_items = [f"py::cast({c})" for c in call_args]
    recorded = list(call_args)  # (before out is appended)
    if "out" in op.variants or "inplace" in op.variants:
        call_args.append(
            {"out": "(out ? *out : Tensor())", "inplace": "self"}.get(variant, "Tensor()")
        )
    first = op.tensor_args[0] if op.tensor_args else None
    # pybind11 lets None through for holder types: reject it for required tensors
    # an operator given None for its other tensor returns NotImplemented, as for any other
    # operand it cannot take (pybind11 tries the next overload on reference_cast_error)
    check = "".join(
        f"  if (!{a.name}) throw py::reference_cast_error();\n"
        if operator and a.type == "Tensor" and a is not bound[0]
        else f'  check_not_none("{op.name}", "{a.name}", {a.name});\n'
        for a in bound
        if a.type in ("Tensor", "Tensor[]")
    )
    if op.dtypes_promoted and len(op.dtypes) < len(ALL_DTYPES):
        impls = ", ".join(IMPL_EXPR[a.type].format(n=a.name) for a in bound if a.type in IMPL_EXPR)
        check += f'  check_dtypes("{op.name}", result_type({{{impls}}}), {dtype_mask(op)}u);\n'
    elif first is not None and first.type == "Tensor" and len(op.dtypes) < len(ALL_DTYPES):
        check += f'  check_dtypes("{op.name}", {first.name}, {dtype_mask(op)}u);\n'
    check += written_check(op, variant, bound)
    ret = cpp_return(op)
    # The provider sees an in-place or out= write before it happens: it must refuse a leaf
    # that requires grad before the data changes, and may keep what the write destroys.
    pre = ""
    if op.differentiable and (variant == "inplace" or variant == "out"):
        target = "self" if variant == "inplace" else "*out"
        guard = (
            grad_check(op)
            if variant == "inplace"
            else f"out && ({grad_check(op)} || needs_grad(*out))"
        )
        pre_kind = "pre_inplace" if variant == "inplace" else "pre_out"
        pre = (
            f"  if (autograd_hook_installed() && ({guard}))\n"
            f'    call_autograd_hook("{op.key}", "{pre_kind}", args_(), py::cast({target}));\n'
        )
    # a result that views a temporary made inside the op is not a view for the user
    tensor_call_args = [
        c for a, c in zip(op.args, call_args) if a.type.startswith("Tensor")
    ] + call_args[len(op.args) :]
    drop = ""
    if op.returns[0][0] in ("Tensor", "Tensor[]") and tensor_call_args:
        drop = f"  drop_internal_base(result, {', '.join(tensor_call_args)});\n"
    # an out-of-tree kernel registered for the op runs instead of the built-in one
    out_ptr = {"out": "(out ? &*out : nullptr)", "inplace": "&self"}.get(variant, "nullptr")
    override = f'run_kernel_override("{op.name}", args_(), {out_ptr}, result)'
    # the arguments as a Python tuple, for the hooks and overrides that want them: built at one
    # place, so each binding instantiates pybind11's casts once
    args_ = f"  auto args_ = [&] {{ return py::make_tuple({', '.join(hook_items)}); }};\n"
    body = (
        f"{args_}{pre}  {ret} result;\n"
        f"  if (!(kernel_overrides_active() && {override})) {{\n"
        f"    MaybeNoGil nogil({work_expr(op)});\n"
        + ("    InplaceTarget self_kept_(self.get());\n" if variant == "inplace" else "")
        + f"    result = ops::{op.cpp}({', '.join(call_args)});\n  }}\n{drop}"
    )
    wrap = f'wrap_result("{op.name}", result)'
    if len(op.returns) > 1:  # a namedtuple with the schema's field names
        fields = ", ".join(f'"{r[1]}"' for r in op.returns)
        wrap = f'wrap_result("{op.name}", result, {{{fields}}})'
    kind = '"function"'
    if variant == "inplace":
        body += "  bump_version(self);\n"
        kind = '"inplace"'
    elif variant == "out":
        body += "  if (out) bump_version(*out);\n"
        kind = 'out ? "out" : "function"'
    if op.differentiable and op.returns[0][0] in ("Tensor", "Tensor[]"):
        body += (
            f"  py::object py_result = {wrap};\n"
            f"  if (autograd_hook_installed() && ({grad_check(op)}))\n"
            f'    call_autograd_hook("{op.key}", {kind}, args_(), py_result);\n'
            "  return py_result;\n"
        )
    else:
        body += f"  return {wrap};\n"
    record = record_scope(op.name + ("_" if variant == "inplace" else ""), op.cpp, "Op")
    record += record_inputs(op.args, recorded)
    inner = f"[]({', '.join(params)}) -> py::object {{\n{locals_}{record}{check}{body}}}"
    if op.autocast and variant != "inplace":
        return autocast_wrap(op, variant, inner, params, bound)
    return inner


def emit_args(op: Op, variant: str, skip_self: bool) -> str:
    out = []
    kw = False
    for i, a in enumerate(op.args):
        if i == 0 and skip_self:
            continue
        if a.kwonly and not kw:
            out.append("py::kw_only()")
            kw = True
        s = f'py::arg("{a.name}")'
        if takes_none(a):
            s += ".none(true)"
        if a.default is not None:
            s += f" = {py_default(a)}"
        out.append(s)
    if variant == "out":
        if not kw:
            out.append("py::kw_only()")
        out.append('py::arg("out").none(true) = py::none()')
    return ", ".join(out)


def emit_varargs_lambda(op: Op, variant: str) -> str:
    """Binding for ops like view(*shape): the int[] argument may also be spread as *args, or
    given by name.

    Arguments before it stay positional; those after it become keyword-only."""
    va = op.varargs
    idx = next(i for i, a in enumerate(op.args) if a.name == va)
    params = [f"{binding_type(a)} {a.name}" for a in op.args[:idx]] + ["py::args rest"]
    params += [f"{binding_type(a)} {a.name}" for a in op.args[idx + 1 :]]
    if variant == "out":
        params.append("std::optional<Tensor> out")
    params.append(f"py::object {va}_keyword")  # the argument by name: flip(x, dims=(0,))
    call = [
        a.name if a.name != va else f'shape_from_varargs("{op.name}", "{va}", rest, {va}_keyword)'
        for a in op.args
    ]
    if variant == "out":
        call.append("out")
    return (
        f"[]({', '.join(params)}) -> py::object {{\n"
        f"  auto impl = {emit_lambda(op, variant)};\n"
        f"  return impl({', '.join(call)});\n}}"
    )


def emit_varargs_args(op: Op, variant: str, skip_self: bool) -> str:
    idx = next(i for i, a in enumerate(op.args) if a.name == op.varargs)
    out = [f'py::arg("{a.name}")' for a in op.args[:idx]][(1 if skip_self else 0) :]
    for a in op.args[idx + 1 :]:
        s = f'py::arg("{a.name}")' + (".none(true)" if takes_none(a) else "")
        out.append(s + (f" = {py_default(a)}" if a.default is not None else ""))
    if variant == "out":
        out.append('py::arg("out").none(true) = py::none()')
    out.append(f'py::arg("{op.varargs}").none(true) = py::none()')
    return ", ".join(out)


def number_self_form(op: Op) -> Op:
    """op with a number (or a tensor) for self, and (number_self: with_tensor) a tensor for its
    second argument: the schema of its number_self overload."""
    first, second, *rest = op.args
    if first.name != "self" or not second.type.startswith("Tensor"):
        raise SchemaError(f"{op.name}: number_self needs 'Tensor self' and a second tensor")
    if op.number_self == "with_tensor":
        second = replace(second, type="Tensor")
    return replace(op, args=[replace(first, type="Tensor|Scalar"), second, *rest])


def emit_bindings(ops: list[Op], shard: int, nshards: int) -> str:
    lines = [
        "// Generated by codegen/gen.py from ops.yaml. Do not edit.",
        '#include "ember/ops/ops_util.h"  // check_written',
        '#include "ember/python/python_api.h"',
        '#include "ember/python/bind_autocast.h"',
        '#include "ember/runtime/profiler.h"',
        '#include "ops_decl.h"',
        "",
        "namespace ember {",
        "",
        # Bindings are passed to pybind11 as function pointers (the unary + on a lambda without
        # captures) and docstrings as const char*: pybind11 instantiates its argument loader and
        # dispatcher once per distinct C++ signature and attribute list, so bindings that share
        # both share one copy (456 lambdas and literal lengths would make one each).
        "inline const char* doc_(const char* s) { return s; }",
        "",
        f"void bind_ops_{shard}(py::module_& m, TensorClass& cls) {{",
        "  (void)m; (void)cls;",
    ]
    # overloads of one name stay in one shard, in declaration order (pybind11 tries them in
    # registration order)
    first: dict[str, int] = {}
    for i, op in enumerate(ops):
        first.setdefault(op.name, i)
    for op in ops:
        if first[op.name] % nshards != shard:
            continue
        doc = op.doc.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        for variant in ("function", "method", "inplace"):
            if variant not in op.variants:
                continue
            target = "m" if variant == "function" else "cls"
            name = op.name + ("_" if variant == "inplace" else "")
            bvar = "out" if variant == "function" and "out" in op.variants else variant
            skip_self = variant != "function"
            if op.varargs:
                lam = emit_varargs_lambda(op, bvar)
                args = emit_varargs_args(op, bvar, skip_self)
            else:
                lam = emit_lambda(op, bvar)
                args = emit_args(op, bvar, skip_self)
            sep = ", " if args else ""
            lines.append(f'  {target}.def("{name}", +{lam}, {args}{sep}doc_("{doc}"));')
            if variant == "function" and op.number_self:
                alt = number_self_form(op)
                lam, args = emit_lambda(alt, bvar), emit_args(alt, bvar, False)
                lines.append(f'  m.def("{name}", +{lam}, {args}, doc_("{doc}"));')
        for dunder, kind in op.operators.items():
            variant = "inplace" if kind == "inplace" else "method"
            lam = emit_lambda(op, variant, swap=(kind == "reflected"), operator=True)
            lines.append(f'  cls.def("{dunder}", +{lam}, py::is_operator());')
    lines += ["}", "", "}  // namespace ember", ""]
    return "\n".join(lines)


def dispatch_args(op: Op) -> str:
    """The dispatcher's DeviceArg list: every tensor argument, and out."""
    items = []
    for a in op.args:
        if a.type in ("Tensor[]", "Tensor?[]"):
            items.append(f'DeviceArg{{"{a.name}", nullptr, &{a.name}}}')
        elif a.type.startswith("Tensor"):
            items.append(f'DeviceArg{{"{a.name}", &{a.name}, nullptr}}')
    if "out" in op.variants or "inplace" in op.variants:
        items.append('DeviceArg{"out", &out, nullptr}')
    return "{" + ", ".join(items) + "}"


def emit_fallbacks(ops: list[Op]) -> str:
    """The dispatchers ember::ops::<cpp> of ops with per-device kernels, and weak definitions
    that raise NotImplementedError: a kernel file's strong definition replaces each. They let
    the library link while kernels are being written (a CPU kernel missing is a bug the test
    suite catches; a CUDA kernel missing is an op CUDA does not support yet)."""
    lines = [
        "// Generated by codegen/gen.py from ops.yaml. Do not edit.",
        '#include "ops_decl.h"',
        '#include "ember/runtime/dispatch.h"',
        '#include "ember/runtime/profiler.h"',
        "",
    ]
    ops = unique_cpp(ops)
    kernels = [op for op in ops if op.has_kernels]
    missing = "no kernel is implemented for this op yet"
    for ns, ns_ops, what in (
        ("ops", [op for op in ops if not op.has_kernels], missing),
        ("cpu", kernels, missing),
    ):
        lines += [f"namespace ember::{ns} {{", ""]
        for op in ns_ops:
            params = ", ".join(cpp_param_types(op))
            lines.append(f"__attribute__((weak)) {cpp_return(op)} {op.cpp}({params}) {{")
            lines.append(f'  throw NotImplementedError("{op.name}: {what}");')
            lines.append("}")
        lines += ["", f"}}  // namespace ember::{ns}", ""]
    lines += [
        "namespace ember {",
        "CudaKernelTable& cuda_kernels() {",
        "  static CudaKernelTable table;",
        "  return table;",
        "}",
        "std::vector<std::string> cuda_kernel_coverage(bool registered) {",
        "  const CudaKernelTable& t = cuda_kernels();",
        "  std::vector<std::string> names;",
    ]
    for op in kernels:
        has = f"t.{op.cpp} != nullptr"
        lines.append(f'  if (({has}) == registered) names.push_back("{op.cpp}");')
    lines += [
        "  return names;",
        "}",
        "}  // namespace ember",
        "",
        "namespace ember::ops {",
        "",
    ]
    for op in ops:
        if not op.has_kernels:
            continue
        names = [a.name for a in op.args]
        if "out" in op.variants or "inplace" in op.variants:
            names.append("out")
        call = f"{op.cpp}({', '.join(names)})"
        device_arg = next((a.name for a in op.args if a.type == "Device?"), None)
        explicit = f"&{device_arg}" if device_arg else "nullptr"
        lines.append(f"{cpp_return(op)} {op.cpp}({', '.join(cpp_params(op))}) {{")
        # an op called by an op is an event of its own; the op the binding just opened, not
        lines.append(
            record_scope(op.name, op.cpp, "Dispatch", f"ember::cuda::{op.name}").rstrip("\n")
        )
        inputs = record_inputs(op.args, [a.name for a in op.args])
        if inputs:
            lines.append(inputs.rstrip("\n"))
        lines.append(
            f'  if (dispatch_to_cuda("{op.name}", {dispatch_args(op)}, {explicit}, '
            f"{'true' if op.dispatch == 'mixed' else 'false'}))"
        )
        lines += [
            "  {",
            f"    if (auto kernel = cuda_kernels().{op.cpp}) {{",
            f"      profiler::GpuRange gpu_(rec_, {dispatch_args(op)}, {explicit});",
            f"      return kernel({', '.join(names)});",
            "    }",
            f'    throw NotImplementedError("{op.name}: not implemented for CUDA tensors yet");',
            "  }",
        ]
        lines.append(f"  return cpu::{call};")
        lines.append("}")
    lines += ["", "}  // namespace ember::ops", ""]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- stubs and docs


def stub_params(op: Op, skip_self: bool, with_out: bool) -> str:
    parts = []
    kw = False
    for i, a in enumerate(op.args):
        if i == 0 and skip_self:
            parts.append("self")
            continue
        if a.kwonly and not kw:
            parts.append("*")
            kw = True
        t = TYPES[a.type][2] + (" | None" if none_is_default(a) else "")
        name = a.name + "_" if keyword.iskeyword(a.name) else a.name  # uniform_(from=...)
        parts.append(f"{name}: {t}" + (f" = {a.default}" if a.default is not None else ""))
    if with_out:
        if not kw:
            parts.append("*")
        parts.append("out: Tensor | None = None")
    return ", ".join(parts)


def stub_return(op: Op) -> str:
    if len(op.returns) > 1:
        return "tuple[" + ", ".join("Tensor" for _ in op.returns) + "]"
    return RETURNS[op.returns[0][0]][1]


# The hand-written part of ember_tensor._C (module.cpp, python_*.cpp), for the stub file.
HANDWRITTEN_STUB = """\
class dtype:
    is_floating_point: bool
    is_signed: bool
    is_complex: bool
    itemsize: int

class device:
    type: str
    index: int | None
    def __init__(self, type: str | device, index: int | None = None) -> None: ...

class Generator:
    def __init__(self, device: str | device = "cpu") -> None: ...
    def manual_seed(self, seed: int) -> Generator: ...
    def initial_seed(self) -> int: ...
    def seed(self) -> int: ...
    def get_state(self) -> tuple[int, int]: ...
    def set_state(self, state: tuple[int, int]) -> None: ...

bool: dtype
uint8: dtype
int8: dtype
int16: dtype
int32: dtype
int64: dtype
float16: dtype
bfloat16: dtype
float32: dtype
float64: dtype
complex64: dtype
complex128: dtype
uint16: dtype
uint32: dtype
uint64: dtype
default_generator: Generator

def tensor(data: Any, *, dtype: dtype | None = None, device: device | str | None = None,
           requires_grad: bool = False) -> Tensor: ...
def from_numpy(ndarray: Any) -> Tensor: ...
def from_dlpack(ext_tensor: Any, *, device: Any = None, copy: bool | None = None) -> Tensor: ...
def manual_seed(seed: int) -> Generator: ...
def initial_seed() -> int: ...
def get_num_threads() -> int: ...
def set_num_threads(num: int) -> None: ...
def get_default_dtype() -> dtype: ...
def set_default_dtype(d: dtype) -> None: ...
def promote_types(type1: dtype, type2: dtype) -> dtype: ...
def can_cast(from_: dtype, to: dtype) -> bool: ...
def result_type(tensor1: Tensor | float, tensor2: Tensor | float) -> dtype: ...
def memory_allocated() -> int: ...
def max_memory_allocated() -> int: ...
def reset_peak_memory_stats() -> None: ...
def reset_accumulated_memory_stats() -> None: ...
def memory_reserved() -> int: ...
def max_memory_reserved() -> int: ...
def empty_cache() -> None: ...
def _cpu_capability() -> str: ...
def memory_stats() -> dict[str, int]: ...
def _profiler_start(*, record_shapes: bool = False, profile_memory: bool = False,
                    with_stack: bool = False, cuda: bool = False,
                    fake_gpu: bool = False) -> None: ...
def _profiler_stop(*, record_shapes: bool = False, with_stack: bool = False) -> dict[str, Any]: ...
def _profiler_enabled() -> bool: ...
def _profiler_push_range(name: str) -> int: ...
def _profiler_pop_range(id: int) -> None: ...
def _profiler_now_ns() -> int: ...
def _autocast_is_enabled(device_type: str) -> bool: ...
def _autocast_set_enabled(device_type: str, enabled: bool) -> None: ...
def _autocast_get_dtype(device_type: str) -> dtype: ...
def _autocast_set_dtype(device_type: str, dtype: dtype) -> None: ...
def _autocast_increment_nesting() -> int: ...
def _autocast_decrement_nesting() -> int: ...
def _autocast_is_cache_enabled() -> bool: ...
def _autocast_set_cache_enabled(enabled: bool) -> None: ...
def _autocast_clear_cache() -> None: ...
"""

HANDWRITTEN_TENSOR_STUB = """\
    shape: tuple[int, ...]
    dtype: dtype
    device: device
    ndim: int
    is_cpu: bool
    is_cuda: bool
    requires_grad: bool
    grad: Tensor | None
    grad_fn: Any
    is_leaf: bool
    data: Tensor
    _version: int
    def size(self, dim: int | None = None) -> Any: ...
    def stride(self, dim: int | None = None) -> Any: ...
    def dim(self) -> int: ...
    def numel(self) -> int: ...
    def element_size(self) -> int: ...
    def storage_offset(self) -> int: ...
    def is_contiguous(self, memory_format: Any = None) -> bool: ...
    def data_ptr(self) -> int: ...
    def requires_grad_(self, requires_grad: bool = True) -> Tensor: ...
    def detach(self) -> Tensor: ...
    def detach_(self) -> Tensor: ...
    def to(self, *args: Any, **kwargs: Any) -> Tensor: ...
    def cpu(self) -> Tensor: ...
    def item(self) -> Any: ...
    def tolist(self) -> Any: ...
    def numpy(self, *, force: bool = False) -> Any: ...
    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: Any = None, copy: bool | None = None) -> Any: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...
    def __getitem__(self, index: Any) -> Tensor: ...
    def __setitem__(self, index: Any, value: Any) -> None: ...
    def __len__(self) -> int: ...
    def __bool__(self) -> bool: ...
    def __float__(self) -> float: ...
    def __int__(self) -> int: ...
    def __index__(self) -> int: ...
"""


def with_overloads(defs: list[str], indent: str) -> list[str]:
    """Marks stubs of names defined more than once with @overload."""
    names = [d.strip().split("(")[0][4:] for d in defs]
    return [f"{indent}@overload\n{d}" if names.count(n) > 1 else d for d, n in zip(defs, names)]


def emit_stubs(ops: list[Op]) -> str:
    """The type stub of ember_tensor._C: hand-written members plus every op's variants."""
    fn, meth = [], []
    for op in ops:
        doc = op.doc.splitlines()[0].replace('"""', "'")
        if "function" in op.variants:
            fn.append(
                f"def {op.name}({stub_params(op, False, 'out' in op.variants)}) -> "
                f'{stub_return(op)}:\n    """{doc}"""'
            )
        if "method" in op.variants:
            meth.append(
                f"    def {op.name}({stub_params(op, True, False)}) -> {stub_return(op)}: ..."
            )
        if "inplace" in op.variants:
            meth.append(f"    def {op.name}_({stub_params(op, True, False)}) -> Tensor: ...")
        for dunder in op.operators:
            meth.append(f"    def {dunder}(self, other: Any = ...) -> Tensor: ...")
    head = (
        "# Generated by codegen/gen.py from ops.yaml. Do not edit.\n"
        "from collections.abc import Sequence\n"
        "from typing import Any, overload\n\n"
    )
    fn, meth = with_overloads(fn, ""), with_overloads(list(dict.fromkeys(meth)), "    ")
    tensor_cls = "class Tensor:\n" + HANDWRITTEN_TENSOR_STUB + "\n".join(meth) + "\n"
    return head + HANDWRITTEN_STUB + "\n\n" + tensor_cls + "\n\n" + "\n\n".join(fn) + "\n"


def emit_docs(ops: list[Op]) -> str:
    short = {tuple(v): k for k, v in DTYPE_SETS.items()}
    lines = [
        "<!-- Generated by packages/tensor-core/codegen/gen.py from ops.yaml. Do not edit. -->",
        "# Op table",
        "",
        f"{len(ops)} ops are declared in `packages/tensor-core/ops.yaml`.",
        "",
        "| op | signature | variants | dtypes | description |",
        "|---|---|---|---|---|",
    ]
    for op in ops:
        variants = ", ".join(op.variants)
        dt = short.get(tuple(op.dtypes), " ".join(op.dtypes))
        doc = op.doc.splitlines()[0].replace("|", "\\|")
        sig = op.signature.replace("|", "\\|")
        lines.append(f"| `{op.name}` | `{sig}` | {variants} | {dt} | {doc} |")
    return "\n".join(lines) + "\n"


def emit_composite_table(ops: list[Op]) -> str:
    """composite_ops.py: the Python-bodied composites and their variants, which
    ember_tensor._composites installs at import (a small module, so that importing the core
    does not read the whole schema)."""
    rows = [
        f"    ({op.name!r}, {tuple(op.variants)!r}, {tuple(a.name for a in op.args)!r}, "
        f"{tuple(op.dtypes) if len(op.dtypes) < len(ALL_DTYPES) else ()!r}, "
        f"{dict(sorted(op.operators.items()))!r}, {tuple(a.type for a in op.args)!r}, "
        f"{op.varargs!r}, {tuple(r[1] for r in op.returns) if op.returns[0][1] else None!r}, "
        f"{op.dtypes_promoted!r}),"
        for op in ops
        if op.body == "python"
    ]
    return (
        "# Generated by packages/tensor-core/codegen/gen.py from ops.yaml. Do not edit.\n"
        "# (name, variants, argument names, dtypes or () for all, operators, argument types, the\n"
        "# argument also taken as *args or None, the names of the results or None, whether dtypes\n"
        "# are checked on the operands' promoted dtype) of every op whose body is Python\n"
        "# (composite: python).\n"
        "OPS = [\n" + "\n".join(rows) + ("\n" if rows else "") + "]\n"
    )


def write_if_changed(path: str, text: str) -> None:
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def emit_schema(ops: list[Op]) -> str:
    """ops.yaml as parsed, for other packages (ember-autograd checks derivatives.yaml
    against it and maps the hook's positional args to names)."""
    entries = [
        {
            "name": op.name,
            "key": op.key,
            "cpp": op.cpp,
            "args": [
                {"name": a.name, "type": a.type, "default": a.default, "kwonly": a.kwonly}
                for a in op.args
            ],
            "returns": [list(r) for r in op.returns],
            "variants": op.variants,
            "dtypes": op.dtypes,
            "composite": op.composite,
            "body": op.body,
            "differentiable": op.differentiable,
        }
        for op in ops
    ]
    return json.dumps(entries, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--yaml", default=DEFAULT_YAML)
    ap.add_argument("--out")
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--docs")
    a = ap.parse_args(argv)
    ops = load(a.yaml)
    if a.docs:
        os.makedirs(os.path.dirname(os.path.abspath(a.docs)), exist_ok=True)
        write_if_changed(a.docs, emit_docs(ops))
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        bound = [op for op in ops if op.body != "python"]  # the ops of ember_tensor._C
        write_if_changed(os.path.join(a.out, "ops_decl.h"), emit_decl(bound))
        for k in range(a.shards):
            write_if_changed(
                os.path.join(a.out, f"bind_ops_{k}.cpp"), emit_bindings(bound, k, a.shards)
            )
        write_if_changed(os.path.join(a.out, "_C.pyi"), emit_stubs(bound))
        write_if_changed(os.path.join(a.out, "ops_fallback.cpp"), emit_fallbacks(bound))
        write_if_changed(os.path.join(a.out, "ops_schema.json"), emit_schema(ops))
        write_if_changed(os.path.join(a.out, "composite_ops.py"), emit_composite_table(ops))
    return 0


if __name__ == "__main__":
    sys.exit(main())
