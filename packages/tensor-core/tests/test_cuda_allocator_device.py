"""The CUDA caching allocator on a real GPU (issue 29, point 2).

What the fake-device tests (``test_cuda_allocator_policy.py``) cannot show, because it
needs the CUDA runtime's own allocations, events and streams:

- a training loop reaches a steady state in which no step asks the device for memory
  (``num_device_alloc`` stops growing, and ``allocated`` returns to the same value);
- ``empty_cache`` hands every unused segment back (``memory_reserved`` falls to what is
  in use) and a later allocation takes a new one;
- out of memory: a request that does not fit beside the cache releases the cache and is
  retried (``num_alloc_retries``); one that cannot fit at all raises
  ``ember.cuda.OutOfMemoryError`` with the sizes, and the allocator keeps working;
- stream semantics: a freed block is reused on its own stream at once, not on another
  stream; a block used on a second stream (``record_stream``) is not handed out again
  until that stream's work has completed.

The tests skip without a GPU and in CPU mode (``EMBER_CUDA_TEST_DEVICE=cpu``): everything
they check is the device's.
"""

import numpy as np
import pytest

import ember_tensor as et
from cuda_testing import DEV
from ember_tensor import _C

pytestmark = pytest.mark.skipif(
    DEV != "cuda" or _C._cuda_device_count() == 0, reason="needs a CUDA device"
)

MiB = 1 << 20


def stats():
    return et.cuda.memory_stats()


def train_step(w1, w2, x, y, lr=1e-3):
    """One step of a two-layer MLP with hand-written gradients (the core has no autograd):
    the same allocation pattern every step, as a training loop has."""
    h = et.relu(x @ w1)
    out = h @ w2
    d_out = (out - y) * (2.0 / out.numel())
    d_w2 = h.t() @ d_out
    d_h = (d_out @ w2.t()) * (h > 0)
    d_w1 = x.t() @ d_h
    w1.sub_(d_w1 * lr)
    w2.sub_(d_w2 * lr)
    return float(((out - y) ** 2).mean().item())


def test_training_loop_reaches_a_steady_state_without_device_allocations():
    rng = np.random.default_rng(0)
    x = et.tensor(rng.standard_normal((512, 256)).astype(np.float32)).cuda()
    y = et.tensor(rng.standard_normal((512, 64)).astype(np.float32)).cuda()
    w1 = et.tensor(rng.standard_normal((256, 1024)).astype(np.float32) * 0.05).cuda()
    w2 = et.tensor(rng.standard_normal((1024, 64)).astype(np.float32) * 0.05).cuda()
    losses = [train_step(w1, w2, x, y) for _ in range(3)]  # warm: the cache fills
    et.cuda.synchronize()
    before = stats()
    losses += [train_step(w1, w2, x, y) for _ in range(50)]
    et.cuda.synchronize()
    after = stats()
    assert after["num_device_alloc"] == before["num_device_alloc"], (before, after)
    assert after["allocated_bytes.all.current"] == before["allocated_bytes.all.current"]
    assert after["reserved_bytes.all.current"] == before["reserved_bytes.all.current"]
    # the steps allocated and freed blocks all along: from the cache, not the device
    assert after["allocation.all.allocated"] - before["allocation.all.allocated"] >= 50 * 8
    assert losses[-1] < losses[0]  # and they trained


def test_empty_cache_releases_unused_segments():
    et.cuda.empty_cache()
    base = et.cuda.memory_allocated()
    keep = et.empty(4 * MiB, dtype=et.uint8, device="cuda")
    big = et.empty(64 * MiB, dtype=et.uint8, device="cuda")
    assert et.cuda.memory_reserved() >= 68 * MiB
    del big
    reserved = et.cuda.memory_reserved()
    assert reserved >= 68 * MiB  # cached, not returned
    freed_before = stats()["num_device_free"]
    et.cuda.empty_cache()
    assert et.cuda.memory_reserved() < reserved - 60 * MiB
    assert stats()["num_device_free"] > freed_before
    assert et.cuda.memory_allocated() == base + 4 * MiB
    keep.fill_(7)  # the block in use survived
    assert int(keep.max().item()) == 7
    again = et.empty(64 * MiB, dtype=et.uint8, device="cuda")
    assert et.cuda.memory_reserved() >= 68 * MiB
    del again, keep


@pytest.fixture
def memory_limit():
    """A per-process limit of 1 GiB, so that running out of memory is cheap and safe."""
    free, total = et.cuda.mem_get_info()
    et.cuda.empty_cache()
    fraction = (1 << 30) / total
    et.cuda.set_per_process_memory_fraction(fraction)
    try:
        yield 1 << 30
    finally:
        et.cuda.set_per_process_memory_fraction(1.0)
        et.cuda.empty_cache()


def test_out_of_memory_releases_the_cache_retries_and_raises(memory_limit):
    et.cuda.reset_accumulated_memory_stats()
    # fill most of the limit with cached (freed) blocks of one size ...
    blocks = [et.empty(200 * MiB, dtype=et.uint8, device="cuda") for _ in range(4)]
    del blocks
    assert et.cuda.memory_reserved() >= 800 * MiB
    # ... then ask for a size none of them can serve: the cache must be released first
    big = et.empty(700 * MiB, dtype=et.uint8, device="cuda")
    assert stats()["num_alloc_retries"] >= 1
    big.fill_(1)
    # more than the limit: PyTorch's error type, with the sizes in the message
    with pytest.raises(et.cuda.OutOfMemoryError, match="out of memory"):
        et.empty(2 << 30, dtype=et.uint8, device="cuda")
    assert stats()["num_ooms"] >= 1
    assert int(big.sum().item()) == 700 * MiB  # what was held is intact
    del big
    small = et.ones(1000, device="cuda")  # and the allocator goes on working
    assert float(small.sum().item()) == 1000.0


def test_freed_block_is_reused_on_its_stream_only():
    nbytes = 3 * MiB
    a = et.empty(nbytes, dtype=et.uint8, device="cuda")
    ptr = a.data_ptr()
    del a
    b = et.empty(nbytes, dtype=et.uint8, device="cuda")
    assert b.data_ptr() == ptr  # same stream: the cached block at once
    del b
    side = et.cuda.Stream()
    with et.cuda.stream(side):
        c = et.empty(nbytes, dtype=et.uint8, device="cuda")
        assert c.data_ptr() != ptr  # another stream's pool
    del c


def test_record_stream_holds_the_block_until_the_stream_finishes():
    n = 4096
    x = et.ones(n, n, device="cuda")
    ptr = x.data_ptr()
    side = et.cuda.Stream()
    side.wait_stream(et.cuda.current_stream())
    with et.cuda.stream(side):
        acc = x
        for _ in range(20):  # long enough to be still running when x is freed
            acc = (acc @ x) * (1.0 / n)
    x.record_stream(side)
    del x
    busy = not side.query()
    y = et.empty(n, n, device="cuda")
    if busy:  # the side stream was still reading x: its block must not come back yet
        assert y.data_ptr() != ptr
    side.synchronize()
    assert float(acc[0, 0].item()) == pytest.approx(1.0, rel=1e-3)
    del y
    z = et.empty(n, n, device="cuda")
    w = et.empty(n, n, device="cuda")
    assert ptr in (z.data_ptr(), w.data_ptr())  # once it finished, the block is reusable
