// CUDA kernel of masked_fill (checks from index_meta.h, as the CPU's): a CPU value (a Python
// number, a CPU 0-d tensor) is overflow-checked and converted on the host and passed by value.
// A value on the device is converted there and read by the kernel, without the overflow check
// (reading it would synchronise the stream): a value that does not fit self's dtype is
// converted as a copy converts it.
#include <cstring>
#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/index/index_meta.h"

namespace ember::cuda_engine {
namespace {

// ---- masked_fill ----

// res = mask ? value : src (src only read when copy; else res is src and keeps its value). The
// value is v, or *vp (on the device) when vp is set. U: an unsigned type of the element size.
template <typename U>
void masked_fill_t(const Device& device, const Shape& shape, const Tensor& res, const Tensor& src, const Tensor& mask,
                   bool copy, U v, const U* vp) {
  launch_elementwise<3>("masked_fill", device, shape, {res.get(), src.get(), mask.get()},
                        [copy, v, vp] __device__(char** base, const int64_t* off) {
                          U* r = reinterpret_cast<U*>(base[0] + off[0]);
                          if (*reinterpret_cast<const bool*>(base[2] + off[2])) {
                            *r = vp ? *vp : v;
                          } else if (copy) {
                            *r = *reinterpret_cast<const U*>(base[1] + off[1]);
                          }
                        });
}

// The first tensor on a device among the operands (a CPU 0-d tensor may join them).
Device fill_device(const Tensor& self, const Tensor& mask, const Tensor& value) {
  for (const Tensor* t : {&self, &mask, &value}) {
    if (!is_on_cpu(*t)) return (*t)->device();
  }
  return self->device();
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value, const Tensor& out) {
  const Shape shape = masked_fill_meta(self, mask, value, out);
  const ScalarType dt = self->dtype();
  const Device device = fill_device(self, mask, value);
  // masked_fill_ of a CPU 0-d self (with a mask or value on the device): computed there, copied back
  const bool in_place = out == self && !is_on_cpu(self);
  Tensor res = in_place ? self : ember::empty(shape, dt, device);
  if (res->numel() > 0) {
    Tensor m = expand_to(to_device(mask, device), shape, "masked_fill");
    if (in_place && m->storage() == res->storage()) m = ops::clone(m);
    Tensor src = in_place ? res : expand_to(to_device(self, device), shape, "masked_fill");
    const bool host_value = is_on_cpu(value);
    const Tensor v = host_value ? to_dtype(value, dt) : contiguous_in(value, dt);
    dispatch_itemsize(itemsize(dt), [&](auto tag) {
      using U = decltype(tag);
      U bits = U(0);
      if (host_value) std::memcpy(&bits, v->data_ptr(), sizeof(U));
      masked_fill_t<U>(device, shape, res, src, m, !in_place, bits,
                       host_value ? nullptr : reinterpret_cast<const U*>(v->data_ptr()));
    });
  }
  if (out == self && !in_place) {
    ops::copy(self, res, false, self);
    return self;
  }
  return res;
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(masked_fill);
