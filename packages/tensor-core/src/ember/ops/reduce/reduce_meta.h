// Meta functions of the reductions (with indices, and the accumulating ones: sum, mean, prod,
// all, any, var, std, norm, logsumexp), the scans and softmax.
//
// A meta function is the part of an op that does not depend on the device: its argument
// checks (PyTorch's errors, types and messages, in PyTorch's order), dim wrapping, and the
// shape and dtype of its result. The CPU kernels (reduce_cpu.cpp) and the CUDA kernels (reduce_cuda.cu, softmax_extremes_cuda.cu) call
// them first and differ only in how they compute the values; reduce_meta.cpp defines them.
// Each raises in the order its comment lists the checks.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

// ---------------------------------------------------------------------------------------------
// max / min (all and along a dim), amax / amin, argmax / argmin

// The reduced dims and the result of a reduction.
struct ReductionMeta {
  std::vector<int64_t> dims;  // the reduced dims: wrapped, increasing, distinct
  Shape shape;                // the result's shape (the reduced dims dropped, or kept as 1)
  ScalarType dtype;           // the result's dtype (max_dim / min_dim: the values'; the indices are int64)
};

// [0, 1, ..., ndim - 1].
std::vector<int64_t> reduction_all_dims(int64_t ndim);

// max/min/argmax style reductions have no identity: for an empty self, raises when no dim
// was given (dims_given false: IndexError when index_error_when_unspecified, else
// RuntimeError) or when one of dims has size 0 (IndexError). Nothing for a non-empty self.
void check_reduction_nonempty(const char* op, const Tensor& self, const std::vector<int64_t>& dims, bool dims_given,
                              bool index_error_when_unspecified);

// max() / min() of every element: all dims reduced, a 0-d result of self's dtype; raises for
// an empty self.
ReductionMeta extreme_all_meta(const char* op, const Tensor& self);
// max(dim) / min(dim): dim wrapped (IndexError naming op), no dim reduced for a 0-d self;
// raises for an empty reduced dim. dtype is self's (the values).
ReductionMeta extreme_dim_meta(const char* op, const Tensor& self, int64_t dim, bool keepdim);
// argmax / argmin: RuntimeError for a bool self; dim wrapped when given (no dim reduced for a
// 0-d self), else every dim; raises for an empty reduction. dtype int64.
ReductionMeta arg_extreme_meta(const char* op, const Tensor& self, std::optional<int64_t> dim, bool keepdim);
// amax / amin: reduce_dims(op, dim) (every dim when empty); raises for an empty reduction.
// dtype is self's.
ReductionMeta amax_amin_meta(const char* op, const Tensor& self, const Shape& dim, bool keepdim);

// ---------------------------------------------------------------------------------------------
// sum / mean / prod, logsumexp, all / any, var / std, norm, cumsum / cumprod, multinomial

// A reduction that accumulates: the dims it reduces, its result, and the dtype self is
// converted to before its values are read.
struct AccumulateMeta {
  std::vector<int64_t> dims;  // wrapped, increasing, distinct
  Shape shape;                // the result's shape
  ScalarType dtype;           // the result's dtype
  ScalarType input_dtype;     // the dtype self is converted to
};

// sum: reduce_dims("sum", dim) (every dim when absent or empty); self converted to dtype=
// when given, which is the result's dtype; else int64 for bool and integers, self's otherwise.
AccumulateMeta sum_meta(const Tensor& self, const std::optional<Shape>& dim, bool keepdim,
                        std::optional<ScalarType> dtype);
// mean: RuntimeError unless dtype= (else self's dtype) is floating, then reduce_dims("mean",
// dim); self converted to that dtype, the result's.
AccumulateMeta mean_meta(const Tensor& self, const std::optional<Shape>& dim, bool keepdim,
                         std::optional<ScalarType> dtype);
// prod: dim wrapped (IndexError naming prod) when given, else every dim; none for a 0-d self.
// dtypes as sum's.
AccumulateMeta prod_meta(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
                         std::optional<ScalarType> dtype);
// logsumexp: reduce_dims("logsumexp", dim); self converted to the default float dtype unless
// floating; the result has the converted dtype.
AccumulateMeta logsumexp_meta(const Tensor& self, const Shape& dim, bool keepdim);
// all / any (op): dim absent reduces every dim, an empty list none, else reduce_dims(op, dim);
// the result is uint8 for a uint8 self, else bool; self read as it is.
// out (may be null) must be bool or uint8: PyTorch's error otherwise.
AccumulateMeta all_any_meta(const char* op, const Tensor& self, const std::optional<Shape>& dim, bool keepdim,
                            const Tensor& out);

struct VarStdMeta {
  std::vector<int64_t> dims;
  Shape shape;
  ScalarType dtype;  // self's (self is read as it is)
  double dof;        // the divisor of the sum of squared deviations, >= 0
};
// var / std (op): TypeError when both unbiased and correction are given, RuntimeError unless
// self is floating, reduce_dims(op, dim); dof = max(0, K - c) for K reduced elements and c the
// correction (else 0 when unbiased is False, else 1), with a UserWarning when K - c <= 0;
// dof = 0 when K = 0 (the result is NaN).
VarStdMeta var_std_meta(const char* op, const Tensor& self, const std::optional<Shape>& dim,
                        std::optional<bool> unbiased, bool keepdim, std::optional<Scalar> correction);

enum class NormKind { L2, L1, Inf, NegInf, L0, General };
struct VectorNormMeta {
  std::vector<int64_t> dims;
  Shape shape;
  ScalarType dtype;  // dtype=, else self's: self is converted to it, the result has it
  double p;
  NormKind kind;
};
// norm (linalg.vector_norm's messages): RuntimeError unless self is floating, unless dtype= is
// a floating dtype self promotes to, for a NaN p; reduce_dims("norm", dim); for p < 0 or
// infinite (no identity) RuntimeError when the reduction is empty.
VectorNormMeta vector_norm_meta(const Tensor& self, const Scalar& p, const std::optional<Shape>& dim, bool keepdim,
                                std::optional<ScalarType> dtype);
// The norm where every result reduces one element (norm_generic.cpp): |x| in M.dtype (x != 0
// for p = 0), as PyTorch's norms give it; nullopt for any other reduction.
std::optional<Tensor> norm_of_single_elements(const Tensor& self, const VectorNormMeta& M);

struct ScanMeta {
  int64_t dim;             // wrapped; 0 for a 0-d self
  ScalarType dtype;        // the result's: dtype=, else int64 for bool and integers, else self's
  ScalarType input_dtype;  // dtype= when given, else self's: self is converted to it
};
// cumsum / cumprod (op): dim wrapped (IndexError naming op), then NotImplementedError for a
// bool result. A real float out= without dtype= sets the dtype the scan runs in.
ScanMeta scan_meta(const char* op, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype,
                   const Tensor& out);


// ---------------------------------------------------------------------------------------------
// softmax / log_softmax and their backward

// A contiguous tensor seen as [O, K, I] around dim d: O the product of the sizes before d, K
// the size of d, I the product of those after.
struct DimSplit {
  int64_t O = 1, K = 1, I = 1;
};
DimSplit split_around_dim(const Shape& sizes, int64_t d);

struct SoftmaxMeta {
  int64_t dim;       // the dim normalised along, wrapped; 0 for a 0-d tensor
  ScalarType dtype;  // the result's dtype, the one the values are computed in
};
// softmax / log_softmax: dim wrapped (IndexError naming op); dtype= (else self's) is the
// result's dtype, which self is converted to; NotImplementedError when it is not floating and
// self has elements (an empty self gives an empty result of that dtype).
SoftmaxMeta softmax_meta(const char* op, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype);
// _softmax_backward_data / _log_softmax_backward_data: RuntimeError unless grad_output and
// output have one shape and dtype, NotImplementedError unless it is floating, then dim
// wrapped. The result has output's shape and dtype.
SoftmaxMeta softmax_backward_meta(const char* op, const Tensor& grad_output, const Tensor& output, int64_t dim);

}  // namespace ember
