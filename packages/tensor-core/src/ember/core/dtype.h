// Scalar types, their C++ representations, promotion rules and dispatch.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "ember/core/complex.h"

namespace ember {

// Order matters: it indexes the name tables and the Python dtype objects, and the generated
// bindings' dtype masks. The first ten are dispatch_all's; the complex and wide unsigned types
// came later and have their own dispatch families (dispatch_extra), used by the ops that
// support them, so that the kernels of all the other ops are not compiled for them.
enum class ScalarType : int8_t {
  Bool = 0,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  ComplexFloat,   // complex64
  ComplexDouble,  // complex128
  UInt16,
  UInt32,
  UInt64,
  Undefined,
};
constexpr int kNumScalarTypes = 15;

// The bits of a float and back.
inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// IEEE 754 binary16 storage type; arithmetic goes through float.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f) : bits(from_float(f)) {}  // NOLINT(implicit)
  operator float() const { return to_float(bits); }  // NOLINT(implicit)

  static uint16_t from_float(float f) {
    const uint32_t x = float_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) {  // inf or nan
      return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    }
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
    if (abs < 0x38800000u) {  // subnormal or zero in half
      // add 0.5 in the half subnormal scale and let the FPU round to nearest even
      const uint32_t r = float_bits(bits_float(abs) + 0.5f);
      return static_cast<uint16_t>(sign | (r - 0x3f000000u));
    }
    const uint32_t mant_odd = (abs >> 13) & 1u;
    uint32_t r = abs + 0xc8000fffu + mant_odd;  // rebias exponent and round to nearest even
    return static_cast<uint16_t>(sign | (r >> 13));
  }
  // Branch-free, so that loops over float16 vectorise: the exponent and mantissa bits are
  // placed in a float and rescaled by 2^112 (exact: it moves the exponent bias from 15 to 127,
  // and makes subnormals normal); inf and nan get an all-ones exponent and keep their payload.
  // Equal to the IEEE conversion for all 65,536 inputs.
  static float to_float(uint16_t h) {
    const uint32_t em = h & 0x7fffu;
    uint32_t u = float_bits(bits_float(em << 13) * 5.192296858534828e+33f);
    u |= em >= 0x7c00u ? 0x7f800000u : 0u;
    return bits_float(u | static_cast<uint32_t>(h & 0x8000u) << 16);
  }
};

// bfloat16: the upper half of a float32, rounded to nearest even.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) : bits(from_float(f)) {}  // NOLINT(implicit)
  operator float() const { return bits_float(static_cast<uint32_t>(bits) << 16); }  // NOLINT(implicit)
  static uint16_t from_float(float f) {
    const uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
    const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>((x + rounding) >> 16);
  }
};

// The type arithmetic is carried out in: float for the 16-bit floats, the type itself otherwise.
template <typename T> struct OpMath { using type = T; };
template <> struct OpMath<Half> { using type = float; };
template <> struct OpMath<BFloat16> { using type = float; };
using complex64_t = Complex<float>;
using complex128_t = Complex<double>;
template <typename T> using opmath_t = typename OpMath<T>::type;

template <typename T> constexpr bool is_float_v =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <ScalarType S> struct CppType;
template <> struct CppType<ScalarType::Bool> { using type = bool; };
template <> struct CppType<ScalarType::UInt8> { using type = uint8_t; };
template <> struct CppType<ScalarType::Int8> { using type = int8_t; };
template <> struct CppType<ScalarType::Int16> { using type = int16_t; };
template <> struct CppType<ScalarType::Int32> { using type = int32_t; };
template <> struct CppType<ScalarType::Int64> { using type = int64_t; };
template <> struct CppType<ScalarType::Float16> { using type = Half; };
template <> struct CppType<ScalarType::BFloat16> { using type = BFloat16; };
template <> struct CppType<ScalarType::Float32> { using type = float; };
template <> struct CppType<ScalarType::Float64> { using type = double; };
template <> struct CppType<ScalarType::ComplexFloat> { using type = complex64_t; };
template <> struct CppType<ScalarType::ComplexDouble> { using type = complex128_t; };
template <> struct CppType<ScalarType::UInt16> { using type = uint16_t; };
template <> struct CppType<ScalarType::UInt32> { using type = uint32_t; };
template <> struct CppType<ScalarType::UInt64> { using type = uint64_t; };

template <typename T> constexpr ScalarType scalar_type_of();
template <> constexpr ScalarType scalar_type_of<bool>() { return ScalarType::Bool; }
template <> constexpr ScalarType scalar_type_of<uint8_t>() { return ScalarType::UInt8; }
template <> constexpr ScalarType scalar_type_of<int8_t>() { return ScalarType::Int8; }
template <> constexpr ScalarType scalar_type_of<int16_t>() { return ScalarType::Int16; }
template <> constexpr ScalarType scalar_type_of<int32_t>() { return ScalarType::Int32; }
template <> constexpr ScalarType scalar_type_of<int64_t>() { return ScalarType::Int64; }
template <> constexpr ScalarType scalar_type_of<Half>() { return ScalarType::Float16; }
template <> constexpr ScalarType scalar_type_of<BFloat16>() { return ScalarType::BFloat16; }
template <> constexpr ScalarType scalar_type_of<float>() { return ScalarType::Float32; }
template <> constexpr ScalarType scalar_type_of<double>() { return ScalarType::Float64; }
template <> constexpr ScalarType scalar_type_of<complex64_t>() { return ScalarType::ComplexFloat; }
template <> constexpr ScalarType scalar_type_of<complex128_t>() { return ScalarType::ComplexDouble; }
template <> constexpr ScalarType scalar_type_of<uint16_t>() { return ScalarType::UInt16; }
template <> constexpr ScalarType scalar_type_of<uint32_t>() { return ScalarType::UInt32; }
template <> constexpr ScalarType scalar_type_of<uint64_t>() { return ScalarType::UInt64; }

size_t itemsize(ScalarType t);
const char* dtype_name(ScalarType t);  // "float32", "int64", ...
const char* scalar_type_name(ScalarType t);  // PyTorch's C++ names used in its messages: "Float", "Long"
inline bool is_floating(ScalarType t) {
  return t == ScalarType::Float16 || t == ScalarType::BFloat16 || t == ScalarType::Float32 ||
         t == ScalarType::Float64;
}
inline bool is_complex(ScalarType t) { return t == ScalarType::ComplexFloat || t == ScalarType::ComplexDouble; }
// uint16, uint32, uint64: PyTorch's "barebones" unsigned types (few ops, no promotion).
inline bool is_wide_unsigned(ScalarType t) { return t >= ScalarType::UInt16 && t <= ScalarType::UInt64; }
inline bool is_integral(ScalarType t, bool include_bool) {
  return (t >= ScalarType::UInt8 && t <= ScalarType::Int64) || is_wide_unsigned(t) ||
         (include_bool && t == ScalarType::Bool);
}
// The real counterpart of a complex type (complex64 -> float32); other types unchanged.
ScalarType to_real(ScalarType t);
// The complex type of a real floating type (float64 -> complex128, float16 -> complex64, as
// Ember has no complex32); complex types unchanged; anything else raises RuntimeError.
ScalarType to_complex(ScalarType t);
// bool < integer < floating < complex, used by PyTorch's promotion of scalars and 0-d tensors.
inline int category(ScalarType t) {
  return t == ScalarType::Bool ? 0 : (is_floating(t) ? 2 : (is_complex(t) ? 3 : 1));
}

ScalarType promote_types(ScalarType a, ScalarType b);
// Whether a result of type `from` may be written into an output of type `to` (PyTorch's canCast).
bool can_cast(ScalarType from, ScalarType to);

ScalarType default_float_dtype();
void set_default_float_dtype(ScalarType t);

// dispatch_*(dtype, op, f) call f(T{}) with T the C++ type of `dtype`; a dtype outside the
// family raises TypeError naming the op.
[[noreturn]] void throw_dtype_unsupported(const char* op, ScalarType t, const char* family);

#define EMBER_DTYPE_CASE(S) \
  case ScalarType::S:       \
    return f(typename CppType<ScalarType::S>::type{});

// The first ten dtypes: bool, the integers up to int64 and uint8, the floats.
template <typename F> decltype(auto) dispatch_all(ScalarType t, const char* op, F&& f) {
  switch (t) {
    EMBER_DTYPE_CASE(Bool)
    EMBER_DTYPE_CASE(UInt8)
    EMBER_DTYPE_CASE(Int8)
    EMBER_DTYPE_CASE(Int16)
    EMBER_DTYPE_CASE(Int32)
    EMBER_DTYPE_CASE(Int64)
    EMBER_DTYPE_CASE(Float16)
    EMBER_DTYPE_CASE(BFloat16)
    EMBER_DTYPE_CASE(Float32)
    EMBER_DTYPE_CASE(Float64)
    default:
      throw_dtype_unsupported(op, t, "any");
  }
}

// The first ten dtypes and uint16/32/64 (every dtype but complex): the ops on real numbers
// that take the wide unsigned types with their own kernels (sort, all/any, randint).
template <typename F> decltype(auto) dispatch_all_and_unsigned(ScalarType t, const char* op, F&& f) {
  switch (t) {
    EMBER_DTYPE_CASE(UInt16)
    EMBER_DTYPE_CASE(UInt32)
    EMBER_DTYPE_CASE(UInt64)
    default:
      return dispatch_all(t, op, f);
  }
}

// Everything but bool.
template <typename F> decltype(auto) dispatch_numeric(ScalarType t, const char* op, F&& f) {
  switch (t) {
    EMBER_DTYPE_CASE(UInt8)
    EMBER_DTYPE_CASE(Int8)
    EMBER_DTYPE_CASE(Int16)
    EMBER_DTYPE_CASE(Int32)
    EMBER_DTYPE_CASE(Int64)
    EMBER_DTYPE_CASE(Float16)
    EMBER_DTYPE_CASE(BFloat16)
    EMBER_DTYPE_CASE(Float32)
    EMBER_DTYPE_CASE(Float64)
    default:
      throw_dtype_unsupported(op, t, "numeric");
  }
}

// Floating types only.
template <typename F> decltype(auto) dispatch_float(ScalarType t, const char* op, F&& f) {
  switch (t) {
    EMBER_DTYPE_CASE(Float16)
    EMBER_DTYPE_CASE(BFloat16)
    EMBER_DTYPE_CASE(Float32)
    EMBER_DTYPE_CASE(Float64)
    default:
      throw_dtype_unsupported(op, t, "floating point");
  }
}

// Integer types and bool.
template <typename F> decltype(auto) dispatch_integral(ScalarType t, const char* op, F&& f) {
  switch (t) {
    EMBER_DTYPE_CASE(Bool)
    EMBER_DTYPE_CASE(UInt8)
    EMBER_DTYPE_CASE(Int8)
    EMBER_DTYPE_CASE(Int16)
    EMBER_DTYPE_CASE(Int32)
    EMBER_DTYPE_CASE(Int64)
    default:
      throw_dtype_unsupported(op, t, "integral or bool");
  }
}

template <typename F> decltype(auto) dispatch_complex(ScalarType t, const char* op, F&& f) {
  switch (t) {
    EMBER_DTYPE_CASE(ComplexFloat)
    EMBER_DTYPE_CASE(ComplexDouble)
    default:
      throw_dtype_unsupported(op, t, "complex");
  }
}

// The dtypes added after the first ten: complex64/128 and uint16/32/64.
template <typename F> decltype(auto) dispatch_extra(ScalarType t, const char* op, F&& f) {
  switch (t) {
    EMBER_DTYPE_CASE(ComplexFloat)
    EMBER_DTYPE_CASE(ComplexDouble)
    EMBER_DTYPE_CASE(UInt16)
    EMBER_DTYPE_CASE(UInt32)
    EMBER_DTYPE_CASE(UInt64)
    default:
      throw_dtype_unsupported(op, t, "any");
  }
}

// Every dtype: for the ops that only move or convert elements (copies, fills, tensor(), item).
template <typename F> decltype(auto) dispatch_any(ScalarType t, const char* op, F&& f) {
  if (t >= ScalarType::ComplexFloat && t < ScalarType::Undefined) return dispatch_extra(t, op, f);
  return dispatch_all(t, op, f);
}
#undef EMBER_DTYPE_CASE

// double -> float rounded to odd: the nearest float, moved one step toward v when it is
// inexact and has an even last bit. Rounding that float to a 16-bit float then gives the
// rounding of v itself; rounding to nearest twice (double -> float -> half) can land on the
// wrong side of a half-way point.
inline float to_float_round_odd(double v) {
  float f = static_cast<float>(v);
  const double back = static_cast<double>(f);
  if (back != v && v == v && (float_bits(f) & 1u) == 0) {
    f = bits_float(std::fabs(back) < std::fabs(v) ? float_bits(f) + 1u : float_bits(f) - 1u);
  }
  return f;
}

// Value conversion between any two element types (through opmath for 16-bit floats).
template <typename To, typename From> inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_complex_v<To>) {
    using R = real_t<To>;
    if constexpr (is_complex_v<From>) return To(static_cast<R>(v.re), static_cast<R>(v.im));
    else return To(convert<R>(v), R(0));
  } else if constexpr (is_complex_v<From>) {
    // complex -> real keeps the real part (PyTorch warns in Python; bool asks for either part)
    if constexpr (std::is_same_v<To, bool>) return v.re != 0 || v.im != 0;
    else return convert<To>(v.re);
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<opmath_t<From>>(v) != static_cast<opmath_t<From>>(0);
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    if constexpr (std::is_same_v<From, double>) return To(to_float_round_odd(v));
    else return To(static_cast<float>(static_cast<opmath_t<From>>(v)));
  } else if constexpr (std::is_integral_v<To> && is_float_v<From>) {
    // float -> int: truncation; out-of-range values are undefined in C++, so saturate NaN to 0.
    double d = static_cast<double>(static_cast<opmath_t<From>>(v));
    if (std::isnan(d)) return To(0);
    if constexpr (std::is_same_v<To, uint8_t>) {
      // PyTorch wraps modulo 256 through int64 for negative values.
      return static_cast<To>(static_cast<int64_t>(d));
    } else if constexpr (std::is_same_v<To, uint64_t>) {
      if (d >= 9.2233720368547758e18) return d < 1.8446744073709552e19 ? static_cast<To>(d) : ~To(0);
      if (d <= -9.2233720368547758e18) return To(1) << 63;
      return static_cast<To>(static_cast<int64_t>(d));
    } else {
      if (d >= 9.2233720368547758e18) return std::numeric_limits<To>::max();
      if (d <= -9.2233720368547758e18) return std::numeric_limits<To>::min();
      return static_cast<To>(static_cast<int64_t>(d));
    }
  } else {
    return static_cast<To>(static_cast<opmath_t<From>>(v));
  }
}

}  // namespace ember
