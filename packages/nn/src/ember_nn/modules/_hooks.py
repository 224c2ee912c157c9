"""The hooks of ``Module``: forward pre-hooks and hooks around ``forward``, and full
backward (pre-)hooks, which see the gradients with respect to the module's outputs and
inputs.

Backward hooks work as in PyTorch: the tensor inputs go through an identity ``Function``
before ``forward`` runs, and the tensor outputs through another one after; the gradients
reaching the output node are the module's ``grad_output`` (backward pre-hooks run there
and may replace them), those leaving the input node are its ``grad_input`` (the backward
hooks run there and may replace them).
"""

from __future__ import annotations

import warnings

import ember_tensor as et
from ember_autograd import Function, is_grad_enabled

__all__ = ["BackwardHook", "call_with_hooks"]


class _BackwardHookFunction(Function):
    """Identity on its tensor arguments; a place for the module's backward hooks."""

    @staticmethod
    def forward(ctx, *tensors):
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return grads


class BackwardHook:
    """The backward hooks of one module call (PyTorch's ``BackwardHook`` contract)."""

    def __init__(self, module, hooks: list, pre_hooks: list) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_inputs = 0
        self.input_index: list[int] | None = None
        self.n_outputs = 0
        self.output_index: list[int] | None = None
        self.input_zeros: list = []

    @staticmethod
    def _wrap(args: tuple):
        """``args`` with its tensors that require grad passed through the identity
        Function, their positions and the Function's node; unchanged (and None, None) when
        none requires grad or grad mode is off. (Tensors that do not require grad stay out
        of the Function: ember_autograd gives an input returned as is a history even when
        it is marked non-differentiable.)"""
        if not is_grad_enabled():
            return args, None, None
        index = [i for i, a in enumerate(args) if isinstance(a, et.Tensor) and a.requires_grad]
        if not index:
            return args, None, None
        new = _BackwardHookFunction.apply(*[args[i] for i in index])
        out = list(args)
        for i, t in zip(index, new):
            out[i] = t
        return tuple(out), index, new[0].grad_fn

    @staticmethod
    def _pack(index: list[int], values, size: int) -> tuple:
        out = [None] * size
        for i, v in zip(index, values):
            out[i] = v
        return tuple(out)

    def setup_input_hook(self, args: tuple) -> tuple:
        new, index, node = self._wrap(args)
        self.n_inputs = len(args)
        self.input_index = index
        # tensors that do not require grad get zeros in grad_input (as in PyTorch)
        self.input_zeros = [
            (i, tuple(a.shape), a.dtype, a.device)
            for i, a in enumerate(args)
            if isinstance(a, et.Tensor) and not a.requires_grad
        ]
        if node is not None:
            node.register_hook(self._input_hook)
        return new

    def setup_output_hook(self, result):
        single = not isinstance(result, tuple)
        outputs = (result,) if single else result
        new, index, node = self._wrap(outputs)
        self.n_outputs = len(outputs)
        self.output_index = index
        if node is not None:
            node.register_prehook(self._output_hook)
        return new[0] if single else new

    def _output_hook(self, grads: tuple):
        """On the output node: its incoming gradients are grad_output."""
        index = self.output_index
        self.grad_outputs = self._pack(index, grads, self.n_outputs)
        expected = len(self.grad_outputs)
        for hook in self.pre_hooks:
            out = hook(self.module, self.grad_outputs)
            if out is None:
                continue
            if len(out) != expected:
                raise RuntimeError(
                    "Backward pre hook returned an invalid number of grad_output, got "
                    f"{len(out)}, but expected {expected}"
                )
            self.grad_outputs = tuple(out)
        grad_outputs = self.grad_outputs
        if self.input_index is None:
            # no input requires grad: the hooks fire here, with grad_input all None
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to "
                "module outputs since no inputs require gradients. See the documentation "
                "of Module.register_full_backward_hook for more details.",
                stacklevel=2,
            )
            grad_inputs = (None,) * self.n_inputs
            for hook in self.hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (
                    isinstance(res, tuple) and all(r is None for r in res)
                ):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should "
                        "always return None or None for all gradients."
                    )
            self.grad_outputs = None
        return tuple(grad_outputs[i] for i in index)

    def _input_hook(self, grad_inputs: tuple, _grad_outputs: tuple):
        """On the input node: what it passes on to the inputs is grad_input."""
        if self.grad_outputs is None:
            return None
        packed = list(self._pack(self.input_index, grad_inputs, self.n_inputs))
        for i, shape, dtype, device in self.input_zeros:
            packed[i] = et.zeros(shape, dtype=dtype, device=device)
        res = tuple(packed)
        for hook in self.hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(
                    "Backward hook returned an invalid number of grad_input, got "
                    f"{len(out)}, but expected {len(res)}"
                )
            res = tuple(out)
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_index)


def call_with_hooks(module, args: tuple, kwargs: dict):
    """``module.forward(*args, **kwargs)`` with the module's hooks around it."""
    result = None
    called: set[int] = set()  # ids of the always_call hooks that ran
    try:
        for hook_id, hook in list(module._forward_pre_hooks.items()):
            if hook_id in module._forward_pre_hooks_with_kwargs:
                out = hook(module, args, kwargs)
                if out is not None:
                    if isinstance(out, tuple) and len(out) == 2:
                        args, kwargs = out
                    else:
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, "
                            f"new_kwargs), but got {out}."
                        )
            else:
                out = hook(module, args)
                if out is not None:
                    args = out if isinstance(out, tuple) else (out,)

        bw_hook = None
        if module._backward_hooks or module._backward_pre_hooks:
            bw_hook = BackwardHook(
                module,
                list(module._backward_hooks.values()),
                list(module._backward_pre_hooks.values()),
            )
            args = bw_hook.setup_input_hook(args)

        result = module.forward(*args, **kwargs)

        for hook_id, hook in list(module._forward_hooks.items()):
            if hook_id in module._forward_hooks_always_called:
                called.add(hook_id)
            if hook_id in module._forward_hooks_with_kwargs:
                out = hook(module, args, kwargs, result)
            else:
                out = hook(module, args, result)
            if out is not None:
                result = out

        if bw_hook is not None:
            if not isinstance(result, (et.Tensor, tuple)):
                warnings.warn(
                    "For backward hooks to be called, module output should be a Tensor or a "
                    f"tuple of Tensors but received {type(result)}",
                    stacklevel=3,
                )
            else:
                result = bw_hook.setup_output_hook(result)
        return result
    except Exception:
        # forward hooks registered with always_call=True run even when forward raised
        for hook_id, hook in list(module._forward_hooks.items()):
            if hook_id not in module._forward_hooks_always_called or hook_id in called:
                continue
            try:
                if hook_id in module._forward_hooks_with_kwargs:
                    out = hook(module, args, kwargs, result)
                else:
                    out = hook(module, args, result)
                if out is not None:
                    result = out
            except Exception as exc:  # noqa: BLE001 - the original error is re-raised
                warnings.warn(
                    "module forward hook with ``always_call=True`` raised an exception that "
                    f"was silenced as another error was raised in forward: {exc}",
                    stacklevel=3,
                )
        raise
