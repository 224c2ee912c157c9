"""``ember.compile`` and ``ember.compiler``: Ember has no compiler yet, so ``compile`` is
the identity with a one-time notice (docs/differences-from-pytorch.md says why).

PyTorch programs call ``torch.compile(model)`` (nanoGPT by default) and expect a callable
that computes what ``model`` computes, faster. Ember returns ``model`` itself: the program
runs unchanged, eagerly, and says so once. ``disable`` (also as a decorator) and
``is_compiling()`` are there for code that guards regions from the compiler.

>>> import ember_tensor as et
>>> f = lambda x: x + 1
>>> et.compile(f, disable=True) is f
True
"""

from __future__ import annotations

import functools
import warnings

__all__ = ["compile", "disable", "is_compiling", "is_dynamo_compiling", "is_exporting",
           "reset", "list_backends", "allow_in_graph", "assume_constant_result"]

_noticed = False


def _notice() -> None:
    global _noticed
    if not _noticed:
        _noticed = True
        warnings.warn("ember.compile: Ember has no compiler yet; the model runs eagerly, "
                      "unchanged (docs/differences-from-pytorch.md)", UserWarning,
                      stacklevel=3)


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend=None, mode=None,
            options=None, name=None, disable: bool = False, **_more):  # noqa: A001
    """``model`` itself (a module or function), after a one-time notice that it runs
    eagerly; without ``model``, a decorator doing the same. PyTorch's arguments are
    accepted and have no effect. ``mode`` must be one of PyTorch's names."""
    if mode not in (None, "default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs",
                    "max-autotune"):
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: default, lite, "
                           "reduce-overhead, max-autotune-no-cudagraphs, max-autotune")
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic,
                                 backend=backend, mode=mode, options=options, name=name,
                                 disable=disable)
    if not callable(model):  # PyTorch's AssertionError and message
        raise AssertionError(f"A callable function is expected, but {type(model)} is "
                             "provided.")
    if not disable:
        _notice()
    return model


def disable(fn=None, recursive: bool = True, *, reason=None):
    """``fn`` unchanged (there is no compiler to keep out); a decorator without ``fn``."""
    if fn is None:
        return lambda f: f
    return fn


def is_compiling() -> bool:
    """False: nothing is ever being compiled."""
    return False


is_dynamo_compiling = is_compiling


def is_exporting() -> bool:
    """False: Ember has no export."""
    return False


def reset() -> None:
    """Nothing to reset."""


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """No compiler backends: an empty list."""
    return []


def allow_in_graph(fn):
    """``fn`` unchanged."""
    return fn


def assume_constant_result(fn):
    """``fn`` unchanged."""
    return fn
