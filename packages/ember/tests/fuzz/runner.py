"""The parent: runs call indices ``[0, calls)`` of a seed in ``jobs`` long-lived worker
processes (job ``j`` takes ``j, j+jobs, ...``) and watches them.

A worker that dies by a signal while in Ember is a ``crash`` at the call it was on (a
``torch-crash`` if it was in PyTorch, or if the call's PyTorch side alone crashes a fresh
interpreter and its Ember side does not: heap corruption surfaces at a later allocation);
one that stays silent for ``timeout`` seconds on one call is killed and that call is a
``hang`` (``torch-hang``); one that exits with an error of its own is a ``worker-error``.
Each time, a fresh worker resumes at the next index. With a time budget, the run stops when
it is spent and reports the calls made so far.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent.parent


@dataclass
class Finding:
    index: int
    callable: str
    kind: str
    detail: str = ""
    ember_error: str = ""
    torch_error: str = ""
    error_types: list | None = None


@dataclass
class RunResult:
    seed: int
    calls: int = 0
    elapsed: float = 0.0
    restarts: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def calls_per_second(self) -> float:
        return self.calls / self.elapsed if self.elapsed else 0.0


class _Worker:
    """One child process working through ``range(next_index, stop, step)``."""

    def __init__(self, cfg: dict, start: int):
        self.cfg = cfg
        self.next_index = start
        self.current: int | None = None
        self.phase = "E"
        self.last_event = time.monotonic()
        self.done = False
        self.buffer = b""
        self._spawn()

    def _spawn(self) -> None:
        rfd, wfd = os.pipe()
        self.stderr = tempfile.TemporaryFile()
        cmd = [
            sys.executable, "-m", "fuzz.worker", "--seed", str(self.cfg["seed"]),
            "--start", str(self.next_index), "--stop", str(self.cfg["stop"]),
            "--step", str(self.cfg["step"]), "--fd", str(wfd),
            "--memory-limit-gb", str(self.cfg["memory_limit_gb"]),
            "--calls-module", self.cfg["calls_module"],
        ]  # fmt: skip
        env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONFAULTHANDLER="1")
        env["PYTHONPATH"] = os.pathsep.join(
            [str(TESTS_DIR)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        )
        self.proc = subprocess.Popen(
            cmd,
            cwd=TESTS_DIR,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.stderr,
            pass_fds=(wfd,),
            env=env,
        )
        os.close(wfd)
        self.fd = rfd
        os.set_blocking(rfd, False)
        self.current = None
        self.last_event = time.monotonic()
        self.started_at = self.last_event

    def stderr_tail(self, n: int = 2000) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")[-n:]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def close(self) -> None:
        """Stop the child (if still running) and release its pipe and stderr file."""
        self.kill()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        self.stderr.close()

    def restart_after_current(self) -> None:
        os.close(self.fd)
        self.fd = None
        self.stderr.close()
        if self.current is None:  # died before its first call: skip nothing, count it
            self.current = self.next_index
        self.next_index = self.current + self.cfg["step"]
        if self.next_index >= self.cfg["stop"]:
            self.done = True
            return
        self._spawn()


def _handle_line(worker: _Worker, line: str, result: RunResult) -> None:
    tag, _, rest = line.partition(" ")
    worker.last_event = time.monotonic()
    if tag in ("E", "T"):
        index = int(rest)
        if index != worker.current:
            if worker.current is not None:
                result.calls += 1
            worker.current = index
        worker.phase = tag
    elif tag == "F":
        rec = json.loads(rest)
        result.findings.append(Finding(**rec))
    elif tag == "Z":
        if worker.current is not None:
            result.calls += 1
        worker.current = None
        worker.done = True


def _dead(worker: _Worker, result: RunResult, kind_if_signal: str | None = None) -> None:
    """Record why ``worker`` stopped and start the next one."""
    code = worker.proc.wait()
    index = worker.current if worker.current is not None else worker.next_index
    name = _callable_name(worker.cfg, index)
    if kind_if_signal is not None:
        kind, detail = kind_if_signal, f"no progress for {worker.cfg['timeout']} s"
    elif code < 0:
        sig = signal.Signals(-code).name
        kind = "crash" if worker.phase == "E" else "torch-crash"
        detail = f"killed by {sig}"
        if kind == "crash" and _torch_alone_crashes(worker.cfg, index):
            kind, detail = "torch-crash", f"{detail} (the torch call alone crashes, Ember's not)"
    else:
        kind, detail = "worker-error", f"exit status {code}"
    result.findings.append(Finding(index, name, kind, detail, worker.stderr_tail()))
    result.calls += 1
    result.restarts += 1
    worker.restart_after_current()


def _torch_alone_crashes(cfg: dict, index: int) -> bool:
    """Whether call ``index`` crashes when its PyTorch side runs alone in a fresh interpreter
    and its Ember side does not: PyTorch corrupting the heap is often noticed only by a later
    allocation, in Ember's phase of the call."""
    module = __import__(cfg["calls_module"], fromlist=["make_call"])
    try:
        call = module.make_call(cfg["seed"], index)

        def crashes(lib: str) -> bool:
            proc = subprocess.run([sys.executable, "-c", call.src(lib)], capture_output=True,
                                  timeout=60)
            return proc.returncode < 0

        # a corrupted heap does not always abort: several tries of each side
        return any(crashes("torch") for _ in range(5)) and not any(
            crashes("ember") for _ in range(3))
    except Exception:  # noqa: BLE001 - no confirmation: the crash stays Ember's
        return False


def _callable_name(cfg: dict, index: int) -> str:
    module = __import__(cfg["calls_module"], fromlist=["make_call"])
    try:
        return module.make_call(cfg["seed"], index).target.name
    except Exception as exc:  # the name is for the report only
        return f"<call {index}: {exc!r}>"


def run(
    seed: int,
    calls: int,
    jobs: int = 2,
    timeout: float = 10.0,
    time_budget: float | None = None,
    memory_limit_gb: float = 8.0,
    calls_module: str = "fuzz.generate",
    progress=None,
) -> RunResult:
    """Run calls ``[0, calls)`` of ``seed``; ``progress(result, elapsed)`` is called every
    couple of seconds."""
    result = RunResult(seed)
    jobs = max(1, min(jobs, calls))
    start_time = time.monotonic()
    workers = []
    for j in range(jobs):
        cfg = dict(seed=seed, stop=calls, step=jobs, timeout=timeout,
                   memory_limit_gb=memory_limit_gb, calls_module=calls_module)  # fmt: skip
        workers.append(_Worker(cfg, j))
    sel = selectors.DefaultSelector()
    for w in workers:
        sel.register(w.fd, selectors.EVENT_READ, w)
    last_progress = start_time
    startup_grace = 120.0  # importing torch and Ember on a loaded machine
    try:
        while any(not w.done for w in workers):
            now = time.monotonic()
            if time_budget is not None and now - start_time > time_budget:
                break
            for key, _ in sel.select(timeout=0.5):
                w = key.data
                try:
                    chunk = os.read(w.fd, 1 << 16)
                except BlockingIOError:
                    continue
                if chunk:
                    w.buffer += chunk
                    *lines, w.buffer = w.buffer.split(b"\n")
                    for line in lines:
                        _handle_line(w, line.decode(), result)
                    continue
                sel.unregister(w.fd)  # end of file: the worker exited
                if w.done:
                    w.close()
                    continue
                _dead(w, result)
                if not w.done:
                    sel.register(w.fd, selectors.EVENT_READ, w)
            now = time.monotonic()
            for w in workers:
                if w.done:
                    continue
                limit = timeout if w.current is not None else startup_grace
                if now - w.last_event > limit:
                    sel.unregister(w.fd)
                    w.kill()
                    hang = "hang" if w.phase == "E" else "torch-hang"
                    _dead(w, result, hang if w.current is not None else "worker-error")
                    if not w.done:
                        sel.register(w.fd, selectors.EVENT_READ, w)
            if progress is not None and now - last_progress > 2.0:
                progress(result, now - start_time)
                last_progress = now
    finally:
        for w in workers:
            if w.fd is not None or w.proc.poll() is None:
                w.close()
        sel.close()
    result.elapsed = time.monotonic() - start_time
    return result
