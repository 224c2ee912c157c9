// conv2d and its two derivatives as im2col / col2im and matmul through the dispatchers
// (conv_meta.h): device-generic bodies, run on the tensors' device. The CPU kernels
// (conv_cpu.cpp) take them for the shapes the direct and depthwise kernels do not; the CUDA
// kernels when cuDNN is off or missing.
#include "ember/ops/conv/conv_meta.h"

#include "ember/ops/ops_util.h"

namespace ember {
namespace {

using Geometry = ConvGeometry;

// im2col and col2im through their dispatchers, so that the bodies below run on every device
// that has those two kernels (and matmul).
Tensor columns(const Tensor& input, const Geometry& g) {
  return ops::im2col(input, {g.kh, g.kw}, {g.dh, g.dw}, {g.ph, g.pw}, {g.sh, g.sw});
}
Tensor image(const Tensor& cols, int64_t H, int64_t W, const Geometry& g) {
  return ops::col2im(cols, {H, W}, {g.kh, g.kw}, {g.dh, g.dw}, {g.ph, g.pw}, {g.sh, g.sw});
}

}  // namespace

Tensor conv2d_im2col(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dMeta& m) {
  if (conv_computes_in_float32(input->dtype())) {
    return conv_cast(conv2d_im2col(conv_widen(input), conv_widen(weight), conv_widen(bias), m), input->dtype());
  }
  // (N, G, C/G*kh*kw, L) columns times the (G, O/G, C/G*kh*kw) weight
  Tensor cols = columns(input, m.g);
  const int64_t K = m.C / m.groups * m.g.kh * m.g.kw, L = m.oh * m.ow;
  Tensor w = ops::reshape(weight, {m.groups, m.O / m.groups, K});
  Tensor out = ops::matmul(w, ops::view(cols, {m.N, m.groups, K, L}), Tensor());
  out = ops::view(out, {m.N, m.O, m.oh, m.ow});
  if (bias) ops::add(out, ops::view(bias, {m.O, 1, 1}), Scalar::from_int(1), out);
  return out;
}

Tensor conv2d_backward_input_im2col(const Tensor& grad_output, const Tensor& weight, const Conv2dMeta& m) {
  if (conv_computes_in_float32(grad_output->dtype())) {
    return conv_cast(conv2d_backward_input_im2col(conv_widen(grad_output), conv_widen(weight), m), grad_output->dtype());
  }
  // col2im(W^T @ grad_output) per group
  const int64_t K = m.C / m.groups * m.g.kh * m.g.kw, L = m.oh * m.ow;
  Tensor wt = ops::transpose(ops::reshape(weight, {m.groups, m.O / m.groups, K}), 1, 2);
  Tensor cols = ops::matmul(wt, ops::reshape(grad_output, {m.N, m.groups, m.O / m.groups, L}), Tensor());
  return image(ops::reshape(cols, {m.N, m.groups * K, L}), m.H, m.W, m.g);
}

Tensor conv2d_backward_weight_im2col(const Tensor& grad_output, const Tensor& input, const Conv2dMeta& m) {
  if (conv_computes_in_float32(grad_output->dtype())) {
    return conv_cast(conv2d_backward_weight_im2col(conv_widen(grad_output), conv_widen(input), m), grad_output->dtype());
  }
  // grad_output @ im2col(input)^T summed over the batch, per group
  const int64_t G = m.groups, K = m.C / G * m.g.kh * m.g.kw, L = m.oh * m.ow, Og = m.O / G;
  const Shape weight_size{m.O, m.C / G, m.g.kh, m.g.kw};
  Tensor cols = ops::view(columns(input, m.g), {m.N, G, K, L});
  Tensor gy = ops::reshape(grad_output, {m.N, G, Og, L});
  if (m.N * L * (G * K + m.O) < m.N * m.O * K) {
    // one product per group with the batch folded into the inner dim, (Og, N*L) @ (N*L, K):
    // copying both operands to (G, ., N, L) costs less than the per-sample products' sum
    // (small images, many channels: the deep layers)
    Tensor gyp = ops::reshape(ops::permute(gy, {1, 2, 0, 3}), {G, Og, m.N * L});
    Tensor colsp = ops::reshape(ops::permute(cols, {1, 2, 0, 3}), {G, K, m.N * L});
    return ops::reshape(ops::matmul(gyp, ops::transpose(colsp, 1, 2), Tensor()), weight_size);
  }
  Tensor prod = ops::matmul(gy, ops::transpose(cols, 2, 3), Tensor());
  return ops::reshape(ops::sum(prod, Shape{0}, false, std::nullopt, Tensor()), weight_size);
}

}  // namespace ember
