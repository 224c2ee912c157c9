"""The examples in the docstrings of ember_nn run."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import ember_nn

MODULES = sorted(
    name for _, name, _ in pkgutil.walk_packages(ember_nn.__path__, prefix="ember_nn.")
) + ["ember_nn"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
