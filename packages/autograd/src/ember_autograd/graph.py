"""The backward graph: nodes, edges, saved tensors and the per-tensor metadata.

A node is the backward of one recorded op. ``next_functions`` holds one edge per
differentiable input, ``(node, output_nr)`` or ``(None, 0)`` for an input that needs no
gradient. ``apply(grads)`` takes one gradient per output of the op (``None`` where none
arrived) and returns one gradient per edge (``None`` where there is none).

A tensor's place in the graph: ``tensor.grad_fn`` (set through the core's slot) and, when
needed, a ``TensorMeta`` in the core's ``_autograd_meta`` slot (output number of a
multi-output node, tensor hooks of a leaf, the leaf's gradient accumulator, the base and
replay function of a view, forward-mode tangents).
"""

from __future__ import annotations

import sys
import threading
import weakref

from . import anomaly_mode, grad_mode


class TensorMeta:
    """What ember_autograd keeps about one tensor (the core's ``_autograd_meta`` slot)."""

    __slots__ = (
        "output_nr",
        "hooks",
        "post_accumulate_hooks",
        "accumulator",
        "retains_grad",
        "base",
        "view_fn",
        "view_version",
        "tangents",
        "__weakref__",
    )

    def __init__(self) -> None:
        self.output_nr = 0
        self.hooks = None  # leaf tensor hooks: list of callables grad -> grad | None
        self.post_accumulate_hooks = None  # leaf hooks run with the leaf once .grad is updated
        self.accumulator = None  # weakref to the leaf's AccumulateGrad
        self.retains_grad = False
        self.base = None  # the root tensor this one views (None: not a tracked view)
        self.view_fn = None  # base -> this view, replayable on any tensor of base's shape
        self.view_version = 0  # storage version when grad_fn was last made current
        self.tangents = None  # forward AD: {level: tangent}


def meta_of(t) -> TensorMeta:
    """The tensor's meta, created on first use."""
    m = t._autograd_meta
    if m is None:
        m = TensorMeta()
        t._autograd_meta = m
    return m


class Node:
    """The backward of one recorded op (see the module docstring for the contract)."""

    # Rarely set attributes live in __dict__ with class defaults, so that making a node (once
    # per recorded op) only sets next_functions.
    __slots__ = ("next_functions", "__dict__", "__weakref__")
    _num_outputs = 1
    _pre_hooks = None
    _hooks = None
    _tensor_pre_hooks = None  # output_nr -> [hook]
    _retain_grad_hooks = None  # output_nr -> weakref of the tensor
    _released = False
    _trace = None  # the forward traceback, under anomaly detection
    _stream = None  # the current stream of a device op's forward (streams.py)
    _special = False  # any of the above set: the engine takes its slower path for this node

    def __init__(self) -> None:
        self.next_functions = ()
        if anomaly_mode._enabled:
            self._trace = anomaly_mode.current_trace()
            self._special = True

    @property
    def metadata(self) -> dict:
        """A dict for the user's own annotations of this node."""
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self.__dict__["_metadata"] = {}
        return d

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    def __call__(self, *grads):
        return self.apply(list(grads))

    def apply(self, grads: list):
        raise NotImplementedError(f"{self.name()}.apply")

    def _release(self) -> None:
        """Drops saved tensors once a backward pass without retain_graph ran this node."""
        self._released = True

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after the node ran; may return new grad_inputs."""
        self._special = True
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(fn)
        return RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` before the node runs; may return new grad_outputs."""
        self._special = True
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        return RemovableHandle(self._pre_hooks, fn)


class RemovableHandle:
    """Returned by hook registration; ``remove()`` unregisters the hook."""

    __slots__ = ("_list", "_fn")

    def __init__(self, hooks: list, fn) -> None:
        self._list = hooks
        self._fn = fn

    def remove(self) -> None:
        try:
            self._list.remove(self._fn)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _tensor_str(t) -> str:
    names = {
        "float32": "FloatTensor",
        "float64": "DoubleTensor",
        "float16": "HalfTensor",
        "bfloat16": "BFloat16Tensor",
    }
    kind = names.get(str(t.dtype).rsplit(".", 1)[-1], "Tensor")
    return f"[ember.{kind} [{', '.join(str(s) for s in t.shape)}]]"


def raise_modified(node: Node, what: str, tensor, expected: int, producer: str | None) -> None:
    """The error for a saved tensor written in place before backward used it."""
    of = f", which is output 0 of {producer}," if producer else ""
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: {_tensor_str(tensor)}{of} is at version {tensor._version}; "
        f"expected version {expected} instead (saved as '{what}' by {node.name()}). Hint: "
        "enable anomaly detection to find the operation that failed to compute its gradient, "
        "with ember.autograd.set_detect_anomaly(True)."
    )


def raise_released(node: Node) -> None:
    raise RuntimeError(
        f"Trying to backward through the graph a second time (or directly access saved "
        f"tensors after they have already been freed) in {node.name()}. Saved intermediate "
        "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
        "retain_graph=True if you need to backward through the graph a second time or if you "
        "need to access saved tensors after calling backward."
    )


class AccumulateGrad(Node):
    """The sink of a leaf: adds the incoming gradient into ``leaf.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable) -> None:
        super().__init__()
        self.variable = variable

    def apply(self, grads: list):
        # Nothing but the engine's buffer refers to a gradient with the probe's count, and
        # no other tensor shares its storage: it can become .grad without a copy.
        owned = sys.getrefcount(grads[0]) == _SOLE_REFS
        grad = grads[0]
        if grad is None:
            return ()
        leaf = self.variable
        meta = leaf._autograd_meta
        if meta is not None and meta.hooks:
            grad = run_tensor_hooks(meta.hooks, grad)
            owned = False
        accumulate_into_grad(leaf, grad, owned and grad._storage_use_count() == 1)
        if meta is not None and meta.post_accumulate_hooks:
            for hook in list(meta.post_accumulate_hooks):
                hook(leaf)
        return ()


def _probe(items: list) -> int:
    return sys.getrefcount(items[0])


# what sys.getrefcount reports, in AccumulateGrad.apply's own expression, for an object only
# a list refers to (measured, since it differs between Python versions)
_SOLE_REFS = _probe([object()])


# backward passes on several threads may reach the same leaf
_accumulate_lock = threading.Lock()


def accumulate_into_grad(t, grad, owned: bool = False) -> None:
    """t.grad += grad, or t.grad = grad (a copy unless ``owned``) when t has none yet."""
    with _accumulate_lock:
        _accumulate(t, grad, owned)


def _accumulate(t, grad, owned: bool) -> None:
    old = t.grad
    if grad_mode._state.enabled:  # create_graph: keep the gradient's own graph
        t.grad = grad if old is None else old + grad
    elif old is None:
        # a copy unless nothing else holds it: add passes one gradient to both inputs, and
        # a gradient given to backward() is the caller's
        t.grad = grad if owned and not grad.requires_grad else grad.clone()
    elif old.requires_grad:
        t.grad = old.detach() + grad
    else:
        old.add_(grad)


def run_tensor_hooks(hooks: list, grad):
    for hook in list(hooks):
        new = hook(grad)
        if new is not None:
            grad = new
    return grad


def grad_accumulator(leaf) -> AccumulateGrad:
    """The leaf's AccumulateGrad, one per leaf while the graph holds it (kept weakly)."""
    meta = meta_of(leaf)
    ref = meta.accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(leaf)
        meta.accumulator = weakref.ref(node)
    return node


def gradient_edge(t):
    """Where a gradient for ``t`` enters the graph: ``(node, output_nr)``. A view whose
    storage was written since its history was made gets its history replayed first."""
    m = t._autograd_meta
    if m is None:
        fn = t.grad_fn
        if fn is not None:
            return (fn, 0)
        base = t._base
        if base is None or not base.requires_grad:
            return (grad_accumulator(t), 0)
        # a view made before its base required grad: its history is replayed from the base
        from .recording import mark_strided_view

        m = mark_strided_view(t, base)
        m.view_version = -1
    if m.base is not None and m.view_version != t._version:
        from .recording import refresh_view

        refresh_view(t, m)
    fn = t.grad_fn
    if fn is not None:
        return (fn, m.output_nr)
    ref = m.accumulator  # a leaf: its accumulator, inline for speed
    node = ref() if ref is not None else None
    return (node if node is not None else grad_accumulator(t), 0)
