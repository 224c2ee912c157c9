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

Before the body runs, the positional arguments past the entry's ``varargs`` argument are
packed into it, and its integer arguments (``int``, ``int?``, ``int[]``, ``int[]?``) are
converted as the bindings convert them: Python ints within int64, anything with
``__index__`` (NumPy integers, one-element integer tensors); for a list, a sequence of
those, a 1-d integer tensor, or a single int (left an int: it means a one-element list to
most ops, a count to some, as ``tensor_split``'s);
TypeError for bools, floats and other types, OverflowError beyond int64; lists become tuples.
Then the first tensor argument's dtype is checked against the entry's ``dtypes``, with the
bindings' message. The op runs on every device its ops run on.

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

import collections
import functools
import importlib
import inspect

from .. import _C
from .. import composite_ops as _table

# the modules that hold the bodies, one per op family
_FAMILIES = (
    "elementwise", "arith", "reduction", "products", "decompositions", "activation", "signal",
    "shape", "indexing", "sets", "creation", "sampling",
)


def _bodies() -> dict:
    found = {}
    for family in _FAMILIES:
        module = importlib.import_module(f"{__name__}.{family}")
        for name in getattr(module, "__all__", ()):
            found[name] = getattr(module, name)
    return found


def _opmath(dtype):
    """The dtype PyTorch's CPU kernels compute ``dtype`` in: float32 for float16 and bfloat16
    (the result rounded once), the dtype itself otherwise."""
    return _C.float32 if dtype in (_C.float16, _C.bfloat16) else dtype


def _tensor_arg(op: str, value, name: str = "input", position: int = 1) -> None:
    """PyTorch's TypeError for an argument that is not a tensor: "<op>(): argument '<name>'
    (position <position>) must be Tensor, not <type>"."""
    if not isinstance(value, _C.Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


def _number_operand(value, like):
    """A number given where a tensor operand goes, as a 0-d tensor on like's device: its own
    dtype (int64, float64 ...), except that a Python int beyond int64 next to float or complex
    data is that float (docs: Python ints beyond int64 as numbers)."""
    big = isinstance(value, int) and not -2**63 <= value < 2**63
    if big and (like.is_floating_point() or like.is_complex()):
        return _C.tensor(value, dtype=like.dtype, device=like.device)
    return _C.tensor(value, device=like.device)


def _check_scalar(dtype, value) -> None:
    """PyTorch's checked conversion of an op's number argument to the type its kernel
    computes in (``_opmath``): RuntimeError "value cannot be converted to type <T> without
    overflow"."""
    _C._check_scalar(_opmath(dtype), value)


def _dtype_name(dtype) -> str:
    return str(dtype).rpartition(".")[2]  # "float32"


def _category(dtype) -> int:
    return 3 if dtype.is_complex else 2 if dtype.is_floating_point else int(dtype != _C.bool)


def _result_type(values: list):
    """PyTorch's result_type of any number of tensors and Python numbers: tensors with
    dimensions, then 0-d tensors, then numbers, a weaker tier counting only where it is of a
    higher category (bool < integer < floating < complex)."""
    tiers = [None, None, None]
    for v in values:
        if isinstance(v, _C.Tensor):
            tier, dtype = (0 if v.dim() else 1), v.dtype
        else:
            tier = 2
            dtype = (_C.int64 if isinstance(v, int) else _C.get_default_dtype()
                     if isinstance(v, float) else _C.get_default_dtype().to_complex())
        tiers[tier] = dtype if tiers[tier] is None else _C.promote_types(tiers[tier], dtype)
    result = None
    for dtype in tiers:
        if dtype is not None and (result is None or _category(dtype) > _category(result)):
            result = dtype if result is None else _C.promote_types(result, dtype)
    return result


def _dtype_check(name: str, dtypes: tuple, operands: dict | None = None):
    """check(args, kwargs): the bindings' check of the first tensor argument against the
    entry's dtypes (empty: every dtype, no check), with their message; None when there is none.
    ``operands`` (the entry's ``dtypes_of: promoted``: its tensor arguments, name -> position):
    the dtype checked is PyTorch's result_type of those given, tensors and numbers (never
    bools), as the op's kernels see it (``hypot(int_t, float_t)`` computes in float)."""
    if not dtypes:
        return None
    allowed = frozenset(getattr(_C, d) for d in dtypes)

    def refuse(dtype) -> None:
        raise RuntimeError(
            f"{name}: dtype {_dtype_name(dtype)} is not supported (supported: {', '.join(dtypes)})"
        )

    def check(args: tuple, kwargs: dict | None = None) -> None:
        if operands is not None:
            kwargs = kwargs or {}
            given = [args[i] if i < len(args) else kwargs.get(n) for n, i in operands.items()]
            values = [v for v in given if isinstance(v, (_C.Tensor, int, float, complex))
                      and not isinstance(v, bool)]
            if any(isinstance(v, _C.Tensor) for v in values):
                dtype = _result_type(values)
                if dtype not in allowed:
                    refuse(dtype)
                return
        for a in args:
            if isinstance(a, _C.Tensor):
                if a.dtype not in allowed:
                    refuse(a.dtype)
                return

    return check


def _as_int(name: str, arg: str, v, where: str = ""):
    # the bindings' own rule (IntArg: an int, a NumPy integer or a 0-d integer tensor, never a
    # bool), with the op and argument named in its errors
    try:
        i = _C._int_arg(v)
    except OverflowError:
        why = f"{name}(): argument '{arg}' is out of the range of int64: {v}"
        raise OverflowError(why) from None
    if i is None:
        raise TypeError(f"{name}(): argument '{arg}' must be int{where}, not {type(v).__name__}")
    return i


def _as_int_list(name: str, arg: str, v):
    if isinstance(v, (list, tuple)):
        out = []
        for pos, e in enumerate(v):
            if isinstance(e, bool) or not hasattr(type(e), "__index__"):
                raise TypeError(f"{name}(): argument '{arg}' must be tuple of ints, but found "
                                f"element of type {type(e).__name__} at pos {pos}")
            out.append(_as_int(name, arg, e))
        return tuple(out)
    if isinstance(v, _C.Tensor) and v.dim() == 1 and not v.is_floating_point():
        return _as_int_list(name, arg, v.tolist())  # as tensor_split's indices
    if isinstance(v, _C.Tensor) and v.numel() != 1:  # one element: one size (PyTorch's
        raise TypeError(f"{name}(): argument '{arg}' must be tuple of ints, not Tensor")
    if isinstance(v, _C.Tensor) and v.dim():  # SymInt[] reads it through __index__)
        v = v.reshape(())
    return _as_int(name, arg, v, " or tuple of ints")  # one int stays one (a count, for some)


def _as_bool(name: str, arg: str, v):
    if isinstance(v, bool):  # as PyTorch's parser: True or False, not a NumPy bool
        return v
    if v is None and arg == "requires_grad":  # the bindings' FlagArg: PyTorch's factories
        return False
    raise TypeError(f"{name}(): argument '{arg}' must be bool, not {type(v).__name__}")


def _as_float(name: str, arg: str, v):
    if isinstance(v, int):  # a bool or an int of any size, as PyTorch's parser reads a float
        return float(v)
    if not hasattr(type(v), "__float__"):  # (a tensor or a NumPy number computes as given)
        raise TypeError(f"{name}(): argument '{arg}' must be float, not {type(v).__name__}")
    return v


_CONVERTERS = {"int": _as_int, "int[]": _as_int_list, "bool": _as_bool, "float": _as_float}


def _arg_converter(name: str, arg_names: tuple, types: tuple, varargs, defaults: dict):
    """convert(args, kwargs) -> (args, kwargs): the arguments past the ``varargs`` one's
    position packed into it (``x.tile(2, 2)``, ``atleast_1d(x, y)``), then the integer
    arguments converted (see the module's docstring); None when there is nothing to do.
    An optional argument, or an int[] one whose default (in ``defaults``) is empty, takes
    None as its default (PyTorch's parser: ``roll(x, 1, None)``)."""
    plan = {}
    for i, (arg, t) in enumerate(zip(arg_names, types)):
        conv = _CONVERTERS.get(t.removesuffix("?"))
        if conv is not None:
            plan[arg] = (i, conv, t.endswith("?") or (t == "int[]" and arg in defaults))
    spread = arg_names.index(varargs) if varargs else None
    if not plan and spread is None:
        return None
    by_pos = {i: (arg, conv, opt) for arg, (i, conv, opt) in plan.items()}

    def convert(args: tuple, kwargs: dict):
        if spread is not None and len(args) > spread + 1:
            args = (*args[:spread], tuple(args[spread:]))
        if any(i < len(args) for i in by_pos):
            args = list(args)
            for i, (arg, conv, opt) in by_pos.items():
                if i < len(args) and not (opt and args[i] is None):
                    args[i] = conv(name, arg, args[i])
                elif i < len(args) and arg in defaults:  # None for an empty int[] default
                    args[i] = defaults[arg]
            args = tuple(args)
        for k in kwargs.keys() & plan.keys():
            _, conv, opt = plan[k]
            if not (opt and kwargs[k] is None):
                kwargs = {**kwargs, k: conv(name, k, kwargs[k])}
            elif k in defaults:
                kwargs = {**kwargs, k: defaults[k]}
        return args, kwargs

    return convert


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
    source = inspect.unwrap(body)  # the signature of the body, under _named_results
    code = source.__code__
    npos = code.co_argcount
    names = code.co_varnames[: npos + code.co_kwonlyargcount]
    kwonly = names[npos:]
    defaults = dict(source.__kwdefaults__ or {})
    if source.__defaults__:
        defaults.update(zip(names[npos - len(source.__defaults__) : npos], source.__defaults__))

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


def _function(name: str, body, dtypes: tuple, with_out: bool, convert=None, operands=None):
    bind, call = _binder(name, body)
    check = _dtype_check(name, dtypes, operands) or (lambda args, kwargs: None)
    convert = convert or (lambda args, kwargs: (args, kwargs))

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
            args, kwargs = convert(args, kwargs)
            check(args, kwargs)
            return run(args, kwargs)

        return fn

    @functools.wraps(body)
    def fn_out(*args, out=None, **kwargs):
        args, kwargs = convert(args, kwargs)
        check(args, kwargs)
        if out is None:
            return run(args, kwargs)
        hook = _C._get_autograd_hook()
        inputs = _tensors_in(args, kwargs)
        if hook is not None and _C._autograd_hook_installed():
            hook(name, "pre_out", tuple(inputs), out)  # refuses inputs that require grad
        result = body(*args, **kwargs)
        _check_out(body, out, result, False)
        return _C._finish_out(name, out, result, inputs)

    return fn_out


def _tensors_in(args, kwargs) -> list:
    """The tensors among a call's arguments, also inside lists and tuples (cat's)."""
    found = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, _C.Tensor):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(t for t in a if isinstance(t, _C.Tensor))
    return found


def _check_out(body, out, result, inplace: bool) -> None:
    """The body's own rule for the tensor written (``body.check_out(out, result, inplace)``,
    where PyTorch is stricter than a castable dtype: float_power wants float64, isposinf
    bool), before it is written."""
    rule = getattr(body, "check_out", None)
    if rule is not None:
        rule(out, result, inplace)


def _check_inplace_result(name: str, self, result, body=None) -> None:
    _check_out(body, self, result, True)
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


def _inplace(name: str, body, dtypes: tuple, convert=None):
    bind, call = _binder(name, body)
    check = _dtype_check(name, dtypes) or (lambda args: None)  # self's dtype: it is written
    convert = convert or (lambda args, kwargs: (args, kwargs))

    def method(self, *args, **kwargs):
        (self, *args), kwargs = convert((self, *args), kwargs)
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
            _check_inplace_result(name, self, result, body)
            self.detach().copy_(result)  # shares self's version counter: bumps it
            hook(name, "inplace", full, self)
            return self
        # recorded through its ops: they may save self, which the write changes
        result = body(self.clone() if recorded else self, *args, **kwargs)
        _check_inplace_result(name, self, result, body)
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


def _named_results(name: str, body, fields: tuple):
    """body with its tuple of results returned as PyTorch's namedtuple of the op
    (``ember_tensor.return_types.<name>``: ``values``, ``indices``, ...)."""
    kind = collections.namedtuple(name, fields)
    kind.__module__ = "ember_tensor.return_types"

    @functools.wraps(body)
    def named(*args, **kwargs):
        result = body(*args, **kwargs)  # (median without dim returns one tensor)
        return kind(*result) if isinstance(result, tuple) else result

    return named


def install(namespace: dict, tensor_class) -> None:
    """Binds every Python composite's variants into ``namespace`` (ember_tensor's globals) and
    onto ``tensor_class``."""
    bodies = _bodies()
    for row in _table.OPS:
        name, variants, arg_names, dtypes, operators, types, varargs, fields, promoted = row
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
        empty_defaults = {}  # (read only where an int[] argument may have one: import time)
        if "int[]" in types:
            empty_defaults = {p.name: p.default for p in inspect.signature(body).parameters.values()
                              if p.default in ((), [])}
        convert = _arg_converter(name, arg_names, types, varargs, empty_defaults)
        if fields:
            body = _named_results(name, body, fields)
        operands = None
        if promoted:
            operands = {n: i for i, (n, t) in enumerate(zip(arg_names, types, strict=True))
                        if t in ("Tensor", "Tensor?", "Tensor|Scalar", "Tensor|Scalar?")}
        if "function" in variants:
            namespace[name] = _function(name, body, dtypes, "out" in variants, convert, operands)
        if "method" in variants:
            setattr(tensor_class, name, _function(name, body, dtypes, False, convert, operands))
        if "inplace" in variants:
            setattr(tensor_class, f"{name}_", _inplace(name, body, dtypes, convert))
        for dunder, kind in operators.items():
            setattr(tensor_class, dunder, _operator(dunder, kind, name, tensor_class))
