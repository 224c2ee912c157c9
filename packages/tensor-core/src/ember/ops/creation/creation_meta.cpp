// The meta functions declared in creation_meta.h.
#include "ember/ops/creation/creation_meta.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "ember/ops/index/indexing.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"

namespace ember {

// ---------------------------------------------------------------------------------------------
// arange

ArangeMeta arange_meta(const Scalar& start, std::optional<Scalar> end, const Scalar& step,
                       std::optional<ScalarType> dtype, const Tensor& out) {
  Scalar lo = end ? start : Scalar::from_int(0);
  Scalar hi = end ? *end : start;
  Scalar st = step;
  for (const Scalar* v : {&lo, &hi, &st}) {  // a Python int beyond int64: PyTorch's error, not a wrapped bound
    if (v->unsigned64) check_fill_value(ScalarType::Int64, *v);
  }
  ArangeMeta M;
  M.all_int = !lo.is_float() && !hi.is_float() && !st.is_float();
  M.dtype = dtype.value_or(out ? out->dtype() : (M.all_int ? ScalarType::Int64 : default_float_dtype()));
  if (st.to_double() == 0) throw std::runtime_error("arange: step must be nonzero");
  if (!std::isfinite(lo.to_double()) || !std::isfinite(hi.to_double())) {
    throw std::runtime_error("arange: unsupported range: start and end must be finite");
  }
  // PyTorch's length of a non-integer range with an integer dtype: from the given values for
  // the narrow integer dtypes, from the truncated ones (below) for int64
  // the step's sign against the bounds as given (before an integer dtype truncates them), as PyTorch's
  {
    const double s0 = st.to_double(), a0 = lo.to_double(), b0 = hi.to_double();
    if ((s0 > 0 && b0 < a0) || (s0 < 0 && b0 > a0)) {
      throw std::runtime_error("upper bound and lower bound inconsistent with step sign");
    }
  }
  const double fractional_length = std::ceil((hi.to_double() - lo.to_double()) / st.to_double());
  const bool narrow = !M.all_int && !is_floating(M.dtype) && M.dtype != ScalarType::Bool;
  if (narrow) {
    // an integer dtype: start, end and step are truncated to integers first, as PyTorch (and
    // NumPy) do (0, 3.5, 1.5 -> 0, 3, 1: [0, 1, 2]); a value beyond int64 (an infinite step)
    // is PyTorch's overflow error, never an undefined conversion
    for (const Scalar* v : {&lo, &hi, &st}) check_fill_value(ScalarType::Int64, *v);
    lo = Scalar::from_int(lo.to_int());
    hi = Scalar::from_int(hi.to_int());
    st = Scalar::from_int(st.to_int());
    if (M.dtype == ScalarType::Int64 && st.i == 0) throw ValueError("arange: step must be nonzero");
    M.all_int = true;  // (a narrower dtype with a step truncated to 0 repeats start, as PyTorch)
  }
  const double s = st.to_double(), a = lo.to_double(), b = hi.to_double();
  int64_t n;
  if (narrow && M.dtype != ScalarType::Int64) {
    if (!(fractional_length < 4.6e18)) throw std::runtime_error("arange: the range has too many elements");
    n = static_cast<int64_t>(std::max(fractional_length, 0.0));
    M.a0 = lo.to_int();
    M.si = st.to_int();
  } else if (M.all_int) {
    const __int128 si = st.to_int(), d = static_cast<__int128>(hi.to_int()) - lo.to_int();
    __int128 n128 = si > 0 ? (d + si - 1) / si : (d + si + 1) / si;
    if (n128 > (__int128(1) << 62)) throw std::runtime_error("arange: the range has too many elements");
    n = static_cast<int64_t>(n128);
    M.a0 = lo.to_int();
    M.si = st.to_int();
  } else {
    const double nd = std::ceil((b - a) / s);
    if (!(nd < 4.6e18)) throw std::runtime_error("arange: the range has too many elements");
    n = static_cast<int64_t>(nd);
  }
  M.n = std::max<int64_t>(n, 0);
  M.a = a;
  M.s = s;
  return M;
}

int64_t triangle_meta(const char* op, const Tensor& self, const Tensor& out, int64_t diagonal) {
  if (self->dim() < 2) throw std::runtime_error(message(op, ": input tensor must have at least 2 dimensions"));
  if (out && out->dtype() != self->dtype()) {
    throw std::runtime_error(message(op, ": Expected out tensor to have dtype ", dtype_name(self->dtype()), ", but got ",
                                     dtype_name(out->dtype()), " instead"));
  }
  return std::clamp<int64_t>(diagonal, -self->size(-2), self->size(-1));
}

LinspaceMeta linspace_meta(const Scalar& start, const Scalar& end, int64_t steps,
                           std::optional<ScalarType> dtype, const Tensor& out) {
  if (steps < 0) throw std::runtime_error(message("linspace: number of steps must be non-negative, got ", steps));
  const ScalarType t = dtype.value_or(out ? out->dtype() : default_float_dtype());
  // PyTorch checks both ends in the result dtype when it computes a step; a single value only its start,
  // and a single 16-bit float value not at all (rounded, to inf beyond the range). An integer dtype is
  // always checked: that conversion would be undefined.
  const bool half = t == ScalarType::Float16 || t == ScalarType::BFloat16;
  if (steps > 1 || !is_floating(t)) {
    check_fill_value(t, start);
    check_fill_value(t, end);
  } else if (steps == 1 && !half) {
    check_fill_value(t, start);
  }
  double a = start.to_double(), b = end.to_double();
  if (is_integral(t, false)) {
    a = std::trunc(a);
    b = std::trunc(b);
  }
  return {t, a, b};
}

EyeMeta eye_meta(int64_t n, std::optional<int64_t> m, std::optional<ScalarType> dtype, const Tensor& out) {
  const int64_t cols = m.value_or(n);
  if (n < 0 || cols < 0) throw std::runtime_error(message("eye: n and m must be non-negative, got n=", n, ", m=", cols));
  return {cols, dtype.value_or(out ? out->dtype() : default_float_dtype())};
}

}  // namespace ember
