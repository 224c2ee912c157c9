// The device caching allocator's policy (device_allocator.h) and the fake device its tests
// run on.
#include "ember/memory/device_allocator.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace ember {

struct DeviceCachingAllocator::Block {
  void* ptr;
  size_t size;
  StreamId stream;
  bool small;
  size_t requested = 0;
  bool allocated = false;
  int pending_events = 0;
  Block* prev = nullptr;  // neighbours within the segment
  Block* next = nullptr;
  std::vector<StreamId> stream_uses;
  Block(void* p, size_t s, StreamId st, bool sm) : ptr(p), size(s), stream(st), small(sm) {}
  bool is_split() const { return prev != nullptr || next != nullptr; }
  bool is_free() const { return !allocated && pending_events == 0; }
  uint64_t address() const { return reinterpret_cast<uint64_t>(ptr); }
};

bool DeviceCachingAllocator::BlockOrder::operator()(const Block* a, const Block* b) const {
  if (a->stream != b->stream) return a->stream < b->stream;
  if (a->size != b->size) return a->size < b->size;
  return a->address() < b->address();
}

size_t DeviceCachingAllocator::round_size(size_t nbytes) {
  if (nbytes < kMinBlockSize) return kMinBlockSize;
  return (nbytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

size_t DeviceCachingAllocator::segment_size(size_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return (rounded + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

DeviceCachingAllocator::DeviceCachingAllocator(DeviceBackend& backend, int device)
    : backend_(backend), device_(device) {}

DeviceCachingAllocator::~DeviceCachingAllocator() {
  try {
    std::lock_guard<std::mutex> lock(mu_);
    synchronize_and_free_events();
    release_cached_blocks();
  } catch (...) {
    // at process exit the device may already be gone; the OS reclaims its memory
  }
}

void DeviceCachingAllocator::stat_update(bool small, MemoryStat DevicePoolStats::*stat, int64_t delta) {
  for (DevicePoolStats* p : {&stats_.pools[0], &stats_.pools[small ? 1 : 2]}) {
    if (delta >= 0) {
      (p->*stat).increase(delta);
    } else {
      (p->*stat).decrease(-delta);
    }
  }
}

void DeviceCachingAllocator::pool_insert(Block* b) {
  pool_for(b->small).insert(b);
  if (b->is_split()) {
    stat_update(b->small, &DevicePoolStats::inactive_split, 1);
    stat_update(b->small, &DevicePoolStats::inactive_split_bytes, static_cast<int64_t>(b->size));
  }
}

void DeviceCachingAllocator::pool_erase(Block* b) {
  pool_for(b->small).erase(b);
  if (b->is_split()) {
    stat_update(b->small, &DevicePoolStats::inactive_split, -1);
    stat_update(b->small, &DevicePoolStats::inactive_split_bytes, -static_cast<int64_t>(b->size));
  }
}

DeviceCachingAllocator::Block* DeviceCachingAllocator::find_free(bool small, size_t size, StreamId stream) {
  Pool& pool = pool_for(small);
  Block key(nullptr, size, stream, small);
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  pool_erase(b);
  return b;
}

void* DeviceCachingAllocator::try_raw_alloc(size_t size) {
  if (allowed_bytes_ != 0 &&
      static_cast<size_t>(stats_.pools[0].reserved_bytes.current) + size > allowed_bytes_) {
    return nullptr;
  }
  void* p = backend_.raw_alloc(device_, size);
  if (p) ++stats_.num_device_alloc;
  return p;
}

void* DeviceCachingAllocator::allocate(size_t nbytes, StreamId stream) {
  if (nbytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  process_events();
  const size_t size = round_size(nbytes);
  const bool small = size <= kSmallSize;
  Block* b = find_free(small, size, stream);
  if (!b) {
    const size_t seg = segment_size(size);
    void* p = try_raw_alloc(seg);
    if (!p) {
      ++stats_.num_alloc_retries;
      synchronize_and_free_events();
      release_cached_blocks();
      p = try_raw_alloc(seg);
    }
    if (!p) {
      ++stats_.num_ooms;
      throw_oom(nbytes, size);
    }
    b = new Block(p, seg, stream, small);
    segments_.push_back(b);
    stat_update(small, &DevicePoolStats::segment, 1);
    stat_update(small, &DevicePoolStats::reserved_bytes, static_cast<int64_t>(seg));
  }
  const size_t remaining = b->size - size;
  if (small ? remaining >= kMinBlockSize : remaining > kSmallSize) {
    Block* rest = new Block(static_cast<char*>(b->ptr) + size, remaining, stream, small);
    rest->prev = b;
    rest->next = b->next;
    if (b->next) b->next->prev = rest;
    b->next = rest;
    b->size = size;
    pool_insert(rest);
  }
  b->allocated = true;
  b->requested = nbytes;
  allocated_.emplace(b->ptr, b);
  stat_update(small, &DevicePoolStats::allocation, 1);
  stat_update(small, &DevicePoolStats::allocated_bytes, static_cast<int64_t>(b->size));
  stat_update(small, &DevicePoolStats::requested_bytes, static_cast<int64_t>(nbytes));
  stat_update(small, &DevicePoolStats::active, 1);
  stat_update(small, &DevicePoolStats::active_bytes, static_cast<int64_t>(b->size));
  return b->ptr;
}

void DeviceCachingAllocator::free(void* ptr) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = allocated_.find(ptr);
  if (it == allocated_.end()) {
    throw std::invalid_argument(message("free: ", ptr, " was not allocated by the ", backend_.name(),
                                        " caching allocator of device ", device_));
  }
  Block* b = it->second;
  allocated_.erase(it);
  b->allocated = false;
  stat_update(b->small, &DevicePoolStats::allocation, -1);
  stat_update(b->small, &DevicePoolStats::allocated_bytes, -static_cast<int64_t>(b->size));
  stat_update(b->small, &DevicePoolStats::requested_bytes, -static_cast<int64_t>(b->requested));
  b->requested = 0;
  if (b->stream_uses.empty()) {
    free_block(b);
    return;
  }
  for (StreamId s : b->stream_uses) {
    DeviceBackend::Event e = backend_.event_create(device_);
    backend_.event_record(device_, e, s);
    events_.emplace_back(e, b);
    ++b->pending_events;
  }
  b->stream_uses.clear();
}

void DeviceCachingAllocator::record_stream(void* ptr, StreamId stream) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = allocated_.find(ptr);
  if (it == allocated_.end()) {
    throw std::invalid_argument(message("record_stream: ", ptr, " is not a live block of the ",
                                        backend_.name(), " caching allocator of device ", device_));
  }
  Block* b = it->second;
  if (stream == b->stream) return;  // the allocation stream orders its own uses
  if (std::find(b->stream_uses.begin(), b->stream_uses.end(), stream) == b->stream_uses.end()) {
    b->stream_uses.push_back(stream);
  }
}

std::pair<void*, size_t> DeviceCachingAllocator::segment_of(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t addr = reinterpret_cast<uint64_t>(ptr);
  for (const Block* head : segments_) {
    if (addr < head->address()) continue;
    size_t total = 0;
    const Block* holder = nullptr;
    for (const Block* b = head; b; b = b->next) {
      if (addr >= b->address() && addr < b->address() + b->size) holder = b;
      total += b->size;
    }
    if (addr >= head->address() + total) continue;
    if (!holder || !holder->allocated) break;  // inside this segment, but in a free block
    return {head->ptr, total};
  }
  throw std::invalid_argument(message("segment_of: ", ptr, " is not inside a live block of the ", backend_.name(),
                                      " caching allocator of device ", device_));
}

void DeviceCachingAllocator::free_block(Block* b) {
  stat_update(b->small, &DevicePoolStats::active, -1);
  stat_update(b->small, &DevicePoolStats::active_bytes, -static_cast<int64_t>(b->size));
  // the lower block survives a merge, so a segment's first block stays its first block
  if (b->prev && b->prev->is_free()) {
    Block* p = b->prev;
    pool_erase(p);
    p->size += b->size;
    p->next = b->next;
    if (b->next) b->next->prev = p;
    delete b;
    b = p;
  }
  if (b->next && b->next->is_free()) {
    Block* n = b->next;
    pool_erase(n);
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    delete n;
  }
  pool_insert(b);
}

void DeviceCachingAllocator::process_events() {
  for (auto it = events_.begin(); it != events_.end();) {
    if (!backend_.event_query(it->first)) {
      ++it;
      continue;
    }
    Block* b = it->second;
    backend_.event_destroy(it->first);
    it = events_.erase(it);
    if (--b->pending_events == 0) free_block(b);
  }
}

void DeviceCachingAllocator::synchronize_and_free_events() {
  while (!events_.empty()) {
    auto [e, b] = events_.front();
    events_.pop_front();
    backend_.event_synchronize(e);
    backend_.event_destroy(e);
    if (--b->pending_events == 0) free_block(b);
  }
}

void DeviceCachingAllocator::release_cached_blocks() {
  std::vector<Block*> kept;
  kept.reserve(segments_.size());
  for (Block* b : segments_) {
    if (b->is_free() && !b->next) {  // the whole segment is one free block
      pool_erase(b);
      backend_.raw_free(device_, b->ptr);
      ++stats_.num_device_free;
      stat_update(b->small, &DevicePoolStats::segment, -1);
      stat_update(b->small, &DevicePoolStats::reserved_bytes, -static_cast<int64_t>(b->size));
      delete b;
    } else {
      kept.push_back(b);
    }
  }
  segments_.swap(kept);
}

void DeviceCachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  synchronize_and_free_events();
  release_cached_blocks();
}

void DeviceCachingAllocator::set_memory_fraction(double fraction) {
  if (!(fraction > 0.0 && fraction <= 1.0)) {
    throw std::invalid_argument(message("set_per_process_memory_fraction: fraction must be in (0, 1], got ",
                                        fraction));
  }
  size_t free_bytes = 0, total = 0;
  backend_.mem_info(device_, &free_bytes, &total);
  std::lock_guard<std::mutex> lock(mu_);
  fraction_ = fraction;
  allowed_bytes_ = fraction >= 1.0 ? 0 : static_cast<size_t>(fraction * static_cast<double>(total));
}

std::string format_bytes(size_t n) {
  char buf[64];
  const double v = static_cast<double>(n);
  if (n < 1024) {
    std::snprintf(buf, sizeof buf, "%zu bytes", n);
  } else if (n < (size_t(1) << 20)) {
    std::snprintf(buf, sizeof buf, "%.2f KiB", v / 1024.0);
  } else if (n < (size_t(1) << 30)) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", v / 1048576.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f GiB", v / 1073741824.0);
  }
  return buf;
}

void DeviceCachingAllocator::throw_oom(size_t nbytes, size_t rounded) {
  size_t free_bytes = 0, total = 0;
  backend_.mem_info(device_, &free_bytes, &total);
  const auto& all = stats_.pools[0];
  std::string dev = backend_.name();
  for (char& c : dev) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string limit;
  if (allowed_bytes_ != 0) {
    limit = message(" This process may use at most ", format_bytes(allowed_bytes_), " (",
                    fraction_, " of the capacity, set_per_process_memory_fraction).");
  }
  throw DeviceOutOfMemory(message(
      dev, " out of memory. Tried to allocate ", format_bytes(nbytes), " (a ", format_bytes(segment_size(rounded)),
      " segment). ", backend_.name(), ":", device_, " has a total capacity of ", format_bytes(total), " of which ",
      format_bytes(free_bytes), " is free.", limit, " Of the memory this process holds, ",
      format_bytes(static_cast<size_t>(all.allocated_bytes.current)), " is allocated by tensors and ",
      format_bytes(static_cast<size_t>(all.reserved_bytes.current - all.allocated_bytes.current)),
      " is reserved by Ember's caching allocator but unallocated."));
}

DeviceMemoryStats DeviceCachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

namespace {
// Calls f(stat) for every MemoryStat of every pool.
template <typename F> void for_each_stat(DeviceMemoryStats& stats, F f) {
  for (auto& p : stats.pools) {
    for (MemoryStat* s : {&p.allocation, &p.segment, &p.active, &p.inactive_split, &p.allocated_bytes,
                          &p.reserved_bytes, &p.active_bytes, &p.inactive_split_bytes, &p.requested_bytes}) {
      f(*s);
    }
  }
}
}  // namespace

void DeviceCachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mu_);
  for_each_stat(stats_, [](MemoryStat& s) { s.peak = s.current; });
}

void DeviceCachingAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(mu_);
  for_each_stat(stats_, [](MemoryStat& s) { s.allocated = s.freed = 0; });
  stats_.num_alloc_retries = stats_.num_ooms = stats_.num_device_alloc = stats_.num_device_free = 0;
  stats_.num_sync_all_streams = 0;
}

std::vector<SegmentInfo> DeviceCachingAllocator::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SegmentInfo> out;
  out.reserve(segments_.size());
  for (const Block* head : segments_) {
    SegmentInfo s{device_, head->address(), 0, 0, 0, 0, head->stream, head->small, {}};
    for (const Block* b = head; b; b = b->next) {
      const char* state = b->allocated ? "active_allocated" : b->pending_events ? "active_pending_free" : "inactive";
      s.blocks.push_back(BlockInfo{b->address(), b->size, b->requested, state});
      s.total_size += b->size;
      if (b->allocated) s.allocated_size += b->size;
      if (!b->is_free()) s.active_size += b->size;
      s.requested_size += b->requested;
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const SegmentInfo& a, const SegmentInfo& b) { return a.address < b.address; });
  return out;
}

// ---- the fake device ----

void* FakeDevice::raw_alloc(int, size_t nbytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (used_ + nbytes > capacity_) return nullptr;
  const uint64_t addr = next_address_;
  next_address_ += (nbytes + 4095) / 4096 * 4096 + 4096;  // a gap: neighbours never touch
  used_ += nbytes;
  live_.emplace(addr, nbytes);
  raw_allocs_.push_back(nbytes);
  return reinterpret_cast<void*>(addr);
}

void FakeDevice::raw_free(int, void* ptr) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(reinterpret_cast<uint64_t>(ptr));
  if (it == live_.end()) throw std::logic_error(message("fake device: free of ", ptr, ", which it never allocated"));
  used_ -= it->second;
  live_.erase(it);
}

void FakeDevice::mem_info(int, size_t* free_bytes, size_t* total_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  *free_bytes = capacity_ - used_;
  *total_bytes = capacity_;
}

DeviceBackend::Event FakeDevice::event_create(int) {
  std::lock_guard<std::mutex> lock(mu_);
  auto e = std::make_unique<FakeEvent>();
  Event handle = e.get();
  events_.emplace(handle, std::move(e));
  return handle;
}

void FakeDevice::event_record(int, Event event, StreamId stream) {
  std::lock_guard<std::mutex> lock(mu_);
  FakeEvent& e = *events_.at(event);
  e.stream = stream;
  e.recorded = true;
  e.done = false;
}

bool FakeDevice::event_query(Event event) {
  std::lock_guard<std::mutex> lock(mu_);
  return events_.at(event)->done;
}

void FakeDevice::event_synchronize(Event event) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.at(event)->done = true;  // "waits" until the stream reaches it
}

void FakeDevice::event_destroy(Event event) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.erase(event);
}

void FakeDevice::complete(StreamId stream) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [h, e] : events_) {
    if (e->recorded && e->stream == stream) e->done = true;
  }
}

}  // namespace ember
