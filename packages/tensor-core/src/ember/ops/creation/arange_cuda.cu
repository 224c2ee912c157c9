// CUDA kernel of arange (checks from creation_meta.h, as the CPU's): the CPU's formula in
// double, rounded the same way.
#include <limits>
#include <type_traits>
#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/creation/creation_meta.h"

namespace ember::cuda_engine {
namespace {

// ---------------------------------------------------------------------------------------------
// arange

// creation_cpu.cpp's convert<T>(double): NaN -> 0, saturation at the int64 range, then a wrap.
template <typename T> __device__ __forceinline__ T from_double(double d) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (d != d) return T(0);
    if constexpr (std::is_same_v<T, uint8_t>) {
      return static_cast<T>(static_cast<int64_t>(d));
    } else {
      if (d >= 9.2233720368547758e18) return std::numeric_limits<T>::max();
      if (d <= -9.2233720368547758e18) return std::numeric_limits<T>::min();
      return static_cast<T>(static_cast<int64_t>(d));
    }
  } else {
    return cvt<T>(d);
  }
}

template <typename T>
__global__ void arange_kernel(T* p, int64_t n, bool all_int, int64_t a0, int64_t si, double a, double s) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (all_int) {
      const uint64_t v = static_cast<uint64_t>(a0) + static_cast<uint64_t>(i) * static_cast<uint64_t>(si);  // wraps
      p[i] = cvt<T>(static_cast<int64_t>(v));
    } else {
      p[i] = from_double<T>(__dadd_rn(a, __dmul_rn(static_cast<double>(i), s)));
    }
  }
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

Tensor arange(const Scalar& start, std::optional<Scalar> end, const Scalar& step, std::optional<ScalarType> dtype,
              std::optional<Device> device, bool requires_grad, const Tensor& out) {
  const ArangeMeta M = arange_meta(start, end, step, dtype, out);
  const ScalarType t = M.dtype;
  const int64_t n = M.n;
  Tensor res = creation_result({n}, t, device, out);
  if (t == ScalarType::Bool) throw_dtype_unsupported("arange", t, "numeric");
  dispatch_device_type(t, "arange", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      if (n == 0) return;
      const Device dev = res->device();
      CurrentDevice guard(dev.index);
      arange_kernel<T><<<blocks_for(n), kThreads, 0, stream_of(dev)>>>(reinterpret_cast<T*>(res->data_ptr()), n,
                                                                        M.all_int, M.a0, M.si, M.a, M.s);
      check_launch("arange");
    }
  });
  res = finish_out("arange", out, res);
  if (requires_grad) set_requires_grad(res, true);
  return res;
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(arange);
