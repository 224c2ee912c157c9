"""Grad modes for the optimizers' steps, without a hard dependency on an autograd provider.

An update writes into the parameters in place, which must not be recorded by autograd, so
the steps run under the *active* autograd provider's ``no_grad``, and a closure under its
``enable_grad``. The provider is looked up when a step first needs it:

- the ``ember`` meta-package is imported: its ``autograd`` slot (``ember.no_grad``), so a
  replaced autograd provider is honoured;
- otherwise ``ember_autograd``, when it is installed;
- neither: no tensor can require grad, nothing is ever recorded, and a no-op context is
  exact.

An autograd provider that is installed but fails to import raises: never a silent skip.
"""

from __future__ import annotations

import contextlib
import sys

__all__ = ["enable_grad", "no_grad"]

_found: tuple | None = None  # (no_grad, enable_grad) once a provider was found


def _modes() -> tuple | None:
    global _found
    if _found is not None:
        return _found
    ember = sys.modules.get("ember")
    if ember is not None:
        try:
            _found = (ember.no_grad, ember.enable_grad)
            return _found
        except AttributeError:  # the meta-package is there, no autograd provider is
            return None
    try:
        import ember_autograd
    except ModuleNotFoundError as exc:
        if exc.name != "ember_autograd":
            raise
        return None  # not cached: a later `import ember` may bring a provider
    _found = (ember_autograd.no_grad, ember_autograd.enable_grad)
    return _found


def no_grad():
    """A context in which tensor ops record no graph."""
    modes = _modes()
    return modes[0]() if modes is not None else contextlib.nullcontext()


def enable_grad():
    """A context in which tensor ops record a graph (for a step's closure)."""
    modes = _modes()
    return modes[1]() if modes is not None else contextlib.nullcontext()
