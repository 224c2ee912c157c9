// What the reductions with indices, softmax, the random samplers, arange and the binary
// ops (comparisons, maximum/minimum, pow, where, clamp) check and compute the same way on
// every device: their argument checks (with PyTorch's messages and error types), dim
// wrapping, and the shape and dtype of their result. The CPU kernels (reduce.cpp,
// random.cpp, creation.cpp, binary.cpp) and the CUDA kernels (cuda/kernels_reduce_random.cu,
// cuda/kernels_more.cu) both call these and differ only in how they compute the values;
// reduce_random_meta.cpp defines them. Each raises in the order its comment lists the checks.
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

}  // namespace ember
