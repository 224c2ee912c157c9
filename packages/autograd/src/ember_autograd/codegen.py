"""derivatives.yaml -> Python source of the backward nodes and their recorders.

One entry per differentiable op of the core's ``ops.yaml`` (read from the schema the core
installs, ``ember_tensor/ops_schema.json``)::

    - name: mul                    # the op's hook key: its name, or its cpp name for overloads
      self: grad * other           # one formula per differentiable tensor argument
      other: grad * self
      result: auto_element_wise    # forward mode (optional): formula or auto_* rule
      view: true                   # (optional) the result may alias self's storage
      complex: true                # (optional) the formulas are right for complex tensors

A composite with a Python body (ops.yaml ``composite: python``) needs no entry: autograd
records the ops its body calls. It may have one, with a ``why:`` saying why its fused formula
is better than the composition's gradient (more accurate, or PyTorch's); the op is then
recorded as one node with that formula, like an op with kernels (the generated ``COMPOSITES``
names these ops to the core's composite layer, ``ember_tensor._composites.record_as_one``).

Formulas are Python expressions over ember_tensor ops and methods and the helpers of
``ember_autograd.formulas``. Names they may use: ``grad`` (gradient of output 0),
``grads`` (all output gradients: ops returning Tensor[] or a tuple such as ``(U, S, Vh)``;
``grads[i]`` is None for an output that got no gradient), ``result`` (output 0; tuple
outputs also by field name, e.g. ``indices``, ``S``), every argument of the op by name, and
``<arg>_shape`` / ``<arg>_dtype`` / ``<arg>_device`` (kept without keeping the
tensor). A formula for a ``Tensor[]`` argument returns a list. ``self`` in the formula
of an in-place op is its value before the write. Gradients are summed back to each
input's shape (broadcasting) and cast to its dtype by the generated code.

``generate()`` validates every entry (unknown op, unknown argument or name, a
differentiable op without an entry) and raises ``DerivativesError`` naming the entry.

The generated code is checked in as the modules of ``ember_autograd._generated`` (see
``sources()``), so importing ember_autograd neither parses nor validates nor compiles
anything; after a change to derivatives.yaml, to this generator or to the core's op schema,
regenerate them with ``python -m ember_autograd.regenerate``
(``tests/test_derivatives_yaml.py`` fails while they are stale).
"""

from __future__ import annotations

import ast
import builtins
import json
import keyword
import os
import re
from dataclasses import dataclass, field

import yaml

from .load_generated import DERIVATIVES, fingerprint, schema_bytes

ENTRY_KEYS = {"name", "result", "view", "output_differentiability", "node", "why", "complex",
              "complex_forward"}
# Ops bound by hand in the core (not in ops.yaml) that the hook reports all the same.
HAND_BOUND = [
    {
        "key": "__getitem__",
        "name": "__getitem__",
        "cpp": "getitem",
        "returns": [["Tensor", ""]],
        "args": [{"name": "self", "type": "Tensor"}, {"name": "key", "type": "object"}],
    },
    {
        "key": "__setitem__",
        "name": "__setitem__",
        "cpp": "setitem",
        "returns": [["Tensor", ""]],
        "args": [
            {"name": "self", "type": "Tensor"},
            {"name": "key", "type": "object"},
            {"name": "value", "type": "Tensor"},
        ],
    },
    {
        "key": "to",
        "name": "to",
        "cpp": "to",
        "returns": [["Tensor", ""]],
        "args": [{"name": "self", "type": "Tensor"}, {"name": "dtype", "type": "ScalarType"}],
    },
]
FORWARD_AUTO = {"auto_element_wise", "auto_linear"}
TENSOR_TYPES = {"Tensor", "Tensor?", "Tensor|Scalar", "Tensor|Scalar?"}
LIST_TYPES = {"Tensor[]", "Tensor?[]"}


class DerivativesError(Exception):
    pass


@dataclass
class OpSchema:
    key: str
    name: str
    cpp: str
    args: list[dict]
    returns: list[list[str]]
    composite: bool
    differentiable: bool
    overload: int = 0
    variants: tuple[str, ...] = ()  # function / method / inplace / out (ops.yaml)
    hand_bound: bool = False  # bound by hand in the core, not in ops.yaml (HAND_BOUND)
    body: str = ""  # a composite's body: "cpp", or "python" (recorded through its ops)
    dtypes: object = "all"  # ops.yaml's dtypes: a set name or a list of dtype and set names

    @property
    def accepts_complex(self) -> bool:
        """Whether the op takes complex inputs (ops.yaml dtypes any, complex, or a list
        naming one of them or a complex dtype)."""
        names = self.dtypes if isinstance(self.dtypes, list) else [self.dtypes]
        return any(n in ("any", "complex", "complex64", "complex128") for n in names)

    @property
    def arg_names(self) -> list[str]:
        return [a["name"] for a in self.args]

    def arg(self, name: str) -> dict:
        return next(a for a in self.args if a["name"] == name)

    @property
    def tensor_inputs(self) -> list[str]:
        return [a["name"] for a in self.args if a["type"] in TENSOR_TYPES | LIST_TYPES]

    @property
    def returns_tensor(self) -> bool:
        return self.returns[0][0] in ("Tensor", "Tensor[]")


@dataclass
class Entry:
    op: OpSchema
    formulas: dict[str, str]
    forward: str | None
    view: bool
    output_differentiability: list[bool] | None
    complex_ok: bool = False  # its formulas follow PyTorch's complex convention (`complex: true`)
    # its forward rule is right for complex tangents: `complex_forward`, by default true for the
    # `complex: true` entries whose rule is auto_linear or auto_element_wise
    complex_forward: bool = False
    names_used: dict[str, set[str]] = field(default_factory=dict)

    node: str | None = None

    @property
    def node_name(self) -> str:
        if self.node:
            return self.node
        camel = "".join(p[:1].upper() + p[1:] for p in self.op.name.strip("_").split("_"))
        return f"{camel}Backward{self.op.overload}"


def load_schema(text: str | bytes | None = None) -> dict[str, OpSchema]:
    """The ops of the core's schema (``text``; default: the installed
    ``ember_tensor/ops_schema.json``) and the hand-bound ones, by key."""
    if text is None:
        text = schema_bytes()
    ops: dict[str, OpSchema] = {}
    by_name: dict[str, int] = {}
    listed = [(e, False) for e in json.loads(text)]
    hand_bound = [(dict(h, composite=False, differentiable=True), True) for h in HAND_BOUND]
    for e, hand in listed + hand_bound:
        for a in e["args"]:
            a.setdefault("default", None)
            a.setdefault("kwonly", False)
        n = by_name.get(e["name"], 0)
        by_name[e["name"]] = n + 1
        ops[e["key"]] = OpSchema(
            e["key"],
            e["name"],
            e["cpp"],
            e["args"],
            e["returns"],
            e["composite"],
            e["differentiable"],
            n,
            tuple(e.get("variants", ())),
            hand,
            e.get("body", ""),
            e.get("dtypes", "all"),
        )
    return ops


def needs_entry(op: OpSchema) -> bool:
    """A differentiable op (tensor in, tensor out, not marked otherwise) needs an entry,
    unless it is a composite with a Python body: autograd records the ops that body calls
    (such an op may still have one, see the module docstring)."""
    return (
        op.differentiable and op.returns_tensor and bool(op.tensor_inputs) and op.body != "python"
    )


def alias_target(op: OpSchema, schema: dict[str, OpSchema], entries: dict) -> str | None:
    """A composite that is another op under a new name (clip -> clamp) reuses its entry."""
    if not op.composite:
        return None
    for other in schema.values():
        if (
            other.key != op.key
            and other.cpp == op.cpp
            and other.key in entries
            and [a["type"] for a in other.args] == [a["type"] for a in op.args]
        ):
            return other.key
    return None


def _names_in(expr: str, where: str) -> tuple[set[str], set[str]]:
    """Free names and called attribute names of a formula."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise DerivativesError(
            f"{where}: formula {expr!r} is not a Python expression: {e}"
        ) from None
    names, attrs = set(), set()
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.comprehension):
            for t in ast.walk(node.target):
                if isinstance(t, ast.Name):
                    bound.add(t.id)
        elif isinstance(node, ast.Lambda):
            bound.update(a.arg for a in node.args.args)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in bound:
            names.add(node.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attrs.add(node.func.attr)
    return names, attrs


def parse_entries(
    data: list, schema: dict[str, OpSchema], helpers: set[str], strict: bool = True
) -> dict[str, Entry]:
    import ember_tensor

    entries: dict[str, Entry] = {}
    tensor_attrs = set(dir(ember_tensor.Tensor)) | set(dir(ember_tensor))
    linalg = getattr(ember_tensor, "linalg", None)  # et.linalg.solve(...)
    if linalg is not None:
        tensor_attrs |= {n for n in dir(linalg) if not n.startswith("_")}
    for i, raw in enumerate(data):
        where = f"derivatives.yaml entry {i} ({raw.get('name', '?')!r})"
        if not isinstance(raw, dict) or "name" not in raw:
            raise DerivativesError(f"{where}: an entry is a mapping with a 'name'")
        key = raw["name"]
        op = schema.get(key)
        if op is None:
            raise DerivativesError(
                f"{where}: no op {key!r} in ops.yaml (use the op's key: "
                "its name, or its cpp name for an overload)"
            )
        why = raw.get("why")
        if op.body == "python":
            if not isinstance(why, str) or not why.strip():
                raise DerivativesError(
                    f"{where}: {key} is a composite with a Python body (ops.yaml composite: "
                    "python), which autograd records through the ops it calls; an entry "
                    "replaces that with one node, so it needs a 'why:' saying why its formula "
                    "is better (more accurate, or PyTorch's gradient)"
                )
        elif why is not None:
            raise DerivativesError(
                f"{where}: 'why:' is for the entries of composites with a Python body "
                f"(ops.yaml composite: python); {key} is not one"
            )
        if key in entries:
            raise DerivativesError(f"{where}: a second entry for {key!r}")
        formulas = {}
        for k, v in raw.items():
            if k in ENTRY_KEYS:
                continue
            if k not in op.arg_names:
                raise DerivativesError(
                    f"{where}: {key} has no argument {k!r} (arguments: {', '.join(op.arg_names)})"
                )
            if k not in op.tensor_inputs:
                raise DerivativesError(f"{where}: argument {k!r} of {key} is not a tensor")
            formulas[k] = str(v)
        if not formulas:
            raise DerivativesError(f"{where}: no formula for any tensor argument of {key}")
        forward = raw.get("result")
        entry = Entry(
            op,
            formulas,
            None if forward is None else str(forward),
            bool(raw.get("view", False)),
            raw.get("output_differentiability"),
            complex_ok=bool(raw.get("complex", False)),
            complex_forward=bool(raw.get(
                "complex_forward",
                raw.get("complex", False)
                and raw.get("result") in ("auto_linear", "auto_element_wise"),
            )),
            node=raw.get("node"),
        )
        allowed = (
            set(op.arg_names)
            | {f"{a}_shape" for a in op.arg_names}
            | {f"{a}_dtype" for a in op.arg_names}
            | {f"{a}_device" for a in op.arg_names}
            | {"grad", "grads", "result"}
            | {r[1] for r in op.returns if r[1]}
            | helpers
            | set(dir(builtins))
            | {"et"}
        )
        exprs = dict(formulas)
        if entry.forward is not None and entry.forward not in FORWARD_AUTO:
            exprs["result"] = entry.forward
            allowed = allowed | {f"{a}_t" for a in op.tensor_inputs} | {"result_t"}
        for k, expr in exprs.items():
            names, attrs = _names_in(expr, f"{where}, formula for {k!r}")
            unknown = sorted(names - allowed)
            if unknown:
                raise DerivativesError(
                    f"{where}, formula for {k!r}: unknown name(s) {', '.join(unknown)}"
                )
            bad = sorted(a for a in attrs - tensor_attrs if a not in helpers)
            if bad:
                raise DerivativesError(
                    f"{where}, formula for {k!r}: unknown op or method {', '.join(bad)}"
                )
            entry.names_used[k] = names
        entries[key] = entry
    missing = [
        op.key
        for op in schema.values()
        if needs_entry(op) and op.key not in entries and alias_target(op, schema, entries) is None
    ]
    if missing and strict:
        raise DerivativesError(
            "differentiable ops without a derivatives.yaml entry: " + ", ".join(sorted(missing))
        )
    return entries


# ----------------------------------------------------------------------------- emission


def _saved_names(entry: Entry) -> dict[str, set[str]]:
    """For each saved name, the inputs whose formula needs it."""
    op = entry.op
    saved: dict[str, set[str]] = {}
    special = {"grad", "grads"}
    candidates = (
        set(op.arg_names)
        | {f"{a}_shape" for a in op.arg_names}
        | {f"{a}_dtype" for a in op.arg_names}
        | {f"{a}_device" for a in op.arg_names}
        | {"result"}
        | {r[1] for r in op.returns if r[1]}
    )
    for inp, names in entry.names_used.items():
        if inp == "result":
            continue
        for n in names:
            if n in candidates and n not in special:
                saved.setdefault(n, set()).add(inp)
    return saved


def _ident(name: str) -> str:
    ident = re.sub(r"\W", "_", name)
    # an argument named like a Python keyword (uniform's ``from``) gets a trailing underscore
    return ident + "_" if keyword.iskeyword(ident) else ident


def emit_entry(entry: Entry, inplace: bool) -> str:
    """The node class and the recorder of one op (the in-place recorder when ``inplace``)."""
    op = entry.op
    inputs = op.tensor_inputs
    saved = _saved_names(entry)
    cls = entry.node_name
    suffix = "_inplace" if inplace else ""
    lines: list[str] = []
    slots = sorted({f"s_{_ident(n)}" for n in saved} | {f"v_{_ident(n)}" for n in saved})
    lines.append(f"class {cls}(Node):")
    lines.append(f"    __slots__ = {tuple(slots + ['meta', 'sizes'])!r}")
    lines.append(f"    _op = {op.key!r}")
    lines.append("")
    lines.append("    def name(node):")
    lines.append(f"        return {cls!r}")
    lines.append("")
    # ---- apply
    multi = op.returns[0][0] == "Tensor[]"
    # a tuple of outputs ((U, S, Vh)): any of them may carry the only gradient
    tuple_out = not multi and len(op.returns) > 1
    uses_grads = any("grads" in names for k, names in entry.names_used.items() if k != "result")
    lines.append("    def apply(node, grads):")
    if multi:
        lines.append("        if all(g is None for g in grads):")
    elif tuple_out and uses_grads:
        lines.append("        grad = grads[0]")
        lines.append("        if all(g is None for g in grads):")
    else:
        # formulas over ``grad`` alone (sort's values): nothing to do without it
        lines.append("        grad = grads[0]")
        lines.append("        if grad is None:")
    lines.append("            return (None,) * len(node.next_functions)")
    lines.append("        nf = node.next_functions")
    lines.append("        sizes = node.sizes")
    lines.append("        out = []")
    lines.append("        k = 0")
    for inp in inputs:
        is_list = op.arg(inp)["type"] in LIST_TYPES
        formula = entry.formulas.get(inp)
        if is_list:
            lines.append(f"        m = node.meta[{inputs.index(inp)}]")
            lines.append("        if m is not None:")
            if formula is None:
                lines.append("            out.extend([None] * m)")
            else:
                lines.extend(_unpack_lines(op, entry.names_used[inp], saved, "            "))
                lines.append(f"            gl = list({_rename(formula)})")
                lines.append("            for j in range(m):")
                lines.append("                e = nf[k + j][0]")
                lines.append(
                    "                out.append(fix(gl[j], sizes[k + j]) if e is not None and "
                    "gl[j] is not None else None)"
                )
            lines.append("            k += m")
        else:
            lines.append(f"        if node.meta[{inputs.index(inp)}] is not None:")
            if formula is None:
                lines.append("            out.append(None)")
            else:
                lines.append("            if nf[k][0] is not None:")
                lines.extend(_unpack_lines(op, entry.names_used[inp], saved, "                "))
                lines.append(f"                g = {_rename(formula)}")
                lines.append("                s = sizes[k]")
                lines.append("                out.append(g if s is None else fix(g, s))")
                lines.append("            else:")
                lines.append("                out.append(None)")
            lines.append("            k += 1")
    lines.append("        return out")
    lines.append("")
    # ---- release
    lines.append("    def _release(node):")
    lines.append("        node._released = True")
    for n in sorted(saved):
        if not op_arg_is_plain(op, n):
            lines.append(f"        node.s_{_ident(n)} = None")
    lines.append("")
    lines.append("")
    # ---- recorder (the in-place recorder shares the node class)
    if inplace:
        lines = []
    rec = f"record_{_ident(op.key)}{suffix}"
    params = ", ".join(_ident(a) for a in op.arg_names)
    lines.append(f"def {rec}(args, result, original):")
    lines.append(f"    {params}{',' if len(op.arg_names) == 1 else ''} = args")
    if inplace and "self" in op.arg_names:
        lines.append("    if original is not None:")
        lines.append("        self = original")
    for inp in inputs:
        i = _ident(inp)
        if op.arg(inp)["type"] in LIST_TYPES:
            lines.append(
                f"    r_{i} = {i} is not None and any(t is not None and t.requires_grad "
                f"for t in {i})"
            )
        else:
            lines.append(f"    r_{i} = {i} is not None and {i}.requires_grad")
    lines.append(f"    if not ({' or '.join(f'r_{_ident(x)}' for x in inputs)}):")
    lines.append("        return None")
    lines.append(f"    node = _new({cls})")
    lines.append("    if _anomaly._enabled:")
    lines.append("        node._trace = _anomaly.current_trace()")
    lines.append("        node._special = True")
    required = all(op.arg(x)["type"] in ("Tensor", "Tensor|Scalar") for x in inputs)
    if required:  # every input is a tensor: straight-line code, no lists
        for inp in inputs:
            i = _ident(inp)
            lines.append(f"    if r_{i}:")
            lines.append(f"        e_{i} = gradient_edge({i})")
            lines.append(f"        z_{i} = {i}._shape_dtype")
            lines.append("    else:")
            lines.append(f"        e_{i} = z_{i} = None")
        edges = ", ".join(f"e_{_ident(x)} or _NO_EDGE" for x in inputs)
        sizes = ", ".join(f"z_{_ident(x)}" for x in inputs)
        comma = "," if len(inputs) == 1 else ""
        lines.append(f"    node.next_functions = ({edges}{comma})")
        lines.append(f"    node.sizes = ({sizes}{comma})")
        lines.append(f"    node.meta = {tuple([True] * len(inputs))!r}")
    else:
        lines.extend(_list_edges(op, inputs))

    returns_fields = [r[1] for r in op.returns if r[1]]
    for n in sorted(saved):
        i = _ident(n)
        users = sorted(saved[n])
        cond = " or ".join(f"r_{_ident(u)}" for u in users)
        lines.append(f"    if {cond}:")
        if n.endswith("_shape") and n[:-6] in op.arg_names:
            src = _ident(n[:-6])
            if op.arg(n[:-6])["type"] in LIST_TYPES:
                lines.append(
                    f"        node.s_{i} = [None if t is None else t.shape for t in {src}]"
                )
            else:
                lines.append(f"        node.s_{i} = {src}.shape")
        elif n.endswith("_dtype") and n[:-6] in op.arg_names:
            lines.append(f"        node.s_{i} = {_ident(n[:-6])}.dtype")
        elif n.endswith("_device") and n[:-7] in op.arg_names:
            lines.append(f"        node.s_{i} = {_ident(n[:-7])}.device")
        elif n == "result":
            src = "result[0]" if returns_fields or op.returns[0][0] == "Tensor[]" else "result"
            if op.returns[0][0] == "Tensor[]":
                lines.append("        node.s_result = [r.detach() for r in result]")
                lines.append("        node.v_result = [r._version for r in result]")
                continue
            lines.append(f"        node.s_result = {src}.detach()")
            lines.append("        node.v_result = node.s_result._version")
        elif n in returns_fields:
            idx = returns_fields.index(n)
            lines.append(f"        node.s_{i} = result[{idx}].detach()")
            lines.append(f"        node.v_{i} = node.s_{i}._version")
        elif op_arg_is_plain(op, n):
            lines.append(f"        node.s_{i} = {i}")
        elif op.arg(n)["type"] in LIST_TYPES:
            lines.append(f"        node.s_{i} = list({i})")
            lines.append(f"        node.v_{i} = [t._version if t is not None else 0 for t in {i}]")
        else:
            lines.append(f"        node.s_{i} = {i}")
            lines.append(f"        node.v_{i} = {i}._version if {i} is not None else 0")
    lines.append("    return node")
    lines.append("")
    lines.append("")
    return "\n".join(lines)


def _list_edges(op: OpSchema, inputs: list[str]) -> list[str]:
    """Recorder lines collecting edges and sizes when some input is optional or a list."""
    lines = ["    edges = []", "    sizes = []"]
    for inp in inputs:
        i = _ident(inp)
        if op.arg(inp)["type"] in LIST_TYPES:
            lines.append(f"    if r_{i}:")
            lines.append(f"        for t in {i}:")
            lines.append("            e = edge(t)")
            lines.append("            edges.append(e)")
            lines.append(
                "            sizes.append(t._shape_dtype if e[0] is not None else None)"
            )
        else:
            lines.append(f"    if r_{i}:")
            lines.append(f"        edges.append(gradient_edge({i}))")
            lines.append(f"        sizes.append({i}._shape_dtype)")
            # an input that needs no grad keeps its place: (None, 0), as in PyTorch
            lines.append(f"    elif {i} is not None:")
            lines.append("        edges.append((None, 0))")
            lines.append("        sizes.append(None)")
    meta_items = []
    for inp in inputs:
        i = _ident(inp)
        if op.arg(inp)["type"] in LIST_TYPES:
            meta_items.append(f"len({i}) if r_{i} else None")
        else:
            meta_items.append(f"({i} is not None) or None")
    lines.append("    node.next_functions = tuple(edges)")
    lines.append("    node.sizes = sizes")
    lines.append(f"    node.meta = [{', '.join(meta_items)}]")
    return lines


def _unpack_lines(op: OpSchema, names: set[str], saved: dict, indent: str) -> list[str]:
    """Lines binding the saved names a formula uses (checked for in-place writes)."""
    out = []
    inputs = op.tensor_inputs
    returns_fields = {r[1] for r in op.returns if r[1]}
    returns = [r[1] for r in op.returns]
    for n in sorted(names & set(saved)):
        i = _ident(n)
        if op_arg_is_plain(op, n):
            out.append(f"{indent}{i} = node.s_{i}")
        elif n in inputs and op.arg(n)["type"] in LIST_TYPES:
            out.append(f"{indent}{i} = unpack_list(node, {n!r}, node.s_{i}, node.v_{i})")
        elif n == "result" and op.returns[0][0] == "Tensor[]":
            out.append(f"{indent}{i} = unpack_list(node, {n!r}, node.s_{i}, node.v_{i})")
        elif n in returns_fields and returns.index(n) > 0:
            # output k > 0 of a tuple: re-attached (create_graph) as the node's output k
            k = returns.index(n)
            out.append(f"{indent}{i} = unpack(node, {n!r}, node.s_{i}, node.v_{i}, True, {k})")
        else:
            is_out = n == "result" or n in returns_fields
            out.append(f"{indent}{i} = unpack(node, {n!r}, node.s_{i}, node.v_{i}, {is_out})")
    return out


def op_arg_is_plain(op: OpSchema, name: str) -> bool:
    """A saved name kept as a plain value (non-tensor argument, shape, dtype). An argument's
    own name comes first: ``normalized_shape`` is an int[] argument, not a tensor's shape."""
    if name in op.arg_names:
        return op.arg(name)["type"] not in TENSOR_TYPES | LIST_TYPES
    if name.endswith("_shape") or name.endswith("_dtype"):
        return name[:-6] in op.arg_names
    if name.endswith("_device"):
        return name[:-7] in op.arg_names
    return False


def _rename(expr: str) -> str:
    return expr


def needs_original_self(entry: Entry) -> bool:
    return any("self" in names for k, names in entry.names_used.items() if k != "result")


def missing_entries(schema: dict[str, OpSchema], entries: dict[str, Entry]) -> list[str]:
    return sorted(
        op.key
        for op in schema.values()
        if needs_entry(op) and op.key not in entries and alias_target(op, schema, entries) is None
    )


def generate(
    path: str | None = None, strict: bool = True
) -> tuple[str, dict[str, Entry], dict[str, OpSchema]]:
    """Python source for every entry, the entries, and the schema they were checked against.
    strict=False lets differentiable ops lack an entry (their backward then raises)."""
    entries, schema = _parse(_read(path), schema_bytes(), strict)
    return backward_source(entries), entries, schema


def _read(path: str | None) -> bytes:
    """The bytes of derivatives.yaml at ``path`` (default: the package's own)."""
    with open(path or DERIVATIVES, "rb") as f:
        return f.read()


def _parse(
    derivatives: bytes, schema_json: bytes, strict: bool
) -> tuple[dict[str, Entry], dict[str, OpSchema]]:
    """The validated entries of ``derivatives`` (YAML) against the op schema ``schema_json``."""
    from . import formulas

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = yaml.load(derivatives, Loader=loader) or []
    schema = load_schema(schema_json)
    helpers = {n for n in dir(formulas) if not n.startswith("_")}
    return parse_entries(data, schema, helpers, strict), schema


def backward_source(entries: dict[str, Entry]) -> str:
    """The module defining every entry's node class and recorders (``record_<key>`` and,
    for an op with a ``self`` argument, ``record_<key>_inplace``)."""
    parts = [
        "from ember_autograd.graph import Node, gradient_edge, raise_released",
        "from ember_autograd import anomaly_mode as _anomaly",
        "_new = object.__new__",
        "_NO_EDGE = (None, 0)",
        "from ember_autograd.saved import unpack, unpack_list, fix, edge",
        "from ember_autograd.formulas import *",
        "import ember_tensor as et",
        "",
    ]
    for entry in entries.values():
        parts.append(emit_entry(entry, inplace=False))
        if "self" in entry.op.arg_names:
            parts.append(emit_entry(entry, inplace=True))
    return "\n".join(parts)


# ops whose float input may give an integral result that simply does not require grad
# (recorded only for float results): the casts, and the comparisons (bool, except their
# in-place forms)
_MAY_GIVE_INTEGRAL = frozenset(
    {"to", "float", "double", "half", "bfloat16", "int", "long", "short", "char", "byte", "bool"}
    | {"eq", "ne", "lt", "le", "gt", "ge"}
)


def _rule_row(entry: Entry, op: OpSchema) -> tuple:
    """The ``RULES`` row of ``op`` recorded with ``entry``'s node (its own, or its alias
    target's)."""
    ident = _ident(entry.op.key)
    # a dtype= that picks the result's dtype (a cast's result simply does not require grad)
    takes_dtype = op.name not in _MAY_GIVE_INTEGRAL and any(a["name"] == "dtype" for a in op.args)
    # an op taking complex inputs whose formulas are not marked `complex: true` refuses to
    # record a complex input or result (checked on the slower path)
    complex_guard = op.accepts_complex and not entry.complex_ok
    return (
        f"record_{ident}",
        f"record_{ident}_inplace" if "self" in entry.op.arg_names else None,
        needs_original_self(entry),
        entry.view,
        op.name,
        tuple(a["name"] for a in op.args if a["kwonly"]),
        op.returns == [["Tensor", ""]]
        and op.name not in _MAY_GIVE_INTEGRAL
        and not takes_dtype
        and not complex_guard,
        takes_dtype,
        complex_guard,
    )


def rules_source(entries: dict[str, Entry], schema: dict[str, OpSchema]) -> str:
    """The module of the rule table: ``RULES`` (op key -> its row, see ``_rule_row``: the
    recorder names in the ``backward`` module, needs_original_self, view, the name of the op
    replaying a view, its keyword-only arguments, fast, takes a dtype=, complex guard) for every
    entry and
    every alias
    of one, ``NOT_IMPLEMENTED`` (differentiable ops without an entry) and ``COMPOSITES``
    (the composites with a Python body that have an entry: recorded as one node)."""
    lines = ["RULES = {"]
    for key, entry in entries.items():
        lines.append(f"    {key!r}: {_rule_row(entry, entry.op)!r},")
    for op in schema.values():
        target = None if op.key in entries else alias_target(op, schema, entries)
        if target is not None:
            lines.append(f"    {op.key!r}: {_rule_row(entries[target], op)!r},  # {target}")
    lines.append("}")
    lines.append(f"NOT_IMPLEMENTED = {tuple(missing_entries(schema, entries))!r}")
    lines.append(f"COMPOSITES = {tuple(composites_with_entries(entries))!r}")
    return "\n".join(lines) + "\n"


def composites_with_entries(entries: dict[str, Entry]) -> list[str]:
    """The keys of the composites with a Python body that have an entry (recorded as one
    node with it, not through the ops of their bodies)."""
    return sorted(key for key, entry in entries.items() if entry.op.body == "python")


# ----------------------------------------------------------------------------- the modules

COMMAND = "python -m ember_autograd.regenerate"
GENERATED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_generated")


def _header(derivatives_sha: str, schema_sha: str) -> str:
    return (
        f"# Generated by `{COMMAND}` from\n"
        f"#   ember_autograd/derivatives.yaml sha256 {derivatives_sha}\n"
        f"#   ember_tensor/ops_schema.json sha256 {schema_sha}\n"
        "# Do not edit: change derivatives.yaml (or the generator: ember_autograd/codegen.py,\n"
        "# forward_codegen.py) and run the command again.\n"
        "# ruff: noqa\n"
    )


def _package_source(derivatives_sha: str, schema_sha: str) -> str:
    return (
        '"""The code generated from derivatives.yaml and the core\'s op schema: ``rules`` (how\n'
        "to record each op), ``backward`` (the backward nodes and their recorders), ``forward``\n"
        "(forward mode's tangent functions and tables). ``ember_autograd.load_generated`` uses\n"
        'them when the installed files have these fingerprints."""\n'
        "\n"
        f"DERIVATIVES_SHA256 = {derivatives_sha!r}\n"
        f"SCHEMA_SHA256 = {schema_sha!r}\n"
    )


def sources(path: str | None = None) -> dict[str, str]:
    """The text of every module of ``ember_autograd._generated`` by file name, generated from
    derivatives.yaml at ``path`` (default: the package's) and the installed core's op schema,
    as at import (a differentiable op without an entry gets a recorder that raises). The same
    inputs give the same text."""
    from . import forward_codegen

    derivatives, schema_json = _read(path), schema_bytes()
    entries, schema = _parse(derivatives, schema_json, strict=False)
    shas = fingerprint(derivatives), fingerprint(schema_json)
    header = _header(*shas)
    return {
        "__init__.py": header + _package_source(*shas),
        "rules.py": header + rules_source(entries, schema),
        "backward.py": header + backward_source(entries),
        "forward.py": header + forward_codegen.generate(entries, schema),
    }


def _differing(texts: dict[str, str], directory: str) -> list[str]:
    """The names of ``texts`` whose file in ``directory`` is missing or has other bytes."""
    differing = []
    for name, text in texts.items():
        try:
            with open(os.path.join(directory, name), "rb") as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current != text.encode("utf-8"):
            differing.append(name)
    return differing


def stale_files(directory: str = GENERATED_DIR) -> list[str]:
    """The modules in ``directory`` that differ from what ``sources()`` generates now."""
    return _differing(sources(), directory)


def write(directory: str = GENERATED_DIR) -> list[str]:
    """Writes the modules of ``sources()`` into ``directory``; returns the names of those
    that changed (the others are left untouched)."""
    texts = sources()
    changed = _differing(texts, directory)
    os.makedirs(directory, exist_ok=True)
    for name in changed:
        with open(os.path.join(directory, name), "wb") as f:
            f.write(texts[name].encode("utf-8"))
    return changed
