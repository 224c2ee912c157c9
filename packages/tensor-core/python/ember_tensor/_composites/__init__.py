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
``dtypes``, with the bindings' message. The op runs on every device its ops run on.

Autograd: because the body calls ops, autograd records those ops, so the op needs no
derivatives.yaml entry. It may have one, where a fused formula is more accurate than the
gradient of the composition or is PyTorch's (the entry says why); the autograd provider then
names the op in ``record_as_one`` and the op is recorded as one node, exactly like an op with
kernels: while the provider's hook is on and an input requires grad (or carries a forward-mode
tangent), the body runs on detached inputs (its ops record nothing) and the hook is called
with the op's name and all its arguments in signature order (``function``; the in-place variant
calls ``pre_inplace`` before it writes and ``inplace`` after, the write itself unseen). An
in-place variant recorded through its ops computes from a copy of self, since the write would
change what those ops saved.
"""

from __future__ import annotations

import functools
import importlib
import inspect

from .. import _C
from .. import composite_ops as _table

# the modules that hold the bodies, one per op family
_FAMILIES = ("elementwise", "activation", "signal", "shape")


def _bodies() -> dict:
    found = {}
    for family in _FAMILIES:
        module = importlib.import_module(f"{__name__}.{family}")
        for name in getattr(module, "__all__", ()):
            found[name] = getattr(module, name)
    return found


def _dtype_name(dtype) -> str:
    return str(dtype).rpartition(".")[2]  # "float32"


def _dtype_check(name: str, dtypes: tuple):
    """check(args): the bindings' check of the first tensor argument against the entry's
    dtypes (empty: every dtype, no check), with their message; None when there is none."""
    if not dtypes:
        return None
    allowed = frozenset(getattr(_C, d) for d in dtypes)

    def check(args: tuple) -> None:
        for a in args:
            if isinstance(a, _C.Tensor):
                if a.dtype not in allowed:
                    raise RuntimeError(
                        f"{name}: dtype {_dtype_name(a.dtype)} is not supported "
                        f"(supported: {', '.join(dtypes)})"
                    )
                return

    return check


# the Python composites the autograd provider records as one node with a formula of its own
# (a derivatives.yaml entry), rather than through the ops of their bodies
_AS_ONE: frozenset = frozenset()


def record_as_one(names) -> None:
    """Called by the autograd provider: the Python composites (by name) it records as one
    node, with a derivatives.yaml entry of their own; replaces the previous set."""
    global _AS_ONE
    _AS_ONE = frozenset(names)


def _needs_grad(args, kwargs) -> bool:
    """Whether the hook would see an op on these arguments: a tensor that requires grad or
    carries a forward-mode tangent (``_autograd_watched``)."""
    for a in (*args, *kwargs.values()):
        if isinstance(a, _C.Tensor) and (a.requires_grad or a._autograd_watched):
            return True
    return False


def _binder(name: str, body):
    """bind(args, kwargs) -> (every argument in signature order with the defaults filled in,
    keyword-only ones included), as the hook takes them; and call(full) running the body on
    such a tuple."""
    code = body.__code__
    npos = code.co_argcount
    names = code.co_varnames[: npos + code.co_kwonlyargcount]
    kwonly = names[npos:]
    defaults = dict(body.__kwdefaults__ or {})
    if body.__defaults__:
        defaults.update(zip(names[npos - len(body.__defaults__) : npos], body.__defaults__))

    def bind(args: tuple, kwargs: dict) -> tuple:
        if len(args) > npos or any(k not in names[len(args) :] for k in kwargs):
            inspect.signature(body).bind(*args, **kwargs)  # Python's TypeError
        full = list(args)
        for n in names[len(args) :]:
            if n in kwargs:
                full.append(kwargs[n])
            elif n in defaults:
                full.append(defaults[n])
            else:
                raise TypeError(f"{name}() missing required argument: '{n}'")
        return tuple(full)

    def call(full: tuple):
        detached = tuple(a.detach() if isinstance(a, _C.Tensor) else a for a in full)
        result = body(*detached[:npos], **dict(zip(kwonly, detached[npos:])))
        if any(result is d for d in detached):  # a new tensor, never an alias of an input
            result = result.clone()
        return result

    return bind, call


def _function(name: str, body, dtypes: tuple, with_out: bool):
    bind, call = _binder(name, body)
    check = _dtype_check(name, dtypes) or (lambda args: None)

    def run(args, kwargs):
        if name in _AS_ONE and _C._autograd_hook_installed() and _needs_grad(args, kwargs):
            full = bind(args, kwargs)
            result = call(full)  # the body's ops record nothing: its inputs are detached
            _C._get_autograd_hook()(name, "function", full, result)
            return result
        return body(*args, **kwargs)

    if not with_out:

        @functools.wraps(body)
        def fn(*args, **kwargs):
            check(args)
            return run(args, kwargs)

        return fn

    @functools.wraps(body)
    def fn_out(*args, out=None, **kwargs):
        check(args)
        if out is None:
            return run(args, kwargs)
        hook = _C._get_autograd_hook()
        if hook is not None and _C._autograd_hook_installed():
            hook(name, "pre_out", args, out)  # refuses inputs that require grad
        return _C._finish_out(name, out, body(*args, **kwargs))

    return fn_out


def _check_inplace_result(name: str, self, result) -> None:
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


def _inplace(name: str, body, dtypes: tuple):
    bind, call = _binder(name, body)
    check = _dtype_check(name, dtypes) or (lambda args: None)

    def method(self, *args, **kwargs):
        check((self,))
        recorded = _C._autograd_hook_installed() and (
            _needs_grad((self, *args), kwargs)
            or (self._base is not None and self._base.requires_grad)
        )
        if recorded and name in _AS_ONE:
            # as an op with kernels: checks and the old value kept, the write, its node
            full = bind((self, *args), kwargs)
            hook = _C._get_autograd_hook()
            hook(name, "pre_inplace", full, self)
            result = call(full)
            _check_inplace_result(name, self, result)
            self.detach().copy_(result)  # shares self's version counter: bumps it
            hook(name, "inplace", full, self)
            return self
        # recorded through its ops: they may save self, which the write changes
        result = body(self.clone() if recorded else self, *args, **kwargs)
        _check_inplace_result(name, self, result)
        return self.copy_(result)

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"In-place version of {name}."
    return method


def _operator(dunder: str, kind: str, name: str, tensor_class):
    """The Python operator ``dunder`` of the composite ``name`` (ops.yaml ``operators``): self
    (``x << y``: the method), reflected (``2 << x``: the op with the operands swapped, a Python
    number made a tensor of x's dtype when it is an int or bool) or inplace (``x <<= y``)."""
    if kind == "self":
        def op(self, *args):
            return getattr(tensor_class, name)(self, *args)
    elif kind == "reflected":
        def op(self, other):
            if not isinstance(other, tensor_class):
                other = (_C.full_like(self, other) if isinstance(other, int)
                         else _C.tensor(other, device=self.device))
            return getattr(tensor_class, name)(other, self)
    else:
        def op(self, other):
            return getattr(tensor_class, f"{name}_")(self, other)
    op.__name__ = op.__qualname__ = dunder
    op.__doc__ = f"The {dunder} operator: {name} ({kind})."
    return op


def install(namespace: dict, tensor_class) -> None:
    """Binds every Python composite's variants into ``namespace`` (ember_tensor's globals) and
    onto ``tensor_class``."""
    bodies = _bodies()
    for name, variants, arg_names, dtypes, operators in _table.OPS:
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
        for dunder, kind in operators.items():
            setattr(tensor_class, dunder, _operator(dunder, kind, name, tensor_class))
