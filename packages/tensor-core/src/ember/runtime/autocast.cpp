// The thread-local autocast state (autocast.h).
#include "ember/runtime/autocast.h"

#include <memory>
#include <unordered_map>
#include <utility>

namespace ember::autocast {
namespace {

struct State {
  bool enabled[2] = {false, false};
  ScalarType dtype[2] = {ScalarType::BFloat16, ScalarType::Float16};  // CPU, CUDA
  int64_t nesting = 0;
  bool cache_enabled = true;
  // source TensorImpl -> (the source, kept alive so its address is not reused; the cast)
  std::unordered_map<const TensorImpl*, std::pair<Tensor, Tensor>> cache;
};

thread_local State g_state;

int index(DeviceType d) { return d == DeviceType::CUDA ? 1 : 0; }

}  // namespace

bool any_enabled() { return g_state.enabled[0] || g_state.enabled[1]; }
bool is_enabled(DeviceType d) { return g_state.enabled[index(d)]; }
void set_enabled(DeviceType d, bool on) { g_state.enabled[index(d)] = on; }
ScalarType get_dtype(DeviceType d) { return g_state.dtype[index(d)]; }
void set_dtype(DeviceType d, ScalarType t) { g_state.dtype[index(d)] = t; }
int64_t increment_nesting() { return ++g_state.nesting; }
int64_t decrement_nesting() { return --g_state.nesting; }
bool cache_enabled() { return g_state.cache_enabled; }
void set_cache_enabled(bool on) { g_state.cache_enabled = on; }
void clear_cache() { g_state.cache.clear(); }

Tensor cached(const Tensor& src, ScalarType to) {
  auto it = g_state.cache.find(src.get());
  if (it == g_state.cache.end() || it->second.second->dtype() != to) return Tensor();
  return it->second.second;
}

void put_cached(const Tensor& src, ScalarType to, const Tensor& result) {
  (void)to;
  g_state.cache[src.get()] = {src, result};
}

}  // namespace ember::autocast
