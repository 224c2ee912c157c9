"""The hook the core calls for ops on tensors that require grad: records backward nodes.

``hook(op, kind, args, result)`` (installed with ``ember_tensor._set_autograd_hook``):
``op`` is the op's key in ops.yaml, ``args`` its arguments in signature order, ``kind``:

- ``function``: a new result; record a node for it (grad mode on, float result).
- ``pre_inplace``: ``args[0]`` (``result``) is about to be written: refuse a leaf that
  requires grad (or a view of one) while grad mode is on, keep its old value if the
  op's formulas need it.
- ``inplace``: the write happened; the tensor's history now goes through the new node. A
  write into a view rebases its base's history (``CopySlices``), and the view's own
  history is replayed from the base.
- ``pre_out`` / ``out``: ``out=`` cannot be differentiated; refused before the write.
"""

from __future__ import annotations

import threading

import ember_tensor as et

from . import grad_mode, streams
from .graph import Node, gradient_edge, meta_of, raise_released

_state = grad_mode._state
_Tensor = et.Tensor
_FLOAT = frozenset({et.float32, et.float64, et.float16, et.bfloat16})
_COMPLEX = frozenset({et.complex64, et.complex128})


_DIFF = _FLOAT | _COMPLEX  # the dtypes a recorded result may have


def _guard_complex(op: str, args, result) -> None:
    """Refuses an op whose derivative formulas are not yet written for complex tensors
    (derivatives.yaml ``complex: true``) when its result, or an input that requires grad, is
    complex: its gradient would be silently wrong."""
    outs = (result,) if type(result) is _Tensor else tuple(result)
    if any(type(o) is _Tensor and o.dtype in _COMPLEX for o in outs):
        raise NotImplementedError(
            f"{op} does not support automatic differentiation for outputs with complex dtype."
        )
    for a in args:
        items = a if isinstance(a, (list, tuple)) else (a,)
        for t in items:
            if isinstance(t, _Tensor) and t.requires_grad and t.dtype in _COMPLEX:
                raise NotImplementedError(
                    f"{op} does not support automatic differentiation for inputs with complex "
                    "dtype."
                )


class Rule:
    """How to record one op: its recorders and what they need."""

    __slots__ = (
        "record",
        "record_inplace",
        "needs_original",
        "view",
        "replay",
        "kwonly",
        "fast",
        "takes_dtype",
        "complex_guard",
    )

    def __init__(
        self,
        record,
        record_inplace,
        needs_original,
        view,
        replay,
        kwonly,
        fast=False,
        takes_dtype=False,
        complex_guard=False,
    ) -> None:
        # fast: one Tensor result, not a view, and float whenever an input requiring grad is
        # (not a cast, no dtype=): the hook records it without further checks
        self.fast = fast and not view
        # takes_dtype: a dtype= argument picks the result's dtype; an integer one is an error
        # when an input requires grad (PyTorch: "Autograd not support dtype: Long")
        self.takes_dtype = takes_dtype
        # complex_guard: the op takes complex tensors but its formulas are real-only
        # (_guard_complex); never fast
        self.complex_guard = complex_guard
        self.record = record
        self.record_inplace = record_inplace
        self.needs_original = needs_original
        self.view = view
        self.replay = replay  # callable(base, *args) running the op again (views)
        self.kwonly = kwonly  # names of keyword-only args, for replay


RULES: dict[str, Rule] = {}


class _Pending(threading.local):
    """The tensor about to be written in place on this thread, and its old value (big ops
    release the GIL between the two hook calls, so other threads write meanwhile)."""

    def __init__(self) -> None:
        self.target = None
        self.original = None


_pending = _Pending()


def hook(op, kind, args, result):
    # the core calls this only on threads in grad mode (forward AD's wrapper checks itself)
    if kind == "function":
        rule = RULES.get(op)
        if rule is None:
            return
        if rule.fast:  # the common case, inline
            node = rule.record(args, result, None)
            if node is not None:
                if result.dtype not in _DIFF:  # self's integer dtype, a float value (masked_fill)
                    raise RuntimeError(f"Autograd not support dtype: {_torch_type(result.dtype)}")
                result._set_grad_fn(node)
                if not result.is_cpu:
                    streams.remember(node, result.device)
            return
        _record_function(rule, op, args, result)
        streams.remember_result(result)
    elif kind == "pre_inplace":
        _check_inplace(result)
        rule = RULES.get(op)
        # the old value is kept when a formula needs it, or when self is also another input
        # (x.mul_(x)): the write would change the saved input too
        if rule is not None and (rule.needs_original or any(a is result for a in args[1:])):
            _pending.target = result
            _pending.original = result.clone()
    elif kind == "inplace":
        rule = RULES.get(op)
        if rule is not None:
            _record_inplace(rule, op, args, result)
            streams.remember_result(result)
    elif kind == "pre_out":
        name = op.split(".")[0]
        if name in _no_grad_results():  # nothing to differentiate: PyTorch writes out= freely
            return
        listed = (t for a in args for t in (a if isinstance(a, (list, tuple)) else (a,)))
        if any(isinstance(t, et.Tensor) and t.requires_grad for t in listed):  # cat's lists
            raise RuntimeError(
                f"{name}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad."
            )
        _check_inplace(result)


_NO_GRAD_RESULTS: frozenset | None = None


def _no_grad_results() -> frozenset:
    """The ops whose results never carry a gradient (every output_differentiability false in
    derivatives.yaml, as PyTorch's); their in-place forms still follow the leaf rules and
    record zero gradients."""
    global _NO_GRAD_RESULTS
    if _NO_GRAD_RESULTS is None:
        from ._generated.forward import OUTPUT_DIFF

        _NO_GRAD_RESULTS = frozenset(k for k, v in OUTPUT_DIFF.items() if not any(v))
    return _NO_GRAD_RESULTS


def _torch_type(dtype) -> str:
    """PyTorch's name of a dtype as its autograd errors spell it ("Long", "Char")."""
    return dtype._scalar_type_name


_LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
_VIEW_OF_LEAF_MSG = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
_NO_GRAD_VIEW_MSG = (
    "A view was created in no_grad mode and is being modified inplace with grad mode "
    "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can "
    "clarify your code by moving both the view and the inplace either both inside the "
    "no_grad block (if you don't want the inplace to be tracked) or both outside (if you want "
    "the inplace to be tracked)."
)


def _check_inplace(t) -> None:
    """Refuses, before the data changes, a write autograd cannot give a meaning to."""
    m = t._autograd_meta
    if m is not None and m.base is not None:  # a view recorded by the hook
        check = getattr(m.view_fn, "check_inplace", None)
        if check is not None:
            check()  # a view made inside a custom Function (function.py)
        if m.base.requires_grad and m.base.grad_fn is None:
            raise RuntimeError(_VIEW_OF_LEAF_MSG)
        return
    base = t._base
    if base is not None and base.requires_grad:  # a view the hook never saw made
        if not t.requires_grad:  # made under no_grad (the core says so)
            raise RuntimeError(_NO_GRAD_VIEW_MSG)
        if base.grad_fn is None:  # taken before its leaf required grad
            raise RuntimeError(_VIEW_OF_LEAF_MSG)
        return
    if t.requires_grad and t.grad_fn is None:
        raise RuntimeError(_LEAF_MSG)


def _record_function(rule: Rule, op: str, args, result) -> None:
    if rule.complex_guard:
        _guard_complex(op, args, result)
    if args and result is args[0]:
        # the op returned its input object unchanged (x.float() of a float32 x, contiguous of
        # a contiguous tensor): PyTorch makes no node, and x keeps its history (a leaf stays a
        # leaf; a node here would chain onto x's own history at every such call)
        return
    if isinstance(result, et.Tensor):  # a Parameter too (t.float() of one returns it)
        if result.dtype not in _DIFF:
            if rule.takes_dtype:
                raise RuntimeError(f"Autograd not support dtype: {_torch_type(result.dtype)}")
            return
        node = rule.record(args, result, None)
        if node is None:
            return
        result._set_grad_fn(node)
        if rule.view and result._is_view_of(args[0]):
            _mark_view(result, args[0], rule, op, args, None)
        return
    # tuple results: the float outputs ((values, indices): values only); Tensor[] all outputs
    outs = list(result)
    if not outs:
        return
    if hasattr(result, "_fields"):  # a namedtuple: its float outputs ((U, S, Vh), not indices)
        first = outs[0]
        if first.dtype not in _DIFF:
            return
        node = rule.record(args, result, None)
        if node is None:
            return
        first._set_grad_fn(node)
        rest = [i for i in range(1, len(outs)) if outs[i].dtype in _DIFF]
        if rest:
            node._num_outputs = len(outs)
            for i in rest:
                outs[i]._set_grad_fn(node)
                meta_of(outs[i]).output_nr = i
        return
    if outs[0].dtype not in _DIFF:
        return
    node = rule.record(args, result, None)
    if node is None:
        return
    node._num_outputs = len(outs)
    for i, t in enumerate(outs):
        t._set_grad_fn(node)
        meta_of(t).output_nr = i
        if rule.view and t._is_view_of(args[0]):
            _mark_view(t, args[0], rule, op, args, i)


def _mark_view(view, src, rule: Rule, op: str, args, index) -> None:
    """Remembers how ``view`` is made from the root tensor it aliases."""
    sm = src._autograd_meta
    if sm is not None and sm.base is not None:
        base, inner = sm.base, sm.view_fn
    else:
        base, inner = src, None
    m = meta_of(view)
    m.base = base
    m.view_fn = _ViewReplay(rule, args[1:], index, inner)
    m.view_version = view._version


class _ViewReplay:
    """base -> view: the view op replayed on a tensor of the base's shape, after ``inner``
    (the replay from the root to the op's input when that input is itself a view). One is
    made at every recorded view op and called only when an in-place op reaches the view, so
    it keeps the op's other arguments as they came and sorts them on call."""

    __slots__ = ("rule", "rest", "index", "inner")

    def __init__(self, rule: Rule, rest: tuple, index, inner) -> None:
        self.rule, self.rest, self.index, self.inner = rule, rest, index, inner

    def __call__(self, b):
        if self.inner is not None:
            b = self.inner(b)
        rest, kwonly = self.rest, self.rule.kwonly
        if kwonly:
            n = len(rest) - len(kwonly)
            out = self.rule.replay(b, *rest[:n], **dict(zip(kwonly, rest[n:])))
        else:
            out = self.rule.replay(b, *rest)
        return out if self.index is None else out[self.index]


def mark_strided_view(view, base):
    """Tracks a view made while nothing required grad (so the hook never saw it): its
    history is replayed from the base by sizes, strides and offset (``as_strided``)."""
    if not base.is_contiguous():
        raise RuntimeError(
            "autograd: an in-place write that requires grad into a view of a non-contiguous "
            f"tensor (shape {tuple(base.shape)}, strides {tuple(base.stride())}) that was made "
            "while nothing required grad is not supported; take the view after the base "
            "requires grad, or make the base contiguous first"
        )
    size, stride = tuple(view.shape), tuple(view.stride())
    rel = view.storage_offset() - base.storage_offset()
    m = meta_of(view)
    m.base = base
    m.view_fn = lambda b: b.as_strided(size, stride, b.storage_offset() + rel)
    m.view_version = view._version
    return m


def refresh_view(t, m) -> None:
    """Makes a view's grad_fn current after its base (or another view) was written."""
    base = m.base
    m.view_version = t._version
    if not base.requires_grad:
        return
    prev = _state.enabled
    _state.enabled = True
    try:
        fresh = m.view_fn(base)
    finally:
        _state.enabled = prev
    fn = fresh.grad_fn
    if fn is not None:
        t._set_grad_fn(fn)
        fm = fresh._autograd_meta
        m.output_nr = fm.output_nr if fm is not None else 0


def _record_inplace(rule: Rule, op: str, args, result) -> None:
    original = None
    if _pending.target is result:
        original = _pending.original
        _pending.target = _pending.original = None
        args = (args[0], *(original if a is result else a for a in args[1:]))
    if rule.complex_guard:
        _guard_complex(op, args, result)
    if result.dtype not in _DIFF:
        return
    m = result._autograd_meta
    if m is None or m.base is None:
        base = result._base
        if base is not None:  # a view the hook never saw made: replayed by its strides
            m = mark_strided_view(result, base)
    if m is not None and m.base is not None:
        _record_inplace_view(rule, args, result, original, m)
        return
    node = rule.record_inplace(args, result, original)
    if node is None:
        return
    result._set_grad_fn(node)
    if m is not None:
        m.output_nr = 0


class CopySlices(Node):
    """The base's history after an in-place write into one of its views: the gradient of
    the written region goes through the write's node, the rest passes unchanged."""

    __slots__ = ("fn", "view_fn")

    def name(self) -> str:
        return "CopySlices"

    def apply(self, grads):
        grad = grads[0]
        if grad is None:
            return [None] * len(self.next_functions)
        if self.fn is None:
            raise_released(self)
        res = grad.clone()
        region = self.view_fn(res)
        g, others = self._write_grads(region)
        if g is not None:
            region.copy_(g)
        else:
            region.zero_()
        return [res, *others]

    def _write_grads(self, region) -> tuple:
        """The write's node run on the region's gradient: (the gradient of the view it
        wrote, those of its other inputs)."""
        fn_grads = self.fn.apply([region.clone()])
        return (fn_grads[0] if fn_grads else None), fn_grads[1:]

    def _release(self) -> None:
        self._released = True
        if self.fn is not None:
            self.fn._release()


def _record_inplace_view(rule: Rule, args, view, original, m) -> None:
    base = m.base
    fn = rule.record_inplace(args, view, original)
    if fn is None:
        return
    # the write's node must see the view's old history as its first input
    cs = CopySlices()
    cs.fn = fn
    cs.view_fn = m.view_fn
    base_edge = gradient_edge(base) if base.requires_grad else (None, 0)
    cs.next_functions = (base_edge, *fn.next_functions[1:])
    base._set_grad_fn(cs)
    bm = base._autograd_meta
    if bm is not None:
        bm.output_nr = 0
    m.view_version = -1
    refresh_view(view, m)


class NotImplementedBackward(Node):
    """Recorded for a differentiable op that derivatives.yaml lacks: backward raises."""

    __slots__ = ("op",)

    def name(self) -> str:
        return "NotImplemented"

    def apply(self, grads):
        raise NotImplementedError(f"the derivative for '{self.op}' is not implemented")


def not_implemented_recorder(op: str):
    def record(args, result, original):
        edges = []
        for a in args:
            ts = a if isinstance(a, (list, tuple)) else (a,)
            for t in ts:
                if isinstance(t, et.Tensor) and t.requires_grad:
                    edges.append(gradient_edge(t))
        if not edges:
            return None
        node = NotImplementedBackward()
        node.op = op
        node.next_functions = tuple(edges)
        return node

    return record
