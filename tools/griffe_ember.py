"""A griffe extension for the API reference (mkdocstrings, ``mkdocs.yml``).

Two things the docstrings of Ember's packages need before mkdocstrings renders them:

- **Markdown.** The docstrings are plain text in reST's habits: ``code`` in double
  backticks (Markdown reads those as code too), doctest examples (``>>>`` lines, which
  Markdown would read as nested block quotes), literal blocks introduced by ``::`` and
  ``:class:`x``` roles. Doctest examples and literal blocks become fenced code blocks,
  ``::`` becomes ``:``, and roles become plain code.
- **The compiled core.** ``ember_tensor._C`` is a compiled module. griffe reads its
  signatures, and the descriptions of its functions, from the generated stub ``_C.pyi``;
  the docstrings of the methods live only on the compiled objects. An object of
  ``ember_tensor._C`` without a docstring gets the live object's, without the signature
  lines pybind11 puts first. The descriptions (from ``ops.yaml``) are plain text, so the
  characters Markdown would read (``[``, ``]``, ``*``, ``_``, ``<``) are escaped outside
  code. ``ember_tensor`` itself adds the compiled functions to its namespace in a loop
  that static analysis cannot follow; the names of the live
  ``ember_tensor.__all__`` that griffe did not see are added as aliases of their
  ``ember_tensor._C`` objects, the members that ``ember_tensor`` sets on ``Tensor`` in
  Python (``share_memory_``, ``new_zeros``, ...) are added to the stub's class, and so are
  the functions that the stub declares with ``@overload`` only (``max``).

The packages must be installed (``nox -s docs`` installs them); importing ``ember_tensor``
is the only dynamic step.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import griffe

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj):`~?([^`]+)`")


def to_markdown(text: str) -> str:
    """The docstring ``text`` with doctest examples and ``::`` literal blocks fenced."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    in_fence = False
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            in_fence = not in_fence
            out.append(line)
            i += 1
            continue
        if in_fence:
            out.append(line)
            i += 1
            continue
        stripped = line.strip()
        if stripped.startswith(">>>"):
            # a doctest block: up to the next blank line
            indent = len(line) - len(line.lstrip())
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i][indent:] if lines[i][:indent].isspace() else lines[i])
                i += 1
            out += _fenced(block, "pycon", out)
            continue
        if stripped.endswith("::") and not stripped.startswith(".."):
            # a literal block follows: the next indented lines after one blank line
            head = line.rstrip()[:-2].rstrip()
            if head:
                out.append(head + ":" if not head.endswith(":") else head)
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            base = len(line) - len(line.lstrip())
            block_lines: list[str] = []
            while j < len(lines) and (
                not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > base
            ):
                block_lines.append(lines[j])
                j += 1
            while block_lines and not block_lines[-1].strip():
                block_lines.pop()
            if block_lines:
                body = inspect.cleandoc("\n".join(block_lines)).splitlines()
                lang = "pycon" if body[0].lstrip().startswith(">>>") else "text"
                out += _fenced(body, lang, out)
                i = j
                continue
            i += 1
            continue
        out.append(_ROLE.sub(r"`\1`", line))
        i += 1
    return "\n".join(out)


def _fenced(block: list[str], lang: str, before: list[str]) -> list[str]:
    lead = [""] if before and before[-1].strip() else []
    return [*lead, f"```{lang}", *block, "```", ""]


def _compiled_doc(doc: str | None, name: str, *, live: bool) -> str | None:
    """A docstring of the compiled core as Markdown: without the signature lines of
    ``name`` that pybind11 puts first (``live``: read from the compiled object), and with
    square brackets, asterisks and underscores outside code escaped (the descriptions are
    plain text)."""
    if not doc:
        return None
    lines = doc.strip().splitlines()
    if live:
        signature = re.compile(rf"^(?:\d+\. )?{re.escape(name)}\(.*\)(?: -> .*)?$")
        lines = [
            line
            for line in lines
            if not signature.match(line.strip()) and line.strip() != "Overloaded function."
        ]
    text = "\n".join(lines).strip()
    pieces = re.split(r"(`+[^`]*`+)", text)
    return "".join(
        p if p.startswith("`") else re.sub(r"([\\[\]*_<])", r"\\\1", p) for p in pieces
    ) or None


def _live_doc(path: str) -> str | None:
    """The docstring of the compiled function, method, class or property at ``path``
    (``ember_tensor._C.Tensor.add``); None for other objects (a dtype's docstring is its
    class's, not the attribute's)."""
    parts = path.split(".")
    try:
        obj: Any = importlib.import_module(".".join(parts[:2]))
        for name in parts[2:]:
            obj = inspect.getattr_static(obj, name)
    except (ImportError, AttributeError):
        return None
    if inspect.isroutine(obj) or inspect.isclass(obj) or inspect.isdatadescriptor(obj):
        return getattr(obj, "__doc__", None)
    return None


class EmberDocstrings(griffe.Extension):
    """See the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self._done: set[int] = set()  # ids of the objects whose docstring was converted

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        self.on_object(obj=pkg)  # griffe fires on_object for the members only
        if pkg.path != "ember_tensor":
            return
        core = importlib.import_module("ember_tensor")
        compiled = pkg.members.get("_C")
        if compiled is None:
            return
        _add_overloaded(compiled)
        # what the compiled module's public names are, by identity (``ember_tensor.float``
        # is ``ember_tensor._C.float32``)
        live_c = importlib.import_module("ember_tensor._C")
        by_id = {id(getattr(live_c, n)): n for n in compiled.members if hasattr(live_c, n)}
        for name in getattr(core, "__all__", ()):
            if name in pkg.members:
                continue
            target = name if name in compiled.members else by_id.get(id(getattr(core, name)))
            if target is not None:
                pkg.set_member(name, griffe.Alias(name, f"ember_tensor._C.{target}", parent=pkg))
                continue
            # a composite op (ember_tensor._composites): documented from its Python body
            module = getattr(getattr(core, name), "__module__", "") or ""
            if module.startswith("ember_tensor._composites."):
                pkg.set_member(name, griffe.Alias(name, f"{module}.{name}", parent=pkg))
        if pkg.exports is not None:
            pkg.exports = list(dict.fromkeys([*pkg.exports, *core.__all__]))
        # The live Tensor says it comes from ember_tensor, so griffe sees ``_C.Tensor`` as an
        # alias; the class it resolves to (the stub's) is not visited by ``on_object``.
        tensor = compiled.members.get("Tensor")
        if tensor is not None and tensor.is_alias:
            tensor = tensor.final_target
        if isinstance(tensor, griffe.Class):
            _add_overloaded(tensor)
            self._add_python_members(tensor, core.Tensor)
            for obj in [tensor, *tensor.members.values()]:
                if not obj.is_alias:
                    self.on_object(obj=obj)

    @staticmethod
    def _add_python_members(cls: griffe.Class, live: type) -> None:
        """The members ``ember_tensor`` sets on ``Tensor`` in Python, missing from the stub."""
        for name, value in vars(live).items():
            if name in cls.members or (name.startswith("_") and name != "__array__"):
                continue
            doc = getattr(value, "__doc__", None)
            if isinstance(value, property):
                member: griffe.Object = griffe.Attribute(name, parent=cls)
                member.labels.add("property")
            elif inspect.isfunction(value):
                member = griffe.Function(name, parameters=_parameters(value), parent=cls)
            else:
                continue
            if doc:
                member.docstring = griffe.Docstring(inspect.cleandoc(doc), parent=member)
            cls.set_member(name, member)

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if id(obj) in self._done:
            return
        self._done.add(id(obj))
        if obj.path.startswith("ember_tensor._C."):
            # the stub has the docstrings of the ops' functions, not those of the methods
            if obj.docstring is not None:
                text = _compiled_doc(obj.docstring.value, obj.name, live=False)
            else:
                text = _compiled_doc(_live_doc(obj.path), obj.name, live=True)
            obj.docstring = griffe.Docstring(text, parent=obj) if text else None
        if obj.docstring is not None:
            obj.docstring.value = to_markdown(obj.docstring.value)


def _add_overloaded(container: griffe.Module | griffe.Class) -> None:
    """A member for every function of the stub that has overloads only (``max``): griffe
    keeps those aside, as overloads of an implementation that a stub does not have."""
    for name, overloads in container.overloads.items():
        if name in container.members or not overloads:
            continue
        last = overloads[-1]
        func = griffe.Function(
            name,
            parameters=last.parameters,
            returns=last.returns,
            lineno=overloads[0].lineno,
            endlineno=last.endlineno,
            parent=container,
        )
        func.overloads = list(overloads[:-1])  # the last one is the function's signature
        docs = dict.fromkeys(o.docstring.value for o in overloads if o.docstring is not None)
        if docs:
            func.docstring = griffe.Docstring("\n\n".join(docs), parent=func)
        container.set_member(name, func)


def _parameters(func: Any) -> griffe.Parameters:
    kinds = {
        inspect.Parameter.POSITIONAL_ONLY: griffe.ParameterKind.positional_only,
        inspect.Parameter.POSITIONAL_OR_KEYWORD: griffe.ParameterKind.positional_or_keyword,
        inspect.Parameter.VAR_POSITIONAL: griffe.ParameterKind.var_positional,
        inspect.Parameter.KEYWORD_ONLY: griffe.ParameterKind.keyword_only,
        inspect.Parameter.VAR_KEYWORD: griffe.ParameterKind.var_keyword,
    }
    params = []
    for p in inspect.signature(func).parameters.values():
        default = None if p.default is inspect.Parameter.empty else repr(p.default)
        params.append(griffe.Parameter(p.name, kind=kinds[p.kind], default=default))
    return griffe.Parameters(*params)
