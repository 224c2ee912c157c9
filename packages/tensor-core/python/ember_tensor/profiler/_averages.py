"""``key_averages()``: events grouped by name (and optionally input shapes and stack), with
their times and memory summed."""

from __future__ import annotations

from collections.abc import Iterable

from ._events import DeviceType, FunctionEvent


class FunctionEventAvg:
    """The sum of the events of one group: ``count`` calls, total and self times
    (microseconds), memory (bytes); ``cpu_time`` and ``device_time`` are per-call averages."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.cuda_memory_usage = 0
        self.self_cuda_memory_usage = 0
        self.input_shapes: list | None = None
        self.stack: list[str] = []
        self.device_type = DeviceType.CPU
        self.is_user_annotation = False
        self.cpu_parent: FunctionEvent | None = None

    def add(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        if self.count == 0:  # the group's first event gives the descriptive fields
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.device_type = other.device_type
            self.is_user_annotation = other.is_user_annotation
            self.cpu_parent = other.cpu_parent
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.cuda_memory_usage += other.cuda_memory_usage
        self.self_cuda_memory_usage += other.self_cuda_memory_usage
        return self

    __iadd__ = add

    @property
    def name(self) -> str:
        return self.key

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self) -> float:
        return self.device_time_total / self.count if self.count else 0.0

    # PyTorch's older names for the device times
    @property
    def cuda_time_total(self) -> float:
        return self.device_time_total

    @property
    def self_cuda_time_total(self) -> float:
        return self.self_device_time_total

    @property
    def cuda_time(self) -> float:
        return self.device_time

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key!r} count={self.count} "
            f"self_cpu_time_total={self.self_cpu_time_total:.3f}us "
            f"cpu_time_total={self.cpu_time_total:.3f}us "
            f"device_time_total={self.device_time_total:.3f}us input_shapes={self.input_shapes}>"
        )


def key_averages(
    events: Iterable[FunctionEvent], group_by_input_shapes: bool, group_by_stack_n: int
) -> list[FunctionEventAvg]:
    """One FunctionEventAvg per (name, device type[, input shapes][, innermost stack frames])
    group, in the order the groups first appear."""
    groups: dict[tuple, FunctionEventAvg] = {}
    for e in events:
        key: tuple = (e.key, e.device_type)
        if group_by_input_shapes:
            key += (str(e.input_shapes),)
        if group_by_stack_n > 0:
            key += tuple(e.stack[:group_by_stack_n])
        avg = groups.get(key)
        if avg is None:
            avg = groups[key] = FunctionEventAvg(e.key)
        avg.add(e)
    return list(groups.values())
