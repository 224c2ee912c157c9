"""``spawn``: run a function in N fresh processes and join them, with the first failure (its
exception and traceback) raised in the parent and the other processes terminated."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import tempfile
import traceback


class ProcessException(Exception):
    """A spawned process failed: ``error_index`` (its index) and ``pid``."""

    def __init__(self, msg: str, error_index: int, pid: int):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """The process raised an exception; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """The process exited with a non-zero code or was killed by a signal."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn, i, args, error_file):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent terminated us
    except Exception:
        with open(error_file, "wb") as f:
            pickle.dump(traceback.format_exc(), f)
        raise SystemExit(1) from None


class ProcessContext:
    """The processes of one ``spawn(..., join=False)``; ``join()`` them."""

    def __init__(self, processes, error_files):
        self.processes, self.error_files = processes, error_files
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """Waits for the processes; True once all exited successfully, False on timeout.
        Raises ``ProcessRaisedException`` / ``ProcessExitedException`` for the first that
        failed, after terminating the others."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            i = self.sentinels.pop(sentinel)
            p = self.processes[i]
            p.join()
            if p.exitcode != 0:
                failed = i
                break
        if failed is None:
            return not self.sentinels
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        for p in self.processes:
            p.join()
        self.sentinels.clear()
        p = self.processes[failed]
        error_file = self.error_files[failed]
        if os.path.exists(error_file) and os.path.getsize(error_file):
            with open(error_file, "rb") as f:
                tb = pickle.load(f)
            msg = f"\n\n-- Process {failed} terminated with the following error:\n{tb}"
            raise ProcessRaisedException(msg, failed, p.pid)
        if p.exitcode < 0:
            name = signal.Signals(-p.exitcode).name
            raise ProcessExitedException(f"process {failed} terminated with signal {name}",
                                         failed, p.pid, p.exitcode, name)
        raise ProcessExitedException(f"process {failed} terminated with exit code {p.exitcode}",
                                     failed, p.pid, p.exitcode)

    def __del__(self):
        for f in getattr(self, "error_files", ()):
            try:
                os.unlink(f)
            except OSError:
                pass


def start_processes(fn, args=(), nprocs: int = 1, join: bool = True, daemon: bool = False,
                    start_method: str = "spawn"):
    """Starts ``nprocs`` processes running ``fn(i, *args)`` (i: 0..nprocs-1) with
    ``start_method``; joins them when ``join`` (returns None), else returns their
    ``ProcessContext``."""
    if nprocs < 1:
        raise ValueError(f"start_processes: nprocs must be at least 1, got {nprocs}")
    ctx = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        fd, error_file = tempfile.mkstemp(prefix="ember_spawn_")
        os.close(fd)
        os.unlink(error_file)  # created by the child only if it fails
        p = ctx.Process(target=_wrap, args=(fn, i, args, error_file), daemon=daemon)
        p.start()
        processes.append(p)
        error_files.append(error_file)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn"):
    """``start_processes`` with the ``spawn`` start method by default (PyTorch's
    ``torch.multiprocessing.spawn``)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
