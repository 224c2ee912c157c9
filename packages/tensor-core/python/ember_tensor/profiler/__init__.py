"""The profiler (``torch.profiler``'s place): which ops ran, where, for how long.

    from ember_tensor.profiler import profile, record_function, ProfilerActivity

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("forward"):
            y = (x @ w + b).relu().sum()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")  # open in https://ui.perfetto.dev

Ops appear as ``ember::<op>`` (in-place ones ``ember::<op>_``); an op that runs other ops
(a composite op, a kernel that calls ops) contains them. ``record_function`` ranges contain
the ops they run. With ``ProfilerActivity.CUDA`` on a GPU, each op's kernel is timed by a
pair of CUDA events on the current stream and linked to the op (``kernels``, the trace's
flows). While no profile runs, an op pays one relaxed atomic load for the profiler.
See docs/profiler.md.
"""

from ._averages import FunctionEventAvg
from ._events import DeviceType, EventList, FunctionEvent, Interval, Kernel
from ._profile import ProfilerActivity, profile, record_function, supported_activities
from ._schedule import ProfilerAction, schedule
from ._trace import tensorboard_trace_handler

__all__ = [
    "DeviceType",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "Interval",
    "Kernel",
    "ProfilerAction",
    "ProfilerActivity",
    "profile",
    "record_function",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]
