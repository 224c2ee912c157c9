"""Collectives between the local processes of a group, through shared memory:
``all_reduce``, ``broadcast``, ``barrier`` (``torch.distributed``'s names), enough for N
trainer processes to synchronise their gradients.

The parent makes a ``ProcessGroup(world_size)`` and passes it to each process it starts (as
a ``Process`` argument, like any multiprocessing lock); each process then calls
``init_process_group(group, rank)``. Every rank owns one slot, a file_system segment named
after the group, its rank and the slot's capacity (a power of two, grown when a larger
tensor comes), which the other ranks map by name. ``all_reduce`` of n elements: each rank
copies its tensor into its slot; each reduces its n / world_size share across all slots into
its own slot; each copies every share back. Three barriers, and each element is read about
twice: cheaper than any copy through a pipe or a socket.
"""

from __future__ import annotations

import math
import multiprocessing
import secrets
import threading

import ember_tensor as et

from . import _segments

_MIN_CAPACITY = 4096


class ReduceOp:
    """The reductions of ``all_reduce``."""

    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    AVG = "avg"


_COMBINE = {
    ReduceOp.SUM: lambda acc, x: acc.add_(x),
    ReduceOp.AVG: lambda acc, x: acc.add_(x),
    ReduceOp.PRODUCT: lambda acc, x: acc.mul_(x),
    ReduceOp.MIN: lambda acc, x: et.minimum(acc, x, out=acc),
    ReduceOp.MAX: lambda acc, x: et.maximum(acc, x, out=acc),
}


class ProcessGroup:
    """``world_size`` local processes that reduce and broadcast tensors together.

    Made before the processes start (``ctx``: the multiprocessing context they start with;
    by default the spawn context, whose barrier also works in forked children). A collective
    waits at most ``timeout`` seconds for the other ranks, then raises ``RuntimeError`` (a
    rank that died or never called it)."""

    def __init__(self, world_size: int, timeout: float = 300.0, ctx=None):
        if world_size < 1:
            raise ValueError(f"ProcessGroup: world_size must be at least 1, got {world_size}")
        ctx = ctx or multiprocessing.get_context("spawn")
        self.world_size, self.timeout = world_size, timeout
        self._barrier = ctx.Barrier(world_size)
        self._token = secrets.token_hex(6)
        self.rank: int | None = None
        self._slots: dict[tuple[int, int], object] = {}

    def __getstate__(self):
        state = dict(self.__dict__)
        state["rank"], state["_slots"] = None, {}
        return state

    # -- the collectives -----------------------------------------------------------------

    def barrier(self, what: str = "barrier") -> None:
        try:
            self._barrier.wait(self.timeout)
        except threading.BrokenBarrierError:
            raise RuntimeError(
                f"{what}: rank {self.rank} of {self.world_size} waited {self.timeout} s for "
                "the other processes of the group (one died, or did not make the same call); "
                "the group is broken") from None

    def all_reduce(self, tensor, op: str = ReduceOp.SUM) -> None:
        """Replaces ``tensor`` in every rank by the reduction (``op``) of all ranks' tensors,
        which must have the same shape and dtype everywhere."""
        self._check("all_reduce", tensor)
        if op not in _COMBINE:
            raise ValueError(f"all_reduce: unknown op {op!r}; expected one of ReduceOp.SUM, "
                             "PRODUCT, MIN, MAX, AVG")
        n = tensor.numel()
        slots = self._map_slots("all_reduce", tensor)
        mine = slots[self.rank]
        mine.copy_(tensor.reshape(-1))
        self.barrier("all_reduce")
        share = math.ceil(n / self.world_size)
        lo, hi = min(n, self.rank * share), min(n, (self.rank + 1) * share)
        if hi > lo:
            acc = mine[lo:hi]
            for k, slot in enumerate(slots):
                if k != self.rank:
                    _COMBINE[op](acc, slot[lo:hi])
            if op == ReduceOp.AVG:
                acc.div_(self.world_size)
        self.barrier("all_reduce")
        flat = tensor.view(-1) if tensor.is_contiguous() else et.empty(n, dtype=tensor.dtype)
        for k, slot in enumerate(slots):
            a, b = min(n, k * share), min(n, (k + 1) * share)
            if b > a:
                flat[a:b] = slot[a:b]
        if not tensor.is_contiguous():
            tensor.copy_(flat.reshape(tensor.shape))
        self.barrier("all_reduce")  # no rank refills its slot while another still reads it

    def broadcast(self, tensor, src: int) -> None:
        """Copies rank ``src``'s ``tensor`` into ``tensor`` of every other rank."""
        self._check("broadcast", tensor)
        if not 0 <= src < self.world_size:
            raise ValueError(f"broadcast: src must be a rank in [0, {self.world_size}), got {src}")
        slots = self._map_slots("broadcast", tensor)
        if self.rank == src:
            slots[src].copy_(tensor.reshape(-1))
        self.barrier("broadcast")
        if self.rank != src:
            tensor.copy_(slots[src].reshape(tensor.shape))
        self.barrier("broadcast")

    # -- slots ---------------------------------------------------------------------------

    def _check(self, what: str, tensor) -> None:
        if self.rank is None:
            raise RuntimeError(f"{what}: this process has not joined the group; call "
                               "init_process_group(group, rank) first")
        if not tensor.is_cpu:
            raise RuntimeError(f"{what}: only CPU tensors are supported, got one on "
                               f"{tensor.device}")

    def _prefix(self, rank: int) -> str:
        return f"ember_fs_pg_{self._token}_{rank}_"

    def _map_slots(self, what: str, tensor) -> list:
        """Every rank's slot as a flat tensor of ``tensor``'s dtype and numel."""
        nbytes = tensor.numel() * tensor.element_size()
        capacity = max(_MIN_CAPACITY, 1 << max(0, nbytes - 1).bit_length())
        if (self.rank, capacity) not in self._slots:
            for key in [k for k in self._slots if k[1] != capacity]:
                del self._slots[key]  # slots of another size: unlinked once no rank maps them
            _segments.watch(self._prefix(self.rank))
            segment = _segments.create(capacity, name=f"{self._prefix(self.rank)}{capacity}")
            self._slots[(self.rank, capacity)] = _segments.base_tensor(segment)
        missing = [k for k in range(self.world_size) if (k, capacity) not in self._slots]
        if len(missing) > 1 or missing and missing[0] != self.rank:
            self.barrier(what)  # every rank has made its slot of this capacity
            for k in missing:
                name = f"{self._prefix(k)}{capacity}"
                self._slots[(k, capacity)] = _segments.base_tensor(
                    _segments.open_named(name, capacity))
        n = tensor.numel()
        return [self._slots[(k, capacity)]._reinterpret(tensor.dtype, (n,), (1,), 0)
                for k in range(self.world_size)]


_group: ProcessGroup | None = None


def init_process_group(group: ProcessGroup, rank: int) -> None:
    """Makes ``group`` this process's default group, as rank ``rank``."""
    global _group
    if not 0 <= rank < group.world_size:
        raise ValueError(f"init_process_group: rank must be in [0, {group.world_size}), got {rank}")
    group.rank = rank
    _group = group


def destroy_process_group() -> None:
    global _group
    _group = None


def _default(group, what: str) -> ProcessGroup:
    group = group or _group
    if group is None:
        raise RuntimeError(f"{what}: no process group; call init_process_group(group, rank) first")
    return group


def is_initialized() -> bool:
    return _group is not None


def get_rank(group: ProcessGroup | None = None) -> int:
    return _default(group, "get_rank").rank


def get_world_size(group: ProcessGroup | None = None) -> int:
    return _default(group, "get_world_size").world_size


def all_reduce(tensor, op: str = ReduceOp.SUM, group: ProcessGroup | None = None) -> None:
    """``tensor`` becomes the reduction over the group's ranks (in place)."""
    _default(group, "all_reduce").all_reduce(tensor, op)


def broadcast(tensor, src: int, group: ProcessGroup | None = None) -> None:
    """``tensor`` becomes rank ``src``'s (in place)."""
    _default(group, "broadcast").broadcast(tensor, src)


def barrier(group: ProcessGroup | None = None) -> None:
    """Waits until every rank of the group has called ``barrier``."""
    _default(group, "barrier").barrier()
