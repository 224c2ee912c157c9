"""Chrome trace JSON (the format Perfetto and chrome://tracing open), and
``tensorboard_trace_handler``, which writes one trace per profiling cycle.

Every range is a complete ("X") event: ``ts`` and ``dur`` in microseconds, ``pid`` the
process, ``tid`` the OS thread, ``cat`` ``"cpu_op"`` or ``"user_annotation"``. Ranges of one
thread nest by time, so a viewer draws each inside its parent. GPU kernels are "X" events
with ``cat`` ``"kernel"`` on their own track (``pid`` the device index, ``tid`` the stream),
each linked to the op that launched it by a flow: an ``"s"`` event at the launch on the op's
thread and an ``"f"`` event at the kernel, sharing an ``id``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from typing import Any

from ._events import DeviceType, FunctionEvent


def _us(t: float) -> float:
    return round(t, 3)  # the clock's nanoseconds, no float noise below them


def trace_events(events: Iterable[FunctionEvent], pid: int | None = None) -> list[dict]:
    """The traceEvents list of `events` (FunctionEvent objects)."""
    pid = os.getpid() if pid is None else pid
    out: list[dict[str, Any]] = []
    threads: set[int] = set()
    devices: dict[int, set[int]] = {}

    def gpu_pid(device: int) -> int:
        # the device index, as PyTorch's traces have it, unless that is this process's pid
        return device if device != pid else device + 1000

    for e in events:
        start, end = _us(e.time_range.start), _us(e.time_range.end)
        if e.device_type == DeviceType.CPU:
            threads.add(e.thread)
            args: dict[str, Any] = {"External id": e.id}
            if e.input_shapes:
                args["Input Dims"] = e.input_shapes
                args["Input type"] = e.input_types
            if e.stack:
                args["Call stack"] = ";".join(e.stack)
            if e.cpu_memory_usage or e.cuda_memory_usage:
                args["CPU Mem"] = e.cpu_memory_usage
                args["CUDA Mem"] = e.cuda_memory_usage
            out.append(
                {
                    "ph": "X",
                    "cat": e.cat,
                    "name": e.name,
                    "pid": pid,
                    "tid": e.thread,
                    "ts": start,
                    "dur": _us(end - start),
                    "args": args,
                }
            )
            continue
        devices.setdefault(e.device_index, set()).add(e.stream)
        kpid = gpu_pid(e.device_index)
        args = {"device": e.device_index, "stream": e.stream, "correlation": e.flow_id}
        if e.linked_op is not None:
            args["External id"] = e.linked_op.id
        out.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": e.name,
                "pid": kpid,
                "tid": e.stream,
                "ts": start,
                "dur": _us(end - start),
                "args": args,
            }
        )
        if e.linked_op is not None:
            flow = {"id": e.flow_id, "cat": "ac2g", "name": "ac2g"}
            out.append({"ph": "s", **flow, "pid": pid, "tid": e.thread, "ts": _us(e.launch_us)})
            out.append({"ph": "f", **flow, "pid": kpid, "tid": e.stream, "ts": start, "bp": "e"})

    def meta(kind: str, pid: int, tid: int, **args: Any) -> dict[str, Any]:
        return {"ph": "M", "name": kind, "pid": pid, "tid": tid, "args": args}

    head = [
        meta("process_name", pid, 0, name="python"),
        meta("process_sort_index", pid, 0, sort_index=0),
    ]
    head += [meta("thread_name", pid, tid, name=f"thread {tid}") for tid in sorted(threads)]
    for device, streams in sorted(devices.items()):
        kpid = gpu_pid(device)
        head.append(meta("process_name", kpid, 0, name=f"GPU {device}"))
        head.append(meta("process_sort_index", kpid, 0, sort_index=1 + device))
        head += [meta("thread_name", kpid, s, name=f"stream {s}") for s in sorted(streams)]
    return head + out


def export_chrome_trace(events: Iterable[FunctionEvent], path: str | os.PathLike) -> None:
    """Writes `events` as a Chrome trace JSON file (gzip-compressed when `path` ends in .gz),
    through a temporary file renamed into place."""
    path = os.fspath(path)
    doc = {
        "schemaVersion": 1,
        "displayTimeUnit": "ms",
        "traceName": path,
        "traceEvents": trace_events(events),
    }
    data = json.dumps(doc).encode()
    tmp = f"{path}.tmp{os.getpid()}"
    if path.endswith(".gz"):
        import gzip

        opener = gzip.open
    else:
        opener = open
    with opener(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def tensorboard_trace_handler(
    dir_name: str | os.PathLike, worker_name: str | None = None, use_gzip: bool = False
) -> Callable[[Any], None]:
    """An ``on_trace_ready`` handler that writes each cycle's trace into `dir_name` as
    ``<worker_name>.<time in ms>.pt.trace.json`` (``.gz`` with `use_gzip`); `worker_name`
    defaults to ``<hostname>_<pid>``. The directory is created when missing."""
    dir_name = os.fspath(dir_name)

    def handler(prof: Any) -> None:
        import socket
        import time

        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        file = f"{name}.{time.time_ns() // 1_000_000}.pt.trace.json"
        if use_gzip:
            file += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file))

    return handler
