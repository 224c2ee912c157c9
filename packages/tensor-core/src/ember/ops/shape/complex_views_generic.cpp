// The views between complex tensors and their real parts: view_as_real, view_as_complex,
// real, imag. Each reads the same bytes as another dtype (a complex element is its real and
// imaginary parts side by side), so they share storage and work on every device.
#include "ember/ops/ops_util.h"

namespace ember::ops {

// (..., 2) real view of a complex tensor: strides doubled, the parts along a new last dim.
Tensor view_as_real(const Tensor& self) {
  if (!is_complex(self->dtype())) throw std::runtime_error("view_as_real is only supported for complex tensors");
  Shape sizes = self->sizes(), strides = self->strides();
  for (int64_t& s : strides) s *= 2;
  sizes.push_back(2);
  strides.push_back(1);
  return make_view(self, std::move(sizes), std::move(strides), self->offset() * 2, to_real(self->dtype()));
}

// The complex view of a (..., 2) float32 / float64 tensor whose pairs are contiguous.
Tensor view_as_complex(const Tensor& self) {
  const ScalarType dt = self->dtype();
  if (dt != ScalarType::Float32 && dt != ScalarType::Float64) {
    throw std::runtime_error(message("view_as_complex is only supported for float and double tensors, but got a "
                                     "tensor of scalar type: ", scalar_type_name(dt)));
  }
  const int64_t nd = self->dim();
  if (nd == 0 || self->sizes()[nd - 1] != 2) throw std::runtime_error("Tensor must have a last dimension of size 2");
  if (self->strides()[nd - 1] != 1) throw std::runtime_error("Tensor must have a last dimension with stride 1");
  Shape sizes(self->sizes().begin(), self->sizes().end() - 1), strides(self->strides().begin(), self->strides().end() - 1);
  for (int64_t& s : strides) {
    if (s % 2 != 0) throw std::runtime_error("Tensor must have a stride divisible by 2 for all but last dimension");
    s /= 2;
  }
  if (self->offset() % 2 != 0) throw std::runtime_error("Tensor must have a storage_offset divisible by 2");
  return make_view(self, std::move(sizes), std::move(strides), self->offset() / 2, to_complex(dt));
}

namespace {
// The real (part 0) or imaginary (part 1) parts of a complex tensor as a strided view.
Tensor part_view(const Tensor& self, int64_t part) {
  Shape strides = self->strides();
  for (int64_t& s : strides) s *= 2;
  return make_view(self, self->sizes(), std::move(strides), self->offset() * 2 + part, to_real(self->dtype()));
}
}  // namespace

Tensor real(const Tensor& self) { return is_complex(self->dtype()) ? part_view(self, 0) : self; }

Tensor imag(const Tensor& self) {
  if (!is_complex(self->dtype())) {
    throw std::runtime_error("imag is not implemented for tensors with non-complex dtypes.");
  }
  return part_view(self, 1);
}

}  // namespace ember::ops
