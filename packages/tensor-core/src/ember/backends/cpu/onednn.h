// oneDNN on the CPU: the library, loaded at first use with dlopen, and what every caller of it
// shares (onednn.cpp). Its callers: the convolutions (ops/conv/conv_onednn_cpu.cpp) and the
// bfloat16 matrix products on CPUs with AVX512-BF16 but no AMX (ops/linalg/gemm_onednn_cpu.cpp).
//
// The library: oneDNN 3.x with the GNU OpenMP runtime, as the `onednn-cpu-gomp` wheel installs
// it (<prefix>/lib/libdnnl.so.3), so the core imports and runs without it (its own kernels then
// take every call; ember_tensor.backends.mkldnn says which). Only its headers are needed at
// build time (EMBER_HAVE_ONEDNN_HEADERS, from the onednn-devel-cpu-gomp wheel).
//
// Threads: Ember's pool stays the only pool. Every oneDNN call runs under SerialOpenMP (OpenMP
// limited to the calling thread), so OpenMP never starts a thread of its own and nothing is left
// for a forked child to inherit; callers cut their work into one oneDNN call per pool task.
#pragma once

#include <string>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::cpu {

// What ember_tensor.backends.mkldnn reports: the version loaded ("3.2.0", empty when not
// loaded), the library's path, why it is not loaded, whether bfloat16 runs through it.
struct OnednnInfo {
  std::string version, path, reason;
  bool bf16 = false;  // the CPU computes bfloat16 (AVX512-BF16 or AMX), so bfloat16 calls go to it too
};
OnednnInfo onednn_info();  // loads the library at the first call
// The switch (on by default; EMBER_ONEDNN=0 starts with it off).
bool onednn_enabled();
void set_onednn_enabled(bool on);
// Whether oneDNN takes float32 (bf16: bfloat16) work now: loaded, switched on, and for
// bfloat16 a CPU that computes it (elsewhere oneDNN would widen it as Ember does).
bool onednn_takes(bool bf16);

}  // namespace ember::cpu

#ifdef EMBER_HAVE_ONEDNN_HEADERS
#include <oneapi/dnnl/dnnl.h>

#include <deque>
#include <map>
#include <memory>
#include <mutex>

namespace ember::cpu::onednn {

#define EMBER_ONEDNN_FUNCTIONS(X)                            \
  X(dnnl_version)                                            \
  X(dnnl_get_effective_cpu_isa)                              \
  X(dnnl_engine_create)                                      \
  X(dnnl_stream_create)                                      \
  X(dnnl_stream_wait)                                        \
  X(dnnl_stream_destroy)                                     \
  X(dnnl_memory_desc_create_with_tag)                        \
  X(dnnl_memory_desc_create_with_strides)                    \
  X(dnnl_memory_desc_destroy)                                \
  X(dnnl_memory_desc_equal)                                  \
  X(dnnl_memory_desc_get_size)                               \
  X(dnnl_memory_create)                                      \
  X(dnnl_memory_destroy)                                     \
  X(dnnl_primitive_attr_create)                              \
  X(dnnl_primitive_attr_destroy)                             \
  X(dnnl_primitive_attr_set_scratchpad_mode)                 \
  X(dnnl_primitive_attr_set_scales_mask)                     \
  X(dnnl_primitive_attr_set_post_ops)                        \
  X(dnnl_post_ops_create)                                    \
  X(dnnl_post_ops_append_sum)                                \
  X(dnnl_post_ops_destroy)                                   \
  X(dnnl_convolution_forward_primitive_desc_create)          \
  X(dnnl_convolution_backward_data_primitive_desc_create)    \
  X(dnnl_convolution_backward_weights_primitive_desc_create) \
  X(dnnl_matmul_primitive_desc_create)                       \
  X(dnnl_reorder_primitive_desc_create)                      \
  X(dnnl_primitive_desc_query_md)                            \
  X(dnnl_primitive_desc_destroy)                             \
  X(dnnl_primitive_create)                                   \
  X(dnnl_primitive_execute)                                  \
  X(dnnl_primitive_destroy)

// The library's entry points, looked up by name at load time.
struct Api {
#define EMBER_ONEDNN_MEMBER(name) decltype(&::name) name = nullptr;
  EMBER_ONEDNN_FUNCTIONS(EMBER_ONEDNN_MEMBER)
#undef EMBER_ONEDNN_MEMBER
  int (*omp_get_max_threads)() = nullptr;
  void (*omp_set_num_threads)(int) = nullptr;
};

// Valid only once onednn_takes() or onednn_info() said the library is loaded.
const Api& api();
dnnl_engine_t engine();

// OpenMP limited to this thread for the guard's life (see the file comment), as it was after.
class SerialOpenMP {
 public:
  SerialOpenMP() : before_(api().omp_get_max_threads()) { api().omp_set_num_threads(1); }
  ~SerialOpenMP() { api().omp_set_num_threads(before_); }
  SerialOpenMP(const SerialOpenMP&) = delete;
  SerialOpenMP& operator=(const SerialOpenMP&) = delete;

 private:
  int before_;
};

// An attribute asking for user scratchpads: every call passes its own, so one primitive serves
// several threads at once. created: a new attribute the caller destroys, to add more to;
// otherwise a shared one that lives as long as the process.
dnnl_primitive_attr_t user_scratchpad_attr(bool created = false);
// The scratchpad size a primitive made with such an attribute needs.
size_t scratchpad_bytes(const_dnnl_primitive_desc_t pd);

// Scratch memory from Ember's allocator, freed with the tensor.
struct Buffer {
  Tensor t;
  void* ptr = nullptr;
  explicit Buffer(size_t bytes);
};

// The arguments of one primitive call, wrapped as oneDNN memory (destroyed with this).
class Args {
 public:
  Args() = default;
  Args(const Args&) = delete;
  Args& operator=(const Args&) = delete;
  ~Args();
  void add(int arg, const_dnnl_memory_desc_t md, void* ptr);
  // Runs prim with these arguments and a scratchpad of its own on this thread's stream, and
  // waits for it; a failure is a runtime_error naming op.
  void run(const char* op, const_dnnl_primitive_desc_t pd, dnnl_primitive_t prim, size_t scratch);

 private:
  std::vector<dnnl_exec_arg_t> args_;
};

// The most recent kCapacity plans (primitives made for one key), each made at its key's first
// call with make(plan, key); older ones are dropped (a program whose shapes keep changing would
// otherwise grow the cache without end). Callers hold theirs while they run it.
template <typename Key, typename Plan> class PlanCache {
 public:
  static constexpr size_t kCapacity = 256;
  template <typename Make> std::shared_ptr<const Plan> get(const Key& k, Make make) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = plans_.find(k); it != plans_.end()) return it->second;
    auto p = std::make_shared<Plan>();
    make(*p, k);
    if (order_.size() == kCapacity) {
      plans_.erase(order_.front());
      order_.pop_front();
    }
    order_.push_back(k);
    return plans_[k] = std::move(p);
  }

 private:
  std::mutex mu_;
  std::map<Key, std::shared_ptr<const Plan>> plans_;
  std::deque<Key> order_;  // oldest first
};

}  // namespace ember::cpu::onednn
#endif  // EMBER_HAVE_ONEDNN_HEADERS
