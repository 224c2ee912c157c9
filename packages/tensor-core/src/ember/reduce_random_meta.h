// What the reductions (with indices, and the accumulating ones: sum, mean, prod, all, any,
// var, std, norm, logsumexp), the scans, softmax, the random samplers, multinomial, arange,
// the binary ops (comparisons, maximum/minimum, pow, where, clamp, the divisions),
// masked_fill, tril / triu, linspace and eye check and compute the same way on every device:
// their argument checks (with PyTorch's messages and error types), dim wrapping, and the
// shape and dtype of their result. The CPU kernels (reduce.cpp, random.cpp, creation.cpp,
// binary.cpp, index.cpp, shape.cpp) and the CUDA kernels (cuda/kernels_reduce_random.cu,
// cuda/kernels_reduce.cu, cuda/kernels_more.cu, cuda/kernels_fill_triangle.cu) both call these
// and differ only in how they compute the values; reduce_random_meta.cpp defines them. Each
// raises in the order its comment lists the checks.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "ember/tensor.h"

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
AccumulateMeta all_any_meta(const char* op, const Tensor& self, const std::optional<Shape>& dim, bool keepdim);

struct VarStdMeta {
  std::vector<int64_t> dims;
  Shape shape;
  ScalarType dtype;  // self's (self is read as it is)
  double dof;        // the divisor of the sum of squared deviations, >= 0
};
// var / std (op): TypeError when both unbiased and correction are given, RuntimeError unless
// self is floating, reduce_dims(op, dim); dof = max(0, K - c) for K reduced elements and c the
// correction (else 0 when unbiased is False, else 1), with a UserWarning when dof <= 0.
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

struct ScanMeta {
  int64_t dim;             // wrapped; 0 for a 0-d self
  ScalarType dtype;        // the result's: dtype=, else int64 for bool and integers, else self's
  ScalarType input_dtype;  // dtype= when given, else self's: self is converted to it
};
// cumsum / cumprod (op): dim wrapped (IndexError naming op), then NotImplementedError for a
// bool result.
ScanMeta scan_meta(const char* op, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype);

struct MultinomialMeta {
  int64_t rows, cats;  // distributions (1 for a 1-D self) and categories
  Shape shape;         // the result's (int64)
};
// multinomial: RuntimeError unless self is 1-D or 2-D, num_samples > 0, there are categories,
// and without replacement num_samples <= categories. The weights themselves are checked by
// the kernels, row by row: throw_bad_multinomial_weight for the first element (in row-major
// order) that is negative, inf or NaN, throw_multinomial_zero_sum for a row without a
// positive weight, whichever comes first.
MultinomialMeta multinomial_meta(const Tensor& self, int64_t num_samples, bool replacement);
[[noreturn]] void throw_bad_multinomial_weight(double value, int64_t row, int64_t category);
[[noreturn]] void throw_multinomial_zero_sum(int64_t row);

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

// ---------------------------------------------------------------------------------------------
// random samplers (the values themselves: generator.h's counter scheme, random.cpp)

// A sampler for a dtype PyTorch has no kernel for: NotImplementedError ("\"op\" not
// implemented for 'Long'") unless t is floating.
void check_sampler_dtype(const char* op, ScalarType t);
// PyTorch's bounds check of random_(from, to) / randint: low and high - 1 must be integers
// dtype t holds exactly (RuntimeError; throw_dtype_unsupported for a dtype outside the ten).
void check_random_bounds(ScalarType t, int64_t low, int64_t high);

// rand / randn: the result's dtype (dtype=, else out's, else the default float dtype),
// checked by check_sampler_dtype(op).
ScalarType rand_meta(const char* op, std::optional<ScalarType> dtype, const Tensor& out);

struct RandintMeta {
  ScalarType dtype;  // the result's (dtype=, else int64)
  uint64_t range;    // high - low, > 0 (wrapping: the full int64 span fits)
};
// randint: RuntimeError unless low < high, then check_random_bounds.
RandintMeta randint_meta(int64_t low, int64_t high, std::optional<ScalarType> dtype);
// randperm: RuntimeError for n < 0, NotImplementedError for bool, RuntimeError when n - 1
// does not fit the dtype; returns the dtype (dtype=, else int64).
ScalarType randperm_meta(int64_t n, std::optional<ScalarType> dtype);

// The in-place fills' tensor to fill: out (self, from the binding), else a new tensor shaped
// like self (a functional call from C++), of self's dtype on self's device; allocated after
// the argument checks and before the dtype check.
// normal_: RuntimeError unless std >= 0; NotImplementedError unless the target is floating.
Tensor normal_meta(const Tensor& self, double std, const Tensor& out);
// uniform_: RuntimeError unless from <= to; NotImplementedError unless the target is floating.
Tensor uniform_meta(const Tensor& self, double from, double to, const Tensor& out);
// bernoulli_(p) with a float p: RuntimeError unless 0 <= p <= 1; any target dtype.
Tensor bernoulli_p_meta(const Tensor& self, double p, const Tensor& out);

// bernoulli's tensor of probabilities: NotImplementedError unless it is floating.
void check_probabilities_dtype(const char* op, const Tensor& p);
// RuntimeError: probability `value`, at flat index `index` of the broadcast probabilities, is
// outside [0, 1].
[[noreturn]] void throw_bad_probability(const char* op, double value, int64_t index);

// The next representable value of T below v (for float16 / bfloat16: +-0 steps to the
// smallest negative subnormal).
template <typename T> T step_down(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    T r = v;
    if ((r.bits & 0x7fffu) == 0) {
      r.bits = 0x8001u;  // +-0 -> the smallest negative subnormal
    } else if (r.bits & 0x8000u) {
      r.bits = static_cast<uint16_t>(r.bits + 1);  // negative: one ulp further from zero
    } else {
      r.bits = static_cast<uint16_t>(r.bits - 1);
    }
    return r;
  } else {
    return std::nextafter(v, -std::numeric_limits<T>::infinity());
  }
}

// uniform_(from, to) in dtype T (a host type: float, double, Half, BFloat16): a value is
// from + span * u computed in double and rounded to T; one that reaches `to` becomes `top`,
// the largest T below `to`, when clamp (span > 0 and top >= from).
template <typename T> struct UniformRange {
  double span;
  T top;
  bool clamp;
};
template <typename T> UniformRange<T> uniform_range(double from, double to) {
  const double span = to - from;
  const T top = step_down(convert<T>(to));
  const bool clamp = span > 0 && static_cast<double>(static_cast<opmath_t<T>>(top)) >= from;
  return {span, top, clamp};
}

// ---------------------------------------------------------------------------------------------
// arange

struct ArangeMeta {
  ScalarType dtype;      // dtype=, else out's, else int64 (all integers) or the default float dtype
  int64_t n;             // the length, >= 0
  bool all_int;          // start, end and step all integers: element i is a0 + i * si
  int64_t a0 = 0, si = 0;  // (all_int) the integer start and step
  double a, s;           // the start and step as doubles: else element i is a + i * s
};
// arange(start, end, step), or arange(end) when end is absent (start 0): RuntimeError for a
// zero step, a non-finite start or end, an end on the wrong side of start for the step's
// sign, or more than 2^62 (integers) / 4.6e18 (floats) elements. The dtype is not checked
// (bool: the kernels raise throw_dtype_unsupported's error after allocating the result).
ArangeMeta arange_meta(const Scalar& start, std::optional<Scalar> end, const Scalar& step,
                       std::optional<ScalarType> dtype, const Tensor& out);

// ---------------------------------------------------------------------------------------------
// binary ops: comparisons, logical and/or/xor, maximum / minimum, pow, where, clamp

struct BinaryMeta {
  ScalarType dtype;         // result_type(self, other): both operands are converted to it
  ScalarType result_dtype;  // dtype, or bool for the comparisons and logical ops
  Shape shape;              // the broadcast shape (RuntimeError naming op when none)
};
// eq / ne / lt / le / gt / ge / logical_and / logical_or / logical_xor (boolean_result) and
// maximum / minimum / max_other / min_other.
BinaryMeta binary_meta(const char* op, const Tensor& self, const Tensor& other, bool boolean_result);

struct PowMeta {
  ScalarType dtype;  // result_type(self, exponent): operands and result
  Shape shape;       // the broadcast shape (not set when result is)
  Tensor result;     // two bool operands: the result itself (self ** True == self, ** False == True)
};
// pow(self, exponent): for two bool operands NotImplementedError unless exponent is a wrapped
// Python number, which gives the result; an integer dtype with a negative Python-number
// exponent is a RuntimeError; then the broadcast shape.
PowMeta pow_meta(const Tensor& self, const Tensor& exponent);

struct WhereMeta {
  ScalarType dtype;  // result_type(input, other)
  Shape shape;       // condition, input and other broadcast together
};
// where: RuntimeError unless condition is bool (or uint8), then dtype and shape.
WhereMeta where_meta(const Tensor& condition, const Tensor& input, const Tensor& other);

struct ClampMeta {
  ScalarType dtype;  // result_type(self, min, max): operands and result
  Shape shape;       // self broadcast with the bounds given
};
// clamp(self, min, max): RuntimeError unless a bound is given; clamp_ (out is self) of an
// integer self with a floating bound is a RuntimeError; then dtype and shape.
ClampMeta clamp_meta(const Tensor& self, const Tensor& min, const Tensor& max, const Tensor& out);


// ---------------------------------------------------------------------------------------------
// division with integer checks, masked_fill, tril / triu, linspace, eye

// floor_divide, div with a rounding mode (op "floor_divide" or "div"), remainder and fmod:
// dtype result_type(self, other), which both operands are converted to; RuntimeError naming op
// for two bool operands; for an integer dtype, RuntimeError "ZeroDivisionError: op: integer
// division by zero" when `other` converted to it holds a zero; then the broadcast shape
// (RuntimeError naming op). Only a CPU `other` is read for the zero check: on the CPU every
// operand, among CUDA operands a Python number or a CPU 0-d tensor. A divisor on a device is
// not read (that would synchronise): its zeros give 0 (cuda/kernels_more.cu).
BinaryMeta division_meta(const char* op, const Tensor& self, const Tensor& other);

// masked_fill (out null) / masked_fill_ (out is self): RuntimeError unless mask is bool, unless
// value is 0-d; when value is a CPU tensor, PyTorch's overflow check of it against self's dtype
// (a value on a device is converted without it: reading it would synchronise). Returns the
// result's shape, self and mask broadcast (RuntimeError naming "masked_fill" when they do not),
// which masked_fill_ requires to be self's shape (RuntimeError).
Shape masked_fill_meta(const Tensor& self, const Tensor& mask, const Tensor& value, const Tensor& out);

// tril / triu (op): RuntimeError unless self has at least 2 dims, then unless out (when given)
// has self's dtype.
void check_triangle(const char* op, const Tensor& self, const Tensor& out);

// linspace: RuntimeError for steps < 0. Returns the dtype: dtype=, else out's, else the default
// float dtype (not checked here: bool raises in the kernels, after the result is allocated).
ScalarType linspace_meta(int64_t steps, std::optional<ScalarType> dtype, const Tensor& out);

struct EyeMeta {
  int64_t cols;      // m, else n
  ScalarType dtype;  // dtype=, else out's, else the default float dtype
};
// eye(n, m): RuntimeError unless n and m are non-negative.
EyeMeta eye_meta(int64_t n, std::optional<int64_t> m, std::optional<ScalarType> dtype, const Tensor& out);

}  // namespace ember
