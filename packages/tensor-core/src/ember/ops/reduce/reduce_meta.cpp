// The meta functions declared in reduce_meta.h.
#include "ember/ops/reduce/reduce_meta.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "ember/ops/index/indexing.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"

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

AccumulateMeta all_any_meta(const char* op, const Tensor& self, const std::optional<Shape>& dim, bool keepdim,
                            const Tensor& out) {
  if (out && out->dtype() != ScalarType::Bool && out->dtype() != ScalarType::UInt8) {
    throw std::runtime_error(message(op, " only supports bool tensor for result, got: ", scalar_type_name(out->dtype())));
  }
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
  // no values: NaN whatever the correction (0 / 0), as in PyTorch
  M.dof = K == 0 ? 0.0 : std::max(0.0, static_cast<double>(K) - c);
  if (static_cast<double>(K) - c <= 0) {
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
  // p = NaN takes the general p-norm's path: NaN, as PyTorch's
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

ScanMeta scan_meta(const char* op, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype,
                   const Tensor& out) {
  const int64_t d = wrap_dim(dim, self->dim(), op);
  // a real float out= without dtype= is the dtype the scan runs in, as PyTorch's (no rounding
  // to the input's narrower dtype first); can_cast still refuses a float result into an int out=
  if (!dtype && out && is_floating(out->dtype()) && !is_complex(self->dtype()) &&
      can_cast(summed_dtype(self, std::nullopt), out->dtype())) {
    dtype = out->dtype();
  }
  const ScalarType t = summed_dtype(self, dtype);
  if (t == ScalarType::Bool) {
    throw NotImplementedError(message(op, ": not implemented for dtype bool"));
  }
  return {self->dim() == 0 ? 0 : d, t, dtype.value_or(self->dtype())};
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

}  // namespace ember
