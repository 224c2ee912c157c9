// CUDA kernels of the fused activations (gelu and its backward) on the iteration engine of
// elementwise.cuh; the scalar functions are activation_functions.h's (CUDA's normcdf and tanh).
#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/nn/activation_functions.h"
#include "ember/ops/nn/nn_meta.h"

namespace ember::cuda_engine {
namespace {

template <typename T, typename Fn> void gelu_typed(const char* op, const Tensor& res, const Tensor& in) {
  using A = opmath_t<T>;
  launch_map<T, T>(op, res, in, [] __device__(T x) { return cvt<T>(Fn{}(cvt<A>(x))); });
}

template <typename T, typename Fn>
void gelu_backward_typed(const char* op, const Tensor& res, const Tensor& g, const Tensor& x) {
  using A = opmath_t<T>;
  launch_map<T, T, T>(op, res, g, x, [] __device__(T gv, T xv) { return cvt<T>(Fn{}(cvt<A>(gv), cvt<A>(xv))); });
}

template <typename Fn> Tensor gelu_map(const char* op, const Tensor& self, const Tensor& out) {
  const ScalarType dt = self->dtype();
  Tensor in = contiguous_in(self, dt);
  Tensor res = out && out->sizes() == self->sizes() && out->dtype() == dt ? out : ember::empty(self->sizes(), dt, self->device());
  dispatch_device_float(dt, op, [&](auto tag) { gelu_typed<decltype(tag), Fn>(op, res, in); });
  return finish_out(op, out, res);
}

template <typename Fn> Tensor gelu_backward_map(const char* op, const Tensor& grad_output, const Tensor& self) {
  const ScalarType dt = result_type(grad_output, self);
  const Shape shape = broadcast_shapes(grad_output->sizes(), self->sizes(), op);
  Tensor g = expand_to(contiguous_in(grad_output, dt), shape, op);
  Tensor x = expand_to(contiguous_in(self, dt), shape, op);
  Tensor res = ember::empty(shape, dt, self->device());
  dispatch_device_float(dt, op, [&](auto tag) { gelu_backward_typed<decltype(tag), Fn>(op, res, g, x); });
  return res;
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {
using namespace ember::cuda_engine;

Tensor gelu(const Tensor& self, const std::string& approximate, const Tensor& out) {
  if (gelu_uses_tanh(approximate)) return gelu_map<activation_fn::GeluTanh>("gelu", self, out);
  return gelu_map<activation_fn::Gelu>("gelu", self, out);
}

Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, const std::string& approximate) {
  if (gelu_uses_tanh(approximate)) {
    return gelu_backward_map<activation_fn::GeluTanhBackward>("gelu_backward", grad_output, self);
  }
  return gelu_backward_map<activation_fn::GeluBackward>("gelu_backward", grad_output, self);
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(gelu);
EMBER_REGISTER_CUDA_KERNEL(gelu_backward);
