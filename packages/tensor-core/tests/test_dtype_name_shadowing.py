"""ember_tensor's package namespace binds PyTorch's dtype aliases (``int``, ``float``,
``bool``, ``long``, ...) as dtypes, so inside ``ember_tensor/__init__.py`` those names are
dtypes, not Python's builtins: a call such as ``int(x)`` there calls a dtype and raises
TypeError ("'ember_tensor._C.dtype' object is not callable"). That broke CUDA IPC export on a
GPU (found on an H200); the module spells the builtins ``_builtins.int`` instead. This test
finds any call of a shadowed name in the module's functions."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import ember_tensor as et

INIT = Path(et.__file__)


def test_no_function_in_the_package_init_calls_a_shadowed_builtin():
    shadowed = {
        name
        for name in dir(builtins)
        if isinstance(getattr(et, name, None), et.dtype)
    }
    assert {"int", "float", "bool"} <= shadowed  # what the check is about
    calls = [
        (node.lineno, node.func.id)
        for node in ast.walk(ast.parse(INIT.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in shadowed
    ]
    assert calls == [], f"{INIT.name} calls dtypes as builtins at {calls}"
