"""Out-of-tree kernels: replace one op's built-in CPU kernel with your own.

``register_kernel(op, device, fn)`` makes every call of ``op`` from Python (``ember.relu(x)``,
``x.relu()``, ``x.relu_()``, ``ember.relu(x, out=y)``) run ``fn`` instead of Ember's kernel::

    import ember_tensor
    from ember_tensor import library

    @library.register_kernel("relu", "cpu")
    def my_relu(x, *, out=None):
        if x.dtype != ember_tensor.float32 or out is not None:
            return NotImplemented          # the built-in kernel handles everything else
        return ember_tensor.from_numpy(my_fast_relu(x.numpy()))

The contract of ``fn``:

- It gets the op's arguments positionally, in the order of the op's signature (the table in
  the docs, ``ember_tensor/ops_schema.json``), after the core has checked them: a tensor where
  the signature has a tensor, defaults filled in. The in-place variant (``x.relu_()``) and
  ``out=`` calls pass the tensor to write as the keyword ``out``: ``fn`` must write the result
  into it and return it.
- It returns what the op returns (a ``Tensor`` for most ops), or ``NotImplemented`` to let the
  built-in kernel run (for dtypes, layouts or variants it does not handle).
- Ops that ``fn`` itself calls run Ember's built-in kernels, so an override may be written with
  other ops (or call the op it overrides) without recursing.
- Autograd is unchanged: the op's derivative (``derivatives.yaml``) applies to the result.

An override replaces the kernel for calls made from Python; ops that other C++ kernels run
internally keep the built-in kernel. Each op has at most one override at a time (registering a
second is a ``RuntimeError`` naming the first); any number of ops can be overridden.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources

from . import _C

__all__ = ["KernelHandle", "register_kernel", "registered_kernels"]

# devices an override can target in this build
_DEVICES = ("cpu",)
_registered: dict[str, Callable] = {}
_schema: dict[str, dict] | None = None


def _op_schema() -> dict[str, dict]:
    """Op name -> its entry in ops_schema.json (the first overload), read once."""
    global _schema
    if _schema is None:
        text = resources.files(__package__).joinpath("ops_schema.json").read_text()
        _schema = {}
        for entry in json.loads(text):
            _schema.setdefault(entry["name"], entry)
    return _schema


class KernelHandle:
    """What ``register_kernel`` returns: ``remove()`` puts the built-in kernel back."""

    def __init__(self, op: str, fn: Callable) -> None:
        self.op, self.fn = op, fn

    def remove(self) -> None:
        """Removes the override (nothing happens if it was removed already)."""
        if _registered.get(self.op) is self.fn:
            del _registered[self.op]
            _C._set_kernel_override(self.op, None)

    def __enter__(self) -> KernelHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"KernelHandle(op={self.op!r}, fn={_qualname(self.fn)})"


def _qualname(fn: Callable) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def register_kernel(op: str, device: str = "cpu", fn: Callable | None = None):
    """Runs ``fn`` instead of ``op``'s built-in kernel on ``device`` (see the module docstring
    for ``fn``'s contract). Returns a ``KernelHandle`` (``handle.remove()``, or use it as a
    context manager); without ``fn`` it is a decorator that registers the function and returns
    it unchanged.

    Raises ``ValueError`` for an op name that is not in the op table or a device other than
    ``"cpu"``, ``TypeError`` when ``fn`` is not callable, and ``RuntimeError`` when ``op``
    already has an override.
    """
    if not isinstance(op, str) or op not in _op_schema():
        raise ValueError(
            f"register_kernel: {op!r} is not an op of ember_tensor (op names are those of the op "
            "table, e.g. 'relu', 'add', 'matmul'; in-place and out= variants share the op's name)"
        )
    if device not in _DEVICES:
        raise ValueError(
            f"register_kernel: device {device!r} is not available in this build of ember_tensor; "
            f"kernels can be registered for {', '.join(map(repr, _DEVICES))}"
        )
    if fn is None:

        def decorator(f: Callable) -> Callable:
            register_kernel(op, device, f)
            return f

        return decorator
    if not callable(fn):
        raise TypeError(f"register_kernel: fn must be callable, got {type(fn).__name__}")
    if op in _registered:
        raise RuntimeError(
            f"register_kernel: {op!r} on {device!r} already has an override "
            f"({_qualname(_registered[op])}); remove that one first (its KernelHandle.remove())"
        )
    _registered[op] = fn
    _C._set_kernel_override(op, fn)
    return KernelHandle(op, fn)


def registered_kernels() -> dict[str, str]:
    """The ops that have an override, each with the qualified name of its function."""
    return {op: _qualname(fn) for op, fn in sorted(_registered.items())}


def get_include() -> str:
    """The directory of ``ember_plugin.h``, the C API header for compiled plugins."""
    return str(resources.files(__package__).joinpath("include"))
