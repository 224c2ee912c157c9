#include "ember/core/dtype.h"

#include <algorithm>
#include <atomic>

#include "ember/core/errors.h"

namespace ember {

size_t itemsize(ScalarType t) {
  static const size_t sizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16, 2, 4, 8};
  int i = static_cast<int>(t);
  return (i >= 0 && i < kNumScalarTypes) ? sizes[i] : 0;
}

const char* dtype_name(ScalarType t) {
  static const char* names[] = {"bool",    "uint8",     "int8",       "int16",  "int32",
                                "int64",   "float16",   "bfloat16",   "float32", "float64",
                                "complex64", "complex128", "uint16",   "uint32", "uint64"};
  int i = static_cast<int>(t);
  return (i >= 0 && i < kNumScalarTypes) ? names[i] : "undefined";
}

const char* scalar_type_name(ScalarType t) {
  static const char* names[] = {"Bool", "Byte", "Char", "Short", "Int", "Long",
                                "Half", "BFloat16", "Float", "Double", "ComplexFloat", "ComplexDouble",
                                "UInt16", "UInt32", "UInt64"};
  int i = static_cast<int>(t);
  return (i >= 0 && i < kNumScalarTypes) ? names[i] : "Undefined";
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::Undefined) return b;
  if (b == ScalarType::Undefined) return a;
  if (is_wide_unsigned(a) || is_wide_unsigned(b)) {
    // PyTorch: with a floating type they promote like any integer. Where PyTorch has no rule
    // (it raises), Ember takes the array API standard's (NumPy's): with bool, uint8 or another
    // unsigned type the wider unsigned one; uint16 / uint32 with a signed integer the smallest
    // signed type that holds both. uint64 with a signed integer, and any with complex, stay
    // PyTorch's error (the standard has no rule either).
    const ScalarType other = is_wide_unsigned(a) ? b : a;
    const ScalarType wide = is_wide_unsigned(a) ? a : b;
    if (is_floating(other)) return other;
    if (other == ScalarType::Bool || other == ScalarType::UInt8) return wide;
    if (is_wide_unsigned(other)) return itemsize(a) >= itemsize(b) ? a : b;
    if (!is_complex(other) && wide != ScalarType::UInt64) {
      return std::max(itemsize(other), 2 * itemsize(wide)) <= 4 ? ScalarType::Int32 : ScalarType::Int64;
    }
    throw std::runtime_error(message("Promotion for uint16, uint32, uint64 types is not supported, attempted to "
                                     "promote ", scalar_type_name(a), " and ", scalar_type_name(b)));
  }
  if (a == ScalarType::Bool) return b;
  if (b == ScalarType::Bool) return a;
  if (is_complex(a) || is_complex(b)) {
    // the complex type whose parts hold both: complex64 with float64 gives complex128
    const ScalarType ra = to_real(a), rb = to_real(b);
    const bool wide = ra == ScalarType::Float64 || rb == ScalarType::Float64;
    return wide ? ScalarType::ComplexDouble : ScalarType::ComplexFloat;
  }
  const bool fa = is_floating(a), fb = is_floating(b);
  if (fa && !fb) return a;
  if (fb && !fa) return b;
  if (fa && fb) {
    // float16 with bfloat16 has no common 16-bit type
    if ((a == ScalarType::Float16 && b == ScalarType::BFloat16) ||
        (a == ScalarType::BFloat16 && b == ScalarType::Float16)) {
      return ScalarType::Float32;
    }
    return itemsize(a) >= itemsize(b) ? a : b;
  }
  // both integers
  if (a == ScalarType::UInt8 || b == ScalarType::UInt8) {
    ScalarType s = a == ScalarType::UInt8 ? b : a;
    return s == ScalarType::Int8 ? ScalarType::Int16 : s;
  }
  return itemsize(a) >= itemsize(b) ? a : b;
}

ScalarType to_real(ScalarType t) {
  if (t == ScalarType::ComplexFloat) return ScalarType::Float32;
  if (t == ScalarType::ComplexDouble) return ScalarType::Float64;
  return t;
}

ScalarType to_complex(ScalarType t) {
  if (is_complex(t)) return t;
  if (t == ScalarType::Float64) return ScalarType::ComplexDouble;
  if (is_floating(t)) return ScalarType::ComplexFloat;
  throw std::runtime_error(message("Unknown Complex ScalarType for ", scalar_type_name(t)));
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_complex(from) && !is_complex(to)) return false;
  if (is_floating(from) && is_integral(to, true)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

namespace {
std::atomic<ScalarType> g_default_float{ScalarType::Float32};
}

ScalarType default_float_dtype() { return g_default_float.load(); }

void set_default_float_dtype(ScalarType t) {
  if (!is_floating(t)) {
    throw TypeError(message("set_default_dtype: only floating-point types are supported as the default "
                        "type, got ", dtype_name(t)));
  }
  g_default_float.store(t);
}

void throw_dtype_unsupported(const char* op, ScalarType t, const char* family) {
  // RuntimeError, as PyTorch raises for a kernel missing for a dtype
  throw std::runtime_error(message(op, ": dtype ", dtype_name(t), " is not supported (expected ",
                               family, " dtypes)"));
}

}  // namespace ember
