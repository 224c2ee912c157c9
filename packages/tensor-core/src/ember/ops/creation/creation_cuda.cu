// CUDA kernels of tril / triu, eye and linspace. Each mirrors its CPU kernel (shape_cpu.cpp,
// creation_cpu.cpp): the argument checks, result shapes and dtypes come from the meta functions
// of creation_meta.h that both call, and the values are the CPU's bit for bit.
//
// tril / triu: any batch dims and strides, in place (out is self: only the zeroed side is
// written), into out=, or into a fresh tensor; zeros are all-bits-zero, as the CPU's memset.
// linspace: the CPU's formula in double, with the roundings spelled out (no fused
// multiply-add), so the values are the CPU's exactly.
#include <cstring>

#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/creation/creation_meta.h"

namespace ember::cuda_engine {
namespace {

// Runs f(i) for i in [0, n) on the device's current stream.
template <typename F> __global__ void index_kernel(int64_t n, F f) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    f(i);
  }
}

template <typename F> void launch_index(const char* op, const Device& device, int64_t n, F f) {
  if (n <= 0) return;
  CurrentDevice guard(device.index);
  index_kernel<<<blocks_for(n), kThreads, 0, stream_of(device)>>>(n, f);
  check_launch(op);
}

// ---- tril / triu ----

// Zeroes the entries on the wrong side of the diagonal (above it when lower, below it
// otherwise) of a batch of rows x cols matrices. copy: res takes src's other entries; else res
// is src and only the zeros are written. batch holds the batch dims' byte strides of res
// (operand 0) and src (operand 1); rs / cs the row and column byte strides.
template <typename U>
__global__ void triangle_kernel(Strided<2> batch, int64_t n, int64_t rows, int64_t cols, int64_t rs0, int64_t cs0,
                                int64_t rs1, int64_t cs1, int64_t diagonal, bool lower, bool copy) {
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = k % cols, t = k / cols;
    const int64_t i = t % rows, b = t / rows;
    int64_t off[2];
    batch.offsets(b, off);
    const bool zero = lower ? (j - i > diagonal) : (j - i < diagonal);
    U* r = reinterpret_cast<U*>(batch.base[0] + off[0] + i * rs0 + j * cs0);
    if (zero) *r = U(0);
    else if (copy) *r = *reinterpret_cast<const U*>(batch.base[1] + off[1] + i * rs1 + j * cs1);
  }
}

void triangle_into(const char* op, const Tensor& res, const Tensor& src, int64_t diagonal, bool lower, bool copy) {
  const int64_t n = res->numel();
  if (n == 0) return;
  const int64_t nd = res->dim();
  const int64_t rows = res->sizes()[nd - 2], cols = res->sizes()[nd - 1];
  const Shape batch_shape(res->sizes().begin(), res->sizes().end() - 2);
  // make_strided reads the strides of the batch dims only: the leading nd - 2
  const Strided<2> batch = make_strided<2>(op, batch_shape, {res.get(), src.get()});
  const int64_t isz = static_cast<int64_t>(res->itemsize());
  const int64_t rs0 = res->strides()[nd - 2] * isz, cs0 = res->strides()[nd - 1] * isz;
  const int64_t rs1 = src->strides()[nd - 2] * isz, cs1 = src->strides()[nd - 1] * isz;
  const Device device = res->device();
  CurrentDevice guard(device.index);
  dispatch_itemsize(res->itemsize(), [&](auto tag) {
    using U = decltype(tag);
    triangle_kernel<U><<<blocks_for(n), kThreads, 0, stream_of(device)>>>(batch, n, rows, cols, rs0, cs0, rs1, cs1,
                                                                          diagonal, lower, copy);
  });
  check_launch(op);
}

Tensor triangle(const char* op, const Tensor& self, int64_t diagonal_in, const Tensor& out, bool lower) {
  const int64_t diagonal = triangle_meta(op, self, out, diagonal_in);
  if (out == self) {
    triangle_into(op, self, self, diagonal, lower, false);
    return self;
  }
  // out itself when it fits (random_cpu.cpp's prepare_out), never a tensor overlapping self
  Tensor res;
  if (out && out->device() == self->device() && out->sizes() == self->sizes() && out->dtype() == self->dtype() &&
      out->is_contiguous() && out->storage() != self->storage()) {
    res = out;
  } else {
    res = ember::empty(self->sizes(), self->dtype(), self->device());
  }
  triangle_into(op, res, self, diagonal, lower, true);
  return finish_out(op, out, res);
}

// ---- linspace ----

// A double converted to integer T as the CPU's convert<T>(double): NaN gives 0, values beyond
// int64's range saturate (uint8: x86's int64 conversion of them, whose low byte is 0), the
// rest truncate through int64 and wrap.
template <typename T> __device__ __forceinline__ T int_from_double(double d) {
  constexpr double kLimit = 9.2233720368547758e18;
  if (d != d) return T(0);
  if constexpr (std::is_same_v<T, uint8_t>) {
    if (!(d > -kLimit && d < kLimit)) return T(0);
  } else {
    if (d >= kLimit) return std::numeric_limits<T>::max();
    if (d <= -kLimit) return std::numeric_limits<T>::min();
  }
  return static_cast<T>(static_cast<int64_t>(d));
}

template <typename T> __device__ __forceinline__ T from_double(double d) {
  if constexpr (std::is_integral_v<T>) return int_from_double<T>(d);
  else return cvt<T>(d);
}

// p[i] = a + step * i for the first half, end - step * (steps - 1 - i) for the rest (so that
// the last value is exactly end); a single step is start itself.
template <typename T> void linspace_t(const Tensor& r, double a, double b, int64_t steps) {
  T* p = reinterpret_cast<T*>(r->data_ptr());
  const bool single = steps == 1;
  const double step = single ? 0.0 : (b - a) / static_cast<double>(steps - 1);
  const int64_t half = steps / 2;
  launch_index("linspace", r->device(), steps, [=] __device__(int64_t i) {
    double v;
    if (single) v = a;
    else if (i < half) v = __dadd_rn(a, __dmul_rn(step, static_cast<double>(i)));
    else v = __dsub_rn(b, __dmul_rn(step, static_cast<double>(steps - 1 - i)));
    p[i] = from_double<T>(v);
  });
}

// ---- eye ----

template <typename T> void eye_t(const Tensor& r, int64_t cols) {
  T* p = reinterpret_cast<T*>(r->data_ptr());
  launch_index("eye", r->device(), r->numel(), [=] __device__(int64_t k) {
    p[k] = cvt<T>(static_cast<int>(k / cols == k % cols));
  });
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

Tensor tril(const Tensor& self, int64_t diagonal, const Tensor& out) {
  return triangle("tril", self, diagonal, out, true);
}
Tensor triu(const Tensor& self, int64_t diagonal, const Tensor& out) {
  return triangle("triu", self, diagonal, out, false);
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, std::optional<ScalarType> dtype,
                std::optional<Device> device, bool requires_grad, const Tensor& out) {
  const LinspaceMeta M = linspace_meta(start, end, steps, dtype, out);
  const ScalarType t = M.dtype;
  const double a = M.a, b = M.b;
  return create("linspace", {steps}, t, device, requires_grad, out, [&](const Tensor& r) {
    if (t == ScalarType::Bool) throw_dtype_unsupported("linspace", t, "numeric");  // as dispatch_numeric
    dispatch_device_type(t, "linspace", [&](auto tag) { linspace_t<decltype(tag)>(r, a, b, steps); });
  });
}

Tensor eye(int64_t n, std::optional<int64_t> m, std::optional<ScalarType> dtype, std::optional<Device> device,
           bool requires_grad, const Tensor& out) {
  const EyeMeta M = eye_meta(n, m, dtype, out);
  return create("eye", {n, M.cols}, M.dtype, device, requires_grad, out, [&](const Tensor& r) {
    dispatch_device_type(M.dtype, "eye", [&](auto tag) { eye_t<decltype(tag)>(r, M.cols); });
  });
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(tril);
EMBER_REGISTER_CUDA_KERNEL(triu);
EMBER_REGISTER_CUDA_KERNEL(linspace);
EMBER_REGISTER_CUDA_KERNEL(eye);
