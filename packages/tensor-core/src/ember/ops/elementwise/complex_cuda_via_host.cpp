// CUDA kernels of sgn, angle and conj_physical without device code of their own: the input is
// copied to the host (which waits for the queued work), the CPU kernel computes, and the
// result is copied back to the input's device (into out, in place for sgn_ / conj_physical_).
// Values, dtypes and errors are the CPU's by construction. Ember has no complex CUDA kernels
// yet, and on real tensors these ops are rare; a device kernel can replace any of them
// without changing callers.
#include "ember/ops/ops_util.h"

namespace ember::cuda {

namespace {
template <typename F> Tensor via_host(const char* op, const Tensor& self, const Tensor& out, F cpu_kernel) {
  const Tensor result = to_device(cpu_kernel(to_host(self)), self->device());
  return finish_out(op, out, result);
}
}  // namespace

Tensor sgn(const Tensor& self, const Tensor& out) {
  return via_host("sgn", self, out, [](const Tensor& x) { return cpu::sgn(x, Tensor()); });
}
Tensor angle(const Tensor& self, const Tensor& out) {
  return via_host("angle", self, out, [](const Tensor& x) { return cpu::angle(x, Tensor()); });
}
Tensor conj_physical(const Tensor& self, const Tensor& out) {
  return via_host("conj_physical", self, out, [](const Tensor& x) { return cpu::conj_physical(x, Tensor()); });
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(sgn);
EMBER_REGISTER_CUDA_KERNEL(angle);
EMBER_REGISTER_CUDA_KERNEL(conj_physical);
