// What im2col/col2im and the convolutions check and compute the same way on every device:
// the window geometry of the int[] arguments, the block grid, the checks and sizes of
// conv_transpose2d, conv2d and conv2d's derivatives, and conv2d's im2col + matmul bodies that
// every device can run (conv_meta.cpp defines the checks and geometry, conv_generic.cpp the
// im2col bodies).
#pragma once

#include <utility>

#include "ember/core/tensor.h"

namespace ember {

// A 2-D sliding window: kernel, dilation, padding and stride per spatial dim.
struct ConvGeometry {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
  // floor division, as PyTorch's div_rtn: a window larger than the padded input by less than
  // a stride gives 0 blocks (truncation toward zero would give 1, reading past the input)
  static int64_t blocks(int64_t span, int64_t stride) {
    return (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  }
  int64_t oh(int64_t h) const { return blocks(h + 2 * ph - dh * (kh - 1) - 1, sh); }
  int64_t ow(int64_t w) const { return blocks(w + 2 * pw - dw * (kw - 1) - 1, sw); }
};

// A 2-element int[] argument (one int stands for both), each >= min; RuntimeError naming op
// and arg.
std::pair<int64_t, int64_t> conv_pair_arg(const char* op, const char* arg, const Shape& v, int64_t min);
ConvGeometry conv_geometry(const char* op, const Shape& kernel, const Shape& dilation, const Shape& padding,
                           const Shape& stride);
// NotImplementedError unless t is a floating dtype (float16, bfloat16, float32, float64).
void check_conv_dtype(const char* op, const Tensor& t);
// Whether a convolution of this dtype computes in float32: float16 and bfloat16 do (their
// operands are widened, the result rounded once), as PyTorch's CPU kernels and cuDNN's float
// compute type do.
bool conv_computes_in_float32(ScalarType dtype);
// t converted to dtype on its own device (t itself when it has that dtype or is undefined).
Tensor conv_cast(const Tensor& t, ScalarType dtype);
// im2col's checks of a (N, C, H, W) input; returns the block grid (oh, ow).
std::pair<int64_t, int64_t> im2col_check(const char* op, const Tensor& input, const ConvGeometry& g);
// col2im's checks of (N, C*kh*kw, oh*ow) columns for an (H, W) image; returns C.
int64_t col2im_check(const char* op, const Tensor& cols, int64_t H, int64_t W, const ConvGeometry& g, int64_t oh,
                     int64_t ow);

// conv_transpose2d's checks (PyTorch's messages, in the CPU kernel's order) and sizes: an
// (N, C, H, W) input, a (C, O/groups, kh, kw) weight of its dtype (float32/float64), a bias of
// O elements, output_padding below stride or dilation; the result is (N, O, OH, OW).
struct ConvTransposeMeta {
  ConvGeometry g;
  int64_t N, C, H, W, O, OH, OW;
};
ConvTransposeMeta conv_transpose2d_meta(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                        const Shape& stride, const Shape& padding, const Shape& output_padding,
                                        int64_t groups, const Shape& dilation);

// conv2d and its two derivatives: an (N, C, H, W) input, an (O, C/groups, kh, kw) weight and
// an (N, O, oh, ow) output (grad_output). The meta functions make the CPU kernel's checks, in
// its order and with its messages, and return these sizes.
struct Conv2dMeta {
  ConvGeometry g;
  int64_t N, C, H, W, O, oh, ow, groups;
};
Conv2dMeta conv2d_meta(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
                       const Shape& padding, const Shape& dilation, int64_t groups);
Conv2dMeta conv2d_backward_input_meta(const Tensor& grad_output, const Tensor& weight, const Shape& input_size,
                                      const Shape& stride, const Shape& padding, const Shape& dilation,
                                      int64_t groups);
Conv2dMeta conv2d_backward_weight_meta(const Tensor& grad_output, const Tensor& input, const Shape& weight_size,
                                       const Shape& stride, const Shape& padding, const Shape& dilation,
                                       int64_t groups);

// The device-agnostic bodies of the three ops: im2col/col2im and matmul through the
// dispatchers, on the tensors' device. m comes from the op's meta function. The CPU kernels
// take them for the shapes the direct kernel does not; the CUDA kernels when cuDNN is off or
// missing.
Tensor conv2d_im2col(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dMeta& m);
Tensor conv2d_backward_input_im2col(const Tensor& grad_output, const Tensor& weight, const Conv2dMeta& m);
Tensor conv2d_backward_weight_im2col(const Tensor& grad_output, const Tensor& input, const Conv2dMeta& m);
// Whether the body of this pass runs a 16-bit float t (input or grad_output) in its own dtype
// rather than widened: bfloat16 on a CPU whose products multiply it natively, where each
// result element is rounded once all the same (conv_generic.cpp). The CPU kernels then skip
// their own widening.
enum class ConvPass { Forward, BackwardInput, BackwardWeight };
bool conv_im2col_in_16bit(ConvPass pass, const Tensor& t, const Conv2dMeta& m, bool bias);

// t converted to float32 (16-bit convolutions compute in float32 on the CPU), conv_cast's.
Tensor conv_widen(const Tensor& t);
// im2col / col2im: NotImplementedError unless t is float32 or float64.
// conv2d's and conv_transpose2d's shared checks: 4-d input and weight of one dtype (and the
// bias's), a dtype convolutions support.
void check_conv_args(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias);

}  // namespace ember
