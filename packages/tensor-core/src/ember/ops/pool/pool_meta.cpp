// The 2-D pooling ops' argument checks and window geometry (pool_meta.h), called by the CPU
// kernels (pool_cpu.cpp) and the CUDA kernels (pool_cuda.cu). Messages follow PyTorch's.
#include "ember/ops/pool/pool_meta.h"

#include <algorithm>
#include <string>

#include "ember/ops/ops_util.h"

namespace ember {
namespace {

// One or two values of an int[] argument; `what` ends the PyTorch message.
std::pair<int64_t, int64_t> two(const Shape& v, bool allow_empty, const std::string& msg) {
  if (!(v.size() == 1 || v.size() == 2 || (allow_empty && v.empty()))) throw std::runtime_error(msg);
  if (v.empty()) return {0, 0};
  return {v[0], v.size() == 2 ? v[1] : v[0]};
}

// PyTorch's pooling output size (floor or ceil mode; a last window must start inside the
// input or its left padding).
int64_t out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil) {
  if (stride == 0) throw std::runtime_error("stride should not be zero");
  if (pad < 0) throw std::runtime_error(message("pad must be non-negative, but got pad: ", pad));
  if (pad > ((k - 1) * dilation + 1) / 2) {
    throw std::runtime_error(message("pad should be at most half of effective kernel size, but got pad=", pad,
                                     ", kernel_size=", k, " and dilation=", dilation));
  }
  const int64_t num = in + 2 * pad - dilation * (k - 1) - 1 + (ceil ? stride - 1 : 0);
  // floor division (num may be negative)
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil && (out - 1) * stride >= in + pad) --out;
  return out;
}

void check_float(const char* op, const Tensor& t) {
  if (!is_floating(t->dtype())) {
    throw NotImplementedError(message("\"", op, "\" not implemented for '", scalar_type_name(t->dtype()), "'"));
  }
}

// The pooling geometry after PyTorch's checks. `op` names the op in the argument messages.
PoolGeometry pool_geometry(const char* op, const Tensor& input, const Shape& kernel_size, const Shape& stride,
                   const Shape& padding, const Shape& dilation, bool ceil_mode) {
  const std::string name(op);
  auto [kh, kw] = two(kernel_size, false, name + ": kernel_size must either be a single int, or a tuple of two ints");
  auto [sh, sw] = stride.empty() ? std::pair<int64_t, int64_t>{kh, kw}
                                 : two(stride, true, name + ": stride must either be omitted, a single int, or a tuple "
                                                            "of two ints");
  auto [ph, pw] = two(padding, false, name + ": padding must either be a single int, or a tuple of two ints");
  auto [dh, dw] = two(dilation, false, name + ": dilation must be either a single int, or a tuple of two ints");
  PoolGeometry g{kh, kw, sh, sw, ph, pw, dh, dw};
  const int64_t nd = input->dim();
  if (nd != 3 && nd != 4) throw std::runtime_error("non-empty 3D or 4D (batch mode) tensor expected for input");
  g.batched = nd == 4;
  g.H = input->size(-2);
  g.W = input->size(-1);
  g.OH = out_size(g.H, kh, ph, sh, dh, ceil_mode);
  g.OW = out_size(g.W, kw, pw, sw, dw, ceil_mode);
  if (kh <= 0 || kw <= 0) {
    throw std::runtime_error(message("kernel size should be greater than zero, but got kH: ", kh, " kW: ", kw));
  }
  if (sh <= 0 || sw <= 0) {
    throw std::runtime_error(message("stride should be greater than zero, but got dH: ", sh, " dW: ", sw));
  }
  if (dh <= 0 || dw <= 0) {
    throw std::runtime_error(message("dilation should be greater than zero, but got dilationH: ", dh,
                                     " dilationW: ", dw));
  }
  const bool nonempty = nd == 3 ? input->size(0) != 0 && g.H != 0 && g.W != 0
                                : input->size(1) != 0 && g.H != 0 && g.W != 0;
  if (!nonempty) {
    throw std::runtime_error(message("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
                                     "input, but got:", shape_str(input->sizes())));
  }
  if (kw / 2 < pw || kh / 2 < ph) {
    throw std::runtime_error(message("pad should be smaller than or equal to half of kernel size, but got padW = ", pw,
                                     ", padH = ", ph, ", kW = ", kw, ", kH = ", kh));
  }
  if (g.OH < 1 || g.OW < 1) {
    const int64_t C = input->size(-3);
    throw std::runtime_error(message("Given input size: (", C, "x", g.H, "x", g.W, "). Calculated output size: (",
                                     C, "x", g.OH, "x", g.OW, "). Output size is too small"));
  }
  g.planes = input->numel() / (g.H * g.W);
  return g;
}

// Checks of a backward op's arguments: grad_output (and indices) of the expected shape.
void check_grad_shape(const char* op, const char* what, const Tensor& t, const Shape& expected) {
  if (t->sizes() != expected) {
    throw std::runtime_error(message(op, ": expected ", what, " of size ", shape_str(expected), ", but got ",
                                     shape_str(t->sizes())));
  }
}

void check_same_dtype(const char* op, const Tensor& grad, const Tensor& self) {
  if (grad->dtype() != self->dtype()) {
    throw std::runtime_error(message(op, ": expected grad_output and self of the same dtype, but got ",
                                     dtype_name(grad->dtype()), " and ", dtype_name(self->dtype())));
  }
}

PoolGeometry avg_geometry(const Tensor& input, const Shape& kernel_size, const Shape& stride, const Shape& padding,
                  bool ceil_mode, std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d";
  two(kernel_size, false, "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  if (!stride.empty()) {
    two(stride, true, "avg_pool2d: stride must either be omitted, a single int, or a tuple of two ints");
  }
  two(padding, false, "avg_pool2d: padding must either be a single int, or a tuple of two ints");
  if (divisor_override && *divisor_override == 0) throw std::runtime_error("divisor must be not zero");
  return pool_geometry(op, input, kernel_size, stride, padding, {1}, ceil_mode);
}

std::pair<int64_t, int64_t> adaptive_output(const char* op, const Tensor& input, const Shape& output_size,
                                            bool max) {
  const std::string name(op);
  if (output_size.size() != 2) {
    throw std::runtime_error(max ? name + "(): internal error: output_size.size() must be 2"
                                 : name + ": output_size must be 2");
  }
  const int64_t nd = input->dim();
  if (nd != 3 && nd != 4) {
    throw std::runtime_error(message(op, "(): Expected 3D or 4D tensor, but got", max ? ": " : " ",
                                     shape_str(input->sizes())));
  }
  // PyTorch averages to 1x1 as a mean over the plane, which takes empty planes (the mean of no element
  // is NaN); every other adaptive pooling refuses them
  const bool plane_mean = !max && output_size[0] == 1 && output_size[1] == 1;
  for (int64_t i = 1; !plane_mean && i < nd; ++i) {
    if (input->size(i) == 0) {
      throw std::runtime_error(message(op, "(): Expected input to have non-zero size for non-batch dimensions, but "
                                       "input has sizes ", shape_str(input->sizes()), " with dimension ", i,
                                       " being empty"));
    }
  }
  if (output_size[0] < 0 || output_size[1] < 0) {
    if (max) {
      Shape s = input->sizes();
      s[s.size() - 2] = output_size[0];
      s[s.size() - 1] = output_size[1];
      throw std::runtime_error(message("Trying to create tensor with negative dimension ",
                                       std::min(output_size[0], output_size[1]), ": ", shape_str(s)));
    }
    throw std::runtime_error(message(op, ": elements of output_size must be greater than or equal to 0 but received {",
                                     output_size[0], ", ", output_size[1], "}"));
  }
  check_float(op, input);
  return {output_size[0], output_size[1]};
}

// The checks of a backward op that scatters grad_output through max-pooling indices.
void check_index_scatter(const char* op, const Tensor& grad_output, const Tensor& self, const Tensor& indices,
                         const Shape& out_shape) {
  check_float(op, grad_output);
  check_same_dtype(op, grad_output, self);
  check_grad_shape(op, "grad_output", grad_output, out_shape);
  if (indices->dtype() != ScalarType::Int64) {
    throw std::runtime_error(message(op, ": expected indices of dtype int64, but got ", dtype_name(indices->dtype())));
  }
  check_grad_shape(op, "indices", indices, out_shape);
}

}  // namespace

Shape pooled_shape(const Tensor& input, int64_t OH, int64_t OW) {
  Shape s = input->sizes();
  s[s.size() - 2] = OH;
  s[s.size() - 1] = OW;
  return s;
}

PoolGeometry max_pool_meta(const Tensor& self, const Shape& kernel_size, const Shape& stride, const Shape& padding,
                           const Shape& dilation, bool ceil_mode) {
  return pool_geometry("max_pool2d", self, kernel_size, stride, padding, dilation, ceil_mode);
}

PoolGeometry max_pool_backward_meta(const Tensor& grad_output, const Tensor& self, const Shape& kernel_size,
                                    const Shape& stride, const Shape& padding, const Shape& dilation, bool ceil_mode,
                                    const Tensor& indices) {
  const PoolGeometry g = max_pool_meta(self, kernel_size, stride, padding, dilation, ceil_mode);
  check_index_scatter("max_pool2d_with_indices_backward", grad_output, self, indices, pooled_shape(self, g.OH, g.OW));
  return g;
}

PoolGeometry avg_pool_meta(const Tensor& self, const Shape& kernel_size, const Shape& stride, const Shape& padding,
                           bool ceil_mode, std::optional<int64_t> divisor_override) {
  const PoolGeometry g = avg_geometry(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  if (self->dtype() != ScalarType::Int64) check_float("avg_pool2d", self);  // int64: the CPU kernel, as PyTorch
  return g;
}

PoolGeometry avg_pool_backward_meta(const Tensor& grad_output, const Tensor& self, const Shape& kernel_size,
                                    const Shape& stride, const Shape& padding, bool ceil_mode,
                                    std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d_backward";
  const PoolGeometry g = avg_geometry(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  check_float(op, grad_output);
  check_same_dtype(op, grad_output, self);
  check_grad_shape(op, "grad_output", grad_output, pooled_shape(self, g.OH, g.OW));
  return g;
}

std::pair<int64_t, int64_t> adaptive_pool_meta(const char* op, const Tensor& self, const Shape& output_size,
                                               bool max) {
  return adaptive_output(op, self, output_size, max);
}

void adaptive_avg_pool_backward_meta(const Tensor& grad_output, const Tensor& self) {
  const char* op = "adaptive_avg_pool2d_backward";
  check_float(op, grad_output);
  check_same_dtype(op, grad_output, self);
  if (self->dim() != 3 && self->dim() != 4) {
    throw std::runtime_error(message(op, "(): Expected 3D or 4D tensor, but got ", shape_str(self->sizes())));
  }
  if (grad_output->dim() != self->dim() || grad_output->size(0) != self->size(0) ||
      grad_output->size(-3) != self->size(-3)) {
    throw std::runtime_error(message(op, ": expected grad_output of size ", shape_str(self->sizes()),
                                     " in its leading dimensions, but got ", shape_str(grad_output->sizes())));
  }
}

void adaptive_max_pool_backward_meta(const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
  const char* op = "adaptive_max_pool2d_backward";
  if (self->dim() != 3 && self->dim() != 4) {
    throw std::runtime_error(message(op, "(): Expected 3D or 4D tensor, but got ", shape_str(self->sizes())));
  }
  if (grad_output->dim() != self->dim()) {
    throw std::runtime_error(message(op, ": expected grad_output of ", self->dim(), " dimensions, but got ",
                                     shape_str(grad_output->sizes())));
  }
  check_index_scatter(op, grad_output, self, indices, pooled_shape(self, grad_output->size(-2), grad_output->size(-1)));
}

}  // namespace ember
