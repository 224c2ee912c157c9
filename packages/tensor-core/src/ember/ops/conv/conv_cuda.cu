// im2col, col2im and conv_transpose2d on CUDA. With the first two (and cuBLAS matmul) conv2d
// and its two derivatives run on CUDA when cuDNN is unavailable or disabled (conv_cpu.cpp's
// im2col bodies; conv_cudnn.cpp chooses). The checks are conv_meta.h's, shared with the CPU.
//
// im2col: one thread per column element. col2im, its adjoint, is written as a gather (one
// thread per image pixel summing the columns that cover it), so it needs no atomics and sums
// in a fixed order.
//
// conv_transpose2d is the CPU's composition: per group one strided-batched GEMM (over the
// batch) of the transposed weight with the input gives the columns, col2im folds them into
// the (N, O, OH, OW) result, and the bias is added. Its col2im takes the input's own grid
// (H, W) of blocks, which output_padding can make differ from what col2im would compute.
#include "ember/ops/conv/conv_meta.h"
#include "ember/backends/cuda/cublas_gemm.h"
#include "ember/backends/cuda/elementwise.cuh"

namespace ember::cuda_engine {
namespace {

template <typename T>
__global__ void im2col_kernel(const T* img, T* cols, int64_t total, int64_t H, int64_t W, int64_t oh, int64_t ow,
                              ConvGeometry g) {
  const int64_t L = oh * ow;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // idx = ((plane * kh + i) * kw + j) * L + (y * ow + x)
    const int64_t l = idx % L, x = l % ow, y = l / ow;
    int64_t rest = idx / L;
    const int64_t j = rest % g.kw;
    rest /= g.kw;
    const int64_t i = rest % g.kh, plane = rest / g.kh;
    const int64_t sy = y * g.sh - g.ph + i * g.dh, sx = x * g.sw - g.pw + j * g.dw;
    cols[idx] = sy >= 0 && sy < H && sx >= 0 && sx < W ? img[(plane * H + sy) * W + sx] : T(0);
  }
}

template <typename T>
__global__ void col2im_kernel(const T* cols, T* img, int64_t total, int64_t H, int64_t W, int64_t oh, int64_t ow,
                              ConvGeometry g) {
  const int64_t L = oh * ow;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t sx = idx % W, sy = (idx / W) % H, plane = idx / (H * W);
    const T* src = cols + plane * g.kh * g.kw * L;
    T acc = T(0);
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t ty = sy + g.ph - i * g.dh;  // = y * sh
      if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= oh) continue;
      const int64_t y = ty / g.sh;
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t tx = sx + g.pw - j * g.dw;
        if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= ow) continue;
        acc += src[(i * g.kw + j) * L + y * ow + tx / g.sw];
      }
    }
    img[idx] = acc;
  }
}

template <typename T>
void launch_im2col(const Tensor& src, const Tensor& cols, int64_t H, int64_t W, int64_t oh, int64_t ow,
                   const ConvGeometry& g) {
  const int64_t total = cols->numel();
  if (total == 0) return;
  CurrentDevice guard(src->device().index);
  im2col_kernel<T><<<blocks_for(total), kThreads, 0, stream_of(src->device())>>>(
      src->data<T>(), cols->data<T>(), total, H, W, oh, ow, g);
  check_launch("im2col");
}

template <typename T>
void launch_col2im(const Tensor& src, const Tensor& img, int64_t H, int64_t W, int64_t oh, int64_t ow,
                   const ConvGeometry& g) {
  const int64_t total = img->numel();
  if (total == 0) return;
  CurrentDevice guard(src->device().index);
  col2im_kernel<T><<<blocks_for(total), kThreads, 0, stream_of(src->device())>>>(
      src->data<T>(), img->data<T>(), total, H, W, oh, ow, g);
  check_launch("col2im");
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

Tensor im2col(const Tensor& self, const Shape& kernel_size, const Shape& dilation, const Shape& padding,
              const Shape& stride) {
  const ConvGeometry g = conv_geometry("im2col", kernel_size, dilation, padding, stride);
  const std::pair<int64_t, int64_t> grid = im2col_check("im2col", self, g);
  const int64_t oh = grid.first, ow = grid.second;
  const int64_t N = self->size(0), C = self->size(1), H = self->size(2), W = self->size(3);
  Tensor src = ops::contiguous(self);
  Tensor cols = ember::empty({N, C * g.kh * g.kw, oh * ow}, self->dtype(), self->device());
  dispatch_itemsize(self->itemsize(), [&](auto zero) {  // a copy: any dtype
    launch_im2col<decltype(zero)>(src, cols, H, W, oh, ow, g);
  });
  return cols;
}

Tensor col2im(const Tensor& self, const Shape& output_size, const Shape& kernel_size, const Shape& dilation,
              const Shape& padding, const Shape& stride) {
  const auto size = conv_pair_arg("col2im", "output_size", output_size, 1);
  const int64_t H = size.first, W = size.second;
  const ConvGeometry g = conv_geometry("col2im", kernel_size, dilation, padding, stride);
  const int64_t oh = g.oh(H), ow = g.ow(W);
  const int64_t C = col2im_check("col2im", self, H, W, g, oh, ow);
  Tensor src = ops::contiguous(self);
  Tensor img = ember::empty({self->size(0), C, H, W}, self->dtype(), self->device());
  dispatch_device_type(self->dtype(), "col2im", [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_integral_v<T>) {
      launch_col2im<T>(src, img, H, W, oh, ow, g);
    } else {
      throw std::runtime_error(message("col2im: dtype ", dtype_name(self->dtype()), " is not supported"));
    }
  });
  return img;
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
                        const Shape& padding, const Shape& output_padding, int64_t groups, const Shape& dilation) {
  const char* op = "conv_transpose2d";
  const ConvTransposeMeta m = conv_transpose2d_meta(input, weight, bias, stride, padding, output_padding, groups,
                                                    dilation);
  if (conv_computes_in_float32(input->dtype())) {
    const ScalarType f32 = ScalarType::Float32;
    Tensor out = conv_transpose2d(conv_cast(input, f32), conv_cast(weight, f32), conv_cast(bias, f32), stride, padding,
                                  output_padding, groups, dilation);
    return conv_cast(out, input->dtype());
  }
  const ConvGeometry& g = m.g;
  const ScalarType dt = input->dtype();
  const Device dev = input->device();
  const int64_t G = groups, Cg = m.C / G, K = m.O / G * g.kh * g.kw, L = m.H * m.W;
  Tensor cols = ember::empty({m.N, G * K, L}, dt, dev);
  col2im_check(op, cols, m.OH, m.OW, g, m.H, m.W);
  Tensor out = ember::empty({m.N, m.O, m.OH, m.OW}, dt, dev);
  if (cols->numel() > 0) {
    if (Cg == 0) {
      ops::zero(cols, cols);
    } else {
      // columns (N, G, K, L): per group g, weight[g]^T (K x Cg) @ input[:, g] (Cg x L), batched over N
      Tensor x = ops::contiguous(input), w = ops::contiguous(weight);
      const int64_t item = static_cast<int64_t>(cols->itemsize());
      for (int64_t grp = 0; grp < G; ++grp) {
        gemm(op, dev, dt, K, L, Cg, 1.0, {w->data_ptr() + grp * Cg * K * item, K, true}, 0,
             {x->data_ptr() + grp * Cg * L * item, L, false}, m.C * L, 0.0, cols->data_ptr() + grp * K * L * item, L,
             G * K * L, m.N);
      }
    }
  }
  if (dt == ScalarType::Float64) {
    launch_col2im<double>(cols, out, m.OH, m.OW, m.H, m.W, g);
  } else {
    launch_col2im<float>(cols, out, m.OH, m.OW, m.H, m.W, g);
  }
  if (bias) ops::add(out, ops::view(bias, {m.O, 1, 1}), Scalar::from_int(1), out);
  return out;
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(conv_transpose2d);
EMBER_REGISTER_CUDA_KERNEL(im2col);
EMBER_REGISTER_CUDA_KERNEL(col2im);
