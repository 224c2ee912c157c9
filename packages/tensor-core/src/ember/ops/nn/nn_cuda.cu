// CUDA kernels of embedding (and its dense backward) and nll_loss; checks from nn_meta.h.
//
// - embedding_dense_backward groups the positions by index on the host (the CPU kernel's
//   counting sort, from a copy of the indices) and sums each weight row's gradients on the
//   device in that same order: the result equals the CPU's bit for bit.
// - nll_loss sums its terms in double over the CPU's blocks of 4096, in the same order and
//   without fused multiply-adds: the result equals the CPU's bit for bit.
#include <algorithm>
#include <cstring>
#include <vector>
#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/index/index_checks_cuda.cuh"
#include "ember/ops/index/index_meta.h"
#include "ember/ops/nn/nn_meta.h"

namespace ember::cuda_engine {
namespace {

// ---------------------------------------------------------------------------------------------
// embedding

// out[i * D + j] = w[idx[i] * D + j] (elements moved as U).
template <typename U> __global__ void embedding_kernel(const U* w, const int64_t* idx, U* out, int64_t n, int64_t D) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < n * D;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[e] = w[idx[e / D] * D + e % D];
  }
}

// res[r, j] = sum over the positions p of row r (in order[start[r]..start[r+1]), increasing
// p) of g[p, j], in opmath; zero for padding_idx; divided by the count when scaling.
template <typename T>
__global__ void embedding_backward_kernel(const T* g, const int64_t* order, const int64_t* start, T* res,
                                          int64_t rows, int64_t D, int64_t padding_idx, bool scale) {
  using A = opmath_t<T>;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < rows * D;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = e / D, j = e % D;
    A acc = A(0);
    if (r != padding_idx) {
      const int64_t k0 = start[r], k1 = start[r + 1];
      for (int64_t k = k0; k < k1; ++k) acc += cvt<A>(g[order[k] * D + j]);
      const int64_t count = k1 - k0;
      if (scale && count > 1) acc /= static_cast<A>(count);
    }
    res[e] = cvt<T>(acc);
  }
}

// A host int64 vector as a tensor on device.
Tensor upload(const std::vector<int64_t>& v, const Device& device) {
  Tensor h = ember::empty({static_cast<int64_t>(v.size())}, ScalarType::Int64);
  if (!v.empty()) std::memcpy(h->data_ptr(), v.data(), v.size() * sizeof(int64_t));
  Tensor d = ember::empty(h->sizes(), ScalarType::Int64, device);
  ops::copy(d, h, false, d);
  return d;
}

// ---------------------------------------------------------------------------------------------
// nll_loss

// term[i] = -w[c] * x[n, c, s] (0 for ignore_index) and its weight, in double.
template <typename X>
__global__ void nll_terms_kernel(const X* x, const int64_t* t, const double* w, int64_t T, int64_t C, int64_t S,
                                 int64_t ignore_index, double* terms, double* wts, X* out) {
  using A = opmath_t<X>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < T;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = t[i];
    double v = 0.0, wt = 0.0;
    if (c != ignore_index) {
      const int64_t n = i / S, s = i % S;
      wt = w ? w[c] : 1.0;
      v = __dmul_rn(-wt, static_cast<double>(cvt<A>(x[(n * C + c) * S + s])));
    }
    if (out) {
      out[i] = cvt<X>(cvt<A>(v));
    } else {
      terms[i] = v;
      wts[i] = wt;
    }
  }
}

// Serial sums of each block of kNllLossBlock terms (and weights), in order.
__global__ void nll_block_sums_kernel(const double* terms, const double* wts, int64_t T, int64_t blocks, double* sums,
                                      double* wsums) {
  for (int64_t b = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; b < blocks;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double s = 0, ws = 0;
    const int64_t e = min(T, (b + 1) * kNllLossBlock);
    for (int64_t i = b * kNllLossBlock; i < e; ++i) {
      s = __dadd_rn(s, terms[i]);
      ws = __dadd_rn(ws, wts[i]);
    }
    sums[b] = s;
    wsums[b] = ws;
  }
}

template <typename X>
__global__ void nll_total_kernel(const double* sums, const double* wsums, int64_t blocks, bool sum_only, X* out) {
  using A = opmath_t<X>;
  double total = 0, total_w = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    total = __dadd_rn(total, sums[b]);
    total_w = __dadd_rn(total_w, wsums[b]);
  }
  const double res = sum_only ? total : __ddiv_rn(total, total_w);  // mean over nothing: NaN
  out[0] = cvt<X>(cvt<A>(res));
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

// (padding_idx, scale_grad_by_freq and sparse shape the gradient only: derivatives.yaml)
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t /*padding_idx*/, bool /*scale_grad_by_freq*/,
                 bool /*sparse*/) {
  const char* op = "embedding";
  const Shape shape = embedding_meta(weight, indices);
  const int64_t V = weight->size(0), D = weight->size(1);
  const Device dev = weight->device();
  Tensor ix = index_int64(indices, dev);
  if (first_out_of_range(op, ix, 0, V) >= 0) throw_embedding_index_out_of_range();
  Tensor out = ember::empty(shape, weight->dtype(), dev);
  if (out->numel() == 0) return out;
  Tensor w = contiguous_in(weight, weight->dtype());
  const int64_t n = ix->numel();
  dispatch_itemsize(w->itemsize(), [&](auto tag) {
    using U = decltype(tag);
    CurrentDevice guard(dev.index);
    embedding_kernel<U><<<blocks_for(n * D), kThreads, 0, stream_of(dev)>>>(
        reinterpret_cast<const U*>(w->data_ptr()), reinterpret_cast<const int64_t*>(ix->data_ptr()),
        reinterpret_cast<U*>(out->data_ptr()), n, D);
    check_launch(op);
  });
  return out;
}

Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                int64_t padding_idx, bool scale_grad_by_freq) {
  const char* op = "embedding_dense_backward";
  const Shape shape = embedding_dense_backward_meta(grad_output, indices, num_weights);
  const Device dev = is_on_cpu(grad_output) ? indices->device() : grad_output->device();
  const int64_t D = shape[1];
  // the positions grouped by index as the CPU kernel does, from a host copy of the indices
  Tensor hidx = to_host(contiguous_in(to_device(indices, dev), ScalarType::Int64));
  std::vector<int64_t> start, order;
  group_positions_by_index(hidx->data<int64_t>(), hidx->numel(), num_weights, start, order);
  Tensor res = ember::empty(shape, grad_output->dtype(), dev);
  if (res->numel() == 0) return res;
  if (!is_floating(grad_output->dtype())) throw_dtype_unsupported(op, grad_output->dtype(), "floating point");
  Tensor g = contiguous_in(to_device(grad_output, dev), grad_output->dtype());
  Tensor dorder = upload(order, dev), dstart = upload(start, dev);
  dispatch_device_float(grad_output->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    CurrentDevice guard(dev.index);
    embedding_backward_kernel<T><<<blocks_for(num_weights * D), kThreads, 0, stream_of(dev)>>>(
        reinterpret_cast<const T*>(g->data_ptr()), reinterpret_cast<const int64_t*>(dorder->data_ptr()),
        reinterpret_cast<const int64_t*>(dstart->data_ptr()), reinterpret_cast<T*>(res->data_ptr()), num_weights, D,
        padding_idx, scale_grad_by_freq);
    check_launch(op);
  });
  return res;
}

Tensor nll_loss(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index) {
  const char* op = "nll_loss";
  const NllLossMeta m = nll_loss_meta(self, target, weight, reduction);
  const int64_t C = m.C, S = m.S, T = m.T;
  const Device dev = self->device();
  Tensor t = contiguous_in(to_device(target, dev), ScalarType::Int64);
  const int64_t bad = first_out_of_range(op, t, 0, C, true, ignore_index);
  if (bad >= 0) throw_nll_loss_target_out_of_bounds(value_at<int64_t>(t, bad));
  Tensor out = ember::empty(m.out_shape, self->dtype(), dev);
  if (!is_floating(self->dtype())) throw_dtype_unsupported(op, self->dtype(), "floating point");
  Tensor x = contiguous_in(self, self->dtype());
  // the class weights as the CPU reads them: (double)(opmath)w[c]
  Tensor w = weight ? contiguous_in(to_device(weight, dev), ScalarType::Float64) : Tensor();
  const double* pw = w ? reinterpret_cast<const double*>(w->data_ptr()) : nullptr;
  const int64_t blocks = (T + kNllLossBlock - 1) / kNllLossBlock;
  Tensor terms, wts, sums, wsums;
  if (reduction != 0) {
    terms = ember::empty({T}, ScalarType::Float64, dev);
    wts = ember::empty({T}, ScalarType::Float64, dev);
    sums = ember::empty({blocks}, ScalarType::Float64, dev);
    wsums = ember::empty({blocks}, ScalarType::Float64, dev);
  }
  dispatch_device_float(self->dtype(), op, [&](auto tag) {
    using X = decltype(tag);
    CurrentDevice guard(dev.index);
    cudaStream_t stream = stream_of(dev);
    const X* px = reinterpret_cast<const X*>(x->data_ptr());
    const int64_t* pt = reinterpret_cast<const int64_t*>(t->data_ptr());
    X* po = reinterpret_cast<X*>(out->data_ptr());
    if (reduction == 0) {
      if (T == 0) return;
      nll_terms_kernel<X><<<blocks_for(T), kThreads, 0, stream>>>(px, pt, pw, T, C, S, ignore_index, nullptr, nullptr,
                                                                   po);
      check_launch(op);
      return;
    }
    double* pterms = reinterpret_cast<double*>(terms->data_ptr());
    double* pwts = reinterpret_cast<double*>(wts->data_ptr());
    double* psums = reinterpret_cast<double*>(sums->data_ptr());
    double* pwsums = reinterpret_cast<double*>(wsums->data_ptr());
    if (T > 0) {
      nll_terms_kernel<X><<<blocks_for(T), kThreads, 0, stream>>>(px, pt, pw, T, C, S, ignore_index, pterms, pwts,
                                                                   nullptr);
      check_launch(op);
      nll_block_sums_kernel<<<blocks_for(blocks), kThreads, 0, stream>>>(pterms, pwts, T, blocks, psums, pwsums);
      check_launch(op);
    }
    nll_total_kernel<X><<<1, 1, 0, stream>>>(psums, pwsums, blocks, reduction == 2, po);
    check_launch(op);
  });
  return out;
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(embedding);
EMBER_REGISTER_CUDA_KERNEL(embedding_dense_backward);
EMBER_REGISTER_CUDA_KERNEL(nll_loss);
