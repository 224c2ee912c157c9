// oneDNN on the CPU: loading the library and the pieces its callers share (onednn.h).
#include "ember/backends/cpu/onednn.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#ifdef EMBER_HAVE_ONEDNN_HEADERS
#include <dlfcn.h>

#include <mutex>
#include <stdexcept>

#include "ember/core/errors.h"
#include "ember/ops/ops_util.h"
#endif

namespace ember::cpu {
namespace {

std::atomic<bool> g_enabled{[] {
  const char* e = std::getenv("EMBER_ONEDNN");
  return !(e && std::strcmp(e, "0") == 0);
}()};

}  // namespace

bool onednn_enabled() { return g_enabled.load(std::memory_order_relaxed); }
void set_onednn_enabled(bool on) { g_enabled.store(on, std::memory_order_relaxed); }

#ifndef EMBER_HAVE_ONEDNN_HEADERS

OnednnInfo onednn_info() { return {"", "", "this core was built without oneDNN's headers (onednn-devel-cpu-gomp)"}; }
bool onednn_takes(bool) { return false; }

#else

namespace onednn {
namespace {

struct Library {
  Api api;
  dnnl_engine_t engine = nullptr;  // null: not loaded
  bool native_bf16 = false;        // the CPU computes bfloat16 (AVX512-BF16 or AMX)
  std::string version, path, error;
};

constexpr const char* kSoname = "libdnnl.so.3";

void load(Library& lib, void* h, const std::string& path) {
  Api& api = lib.api;
  std::string missing;
#define EMBER_ONEDNN_LOOKUP(name)                                   \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(h, #name)); \
  if (!api.name) missing += missing.empty() ? #name : ", " #name;
  EMBER_ONEDNN_FUNCTIONS(EMBER_ONEDNN_LOOKUP)
  // OpenMP's, from the libgomp.so.1 libdnnl links (PyTorch's bundled copy carries that soname too:
  // imported first, it is the one the loader gives libdnnl, so there is one OpenMP in the process)
  EMBER_ONEDNN_LOOKUP(omp_get_max_threads)
  EMBER_ONEDNN_LOOKUP(omp_set_num_threads)
#undef EMBER_ONEDNN_LOOKUP
  if (!missing.empty()) {
    lib.error = message("the oneDNN library found (", path, ") lacks ", missing,
                        " (Ember needs oneDNN 3 built with the OpenMP runtime: pip install onednn-cpu-gomp)");
    return;
  }
  const dnnl_version_t* v = api.dnnl_version();
  if (v->major != DNNL_VERSION_MAJOR) {
    lib.error = message("the oneDNN library found (", path, ") is version ", v->major, ".", v->minor,
                        "; Ember needs ", DNNL_VERSION_MAJOR, ".x");
    return;
  }
  dnnl_engine_t engine = nullptr;
  if (api.dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success) {
    lib.error = message("oneDNN (", path, ") could not create its CPU engine");
    return;
  }
  lib.version = message(v->major, ".", v->minor, ".", v->patch);
  const unsigned isa = static_cast<unsigned>(api.dnnl_get_effective_cpu_isa());
  lib.native_bf16 = (isa & dnnl_cpu_isa_avx512_core_bf16) == dnnl_cpu_isa_avx512_core_bf16;
  lib.path = path;
  lib.engine = engine;
}

// Loads oneDNN at the first call (the loader's search path first, then <prefix>/lib of the
// Python installation, where the wheel puts it); never throws.
const Library& library() {
  static Library lib;
  static std::once_flag once;
  static std::atomic<bool> loaded{false};
  if (!loaded.load(std::memory_order_acquire)) {
    // Looked for before call_once: finding the prefix takes the GIL, which a thread waiting
    // at call_once may hold.
    void* h = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
    std::string path = kSoname, why;
    for (const std::string& dir : h ? std::vector<std::string>{} : python_data_lib_dirs()) {
      path = dir + "/" + kSoname;
      if ((h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
      if (const char* err = dlerror()) why += message(why.empty() ? "" : "; ", err);
    }
    Dl_info info{};
    if (void* sym = h ? dlsym(h, "dnnl_version") : nullptr; sym && dladdr(sym, &info) && info.dli_fname) {
      path = info.dli_fname;  // where the loader found it
    }
    std::call_once(once, [&] {
      if (h) {
        load(lib, h, path);
      } else {
        lib.error = message(kSoname, " was not found (", why.empty() ? "no candidate folder" : why,
                            "): pip install onednn-cpu-gomp");
      }
      loaded.store(true, std::memory_order_release);
    });
  }
  return lib;
}

// A thread's oneDNN stream (oneDNN streams are not shared between threads).
dnnl_stream_t thread_stream() {
  struct Owned {
    dnnl_stream_t s = nullptr;
    ~Owned() {
      if (s) api().dnnl_stream_destroy(s);
    }
  };
  thread_local Owned owned;
  if (!owned.s && api().dnnl_stream_create(&owned.s, library().engine, dnnl_stream_default_flags) != dnnl_success) {
    throw std::runtime_error("oneDNN: could not create a stream");
  }
  return owned.s;
}

}  // namespace

const Api& api() { return library().api; }
dnnl_engine_t engine() { return library().engine; }

dnnl_primitive_attr_t user_scratchpad_attr(bool created) {
  auto make = [] {
    dnnl_primitive_attr_t a = nullptr;
    api().dnnl_primitive_attr_create(&a);
    api().dnnl_primitive_attr_set_scratchpad_mode(a, dnnl_scratchpad_mode_user);
    return a;
  };
  if (created) return make();
  static dnnl_primitive_attr_t attr = make();
  return attr;
}

size_t scratchpad_bytes(const_dnnl_primitive_desc_t pd) {
  const_dnnl_memory_desc_t md = api().dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  return md ? api().dnnl_memory_desc_get_size(md) : 0;
}

Buffer::Buffer(size_t bytes) {
  if (bytes) {
    t = empty({static_cast<int64_t>((bytes + 3) / 4)}, ScalarType::Float32);
    ptr = t->data<float>();
  }
}

Args::~Args() {
  for (const dnnl_exec_arg_t& a : args_) api().dnnl_memory_destroy(a.memory);
}

void Args::add(int arg, const_dnnl_memory_desc_t md, void* ptr) {
  dnnl_memory_t m = nullptr;
  if (api().dnnl_memory_create(&m, md, library().engine, ptr) != dnnl_success) {
    throw std::runtime_error("oneDNN: could not wrap a buffer as memory");
  }
  args_.push_back({arg, m});
}

void Args::run(const char* op, const_dnnl_primitive_desc_t pd, dnnl_primitive_t prim, size_t scratch) {
  Buffer pad(scratch);
  if (scratch) add(DNNL_ARG_SCRATCHPAD, api().dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0), pad.ptr);
  dnnl_stream_t s = thread_stream();
  if (api().dnnl_primitive_execute(prim, s, static_cast<int>(args_.size()), args_.data()) != dnnl_success ||
      api().dnnl_stream_wait(s) != dnnl_success) {
    throw std::runtime_error(message(op, ": oneDNN failed to run a primitive"));
  }
}

}  // namespace onednn

OnednnInfo onednn_info() {
  const onednn::Library& lib = onednn::library();
  return {lib.version, lib.path, lib.engine ? std::string() : lib.error, lib.native_bf16};
}

bool onednn_takes(bool bf16) {
  if (!onednn_enabled()) return false;
  const onednn::Library& lib = onednn::library();
  return lib.engine != nullptr && (!bf16 || lib.native_bf16);
}

#endif  // EMBER_HAVE_ONEDNN_HEADERS

}  // namespace ember::cpu
