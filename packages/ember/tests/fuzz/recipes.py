"""Argument recipes: plain data that builds the same argument in Ember and in PyTorch, and
renders as the Python source that builds it.

A recipe has ``build(lib, env)`` (``lib`` is the ``ember`` or ``torch`` module; ``env`` maps
tensor variable names to the tensors already built for this call) and ``src(lib_name)``.
Tensors are built from a flat list of values exactly representable in their dtype, reshaped
to a base shape, then taken through view operations (transpose, strided slice, expand,
storage offset, overlapping ``as_strided``), so both libraries see the same values with the
same strides.
"""

from __future__ import annotations

import keyword
import math
from dataclasses import dataclass

from .targets import resolve


def lit_src(value: object) -> str:
    """Python source for a literal (floats that are not finite included)."""
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "-float('inf')"
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(lit_src(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(lit_src(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, slice):
        return f"slice({lit_src(value.start)}, {lit_src(value.stop)}, {lit_src(value.step)})"
    return repr(value)


def _copy(value: object) -> object:
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    return value


@dataclass(frozen=True)
class Lit:
    """A Python value (int, float, str, None, bool, slice, Ellipsis, nested lists)."""

    value: object

    def build(self, lib, env):
        return _copy(self.value)

    def src(self, lib: str) -> str:
        return lit_src(self.value)

    def tensors(self):
        return ()


@dataclass(frozen=True)
class DType:
    """``<lib>.<name>``: a dtype."""

    name: str

    def build(self, lib, env):
        return getattr(lib, self.name)

    def src(self, lib: str) -> str:
        return f"{lib}.{self.name}"

    def tensors(self):
        return ()


@dataclass(frozen=True)
class Seq:
    """A list or tuple of recipes."""

    items: tuple
    is_tuple: bool = False

    def build(self, lib, env):
        out = [item.build(lib, env) for item in self.items]
        return tuple(out) if self.is_tuple else out

    def src(self, lib: str) -> str:
        inner = ", ".join(item.src(lib) for item in self.items)
        if self.is_tuple:
            return f"({inner},)" if len(self.items) == 1 else f"({inner})"
        return f"[{inner}]"

    def tensors(self):
        return tuple(t for item in self.items for t in item.tensors())


def _key_src(key: tuple) -> str:
    parts = []
    for k in key:
        if isinstance(k, slice):
            text = "" if k.start is None else str(k.start)
            text += ":" + ("" if k.stop is None else str(k.stop))
            if k.step is not None:
                text += f":{k.step}"
            parts.append(text)
        else:
            parts.append(lit_src(k))
    return ", ".join(parts)


@dataclass(frozen=True)
class Tensor:
    """A tensor, named ``var`` in the reproducer.

    ``values`` fill ``base_shape`` (row-major); ``views`` is a tuple of
    ``("transpose", d0, d1)``, ``("getitem", key)``, ``("expand", shape)``,
    ``("reshape", shape)`` or ``("as_strided", size, stride)``, applied in order.
    ``requires_grad`` marks a float leaf that records autograd history.
    """

    var: str
    dtype: str
    base_shape: tuple
    values: tuple
    views: tuple = ()
    requires_grad: bool = False

    def make(self, lib):
        """Build a fresh tensor (called once per call; later uses go through ``env``)."""
        x = lib.tensor(list(self.values), dtype=getattr(lib, self.dtype))
        x = x.reshape(self.base_shape)
        if self.requires_grad:
            x.requires_grad_(True)
        for view in self.views:
            op = view[0]
            if op == "transpose":
                x = x.transpose(view[1], view[2])
            elif op == "getitem":
                x = x[view[1]]
            elif op == "expand":
                x = x.expand(*view[1])
            elif op == "reshape":
                x = x.reshape(view[1])
            elif op == "as_strided":
                x = x.as_strided(view[1], view[2])
        return x

    def make_src(self, lib: str) -> str:
        text = f"{lib}.tensor({lit_src(list(self.values))}, dtype={lib}.{self.dtype})"
        text += f".reshape({lit_src(tuple(self.base_shape))})"
        if self.requires_grad:
            text += ".requires_grad_(True)"
        for view in self.views:
            op = view[0]
            if op == "transpose":
                text += f".transpose({view[1]}, {view[2]})"
            elif op == "getitem":
                text += f"[{_key_src(view[1])}]"
            elif op == "expand":
                text += f".expand({', '.join(map(str, view[1]))})"
            elif op == "reshape":
                text += f".reshape({lit_src(tuple(view[1]))})"
            elif op == "as_strided":
                text += f".as_strided({lit_src(tuple(view[1]))}, {lit_src(tuple(view[2]))})"
        return text

    def build(self, lib, env):
        return env[self.var]

    def src(self, lib: str) -> str:
        return self.var

    def tensors(self):
        return (self,)


@dataclass(frozen=True)
class Ref:
    """The tensor built for another argument (``out=`` aliasing an input)."""

    var: str

    def build(self, lib, env):
        return env[self.var]

    def src(self, lib: str) -> str:
        return self.var

    def tensors(self):
        return ()


@dataclass(frozen=True)
class Call:
    """One call: ``target`` (a ``targets.Target``) with positional ``args`` and ``kwargs``
    (tuples of recipes / of (name, recipe)). For a method, ``args[0]`` is the receiver."""

    index: int
    target: object
    args: tuple
    kwargs: tuple

    def tensor_recipes(self) -> list[Tensor]:
        out: dict[str, Tensor] = {}
        for r in list(self.args) + [r for _, r in self.kwargs]:
            for t in r.tensors():
                out.setdefault(t.var, t)
        return list(out.values())

    def build(self, lib):
        """(callable, args, kwargs, env) for ``lib``; env maps variable names to tensors."""
        env = {t.var: t.make(lib) for t in self.tensor_recipes()}
        args = [r.build(lib, env) for r in self.args]
        kwargs = {k: r.build(lib, env) for k, r in self.kwargs}
        path = self.target.ember if lib.__name__ == "ember" else self.target.torch
        if path.startswith("Tensor."):
            fn = getattr(args[0], path[len("Tensor.") :])
            args = args[1:]
        else:
            fn = resolve(path)
        return fn, args, kwargs, env

    def src(self, lib: str) -> str:
        """Python source that rebuilds the call in ``lib`` and binds its result to ``r``."""
        path = self.target.ember if lib == "ember" else self.target.torch
        if path is None:
            return f"# {lib} has no twin of {self.target.ember}"
        lines = [f"import {lib}"]
        if lib == "torch" and ".nn.functional." in (self.target.torch or ""):
            lines = ["import torch", "import torch.nn.functional"]
        if lib == "ember" and self.target.ember.startswith("ember.nn.functional."):
            lines.append("import ember.nn.functional")
        for t in self.tensor_recipes():
            lines.append(f"{t.var} = {t.make_src(lib)}")
        args = [r.src(lib) for r in self.args]
        kw = []
        for k, r in self.kwargs:
            if k.isidentifier() and not keyword.iskeyword(k):
                kw.append(f"{k}={r.src(lib)}")
            else:
                kw.append(f"**{{{k!r}: {r.src(lib)}}}")
        if path.startswith("Tensor."):
            head = f"{args[0]}.{path[len('Tensor.') :]}"
            args = args[1:]
        elif path.split(".")[0] == lib:
            head = lib + path[path.index(".") :]
        else:  # a callable of another module (the fuzzer's self-test)
            lines.append(f"import {path.rsplit('.', 1)[0]}")
            head = path
        lines.append(f"r = {head}({', '.join(args + kw)})")
        return "\n".join(lines)
