// conv2d, conv2d_backward_input and conv2d_backward_weight on CUDA: through cuDNN's legacy
// convolution API when it can be used, else the device-agnostic im2col + cuBLAS bodies of
// conv_cpu.cpp. The checks are conv_meta.h's (the CPU kernels'), made first, so the errors are
// the same on both devices and whether cuDNN runs or not.
//
// cuDNN is loaded at first use with dlopen (libcudnn.so.9: the system's, else the
// nvidia-cudnn-cu13 wheel's), so the module imports without it; its headers are needed at
// build time only (EMBER_HAVE_CUDNN_HEADERS). When it cannot be loaded the kernels take the
// im2col path silently; ember.backends.cudnn.is_available() says whether it runs, and
// _C._cudnn_unavailable_reason() why not.
//
// The switches of ember.backends.cudnn (CudnnSettings, cuda_hooks.h): enabled (off: the
// im2col path); benchmark (time the algorithms once per shape with cudnnFind*Ex, else take
// cuDNN's heuristic ranking, cudnnGet*_v7); deterministic (only algorithms cuDNN marks
// deterministic; if none suits, the im2col path); allow_tf32 (float32 may run on TF32
// tensor cores, else FMA math only). The choice is cached per (op, device, dtype, shapes,
// geometry, switches).
//
// cuDNN takes 32-bit sizes and no empty tensors: those shapes take the im2col path. Operands
// are made contiguous (NCHW); results are contiguous; workspaces come from the caching
// allocator on the current stream, where every call is queued (one cuDNN handle per thread
// and device, bound to that stream at each call). Only benchmark's first run of a shape
// synchronises (cudnnFind*Ex does). Every cuDNN error is a RuntimeError naming the op, the
// cuDNN call, its status and the shapes.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ember/ops/conv/conv_meta.h"
#include "ember/backends/cuda/cuda_common.h"
#include "ember/runtime/cuda_hooks.h"
#include "ember/ops/ops_util.h"

#ifdef EMBER_HAVE_CUDNN_HEADERS
#include <cudnn.h>
#endif

namespace ember::cuda {
namespace {

#ifdef EMBER_HAVE_CUDNN_HEADERS

// ---- the library ----

#define EMBER_CUDNN_FUNCTIONS(X)                   \
  X(cudnnGetVersion)                               \
  X(cudnnGetErrorString)                           \
  X(cudnnCreate)                                   \
  X(cudnnSetStream)                                \
  X(cudnnCreateTensorDescriptor)                   \
  X(cudnnDestroyTensorDescriptor)                  \
  X(cudnnSetTensor4dDescriptor)                    \
  X(cudnnCreateFilterDescriptor)                   \
  X(cudnnDestroyFilterDescriptor)                  \
  X(cudnnSetFilter4dDescriptor)                    \
  X(cudnnCreateConvolutionDescriptor)              \
  X(cudnnDestroyConvolutionDescriptor)             \
  X(cudnnSetConvolution2dDescriptor)               \
  X(cudnnSetConvolutionGroupCount)                 \
  X(cudnnSetConvolutionMathType)                   \
  X(cudnnGetConvolutionForwardAlgorithm_v7)        \
  X(cudnnFindConvolutionForwardAlgorithmEx)        \
  X(cudnnGetConvolutionForwardWorkspaceSize)       \
  X(cudnnConvolutionForward)                       \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)   \
  X(cudnnFindConvolutionBackwardDataAlgorithmEx)   \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize)  \
  X(cudnnConvolutionBackwardData)                  \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7) \
  X(cudnnFindConvolutionBackwardFilterAlgorithmEx) \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize) \
  X(cudnnConvolutionBackwardFilter)

// The entry points used here, as dlsym finds them; each member has its function's name and type.
struct Api {
#define EMBER_CUDNN_MEMBER(name) decltype(&::name) name = nullptr;
  EMBER_CUDNN_FUNCTIONS(EMBER_CUDNN_MEMBER)
#undef EMBER_CUDNN_MEMBER
  decltype(&::cudnnGetLastErrorString) cudnnGetLastErrorString = nullptr;  // optional
};

struct Library {
  Api api;
  int version = 0;  // 0: not loaded
  std::string error;  // why not
};

void load(Library& lib, void* h, const std::string& why) {
  const char* soname = "libcudnn.so.9";
  if (!h) {
    lib.error = message("cuDNN could not be loaded: ", why, ": pip install nvidia-cudnn-cu13");
    return;
  }
  Api& api = lib.api;
  std::string missing;
#define EMBER_CUDNN_LOOKUP(name)                                          \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(h, #name));      \
  if (!api.name) missing += missing.empty() ? #name : ", " #name;
  EMBER_CUDNN_FUNCTIONS(EMBER_CUDNN_LOOKUP)
#undef EMBER_CUDNN_LOOKUP
  api.cudnnGetLastErrorString = reinterpret_cast<decltype(api.cudnnGetLastErrorString)>(
      dlsym(h, "cudnnGetLastErrorString"));
  if (!missing.empty()) {
    lib.error = message("the cuDNN library found (", soname, ") lacks ", missing);
    return;
  }
  lib.version = static_cast<int>(api.cudnnGetVersion());
}

// Loads cuDNN at the first call; never throws.
const Library& library() {
  static Library lib;
  static std::once_flag once;
  static std::atomic<bool> loaded{false};
  if (!loaded.load(std::memory_order_acquire)) {
    // Opened before call_once: finding the wheel takes the GIL, which a thread waiting at
    // call_once may hold.
    std::string why;
    void* h = open_cuda_library("libcudnn.so.9", "cudnn/lib/", &why);
    std::call_once(once, [&] {
      load(lib, h, why);
      loaded.store(true, std::memory_order_release);
    });
  }
  return lib;
}

const Api& api() { return library().api; }

class CudnnRuntimeHooks final : public CudnnHooks {
 public:
  int version() const override {
    try {
      if (cuda_hooks().device_count() == 0) return 0;
    } catch (const std::exception&) {
      return 0;
    }
    return library().version;
  }
  std::string unavailable_reason() const override {
    try {
      if (cuda_hooks().device_count() == 0) return "no CUDA device: " + cuda_hooks().unavailable_reason();
    } catch (const std::exception& e) {
      return e.what();
    }
    return library().error;
  }
};

// ---- one convolution as cuDNN sees it ----

enum class Kind { Forward, BackwardData, BackwardFilter };

// x: the (N, C, H, W) input or its gradient, w: the weight or its gradient, y: the output or
// grad_output; contiguous.
struct Call {
  const char* op;
  const Conv2dMeta& m;
  ScalarType dtype;
  Device device;
};

struct Buffers {
  void* x;
  void* w;
  void* y;
};

std::string describe(const Call& c) {
  const Conv2dMeta& m = c.m;
  const ConvGeometry& g = m.g;
  return message("input ", shape_str({m.N, m.C, m.H, m.W}), ", weight ",
                 shape_str({m.O, m.C / m.groups, g.kh, g.kw}), ", output ", shape_str({m.N, m.O, m.oh, m.ow}),
                 ", stride (", g.sh, ", ", g.sw, "), padding (", g.ph, ", ", g.pw, "), dilation (", g.dh, ", ", g.dw,
                 "), groups ", m.groups, ", ", dtype_name(c.dtype));
}

void check(const Call& c, cudnnStatus_t status, const char* call) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  std::string detail;
  if (api().cudnnGetLastErrorString) {
    char text[512] = {0};
    api().cudnnGetLastErrorString(text, sizeof(text));
    if (text[0]) detail = message(" (", text, ")");
  }
  throw std::runtime_error(message(c.op, ": cuDNN error in ", call, ": ", api().cudnnGetErrorString(status),
                                   " (status ", static_cast<int>(status), ")", detail, ", for ", describe(c)));
}

// Calls api().fn(args...) and raises for its status, naming fn.
#define EMBER_CUDNN_CALL(call, fn, ...) check((call), api().fn(__VA_ARGS__), #fn)

// The descriptors, destroyed with their owner (also when a later one fails).
struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  explicit TensorDesc(const Call& c) { EMBER_CUDNN_CALL(c, cudnnCreateTensorDescriptor, &d); }
  ~TensorDesc() { api().cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};
struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  explicit FilterDesc(const Call& c) { EMBER_CUDNN_CALL(c, cudnnCreateFilterDescriptor, &d); }
  ~FilterDesc() { api().cudnnDestroyFilterDescriptor(d); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
};
struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  explicit ConvDesc(const Call& c) { EMBER_CUDNN_CALL(c, cudnnCreateConvolutionDescriptor, &d); }
  ~ConvDesc() { api().cudnnDestroyConvolutionDescriptor(d); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
};

cudnnDataType_t data_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float64: return CUDNN_DATA_DOUBLE;
    case ScalarType::Float16: return CUDNN_DATA_HALF;
    case ScalarType::BFloat16: return CUDNN_DATA_BFLOAT16;
    default: return CUDNN_DATA_FLOAT;
  }
}

// The math cuDNN may use while it ranks the algorithms: tensor cores for the 16-bit types,
// TF32 for float32 only when allowed (FMA math is the one that excludes it).
cudnnMathType_t search_math(ScalarType t) {
  switch (t) {
    case ScalarType::Float16:
    case ScalarType::BFloat16: return CUDNN_TENSOR_OP_MATH;
    case ScalarType::Float32:
      return cudnn_settings().allow_tf32.load(std::memory_order_relaxed) ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
    default: return CUDNN_DEFAULT_MATH;
  }
}

int as_int(int64_t v) { return static_cast<int>(v); }  // callers checked the range (fits_cudnn)

struct Descriptors {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
  explicit Descriptors(const Call& c) : x(c), y(c), w(c), conv(c) {
    const Conv2dMeta& m = c.m;
    const ConvGeometry& g = m.g;
    const cudnnDataType_t type = data_type(c.dtype);
    EMBER_CUDNN_CALL(c, cudnnSetTensor4dDescriptor, x.d, CUDNN_TENSOR_NCHW, type, as_int(m.N), as_int(m.C),
                     as_int(m.H), as_int(m.W));
    EMBER_CUDNN_CALL(c, cudnnSetTensor4dDescriptor, y.d, CUDNN_TENSOR_NCHW, type, as_int(m.N), as_int(m.O),
                     as_int(m.oh), as_int(m.ow));
    EMBER_CUDNN_CALL(c, cudnnSetFilter4dDescriptor, w.d, type, CUDNN_TENSOR_NCHW, as_int(m.O),
                     as_int(m.C / m.groups), as_int(g.kh), as_int(g.kw));
    EMBER_CUDNN_CALL(c, cudnnSetConvolution2dDescriptor, conv.d, as_int(g.ph), as_int(g.pw), as_int(g.sh),
                     as_int(g.sw), as_int(g.dh), as_int(g.dw), CUDNN_CROSS_CORRELATION,
                     c.dtype == ScalarType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT);
    EMBER_CUDNN_CALL(c, cudnnSetConvolutionGroupCount, conv.d, as_int(m.groups));
    EMBER_CUDNN_CALL(c, cudnnSetConvolutionMathType, conv.d, search_math(c.dtype));
  }
};

// One cuDNN handle per (thread, device), bound to `stream` at each use.
cudnnHandle_t handle_for(const Call& c, cudaStream_t stream) {
  thread_local std::vector<cudnnHandle_t> handles;
  const auto dev = static_cast<size_t>(c.device.index);
  if (handles.size() <= dev) handles.resize(dev + 1, nullptr);
  cudnnHandle_t& h = handles[dev];
  if (!h) EMBER_CUDNN_CALL(c, cudnnCreate, &h);
  EMBER_CUDNN_CALL(c, cudnnSetStream, h, stream);
  return h;
}

// ---- the three directions: cuDNN's functions for each ----

template <Kind K> struct Direction;

template <> struct Direction<Kind::Forward> {
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  using Algo = cudnnConvolutionFwdAlgo_t;
  static constexpr int kCount = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
  static void heuristic(const Call& c, cudnnHandle_t h, const Descriptors& d, int* got, Perf* perf) {
    EMBER_CUDNN_CALL(c, cudnnGetConvolutionForwardAlgorithm_v7, h, d.x.d, d.w.d, d.conv.d, d.y.d, kCount, got, perf);
  }
  static void find(const Call& c, cudnnHandle_t h, const Descriptors& d, const Buffers& b, int* got, Perf* perf,
                   void* ws, size_t ws_size) {
    EMBER_CUDNN_CALL(c, cudnnFindConvolutionForwardAlgorithmEx, h, d.x.d, b.x, d.w.d, b.w, d.conv.d, d.y.d, b.y,
                     kCount, got, perf, ws, ws_size);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const Descriptors& d, Algo algo, size_t* size) {
    return api().cudnnGetConvolutionForwardWorkspaceSize(h, d.x.d, d.w.d, d.conv.d, d.y.d, algo, size);
  }
  static void run(const Call& c, cudnnHandle_t h, const Descriptors& d, const Buffers& b, Algo algo, void* ws,
                  size_t ws_size, const void* one, const void* zero) {
    EMBER_CUDNN_CALL(c, cudnnConvolutionForward, h, one, d.x.d, b.x, d.w.d, b.w, d.conv.d, algo, ws, ws_size, zero,
                     d.y.d, b.y);
  }
};

template <> struct Direction<Kind::BackwardData> {
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  using Algo = cudnnConvolutionBwdDataAlgo_t;
  static constexpr int kCount = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
  static void heuristic(const Call& c, cudnnHandle_t h, const Descriptors& d, int* got, Perf* perf) {
    EMBER_CUDNN_CALL(c, cudnnGetConvolutionBackwardDataAlgorithm_v7, h, d.w.d, d.y.d, d.conv.d, d.x.d, kCount, got,
                     perf);
  }
  static void find(const Call& c, cudnnHandle_t h, const Descriptors& d, const Buffers& b, int* got, Perf* perf,
                   void* ws, size_t ws_size) {
    EMBER_CUDNN_CALL(c, cudnnFindConvolutionBackwardDataAlgorithmEx, h, d.w.d, b.w, d.y.d, b.y, d.conv.d, d.x.d,
                     b.x, kCount, got, perf, ws, ws_size);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const Descriptors& d, Algo algo, size_t* size) {
    return api().cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w.d, d.y.d, d.conv.d, d.x.d, algo, size);
  }
  static void run(const Call& c, cudnnHandle_t h, const Descriptors& d, const Buffers& b, Algo algo, void* ws,
                  size_t ws_size, const void* one, const void* zero) {
    EMBER_CUDNN_CALL(c, cudnnConvolutionBackwardData, h, one, d.w.d, b.w, d.y.d, b.y, d.conv.d, algo, ws, ws_size,
                     zero, d.x.d, b.x);
  }
};

template <> struct Direction<Kind::BackwardFilter> {
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  using Algo = cudnnConvolutionBwdFilterAlgo_t;
  static constexpr int kCount = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
  static void heuristic(const Call& c, cudnnHandle_t h, const Descriptors& d, int* got, Perf* perf) {
    EMBER_CUDNN_CALL(c, cudnnGetConvolutionBackwardFilterAlgorithm_v7, h, d.x.d, d.y.d, d.conv.d, d.w.d, kCount, got,
                     perf);
  }
  static void find(const Call& c, cudnnHandle_t h, const Descriptors& d, const Buffers& b, int* got, Perf* perf,
                   void* ws, size_t ws_size) {
    EMBER_CUDNN_CALL(c, cudnnFindConvolutionBackwardFilterAlgorithmEx, h, d.x.d, b.x, d.y.d, b.y, d.conv.d, d.w.d,
                     b.w, kCount, got, perf, ws, ws_size);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const Descriptors& d, Algo algo, size_t* size) {
    return api().cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x.d, d.y.d, d.conv.d, d.w.d, algo, size);
  }
  static void run(const Call& c, cudnnHandle_t h, const Descriptors& d, const Buffers& b, Algo algo, void* ws,
                  size_t ws_size, const void* one, const void* zero) {
    EMBER_CUDNN_CALL(c, cudnnConvolutionBackwardFilter, h, one, d.x.d, b.x, d.y.d, b.y, d.conv.d, algo, ws, ws_size,
                     zero, d.w.d, b.w);
  }
};

// ---- choosing an algorithm ----

struct Candidate {
  int algo;
  size_t workspace;  // bytes
  cudnnMathType_t math;
};
// The algorithms that suit one call, best first; none: the im2col path.
using Choice = std::vector<Candidate>;

std::mutex g_cache_mu;
std::map<std::vector<int64_t>, Choice> g_cache;

std::vector<int64_t> cache_key(const Call& c, Kind kind) {
  const Conv2dMeta& m = c.m;
  const ConvGeometry& g = m.g;
  const CudnnSettings& s = cudnn_settings();
  return {static_cast<int64_t>(kind), c.device.index, static_cast<int64_t>(c.dtype), m.N, m.C, m.H, m.W, m.O,
          g.kh, g.kw, g.ph, g.pw, g.sh, g.sw, g.dh, g.dw, m.groups, static_cast<int64_t>(search_math(c.dtype)),
          s.deterministic.load(std::memory_order_relaxed), s.benchmark.load(std::memory_order_relaxed)};
}

// `bytes` of device memory on the call's device (and current stream), for a workspace.
Tensor workspace_tensor(const Call& c, size_t bytes) {
  return ember::empty({static_cast<int64_t>(bytes)}, ScalarType::UInt8, c.device);
}

template <Kind K>
Choice choose(const Call& c, const std::vector<int64_t>& key, cudnnHandle_t h, const Descriptors& d,
              const Buffers& b) {
  using Dir = Direction<K>;
  {
    std::lock_guard<std::mutex> lock(g_cache_mu);
    auto it = g_cache.find(key);
    if (it != g_cache.end()) return it->second;
  }
  const CudnnSettings& s = cudnn_settings();
  typename Dir::Perf perf[Dir::kCount] = {};
  int got = 0;
  if (s.benchmark.load(std::memory_order_relaxed)) {
    // Time them all, with the workspace of the hungriest one if the device has it (the ones
    // that need more than they get report a failed status and are passed over).
    size_t most = 0;
    for (int a = 0; a < Dir::kCount; ++a) {
      size_t bytes = 0;
      if (Dir::workspace(h, d, static_cast<typename Dir::Algo>(a), &bytes) == CUDNN_STATUS_SUCCESS) {
        most = std::max(most, bytes);
      }
    }
    size_t free_bytes = 0, total_bytes = 0;
    cuda_hooks().mem_get_info(c.device.index, &free_bytes, &total_bytes);
    most = std::min(most, free_bytes / 10 * 9);  // beyond that, asking would empty the cache for nothing
    Tensor ws;
    try {
      ws = workspace_tensor(c, most);
    } catch (const DeviceOutOfMemory&) {
      ws = workspace_tensor(c, 0);
    }
    Dir::find(c, h, d, b, &got, perf, ws->data_ptr(), static_cast<size_t>(ws->numel()));
  } else {
    Dir::heuristic(c, h, d, &got, perf);
  }
  const bool deterministic = s.deterministic.load(std::memory_order_relaxed);
  const bool strict_fp32 = c.dtype == ScalarType::Float32 && search_math(c.dtype) == CUDNN_FMA_MATH;
  Choice choice;
  for (int i = 0; i < got; ++i) {
    const typename Dir::Perf& p = perf[i];
    if (p.status != CUDNN_STATUS_SUCCESS) continue;
    if (deterministic && p.determinism != CUDNN_DETERMINISTIC) continue;
    // float32 without TF32 runs in FMA math whatever the ranking used
    const cudnnMathType_t math = strict_fp32 ? CUDNN_FMA_MATH : p.mathType;
    size_t bytes = 0;
    EMBER_CUDNN_CALL(c, cudnnSetConvolutionMathType, d.conv.d, math);
    if (Dir::workspace(h, d, p.algo, &bytes) != CUDNN_STATUS_SUCCESS) continue;
    choice.push_back({static_cast<int>(p.algo), bytes, math});
  }
  std::lock_guard<std::mutex> lock(g_cache_mu);
  g_cache.emplace(key, choice);
  return choice;
}

// Drops algorithms from a cached choice: their workspaces did not fit, and asking again would
// only empty the allocator's cache again.
void forget(const std::vector<int64_t>& key, const std::vector<int>& algos) {
  std::lock_guard<std::mutex> lock(g_cache_mu);
  auto it = g_cache.find(key);
  if (it == g_cache.end()) return;
  Choice& choice = it->second;
  choice.erase(std::remove_if(choice.begin(), choice.end(),
                              [&](const Candidate& k) {
                                return std::find(algos.begin(), algos.end(), k.algo) != algos.end();
                              }),
               choice.end());
}

// Runs the call's convolution in direction K into b's output; false when no algorithm suits
// it (the caller takes the im2col path).
template <Kind K>
bool run(const Call& c, const Buffers& b) {
  using Dir = Direction<K>;
  DeviceGuard guard(c.device.index);
  cudnnHandle_t h = handle_for(c, as_stream(cuda_hooks().current_stream(c.device.index)));
  Descriptors d(c);
  const std::vector<int64_t> key = cache_key(c, K);
  const Choice choice = choose<K>(c, key, h, d, b);
  const double one64 = 1.0, zero64 = 0.0;
  const float one32 = 1.0f, zero32 = 0.0f;
  const bool f64 = c.dtype == ScalarType::Float64;
  const void* one = f64 ? static_cast<const void*>(&one64) : &one32;
  const void* zero = f64 ? static_cast<const void*>(&zero64) : &zero32;
  std::vector<int> too_big;
  for (size_t i = 0; i < choice.size(); ++i) {
    const Candidate& k = choice[i];
    Tensor ws;
    try {
      ws = workspace_tensor(c, k.workspace);
    } catch (const DeviceOutOfMemory&) {
      if (i + 1 == choice.size()) throw;
      too_big.push_back(k.algo);  // try one that needs less
      continue;
    }
    if (!too_big.empty()) forget(key, too_big);
    EMBER_CUDNN_CALL(c, cudnnSetConvolutionMathType, d.conv.d, k.math);
    Dir::run(c, h, d, b, static_cast<typename Dir::Algo>(k.algo), ws->data_ptr(), k.workspace, one, zero);
    return true;
  }
  return false;
}

// a * b * c * d, or INT64_MAX when that overflows (a backward op's int[] size may be anything).
int64_t product(int64_t a, int64_t b, int64_t c, int64_t d) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r) || __builtin_mul_overflow(r, c, &r) || __builtin_mul_overflow(r, d, &r)) {
    return INT64_MAX;
  }
  return r;
}

// Whether cuDNN takes this call: switched on, loadable, and sizes it can describe.
bool use_cudnn(const Conv2dMeta& m) {
  if (!cudnn_settings().enabled.load(std::memory_order_relaxed)) return false;
  const ConvGeometry& g = m.g;
  const int64_t x = product(m.N, m.C, m.H, m.W), w = product(m.O, m.C / m.groups, g.kh, g.kw);
  const int64_t y = product(m.N, m.O, m.oh, m.ow);
  if (std::min({x, w, y}) <= 0) return false;
  const int64_t largest = std::max({x, w, y, g.ph, g.pw, g.sh, g.sw, g.dh, g.dw});
  if (largest > INT_MAX) return false;
  return library().version != 0;
}

#else  // no cuDNN headers at build time

class CudnnRuntimeHooks final : public CudnnHooks {
 public:
  std::string unavailable_reason() const override {
    return "this build of ember has no cuDNN (its headers were not found at build time: pip install "
           "nvidia-cudnn-cu13, then rebuild)";
  }
};

#endif  // EMBER_HAVE_CUDNN_HEADERS

struct Registration {
  Registration() { cudnn_hooks_slot().store(new CudnnRuntimeHooks, std::memory_order_release); }  // never deleted
} registration;

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
              const Shape& padding, const Shape& dilation, int64_t groups) {
  const Conv2dMeta m = conv2d_meta(input, weight, bias, stride, padding, dilation, groups);
#ifdef EMBER_HAVE_CUDNN_HEADERS
  if (use_cudnn(m)) {
    Tensor x = ops::contiguous(input), w = ops::contiguous(weight);
    Tensor y = ember::empty({m.N, m.O, m.oh, m.ow}, input->dtype(), input->device());
    if (run<Kind::Forward>({"conv2d", m, input->dtype(), input->device()}, {x->data_ptr(), w->data_ptr(),
                                                                             y->data_ptr()})) {
      if (bias) ops::add(y, ops::view(bias, {m.O, 1, 1}), Scalar::from_int(1), y);
      return y;
    }
  }
#endif
  return conv2d_im2col(input, weight, bias, m);
}

Tensor conv2d_backward_input(const Tensor& grad_output, const Tensor& weight, const Shape& input_size,
                             const Shape& stride, const Shape& padding, const Shape& dilation, int64_t groups) {
  const Conv2dMeta m = conv2d_backward_input_meta(grad_output, weight, input_size, stride, padding, dilation, groups);
#ifdef EMBER_HAVE_CUDNN_HEADERS
  if (use_cudnn(m)) {
    Tensor dy = ops::contiguous(grad_output), w = ops::contiguous(weight);
    Tensor dx = ember::empty({m.N, m.C, m.H, m.W}, grad_output->dtype(), grad_output->device());
    if (run<Kind::BackwardData>({"conv2d_backward_input", m, grad_output->dtype(), grad_output->device()},
                                {dx->data_ptr(), w->data_ptr(), dy->data_ptr()})) {
      return dx;
    }
  }
#endif
  return conv2d_backward_input_im2col(grad_output, weight, m);
}

Tensor conv2d_backward_weight(const Tensor& grad_output, const Tensor& input, const Shape& weight_size,
                              const Shape& stride, const Shape& padding, const Shape& dilation, int64_t groups) {
  const Conv2dMeta m = conv2d_backward_weight_meta(grad_output, input, weight_size, stride, padding, dilation,
                                                   groups);
#ifdef EMBER_HAVE_CUDNN_HEADERS
  if (use_cudnn(m)) {
    Tensor dy = ops::contiguous(grad_output), x = ops::contiguous(input);
    Tensor dw = ember::empty(weight_size, grad_output->dtype(), grad_output->device());
    if (run<Kind::BackwardFilter>({"conv2d_backward_weight", m, grad_output->dtype(), grad_output->device()},
                                  {x->data_ptr(), dw->data_ptr(), dy->data_ptr()})) {
      return dw;
    }
  }
#endif
  return conv2d_backward_weight_im2col(grad_output, input, m);
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(conv2d);
EMBER_REGISTER_CUDA_KERNEL(conv2d_backward_input);
EMBER_REGISTER_CUDA_KERNEL(conv2d_backward_weight);
