// CUDA kernels of one LSTM direction over all its steps (_lstm_forward_, _lstm_backward_);
// checks from rnn_meta.h, as the CPU's. Per time step one cuBLAS GEMM (cublas_gemm.h) for the
// recurrent product and one pointwise kernel for the gates and the cell, in the CPU's layout
// (gates i|f|g|o) and order.
#include <algorithm>
#include <vector>
#include "ember/backends/cuda/cublas_gemm.h"
#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/rnn/rnn_meta.h"

namespace ember::cuda_engine {
namespace {

// ---- LSTM ----

template <typename T> __device__ __forceinline__ T sigmoid(T x) { return T(1) / (T(1) + exp(-x)); }

// One step's cell: gates = pre + x (pre = h_prev @ w_hh^T), activated into acts; c and h.
template <typename T>
__global__ void lstm_cell_kernel(const T* pre, const T* x, const T* c_prev, T* acts, T* c, T* h, int64_t N,
                                 int64_t H) {
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < N * H;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = idx / H, u = idx % H, o = r * 4 * H + u;
    const T ai = sigmoid(pre[o] + x[o]);
    const T af = sigmoid(pre[o + H] + x[o + H]);
    const T ag = tanh(pre[o + 2 * H] + x[o + 2 * H]);
    const T ao = sigmoid(pre[o + 3 * H] + x[o + 3 * H]);
    const T cn = af * c_prev[idx] + ai * ag;
    acts[o] = ai;
    acts[o + H] = af;
    acts[o + 2 * H] = ag;
    acts[o + 3 * H] = ao;
    c[idx] = cn;
    h[idx] = ao * tanh(cn);
  }
}

// One step's cell backward: dh (+ d_out) and dc in, d_gates out, dc carried to the step before.
template <typename T>
__global__ void lstm_cell_backward_kernel(const T* acts, const T* c, const T* c_prev, const T* d_out, T* dh, T* dc,
                                          T* dg, int64_t N, int64_t H) {
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < N * H;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = idx / H, u = idx % H, o = r * 4 * H + u;
    T dhv = dh[idx];
    if (d_out) {
      dhv += d_out[idx];
      dh[idx] = dhv;
    }
    const T i = acts[o], f = acts[o + H], g = acts[o + 2 * H], og = acts[o + 3 * H];
    const T tc = tanh(c[idx]);
    const T dct = dc[idx] + dhv * og * (T(1) - tc * tc);
    dg[o + 3 * H] = dhv * tc * og * (T(1) - og);
    dg[o] = dct * g * i * (T(1) - i);
    dg[o + H] = dct * c_prev[idx] * f * (T(1) - f);
    dg[o + 2 * H] = dct * i * (T(1) - g * g);
    dc[idx] = dct * f;
  }
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

std::vector<Tensor> _lstm_forward_(const Tensor& x_proj, const Tensor& h0, const Tensor& c0, const Tensor& w_hh,
                                   bool reverse, const Tensor& acts, const Tensor& cells, const Tensor& outs) {
  const char* op = "_lstm_forward_";
  const LstmDims d = lstm_forward_meta(x_proj, h0, c0, w_hh, acts, cells, outs);
  const int64_t steps = d.steps, N = d.N, H = d.H;
  if (steps == 0 || N == 0 || H == 0) return {};
  const ScalarType dt = x_proj->dtype();
  const Device dev = x_proj->device();
  const int64_t item = static_cast<int64_t>(x_proj->itemsize());
  const int64_t gate_step = N * 4 * H * item, state_step = N * H * item;
  Tensor pre = ember::empty({N, 4 * H}, dt, dev);  // h_prev @ w_hh^T of the step
  const GemmOperand w_t{w_hh->data_ptr(), H, true};
  for (int64_t i = 0; i < steps; ++i) {
    const int64_t t = reverse ? steps - 1 - i : i, before = reverse ? t + 1 : t - 1;
    const char* h_prev = i == 0 ? h0->data_ptr() : outs->data_ptr() + before * state_step;
    const char* c_prev = i == 0 ? c0->data_ptr() : cells->data_ptr() + before * state_step;
    gemm(op, dev, dt, N, 4 * H, H, 1.0, {h_prev, H, false}, 0, w_t, 0, 0.0, pre->data_ptr(), 4 * H, 0, 1);
    dispatch_real(dt, [&](auto tag) {
      using T = decltype(tag);
      CurrentDevice guard(dev.index);
      lstm_cell_kernel<T><<<blocks_for(N * H), kThreads, 0, stream_of(dev)>>>(
          pre->data<T>(), reinterpret_cast<const T*>(x_proj->data_ptr() + t * gate_step),
          reinterpret_cast<const T*>(c_prev), reinterpret_cast<T*>(acts->data_ptr() + t * gate_step),
          reinterpret_cast<T*>(cells->data_ptr() + t * state_step),
          reinterpret_cast<T*>(outs->data_ptr() + t * state_step), N, H);
      check_launch(op);
    });
  }
  for (const Tensor* t : {&acts, &cells, &outs}) (*t)->storage()->bump_version();
  return {};
}

std::vector<Tensor> _lstm_backward_(const Tensor& acts, const Tensor& cells, const Tensor& c0, const Tensor& w_hh,
                                    const Tensor& d_outs, bool reverse, const Tensor& dh, const Tensor& dc,
                                    const Tensor& d_gates) {
  const char* op = "_lstm_backward_";
  const LstmDims d = lstm_backward_meta(acts, cells, c0, w_hh, d_outs, dh, dc, d_gates);
  const int64_t steps = d.steps, N = d.N, H = d.H;
  if (steps == 0 || N == 0 || H == 0) return {};
  const ScalarType dt = acts->dtype();
  const Device dev = acts->device();
  const int64_t item = static_cast<int64_t>(acts->itemsize());
  const int64_t gate_step = N * 4 * H * item, state_step = N * H * item;
  const GemmOperand w{w_hh->data_ptr(), H, false};
  // time steps in backward order: order(0) ran last in the forward
  auto order = [&](int64_t i) { return reverse ? i : steps - 1 - i; };
  // i = -1: the cell backward of order(0); i >= 0: dh = the gate gradients of order(i) @ w_hh,
  // then the cell backward of order(i + 1) (none after the last)
  for (int64_t i = -1; i < steps; ++i) {
    if (i >= 0) {
      gemm(op, dev, dt, N, H, 4 * H, 1.0, {d_gates->data_ptr() + order(i) * gate_step, 4 * H, false}, 0, w, 0, 0.0,
           dh->data_ptr(), H, 0, 1);
    }
    if (i + 1 >= steps) continue;
    const int64_t t = order(i + 1), before = reverse ? t + 1 : t - 1;
    const char* c_prev = i + 2 == steps ? c0->data_ptr() : cells->data_ptr() + before * state_step;
    dispatch_real(dt, [&](auto tag) {
      using T = decltype(tag);
      CurrentDevice guard(dev.index);
      lstm_cell_backward_kernel<T><<<blocks_for(N * H), kThreads, 0, stream_of(dev)>>>(
          reinterpret_cast<const T*>(acts->data_ptr() + t * gate_step),
          reinterpret_cast<const T*>(cells->data_ptr() + t * state_step), reinterpret_cast<const T*>(c_prev),
          d_outs ? reinterpret_cast<const T*>(d_outs->data_ptr() + t * state_step) : nullptr, dh->data<T>(),
          dc->data<T>(), reinterpret_cast<T*>(d_gates->data_ptr() + t * gate_step), N, H);
      check_launch(op);
    });
  }
  for (const Tensor* t : {&dh, &dc, &d_gates}) (*t)->storage()->bump_version();
  return {};
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(_lstm_forward_);
EMBER_REGISTER_CUDA_KERNEL(_lstm_backward_);
