// The meta functions declared in optim_meta.h: checks, shapes and dtypes shared by
// the CPU and CUDA kernels.
#include "ember/ops/optim/optim_meta.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"
#include "ember/runtime/simd.h"

namespace ember {

void check_fused_list(const char* op, const char* name, const std::vector<Tensor>& list,
                      const std::vector<Tensor>& params, bool required) {
  if (list.empty() && !required) return;
  if (list.size() != params.size()) {
    throw std::runtime_error(message(op, ": expected ", params.size(), " tensors in ", name, " (one per parameter), got ",
                                     list.size()));
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const Tensor& t = list[i];
    const Tensor& p = params[i];
    if (!t) throw TypeError(message(op, ": ", name, "[", i, "] is None"));
    if (t->dtype() != p->dtype() || t->sizes() != p->sizes() || t->device() != p->device()) {
      throw std::runtime_error(message(op, ": ", name, "[", i, "] must match params[", i, "] (shape ",
                                       shape_str(p->sizes()), ", dtype ", dtype_name(p->dtype()), ", device ",
                                       p->device().str(), "), got shape ", shape_str(t->sizes()), ", dtype ",
                                       dtype_name(t->dtype()), ", device ", t->device().str()));
    }
    if (!t->is_contiguous()) {
      throw std::runtime_error(message(op, ": ", name, "[", i, "] of shape ", shape_str(t->sizes()),
                                       " is not contiguous; the fused step needs contiguous tensors (use "
                                       "foreach=True for strided ones)"));
    }
  }
}

void check_fused_params(const char* op, const std::vector<Tensor>& params, DeviceType device) {
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    if (!p) throw TypeError(message(op, ": params[", i, "] is None"));
    if (p->dtype() != ScalarType::Float32 && p->dtype() != ScalarType::Float64) {
      throw NotImplementedError(message(op, ": params[", i, "] has dtype ", dtype_name(p->dtype()),
                                        "; the fused step supports float32 and float64"));
    }
    if (p->device().type != device) {
      throw NotImplementedError(message(op, ": params[", i, "] is on ", p->device().str(),
                                        "; this fused kernel runs on ",
                                        device == DeviceType::CPU ? "the CPU" : "CUDA"));
    }
    if (p->dtype() != params[0]->dtype()) {
      throw std::runtime_error(message(op, ": all params must have one dtype; params[0] is ",
                                       dtype_name(params[0]->dtype()), ", params[", i, "] is ",
                                       dtype_name(p->dtype())));
    }
  }
}

void fused_adam_meta(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                     const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                     const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& state_steps,
                     bool amsgrad, DeviceType device) {
  const char* op = "_fused_adam_";
  check_fused_params(op, params, device);
  check_fused_list(op, "params", params, params, true);
  check_fused_list(op, "grads", grads, params, true);
  check_fused_list(op, "exp_avgs", exp_avgs, params, true);
  check_fused_list(op, "exp_avg_sqs", exp_avg_sqs, params, true);
  check_fused_list(op, "max_exp_avg_sqs", max_exp_avg_sqs, params, amsgrad);
  if (state_steps.size() != params.size()) {
    throw std::runtime_error(message(op, ": expected ", params.size(), " tensors in state_steps (one per parameter), got ",
                                     state_steps.size()));
  }
}

void check_adam_step(const char* op, const Tensor& step, size_t i) {
  if (!step || step->numel() != 1) {
    throw std::runtime_error(message(op, ": state_steps[", i, "] must be a one-element tensor"));
  }
  if (step->dtype() != ScalarType::Float32 && step->dtype() != ScalarType::Float64) {
    throw std::runtime_error(message(op, ": state_steps[", i, "] must be float32 or float64, got ",
                                     dtype_name(step->dtype())));
  }
}

void fused_sgd_meta(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                    const std::vector<Tensor>& momentum_buffers, double momentum, DeviceType device) {
  const char* op = "_fused_sgd_";
  check_fused_params(op, params, device);
  check_fused_list(op, "grads", grads, params, true);
  check_fused_list(op, "momentum_buffers", momentum_buffers, params, momentum != 0);
}

}  // namespace ember
