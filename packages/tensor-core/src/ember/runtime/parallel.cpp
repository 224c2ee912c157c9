#include "ember/runtime/parallel.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ember {
namespace {

thread_local bool t_in_parallel = false;

// The default thread count, read once (hardware_concurrency() reads a file under /sys on
// every call, and get_num_threads() runs on every parallel op): OMP_NUM_THREADS when it is a
// positive integer, as PyTorch reads it, else the cores this process may run on.
int default_threads() {
  static const int cores = [] {
    if (const char* env = std::getenv("OMP_NUM_THREADS")) {
      char* end = nullptr;
      const long n = std::strtol(env, &end, 10);
      if (end != env && *end == '\0' && n > 0 && n <= 4096) return static_cast<int>(n);
    }
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
    unsigned hc = std::thread::hardware_concurrency();
    return hc == 0 ? 1 : static_cast<int>(hc);
  }();
  return cores;
}

// Workers spin briefly, then sleep, waiting for a job; the caller runs chunks too and waits
// for the last one. A job is published as one 64-bit word (generation, chunk count, next
// unclaimed chunk), so a worker claims a chunk with one compare-and-swap that also proves the
// job is still the one it looked at: a late worker can never run a chunk of a newer job twice,
// nor one of a finished job. One job at a time: callers are serialised.
class Pool {
 public:
  explicit Pool(int workers) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_.store(true);
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  int size() const { return static_cast<int>(threads_.size()) + 1; }

  void run(int nchunks, const std::function<void(int)>& task) {
    std::lock_guard<std::mutex> job(job_mu_);
    task_.store(&task, std::memory_order_relaxed);
    remaining_.store(nchunks, std::memory_order_relaxed);
    error_ = nullptr;
    const uint64_t gen = (generation(state_.load(std::memory_order_relaxed)) + 1) & 0xffffffffu;
    state_.store(gen << 32 | static_cast<uint64_t>(nchunks) << 16, std::memory_order_release);
    {
      std::lock_guard<std::mutex> g(mu_);  // a worker about to sleep sees the job or the notify
    }
    cv_.notify_all();
    drain(gen);
    for (int spins = 0; remaining_.load(std::memory_order_acquire) != 0;) {
      if (++spins < kCallerSpins) {
        cpu_relax();
        continue;
      }
      std::unique_lock<std::mutex> lk(mu_);
      done_cv_.wait(lk, [this] { return remaining_.load(std::memory_order_acquire) == 0; });
    }
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // About 100 us of spinning (a pause is 25-40 ns): back-to-back ops find the workers awake
  // (a futex wake-up can cost more than a small op), and an idle process stops burning the
  // cores soon after. The caller spins as long before it sleeps on the last chunk.
  static constexpr int kWorkerSpins = 4000;
  static constexpr int kCallerSpins = 4000;

  static uint64_t generation(uint64_t s) { return s >> 32; }
  static int count(uint64_t s) { return static_cast<int>((s >> 16) & 0xffffu); }
  static int next(uint64_t s) { return static_cast<int>(s & 0xffffu); }

  static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  void drain(uint64_t gen) {
    t_in_parallel = true;
    for (;;) {
      uint64_t s = state_.load(std::memory_order_acquire);
      if (generation(s) != gen || next(s) >= count(s)) break;
      if (!state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel)) continue;
      try {
        (*task_.load(std::memory_order_relaxed))(next(s));
      } catch (...) {
        std::lock_guard<std::mutex> g(mu_);
        if (!error_) error_ = std::current_exception();
      }
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        { std::lock_guard<std::mutex> g(mu_); }
        done_cv_.notify_all();
      }
    }
    t_in_parallel = false;
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      uint64_t gen = generation(state_.load(std::memory_order_acquire));
      for (int spins = 0; gen == seen; gen = generation(state_.load(std::memory_order_acquire))) {
        if (stop_.load()) return;
        if (++spins < kWorkerSpins) {
          cpu_relax();
          continue;
        }
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_.load() || generation(state_.load(std::memory_order_acquire)) != seen; });
        spins = 0;
      }
      seen = gen;
      drain(gen);
    }
  }

  std::vector<std::thread> threads_;
  std::mutex job_mu_, mu_;
  std::condition_variable cv_, done_cv_;
  std::atomic<uint64_t> state_{0};  // generation << 32 | chunk count << 16 | next chunk
  std::atomic<const std::function<void(int)>*> task_{nullptr};
  std::atomic<int> remaining_{0};  // chunks of the current job not yet finished
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;
};

std::mutex g_pool_mu;
Pool* g_pool = nullptr;  // leaked in a forked child on purpose: its threads do not exist there
int g_num_threads = 0;    // 0: not set yet

void after_fork_in_child() {
  g_pool = nullptr;
  new (&g_pool_mu) std::mutex();
}

Pool* pool() {
  std::lock_guard<std::mutex> g(g_pool_mu);
  static bool registered = [] { return pthread_atfork(nullptr, nullptr, after_fork_in_child) == 0; }();
  (void)registered;
  int want = g_num_threads > 0 ? g_num_threads : default_threads();
  if (g_pool && g_pool->size() != want) {
    delete g_pool;
    g_pool = nullptr;
  }
  if (!g_pool && want > 1) g_pool = new Pool(want - 1);
  return g_pool;
}

}  // namespace

int get_num_threads() { return g_num_threads > 0 ? g_num_threads : default_threads(); }

void set_num_threads(int n) {
  std::lock_guard<std::mutex> g(g_pool_mu);
  g_num_threads = std::max(1, n);
}

bool in_parallel_region() { return t_in_parallel; }

void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& f) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int nthreads = get_num_threads();
  if (n <= grain || nthreads <= 1 || t_in_parallel) {
    f(begin, end);
    return;
  }
  Pool* p = pool();
  if (!p) {
    f(begin, end);
    return;
  }
  const int64_t max_chunks = (n + grain - 1) / grain;
  // a few chunks per thread, claimed as threads come free: a worker that wakes late (or
  // shares its core with another process) then takes fewer, instead of the caller waiting
  const int nchunks = static_cast<int>(std::min<int64_t>({max_chunks, int64_t{4} * p->size(), 0xffff}));
  const int64_t step = (n + nchunks - 1) / nchunks;
  std::function<void(int)> task = [&](int c) {
    int64_t b = begin + c * step;
    int64_t e = std::min(end, b + step);
    if (b < e) f(b, e);
  };
  p->run(nchunks, task);
}

}  // namespace ember
