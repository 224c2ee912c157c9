// round(decimals=) written once for every device: the value scaled by a power of ten,
// rounded half to even, scaled back (PyTorch's order of operations), in the input's dtype,
// or for float16 / bfloat16 in float32 and rounded once (PyTorch's opmath: 2 * 10^5 does not
// overflow float16 on the way).
#include <cmath>

#include "ember/ops/ops_util.h"

namespace ember::ops {

Tensor round_decimals(const Tensor& self, int64_t decimals, const Tensor& out) {
  if (decimals == 0) return round(self, out);
  if (!is_floating(self->dtype())) {
    throw NotImplementedError(message("\"round_decimals\" not implemented for '", scalar_type_name(self->dtype()), "'"));
  }
  const ScalarType dtype = self->dtype();
  const bool reduced = dtype == ScalarType::Float16 || dtype == ScalarType::BFloat16;
  const Tensor x = reduced ? to_dtype(self, ScalarType::Float32) : self;
  const Tensor scale = wrapped_scalar(Scalar::from_double(std::pow(10.0, static_cast<double>(std::llabs(decimals)))));
  const Tensor r = decimals > 0 ? div(round(mul(x, scale, Tensor()), Tensor()), scale, std::nullopt, Tensor())
                                : mul(round(div(x, scale, std::nullopt, Tensor()), Tensor()), scale, Tensor());
  return finish_out("round", out, reduced ? to_dtype(r, dtype) : r);
}

}  // namespace ember::ops
