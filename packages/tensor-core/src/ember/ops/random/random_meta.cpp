// The meta functions declared in random_meta.h.
#include "ember/ops/random/random_meta.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>

#include "ember/ops/index/indexing.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"

namespace ember {

MultinomialMeta multinomial_meta(const Tensor& self, int64_t num_samples, bool replacement) {
  const int64_t dim = self->dim();
  if (dim < 1 || dim > 2) throw std::runtime_error(message("multinomial: prob_dist must be 1 or 2 dim, got ", dim));
  if (num_samples <= 0) {
    throw std::runtime_error(message("multinomial: cannot sample n_sample <= 0 samples (got ", num_samples, ")"));
  }
  MultinomialMeta M;
  M.rows = dim == 1 ? 1 : self->size(0);
  M.cats = self->size(dim - 1);
  if (M.cats == 0) throw std::runtime_error("multinomial: number of categories cannot be zero");
  if (!replacement && num_samples > M.cats) {
    throw std::runtime_error(message("multinomial: cannot sample n_sample > prob_dist.size(-1) samples without "
                                     "replacement (n_sample=", num_samples, ", categories=", M.cats, ")"));
  }
  M.shape = dim == 1 ? Shape{num_samples} : Shape{M.rows, num_samples};
  return M;
}

void throw_bad_multinomial_weight(double value, int64_t row, int64_t category) {
  throw std::runtime_error(message("multinomial: probability tensor contains either `inf`, `nan` or element < 0 "
                                   "(", value, " in row ", row, ", category ", category, ")"));
}

void throw_multinomial_zero_sum(int64_t row) {
  throw std::runtime_error(
      message("multinomial: invalid multinomial distribution (sum of probabilities <= 0) in row ", row));
}

// ---------------------------------------------------------------------------------------------
// random samplers

void check_sampler_dtype(const char* op, ScalarType t) {
  if (!is_floating(t)) {
    throw NotImplementedError(message("\"", op, "\" not implemented for '", scalar_type_name(t), "'"));
  }
}

void check_random_bounds(ScalarType t, int64_t low, int64_t high) {
  double lo, hi;  // inclusive limits
  double exact = 0;  // floats: the largest magnitude up to which every integer is exact
  switch (t) {
    case ScalarType::Bool: lo = 0; hi = 1; break;
    case ScalarType::UInt8: lo = 0; hi = 255; break;
    case ScalarType::Int8: lo = -128; hi = 127; break;
    case ScalarType::Int16: lo = -32768; hi = 32767; break;
    case ScalarType::Int32: lo = -2147483648.0; hi = 2147483647.0; break;
    case ScalarType::Int64: return;
    case ScalarType::UInt16: lo = 0; hi = 65535; break;
    case ScalarType::UInt32: lo = 0; hi = 4294967295.0; break;
    case ScalarType::UInt64: lo = 0; hi = 18446744073709551615.0; break;  // bounds are int64s
    // floats: PyTorch refuses bounds beyond the dtype's range and warns beyond its exact integers
    case ScalarType::Float16: lo = -65504; hi = 65504; exact = 2048; break;
    case ScalarType::BFloat16: lo = -3.3895313892515355e38; hi = 3.3895313892515355e38; exact = 256; break;
    case ScalarType::Float32: lo = -3.4028234663852886e38; hi = 3.4028234663852886e38; exact = 16777216.0; break;
    case ScalarType::Float64: lo = -1.7976931348623157e308; hi = 1.7976931348623157e308; exact = 9007199254740992.0; break;
    default: throw_dtype_unsupported("randint", t, "any");
  }
  if (static_cast<double>(low) < lo || static_cast<double>(low) > hi) {
    throw std::runtime_error(message("randint: from is out of bounds for ", dtype_name(t), " (from=", low, ")"));
  }
  if (static_cast<double>(high - 1) < lo || static_cast<double>(high - 1) > hi) {
    throw std::runtime_error(message("randint: to - 1 is out of bounds for ", dtype_name(t), " (to=", high, ")"));
  }
  for (const auto& [name, v] : {std::pair<const char*, double>{"from", static_cast<double>(low)},
                                {"to - 1", static_cast<double>(high - 1)}}) {
    if (exact && std::abs(v) > exact) {
      warn_user(message("randint: ", name, " is out of bounds [-", exact, ", ", exact, "], where every integer is "
                        "exact in ", dtype_name(t), ": the values drawn are rounded to ", dtype_name(t)));
    }
  }
}

ScalarType rand_meta(const char* op, std::optional<ScalarType> dtype, const Tensor& out) {
  const ScalarType dt = dtype.value_or(out ? out->dtype() : default_float_dtype());
  check_sampler_dtype(op, to_real(dt));  // complex: both parts sampled
  return dt;
}

RandintMeta randint_meta(int64_t low, int64_t high, std::optional<ScalarType> dtype) {
  if (low >= high) {
    throw std::runtime_error(
        message("random_ expects 'from' to be less than 'to', but got from=", low, " >= to=", high));
  }
  const ScalarType dt = dtype.value_or(ScalarType::Int64);
  check_random_bounds(dt, low, high);
  return {dt, static_cast<uint64_t>(high) - static_cast<uint64_t>(low)};
}

ScalarType randperm_meta(int64_t n, std::optional<ScalarType> dtype) {
  if (n < 0) throw std::runtime_error(message("randperm: n must be non-negative, got ", n));
  const ScalarType dt = dtype.value_or(ScalarType::Int64);
  if (dt == ScalarType::Bool) {
    throw NotImplementedError("\"randperm\" not implemented for 'Bool'");
  }
  if (n > 0) {
    try {
      check_random_bounds(dt, 0, n);
    } catch (const std::runtime_error&) {
      throw std::runtime_error(message("randperm: n is too large for result tensor type: '",
                                       scalar_type_name(dt), "' (n=", n, ")"));
    }
  }
  return dt;
}

namespace {

// The tensor an in-place fill writes: out, else a new tensor shaped like self.
Tensor fill_target(const Tensor& self, const Tensor& out) {
  return out ? out : ember::empty(self->sizes(), self->dtype(), self->device());
}

}  // namespace

Tensor normal_meta(const Tensor& self, double std, const Tensor& out) {
  if (!(std >= 0.0)) throw std::runtime_error(message("normal expects std >= 0.0, but found std ", std));
  Tensor target = fill_target(self, out);
  check_sampler_dtype("normal", target->dtype());
  return target;
}

Tensor uniform_meta(const Tensor& self, double from, double to, const Tensor& out) {
  if (!(from <= to)) {
    throw std::runtime_error(
        message("uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to));
  }
  Tensor target = fill_target(self, out);
  check_sampler_dtype("uniform", target->dtype());
  if (is_floating(target->dtype())) {  // PyTorch's bounds: finite values of the dtype
    const double top = finite_max(target->dtype());
    for (auto [name, v] : {std::pair<const char*, double>{"from", from}, {"to", to}}) {
      if (!(v >= -top && v <= top)) {
        throw std::runtime_error(message(name, " is out of bounds for ", convert_type_name(target->dtype())));
      }
    }
  }
  return target;
}

Tensor bernoulli_p_meta(const Tensor& self, double p, const Tensor& out) {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw std::runtime_error(message("bernoulli_ expects p to be in [0, 1], but got p=", p));
  }
  return fill_target(self, out);
}

void check_probabilities_dtype(const char* op, const Tensor& p) {
  if (p->dtype() == ScalarType::Bool || !is_floating(p->dtype())) {
    throw NotImplementedError(message("\"", op, "\" not implemented for '", scalar_type_name(p->dtype()),
                                      "' probabilities"));
  }
}

void throw_bad_probability(const char* op, double value, int64_t index) {
  throw std::runtime_error(message(op, ": expected all probabilities p to satisfy 0 <= p <= 1, but got ", value,
                                   " at flat index ", index));
}

}  // namespace ember
