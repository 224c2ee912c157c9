"""``profile`` (the context manager that records), ``record_function`` (user ranges) and
``ProfilerActivity``."""

from __future__ import annotations

import contextlib
import copy
import enum
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from .. import _C
from ._events import EventList, build_events
from ._schedule import ProfilerAction, default_schedule

# Tests on machines without a GPU set this to fake the CUDA side (every dispatched op gets a
# "kernel" timed by the host clock): the GPU columns, links and trace events can be checked.
_FAKE_GPU = False


class ProfilerActivity(enum.Enum):
    """What a profile records: ops on the host (CPU), and kernels on CUDA devices (CUDA)."""

    CPU = "cpu"
    CUDA = "cuda"


def _cuda_available() -> bool:
    if _FAKE_GPU:
        return True
    from .. import cuda

    return cuda.is_available()


def supported_activities() -> set[ProfilerActivity]:
    """The activities this machine can record: CPU, and CUDA where a GPU is available."""
    out = {ProfilerActivity.CPU}
    if _cuda_available():
        out.add(ProfilerActivity.CUDA)
    return out


class record_function(contextlib.ContextDecorator):
    """A user range named `name` on the calling thread, recorded while a profile runs (as
    ``cat == "user_annotation"``); the ops it runs nest inside it. A context manager, and a
    decorator (each call of the function is one range). Costs a call into the core when no
    profile runs. `args` is accepted for PyTorch's signature and not recorded."""

    def __init__(self, name: str, args: str | None = None) -> None:
        if not isinstance(name, str):
            raise TypeError(f"record_function: name must be a str, got {type(name).__name__}")
        self.name = name
        self.args = args
        self._handle = 0

    def __enter__(self) -> record_function:
        self._handle = _C._profiler_push_range(self.name)
        return self

    def __exit__(self, *exc: object) -> bool:
        handle, self._handle = self._handle, 0
        _C._profiler_pop_range(handle)
        return False

    def _recreate_cm(self) -> record_function:
        # as a decorator, each call gets its own range (recursion, threads)
        return copy.copy(self)


class profile:
    """Records ops, user ranges and (with ``ProfilerActivity.CUDA``) GPU kernels while the
    block runs, as PyTorch's ``torch.profiler.profile``.

    Args:
        activities: ``ProfilerActivity`` values; default: ``supported_activities()``. CUDA
            where no GPU is available warns and records the CPU only.
        schedule: ``step -> ProfilerAction`` (see ``schedule()``), advanced by ``step()``;
            default: record from start to stop.
        on_trace_ready: called with this profile at the end of each recorded cycle (the
            ``RECORD_AND_SAVE`` step of a schedule, and at stop while recording).
        record_shapes: record each op's input shapes and types.
        profile_memory: record the bytes each range allocated minus freed (host caching
            allocator; the current CUDA device's with CUDA).
        with_stack: record the Python stack where each op and range began.
        with_flops, with_modules: accepted for PyTorch's signature; not supported (a warning
            when True).

    RuntimeError when another profile is recording (profiles do not nest).
    """

    def __init__(
        self,
        *,
        activities: Iterable[ProfilerActivity] | None = None,
        schedule: Callable[[int], ProfilerAction] | None = None,
        on_trace_ready: Callable[[profile], Any] | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
    ) -> None:
        acts = supported_activities() if activities is None else set(activities)
        bad = [a for a in acts if not isinstance(a, ProfilerActivity)]
        if bad:
            raise TypeError(f"profile: activities must be ProfilerActivity values, got {bad[0]!r}")
        if ProfilerActivity.CUDA in acts and not _cuda_available():
            warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
            acts.discard(ProfilerActivity.CUDA)
        for flag, value in (("with_flops", with_flops), ("with_modules", with_modules)):
            if value:
                warnings.warn(f"profile: {flag} is not supported and is ignored", stacklevel=2)
        self.activities = acts
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)
        self.with_stack = bool(with_stack)
        self.on_trace_ready = on_trace_ready
        self.record_steps = schedule is not None
        self.schedule = schedule if schedule is not None else default_schedule
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._recording = False
        self._events: EventList | None = None
        self._step_range: record_function | None = None

    # ---- the session ----

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Enters the schedule's first step (recording now, without a schedule)."""
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self) -> None:
        """Ends the profile: results of a cycle still recording are handed over."""
        self._close_step()
        self._transit(self.current_action, None)

    def step(self) -> None:
        """Marks the end of a step (a training iteration): advances the schedule."""
        self._close_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        self._open_step()

    def _open_step(self) -> None:
        if self.record_steps and self._recording:
            self._step_range = record_function(f"ProfilerStep#{self.step_num}").__enter__()

    def _close_step(self) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    def _transit(self, prev: ProfilerAction, cur: ProfilerAction | None) -> None:
        """Runs what moving from action `prev` to `cur` (None: stopping) takes."""
        A = ProfilerAction
        recording = (A.RECORD, A.RECORD_AND_SAVE)
        if prev == A.WARMUP and cur in (A.NONE, None):
            which = "Stop profiler while in WARMUP" if cur is None else "WARMUP followed by NONE"
            warnings.warn(f"Incorrect schedule: {which}", stacklevel=3)
        if prev == A.RECORD and cur in (A.NONE, A.WARMUP):
            warnings.warn(f"Incorrect schedule: RECORD followed by {cur.name}", stacklevel=3)
            self._stop_trace()
            return
        if prev == A.RECORD_AND_SAVE or (prev == A.RECORD and cur is None):
            self._stop_trace()
            self._trace_ready()
            if cur in recording:
                self._start_trace()
            return
        if prev not in recording and cur in recording:
            self._start_trace()

    def _start_trace(self) -> None:
        _C._profiler_start(
            record_shapes=self.record_shapes,
            profile_memory=self.profile_memory,
            with_stack=self.with_stack,
            cuda=ProfilerActivity.CUDA in self.activities and not _FAKE_GPU,
            fake_gpu=ProfilerActivity.CUDA in self.activities and _FAKE_GPU,
        )
        self._recording = True

    def _stop_trace(self) -> None:
        if not self._recording:
            return
        self._recording = False
        raw = _C._profiler_stop(record_shapes=self.record_shapes, with_stack=self.with_stack)
        self._events = build_events(
            raw,
            use_device="cuda" if ProfilerActivity.CUDA in self.activities else None,
            profile_memory=self.profile_memory,
            with_stack=self.with_stack,
        )

    def _trace_ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # ---- the results of the last recorded cycle ----

    def events(self) -> EventList:
        """The events of the last recorded cycle, sorted by start time."""
        if self._events is None:
            raise RuntimeError(
                "profile.events(): no results yet; they are there once the profile stops, "
                "or in on_trace_ready"
            )
        return self._events

    def key_averages(
        self, group_by_input_shape: bool = False, group_by_stack_n: int = 0
    ) -> EventList:
        """The events grouped by name (and input shapes with `group_by_input_shape`, which
        needs ``record_shapes=True``), as an EventList of FunctionEventAvg with ``table()``."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        """Writes the last cycle's events as Chrome trace JSON (Perfetto opens it)."""
        self.events().export_chrome_trace(path)
