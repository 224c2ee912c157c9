// The creation ops written once for every device: the dtype conversions (float(), long(), ...)
// and the *_like factories.
#include "ember/ops/ops_util.h"

namespace ember::ops {

// The dtype conversions (float(), long(), ...) are composites: a copy into the new dtype on
// the tensor's own device, or the tensor itself when it has that dtype already.
#define EMBER_CONVERT(NAME, TYPE)                                            \
  Tensor NAME(const Tensor& self) {                                          \
    if (self->dtype() == ScalarType::TYPE) return self;                      \
    Tensor out = ember::empty(self->sizes(), ScalarType::TYPE, self->device()); \
    return copy(out, self, false, out);                                      \
  }
EMBER_CONVERT(to_float32, Float32)
EMBER_CONVERT(to_float64, Float64)
EMBER_CONVERT(to_float16, Float16)
EMBER_CONVERT(to_bfloat16, BFloat16)
EMBER_CONVERT(to_int32, Int32)
EMBER_CONVERT(to_int64, Int64)
EMBER_CONVERT(to_int16, Int16)
EMBER_CONVERT(to_int8, Int8)
EMBER_CONVERT(to_uint8, UInt8)
EMBER_CONVERT(to_bool, Bool)
#undef EMBER_CONVERT

}  // namespace ember::ops

namespace ember::ops {

// The *_like creation ops are generic: the device-dispatched op with the shape (and, by
// default, the dtype and device) of self.
Tensor zeros_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
                  bool requires_grad) {
  return zeros(self->sizes(), dtype.value_or(self->dtype()), device ? device : self->device(),
               requires_grad, Tensor());
}

Tensor ones_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
                 bool requires_grad) {
  return ones(self->sizes(), dtype.value_or(self->dtype()), device ? device : self->device(),
              requires_grad, Tensor());
}

Tensor empty_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
                  bool requires_grad) {
  return empty(self->sizes(), dtype.value_or(self->dtype()), device ? device : self->device(),
               requires_grad, Tensor());
}

Tensor full_like(const Tensor& self, const Scalar& fill_value, std::optional<ScalarType> dtype,
                 std::optional<Device> device, bool requires_grad) {
  return full(self->sizes(), fill_value, dtype.value_or(self->dtype()), device ? device : self->device(),
              requires_grad, Tensor());
}

}  // namespace ember::ops
