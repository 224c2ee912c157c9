// CUDA kernels of the DFT ops without device code of their own yet: the input is copied to the
// host (which waits for the queued work), the CPU kernel computes (MKL or the built-in FFT),
// and the result is copied back to the input's device. Values, dtypes and errors are the
// CPU's by construction; the cost is two transfers and a synchronisation per call. cuFFT is
// to replace them (docs/fft.md) without changing callers.
#include "ember/ops/ops_util.h"

namespace ember::cuda {

Tensor _fft_c2c(const Tensor& self, const Shape& dim, int64_t normalization, bool forward) {
  return to_device(cpu::_fft_c2c(to_host(self), dim, normalization, forward), self->device());
}
Tensor _fft_r2c(const Tensor& self, const Shape& dim, int64_t normalization, bool onesided) {
  return to_device(cpu::_fft_r2c(to_host(self), dim, normalization, onesided), self->device());
}
Tensor _fft_c2r(const Tensor& self, const Shape& dim, int64_t normalization, int64_t last_dim_size) {
  return to_device(cpu::_fft_c2r(to_host(self), dim, normalization, last_dim_size), self->device());
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(_fft_c2c);
EMBER_REGISTER_CUDA_KERNEL(_fft_r2c);
EMBER_REGISTER_CUDA_KERNEL(_fft_c2r);
