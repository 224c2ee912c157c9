// CPU kernels of the arithmetic binary ops (add, sub, mul, div, floor_divide, remainder, pow,
// fmod) and threshold_backward.
#include "ember/ops/elementwise/binary_cpu.h"

#include <optional>

#include "ember/ops/elementwise/complex_functions.h"
#include "ember/ops/index/indexing.h"  // scalar_of
#include "ember/ops/elementwise/unary_functions.h"  // wrapping_neg

namespace ember::cpu {

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {
  auto P = promote(self, other);
  check_alpha("add", P.dtype, alpha);
  const bool unit = alpha.to_double() == 1.0 && alpha.im == 0.0;
  return map_binary("add", P.a, P.b, out, P.dtype, DispatchAny{}, [&](auto tag) {
    using A = opmath_t<decltype(tag)>;
    const A al = alpha.to<A>();
    return [al, unit](A x, A y) -> A {
      if constexpr (std::is_same_v<A, bool>) return x || (y && al);
      else return unary_fn::wrapping_add(x, unit ? y : unary_fn::wrapping_mul(al, y));
    };
  });
}

Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {
  auto P = promote(self, other);
  check_sub_operands(self, other);
  check_alpha("sub", P.dtype, alpha);
  const bool unit = alpha.to_double() == 1.0 && alpha.im == 0.0;
  return map_binary("sub", P.a, P.b, out, P.dtype, WithUnsigned<WithComplex<DispatchNumeric>>{}, [&](auto tag) {
    using A = opmath_t<decltype(tag)>;
    const A al = alpha.to<A>();
    // alpha 1 subtracts the parts directly: (1 + 0i) * (inf + i) would make a NaN part
    return [al, unit](A x, A y) -> A {
      return unary_fn::wrapping_sub(x, unit ? y : unary_fn::wrapping_mul(al, y));
    };
  });
}

namespace {

// A Python number operand of a float16 / bfloat16 mul or div: PyTorch's CPU kernels read it at
// float precision (opmath) instead of rounding it to the 16-bit type first, so that 0 * 70000
// is 0 in float16 (not 0 * inf) and x // 1e-40 is not x // 0.
struct ReducedFloatNumber {
  Tensor tensor;       // the other operand, in the result dtype
  float value;         // the number
  bool number_first;   // number op tensor (else tensor op number)
};
std::optional<ReducedFloatNumber> reduced_float_number(const Tensor& self, const Tensor& other) {
  const ScalarType t = result_type(self, other);
  if ((t != ScalarType::Float16 && t != ScalarType::BFloat16) || self->wrapped_number == other->wrapped_number) {
    return std::nullopt;
  }
  const Tensor& number = self->wrapped_number ? self : other;
  const Tensor& tensor = self->wrapped_number ? other : self;
  const double v = to_dtype(number, ScalarType::Float64)->data<double>()[0];
  return ReducedFloatNumber{to_dtype(tensor, t), static_cast<float>(v), static_cast<bool>(self->wrapped_number)};
}

// map_binary's result when one operand is such a number: f(x, number) or f(number, x) over the
// tensor operand, computed in float.
template <typename MakeF>
Tensor map_with_number(const char* op, const ReducedFloatNumber& n, const Tensor& out, MakeF make_f) {
  const ScalarType t = n.tensor->dtype();
  return map_unary(op, n.tensor, out, t, DispatchFloat{}, [&](auto tag) {
    using A = opmath_t<decltype(tag)>;
    auto f = make_f(tag);
    const A v = static_cast<A>(n.value);
    return [f, v, first = n.number_first](A x) -> A { return first ? f(v, x) : f(x, v); };
  });
}

}  // namespace

Tensor mul(const Tensor& self, const Tensor& other, const Tensor& out) {
  auto make_f = [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x, A y) -> A {
      if constexpr (std::is_same_v<A, bool>) return x && y;
      else return unary_fn::wrapping_mul(x, y);
    };
  };
  if (auto n = reduced_float_number(self, other)) return map_with_number("mul", *n, out, make_f);
  auto P = promote(self, other);
  return map_binary("mul", P.a, P.b, out, P.dtype, DispatchAny{}, make_f);
}

Tensor div(const Tensor& self, const Tensor& other, const std::optional<std::string>& rounding_mode,
           const Tensor& out) {
  if (rounding_mode && *rounding_mode != "trunc" && *rounding_mode != "floor") {
    throw std::invalid_argument(message("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '",
                                    *rounding_mode, "'"));
  }
  ScalarType t = result_type(self, other);
  const auto number = reduced_float_number(self, other);
  if (!rounding_mode) {
    if (!is_floating(t) && !is_complex(t)) t = default_float_dtype();
    auto make_f = [](auto tag) {
      using A = opmath_t<decltype(tag)>;
      return [](A x, A y) -> A { return x / y; };
    };
    if (number) return map_with_number("div", *number, out, make_f);
    Tensor a = to_dtype(self, t), b = to_dtype(other, t);
    return map_binary("div", a, b, out, t, WithComplex<DispatchFloat>{}, make_f);
  }
  const bool floor_mode = *rounding_mode == "floor";
  const char* op = floor_mode ? "floor_divide" : "div";
  division_meta(op, self, other);
  auto make_f = [floor_mode](auto tag) {
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
        if constexpr (std::is_signed_v<A>) {
          if (y == -1) return unary_fn::wrapping_neg(x);  // INT_MIN / -1 wraps instead of trapping
        }
        A q = static_cast<A>(x / y);
        if (floor_mode && (x % y != 0) && ((x < 0) != (y < 0))) q -= 1;
        return q;
      }
    };
  };
  if (number) return map_with_number(op, *number, out, make_f);
  Tensor a = to_dtype(self, t), b = to_dtype(other, t);
  return map_binary(op, a, b, out, t, WithUnsigned<DispatchNumeric>{}, make_f);
}

Tensor floor_divide(const Tensor& self, const Tensor& other, const Tensor& out) {
  return div(self, other, std::string("floor"), out);
}

Tensor remainder(const Tensor& self, const Tensor& other, const Tensor& out) {
  division_meta("remainder", self, other);
  auto P = promote(self, other);
  return map_binary("remainder", P.a, P.b, out, P.dtype, WithUnsigned<DispatchNumeric>{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x, A y) -> A {
      if constexpr (std::is_floating_point_v<A>) {
        A r = std::fmod(x, y);
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        return r;
      } else {
        if constexpr (std::is_signed_v<A>) {
          if (y == -1) return 0;
        }
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
  if (a->dim() == 0 && is_floating(M.dtype) && scalar_of(a).to<double>() == 2.0) {
    return exp2(b, out);  // 2 ** t (programs' 2 ** x): exp2's vectorised kernel
  }
  return map_binary("pow", a, b, out, M.dtype, WithUnsigned<WithComplex<DispatchNumeric>>{}, [](auto tag) {
    using A = opmath_t<decltype(tag)>;
    return [](A x, A y) -> A {
      if constexpr (is_complex_v<A>) {
        if (y == A(2)) return x * x;
        return complex_fn::Pow{}(x, y);
      } else if constexpr (std::is_floating_point_v<A>) {
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




// PyTorch's rule: self <= threshold gives 0, anything else (NaN included) passes the gradient.
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  auto P = promote(grad_output, self);
  // PyTorch's overflow check in the compute type (uint8 and -2.0: RuntimeError; float16 in float32)
  const bool half = P.dtype == ScalarType::Float16 || P.dtype == ScalarType::BFloat16;
  check_fill_value(half ? ScalarType::Float32 : P.dtype, threshold);
  return map_binary("threshold_backward", P.a, P.b, Tensor(), P.dtype, DispatchNumeric{}, [&](auto tag) {
    using A = opmath_t<decltype(tag)>;
    const A th = threshold.to<A>();
    return [th](A g, A x) -> A { return x <= th ? A(0) : g; };
  });
}

}  // namespace ember::cpu

namespace ember::ops {
Tensor pow_scalar(const Scalar& self, const Tensor& exponent, const Tensor& out) {
  return pow(wrapped_scalar(self), exponent, out);
}
Tensor where_method(const Tensor& self, const Tensor& condition, const Tensor& other) {
  return where(condition, self, other, Tensor());
}
Tensor true_divide(const Tensor& self, const Tensor& other, const Tensor& out) {
  return div(self, other, std::nullopt, out);
}
}  // namespace ember::ops
