// round(decimals=) written once for every device: the value scaled by a power of ten,
// rounded half to even, scaled back, in the input's dtype (PyTorch's order of operations).
#include <cmath>

#include "ember/ops/ops_util.h"

namespace ember::ops {

Tensor round_decimals(const Tensor& self, int64_t decimals, const Tensor& out) {
  if (decimals == 0) return round(self, out);
  if (!is_floating(self->dtype())) {
    throw NotImplementedError(message("\"round_decimals\" not implemented for '", scalar_type_name(self->dtype()), "'"));
  }
  const Tensor scale = wrapped_scalar(Scalar::from_double(std::pow(10.0, static_cast<double>(std::llabs(decimals)))));
  const Tensor r = decimals > 0 ? div(round(mul(self, scale, Tensor()), Tensor()), scale, std::nullopt, Tensor())
                                : mul(round(div(self, scale, std::nullopt, Tensor()), Tensor()), scale, Tensor());
  return finish_out("round", out, r);
}

}  // namespace ember::ops
