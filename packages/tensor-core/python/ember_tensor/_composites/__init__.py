"""The composite layer: the ops that ops.yaml declares with ``composite: python``.

Each such op is one Python function, written in terms of other ember_tensor ops, in the module
of its family (``elementwise.py``, ...), with exactly the signature its ops.yaml entry declares
(a test checks both agree). ``install`` gives it the variants the entry lists, with the
protocol of the bound ops:

- ``function``: ``ember_tensor.<name>(...)``; with the ``out`` variant it takes ``out=``: the
  result is written into out as the bindings do (an empty out is resized, the result's dtype
  must cast to out's, RuntimeError otherwise), and the autograd provider refuses out= when an
  input requires grad;
- ``method``: ``Tensor.<name>(self, ...)``;
- ``inplace``: ``Tensor.<name>_(self, ...)``: the result written into self through ``copy_``
  (so autograd records the write), after PyTorch's checks: the result's dtype must cast to
  self's and its shape must be self's.

Before the body runs, the first tensor argument's dtype is checked against the entry's
``dtypes``, with the bindings' message. Because the body calls ops, autograd records those ops
(the op needs no derivatives.yaml entry) and the op runs on every device its ops run on.
"""

from __future__ import annotations

import functools
import importlib

from .. import _C
from .. import composite_ops as _table

# the modules that hold the bodies, one per op family
_FAMILIES = ("elementwise",)


def _bodies() -> dict:
    found = {}
    for family in _FAMILIES:
        module = importlib.import_module(f"{__name__}.{family}")
        for name in getattr(module, "__all__", ()):
            found[name] = getattr(module, name)
    return found


def _dtype_name(dtype) -> str:
    return str(dtype).rpartition(".")[2]  # "float32"


def _check_dtype(name: str, dtypes: tuple, args: tuple) -> None:
    """The bindings' check of the first tensor argument against the entry's dtypes (empty:
    every dtype)."""
    if not dtypes:
        return
    for a in args:
        if isinstance(a, _C.Tensor):
            if _dtype_name(a.dtype) not in dtypes:
                raise RuntimeError(
                    f"{name}: dtype {_dtype_name(a.dtype)} is not supported "
                    f"(supported: {', '.join(dtypes)})"
                )
            return


def _function(name: str, body, dtypes: tuple, with_out: bool):
    if not with_out:

        @functools.wraps(body)
        def fn(*args, **kwargs):
            _check_dtype(name, dtypes, args)
            return body(*args, **kwargs)

        return fn

    @functools.wraps(body)
    def fn_out(*args, out=None, **kwargs):
        _check_dtype(name, dtypes, args)
        if out is None:
            return body(*args, **kwargs)
        hook = _C._get_autograd_hook()
        if hook is not None and _C._autograd_hook_installed():
            hook(name, "pre_out", args, out)  # refuses inputs that require grad
        return _C._finish_out(name, out, body(*args, **kwargs))

    return fn_out


def _inplace(name: str, body, dtypes: tuple):
    def method(self, *args, **kwargs):
        _check_dtype(name, dtypes, (self,))
        result = body(self, *args, **kwargs)
        if not _C.can_cast(result.dtype, self.dtype):
            raise RuntimeError(
                f"{name}: result type {_dtype_name(result.dtype)} can't be cast to the desired "
                f"output type {_dtype_name(self.dtype)}"
            )
        if tuple(result.shape) != tuple(self.shape):
            raise RuntimeError(
                f"{name}: output with shape {list(self.shape)} doesn't match the result shape "
                f"{list(result.shape)}"
            )
        return self.copy_(result)

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"In-place version of {name}."
    return method


def install(namespace: dict, tensor_class) -> None:
    """Binds every Python composite's variants into ``namespace`` (ember_tensor's globals) and
    onto ``tensor_class``."""
    bodies = _bodies()
    for name, variants, arg_names, dtypes in _table.OPS:
        body = bodies.get(name)
        if body is None:
            raise ImportError(
                f"ember_tensor: ops.yaml declares '{name}' as composite: python, but no module "
                f"of ember_tensor._composites ({', '.join(_FAMILIES)}) defines it"
            )
        code = body.__code__
        if code.co_varnames[: code.co_argcount + code.co_kwonlyargcount] != arg_names:
            raise ImportError(
                f"ember_tensor: the body of composite '{name}' takes "
                f"{code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]}, but ops.yaml "
                f"declares the arguments {arg_names}"
            )
        if "function" in variants:
            namespace[name] = _function(name, body, dtypes, "out" in variants)
        if "method" in variants:
            setattr(tensor_class, name, _function(name, body, dtypes, False))
        if "inplace" in variants:
            setattr(tensor_class, f"{name}_", _inplace(name, body, dtypes))
