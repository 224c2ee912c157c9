// CPU kernels of the special functions: the scalar functions of special_functions.h applied
// elementwise, computed in double for every floating dtype (special_meta.h: the dtype rule).
#include "ember/backends/cpu/elementwise.h"
#include "ember/ops/elementwise/special_functions.h"
#include "ember/ops/elementwise/special_meta.h"

namespace ember::cpu {
namespace {

template <typename F> Tensor special_unary(const char* op, const Tensor& self, const Tensor& out, F f) {
  const ScalarType t = special_dtype(self->dtype());
  return map_unary(op, to_dtype(self, t), out, t, DispatchFloat{}, [f](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [f](A x) -> A { return static_cast<A>(f(static_cast<double>(x))); };
  });
}

template <typename F>
Tensor special_binary(const char* op, const Tensor& self, const Tensor& other, const Tensor& out, F f) {
  const ScalarType t = special_dtype(self, other);
  return map_binary(op, to_dtype(self, t), to_dtype(other, t), out, t, DispatchFloat{}, [f](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [f](A x, A y) -> A { return static_cast<A>(f(static_cast<double>(x), static_cast<double>(y))); };
  });
}

}  // namespace

namespace sf = special_fn;

#define EMBER_SPECIAL_UNARY(NAME, EXPR)                                                     \
  Tensor NAME(const Tensor& self, const Tensor& out) {                                      \
    return special_unary(#NAME, self, out, [](double x) { return EXPR; });                  \
  }
EMBER_SPECIAL_UNARY_OPS(EMBER_SPECIAL_UNARY)
#undef EMBER_SPECIAL_UNARY

Tensor polygamma(int64_t n, const Tensor& self, const Tensor& out) {
  check_polygamma_order(n);
  return special_unary("polygamma", self, out, [n](double x) { return sf::polygamma(n, x); });
}

Tensor igamma(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary("igamma", self, other, out, [](double a, double x) { return sf::igamma(a, x, false); });
}

Tensor igammac(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary("igammac", self, other, out, [](double a, double x) { return sf::igamma(a, x, true); });
}

Tensor special_zeta(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary("special_zeta", self, other, out, [](double s, double q) { return sf::zeta(s, q); });
}

}  // namespace ember::cpu
