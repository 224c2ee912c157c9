// The random factories written once for every device: rand and randn (a fresh tensor, or out,
// filled by the device's uniform_ / normal_ kernel, so the samples are the kernels' own) and
// rand_like / randn_like.
#include "ember/ops/ops_util.h"
#include "ember/ops/random/random_meta.h"

namespace ember::ops {
namespace {

// The result of a sampling factory, filled by fill(result): out itself when it has the
// shape and dtype and is contiguous (and device= does not name another device), else a fresh
// tensor on device= (out's device, the default device) that finish_out moves into out (an
// empty out is resized; another shape is an error naming op). requires_grad set.
template <typename Fill>
Tensor sampled(const char* op, const Shape& size, std::optional<ScalarType> dtype, std::optional<Device> device,
               bool requires_grad, const Tensor& out, Fill fill) {
  const ScalarType dt = rand_meta(op, dtype, out);
  const bool fill_out = out && out->sizes() == size && out->dtype() == dt && out->is_contiguous() &&
                        (!device || out->device() == *device);
  Tensor res = fill_out ? out : empty(size, dt, device ? device : (out ? std::optional<Device>(out->device()) : device),
                                      false, Tensor());
  fill(res);
  res = finish_out(op, out, res);
  if (requires_grad) set_requires_grad(res, true);
  return res;
}

}  // namespace

Tensor rand(const Shape& size, Generator* generator, std::optional<ScalarType> dtype, std::optional<Device> device,
            bool requires_grad, const Tensor& out) {
  return sampled("rand", size, dtype, device, requires_grad, out, [&](const Tensor& r) {
    const Tensor parts = is_complex(r->dtype()) ? view_as_real(r) : r;  // each part uniform, as PyTorch
    uniform(parts, 0.0, 1.0, generator, parts);
  });
}

Tensor randn(const Shape& size, Generator* generator, std::optional<ScalarType> dtype, std::optional<Device> device,
             bool requires_grad, const Tensor& out) {
  return sampled("randn", size, dtype, device, requires_grad, out, [&](const Tensor& r) {
    // complex: each part of variance 1/2, so that E|z|^2 = 1 (PyTorch's complex normal)
    if (is_complex(r->dtype())) normal(view_as_real(r), 0.0, 0.7071067811865476, generator, view_as_real(r));
    else normal(r, 0.0, 1.0, generator, r);
  });
}

// rand / randn with self's shape (and, by default, its dtype and device).
Tensor rand_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
                 bool requires_grad) {
  return rand(self->sizes(), nullptr, dtype.value_or(self->dtype()), device ? device : self->device(),
              requires_grad, Tensor());
}

Tensor randn_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
                  bool requires_grad) {
  return randn(self->sizes(), nullptr, dtype.value_or(self->dtype()), device ? device : self->device(),
               requires_grad, Tensor());
}

}  // namespace ember::ops
