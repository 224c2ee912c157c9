"""``Optimizer``: the protocol every algorithm of this package shares.

Parameter groups, per-parameter ``state``, ``state_dict``/``load_state_dict`` in PyTorch's
layout, ``zero_grad``, step and state-dict hooks, and the global step hooks
(``register_optimizer_step_pre_hook``/``..._post_hook``).
"""

from __future__ import annotations

import copy
import functools
import itertools
import warnings
from collections import defaultdict
from collections.abc import Callable

import ember_tensor as et

from . import _grad

__all__ = [
    "Optimizer",
    "register_optimizer_step_post_hook",
    "register_optimizer_step_pre_hook",
]

Tensor = et.Tensor


class _Required:
    """The default of an argument every parameter group must give (no global default)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()

_handle_ids = itertools.count()


class RemovableHandle:
    """What the ``register_*_hook`` methods return: ``handle.remove()`` unregisters."""

    def __init__(self, registry: dict) -> None:
        self._registry = registry
        self.id = next(_handle_ids)

    def remove(self) -> None:
        self._registry.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _register(registry: dict, hook: Callable, prepend: bool = False) -> RemovableHandle:
    handle = RemovableHandle(registry)
    registry[handle.id] = hook
    if prepend:
        for key in [k for k in registry if k != handle.id]:
            registry[key] = registry.pop(key)  # move every older hook behind the new one
    return handle


_global_step_pre_hooks: dict[int, Callable] = {}
_global_step_post_hooks: dict[int, Callable] = {}


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """A hook run before the ``step`` of every optimizer: ``hook(optimizer, args, kwargs)``,
    returning None or ``(new_args, new_kwargs)``. Global hooks run before the optimizer's
    own pre-hooks."""
    return _register(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """A hook run after the ``step`` of every optimizer: ``hook(optimizer, args, kwargs)``.
    Global post-hooks run after the optimizer's own."""
    return _register(_global_step_post_hooks, hook)


def _type_name(obj) -> str:
    return type(obj).__name__


def _hooked_step(step: Callable) -> Callable:
    """``step`` with the pre- and post-hooks around it (once per outermost call)."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if self._lite_in_step:  # a subclass calling super().step(): hooks already ran
            return step(self, *args, **kwargs)
        for hook in [*_global_step_pre_hooks.values(), *self._step_pre_hooks.values()]:
            result = hook(self, args, kwargs)
            if result is None:
                continue
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError(
                    f"{hook} must return None or a tuple of (new_args, new_kwargs), "
                    f"but got {result!r}")
            args, kwargs = result
        self._lite_in_step = True
        try:
            out = step(self, *args, **kwargs)
        finally:
            self._lite_in_step = False
        self._lite_step_count += 1
        for hook in [*self._step_post_hooks.values(), *_global_step_post_hooks.values()]:
            hook(self, args, kwargs)
        return out

    wrapper._lite_hooked = True
    return wrapper


class Optimizer:
    """The base of every optimizer.

    ``params``: an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts (parameter
    groups, each with a ``"params"`` entry and its own options); ``defaults``: the options a
    group does not give. A subclass implements ``step(closure=None)``; its step hooks are
    added automatically.
    """

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_lite_hooked", False):
            cls.step = _hooked_step(step)

    def __init__(self, params, defaults: dict) -> None:
        self.defaults = defaults
        self._init_hooks()
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {_type_name(params)}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def _init_hooks(self) -> None:
        self._lite_in_step = False
        self._lite_step_count = 0
        self._step_pre_hooks: dict[int, Callable] = {}
        self._step_post_hooks: dict[int, Callable] = {}
        self._state_dict_pre_hooks: dict[int, Callable] = {}
        self._state_dict_post_hooks: dict[int, Callable] = {}
        self._load_state_dict_pre_hooks: dict[int, Callable] = {}
        self._load_state_dict_post_hooks: dict[int, Callable] = {}

    # -- pickling, copying ---------------------------------------------------------------

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if "_step_pre_hooks" not in self.__dict__:
            self._init_hooks()

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {key}: {group[key]}" for key in sorted(group) if key != "params"]
        lines.append(")")
        return "\n".join(lines)

    # -- parameter groups ----------------------------------------------------------------

    def add_param_group(self, param_group: dict) -> None:
        """Adds a group (a dict with ``"params"``); options it does not give come from the
        optimizer's defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {_type_name(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        names = None
        if params and all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str)
                          for p in params):
            names = [name for name, _ in params]  # named parameters: (name, tensor) pairs
            params = [p for _, p in params]
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{_type_name(p)}")
            if not self.defaults.get("differentiable", False) and not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group)
        group["params"] = params
        if names is not None:
            group["param_names"] = names
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            group.setdefault(name, default)
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "each is updated as often as it appears", UserWarning, stacklevel=3)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    # -- gradients and steps -------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients of every parameter: to None (default), or to zeros in place
        (``set_to_none=False``, the gradient tensors are kept)."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()

    def step(self, closure: Callable | None = None):
        """One update of every parameter with a gradient; ``closure`` re-evaluates the model
        and returns the loss (returned by ``step``)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    # -- hooks ---------------------------------------------------------------------------

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` before each ``step``; it may return
        ``(new_args, new_kwargs)``."""
        return _register(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` after each ``step``."""
        return _register(self._step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable,
                                     prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer)`` before ``state_dict`` builds the dict."""
        return _register(self._state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable,
                                      prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` after; it may return a replacement dict."""
        return _register(self._state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable,
                                          prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` before loading; it may return a replacement."""
        return _register(self._load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable,
                                           prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer)`` after loading."""
        return _register(self._load_state_dict_post_hooks, hook, prepend)

    # -- state_dict ----------------------------------------------------------------------

    def state_dict(self) -> dict:
        """``{"state": {index: per-parameter state}, "param_groups": [group options with
        "params" as indices]}``: parameters are numbered in group order. The state's tensors
        are the optimizer's own (not copies), as in PyTorch."""
        for hook in list(self._state_dict_pre_hooks.values()):
            hook(self)
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {key: value for key, value in group.items() if key != "params"}
            ids = []
            for p in group["params"]:
                ids.append(index.setdefault(id(p), len(index)))
            packed["params"] = ids
            groups.append(packed)
        state = {}
        for key, value in self.state.items():
            state[index[id(key)] if isinstance(key, Tensor) and id(key) in index else key] = value
        result = {"state": state, "param_groups": groups}
        for hook in list(self._state_dict_post_hooks.values()):
            replaced = hook(self, result)
            if replaced is not None:
                result = replaced
        return result

    def load_state_dict(self, state_dict: dict) -> None:
        """Loads what ``state_dict`` gave (from this optimizer or one built the same way):
        the groups' options and the per-parameter state, whose floating-point tensors are
        copied and cast to their parameter's dtype and device (``step`` counters keep
        theirs)."""
        state_dict = dict(state_dict)
        for hook in list(self._load_state_dict_pre_hooks.values()):
            replaced = hook(self, state_dict)
            if replaced is not None:
                state_dict = replaced
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for group, saved in zip(groups, saved_groups):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        by_index = {}
        for group, saved in zip(groups, saved_groups):
            for index, p in zip(saved["params"], group["params"]):
                by_index[index] = p
        state: defaultdict = defaultdict(dict)
        for key, value in state_dict["state"].items():
            p = by_index.get(key)
            if p is None:
                state[key] = value
            else:
                state[p] = {name: _cast(p, name, v) for name, v in value.items()}
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.state = state
        self.param_groups = new_groups
        for hook in list(self._load_state_dict_post_hooks.values()):
            hook(self)


def _cast(param: Tensor, key: str, value):
    """A copy of a loaded state value, floating-point tensors in ``param``'s dtype/device."""
    if isinstance(value, Tensor):
        if key == "step":
            return value.clone()
        if value.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device).clone()
        return value.to(device=param.device).clone()
    if isinstance(value, dict):
        return {k: _cast(param, k, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(param, key, v) for v in value)
    return value


# -- helpers of the algorithms ---------------------------------------------------------


def check_lr(lr) -> None:
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_eps(eps) -> None:
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")


def check_betas(betas) -> None:
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def check_weight_decay(weight_decay) -> None:
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def check_flags(name: str, differentiable: bool = False, fused: bool | None = None) -> None:
    if differentiable:
        raise ValueError(f"{name}: differentiable=True is not supported by ember-optim-lite")
    if fused:
        raise ValueError(f"{name}: fused=True is not supported by ember-optim-lite "
                         "(it has no fused kernels)")


def call_closure(closure: Callable | None):
    """The closure's loss, evaluated with grad enabled (None without a closure)."""
    if closure is None:
        return None
    with _grad.enable_grad():
        return closure()


def params_with_grad(group: dict):
    """(parameter, gradient) of the group's parameters that have one; the gradient is
    negated when the group maximizes."""
    for p in group["params"]:
        grad = p.grad
        if grad is None:
            continue
        yield p, (grad.neg() if group.get("maximize", False) else grad)


def step_counter(state: dict) -> float:
    """Increments the parameter's ``step`` counter (a float32 scalar tensor, created at 0)
    and returns the new count."""
    counter = state.get("step")
    if counter is None:
        counter = state["step"] = et.tensor(0.0, dtype=et.float32)
    counter.add_(1.0)
    return counter.item()
