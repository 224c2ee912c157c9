"""The code generated from derivatives.yaml, as modules: ``rules`` (how to record each op),
``backward`` (the backward nodes and their recorders), ``forward`` (forward mode's tangent
functions and tables).

They are checked in as ``ember_autograd._generated``, made by ``python -m
ember_autograd.regenerate``, which records the sha256 of the derivatives.yaml and of the
core's ``ember_tensor/ops_schema.json`` it read. ``load(name)`` returns the checked-in module
when both fingerprints match the installed files; otherwise (another core version, a
third-party core, a derivatives.yaml edited since) it generates the modules in memory with
``ember_autograd.codegen``, as slow as that is (parsing, validating, compiling). Either way
nothing is written anywhere and no environment variable is read.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import linecache
import os
import types
from importlib import resources

PACKAGE = "ember_autograd._generated"
DERIVATIVES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "derivatives.yaml")


def fingerprint(data: bytes) -> str:
    """The sha256 of ``data`` in hex, as the generated modules record it."""
    return hashlib.sha256(data).hexdigest()


def schema_bytes() -> bytes:
    """The installed core's op schema, ``ember_tensor/ops_schema.json``, as stored."""
    return resources.files("ember_tensor").joinpath("ops_schema.json").read_bytes()


def load(name: str) -> types.ModuleType:
    """The generated module ``name`` ("rules", "backward" or "forward"): the checked-in one
    if it was made from the installed files, else the one generated in memory (once)."""
    if _checked_in_is_current():
        return importlib.import_module(f"{PACKAGE}.{name}")
    return _in_memory()[name]


@functools.cache
def _checked_in_is_current() -> bool:
    try:
        from . import _generated
    except ImportError:  # deleted, to be regenerated
        return False
    with open(DERIVATIVES, "rb") as f:
        derivatives = f.read()
    return (
        _generated.SCHEMA_SHA256 == fingerprint(schema_bytes())
        and _generated.DERIVATIVES_SHA256 == fingerprint(derivatives)
    )


@functools.cache
def _in_memory() -> dict[str, types.ModuleType]:
    return build()


def build(path: str | None = None) -> dict[str, types.ModuleType]:
    """Every generated module by name, generated from the derivatives.yaml at ``path``
    (default: the package's) and run in memory: not written, not put in ``sys.modules``.
    Tracebacks through them show their lines."""
    from . import codegen

    modules = {}
    for file, source in codegen.sources(path).items():
        name = file.removesuffix(".py")
        if name != "__init__":
            modules[name] = _run(f"{PACKAGE}.{name}", source)
    return modules


def _run(name: str, source: str) -> types.ModuleType:
    module = types.ModuleType(name)
    # "<ember_autograd...": anomaly mode leaves these frames out of the traces it keeps
    filename = f"<{name} generated in memory>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), module.__dict__)
    return module
