// Meta functions of the index and nn ops: cat, gather, scatter, scatter_add, index_select,
// index_add, embedding, embedding_dense_backward, nll_loss, native_layer_norm and
// native_layer_norm_backward.
//
// A meta function is the part of an op that does not depend on the device: it checks the
// arguments (PyTorch's errors, types and messages, in PyTorch's order), wraps dims and
// computes the result's shape and dtype. The CPU kernels (shape.cpp, index.cpp, nn_ops.cpp,
// norms.cpp) and the CUDA kernels (cuda/kernels_index_nn.cu) call them first, so that only
// the compute differs between devices. They read sizes, strides, dtypes and flags, never
// element data, so they run on tensors of any device; device checks stay in the kernels.
//
// Index values themselves are checked by the kernels (on the CPU in its loops, on CUDA on the
// device), which then throw the errors declared here.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "ember/tensor.h"

namespace ember {

// ------------------------------------------------------------------------ shared helpers

// A 0-d tensor seen as shape [1] (gather/scatter/index ops treat 0-d tensors as 1-d); any
// other tensor is returned as it is.
Tensor at_least_1d(const Tensor& t);

// t's data seen with `sizes` (each <= t's size) and t's strides, with the stride of dim
// zero_dim set to 0 (none when zero_dim < 0).
Tensor restride(const Tensor& t, const Shape& sizes, int64_t zero_dim);

// The tensor an op computes into: out when it is contiguous with `shape` and `dtype` and
// shares storage with none of `inputs` (null entries are skipped), else a fresh contiguous
// tensor on `device`. Does not check out's device.
Tensor out_or_fresh(const Tensor& out, const Shape& shape, ScalarType dtype, const Device& device,
                    std::initializer_list<const Tensor*> inputs);

// RuntimeError "<op>: index <bad> is out of bounds for dimension <dim> with size <size>"
// (op as PyTorch names it: "gather()", "scatter_add()", "index_add_()").
[[noreturn]] void throw_index_out_of_bounds(const char* op, int64_t bad, int64_t dim, int64_t size);

// ------------------------------------------------------------------------------------- cat

struct CatMeta {
  std::vector<const Tensor*> used;  // the inputs concatenated, in order (see cat_meta)
  ScalarType dtype;                 // all inputs' dtypes promoted
  Shape shape;                      // the result's shape
  int64_t dim;                      // the wrapped dim (0 when every input was skipped)
};

// cat's checks and result: a non-empty list (ValueError), no 0-d tensor, 1-d empty tensors
// skipped whatever the other inputs (legacy; with only such tensors the result is [0] and
// dim is not checked), the others of one number of dims and equal sizes outside dim, and the
// promoted dtype castable to out's (TypeError) when out is given. Pointers in `used` point
// into `tensors`.
CatMeta cat_meta(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out);

// What cat writes into: out when it has m's shape and dtype (any strides) and shares storage
// with none of `tensors`, else a fresh contiguous tensor on `device`.
Tensor cat_result(const std::vector<Tensor>& tensors, const Tensor& out, const CatMeta& m, const Device& device);

// --------------------------------------------------------------------- gather and scatter

// gather's checks: dim wrapped against self; when index has elements, an int32/int64 index
// of self's number of dims (0-d counting as 1-d) no larger than self outside dim; out (if
// given) of self's dtype. Returns the wrapped dim. The result has index's shape and self's
// dtype; indices must lie in [0, at_least_1d(self).size(dim)) (throw_index_out_of_bounds
// with "gather()").
int64_t gather_meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out);

// The checks of scatter (op "scatter") and scatter_add (op "scatter_add"): dim wrapped
// against self; an int32/int64 index when it has elements; src of self's dtype unless
// src_is_value (a wrapped number); when index has elements, index, self and src (unless a
// value) of one number of dims and index no larger than self outside dim nor than src.
// Returns the wrapped dim. The result has self's shape and dtype; indices must lie in
// [0, at_least_1d(self).size(dim)) (throw_index_out_of_bounds with "<op>()").
int64_t scatter_meta(const char* op, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                     bool src_is_value);

// --------------------------------------------------------------------------- index_select

struct IndexSelectMeta {
  int64_t dim;   // wrapped
  Shape shape;   // self's shape with index.numel() at dim
  int64_t size;  // the bound of the indices: at_least_1d(self).size(dim)
};

// index_select's checks before its indices are read: dim wrapped, a 0-d or 1-d index
// (IndexError), int32/int64, and exactly one index for a 0-d self.
IndexSelectMeta index_select_meta(const Tensor& self, int64_t dim, const Tensor& index);
// IndexError "index_select(): index out of range in self" (an index outside [0, size)).
[[noreturn]] void throw_index_select_out_of_range();
// index_select's out= check, made after the indices: out (if given) of self's dtype.
void check_index_select_out(const Tensor& self, const Tensor& out);

// ------------------------------------------------------------------------------ index_add

// index_add's checks: dim wrapped, a 0-d or 1-d int32/int64 index, source of self's dtype
// with index.numel() entries along dim and self's sizes elsewhere. Returns the wrapped dim.
// The result has self's shape and dtype.
int64_t index_add_meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
// Whether index_add has nothing to add and reads no index: no index, an empty source, or an
// empty self (PyTorch skips the index check then, except in its 1-d kernel with alpha != 1).
bool index_add_is_noop(const Tensor& self, const Tensor& index, const Tensor& source, const Scalar& alpha);
// The error of an index `bad` outside [0, size) along dim (wrapped): RuntimeError from
// throw_index_out_of_bounds where PyTorch goes through index_put (alpha 1, not bool, first or
// last of >= 2 dims), else IndexError "index_add_(): index out of range in self".
[[noreturn]] void throw_index_add_out_of_range(const Tensor& self, int64_t dim, const Scalar& alpha, int64_t bad,
                                               int64_t size);

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

// ---------------------------------------------------------------------------- layer norm

struct LayerNormMeta {
  int64_t K;         // elements per row: the product of normalized_shape
  int64_t R;         // rows: the product of the leading dims of input
  Shape stat_shape;  // mean's and rstd's shape: the leading dims, then one 1 per normalized dim
};

// Parameters of a normalization (weight, bias, running statistics) share the input's dtype,
// or are float32 for a 16-bit float input; RuntimeError "mixed dtype (CPU): ..." otherwise.
// A null p passes.
void check_norm_param_dtype(const Tensor& input, const Tensor& p);
// A parameter whose values are read (as doubles) must be of a floating dtype unless it is
// empty or null: throw_dtype_unsupported("normalization", ...) otherwise.
void check_norm_param_readable(const Tensor& t);
// A normalization backward's grad_out has the input's sizes and dtype (op names the op).
void check_norm_grad_out(const char* op, const Tensor& grad_out, const Tensor& input);

// native_layer_norm's checks: a non-empty normalized_shape, weight and bias (if given) of
// that shape, an input whose sizes end with it, the parameters' dtypes
// (check_norm_param_dtype) and readability. The output has input's shape and dtype, mean and
// rstd stat_shape and input's dtype.
LayerNormMeta native_layer_norm_meta(const Tensor& input, const Shape& normalized_shape, const Tensor& weight,
                                     const Tensor& bias);

// native_layer_norm_backward's checks: grad_out (check_norm_grad_out), an input ending with
// a non-empty normalized_shape, mean and rstd of R elements and weight (if given) of K, all
// readable. grad_input has input's shape and dtype; grad_weight / grad_bias have
// normalized_shape and the weight's / bias's dtype when those are given, else are (0,) of
// input's dtype.
LayerNormMeta native_layer_norm_backward_meta(const Tensor& grad_out, const Tensor& input,
                                              const Shape& normalized_shape, const Tensor& mean, const Tensor& rstd,
                                              const Tensor& weight);

}  // namespace ember
