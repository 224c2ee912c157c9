// Meta functions of the random samplers and multinomial.
//
// A meta function is the part of an op that does not depend on the device: its argument
// checks (PyTorch's errors, types and messages, in PyTorch's order), dim wrapping, and the
// shape and dtype of its result. The CPU kernels (random_cpu.cpp) and the CUDA kernels (random_cuda.cu) call
// them first and differ only in how they compute the values; random_meta.cpp defines them.
// Each raises in the order its comment lists the checks.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

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
// random samplers (the values themselves: generator.h's counter scheme, random_cpu.cpp)

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

}  // namespace ember
