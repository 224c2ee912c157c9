// The CUDA hooks' defaults (a build without CUDA) and the installed instance.
#include "ember/runtime/cuda_hooks.h"

#include <atomic>
#include <deque>
#include <mutex>

#include "ember/core/generator.h"

namespace ember {

namespace {
const CudaHooks g_no_cuda;
std::atomic<const CudaHooks*> g_hooks{&g_no_cuda};
}  // namespace

void CudaHooks::unavailable() const {
  throw std::runtime_error(message("CUDA is not available: ", unavailable_reason()));
}

const CudaHooks& cuda_hooks() { return *g_hooks.load(std::memory_order_acquire); }

void set_cuda_hooks(const CudaHooks* hooks) { g_hooks.store(hooks ? hooks : &g_no_cuda, std::memory_order_release); }

int resolve_cuda_index(const Device& d) {
  const CudaHooks& h = cuda_hooks();
  const int n = h.device_count();
  if (n == 0) {
    throw std::runtime_error(message("device ", d.str(), " is not available: ", h.unavailable_reason()));
  }
  const int index = d.index < 0 ? h.current_device() : d.index;
  if (index >= n) {
    throw std::runtime_error(message("device ", d.str(), " does not exist: this process sees ", n,
                                     " CUDA device", n == 1 ? "" : "s", " (cuda:0 to cuda:", n - 1, ")"));
  }
  return index;
}

namespace {
std::atomic<bool> g_allow_tf32{false};  // PyTorch's default since 1.12
}  // namespace

bool allow_tf32() { return g_allow_tf32.load(std::memory_order_relaxed); }
void set_allow_tf32(bool allow) { g_allow_tf32.store(allow, std::memory_order_relaxed); }

Device concrete_device(const Device& d) {
  if (d.type == DeviceType::CPU) return Device{};
  return Device{DeviceType::CUDA, resolve_cuda_index(d)};
}

Generator& cuda_generator(int device) {
  static std::mutex mu;
  static std::deque<Generator> generators;  // a deque never moves its elements
  std::lock_guard<std::mutex> lock(mu);
  while (static_cast<int>(generators.size()) <= device) generators.emplace_back();
  return generators[static_cast<size_t>(device)];
}

}  // namespace ember
