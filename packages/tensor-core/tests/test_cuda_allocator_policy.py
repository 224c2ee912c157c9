"""The CUDA caching allocator's policy, run over a fake device (no GPU needed).

`_C._FakeCudaAllocator(capacity)` is the real DeviceCachingAllocator over a device that has
`capacity` bytes of address space, numbered streams, and events that complete only when the
test calls `complete(stream)`. Every rule of the policy (device_allocator.h) is checked here.

It runs everywhere, in every mode: ``EMBER_CUDA_TEST_DEVICE`` does not apply (no tensor is
made on a device).
"""

import random

import pytest

from ember_tensor import _C

KiB = 1024
MiB = 1024 * KiB


def fake(capacity=1 << 40):
    return _C._FakeCudaAllocator(capacity)


def stat(a, name):
    return a.memory_stats()[name]


# ---- rounding and segment sizes ----


@pytest.mark.parametrize(
    ("request_bytes", "segment"),
    [
        (1, 2 * MiB),
        (512, 2 * MiB),
        (MiB, 2 * MiB),  # the largest small request
        (MiB + 1, 20 * MiB),  # the smallest large request
        (10 * MiB - 512, 20 * MiB),
        (10 * MiB, 10 * MiB),  # from 10 MiB on: the request rounded up to 2 MiB
        (11_000_000, 12 * MiB),
        (64 * MiB + 1, 66 * MiB),
    ],
)
def test_segment_sizes(request_bytes, segment):
    a = fake()
    a.allocate(request_bytes)
    assert a.raw_allocs() == [segment]
    assert stat(a, "reserved_bytes.all.current") == segment
    pool = "small_pool" if request_bytes <= MiB else "large_pool"
    assert stat(a, f"segment.{pool}.current") == 1


@pytest.mark.parametrize(
    ("request_bytes", "rounded"), [(1, 512), (511, 512), (512, 512), (513, 1024), (1000, 1024)]
)
def test_requests_round_up_to_512_bytes(request_bytes, rounded):
    a = fake()
    p = a.allocate(request_bytes)
    q = a.allocate(1)
    assert q - p == rounded  # the next block starts right after the rounded one
    assert stat(a, "allocated_bytes.all.current") == rounded + 512
    assert stat(a, "requested_bytes.all.current") == request_bytes + 1


def test_zero_bytes_allocate_nothing():
    a = fake()
    assert a.allocate(0) == 0
    a.free(0)
    assert a.raw_allocs() == []


def test_small_requests_share_one_segment():
    a = fake()
    ptrs = [a.allocate(1000) for _ in range(2048)]  # 2048 * 1 KiB = one 2 MiB segment
    assert a.raw_allocs() == [2 * MiB]
    assert sorted(ptrs) == [ptrs[0] + i * KiB for i in range(2048)]
    a.allocate(1)
    assert a.raw_allocs() == [2 * MiB, 2 * MiB]


def test_small_and_large_pools_are_separate():
    a = fake()
    p = a.allocate(2 * MiB)  # large: a 20 MiB segment, split
    a.free(p)
    a.allocate(512)  # small: never carved out of the cached large block
    assert a.raw_allocs() == [20 * MiB, 2 * MiB]


# ---- splitting ----


def test_small_pool_splits_any_remainder():
    a = fake()
    p = a.allocate(MiB)
    q = a.allocate(MiB)
    assert q == p + MiB
    assert a.raw_allocs() == [2 * MiB]
    assert stat(a, "allocated_bytes.small_pool.current") == 2 * MiB


def test_large_pool_splits_only_a_remainder_over_1_mib():
    a = fake()
    # 19 MiB leaves exactly 1 MiB of its 20 MiB segment: not split, the block is 20 MiB
    a.allocate(19 * MiB)
    assert stat(a, "allocated_bytes.large_pool.current") == 20 * MiB
    assert stat(a, "inactive_split.large_pool.current") == 0
    # 19 MiB - 512 leaves 1 MiB + 512: split
    b = fake()
    b.allocate(19 * MiB - 512)
    assert stat(b, "allocated_bytes.large_pool.current") == 19 * MiB - 512
    assert stat(b, "inactive_split.large_pool.current") == 1
    assert stat(b, "inactive_split_bytes.large_pool.current") == MiB + 512


def test_a_large_cached_block_serves_a_smaller_large_request():
    a = fake()
    p = a.allocate(5 * MiB)  # 20 MiB segment: 5 MiB + 15 MiB free
    a.free(p)  # merged back into one 20 MiB block
    q = a.allocate(19 * MiB + 512)  # fits the cached block; remainder 0.5 MiB: no split
    assert q == p
    assert a.raw_allocs() == [20 * MiB]
    assert stat(a, "allocated_bytes.large_pool.current") == 20 * MiB


# ---- merging ----


def test_freed_neighbours_merge():
    a = fake()
    x, y, z = a.allocate(512), a.allocate(512), a.allocate(512)
    a.free(y)
    a.free(x)
    (seg,) = a.memory_snapshot()
    states = [(b["address"] - x, b["size"], b["state"]) for b in seg["blocks"]]
    assert states == [
        (0, 1024, "inactive"),
        (1024, 512, "active_allocated"),
        (1536, 2 * MiB - 1536, "inactive"),
    ]
    assert stat(a, "inactive_split.small_pool.current") == 2
    a.free(z)
    (seg,) = a.memory_snapshot()
    assert [(b["size"], b["state"]) for b in seg["blocks"]] == [(2 * MiB, "inactive")]
    assert stat(a, "inactive_split.all.current") == 0
    assert stat(a, "inactive_split_bytes.all.current") == 0
    assert stat(a, "allocated_bytes.all.current") == 0
    assert stat(a, "reserved_bytes.all.current") == 2 * MiB


def test_best_fit_takes_the_smallest_block_that_fits():
    a = fake()
    big = a.allocate(16 * KiB)
    a.allocate(512)  # keeps the free blocks apart
    small = a.allocate(4 * KiB)
    a.allocate(512)
    a.free(big)
    a.free(small)
    assert a.allocate(3 * KiB) == small  # 4 KiB fits best (16 KiB and the tail are larger)
    assert a.allocate(5 * KiB) == big  # then 16 KiB, split
    assert a.allocate(11 * KiB) == big + 5 * KiB  # its remainder
    assert a.raw_allocs() == [2 * MiB]


# ---- streams ----


def test_blocks_are_reused_only_on_their_stream():
    a = fake()
    p = a.allocate(1000, stream=1)
    a.free(p)
    q = a.allocate(1000, stream=2)
    assert q != p
    assert a.raw_allocs() == [2 * MiB, 2 * MiB]
    assert a.allocate(1000, stream=1) == p
    segments = {s["stream"] for s in a.memory_snapshot()}
    assert segments == {1, 2}


def test_record_stream_delays_reuse_until_the_stream_completes():
    a = fake()
    p = a.allocate(1000, stream=1)
    a.record_stream(p, 2)
    a.record_stream(p, 2)  # twice: one event
    a.free(p)
    assert a.live_events() == 1
    assert stat(a, "allocated_bytes.all.current") == 0
    assert stat(a, "active_bytes.all.current") == 1024  # still in use by stream 2
    (seg,) = a.memory_snapshot()
    assert seg["blocks"][0]["state"] == "active_pending_free"
    q = a.allocate(1000, stream=1)
    assert q != p  # stream 2 may still be reading p
    a.complete(1)  # another stream finishing changes nothing
    assert a.allocate(1000, stream=1) not in (p, q)
    a.complete(2)
    assert a.allocate(1000, stream=1) == p
    assert a.live_events() == 0


def test_record_stream_on_several_streams_waits_for_all():
    a = fake()
    p = a.allocate(4096, stream=1)
    a.record_stream(p, 2)
    a.record_stream(p, 3)
    a.record_stream(p, 1)  # the allocation stream itself needs no event
    a.free(p)
    assert a.live_events() == 2
    a.complete(2)
    assert a.allocate(4096, stream=1) != p
    a.complete(3)
    assert a.allocate(4096, stream=1) == p


def test_record_stream_of_an_unknown_block_is_an_error():
    a = fake()
    with pytest.raises(ValueError, match="record_stream: .* is not a live block"):
        a.record_stream(12345, 1)


def test_free_of_an_unknown_block_is_an_error():
    a = fake()
    p = a.allocate(10)
    a.free(p)
    with pytest.raises(ValueError, match="was not allocated by the fake caching allocator"):
        a.free(p)


# ---- segment_of: what CUDA IPC shares ----


def test_segment_of_gives_the_segment_of_any_address_in_a_live_block():
    a = fake()
    p = a.allocate(1000)  # a 2 MiB small segment, split
    q = a.allocate(3000)
    base = a.memory_snapshot()[0]["address"]
    assert base == p
    assert a.segment_of(p) == (p, 2 * MiB)
    assert a.segment_of(q) == (p, 2 * MiB)  # the second block: same segment, offset q - p
    assert q - p == 1024
    assert a.segment_of(q + 2999) == (p, 2 * MiB)  # inside the block, not only its start
    big = a.allocate(11_000_000)  # a segment of its own (12 MiB)
    assert a.segment_of(big + 5) == (big, 12 * MiB)


def test_segment_of_an_address_in_no_live_block_is_an_error():
    a = fake()
    p = a.allocate(1000)
    q = a.allocate(1000)
    with pytest.raises(ValueError, match=r"segment_of: .* is not inside a live block of the fake "
                                         r"caching allocator of device 0"):
        a.segment_of(q + 1024)  # the free rest of the segment
    a.free(q)
    with pytest.raises(ValueError, match="is not inside a live block"):
        a.segment_of(q)  # freed
    with pytest.raises(ValueError, match="is not inside a live block"):
        a.segment_of(p + 4 * MiB)  # past the segment
    with pytest.raises(ValueError, match="is not inside a live block"):
        a.segment_of(1)  # below every segment
    assert a.segment_of(p) == (p, 2 * MiB)


def test_segment_of_a_block_waiting_for_its_stream_events_is_an_error():
    a = fake()
    p = a.allocate(1000, stream=0)
    a.record_stream(p, 1)
    a.free(p)  # pending until stream 1 completes
    with pytest.raises(ValueError, match="is not inside a live block"):
        a.segment_of(p)


# ---- out of memory ----


def test_oom_releases_the_cache_and_retries_once():
    a = fake(24 * MiB)
    a.free(a.allocate(1))  # a cached 2 MiB segment
    a.free(a.allocate(12 * MiB))  # a cached 12 MiB segment
    assert a.device_used() == 14 * MiB
    p = a.allocate(22 * MiB)  # 14 + 22 > 24: the cache goes, the retry succeeds
    assert p != 0
    s = a.memory_stats()
    assert s["num_alloc_retries"] == 1
    assert s["num_device_free"] == 2
    assert s["num_ooms"] == 0
    assert a.device_used() == 22 * MiB
    assert s["reserved_bytes.all.current"] == 22 * MiB


def test_oom_error_states_request_capacity_allocated_and_cached():
    a = fake(24 * MiB)
    a.allocate(4 * MiB)  # 20 MiB segment, 4 MiB allocated, 16 MiB cached in it
    with pytest.raises(_C.OutOfMemoryError) as info:
        a.allocate(17 * MiB)  # the cached 16 MiB is too small; 20 + 18 > 24 even after the retry
    msg = str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert "FAKE out of memory. Tried to allocate 17.00 MiB" in msg
    assert "total capacity of 24.00 MiB of which 4.00 MiB is free" in msg
    assert "4.00 MiB is allocated by tensors" in msg
    assert "16.00 MiB is reserved by Ember's caching allocator but unallocated" in msg
    s = a.memory_stats()
    assert s["num_alloc_retries"] == 1
    assert s["num_ooms"] == 1
    # the failure leaves the allocator usable
    assert a.allocate(MiB) != 0


def test_oom_retry_waits_for_pending_frees():
    a = fake(22 * MiB)
    p = a.allocate(12 * MiB, stream=1)
    a.record_stream(p, 2)
    a.free(p)  # pending on stream 2: not reusable, not releasable yet
    q = a.allocate(10 * MiB, stream=1)  # 12 + 10 = 22 fits
    assert q != p
    # 12 + 10 + 2 > 22: the retry synchronises stream 2's event, frees the 12 MiB segment
    a.allocate(1, stream=1)
    s = a.memory_stats()
    assert s["num_alloc_retries"] == 1
    assert s["num_ooms"] == 0
    assert a.live_events() == 0
    assert s["reserved_bytes.all.current"] == 12 * MiB


def test_memory_fraction_caps_the_reservation():
    a = fake(100 * MiB)
    a.set_memory_fraction(0.25)
    a.allocate(20 * MiB)
    with pytest.raises(_C.OutOfMemoryError, match=r"at most 25.00 MiB \(0.25 of the capacity"):
        a.allocate(12 * MiB)
    a.set_memory_fraction(1.0)
    a.allocate(12 * MiB)
    for bad in (0.0, -0.5, 1.5, float("nan")):
        with pytest.raises(ValueError, match="fraction must be in"):
            a.set_memory_fraction(bad)


# ---- empty_cache ----


def test_empty_cache_keeps_segments_with_live_blocks():
    a = fake()
    live = a.allocate(512)  # its 2 MiB segment stays
    a.free(a.allocate(12 * MiB))
    a.free(a.allocate(4 * MiB, stream=1))  # a 20 MiB segment (another stream's), free again
    assert a.memory_stats()["segment.all.current"] == 3
    a.empty_cache()
    s = a.memory_stats()
    assert s["segment.all.current"] == 1
    assert s["reserved_bytes.all.current"] == 2 * MiB
    assert s["num_device_free"] == 2
    assert a.device_used() == 2 * MiB
    a.free(live)
    a.empty_cache()
    assert a.device_used() == 0
    assert a.memory_snapshot() == []


def test_empty_cache_frees_blocks_whose_stream_events_are_pending():
    a = fake()
    p = a.allocate(12 * MiB, stream=1)
    a.record_stream(p, 2)
    a.free(p)
    a.empty_cache()  # waits for stream 2, then releases the segment
    assert a.device_used() == 0
    assert a.live_events() == 0


# ---- statistics ----


def test_stats_peaks_and_resets():
    a = fake()
    p = a.allocate(3 * MiB)
    q = a.allocate(1)
    a.free(p)
    s = a.memory_stats()
    assert s["allocated_bytes.all.peak"] == 3 * MiB + 512
    assert s["allocated_bytes.all.current"] == 512
    assert s["allocated_bytes.all.allocated"] == 3 * MiB + 512
    assert s["allocated_bytes.all.freed"] == 3 * MiB
    assert s["allocated_bytes.large_pool.peak"] == 3 * MiB
    assert s["allocated_bytes.small_pool.current"] == 512
    assert s["allocation.all.current"] == 1
    assert s["allocation.all.allocated"] == 2
    assert s["requested_bytes.all.peak"] == 3 * MiB + 1
    assert s["reserved_bytes.all.current"] == 22 * MiB
    assert s["num_device_alloc"] == 2
    a.reset_peak_memory_stats()
    s = a.memory_stats()
    assert s["allocated_bytes.all.peak"] == 512
    assert s["reserved_bytes.all.peak"] == 22 * MiB
    a.reset_accumulated_memory_stats()
    s = a.memory_stats()
    assert s["allocated_bytes.all.allocated"] == 0
    assert s["allocated_bytes.all.freed"] == 0
    assert s["num_device_alloc"] == 0
    assert s["allocated_bytes.all.current"] == 512  # current values stay
    a.free(q)


def test_stat_keys_are_pytorchs():
    keys = set(fake().memory_stats())
    for name in (
        "allocation",
        "segment",
        "active",
        "inactive_split",
        "allocated_bytes",
        "reserved_bytes",
        "active_bytes",
        "inactive_split_bytes",
        "requested_bytes",
    ):
        for pool in ("all", "small_pool", "large_pool"):
            for field in ("current", "peak", "allocated", "freed"):
                assert f"{name}.{pool}.{field}" in keys
    assert {"num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free"} <= keys


# ---- every rule at once: a random workload and the invariants it must keep ----


def check_invariants(a, live):
    segments = a.memory_snapshot()
    s = a.memory_stats()
    allocated = reserved = active = inactive_split = inactive_split_bytes = 0
    for seg in segments:
        blocks = seg["blocks"]
        addr = seg["address"]
        for b in blocks:  # blocks tile their segment
            assert b["address"] == addr
            addr += b["size"]
            assert b["size"] % 512 == 0
        assert addr == seg["address"] + seg["total_size"]
        for x, y in zip(blocks, blocks[1:]):  # two free neighbours would have merged
            assert not (x["state"] == "inactive" and y["state"] == "inactive")
        reserved += seg["total_size"]
        for b in blocks:
            if b["state"] == "active_allocated":
                allocated += b["size"]
                assert live[b["address"]][0] <= b["size"]
            if b["state"] != "inactive":
                active += b["size"]
            elif len(blocks) > 1:
                inactive_split += 1
                inactive_split_bytes += b["size"]
    assert allocated == s["allocated_bytes.all.current"]
    assert reserved == s["reserved_bytes.all.current"] == a.device_used()
    assert active == s["active_bytes.all.current"]
    assert inactive_split == s["inactive_split.all.current"]
    assert inactive_split_bytes == s["inactive_split_bytes.all.current"]
    assert s["allocation.all.current"] == len(live)
    assert s["requested_bytes.all.current"] == sum(n for n, _ in live.values())


def test_random_workload_keeps_every_invariant():
    rng = random.Random(1234)
    a = fake(512 * MiB)
    live = {}  # address -> (nbytes, stream)
    sizes = [1, 100, 512, 4000, 65536, MiB, MiB + 1, 3 * MiB, 11_000_000, 30 * MiB]
    for step in range(3000):
        r = rng.random()
        if r < 0.5 or not live:
            n = rng.choice(sizes) + rng.randrange(0, 600)
            stream = rng.randrange(3)
            try:
                p = a.allocate(n, stream)
            except _C.OutOfMemoryError:
                continue
            for q, (m, _) in live.items():  # no overlap with a live block
                assert p + n <= q or q + m <= p
            live[p] = (n, stream)
        elif r < 0.85:
            p = rng.choice(list(live))
            if rng.random() < 0.2:
                a.record_stream(p, rng.randrange(3))
            a.free(p)
            del live[p]
        elif r < 0.97:
            a.complete(rng.randrange(3))
        else:
            a.empty_cache()
        if step % 50 == 0:
            check_invariants(a, live)
    check_invariants(a, live)
    for p in list(live):
        a.free(p)
        del live[p]
    a.empty_cache()
    assert a.device_used() == 0
    assert a.live_events() == 0
