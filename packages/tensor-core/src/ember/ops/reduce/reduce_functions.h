// The math of every reduction, written once for the CPU engine (reduce_cpu.h) and the CUDA
// engine (backends/cuda/reduce.cuh).
//
// Each reducer's math is a struct of static functions over its accumulator type:
//
//   acc identity()              the value of an empty reduction
//   acc step(acc a, v, ...)     folds one value, already converted to the compute type
//   acc combine(acc a, acc b)   merges two partial results (a covering earlier elements when
//                               the engine keeps the order; the CUDA engine does not, so no
//                               combine below depends on it beyond rounding)
//   result(acc a, ...)          the value stored for a finished reduction
//
// The engines derive their reducers from these and add only what is theirs: how an element
// is loaded and converted, vectorised runs (CPU), and where the result is written. The
// accumulators are plain structs without default member initialisers: CUDA keeps them in
// shared memory and moves them through warp shuffles.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "ember/core/host_device.h"
#include "ember/ops/elementwise/unary_functions.h"
#include "ember/ops/reduce/reduce_meta.h"

namespace ember::reducer {

template <typename A> EMBER_HOST_DEVICE inline bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>) return v != v;
  else return false;
}

// The larger (Max) or smaller of a running result a and b; a NaN on either side sticks. On
// the host a float is selected with bit operations (vec_math.h's pick), the one form GCC
// vectorises in a loop of these (a column of max / min / inf-norms).
template <bool Max, typename A> EMBER_HOST_DEVICE inline A nan_extreme(A a, A b) {
#if !defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<A, float>) return pick((Max ? b > a : b < a) | (b != b), b, a);
#endif
  const A t = (Max ? b > a : b < a) ? b : a;
  return is_nan(b) ? b : t;
}

// The accumulator of sums and products for compute type A: A for floats, int64 for bool and
// the integers.
template <typename A> using sum_acc_t = std::conditional_t<std::is_floating_point_v<A>, A, int64_t>;

// a + b (Prod false) or a * b; integers wrap around, as PyTorch's. Written in the signed
// type and exempted from UBSan's overflow check: GCC 12 miscompiles the unsigned form (what
// C++ defines) in the AVX-512 lane folds of the CPU reductions, where sums and products of
// 16, 24, 32... integers lost whole lanes (test_integer_reductions.py at every SIMD level).
template <bool Prod, typename A> EMBER_HOST_DEVICE EMBER_WRAPS_SIGNED A sum_or_product(A a, A b) {
  if constexpr (Prod) return a * b;
  else return a + b;
}

// sum (Prod false) or product.
template <typename A, bool Prod> struct Sum {
  using acc_t = A;
  EMBER_HOST_DEVICE static A identity() { return A(Prod ? 1 : 0); }
  EMBER_HOST_DEVICE static A combine(A a, A b) { return sum_or_product<Prod>(a, b); }
  EMBER_HOST_DEVICE static A step(A a, A x) { return combine(a, x); }
  // mean: the sum divided by the element count in double (divisor 0: a plain sum)
  EMBER_HOST_DEVICE static double mean(A a, double divisor) { return static_cast<double>(a) / divisor; }
};

// all (All) or any: whether every / some element is nonzero.
template <bool All> struct AllAny {
  using acc_t = bool;
  EMBER_HOST_DEVICE static bool identity() { return All; }
  EMBER_HOST_DEVICE static bool combine(bool a, bool b) { return All ? (a && b) : (a || b); }
  EMBER_HOST_DEVICE static bool step(bool a, bool nonzero) { return combine(a, nonzero); }
};

// var / std: count, mean and sum of squared deviations, in double; elements folded with
// Welford's update, partial results merged with Chan's formula.
struct Moments {
  double n, mean, m2;
};
struct Var {
  using acc_t = Moments;
  EMBER_HOST_DEVICE static Moments identity() { return Moments{0, 0, 0}; }
  EMBER_HOST_DEVICE static Moments step(Moments a, double v) {
    a.n += 1;
    const double d = v - a.mean;
    a.mean += d / a.n;
    a.m2 += d * (v - a.mean);
    return a;
  }
  EMBER_HOST_DEVICE static Moments combine(Moments a, Moments b) {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    Moments c;
    c.n = a.n + b.n;
    const double d = b.mean - a.mean;
    c.mean = a.mean + d * (b.n / c.n);
    c.m2 = a.m2 + b.m2 + d * d * (a.n * b.n / c.n);
    return c;
  }
  // the variance with `dof` degrees of freedom, or its square root
  EMBER_HOST_DEVICE static double result(Moments a, double dof, bool take_sqrt) {
    const double v = a.m2 / dof;
    return take_sqrt ? EMBER_LIBM(sqrt)(v) : v;
  }
};

// The vector norms of reduce_meta.h's NormKind, in compute type A (a float type); p is the
// order of NormKind::General.
template <typename A, NormKind Kind> struct Norm {
  using acc_t = A;
  EMBER_HOST_DEVICE static A identity() {
    if constexpr (Kind == NormKind::NegInf) return std::numeric_limits<A>::infinity();
    else return A(0);
  }
  EMBER_HOST_DEVICE static A combine(A a, A b) {
    if constexpr (Kind == NormKind::Inf) return nan_extreme<true>(a, b);
    else if constexpr (Kind == NormKind::NegInf) return nan_extreme<false>(a, b);
    else return a + b;
  }
  EMBER_HOST_DEVICE static A step(A a, A x, A p) {
    if constexpr (Kind == NormKind::L2) return a + x * x;
    else if constexpr (Kind == NormKind::L0) return a + (x != A(0) ? A(1) : A(0));
    else if constexpr (Kind == NormKind::General) return a + EMBER_LIBM(pow)(EMBER_LIBM(fabs)(x), p);
    else if constexpr (Kind == NormKind::L1) return a + EMBER_LIBM(fabs)(x);
    else return combine(a, EMBER_LIBM(fabs)(x));
  }
  EMBER_HOST_DEVICE static A result(A a, A p) {
    if constexpr (Kind == NormKind::L2) return EMBER_LIBM(sqrt)(a);
    else if constexpr (Kind == NormKind::General) return EMBER_LIBM(pow)(a, A(1) / p);
    else return a;
  }
};

// logsumexp: the max m and the sum s of exp(x - m); a non-finite max is the result by itself
// (s is then 0).
template <typename A> struct LseAcc {
  A m, s;
};
template <typename A> struct LogSumExp {
  using acc_t = LseAcc<A>;
  static constexpr A kNegInf = -std::numeric_limits<A>::infinity();
  EMBER_HOST_DEVICE static LseAcc<A> identity() { return LseAcc<A>{kNegInf, A(0)}; }
  EMBER_HOST_DEVICE static bool finite(A v) { return EMBER_LIBM(isfinite)(v); }
  EMBER_HOST_DEVICE static LseAcc<A> combine(LseAcc<A> a, LseAcc<A> b) {
    const unary_fn::Exp exp;
    const A m = nan_extreme<true>(a.m, b.m);
    if (!finite(m)) return LseAcc<A>{m, A(0)};
    A s = 0;
    if (a.m != kNegInf) s += a.s * exp(a.m - m);
    if (b.m != kNegInf) s += b.s * exp(b.m - m);
    return LseAcc<A>{m, s};
  }
  // combine(a, {x, 1}) with one exp
  EMBER_HOST_DEVICE static LseAcc<A> step(LseAcc<A> a, A x) {
    const unary_fn::Exp exp;
    const A m = nan_extreme<true>(a.m, x);
    if (!finite(m)) return LseAcc<A>{m, A(0)};
    if (x > a.m) return LseAcc<A>{x, (a.m == kNegInf ? A(0) : a.s * exp(a.m - x)) + A(1)};
    return LseAcc<A>{a.m, a.s + exp(x - a.m)};
  }
  EMBER_HOST_DEVICE static A result(LseAcc<A> a) { return finite(a.m) ? EMBER_LIBM(log)(a.s) + a.m : a.m; }
};

// max (Max) / min of the values; a NaN wins.
template <typename A, bool Max> struct Extreme {
  using acc_t = A;
  EMBER_HOST_DEVICE static A identity() {
    if constexpr (std::is_floating_point_v<A>) {
      return Max ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
    } else {
      return Max ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
    }
  }
  EMBER_HOST_DEVICE static A combine(A a, A b) { return nan_extreme<Max>(a, b); }
  EMBER_HOST_DEVICE static A step(A a, A x) { return nan_extreme<Max>(a, x); }
};

// argmax (Max) / argmin, and max / min along a dim: the first index of the extreme value; a
// NaN wins over any number, the first NaN over later ones.
template <typename V> struct ArgAcc {
  V v;
  int64_t i;  // -1: no element yet
};
template <typename V, bool Max> struct Arg {
  using acc_t = ArgAcc<V>;
  EMBER_HOST_DEVICE static ArgAcc<V> identity() { return ArgAcc<V>{V(0), -1}; }
  // merged by index, so the order in which partial results meet does not matter
  EMBER_HOST_DEVICE static ArgAcc<V> combine(ArgAcc<V> a, ArgAcc<V> b) {
    if (b.i < 0) return a;
    if (a.i < 0) return b;
    const bool na = is_nan(a.v), nb = is_nan(b.v);
    bool take;
    if (na || nb) take = nb && (!na || b.i < a.i);
    else if (Max ? b.v > a.v : b.v < a.v) take = true;
    else take = b.v == a.v && b.i < a.i;
    return take ? b : a;
  }
  // whether value v beats the running value w: larger (smaller), or a NaN over a number
  // (written with w == w: GCC does not fold !is_nan(w) into it, and the CPU scan ran ~20%
  // more instructions)
  EMBER_HOST_DEVICE static bool better(V v, V w) {
    if constexpr (std::is_floating_point_v<V>) return (Max ? v > w : v < w) || (v != v && w == w);
    else return Max ? v > w : v < w;
  }
  // folds element v at index i, when i follows every index already in a (a serial scan)
  EMBER_HOST_DEVICE static ArgAcc<V> step_in_order(ArgAcc<V> a, V v, int64_t i) {
    if (a.i < 0 || better(v, a.v)) return ArgAcc<V>{v, i};
    return a;
  }
};

}  // namespace ember::reducer
