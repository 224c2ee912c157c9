"""The text table of ``EventList.table()``, laid out as PyTorch's: a name column, then
right-aligned columns of width 12 separated by two spaces, a dashed rule above and below,
and the self-time totals at the end."""

from __future__ import annotations

from collections.abc import Sequence

from ._events import DeviceType

# the sort_by keys: numeric attributes of FunctionEvent and FunctionEventAvg
SORT_KEYS = (
    "cpu_time_total",
    "self_cpu_time_total",
    "cpu_time",
    "device_time_total",
    "self_device_time_total",
    "device_time",
    "cuda_time_total",
    "self_cuda_time_total",
    "cuda_time",
    "cpu_memory_usage",
    "self_cpu_memory_usage",
    "cuda_memory_usage",
    "self_cuda_memory_usage",
    "count",
)


def format_time(us: float) -> str:
    """Microseconds as PyTorch prints them: ``12.345us``, ``1.234ms``, ``2.000s``."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_share(part: float, total: float) -> str:
    return "NaN" if total == 0 else f"{part * 100.0 / total:.2f}%"


def format_memory(nbytes: int) -> str:
    """Bytes as PyTorch prints them: ``512 b``, ``1.50 Kb``, ``2.00 Mb``, ``1.00 Gb``."""
    for unit, size in (("Gb", 1 << 30), ("Mb", 1 << 20), ("Kb", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} b"


def _truncate(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def build_table(
    events: Sequence,
    *,
    sort_by: str | None,
    row_limit: int,
    max_src_column_width: int,
    max_name_column_width: int,
    max_shapes_column_width: int,
    header: str | None,
    top_level_events_only: bool,
    use_device: str | None,
    profile_memory: bool,
    grouped_by_shapes: bool = False,
    grouped_by_stack: bool = False,
) -> str:
    """The table of `events` (FunctionEvent or FunctionEventAvg), sorted by the attribute
    `sort_by` (descending) when given; at most `row_limit` rows (all when negative)."""
    if not events:
        return ""
    rows = list(events)
    if sort_by is not None:
        if sort_by not in SORT_KEYS:
            raise ValueError(
                f"table: unknown sort_by {sort_by!r}; expected one of {', '.join(SORT_KEYS)}"
            )
        rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
    if top_level_events_only:
        rows = [e for e in rows if e.cpu_parent is None]
    has_device = bool(use_device) or any(e.self_device_time_total > 0 for e in events)
    has_device_mem = profile_memory and any(e.cuda_memory_usage != 0 for e in events)
    # a key_averages() grouped by input shape: the shapes are part of each row's identity
    has_shapes = grouped_by_shapes and any(e.input_shapes for e in events)
    has_stack = grouped_by_stack and any(e.stack for e in events)

    name_width = min(max(len(e.key) for e in events) + 4, max_name_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_device:
        headers += ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if has_device_mem:
            headers += ["CUDA Mem", "Self CUDA Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    aligns = ["<"] + [">"] * (len(headers) - 1)
    if has_shapes:
        shapes_width = min(
            max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_column_width
        )
        headers.append("Input Shapes")
        widths.append(shapes_width)
        aligns.append(">")
    if has_stack:
        headers.append("Source Location")
        widths.append(max_src_column_width)
        aligns.append("<")

    def line(cells: list[str], truncate: bool = True) -> str:
        # the name (and shapes, source) cells are cut to their width; numbers and headers fit
        cut = [
            _truncate(c, w) if truncate and (i == 0 or w != 12) else c
            for i, (c, w) in enumerate(zip(cells, widths))
        ]
        return "  ".join(f"{c:{a}{w}}" for c, w, a in zip(cut, widths, aligns)).rstrip() + "\n"

    rule = "  ".join("-" * w for w in widths) + "\n"
    self_cpu_total = sum(e.self_cpu_time_total for e in events)
    self_device_total = sum(
        e.self_device_time_total for e in events if e.device_type != DeviceType.CPU
    )
    if has_device and self_device_total == 0:  # no kernel rows: the ops carry the time
        self_device_total = sum(e.self_device_time_total for e in events)

    out = []
    if header:
        out.append("=" * len(rule.rstrip()) + "\n" + header + "\n")
    out += [rule, line(headers, truncate=False), rule]
    for e in rows[:row_limit] if row_limit >= 0 else rows:
        cells = [
            e.key,
            format_share(e.self_cpu_time_total, self_cpu_total),
            format_time(e.self_cpu_time_total),
            format_share(e.cpu_time_total, self_cpu_total),
            format_time(e.cpu_time_total),
            format_time(e.cpu_time),
        ]
        if has_device:
            cells += [
                format_time(e.self_device_time_total),
                format_share(e.self_device_time_total, self_device_total),
                format_time(e.device_time_total),
                format_time(e.device_time),
            ]
        if profile_memory:
            cells += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
            if has_device_mem:
                cells += [
                    format_memory(e.cuda_memory_usage),
                    format_memory(e.self_cuda_memory_usage),
                ]
        cells.append(str(e.count))
        if has_shapes:
            cells.append(str(e.input_shapes))
        if has_stack:
            cells.append(e.stack[0] if e.stack else "")
        out.append(line(cells))
    out.append(rule)
    out.append(f"Self CPU time total: {format_time(self_cpu_total)}\n")
    if has_device:
        out.append(f"Self CUDA time total: {format_time(self_device_total)}\n")
    return "".join(out)
