// Fused optimizer steps: _fused_adam_ (Adam and AdamW) and _fused_sgd_.
//
// One pass over each parameter's memory reads the parameter, gradient and state and writes
// the parameter and state once: the step is memory-bound, and the multi-op form reads and
// writes each tensor several times. The arithmetic per element is that of ember_optim's
// per-tensor path, op for op in the same order and dtype (scalars rounded to the tensor's
// dtype as the ops round them), so the result is bit for bit the same: where the core's
// `add(x, y, alpha=a)` is one fused multiply-add (the AVX2 and AVX-512 levels), `madd` is
// too; everything else rounds after each operation (this file is compiled with
// -ffp-contract=off, so the compiler fuses nothing on its own). One-element tensors go
// through the core's strided loop, at the baseline level: they round without fusing here too.
//
// Work is cut into blocks of at most kBlock elements across all the lists' tensors and the
// blocks are spread over the pool: many small tensors cost one parallel region, not one each.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/ops/optim/optim_meta.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"
#include "ember/runtime/simd.h"


namespace ember::cpu {
namespace {

constexpr int64_t kBlock = 1 << 15;

struct Block {
  int64_t tensor, begin, end;
};

// Blocks covering every params[i] (by element count); run(block) on the pool.
template <typename F> void for_blocks(const std::vector<Tensor>& params, F&& run) {
  std::vector<Block> blocks;
  for (size_t i = 0; i < params.size(); ++i) {
    const int64_t n = params[i]->numel();
    for (int64_t b = 0; b < n; b += kBlock) blocks.push_back({static_cast<int64_t>(i), b, std::min(n, b + kBlock)});
  }
  const int64_t count = static_cast<int64_t>(blocks.size());
  parallel_for(0, count, std::max<int64_t>(1, kParallelGrain / kBlock), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) run(blocks[b]);
  });
}

// step += 1 in the step tensor's dtype; returns the new value.
double advance_step(const char* op, const Tensor& step, size_t i) {
  check_adam_step(op, step, i);
  if (step->dtype() == ScalarType::Float32) return *step->data<float>() += 1.0f;
  return *step->data<double>() += 1.0;
}

// x + a * y as the core's add(x, y, alpha=a) rounds it at the dispatch level in use.
template <bool kFma, typename T> inline T madd(T a, T y, T x) {
  if constexpr (kFma) {
    return __builtin_fma(a, y, x);
  } else {
    return x + a * y;
  }
}

// NaN-propagating maximum, as the core's maximum.
template <typename T> inline T nan_max(T a, T b) { return (a != a || b != b) ? a + b : (a > b ? a : b); }

template <typename T, bool kFma, bool kAmsgrad, bool kCoupledDecay>
void adam_block(T* __restrict__ p, const T* __restrict__ g, T* __restrict__ m, T* __restrict__ v,
                T* __restrict__ vmax, int64_t n, const AdamScalars<T>& scalars) {
  const AdamScalars<T> s = scalars;  // locals: stores through p, m, v cannot change them
  const T lerp_w = s.lerp_from_avg ? s.w : s.w1;
  for (int64_t i = 0; i < n; ++i) {
    T grad = s.sign * g[i];
    T param = p[i];
    if constexpr (kCoupledDecay) {
      grad = madd<kFma>(s.wd, param, grad);
    } else {
      param = param * s.decay;
    }
    const T avg = m[i];
    const T diff = grad - avg;
    const T new_avg = madd<kFma>(lerp_w, diff, s.lerp_from_avg ? avg : grad);
    const T new_sq = madd<kFma>(s.one_minus_beta2, grad * grad, v[i] * s.beta2);
    T second = new_sq;
    if constexpr (kAmsgrad) {
      second = nan_max(vmax[i], new_sq);
      vmax[i] = second;
    }
    const T denom = std::sqrt(second) / s.bc2_sqrt + s.eps;
    p[i] = param + (s.neg_step_size * new_avg) / denom;
    m[i] = new_avg;
    v[i] = new_sq;
  }
}

template <typename T>
void fused_adam_typed(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                      const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                      const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<AdamScalars<T>>& scalars,
                      bool amsgrad, bool coupled) {
  const bool fma = cpu_level() != CpuLevel::Default;
  auto run = [&](auto ams, auto cpl) {
    constexpr bool kAms = decltype(ams)::value, kCpl = decltype(cpl)::value;
    for_blocks(params, [&](const Block& b) {
      const size_t i = static_cast<size_t>(b.tensor);
      T* P = params[i]->data<T>() + b.begin;
      const T* G = grads[i]->data<T>() + b.begin;
      T* M = exp_avgs[i]->data<T>() + b.begin;
      T* V = exp_avg_sqs[i]->data<T>() + b.begin;
      T* X = kAms ? max_exp_avg_sqs[i]->data<T>() + b.begin : nullptr;
      const int64_t n = b.end - b.begin;
      if (fma && params[i]->numel() > 1) {
        simd_dispatch([&] { adam_block<T, true, kAms, kCpl>(P, G, M, V, X, n, scalars[i]); });
      } else {
        adam_block<T, false, kAms, kCpl>(P, G, M, V, X, n, scalars[i]);
      }
    });
  };
  using F = std::false_type;
  using Tr = std::true_type;
  if (amsgrad) {
    coupled ? run(Tr{}, Tr{}) : run(Tr{}, F{});
  } else {
    coupled ? run(F{}, Tr{}) : run(F{}, F{});
  }
}

template <typename T, bool kFma, bool kCoupledDecay, int kMomentum>  // kMomentum: 0 none, 1 first step, 2 later
void sgd_block(T* __restrict__ p, const T* __restrict__ g, T* __restrict__ buf, int64_t n, T sign, T wd, T momentum, T one_minus_dampening, T neg_lr,
               bool nesterov) {
  const bool undamped = one_minus_dampening == T(1);  // add(alpha=1) is a plain add
  for (int64_t i = 0; i < n; ++i) {
    T grad = sign * g[i];
    if constexpr (kCoupledDecay) grad = madd<kFma>(wd, p[i], grad);
    if constexpr (kMomentum != 0) {
      T b;
      if constexpr (kMomentum == 1) {
        b = grad;
      } else {
        const T kept = buf[i] * momentum;
        b = undamped ? kept + grad : madd<kFma>(one_minus_dampening, grad, kept);
      }
      buf[i] = b;
      grad = nesterov ? madd<kFma>(momentum, b, grad) : b;
    }
    p[i] = madd<kFma>(neg_lr, grad, p[i]);
  }
}

template <typename T>
void fused_sgd_typed(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                     const std::vector<Tensor>& bufs, double weight_decay, double momentum, double lr,
                     double dampening, bool nesterov, bool maximize, bool is_first_step) {
  const T sign = maximize ? T(-1) : T(1), wd = static_cast<T>(weight_decay), mom = static_cast<T>(momentum);
  const T omd = static_cast<T>(1 - dampening), neg_lr = static_cast<T>(-lr);
  const bool fma = cpu_level() != CpuLevel::Default;
  auto run = [&](auto cpl, auto mode) {
    constexpr bool kCpl = decltype(cpl)::value;
    constexpr int kMode = decltype(mode)::value;
    for_blocks(params, [&](const Block& b) {
      const size_t i = static_cast<size_t>(b.tensor);
      T* P = params[i]->data<T>() + b.begin;
      const T* G = grads[i]->data<T>() + b.begin;
      T* B = kMode != 0 ? bufs[i]->data<T>() + b.begin : nullptr;
      const int64_t n = b.end - b.begin;
      if (fma && params[i]->numel() > 1) {
        simd_dispatch([&] { sgd_block<T, true, kCpl, kMode>(P, G, B, n, sign, wd, mom, omd, neg_lr, nesterov); });
      } else {
        sgd_block<T, false, kCpl, kMode>(P, G, B, n, sign, wd, mom, omd, neg_lr, nesterov);
      }
    });
  };
  using F = std::false_type;
  using Tr = std::true_type;
  using M0 = std::integral_constant<int, 0>;
  using M1 = std::integral_constant<int, 1>;
  using M2 = std::integral_constant<int, 2>;
  const bool coupled = weight_decay != 0;
  if (momentum == 0) {
    coupled ? run(Tr{}, M0{}) : run(F{}, M0{});
  } else if (is_first_step) {
    coupled ? run(Tr{}, M1{}) : run(F{}, M1{});
  } else {
    coupled ? run(Tr{}, M2{}) : run(F{}, M2{});
  }
}

}  // namespace

std::vector<Tensor> _fused_adam_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                                 const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                                 const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& state_steps,
                                 double lr, double beta1, double beta2, double weight_decay, double eps, bool amsgrad,
                                 bool maximize, bool decoupled_weight_decay) {
  const char* op = "_fused_adam_";
  fused_adam_meta(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad, DeviceType::CPU);
  if (params.empty()) return {};
  const bool coupled = weight_decay != 0 && !decoupled_weight_decay;
  dispatch_real(params[0]->dtype(), [&](auto zero) {
    using T = decltype(zero);
    std::vector<AdamScalars<T>> scalars;
    scalars.reserve(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      const double step = advance_step(op, state_steps[i], i);
      scalars.push_back(adam_scalars<T>(step, lr, beta1, beta2, weight_decay, eps, maximize, decoupled_weight_decay));
    }
    fused_adam_typed<T>(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, scalars, amsgrad, coupled);
  });
  bump_fused_adam_versions(params, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad);
  return {};
}

std::vector<Tensor> _fused_sgd_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                                const std::vector<Tensor>& momentum_buffers, double weight_decay, double momentum,
                                double lr, double dampening, bool nesterov, bool maximize, bool is_first_step) {
  fused_sgd_meta(params, grads, momentum_buffers, momentum, DeviceType::CPU);
  if (params.empty()) return {};
  dispatch_real(params[0]->dtype(), [&](auto zero) {
    fused_sgd_typed<decltype(zero)>(params, grads, momentum_buffers, weight_decay, momentum, lr, dampening, nesterov,
                                    maximize, is_first_step);
  });
  bump_fused_sgd_versions(params, momentum_buffers, momentum);
  return {};
}

}  // namespace ember::cpu
