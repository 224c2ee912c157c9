"""The recorded events: one ``FunctionEvent`` per op call, user range or GPU kernel, and the
``EventList`` that holds a profile's events (``profile.events()``).

Times are in microseconds on the profiler's steady clock (``_C._profiler_now_ns() / 1000``);
a kernel's GPU times are mapped onto the same clock.
"""

from __future__ import annotations

import enum
from typing import Any, NamedTuple


class DeviceType(str, enum.Enum):
    """Where an event ran (it compares equal to its value: ``DeviceType.CUDA == "cuda"``)."""

    CPU = "cpu"
    CUDA = "cuda"


class Interval:
    """A time range in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start: float, end: float) -> None:
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start

    def __repr__(self) -> str:
        return f"Interval(start={self.start}, end={self.end})"


class Kernel(NamedTuple):
    """A GPU kernel an op launched: its name, device index and duration (microseconds)."""

    name: str
    device: int
    duration: float


class FunctionEvent:
    """One recorded range: an op (``cat == "cpu_op"``), a user range (``"user_annotation"``)
    or a GPU kernel (``"kernel"``, ``device_type == DeviceType.CUDA``).

    Inclusive times (``cpu_time_total``) cover the range; self times leave out the ranges
    nested in it on the same thread (``cpu_children``). An op's device time is the time of the
    kernels it launched (``kernels``), its children's included in ``device_time_total``."""

    def __init__(
        self,
        id: int,
        name: str,
        thread: int,
        start_us: float,
        end_us: float,
        *,
        cat: str = "cpu_op",
        device_type: DeviceType = DeviceType.CPU,
        device_index: int = 0,
        input_shapes: list | None = None,
        input_types: list | None = None,
        stack: list[str] | None = None,
        cpu_memory_usage: int = 0,
        cuda_memory_usage: int = 0,
    ) -> None:
        self.id = id
        self.name = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.cat = cat
        self.device_type = device_type
        self.device_index = device_index
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.input_types = input_types if input_types is not None else []
        self.stack = stack if stack is not None else []
        self.cpu_memory_usage = cpu_memory_usage
        self.cuda_memory_usage = cuda_memory_usage
        self.cpu_parent: FunctionEvent | None = None
        self.cpu_children: list[FunctionEvent] = []
        self.kernels: list[Kernel] = []
        self.count = 1
        # kernels only: the op that launched it, the stream, the launch's host time, and the
        # id linking the two in the trace (a flow)
        self.linked_op: FunctionEvent | None = None
        self.stream = 0
        self.launch_us = start_us
        self.flow_id = 0
        self._parent_id = 0

    @property
    def key(self) -> str:
        return self.name

    @property
    def is_user_annotation(self) -> bool:
        return self.cat == "user_annotation"

    @property
    def cpu_time_total(self) -> float:
        return 0.0 if self.device_type != DeviceType.CPU else self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count

    @property
    def device_time_total(self) -> float:
        if self.device_type != DeviceType.CPU:
            return self.time_range.elapsed_us()
        return sum(k.duration for k in self.kernels) + sum(
            c.device_time_total for c in self.cpu_children
        )

    @property
    def self_device_time_total(self) -> float:
        if self.device_type != DeviceType.CPU:
            return self.time_range.elapsed_us()
        return sum(k.duration for k in self.kernels)

    @property
    def device_time(self) -> float:
        return self.device_time_total / self.count

    # PyTorch's older names for the device times
    cuda_time_total = device_time_total
    self_cuda_time_total = self_device_time_total
    cuda_time = device_time

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_cuda_memory_usage(self) -> int:
        return self.cuda_memory_usage - sum(c.cuda_memory_usage for c in self.cpu_children)

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name!r} thread={self.thread} "
            f"device_type={self.device_type.value} cpu_time_total={self.cpu_time_total:.3f}us "
            f"device_time_total={self.device_time_total:.3f}us "
            f"input_shapes={self.input_shapes}>"
        )


class EventList(list):
    """A list of ``FunctionEvent`` (or, from ``key_averages()``, ``FunctionEventAvg``) with
    the views PyTorch's has: ``table()``, ``key_averages()``, ``export_chrome_trace()``."""

    def __init__(
        self,
        events: Any = (),
        *,
        use_device: str | None = None,
        profile_memory: bool = False,
        with_stack: bool = False,
    ) -> None:
        super().__init__(events)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_stack = with_stack
        # a key_averages() result grouped by input shapes / stack frames shows them in table()
        self._grouped_by_shapes = False
        self._grouped_by_stack = False

    def _like(self, events: Any) -> EventList:
        return EventList(
            events,
            use_device=self._use_device,
            profile_memory=self._profile_memory,
            with_stack=self._with_stack,
        )

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of the events' self CPU times (microseconds)."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(
        self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0
    ) -> EventList:
        """The events grouped by name (and input shapes, and the innermost ``group_by_stack_n``
        stack frames, when asked): one ``FunctionEventAvg`` per group, in first-seen order."""
        from ._averages import key_averages

        out = self._like(key_averages(self, group_by_input_shapes, group_by_stack_n))
        out._grouped_by_shapes = group_by_input_shapes
        out._grouped_by_stack = group_by_stack_n > 0
        return out

    def total_average(self):
        """One ``FunctionEventAvg`` summing every event (key ``"Total"``)."""
        from ._averages import FunctionEventAvg

        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
    ) -> str:
        """The events as a text table, PyTorch's layout (see ``ember_tensor.profiler``)."""
        from ._table import build_table

        return build_table(
            self,
            sort_by=sort_by,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            top_level_events_only=top_level_events_only,
            use_device=self._use_device,
            profile_memory=self._profile_memory,
            grouped_by_shapes=self._grouped_by_shapes,
            grouped_by_stack=self._grouped_by_stack,
        )

    def __str__(self) -> str:
        return self.table()

    def export_chrome_trace(self, path: str) -> None:
        """Writes the events as Chrome trace JSON (Perfetto, chrome://tracing); a path ending
        in ``.gz`` is gzip-compressed."""
        from ._trace import export_chrome_trace

        export_chrome_trace(self, path)


def build_events(
    raw: dict, *, use_device: str | None, profile_memory: bool, with_stack: bool
) -> EventList:
    """The EventList of ``_C._profiler_stop()``'s result: parents and children linked, each
    kernel attached to the op that launched it, everything sorted by start time."""
    by_id: dict[int, FunctionEvent] = {}
    out: list[FunctionEvent] = []
    for (
        eid,
        parent,
        name,
        cat,
        tid,
        start_ns,
        end_ns,
        _depth,
        shapes,
        types,
        cpu_mem,
        cuda_mem,
        stack,
    ) in raw["events"]:
        ev = FunctionEvent(
            eid,
            name,
            tid,
            start_ns / 1000.0,
            end_ns / 1000.0,
            cat=cat,
            input_shapes=shapes,
            input_types=types,
            stack=stack,
            cpu_memory_usage=cpu_mem,
            cuda_memory_usage=cuda_mem,
        )
        ev._parent_id = parent
        by_id[eid] = ev
        out.append(ev)
    for ev in out:
        parent = by_id.get(ev._parent_id)
        if parent is not None:  # (a parent still open when the profile stopped is left out)
            ev.cpu_parent = parent
            parent.cpu_children.append(ev)
    for kid, op_id, name, device, stream, tid, launch_ns, start_ns, end_ns in raw["kernels"]:
        k = FunctionEvent(
            kid,
            name,
            tid,
            start_ns / 1000.0,
            end_ns / 1000.0,
            cat="kernel",
            device_type=DeviceType.CUDA,
            device_index=device,
        )
        k.stream = stream
        k.launch_us = launch_ns / 1000.0
        k.flow_id = kid
        op = by_id.get(op_id)
        if op is not None:
            k.linked_op = op
            op.kernels.append(Kernel(name, device, k.time_range.elapsed_us()))
        out.append(k)
    out.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
    return EventList(
        out, use_device=use_device, profile_memory=profile_memory, with_stack=with_stack
    )
