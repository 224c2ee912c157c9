// The meta functions declared in conv_meta.h: checks, shapes and dtypes shared by
// the CPU and CUDA kernels.
#include "ember/ops/conv/conv_meta.h"

#include <algorithm>
#include <string>
#include "ember/ops/conv/conv_depthwise_cpu.h"
#include "ember/ops/conv/conv_direct_cpu.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"

namespace ember {

std::pair<int64_t, int64_t> conv_pair_arg(const char* op, const char* arg, const Shape& v, int64_t min) {
  if (v.size() != 1 && v.size() != 2) {
    throw std::runtime_error(message(op, ": expected ", arg, " to be a single integer value or a list of 2 values, "
                                     "but got ", v.size(), " values"));
  }
  const int64_t a = v[0], b = v.size() == 2 ? v[1] : v[0];
  if (a < min || b < min) {
    throw std::runtime_error(message(op, ": ", arg, " should be ", min == 0 ? "non-negative" : "greater than zero",
                                     ", but got ", arg, ": ", shape_str(v)));
  }
  return {a, b};
}

ConvGeometry conv_geometry(const char* op, const Shape& kernel, const Shape& dilation, const Shape& padding,
                           const Shape& stride) {
  auto [kh, kw] = conv_pair_arg(op, "kernel_size", kernel, 1);
  auto [dh, dw] = conv_pair_arg(op, "dilation", dilation, 1);
  auto [ph, pw] = conv_pair_arg(op, "padding", padding, 0);
  auto [sh, sw] = conv_pair_arg(op, "stride", stride, 1);
  // the products the output sizes and column counts are made of must fit in int64
  int64_t product = 0;
  if (__builtin_mul_overflow(kh, kw, &product)) {
    throw std::runtime_error(message(op, ": Given kernel_width = ", kw, " and kernel_height = ", kh,
                                     " the product of kernel_width and kernel_height overflowed."));
  }
  if (__builtin_mul_overflow(dh, kh - 1, &product) || __builtin_mul_overflow(dw, kw - 1, &product) ||
      __builtin_mul_overflow(ph, int64_t(2), &product) || __builtin_mul_overflow(pw, int64_t(2), &product)) {
    throw std::runtime_error(message(op, ": kernel_size=(", kh, ", ", kw, "), dilation=(", dh, ", ", dw,
                                     ") and padding=(", ph, ", ", pw, ") give a window larger than int64 can hold"));
  }
  return {kh, kw, dh, dw, ph, pw, sh, sw};
}

void check_conv_dtype(const char* op, const Tensor& t) {
  const ScalarType dt = t->dtype();
  if (dt != ScalarType::Float32 && dt != ScalarType::Float64 && !conv_computes_in_float32(dt)) {
    throw NotImplementedError(message("\"", op, "\" not implemented for '", scalar_type_name(dt),
                                      "' (float16, bfloat16, float32 and float64 are supported)"));
  }
}

bool conv_computes_in_float32(ScalarType dtype) {
  return dtype == ScalarType::Float16 || dtype == ScalarType::BFloat16;
}

Tensor conv_cast(const Tensor& t, ScalarType dtype) {
  if (!t || t->dtype() == dtype) return t;
  Tensor out = empty(t->sizes(), dtype, t->device());
  ops::copy(out, t, false, out);
  return out;
}

Tensor conv_widen(const Tensor& t) { return conv_cast(t, ScalarType::Float32); }

// im2col and col2im move and sum elements in their own dtype: float32 and float64 only
// (16-bit convolutions widen before they get here).
void check_conv_args(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  if (input->dim() != 4) {
    throw std::runtime_error(message(op, ": Expected 4-dimensional input for 4-dimensional weight ",
                                     shape_str(weight->sizes()), ", but got ", input->dim(),
                                     "-dimensional input of size ", shape_str(input->sizes()), " instead"));
  }
  if (weight->dim() != 4) {
    throw std::runtime_error(message(op, ": weight should have 4 dimensions, got ", weight->dim(),
                                     " (shape ", shape_str(weight->sizes()), ")"));
  }
  if (input->dtype() != weight->dtype() || (bias && bias->dtype() != input->dtype())) {
    throw std::runtime_error(message(op, ": Input type (", scalar_type_name(input->dtype()),
                                     ") and weight type (", scalar_type_name(weight->dtype()),
                                     ") should be the same", bias ? " as the bias type" : "", " (bias type ",
                                     bias ? scalar_type_name(bias->dtype()) : "None", ")"));
  }
  check_conv_dtype(op, input);
}

ConvTransposeMeta conv_transpose2d_meta(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                        const Shape& stride, const Shape& padding, const Shape& output_padding,
                                        int64_t groups, const Shape& dilation) {
  const char* op = "conv_transpose2d";
  check_conv_args(op, input, weight, bias);
  const int64_t N = input->size(0), C = input->size(1), H = input->size(2), W = input->size(3);
  if (groups < 1) throw std::runtime_error(message(op, ": non-positive groups is not supported"));
  if (weight->size(0) != C || C % groups != 0) {
    throw std::runtime_error(message(op, ": Given transposed=1, weight of size ", shape_str(weight->sizes()),
                                     ", expected input", shape_str(input->sizes()), " to have ", weight->size(0),
                                     " channels, but got ", C, " channels instead"));
  }
  const int64_t O = weight->size(1) * groups;
  if (bias && (bias->dim() != 1 || bias->size(0) != O)) {
    throw std::runtime_error(message(op, ": Given transposed=1, weight of size ", shape_str(weight->sizes()),
                                     ", expected bias to be 1-dimensional with ", O, " elements, but got bias of size ",
                                     shape_str(bias->sizes()), " instead"));
  }
  const ConvGeometry g = conv_geometry(op, {weight->size(2), weight->size(3)}, dilation, padding, stride);
  auto [oph, opw] = conv_pair_arg(op, "output_padding", output_padding, 0);
  if (oph >= std::max(g.sh, g.dh) || opw >= std::max(g.sw, g.dw)) {
    throw std::runtime_error(message(op, ": output padding must be smaller than either stride or dilation, but got "
                                     "output_padding_height: ", oph, " output_padding_width: ", opw, " stride_height: ",
                                     g.sh, " stride_width: ", g.sw, " dilation_height: ", g.dh, " dilation_width: ",
                                     g.dw));
  }
  const int64_t OH = (H - 1) * g.sh - 2 * g.ph + g.dh * (g.kh - 1) + oph + 1;
  const int64_t OW = (W - 1) * g.sw - 2 * g.pw + g.dw * (g.kw - 1) + opw + 1;
  if (OH < 1 || OW < 1) {
    throw std::runtime_error(message(op, ": Given input size per channel: (", H, " x ", W,
                                     "). Calculated output size per channel: (", OH, " x ", OW,
                                     "). Output size is too small"));
  }
  return {g, N, C, H, W, O, OH, OW};
}

std::pair<int64_t, int64_t> im2col_check(const char* op, const Tensor& input, const ConvGeometry& g) {
  if (input->dim() != 4) {
    throw std::runtime_error(message(op, ": Expected 4D (batch mode) tensor for input with non-zero batch size and "
                                     "non-zero dimensions, but got: ", shape_str(input->sizes())));
  }
  const int64_t H = input->size(2), W = input->size(3);
  const int64_t oh = g.oh(H), ow = g.ow(W);
  if (oh < 1 || ow < 1) {
    throw std::runtime_error(message(op, ": Given input with spatial size (", H, ", ", W, "), kernel_size=(", g.kh,
                                     ", ", g.kw, "), dilation=(", g.dh, ", ", g.dw, "), padding=(", g.ph, ", ",
                                     g.pw, "), calculated shape of the array of sliding blocks as (", oh, ", ", ow,
                                     "), but its components must be at least one."));
  }
  return {oh, ow};
}

int64_t col2im_check(const char* op, const Tensor& cols, int64_t H, int64_t W, const ConvGeometry& g, int64_t oh,
                     int64_t ow) {
  if (cols->dim() != 3) {
    throw std::runtime_error(message(op, ": Expected 3D (batch mode) tensor for input, but got: ",
                                     shape_str(cols->sizes())));
  }
  const int64_t K = g.kh * g.kw;
  if (cols->size(1) % K != 0) {
    throw std::runtime_error(message(op, ": Expected size of input's dimension 1 to be divisible by the product of "
                                     "kernel_size, but got input.size(1)=", cols->size(1), " and kernel_size=(",
                                     g.kh, ", ", g.kw, ")"));
  }
  if (oh < 1 || ow < 1 || cols->size(2) != oh * ow) {
    throw std::runtime_error(message(op, ": Given output_size=(", H, ", ", W, "), kernel_size=(", g.kh, ", ", g.kw,
                                     "), dilation=(", g.dh, ", ", g.dw, "), padding=(", g.ph, ", ", g.pw,
                                     "), stride=(", g.sh, ", ", g.sw, "), expected size of input's dimension 2 to "
                                     "match the calculated number of sliding blocks ", oh, " * ", ow, " = ",
                                     oh * ow, ", but got input.size(2)=", cols->size(2), "."));
  }
  return cols->size(1) / K;
}

namespace {

// The shape checks shared by the two backward ops: grad_output (N, O, oh, ow) of a conv2d
// of an (N, C, H, W) input with an (O, C/groups, kh, kw) weight.
Conv2dMeta check_conv_backward(const char* op, const Tensor& grad_output, const Shape& input_size,
                               const Shape& weight_size, const Shape& stride, const Shape& padding,
                               const Shape& dilation, int64_t groups) {
  check_conv_dtype(op, grad_output);
  if (grad_output->dim() != 4 || input_size.size() != 4 || weight_size.size() != 4) {
    throw std::runtime_error(message(op, ": expected a 4-D grad_output, input and weight, got grad_output of size ",
                                     shape_str(grad_output->sizes()), ", input ", shape_str(input_size),
                                     " and weight ", shape_str(weight_size)));
  }
  const int64_t N = input_size[0], C = input_size[1], O = weight_size[0];
  if (groups < 1 || C != weight_size[1] * groups || O % groups != 0) {
    throw std::runtime_error(message(op, ": Given groups=", groups, ", weight of size ", shape_str(weight_size),
                                     " does not fit an input of size ", shape_str(input_size)));
  }
  const ConvGeometry g = conv_geometry(op, {weight_size[2], weight_size[3]}, dilation, padding, stride);
  const Shape want{N, O, g.oh(input_size[2]), g.ow(input_size[3])};
  if (want[2] < 1 || want[3] < 1 || grad_output->sizes() != want) {
    throw std::runtime_error(message(op, ": expected grad_output of size ", shape_str(want), ", but got ",
                                     shape_str(grad_output->sizes())));
  }
  return {g, N, C, input_size[2], input_size[3], O, want[2], want[3], groups};
}

}  // namespace

Conv2dMeta conv2d_meta(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
                       const Shape& padding, const Shape& dilation, int64_t groups) {
  const char* op = "conv2d";
  check_conv_args(op, input, weight, bias);
  const int64_t N = input->size(0), C = input->size(1), O = weight->size(0);
  if (groups < 1) throw std::runtime_error(message(op, ": non-positive groups is not supported"));
  if (C != weight->size(1) * groups || O % groups != 0) {
    throw std::runtime_error(message(op, ": Given groups=", groups, ", weight of size ", shape_str(weight->sizes()),
                                     ", expected input", shape_str(input->sizes()), " to have ",
                                     weight->size(1) * groups, " channels, but got ", C, " channels instead"));
  }
  if (bias && (bias->dim() != 1 || bias->size(0) != O)) {
    throw std::runtime_error(message(op, ": Given weight of size ", shape_str(weight->sizes()),
                                     ", expected bias to be 1-dimensional with ", O, " elements, but got bias of size ",
                                     shape_str(bias->sizes()), " instead"));
  }
  const ConvGeometry g = conv_geometry(op, {weight->size(2), weight->size(3)}, dilation, padding, stride);
  const int64_t oh = g.oh(input->size(2)), ow = g.ow(input->size(3));
  if (oh < 1 || ow < 1) {
    throw std::runtime_error(message(op, ": Calculated padded input size per channel: (",
                                     input->size(2) + 2 * g.ph, " x ", input->size(3) + 2 * g.pw,
                                     "). Kernel size: (", g.dh * (g.kh - 1) + 1, " x ", g.dw * (g.kw - 1) + 1,
                                     "). Kernel size can't be greater than actual input size"));
  }
  return {g, N, C, input->size(2), input->size(3), O, oh, ow, groups};
}

namespace {

// The operand a conv2d backward op is given besides grad_output (weight or input) must be 4-D
// and of grad_output's dtype.
void check_backward_operand(const char* op, const char* name, const Tensor& operand, const Tensor& grad_output) {
  if (operand->dim() != 4 || operand->dtype() != grad_output->dtype()) {
    throw std::runtime_error(message(op, ": expected a 4-D ", name, " of grad_output's dtype, got ",
                                     scalar_type_name(operand->dtype()), " ", name, " of size ",
                                     shape_str(operand->sizes())));
  }
}

}  // namespace

Conv2dMeta conv2d_backward_input_meta(const Tensor& grad_output, const Tensor& weight, const Shape& input_size,
                                      const Shape& stride, const Shape& padding, const Shape& dilation,
                                      int64_t groups) {
  check_backward_operand("conv2d_backward_input", "weight", weight, grad_output);
  return check_conv_backward("conv2d_backward_input", grad_output, input_size, weight->sizes(), stride, padding,
                             dilation, groups);
}

Conv2dMeta conv2d_backward_weight_meta(const Tensor& grad_output, const Tensor& input, const Shape& weight_size,
                                       const Shape& stride, const Shape& padding, const Shape& dilation,
                                       int64_t groups) {
  check_backward_operand("conv2d_backward_weight", "input", input, grad_output);
  return check_conv_backward("conv2d_backward_weight", grad_output, input->sizes(), weight_size, stride, padding,
                             dilation, groups);
}

}  // namespace ember
