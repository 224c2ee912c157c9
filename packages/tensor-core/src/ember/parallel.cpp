#include "ember/parallel.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ember {
namespace {

thread_local bool t_in_parallel = false;

int default_threads() {
  unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : static_cast<int>(hc);
}

// Workers wait for a job (a generation counter), each runs its share, the caller waits
// for all to finish. One job at a time: callers are serialised by job_mu.
class Pool {
 public:
  explicit Pool(int workers) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this, i] { work(i + 1); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  int size() const { return static_cast<int>(threads_.size()) + 1; }

  void run(int nchunks, const std::function<void(int)>& task) {
    std::lock_guard<std::mutex> job(job_mu_);
    {
      std::lock_guard<std::mutex> g(mu_);
      task_ = &task;
      nchunks_ = nchunks;
      next_.store(0);
      pending_ = size();
      error_ = nullptr;
      ++generation_;
    }
    cv_.notify_all();
    drain();
    std::unique_lock<std::mutex> lk(mu_);
    if (--pending_ == 0) done_cv_.notify_all();
    done_cv_.wait(lk, [this] { return pending_ == 0; });
    task_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void drain() {
    t_in_parallel = true;
    for (;;) {
      int c = next_.fetch_add(1);
      if (c >= nchunks_) break;
      try {
        (*task_)(c);
      } catch (...) {
        std::lock_guard<std::mutex> g(mu_);
        if (!error_) error_ = std::current_exception();
      }
    }
    t_in_parallel = false;
  }
  void work(int) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      drain();
      std::lock_guard<std::mutex> g(mu_);
      if (--pending_ == 0) done_cv_.notify_all();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex job_mu_, mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int)>* task_ = nullptr;
  int nchunks_ = 0;
  std::atomic<int> next_{0};
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
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
  const int nchunks = static_cast<int>(std::min<int64_t>(max_chunks, p->size()));
  const int64_t step = (n + nchunks - 1) / nchunks;
  std::function<void(int)> task = [&](int c) {
    int64_t b = begin + c * step;
    int64_t e = std::min(end, b + step);
    if (b < e) f(b, e);
  };
  p->run(nchunks, task);
}

}  // namespace ember
