// The complex ops composed of other ops, one body for every device: conj, complex, polar.
#include "ember/ops/ops_util.h"

namespace ember::ops {

Tensor conj(const Tensor& self) { return is_complex(self->dtype()) ? conj_physical(self, Tensor()) : self; }

namespace {

// The complex result of complex(a, b) / polar(a, b), with its parts filled from `re` and
// `im` (each broadcast to the result's shape). PyTorch's checks: both float32 or both float64.
Tensor from_parts(const char* op, const Tensor& a, const Tensor& b, const Tensor& out,
                  const Tensor& re, const Tensor& im) {
  const Shape shape = broadcast_shapes(a->sizes(), b->sizes(), op);
  Tensor res = prepare_out(op, out, shape, to_complex(a->dtype()));
  if (res->device() != a->device()) res = empty(shape, to_complex(a->dtype()), a->device(), false, Tensor());
  const Tensor parts = view_as_real(res);
  copy(select(parts, -1, 0), re, false, Tensor());
  copy(select(parts, -1, 1), im, false, Tensor());
  return finish_out(op, out, res);
}

void check_parts(const Tensor& a, const Tensor& b) {
  const ScalarType ta = a->dtype(), tb = b->dtype();
  if (!((ta == ScalarType::Float32 || ta == ScalarType::Float64) &&
        (tb == ScalarType::Float32 || tb == ScalarType::Float64))) {
    throw std::runtime_error(message("Expected both inputs to be Float or Double tensors but got ",
                                     scalar_type_name(ta), " and ", scalar_type_name(tb)));
  }
  if (ta != tb) {
    throw std::runtime_error(message("Expected object of scalar type ", scalar_type_name(ta),
                                     " but got scalar type ", scalar_type_name(tb), " for second argument"));
  }
  if (a->device() != b->device()) {
    throw std::runtime_error(message("Expected all tensors to be on the same device, but found at least two "
                                     "devices, ", a->device().str(), " and ", b->device().str(), "!"));
  }
}

}  // namespace

Tensor make_complex(const Tensor& real, const Tensor& imag, const Tensor& out) {
  check_parts(real, imag);
  return from_parts("complex", real, imag, out, real, imag);
}

Tensor polar(const Tensor& abs, const Tensor& angle, const Tensor& out) {
  check_parts(abs, angle);
  return from_parts("polar", abs, angle, out, mul(abs, cos(angle, Tensor()), Tensor()),
                    mul(abs, sin(angle, Tensor()), Tensor()));
}

}  // namespace ember::ops
