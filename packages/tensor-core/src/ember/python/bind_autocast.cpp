// The compiled side of ember_tensor.amp: _C._autocast_* (the thread-local state of
// autocast.h) and the argument casts of the generated bindings (bind_autocast.h).
#include <string>

#include "ember/python/bind_autocast.h"
#include "ember/core/errors.h"
#include "ember/runtime/profiler.h"
#include "ember/python/python_api.h"
#include "ops_decl.h"

namespace ember {

void bind_autocast(py::module_& m);

namespace autocast {

Tensor cast_arg(const Tensor& t, ScalarType to) {
  // PyTorch caches only float32 -> lower-precision casts of leaves that require grad (weights):
  // other tensors change between ops, a cached cast of them would go stale.
  const PyObject* grad_fn = t->grad_fn.get();
  const bool cacheable = cache_enabled() && t->requires_grad && !t->view_base &&
                         (grad_fn == nullptr || grad_fn == Py_None) &&
                         t->dtype() == ScalarType::Float32 && to == get_dtype(t->device().type);
  if (cacheable) {
    if (Tensor hit = cached(t, to)) return hit;
  }
  profiler::RecordScope rec_("ember::to", "to", profiler::Kind::Op);
  if (rec_.wants_inputs()) {
    rec_.input(t);
    rec_.input("ScalarType");
    rec_.input("");
  }
  Tensor out = ember::empty(t->sizes(), to, t->device());
  {
    MaybeNoGil nogil(t->numel());
    ops::copy(out, t, false, out);
  }
  if (autograd_hook_installed() && needs_grad(t)) {
    py::object res = py::cast(out);
    call_autograd_hook("to", "function", py::make_tuple(py::cast(t), py::cast(to)), res);
  }
  // A cast made while autograd does not record (no_grad) has no history: caching it would
  // cut the gradient of later uses in the same region.
  if (cacheable && autograd_hook_installed()) put_cached(t, to, out);
  return out;
}

}  // namespace autocast

namespace {

DeviceType device_type_arg(const std::string& s) {
  if (s == "cpu") return DeviceType::CPU;
  if (s == "cuda") return DeviceType::CUDA;
  throw ValueError("autocast: device_type must be 'cpu' or 'cuda', got '" + s + "'");
}

}  // namespace

void bind_autocast(py::module_& m) {
  namespace ac = autocast;
  m.def("_autocast_is_enabled", [](const std::string& d) { return ac::is_enabled(device_type_arg(d)); });
  m.def("_autocast_set_enabled",
        [](const std::string& d, bool on) { ac::set_enabled(device_type_arg(d), on); });
  m.def("_autocast_get_dtype", [](const std::string& d) { return ac::get_dtype(device_type_arg(d)); });
  m.def("_autocast_set_dtype",
        [](const std::string& d, ScalarType t) { ac::set_dtype(device_type_arg(d), t); });
  m.def("_autocast_increment_nesting", &ac::increment_nesting);
  m.def("_autocast_decrement_nesting", &ac::decrement_nesting);
  m.def("_autocast_is_cache_enabled", &ac::cache_enabled);
  m.def("_autocast_set_cache_enabled", &ac::set_cache_enabled);
  m.def("_autocast_clear_cache", &ac::clear_cache);
}

}  // namespace ember
