// The device caching allocator of the paper and of PyTorch's CUDA allocator, over a small
// device interface (DeviceBackend) so that its policy runs, and is tested, without a GPU.
//
// Policy (one DeviceCachingAllocator per device):
// - Requests are rounded up to a multiple of 512 bytes (at least 512).
// - Blocks of at most 1 MiB come from the small pool, larger ones from the large pool.
// - A miss asks the device for a new segment: 2 MiB for a small request, 20 MiB for a
//   request under 10 MiB, else the request rounded up to a multiple of 2 MiB.
// - The cache is searched best fit (smallest block that is large enough, lowest address
//   among equals) among the free blocks of the request's stream only.
// - A block larger than the request is split when the remainder is >= 512 bytes (small
//   pool) or > 1 MiB (large pool); a freed block merges with its free neighbours.
// - A freed block is reused on the stream it was allocated on. record_stream() adds other
//   streams that used it; then the free records an event on each, and the block returns to
//   the pool only once all of them have completed.
// - When the device refuses a segment (or the per-process memory fraction would be
//   exceeded), every cached segment is released and the request retried once; a second
//   refusal raises DeviceOutOfMemory with the request, capacity, allocated and cached bytes.
// - empty_cache() releases every segment none of whose blocks is in use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

// An opaque stream handle (a cudaStream_t on CUDA); 0 is the device's default stream.
using StreamId = uint64_t;

// The raw device calls the caching allocator needs. Implementations: the CUDA runtime
// (cuda/cuda_backend.cpp) and FakeDevice (below), which the tests drive from Python.
class DeviceBackend {
 public:
  using Event = void*;
  virtual ~DeviceBackend() = default;
  virtual const char* name() const = 0;  // "cuda": used in messages ("CUDA out of memory")
  // nbytes of device memory, or nullptr when the device has no more. Other errors throw.
  virtual void* raw_alloc(int device, size_t nbytes) = 0;
  virtual void raw_free(int device, void* ptr) = 0;
  virtual void mem_info(int device, size_t* free_bytes, size_t* total_bytes) = 0;
  virtual Event event_create(int device) = 0;
  virtual void event_record(int device, Event event, StreamId stream) = 0;
  virtual bool event_query(Event event) = 0;  // true once the work before it has completed
  virtual void event_synchronize(Event event) = 0;
  virtual void event_destroy(Event event) = 0;
};

// Raised when a device allocation fails after the cache was released and the request
// retried. Python sees it as ember.cuda.OutOfMemoryError, a RuntimeError.
class DeviceOutOfMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The statistics PyTorch's torch.cuda.memory_stats reports, for one pool or both.
struct DevicePoolStats {
  MemoryStat allocation;            // blocks handed out
  MemoryStat segment;               // segments held from the device
  MemoryStat active;                // blocks handed out or waiting for their stream events
  MemoryStat inactive_split;        // free blocks that are a piece of a split segment
  MemoryStat allocated_bytes;
  MemoryStat reserved_bytes;
  MemoryStat active_bytes;
  MemoryStat inactive_split_bytes;
  MemoryStat requested_bytes;       // like allocated_bytes, with the sizes asked for
};

struct DeviceMemoryStats {
  DevicePoolStats pools[3];  // [0] all, [1] small_pool, [2] large_pool
  int64_t num_alloc_retries = 0;
  int64_t num_ooms = 0;
  int64_t num_device_alloc = 0;
  int64_t num_device_free = 0;
  int64_t num_sync_all_streams = 0;
};

// One block of a snapshot (memory_snapshot()).
struct BlockInfo {
  uint64_t address;
  size_t size;
  size_t requested_size;
  const char* state;  // "active_allocated", "active_pending_free" or "inactive"
};
struct SegmentInfo {
  int device;
  uint64_t address;
  size_t total_size;
  size_t allocated_size;
  size_t active_size;
  size_t requested_size;
  StreamId stream;
  bool small;
  std::vector<BlockInfo> blocks;
};

class DeviceCachingAllocator {
 public:
  static constexpr size_t kMinBlockSize = 512;
  static constexpr size_t kSmallSize = size_t(1) << 20;      // largest small-pool request
  static constexpr size_t kSmallBuffer = size_t(2) << 20;    // small-pool segment
  static constexpr size_t kLargeBuffer = size_t(20) << 20;   // segment for 1-10 MiB requests
  static constexpr size_t kMinLargeAlloc = size_t(10) << 20; // from here: request rounded
  static constexpr size_t kRoundLarge = size_t(2) << 20;

  // `backend` must outlive the allocator.
  DeviceCachingAllocator(DeviceBackend& backend, int device);
  ~DeviceCachingAllocator();  // releases the cache; blocks still out are not touched
  DeviceCachingAllocator(const DeviceCachingAllocator&) = delete;
  DeviceCachingAllocator& operator=(const DeviceCachingAllocator&) = delete;

  // A block of at least nbytes usable on `stream`. nbytes == 0 gives nullptr.
  void* allocate(size_t nbytes, StreamId stream);
  void free(void* ptr);  // std::invalid_argument for a pointer it did not hand out
  // The block holding ptr is also used on `stream`: not reused before that work completes.
  void record_stream(void* ptr, StreamId stream);
  // The device segment (base address, size in bytes) holding `ptr`, a pointer anywhere inside
  // a block that is handed out: what CUDA IPC shares (a handle names a whole cudaMalloc).
  // std::invalid_argument when ptr is in no live block.
  std::pair<void*, size_t> segment_of(const void* ptr) const;
  void empty_cache();
  // The most this process may hold from the device, as a fraction of its capacity (0..1].
  void set_memory_fraction(double fraction);

  DeviceMemoryStats stats() const;
  void reset_peak_stats();
  void reset_accumulated_stats();
  std::vector<SegmentInfo> snapshot() const;

  static size_t round_size(size_t nbytes);
  static size_t segment_size(size_t rounded);

 private:
  struct Block;
  struct BlockOrder {
    bool operator()(const Block* a, const Block* b) const;
  };
  using Pool = std::set<Block*, BlockOrder>;

  Pool& pool_for(bool small) { return small ? small_blocks_ : large_blocks_; }
  void pool_insert(Block* b);
  void pool_erase(Block* b);
  Block* find_free(bool small, size_t size, StreamId stream);
  void* try_raw_alloc(size_t size);
  void free_block(Block* b);  // back to its pool, merged with free neighbours
  void process_events();
  void synchronize_and_free_events();
  void release_cached_blocks();
  void stat_update(bool small, MemoryStat DevicePoolStats::*stat, int64_t delta);
  [[noreturn]] void throw_oom(size_t nbytes, size_t rounded);

  DeviceBackend& backend_;
  const int device_;
  mutable std::mutex mu_;
  Pool small_blocks_, large_blocks_;
  std::unordered_map<void*, Block*> allocated_;
  std::vector<Block*> segments_;  // the first block of each segment
  std::deque<std::pair<DeviceBackend::Event, Block*>> events_;
  double fraction_ = 1.0;
  size_t allowed_bytes_ = 0;  // 0: no limit
  DeviceMemoryStats stats_;
};

// A device for the allocator's tests: `capacity` bytes of address space (no memory behind
// it), streams are plain numbers, and events complete only when the test says so.
class FakeDevice final : public DeviceBackend {
 public:
  explicit FakeDevice(size_t capacity) : capacity_(capacity) {}
  const char* name() const override { return "fake"; }
  void* raw_alloc(int device, size_t nbytes) override;
  void raw_free(int device, void* ptr) override;
  void mem_info(int device, size_t* free_bytes, size_t* total_bytes) override;
  Event event_create(int device) override;
  void event_record(int device, Event event, StreamId stream) override;
  bool event_query(Event event) override;
  void event_synchronize(Event event) override;
  void event_destroy(Event event) override;

  // Completes every event recorded so far on `stream`.
  void complete(StreamId stream);
  // The sizes of the device allocations made so far, in order (freed ones included).
  const std::vector<size_t>& raw_allocs() const { return raw_allocs_; }
  size_t used() const { return used_; }
  size_t live_events() const { return events_.size(); }

 private:
  struct FakeEvent {
    StreamId stream = 0;
    bool recorded = false;
    bool done = false;
  };
  std::mutex mu_;
  size_t capacity_;
  size_t used_ = 0;
  uint64_t next_address_ = uint64_t(1) << 40;
  std::unordered_map<uint64_t, size_t> live_;
  std::vector<size_t> raw_allocs_;
  std::unordered_map<Event, std::unique_ptr<FakeEvent>> events_;
};

// "2.00 MiB", "512 bytes": a byte count as memory messages show it.
std::string format_bytes(size_t n);

}  // namespace ember
