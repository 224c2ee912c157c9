"""Running an algorithm's update rule over a parameter group: the per-tensor path, the
multi-tensor (``foreach=True``) path, the fused kernels, the choice between them, and the
functional form over lists. ``Optimizer.step`` and the functional forms (``adam(...)``,
``sgd(...)``, ...) both come here.

The update rule
---------------
An algorithm (a subclass of ``Optimizer``) writes ``_update(param, grad, state, h)``: the
update of one parameter in place, ``state`` its state dict (which the rule may add to:
SGD's first momentum buffer), ``h`` the group's hyperparameters as attributes (``h.lr``,
``h.beta1``, ...). Three of them the base applies before the rule, the same way for every
algorithm: ``maximize`` (the gradient is negated), ``weight_decay`` (added to the gradient
as ``weight_decay * param``, or, with ``decoupled_weight_decay``, the parameter scaled by
``1 - lr * weight_decay``).

The paths
---------
- per tensor (``foreach=False``): the rule once per parameter.
- fused (``fused=True``; by default when a kernel is registered for the algorithm and takes
  the tensors): the kernel (``_fused.py``), with the functional form's arguments: lists of
  parameters, gradients and the state tensors in the order of ``_state_keys`` (a state
  the group does not use, such as ``max_exp_avg_sq`` without ``amsgrad``, is an empty
  list), the hyperparameters as keywords.
- multi-tensor (``foreach=True``): the core has no ``_foreach_*`` kernels, so this is the
  rule run on flat buffers. Every update is elementwise, so it does not matter whether it
  runs once per tensor or once over all of them: ``multi_tensor`` groups the tensors by
  device and dtype and, for the small ones (fewer than ``FLAT_LIMIT`` elements each, where
  the cost of one op call per tensor dominates), runs the rule *once* on flat
  concatenations:

  - the gradients and the parameters are concatenated (two copies), the update runs on
    them, and each parameter's slice is copied back;
  - the state tensors of the group are made consecutive views of one flat buffer (once:
    the state dicts' entries are replaced by the views, and the original tensors get the
    step's values too), so the update reads and writes them in place; scalar state
    (``_scalar_state``: ``step``, NAdam's ``mu_product``) must agree across the group, which
    it does unless some parameters skipped steps (then that group takes the per-tensor
    path for that step); state the rule creates (SGD's first buffers) is split into views.

  Large tensors take the per-tensor path (memory-bound either way; the copies would cost
  more than the calls save). Each element goes through the same ops in the same order on
  either path, so ``foreach=True`` gives bit for bit the result of ``foreach=False``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import SimpleNamespace

import ember_tensor as et

from . import _fused

Tensor = et.Tensor

# tensors with fewer elements than this are updated together on flat buffers
FLAT_LIMIT = 1 << 16

# options that choose a path or are refused, not hyperparameters of the update
PATH_OPTIONS = frozenset({"foreach", "fused", "capturable", "differentiable"})


def _to_scalar(value):
    """A hyperparameter as a Python number (a one-element tensor gives its value)."""
    if isinstance(value, Tensor):
        return value.item()
    return value


def _scalar_dtype():
    """The dtype of ``step`` counters and other scalar state: float64 when that is the
    default dtype, float32 otherwise (PyTorch's rule)."""
    return et.float64 if et.get_default_dtype() == et.float64 else et.float32


def new_step() -> Tensor:
    """A fresh ``step`` counter: a 0-d tensor of the scalar dtype, as PyTorch keeps it."""
    return et.tensor(0.0, dtype=_scalar_dtype())


def active_state(cls, hyper: dict) -> list[str]:
    """The state keys the group uses: all of ``_state_keys`` but those of
    ``_optional_state`` whose option is off (``max_exp_avg_sq`` without ``amsgrad``)."""
    optional = cls._optional_state
    return [k for k in cls._state_keys if k not in optional or hyper[optional[k]]]


def apply(cls, params: list, grads: list, states: list[dict], hyper: dict, *, foreach,
          fused, lists: list | None = None) -> bool:
    """One step of ``cls``'s update rule over ``params`` on the path the flags choose: the
    fused kernel (``fused=True``), the multi-tensor path (``foreach=True``), the per-tensor
    path (``foreach=False`` or ``fused=False``); with neither given, the fused kernel when
    there is one and it takes the tensors, else the per-tensor path. ``hyper``: every
    hyperparameter, as numbers. ``lists``: the kernel's state lists when the caller holds
    them (the functional form), else they are built from ``states`` and new entries stored
    back. Returns whether a kernel replaced entries of ``lists``."""
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    algorithm = cls._algorithm
    if fused or (fused is None and foreach is None and _fused.has_fused_kernel(algorithm)):
        kernel = _fused.fused_kernel(algorithm, cls.__name__)  # or NotImplementedError
        own = lists is None
        if own:
            keys = active_state(cls, hyper)
            lists = [[s.get(k) for s in states] if k in keys else [] for k in cls._state_keys]
        scalar = cls._scalar_state
        if fused or _fused.usable(params, grads, *(
                lst for k, lst in zip(cls._state_keys, lists) if k not in scalar)):
            changed = kernel(params, grads, *lists, **hyper)
            if changed and own:  # new state (SGD's first buffers): into the state dicts
                for key, lst in zip(cls._state_keys, lists):
                    for state, value in zip(states, lst):
                        if value is not None:
                            state[key] = value
            return bool(changed)
    update = per_tensor(cls, hyper)
    if foreach:
        multi_tensor(update, cls._scalar_state, params, grads, states)
    else:
        update(params, grads, states)
    return False


def per_tensor(cls, hyper: dict) -> Callable[[list, list, list], None]:
    """The per-tensor path: a function of ``(params, grads, states)`` that applies
    ``maximize`` and weight decay, then ``cls._update``, to each parameter in turn."""
    rule = cls._update
    maximize = hyper.get("maximize", False)
    weight_decay = hyper.get("weight_decay", 0)
    decoupled = hyper.get("decoupled_weight_decay", cls._decoupled_weight_decay)
    lr = hyper["lr"]
    h = SimpleNamespace(**hyper)  # one argument: a call with * or ** costs 3x more

    def run(params, grads, states) -> None:
        for param, grad, state in zip(params, grads, states):
            if maximize:
                grad = grad.neg()
            if weight_decay != 0:
                if decoupled:
                    param.mul_(1 - lr * weight_decay)
                else:
                    grad = grad.add(param, alpha=weight_decay)
            rule(param, grad, state, h)

    def run_plain(params, grads, states) -> None:  # run, without maximize or weight decay
        for param, grad, state in zip(params, grads, states):
            rule(param, grad, state, h)

    return run_plain if not maximize and weight_decay == 0 else run


# -- the multi-tensor path -----------------------------------------------------------------


def multi_tensor(update: Callable, scalar_keys, params, grads, states) -> None:
    """Runs the per-tensor ``update`` over the parameters, the small ones of each device
    and dtype together on flat buffers (see the module docstring)."""
    buckets: dict[tuple[str, object], tuple[list[int], list[int]]] = {}
    for i, p in enumerate(params):
        small, large = buckets.setdefault((str(p.device), p.dtype), ([], []))
        (small if p.numel() < FLAT_LIMIT else large).append(i)
    for small, large in buckets.values():
        if len(small) == 1:
            large, small = small + large, []
        for indices, flat in ((large, False), (small, True)):
            if not indices:
                continue
            sub = ([params[i] for i in indices], [grads[i] for i in indices],
                   [states[i] for i in indices])
            if not (flat and _run_flat(update, scalar_keys, *sub)):
                update(*sub)


def _flat(t: Tensor) -> Tensor:
    if t.dim() == 1:
        return t
    return t.view(-1) if t.is_contiguous() else t.reshape(-1)


def _flat_base(tensors: list[Tensor], numels: list[int]) -> Tensor | None:
    """The contiguous 1-d tensor of which ``tensors`` are the consecutive contiguous views,
    in order and covering it exactly; ``None`` if they are not."""
    base = tensors[0]._base
    if (base is None or base.dim() != 1 or base.storage_offset() != 0
            or not base.is_contiguous() or base.numel() != sum(numels)):
        return None
    offset = 0
    for t, n in zip(tensors, numels):
        if t._base is not base or t.storage_offset() != offset or not t.is_contiguous():
            return None
        offset += n
    return base


def _run_flat(update, scalar_keys, params, grads, states) -> bool:
    """One call of ``update`` on flat buffers (see the module docstring); ``False``, with
    nothing done, when the group cannot take that path (different state keys, a ``None``
    entry, scalar state that differs)."""
    keys = states[0].keys()
    if any(s.keys() != keys for s in states):
        return False
    numels = [p.numel() for p in params]
    ones = [1] * len(params)
    plan = []  # (key, its tensors, scalar?, their flat base or None)
    for key in keys:
        tensors = [s[key] for s in states]
        if any(t is None for t in tensors):
            return False
        scalar = key in scalar_keys
        base = _flat_base(tensors, ones if scalar else numels)
        if scalar and not (len({t.item() for t in tensors}) == 1 if base is None
                           else bool(base.amin() == base.amax())):
            return False  # steps differ: parameters skipped steps
        plan.append((key, tensors, scalar, base))

    flat_state: dict = {}
    bases = {}
    copied = []  # (originals, views): state made flat by this call
    for key, tensors, scalar, base in plan:
        if base is None:  # once: the state becomes views of one buffer
            base = et.cat([_flat(t) for t in tensors])
            sizes = ones if scalar else numels
            for state, t, piece in zip(states, tensors, base.split(sizes)):
                state[key] = piece.view(t.shape)
            copied.append((tensors, [s[key] for s in states]))
        bases[key] = base
        flat_state[key] = states[0][key] if scalar else base
    flat_p = et.cat([_flat(p) for p in params])
    flat_g = et.cat([_flat(g) for g in grads])
    update([flat_p], [flat_g], [flat_state])

    for p, piece in zip(params, flat_p.split(numels)):
        p.copy_(piece if p.dim() == 1 else piece.view(p.shape))
    for key, base in bases.items():
        value = flat_state[key]
        if key in scalar_keys:  # every parameter's scalar from the first's
            base.fill_(value.item())
        elif value is not base:  # the rule replaced the buffer instead of updating it
            base.copy_(value)
    for originals, views in copied:
        for original, view in zip(originals, views):
            original.copy_(view)
    for key in [k for k in flat_state if k not in keys]:  # state the rule created
        for state, p, piece in zip(states, params, flat_state[key].split(numels)):
            state[key] = piece.view(p.shape)
    return True


# -- the functional form -------------------------------------------------------------------


def _hyper_defaults(cls) -> dict:
    """The hyperparameters' defaults: the constructor's (``betas`` as ``beta1``/``beta2``)."""
    defaults = {}
    for name, param in inspect.signature(cls.__init__).parameters.items():
        if (param.default is inspect.Parameter.empty or name in PATH_OPTIONS
                or name in cls._init_options):
            continue
        if name == "betas":
            defaults["beta1"], defaults["beta2"] = param.default
        else:
            defaults[name] = param.default
    return defaults


def functional_form(cls, name: str, **fixed) -> Callable:
    """The functional form of ``cls``'s update, PyTorch's: ``name(params, grads,
    *state_lists, foreach=None, fused=None, **hyperparameters)``, the state lists in the
    order of ``cls._state_keys``. It updates in place, fills ``None`` entries of the lists
    with new state and may replace entries by views of flat buffers (``foreach=True``; the
    original tensors are updated too); it returns whether it replaced entries. Missing
    hyperparameters take the constructor's defaults; ``fixed`` ones cannot be changed."""
    keys = cls._state_keys
    defaults = _hyper_defaults(cls)

    def functional(params, grads, *state_lists, foreach=None, fused=None, **hyper) -> bool:
        if len(state_lists) != len(keys):
            raise TypeError(f"{name}() takes {len(keys)} state lists ({', '.join(keys)}) "
                            f"after params and grads, got {len(state_lists)}")
        hyper = {k: _to_scalar(v) for k, v in {**defaults, **hyper, **fixed}.items()}
        states: list[dict] = [{} for _ in params]
        for key, lst in zip(keys, state_lists):
            for state, value in zip(states, lst):
                if value is not None:
                    state[key] = value
        changed = apply(cls, params, grads, states, hyper, foreach=foreach, fused=fused,
                        lists=list(state_lists))
        for key, lst in zip(keys, state_lists):
            for i, state in enumerate(states[: len(lst)]):
                value = state.get(key)
                if value is not None and lst[i] is not value:
                    lst[i] = value
                    changed = True
        return changed

    functional.__name__ = functional.__qualname__ = name
    functional.__doc__ = (
        f"The {cls.__name__} update on lists (functional form): ``{name}(params, grads, "
        f"{', '.join(keys)} lists, *, foreach=None, fused=None, **hyperparameters)``, in "
        f"place. Returns whether entries of the state lists were replaced.")
    return functional
