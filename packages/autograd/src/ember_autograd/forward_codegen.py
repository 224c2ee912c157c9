"""derivatives.yaml forward rules (``result:``) -> Python source of the tangent functions.

An entry's ``result:`` is one of

- a formula over the inputs' tangents ``<arg>_t`` (and the names a backward formula may use:
  arguments, ``<arg>_shape``/``<arg>_dtype``, ``result`` and the output fields, helpers);
  ``result_t`` is the written tensor's tangent before an in-place op (None otherwise);
- ``auto_element_wise``: the sum over the differentiable inputs of their backward formula
  with ``grad`` replaced by the input's tangent (element-wise ops, whose Jacobian is
  diagonal, so the backward formula applied to a tangent is the forward derivative);
- ``auto_linear``: the op itself applied to the tangents of its differentiable inputs (the
  other arguments unchanged), for ops linear in those inputs.

One function per entry, ``fwd_<key>(args, result, tangents)``: ``args`` are the op's
arguments in signature order (for an in-place op ``self`` is its value before the write),
``result`` the op's output (the tensor, a named tuple or a list), ``tangents`` one tangent
per tensor input of the op (``None`` for none; a list of tangents for a ``Tensor[]``
argument, its missing elements already filled with zeros). It returns the tangent of output
0 (a list of them for ``Tensor[]`` outputs; for a tuple of outputs such as ``(U, S, Vh)``,
either output 0's tangent or a tuple with one per output, None for a zero one), or ``None``
when the result's tangent is zero.

A missing tangent is a zero: the formula is specialized for every combination of present
tangents, dropping the terms a zero tangent makes vanish (``self_t * other`` with no
``self_t``) and materializing zeros (``zeros_like(arg)``) only where a zero cannot be
dropped (``et.where(c, self_t, other_t)`` with only ``other_t``). Forward formulas are linear
in the tangents, which is what makes dropping sound.

The caller (``forward_ad.propagate``) casts the tangent to the result's dtype and expands
it to the result's shape (broadcasting inputs).
"""

from __future__ import annotations

import ast
import copy
import keyword

from .codegen import FORWARD_AUTO, LIST_TYPES, Entry, OpSchema, _ident

# Above this many tangent inputs, one body with zeros materialized replaces the branches.
MAX_BRANCH_INPUTS = 4


class ForwardCodegenError(Exception):
    pass


def _pyname(name: str) -> str:
    """A Python identifier for an argument name (``from`` -> ``from_``)."""
    name = _ident(name)
    return name + "_" if keyword.iskeyword(name) else name


# ----------------------------------------------------------------------------- formulas


def _rename_grad(expr: ast.expr, to: str) -> ast.expr:
    class R(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id == "grad":
                return ast.copy_location(ast.Name(to, ast.Load()), node)
            return node

    return R().visit(expr)


def _parse(expr: str, where: str) -> ast.expr:
    try:
        return ast.parse(expr, mode="eval").body
    except SyntaxError as e:
        raise ForwardCodegenError(f"{where}: {expr!r} is not a Python expression: {e}") from None


def forward_expression(entry: Entry) -> ast.expr | None:
    """The tangent of output 0 as an expression over the ``<arg>_t`` names."""
    op = entry.op
    rule = entry.forward
    where = f"derivatives.yaml entry {op.key!r}, result"
    if rule is None:
        return None
    if rule not in FORWARD_AUTO:
        return _parse(rule, where)
    if rule == "auto_element_wise":
        terms = []
        for inp, formula in entry.formulas.items():
            if op.arg(inp)["type"] in LIST_TYPES:
                raise ForwardCodegenError(f"{where}: auto_element_wise with a list input {inp!r}")
            body = _parse(formula, f"derivatives.yaml entry {op.key!r}, formula for {inp!r}")
            names = {n.id for n in ast.walk(body) if isinstance(n, ast.Name)}
            if "grads" in names:
                raise ForwardCodegenError(f"{where}: auto_element_wise needs formulas over 'grad'")
            terms.append(_rename_grad(body, f"{_pyname(inp)}_t"))
        expr = terms[0]
        for t in terms[1:]:
            expr = ast.BinOp(expr, ast.Add(), t)
        if entry.complex_forward:
            return _complex_element_wise(expr, [f"{_pyname(i)}_t" for i in entry.formulas])
        return expr
    # auto_linear: the op on the tangents of its differentiable inputs
    args, kwargs = [], []
    for a in op.args:
        name = a["name"]
        node = ast.Name(
            f"{_pyname(name)}_t" if name in entry.formulas else _pyname(name), ast.Load()
        )
        if a.get("kwonly"):
            kwargs.append(ast.keyword(arg=name, value=node))
        else:
            args.append(node)
    return ast.Call(ast.Name(f"_op_{_ident(op.key)}", ast.Load()), args, kwargs)


def _complex_element_wise(expr: ast.expr, tangents: list[str]) -> ast.expr:
    """``expr`` (a backward formula applied to the tangents) for real tensors; for complex
    ones ``complex_jvp(expr', result)``, expr' the formula applied to the conjugated tangents:
    the backward formula B(g) = g conj(f'(z)) of PyTorch's convention gives the forward one
    f'(z) t as conj(B(conj(t))), and a real output keeps the real part (abs, angle)."""
    conj = copy.deepcopy(expr)

    class C(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id in tangents:
                return _call("conjugate", ast.Name(node.id, ast.Load()))
            return node

    conj = C().visit(conj)
    result = ast.Name("result", ast.Load())
    test = _call("any_complex", *(ast.Name(t, ast.Load()) for t in tangents), result)
    return ast.IfExp(test, _call("complex_jvp", conj, result), expr)


def _call(fn: str, *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Name(fn, ast.Load()), list(args), [])


class _Zero:
    """The value of a sub-expression that is zero because all its tangents are."""


ZERO = _Zero()


class _Specializer:
    """Specializes a forward formula for a set of present tangents (see the module doc)."""

    def __init__(self, tangent_names: dict[str, str], present: set[str], cache: dict) -> None:
        self.tangent_names = tangent_names  # "x_t" -> zero expression source
        self.present = present
        self.cache = cache  # id(node) -> its tangent names (the nodes outlive the cache)

    def deps(self, node: ast.AST) -> frozenset[str]:
        got = self.cache.get(id(node))
        if got is None:
            got = self.cache[id(node)] = frozenset(
                n.id for n in ast.walk(node)
                if isinstance(n, ast.Name) and n.id in self.tangent_names
            )
        return got

    def live(self, node: ast.AST) -> bool:
        return bool(self.deps(node) & self.present)

    def force(self, node: ast.AST) -> ast.expr:
        """``node`` with every missing tangent replaced by explicit zeros."""
        tn, present = self.tangent_names, self.present

        class F(ast.NodeTransformer):
            def visit_Name(self, n):
                if n.id in tn and n.id not in present:
                    return ast.copy_location(_parse(tn[n.id], "zeros"), n)
                return n

        return F().visit(_copy(node))

    def spec(self, node: ast.expr):
        """The specialized expression, or ZERO."""
        if not self.deps(node):
            return node
        if not self.live(node):
            # linear in its tangents, all of which are zero
            return ZERO
        if isinstance(node, ast.Name):
            return node
        if isinstance(node, ast.BinOp):
            left, right = self.spec(node.left), self.spec(node.right)
            op = node.op
            if isinstance(op, (ast.Add, ast.Sub)):
                if left is ZERO and right is ZERO:
                    return ZERO
                if right is ZERO:
                    return left
                if left is ZERO:
                    return right if isinstance(op, ast.Add) else ast.UnaryOp(ast.USub(), right)
                return ast.BinOp(left, op, right)
            if isinstance(op, (ast.Mult, ast.MatMult)):
                if left is ZERO or right is ZERO:
                    return ZERO
                return ast.BinOp(left, op, right)
            if isinstance(op, ast.Div) and left is ZERO:
                return ZERO
            return ast.BinOp(self._val(left, node.left), op, self._val(right, node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = self.spec(node.operand)
            return ZERO if inner is ZERO else ast.UnaryOp(node.op, inner)
        if isinstance(node, ast.Call):
            # live (some present tangent reaches it): the parts whose tangents are all
            # missing get explicit zeros
            func = node.func
            if isinstance(func, ast.Attribute):
                func = ast.Attribute(self._full(func.value), func.attr, ast.Load())
            return ast.Call(
                func,
                [self._full(a) for a in node.args],
                [ast.keyword(k.arg, self._full(k.value)) for k in node.keywords],
            )
        if isinstance(node, ast.IfExp):
            if self.deps(node.test):
                return self.force(node)
            body, orelse = self.spec(node.body), self.spec(node.orelse)
            if body is ZERO and orelse is ZERO:
                return ZERO
            return ast.IfExp(node.test, self._val(body, node.body), self._val(orelse, node.orelse))
        return self.force(node)

    def _val(self, s, original):
        return self.force(original) if s is ZERO else s

    def _full(self, node):
        """A sub-expression whose value is needed even when zero."""
        return self._val(self.spec(node), node)


def _copy(node):
    return ast.parse(ast.unparse(node), mode="eval").body


# ----------------------------------------------------------------------------- emission


def needs_self(entry: Entry) -> bool:
    """Whether the forward rule reads ``self``'s value (kept before an in-place write)."""
    expr = forward_expression(entry)
    if expr is None or "self" not in entry.op.arg_names:
        return False
    return any(isinstance(n, ast.Name) and n.id == "self" for n in ast.walk(expr))


def emit_forward(entry: Entry) -> str:
    op = entry.op
    expr = forward_expression(entry)
    if expr is None:
        return ""
    ident = _ident(op.key)
    inputs = op.tensor_inputs
    arg_names = [_pyname(a) for a in op.arg_names]
    tan_names = [f"{_pyname(i)}_t" for i in inputs]
    fields = [r[1] for r in op.returns if r[1]]
    multi = op.returns[0][0] == "Tensor[]"

    # zero of each tangent name, for materializing
    zeros = {}
    for i, tn in zip(inputs, tan_names):
        zeros[tn] = (f"[zeros_like(_e) for _e in {_pyname(i)}]"
                     if op.arg(i)["type"] in LIST_TYPES else f"_zt({_pyname(i)})")
    zeros["result_t"] = "zeros_like(result)"

    used = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
    lines = [f"def fwd_{ident}(args, result, tangents, result_t=None):"]
    lines.append(f"    {', '.join(arg_names)}{',' if len(arg_names) == 1 else ''} = args")
    lines.append(f"    {', '.join(tan_names)}{',' if len(tan_names) == 1 else ''} = tangents")
    if fields:
        for k, f in enumerate(fields):
            if f in used:
                lines.append(f"    {f} = result[{k}]")
        lines.append("    result = result[0]")
    elif multi and "result" in used:
        lines.append("    result = list(result)")
    for a in op.arg_names:
        p = _pyname(a)
        if f"{a}_shape" in used:
            lines.append(f"    {a}_shape = {p}.shape if hasattr({p}, 'shape') else None")
        if f"{a}_dtype" in used:
            lines.append(f"    {a}_dtype = {p}.dtype if hasattr({p}, 'dtype') else None")

    branch = [tn for tn in [*tan_names, "result_t"] if tn in used]
    if len(branch) > MAX_BRANCH_INPUTS:
        # one body: missing tangents become zeros, unless all are missing
        lines.append(f"    if {' and '.join(f'{b} is None' for b in branch)}:")
        lines.append("        return None")
        for b in branch:
            lines.append(f"    if {b} is None:")
            lines.append(f"        {b} = {zeros[b]}")
        lines.append(f"    return {ast.unparse(expr)}")
        return "\n".join(lines) + "\n\n"

    cache: dict = {}  # spec never changes the nodes it is given: one cache for all branches

    def emit(k: int, present: set[str], indent: str) -> None:
        if k == len(branch):
            s = _Specializer(zeros, present, cache).spec(expr)
            lines.append(f"{indent}return {'None' if s is ZERO else ast.unparse(s)}")
            return
        b = branch[k]
        lines.append(f"{indent}if {b} is not None:")
        emit(k + 1, present | {b}, indent + "    ")
        emit(k + 1, present, indent)

    if not branch:
        lines.append("    return None")
    else:
        emit(0, set(), "    ")
    return "\n".join(lines) + "\n\n"


def generate(entries: dict[str, Entry], schema: dict[str, OpSchema]) -> str:
    """The forward module: ``fwd_<key>`` for every entry with a forward rule, the op callables
    ``auto_linear`` applies, and the tables of ``forward_ad`` (``_tables``)."""
    from .codegen import alias_target, needs_entry

    parts = [
        "from ember_autograd.formulas import *",
        "from ember_autograd.forward_ops import resolve_op as _resolve_op, zeros_for as _zt",
        "import ember_tensor as et",
        "",
    ]
    functions: dict[str, str | None] = {}  # op key -> its forward function's name
    for key, entry in entries.items():
        functions[key] = None
        if entry.forward is None:
            continue
        op = entry.op
        if entry.forward == "auto_linear":
            parts.append(
                f"_op_{_ident(key)} = _resolve_op({op.name!r}, {op.variants!r}, {op.hand_bound!r})"
            )
        parts.append(emit_forward(entry))
        functions[key] = f"fwd_{_ident(key)}"
    aliases = {}  # alias key -> target key
    for op in schema.values():
        if op.key in entries:
            continue
        target = alias_target(op, schema, entries)
        if target is not None:
            aliases[op.key] = target
            functions[op.key] = functions[target]
        elif needs_entry(op):
            functions[op.key] = None
    parts.append(_tables(entries, schema, functions, aliases))
    return "\n".join(parts) + "\n"


def _tables(entries: dict[str, Entry], schema: dict[str, OpSchema], functions: dict,
            aliases: dict[str, str]) -> str:
    """Source of ``forward_ad``'s tables, aliases (``clip`` for ``clamp``) as their target:
    ``NEEDS_SELF`` (keys whose rule reads ``self``), ``VIEW`` (view ops), ``OUTPUT_DIFF``
    (key -> output_differentiability), ``FORWARD`` (key -> forward function; None for a
    differentiable op without a rule), ``FIELDS`` (key -> output names, where named) and
    ``INPUTS`` (key -> positions of the tensor inputs among the arguments) of every op."""
    def with_aliases(keys) -> list[str]:
        keys = set(keys)
        return sorted(keys | {a for a, t in aliases.items() if t in keys})

    needs = with_aliases(k for k, e in entries.items() if needs_self(e))
    views = with_aliases(k for k, e in entries.items() if e.view)
    outdiff = {k: e.output_differentiability for k, e in entries.items()
               if e.output_differentiability is not None}
    outdiff.update({a: outdiff[t] for a, t in aliases.items() if t in outdiff})
    cforward = with_aliases(k for k, e in entries.items() if e.complex_forward)
    lines = [
        f"COMPLEX_FORWARD = frozenset({cforward!r})",
        f"NEEDS_SELF = frozenset({needs!r})",
        f"VIEW = frozenset({views!r})",
        f"OUTPUT_DIFF = {outdiff!r}",
        "FORWARD = {",
        *(f"    {k!r}: {f or 'None'}," for k, f in functions.items()),
        "}",
        "FIELDS = {",
    ]
    for op in schema.values():
        fields = tuple(r[1] for r in op.returns if r[1])
        if fields:
            lines.append(f"    {op.key!r}: {fields!r},")
    lines += ["}", "INPUTS = {"]
    for op in schema.values():
        inputs = set(op.tensor_inputs)
        positions = tuple(i for i, n in enumerate(op.arg_names) if n in inputs)
        lines.append(f"    {op.key!r}: {positions!r},")
    lines.append("}")
    return "\n".join(lines)


__all__ = ["ForwardCodegenError", "emit_forward", "forward_expression", "generate", "needs_self"]
