// A caching allocator policy over a pluggable source of raw memory, and the host (CPU)
// memory source it runs on for cpu_allocator(). The policy knows nothing about the OS, so a
// device allocator can reuse it with cudaMalloc/cudaFree and tests with a fake source.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "ember/core/tensor.h"

namespace ember {

// Where a caching allocator's blocks come from. Thread-safe; alloc() returns nullptr when
// the memory is not there (the policy then empties its cache and retries once). free() gets
// the pointer and size that alloc() was called with.
class RawMemory {
 public:
  virtual ~RawMemory() = default;
  virtual void* alloc(size_t nbytes) = 0;
  virtual void free(void* ptr, size_t nbytes) = 0;
  virtual const char* device_name() const = 0;  // for messages: "cpu"
};

// The caching policy. A request is rounded up to a size class (round_size); a freed block
// goes onto its class's free list instead of back to the memory source, and the next request
// of that class takes the most recently freed block (so the same pointer comes back, still
// warm in the caches). Only exact classes are reused, so a block's class follows from the
// nbytes that deallocate() gets and no per-pointer table is needed. Cached bytes are capped:
// past the cap the least recently freed blocks are released. With caching off every block
// goes back at once. Thread-safe (one mutex; memory-source calls run outside it).
class CachingAllocator final : public Allocator {
 public:
  struct Options {
    bool caching = true;
    int64_t cache_limit = 0;  // the most bytes kept in free lists
  };

  // `raw` must outlive the allocator.
  CachingAllocator(RawMemory& raw, Options options);
  ~CachingAllocator() override;  // releases the cache (blocks still out are not touched)
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  void* allocate(size_t nbytes) override;  // RuntimeError naming bytes and device when out
  void deallocate(void* ptr, size_t nbytes) override;

  int64_t empty_cache();  // releases every cached block; returns the bytes released
  MemoryStats stats() const;
  void reset_peak();
  void reset_accumulated();

  // For pthread_atfork: the parent holds the lock across fork(), so the child's copy of the
  // free lists is consistent; the child gets a fresh, unlocked mutex.
  void lock_for_fork() { mu_.lock(); }
  void unlock_in_parent() { mu_.unlock(); }
  void reinit_in_child();

  // Size classes: multiples of 64 bytes up to 4 KiB, then 8 classes per power of two
  // (at most 12.5% rounding). Every class is a multiple of 64 (the alignment blocks get).
  static size_t round_size(size_t nbytes);
  static constexpr size_t kMaxRequest = size_t(1) << 56;  // anything larger is out of memory
  static constexpr int kNumClasses = 64 + 8 * (56 - 12);

 private:
  struct Block;  // a cached block: a node on its class list and on the LRU list
  static int class_index(size_t size);  // size: an already rounded size

  Block* new_node();
  void push(Block* b);          // onto its class list and the LRU front
  void unlink(Block* b);        // off both lists
  void count_out(size_t size, size_t nbytes);
  void count_back(size_t size, size_t nbytes);
  [[noreturn]] void throw_oom(size_t nbytes);

  RawMemory& raw_;
  const Options opts_;
  mutable std::mutex mu_;
  std::array<Block*, kNumClasses> heads_{};  // newest cached block per class
  Block* lru_newest_ = nullptr;
  Block* lru_oldest_ = nullptr;
  Block* spare_nodes_ = nullptr;
  int64_t cached_bytes_ = 0;
  MemoryStats stats_;
};

// The host memory source: blocks below 2 MiB from aligned_alloc (64-byte aligned), larger
// ones mmap'ed at 2 MiB alignment with MADV_HUGEPAGE (first touch then faults one 2 MiB page
// instead of 512 small ones).
class HostMemory final : public RawMemory {
 public:
  static constexpr size_t kHugePage = size_t(2) << 20;
  void* alloc(size_t nbytes) override;
  void free(void* ptr, size_t nbytes) override;
  const char* device_name() const override { return "cpu"; }
};

// cpu_allocator()'s options from the environment: EMBER_NO_CPU_MEMORY_CACHING=1 turns the
// cache off; EMBER_CPU_CACHE_LIMIT (bytes, or with a K/M/G/T suffix) caps it, default a
// quarter of the physical (or cgroup-limited) memory. ValueError for a malformed value.
CachingAllocator::Options host_cache_options_from_env();

}  // namespace ember
