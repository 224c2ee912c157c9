"""``ember.jit``: the names of ``torch.jit`` that programs call, for programs written for
TorchScript. Ember has no TorchScript compiler: ``script`` and ``trace`` return the
function or module unchanged (it runs eagerly, as in PyTorch under
``PYTORCH_JIT=0``), the annotations are identities, and saving or loading a TorchScript
archive is a ``NotImplementedError`` that says what to use instead.

>>> import ember_tensor as et
>>> double = et.jit.script(lambda x: 2 * x)
>>> double(et.ones(2)).tolist()
[2.0, 2.0]
"""

from __future__ import annotations

__all__ = ["Final", "export", "ignore", "interface", "is_scripting", "is_tracing", "load",
           "save", "script", "trace", "trace_module", "unused"]

try:
    from typing import Final  # torch.jit.Final is typing's
except ImportError:  # pragma: no cover
    Final = None


def script(obj, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None):
    """``obj`` unchanged: a function or module runs eagerly."""
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace: bool = True,
          check_inputs=None, check_tolerance: float = 1e-5, strict: bool = True, **_more):
    """``func`` unchanged (not recorded into a graph): it runs eagerly on every call."""
    if not callable(func):
        raise RuntimeError("trace: expected a function or a module, got "
                           f"{type(func).__name__}")
    return func


def trace_module(mod, inputs, **_more):
    """``mod`` unchanged (see ``trace``)."""
    return mod


def ignore(drop=False, **_kwargs):
    """A decorator leaving the function unchanged (``@ignore`` or ``@ignore(drop=...)``)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """``fn`` unchanged."""
    return fn


def export(fn):
    """``fn`` unchanged."""
    return fn


def interface(obj):
    """``obj`` unchanged."""
    return obj


def is_scripting() -> bool:
    """False: code never runs under TorchScript."""
    return False


def is_tracing() -> bool:
    """False: code never runs under the tracer."""
    return False


def save(m, f, _extra_files=None) -> None:
    """TorchScript archives do not exist in Ember: save the ``state_dict()`` with
    ``ember.save`` instead."""
    raise NotImplementedError("ember.jit.save: Ember has no TorchScript; save the module's "
                              "state_dict() with ember.save and rebuild the module in Python")


def load(f, map_location=None, _extra_files=None, **_more):
    """TorchScript archives cannot be read by Ember."""
    raise NotImplementedError("ember.jit.load: Ember cannot run TorchScript archives; load a "
                              "state_dict saved with ember.save into the module built in Python")
