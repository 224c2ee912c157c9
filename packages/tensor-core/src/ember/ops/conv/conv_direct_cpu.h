// Blocked direct convolution for float32, stride 1, dilation 1, groups 1 on AVX-512 CPUs
// (conv_direct_cpu.cpp; measured against im2col + GEMM in docs/conv-algorithms.md). conv_cpu.cpp asks
// direct_*_suits() first and keeps im2col + GEMM for everything else.
#pragma once

#include <cstdint>

namespace ember::cpu {

// A stride-1 convolution of x (N, C, H, W) with w (O, C, kh, kw), padding (ph, pw):
// output (N, O, H + 2ph - kh + 1, W + 2pw - kw + 1).
struct DirectConvShape {
  int64_t N, C, H, W, O, kh, kw, ph, pw;
  int64_t oh() const { return H + 2 * ph - kh + 1; }
  int64_t ow() const { return W + 2 * pw - kw + 1; }
};

// Whether the direct kernel runs (and wins, by the study's numbers) for this forward
// convolution / its backward-data / its backward-weight on this CPU. The caller has checked
// float32, stride 1, dilation 1, groups 1. EMBER_CONV_DIRECT=0 turns the direct path off.
bool direct_forward_suits(const DirectConvShape& s);
bool direct_backward_input_suits(const DirectConvShape& s);
bool direct_backward_weight_suits(const DirectConvShape& s);

// y (N, O, oh, ow) = conv(x, w) (+ bias (O,) when not null); all contiguous.
void direct_conv2d_forward(const DirectConvShape& s, const float* x, const float* w, const float* bias, float* y);
// gx (N, C, H, W) = the gradient of the forward above for gy (N, O, oh, ow).
void direct_conv2d_backward_input(const DirectConvShape& s, const float* gy, const float* w, float* gx);
// gw (O, C, kh, kw) = the gradient of the forward above for gy (N, O, oh, ow) and input x.
void direct_conv2d_backward_weight(const DirectConvShape& s, const float* gy, const float* x, float* gw);

}  // namespace ember::cpu
