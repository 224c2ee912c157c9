#include "ember/memory/host_allocator.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace ember {

// ---- the caching policy ----

struct CachingAllocator::Block {
  void* ptr = nullptr;
  size_t size = 0;
  Block* prev = nullptr;  // class list, towards newer
  Block* next = nullptr;  // class list, towards older; the spare-node list
  Block* lru_newer = nullptr;
  Block* lru_older = nullptr;
};

CachingAllocator::CachingAllocator(RawMemory& raw, Options options) : raw_(raw), opts_(options) {
  stats_.cache_limit = opts_.caching ? opts_.cache_limit : 0;
}

CachingAllocator::~CachingAllocator() {
  empty_cache();
  while (Block* b = spare_nodes_) {
    spare_nodes_ = b->next;
    delete b;
  }
}

size_t CachingAllocator::round_size(size_t nbytes) {
  if (nbytes <= 4096) return nbytes <= 64 ? 64 : (nbytes + 63) & ~size_t(63);
  const int k = 63 - __builtin_clzll(nbytes - 1);  // 2^k < nbytes <= 2^(k+1)
  const size_t step = size_t(1) << (k - 3);
  return (nbytes + step - 1) & ~(step - 1);
}

int CachingAllocator::class_index(size_t size) {
  if (size <= 4096) return static_cast<int>(size / 64) - 1;
  const int k = 63 - __builtin_clzll(size - 1);
  const int m = static_cast<int>(size >> (k - 3));  // 9..16 eighths of 2^k
  return 64 + (k - 12) * 8 + (m - 9);
}

CachingAllocator::Block* CachingAllocator::new_node() {
  if (Block* b = spare_nodes_) {
    spare_nodes_ = b->next;
    return b;
  }
  return new (std::nothrow) Block;
}

void CachingAllocator::push(Block* b) {
  Block*& head = heads_[class_index(b->size)];
  b->prev = nullptr;
  b->next = head;
  if (head) head->prev = b;
  head = b;
  b->lru_newer = nullptr;
  b->lru_older = lru_newest_;
  if (lru_newest_) lru_newest_->lru_newer = b;
  lru_newest_ = b;
  if (!lru_oldest_) lru_oldest_ = b;
  cached_bytes_ += static_cast<int64_t>(b->size);
}

void CachingAllocator::unlink(Block* b) {
  if (b->prev) b->prev->next = b->next;
  else heads_[class_index(b->size)] = b->next;
  if (b->next) b->next->prev = b->prev;
  if (b->lru_newer) b->lru_newer->lru_older = b->lru_older;
  else lru_newest_ = b->lru_older;
  if (b->lru_older) b->lru_older->lru_newer = b->lru_newer;
  else lru_oldest_ = b->lru_newer;
  cached_bytes_ -= static_cast<int64_t>(b->size);
}

void CachingAllocator::count_out(size_t size, size_t nbytes) {
  stats_.allocated_bytes.increase(static_cast<int64_t>(size));
  stats_.requested_bytes.increase(static_cast<int64_t>(nbytes));
  stats_.allocation.increase(1);
}

void CachingAllocator::count_back(size_t size, size_t nbytes) {
  stats_.allocated_bytes.decrease(static_cast<int64_t>(size));
  stats_.requested_bytes.decrease(static_cast<int64_t>(nbytes));
  stats_.allocation.decrease(1);
}

void CachingAllocator::throw_oom(size_t nbytes) {
  int64_t allocated, reserved;
  {
    std::lock_guard<std::mutex> g(mu_);
    ++stats_.num_ooms;
    allocated = stats_.allocated_bytes.current;
    reserved = stats_.reserved_bytes.current;
  }
  throw std::runtime_error(message("out of memory: tried to allocate ", nbytes, " bytes on ",
                                   raw_.device_name(), " (", allocated, " bytes allocated and ",
                                   reserved, " reserved by ember)"));
}

void* CachingAllocator::allocate(size_t nbytes) {
  if (nbytes > kMaxRequest) throw_oom(nbytes);
  const size_t size = round_size(nbytes);
  if (opts_.caching) {
    std::lock_guard<std::mutex> g(mu_);
    if (Block* b = heads_[class_index(size)]) {
      unlink(b);
      void* p = b->ptr;
      b->next = spare_nodes_;
      spare_nodes_ = b;
      ++stats_.num_cache_hits;
      count_out(size, nbytes);
      return p;
    }
  }
  void* p = raw_.alloc(size);
  if (!p && empty_cache() > 0) {
    {
      std::lock_guard<std::mutex> g(mu_);
      ++stats_.num_alloc_retries;
    }
    p = raw_.alloc(size);
  }
  if (!p) throw_oom(nbytes);
  std::lock_guard<std::mutex> g(mu_);
  ++stats_.num_cache_misses;
  stats_.segment.increase(1);
  stats_.reserved_bytes.increase(static_cast<int64_t>(size));
  count_out(size, nbytes);
  return p;
}

void CachingAllocator::deallocate(void* ptr, size_t nbytes) {
  const size_t size = round_size(nbytes);
  std::vector<std::pair<void*, size_t>> evicted;  // allocates only when it is used
  {
    std::lock_guard<std::mutex> g(mu_);
    count_back(size, nbytes);
    Block* b = opts_.caching && static_cast<int64_t>(size) <= opts_.cache_limit ? new_node()
                                                                                : nullptr;
    if (!b) {  // not cached: straight back
      stats_.reserved_bytes.decrease(static_cast<int64_t>(size));
      stats_.segment.decrease(1);
    } else {
      b->ptr = ptr;
      b->size = size;
      push(b);
      while (cached_bytes_ > opts_.cache_limit) {  // evict the least recently freed
        Block* old = lru_oldest_;
        unlink(old);
        evicted.emplace_back(old->ptr, old->size);
        stats_.reserved_bytes.decrease(static_cast<int64_t>(old->size));
        stats_.segment.decrease(1);
        old->next = spare_nodes_;
        spare_nodes_ = old;
      }
      ptr = nullptr;
    }
  }
  if (ptr) raw_.free(ptr, size);
  for (const auto& e : evicted) raw_.free(e.first, e.second);
}

int64_t CachingAllocator::empty_cache() {
  std::vector<std::pair<void*, size_t>> release;
  int64_t bytes = 0;
  {
    std::lock_guard<std::mutex> g(mu_);
    while (Block* b = lru_oldest_) {
      unlink(b);
      release.emplace_back(b->ptr, b->size);
      bytes += static_cast<int64_t>(b->size);
      b->next = spare_nodes_;
      spare_nodes_ = b;
    }
    stats_.reserved_bytes.decrease(bytes);
    stats_.segment.decrease(static_cast<int64_t>(release.size()));
  }
  for (const auto& r : release) raw_.free(r.first, r.second);
  return bytes;
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  return stats_;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> g(mu_);
  for (MemoryStat* s : {&stats_.allocated_bytes, &stats_.reserved_bytes, &stats_.requested_bytes,
                        &stats_.allocation, &stats_.segment}) {
    s->peak = s->current;
  }
}

void CachingAllocator::reset_accumulated() {
  std::lock_guard<std::mutex> g(mu_);
  for (MemoryStat* s : {&stats_.allocated_bytes, &stats_.reserved_bytes, &stats_.requested_bytes,
                        &stats_.allocation, &stats_.segment}) {
    s->allocated = s->freed = 0;
  }
  stats_.num_cache_hits = stats_.num_cache_misses = 0;
  stats_.num_alloc_retries = stats_.num_ooms = 0;
}

void CachingAllocator::reinit_in_child() { new (&mu_) std::mutex(); }

// ---- host memory ----

void* HostMemory::alloc(size_t nbytes) {
  if (nbytes < kHugePage) return std::aligned_alloc(64, nbytes);  // nbytes: a multiple of 64
  // Over-map by one huge page less a page, then trim to a 2 MiB-aligned range.
  const size_t span = nbytes + kHugePage - static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* m = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  char* base = static_cast<char*>(m);
  char* p = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(base) + kHugePage - 1) &
                                    ~uintptr_t(kHugePage - 1));
  if (p > base) munmap(base, static_cast<size_t>(p - base));
  if (char* tail = p + nbytes; tail < base + span) munmap(tail, static_cast<size_t>(base + span - tail));
#ifdef MADV_HUGEPAGE
  madvise(p, nbytes, MADV_HUGEPAGE);  // advice only: without THP it fails and changes nothing
#endif
  return p;
}

void HostMemory::free(void* ptr, size_t nbytes) {
  if (nbytes < kHugePage) std::free(ptr);
  else munmap(ptr, nbytes);
}

// ---- options from the environment ----

namespace {

// "2147483648", "512M", "2G", "1.5GiB" -> bytes; -1 when malformed.
int64_t parse_bytes(const std::string& text) {
  size_t end = 0;
  double v;
  try {
    v = std::stod(text, &end);
  } catch (const std::exception&) {
    return -1;
  }
  std::string unit = text.substr(end);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();  // "GB", "GIB"
  if (unit.size() > 1 && unit.back() == 'I') unit.pop_back();
  const std::string units = "KMGT";
  double scale = 1;
  if (!unit.empty() && unit != "B") {
    size_t i = units.find(unit);
    if (unit.size() != 1 || i == std::string::npos) return -1;
    scale = static_cast<double>(int64_t(1) << (10 * (i + 1)));
  }
  if (!(v >= 0) || v * scale > 9e18) return -1;
  return static_cast<int64_t>(v * scale);
}

int64_t physical_memory() {
  int64_t phys = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  // a container's limit (cgroup v2, then v1); "max" or an absurd v1 value means none
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream f(path);
    std::string s;
    if (f >> s && !s.empty() && std::isdigit(static_cast<unsigned char>(s[0]))) {
      int64_t limit = parse_bytes(s);
      if (limit > 0 && (phys <= 0 || limit < phys)) phys = limit;
    }
  }
  return phys > 0 ? phys : int64_t(4) << 30;
}

}  // namespace

CachingAllocator::Options host_cache_options_from_env() {
  CachingAllocator::Options o;
  const char* off = std::getenv("EMBER_NO_CPU_MEMORY_CACHING");
  o.caching = !(off && *off && std::string(off) != "0");
  o.cache_limit = physical_memory() / 4;
  if (const char* limit = std::getenv("EMBER_CPU_CACHE_LIMIT"); limit && *limit) {
    o.cache_limit = parse_bytes(limit);
    if (o.cache_limit < 0) {
      throw ValueError(message("EMBER_CPU_CACHE_LIMIT: expected a byte count such as 1073741824, "
                               "1024M or 1G, got '", limit, "'"));
    }
  }
  if (o.cache_limit == 0) o.caching = false;
  return o;
}

// ---- the process-wide CPU allocator ----

namespace {

CachingAllocator* g_cpu = nullptr;

void fork_prepare() { g_cpu->lock_for_fork(); }
void fork_parent() { g_cpu->unlock_in_parent(); }
void fork_child() { g_cpu->reinit_in_child(); }

CachingAllocator& host_pool() {
  // Created at first use and never destroyed: storages may die during interpreter teardown.
  static CachingAllocator* a = [] {
    const CachingAllocator::Options options = host_cache_options_from_env();  // may throw
    g_cpu = new CachingAllocator(*new HostMemory, options);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    return g_cpu;
  }();
  return *a;
}

}  // namespace

Allocator* caching_cpu_allocator() { return &host_pool(); }
MemoryStats cpu_memory_stats() { return host_pool().stats(); }
void reset_peak_cpu_memory() { host_pool().reset_peak(); }
void reset_accumulated_cpu_memory() { host_pool().reset_accumulated(); }
void cpu_empty_cache() { host_pool().empty_cache(); }

void hold_cpu_allocator_lock(double seconds) {
  host_pool().lock_for_fork();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  host_pool().unlock_in_parent();
}

}  // namespace ember
