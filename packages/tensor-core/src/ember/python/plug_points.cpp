// The core's plug points for out-of-tree packages: the host allocator (installable through
// the C API capsule ember_tensor._C_API until the first CPU allocation) and kernel overrides
// (ember_tensor.library.register_kernel). See python/ember_tensor/include/ember_plugin.h and
// docs/plugins.md.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>

#include "ember/backends/cpu/blas.h"
#include "ember/runtime/cuda_hooks.h"
#include "ember/memory/host_allocator.h"
#include "ember/python/python_api.h"
#include "ember/runtime/simd.h"
#include "ember_tensor/include/ember_plugin.h"

namespace ember {

// ---- the host allocator ----

namespace {

constexpr const char* kDefaultHostAllocator = "ember caching allocator";

// A plugin's EmberHostAllocator seen as an Allocator. Zero-byte requests take one byte, so a
// plugin never sees 0 and every storage has a real address.
class PluginHostAllocator final : public Allocator {
 public:
  explicit PluginHostAllocator(const EmberHostAllocator* a) : a_(a) {}
  void* allocate(size_t nbytes) override {
    const size_t n = nbytes ? nbytes : 1;
    void* p = a_->allocate(a_->ctx, n);
    if (!p) {
      throw std::runtime_error(message("out of memory: the host allocator '", a_->name,
                                       "' could not allocate ", n, " bytes"));
    }
    if (reinterpret_cast<uintptr_t>(p) % 64 != 0) {
      a_->deallocate(a_->ctx, p, n);
      throw std::runtime_error(message("the host allocator '", a_->name, "' returned memory at ",
                                       p, ", which is not aligned to 64 bytes as ember_plugin.h "
                                       "requires"));
    }
    return p;
  }
  void deallocate(void* ptr, size_t nbytes) override { a_->deallocate(a_->ctx, ptr, nbytes ? nbytes : 1); }
  const char* name() const { return a_->name; }

 private:
  const EmberHostAllocator* a_;
};

std::atomic<Allocator*> g_host{nullptr};  // set at the first CPU allocation, then fixed
std::mutex g_host_mu;                     // guards the rest
PluginHostAllocator* g_plugin = nullptr;  // installed through the C API, not yet or in use
std::string g_first_use;                  // what the first allocation was, for the error
std::chrono::steady_clock::time_point g_first_use_time;

// "train.py:12 in step <- train.py:30 in <module>" when this thread holds the GIL.
std::string python_location() {
  if (!Py_IsInitialized() || !PyGILState_Check()) return "";
  std::string out;
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  Py_XINCREF(frame);
  for (int depth = 0; frame && depth < 3; ++depth) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    PyObject* file = PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "co_filename");
    PyObject* func = PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "co_name");
    const char* f = file ? PyUnicode_AsUTF8(file) : nullptr;
    const char* n = func ? PyUnicode_AsUTF8(func) : nullptr;
    if (!out.empty()) out += " <- ";
    out += message(f ? f : "?", ":", PyFrame_GetLineNumber(frame), " in ", n ? n : "?");
    Py_XDECREF(file);
    Py_XDECREF(func);
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  PyErr_Clear();
  return out;
}

Allocator* first_host_allocation() {
  const std::string where = python_location();  // before the lock: it may touch Python
  std::lock_guard<std::mutex> g(g_host_mu);
  if (Allocator* a = g_host.load(std::memory_order_acquire)) return a;
  Allocator* a = g_plugin ? static_cast<Allocator*>(g_plugin) : caching_cpu_allocator();
  g_first_use = where.empty() ? "outside Python code (no Python frame on that thread)" : "at " + where;
  g_first_use_time = std::chrono::steady_clock::now();
  g_host.store(a, std::memory_order_release);
  return a;
}

const char* host_allocator_name() {
  std::lock_guard<std::mutex> g(g_host_mu);
  return g_plugin ? g_plugin->name() : kDefaultHostAllocator;
}

int set_host_allocator(const EmberHostAllocator* allocator) {
  std::lock_guard<std::mutex> g(g_host_mu);
  std::string error;
  if (!allocator || !allocator->allocate || !allocator->deallocate || !allocator->name) {
    error = "set_host_allocator: the EmberHostAllocator must have a name, allocate and deallocate";
  } else if (g_host.load(std::memory_order_acquire)) {
    char ago[32];
    std::snprintf(ago, sizeof ago, "%.3f",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - g_first_use_time).count());
    error = message("set_host_allocator: cannot install the host allocator '", allocator->name,
                    "': the host allocator '", g_plugin ? g_plugin->name() : kDefaultHostAllocator,
                    "' has been in use since the first CPU allocation, ", ago, " s ago, ", g_first_use,
                    ". Install it before any tensor is created (import the plugin first).");
  } else if (g_plugin) {
    error = message("set_host_allocator: cannot install the host allocator '", allocator->name,
                    "': the host allocator '", g_plugin->name(),
                    "' is installed already, and a process has one host allocator");
  } else {
    g_plugin = new PluginHostAllocator(allocator);  // lives as long as the process
    return 0;
  }
  PyErr_SetString(PyExc_RuntimeError, error.c_str());
  return -1;
}

const EmberCApi g_c_api = {EMBER_PLUGIN_ABI_MAJOR, EMBER_PLUGIN_API_LEVEL, &set_host_allocator,
                           &host_allocator_name};

}  // namespace

Allocator* cpu_allocator() {
  if (Allocator* a = g_host.load(std::memory_order_acquire)) return a;
  return first_host_allocation();
}

// ---- kernel overrides ----

std::atomic<bool> g_kernel_overrides_active{false};

namespace {

std::unordered_map<std::string, py::object>& overrides() {  // op name -> fn (GIL guards it)
  static auto* table = new std::unordered_map<std::string, py::object>();  // never destroyed
  return *table;
}
thread_local bool tls_in_override = false;

}  // namespace

py::object find_kernel_override(const char* op) {
  if (tls_in_override) return py::object();  // ops an override runs use the built-in kernels
  auto it = overrides().find(op);
  return it == overrides().end() ? py::object() : it->second;
}

py::object call_kernel_override(const char* op, const py::object& fn, const py::tuple& args, const Tensor* out) {
  struct Scope {
    Scope() { tls_in_override = true; }
    ~Scope() { tls_in_override = false; }
  } scope;
  py::object result = out ? fn(*args, py::arg("out") = *out) : fn(*args);
  if (out && !result.is(py::reinterpret_borrow<py::object>(Py_NotImplemented))) {
    if (!py::isinstance<TensorImpl>(result) || result.cast<Tensor>().get() != out->get()) {
      throw TypeError(message(op, ": the kernel registered for it (", py::repr(fn).cast<std::string>(),
                              ") was given out= and must write into out and return it (or return "
                              "NotImplemented); it returned ", py::repr(result).cast<std::string>()));
    }
  }
  return result;
}

void override_result_error(const char* op, const py::object& fn, const py::object& result, const char* expected) {
  throw TypeError(message(op, ": the kernel registered for it (", py::repr(fn).cast<std::string>(),
                          ") returned ", py::str(py::type::of(result)).cast<std::string>(), ", expected ",
                          expected, " (or NotImplemented to use the built-in kernel)"));
}

namespace {

void set_kernel_override(const std::string& op, py::object fn) {
  if (fn.is_none()) {
    overrides().erase(op);
  } else {
    overrides()[op] = std::move(fn);
  }
  g_kernel_overrides_active.store(!overrides().empty(), std::memory_order_relaxed);
}

}  // namespace

// ---- bindings ----

void bind_plug_points(py::module_& m) {
  m.attr("_C_API") = py::capsule(static_cast<const void*>(&g_c_api), EMBER_C_API_CAPSULE);
  m.def("_host_allocator", [] {
    py::dict d;
    std::lock_guard<std::mutex> g(g_host_mu);
    d["name"] = g_plugin ? g_plugin->name() : kDefaultHostAllocator;
    d["plugin"] = g_plugin != nullptr;
    const bool used = g_host.load(std::memory_order_acquire) != nullptr;
    d["in_use"] = used;
    d["first_use"] = used ? py::object(py::str(g_first_use)) : py::object(py::none());
    return d;
  }, "The host allocator: {'name', 'plugin' (installed through the C API), 'in_use', 'first_use'}.");
  m.def("_set_kernel_override", &set_kernel_override, py::arg("op"), py::arg("fn").none(true),
        "Sets (fn) or removes (None) the override of an op's CPU kernel; ember_tensor.library checks the arguments.");
  m.def("_c_api_version", [] { return py::make_tuple(EMBER_PLUGIN_ABI_MAJOR, EMBER_PLUGIN_API_LEVEL); });
  m.def("_build_info", [] {
    py::dict d;
    // the products' library (MKL or OpenBLAS, chosen by CPU vendor or EMBER_BLAS); LAPACK
    // always comes from OpenBLAS
    switch (gemm_library()) {
      case GemmLibrary::MKL:
        d["blas"] = message("MKL (products), OpenBLAS (scipy-openblas32, ", openblas_kernels(), " kernels; LAPACK)");
        break;
      case GemmLibrary::OpenBLAS:
        d["blas"] = message("OpenBLAS (scipy-openblas32, ", openblas_kernels(), " kernels)");
        break;
      default: d["blas"] = "built-in GEMM"; break;
    }
    d["gemm"] = gemm_library_name(gemm_library());
    // what multiplies bfloat16 operands as they are: "MKL" (AMX), "oneDNN" (AVX512-BF16), or ""
    // (float32 products of widened copies)
    switch (bf16_gemm()) {
      case Bf16Gemm::MKL: d["bf16_gemm"] = "MKL"; break;
      case Bf16Gemm::OneDNN: d["bf16_gemm"] = "oneDNN"; break;
      default: d["bf16_gemm"] = ""; break;
    }
    d["cuda"] = cuda_hooks().is_built();
#ifdef EMBER_CUDA_ARCHS
    d["cuda_archs"] = EMBER_CUDA_ARCHS;  // "80,90"
#endif
    d["simd"] = cpu_level_name(cpu_level());
#if defined(__clang__)
    d["compiler"] = "clang " __clang_version__;
#elif defined(__GNUC__)
    d["compiler"] = "GCC " __VERSION__;
#else
    d["compiler"] = "unknown";
#endif
    d["c_api"] = py::make_tuple(EMBER_PLUGIN_ABI_MAJOR, EMBER_PLUGIN_API_LEVEL);
    return d;
  }, "How this core was built: BLAS, CUDA, the SIMD level in use, the compiler, the C API version.");
}

}  // namespace ember
