// CUDA kernels of the fused optimizer steps (_fused_adam_, _fused_sgd_). The checks are the
// meta functions the CPU kernels call too (optim_meta.h).
//
// Fused steps: multi-tensor launches. Up to kListTensors tensors go into one kernel argument
// (pointers, sizes, per-tensor scalars) with the first block of each; every block updates one
// chunk of kChunk elements of one tensor. The arithmetic per element is optim_cpu.cpp's,
// op for op in the tensor's dtype, with the rounding made explicit (__fmul_rn, __fadd_rn, ...,
// which the compiler never fuses) and its multiply-adds fused exactly where the CPU fuses them
// at its AVX2 and AVX-512 levels (tensors of more than one element): the results equal the
// CPU's there bit for bit. Step counters on the host (ember_optim keeps them as CPU 0-d
// tensors) advance on the host and the step's scalars are computed there as on the CPU;
// counters on the device advance in a one-thread kernel (in list order, so a counter listed
// twice advances twice) that also computes their bias corrections with the device's pow.
#include <algorithm>
#include <type_traits>
#include <vector>
#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/optim/optim_meta.h"

namespace ember::cuda_engine {
namespace {

constexpr int kListTensors = 16;
constexpr int64_t kChunk = 16384;

// Round-to-nearest arithmetic that the compiler neither fuses nor reorders.
template <typename T> struct Rn;
template <> struct Rn<float> {
  static __device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
  static __device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
  static __device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
  static __device__ __forceinline__ float div(float a, float b) { return __fdiv_rn(a, b); }
  static __device__ __forceinline__ float sqrt(float a) { return __fsqrt_rn(a); }
  static __device__ __forceinline__ float fma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
};
template <> struct Rn<double> {
  static __device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
  static __device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
  static __device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
  static __device__ __forceinline__ double div(double a, double b) { return __ddiv_rn(a, b); }
  static __device__ __forceinline__ double sqrt(double a) { return __dsqrt_rn(a); }
  static __device__ __forceinline__ double fma(double a, double b, double c) { return __fma_rn(a, b, c); }
};

// x + a * y as optim_cpu.cpp's madd: one fused multiply-add, or a rounded product added.
template <typename T> __device__ __forceinline__ T madd(bool fused, T a, T y, T x) {
  return fused ? Rn<T>::fma(a, y, x) : Rn<T>::add(x, Rn<T>::mul(a, y));
}

// NaN-propagating maximum, as the core's maximum.
template <typename T> __device__ __forceinline__ T nan_max(T a, T b) {
  return (a != a || b != b) ? a + b : (a > b ? a : b);
}

// The blocks of one launch: tensor i owns blocks [start[i], start[i + 1]).
struct ChunkMap {
  int count = 0;
  int64_t start[kListTensors + 1] = {};
};

__device__ __forceinline__ int tensor_of_block(const ChunkMap& map, int64_t b) {
  int i = 0;
  while (i + 1 < map.count && b >= map.start[i + 1]) ++i;
  return i;
}

// Calls launch(first, count, map) for groups of at most kListTensors consecutive tensors
// (by index into sizes) that have elements, map giving each kChunk-element chunk a block.
template <typename F> void for_launch_groups(const std::vector<int64_t>& sizes, F&& launch) {
  size_t i = 0;
  while (i < sizes.size()) {
    std::vector<int> members;
    ChunkMap map;
    for (; i < sizes.size() && map.count < kListTensors; ++i) {
      if (sizes[i] == 0) continue;
      members.push_back(static_cast<int>(i));
      map.start[map.count + 1] = map.start[map.count] + (sizes[i] + kChunk - 1) / kChunk;
      ++map.count;
    }
    if (map.count > 0) launch(members, map);
  }
}

// ---- Adam ----

template <typename T> struct AdamTensor {
  T *p, *m, *v, *vmax;
  const T* g;
  int64_t n;
  AdamScalars<T> s;     // the step's scalars (bc2_sqrt, neg_step_size from step_slot when >= 0)
  int step_slot;        // >= 0: the step counter is on the device; its scalars are at 2 * slot
};

template <typename T> struct AdamLaunch {
  ChunkMap map;
  AdamTensor<T> t[kListTensors];
};
static_assert(sizeof(AdamLaunch<double>) <= 4000, "kernel arguments are limited to 4 KB");

struct DeviceStep {
  void* ptr;
  bool is_double;
};

constexpr int kStepsPerLaunch = 128;
struct DeviceSteps {
  DeviceStep step[kStepsPerLaunch];
  int count;
  int first_slot;
};

// Advances device step counters in order and writes each one's step-dependent scalars at
// 2 * its slot.
template <typename T>
__global__ void advance_steps_kernel(DeviceSteps S, double lr, double beta1, double beta2, T* scalars) {
  for (int i = 0; i < S.count; ++i) {
    double v;
    if (S.step[i].is_double) {
      v = *static_cast<double*>(S.step[i].ptr) += 1.0;
    } else {
      v = *static_cast<float*>(S.step[i].ptr) += 1.0f;
    }
    const int slot = S.first_slot + i;
    adam_step_scalars<T>(v, lr, beta1, beta2, &scalars[2 * slot], &scalars[2 * slot + 1]);
  }
}

template <typename T, bool kAmsgrad, bool kCoupledDecay>
__global__ void adam_kernel(AdamLaunch<T> L, const T* step_scalars) {
  using R = Rn<T>;
  const int64_t b = blockIdx.x;
  const int ti = tensor_of_block(L.map, b);
  const AdamTensor<T> t = L.t[ti];
  AdamScalars<T> s = t.s;
  if (t.step_slot >= 0) {
    s.bc2_sqrt = step_scalars[2 * t.step_slot];
    s.neg_step_size = step_scalars[2 * t.step_slot + 1];
  }
  const bool fused = t.n > 1;
  const T lerp_w = s.lerp_from_avg ? s.w : s.w1;
  const int64_t e0 = (b - L.map.start[ti]) * kChunk, e1 = min(t.n, e0 + kChunk);
  for (int64_t e = e0 + threadIdx.x; e < e1; e += blockDim.x) {
    T grad = R::mul(s.sign, t.g[e]);
    T param = t.p[e];
    if constexpr (kCoupledDecay) {
      grad = madd(fused, s.wd, param, grad);
    } else {
      param = R::mul(param, s.decay);
    }
    const T avg = t.m[e];
    const T diff = R::sub(grad, avg);
    const T new_avg = madd(fused, lerp_w, diff, s.lerp_from_avg ? avg : grad);
    const T new_sq = madd(fused, s.one_minus_beta2, R::mul(grad, grad), R::mul(t.v[e], s.beta2));
    T second = new_sq;
    if constexpr (kAmsgrad) {
      second = nan_max(t.vmax[e], new_sq);
      t.vmax[e] = second;
    }
    const T denom = R::add(R::div(R::sqrt(second), s.bc2_sqrt), s.eps);
    t.p[e] = R::add(param, R::div(R::mul(s.neg_step_size, new_avg), denom));
    t.m[e] = new_avg;
    t.v[e] = new_sq;
  }
}

// ---- SGD ----

template <typename T> struct SgdTensor {
  T *p, *buf;
  const T* g;
  int64_t n;
};

template <typename T> struct SgdLaunch {
  ChunkMap map;
  SgdTensor<T> t[kListTensors];
  T sign, wd, momentum, one_minus_dampening, neg_lr;
  bool nesterov;
};

// kMomentum: 0 none, 1 the first step (buffer := gradient), 2 later steps.
template <typename T, bool kCoupledDecay, int kMomentum> __global__ void sgd_kernel(SgdLaunch<T> L) {
  using R = Rn<T>;
  const int64_t b = blockIdx.x;
  const int ti = tensor_of_block(L.map, b);
  const SgdTensor<T> t = L.t[ti];
  const bool fused = t.n > 1;
  const bool undamped = L.one_minus_dampening == T(1);  // add(alpha=1) is a plain add
  const int64_t e0 = (b - L.map.start[ti]) * kChunk, e1 = min(t.n, e0 + kChunk);
  for (int64_t e = e0 + threadIdx.x; e < e1; e += blockDim.x) {
    T grad = R::mul(L.sign, t.g[e]);
    if constexpr (kCoupledDecay) grad = madd(fused, L.wd, t.p[e], grad);
    if constexpr (kMomentum != 0) {
      T buf;
      if constexpr (kMomentum == 1) {
        buf = grad;
      } else {
        const T kept = R::mul(t.buf[e], L.momentum);
        buf = undamped ? R::add(kept, grad) : madd(fused, L.one_minus_dampening, grad, kept);
      }
      t.buf[e] = buf;
      grad = L.nesterov ? madd(fused, L.momentum, buf, grad) : buf;
    }
    t.p[e] = madd(fused, L.neg_lr, grad, t.p[e]);
  }
}

template <typename T>
void launch_sgd(bool coupled, int mode, unsigned blocks, cudaStream_t stream, const SgdLaunch<T>& L) {
  if (coupled) {
    if (mode == 0) sgd_kernel<T, true, 0><<<blocks, kThreads, 0, stream>>>(L);
    if (mode == 1) sgd_kernel<T, true, 1><<<blocks, kThreads, 0, stream>>>(L);
    if (mode == 2) sgd_kernel<T, true, 2><<<blocks, kThreads, 0, stream>>>(L);
  } else {
    if (mode == 0) sgd_kernel<T, false, 0><<<blocks, kThreads, 0, stream>>>(L);
    if (mode == 1) sgd_kernel<T, false, 1><<<blocks, kThreads, 0, stream>>>(L);
    if (mode == 2) sgd_kernel<T, false, 2><<<blocks, kThreads, 0, stream>>>(L);
  }
}

template <typename T>
void fused_adam_typed(const char* op, const Device& dev, const std::vector<Tensor>& params,
                      const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avgs,
                      const std::vector<Tensor>& exp_avg_sqs, const std::vector<Tensor>& max_exp_avg_sqs,
                      const std::vector<Tensor>& state_steps, double lr, double beta1, double beta2,
                      double weight_decay, double eps, bool amsgrad, bool maximize, bool decoupled) {
  // the step counters, in list order as the CPU advances them (host ones at once)
  std::vector<AdamScalars<T>> scalars(params.size());
  std::vector<int> slot(params.size(), -1);
  std::vector<DeviceStep> device_steps;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& step = state_steps[i];
    check_adam_step(op, step, i);
    double v = 1.0;  // a device counter's step-dependent scalars come from the device
    if (step->device().type == DeviceType::CPU) {
      if (step->dtype() == ScalarType::Float32) {
        v = *step->data<float>() += 1.0f;
      } else {
        v = *step->data<double>() += 1.0;
      }
    } else {
      slot[i] = static_cast<int>(device_steps.size());
      device_steps.push_back({step->data_ptr(), step->dtype() == ScalarType::Float64});
    }
    scalars[i] = adam_scalars<T>(v, lr, beta1, beta2, weight_decay, eps, maximize, decoupled);
  }
  CurrentDevice guard(dev.index);
  cudaStream_t stream = stream_of(dev);
  Tensor step_scalars;
  if (!device_steps.empty()) {
    const int count = static_cast<int>(device_steps.size());
    step_scalars = ember::empty({2 * static_cast<int64_t>(count)}, params[0]->dtype(), dev);
    for (int first = 0; first < count; first += kStepsPerLaunch) {
      DeviceSteps S{};
      S.count = std::min(kStepsPerLaunch, count - first);
      S.first_slot = first;
      std::copy(device_steps.begin() + first, device_steps.begin() + first + S.count, S.step);
      advance_steps_kernel<T><<<1, 1, 0, stream>>>(S, lr, beta1, beta2, step_scalars->data<T>());
      check_launch(op);
    }
  }
  const T* pss = step_scalars ? step_scalars->data<T>() : nullptr;
  const bool coupled = weight_decay != 0 && !decoupled;
  std::vector<int64_t> sizes;
  for (const Tensor& p : params) sizes.push_back(p->numel());
  for_launch_groups(sizes, [&](const std::vector<int>& members, const ChunkMap& map) {
    AdamLaunch<T> L;
    L.map = map;
    for (int j = 0; j < map.count; ++j) {
      const size_t i = static_cast<size_t>(members[j]);
      AdamTensor<T>& t = L.t[j];
      t.p = params[i]->data<T>();
      t.g = grads[i]->data<T>();
      t.m = exp_avgs[i]->data<T>();
      t.v = exp_avg_sqs[i]->data<T>();
      t.vmax = amsgrad ? max_exp_avg_sqs[i]->data<T>() : nullptr;
      t.n = params[i]->numel();
      t.s = scalars[i];
      t.step_slot = slot[i];
    }
    const unsigned blocks = static_cast<unsigned>(map.start[map.count]);
    if (amsgrad && coupled) {
      adam_kernel<T, true, true><<<blocks, kThreads, 0, stream>>>(L, pss);
    } else if (amsgrad) {
      adam_kernel<T, true, false><<<blocks, kThreads, 0, stream>>>(L, pss);
    } else if (coupled) {
      adam_kernel<T, false, true><<<blocks, kThreads, 0, stream>>>(L, pss);
    } else {
      adam_kernel<T, false, false><<<blocks, kThreads, 0, stream>>>(L, pss);
    }
    check_launch(op);
  });
}

template <typename T>
void fused_sgd_typed(const char* op, const Device& dev, const std::vector<Tensor>& params,
                     const std::vector<Tensor>& grads, const std::vector<Tensor>& bufs, double weight_decay,
                     double momentum, double lr, double dampening, bool nesterov, bool maximize, bool is_first_step) {
  SgdLaunch<T> L;
  L.sign = maximize ? T(-1) : T(1);
  L.wd = static_cast<T>(weight_decay);
  L.momentum = static_cast<T>(momentum);
  L.one_minus_dampening = static_cast<T>(1 - dampening);
  L.neg_lr = static_cast<T>(-lr);
  L.nesterov = nesterov;
  const bool coupled = weight_decay != 0;
  const int mode = momentum == 0 ? 0 : is_first_step ? 1 : 2;
  CurrentDevice guard(dev.index);
  cudaStream_t stream = stream_of(dev);
  std::vector<int64_t> sizes;
  for (const Tensor& p : params) sizes.push_back(p->numel());
  for_launch_groups(sizes, [&](const std::vector<int>& members, const ChunkMap& map) {
    L.map = map;
    for (int j = 0; j < map.count; ++j) {
      const size_t i = static_cast<size_t>(members[j]);
      L.t[j] = {params[i]->data<T>(), mode != 0 ? bufs[i]->data<T>() : nullptr, grads[i]->data<T>(),
                params[i]->numel()};
    }
    const unsigned blocks = static_cast<unsigned>(map.start[map.count]);
    launch_sgd<T>(coupled, mode, blocks, stream, L);
    check_launch(op);
  });
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

std::vector<Tensor> _fused_adam_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                                 const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                                 const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& state_steps,
                                 double lr, double beta1, double beta2, double weight_decay, double eps, bool amsgrad,
                                 bool maximize, bool decoupled_weight_decay) {
  const char* op = "_fused_adam_";
  fused_adam_meta(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad, DeviceType::CUDA);
  if (params.empty()) return {};
  const Device dev = params[0]->device();
  if (params[0]->dtype() == ScalarType::Float64) {
    fused_adam_typed<double>(op, dev, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1,
                             beta2, weight_decay, eps, amsgrad, maximize, decoupled_weight_decay);
  } else {
    fused_adam_typed<float>(op, dev, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1,
                            beta2, weight_decay, eps, amsgrad, maximize, decoupled_weight_decay);
  }
  bump_fused_adam_versions(params, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad);
  return {};
}

std::vector<Tensor> _fused_sgd_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                                const std::vector<Tensor>& momentum_buffers, double weight_decay, double momentum,
                                double lr, double dampening, bool nesterov, bool maximize, bool is_first_step) {
  const char* op = "_fused_sgd_";
  fused_sgd_meta(params, grads, momentum_buffers, momentum, DeviceType::CUDA);
  if (params.empty()) return {};
  const Device dev = params[0]->device();
  if (params[0]->dtype() == ScalarType::Float64) {
    fused_sgd_typed<double>(op, dev, params, grads, momentum_buffers, weight_decay, momentum, lr, dampening, nesterov,
                            maximize, is_first_step);
  } else {
    fused_sgd_typed<float>(op, dev, params, grads, momentum_buffers, weight_decay, momentum, lr, dampening, nesterov,
                           maximize, is_first_step);
  }
  bump_fused_sgd_versions(params, momentum_buffers, momentum);
  return {};
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(_fused_adam_);
EMBER_REGISTER_CUDA_KERNEL(_fused_sgd_);
