// Automatic mixed precision: the thread-local autocast state per device type (PyTorch's
// semantics) and the casts the generated bindings apply to the ops that ops.yaml marks with
// an `autocast` policy.
#pragma once

#include <cstdint>

#include "ember/core/dtype.h"
#include "ember/core/tensor.h"

namespace ember::autocast {

// What an op on an autocast list does with its floating-point tensor arguments (float64 and
// tensors on other device types are never cast, as in PyTorch):
//   Lower   -- cast to the autocast dtype of the device type (float16/bfloat16 matmuls, convs)
//   Fp32    -- cast to float32 (ops that lose accuracy in low precision)
//   Promote -- cast to the widest floating dtype among the arguments (ops that need one dtype)
enum class Policy : int8_t { None = 0, Lower, Fp32, Promote };

// Whether autocast is on for any device type on this thread (the bindings' fast path).
bool any_enabled();
bool is_enabled(DeviceType d);
void set_enabled(DeviceType d, bool on);
// The lower-precision dtype of a device type: float16 for CUDA, bfloat16 for the CPU by default.
ScalarType get_dtype(DeviceType d);
void set_dtype(DeviceType d, ScalarType t);
// Nesting depth of autocast regions on this thread (the cast cache is emptied on leaving the
// outermost one).
int64_t increment_nesting();
int64_t decrement_nesting();
bool cache_enabled();
void set_cache_enabled(bool on);
void clear_cache();

// A cached float32 -> lower-precision cast of a leaf that requires grad (a weight reused by
// many ops in one region); null when none. put() stores one.
Tensor cached(const Tensor& src, ScalarType to);
void put_cached(const Tensor& src, ScalarType to, const Tensor& result);

// Whether autocast may cast t for an op running under device type d.
inline bool eligible(const Tensor& t, DeviceType d) {
  if (!t || t->wrapped_number || t->device().type != d) return false;
  const ScalarType s = t->dtype();
  return s == ScalarType::Float16 || s == ScalarType::BFloat16 || s == ScalarType::Float32;
}

}  // namespace ember::autocast
