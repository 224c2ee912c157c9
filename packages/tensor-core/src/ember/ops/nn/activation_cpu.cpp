// CPU kernels of the fused activations: gelu (exact and tanh-approximated) and its backward.
// The scalar functions are in activation_functions.h (shared with the CUDA kernels); float32
// and the 16-bit floats compute in float with special_float.h's vectorised normal tail.
#include "ember/ops/elementwise/binary_cpu.h"
#include "ember/ops/nn/activation_functions.h"
#include "ember/ops/nn/gelu_avx512.h"
#include "ember/ops/nn/nn_meta.h"

namespace ember::cpu {

namespace {

// The exact GELU and its backward with their AVX-512 kernels of contiguous float32 runs
// (elementwise.h's avx512 hook; gelu_avx512.h).
struct GeluCpu : activation_fn::Gelu {
#if EMBER_SIMD_DISPATCH
  void avx512(float* y, const float* x, int64_t n) const { gelu_avx512(y, x, n); }
#endif
};
struct GeluBackwardCpu : activation_fn::GeluBackward {
#if EMBER_SIMD_DISPATCH
  void avx512(float* y, const float* g, const float* x, int64_t n) const {
    gelu_backward_avx512(y, g, x, n);
  }
#endif
};

}  // namespace

Tensor gelu(const Tensor& self, const std::string& approximate, const Tensor& out) {
  const auto unary = [&](auto fn) {
    return map_unary("gelu", self, out, self->dtype(), DispatchFloat{}, [fn](auto) { return fn; });
  };
  if (gelu_uses_tanh(approximate)) return unary(activation_fn::GeluTanh{});
  return unary(GeluCpu{});
}

Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, const std::string& approximate) {
  auto P = promote(grad_output, self);
  const auto binary = [&](auto fn) {
    return map_binary("gelu_backward", P.a, P.b, Tensor(), P.dtype, DispatchFloat{},
                      [fn](auto) { return fn; });
  };
  if (gelu_uses_tanh(approximate)) return binary(activation_fn::GeluTanhBackward{});
  return binary(GeluBackwardCpu{});
}

}  // namespace ember::cpu
