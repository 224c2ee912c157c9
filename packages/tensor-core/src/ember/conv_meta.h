// What im2col/col2im and the convolutions check and compute the same way on every device:
// the window geometry of the int[] arguments and the block grid (conv.cpp defines them).
#pragma once

#include <utility>

#include "ember/tensor.h"

namespace ember {

// A 2-D sliding window: kernel, dilation, padding and stride per spatial dim.
struct ConvGeometry {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
  int64_t oh(int64_t h) const { return (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow(int64_t w) const { return (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
};

// A 2-element int[] argument (one int stands for both), each >= min; RuntimeError naming op
// and arg.
std::pair<int64_t, int64_t> conv_pair_arg(const char* op, const char* arg, const Shape& v, int64_t min);
ConvGeometry conv_geometry(const char* op, const Shape& kernel, const Shape& dilation, const Shape& padding,
                           const Shape& stride);
// NotImplementedError unless t is float32 or float64.
void check_conv_dtype(const char* op, const Tensor& t);
// im2col's checks of a (N, C, H, W) input; returns the block grid (oh, ow).
std::pair<int64_t, int64_t> im2col_check(const char* op, const Tensor& input, const ConvGeometry& g);
// col2im's checks of (N, C*kh*kw, oh*ow) columns for an (H, W) image; returns C.
int64_t col2im_check(const char* op, const Tensor& cols, int64_t H, int64_t W, const ConvGeometry& g, int64_t oh,
                     int64_t ow);

}  // namespace ember
