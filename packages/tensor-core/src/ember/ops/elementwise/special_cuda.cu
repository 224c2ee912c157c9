// CUDA kernels of the special functions: special_functions.h's scalar functions (in double,
// as on the CPU) on the iteration engine of elementwise.cuh, with special_cpu.cpp's dtype
// rule (special_meta.h). A CPU 0-d operand of a binary one (a Python number) is copied to
// the device first.
#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/elementwise/special_functions.h"
#include "ember/ops/elementwise/special_meta.h"

namespace ember::cuda_engine {
namespace {

// t on device in dtype, expanded to shape.
Tensor operand_on(const Tensor& t, ScalarType dtype, const Device& device, const Shape& shape, const char* op) {
  Tensor r = t;
  if (t->dtype() != dtype || t->device() != device) {
    r = ember::empty(t->sizes(), dtype, device);
    ops::copy(r, t, false, r);
  }
  return expand_to(r, shape, op);
}

Tensor special_result(const Tensor& out, const Shape& shape, ScalarType dtype, const Device& device) {
  if (out && out->sizes() == shape && out->dtype() == dtype) return out;
  return ember::empty(shape, dtype, device);
}

// (the device lambdas are made in named functions: nvcc refuses them inside a host lambda)
template <typename T, typename F> void run_unary(const char* op, const Tensor& res, const Tensor& in, F f) {
  launch_map<T, T>(op, res, in, [f] __device__(T x) { return cvt<T>(f(cvt<double>(x))); });
}

template <typename T, typename F>
void run_binary(const char* op, const Tensor& res, const Tensor& a, const Tensor& b, F f) {
  launch_map<T, T, T>(op, res, a, b, [f] __device__(T x, T y) { return cvt<T>(f(cvt<double>(x), cvt<double>(y))); });
}

template <typename F> Tensor special_unary(const char* op, const Tensor& self, const Tensor& out, F f) {
  const ScalarType dt = special_dtype(self->dtype());
  Tensor in = contiguous_in(self, dt);
  Tensor res = special_result(out, self->sizes(), dt, self->device());
  dispatch_device_float(dt, op, [&](auto tag) { run_unary<decltype(tag)>(op, res, in, f); });
  return finish_out(op, out, res);
}

template <typename F>
Tensor special_binary(const char* op, const Tensor& self, const Tensor& other, const Tensor& out, F f) {
  const ScalarType dt = special_dtype(self, other);
  const Device device = is_on_cpu(self) ? other->device() : self->device();
  const Shape shape = broadcast_shapes(self->sizes(), other->sizes(), op);
  Tensor a = operand_on(self, dt, device, shape, op), b = operand_on(other, dt, device, shape, op);
  Tensor res = special_result(out, shape, dt, device);
  dispatch_device_float(dt, op, [&](auto tag) { run_binary<decltype(tag)>(op, res, a, b, f); });
  return finish_out(op, out, res);
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;
namespace sf = special_fn;

#define EMBER_SPECIAL_UNARY(NAME, EXPR, FLOAT_EXPR)                                                   \
  Tensor NAME(const Tensor& self, const Tensor& out) {                                      \
    return special_unary(#NAME, self, out, [] __device__(double x) { return EXPR; });       \
  }
EMBER_SPECIAL_UNARY_OPS(EMBER_SPECIAL_UNARY)
#undef EMBER_SPECIAL_UNARY

Tensor polygamma(int64_t n, const Tensor& self, const Tensor& out) {
  check_polygamma_order(n);
  return special_unary("polygamma", self, out, [n] __device__(double x) { return sf::polygamma(n, x); });
}

Tensor igamma(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary("igamma", self, other, out,
                        [] __device__(double a, double x) { return sf::igamma(a, x, false); });
}

Tensor igammac(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary("igammac", self, other, out,
                        [] __device__(double a, double x) { return sf::igamma(a, x, true); });
}

Tensor special_zeta(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary("special_zeta", self, other, out,
                        [] __device__(double s, double q) { return sf::zeta(s, q); });
}

}  // namespace ember::cuda

#define EMBER_SPECIAL_REGISTER(NAME, EXPR, FLOAT_EXPR) EMBER_REGISTER_CUDA_KERNEL(NAME);
EMBER_SPECIAL_UNARY_OPS(EMBER_SPECIAL_REGISTER)
#undef EMBER_SPECIAL_REGISTER
EMBER_REGISTER_CUDA_KERNEL(polygamma);
EMBER_REGISTER_CUDA_KERNEL(igamma);
EMBER_REGISTER_CUDA_KERNEL(igammac);
EMBER_REGISTER_CUDA_KERNEL(special_zeta);
