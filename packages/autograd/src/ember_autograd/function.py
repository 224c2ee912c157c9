"""Custom differentiable functions: ``ember.autograd.Function``, PyTorch's contract.

A subclass defines static ``forward`` and ``backward``; ``apply`` runs ``forward`` without
recording and, when a tensor input requires grad (and grad mode is on), attaches the
outputs to one backward node, an instance of ``<ClassName>Backward``. That node is also the
``ctx`` the two methods receive (as in PyTorch), so ``y.grad_fn.saved_tensors`` works.

>>> class Exp(Function):
...     @staticmethod
...     def forward(ctx, x):
...         y = x.exp()
...         ctx.save_for_backward(y)
...         return y
...
...     @staticmethod
...     def backward(ctx, grad):
...         (y,) = ctx.saved_tensors
...         return grad * y

The newer style is supported too: ``forward(*args)`` without ``ctx`` plus
``setup_context(ctx, inputs, output)``.

Memory: a saved output is kept detached (its history re-attached when unpacked), so the
graph holds no reference back to the tensors it produced and is freed by reference
counting alone. ``ctx`` attributes are user data: storing an output there makes a cycle,
as in PyTorch.
"""

from __future__ import annotations

import functools
import inspect

import ember_tensor as et

from . import grad_mode, recording, streams
from .graph import Node, gradient_edge, meta_of, raise_modified, raise_released
from .saved import sum_to

__all__ = ["BackwardCFunction", "Function", "FunctionCtx", "InplaceFunction", "once_differentiable"]

_DIFFERENTIABLE = frozenset(
    {et.float32, et.float64, et.float16, et.bfloat16, et.complex64, et.complex128}
)
_NO_EDGE = (None, 0)


class FunctionCtx:
    """What ``forward`` / ``setup_context`` may tell ``backward`` (methods of ``ctx``)."""

    __slots__ = ()

    def save_for_backward(self, *tensors) -> None:
        """Keeps tensors (inputs, outputs or intermediates; ``None`` allowed) for backward,
        where ``ctx.saved_tensors`` returns them, checked against in-place writes since."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, et.Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type "
                    f"{type(t).__name__}"
                )
        self._to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        """Kept for forward-mode AD (``jvp``); accepted and stored."""
        self._to_save_forward = tensors

    def mark_dirty(self, *tensors) -> None:
        """Declares inputs that ``forward`` modified in place (they must be returned)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declares outputs that are not differentiable: they do not require grad, and
        ``backward`` still receives a gradient for them (zeros, or ``None`` without
        materialization)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``None`` output gradients reach ``backward`` as zeros (default True)."""
        self.materialize_grads = bool(value)

    def mark_shared_storage(self, *pairs) -> None:
        raise RuntimeError(
            "mark_shared_storage is deprecated. Tensors with shared storages are automatically "
            "tracked. Note that calls to `set_()` are not tracked"
        )


class BackwardCFunction(FunctionCtx, Node):
    """The node of one ``Function.apply`` call, and its ``ctx``. Subclassed once per
    Function as ``<ClassName>Backward`` (which has a ``__dict__`` for user attributes)."""

    __slots__ = (
        "_to_save",
        "_to_save_forward",
        "_dirty",
        "_non_differentiable",
        "_saved",
        "_inputs",
        "_outputs",
        "_recorded",
        "materialize_grads",
        "needs_input_grad",
    )
    _forward_cls: type = None  # type: ignore[assignment]

    def __init__(self) -> None:
        Node.__init__(self)
        self._to_save = None
        self._to_save_forward = None
        self._dirty = ()
        self._non_differentiable = ()
        self._saved = None  # [(tensor, version, output_nr or None)] once recorded
        self._inputs = ()  # per forward arg: (shape, dtype) of a tensor, None otherwise
        self._outputs = ()  # per forward output: (shape, dtype, device) of a tensor, None otherwise
        self._recorded = False
        self.materialize_grads = True
        self.needs_input_grad = ()

    # ------------------------------------------------------------------ saved tensors

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``; each access checks that none was
        written in place since, and fails once a backward without retain_graph freed them."""
        if not self._recorded:
            return tuple(self._to_save or ())
        if self._released:
            raise_released(self)
        out = []
        for i, entry in enumerate(self._saved or ()):
            if entry is None:
                out.append(None)
                continue
            t, version, nr = entry
            if t._version != version:
                if nr is not None:
                    producer = self.name()
                else:
                    producer = t.grad_fn.name() if t.grad_fn is not None else None
                raise_modified(self, f"saved_tensors[{i}]", t, version, producer)
            if nr is not None:  # an output: its history is this node again
                t = t.detach()
                t._set_grad_fn(self)
                if nr:
                    meta_of(t).output_nr = nr
            out.append(t)
        return tuple(out)

    saved_variables = saved_tensors

    def _release(self) -> None:
        self._released = True
        self._saved = None

    # ------------------------------------------------------------------ backward

    def apply(self, grads):
        cls = self._forward_cls
        grads = list(grads)
        for i, meta in enumerate(self._outputs):
            if meta is None:
                grads[i] = None  # a non-tensor output
            elif grads[i] is None and self.materialize_grads:
                grads[i] = et.zeros(meta[0], dtype=meta[1], device=meta[2])
        result = cls._backward_impl()(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        return self._check_grads(result)

    def _check_grads(self, result: tuple) -> list:
        """One gradient per tensor input (edge) from ``backward``'s one per forward arg:
        counted, checked, summed down to the input's shape and cast to its dtype."""
        name = self.name()
        n_in = len(self._inputs)
        if len(result) != n_in:
            if len(result) > n_in and all(r is None for r in result[n_in:]):
                result = result[:n_in]
            else:
                raise RuntimeError(
                    f"function {name} returned an incorrect number of gradients (expected "
                    f"{n_in}, got {len(result)})"
                )
        out = []
        k = 0
        for i, (g, meta) in enumerate(zip(result, self._inputs)):
            if meta is None:
                if g is not None:
                    raise RuntimeError(
                        f"function {name} returned a gradient different than None at position "
                        f"{i + 1}, but the corresponding forward input was not a Variable"
                    )
                continue
            if g is not None and not isinstance(g, et.Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            if g is None or self.next_functions[k][0] is None:
                out.append(None)
                k += 1
                continue
            shape, dtype = meta
            if tuple(g.shape) != shape:
                if not _expandable(shape, tuple(g.shape)):
                    raise RuntimeError(
                        f"Function {name} returned an invalid gradient at index {k} - got "
                        f"{_shape_str(g.shape)} but expected shape compatible with "
                        f"{_shape_str(shape)}"
                    )
                g = sum_to(g, shape)
            if g.dtype != dtype:
                g = g.to(dtype)
            out.append(g)
            k += 1
        return out


def _shape_str(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _expandable(shape: tuple, target: tuple) -> bool:
    """Whether a tensor of ``shape`` broadcasts to ``target`` (so a gradient of ``target``
    sums back down to it)."""
    if len(shape) > len(target):
        return False
    lead = len(target) - len(shape)
    return all(s == 1 or s == target[lead + i] for i, s in enumerate(shape))


def _check_inplace_leaf(t) -> None:
    if t.requires_grad and t.grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad has been used in an in-place operation."
        )
    m = t._autograd_meta
    if m is not None and m.base is not None and m.base.requires_grad and m.base.grad_fn is None:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )


class _FunctionMeta(type):
    """Gives every Function subclass its node class ``<ClassName>Backward``."""

    def __init__(cls, name, bases, attrs) -> None:
        backward_cls = type(
            f"{name}Backward",
            (BackwardCFunction,),
            {"_forward_cls": cls, "__module__": cls.__module__,
             "__qualname__": f"{cls.__qualname__}Backward"},
        )
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(metaclass=_FunctionMeta):
    """Base of custom differentiable operations (see the module docstring)."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args, **kwargs):
        """``forward(ctx, *args)`` (or ``forward(*args)`` with ``setup_context``)."""
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        """``setup_context(ctx, inputs, output)``: the newer style's ``ctx`` setup, run
        after ``forward(*args)``."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """One gradient per ``forward`` argument (``None`` for non-tensors and where no
        gradient is needed), given one gradient per output."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @classmethod
    def _backward_impl(cls):
        has_backward = cls.backward is not Function.backward
        has_vjp = cls.vjp is not Function.vjp
        if has_backward and has_vjp:
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                "You should only implement one of them."
            )
        return cls.vjp if has_vjp else cls.backward

    @classmethod
    def _uses_setup_context(cls) -> bool:
        return cls.setup_context is not Function.setup_context

    @classmethod
    def apply(cls, *args, **kwargs):
        """Runs ``forward`` and, when a tensor input requires grad under grad mode,
        records one node for its outputs."""
        new_style = cls._uses_setup_context()
        if kwargs:
            args = _bind(cls.forward, args, kwargs, skip_ctx=not new_style)
        ctx = cls._backward_cls()
        enabled = grad_mode._state.enabled
        needs = tuple(
            enabled and isinstance(a, et.Tensor) and a.requires_grad for a in args
        )
        ctx.needs_input_grad = needs
        record = any(needs)
        # edges first: forward may write an input in place (mark_dirty)
        edges = None
        if record:
            edges = tuple(
                gradient_edge(a) if n else _NO_EDGE
                for a, n in zip(args, needs)
                if isinstance(a, et.Tensor)
            )
        prev = grad_mode._state.enabled
        grad_mode._state.enabled = False
        try:
            if new_style:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        finally:
            grad_mode._state.enabled = prev
        return _wrap_outputs(ctx, args, output, edges)


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag (PyTorch's ``InplaceFunction``)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


def _bind(forward, args, kwargs, skip_ctx: bool) -> tuple:
    """Keyword arguments of ``apply`` bound to ``forward``'s positions (defaults filled)."""
    sig = inspect.signature(forward)
    params = list(sig.parameters.values())
    if skip_ctx:
        params = params[1:]
    sig = sig.replace(parameters=params)
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(f"{forward.__qualname__}: keyword-only arguments are not supported")
    return tuple(bound.args)


def _wrap_outputs(ctx, args, output, edges):
    is_tuple = isinstance(output, tuple)
    outs = list(output) if is_tuple else [output]
    dirty = ctx._dirty
    for t in dirty:
        if not any(t is o for o in outs):
            raise RuntimeError(
                "Some elements marked as dirty during the forward method were not returned as "
                "output. The inputs that are modified inplace must all be outputs of the "
                "Function."
            )
    for t in dirty:
        t._bump_version()
    non_diff = ctx._non_differentiable
    # the node must not keep its own outputs (a cycle through the core's grad_fn slot)
    ctx._dirty = ctx._non_differentiable = ()
    if edges is None:  # nothing to record: plain outputs
        return output

    node = ctx
    node.next_functions = edges
    node._inputs = tuple(a._shape_dtype if isinstance(a, et.Tensor) else None for a in args)
    node._num_outputs = len(outs)
    out_meta = []
    attached = []  # (tensor, output_nr) of outputs given this node's history
    view_dirty = []
    for i, o in enumerate(outs):
        if not isinstance(o, et.Tensor):
            out_meta.append(None)
            continue
        out_meta.append((*o._shape_dtype, o.device))
        # (loops, not any(): no generator per output in the common case of none marked)
        is_dirty = _contains(dirty, o)
        is_input = _contains(args, o)
        is_non_diff = _contains(non_diff, o)  # before an input becomes its alias
        if is_dirty:
            _check_inplace_leaf(o)
        elif is_input:
            # an input returned as is: the output is a new alias of it (its history is this
            # node's, the input's own stays)
            prev = grad_mode._state.enabled
            grad_mode._state.enabled = False
            try:
                o = o.view_as(o)
            finally:
                grad_mode._state.enabled = prev
            outs[i] = o
        if o.dtype not in _DIFFERENTIABLE or is_non_diff:
            continue
        if is_dirty:
            m = o._autograd_meta
            if m is not None and m.base is not None:
                view_dirty.append((i, o))
                attached.append((o, i))  # saved as an output: no reference back to node
                continue
        o._set_grad_fn(node)
        if node._stream is None and not o.is_cpu:
            streams.remember(node, o.device)
        if i or o._autograd_meta is not None:
            meta_of(o).output_nr = i
        attached.append((o, i))
        if not is_dirty:
            for a in args:
                if isinstance(a, et.Tensor) and o._is_view_of(a):
                    _mark_custom_view(o, a, type(node)._forward_cls.__name__, i)
                    break
    node._outputs = tuple(out_meta)
    if view_dirty:
        _rebase_dirty_view(node, args, view_dirty)

    saved = []
    for t in ctx._to_save or ():
        if t is None:
            saved.append(None)
            continue
        nr = None
        for o, i in attached:
            if o is t:
                nr = i
                break
        if nr is not None:
            saved.append((t.detach(), t._version, nr))
        else:
            saved.append((t, t._version, None))
    node._saved = saved
    node._to_save = None
    node._recorded = True
    if is_tuple:
        return tuple(outs)
    return outs[0]


def _contains(items, t) -> bool:
    """Whether ``t`` is one of ``items`` (by identity)."""
    for item in items:
        if item is t:
            return True
    return False


def _mark_custom_view(out, src, fn_name: str, nr: int) -> None:
    """An output aliasing an input's storage is a view whose history is the custom node: a
    write into it (or into its base) cannot be rebased without bypassing the custom
    backward, so replaying it, which such a write requires, is an error (as in PyTorch)."""
    sm = src._autograd_meta
    root = sm.base if sm is not None and sm.base is not None else src
    m = meta_of(out)
    token = object()  # (no reference from replay to itself: that would be a cycle)

    def refuse(what: str):
        raise RuntimeError(
            f"Output {nr} of {fn_name} is a view and {what}. This view was created inside a "
            "custom Function (or because an input was returned as-is) and the autograd logic "
            "to handle view+inplace would override the custom backward associated with the "
            "custom Function, leading to incorrect gradients. This behavior is forbidden. You "
            "can fix this by cloning the output of the custom Function."
        )

    def replay(base):
        # reached after the write: a write into this very view has just made the base's
        # history a CopySlices of it (for ops whose recorder does not read the view first)
        direct = getattr(getattr(base.grad_fn, "view_fn", None), "_view_token", None) is token
        if direct:
            refuse("is being modified inplace")
        refuse("its base or another view of its base has been modified inplace")

    def check_inplace():
        # for recording._check_inplace, before a write into this view (or a view of it)
        refuse("is being modified inplace")

    replay._view_token = token
    replay.check_inplace = check_inplace
    m.base = root
    m.view_fn = replay
    m.view_version = out._version


class CopySlices(recording.CopySlices):
    """The base's history after a Function wrote one of its views in place (mark_dirty):
    the written region's gradient goes through the Function's node, the rest of the base's
    gradient passes unchanged (PyTorch's ``CopySlices``)."""

    __slots__ = ("k", "nr")

    def _write_grads(self, region) -> tuple:
        # the region's gradient is that of output nr; the view was input k
        fn = self.fn
        fn_grads_in = [None] * fn._num_outputs
        fn_grads_in[self.nr] = region.clone()
        fn_grads = list(fn.apply(fn_grads_in))
        g = fn_grads.pop(self.k)
        return g, fn_grads


def _rebase_dirty_view(node, args, view_dirty) -> None:
    if len(view_dirty) != 1 or node._num_outputs != 1:
        raise NotImplementedError(
            f"{node.name()}: mark_dirty on a view is supported for a Function with one output "
            "only"
        )
    nr, view = view_dirty[0]
    tensors = [a for a in args if isinstance(a, et.Tensor)]
    k = next(i for i, a in enumerate(tensors) if a is view)
    m = view._autograd_meta
    base = m.base
    cs = CopySlices()
    cs.fn = node
    cs.view_fn = m.view_fn
    cs.k = k
    cs.nr = nr
    edges = list(node.next_functions)
    del edges[k]
    base_edge = gradient_edge(base) if base.requires_grad else _NO_EDGE
    cs.next_functions = (base_edge, *edges)
    base._set_grad_fn(cs)
    bm = base._autograd_meta
    if bm is not None:
        bm.output_nr = 0
    m.view_version = -1
    recording.refresh_view(view, m)


# ------------------------------------------------------------------ once_differentiable


class _DelayedError(Node):
    """The history of gradients computed by a ``@once_differentiable`` backward under
    create_graph: differentiating them again is an error."""

    __slots__ = ("msg",)

    def name(self) -> str:
        return "Error"

    def apply(self, grads):
        raise RuntimeError(self.msg)


def once_differentiable(fn):
    """Decorates ``backward``: it runs without recording, and when a graph of the backward
    was asked for (create_graph) the gradients it returns raise if differentiated again."""

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        prev = grad_mode._state.enabled
        grad_mode._state.enabled = False
        try:
            outputs = fn(ctx, *args, **kwargs)
        finally:
            grad_mode._state.enabled = prev
        if not prev:
            return outputs
        if not any(isinstance(a, et.Tensor) and a.requires_grad for a in args):
            return outputs
        is_tuple = isinstance(outputs, tuple)
        outs = outputs if is_tuple else (outputs,)
        err = _DelayedError()
        err.msg = (
            "trying to differentiate twice a function that was marked with "
            "@once_differentiable"
        )
        err.next_functions = (_NO_EDGE,) * len(outs)
        err._num_outputs = len(outs)
        wrapped = []
        for i, g in enumerate(outs):
            if isinstance(g, et.Tensor) and g.dtype in _DIFFERENTIABLE:
                g = g.detach()
                g._set_grad_fn(err)
                if i:
                    meta_of(g).output_nr = i
            wrapped.append(g)
        return tuple(wrapped) if is_tuple else wrapped[0]

    return wrapper
