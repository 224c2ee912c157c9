"""Shared-memory segments behind shared tensors, under the two sharing strategies.

A segment is a file in ``/dev/shm`` mapped with ``MAP_SHARED``:

- ``file_descriptor``: the file is unlinked as soon as it is created; the segment lives while
  a process holds its descriptor or a mapping, and moves to other processes as a descriptor
  passed over a Unix socket. Nothing can leak: the kernel frees it with its last user.
- ``file_system``: the file keeps its name (``ember_fs_<owner>_<n>``), which is what moves
  between processes. Every process that uses it holds a shared ``flock`` on it; the lock dies
  with the process, however it dies. The process that drops the last lock unlinks it, and
  the owner's cleanup daemon (``_cleanup.py``) unlinks a segment whose users were all killed.

A ``Segment`` is the storage's ``_storage_record``: it keeps the descriptor and the mapping,
and the storage keeps it for as long as the storage lives.
"""

from __future__ import annotations

import errno
import fcntl
import itertools
import mmap
import os
import secrets
import sys
import threading
import time

import numpy as np

import ember_tensor as et

SHM_DIR = "/dev/shm"
STRATEGIES = ("file_descriptor", "file_system")
_strategy = "file_descriptor"

_counter = itertools.count()
_owner: tuple[int, str] | None = None  # (pid, prefix) of this process's file_system names
_daemons: dict[str, int] = {}  # prefix -> the pid of the process that started its daemon
_lock = threading.Lock()


def get_sharing_strategy() -> str:
    return _strategy


def set_sharing_strategy(strategy: str) -> None:
    """``'file_descriptor'`` (the default) or ``'file_system'``; applies to storages shared
    from now on (a storage keeps the strategy it was shared with)."""
    global _strategy
    if strategy not in STRATEGIES:
        raise ValueError(f"set_sharing_strategy: unknown strategy {strategy!r}; expected one of "
                         f"{', '.join(map(repr, STRATEGIES))}")
    _strategy = strategy


def get_all_sharing_strategies() -> set[str]:
    return set(STRATEGIES)


def _fd_error(exc: OSError, what: str, nbytes: int) -> RuntimeError:
    if exc.errno in (errno.EMFILE, errno.ENFILE):
        return RuntimeError(
            f"ember.multiprocessing: Too many open files while {what} a tensor storage of "
            f"{nbytes} bytes: under the 'file_descriptor' sharing strategy every shared storage "
            "holds a file descriptor. Raise the limit (`ulimit -n`, or "
            "resource.setrlimit(resource.RLIMIT_NOFILE, ...)) or use the file_system strategy: "
            "ember.multiprocessing.set_sharing_strategy('file_system')")
    if exc.errno == errno.ENOSPC:
        return RuntimeError(
            f"ember.multiprocessing: {SHM_DIR} has no room for a shared segment of {nbytes} "
            f"bytes ({nbytes / 2**20:.1f} MiB) while {what} a tensor; free space there (df -h "
            f"{SHM_DIR}), or mount it larger (docker run --shm-size=...)")
    return RuntimeError(f"ember.multiprocessing: {what} a tensor storage of {nbytes} bytes "
                        f"failed: {exc}")


class Segment:
    """One shared segment (never empty): ``strategy``, ``nbytes``, ``fd`` (open while the
    segment is used here), ``name`` (file_system only) and ``mapping``."""

    __slots__ = ("strategy", "nbytes", "fd", "name", "mapping", "__weakref__")

    def __init__(self, strategy: str, nbytes: int, fd: int, name: str | None):
        self.strategy, self.nbytes, self.fd, self.name = strategy, nbytes, fd, name
        self.mapping = mmap.mmap(fd, nbytes)

    def identity(self) -> tuple[int, int]:
        """(device, inode) of the file: the same in every process that maps the segment."""
        st = os.fstat(self.fd)
        return st.st_dev, st.st_ino

    def close(self) -> None:
        """Gives up this process's use (the mapping goes with its last tensor)."""
        fd, self.fd = self.fd, -1
        if fd < 0:
            return
        try:
            # Python's mmap holds a duplicate of the descriptor, and with it the lock
            self.mapping.close()
        except BufferError:  # a tensor still uses the memory: it stays mapped
            pass
        os.close(fd)  # drops the shared lock of a file_system segment
        if self.name is not None:
            unlink_if_unused(self.name)

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass


def unlink_if_unused(name: str) -> bool:
    """Unlinks the file_system segment ``name`` when no process holds it; True if it did."""
    path = os.path.join(SHM_DIR, name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    try:
        os.unlink(path)
        return True
    except FileNotFoundError:
        return False
    finally:
        os.close(fd)


def watch(prefix: str) -> None:
    """Makes sure a cleanup daemon owned by this process sweeps ``prefix`` (started once per
    process and prefix)."""
    with _lock:
        pid = os.getpid()
        if _daemons.get(prefix) == pid:
            return
        # posix_spawn, not Popen: no handle to reap or to warn about; its own session, so
        # that it outlives this process whatever kills it. It must hold none of our
        # descriptors: a process's exit is seen as EOF on a pipe it holds.
        actions = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, flags, 0)
                   for fd, flags in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY))]
        actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _open_fds() if fd > 2]
        os.posix_spawn(sys.executable,
                       [sys.executable, "-m", "ember_mp._cleanup", prefix, str(pid)],
                       os.environ, file_actions=actions, setsid=True)
        _daemons[prefix] = pid


def _open_fds() -> list[int]:
    fds = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            os.fstat(fd)  # the listing's own descriptor is closed by now
        except OSError:
            continue
        fds.append(fd)
    return fds


def _owner_prefix() -> str:
    """This process's prefix for file_system names (a forked child gets its own)."""
    global _owner
    with _lock:
        if _owner is None or _owner[0] != os.getpid():
            _owner = (os.getpid(), f"ember_fs_{os.getpid()}_{secrets.token_hex(4)}_")
        prefix = _owner[1]
    watch(prefix)
    return prefix


def create(nbytes: int, strategy: str | None = None, name: str | None = None) -> Segment:
    """A new segment of ``nbytes`` bytes, its pages reserved now (so that a full /dev/shm is
    an error here, not a SIGBUS at the first write). ``name``: a file_system segment of that
    exact name, whose prefix the caller has ``watch``ed (the collectives' slots); else a
    fresh one under the current strategy."""
    strategy = "file_system" if name else strategy or _strategy
    final = None
    if strategy == "file_system":
        final = name or _owner_prefix() + str(next(_counter))
        path = os.path.join(SHM_DIR, final + "_tmp")
    else:
        path = os.path.join(SHM_DIR, f"ember_fd_{os.getpid()}_{secrets.token_hex(8)}")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise _fd_error(exc, "sharing", nbytes) from None
    try:
        if final is None:
            os.unlink(path)
        else:
            fcntl.flock(fd, fcntl.LOCK_SH)
        os.posix_fallocate(fd, 0, nbytes)
        if final is not None:
            os.rename(path, os.path.join(SHM_DIR, final))  # the daemon sees finished ones only
        return Segment(strategy, nbytes, fd, final)
    except OSError as exc:
        os.close(fd)
        if final is not None:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        raise _fd_error(exc, "sharing", nbytes) from None


def open_named(name: str, nbytes: int) -> Segment:
    """The file_system segment ``name`` made by another process, locked for this one."""
    try:
        fd = os.open(os.path.join(SHM_DIR, name), os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        raise RuntimeError(
            f"ember.multiprocessing: the shared segment {name!r} ({nbytes} bytes) no longer "
            "exists: the sending process dropped the tensor (or died) before it was received; "
            "keep a sent tensor alive in the sender until the receiver has it") from None
    except OSError as exc:
        raise _fd_error(exc, "receiving", nbytes) from None
    fcntl.flock(fd, fcntl.LOCK_SH)
    return Segment("file_system", nbytes, fd, name)


def adopt_fd(fd: int, nbytes: int) -> Segment:
    """A file_descriptor segment received as the descriptor ``fd`` (now owned here)."""
    try:
        return Segment("file_descriptor", nbytes, fd, None)
    except OSError as exc:
        os.close(fd)
        raise _fd_error(exc, "receiving", nbytes) from None


def base_tensor(segment: Segment):
    """A uint8 tensor over the whole segment, whose storage records the segment."""
    base = et.from_numpy(np.frombuffer(segment.mapping, dtype=np.uint8))
    base._storage_record = segment
    return base


EMPTY = "empty storage"  # the record of a shared storage of 0 bytes: nothing to map


def share(tensor) -> None:
    """The memory sharer installed into the core: moves ``tensor``'s storage into a new
    segment under the current strategy (``Tensor.share_memory_``). A no-op for a CUDA
    tensor, which is sent as a CUDA IPC handle of its device memory wherever it is."""
    if tensor.is_cuda:
        return
    if not tensor.is_cpu:
        raise RuntimeError(f"share_memory_: only CPU tensors can be shared here, got one on "
                           f"{tensor.device}")
    nbytes = tensor._storage_nbytes()
    if nbytes == 0:
        tensor._storage_record = EMPTY
        return
    segment = create(nbytes)
    tensor._adopt_storage_memory(base_tensor(segment))
    tensor._storage_record = segment


# Segments sent by name stay referenced here for KEEPALIVE seconds after their last send, so
# that a receiver finds them even when the sender drops the tensor right after sending.
KEEPALIVE = 10.0
_sent: dict[int, tuple[float, Segment]] = {}
_sent_thread: tuple[int, threading.Thread] | None = None


def keep_alive(segment: Segment) -> None:
    global _sent_thread
    with _lock:
        _sent[id(segment)] = (time.monotonic() + KEEPALIVE, segment)
        if _sent_thread is None or _sent_thread[0] != os.getpid():  # none yet, or forked
            thread = threading.Thread(target=_expire_sent, name="ember-mp-keepalive",
                                      daemon=True)
            _sent_thread = (os.getpid(), thread)
            thread.start()


def _expire_sent() -> None:
    while True:
        time.sleep(1.0)
        now = time.monotonic()
        with _lock:
            for key in [k for k, (deadline, _) in _sent.items() if deadline < now]:
                del _sent[key]
