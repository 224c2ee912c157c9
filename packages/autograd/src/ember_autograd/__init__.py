"""ember_autograd: reverse- and forward-mode differentiation for ember_tensor.

Importing this module installs it as the core's autograd provider (the one hook of
``ember_tensor._set_autograd_hook``) and gives ``ember_tensor.Tensor`` its autograd
methods (``backward``, ``register_hook``, ``retain_grad``, ``retains_grad``).

>>> import ember_tensor as et, ember_autograd
>>> x = et.tensor([2.0], requires_grad=True)
>>> (x * x * x).backward()
>>> x.grad
tensor([12.])
"""

from __future__ import annotations

import ember_tensor as et

from . import forward_ad, gc_policy, graph, load_generated, recording
from .anomaly_mode import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from .engine import run_backward
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .graph import Node, RemovableHandle
from .variable import Variable

__version__ = "0.1.0"
INTERFACE_VERSION = 1

gc_policy.apply()

__all__ = [
    "Function",
    "GradcheckError",
    "Node",
    "RemovableHandle",
    "Variable",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "forward_ad",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "once_differentiable",
    "set_detect_anomaly",
    "set_grad_enabled",
]


def _load_rules() -> None:
    """Registers one rule per op key: the table and the recorders generated from
    derivatives.yaml (``load_generated``)."""
    table = load_generated.load("rules")
    recorders = load_generated.load("backward")
    for key, row in table.RULES.items():
        _add_rule(key, row, recorders)
    # an op without an entry is reported by tests/test_derivatives_yaml.py; at run time its
    # backward raises instead of giving a silently wrong gradient
    for key in table.NOT_IMPLEMENTED:
        record = recording.not_implemented_recorder(key)
        recording.RULES[key] = recording.Rule(record, record, False, False, None, ())
    # the Python composites with an entry of their own: the core's composite layer records
    # them as one node (the hook sees the op) instead of through the ops of their bodies
    composites = getattr(et, "_composites", None)
    if composites is not None and hasattr(composites, "record_as_one"):
        composites.record_as_one(table.COMPOSITES)


def _add_rule(key: str, row: tuple, recorders) -> None:
    """Registers the rule of ``key`` from its row of the generated ``RULES`` (recorder and
    in-place recorder names, needs_original, view, replay op name, kwonly, fast, takes a
    dtype=, complex guard), with the recorders of the module ``recorders``."""
    (record, record_inplace, needs_original, view, replay, kwonly, fast, takes_dtype,
     complex_guard) = row
    recording.RULES[key] = recording.Rule(
        getattr(recorders, record),
        None if record_inplace is None else getattr(recorders, record_inplace),
        needs_original,
        view,
        getattr(et.Tensor, replay, None) or getattr(et, replay, None),
        kwonly,
        fast=fast,
        takes_dtype=takes_dtype,
        complex_guard=complex_guard,
    )


_load_rules()


# ----------------------------------------------------------------------------- public API


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates into ``.grad`` of the leaves the gradient of ``tensors`` (PyTorch's
    ``torch.autograd.backward``). ``grad_tensors`` may be omitted for one-element outputs."""
    tensors = _as_tuple(tensors, "tensors")
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    else:
        grad_tensors = list(_as_tuple(grad_tensors, "grad_tensors", tensors_only=False))
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(
            f"grad can be implicitly created only for scalar outputs; got {len(grad_tensors)} "
            f"gradients for {len(tensors)} tensors"
        )
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _as_tuple(inputs, "inputs")
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs, True, True)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """The gradients of ``outputs`` with respect to ``inputs``, as a tuple (PyTorch's
    ``torch.autograd.grad``). Leaves' ``.grad`` are not touched."""
    if is_grads_batched:
        raise NotImplementedError("autograd.grad: is_grads_batched=True is not supported")
    outputs = _as_tuple(outputs, "outputs")
    inputs = _as_tuple(inputs, "inputs")
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    else:
        grad_outputs = list(_as_tuple(grad_outputs, "grad_outputs", tensors_only=False))
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(
            f"grad_outputs has {len(grad_outputs)} tensors but outputs has {len(outputs)}"
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True"
        )
    if retain_graph is None:
        retain_graph = create_graph
    results = run_backward(
        outputs, grad_outputs, retain_graph, create_graph, inputs, allow_unused, False
    )
    if materialize_grads:
        results = [et.zeros_like(t) if r is None else r for t, r in zip(inputs, results)]
    return tuple(results)


def _as_tuple(x, what: str, tensors_only: bool = True) -> tuple:
    """x as a tuple; a TypeError naming ``what`` unless it holds only Tensors (or also None,
    for gradients, when not ``tensors_only``)."""
    if isinstance(x, et.Tensor):
        return (x,)
    try:
        items = tuple(x)
    except TypeError:
        raise TypeError(
            f"{what}: expected a Tensor or a sequence of Tensors, got {type(x).__name__}"
        ) from None
    for i, item in enumerate(items):
        if not isinstance(item, et.Tensor) and (tensors_only or item is not None):
            raise TypeError(f"{what}[{i}]: expected a Tensor, got {type(item).__name__}")
    return items


# ----------------------------------------------------------------------------- Tensor methods


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates the gradient of this tensor into ``.grad`` of the leaves it depends on."""
    backward((self,), None if gradient is None else (gradient,), retain_graph, create_graph, inputs)


def _register_hook(self, hook):
    """``hook(grad)`` runs when this tensor's gradient is computed; it may return a new one.
    Returns a handle whose ``remove()`` unregisters it."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    fn = self.grad_fn
    if fn is None:
        meta = graph.meta_of(self)
        if meta.hooks is None:
            meta.hooks = []
        meta.hooks.append(hook)
        return RemovableHandle(meta.hooks, hook)
    nr = self._autograd_meta.output_nr if self._autograd_meta is not None else 0
    fn._special = True
    if fn._tensor_pre_hooks is None:
        fn._tensor_pre_hooks = {}
    hooks = fn._tensor_pre_hooks.setdefault(nr, [])
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def _register_post_accumulate_grad_hook(self, hook):
    """``hook(tensor)`` runs after a backward pass has accumulated this leaf's gradient into
    ``.grad`` (it returns nothing). Returns a handle whose ``remove()`` unregisters it."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    meta = graph.meta_of(self)
    if meta.post_accumulate_hooks is None:
        meta.post_accumulate_hooks = []
    meta.post_accumulate_hooks.append(hook)
    return RemovableHandle(meta.post_accumulate_hooks, hook)


def _retain_grad(self) -> None:
    """Makes this non-leaf tensor keep its gradient in ``.grad`` during backward."""
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    fn = self.grad_fn
    if fn is None:
        return  # leaves keep their gradient anyway
    meta = graph.meta_of(self)
    if meta.retains_grad:
        return
    meta.retains_grad = True
    import weakref

    fn._special = True
    if fn._retain_grad_hooks is None:
        fn._retain_grad_hooks = {}
    fn._retain_grad_hooks[meta.output_nr] = weakref.ref(self)


def _retains_grad(self) -> bool:
    meta = self._autograd_meta
    return bool(meta is not None and meta.retains_grad and self.grad_fn is not None)


et.Tensor.backward = _tensor_backward
et.Tensor.register_hook = _register_hook
et.Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook
et.Tensor.retain_grad = _retain_grad
et.Tensor.retains_grad = property(_retains_grad)

et._set_autograd_hook(recording.hook)

from . import functional  # noqa: E402  (needs the hook installed)
from .function import Function, once_differentiable  # noqa: E402
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402
