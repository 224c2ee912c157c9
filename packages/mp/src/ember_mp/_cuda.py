"""CUDA tensors across processes: CUDA IPC handles of the caching allocator's segments.

What travels (``reduce_cuda_tensor``): the IPC handle of the device segment that holds the
tensor's storage, the storage's byte offset and size in it, an interprocess event recorded on
the sender's current stream after the work queued so far, the tensor's dtype and geometry, and
a *release slot*. The receiver (``rebuild_cuda_tensor``) maps the segment (once per segment
and process), makes its current stream wait on the event, and gets a tensor over the same
device memory: writes on either side are seen by the other, as with CPU tensors.

Keep-alive. Memory a receiver uses must not be freed by the sender, whose caching allocator
would hand it to another tensor. So each send takes a slot in this process's *release
flags*, int32 CPU tensors in shared memory (``SLOTS`` flags each, made with the same
machinery as any shared tensor, and sent along as a one-element view): the sender sets the
slot to 1 and keeps a reference to the storage. The receiver's storage carries a record that
sets the slot to 0 when the storage dies, after the receiving process's queued work on the
memory has completed (the core waits for it when it closes the mapping); at exit, a receiver
releases whatever it still holds once its devices are idle. Each send, and ``ipc_collect()``,
drops the references whose slot is 0. A process that exits while others still hold what it
sent warns: the memory goes with it.

A tensor received in the process that sent it is a view of the sent storage (CUDA cannot map
a process's own memory through IPC). A received tensor can be sent on: it travels under its
original segment's handle, and the forwarding process keeps its own copy alive meanwhile;
forwarded back to the original sender, it is a view of the sender's storage again.

CUDA cannot be used in a child forked after the parent initialised it; sending or receiving
a CUDA tensor there raises an error that says to use the ``spawn`` start method.
"""

from __future__ import annotations

import atexit
import os
import secrets
import threading
import warnings
import weakref

import ember_tensor as et

SLOTS = 1024  # release flags per shared block (4 KiB)

SPAWN_MESSAGE = (
    "ember.multiprocessing: cannot {what} a CUDA tensor in a process forked after CUDA was "
    "initialised in its parent: CUDA cannot be used in such a child. Start the processes with "
    "the 'spawn' (or 'forkserver') start method: multiprocessing.set_start_method('spawn') or "
    "ember.multiprocessing.get_context('spawn')"
)


def check_usable(what: str) -> None:
    """Raises the spawn error (RuntimeError) in a child forked after CUDA was initialised.
    ``what``: "send" or "receive", for the message."""
    from ember_tensor.cuda import _lazy

    bad_fork = _lazy._in_bad_fork  # CUDA initialised from Python (ember.cuda) in the parent
    if not bad_fork:
        try:
            # the core knows when any call initialised CUDA: in a forked child its device
            # count raises (that is the only error it can raise)
            _lazy.raw_device_count()
        except RuntimeError:
            bad_fork = True
    if bad_fork:
        raise RuntimeError(SPAWN_MESSAGE.format(what=what))


# ---- the sender's side ----


class _Sent:
    """What a sender keeps while a receiver may use a storage it sent."""

    __slots__ = ("alias", "event", "nbytes", "memory")

    def __init__(self, alias, event, nbytes: int, memory: tuple):
        self.alias = alias  # a view of the sent storage: keeps it allocated
        self.event = event  # the interprocess event (ember_tensor.cuda.Event), or None
        self.nbytes = nbytes
        self.memory = memory  # (device, segment handle, offset): where the storage lies


class _Block:
    """``SLOTS`` release flags in shared memory, and which of them are free here."""

    def __init__(self):
        self.flags = et.zeros(SLOTS, dtype=et.int32).share_memory_()
        self.values = self.flags.numpy()  # a view of the same memory
        self.free = list(range(SLOTS - 1, -1, -1))  # pop() takes the lowest


class _Registry:
    """This process's sent CUDA storages and their release slots (one per process: a forked
    child starts with an empty one, the parent's references are not its own)."""

    def __init__(self):
        self.pid = os.getpid()
        self.token = secrets.token_hex(8)  # tells this registry from one of a reused pid
        self.lock = threading.Lock()
        self.blocks: list[_Block] = []
        self.sent: dict[tuple[int, int], _Sent] = {}

    def send(self, tensor, event, nbytes: int, memory: tuple):
        """Takes a slot for a send of ``tensor``'s storage (at ``memory``: device, segment
        handle, offset): (slot view, owner key)."""
        with self.lock:
            self._collect()
            block_index = next((i for i, b in enumerate(self.blocks) if b.free), None)
            if block_index is None:
                self.blocks.append(_Block())
                block_index = len(self.blocks) - 1
            block = self.blocks[block_index]
            slot = block.free.pop()
            block.values[slot] = 1
            self.sent[(block_index, slot)] = _Sent(tensor.detach(), event, nbytes, memory)
            owner = (self.pid, self.token, block_index, slot)
            return block.flags[slot : slot + 1], owner

    def lookup(self, block_index: int, slot: int) -> _Sent | None:
        with self.lock:
            return self.sent.get((block_index, slot))

    def find_memory(self, memory: tuple) -> _Sent | None:
        """A held send of the storage at ``memory`` (device, segment handle, offset)."""
        with self.lock:
            return next((s for s in self.sent.values() if s.memory == memory), None)

    def collect(self) -> int:
        with self.lock:
            return self._collect()

    def _collect(self) -> int:
        released = [key for key in self.sent if self.blocks[key[0]].values[key[1]] == 0]
        for block_index, slot in released:
            del self.sent[(block_index, slot)]  # the storage and the event go with it
            self.blocks[block_index].free.append(slot)
        return len(self.sent)

    def held(self) -> tuple[int, int]:
        """(tensors, bytes) sent and not yet released by their receivers."""
        with self.lock:
            self._collect()
            return len(self.sent), sum(s.nbytes for s in self.sent.values())


_registry: _Registry | None = None
_registry_lock = threading.Lock()


def registry() -> _Registry:
    global _registry
    with _registry_lock:
        if _registry is None or _registry.pid != os.getpid():
            _registry = _Registry()
        return _registry


def _forget_in_child() -> None:
    global _registry
    _registry = None  # the parent's references, flags and events are not this process's
    _live_received.clear()  # nor what it received


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def ipc_collect() -> int:
    """Drops this process's references to the CUDA tensors it sent that every receiver has
    released, so that the caching allocator can reuse their memory (each send does it too).
    Returns how many sent tensors other processes still hold."""
    with _registry_lock:
        reg = _registry if _registry is not None and _registry.pid == os.getpid() else None
    return reg.collect() if reg is not None else 0


def warn_if_held() -> None:
    """At exit: warns when other processes still hold CUDA tensors this process sent."""
    with _registry_lock:
        reg = _registry if _registry is not None and _registry.pid == os.getpid() else None
    if reg is None:
        return
    count, nbytes = reg.held()
    if count:
        warnings.warn(
            f"ember.multiprocessing: this process is exiting while other processes still hold "
            f"{count} CUDA tensor{'s' if count != 1 else ''} it sent ({nbytes} bytes of storage); "
            "that memory is freed with this process, so they must not use it any more. Keep a "
            "process that sends CUDA tensors alive until the receivers have dropped them "
            "(ember.multiprocessing.ipc_collect() returns how many are still held)",
            RuntimeWarning,
            stacklevel=1,
        )


atexit.register(warn_if_held)


def reduce_cuda_tensor(tensor, meta):
    """The reduction of a CUDA tensor (``meta``: dtype name, sizes, strides, storage offset,
    requires_grad), for ``_reductions.reduce_tensor``."""
    check_usable("send")
    device = tensor.device.index
    nbytes = tensor._storage_nbytes()
    if nbytes == 0:
        return rebuild_cuda_empty, (device, *meta)
    device, mem_handle, segment_size, offset, nbytes, event, event_handle = et._cuda_ipc_export(
        tensor
    )
    slot, owner = registry().send(tensor, event, nbytes, (device, mem_handle, offset))
    return rebuild_cuda_tensor, (
        owner,
        slot,
        device,
        mem_handle,
        segment_size,
        offset,
        nbytes,
        event_handle,
        *meta,
    )


# ---- the receiver's side ----


class _Received:
    """The ``_storage_record`` of a storage received through CUDA IPC: sets the sender's
    release slot to 0 when the storage dies (after the core has waited for this process's
    work on the memory and closed the mapping: the storage's own release runs first). Only
    in the process that received it: a forked child's copy is not its own."""

    __slots__ = ("slot", "previous", "device", "pid", "__weakref__")

    def __init__(self, slot, device, previous=None):
        self.slot = slot
        self.device = device
        self.previous = previous  # the storage's earlier record, kept alive with it
        self.pid = os.getpid()
        _live_received.add(self)

    def release(self) -> None:
        slot, self.slot = self.slot, None
        if slot is not None and self.pid == os.getpid():
            slot.zero_()

    def __del__(self):
        try:
            self.release()
        except Exception:  # interpreter shutdown
            pass


_live_received: weakref.WeakSet = weakref.WeakSet()


def _synchronize(device) -> None:
    import ember_tensor.cuda

    ember_tensor.cuda.synchronize(device)


def release_at_exit() -> None:
    """At exit: releases the slots of the received storages still alive, once this process's
    work on their devices has completed, so that their senders can free the memory now
    (storages alive at exit may never be freed). Nothing is released when that wait fails."""
    live = [r for r in list(_live_received) if r.slot is not None and r.pid == os.getpid()]
    if not live:
        return
    try:
        for device in {r.device for r in live}:
            _synchronize(device)
    except Exception:  # noqa: BLE001  (keep the memory held rather than race the sender)
        return
    for r in live:
        r.release()


atexit.register(release_at_exit)


def rebuild_cuda_empty(device, *meta):
    from ._reductions import _rebuild

    return _rebuild(et.empty(0, dtype=et.uint8, device=f"cuda:{device}"), *meta)


def rebuild_cuda_tensor(
    owner, slot, device, mem_handle, segment_size, offset, nbytes, event_handle, *meta
):
    from ._reductions import _rebuild

    check_usable("receive")
    pid, token, block_index, slot_index = owner
    reg = registry()
    if pid == reg.pid and token == reg.token:  # sent by this very process
        sent = reg.lookup(block_index, slot_index)
        if sent is None:
            raise RuntimeError(
                "ember.multiprocessing: a CUDA tensor this process sent came back after its "
                "release slot was freed; each pickled CUDA tensor can be received once"
            )
        if sent.event is not None:
            sent.event.wait()  # the current stream after the work queued before the send
        slot.zero_()  # this process holds the storage itself now
        return _rebuild(sent.alias, *meta)
    # memory this process sent, forwarded back by a receiver (CUDA cannot map its own)
    own = reg.find_memory((device, mem_handle, offset))
    if own is not None:
        slot.zero_()
        return _rebuild(own.alias, *meta)
    base = et._cuda_ipc_import(device, mem_handle, segment_size, offset, nbytes, event_handle)
    base._storage_record = _Received(slot, device, base._storage_record)
    return _rebuild(base, *meta)
