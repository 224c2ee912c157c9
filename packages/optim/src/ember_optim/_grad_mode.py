"""Grad modes for optimizer steps, without a hard dependency on an autograd provider.

ember-optim depends on the tensor core only (DESIGN.md: ``tensor-core <- optim``). A step
writes into parameters in place, which must not be recorded, so it runs under the
autograd provider's ``no_grad`` (and a closure under its ``enable_grad``), looked up here
on first use:

- ``ember_autograd`` already imported: its ``no_grad``/``enable_grad``;
- no autograd hook installed in the core: no tensor can require grad and nothing is ever
  recorded, so a no-op context is exact (and ``ember_autograd`` is not imported for
  nothing);
- otherwise ``ember_autograd`` is imported; when it is not installed, a no-op context.

A provider that is installed but fails to import raises: it is never silently skipped.
"""

from __future__ import annotations

import contextlib
import functools
import sys

import ember_tensor

__all__ = ["no_grad", "enable_grad", "grad_disabled"]

_modes: tuple | None = None  # (no_grad, enable_grad) of ember_autograd, once found


def _autograd_modes() -> tuple | None:
    global _modes
    if _modes is not None:
        return _modes
    module = sys.modules.get("ember_autograd")
    if module is None:
        if ember_tensor._get_autograd_hook() is None:
            return None  # nothing can record: no need to look further (not cached)
        try:
            import ember_autograd as module
        except ModuleNotFoundError as exc:
            if exc.name != "ember_autograd":
                raise
            return None
    _modes = (module.no_grad, module.enable_grad)
    return _modes


def no_grad():
    """A context in which ops record no graph (the autograd provider's ``no_grad``)."""
    modes = _autograd_modes()
    return modes[0]() if modes is not None else contextlib.nullcontext()


def enable_grad():
    """A context in which ops record a graph again (the provider's ``enable_grad``)."""
    modes = _autograd_modes()
    return modes[1]() if modes is not None else contextlib.nullcontext()


def grad_disabled(step):
    """Decorates an optimizer's ``step``: it runs under ``no_grad``."""

    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        with no_grad():
            return step(*args, **kwargs)

    return wrapper
