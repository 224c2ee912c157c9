// Meta functions of embedding, embedding_dense_backward, nll_loss and gelu.
//
// A meta function is the part of an op that does not depend on the device: it checks the
// arguments (PyTorch's errors, types and messages, in PyTorch's order), wraps dims and
// computes the result's shape and dtype. The CPU and CUDA kernels of the family call them
// first, so that only the compute differs between devices. They read sizes, strides, dtypes
// and flags, never element data, so they run on tensors of any device; device checks stay in
// the kernels. Values (indices) are checked by the kernels, which throw the errors declared
// here.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

// ---------------------------------------------------------------------------- embedding

// embedding's checks: a 2-d weight, int32/int64 indices. Returns the result's shape,
// indices.shape + (weight.size(1),), of weight's dtype; indices must lie in
// [0, weight.size(0)) (throw_embedding_index_out_of_range).
Shape embedding_meta(const Tensor& weight, const Tensor& indices);
// IndexError "index out of range in self" (embedding and its backward).
[[noreturn]] void throw_embedding_index_out_of_range();

// embedding_dense_backward's checks: int32/int64 indices, num_weights >= 0, grad_output of
// shape indices.shape + (D,). Returns the result's shape (num_weights, D), of grad_output's
// dtype.
Shape embedding_dense_backward_meta(const Tensor& grad_output, const Tensor& indices, int64_t num_weights);

// The positions 0 .. n-1 of the indices idx grouped by index (a stable counting sort), as
// both devices sum the gradient rows: order[start[r] .. start[r + 1]) are the positions of
// row r, in increasing order; start has num_weights + 1 entries. An index outside
// [0, num_weights) throws throw_embedding_index_out_of_range's error.
void group_positions_by_index(const int64_t* idx, int64_t n, int64_t num_weights, std::vector<int64_t>& start,
                              std::vector<int64_t>& order);

// ------------------------------------------------------------------------------ nll_loss

// Terms per partial sum of nll_loss's reductions: the sums are taken in double over blocks of
// this many terms, then over the blocks, on every device (results independent of threads).
constexpr int64_t kNllLossBlock = 4096;

struct NllLossMeta {
  int64_t C;        // classes
  int64_t N;        // batch (1 for a 1-d input)
  int64_t S;        // positions per sample (the product of the dims after C; 1 for <= 2 dims)
  int64_t T;        // targets: N * S
  Shape out_shape;  // target's shape without reduction, else () ; of self's dtype
};

// nll_loss's checks: reduction 0, 1 or 2; input (C), (N, C) or (N, C, d1, ...) with target
// (), (N) or (N, d1, ...); an int64 or uint8 target; weight (if given) of C elements and
// self's dtype. Element (n, s) of target reads class c at input[(n * C + c) * S + s]
// (contiguous); targets other than ignore_index must lie in [0, C)
// (throw_nll_loss_target_out_of_bounds).
NllLossMeta nll_loss_meta(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction);
// IndexError "Target <target> is out of bounds."
[[noreturn]] void throw_nll_loss_target_out_of_bounds(int64_t target);

// ---------------------------------------------------------------------------------- gelu

// gelu's (and gelu_backward's) approximate argument: true for "tanh", false for "none";
// anything else is PyTorch's RuntimeError "approximate argument must be either none or tanh."
bool gelu_uses_tanh(const std::string& approximate);

}  // namespace ember
