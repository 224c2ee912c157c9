"""What the algorithms share: the per-tensor / multi-tensor / fused dispatch, the
multi-tensor (``foreach=True``) path, grouping by device and dtype, scalar state.

The multi-tensor path
---------------------
The core has no ``_foreach_*`` kernels, so ``foreach=True`` is a Python path over lists.
Every update is elementwise, so it does not matter whether it runs once per tensor or
once over all of them: ``multi_tensor`` groups the tensors by device and dtype and, for
the small ones (fewer than ``FLAT_LIMIT`` elements each, where the cost of one op call
per tensor dominates), runs the algorithm's per-tensor update *once* on flat
concatenations:

- the gradients and the parameters are concatenated (two copies), the update runs on
  them, and each parameter's slice is copied back;
- the state tensors of the group are made consecutive views of one flat buffer (once: the
  lists' entries are replaced by the views, which the optimizer stores in its ``state``,
  and the original tensors get the step's values too), so the update reads and writes
  them in place; scalar state (``step``, NAdam's ``mu_product``) must agree across the group,
  which it does unless some parameters skipped steps (then that group takes the
  per-tensor path for that step).

Large tensors take the per-tensor path (memory-bound either way; the copies would cost
more than the calls save). Each element goes through the same ops in the same order on
either path, so ``foreach=True`` gives bit for bit the result of ``foreach=False``.
"""

from __future__ import annotations

from collections.abc import Callable

import ember_tensor as et

from . import _fused
from .optimizer import _scalar_dtype

Tensor = et.Tensor

# tensors with fewer elements than this are updated together on flat buffers
FLAT_LIMIT = 1 << 16


def new_step() -> Tensor:
    """A fresh ``step`` counter: a 0-d tensor of the scalar dtype, as PyTorch keeps it."""
    return et.tensor(0.0, dtype=_scalar_dtype())


def choose_impl(
    name: str,
    algorithm: str,
    foreach: bool | None,
    fused: bool | None,
    single: Callable,
    multi: Callable,
) -> Callable:
    """The implementation a step uses: the fused kernel (``fused=True``), the
    multi-tensor path (``foreach=True``), the per-tensor path (``foreach=False`` or
    ``fused=False``); with neither given, the fused kernel when there is one and it takes
    the step's tensors, else the per-tensor path."""
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if fused:
        return _fused.fused_kernel(algorithm, name)
    if foreach:
        return multi
    if fused is None and foreach is None and _fused.has_fused_kernel(algorithm):
        kernel = _fused.fused_kernel(algorithm, name)

        def auto(params, grads, *states, **hyper):
            if _fused.usable(params, grads, *states):
                return kernel(params, grads, *states, **hyper)
            return single(params, grads, *states, **hyper)

        return auto
    return single


def store_state(changed, state, params, **lists) -> None:
    """Writes the entries of the per-parameter lists back into ``state`` when ``changed``
    (the multi-tensor path replaced some by views of a flat buffer)."""
    if not changed:
        return
    for key, values in lists.items():
        if values:
            for p, value in zip(params, values):
                state[p][key] = value


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


def _make_flat(tensors: list[Tensor], numels: list[int], copied: list) -> Tensor:
    """Copies ``tensors`` into one flat buffer and replaces the list's entries by views of
    it (of the same shapes); returns the buffer. ``(originals, views)`` go to ``copied``:
    the originals get the updated values back, for callers that keep them."""
    originals = list(tensors)
    base = et.cat([_flat(t) for t in tensors])
    for i, piece in enumerate(base.split(numels)):
        tensors[i] = piece.view(tensors[i].shape)
    copied.append((originals, tensors))
    return base


def multi_tensor(single: Callable, scalars: tuple[int, ...] = ()) -> Callable:
    """The ``foreach=True`` form of the per-tensor update ``single(params, grads,
    *state_lists, **hyper)``. ``scalars`` are the positions (among the state lists) of
    lists of 0-d scalar state. State lists may be empty (an unused state) and may hold
    ``None`` entries that ``single`` fills (SGD's first momentum buffers)."""

    def run(params, grads, *states, **hyper) -> bool:
        """Updates in place; ``True`` when entries of the state lists were replaced (by
        views of flat buffers, or by new state): the caller stores them."""
        if not params:
            return False
        changed = False
        buckets: dict[tuple[str, object], tuple[list[int], list[int]]] = {}
        for i, p in enumerate(params):
            small, large = buckets.setdefault((str(p.device), p.dtype), ([], []))
            (small if p.numel() < FLAT_LIMIT else large).append(i)
        for small, large in buckets.values():
            if len(small) == 1:
                large = small + large
                small = []
            for indices, flat in ((large, False), (small, True)):
                if not indices:
                    continue
                sub_p = [params[i] for i in indices]
                sub_g = [grads[i] for i in indices]
                sub_s = [[lst[i] for i in indices] if lst else [] for lst in states]
                if not (flat and _run_flat(single, scalars, sub_p, sub_g, sub_s, hyper)):
                    single(sub_p, sub_g, *sub_s, **hyper)
                for lst, sub in zip(states, sub_s):
                    if lst:
                        for i, value in zip(indices, sub):
                            if lst[i] is not value:
                                lst[i] = value
                                changed = True
        return changed

    run.__name__ = run.__qualname__ = f"multi_tensor({single.__name__})"
    return run


def _run_flat(single, scalars, params, grads, states, hyper) -> bool:
    """One call of ``single`` on flat buffers (see the module docstring); ``False``, with
    nothing done, when the group cannot take that path."""
    numels = [p.numel() for p in params]
    flat_states: list[list] = []
    copied: list = []  # (originals, views) of the state lists made flat by this call
    fills: list[Tensor] = []  # scalar buffers to fill from their first element afterwards
    created: list[int] = []  # state lists that single() creates (all None before)
    for j, lst in enumerate(states):
        if not lst:
            flat_states.append([])
            continue
        if j in scalars:
            base = _flat_base(lst, [1] * len(lst))
            if base is None:
                if len({t.item() for t in lst}) != 1:
                    return False  # steps differ: parameters skipped steps
                base = _make_flat(lst, [1] * len(lst), copied)
            elif not bool(base.amin() == base.amax()):
                return False
            first = lst[0]
            flat_states.append([first])
            fills.append((base, first))
            continue
        if all(t is None for t in lst):
            flat_states.append([None])
            created.append(j)
            continue
        if any(t is None for t in lst):
            return False
        base = _flat_base(lst, numels)
        if base is None:
            base = _make_flat(lst, numels, copied)
        flat_states.append([base])

    flat_p = et.cat([_flat(p) for p in params])
    flat_g = et.cat([_flat(g) for g in grads])
    single([flat_p], [flat_g], *flat_states, **hyper)

    for p, piece in zip(params, flat_p.split(numels)):
        p.copy_(piece if p.dim() == 1 else piece.view(p.shape))
    for base, first in fills:
        base.fill_(first.item())
    for originals, views in copied:
        for original, view in zip(originals, views):
            original.copy_(view)
    for j in created:
        buf = flat_states[j][0]
        for i, piece in enumerate(buf.split(numels)):
            states[j][i] = piece.view(params[i].shape)
    return True
