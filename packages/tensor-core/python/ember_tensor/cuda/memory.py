"""The CUDA caching allocator: memory statistics, the summary table, the snapshot, the cache,
the per-process memory limit, and replacing the allocator with one from a shared library.

Until CUDA is initialised in the process, the queries report no memory (0, an empty dict, an
empty snapshot) and ``empty_cache()`` does nothing, as in PyTorch; the functions that change
the allocator's state for a device (``reset_peak_memory_stats``,
``set_per_process_memory_fraction``, ``mem_get_info``) initialise CUDA, and so raise without
it. The allocator's rules are described in docs/cuda.md.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from .. import _C
from . import _lazy

__all__ = [
    "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "reset_peak_memory_stats", "reset_accumulated_memory_stats",
    "reset_max_memory_allocated", "memory_stats", "memory_stats_as_nested_dict",
    "memory_summary", "memory_snapshot", "mem_get_info", "set_per_process_memory_fraction",
    "CUDAPluggableAllocator", "change_current_allocator",
]


# ------------------------------------------------------------------------ statistics


def _ordered_stats(flat: Mapping[str, Any]) -> OrderedDict[str, Any]:
    """The allocator's flat statistics, sorted by key (``memory_stats``'s order)."""
    return OrderedDict(sorted(flat.items()))


def _nested_stats(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"allocated_bytes": {"all": {"current": n, ...}, ...}, "num_ooms": n, ...}`` from
    the flat ``"allocated_bytes.all.current"`` keys."""
    nested: dict[str, Any] = {}
    for key, value in flat.items():
        *parents, leaf = key.split(".")
        node = nested
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested


def memory_stats(device: object = None) -> OrderedDict[str, Any]:
    """The caching allocator's statistics for ``device`` (default: the current device), an
    OrderedDict sorted by key. The keys are PyTorch's: ``"<stat>.<pool>.<field>"`` where
    stat is one of ``allocation``, ``segment``, ``active``, ``inactive_split``,
    ``allocated_bytes``, ``reserved_bytes``, ``active_bytes``, ``inactive_split_bytes``,
    ``requested_bytes``; pool is ``all``, ``small_pool`` or ``large_pool``; field is
    ``current``, ``peak``, ``allocated`` or ``freed``; plus the counters
    ``num_alloc_retries``, ``num_ooms``, ``num_device_alloc``, ``num_device_free`` and
    ``num_sync_all_streams``. Empty until CUDA is initialised."""
    if not _lazy.is_initialized():
        return OrderedDict()
    idx = _lazy.checked_index(device)
    return _ordered_stats(_C._cuda_memory_stats(idx))


def memory_stats_as_nested_dict(device: object = None) -> dict[str, Any]:
    """``memory_stats`` as nested dicts: ``stats["allocated_bytes"]["all"]["current"]``."""
    if not _lazy.is_initialized():
        return {}
    idx = _lazy.checked_index(device)
    return _nested_stats(_C._cuda_memory_stats(idx))


def memory_allocated(device: object = None) -> int:
    """Bytes of device memory held by tensors on ``device`` (default: the current device),
    in the allocator's 512-byte-rounded sizes. 0 until CUDA is initialised."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device: object = None) -> int:
    """The peak of ``memory_allocated`` since the start or ``reset_peak_memory_stats``."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device: object = None) -> int:
    """Bytes of device memory held by the caching allocator (in use or cached)."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device: object = None) -> int:
    """The peak of ``memory_reserved`` since the start or ``reset_peak_memory_stats``."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device: object = None) -> None:
    """Resets the ``peak`` fields of the statistics to their current values."""
    idx = _lazy.checked_index(device)
    _C._cuda_reset_peak_memory_stats(idx)


def reset_max_memory_allocated(device: object = None) -> None:
    """Same as ``reset_peak_memory_stats`` (PyTorch's older name)."""
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device: object = None) -> None:
    """Resets the ``allocated`` and ``freed`` fields and the counters (``num_ooms``, ...)."""
    idx = _lazy.checked_index(device)
    _C._cuda_reset_accumulated_memory_stats(idx)


def memory_snapshot() -> list[dict[str, Any]]:
    """Every segment the caching allocator holds, on every device: a list of dicts with
    ``device``, ``address``, ``total_size``, ``allocated_size``, ``active_size``,
    ``requested_size``, ``stream``, ``segment_type`` (``"small"`` or ``"large"``) and
    ``blocks`` (dicts with ``address``, ``size``, ``requested_size`` and ``state``:
    ``"active_allocated"``, ``"active_pending_free"`` or ``"inactive"``). Empty until CUDA is
    initialised."""
    if not _lazy.is_initialized():
        return []
    return list(_C._cuda_memory_snapshot())


def empty_cache() -> None:
    """Returns the cached device memory that no tensor uses to the device, so that other
    processes (and ``nvidia-smi``) see it free. Tensors keep their memory. A no-op until CUDA
    is initialised."""
    if _lazy.is_initialized():
        _C._cuda_empty_cache()


def mem_get_info(device: object = None) -> tuple[int, int]:
    """``(free, total)`` bytes of ``device``'s memory, as the driver reports them (the
    memory this process's allocator caches counts as used)."""
    idx = _lazy.checked_index(device)
    free, total = _C._cuda_mem_get_info(idx)
    return int(free), int(total)


def set_per_process_memory_fraction(fraction: float, device: object = None) -> None:
    """Limits the device memory this process's caching allocator may hold on ``device`` to
    ``fraction`` (a float in [0, 1]) of its total memory; an allocation beyond it raises
    ``OutOfMemoryError`` (after releasing the cache and retrying)."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    idx = _lazy.checked_index(device)
    _C._cuda_set_memory_fraction(fraction, idx)


# --------------------------------------------------------------------- the summary table


_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def _format_bytes(n: int) -> str:
    """``"512 B"``, ``"1.50 KiB"``, ``"20.00 MiB"``, ``"0.98 GiB"``: bytes exactly below 1000,
    else in the binary unit that keeps the number below 1000, with two decimals."""
    n = int(n)
    if abs(n) < 1000:
        return f"{n} B"
    value = float(n)
    for unit in _UNITS[1:]:
        value /= 1024.0
        if abs(value) < 1000.0 or unit == _UNITS[-1]:
            return f"{value:.2f} {unit}"
    raise AssertionError("unreachable")


def _format_count(n: int) -> str:
    """A count in full up to 10 digits, then with a K / M / G suffix."""
    n = int(n)
    if abs(n) < 10**10:
        return str(n)
    value, suffix = float(n), ""
    for suffix in ("K", "M", "G", "T"):  # noqa: B007  (the suffix of the last division)
        value /= 1000.0
        if abs(value) < 1000.0:
            break
    return f"{value:.2f}{suffix}"


# (row label, stat name, formatter) in the table's order
_SUMMARY_ROWS = (
    ("Allocated memory", "allocated_bytes", _format_bytes),
    ("Active memory", "active_bytes", _format_bytes),
    ("Requested memory", "requested_bytes", _format_bytes),
    ("GPU reserved memory", "reserved_bytes", _format_bytes),
    ("Non-releasable memory", "inactive_split_bytes", _format_bytes),
    ("Allocations", "allocation", _format_count),
    ("Active allocs", "active", _format_count),
    ("GPU reserved segments", "segment", _format_count),
    ("Non-releasable allocs", "inactive_split", _format_count),
)
_SUMMARY_POOLS = (("all", None), ("large_pool", "from large pool"),
                  ("small_pool", "from small pool"))
_SUMMARY_FIELDS = ("current", "peak", "allocated", "freed")
_SUMMARY_HEADERS = ("Cur Usage", "Peak Usage", "Tot Alloc", "Tot Freed")
_LABEL_WIDTH = 23
_CELL_WIDTH = 12
_TABLE_WIDTH = _LABEL_WIDTH + 4 * (_CELL_WIDTH + 1)  # inside the outer bars


def _row(label: str, cells: tuple[str, ...] | list[str]) -> str:
    return ("|" + f" {label:<{_LABEL_WIDTH - 1}}"
            + "".join(f"|{cell:>{_CELL_WIDTH - 1}} " for cell in cells) + "|")


def _format_summary(stats: Mapping[str, Any], device_label: str,
                    abbreviated: bool = False) -> str:
    """The table ``memory_summary`` prints, from a flat statistics dict (the keys of
    ``memory_stats``; missing ones count as 0). ``device_label`` goes in the title
    ("device ID 0"). ``abbreviated`` leaves out the per-pool lines."""

    def get(key: str) -> int:
        return int(stats.get(key, 0))

    thick = "|" + "=" * _TABLE_WIDTH + "|"
    thin = "|" + "-" * _TABLE_WIDTH + "|"

    def centered(text: str) -> str:
        return "|" + f"{text:^{_TABLE_WIDTH}}" + "|"

    half = _TABLE_WIDTH // 2
    counters = [
        (f"CUDA OOMs: {get('num_ooms')}", f"cudaMalloc retries: {get('num_alloc_retries')}"),
        (f"device allocs: {get('num_device_alloc')}",
         f"device frees: {get('num_device_free')}"),
    ]
    lines = [thick, centered(f"Ember CUDA memory summary, {device_label}"), thin]
    for left, right in counters:
        lines.append("|" + f"{left:^{half}}" + "|" + f"{right:^{_TABLE_WIDTH - half - 1}}"
                     + "|")
    lines += [thick, _row("Metric", _SUMMARY_HEADERS), thin]
    for i, (label, stat, fmt) in enumerate(_SUMMARY_ROWS):
        if i:
            lines.append(thin)
        for pool, pool_label in _SUMMARY_POOLS:
            if pool_label is not None and abbreviated:
                continue
            cells = [fmt(get(f"{stat}.{pool}.{field}")) for field in _SUMMARY_FIELDS]
            lines.append(_row(label if pool_label is None else f"{pool_label:>{_LABEL_WIDTH - 2}}",
                              cells))
    lines.append(thick)
    return "\n".join(lines) + "\n"


def memory_summary(device: object = None, abbreviated: bool = False) -> str:
    """A readable table of ``memory_stats(device)``: for allocated, active, requested,
    reserved and non-releasable memory, and the matching counts (allocations, active
    allocations, reserved segments, non-releasable allocations), the current value, the
    peak, and the totals allocated and freed, for both pools and (unless ``abbreviated``)
    each pool. Before CUDA is initialised every number is 0."""
    if _lazy.is_initialized():
        idx = _lazy.checked_index(device)
        stats: Mapping[str, Any] = _C._cuda_memory_stats(idx)
    else:
        idx = _lazy.index_without_init(device)
        idx = 0 if idx is None else idx
        stats = {}
    return _format_summary(stats, f"device ID {idx}", abbreviated)


# ------------------------------------------------------------- pluggable allocators


class CUDAPluggableAllocator:
    """A device allocator from a shared library, to install with
    ``change_current_allocator`` before the first CUDA allocation.

    Args:
        path_to_so_file: the shared library (loaded with ``ctypes``).
        alloc_fn_name: its function ``void* alloc(size_t size, int device, void* stream)``.
        free_fn_name: its function ``void free(void* ptr, size_t size, int device,
            void* stream)``.

    Raises ``OSError`` when the library cannot be loaded and ``AttributeError`` when it lacks
    one of the functions.
    """

    def __init__(self, path_to_so_file: str | os.PathLike[str], alloc_fn_name: str,
                 free_fn_name: str) -> None:
        import ctypes

        path = os.fspath(path_to_so_file)
        lib = ctypes.CDLL(path)
        addresses = []
        for role, name in (("allocation", alloc_fn_name), ("free", free_fn_name)):
            try:
                fn = getattr(lib, name)
            except AttributeError:
                raise AttributeError(
                    f"CUDAPluggableAllocator: {path} has no {role} function {name!r}") from None
            addresses.append(ctypes.cast(fn, ctypes.c_void_p).value)
        self._lib = lib  # keeps the library loaded for as long as the allocator may be used
        self._path = path
        self._alloc_fn_name = alloc_fn_name
        self._free_fn_name = free_fn_name
        self._alloc_address: int = addresses[0]
        self._free_address: int = addresses[1]
        self._name = f"{os.path.basename(path)}:{alloc_fn_name}/{free_fn_name}"

    def __repr__(self) -> str:
        return (f"CUDAPluggableAllocator({self._path!r}, {self._alloc_fn_name!r}, "
                f"{self._free_fn_name!r})")


_installed_allocators: list[CUDAPluggableAllocator] = []  # keeps their libraries loaded


def change_current_allocator(allocator: CUDAPluggableAllocator) -> None:
    """Makes ``allocator`` the allocator of all CUDA device memory. Only possible before the
    first CUDA allocation of the process (a ``RuntimeError`` after it); the memory
    statistics and ``empty_cache`` then no longer apply (they describe the caching
    allocator)."""
    if not isinstance(allocator, CUDAPluggableAllocator):
        raise TypeError("change_current_allocator: expected a CUDAPluggableAllocator, got "
                        f"{type(allocator).__name__}")
    if not _lazy.is_built():
        raise AssertionError(f"{_lazy.NOT_BUILT_MESSAGE}: there is no CUDA allocator to "
                             f"replace with {allocator!r}")
    _C._cuda_set_pluggable_allocator(allocator._alloc_address, allocator._free_address,
                                     allocator._name)
    _installed_allocators.append(allocator)
