// The device-independent halves of the reduction-with-indices, softmax, random, arange,
// binary, division, masked_fill, tril / triu, linspace and eye kernels (reduce_random_meta.h
// says what each function checks and returns).
#include "ember/reduce_random_meta.h"

#include <pybind11/pybind11.h>  // error_already_set, to raise a warning that became an error

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "ember/indexing.h"
#include "ember/ops_util.h"
#include "ember/parallel.h"

namespace ember {

// ---------------------------------------------------------------------------------------------
// max / min / amax / amin / argmax / argmin

namespace {

ReductionMeta reduction_meta(const Tensor& self, std::vector<int64_t> dims, bool keepdim, ScalarType dtype) {
  ReductionMeta M;
  M.shape = reduced_shape(self->sizes(), dims, keepdim);
  M.dims = std::move(dims);
  M.dtype = dtype;
  return M;
}

}  // namespace

std::vector<int64_t> reduction_all_dims(int64_t ndim) {
  std::vector<int64_t> d(static_cast<size_t>(ndim));
  std::iota(d.begin(), d.end(), 0);
  return d;
}

void check_reduction_nonempty(const char* op, const Tensor& self, const std::vector<int64_t>& dims, bool dims_given,
                              bool index_error_when_unspecified) {
  if (self->numel() != 0) return;
  if (!dims_given) {
    std::string m = message(op, "(): Expected reduction dim to be specified for input.numel() == 0.");
    if (index_error_when_unspecified) throw IndexError(m);
    throw std::runtime_error(m + " Specify the reduction dim with the 'dim' argument.");
  }
  for (int64_t d : dims) {
    if (self->sizes()[d] == 0) {
      throw IndexError(message(op, "(): Expected reduction dim ", d, " to have non-zero size."));
    }
  }
}

ReductionMeta extreme_all_meta(const char* op, const Tensor& self) {
  check_reduction_nonempty(op, self, {}, false, false);
  return reduction_meta(self, reduction_all_dims(self->dim()), false, self->dtype());
}

ReductionMeta extreme_dim_meta(const char* op, const Tensor& self, int64_t dim, bool keepdim) {
  const int64_t d = wrap_dim(dim, self->dim(), op);
  std::vector<int64_t> dims;
  if (self->dim() > 0) dims.push_back(d);
  check_reduction_nonempty(op, self, dims, true, false);
  return reduction_meta(self, std::move(dims), keepdim, self->dtype());
}

ReductionMeta arg_extreme_meta(const char* op, const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  if (self->dtype() == ScalarType::Bool) {
    throw std::runtime_error(message(op, "(): does not support bool input"));
  }
  std::vector<int64_t> dims;
  if (dim) {
    const int64_t d = wrap_dim(*dim, self->dim(), op);
    if (self->dim() > 0) dims.push_back(d);
  } else {
    dims = reduction_all_dims(self->dim());
  }
  check_reduction_nonempty(op, self, dims, dim.has_value(), true);
  return reduction_meta(self, std::move(dims), keepdim, ScalarType::Int64);
}

ReductionMeta amax_amin_meta(const char* op, const Tensor& self, const Shape& dim, bool keepdim) {
  std::vector<int64_t> dims = reduce_dims(op, dim, self->dim());
  check_reduction_nonempty(op, self, dims, !dim.empty(), false);
  return reduction_meta(self, std::move(dims), keepdim, self->dtype());
}

// ---------------------------------------------------------------------------------------------
// sum / mean / prod, logsumexp, all / any, var / std, norm, cumsum / cumprod, multinomial

namespace {

AccumulateMeta accumulate_meta(const Tensor& self, std::vector<int64_t> dims, bool keepdim, ScalarType dtype,
                               ScalarType input_dtype) {
  AccumulateMeta M;
  M.shape = reduced_shape(self->sizes(), dims, keepdim);
  M.dims = std::move(dims);
  M.dtype = dtype;
  M.input_dtype = input_dtype;
  return M;
}

// The result dtype of sum / prod / cumsum / cumprod.
ScalarType summed_dtype(const Tensor& self, std::optional<ScalarType> dtype) {
  return dtype ? *dtype : (is_integral(self->dtype(), true) ? ScalarType::Int64 : self->dtype());
}

// Python UserWarning raised from an op (the caller's thread holds or has released the GIL).
void warn_user(const std::string& msg) {
  if (!Py_IsInitialized() || in_parallel_region()) return;
  PyGILState_STATE st = PyGILState_Ensure();
  if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) {
    pybind11::error_already_set err;  // the warning was turned into an error
    PyGILState_Release(st);
    throw err;
  }
  PyGILState_Release(st);
}

}  // namespace

AccumulateMeta sum_meta(const Tensor& self, const std::optional<Shape>& dim, bool keepdim,
                        std::optional<ScalarType> dtype) {
  return accumulate_meta(self, reduce_dims("sum", dim, self->dim()), keepdim, summed_dtype(self, dtype),
                         dtype.value_or(self->dtype()));
}

AccumulateMeta mean_meta(const Tensor& self, const std::optional<Shape>& dim, bool keepdim,
                         std::optional<ScalarType> dtype) {
  if (dtype && !is_floating(*dtype)) {
    throw std::runtime_error(message(
        "mean(): could not infer output dtype. Optional dtype must be either a floating point "
        "or complex dtype. Got: ", dtype_name(*dtype)));
  }
  if (!dtype && !is_floating(self->dtype())) {
    throw std::runtime_error(message(
        "mean(): could not infer output dtype. Input dtype must be either a floating point or "
        "complex dtype. Got: ", dtype_name(self->dtype())));
  }
  const ScalarType t = dtype.value_or(self->dtype());
  return accumulate_meta(self, reduce_dims("mean", dim, self->dim()), keepdim, t, t);
}

AccumulateMeta prod_meta(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
                         std::optional<ScalarType> dtype) {
  std::vector<int64_t> dims = dim ? std::vector<int64_t>{wrap_dim(*dim, self->dim(), "prod")}
                                  : reduction_all_dims(self->dim());
  if (self->dim() == 0) dims.clear();
  return accumulate_meta(self, std::move(dims), keepdim, summed_dtype(self, dtype), dtype.value_or(self->dtype()));
}

AccumulateMeta logsumexp_meta(const Tensor& self, const Shape& dim, bool keepdim) {
  const ScalarType t = is_floating(self->dtype()) ? self->dtype() : default_float_dtype();
  return accumulate_meta(self, reduce_dims("logsumexp", dim, self->dim()), keepdim, t, t);
}

AccumulateMeta all_any_meta(const char* op, const Tensor& self, const std::optional<Shape>& dim, bool keepdim) {
  // dim=None reduces everything; an explicit empty list reduces nothing (as PyTorch)
  std::vector<int64_t> dims = !dim ? reduction_all_dims(self->dim())
                              : dim->empty() ? std::vector<int64_t>{}
                                             : reduce_dims(op, dim, self->dim());
  // uint8 inputs give uint8 results, as in PyTorch
  const ScalarType t = self->dtype() == ScalarType::UInt8 ? ScalarType::UInt8 : ScalarType::Bool;
  return accumulate_meta(self, std::move(dims), keepdim, t, self->dtype());
}

VarStdMeta var_std_meta(const char* op, const Tensor& self, const std::optional<Shape>& dim,
                        std::optional<bool> unbiased, bool keepdim, std::optional<Scalar> correction) {
  if (unbiased && correction) {
    throw TypeError(message(op, "(): pass either `unbiased` or `correction`, not both"));
  }
  if (!is_floating(self->dtype())) {
    throw std::runtime_error(message(op, "(): std and var only support floating point and complex "
                                     "dtypes, got ", dtype_name(self->dtype())));
  }
  const double c = correction ? correction->to_double() : (unbiased && !*unbiased ? 0.0 : 1.0);
  VarStdMeta M;
  M.dims = reduce_dims(op, dim, self->dim());
  M.shape = reduced_shape(self->sizes(), M.dims, keepdim);
  M.dtype = self->dtype();
  int64_t K = 1;
  for (int64_t d : M.dims) K *= self->sizes()[d];
  M.dof = std::max(0.0, static_cast<double>(K) - c);
  if (M.dof <= 0) {
    warn_user(message(op, "(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel)."));
  }
  return M;
}

VectorNormMeta vector_norm_meta(const Tensor& self, const Scalar& p, const std::optional<Shape>& dim, bool keepdim,
                                std::optional<ScalarType> dtype) {
  if (!is_floating(self->dtype())) {
    throw std::runtime_error(message("linalg.vector_norm: Expected a floating point or complex "
                                     "tensor as input. Got ", dtype_name(self->dtype())));
  }
  if (dtype && (!is_floating(*dtype) || promote_types(self->dtype(), *dtype) != *dtype)) {
    throw std::runtime_error(message("linalg.vector_norm: the dtype of the input (",
                                     dtype_name(self->dtype()),
                                     ") should be convertible without narrowing to the specified "
                                     "dtype (", dtype_name(*dtype), ")"));
  }
  const double pv = p.to_double();
  if (std::isnan(pv)) throw std::runtime_error("linalg.vector_norm: p must not be nan");
  VectorNormMeta M;
  M.p = pv;
  M.kind = pv == 2 ? NormKind::L2
           : pv == 1 ? NormKind::L1
           : pv == 0 ? NormKind::L0
           : std::isinf(pv) ? (pv > 0 ? NormKind::Inf : NormKind::NegInf)
                            : NormKind::General;
  M.dims = reduce_dims("norm", dim, self->dim());
  if (pv < 0 || std::isinf(pv)) {  // no identity: an empty reduction is an error
    std::string pstr = std::isinf(pv) ? (pv > 0 ? "inf" : "-inf") : message(pv);
    if (!dim || dim->empty()) {
      if (self->numel() == 0) {
        throw std::runtime_error(message("linalg.vector_norm cannot compute the ", pstr,
                                         " norm on an empty tensor because the operation does "
                                         "not have an identity"));
      }
    } else {
      for (int64_t d : M.dims) {
        if (self->sizes()[d] == 0) {
          throw std::runtime_error(message("linalg.vector_norm cannot compute the ", pstr,
                                           " norm on the dimension ", d,
                                           " because this dimension is empty and the operation "
                                           "does not have an identity"));
        }
      }
    }
  }
  M.shape = reduced_shape(self->sizes(), M.dims, keepdim);
  M.dtype = dtype.value_or(self->dtype());
  return M;
}

ScanMeta scan_meta(const char* op, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  const int64_t d = wrap_dim(dim, self->dim(), op);
  const ScalarType t = summed_dtype(self, dtype);
  if (t == ScalarType::Bool) {
    throw NotImplementedError(message(op, ": not implemented for dtype bool"));
  }
  return {self->dim() == 0 ? 0 : d, t, dtype.value_or(self->dtype())};
}

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
// softmax / log_softmax

DimSplit split_around_dim(const Shape& sizes, int64_t d) {
  DimSplit L;
  for (int64_t i = 0; i < static_cast<int64_t>(sizes.size()); ++i) {
    if (i < d) L.O *= sizes[i];
    else if (i == d) L.K = sizes[i];
    else L.I *= sizes[i];
  }
  return L;
}

SoftmaxMeta softmax_meta(const char* op, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  const int64_t d = wrap_dim(dim, self->dim(), op);
  const ScalarType t = dtype.value_or(self->dtype());
  if (self->numel() != 0 && !is_floating(t)) {
    throw NotImplementedError(message(op, ": not implemented for dtype ", dtype_name(t),
                                      " (pass a floating dtype= to convert the input)"));
  }
  return {self->dim() == 0 ? 0 : d, t};
}

SoftmaxMeta softmax_backward_meta(const char* op, const Tensor& grad_output, const Tensor& output, int64_t dim) {
  if (grad_output->sizes() != output->sizes() || grad_output->dtype() != output->dtype()) {
    throw std::runtime_error(message(op, ": expected grad_output and output of one shape and dtype, got ",
                                     shape_str(grad_output->sizes()), " ", dtype_name(grad_output->dtype()), " and ",
                                     shape_str(output->sizes()), " ", dtype_name(output->dtype())));
  }
  if (!is_floating(output->dtype())) {
    throw NotImplementedError(message(op, ": not implemented for dtype ", dtype_name(output->dtype())));
  }
  const int64_t d = wrap_dim(dim, output->dim(), op);
  return {output->dim() == 0 ? 0 : d, output->dtype()};
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
  switch (t) {
    case ScalarType::Bool: lo = 0; hi = 1; break;
    case ScalarType::UInt8: lo = 0; hi = 255; break;
    case ScalarType::Int8: lo = -128; hi = 127; break;
    case ScalarType::Int16: lo = -32768; hi = 32767; break;
    case ScalarType::Int32: lo = -2147483648.0; hi = 2147483647.0; break;
    case ScalarType::Int64: return;
    case ScalarType::Float16: lo = -2048; hi = 2048; break;
    case ScalarType::BFloat16: lo = -256; hi = 256; break;
    case ScalarType::Float32: lo = -16777216.0; hi = 16777216.0; break;
    case ScalarType::Float64: lo = -9007199254740992.0; hi = 9007199254740992.0; break;
    default: throw_dtype_unsupported("randint", t, "any");
  }
  if (static_cast<double>(low) < lo || static_cast<double>(low) > hi) {
    throw std::runtime_error(message("randint: from is out of bounds for ", dtype_name(t), " (from=", low, ")"));
  }
  if (static_cast<double>(high - 1) < lo || static_cast<double>(high - 1) > hi) {
    throw std::runtime_error(message("randint: to - 1 is out of bounds for ", dtype_name(t), " (to=", high, ")"));
  }
}

ScalarType rand_meta(const char* op, std::optional<ScalarType> dtype, const Tensor& out) {
  const ScalarType dt = dtype.value_or(out ? out->dtype() : default_float_dtype());
  check_sampler_dtype(op, dt);
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

// ---------------------------------------------------------------------------------------------
// arange

ArangeMeta arange_meta(const Scalar& start, std::optional<Scalar> end, const Scalar& step,
                       std::optional<ScalarType> dtype, const Tensor& out) {
  const Scalar lo = end ? start : Scalar::from_int(0);
  const Scalar hi = end ? *end : start;
  ArangeMeta M;
  M.all_int = !lo.is_float() && !hi.is_float() && !step.is_float();
  M.dtype = dtype.value_or(out ? out->dtype() : (M.all_int ? ScalarType::Int64 : default_float_dtype()));
  const double s = step.to_double(), a = lo.to_double(), b = hi.to_double();
  if (s == 0) throw std::runtime_error("arange: step must be nonzero");
  if (!std::isfinite(a) || !std::isfinite(b)) {
    throw std::runtime_error("arange: unsupported range: start and end must be finite");
  }
  if ((s > 0 && b < a) || (s < 0 && b > a)) {
    throw std::runtime_error(message("arange: upper bound and larger bound inconsistent with step sign (start=", a,
                                     ", end=", b, ", step=", s, ")"));
  }
  int64_t n;
  if (M.all_int) {
    const __int128 si = step.to_int(), d = static_cast<__int128>(hi.to_int()) - lo.to_int();
    __int128 n128 = si > 0 ? (d + si - 1) / si : (d + si + 1) / si;
    if (n128 > (__int128(1) << 62)) throw std::runtime_error("arange: the range has too many elements");
    n = static_cast<int64_t>(n128);
    M.a0 = lo.to_int();
    M.si = step.to_int();
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

// ---------------------------------------------------------------------------------------------
// binary ops

namespace {

Shape broadcast_pair(const char* op, const Tensor& a, const Tensor& b) {
  return a->sizes() == b->sizes() ? a->sizes() : broadcast_shapes(a->sizes(), b->sizes(), op);
}

}  // namespace

BinaryMeta binary_meta(const char* op, const Tensor& self, const Tensor& other, bool boolean_result) {
  const ScalarType t = result_type(self, other);
  return {t, boolean_result ? ScalarType::Bool : t, broadcast_pair(op, self, other)};
}

PowMeta pow_meta(const Tensor& self, const Tensor& exponent) {
  PowMeta M;
  M.dtype = result_type(self, exponent);
  if (M.dtype == ScalarType::Bool) {
    if (!exponent->wrapped_number) throw NotImplementedError("pow: not implemented for two bool operands");
    // bool ** True == self, bool ** False == True (a wrapped number is a CPU tensor)
    M.result = *exponent->data<bool>() ? ops::clone(self) : ops::ones_like(self, std::nullopt, std::nullopt, false);
    return M;
  }
  if (!is_floating(M.dtype) && exponent->wrapped_number) {
    // like PyTorch: a negative Python-number exponent of an integer tensor is an error;
    // negative tensor exponents give 1, -1 or 0 as integer arithmetic does
    bool negative = false;
    dispatch_numeric(M.dtype, "pow", [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_signed_v<T>) {
        const Tensor c = as_contiguous(to_dtype(exponent, M.dtype));
        for (int64_t i = 0; i < c->numel() && !negative; ++i) negative = c->data<T>()[i] < 0;
      }
    });
    if (negative) throw std::runtime_error("pow: integers to negative integer powers are not allowed");
  }
  M.shape = broadcast_pair("pow", self, exponent);
  return M;
}

WhereMeta where_meta(const Tensor& condition, const Tensor& input, const Tensor& other) {
  if (condition->dtype() != ScalarType::Bool && condition->dtype() != ScalarType::UInt8) {
    throw std::runtime_error(message("where: expected condition to be a bool tensor, got ",
                                     dtype_name(condition->dtype())));
  }
  const ScalarType t = result_type(input, other);
  Shape shape = broadcast_shapes(condition->sizes(), input->sizes(), "where");
  shape = broadcast_shapes(shape, other->sizes(), "where");
  return {t, shape};
}

ClampMeta clamp_meta(const Tensor& self, const Tensor& min, const Tensor& max, const Tensor& out) {
  if (!min && !max) throw std::runtime_error("clamp: at least one of 'min' or 'max' must not be None");
  const ScalarType t = result_type({self.get(), min.get(), max.get()});
  if (out && !is_floating(out->dtype()) && is_floating(t) && out == self) {
    throw std::runtime_error(message("clamp_: result type ", dtype_name(t),
                                     " can't be cast to the desired output type ", dtype_name(self->dtype())));
  }
  Shape shape = self->sizes();
  if (min) shape = broadcast_shapes(shape, min->sizes(), "clamp");
  if (max) shape = broadcast_shapes(shape, max->sizes(), "clamp");
  return {t, shape};
}

// ---------------------------------------------------------------------------------------------
// division with integer checks, masked_fill, tril / triu, linspace, eye

namespace {

// RuntimeError as in PyTorch (Python's ZeroDivisionError is not a RuntimeError).
void check_int_divisor(const char* op, const Tensor& b) {
  if (is_floating(b->dtype())) return;
  bool zero = false;
  dispatch_integral(b->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    Tensor c = as_contiguous(b);
    const T* p = c->data<T>();
    for (int64_t i = 0; i < c->numel() && !zero; ++i) zero = p[i] == T(0);
  });
  if (zero) throw std::runtime_error(message("ZeroDivisionError: ", op, ": integer division by zero"));
}

}  // namespace

BinaryMeta division_meta(const char* op, const Tensor& self, const Tensor& other) {
  const ScalarType t = result_type(self, other);
  if (t == ScalarType::Bool) throw std::runtime_error(message(op, ": not implemented for two bool operands"));
  if (other->device().type == DeviceType::CPU) check_int_divisor(op, to_dtype(other, t));
  return {t, t, broadcast_pair(op, self, other)};
}

Shape masked_fill_meta(const Tensor& self, const Tensor& mask, const Tensor& value, const Tensor& out) {
  if (mask->dtype() != ScalarType::Bool) {
    throw std::runtime_error(message("masked_fill_ only supports boolean masks, but got mask with dtype ",
                                     dtype_name(mask->dtype())));
  }
  if (value->dim() != 0) {
    throw std::runtime_error(message("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
                                     value->dim(), " dimension(s)."));
  }
  if (value->device().type == DeviceType::CPU) check_value_fits("masked_fill", scalar_of(value), self->dtype(), true);
  if (out == self) {
    const Shape b = broadcast_shapes(self->sizes(), mask->sizes(), "masked_fill_");
    if (b != self->sizes()) {
      throw std::runtime_error(message("masked_fill_(): output with shape ", shape_str(self->sizes()),
                                       " doesn't match the broadcast shape ", shape_str(b)));
    }
    return b;
  }
  return broadcast_shapes(self->sizes(), mask->sizes(), "masked_fill");
}

void check_triangle(const char* op, const Tensor& self, const Tensor& out) {
  if (self->dim() < 2) throw std::runtime_error(message(op, ": input tensor must have at least 2 dimensions"));
  if (out && out->dtype() != self->dtype()) {
    throw std::runtime_error(message(op, ": Expected out tensor to have dtype ", dtype_name(self->dtype()), ", but got ",
                                     dtype_name(out->dtype()), " instead"));
  }
}

ScalarType linspace_meta(int64_t steps, std::optional<ScalarType> dtype, const Tensor& out) {
  if (steps < 0) throw std::runtime_error(message("linspace: number of steps must be non-negative, got ", steps));
  return dtype.value_or(out ? out->dtype() : default_float_dtype());
}

EyeMeta eye_meta(int64_t n, std::optional<int64_t> m, std::optional<ScalarType> dtype, const Tensor& out) {
  const int64_t cols = m.value_or(n);
  if (n < 0 || cols < 0) throw std::runtime_error(message("eye: n and m must be non-negative, got n=", n, ", m=", cols));
  return {cols, dtype.value_or(out ? out->dtype() : default_float_dtype())};
}

}  // namespace ember
