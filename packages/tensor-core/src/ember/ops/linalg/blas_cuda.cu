// CUDA kernels of addmm and dot. The checks, result dtype and the alpha/beta rules are
// linalg_meta.h's, shared with the CPU kernels (linalg_cpu.cpp).
//
// - addmm: float dtypes through cuBLAS (cublas_gemm.h: beta * self + alpha * mat1 @ mat2 in
//   one GEMM over self copied into the result; 16-bit floats accumulate in float32 and round
//   once, as the CPU). Integer dtypes, which cuBLAS lacks, by a direct kernel (one thread per
//   result element) in uint64 wrap-around arithmetic: exactly the CPU's low bits. With k = 0
//   or alpha = 0 (in the compute type) the result is beta * self, as the CPU's.
// - dot: a two-pass tree reduction over a fixed grid (deterministic): floats accumulate in
//   double (the CPU's fallback; its OpenBLAS path sums float32 in float32), integers in uint64.
#include <algorithm>
#include <type_traits>

#include "ember/backends/cuda/cublas_gemm.h"
#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/linalg/linalg_meta.h"

namespace ember::cuda_engine {
namespace {

template <typename T> __device__ __forceinline__ uint64_t as_u64(T v) {
  return static_cast<uint64_t>(static_cast<int64_t>(v));
}

// c (contiguous M x N) = beta * init + alpha * a @ b in uint64 (init null: no init term).
template <typename T>
__global__ void int_addmm_kernel(const T* a, int64_t a_rs, int64_t a_cs, const T* b, int64_t b_rs, int64_t b_cs,
                                 const T* init, int64_t i_rs, int64_t i_cs, T* c, int64_t M, int64_t N, int64_t K,
                                 uint64_t alpha, uint64_t beta) {
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < M * N;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = idx / N, j = idx % N;
    uint64_t acc = 0;
    for (int64_t k = 0; k < K; ++k) acc += as_u64(a[i * a_rs + k * a_cs]) * as_u64(b[k * b_rs + j * b_cs]);
    uint64_t v = alpha * acc;
    if (init) v += beta * as_u64(init[i * i_rs + j * i_cs]);
    c[idx] = static_cast<T>(static_cast<int64_t>(v));
  }
}

constexpr int kDotThreads = 256;
constexpr int kDotMaxBlocks = 1024;

// Sum over the block of v (blockDim.x == kDotThreads); thread 0 gets it.
template <typename Acc> __device__ Acc block_total(Acc v) {
  __shared__ Acc warp_sums[kDotThreads / 32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
  __syncthreads();
  Acc r = 0;
  if (threadIdx.x == 0) {
    for (int w = 0; w < kDotThreads / 32; ++w) r += warp_sums[w];
  }
  return r;
}

template <typename T> using dot_acc_t = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;

template <typename T> __device__ __forceinline__ dot_acc_t<T> dot_term(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    return as_u64(x) * as_u64(y);
  } else {
    return static_cast<double>(cvt<opmath_t<T>>(x)) * static_cast<double>(cvt<opmath_t<T>>(y));
  }
}

template <typename T>
__global__ void dot_partial_kernel(const T* x, int64_t sx, const T* y, int64_t sy, int64_t n, dot_acc_t<T>* partial) {
  dot_acc_t<T> acc = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    acc += dot_term(x[i * sx], y[i * sy]);
  }
  acc = block_total(acc);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

template <typename T> __global__ void dot_final_kernel(const dot_acc_t<T>* partial, int blocks, T* out) {
  dot_acc_t<T> acc = 0;
  for (int i = threadIdx.x; i < blocks; i += blockDim.x) acc += partial[i];
  acc = block_total(acc);
  if (threadIdx.x == 0) {
    if constexpr (std::is_integral_v<T>) {
      out[0] = static_cast<T>(static_cast<int64_t>(acc));
    } else {
      out[0] = cvt<T>(static_cast<opmath_t<T>>(acc));
    }
  }
}

bool same_geometry(const Tensor& x, const Tensor& y) {
  return x->storage() == y->storage() && x->offset() == y->offset() && x->sizes() == y->sizes() &&
         x->strides() == y->strides() && x->dtype() == y->dtype();
}

// The tensor a product writes: out itself when it is on `dev`, contiguous, with the shape and
// dtype and none of `operands`' storage, else a fresh one (finish_out copies it into out).
Tensor product_result(const Tensor& out, const Shape& shape, ScalarType dt, const Device& dev,
                      std::initializer_list<const Tensor*> operands) {
  if (out && out->device() == dev && out->sizes() == shape && out->dtype() == dt && out->is_contiguous()) {
    bool aliased = false;
    for (const Tensor* t : operands) aliased = aliased || (*t)->storage() == out->storage();
    if (!aliased) return out;
  }
  return ember::empty(shape, dt, dev);
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha,
             const Tensor& out) {
  const char* op = "addmm";
  const AddmmMeta m = addmm_meta(self, mat1, mat2, beta, alpha, out);
  const Device dev = mat1->device();
  const int64_t M = m.shape[0], N = m.shape[1], K = mat1->size(1);
  Tensor res = product_result(out, m.shape, m.dtype, dev, {&mat1, &mat2});
  Tensor init = m.use_self ? expand_to(to_device(self, dev), m.shape, op) : Tensor();
  if (res->numel() == 0) return finish_out(op, out, res);
  // never read self where the result is being written, but through the same element
  if (init && init->storage() == res->storage() && !same_geometry(init, res)) init = ops::clone(init);

  if (!is_floating(m.dtype) && !is_complex(m.dtype)) {
    dispatch_device_type(m.dtype, op, [&](auto tag) {
      using T = decltype(tag);
      CurrentDevice guard(dev.index);
      int_addmm_kernel<T><<<blocks_for(M * N), kThreads, 0, stream_of(dev)>>>(
          reinterpret_cast<const T*>(mat1->data_ptr()), mat1->stride(0), mat1->stride(1),
          reinterpret_cast<const T*>(mat2->data_ptr()), mat2->stride(0), mat2->stride(1),
          init ? reinterpret_cast<const T*>(init->data_ptr()) : nullptr, init ? init->stride(0) : 0,
          init ? init->stride(1) : 0, reinterpret_cast<T*>(res->data_ptr()), M, N, K,
          static_cast<uint64_t>(m.alpha.to_int()), static_cast<uint64_t>(m.beta.to_int()));
      check_launch(op);
    });
    return finish_out(op, out, res);
  }

  // C starts as self (when it enters), as the CPU's run_product lays it out
  if (init && !same_geometry(init, res)) ops::copy(res, init, false, res);
  // alpha and beta as the compute type holds them (float32 for the 16-bit floats and
  // complex64; imaginary parts for the complex dtypes only)
  const bool wide = m.dtype == ScalarType::Float64 || m.dtype == ScalarType::ComplexDouble;
  auto in_compute = [&](const Scalar& v) {
    const Complex<double> z(v.to_double(), is_complex(m.dtype) ? v.im : 0.0);
    return wide ? z : Complex<double>(Complex<float>(z));
  };
  const Complex<double> zero(0.0), one(1.0);
  const Complex<double> a = in_compute(m.alpha);
  const Complex<double> b = init ? in_compute(m.beta) : zero;
  if (K == 0 || a == zero) {  // beta * C: zeros for beta == 0, whatever C holds
    if (b == zero) {
      ops::zero(res, res);
    } else if (b != one) {
      ops::mul(res, wrapped_scalar(is_complex(m.dtype) ? Scalar::from_complex(b.re, b.im) : Scalar::from_double(b.re)), res);
    }
    return finish_out(op, out, res);
  }
  const GemmMatrix A = gemm_matrix(mat1), B = gemm_matrix(mat2);
  gemm(op, dev, m.dtype, M, N, K, a, A.operand, 0, B.operand, 0, b, res->data_ptr(), N, 0, 1);
  return finish_out(op, out, res);
}

Tensor dot(const Tensor& self, const Tensor& tensor, const Tensor& out) {
  const char* op = "dot";
  const ScalarType dt = dot_meta(op, self, tensor, out);
  if (is_complex(dt)) {  // the sum of the products (no conjugate), on the complex elementwise kernels
    return finish_out(op, out, ops::sum(ops::mul(self, tensor, Tensor()), std::nullopt, false, std::nullopt, Tensor()));
  }
  const Device dev = self->device();
  Tensor res = product_result(out, {}, dt, dev, {&self, &tensor});
  const int64_t n = self->numel();
  const int blocks = static_cast<int>(std::clamp<int64_t>((n + kDotThreads - 1) / kDotThreads, 1, kDotMaxBlocks));
  Tensor partial = ember::empty({blocks}, is_floating(dt) ? ScalarType::Float64 : ScalarType::Int64, dev);
  dispatch_device_type(dt, op, [&](auto tag) {
    using T = decltype(tag);
    using Acc = dot_acc_t<T>;
    CurrentDevice guard(dev.index);
    cudaStream_t stream = stream_of(dev);
    Acc* p = reinterpret_cast<Acc*>(partial->data_ptr());
    dot_partial_kernel<T><<<blocks, kDotThreads, 0, stream>>>(reinterpret_cast<const T*>(self->data_ptr()),
                                                              self->stride(0),
                                                              reinterpret_cast<const T*>(tensor->data_ptr()),
                                                              tensor->stride(0), n, p);
    check_launch(op);
    dot_final_kernel<T><<<1, kDotThreads, 0, stream>>>(p, blocks, reinterpret_cast<T*>(res->data_ptr()));
    check_launch(op);
  });
  return finish_out(op, out, res);
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(addmm);
EMBER_REGISTER_CUDA_KERNEL(dot);
