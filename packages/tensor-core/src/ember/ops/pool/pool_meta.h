// What the 2-D pooling ops check and compute the same way on every device (defined in
// pool_meta.cpp; the CPU kernels of pool_cpu.cpp and the CUDA kernels of pool_cuda.cu call
// them): the window geometry after PyTorch's argument checks, the checks of the
// backward ops' arguments, and the per-axis window rules.
#pragma once

#include <optional>
#include <utility>

#include "ember/core/host_device.h"
#include "ember/core/tensor.h"

namespace ember {

// An (N, C, H, W) or unbatched (C, H, W) input's pooling windows: kernel, stride, padding,
// dilation, the input and output plane sizes and the number of planes.
struct PoolGeometry {
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t H = 0, W = 0, OH = 0, OW = 0, planes = 0;
  bool batched = true;
};

// input's shape with the last two dims replaced by (OH, OW).
Shape pooled_shape(const Tensor& input, int64_t OH, int64_t OW);

// max_pool2d's geometry after PyTorch's checks (the dtype is the kernel's to check).
PoolGeometry max_pool_meta(const Tensor& self, const Shape& kernel_size, const Shape& stride, const Shape& padding,
                           const Shape& dilation, bool ceil_mode);
// ... and its backward's: grad_output and indices (int64) of the pooled shape, grad_output
// floating and of self's dtype.
PoolGeometry max_pool_backward_meta(const Tensor& grad_output, const Tensor& self, const Shape& kernel_size,
                                    const Shape& stride, const Shape& padding, const Shape& dilation, bool ceil_mode,
                                    const Tensor& indices);
// avg_pool2d's geometry after PyTorch's checks (floating self; divisor_override not 0).
PoolGeometry avg_pool_meta(const Tensor& self, const Shape& kernel_size, const Shape& stride, const Shape& padding,
                           bool ceil_mode, std::optional<int64_t> divisor_override);
PoolGeometry avg_pool_backward_meta(const Tensor& grad_output, const Tensor& self, const Shape& kernel_size,
                                    const Shape& stride, const Shape& padding, bool ceil_mode,
                                    std::optional<int64_t> divisor_override);
// The adaptive pools' output size (OH, OW) after PyTorch's checks (floating self).
std::pair<int64_t, int64_t> adaptive_pool_meta(const char* op, const Tensor& self, const Shape& output_size, bool max);
// The adaptive backward ops' checks.
void adaptive_avg_pool_backward_meta(const Tensor& grad_output, const Tensor& self);
void adaptive_max_pool_backward_meta(const Tensor& grad_output, const Tensor& self, const Tensor& indices);

// Average pooling along one axis: output o's window clipped to the input, [lo, hi), and its
// extent for the divisor (the window clipped to the padded input when count_include_pad,
// the part inside the input otherwise).
EMBER_HOST_DEVICE inline void avg_window(int64_t o, int64_t in, int64_t k, int64_t s, int64_t pad,
                                     bool count_include_pad, int64_t* lo, int64_t* hi, int64_t* extent) {
  const int64_t start = o * s - pad;
  const int64_t stop = start + k < in + pad ? start + k : in + pad;
  *lo = start > 0 ? start : 0;
  *hi = stop < in ? stop : in;
  *extent = count_include_pad ? stop - start : *hi - *lo;
}

// Adaptive pooling along one axis: output o of out covers [start, end) of in.
EMBER_HOST_DEVICE inline int64_t adaptive_start(int64_t o, int64_t out, int64_t in) { return (o * in) / out; }
EMBER_HOST_DEVICE inline int64_t adaptive_end(int64_t o, int64_t out, int64_t in) { return ((o + 1) * in + out - 1) / out; }

}  // namespace ember
