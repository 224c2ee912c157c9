// The CUDA iteration engine for elementwise kernels: operands described by byte strides over a
// broadcast shape (coalesced like the CPU's make_loop), one thread per element in a
// grid-stride loop, on the current stream of the tensors' device. Also the device-side
// dtype conversions and the dtype dispatch of the CUDA kernels, and the small tensor helpers
// the kernel files share (operands that are CPU scalars, moves and contiguous copies).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <type_traits>

#include "ember/runtime/cuda_hooks.h"
#include "ember/ops/ops_util.h"

namespace ember::cuda_engine {

constexpr int kMaxDims = 10;
constexpr int kThreads = 256;

// Storage type -> the type arithmetic runs in (16-bit floats compute in float).
template <typename T> struct OpMath { using type = T; };
template <> struct OpMath<__half> { using type = float; };
template <> struct OpMath<__nv_bfloat16> { using type = float; };
template <typename T> using opmath_t = typename OpMath<T>::type;

template <typename T> constexpr bool is_low_float = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// The host (CPU kernel) type of a device storage type.
template <typename T> struct HostOf { using type = T; };
template <> struct HostOf<__half> { using type = Half; };
template <> struct HostOf<__nv_bfloat16> { using type = BFloat16; };

// Converts between any two element types the way the CPU's convert<To, From> does.
template <typename To, typename From> __device__ __forceinline__ To cvt(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_complex_v<To>) {
    using R = real_t<To>;
    if constexpr (is_complex_v<From>) return To(static_cast<R>(v.re), static_cast<R>(v.im));
    else return To(cvt<R>(v), R(0));
  } else if constexpr (is_complex_v<From>) {
    // complex -> real keeps the real part (bool asks for either part), as on the CPU
    if constexpr (std::is_same_v<To, bool>) return v.re != 0 || v.im != 0;
    else return cvt<To>(v.re);
  } else if constexpr (std::is_same_v<From, __half>) {
    return cvt<To>(__half2float(v));
  } else if constexpr (std::is_same_v<From, __nv_bfloat16>) {
    return cvt<To>(__bfloat162float(v));
  } else if constexpr (std::is_same_v<To, __half>) {
    return __float2half(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    return __float2bfloat16(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    // as the CPU: NaN -> 0, through int64 (uint8 wraps modulo 256, as PyTorch's does; the
    // others saturate at int64's range first). A plain device cast would saturate at To's.
    const double d = static_cast<double>(v);
    if (d != d) return To(0);
    if constexpr (std::is_same_v<To, uint64_t>) {  // the upper half of uint64's range too
      if (d >= 9.2233720368547758e18) return d < 1.8446744073709552e19 ? static_cast<To>(d) : ~To(0);
      if (d <= -9.2233720368547758e18) return To(1) << 63;
    } else if constexpr (!std::is_same_v<To, uint8_t>) {
      if (d >= 9.2233720368547758e18) return std::numeric_limits<To>::max();
      if (d <= -9.2233720368547758e18) return std::numeric_limits<To>::min();
    }
    return static_cast<To>(static_cast<int64_t>(d));
  } else {
    return static_cast<To>(v);
  }
}

// Calls f(T{}) with T the device storage type of dtype t.
template <typename F> void dispatch_device_type(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case ScalarType::Bool: f(bool{}); return;
    case ScalarType::UInt8: f(uint8_t{}); return;
    case ScalarType::Int8: f(int8_t{}); return;
    case ScalarType::Int16: f(int16_t{}); return;
    case ScalarType::Int32: f(int32_t{}); return;
    case ScalarType::Int64: f(int64_t{}); return;
    case ScalarType::Float16: f(__half{}); return;
    case ScalarType::BFloat16: f(__nv_bfloat16{}); return;
    case ScalarType::Float32: f(float{}); return;
    case ScalarType::Float64: f(double{}); return;
    default: break;
  }
  // PyTorch's CUDA build refuses such dtypes (its wide unsigned ones, say) alike
  throw NotImplementedError(message(op, ": dtype ", dtype_name(t), " is not implemented on CUDA"));
}

// Every dtype, complex64/128 and uint16/32/64 included: for the kernels that only move or
// convert elements (copies and fills).
template <typename F> void dispatch_device_any(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case ScalarType::ComplexFloat: f(Complex<float>{}); return;
    case ScalarType::ComplexDouble: f(Complex<double>{}); return;
    case ScalarType::UInt16: f(uint16_t{}); return;
    case ScalarType::UInt32: f(uint32_t{}); return;
    case ScalarType::UInt64: f(uint64_t{}); return;
    default: dispatch_device_type(t, op, f);
  }
}
// Calls f(Complex<float>{}) / f(Complex<double>{}) for complex64 / complex128.
template <typename F> void dispatch_device_complex(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case ScalarType::ComplexFloat: f(Complex<float>{}); return;
    case ScalarType::ComplexDouble: f(Complex<double>{}); return;
    default: throw std::runtime_error(message(op, ": expected a complex tensor, got ", dtype_name(t)));
  }
}
// dispatch_device_type's dtypes and complex64/128.
template <typename F> void dispatch_device_with_complex(ScalarType t, const char* op, F&& f) {
  if (is_complex(t)) dispatch_device_complex(t, op, f);
  else dispatch_device_type(t, op, f);
}
template <typename F> void dispatch_device_float(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case ScalarType::Float16: f(__half{}); return;
    case ScalarType::BFloat16: f(__nv_bfloat16{}); return;
    case ScalarType::Float32: f(float{}); return;
    case ScalarType::Float64: f(double{}); return;
    default: throw std::runtime_error(message(op, ": expected a floating point tensor, got ", dtype_name(t)));
  }
}

// N operands over one shape: byte strides per operand and dim, innermost last.
template <int N> struct Strided {
  int ndim = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[N][kMaxDims];
  char* base[N];

  __device__ __forceinline__ void offsets(int64_t linear, int64_t* off) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t i = linear % sizes[d];
      linear /= sizes[d];
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += i * strides[k][d];
    }
  }
};

// Operands already expanded to `shape`. Size-1 dims are dropped and neighbours that are
// contiguous for every operand merged, so contiguous tensors become one dim.
template <int N> Strided<N> make_strided(const char* op, const Shape& shape, const std::array<const TensorImpl*, N>& ts) {
  Strided<N> s;
  for (int k = 0; k < N; ++k) s.base[k] = ts[k]->data_ptr();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    int64_t st[N];
    for (int k = 0; k < N; ++k) st[k] = ts[k]->strides()[d] * static_cast<int64_t>(ts[k]->itemsize());
    if (s.ndim > 0) {
      bool merge = true;
      for (int k = 0; k < N; ++k) merge = merge && s.strides[k][s.ndim - 1] == st[k] * shape[d];
      if (merge) {
        s.sizes[s.ndim - 1] *= shape[d];
        for (int k = 0; k < N; ++k) s.strides[k][s.ndim - 1] = st[k];
        continue;
      }
    }
    if (s.ndim == kMaxDims) {
      throw NotImplementedError(message(op, ": cuda tensors with more than ", kMaxDims,
                                        " non-mergeable dims are not supported"));
    }
    s.sizes[s.ndim] = shape[d];
    for (int k = 0; k < N; ++k) s.strides[k][s.ndim] = st[k];
    ++s.ndim;
  }
  return s;
}

// The current stream of a CUDA device, as the hooks keep it.
inline cudaStream_t stream_of(const Device& d) {
  return reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(cuda_hooks().current_stream(d.index)));
}

// Makes the device current for a scope (the runtime layer's guard, through the hooks).
class CurrentDevice {
 public:
  explicit CurrentDevice(int index) {
    cudaGetDevice(&previous_);
    if (previous_ != index) cudaSetDevice(index);
  }
  ~CurrentDevice() {
    int now = -1;
    cudaGetDevice(&now);
    if (now != previous_) cudaSetDevice(previous_);
  }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int previous_ = 0;
};

inline int blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

// Threads per block for a row of n elements handled by one block: a multiple of 32, up to 256;
// and the blocks for `rows` such rows (at least 1, at most 2^20).
inline int row_threads(int64_t n) {
  if (n >= 256) return 256;
  return static_cast<int>(std::max<int64_t>(32, (n + 31) / 32 * 32));
}
inline int row_blocks(int64_t rows) { return static_cast<int>(std::min<int64_t>(std::max<int64_t>(rows, 1), 1 << 20)); }

void check_launch(const char* op);  // raises the launch error, if any, naming the op

// ---- tensor helpers of the kernel files ----
// (Named apart from the per-file copies some kernel files still keep in their anonymous
// namespaces, which an unqualified call would otherwise find too.)

// Whether t is a CPU tensor (among a CUDA op's operands: a 0-d scalar); false for null.
inline bool is_on_cpu(const Tensor& t) { return t && t->device().type == DeviceType::CPU; }

// A contiguous tensor on t's device with t's values in dtype (t itself when it is one).
inline Tensor contiguous_in(const Tensor& t, ScalarType dtype) {
  if (t->is_contiguous() && t->dtype() == dtype) return t;
  Tensor r = ember::empty(t->sizes(), dtype, t->device());
  ops::copy(r, t, false, r);
  return r;
}

// ---- creation ops ----

// The device a creation op makes its result on: device= (made concrete), else out's.
inline Device creation_device(const std::optional<Device>& device, const Tensor& out) {
  if (device) return concrete_device(*device);
  if (out) return out->device();
  return Device{DeviceType::CUDA, cuda_hooks().current_device()};
}

// The tensor a creation op fills: out itself when it is on that device, contiguous, with the
// shape and dtype (random_cpu.cpp's prepare_out), else a fresh one that finish_out copies into out.
inline Tensor creation_result(const Shape& size, ScalarType dtype, const std::optional<Device>& device, const Tensor& out) {
  const Device dev = creation_device(device, out);
  if (out && out->device() == dev && out->sizes() == size && out->dtype() == dtype && out->is_contiguous()) return out;
  return ember::empty(size, dtype, dev);
}

// A creation op's result: made (or out itself), filled by fill(result), moved into out,
// requires_grad set.
template <typename Fill>
Tensor create(const char* op, const Shape& size, ScalarType dtype, const std::optional<Device>& device,
              bool requires_grad, const Tensor& out, Fill fill) {
  Tensor res = creation_result(size, dtype, device, out);
  fill(res);
  res = finish_out(op, out, res);
  if (requires_grad) set_requires_grad(res, true);
  return res;
}

template <int N, typename F> __global__ void elementwise_kernel(Strided<N> s, int64_t n, F f) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[N];
    s.offsets(i, off);
    f(s.base, off);
  }
}

// ---- typed maps: out = f(a) and out = f(a, b), vectorised over contiguous operands ----

// V elements of T loaded or stored as one access (16 bytes at most).
template <typename T, int V> struct alignas(sizeof(T) * V) Pack { T v[V]; };

// Elements per vector access for the widest of the operand types.
template <typename... T> constexpr int pack_width() {
  constexpr size_t widest = std::max({sizeof(T)...});
  return static_cast<int>(16 / widest) > 0 ? static_cast<int>(16 / widest) : 1;
}

template <int V, typename Out, typename A, typename F>
__global__ void map1_contiguous_kernel(Out* out, const A* a, int64_t n, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t packs = n / V;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < packs; i += step) {
    const Pack<A, V> x = reinterpret_cast<const Pack<A, V>*>(a)[i];
    Pack<Out, V> r;
#pragma unroll
    for (int k = 0; k < V; ++k) r.v[k] = f(x.v[k]);
    reinterpret_cast<Pack<Out, V>*>(out)[i] = r;
  }
  for (int64_t i = packs * V + blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += step) {
    out[i] = f(a[i]);
  }
}

template <int V, typename Out, typename A, typename B, typename F>
__global__ void map2_contiguous_kernel(Out* out, const A* a, const B* b, int64_t n, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t packs = n / V;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < packs; i += step) {
    const Pack<A, V> x = reinterpret_cast<const Pack<A, V>*>(a)[i];
    const Pack<B, V> y = reinterpret_cast<const Pack<B, V>*>(b)[i];
    Pack<Out, V> r;
#pragma unroll
    for (int k = 0; k < V; ++k) r.v[k] = f(x.v[k], y.v[k]);
    reinterpret_cast<Pack<Out, V>*>(out)[i] = r;
  }
  for (int64_t i = packs * V + blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += step) {
    out[i] = f(a[i], b[i]);
  }
}

template <typename Out, typename A, typename F> __global__ void map1_strided_kernel(Strided<2> s, int64_t n, F f) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[2];
    s.offsets(i, off);
    *reinterpret_cast<Out*>(s.base[0] + off[0]) = f(*reinterpret_cast<const A*>(s.base[1] + off[1]));
  }
}

template <typename Out, typename A, typename B, typename F>
__global__ void map2_strided_kernel(Strided<3> s, int64_t n, F f) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[3];
    s.offsets(i, off);
    *reinterpret_cast<Out*>(s.base[0] + off[0]) =
        f(*reinterpret_cast<const A*>(s.base[1] + off[1]), *reinterpret_cast<const B*>(s.base[2] + off[2]));
  }
}

// Whether every operand is contiguous over out's shape and aligned for `bytes`-wide accesses.
inline bool packable(const Tensor& out, std::initializer_list<const Tensor*> ins, size_t bytes) {
  auto ok = [&](const Tensor& t) {
    return t->is_contiguous() && t->sizes() == out->sizes() && reinterpret_cast<uintptr_t>(t->data_ptr()) % bytes == 0;
  };
  if (!ok(out)) return false;
  for (const Tensor* t : ins) {
    if (!ok(*t)) return false;
  }
  return true;
}

// Blocks for n elements handled V at a time.
inline int blocks_for_packs(int64_t n, int V) { return blocks_for((n + V - 1) / V); }

// out = f(a) elementwise, a (of type A) expanded to out's shape (type Out); f is a __device__
// functor or lambda of one value. Contiguous aligned operands load and store 16 bytes at a time.
template <typename Out, typename A, typename F>
void launch_map(const char* op, const Tensor& out, const Tensor& a, F f) {
  const int64_t n = out->numel();
  if (n == 0) return;
  const Device& device = out->device();
  CurrentDevice guard(device.index);
  constexpr int V = pack_width<Out, A>();
  if (packable(out, {&a}, V * std::max(sizeof(Out), sizeof(A)))) {
    map1_contiguous_kernel<V, Out, A><<<blocks_for_packs(n, V), kThreads, 0, stream_of(device)>>>(
        reinterpret_cast<Out*>(out->data_ptr()), reinterpret_cast<const A*>(a->data_ptr()), n, f);
  } else {
    Strided<2> s = make_strided<2>(op, out->sizes(), {out.get(), a.get()});
    map1_strided_kernel<Out, A><<<blocks_for(n), kThreads, 0, stream_of(device)>>>(s, n, f);
  }
  check_launch(op);
}

// out = f(a, b) elementwise, a and b expanded to out's shape.
template <typename Out, typename A, typename B, typename F>
void launch_map(const char* op, const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  const int64_t n = out->numel();
  if (n == 0) return;
  const Device& device = out->device();
  CurrentDevice guard(device.index);
  constexpr int V = pack_width<Out, A, B>();
  if (packable(out, {&a, &b}, V * std::max({sizeof(Out), sizeof(A), sizeof(B)}))) {
    map2_contiguous_kernel<V, Out, A, B><<<blocks_for_packs(n, V), kThreads, 0, stream_of(device)>>>(
        reinterpret_cast<Out*>(out->data_ptr()), reinterpret_cast<const A*>(a->data_ptr()),
        reinterpret_cast<const B*>(b->data_ptr()), n, f);
  } else {
    Strided<3> s = make_strided<3>(op, out->sizes(), {out.get(), a.get(), b.get()});
    map2_strided_kernel<Out, A, B><<<blocks_for(n), kThreads, 0, stream_of(device)>>>(s, n, f);
  }
  check_launch(op);
}

// Runs f(char** base, const int64_t* offsets) for every element of the operands (operand 0
// the output), on the device's current stream.
template <int N, typename F>
void launch_elementwise(const char* op, const Device& device, const Shape& shape,
                        const std::array<const TensorImpl*, N>& ts, F f) {
  const int64_t n = shape_numel(shape);
  if (n == 0) return;
  Strided<N> s = make_strided<N>(op, shape, ts);
  CurrentDevice guard(device.index);
  elementwise_kernel<N><<<blocks_for(n), kThreads, 0, stream_of(device)>>>(s, n, f);
  check_launch(op);
}

}  // namespace ember::cuda_engine
