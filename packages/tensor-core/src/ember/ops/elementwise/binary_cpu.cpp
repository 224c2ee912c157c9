// Binary elementwise ops: arithmetic, comparisons, logical and bitwise ops, where, clamp.
#include <cmath>
#include <limits>

#include "ember/backends/cpu/elementwise.h"
#include "ember/ops/elementwise/binary_meta.h"

namespace ember::cpu {
namespace {

// The dtype both operands are converted to, and the operands converted.
struct Promoted {
  Tensor a, b;
  ScalarType dtype;
};
Promoted promote(const Tensor& a, const Tensor& b) {
  ScalarType t = result_type(a, b);
  return {to_dtype(a, t), to_dtype(b, t), t};
}

// The operands of the comparisons, logical ops and maximum / minimum converted to
// binary_meta's dtype, and the result's dtype.
struct BinaryOperands {
  Tensor a, b;
  ScalarType dtype, result_dtype;
};
BinaryOperands binary_operands(const char* op, const Tensor& a, const Tensor& b, bool boolean_result) {
  const BinaryMeta M = binary_meta(op, a, b, boolean_result);
  return {to_dtype(a, M.dtype), to_dtype(b, M.dtype), M.dtype, M.result_dtype};
}

}  // namespace

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {
  auto P = promote(self, other);
  if (P.dtype == ScalarType::Bool && alpha.is_float()) {
    throw std::runtime_error("add: for bool tensors alpha must be a bool or an integer");
  }
  if (!is_floating(P.dtype) && alpha.is_float()) {
    throw std::runtime_error(message("add: for integral input tensors (", dtype_name(P.dtype),
                                 "), argument alpha must not be a floating point number"));
  }
  const bool unit = alpha.to_double() == 1.0;
  return map_binary("add", P.a, P.b, out, P.dtype, DispatchAll{}, [&](auto tag) {
    using A = opmath_t<decltype(tag)>;
    const A al = alpha.to<A>();
    return [al, unit](A x, A y) -> A {
      if constexpr (std::is_same_v<A, bool>) return x || (y && al);
      else return unit ? static_cast<A>(x + y) : static_cast<A>(x + al * y);
    };
  });
}

Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {
  auto P = promote(self, other);
  if (self->dtype() == ScalarType::Bool || other->dtype() == ScalarType::Bool) {
    throw std::runtime_error(
        "sub: subtraction, the `-` operator, with two bool tensors is not supported; "
        "use the `^` or `logical_xor()` operator instead");
  }
  if (!is_floating(P.dtype) && alpha.is_float()) {
    throw std::runtime_error(message("sub: for integral input tensors (", dtype_name(P.dtype),
                                 "), argument alpha must not be a floating point number"));
  }
  return map_binary("sub", P.a, P.b, out, P.dtype, DispatchNumeric{}, [&](auto tag) {
    using A = opmath_t<decltype(tag)>;
    const A al = alpha.to<A>();
    return [al](A x, A y) -> A { return static_cast<A>(x - al * y); };
  });
}

Tensor mul(const Tensor& self, const Tensor& other, const Tensor& out) {
  auto P = promote(self, other);
  return map_binary("mul", P.a, P.b, out, P.dtype, DispatchAll{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x, A y) -> A {
      if constexpr (std::is_same_v<A, bool>) return x && y;
      else return static_cast<A>(x * y);
    };
  });
}

Tensor div(const Tensor& self, const Tensor& other, const std::optional<std::string>& rounding_mode,
           const Tensor& out) {
  if (rounding_mode && *rounding_mode != "trunc" && *rounding_mode != "floor") {
    throw std::invalid_argument(message("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '",
                                    *rounding_mode, "'"));
  }
  ScalarType t = result_type(self, other);
  if (!rounding_mode) {
    if (!is_floating(t)) t = default_float_dtype();
    Tensor a = to_dtype(self, t), b = to_dtype(other, t);
    return map_binary("div", a, b, out, t, DispatchFloat{}, [](auto tag) {
      using A = opmath_t<decltype(tag)>;
      return [](A x, A y) -> A { return x / y; };
    });
  }
  const bool floor_mode = *rounding_mode == "floor";
  const char* op = floor_mode ? "floor_divide" : "div";
  division_meta(op, self, other);
  Tensor a = to_dtype(self, t), b = to_dtype(other, t);
  return map_binary(op, a, b, out, t, DispatchNumeric{}, [floor_mode](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [floor_mode](A x, A y) -> A {
      if constexpr (std::is_floating_point_v<A>) {
        if (y == 0) return x / y;  // inf or nan, as in PyTorch
        A q = x / y;
        if (floor_mode) {
          // Python's floor division: compute from fmod so that exact results stay exact
          A m = std::fmod(x, y);
          A d = (x - m) / y;
          if (m != 0 && ((y < 0) != (m < 0))) d -= 1;
          A fd = std::floor(d);
          if (d - fd > A(0.5)) fd += 1;
          return d == 0 ? std::copysign(A(0), q) : fd;
        }
        return std::trunc(q);
      } else {
        if (y == -1) return static_cast<A>(A(0) - x);  // INT_MIN / -1 wraps instead of trapping
        A q = static_cast<A>(x / y);
        if (floor_mode && (x % y != 0) && ((x < 0) != (y < 0))) q -= 1;
        return q;
      }
    };
  });
}

Tensor floor_divide(const Tensor& self, const Tensor& other, const Tensor& out) {
  return div(self, other, std::string("floor"), out);
}

Tensor remainder(const Tensor& self, const Tensor& other, const Tensor& out) {
  division_meta("remainder", self, other);
  auto P = promote(self, other);
  return map_binary("remainder", P.a, P.b, out, P.dtype, DispatchNumeric{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x, A y) -> A {
      if constexpr (std::is_floating_point_v<A>) {
        A r = std::fmod(x, y);
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        return r;
      } else {
        if (y == -1) return 0;
        A r = static_cast<A>(x % y);
        if (r != 0 && ((r < 0) != (y < 0))) r = static_cast<A>(r + y);
        return r;
      }
    };
  });
}

Tensor pow(const Tensor& self, const Tensor& exponent, const Tensor& out) {
  const PowMeta M = pow_meta(self, exponent);
  if (M.result) return finish_out("pow", out, M.result);
  const Tensor a = to_dtype(self, M.dtype), b = to_dtype(exponent, M.dtype);
  return map_binary("pow", a, b, out, M.dtype, DispatchNumeric{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x, A y) -> A {
      if constexpr (std::is_floating_point_v<A>) {
        if (y == A(2)) return x * x;
        return std::pow(x, y);
      } else {
        using U = std::make_unsigned_t<A>;
        if constexpr (std::is_signed_v<A>) {
          if (y < 0) return x == 1 ? A(1) : (x == -1 ? ((y & 1) ? A(-1) : A(1)) : A(0));
        }
        U result = 1, base = static_cast<U>(x);
        auto e = y;
        while (e > 0) {  // wraps like PyTorch's integer pow
          if (e & 1) result = static_cast<U>(result * base);
          base = static_cast<U>(base * base);
          e >>= 1;
        }
        return static_cast<A>(result);
      }
    };
  });
}


Tensor fmod(const Tensor& self, const Tensor& other, const Tensor& out) {
  division_meta("fmod", self, other);
  auto P = promote(self, other);
  return map_binary("fmod", P.a, P.b, out, P.dtype, DispatchNumeric{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x, A y) -> A {
      if constexpr (std::is_floating_point_v<A>) return std::fmod(x, y);
      else return y == -1 ? A(0) : static_cast<A>(x % y);
    };
  });
}



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

// PyTorch's rule: self <= threshold gives 0, anything else (NaN included) passes the gradient.
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  auto P = promote(grad_output, self);
  return map_binary("threshold_backward", P.a, P.b, Tensor(), P.dtype, DispatchNumeric{}, [&](auto tag) {
    using A = opmath_t<decltype(tag)>;
    const A th = threshold.to<A>();
    return [th](A g, A x) -> A { return x <= th ? A(0) : g; };
  });
}
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

Tensor where(const Tensor& condition, const Tensor& input, const Tensor& other, const Tensor& out) {
  const WhereMeta M = where_meta(condition, input, other);
  const Shape& shape = M.shape;
  Tensor res = elementwise_out(out, shape, M.dtype);
  if (res->numel() > 0) {
    Tensor c = to_dtype(expand_to(condition, shape, "where"), ScalarType::Bool);
    Tensor a = expand_to(to_dtype(input, M.dtype), shape, "where");
    Tensor b = expand_to(to_dtype(other, M.dtype), shape, "where");
    auto L = make_loop<4>(shape, {res.get(), c.get(), a.get(), b.get()});
    dispatch_all(M.dtype, "where", [&](auto tag) {
      using T = decltype(tag);
      for_each_strided<4>(L, [](char** p, const int64_t* s, int64_t n) {
        T* o = reinterpret_cast<T*>(p[0]);
        const bool* c = reinterpret_cast<const bool*>(p[1]);
        const T* a = reinterpret_cast<const T*>(p[2]);
        const T* b = reinterpret_cast<const T*>(p[3]);
        constexpr int64_t st = sizeof(T);
        // contiguous output and condition, each value contiguous or one broadcast number:
        // both values are read and selected without a branch, so the loop vectorises
        if (s[0] == st && s[1] == 1 && (s[2] == st || s[2] == 0) && (s[3] == st || s[3] == 0)) {
          if (s[2] == st && s[3] == st) {
            simd_dispatch([&] { for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? a[i] : b[i]; });
          } else if (s[2] == st) {
            const T bv = b[0];
            simd_dispatch([&] { for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? a[i] : bv; });
          } else if (s[3] == st) {
            const T av = a[0];
            simd_dispatch([&] { for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? av : b[i]; });
          } else {
            const T av = a[0], bv = b[0];
            simd_dispatch([&] { for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? av : bv; });
          }
          return;
        }
        for (int64_t i = 0; i < n; ++i) {
          const bool cv = *reinterpret_cast<const bool*>(p[1] + i * s[1]);
          *reinterpret_cast<T*>(p[0] + i * s[0]) =
              *reinterpret_cast<const T*>(p[cv ? 2 : 3] + i * s[cv ? 2 : 3]);
        }
      });
    });
  }
  return finish_out("where", out, res);
}

namespace {

// The common clamp, x.clamp(lo, hi) with single-element bounds (not NaN) of x's dtype on a
// contiguous x into a contiguous result of its shape: a branch-free loop the compiler
// vectorises, in parallel. false: not that case (nothing written).
bool clamp_by_scalars(const Tensor& x, const Tensor& lo, const Tensor& hi, const Tensor& res) {
  const auto single = [](const Tensor& b) { return !b || b->numel() == 1; };
  if (!single(lo) || !single(hi) || !x->is_contiguous() || !res->is_contiguous() || x->sizes() != res->sizes() ||
      x->dtype() != res->dtype()) {
    return false;
  }
  bool done = false;
  dispatch_numeric(x->dtype(), "clamp", [&](auto tag) {
    using T = decltype(tag);
    using A = opmath_t<T>;
    using Limits = std::numeric_limits<A>;
    // a missing bound is one nothing is beyond
    const A l = lo ? static_cast<A>(*as_contiguous(lo)->template data<T>())
                   : (Limits::has_infinity ? -Limits::infinity() : Limits::lowest());
    const A h = hi ? static_cast<A>(*as_contiguous(hi)->template data<T>())
                   : (Limits::has_infinity ? Limits::infinity() : Limits::max());
    if constexpr (std::is_floating_point_v<A>) {
      if (std::isnan(l) || std::isnan(h)) return;  // a NaN bound: the general loop
    }
    const T* src = x->template data<T>();
    T* dst = res->template data<T>();
    parallel_for(0, x->numel(), kParallelGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        A v = static_cast<A>(src[i]);  // NaN compares false: it stays NaN
        v = v < l ? l : v;
        v = v > h ? h : v;
        dst[i] = static_cast<T>(v);
      }
    });
    done = true;
  });
  return done;
}

}  // namespace

Tensor clamp(const Tensor& self, const Tensor& min, const Tensor& max, const Tensor& out) {
  const ClampMeta M = clamp_meta(self, min, max, out);
  const ScalarType t = M.dtype;
  const Shape& shape = M.shape;
  Tensor x = to_dtype(self, t);
  Tensor lo = min ? to_dtype(min, t) : Tensor(), hi = max ? to_dtype(max, t) : Tensor();
  Tensor res = elementwise_out(out, shape, t);
  if (clamp_by_scalars(x, lo, hi, res)) return finish_out("clamp", out, res);
  if (res->numel() > 0) {
    // a missing bound is passed as the tensor itself and ignored by the loop
    const bool has_lo = static_cast<bool>(lo), has_hi = static_cast<bool>(hi);
    Tensor ex = expand_to(x, shape, "clamp");
    Tensor el = lo ? expand_to(lo, shape, "clamp") : ex, eh = hi ? expand_to(hi, shape, "clamp") : ex;
    auto L = make_loop<4>(shape, {res.get(), ex.get(), el.get(), eh.get()});
    dispatch_numeric(t, "clamp", [&](auto tag) {
      using T = decltype(tag);
      using A = opmath_t<T>;
      for_each_strided<4>(L, [has_lo, has_hi](char** p, const int64_t* s, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          A v = static_cast<A>(*reinterpret_cast<const T*>(p[1] + i * s[1]));
          A l = static_cast<A>(*reinterpret_cast<const T*>(p[2] + i * s[2]));
          A h = static_cast<A>(*reinterpret_cast<const T*>(p[3] + i * s[3]));
          A r = v;
          if constexpr (std::is_floating_point_v<A>) {
            if (has_lo && std::isnan(l)) r = l;
            else if (has_hi && std::isnan(h)) r = h;
            else if (!std::isnan(v)) {
              if (has_lo && r < l) r = l;
              if (has_hi && r > h) r = h;
            }
          } else {
            if (has_lo && r < l) r = l;
            if (has_hi && r > h) r = h;
          }
          *reinterpret_cast<T*>(p[0] + i * s[0]) = static_cast<T>(r);
        }
      });
    });
  }
  return finish_out("clamp", out, res);
}

}  // namespace ember::cpu

namespace ember::ops {
Tensor pow_scalar(const Scalar& self, const Tensor& exponent) {
  return pow(wrapped_scalar(self), exponent, Tensor());
}
Tensor where_method(const Tensor& self, const Tensor& condition, const Tensor& other) {
  return where(condition, self, other, Tensor());
}
Tensor true_divide(const Tensor& self, const Tensor& other, const Tensor& out) {
  return div(self, other, std::nullopt, out);
}
}  // namespace ember::ops
