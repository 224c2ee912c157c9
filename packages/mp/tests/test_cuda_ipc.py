"""CUDA tensors between processes (CUDA IPC handles).

Without a GPU, the logic around CUDA IPC runs on CPU tensors through fakes of the core's
export and import (``mp_helpers.fake_ipc_export`` / ``fake_ipc_import``: the "segment" is a
file_system shared-memory segment and its name the "handle"): the release slots, the
sender's keep-alive, the receiver's release, same-process receives, the warning at exit and
the fork errors. The tests marked ``cuda`` run the real thing where a GPU is present.
"""

from __future__ import annotations

import gc
import pickle
import time
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest

import ember_mp as mp
import ember_tensor as et
import mp_helpers
from ember_mp import _cuda

cuda = pytest.mark.skipif(not et.cuda.is_available(), reason="needs a CUDA device")


@pytest.fixture
def fake_ipc(monkeypatch):
    """The fakes in this process, and a fresh registry of sent tensors."""
    monkeypatch.setattr(et, "_cuda_ipc_export", mp_helpers.fake_ipc_export)
    monkeypatch.setattr(et, "_cuda_ipc_import", mp_helpers.fake_ipc_import)
    monkeypatch.setattr(_cuda, "check_usable", lambda what: None)
    monkeypatch.setattr(_cuda, "_registry", None)
    mp_helpers.FAKE_IMPORTS.clear()
    yield
    reg = _cuda._registry
    if reg is not None:  # what a test left held must not warn at exit
        for block in reg.blocks:
            block.values[:] = 0
        reg.collect()


@pytest.fixture
def foreign(monkeypatch):
    """Receives in this process as another process would: this process's own sends are not
    found (``rebuild`` is then called with another pid in the owner)."""
    monkeypatch.setattr(_cuda._Registry, "find_memory", lambda self, memory: None)


def meta_of(t):
    return (
        str(t.dtype).split(".")[1],
        tuple(t.shape),
        tuple(t.stride()),
        t.storage_offset(),
        t.requires_grad,
    )


def wait_for(condition, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


# ---- the sender keeps what it sent alive until the receiver releases it ----


def test_a_spawned_receiver_shares_memory_and_releases_its_slot(fake_ipc):
    ctx = mp.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    proc = ctx.Process(target=mp_helpers.fake_cuda_consumer, args=(q_in, q_out))
    proc.start()
    try:
        t = et.arange(6, dtype=et.float32)
        q_in.put(mp_helpers.AsCuda(t))
        assert q_out.get(timeout=60) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        assert q_out.get(timeout=60) == "written"
        assert t.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]  # the receiver's write is seen
        reg = _cuda.registry()
        (sent,) = reg.sent.values()
        assert sent.alias._is_view_of(t) and sent.nbytes == 24
        del t, sent
        gc.collect()
        assert mp.ipc_collect() == 1  # the receiver holds it: the storage stays alive
        (sent,) = reg.sent.values()
        assert sent.alias.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
        del sent
        q_in.put("drop")
        assert q_out.get(timeout=60) == "dropped"
        wait_for(lambda: mp.ipc_collect() == 0)  # released: the reference is gone
        assert reg.sent == {} and reg.blocks[0].free[-1] == 0  # its slot is free again
    finally:
        q_in.put("done")
        proc.join(60)
    assert proc.exitcode == 0


def test_each_send_takes_a_slot_set_to_one_and_a_release_frees_it(fake_ipc):
    a, b = et.ones(3), et.zeros(5)
    _, args_a = _cuda.reduce_cuda_tensor(a, meta_of(a))
    _, args_b = _cuda.reduce_cuda_tensor(b, meta_of(b))
    slot_a, slot_b = args_a[1], args_b[1]
    assert (args_a[0][2:], args_b[0][2:]) == ((0, 0), (0, 1))
    assert slot_a.tolist() == [1] and slot_b.tolist() == [1] and slot_a.dtype == et.int32
    assert mp.ipc_collect() == 2
    slot_a.zero_()  # what a receiver does when its storage dies
    assert mp.ipc_collect() == 1
    _, args_c = _cuda.reduce_cuda_tensor(a, meta_of(a))
    assert args_c[0][2:] == (0, 0)  # the freed slot is taken again
    assert mp.ipc_collect() == 2


def test_blocks_of_slots_are_added_when_full(fake_ipc, monkeypatch):
    monkeypatch.setattr(_cuda, "SLOTS", 2)
    t = et.ones(4)
    slots = [_cuda.reduce_cuda_tensor(t, meta_of(t))[1][1] for _ in range(5)]
    reg = _cuda.registry()
    assert len(reg.blocks) == 3 and mp.ipc_collect() == 5
    for s in slots:
        s.zero_()
    assert mp.ipc_collect() == 0
    assert all(sorted(b.free) == [0, 1] for b in reg.blocks)


def test_the_receivers_storage_releases_the_slot_when_it_dies(fake_ipc, foreign):
    t = et.arange(4, dtype=et.float64)
    rebuild, args = _cuda.reduce_cuda_tensor(t, meta_of(t))
    owner = (args[0][0] + 1,) + args[0][1:]  # as if received in another process
    got = rebuild(owner, *args[1:])
    assert len(mp_helpers.FAKE_IMPORTS) == 1  # mapped, not looked up
    assert got.tolist() == [0.0, 1.0, 2.0, 3.0] and got.dtype == et.float64
    view = got[1:3]
    del got
    gc.collect()
    assert args[1].tolist() == [1] and mp.ipc_collect() == 1  # a view still holds the storage
    del view
    gc.collect()
    assert args[1].tolist() == [0] and mp.ipc_collect() == 0


def test_received_in_the_sending_process_it_is_a_view_of_the_same_storage(fake_ipc):
    t = et.arange(10, dtype=et.float32)
    v = t[2:8:3]
    back = pickle.loads(ForkingPickler.dumps(mp_helpers.AsCuda(v)))
    assert mp_helpers.FAKE_IMPORTS == []  # no mapping of its own memory
    assert back._is_view_of(t) and back.tolist() == [2.0, 5.0]
    assert tuple(back.stride()) == (3,) and back.storage_offset() == 2
    assert mp.ipc_collect() == 0  # the view holds the storage itself: the slot is free


def test_at_exit_received_storages_still_alive_are_released_after_a_sync(
    fake_ipc, foreign, monkeypatch
):
    synced = []
    monkeypatch.setattr(_cuda, "_synchronize", synced.append)
    t = et.ones(4)
    rebuild, args = _cuda.reduce_cuda_tensor(t, meta_of(t))
    got = rebuild((args[0][0] + 1,) + args[0][1:], *args[1:])
    _cuda.release_at_exit()
    assert synced == [0] and args[1].tolist() == [0]  # released, though `got` lives on
    assert got.tolist() == [1.0] * 4
    del got
    gc.collect()  # and no second release


def test_at_exit_nothing_is_released_when_the_sync_fails(fake_ipc, foreign, monkeypatch):
    def broken(device):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    monkeypatch.setattr(_cuda, "_synchronize", broken)
    t = et.ones(4)
    rebuild, args = _cuda.reduce_cuda_tensor(t, meta_of(t))
    got = rebuild((args[0][0] + 1,) + args[0][1:], *args[1:])
    _cuda.release_at_exit()
    assert args[1].tolist() == [1]  # still held: the sender must not reuse the memory
    del got
    gc.collect()
    assert args[1].tolist() == [0]


def test_a_forked_child_never_releases_what_its_parent_received(fake_ipc, foreign, monkeypatch):
    monkeypatch.setattr(_cuda, "_synchronize", lambda device: None)
    t = et.ones(4)
    rebuild, args = _cuda.reduce_cuda_tensor(t, meta_of(t))
    held = [rebuild((args[0][0] + 1,) + args[0][1:], *args[1:])]

    def child():
        held.clear()  # the inherited tensor dies here...
        gc.collect()
        _cuda.release_at_exit()  # ...and the child exits

    proc = mp.get_context("fork").Process(target=child)
    proc.start()
    proc.join(30)
    assert proc.exitcode == 0
    assert args[1].tolist() == [1]  # the parent still holds it
    held.clear()
    gc.collect()
    assert args[1].tolist() == [0]


def test_a_tensor_forwarded_back_to_its_sender_is_a_view_of_its_storage(fake_ipc):
    t = et.arange(5, dtype=et.float32)
    rebuild, args = _cuda.reduce_cuda_tensor(t, meta_of(t))  # received by a forwarder...
    forwarder_slot = et.ones(1, dtype=et.int32)
    owner = (args[0][0] + 1, "forwarder", 0, 0)  # ...which sends it back under its own slot
    back = rebuild(owner, forwarder_slot, *args[2:])
    assert mp_helpers.FAKE_IMPORTS == [] and back._is_view_of(t)
    assert forwarder_slot.tolist() == [0]  # the forwarder may drop its copy
    assert mp.ipc_collect() == 1  # until it does, this process keeps its own send held


def test_geometry_dtype_and_requires_grad_travel(fake_ipc, foreign):
    t = et.arange(24, dtype=et.int64).reshape(4, 6).t()
    rebuild, args = _cuda.reduce_cuda_tensor(t, meta_of(t))
    got = rebuild((args[0][0] + 1,) + args[0][1:], *args[1:])
    assert got.dtype == et.int64 and tuple(got.shape) == (6, 4) and tuple(got.stride()) == (1, 6)
    np.testing.assert_array_equal(got.numpy(), t.numpy())
    pytest.importorskip("ember_autograd")
    leaf = et.ones(3).requires_grad_()
    rebuild, args = _cuda.reduce_cuda_tensor(leaf, meta_of(leaf))
    assert rebuild((args[0][0] + 1,) + args[0][1:], *args[1:]).requires_grad


def test_a_sender_exiting_while_tensors_are_held_warns(fake_ipc):
    t = et.ones(256)
    _cuda.reduce_cuda_tensor(t, meta_of(t))
    with pytest.warns(
        RuntimeWarning,
        match=r"exiting while other processes still hold 1 CUDA "
        r"tensor it sent \(1024 bytes of storage\)",
    ):
        _cuda.warn_if_held()


def test_nothing_held_nothing_to_warn(fake_ipc):
    t = et.ones(3)
    _, args = _cuda.reduce_cuda_tensor(t, meta_of(t))
    args[1].zero_()
    _cuda.warn_if_held()  # warnings are errors in this suite


def test_a_forked_child_starts_with_no_sent_tensors(fake_ipc):
    t = et.ones(3)
    _cuda.reduce_cuda_tensor(t, meta_of(t))
    ctx = mp.get_context("fork")
    q = ctx.SimpleQueue()
    proc = ctx.Process(target=_report_held, args=(q,))
    proc.start()
    assert q.get() == (0, 0)
    proc.join(30)
    assert proc.exitcode == 0 and mp.ipc_collect() == 1


def _report_held(q):
    q.put((mp.ipc_collect(), len(_cuda.registry().sent)))


def test_ipc_collect_is_public():
    assert "ipc_collect" in mp.__all__ and mp.ipc_collect is _cuda.ipc_collect


# ---- errors ----


def test_a_child_forked_after_cuda_init_is_told_to_use_spawn(monkeypatch):
    from ember_tensor.cuda import _lazy

    t = et.ones(2)
    monkeypatch.setattr(_lazy, "_in_bad_fork", True)
    with pytest.raises(
        RuntimeError,
        match=r"cannot send a CUDA tensor in a process forked after "
        r"CUDA was initialised.*'spawn'",
    ):
        _cuda.reduce_cuda_tensor(t, meta_of(t))
    with pytest.raises(RuntimeError, match=r"cannot receive a CUDA tensor in a process forked"):
        _cuda.rebuild_cuda_tensor((1, "x", 0, 0), t, 0, b"", 0, 0, 0, b"", *meta_of(t))


def test_the_cores_fork_error_becomes_the_spawn_error(monkeypatch):
    from ember_tensor.cuda import _lazy

    def forked():
        raise RuntimeError("CUDA was initialised in the parent process before fork()")

    monkeypatch.setattr(_lazy, "_in_bad_fork", False)
    monkeypatch.setattr(_lazy, "raw_device_count", forked)
    with pytest.raises(RuntimeError, match=r"multiprocessing.set_start_method\('spawn'\)"):
        _cuda.check_usable("receive")
    monkeypatch.setattr(_lazy, "raw_device_count", lambda: 0)
    _cuda.check_usable("receive")  # no CUDA, no fork: nothing to say


def test_the_core_entry_points_without_a_device_are_clear_errors():
    if et.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(RuntimeError, match="CUDA is not available: "):
        et._cuda_ipc_import(0, b"\0" * 64, 2 << 20, 0, 512)
    with pytest.raises(
        RuntimeError, match="_cuda_ipc_export: expected a cuda tensor, got one on cpu"
    ):
        et._cuda_ipc_export(et.ones(2))


def test_cpu_tensors_still_go_through_shared_memory():
    back = pickle.loads(ForkingPickler.dumps(et.ones(3)))
    assert back.is_shared() and back.tolist() == [1.0, 1.0, 1.0]


# ---- the real thing, on a GPU ----


@pytest.fixture
def spawned_consumer():
    ctx = mp.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    proc = ctx.Process(target=mp_helpers.cuda_consumer, args=(q_in, q_out))
    proc.start()
    yield q_in, q_out
    q_in.put("done")
    proc.join(60)
    assert proc.exitcode == 0


@cuda
def test_cuda_writes_are_seen_both_ways_with_offsets_in_one_segment(spawned_consumer):
    q_in, q_out = spawned_consumer
    a = et.arange(10, dtype=et.float32, device="cuda")
    b = et.full((7,), 3.0, device="cuda")  # small blocks: the same 2 MiB segment as a
    ea, eb = et._cuda_ipc_export(a), et._cuda_ipc_export(b)
    assert ea[1] == eb[1] and ea[3] != eb[3]  # one segment, two offsets
    view = a[2:8:2]
    q_in.put([a, b, view])
    assert q_out.get(timeout=120) == [list(range(10)), [3.0] * 7, [2.0, 4.0, 6.0]]
    assert q_out.get(timeout=60) == "written"
    assert a.tolist() == [-1.0] * 10 and b.tolist() == [-1.0] * 7  # the receiver's writes
    a.add_(5.0)  # and the producer's, seen by the receiver
    et.cuda.synchronize()
    q_in.put("read")
    assert q_out.get(timeout=60) == [[4.0] * 10, [-1.0] * 7, [4.0] * 3]
    q_in.put("drop")
    assert q_out.get(timeout=60) == "dropped"
    wait_for(lambda: mp.ipc_collect() == 0)


@cuda
def test_cuda_memory_outlives_the_producers_tensor_while_held(spawned_consumer):
    q_in, q_out = spawned_consumer
    t = et.full((1000,), 7.0, device="cuda")
    q_in.put([t])
    assert q_out.get(timeout=120) == [[7.0] * 1000]
    assert q_out.get(timeout=60) == "written"
    del t
    gc.collect()
    et.cuda.empty_cache()
    junk = [et.full((1000,), 9.0, device="cuda") for _ in range(64)]  # would reuse freed memory
    q_in.put("read")
    assert q_out.get(timeout=60) == [[-1.0] * 1000]
    assert mp.ipc_collect() == 1
    q_in.put("drop")
    assert q_out.get(timeout=60) == "dropped"
    wait_for(lambda: mp.ipc_collect() == 0)
    del junk


@cuda
def test_cuda_round_trip_in_one_process_shares_the_storage():
    t = et.arange(6, dtype=et.float32, device="cuda")
    back = pickle.loads(ForkingPickler.dumps(t[1:4]))
    assert back._is_view_of(t) and back.tolist() == [1.0, 2.0, 3.0]
    assert t.is_shared() and t.share_memory_() is t  # CUDA tensors need no move
    assert mp.ipc_collect() == 0


@cuda
def test_cuda_tensor_forwarded_back_is_the_senders_storage():
    ctx = mp.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    proc = ctx.Process(target=mp_helpers.echo, args=(q_in, q_out))
    proc.start()
    t = et.arange(8, dtype=et.float32, device="cuda")
    q_in.put(t[2:6])
    back = q_out.get(timeout=120)  # imported by the child, then sent on under its handle
    assert back._is_view_of(t) and back.tolist() == [2.0, 3.0, 4.0, 5.0]
    q_in.put(None)
    proc.join(60)
    assert proc.exitcode == 0
    del back
    wait_for(lambda: mp.ipc_collect() == 0)


@cuda
def test_a_forked_child_receiving_a_cuda_tensor_is_told_to_use_spawn():
    t = et.ones(4, device="cuda")  # CUDA is initialised here before the fork
    ctx = mp.get_context("fork")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    proc = ctx.Process(target=mp_helpers.forked_cuda_receiver, args=(q_in, q_out))
    proc.start()
    q_in.put(t)
    msg = q_out.get(timeout=60)
    proc.join(60)
    assert msg.startswith("RuntimeError: ember.multiprocessing: cannot receive a CUDA tensor")
    assert "'spawn'" in msg


@cuda
def test_hogwild_on_one_gpu():
    """N spawned workers run SGD on their own data straight into one shared weight tensor."""
    gen = np.random.default_rng(0)
    features, workers, n = 8, 3, 256
    true_w = gen.standard_normal((features, 1)).astype(np.float32)
    w = et.zeros(features, 1, device="cuda")
    data = []
    for _ in range(workers):
        x = gen.standard_normal((n, features)).astype(np.float32)
        data.append((et.from_numpy(x).cuda(), et.from_numpy(x @ true_w).cuda()))

    def loss() -> float:
        return sum(((x @ w - y) ** 2).mean().item() for x, y in data) / workers

    before = loss()
    ctx = mp.get_context("spawn")
    procs = [
        ctx.Process(target=mp_helpers.hogwild_cuda_worker, args=(r, w, x, y, 200, 0.05))
        for r, (x, y) in enumerate(data)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
    assert [p.exitcode for p in procs] == [0] * workers
    after = loss()
    assert after < before * 1e-3, (before, after)
    np.testing.assert_allclose(w.cpu().numpy(), true_w, atol=1e-2)
    wait_for(lambda: mp.ipc_collect() == 0)  # the workers exited: nothing is held
