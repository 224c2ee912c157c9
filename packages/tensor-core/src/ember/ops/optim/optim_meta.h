// Meta functions of the fused optimizer steps (_fused_adam_, _fused_sgd_) and the step
// scalars of Adam, shared by the CPU kernels (optim_cpu.cpp; optim_meta.cpp defines the
// functions) and the CUDA kernels (optim_cuda.cu): the argument checks, in the CPU kernel's
// order and with its messages, and the per-tensor scalars, rounded to the tensor's dtype as
// ember_optim's per-tensor path rounds them (adam_scalars also runs on the device, for step
// counters that live there, adam_step_scalars).
#pragma once

#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <vector>

#include "ember/core/host_device.h"
#include "ember/core/tensor.h"

namespace ember {

// The parameter list: no None (TypeError), float32/float64 (NotImplementedError), on a device
// of type `device` (NotImplementedError naming where the kernel runs), one dtype.
void check_fused_params(const char* op, const std::vector<Tensor>& params, DeviceType device);
// A list argument: empty when not `required`, else one contiguous tensor per parameter with
// the parameter's dtype, shape and device.
void check_fused_list(const char* op, const char* name, const std::vector<Tensor>& list,
                      const std::vector<Tensor>& params, bool required);
// _fused_adam_'s checks (the step counters' own: check_adam_step, as each is advanced).
void fused_adam_meta(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                     const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                     const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& state_steps,
                     bool amsgrad, DeviceType device);
// state_steps[i]: a one-element float32 or float64 tensor (any device).
void check_adam_step(const char* op, const Tensor& step, size_t i);
// _fused_sgd_'s checks.
void fused_sgd_meta(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                    const std::vector<Tensor>& momentum_buffers, double momentum, DeviceType device);

template <typename T> struct AdamScalars {
  T sign, wd, decay, w, w1, beta2, one_minus_beta2, bc2_sqrt, eps, neg_step_size;
  bool lerp_from_avg;
};

// The scalars that depend on the step count `step` (already advanced): the square root of the
// second bias correction and -lr / the first.
template <typename T>
EMBER_HOST_DEVICE inline void adam_step_scalars(double step, double lr, double beta1, double beta2, T* bc2_sqrt,
                                                T* neg_step_size) {
  const double bias_correction1 = 1 - ::pow(beta1, step);
  const double bias_correction2 = 1 - ::pow(beta2, step);
  *bc2_sqrt = static_cast<T>(::sqrt(bias_correction2));
  *neg_step_size = static_cast<T>(-(lr / bias_correction1));
}

// All the step's scalars for the step count `step` (already advanced).
template <typename T>
inline AdamScalars<T> adam_scalars(double step, double lr, double beta1, double beta2, double weight_decay,
                                   double eps, bool maximize, bool decoupled) {
  AdamScalars<T> s;
  s.sign = maximize ? T(-1) : T(1);
  s.wd = static_cast<T>(weight_decay);
  s.decay = decoupled ? static_cast<T>(1 - lr * weight_decay) : T(1);
  const T w = static_cast<T>(1 - beta1);  // lerp's weight in the tensor's dtype, as PyTorch's lerp_
  s.w = w;
  s.w1 = static_cast<T>(static_cast<double>(w) - 1.0);
  s.lerp_from_avg = std::abs(static_cast<double>(w)) < 0.5;
  s.beta2 = static_cast<T>(beta2);
  s.one_minus_beta2 = static_cast<T>(1 - beta2);
  adam_step_scalars<T>(step, lr, beta1, beta2, &s.bc2_sqrt, &s.neg_step_size);
  s.eps = static_cast<T>(eps);
  return s;
}

// Marks what a fused step wrote in place (autograd's version counters see the update).
inline void bump_fused_adam_versions(const std::vector<Tensor>& params, const std::vector<Tensor>& exp_avgs,
                                     const std::vector<Tensor>& exp_avg_sqs,
                                     const std::vector<Tensor>& max_exp_avg_sqs,
                                     const std::vector<Tensor>& state_steps, bool amsgrad) {
  for (const auto* list : {&params, &exp_avgs, &exp_avg_sqs, &state_steps}) {
    for (const Tensor& t : *list) t->storage()->bump_version();
  }
  if (amsgrad) {
    for (const Tensor& t : max_exp_avg_sqs) t->storage()->bump_version();
  }
}
inline void bump_fused_sgd_versions(const std::vector<Tensor>& params, const std::vector<Tensor>& momentum_buffers,
                                    double momentum) {
  for (const Tensor& t : params) t->storage()->bump_version();
  if (momentum != 0) {
    for (const Tensor& t : momentum_buffers) t->storage()->bump_version();
  }
}

}  // namespace ember
