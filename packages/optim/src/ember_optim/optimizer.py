"""``Optimizer``: the base class of every optimizer, with PyTorch's contract.

- ``param_groups``: a list of dicts, each with ``"params"`` (a list of tensors) and the
  group's hyperparameters; options a group does not give are filled in from ``defaults``.
- ``state``: per-parameter state, a ``defaultdict(dict)`` keyed by the parameter tensor
  itself (tensors hash by identity).
- ``state_dict()`` / ``load_state_dict()``: PyTorch's layout. Parameters are replaced by
  integer ids, numbered across the groups in order; ``state`` is keyed by those ids.
  Loading zips the saved ids with the current parameters group by group (PyTorch's errors
  when the group count or a group's size differ) and casts floating-point state tensors to
  their parameter's dtype, except ``step``.
- hooks: step pre/post hooks (per optimizer and global), state_dict and load_state_dict
  pre/post hooks.
- the step: an algorithm is its options (the constructor), the state of one parameter
  (``_init_state``) and its update rule for one parameter (``_update``). The base checks the
  options (``_checks``), and its ``step`` runs the closure, skips parameters without a
  gradient, creates state, applies ``maximize`` and weight decay, and runs the rule on the
  path the group's ``foreach``/``fused`` choose (``_common.py``): per tensor, on flat
  buffers, or as one fused kernel.
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Hashable, Iterable
from copy import deepcopy
from itertools import chain
from types import MappingProxyType, SimpleNamespace
from typing import Any

import ember_tensor as et

from . import _checks, _common, _fused
from ._common import _scalar_dtype, _to_scalar
from ._grad_mode import enable_grad, grad_disabled
from ._hooks import RemovableHandle

__all__ = [
    "Optimizer",
    "register_optimizer_step_pre_hook",
    "register_optimizer_step_post_hook",
    "required",
]

Tensor = et.Tensor
StateDict = dict[str, Any]

# the state a rule sees when its group keeps none (read-only: a rule cannot write to it)
_NO_STATE = MappingProxyType({})

_global_optimizer_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
_global_optimizer_post_hooks: OrderedDict[int, Callable] = OrderedDict()


class _RequiredParameter:
    """The default of an option that every parameter group must give."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Registers ``hook(optimizer, args, kwargs)`` to run before every optimizer's
    ``step``; it may return ``(new_args, new_kwargs)``."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Registers ``hook(optimizer, args, kwargs)`` to run after every optimizer's ``step``."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _typename(obj: object) -> str:
    cls = type(obj)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def _caller_stacklevel() -> int:
    """The ``stacklevel`` that attributes a warning to the first frame outside this
    package (the user's line that built the optimizer)."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("ember_optim"):
        frame = frame.f_back
        level += 1
    return level


def _step_hooked(step: Callable) -> Callable:
    """``step`` wrapped to run the global and the optimizer's step pre- and post-hooks."""

    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]
        for pre_hook in chain(
            _global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()
        ):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(
                        f"{step} must return None or a tuple of (new_args, new_kwargs), "
                        f"but got {result}."
                    )
        out = step(*args, **kwargs)
        for post_hook in chain(
            self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()
        ):
            post_hook(self, args, kwargs)
        return out

    wrapper.hooked = True
    return wrapper


class Optimizer:
    """Base class of all optimizers.

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts (one per
    parameter group, with the key ``"params"`` and any per-group options). ``defaults``
    holds the options a group does not give. Give parameters in a deterministic order (a
    list, not a set): ``state_dict`` identifies them by position.

    A subclass either writes its own ``step``, or is an update rule: it gives its options
    (``defaults``), ``_init_state`` and ``_update``, and the class attributes below, and the
    base's ``step`` does the rest.
    """

    # -- what an algorithm declares -----------------------------------------------------

    # the options checked on construction, in PyTorch's order (``_checks.check``)
    _checks: tuple[str, ...] = ()
    # the name of the fused kernel registered for the rule (``register_fused_kernel``)
    _algorithm: str | None = None
    # the per-parameter state, in the order of the functional form's (and kernels') lists
    _state_keys: tuple[str, ...] = ()
    # state kept only when a hyperparameter is on: {state key: option}
    _optional_state: dict[str, str] = {}
    # options used only to create state, not passed to the rule (Adagrad's initial sum)
    _init_options: tuple[str, ...] = ()
    # the per-parameter state kept as 0-d tensors: ``step`` and the like (flattened as
    # scalars by foreach; older checkpoints hold plain numbers, __setstate__ converts them)
    _scalar_state: tuple[str, ...] = ()
    # weight decay scales the parameter (when the group has no decoupled_weight_decay)
    _decoupled_weight_decay = False
    # options an unpickled optimizer's groups get when they lack them (older versions)
    _setstate_defaults: dict[str, Any] = {}

    def _init_state(self, state: dict, param: Tensor, group: dict[str, Any]) -> None:
        """Fills the empty ``state`` of ``param`` before its first update (rule optimizers)."""

    @staticmethod
    def _update(param: Tensor, grad: Tensor, state: dict, h: SimpleNamespace) -> None:
        """The update rule: updates ``param`` (and ``state``) in place from ``grad``, which
        already has ``maximize`` and weight decay applied. ``h``: the group's
        hyperparameters as numbers, ``h.lr``, ``h.beta1``, ... (every option but
        ``params``, the path options and ``_init_options``; ``betas`` as two)."""
        raise NotImplementedError

    def __init__(self, params, defaults: dict[str, Any]) -> None:
        self._check_defaults(defaults)
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict[int, Callable] = (
            OrderedDict()
        )
        self._patch_step_function()

        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors "
                f"or dicts, but got {_typename(params)}"
            )

        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)
        if defaults.get("fused") and self._is_rule():
            _fused.fused_kernel(self._algorithm, type(self).__name__)  # or NotImplementedError

    @classmethod
    def _is_rule(cls) -> bool:
        return cls._update is not Optimizer._update

    def _check_defaults(self, defaults: dict[str, Any]) -> None:
        """Checks the constructor's options (PyTorch's errors); a subclass adds its own."""
        for name in self._checks:
            _checks.check(name, defaults[name])
        if self._is_rule():
            _checks.check_flags(type(self).__name__, defaults)

    # -- pickling, copying, printing ---------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        return {
            "defaults": self.defaults,
            "state": self.state,
            "param_groups": self.param_groups,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in (
            "_optimizer_step_pre_hooks",
            "_optimizer_step_post_hooks",
            "_optimizer_state_dict_pre_hooks",
            "_optimizer_state_dict_post_hooks",
            "_optimizer_load_state_dict_pre_hooks",
            "_optimizer_load_state_dict_post_hooks",
        ):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)
        # an object pickled by an older version: options it lacks, scalar state as numbers
        for group in self.param_groups:
            for key, value in self._setstate_defaults.items():
                group.setdefault(key, value)
        for p_state in self.state.values():
            for key in self._scalar_state:
                if isinstance(p_state, dict) and key in p_state and not isinstance(
                        p_state[key], et.Tensor):
                    p_state[key] = et.tensor(float(p_state[key]), dtype=_scalar_dtype())

    @staticmethod
    def _evaluate(closure):
        """The loss ``closure()`` returns, computed with grad enabled; None without one."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += "\n"
            text += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        text += ")"
        return text

    # -- step and its hooks ------------------------------------------------------------

    def _patch_step_function(self) -> None:
        cls = self.__class__
        if not getattr(cls.step, "hooked", False):
            cls.step = _step_hooked(cls.step)

    @grad_disabled
    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        """Performs one optimization step (updates the parameters). ``closure``, when
        given, re-evaluates the model and returns the loss; some optimizers need it."""
        if not self._is_rule():
            raise NotImplementedError(
                f"{type(self).__name__} defines neither step() nor an update rule (_update)"
            )
        loss = self._evaluate(closure)
        for group in self.param_groups:
            self._step_group(group)
        return loss

    def _step_group(self, group: dict[str, Any]) -> None:
        """The rule over the parameters of ``group`` that have a gradient, their state
        created on first use."""
        hyper = self._hyper(group)
        cls = type(self)
        keep = bool(_common.active_state(cls, hyper))  # SGD without momentum keeps none
        params, grads, states = [], [], []
        all_states = self.state
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            params.append(p)
            grads.append(grad)
            if keep:
                state = all_states[p]
                if not state:
                    self._create_state(state, p, group)
                states.append(state)
        if not keep:  # no state recorded, as in PyTorch
            states = [_NO_STATE] * len(params)
        _common.apply(cls, params, grads, states, hyper, foreach=group.get("foreach"),
                      fused=group.get("fused"))

    def _create_state(self, state: dict, param: Tensor, group: dict[str, Any]) -> None:
        """``_init_state``, checked: every key it creates is one of ``_state_keys``."""
        self._init_state(state, param, group)
        unknown = [key for key in state if key not in self._state_keys]
        if unknown:
            raise RuntimeError(
                f"{type(self).__name__}._init_state created state {unknown} that "
                f"_state_keys {self._state_keys} does not list"
            )

    _hyper_keys: list[str] | None = None  # the options _hyper reads, found on first use

    def _hyper(self, group: dict[str, Any]) -> dict[str, Any]:
        """The group's hyperparameters as numbers: its options less ``params`` and those
        that pick a path (``foreach``, ``fused``, ``capturable``, ``differentiable``) or
        only create state; ``betas`` as ``beta1`` and ``beta2``."""
        keys = self._hyper_keys
        if keys is None:
            skip = _common.PATH_OPTIONS.union(self._init_options)
            keys = self._hyper_keys = [k for k in self.defaults if k not in skip]
        hyper = {}
        for key in keys:
            value = group[key]
            if key == "betas":
                hyper["beta1"], hyper["beta2"] = _to_scalar(value[0]), _to_scalar(value[1])
            else:
                hyper[key] = _to_scalar(value)
        return hyper

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Registers ``hook(optimizer, args, kwargs) -> None or (args, kwargs)``, called
        before each ``step``; returned ``(args, kwargs)`` replace the step's arguments."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """Registers ``hook(optimizer, args, kwargs) -> None``, called after each ``step``."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    # -- state_dict --------------------------------------------------------------------

    @staticmethod
    def _register(hooks: OrderedDict, hook: Callable, prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(
        self, hook: Callable, prepend: bool = False
    ) -> RemovableHandle:
        """Registers ``hook(optimizer) -> None``, called before ``state_dict`` builds the
        dict (first of all with ``prepend=True``)."""
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(
        self, hook: Callable, prepend: bool = False
    ) -> RemovableHandle:
        """Registers ``hook(optimizer, state_dict) -> None or state_dict``, called on the
        built dict; a returned dict replaces it."""
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(
        self, hook: Callable, prepend: bool = False
    ) -> RemovableHandle:
        """Registers ``hook(optimizer, state_dict) -> None or state_dict``, called with a
        shallow copy of the dict given to ``load_state_dict``; a returned dict is loaded
        instead."""
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(
        self, hook: Callable, prepend: bool = False
    ) -> RemovableHandle:
        """Registers ``hook(optimizer) -> None``, called after ``load_state_dict``."""
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def state_dict(self) -> StateDict:
        """The optimizer's state as ``{"state": {id: {...}}, "param_groups": [...]}``.

        Parameters appear as integer ids, numbered from 0 across the groups in order (a
        parameter listed twice keeps its first id). ``state`` maps those ids to the
        per-parameter state; its tensors are the optimizer's own (not copies). Each group
        holds its options and ``"params"``, the list of its parameters' ids (and
        ``"param_names"`` when the optimizer was given names).
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)

        ids: dict[int, int] = {}  # id(param) -> its index
        next_index = 0

        def pack(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal next_index
            packed = {k: v for k, v in group.items() if k != "params"}
            for index, p in enumerate(group["params"], next_index):
                ids.setdefault(id(p), index)
            packed["params"] = [ids[id(p)] for p in group["params"]]
            next_index += len(packed["params"])
            return packed

        param_groups = [pack(g) for g in self.param_groups]
        packed_state = {
            (ids[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()
        }
        state_dict = {"state": packed_state, "param_groups": param_groups}

        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(
        param: Tensor,
        value: Tensor,
        param_id: int,
        param_groups: list[dict[Any, Any]],
        key: Hashable = None,
    ) -> Tensor:
        """A loaded state tensor, made fit for ``param``: on its device, and in its dtype
        when it is floating point; ``step`` keeps its dtype (float32 under fused or
        capturable)."""
        fused = capturable = False
        for group in param_groups:
            if param_id in group["params"]:
                fused = group.get("fused", False)
                capturable = group.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=et.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Loads a ``state_dict()`` (of this optimizer or one built the same way).

        Saved ids are matched with the current parameters by position, group by group;
        a different number of groups, or a group of another size, is a ``ValueError``.
        Floating-point state tensors are cast to their parameter's dtype (``step``
        excepted). Call it after creating any lr scheduler: a scheduler created later
        overwrites the loaded learning rates.
        """
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result

        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size "
                "of optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )
        saved_param_groups = state_dict["param_groups"]

        def cast(param, value, param_id=None, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, saved_param_groups, key
                )
            if isinstance(value, dict):
                return {k: cast(param, v, param_id, key=k) for k, v in value.items()}
            if isinstance(value, (str, bytes)):
                return value
            if isinstance(value, Iterable):
                return type(value)(cast(param, v, param_id) for v in value)
            return value

        state: defaultdict[Tensor, Any] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v, param_id=k)
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})

        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # -- gradients and groups ----------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients of all parameters: to ``None`` (the default), or to zeros
        in place with ``set_to_none=False``. Optimizers skip parameters whose gradient is
        ``None``, but step with a zero gradient (weight decay and momentum still act)."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if grad.grad_fn is not None:
                    # a gradient with history (create_graph=True): detached, then zeroed. Not
                    # detach_() as in PyTorch: the core cannot detach a view in place
                    grad = grad.detach()
                    p.grad = grad
                elif grad.requires_grad:
                    grad.requires_grad_(False)
                grad.zero_()

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Adds a parameter group (a dict with ``"params"`` and optional options), e.g. to
        train layers that were frozen so far. Missing options are taken from
        ``defaults``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")

        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list "
                "instead."
            )
        else:
            param_group["params"] = list(params)

        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names "
                    "are missing"
                )
            param_group["param_names"] = names

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + _typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (
                param.is_leaf or getattr(param, "retains_grad", False)
            ):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error; see github.com/pytorch/pytorch/issues/40967 for "
                "more information",
                stacklevel=_caller_stacklevel(),
            )

        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if not seen.isdisjoint(id(p) for p in params):
            raise ValueError("some parameters appear in more than one parameter group")

        self.param_groups.append(param_group)
