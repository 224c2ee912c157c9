// Convolution by im2col + GEMM: im2col, col2im, conv2d, conv_transpose2d.
//
// im2col lays every receptive field of a (N, C, H, W) input out as a column of a
// (N, C*kh*kw, L) matrix (L output positions); col2im is its adjoint, summing the columns
// back into an image. A convolution is then one batched matrix product with the weight
// (BLAS), and its derivatives are products with im2col/col2im (derivatives.yaml).
// float32/float64 (float16/bfloat16 compute in float32). Depthwise convolutions (groups == C) go
// to conv_depthwise_cpu.cpp, other float32 ones to oneDNN when it is loaded (conv_onednn_cpu.cpp),
// else, with stride 1 and enough channels, to the blocked direct kernel of conv_direct_cpu.cpp on
// AVX-512 CPUs (conv2d, conv2d_backward_input, conv2d_backward_weight; docs/conv-algorithms.md
// has the numbers behind the choices). conv_transpose2d is conv2d_backward_input.
// conv2d and its derivatives are per-device kernels: their checks (conv2d_meta, ...) and
// im2col bodies (conv2d_im2col, ...) are device-agnostic, so the CUDA kernels
// (conv_cudnn.cpp) share them and fall back to the bodies when cuDNN is not used.
#include <algorithm>
#include <string>

#include "ember/ops/conv/conv_depthwise_cpu.h"
#include "ember/ops/conv/conv_direct_cpu.h"
#include "ember/ops/conv/conv_onednn_cpu.h"
#include "ember/ops/conv/conv_meta.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"


namespace ember::cpu {
namespace {

using Geometry = ConvGeometry;

// cols[n, (c, i, j), (y, x)] = img[n, c, y*sh - ph + i*dh, x*sw - pw + j*dw] (0 outside);
// img contiguous (N, C, H, W), cols contiguous (N, C*kh*kw, oh*ow).
template <typename T>
void im2col_kernel(const T* img, T* cols, int64_t planes, int64_t H, int64_t W, int64_t oh, int64_t ow,
                   const Geometry& g) {
  const int64_t L = oh * ow;
  parallel_for(0, planes, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(g.kh * g.kw * L, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t p = begin; p < end; ++p) {
                   const T* src = img + p * H * W;
                   T* dst = cols + p * g.kh * g.kw * L;
                   for (int64_t i = 0; i < g.kh; ++i) {
                     for (int64_t j = 0; j < g.kw; ++j, dst += L) {
                       for (int64_t y = 0; y < oh; ++y) {
                         const int64_t sy = y * g.sh - g.ph + i * g.dh;
                         T* row = dst + y * ow;
                         if (sy < 0 || sy >= H) {
                           std::fill(row, row + ow, T(0));
                           continue;
                         }
                         const T* line = src + sy * W;
                         const int64_t off = j * g.dw - g.pw;
                         if (g.sw == 1) {  // a contiguous run, zero-padded at both ends
                           const int64_t lo = std::clamp<int64_t>(-off, 0, ow), hi = std::clamp<int64_t>(W - off, lo, ow);
                           std::fill(row, row + lo, T(0));
                           std::copy(line + lo + off, line + hi + off, row + lo);
                           std::fill(row + hi, row + ow, T(0));
                         } else {
                           for (int64_t x = 0; x < ow; ++x) {
                             const int64_t sx = x * g.sw + off;
                             row[x] = sx >= 0 && sx < W ? line[sx] : T(0);
                           }
                         }
                       }
                     }
                   }
                 }
               });
}

// The adjoint of im2col_kernel: img (zeroed here) += each column at its receptive field.
template <typename T>
void col2im_kernel(const T* cols, T* img, int64_t planes, int64_t H, int64_t W, int64_t oh, int64_t ow,
                   const Geometry& g) {
  const int64_t L = oh * ow;
  parallel_for(0, planes, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(g.kh * g.kw * L, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t p = begin; p < end; ++p) {
                   T* dst = img + p * H * W;
                   std::fill(dst, dst + H * W, T(0));
                   const T* src = cols + p * g.kh * g.kw * L;
                   for (int64_t i = 0; i < g.kh; ++i) {
                     for (int64_t j = 0; j < g.kw; ++j, src += L) {
                       for (int64_t y = 0; y < oh; ++y) {
                         const int64_t sy = y * g.sh - g.ph + i * g.dh;
                         if (sy < 0 || sy >= H) continue;
                         T* line = dst + sy * W;
                         const T* row = src + y * ow;
                         const int64_t off = j * g.dw - g.pw;
                         for (int64_t x = 0; x < ow; ++x) {
                           const int64_t sx = x * g.sw + off;
                           if (sx >= 0 && sx < W) line[sx] += row[x];
                         }
                       }
                     }
                   }
                 }
               });
}

Tensor im2col_impl(const char* op, const Tensor& input, const Geometry& g) {
  const auto [oh, ow] = im2col_check(op, input, g);
  const int64_t N = input->size(0), C = input->size(1), H = input->size(2), W = input->size(3);
  Tensor src = as_contiguous(input);
  Tensor cols = empty({N, C * g.kh * g.kw, oh * ow}, input->dtype());
  dispatch_itemsize(input->itemsize(), [&](auto zero) {  // a copy: any dtype
    using T = decltype(zero);
    im2col_kernel(src->data<T>(), cols->data<T>(), N * C, H, W, oh, ow, g);
  });
  return cols;
}

// oh, ow: the grid of blocks the columns hold (those past the image are dropped).
Tensor col2im_impl(const char* op, const Tensor& cols, int64_t H, int64_t W, const Geometry& g, int64_t oh,
                   int64_t ow) {
  const int64_t C = col2im_check(op, cols, H, W, g, oh, ow);
  const int64_t N = cols->size(0);
  Tensor src = as_contiguous(cols);
  Tensor img = empty({N, C, H, W}, cols->dtype());
  dispatch_numeric(cols->dtype(), op, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      throw_dtype_unsupported(op, cols->dtype(), "float32, float64 or integer");  // ops.yaml refuses them first
    } else {
      col2im_kernel(src->data<T>(), img->data<T>(), N * C, H, W, oh, ow, g);
    }
  });
  return img;
}

// float32, stride 1, dilation 1, groups 1: what the direct kernel handles at all.
bool direct_path(const Tensor& t, const Geometry& g, int64_t groups) {
  return t->dtype() == ScalarType::Float32 && groups == 1 && g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1;
}

}  // namespace

Tensor im2col(const Tensor& self, const Shape& kernel_size, const Shape& dilation, const Shape& padding,
              const Shape& stride) {
  return im2col_impl("im2col", self, conv_geometry("im2col", kernel_size, dilation, padding, stride));
}

Tensor col2im(const Tensor& self, const Shape& output_size, const Shape& kernel_size, const Shape& dilation,
              const Shape& padding, const Shape& stride) {
  auto [H, W] = conv_pair_arg("col2im", "output_size", output_size, 1);
  const Geometry g = conv_geometry("col2im", kernel_size, dilation, padding, stride);
  return col2im_impl("col2im", self, H, W, g, g.oh(H), g.ow(W));
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
                        const Shape& padding, const Shape& output_padding, int64_t groups, const Shape& dilation) {
  const ConvTransposeMeta m = conv_transpose2d_meta(input, weight, bias, stride, padding, output_padding, groups,
                                                    dilation);
  const Geometry& g = m.g;
  const int64_t N = m.N, C = m.C, H = m.H, W = m.W, O = m.O, OH = m.OH, OW = m.OW;
  const bool adjoint = g.oh(OH) == H && g.ow(OW) == W;
  // 16-bit floats: on widened copies (the bias too is added before the one rounding), except an
  // adjoint: without a bias, conv2d_backward_input rounds its result once on every path it takes
  // (oneDNN's bfloat16 kernels where the CPU has them); with one, oneDNN's bfloat16 kernels
  // write a float32 result where they take the shape, the bias is added to it, and the sum is
  // rounded once
  if (conv_computes_in_float32(input->dtype()) && bias && adjoint) {
    const Conv2dMeta cm = conv2d_backward_input_meta(input, weight, {N, O, OH, OW}, stride, padding, dilation, groups);
    if (Tensor wide = onednn_conv2d_backward_input(input, weight, cm, /*float32_result=*/true);
        wide && wide->dtype() == ScalarType::Float32) {
      Tensor out = ember::empty({N, O, OH, OW}, input->dtype());
      add(wide, view(bias, {O, 1, 1}), Scalar::from_int(1), out);  // in float32, rounded once
      return out;
    }
  }
  if (conv_computes_in_float32(input->dtype()) && (bias || !adjoint)) {
    Tensor out = conv_transpose2d(conv_widen(input), conv_widen(weight), conv_widen(bias), stride, padding, output_padding, groups,
                                  dilation);
    return conv_cast(out, input->dtype());
  }
  Tensor out;
  if (adjoint) {
    // the adjoint of conv2d: its gradient with respect to an (N, O, OH, OW) input, for this input
    // as grad_output and this (C, O/groups, kh, kw) weight as conv2d's (O_conv = C): oneDNN or
    // Ember's kernels, as conv2d_backward_input picks
    out = conv2d_backward_input(input, weight, {N, O, OH, OW}, stride, padding, dilation, groups);
  } else {
    // an output_padding of a stride or more (allowed below the dilation) gives an output that no
    // conv2d maps back onto this input: columns (N, G, O/G*kh*kw, H*W) = weight^T (G, O/G*kh*kw,
    // C/G) @ input (N, G, C/G, H*W), summed into the image by col2im
    const int64_t Cg = C / groups, K = O / groups * g.kh * g.kw;
    Tensor wt = transpose(reshape(weight, {groups, Cg, K}), 1, 2);
    Tensor cols = matmul(wt, reshape(input, {N, groups, Cg, H * W}), Tensor());
    out = col2im_impl("conv_transpose2d", view(cols, {N, groups * K, H * W}), OH, OW, g, H, W);
  }
  if (bias) add(out, view(bias, {O, 1, 1}), Scalar::from_int(1), out);
  return out;
}

}  // namespace ember::cpu

// The CPU kernels of conv2d and its derivatives: the depthwise kernel (conv_depthwise_cpu.cpp) for
// groups == C, oneDNN (conv_onednn_cpu.cpp) for float32 when it is loaded, the blocked direct kernel
// (conv_direct_cpu.cpp) for the float32 shapes that suit it, else the im2col bodies of
// conv_generic.cpp. float16/bfloat16 run the float32 kernels on widened copies, except the bfloat16
// convolutions whose im2col bodies keep it (conv_im2col_in_16bit).
namespace ember::cpu {

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
              const Shape& padding, const Shape& dilation, int64_t groups) {
  const Conv2dMeta m = conv2d_meta(input, weight, bias, stride, padding, dilation, groups);
  if (depthwise_suits(input, m)) return depthwise_conv2d(input, weight, bias, m);
  if (Tensor out = onednn_conv2d(input, weight, bias, m)) return out;  // bfloat16 too, where the CPU has it
  if (conv_computes_in_float32(input->dtype()) && !conv_im2col_in_16bit(ConvPass::Forward, input, m, bool(bias))) {
    // through the float32 kernels above and below
    return conv_cast(conv2d(conv_widen(input), conv_widen(weight), conv_widen(bias), stride, padding, dilation, groups),
                     input->dtype());
  }
  const DirectConvShape ds{m.N, m.C, m.H, m.W, m.O, m.g.kh, m.g.kw, m.g.ph, m.g.pw};
  if (direct_path(input, m.g, groups) && direct_forward_suits(ds)) {
    Tensor x = as_contiguous(input), w = as_contiguous(weight), b = bias ? as_contiguous(bias) : Tensor();
    Tensor out = ember::empty({m.N, m.O, m.oh, m.ow}, input->dtype());
    direct_conv2d_forward(ds, x->data<float>(), w->data<float>(), b ? b->data<float>() : nullptr,
                          out->data<float>());
    return out;
  }
  return conv2d_im2col(input, weight, bias, m);
}

Tensor conv2d_backward_input(const Tensor& grad_output, const Tensor& weight, const Shape& input_size,
                             const Shape& stride, const Shape& padding, const Shape& dilation, int64_t groups) {
  const Conv2dMeta m = conv2d_backward_input_meta(grad_output, weight, input_size, stride, padding, dilation, groups);
  if (depthwise_suits(grad_output, m)) return depthwise_conv2d_backward_input(grad_output, weight, m);
  if (Tensor gx = onednn_conv2d_backward_input(grad_output, weight, m)) return gx;
  if (conv_computes_in_float32(grad_output->dtype()) &&
      !conv_im2col_in_16bit(ConvPass::BackwardInput, grad_output, m, false)) {
    Tensor gx = conv2d_backward_input(conv_widen(grad_output), conv_widen(weight), input_size, stride, padding, dilation, groups);
    return conv_cast(gx, grad_output->dtype());
  }
  const DirectConvShape ds{m.N, m.C, m.H, m.W, m.O, m.g.kh, m.g.kw, m.g.ph, m.g.pw};
  if (direct_path(grad_output, m.g, groups) && direct_backward_input_suits(ds)) {
    Tensor gy = as_contiguous(grad_output), w = as_contiguous(weight);
    Tensor gx = ember::empty({m.N, m.C, m.H, m.W}, grad_output->dtype());
    direct_conv2d_backward_input(ds, gy->data<float>(), w->data<float>(), gx->data<float>());
    return gx;
  }
  return conv2d_backward_input_im2col(grad_output, weight, m);
}

Tensor conv2d_backward_weight(const Tensor& grad_output, const Tensor& input, const Shape& weight_size,
                              const Shape& stride, const Shape& padding, const Shape& dilation, int64_t groups) {
  const Conv2dMeta m = conv2d_backward_weight_meta(grad_output, input, weight_size, stride, padding, dilation,
                                                   groups);
  if (depthwise_suits(grad_output, m)) return depthwise_conv2d_backward_weight(grad_output, input, m);
  if (Tensor gw = onednn_conv2d_backward_weight(grad_output, input, m)) return gw;
  if (conv_computes_in_float32(grad_output->dtype()) &&
      !conv_im2col_in_16bit(ConvPass::BackwardWeight, grad_output, m, false)) {
    Tensor gw =
        conv2d_backward_weight(conv_widen(grad_output), conv_widen(input), weight_size, stride, padding, dilation, groups);
    return conv_cast(gw, grad_output->dtype());
  }
  const DirectConvShape ds{m.N, m.C, m.H, m.W, m.O, m.g.kh, m.g.kw, m.g.ph, m.g.pw};
  if (direct_path(grad_output, m.g, groups) && direct_backward_weight_suits(ds)) {
    Tensor gy = as_contiguous(grad_output), x = as_contiguous(input);
    Tensor gw = ember::empty(weight_size, grad_output->dtype());
    direct_conv2d_backward_weight(ds, gy->data<float>(), x->data<float>(), gw->data<float>());
    return gw;
  }
  return conv2d_backward_weight_im2col(grad_output, input, m);
}

}  // namespace ember::cpu
