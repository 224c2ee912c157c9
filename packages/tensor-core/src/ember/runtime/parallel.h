// The intra-op thread pool. Fork-safe: a child process forked after parallel work starts
// with no pool and builds a fresh one on first use.
#pragma once

#include <cstdint>
#include <functional>

namespace ember {

int get_num_threads();
void set_num_threads(int n);  // n >= 1
bool in_parallel_region();

// Below this many elements an op runs on the calling thread.
constexpr int64_t kParallelGrain = 32768;

// Calls f(begin, end) on disjoint chunks covering [begin, end), each at least `grain`
// elements (except the last), on up to get_num_threads() threads. Exceptions thrown by f
// are rethrown on the calling thread. Nested calls run serially.
void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& f);

}  // namespace ember
