"""When a profile records: ``ProfilerAction`` and ``schedule()``, PyTorch's step schedule."""

from __future__ import annotations

import enum
import warnings
from collections.abc import Callable


class ProfilerAction(enum.Enum):
    """What the profiler does during a step."""

    NONE = 0  # nothing
    WARMUP = 1  # ready to record, not recording (results of this phase are not kept)
    RECORD = 2  # recording
    RECORD_AND_SAVE = 3  # recording; at the end of the step, the cycle's results are handed over


def schedule(
    *,
    wait: int,
    warmup: int,
    active: int,
    repeat: int = 0,
    skip_first: int = 0,
    skip_first_wait: int = 0,
) -> Callable[[int], ProfilerAction]:
    """A schedule for ``profile(schedule=...)``: after `skip_first` steps, cycles of `wait`
    idle steps, `warmup` steps, and `active` recorded steps, the last of which hands the
    cycle's results to ``on_trace_ready``; `repeat` cycles, or unlimited when 0. With
    `skip_first_wait`, the first cycle starts at its warmup. ValueError for negative counts
    or ``active < 1``."""
    for name, value in (
        ("wait", wait),
        ("warmup", warmup),
        ("repeat", repeat),
        ("skip_first", skip_first),
        ("skip_first_wait", skip_first_wait),
    ):
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"schedule: {name} must be an int >= 0, got {value!r}")
    if not isinstance(active, int) or active < 1:
        raise ValueError(f"schedule: active must be an int >= 1, got {active!r}")
    if warmup == 0:
        warnings.warn(
            "Profiler won't be using warmup, this can skew profiler results", stacklevel=2
        )

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError(f"schedule: step must be >= 0, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait  # the first cycle starts at its warmup
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def default_schedule(step: int) -> ProfilerAction:
    """Without a schedule: record every step."""
    return ProfilerAction.RECORD
