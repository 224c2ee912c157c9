"""ember_tensor.cuda (ember.cuda): the Python side of CUDA support.

Three groups of tests:

- without a GPU (what CI runs): availability, the errors of the functions that need a device
  (compared with what PyTorch's CPU build raises), the memory queries' answers before CUDA is
  initialised, argument checks, the summary table's formatting from a statistics dict (and
  from the fake-device caching allocator ``_C._FakeCudaAllocator``), and
  ``CUDAPluggableAllocator`` over a tiny shared library compiled here with ``cc``;
- the Python layer over a simulated runtime: the compiled ``_C._cuda_*`` functions are
  replaced by a small Python model of two devices (``FakeRuntime``), so the lazy
  initialisation, device and stream contexts, stream lifetimes, events and the memory
  functions' wiring are tested without a GPU;
- on a GPU (``requires_cuda``: skipped where ``ember_tensor.cuda.is_available()`` is False):
  devices, streams and event timing, memory statistics after real allocations,
  ``empty_cache``, the memory fraction and out-of-memory errors.

``EMBER_CUDA_TEST_DEVICE=cpu`` (``nox -s cuda_cpu_mode``) changes nothing here: the first two
groups run everywhere, and the third is truly GPU-only (a real device's properties,
allocator statistics, streams and event timing, pinned memory), so it keeps skipping.
"""

from __future__ import annotations

import collections
import ctypes
import gc
import importlib.util
import os
import re
import shutil
import subprocess
import sys

import pytest

import ember_tensor
import ember_tensor.cuda as cuda
from ember_tensor import _C
from ember_tensor.cuda import _lazy
from ember_tensor.cuda import streams as cuda_streams
from ember_tensor.cuda.memory import _format_bytes, _format_summary, _nested_stats, _ordered_stats

pytestmark = pytest.mark.usefixtures("ember_only")

MiB = 1 << 20
NOT_BUILT = "Ember not compiled with CUDA enabled"
HAS_CUDA = cuda.is_available()
BUILT = cuda.is_built()
requires_cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device")
no_cuda = pytest.mark.skipif(HAS_CUDA, reason="tests the behaviour without a CUDA device")
FakeCudaAllocator = getattr(_C, "_FakeCudaAllocator", None)
needs_fake_allocator = pytest.mark.skipif(
    FakeCudaAllocator is None, reason="this core has no _C._FakeCudaAllocator (rebuild it)")

STAT_NAMES = ("allocation", "segment", "active", "inactive_split", "allocated_bytes",
              "reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes")
POOLS = ("all", "small_pool", "large_pool")
FIELDS = ("current", "peak", "allocated", "freed")
COUNTERS = ("num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free",
            "num_sync_all_streams")


def device_error() -> tuple[type[BaseException], str]:
    """What a function that needs a CUDA device raises on this machine (no device)."""
    if not BUILT:
        return AssertionError, NOT_BUILT
    return RuntimeError, "No CUDA device available"


def torch_cuda():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available() or torch.version.cuda is not None:
        pytest.skip("the comparison is with PyTorch's CPU build")
    return torch.cuda


# ============================================================================ without a GPU


def test_importing_does_not_initialise_cuda() -> None:
    code = ("import ember_tensor.cuda as c; import ember_tensor as e; "
            "print(c.is_initialized(), c.memory_allocated(), e.cuda is c)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout.split()
    assert out == ["False", "0", "True"]


def test_ember_cuda_is_the_cores_package() -> None:
    # in a child: importing ember here would install its autograd loader in this process,
    # which other tests of the core rule out
    if importlib.util.find_spec("ember") is None:
        pytest.skip("the ember meta-package is not installed")
    code = (
        "import ember, ember_tensor.cuda as c\n"
        "import ember.cuda, ember.cuda.memory\n"
        "from ember.cuda import Stream, memory_summary\n"
        "from ember.cuda.memory import CUDAPluggableAllocator\n"
        "print(ember.cuda is c, ember.cuda.memory is c.memory, Stream is c.Stream,\n"
        "      memory_summary is c.memory_summary,\n"
        "      CUDAPluggableAllocator is c.CUDAPluggableAllocator, c.is_initialized())\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout.split()
    assert out == ["True"] * 5 + ["False"]


def test_public_names() -> None:
    for name in cuda.__all__:
        assert hasattr(cuda, name), name
    for name in ("is_available", "device_count", "current_device", "set_device", "device",
                 "device_of", "synchronize", "get_device_name", "get_device_capability",
                 "get_device_properties", "manual_seed", "manual_seed_all", "seed",
                 "initial_seed", "is_initialized", "init", "OutOfMemoryError", "Stream",
                 "Event", "current_stream", "default_stream", "set_stream", "stream",
                 "StreamContext", "empty_cache", "memory_allocated", "max_memory_allocated",
                 "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
                 "reset_accumulated_memory_stats", "memory_stats",
                 "memory_stats_as_nested_dict", "memory_summary", "memory_snapshot",
                 "mem_get_info", "set_per_process_memory_fraction", "is_bf16_supported",
                 "get_arch_list"):
        assert name in cuda.__all__, name
    assert cuda.memory.CUDAPluggableAllocator is cuda.CUDAPluggableAllocator
    assert cuda.memory.change_current_allocator is cuda.change_current_allocator


@no_cuda
def test_not_available() -> None:
    assert cuda.is_available() is False
    assert cuda.device_count() == 0
    assert cuda.is_initialized() is False
    assert cuda.is_bf16_supported() is False
    assert cuda.get_arch_list() == []
    assert isinstance(BUILT, bool)
    assert BUILT == bool(_C._build_info().get("cuda", False))


@no_cuda
def test_not_available_like_torch() -> None:
    tc = torch_cuda()
    assert (cuda.is_available(), cuda.device_count(), cuda.is_initialized()) == (
        tc.is_available(), tc.device_count(), tc.is_initialized())
    assert cuda.is_bf16_supported() == tc.is_bf16_supported()
    assert cuda.get_arch_list() == tc.get_arch_list()


NEEDS_DEVICE = {
    # name: call; PyTorch's CPU build raises AssertionError("Torch not compiled with CUDA
    # enabled") for each of these
    "current_device": lambda m: m.current_device(),
    "init": lambda m: m.init(),
    "synchronize": lambda m: m.synchronize(),
    "get_device_name": lambda m: m.get_device_name(),
    "get_device_capability": lambda m: m.get_device_capability(),
    "get_device_properties": lambda m: m.get_device_properties(0),
    "initial_seed": lambda m: m.initial_seed(),
    "current_stream": lambda m: m.current_stream(),
    "default_stream": lambda m: m.default_stream(),
    "mem_get_info": lambda m: m.mem_get_info(),
    "set_per_process_memory_fraction": lambda m: m.set_per_process_memory_fraction(0.5),
}
# where PyTorch's CPU build fails with an AttributeError (its missing _C functions), Ember
# raises the error of any function that needs a device
NEEDS_DEVICE_EMBER_ONLY = {
    "set_device": lambda m: m.set_device(0),
    "set_device_str": lambda m: m.set_device("cuda:0"),
    "device_ctx": lambda m: m.device(0).__enter__(),
    "reset_peak_memory_stats": lambda m: m.reset_peak_memory_stats(),
    "reset_accumulated_memory_stats": lambda m: m.reset_accumulated_memory_stats(),
    "set_stream": lambda m: m.set_stream(cuda.Stream._wrap(0, 0)),
    "synchronize_index": lambda m: m.synchronize(0),
}


@no_cuda
@pytest.mark.parametrize("name", sorted(NEEDS_DEVICE))
def test_functions_needing_a_device_raise_like_torch(name: str) -> None:
    exc_type, message = device_error()
    with pytest.raises(exc_type, match=re.escape(message)):
        NEEDS_DEVICE[name](cuda)
    assert not cuda.is_initialized()
    if not BUILT:  # the same error type as PyTorch's CPU build
        tc = torch_cuda()
        with pytest.raises(AssertionError, match="not compiled with CUDA enabled"):
            NEEDS_DEVICE[name](tc)


@no_cuda
@pytest.mark.parametrize("name", sorted(NEEDS_DEVICE_EMBER_ONLY))
def test_more_functions_needing_a_device(name: str) -> None:
    exc_type, message = device_error()
    with pytest.raises(exc_type, match=re.escape(message)):
        NEEDS_DEVICE_EMBER_ONLY[name](cuda)


@no_cuda
def test_no_device_message_names_the_reason(monkeypatch) -> None:
    monkeypatch.setattr(_C, "_cuda_is_built", lambda: True, raising=False)
    monkeypatch.setattr(_C, "_cuda_device_count", lambda: 0, raising=False)
    monkeypatch.setattr(_C, "_cuda_unavailable_reason", lambda: "no NVIDIA driver found",
                        raising=False)
    assert cuda.is_built() and not cuda.is_available() and cuda.device_count() == 0
    with pytest.raises(RuntimeError, match="No CUDA device available: no NVIDIA driver found"):
        cuda.init()
    with pytest.raises(RuntimeError, match="no NVIDIA driver found"):
        cuda.Stream()  # a RuntimeError in both cases, as in PyTorch
    ev = cuda.Event()  # its device resource is made by record(), as in PyTorch
    assert ev.query() is True
    with pytest.raises(RuntimeError, match="no NVIDIA driver found"):
        ev.record()


@no_cuda
def test_memory_queries_before_initialisation_like_torch() -> None:
    assert cuda.memory_allocated() == 0
    assert cuda.max_memory_allocated() == 0
    assert cuda.memory_reserved() == 0
    assert cuda.max_memory_reserved() == 0
    assert cuda.memory_allocated(0) == 0 and cuda.memory_allocated("cuda:0") == 0
    assert cuda.memory_allocated(ember_tensor.device("cuda:1")) == 0
    stats = cuda.memory_stats()
    assert isinstance(stats, collections.OrderedDict) and stats == {}
    assert cuda.memory_stats_as_nested_dict() == {}
    assert cuda.memory_snapshot() == []
    assert cuda.empty_cache() is None
    assert not cuda.is_initialized()
    tc = torch_cuda()
    assert cuda.memory_allocated() == tc.memory_allocated()
    assert cuda.max_memory_reserved() == tc.max_memory_reserved()
    assert cuda.memory_stats() == tc.memory_stats()
    assert type(cuda.memory_stats()) is type(tc.memory_stats())
    assert cuda.memory_stats_as_nested_dict() == tc.memory_stats_as_nested_dict()


@no_cuda
def test_memory_summary_before_initialisation() -> None:
    # PyTorch's CPU build fails here with a KeyError; Ember prints the table of zeros
    text = cuda.memory_summary()
    assert "device ID 0" in text
    rows = parse_summary(text)
    assert rows and all(cell in ("0 B", "0") for cells in rows.values() for cell in cells)
    assert "device ID 1" in cuda.memory_summary(device=1)
    assert "device ID 2" in cuda.memory_summary("cuda:2", abbreviated=True)


def test_oom_error_is_a_runtime_error() -> None:
    assert issubclass(cuda.OutOfMemoryError, RuntimeError)
    assert cuda.OutOfMemoryError.__name__ == "OutOfMemoryError"
    if hasattr(_C, "OutOfMemoryError"):
        assert cuda.OutOfMemoryError is _C.OutOfMemoryError


def test_device_index_arguments() -> None:
    # no-ops and argument errors that never touch a device (PyTorch's messages)
    assert cuda.set_device(-1) is None
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda.set_device("cpu")
    with pytest.raises(ValueError, match="with a specified index"):
        cuda.set_device("cuda")
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda.device("cpu")
    with pytest.raises(ValueError, match="Expected an ember_tensor.device"):
        cuda.device(1.5)  # PyTorch accepts and ignores it
    with pytest.raises(ValueError):
        cuda.set_device(True)
    with pytest.raises((ValueError, RuntimeError)):
        cuda.device("tpu:0")
    assert cuda.device(ember_tensor.device("cuda:3")).idx == 3
    assert cuda.device(cuda.device(2)).idx == 2


@no_cuda
def test_noop_contexts_without_a_device() -> None:
    for ctx in (cuda.device(None), cuda.device(-1), cuda.device("cuda"),
                cuda.device_of(ember_tensor.zeros(2)), cuda.stream(None),
                cuda.StreamContext(None)):
        with ctx as entered:
            assert entered is ctx
    assert cuda.set_stream(None) is None
    assert not cuda.is_initialized()


@no_cuda
def test_seeding_before_initialisation_is_deferred(monkeypatch) -> None:
    monkeypatch.setattr(_lazy, "_queued_calls", [])
    monkeypatch.setattr(_lazy, "_seed_calls", {})
    assert cuda.manual_seed(1) is None
    assert cuda.manual_seed_all(2) is None
    assert cuda.seed() is None and cuda.seed_all() is None
    assert cuda.manual_seed(-1) is None  # wraps around like PyTorch's generators
    assert sorted(_lazy._seed_calls) == ["seed", "seed_all"]  # the latest of each kind
    with pytest.raises(ValueError):
        cuda.manual_seed("x")  # int("x"), as in PyTorch
    with pytest.raises(ValueError, match="Overflow"):
        cuda.manual_seed(1 << 64)
    with pytest.raises(TypeError):
        cuda.manual_seed(None)
    assert not cuda.is_initialized()


@pytest.mark.skipif(BUILT, reason="checks the build without CUDA")
def test_stream_and_event_need_a_cuda_build() -> None:
    # PyTorch's CPU build: RuntimeError for both (its dummy classes)
    for cls in (cuda.Stream, cuda.Event):
        with pytest.raises(RuntimeError, match=re.escape(NOT_BUILT)):
            cls()
    with pytest.raises(RuntimeError, match="requires CUDA support"):
        cuda.Stream(priority=-1)
    with pytest.raises(RuntimeError, match="requires CUDA support"):
        cuda.Event(enable_timing=True)
    tc = torch_cuda()
    for cls in (tc.Stream, tc.Event):
        with pytest.raises(RuntimeError):
            cls()


def test_memory_fraction_argument_errors() -> None:
    # checked before CUDA is needed, with PyTorch's messages
    for bad in (1, "0.5", None, True):
        with pytest.raises(TypeError, match="Invalid type for fraction argument, must be `float`"):
            cuda.set_per_process_memory_fraction(bad)
    for bad in (1.5, -0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=re.escape(f"Invalid fraction value: {bad}. "
                                                       "Allowed range: 0~1")):
            cuda.set_per_process_memory_fraction(bad)


# ----------------------------------------------------------------------- the summary table


def test_format_bytes() -> None:
    assert _format_bytes(0) == "0 B"
    assert _format_bytes(512) == "512 B"
    assert _format_bytes(999) == "999 B"
    assert _format_bytes(1000) == "0.98 KiB"
    assert _format_bytes(1536) == "1.50 KiB"
    assert _format_bytes(2 * MiB) == "2.00 MiB"
    assert _format_bytes(20 * MiB + 512) == "20.00 MiB"
    assert _format_bytes(999 * MiB) == "999.00 MiB"
    assert _format_bytes(1000 * MiB) == "0.98 GiB"  # never more than 3 digits before the point
    assert _format_bytes(80 << 30) == "80.00 GiB"
    assert _format_bytes(-2048) == "-2.00 KiB"
    assert _format_bytes(1 << 62) == "4096.00 PiB"


def parse_summary(text: str) -> dict[tuple[str, str], list[str]]:
    """{(row label, pool): [cur, peak, tot alloc, tot freed]} of a memory_summary table;
    pool is "all", "large_pool" or "small_pool"."""
    rows: dict[tuple[str, str], list[str]] = {}
    label = None
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) != 7 or line.startswith("|=") or line.startswith("|-"):
            continue
        name, cells = parts[1].strip(), [p.strip() for p in parts[2:6]]
        if name == "Metric":
            assert cells == ["Cur Usage", "Peak Usage", "Tot Alloc", "Tot Freed"]
            continue
        if name.startswith("from "):
            rows[(label, name.split()[1] + "_pool")] = cells
        else:
            label = name
            rows[(label, "all")] = cells
    return rows


ROWS = {  # row label -> (stat name, formatter)
    "Allocated memory": ("allocated_bytes", _format_bytes),
    "Active memory": ("active_bytes", _format_bytes),
    "Requested memory": ("requested_bytes", _format_bytes),
    "GPU reserved memory": ("reserved_bytes", _format_bytes),
    "Non-releasable memory": ("inactive_split_bytes", _format_bytes),
    "Allocations": ("allocation", str),
    "Active allocs": ("active", str),
    "GPU reserved segments": ("segment", str),
    "Non-releasable allocs": ("inactive_split", str),
}


def check_summary_matches(stats: dict, text: str, abbreviated: bool = False) -> None:
    rows = parse_summary(text)
    pools = ("all",) if abbreviated else POOLS
    assert set(rows) == {(label, pool) for label in ROWS for pool in pools}
    assert [label for label, pool in rows if pool == "all"] == list(ROWS)  # the order
    for (label, pool), cells in rows.items():
        stat, fmt = ROWS[label]
        assert cells == [fmt(stats.get(f"{stat}.{pool}.{field}", 0)) for field in FIELDS], \
            (label, pool)
    assert f"CUDA OOMs: {stats.get('num_ooms', 0)}" in text
    assert f"cudaMalloc retries: {stats.get('num_alloc_retries', 0)}" in text
    widths = {len(line) for line in text.splitlines()}
    assert len(widths) == 1, "every line of the table has the same width"


def synthetic_stats() -> dict:
    stats = {}
    for i, (stat, pool, field) in enumerate(
            (s, p, f) for s in STAT_NAMES for p in POOLS for f in FIELDS):
        scale = MiB if stat.endswith("bytes") else 1
        stats[f"{stat}.{pool}.{field}"] = (i * 7919) % 1000 * scale + i
    stats.update(num_alloc_retries=3, num_ooms=1, num_device_alloc=12, num_device_free=4,
                 num_sync_all_streams=0)
    return stats


@pytest.mark.parametrize("abbreviated", [False, True])
def test_summary_shows_the_stats_values(abbreviated: bool) -> None:
    stats = synthetic_stats()
    text = _format_summary(stats, "device ID 5", abbreviated)
    assert "Ember CUDA memory summary, device ID 5" in text
    check_summary_matches(stats, text, abbreviated)
    assert "CUDA OOMs: 1" in text and "cudaMalloc retries: 3" in text
    assert "device allocs: 12" in text and "device frees: 4" in text


def test_summary_of_missing_keys_is_zero() -> None:
    text = _format_summary({"allocated_bytes.all.current": 2 * MiB}, "device ID 0")
    rows = parse_summary(text)
    assert rows[("Allocated memory", "all")] == ["2.00 MiB", "0 B", "0 B", "0 B"]
    assert rows[("Allocations", "small_pool")] == ["0", "0", "0", "0"]


def test_stats_ordering_and_nesting() -> None:
    flat = synthetic_stats()
    shuffled = dict(reversed(list(flat.items())))
    ordered = _ordered_stats(shuffled)
    assert isinstance(ordered, collections.OrderedDict)
    assert list(ordered) == sorted(flat) and ordered == flat
    nested = _nested_stats(flat)
    peak = flat["allocated_bytes.large_pool.peak"]
    assert nested["allocated_bytes"]["large_pool"]["peak"] == peak
    assert nested["num_ooms"] == 1
    assert set(nested) == set(STAT_NAMES) | set(COUNTERS)


@needs_fake_allocator
def test_fake_allocator_stats_keys_and_order() -> None:
    fake = FakeCudaAllocator(1 << 30)
    flat = fake.memory_stats()
    expected = {f"{s}.{p}.{f}" for s in STAT_NAMES for p in POOLS for f in FIELDS}
    assert expected | set(COUNTERS) <= set(flat)
    ordered = _ordered_stats(flat)
    assert list(ordered) == sorted(flat)
    assert all(isinstance(v, int) for v in ordered.values())


@needs_fake_allocator
@pytest.mark.parametrize("abbreviated", [False, True])
def test_summary_of_the_fake_allocator(abbreviated: bool) -> None:
    fake = FakeCudaAllocator(1 << 30)
    small = fake.allocate(1000)          # small pool: one 2 MiB segment
    large = fake.allocate(3 * MiB)       # large pool: one 20 MiB segment
    tiny = fake.allocate(300)
    fake.free(tiny)
    stats = fake.memory_stats()
    text = _format_summary(stats, "device ID 0", abbreviated)
    check_summary_matches(stats, text, abbreviated)
    rows = parse_summary(text)
    assert stats["reserved_bytes.all.current"] == 22 * MiB
    assert rows[("GPU reserved memory", "all")][0] == "22.00 MiB"
    assert rows[("Allocations", "all")] == [str(stats[f"allocation.all.{f}"]) for f in FIELDS]
    assert stats["allocation.all.current"] == 2 and stats["allocation.all.freed"] == 1
    if not abbreviated:
        assert rows[("GPU reserved memory", "large_pool")][0] == "20.00 MiB"
        assert rows[("GPU reserved memory", "small_pool")][0] == "2.00 MiB"
    fake.free(small)
    fake.free(large)
    fake.empty_cache()
    after = fake.memory_stats()
    check_summary_matches(after, _format_summary(after, "device ID 0"))
    assert parse_summary(_format_summary(after, "device ID 0"))[
        ("GPU reserved memory", "all")][0] == "0 B"


# ------------------------------------------------------------------ pluggable allocators


ALLOCATOR_C = r"""
#include <stddef.h>
#include <stdlib.h>
static long calls = 0;
void* test_alloc(size_t size, int device, void* stream) {
    (void)device; (void)stream; calls++; return malloc(size);
}
void test_free(void* ptr, size_t size, int device, void* stream) {
    (void)size; (void)device; (void)stream; calls--; free(ptr);
}
long test_calls(void) { return calls; }
"""


@pytest.fixture(scope="module")
def allocator_so(tmp_path_factory) -> str:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler (cc)")
    d = tmp_path_factory.mktemp("pluggable")
    src, lib = d / "alloc.c", d / "libtestalloc.so"
    src.write_text(ALLOCATOR_C)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True,
                   capture_output=True)
    return str(lib)


def test_pluggable_allocator_loads_the_functions(allocator_so: str) -> None:
    alloc = cuda.CUDAPluggableAllocator(allocator_so, "test_alloc", "test_free")
    assert isinstance(alloc._alloc_address, int) and alloc._alloc_address
    assert isinstance(alloc._free_address, int) and alloc._free_address
    assert alloc._alloc_address != alloc._free_address
    assert "libtestalloc.so" in alloc._name and "test_alloc" in alloc._name
    # the addresses are the library's functions
    alloc_t = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p)
    free_t = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                              ctypes.c_void_p)
    ptr = alloc_t(alloc._alloc_address)(64, 0, None)
    assert ptr
    assert ctypes.CDLL(allocator_so).test_calls() == 1
    free_t(alloc._free_address)(ptr, 64, 0, None)
    assert ctypes.CDLL(allocator_so).test_calls() == 0
    assert "test_free" in repr(alloc)


def test_pluggable_allocator_errors(allocator_so: str, tmp_path) -> None:
    with pytest.raises(AttributeError, match="no allocation function 'missing_alloc'"):
        cuda.CUDAPluggableAllocator(allocator_so, "missing_alloc", "test_free")
    with pytest.raises(AttributeError, match="no free function 'missing_free'"):
        cuda.CUDAPluggableAllocator(allocator_so, "test_alloc", "missing_free")
    with pytest.raises(OSError):
        cuda.CUDAPluggableAllocator(str(tmp_path / "nonexistent.so"), "a", "b")
    with pytest.raises(TypeError, match="CUDAPluggableAllocator"):
        cuda.change_current_allocator(object())


@pytest.mark.skipif(BUILT, reason="checks the build without CUDA")
def test_change_allocator_without_cuda_build(allocator_so: str) -> None:
    alloc = cuda.CUDAPluggableAllocator(allocator_so, "test_alloc", "test_free")
    with pytest.raises(AssertionError, match=re.escape(NOT_BUILT) + ".*no CUDA allocator"):
        cuda.change_current_allocator(alloc)
    with pytest.raises(AssertionError, match=re.escape(NOT_BUILT)):
        cuda.memory.change_current_allocator(alloc)


# ================================================================ over a simulated runtime


class FakeRuntime:
    """A Python model of the compiled ``_C._cuda_*`` functions: two devices, streams as
    numbers, events that complete when told, and memory from ``_FakeCudaAllocator`` (when
    the core has it)."""

    DEVICES = [("Fake GPU A", 8, 0, 40 * (1 << 30), 108), ("Fake GPU B", 7, 5, 16 << 30, 40)]

    def __init__(self) -> None:
        self.current = 0
        self.current_streams = {0: 0, 1: 0}
        self.streams: dict[tuple[int, int], int] = {}  # (device, stream) -> priority
        self.destroyed_streams: list[tuple[int, int]] = []
        self.events: dict[int, dict] = {}
        self.destroyed_events: list[int] = []
        self.log: list[tuple] = []
        self.next_handle = 0x1000
        self.allocators = ({i: FakeCudaAllocator(1 << 30) for i in range(2)}
                           if FakeCudaAllocator is not None else None)
        self.pluggable = None

    def check(self, i: int) -> int:
        assert isinstance(i, int) and 0 <= i < len(self.DEVICES), i
        return i

    def handle(self) -> int:
        self.next_handle += 0x10
        return self.next_handle

    # ---- the _C functions
    def _cuda_is_built(self):
        return True

    def _cuda_device_count(self):
        return len(self.DEVICES)

    def _cuda_unavailable_reason(self):
        return ""

    def _cuda_current_device(self):
        return self.current

    def _cuda_set_device(self, i):
        self.current = self.check(i)

    def _cuda_device_name(self, i):
        return self.DEVICES[self.check(i)][0]

    def _cuda_device_properties(self, i):
        return self.DEVICES[self.check(i)]

    def _cuda_synchronize(self, i):
        self.log.append(("synchronize", self.check(i)))

    def _cuda_manual_seed(self, seed, i):
        self.log.append(("manual_seed", seed, self.check(i)))

    def _cuda_initial_seed(self, i):
        seeds = [e[1] for e in self.log if e[0] == "manual_seed" and e[2] == i]
        return seeds[-1] if seeds else 67280421310721

    def _cuda_current_stream(self, i):
        return self.current_streams[self.check(i)]

    def _cuda_set_stream(self, i, sid):
        assert sid == 0 or (i, sid) in self.streams, (i, sid)
        self.current_streams[self.check(i)] = sid

    def _cuda_create_stream(self, i, priority):
        sid = self.handle()
        self.streams[(self.check(i), sid)] = priority
        return sid

    def _cuda_destroy_stream(self, i, sid):
        del self.streams[(i, sid)]
        self.destroyed_streams.append((i, sid))
        self.log.append(("destroy_stream", i, sid))

    def _cuda_query_stream(self, i, sid):
        self.log.append(("query_stream", i, sid))
        return True

    def _cuda_synchronize_stream(self, i, sid):
        self.log.append(("synchronize_stream", i, sid))

    def _cuda_stream_wait_event(self, i, sid, ev):
        assert ev in self.events
        self.log.append(("stream_wait_event", i, sid, ev))

    def _cuda_create_event(self, i, enable_timing, blocking, interprocess):
        ev = self.handle()
        self.events[ev] = {"device": self.check(i), "timing": enable_timing,
                           "blocking": blocking, "interprocess": interprocess,
                           "recorded": [], "done": False}
        return ev

    def _cuda_destroy_event(self, i, ev):
        assert self.events[ev]["device"] == i
        del self.events[ev]
        self.destroyed_events.append(ev)

    def _cuda_record_event(self, i, ev, sid):
        assert self.events[ev]["device"] == i
        self.events[ev]["recorded"].append(sid)
        self.log.append(("record_event", i, ev, sid))

    def _cuda_query_event(self, ev):
        return self.events[ev]["done"]

    def _cuda_synchronize_event(self, ev):
        self.events[ev]["done"] = True

    def _cuda_elapsed_time(self, start, end):
        return 1.25

    def _cuda_memory_stats(self, i):
        if self.allocators is None:
            return synthetic_stats()
        return self.allocators[self.check(i)].memory_stats()

    def _cuda_memory_snapshot(self):
        if self.allocators is None:
            return []
        out = []
        for i, a in self.allocators.items():
            for seg in a.memory_snapshot():
                out.append(dict(seg, device=i))
        return out

    def _cuda_empty_cache(self):
        self.log.append(("empty_cache",))
        for a in (self.allocators or {}).values():
            a.empty_cache()

    def _cuda_reset_peak_memory_stats(self, i):
        self.log.append(("reset_peak", self.check(i)))
        if self.allocators is not None:
            self.allocators[i].reset_peak_memory_stats()

    def _cuda_reset_accumulated_memory_stats(self, i):
        self.log.append(("reset_accumulated", self.check(i)))
        if self.allocators is not None:
            self.allocators[i].reset_accumulated_memory_stats()

    def _cuda_set_memory_fraction(self, fraction, i):
        self.log.append(("set_memory_fraction", fraction, self.check(i)))

    def _cuda_mem_get_info(self, i):
        return (self.DEVICES[self.check(i)][3] - 4096, self.DEVICES[i][3])

    def _cuda_set_pluggable_allocator(self, alloc, free, name):
        self.pluggable = (alloc, free, name)


@pytest.fixture
def fake(monkeypatch) -> FakeRuntime:
    rt = FakeRuntime()
    for name in dir(rt):
        if name.startswith("_cuda_"):
            monkeypatch.setattr(_C, name, getattr(rt, name), raising=False)
    monkeypatch.setattr(_lazy, "_initialized", False)
    monkeypatch.setattr(_lazy, "_in_bad_fork", False)
    monkeypatch.setattr(_lazy, "_queued_calls", [])
    monkeypatch.setattr(_lazy, "_seed_calls", {})
    monkeypatch.setattr(cuda, "_properties_cache", {})
    monkeypatch.setattr(cuda_streams, "_pools", {})  # the fake's streams stay its own
    monkeypatch.setattr(cuda_streams, "_pool_next", {})
    yield rt
    gc.collect()  # Stream and Event objects of the test go while the fake is installed


def test_fake_lazy_init_runs_the_queued_seeds(fake: FakeRuntime) -> None:
    assert cuda.is_available() and cuda.device_count() == 2
    cuda.manual_seed(5)
    cuda.manual_seed(7)  # replaces the queued 5
    cuda.manual_seed_all(3)
    assert not cuda.is_initialized() and fake.log == []
    assert cuda.current_device() == 0
    assert cuda.is_initialized()
    assert fake.log == [("manual_seed", 7, 0), ("manual_seed", 3, 0), ("manual_seed", 3, 1)]
    cuda.manual_seed(11)  # now applied at once
    assert fake.log[-1] == ("manual_seed", 11, 0)
    assert cuda.initial_seed() == 11
    cuda.manual_seed(-1)
    assert fake.log[-1] == ("manual_seed", (1 << 64) - 1, 0)


def test_fake_deferred_call_error(fake: FakeRuntime, monkeypatch) -> None:
    cuda.manual_seed(1)

    def broken(seed, i):
        raise RuntimeError("seed failed")

    monkeypatch.setattr(_C, "_cuda_manual_seed", broken)
    with pytest.raises(cuda.DeferredCudaCallError, match="seed failed") as info:
        cuda.init()
    assert "originally invoked at" in str(info.value)
    assert "test_fake_deferred_call_error" in str(info.value)
    assert not cuda.is_initialized()


def test_fake_devices(fake: FakeRuntime) -> None:
    props = cuda.get_device_properties(1)
    assert (props.name, props.major, props.minor, props.total_memory,
            props.multi_processor_count) == FakeRuntime.DEVICES[1]
    assert repr(props) == ("_CudaDeviceProperties(name='Fake GPU B', major=7, minor=5, "
                           "total_memory=16384MB, multi_processor_count=40)")
    assert cuda.get_device_properties("cuda:1") == props
    assert cuda.get_device_name() == "Fake GPU A"
    assert cuda.get_device_name(ember_tensor.device("cuda:1")) == "Fake GPU B"
    assert cuda.get_device_capability(1) == (7, 5)
    with pytest.raises(AssertionError, match="Invalid device id"):
        cuda.get_device_properties(2)
    with pytest.raises(ValueError, match="Expected a cuda device"):
        cuda.get_device_properties("cpu")
    cuda.set_device(1)
    assert cuda.current_device() == 1
    assert cuda.get_device_name() == "Fake GPU B"
    with pytest.raises(RuntimeError, match="Invalid CUDA device index 2"):
        cuda.set_device(2)
    cuda.synchronize()
    cuda.synchronize("cuda:0")
    assert fake.log[-2:] == [("synchronize", 1), ("synchronize", 0)]
    assert cuda.is_bf16_supported(including_emulation=False) is False  # capability 7.5


def test_fake_device_contexts(fake: FakeRuntime) -> None:
    with cuda.device(1):
        assert cuda.current_device() == 1
        with cuda.device("cuda:0"):
            assert cuda.current_device() == 0
        with cuda.device(None), cuda.device(-1):
            assert cuda.current_device() == 1
        assert cuda.current_device() == 1
    assert cuda.current_device() == 0
    with pytest.raises(KeyError), cuda.device(1):
        raise KeyError("restored on errors too")
    assert cuda.current_device() == 0
    d = cuda.device("cuda")  # the current device
    assert d.idx == 0

    class OnDevice:
        device = ember_tensor.device("cuda:1")

    with cuda.device_of(OnDevice()):
        assert cuda.current_device() == 1
    with cuda.device_of(ember_tensor.zeros(1)):
        assert cuda.current_device() == 0


def test_fake_bf16_and_arch_list(fake: FakeRuntime, monkeypatch) -> None:
    assert cuda.is_bf16_supported()  # capability 8.0
    monkeypatch.setattr(_C, "_build_info", lambda: {"cuda": True, "cuda_archs": "80;90"})
    assert cuda.get_arch_list() == ["sm_80", "sm_90"]
    monkeypatch.setattr(_C, "_build_info", lambda: {"cuda": True, "cuda_archs": ["sm_86"]})
    assert cuda.get_arch_list() == ["sm_86"]
    monkeypatch.setattr(_C, "_build_info", lambda: {"cuda": True})
    assert cuda.get_arch_list() == []


def test_fake_streams(fake: FakeRuntime) -> None:
    default = cuda.current_stream()
    assert default == cuda.default_stream() and default.cuda_stream == 0
    assert default.device_index == 0 and str(default.device) == "cuda:0"
    s = cuda.Stream(priority=-1)
    assert fake.streams[(0, s.cuda_stream)] == -1
    assert s.priority == -1 and s != default
    assert repr(s) == f"<ember_tensor.cuda.Stream device=cuda:0 cuda_stream={s.cuda_stream:#x}>"
    assert s.__cuda_stream__() == (0, s.cuda_stream)
    assert isinstance(s._handle, int) and s.device_index == 0  # what Tensor.record_stream reads
    s1 = cuda.Stream(device=1)
    assert s1.device_index == 1 and (1, s1.cuda_stream) in fake.streams
    assert s.query() is True
    s.synchronize()
    assert fake.log[-2:] == [("query_stream", 0, s.cuda_stream),
                             ("synchronize_stream", 0, s.cuda_stream)]
    same = cuda.Stream(stream_id=s.cuda_stream, device_index=0)
    assert same == s and hash(same) == hash(s) and len({s, same, default}) == 2
    assert (s == object()) is False
    with pytest.raises(TypeError, match="priority must be an int"):
        cuda.Stream(priority="high")
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        cuda.Stream(colour="red")


def test_fake_stream_context_restores_streams_and_devices(fake: FakeRuntime) -> None:
    s0, s1 = cuda.Stream(0), cuda.Stream(1)
    with cuda.stream(s0):
        assert cuda.current_stream() == s0
        with cuda.stream(s1):  # another device: it becomes current too
            assert cuda.current_device() == 1
            assert cuda.current_stream() == s1
            assert cuda.current_stream(0) == s0
        assert cuda.current_device() == 0
        assert cuda.current_stream(1).cuda_stream == 0
        assert cuda.current_stream() == s0
    assert cuda.current_stream().cuda_stream == 0
    with s1:  # a stream is a context manager too
        assert cuda.current_device() == 1 and cuda.current_stream() == s1
    assert cuda.current_device() == 0 and fake.current_streams == {0: 0, 1: 0}
    cuda.set_stream(s1)  # set_stream switches the device as well, like PyTorch's
    assert cuda.current_device() == 1 and cuda.current_stream() == s1


def test_fake_streams_come_from_a_pool_and_are_never_destroyed(fake: FakeRuntime) -> None:
    # PyTorch's pool: 32 streams per device and priority, handed out in turn. A stream must
    # outlive its Stream objects: a block used on it (record_stream) is freed later with an
    # event recorded on it.
    first = [cuda.Stream() for _ in range(cuda_streams.POOL_SIZE)]
    handles = [s.cuda_stream for s in first]
    assert len(set(handles)) == cuda_streams.POOL_SIZE and 0 not in handles
    assert cuda.Stream().cuda_stream == handles[0]  # round robin: the pool wraps around
    high = cuda.Stream(priority=-1)
    assert high.cuda_stream not in handles and fake.streams[(0, high.cuda_stream)] == -1
    other = cuda.Stream(device=1)
    assert (1, other.cuda_stream) in fake.streams
    created = len(fake.streams)
    del first, high, other
    gc.collect()
    assert fake.destroyed_streams == []
    cuda.Stream()
    assert len(fake.streams) == created  # a pooled stream again, none created


def test_fake_events(fake: FakeRuntime) -> None:
    ev = cuda.Event()
    assert ev.query() is True and ev.cuda_event == 0 and ev.device is None
    assert repr(ev) == "<ember_tensor.cuda.Event uninitialized>"
    ev.synchronize()  # no-op before record
    assert fake.events == {}
    s = cuda.Stream(1)
    ev.record(s)
    info = fake.events[ev.cuda_event]
    assert info["device"] == 1 and info["recorded"] == [s.cuda_stream]
    assert (info["timing"], info["blocking"], info["interprocess"]) == (False, False, False)
    assert str(ev.device) == "cuda:1"
    assert ev.query() is False
    ev.synchronize()
    assert ev.query() is True
    with pytest.raises(RuntimeError, match="does not match"):
        ev.record()  # the current stream is on device 0
    ev.record(s)
    t = cuda.Event(enable_timing=True, blocking=True, interprocess=True)
    t.record()
    assert fake.events[t.cuda_event]["recorded"] == [0]
    assert fake.events[t.cuda_event]["device"] == 0
    assert fake.events[t.cuda_event]["timing"] is True
    waiting = cuda.Stream()
    t.wait(waiting)
    assert fake.log[-1] == ("stream_wait_event", 0, waiting.cuda_stream, t.cuda_event)
    handle = ev.cuda_event
    del ev
    gc.collect()
    assert handle in fake.destroyed_events


def test_fake_event_timing(fake: FakeRuntime) -> None:
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="Both events must be recorded"):
        start.elapsed_time(end)
    start.record()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) == 1.25
    plain = cuda.Event()
    plain.record()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        start.elapsed_time(plain)


def test_fake_stream_waits(fake: FakeRuntime) -> None:
    a, b = cuda.Stream(), cuda.Stream()
    ev = a.record_event()
    assert isinstance(ev, cuda.Event)
    assert fake.log[-1] == ("record_event", 0, ev.cuda_event, a.cuda_stream)
    b.wait_event(ev)
    assert fake.log[-1] == ("stream_wait_event", 0, b.cuda_stream, ev.cuda_event)
    b.wait_stream(a)
    (_, _, recorded, on), (_, _, waiting, waited) = fake.log[-2], fake.log[-1]
    assert on == a.cuda_stream and waiting == b.cuda_stream and waited == recorded
    mine = cuda.Event()
    assert a.record_event(mine) is mine
    mine.wait()  # the current stream (the default one)
    assert fake.log[-1] == ("stream_wait_event", 0, 0, mine.cuda_event)


def test_fake_memory_functions(fake: FakeRuntime) -> None:
    assert cuda.memory_allocated() == 0 and cuda.memory_stats() == {}  # not initialised yet
    cuda.empty_cache()
    assert fake.log == []
    cuda.init()
    stats = cuda.memory_stats()
    assert list(stats) == sorted(stats) and isinstance(stats, collections.OrderedDict)
    if fake.allocators is not None:
        fake.allocators[1].allocate(5000)
        assert cuda.memory_allocated(1) == 5120 and cuda.memory_allocated() == 0
        assert cuda.max_memory_allocated(1) == 5120
        assert cuda.memory_reserved(1) == 2 * MiB == cuda.max_memory_reserved("cuda:1")
        nested = cuda.memory_stats_as_nested_dict(1)
        assert nested["allocated_bytes"]["all"]["current"] == 5120
        assert nested["segment"]["small_pool"]["current"] == 1
        snapshot = cuda.memory_snapshot()
        assert [seg["device"] for seg in snapshot] == [1]
        assert snapshot[0]["segment_type"] == "small" and snapshot[0]["total_size"] == 2 * MiB
        text = cuda.memory_summary(1)
        assert "device ID 1" in text
        check_summary_matches(cuda.memory_stats(1), text)
    else:
        assert cuda.memory_allocated() == synthetic_stats()["allocated_bytes.all.current"]
        check_summary_matches(synthetic_stats(), cuda.memory_summary())
    cuda.empty_cache()
    cuda.reset_peak_memory_stats(1)
    cuda.reset_accumulated_memory_stats()
    cuda.reset_max_memory_allocated()
    cuda.set_per_process_memory_fraction(0.25, "cuda:1")
    cuda.set_per_process_memory_fraction(1.0)
    assert [e for e in fake.log if e[0] != "manual_seed"] == [
        ("empty_cache",), ("reset_peak", 1), ("reset_accumulated", 0), ("reset_peak", 0),
        ("set_memory_fraction", 0.25, 1), ("set_memory_fraction", 1.0, 0)]
    assert cuda.mem_get_info(1) == (16 * (1 << 30) - 4096, 16 * (1 << 30))
    with pytest.raises(ValueError, match="Expected a cuda device"):
        cuda.memory_allocated("cpu")
    with pytest.raises(RuntimeError, match="Invalid CUDA device index 7"):
        cuda.memory_stats(7)


def test_fake_change_current_allocator(fake: FakeRuntime, allocator_so: str) -> None:
    alloc = cuda.CUDAPluggableAllocator(allocator_so, "test_alloc", "test_free")
    cuda.change_current_allocator(alloc)
    assert fake.pluggable == (alloc._alloc_address, alloc._free_address, alloc._name)
    assert not cuda.is_initialized()  # installing an allocator needs no device


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fake_forked_child_cannot_reinitialise(fake: FakeRuntime) -> None:
    cuda.init()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.close(read)
            try:
                cuda.current_device()
                msg = b"no error"
            except RuntimeError as exc:
                msg = str(exc).encode()
            os.write(write, msg + b"|" + str(cuda.is_initialized()).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        out = f.read().decode()
    os.waitpid(pid, 0)
    assert out.startswith("Cannot re-initialize CUDA in forked subprocess")
    assert out.endswith("|False")
    assert cuda.is_initialized() and cuda.current_device() == 0  # the parent is unaffected


# ================================================================================ on a GPU


@requires_cuda
def test_gpu_devices() -> None:
    n = cuda.device_count()
    assert n >= 1
    cuda.init()
    assert cuda.is_initialized()
    assert 0 <= cuda.current_device() < n
    props = cuda.get_device_properties(0)
    assert props.total_memory > 0 and props.multi_processor_count > 0 and props.major >= 3
    assert cuda.get_device_name(0) == props.name and isinstance(props.name, str)
    assert cuda.get_device_capability(0) == (props.major, props.minor)
    free, total = cuda.mem_get_info()
    assert 0 < free <= total == props.total_memory
    with cuda.device(n - 1):
        assert cuda.current_device() == n - 1
    cuda.synchronize()
    assert isinstance(cuda.is_bf16_supported(), bool)
    assert all(a.startswith(("sm_", "compute_")) for a in cuda.get_arch_list())


@requires_cuda
def test_gpu_memory_stats_follow_allocations() -> None:
    cuda.synchronize()
    cuda.empty_cache()
    cuda.reset_peak_memory_stats()
    before = cuda.memory_allocated()
    x = ember_tensor.zeros(1000, 1000, device="cuda")  # 4,000,000 bytes: the large pool
    assert cuda.memory_allocated() - before == 4_000_256  # rounded up to 512 bytes
    assert cuda.max_memory_allocated() >= cuda.memory_allocated()
    assert cuda.memory_reserved() >= cuda.memory_allocated()
    stats = cuda.memory_stats()
    assert list(stats) == sorted(stats)
    assert stats["allocated_bytes.large_pool.current"] >= 4_000_256
    snapshot = cuda.memory_snapshot()
    assert any(seg["segment_type"] == "large" and seg["allocated_size"] >= 4_000_256
               for seg in snapshot)
    check_summary_matches(cuda.memory_stats(), cuda.memory_summary())
    del x
    assert cuda.memory_allocated() == before
    reserved = cuda.memory_reserved()
    assert reserved > 0  # cached
    cuda.empty_cache()
    assert cuda.memory_reserved() < reserved
    assert cuda.max_memory_allocated() - before >= 4_000_256
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == cuda.memory_allocated()


@requires_cuda
def test_gpu_streams_and_event_timing() -> None:
    assert cuda.current_stream() == cuda.default_stream()
    s = cuda.Stream()
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    a = ember_tensor.randn(512, 512, device="cuda")
    s.wait_stream(cuda.current_stream())  # a is made on the default stream
    with cuda.stream(s):
        assert cuda.current_stream() == s
        start.record()
        for _ in range(10):
            b = a + a
        end.record()
    assert cuda.current_stream() == cuda.default_stream()
    end.synchronize()
    assert end.query() and s.query()
    assert start.elapsed_time(end) >= 0.0
    a.record_stream(s)
    cuda.current_stream().wait_stream(s)
    assert b.cpu().shape == (512, 512)
    s.synchronize()


@requires_cuda
def test_gpu_memory_fraction_and_out_of_memory() -> None:
    total = cuda.get_device_properties().total_memory
    cuda.empty_cache()
    cuda.set_per_process_memory_fraction(0.01)
    try:
        n = int(total * 0.05) // 4
        with pytest.raises(cuda.OutOfMemoryError):
            ember_tensor.empty(n, device="cuda")
        assert cuda.memory_stats()["num_ooms"] >= 1
    finally:
        cuda.set_per_process_memory_fraction(1.0)
    x = ember_tensor.empty(1024, device="cuda")
    assert x.device.type == "cuda"


@requires_cuda
def test_gpu_seeds() -> None:
    cuda.manual_seed(1234)
    assert cuda.initial_seed() == 1234
    a = ember_tensor.randn(100, device="cuda").cpu().tolist()
    cuda.manual_seed(1234)
    assert ember_tensor.randn(100, device="cuda").cpu().tolist() == a
    cuda.manual_seed_all(99)
    assert cuda.initial_seed() == 99


# ---------------------------------------------------------------------------------------------
# non_blocking copies: accepted everywhere, synchronous where no pinned memory is involved


def test_non_blocking_is_accepted_by_to_cpu_and_copy_on_the_cpu():
    x = ember_tensor.tensor([1.0, 2.0, 3.0])
    assert x.to(ember_tensor.float64, non_blocking=True).tolist() == [1.0, 2.0, 3.0]
    assert x.to("cpu", ember_tensor.int64, True).tolist() == [1, 2, 3]  # the legacy positional
    assert x.cpu(non_blocking=True) is x
    y = ember_tensor.zeros(3)
    assert y.copy_(x, non_blocking=True) is y
    assert y.tolist() == [1.0, 2.0, 3.0]
    y.copy_(x * 2, True)
    assert y.tolist() == [2.0, 4.0, 6.0]


@requires_cuda
def test_non_blocking_copies_from_pinned_memory_round_trip():
    x = ember_tensor.arange(1 << 20, dtype=ember_tensor.float32).pin_memory()
    d = x.to("cuda", non_blocking=True)
    back = ember_tensor.empty(1 << 20).pin_memory()
    back.copy_(d * 2, non_blocking=True)
    cuda.synchronize()
    assert back[12345].item() == 24690.0
    assert d.cpu().sum().item() == x.sum().item()
