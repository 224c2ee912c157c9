"""Functions the tests run in child processes (importable under every start method)."""

from __future__ import annotations

import os
import signal
import time

import ember_tensor as et

START_METHODS = ["fork", "spawn", "forkserver"]


def shm_segments(pid: int | None = None) -> set[str]:
    """Ember's segments in /dev/shm right now (those made by process `pid` only, when
    given: other test runs may share the machine)."""
    names = {n for n in os.listdir("/dev/shm") if n.startswith("ember_")}
    return names if pid is None else {n for n in names if n.split("_")[2] == str(pid)}


def echo(q_in, q_out) -> None:
    """Sends back whatever arrives, until None."""
    while (item := q_in.get()) is not None:
        q_out.put(item)


def double_in_place(q_in, q_out) -> None:
    """Doubles each tensor received (in the shared memory) and says done."""
    while (t := q_in.get()) is not None:
        t.mul_(2)
        q_out.put("done")


def send_new(q, count: int, nbytes: int, strategy: str) -> None:
    """Sends `count` fresh tensors and waits to be killed."""
    import ember_mp

    ember_mp.set_sharing_strategy(strategy)
    for _ in range(count):
        q.put(et.ones(nbytes // 4))
    time.sleep(60)


def receive_and_hold(q_in, q_out) -> None:
    """Keeps everything received alive; reports how many, until killed."""
    held = []
    while True:
        held.append(q_in.get())
        q_out.put(len(held))


def receive_with_fd_limit(q_in, q_out, limit: int) -> None:
    """Lowers its descriptor limit, then receives until an error, which it reports."""
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
    held = []
    try:
        while True:
            held.append(q_in.get(timeout=30))
    except Exception as exc:  # noqa: BLE001  (the test reads the message)
        q_out.put(f"{type(exc).__name__}: {exc}")


def kill_self_after_send(q, nbytes: int) -> None:
    """Sends one tensor, then dies by SIGKILL."""
    import ember_mp

    ember_mp.set_sharing_strategy("file_system")
    t = et.ones(nbytes // 4)
    q.put(t)
    q.close()
    q.join_thread()  # the feeder thread has written the message (a fixed sleep can be too short)
    os.kill(os.getpid(), signal.SIGKILL)


def all_reduce_worker(rank, group, values, op, out_q) -> None:
    import ember_mp

    ember_mp.init_process_group(group, rank)
    t = et.from_numpy(values[rank].copy())
    ember_mp.all_reduce(t, op=op)
    out_q.put((rank, t.numpy().copy()))


def broadcast_worker(rank, group, values, src, out_q) -> None:
    import ember_mp

    ember_mp.init_process_group(group, rank)
    t = et.from_numpy(values[rank].copy())
    ember_mp.broadcast(t, src)
    ember_mp.barrier()
    out_q.put((rank, t.numpy().copy()))


def spawned_ok(i, path) -> None:
    with open(f"{path}/{i}", "w") as f:
        f.write(str(i * i))


def spawned_raises(i) -> None:
    if i == 1:
        raise ValueError(f"bad value in process {i}")
    time.sleep(60)  # terminated by the parent


def spawned_exits(i) -> None:
    if i == 0:
        os._exit(3)
    time.sleep(60)


def spawned_killed(i) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def send_then_close(q, done, count: int) -> None:
    """Sends `count` tensors, closes its end of the queue, and waits for the receiver."""
    for i in range(count):
        q.put(et.full((1000,), float(i)))
    q.close()
    q.join_thread()
    done.wait(60)


def send_forever(q) -> None:
    """Sends tensors until killed."""
    i = 0
    while True:
        q.put(et.full((1000,), float(i)))
        i += 1


# ---- CUDA IPC: fakes that share through CPU memory (test_cuda_ipc.py), and CUDA workers ----

FAKE_IMPORTS: list[tuple] = []  # the fake import's calls in this process


def fake_ipc_export(tensor):
    """Stands in for ember_tensor._cuda_ipc_export on a CPU tensor: the 'segment' is the
    storage moved into a file_system segment, whose name is the 'handle'."""
    import ember_mp

    if tensor._storage_record is None:
        old = ember_mp.get_sharing_strategy()
        ember_mp.set_sharing_strategy("file_system")
        try:
            tensor.share_memory_()
        finally:
            ember_mp.set_sharing_strategy(old)
    segment = tensor._storage_record
    return 0, segment.name.encode(), segment.nbytes, 0, segment.nbytes, None, b""


def fake_ipc_import(device, mem_handle, segment_size, offset, nbytes, event_handle=None):
    """Stands in for ember_tensor._cuda_ipc_import: maps the fake segment."""
    from ember_mp import _segments

    FAKE_IMPORTS.append((device, mem_handle, segment_size, offset, nbytes, event_handle))
    return _segments.base_tensor(_segments.open_named(mem_handle.decode(), segment_size))


def install_fake_ipc() -> None:
    from ember_mp import _cuda

    et._cuda_ipc_export = fake_ipc_export
    et._cuda_ipc_import = fake_ipc_import
    _cuda.check_usable = lambda what: None


class AsCuda:
    """Pickles its CPU tensor the way a CUDA tensor is pickled (through the fakes)."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __reduce__(self):
        from ember_mp import _cuda, _reductions

        t = self.tensor
        meta = (_reductions._dtype_name(t.dtype), tuple(t.shape), tuple(t.stride()),
                t.storage_offset(), t.requires_grad)
        return _cuda.reduce_cuda_tensor(t, meta)


def fake_cuda_consumer(q_in, q_out) -> None:
    """Receives a fake CUDA tensor, reports its values, adds 1 into it, holds it until told,
    then drops it and says so."""
    import gc

    install_fake_ipc()
    t = q_in.get()
    q_out.put(t.tolist())
    t.add_(1)
    q_out.put("written")
    assert q_in.get() == "drop"
    del t
    gc.collect()
    q_out.put("dropped")
    q_in.get()  # until the parent is done


def cuda_consumer(q_in, q_out) -> None:
    """Receives CUDA tensors, reports their values and writes -1 into each, then holds them
    until told to drop them."""
    import gc

    import ember_tensor.cuda

    tensors = q_in.get()
    q_out.put([t.tolist() for t in tensors])
    for t in tensors:
        t.fill_(-1.0)
    ember_tensor.cuda.synchronize()
    q_out.put("written")
    while q_in.get() != "drop":
        q_out.put([t.tolist() for t in tensors])  # "read": the values now
    del tensors, t
    gc.collect()
    q_out.put("dropped")
    q_in.get()


def forked_cuda_receiver(q_in, q_out) -> None:
    """Reports what receiving a CUDA tensor does in a forked child."""
    try:
        q_in.get(timeout=60)
        q_out.put("received")
    except Exception as exc:  # noqa: BLE001  (the test reads the message)
        q_out.put(f"{type(exc).__name__}: {exc}")


def hogwild_cuda_worker(rank, w, x, y, steps, lr) -> None:
    """Hogwild on one GPU: plain SGD on a least-squares loss over this worker's data, written
    straight into the shared weights ``w`` (no locks)."""
    for _ in range(steps):
        residual = x @ w - y
        w.sub_(lr * 2.0 / x.shape[0] * (x.t() @ residual))
