"""Faults: processes killed by SIGKILL (no segment left behind), descriptor exhaustion and a
full /dev/shm (clear errors), queues closed or senders killed mid-transfer (no hang)."""

from __future__ import annotations

import errno
import gc
import os
import signal
import time

import pytest

import ember_mp as mp
import ember_tensor as et
import mp_helpers
from ember_mp import _cleanup


def wait_for(predicate, timeout: float) -> float:
    """Seconds until predicate() holds; fails after `timeout`."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            pytest.fail(f"still not true after {timeout} s")
        time.sleep(0.05)
    return time.monotonic() - start


def kill(proc) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(10)
    assert proc.exitcode == -signal.SIGKILL


@pytest.fixture
def file_system():
    old = mp.get_sharing_strategy()
    mp.set_sharing_strategy("file_system")
    yield
    mp.set_sharing_strategy(old)


def test_receiver_killed_then_sender_drops(file_system):
    ctx = mp.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    holder = ctx.Process(target=mp_helpers.receive_and_hold, args=(q_in, q_out))
    holder.start()
    sent = [et.ones(1000) for _ in range(5)]
    names = {t._storage_record.name for t in [s.share_memory_() for s in sent]}
    for t in sent:
        q_in.put(t)
    q_in.put("last")  # the queue's feeder thread drops its reference to the last tensor
    for _ in range(len(sent) + 1):
        q_out.get(timeout=60)
    kill(holder)  # it held every segment
    assert names <= mp_helpers.shm_segments()
    import ember_mp._segments as segments

    segments._sent.clear()  # the keep-alive of recent sends
    del sent, t
    gc.collect()
    assert not names & mp_helpers.shm_segments()  # the last user unlinked them as it let go


def test_every_user_killed_leaves_nothing_behind():
    """The sender (owner) and the receiver are both killed: the owner's cleanup daemon
    unlinks the segments once no process holds them."""
    ctx = mp.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    holder = ctx.Process(target=mp_helpers.receive_and_hold, args=(q_in, q_out))
    sender = ctx.Process(target=mp_helpers.send_new, args=(q_in, 4, 1 << 20, "file_system"))
    holder.start()
    sender.start()
    for _ in range(4):
        q_out.get(timeout=60)
    prefix = f"ember_fs_{sender.pid}_"
    mine = {n for n in mp_helpers.shm_segments() if n.startswith(prefix)}
    assert len(mine) == 4
    kill(sender)
    kill(holder)
    seconds = wait_for(lambda: not any(n.startswith(prefix) for n in mp_helpers.shm_segments()), 10)
    print(f"segments unlinked {seconds:.2f} s after the last user was killed")
    assert seconds < 2 * _cleanup.INTERVAL + 1.0


def test_sender_killed_mid_transfer_is_a_clear_error(file_system):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    sender = ctx.Process(target=mp_helpers.kill_self_after_send, args=(q, 1 << 16))
    sender.start()
    sender.join(30)
    assert sender.exitcode == -signal.SIGKILL
    prefix = f"ember_fs_{sender.pid}_"
    wait_for(lambda: not any(n.startswith(prefix) for n in mp_helpers.shm_segments()), 10)
    with pytest.raises(RuntimeError, match=r"no longer exists: the sending process dropped "
                                           r"the tensor \(or died\)"):
        q.get(timeout=30)


def test_descriptor_exhaustion_is_an_actionable_error():
    ctx = mp.get_context("fork")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=mp_helpers.receive_with_fd_limit, args=(q_in, q_out, 64))
    child.start()
    # Shared here, not by the queue's feeder thread, which would still be making segments
    # while the next tests run (the child stops reading).
    sent = [et.ones(16).share_memory_() for _ in range(200)]
    for t in sent:
        q_in.put(t)
    message = q_out.get(timeout=60)
    child.join(30)
    q_in.cancel_join_thread()  # the child stopped reading: what is left is never delivered
    assert message.startswith("RuntimeError: ember.multiprocessing: Too many open files"), message
    assert "ulimit -n" in message and "set_sharing_strategy('file_system')" in message


@pytest.mark.parametrize("strategy", ["file_descriptor", "file_system"])
def test_full_dev_shm_names_the_size(monkeypatch, strategy):
    half_made = []

    def no_room(fd, offset, length):
        half_made.append(os.readlink(f"/proc/self/fd/{fd}").removesuffix(" (deleted)"))
        raise OSError(errno.ENOSPC, "No space left on device")

    old = mp.get_sharing_strategy()
    mp.set_sharing_strategy(strategy)
    monkeypatch.setattr(os, "posix_fallocate", no_room)
    try:
        with pytest.raises(RuntimeError, match=r"/dev/shm has no room for a shared segment of "
                                               r"4000000 bytes \(3.8 MiB\)"):
            et.ones(1_000_000).share_memory_()
    finally:
        mp.set_sharing_strategy(old)
    # The half-made file is gone. (Named by path, not by a listing of /dev/shm: another
    # test's queue feeder thread may be sharing tensors at the same moment.)
    assert half_made and half_made[0].startswith("/dev/shm/ember_")
    assert not os.path.exists(half_made[0])


def test_queue_closed_by_the_sender_after_sending():
    ctx = mp.get_context("spawn")
    q, done = ctx.Queue(), ctx.Event()
    sender = ctx.Process(target=mp_helpers.send_then_close, args=(q, done, 20))
    sender.start()
    got = [q.get(timeout=60) for _ in range(20)]
    assert [t[0].item() for t in got] == [float(i) for i in range(20)]
    done.set()
    sender.join(30)
    assert sender.exitcode == 0


def test_file_descriptor_segments_never_appear_in_dev_shm():
    """Under file_descriptor a segment's name is gone before the tensor is used: a sender
    killed mid-stream leaves nothing to clean. (What it was writing into the queue's pipe
    may be cut short, which makes Python's Queue unusable: nothing is read after the kill.)"""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    sender = ctx.Process(target=mp_helpers.send_forever, args=(q,))
    sender.start()
    q.get(timeout=60)
    kill(sender)
    assert not mp_helpers.shm_segments(sender.pid)
