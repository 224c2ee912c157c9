#include "ember/core/dtype.h"

#include <atomic>

#include "ember/core/errors.h"

namespace ember {

size_t itemsize(ScalarType t) {
  static const size_t sizes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  int i = static_cast<int>(t);
  return (i >= 0 && i < kNumScalarTypes) ? sizes[i] : 0;
}

const char* dtype_name(ScalarType t) {
  static const char* names[] = {"bool",    "uint8",    "int8",    "int16",   "int32",
                                "int64",   "float16",  "bfloat16", "float32", "float64"};
  int i = static_cast<int>(t);
  return (i >= 0 && i < kNumScalarTypes) ? names[i] : "undefined";
}

const char* scalar_type_name(ScalarType t) {
  static const char* names[] = {"Bool", "Byte", "Char", "Short", "Int", "Long",
                                "Half", "BFloat16", "Float", "Double"};
  int i = static_cast<int>(t);
  return (i >= 0 && i < kNumScalarTypes) ? names[i] : "Undefined";
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::Undefined) return b;
  if (b == ScalarType::Undefined) return a;
  if (a == ScalarType::Bool) return b;
  if (b == ScalarType::Bool) return a;
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

bool can_cast(ScalarType from, ScalarType to) {
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
