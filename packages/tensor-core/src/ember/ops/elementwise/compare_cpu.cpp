// CPU kernels of maximum / minimum, the comparisons, and the logical and bitwise binary ops.
#include "ember/ops/elementwise/binary_cpu.h"

namespace ember::cpu {

#define EMBER_MINMAX(NAME, CMP)                                                               \
  Tensor NAME(const Tensor& self, const Tensor& other, const Tensor& out) {                  \
    auto P = binary_operands(#NAME, self, other, false);                                      \
    return map_binary(#NAME, P.a, P.b, out, P.dtype, WithUnsigned<DispatchAll>{}, [](auto tag) { \
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

// Six comparisons from three kernels, each instantiated for every dtype (the build's slowest
// file had one per op): gt and ge are lt and le with the operands exchanged after the checks
// (so messages keep the caller's order), and ne is eq with its result inverted. Both are
// exact, NaN included: NaN != x is !(NaN == x) == true.
namespace {

enum class Order { Less, LessEqual };

Tensor order_kernel(const char* op, const Tensor& self, const Tensor& other, const Tensor& out, Order order,
                    bool swapped) {
  auto P = binary_operands(op, self, other, true);
  const Tensor& a = swapped ? P.b : P.a;
  const Tensor& b = swapped ? P.a : P.b;
  if (order == Order::Less) {
    return map_binary(op, a, b, out, P.result_dtype, WithUnsigned<DispatchAll>{}, [](auto tag) {
      using A = opmath_t<decltype(tag)>;
      return [](A x, A y) -> bool { return x < y; };
    });
  }
  return map_binary(op, a, b, out, P.result_dtype, WithUnsigned<DispatchAll>{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x, A y) -> bool { return x <= y; };
  });
}

Tensor equality_kernel(const char* op, const Tensor& self, const Tensor& other, const Tensor& out, bool inverted) {
  auto P = binary_operands(op, self, other, true);
  return map_binary(op, P.a, P.b, out, P.result_dtype, DispatchAny{}, [inverted](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [inverted](A x, A y) -> bool { return (x == y) != inverted; };
  });
}

}  // namespace

Tensor eq(const Tensor& self, const Tensor& other, const Tensor& out) { return equality_kernel("eq", self, other, out, false); }
Tensor ne(const Tensor& self, const Tensor& other, const Tensor& out) { return equality_kernel("ne", self, other, out, true); }
Tensor lt(const Tensor& self, const Tensor& other, const Tensor& out) { return order_kernel("lt", self, other, out, Order::Less, false); }
Tensor le(const Tensor& self, const Tensor& other, const Tensor& out) { return order_kernel("le", self, other, out, Order::LessEqual, false); }
Tensor gt(const Tensor& self, const Tensor& other, const Tensor& out) { return order_kernel("gt", self, other, out, Order::Less, true); }
Tensor ge(const Tensor& self, const Tensor& other, const Tensor& out) { return order_kernel("ge", self, other, out, Order::LessEqual, true); }

// The three logical and the three bitwise ops are one kernel each, branch-free over masks
// chosen per op: r = (x & y & both) | ((x ^ y) & either), where and = both, xor = either and
// or = both | either (x | y == (x & y) | (x ^ y)).
namespace {

struct BitMasks {
  bool both, either;
};
constexpr BitMasks kAnd{true, false}, kOr{true, true}, kXor{false, true};

Tensor logical_kernel(const char* op, const Tensor& self, const Tensor& other, const Tensor& out, BitMasks m) {
  auto P = binary_operands(op, self, other, true);
  return map_binary(op, P.a, P.b, out, P.result_dtype, WithComplex<DispatchAll>{}, [m](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [m](A x, A y) -> bool {
      const bool a = x != A(0), b = y != A(0);
      return ((a & b) & m.both) | ((a ^ b) & m.either);
    };
  });
}

Tensor bitwise_kernel(const char* op, const Tensor& self, const Tensor& other, const Tensor& out, BitMasks m) {
  auto P = promote(self, other);
  return map_binary(op, P.a, P.b, out, P.dtype, WithUnsigned<DispatchIntegral>{}, [m](auto tag) {
    using A = opmath_t<decltype(tag)>;
    const A both = m.both ? static_cast<A>(-1) : A(0), either = m.either ? static_cast<A>(-1) : A(0);  // all bits
    return [both, either](A x, A y) -> A { return static_cast<A>((x & y & both) | ((x ^ y) & either)); };
  });
}

}  // namespace

Tensor logical_and(const Tensor& self, const Tensor& other, const Tensor& out) { return logical_kernel("logical_and", self, other, out, kAnd); }
Tensor logical_or(const Tensor& self, const Tensor& other, const Tensor& out) { return logical_kernel("logical_or", self, other, out, kOr); }
Tensor logical_xor(const Tensor& self, const Tensor& other, const Tensor& out) { return logical_kernel("logical_xor", self, other, out, kXor); }
Tensor bitwise_and(const Tensor& self, const Tensor& other, const Tensor& out) { return bitwise_kernel("bitwise_and", self, other, out, kAnd); }
Tensor bitwise_or(const Tensor& self, const Tensor& other, const Tensor& out) { return bitwise_kernel("bitwise_or", self, other, out, kOr); }
Tensor bitwise_xor(const Tensor& self, const Tensor& other, const Tensor& out) { return bitwise_kernel("bitwise_xor", self, other, out, kXor); }

}  // namespace ember::cpu
