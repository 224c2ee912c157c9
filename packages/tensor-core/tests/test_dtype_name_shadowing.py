"""ember_tensor's namespaces bind PyTorch's dtype aliases (``int``, ``float``, ``bool``) and
the Array API's (``bool``) as dtypes, so inside such a module those names are dtypes, not
Python's builtins: a call such as ``int(x)`` there calls a dtype and raises TypeError
("'ember_tensor._C.dtype' object is not callable"). That broke CUDA IPC export on a GPU
(found on an H200); the modules spell the builtins ``_builtins.int`` instead. This test
finds any call of a shadowed builtin in every module of the package."""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import pkgutil

import pytest

import ember_tensor as et


def _modules():
    names = ["ember_tensor"]
    for info in pkgutil.walk_packages(et.__path__, "ember_tensor."):
        names.append(info.name)
    return names


@pytest.mark.parametrize("name", _modules())
def test_no_module_calls_a_builtin_its_namespace_shadows(name):
    try:
        module = importlib.import_module(name)
    except Exception:  # noqa: BLE001 - optional modules (a CUDA-only helper, say)
        pytest.skip(f"{name} does not import here")
    shadowed = {
        n
        for n in dir(builtins)
        if not n.startswith("_")
        and callable(getattr(builtins, n))
        and n in vars(module)
        and vars(module)[n] is not getattr(builtins, n)
    }
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        pytest.skip(f"{name} has no source")
    calls = [
        (node.lineno, node.func.id)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in shadowed
    ]
    assert calls == [], f"{name} calls names its namespace rebinds: {calls}"


def test_the_package_namespace_shadows_what_the_check_is_about():
    assert isinstance(et.int, et.dtype) and isinstance(et.float, et.dtype)
