// conv2d and its two derivatives as im2col / col2im and matmul through the dispatchers
// (conv_meta.h): device-generic bodies, run on the tensors' device. The CPU kernels
// (conv_cpu.cpp) take them for the shapes the direct and depthwise kernels do not; the CUDA
// kernels when cuDNN is off or missing.
#include "ember/ops/conv/conv_meta.h"

#include "ember/ops/linalg/linalg_meta.h"
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

// A 1x1 window with stride 1 and no padding: the columns are the input itself.
bool pointwise(const Geometry& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0;
}

// Whether to fold the batch into the products' inner dim, one (., K) x (K, N*L) product per
// group instead of one per sample and group: copying the operands to and from (G, ., N, L)
// costs less than re-reading (packing) the (O/G, K) weight N times. True for small images with
// many channels (the deep layers: ResNet-50's last stages at 64x64 input ran 2-4x slower per
// sample than one product).
bool fold_batch(const Conv2dMeta& m, int64_t K, int64_t L) {
  return m.N > 1 && m.N * L * (m.groups * K + m.O) < m.N * m.O * K;
}

// (N, G, R, L) -> (G, R, N*L) and back: the batch folded into the last dim.
Tensor batch_folded(const Tensor& t, int64_t N, int64_t G, int64_t R, int64_t L) {
  return ops::reshape(ops::permute(ops::reshape(t, {N, G, R, L}), {1, 2, 0, 3}), {G, R, N * L});
}
Tensor batch_unfolded(const Tensor& t, int64_t N, int64_t G, int64_t R, int64_t L) {
  return ops::contiguous(ops::permute(ops::reshape(t, {G, R, N, L}), {2, 0, 1, 3}));
}

// Whether the body runs a 16-bit float convolution in its own dtype: where the matrix products
// multiply it natively (products_native: float32 accumulation, one rounding) and every element
// of the result is an element of one product, so that it is rounded once, as on widened copies. Not so with a bias to add after the product, columns
// that col2im sums, or per-sample weight gradients summed over the batch. Grouped convolutions
// stay widened: their products are small and many (a depthwise one is a 1 x 9 product per
// channel and image, where the float32 depthwise kernel is far faster).
bool in_16bit(ConvPass pass, const Tensor& t, const Conv2dMeta& m, bool bias) {
  if (!conv_computes_in_float32(t->dtype()) || m.groups != 1 || !products_native(t->dtype(), t->device())) {
    return false;
  }
  const int64_t K = m.C / m.groups * m.g.kh * m.g.kw, L = m.oh * m.ow;
  switch (pass) {
    case ConvPass::Forward: return !bias;
    case ConvPass::BackwardInput: return pointwise(m.g);
    case ConvPass::BackwardWeight: return m.N == 1 || fold_batch(m, K, L);
  }
  return false;
}

}  // namespace

bool conv_im2col_in_16bit(ConvPass pass, const Tensor& t, const Conv2dMeta& m, bool bias) {
  return in_16bit(pass, t, m, bias);
}

Tensor conv2d_im2col(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dMeta& m) {
  if (conv_computes_in_float32(input->dtype()) && !in_16bit(ConvPass::Forward, input, m, bool(bias))) {
    return conv_cast(conv2d_im2col(conv_widen(input), conv_widen(weight), conv_widen(bias), m), input->dtype());
  }
  // (N, G, C/G*kh*kw, L) columns times the (G, O/G, C/G*kh*kw) weight
  Tensor cols = pointwise(m.g) ? input : columns(input, m.g);
  const int64_t G = m.groups, K = m.C / G * m.g.kh * m.g.kw, L = m.oh * m.ow, Og = m.O / G;
  Tensor w = ops::reshape(weight, {G, Og, K});
  Tensor out;
  if (fold_batch(m, K, L)) {
    out = batch_unfolded(ops::matmul(w, batch_folded(cols, m.N, G, K, L), Tensor()), m.N, G, Og, L);
  } else {
    out = ops::matmul(w, ops::reshape(cols, {m.N, G, K, L}), Tensor());
  }
  out = ops::view(out, {m.N, m.O, m.oh, m.ow});
  if (bias) ops::add(out, ops::view(bias, {m.O, 1, 1}), Scalar::from_int(1), out);
  return out;
}

Tensor conv2d_backward_input_im2col(const Tensor& grad_output, const Tensor& weight, const Conv2dMeta& m) {
  if (conv_computes_in_float32(grad_output->dtype()) && !in_16bit(ConvPass::BackwardInput, grad_output, m, false)) {
    return conv_cast(conv2d_backward_input_im2col(conv_widen(grad_output), conv_widen(weight), m), grad_output->dtype());
  }
  // col2im(W^T @ grad_output) per group
  const int64_t G = m.groups, K = m.C / G * m.g.kh * m.g.kw, L = m.oh * m.ow, Og = m.O / G;
  Tensor wt = ops::transpose(ops::reshape(weight, {G, Og, K}), 1, 2);
  Tensor cols;
  if (fold_batch(m, K, L)) {
    cols = batch_unfolded(ops::matmul(wt, batch_folded(grad_output, m.N, G, Og, L), Tensor()), m.N, G, K, L);
  } else {
    cols = ops::matmul(wt, ops::reshape(grad_output, {m.N, G, Og, L}), Tensor());
  }
  if (pointwise(m.g)) return ops::reshape(cols, {m.N, m.C, m.H, m.W});
  return image(ops::reshape(cols, {m.N, G * K, L}), m.H, m.W, m.g);
}

Tensor conv2d_backward_weight_im2col(const Tensor& grad_output, const Tensor& input, const Conv2dMeta& m) {
  if (conv_computes_in_float32(grad_output->dtype()) && !in_16bit(ConvPass::BackwardWeight, grad_output, m, false)) {
    return conv_cast(conv2d_backward_weight_im2col(conv_widen(grad_output), conv_widen(input), m), grad_output->dtype());
  }
  // grad_output @ im2col(input)^T summed over the batch, per group
  const int64_t G = m.groups, K = m.C / G * m.g.kh * m.g.kw, L = m.oh * m.ow, Og = m.O / G;
  const Shape weight_size{m.O, m.C / G, m.g.kh, m.g.kw};
  Tensor cols = pointwise(m.g) ? input : columns(input, m.g);
  if (fold_batch(m, K, L)) {  // one product per group, (Og, N*L) @ (N*L, K)
    Tensor gyp = batch_folded(grad_output, m.N, G, Og, L);
    return ops::reshape(ops::matmul(gyp, ops::transpose(batch_folded(cols, m.N, G, K, L), 1, 2), Tensor()),
                        weight_size);
  }
  cols = ops::reshape(cols, {m.N, G, K, L});
  Tensor gy = ops::reshape(grad_output, {m.N, G, Og, L});
  Tensor prod = ops::matmul(gy, ops::transpose(cols, 2, 3), Tensor());
  return ops::reshape(ops::sum(prod, Shape{0}, false, std::nullopt, Tensor()), weight_size);
}

}  // namespace ember
