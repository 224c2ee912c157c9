// Meta functions of _lstm_forward_ and _lstm_backward_: the checks of the tensors the caller
// provides (shapes, one float32/float64 dtype, contiguity; the CPU kernel's messages and
// order) and the sizes. rnn_meta.cpp defines them; the CPU kernels (rnn_cpu.cpp) and the
// CUDA kernels (rnn_cuda.cu) call them.
#pragma once

#include <cstdint>

#include "ember/core/tensor.h"

namespace ember {

struct LstmDims {
  int64_t steps, N, H;  // x_proj / acts / d_gates are (steps, N, 4H); states (N, H)
};

LstmDims lstm_forward_meta(const Tensor& x_proj, const Tensor& h0, const Tensor& c0, const Tensor& w_hh,
                           const Tensor& acts, const Tensor& cells, const Tensor& outs);
LstmDims lstm_backward_meta(const Tensor& acts, const Tensor& cells, const Tensor& c0, const Tensor& w_hh,
                            const Tensor& d_outs, const Tensor& dh, const Tensor& dc, const Tensor& d_gates);

}  // namespace ember
