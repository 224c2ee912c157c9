// CPU kernels of maximum / minimum, the comparisons, and the logical and bitwise binary ops.
#include "ember/ops/elementwise/binary_cpu.h"

namespace ember::cpu {

#define EMBER_MINMAX(NAME, CMP)                                                               \
  Tensor NAME(const Tensor& self, const Tensor& other, const Tensor& out) {                  \
    auto P = binary_operands(#NAME, self, other, false);                                      \
    return map_binary(#NAME, P.a, P.b, out, P.dtype, DispatchAll{}, [](auto tag) {           \
      using A = opmath_t<decltype(tag)>;                                                      \
      return [](A x, A y) -> A {                                                              \
        if constexpr (std::is_floating_point_v<A>) {                                          \
          if (std::isnan(x) || std::isnan(y)) return x + y;                                   \
        }                                                                                     \
        return (x CMP y) ? x : y;                                                             \
      };                                                                                      \
    });                                                                                       \
  }
EMBER_MINMAX(maximum, >)
EMBER_MINMAX(minimum, <)
#undef EMBER_MINMAX

Tensor max_other(const Tensor& self, const Tensor& other) { return maximum(self, other, Tensor()); }

Tensor min_other(const Tensor& self, const Tensor& other) { return minimum(self, other, Tensor()); }

#define EMBER_COMPARE(NAME, OP)                                                               \
  Tensor NAME(const Tensor& self, const Tensor& other, const Tensor& out) {                  \
    auto P = binary_operands(#NAME, self, other, true);                                       \
    return map_binary(#NAME, P.a, P.b, out, P.result_dtype, DispatchAll{}, [](auto tag) {    \
      using A = opmath_t<decltype(tag)>;                                                      \
      return [](A x, A y) -> bool { return x OP y; };                                         \
    });                                                                                       \
  }
EMBER_COMPARE(eq, ==)
EMBER_COMPARE(ne, !=)
EMBER_COMPARE(lt, <)
EMBER_COMPARE(le, <=)
EMBER_COMPARE(gt, >)
EMBER_COMPARE(ge, >=)
#undef EMBER_COMPARE

#define EMBER_LOGICAL(NAME, EXPR)                                                             \
  Tensor NAME(const Tensor& self, const Tensor& other, const Tensor& out) {                  \
    auto P = binary_operands(#NAME, self, other, true);                                       \
    return map_binary(#NAME, P.a, P.b, out, P.result_dtype, DispatchAll{}, [](auto tag) {    \
      using A = opmath_t<decltype(tag)>;                                                      \
      return [](A x, A y) -> bool {                                                           \
        const bool a = x != A(0), b = y != A(0);                                              \
        return EXPR;                                                                          \
      };                                                                                      \
    });                                                                                       \
  }
EMBER_LOGICAL(logical_and, a && b)
EMBER_LOGICAL(logical_or, a || b)
EMBER_LOGICAL(logical_xor, a != b)
#undef EMBER_LOGICAL

#define EMBER_BITWISE(NAME, OP)                                                               \
  Tensor NAME(const Tensor& self, const Tensor& other, const Tensor& out) {                  \
    auto P = promote(self, other);                                                            \
    return map_binary(#NAME, P.a, P.b, out, P.dtype, DispatchIntegral{}, [](auto tag) {      \
      using A = opmath_t<decltype(tag)>;                                                      \
      return [](A x, A y) -> A { return static_cast<A>(x OP y); };                            \
    });                                                                                       \
  }
EMBER_BITWISE(bitwise_and, &)
EMBER_BITWISE(bitwise_or, |)
EMBER_BITWISE(bitwise_xor, ^)
#undef EMBER_BITWISE

}  // namespace ember::cpu
