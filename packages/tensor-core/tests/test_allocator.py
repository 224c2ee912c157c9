"""The CPU caching allocator: block reuse, memory statistics, empty_cache, the environment
switches, bounded growth, threads and fork (all Ember-specific: torch caches no CPU memory).
"""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import numpy as np
import pytest

pytestmark = pytest.mark.usefixtures("ember_only")

MiB = 1 << 20


def stats(lib):
    return lib.memory_stats()


def block_size(n: int) -> int:
    """The allocator's size class for a request of n bytes (host_allocator.h)."""
    if n <= 4096:
        return max(64, -(-n // 64) * 64)
    step = 1 << ((n - 1).bit_length() - 4)
    return -(-n // step) * step


def run_child(code: str, **env) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh Python with extra environment variables (and no other EMBER_*)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("EMBER_")}
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def child_json(code: str, **env):
    """The JSON that `code`, run by run_child, prints last."""
    out = run_child(code, **env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_size_classes(lib):
    expected = [64, 128, 4608, 8192, 3 * MiB + MiB // 4]
    assert [block_size(n) for n in (1, 65, 4097, 8000, 3 * MiB + 1)] == expected
    for n in [0, 1, 64, 65, 4096, 4097, 8000, 100_000, 3 * MiB + 1]:
        base = stats(lib)
        t = lib.empty(n, dtype=lib.uint8)
        now = stats(lib)
        assert now["allocated_bytes.all.current"] - base["allocated_bytes.all.current"] == (
            block_size(n)
        ), n
        assert now["requested_bytes.all.current"] - base["requested_bytes.all.current"] == n
        assert t.data_ptr() % 64 == 0
        del t


@pytest.mark.parametrize("nbytes", [40, 100_000, 16 * MiB])
def test_freed_block_is_reused(lib, nbytes):
    t = lib.empty(nbytes, dtype=lib.uint8)
    ptr = t.data_ptr()
    del t
    before = stats(lib)
    u = lib.empty(nbytes, dtype=lib.uint8)
    after = stats(lib)
    assert u.data_ptr() == ptr
    assert after["num_os_allocs"] == before["num_os_allocs"]
    assert after["num_cache_hits"] == before["num_cache_hits"] + 1
    assert after["reserved_bytes.all.current"] == before["reserved_bytes.all.current"]


def test_large_blocks_are_hugepage_aligned(lib):
    t = lib.empty(4 * MiB, dtype=lib.uint8)
    assert t.data_ptr() % (2 * MiB) == 0


def test_stats_follow_tensor_lifetimes(lib):
    lib.empty_cache()
    s0 = stats(lib)
    a = lib.empty(3000, dtype=lib.float32)  # 12000 bytes -> a 12288-byte block
    s1 = stats(lib)
    assert s1["allocated_bytes.all.current"] == s0["allocated_bytes.all.current"] + 12288
    assert s1["requested_bytes.all.current"] == s0["requested_bytes.all.current"] + 12000
    assert s1["reserved_bytes.all.current"] == s0["reserved_bytes.all.current"] + 12288
    assert s1["allocation.all.current"] == s0["allocation.all.current"] + 1
    view = a[10:20]  # views share the storage: nothing new
    assert stats(lib)["allocated_bytes.all.current"] == s1["allocated_bytes.all.current"]
    del a
    assert stats(lib)["allocated_bytes.all.current"] == s1["allocated_bytes.all.current"]
    del view  # the last reference: back to the cache at once, no gc pass
    s2 = stats(lib)
    assert s2["allocated_bytes.all.current"] == s0["allocated_bytes.all.current"]
    assert s2["reserved_bytes.all.current"] == s1["reserved_bytes.all.current"]  # cached
    assert s2["allocated_bytes.all.freed"] == s0["allocated_bytes.all.freed"] + 12288
    assert s2["allocation.all.current"] == s0["allocation.all.current"]
    assert lib.memory_allocated() == s2["allocated_bytes.all.current"]
    assert lib.memory_reserved() == s2["reserved_bytes.all.current"]


def test_peak_and_reset(lib):
    lib.reset_peak_memory_stats()
    base = lib.memory_allocated()
    assert lib.max_memory_allocated() == base
    assert lib.max_memory_reserved() == lib.memory_reserved()
    big = lib.empty(8 * MiB, dtype=lib.uint8)
    small = lib.empty(MiB, dtype=lib.uint8)
    del big
    assert lib.max_memory_allocated() == base + 9 * MiB
    assert lib.max_memory_reserved() >= lib.memory_reserved() >= base + 9 * MiB
    lib.reset_peak_memory_stats()
    assert lib.max_memory_allocated() == lib.memory_allocated() == base + MiB
    assert lib.max_memory_reserved() == lib.memory_reserved()
    del small
    assert lib.max_memory_allocated() == base + MiB


def test_reset_accumulated(lib):
    lib.empty(10, dtype=lib.uint8)  # a temporary: dies at once
    lib.reset_accumulated_memory_stats()
    s = stats(lib)
    assert s["num_cache_hits"] == s["num_cache_misses"] == 0
    assert s["allocation.all.allocated"] == s["allocated_bytes.all.freed"] == 0
    assert s["allocated_bytes.all.current"] == lib.memory_allocated()  # current is kept


def test_empty_cache_releases_unused_blocks(lib):
    keep = lib.empty(2 * MiB, dtype=lib.uint8)
    for n in (3 * MiB, 100_000, 1000):
        lib.empty(n, dtype=lib.uint8)  # a temporary: back to the cache at once
    assert lib.memory_reserved() > lib.memory_allocated()
    frees = stats(lib)["num_os_frees"]
    lib.empty_cache()
    assert lib.memory_reserved() == lib.memory_allocated()
    assert stats(lib)["num_os_frees"] >= frees + 3
    keep.fill_(1)  # live tensors keep their memory
    assert int(keep.sum()) == 2 * MiB


def test_out_of_memory_is_a_runtime_error(lib):
    ooms = stats(lib)["num_ooms"]
    with pytest.raises(RuntimeError, match=r"out of memory.* 1125899906842624 bytes on cpu"):
        lib.empty(1 << 50, dtype=lib.uint8)
    assert stats(lib)["num_ooms"] == ooms + 1
    t = lib.ones(10)  # and the allocator still works
    assert float(t.sum()) == 10.0


def test_no_growth_over_many_cycles(lib):
    rng = np.random.default_rng(0)
    sizes = sorted({int(x) for x in np.exp(rng.uniform(0, np.log(4 * MiB), 60))})
    for n in sizes:  # warm-up: two blocks of every size alive at once
        a, b = lib.empty(n, dtype=lib.uint8), lib.empty(n, dtype=lib.uint8)
        del a, b
    warm = stats(lib)
    for i, j in rng.integers(0, len(sizes), (5000, 2)):  # 10,000 allocations and frees
        a = lib.empty(sizes[i], dtype=lib.uint8)
        b = lib.empty(sizes[j], dtype=lib.uint8)
        del a, b
    end = stats(lib)
    assert end["reserved_bytes.all.current"] == warm["reserved_bytes.all.current"]
    assert end["num_os_allocs"] == warm["num_os_allocs"]
    assert end["num_cache_hits"] == warm["num_cache_hits"] + 10_000
    assert end["allocated_bytes.all.current"] == warm["allocated_bytes.all.current"]


def test_concurrent_threads(lib):
    gc.collect()  # earlier tests' garbage (tensors held by tracebacks) must not be freed mid-test
    base = stats(lib)["allocation.all.current"]
    errors = []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            for n in rng.integers(1, 100_000, 300):
                x = lib.ones(int(n))  # >= 16384 elements: allocated without the GIL
                y = (x * 2).exp()
                assert abs(float(y[-1]) - np.exp(2.0)) < 1e-3
                del x, y
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    gc.collect()
    s = stats(lib)
    assert s["allocation.all.current"] == base
    assert s["reserved_bytes.all.current"] >= s["allocated_bytes.all.current"]


def fork_and_check(lib):
    """Forks; the child allocates, frees and reuses memory. Fails if it hangs or errs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads
        pid = os.fork()
    if pid == 0:
        code = 1
        try:
            t = lib.ones(1_000_000)
            ptr = t.data_ptr()
            del t
            u = lib.ones(1_000_000)
            code = 0 if float(u.sum()) == 1e6 and u.data_ptr() == ptr else 1
        finally:
            os._exit(code)
    for _ in range(600):  # 30 s
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail("forked child hung on the allocator lock")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_fork_while_another_thread_holds_the_lock(lib):
    holder = threading.Thread(target=lib._C._hold_cpu_allocator_lock, args=(0.3,))
    holder.start()
    time.sleep(0.05)  # the lock is held now: fork() waits for it instead of copying it held
    fork_and_check(lib)
    holder.join()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_fork_while_other_threads_allocate(lib):
    stop = threading.Event()
    a = lib.ones(50_000)

    def churn():  # allocates and frees without the GIL
        while not stop.is_set():
            (a * 2).exp().sum()

    threads = [threading.Thread(target=churn) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for _ in range(5):
            fork_and_check(lib)
    finally:
        stop.set()
        for t in threads:
            t.join()


CHILD_STATS = """
    import json
    import ember_tensor as et
    cached = []  # reserved - allocated after each free
    for n in (100, 100_000, 4 << 20, 100, 4 << 20):
        t = et.empty(n, dtype=et.uint8)
        del t
        cached.append(et.memory_reserved() - et.memory_allocated())
    print(json.dumps({"cached": cached, **et.memory_stats()}))
"""


def test_env_turns_caching_off():
    s = child_json(CHILD_STATS, EMBER_NO_CPU_MEMORY_CACHING="1")
    assert s["cached"] == [0] * 5
    assert s["num_cache_hits"] == 0 and s["cache_limit_bytes"] == 0
    assert s["num_os_allocs"] == s["num_os_frees"] == 5
    assert s["reserved_bytes.all.peak"] == 4 * MiB


def test_default_cache_is_on():
    s = child_json(CHILD_STATS)
    assert s["cached"][-1] > 4 * MiB
    assert s["num_cache_hits"] == 2 and s["num_os_allocs"] == 3 and s["num_os_frees"] == 0
    assert s["cache_limit_bytes"] > 0


def test_env_cache_limit():
    code = """
        import json
        import ember_tensor as et
        def os_allocs():
            return et.memory_stats()["num_os_allocs"]
        blocks = [et.empty(256 << 10, dtype=et.uint8) for _ in range(8)]  # 2 MiB in all
        del blocks  # half of it stays cached
        s = et.memory_stats()
        out = [s["cache_limit_bytes"], et.memory_reserved() - et.memory_allocated(),
               s["num_os_frees"]]
        et.empty_cache()
        a, b = et.empty(512 << 10, dtype=et.uint8), et.empty(512 << 10, dtype=et.uint8)
        pa, pb = a.data_ptr(), b.data_ptr()
        del a, b  # the cache is full: a (older), b (newer)
        et.empty(100 << 10, dtype=et.uint8)  # evicts the least recently freed: a
        n = os_allocs()
        x = et.empty(512 << 10, dtype=et.uint8)
        y = et.empty(512 << 10, dtype=et.uint8)
        out += [x.data_ptr() == pb, os_allocs() - n]
        print(json.dumps(out))
    """
    limit, cached, frees, got_b, new_allocs = child_json(code, EMBER_CPU_CACHE_LIMIT="1M")
    assert limit == MiB and cached == MiB and frees == 4
    assert got_b and new_allocs == 1
    bad = run_child(code, EMBER_CPU_CACHE_LIMIT="lots")
    assert bad.returncode != 0
    assert "ValueError: EMBER_CPU_CACHE_LIMIT" in bad.stderr and "'lots'" in bad.stderr
