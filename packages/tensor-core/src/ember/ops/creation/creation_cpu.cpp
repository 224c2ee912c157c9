// Deterministic creation ops, fills, copies and dtype conversions.
#include <cmath>

#include "ember/backends/cpu/iter.h"
#include "ember/ops/ops_util.h"
#include "ember/ops/creation/creation_meta.h"

namespace ember::cpu {
namespace {

Device resolve_device(const std::optional<Device>& device) { return device ? *device : Device{}; }

// Creates (or reuses out=) a tensor of shape and dtype, fills it with fill(t), sets requires_grad.
template <typename Fill>
Tensor create(const char* op, const Shape& size, ScalarType dtype, const std::optional<Device>& device,
              bool requires_grad, const Tensor& out, Fill fill) {
  Tensor res = out ? prepare_out(op, out, size, dtype) : empty(size, dtype, resolve_device(device));
  fill(res);
  res = finish_out(op, out, res);
  if (requires_grad) set_requires_grad(res, true);
  return res;
}

}  // namespace

Tensor zeros(const Shape& size, std::optional<ScalarType> dtype, std::optional<Device> device,
             bool requires_grad, const Tensor& out) {
  return create("zeros", size, dtype.value_or(out ? out->dtype() : default_float_dtype()), device,
                requires_grad, out, [](const Tensor& t) { fill_with(t, Scalar::from_int(0)); });
}

Tensor ones(const Shape& size, std::optional<ScalarType> dtype, std::optional<Device> device,
            bool requires_grad, const Tensor& out) {
  return create("ones", size, dtype.value_or(out ? out->dtype() : default_float_dtype()), device,
                requires_grad, out, [](const Tensor& t) { fill_with(t, Scalar::from_int(1)); });
}

Tensor empty(const Shape& size, std::optional<ScalarType> dtype, std::optional<Device> device,
             bool requires_grad, const Tensor& out) {
  return create("empty", size, dtype.value_or(out ? out->dtype() : default_float_dtype()), device,
                requires_grad, out, [](const Tensor&) {});
}

Tensor full(const Shape& size, const Scalar& fill_value, std::optional<ScalarType> dtype,
            std::optional<Device> device, bool requires_grad, const Tensor& out) {
  return create("full", size, dtype.value_or(out ? out->dtype() : fill_value.natural_dtype()), device,
                requires_grad, out, [&](const Tensor& t) { fill_with(t, fill_value); });
}


Tensor arange(const Scalar& start, std::optional<Scalar> end, const Scalar& step,
              std::optional<ScalarType> dtype, std::optional<Device> device, bool requires_grad,
              const Tensor& out) {
  const ArangeMeta M = arange_meta(start, end, step, dtype, out);
  const int64_t n = M.n;
  return create("arange", {n}, M.dtype, device, requires_grad, out, [&](const Tensor& r) {
    dispatch_numeric(M.dtype, "arange", [&](auto tag) {
      using T = decltype(tag);
      T* p = r->data<T>();
      if (M.all_int) {
        const int64_t a0 = M.a0, si = M.si;
        for (int64_t i = 0; i < n; ++i) p[i] = convert<T>(a0 + i * si);
      } else {
        const double a = M.a, s = M.s;
        for (int64_t i = 0; i < n; ++i) p[i] = convert<T>(a + static_cast<double>(i) * s);
      }
    });
  });
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, std::optional<ScalarType> dtype,
                std::optional<Device> device, bool requires_grad, const Tensor& out) {
  const LinspaceMeta M = linspace_meta(start, end, steps, dtype, out);
  const ScalarType t = M.dtype;
  const double a = M.a, b = M.b;
  return create("linspace", {steps}, t, device, requires_grad, out, [&](const Tensor& r) {
    dispatch_numeric(t, "linspace", [&](auto tag) {
      using T = decltype(tag);
      T* p = r->data<T>();
      if (steps == 1) { p[0] = convert<T>(a); return; }
      const double step = (b - a) / static_cast<double>(steps - 1);
      const int64_t half = steps / 2;
      // fill from both ends so that the last value is exactly `end`
      for (int64_t i = 0; i < steps; ++i) {
        double v = i < half ? a + step * static_cast<double>(i) : b - step * static_cast<double>(steps - 1 - i);
        p[i] = convert<T>(v);
      }
    });
  });
}

Tensor eye(int64_t n, std::optional<int64_t> m, std::optional<ScalarType> dtype, std::optional<Device> device,
           bool requires_grad, const Tensor& out) {
  const EyeMeta M = eye_meta(n, m, dtype, out);
  const int64_t cols = M.cols;
  const ScalarType t = M.dtype;
  return create("eye", {n, cols}, t, device, requires_grad, out, [&](const Tensor& r) {
    fill_with(r, Scalar::from_int(0));
    dispatch_any(t, "eye", [&](auto tag) {
      using T = decltype(tag);
      T* p = r->data<T>();
      for (int64_t i = 0; i < std::min(n, cols); ++i) p[i * cols + i] = convert<T>(int64_t(1));
    });
  });
}

Tensor fill(const Tensor& self, const Scalar& value, const Tensor&) {
  fill_with(self, value);
  return self;
}

Tensor zero(const Tensor& self, const Tensor&) {
  fill_with(self, Scalar::from_int(0));
  return self;
}

Tensor copy(const Tensor& self, const Tensor& src, bool /*non_blocking: host copies are synchronous*/, const Tensor&) {
  if (self == src) return self;
  // a source that overlaps the destination is copied out first
  Tensor s = src->storage() == self->storage() ? ops::clone(src) : src;
  copy_into(self, s);
  return self;
}

Tensor clone(const Tensor& self) {
  Tensor out = ember::empty(self->sizes(), self->dtype());
  copy_into(out, self);
  return out;
}

Tensor contiguous(const Tensor& self) { return as_contiguous(self); }


}  // namespace ember::cpu
