// Meta functions of the index and nn ops (index_nn_meta.h): the checks, dim wrapping and
// result shapes and dtypes that the CPU and CUDA kernels share. PyTorch's errors and messages.
#include "ember/index_nn_meta.h"

#include <algorithm>
#include <cstddef>
#include <string>

namespace ember {
namespace {

// PyTorch's legacy type names ("torch.FloatTensor"), as its argument checks print them.
std::string legacy_type_name(ScalarType t) {
  const char* n = "";
  switch (t) {
    case ScalarType::Bool: n = "Bool"; break;
    case ScalarType::UInt8: n = "Byte"; break;
    case ScalarType::Int8: n = "Char"; break;
    case ScalarType::Int16: n = "Short"; break;
    case ScalarType::Int32: n = "Int"; break;
    case ScalarType::Int64: n = "Long"; break;
    case ScalarType::Float16: n = "Half"; break;
    case ScalarType::BFloat16: n = "BFloat16"; break;
    case ScalarType::Float32: n = "Float"; break;
    case ScalarType::Float64: n = "Double"; break;
    default: break;
  }
  return message("ember.", n, "Tensor");
}

bool is_index_dtype(ScalarType t) { return t == ScalarType::Int64 || t == ScalarType::Int32; }

// embedding's indices: int64 or int32 (PyTorch's checkScalarTypes message).
void check_embedding_indices(const char* op, const Tensor& indices) {
  const ScalarType t = indices->dtype();
  if (!is_index_dtype(t)) {
    throw std::runtime_error(message("Expected tensor for argument #1 'indices' to have one of the following scalar "
                                     "types: Long, Int; but got ", legacy_type_name(t),
                                     " instead (while checking arguments for ", op, ")"));
  }
}

// gather/scatter's index dtype ("what" is "gather()", "scatter()", "scatter_add()").
void check_scatter_gather_index_dtype(const char* what, const Tensor& index) {
  if (!is_index_dtype(index->dtype())) {
    throw std::runtime_error(message(what, ": Expected dtype int32/int64 for index, got ",
                                     dtype_name(index->dtype())));
  }
}

// Checks for gather/scatter: same number of dims (0-d counts as 1-d) and index sizes no larger
// than self's outside dim (and than src's everywhere, if given).
void scatter_gather_shape_check(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src,
                                bool is_gather) {
  const int64_t nd = std::max<int64_t>(self->dim(), 1);
  if (std::max<int64_t>(index->dim(), 1) != nd) {
    throw std::runtime_error(is_gather ? "gather(): Index tensor must have the same number of dimensions as input tensor"
                                       : "scatter(): Index tensor must have the same number of dimensions as self tensor");
  }
  if (src && std::max<int64_t>((*src)->dim(), 1) != nd) {
    throw std::runtime_error("scatter(): Index tensor must have the same number of dimensions as src tensor");
  }
  auto size_of = [](const Tensor& t, int64_t d) { return t->dim() == 0 ? 1 : t->sizes()[static_cast<size_t>(d)]; };
  bool wrong = false;
  for (int64_t d = 0; d < nd; ++d) {
    if (d != dim && size_of(index, d) > size_of(self, d)) {
      if (is_gather) {
        throw std::runtime_error(message("gather(): Size does not match at dimension ", d, " expected index ",
                                         shape_str(index->sizes()), " to be no larger than self ",
                                         shape_str(self->sizes()), " apart from dimension ", dim));
      }
      wrong = true;
    }
    if (src && size_of(index, d) > size_of(*src, d)) wrong = true;
  }
  if (wrong) {
    std::string msg = message("scatter(): Expected index ", shape_str(index->sizes()), " to be no larger than self ",
                              shape_str(self->sizes()), " apart from dimension ", dim);
    if (src) msg += message(" and to be no larger size than src ", shape_str((*src)->sizes()));
    throw std::runtime_error(msg);
  }
}

// Whether input's sizes end with normalized_shape.
bool ends_with(const Tensor& input, const Shape& normalized_shape) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size()), nd = input->dim();
  bool ok = nd >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = input->size(nd - k + i) == normalized_shape[static_cast<size_t>(i)];
  return ok;
}

// K, R and the statistics' shape of an input that ends with normalized_shape.
LayerNormMeta layer_norm_rows(const Tensor& input, const Shape& normalized_shape) {
  const size_t k = normalized_shape.size();
  LayerNormMeta m;
  m.K = shape_numel(normalized_shape);
  m.stat_shape = Shape(input->sizes().begin(), input->sizes().end() - static_cast<std::ptrdiff_t>(k));
  m.R = shape_numel(m.stat_shape);
  m.stat_shape.insert(m.stat_shape.end(), k, 1);
  return m;
}

}  // namespace

// ------------------------------------------------------------------------ shared helpers

Tensor at_least_1d(const Tensor& t) {
  if (t->dim() > 0) return t;
  return make_view(t, {1}, {1}, t->offset());
}

Tensor restride(const Tensor& t, const Shape& sizes, int64_t zero_dim) {
  Shape st = t->strides();
  if (zero_dim >= 0) st[static_cast<size_t>(zero_dim)] = 0;
  return make_view(t, sizes, std::move(st), t->offset());
}

Tensor out_or_fresh(const Tensor& out, const Shape& shape, ScalarType dtype, const Device& device,
                    std::initializer_list<const Tensor*> inputs) {
  if (out && out->sizes() == shape && out->dtype() == dtype && out->is_contiguous()) {
    bool aliases = false;
    for (const Tensor* t : inputs) aliases = aliases || (*t && (*t)->storage() == out->storage());
    if (!aliases) return out;
  }
  return empty(shape, dtype, device);
}

void throw_index_out_of_bounds(const char* op, int64_t bad, int64_t dim, int64_t size) {
  throw std::runtime_error(message(op, ": index ", bad, " is out of bounds for dimension ", dim, " with size ", size));
}

// ------------------------------------------------------------------------------------- cat

CatMeta cat_meta(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out) {
  if (tensors.empty()) throw ValueError("cat(): expected a non-empty list of Tensors");
  CatMeta m;
  m.dtype = ScalarType::Undefined;
  m.dim = 0;
  // legacy: 1-d empty tensors are skipped whatever their shape along other dims
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t->dim() == 0) {
      throw std::runtime_error(message("cat(): zero-dimensional tensor (at position ", i, ") cannot be concatenated"));
    }
    m.dtype = m.dtype == ScalarType::Undefined ? t->dtype() : promote_types(m.dtype, t->dtype());
    if (!(t->dim() == 1 && t->numel() == 0)) m.used.push_back(&t);
  }
  if (m.used.empty()) {  // only skipped tensors: dim is not even checked
    m.shape = {0};
  } else {
    const Tensor& first = *m.used[0];
    const int64_t nd = first->dim();
    const int64_t d = wrap_dim(dim, nd, "cat");
    const size_t ud = static_cast<size_t>(d);
    m.dim = d;
    m.shape = first->sizes();
    m.shape[ud] = 0;
    for (const Tensor* tp : m.used) {
      const Tensor& t = *tp;
      if (t->dim() != nd) {
        throw std::runtime_error(message("cat(): Tensors must have same number of dimensions: got ", nd, " and ", t->dim()));
      }
      for (size_t j = 0; j < static_cast<size_t>(nd); ++j) {
        if (j != ud && t->sizes()[j] != first->sizes()[j]) {
          // the position in the caller's list
          size_t pos = static_cast<size_t>(&t - tensors.data());
          throw std::runtime_error(message("cat(): Sizes of tensors must match except in dimension ", d, ". Expected size ",
                                           first->sizes()[j], " but got size ", t->sizes()[j],
                                           " for tensor number ", pos, " in the list."));
        }
      }
      m.shape[ud] += t->sizes()[ud];
    }
  }
  if (out && !can_cast(m.dtype, out->dtype())) {
    throw TypeError(message("cat(): input types can't be cast to the desired output type ", dtype_name(out->dtype())));
  }
  return m;
}

Tensor cat_result(const std::vector<Tensor>& tensors, const Tensor& out, const CatMeta& m, const Device& device) {
  if (out && out->sizes() == m.shape && out->dtype() == m.dtype) {
    bool aliases = false;
    for (const Tensor& t : tensors) aliases = aliases || t->storage() == out->storage();
    if (!aliases) return out;
  }
  return empty(m.shape, m.dtype, device);
}

// --------------------------------------------------------------------- gather and scatter

int64_t gather_meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  const int64_t d = wrap_dim(dim, self->dim(), "gather");
  if (index->numel() > 0) {
    check_scatter_gather_index_dtype("gather()", index);
    scatter_gather_shape_check(self, d, index, nullptr, true);
  }
  // out= of an op whose result has self's dtype must have it too (PyTorch's structured kernels)
  if (out && out->dtype() != self->dtype()) {
    throw std::runtime_error(message("gather(): Expected out tensor to have dtype ", dtype_name(self->dtype()),
                                     ", but got ", dtype_name(out->dtype()), " instead"));
  }
  return d;
}

int64_t scatter_meta(const char* op, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                     bool src_is_value) {
  const int64_t d = wrap_dim(dim, self->dim(), op);
  if (index->numel() > 0) check_scatter_gather_index_dtype(message(op, "()").c_str(), index);
  if (!src_is_value && src->dtype() != self->dtype()) {
    throw std::runtime_error("scatter(): Expected self.dtype to be equal to src.dtype");
  }
  if (index->numel() > 0) scatter_gather_shape_check(self, d, index, src_is_value ? nullptr : &src, false);
  return d;
}

// --------------------------------------------------------------------------- index_select

IndexSelectMeta index_select_meta(const Tensor& self, int64_t dim, const Tensor& index) {
  const int64_t d = wrap_dim(dim, self->dim(), "index_select");
  if (index->dim() > 1) throw IndexError("index_select(): Index is supposed to be a vector");
  if (!is_index_dtype(index->dtype())) {
    throw std::runtime_error("index_select(): Expected dtype int32 or int64 for index");
  }
  const int64_t n = index->numel();
  if (self->dim() == 0 && n != 1) {
    throw std::runtime_error(message("index_select(): Index to scalar can have only 1 value, got ", n, " value(s)"));
  }
  IndexSelectMeta m;
  m.dim = d;
  m.shape = self->sizes();
  if (self->dim() > 0) m.shape[static_cast<size_t>(d)] = n;
  m.size = self->dim() == 0 ? 1 : self->sizes()[static_cast<size_t>(d)];
  return m;
}

void throw_index_select_out_of_range() { throw IndexError("index_select(): index out of range in self"); }

void check_index_select_out(const Tensor& self, const Tensor& out) {
  if (out && out->dtype() != self->dtype()) {
    throw std::runtime_error("index_select(): self and result must have the same scalar type");
  }
}

// ------------------------------------------------------------------------------ index_add

int64_t index_add_meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  const int64_t d = wrap_dim(dim, self->dim(), "index_add");
  if (index->dim() > 1) {
    throw IndexError(message("index_add_(): Index is supposed to be a vector, but got dim: ", index->dim(),
                             " with type: ", dtype_name(index->dtype()), " and size: ", shape_str(index->sizes())));
  }
  if (!is_index_dtype(index->dtype())) {
    throw std::runtime_error("index_add_(): Expected dtype int32/int64 for index");
  }
  if (self->dtype() != source->dtype()) {
    throw std::runtime_error(message("index_add_(): self (", dtype_name(self->dtype()), ") and source (",
                                     dtype_name(source->dtype()), ") must have the same scalar type"));
  }
  const int64_t n = index->numel();
  const int64_t src_len =
      source->dim() == 0 ? 1 : source->sizes()[static_cast<size_t>(std::min(d, source->dim() - 1))];
  if (n != src_len) {
    // (PyTorch reads source.size(dim) for this message, which fails first on a 0-d source)
    if (source->dim() == 0) throw IndexError("index_add_(): Dimension specified as 0 but tensor has no dimensions");
    throw std::runtime_error(message("index_add_(): Number of indices (", n,
                                     ") should be equal to source.size(dim): (", src_len, "), for dim: ", d));
  }
  bool same = source->dim() == self->dim();
  for (int64_t k = 0; same && k < self->dim(); ++k) {
    same = k == d || source->sizes()[static_cast<size_t>(k)] == self->sizes()[static_cast<size_t>(k)];
  }
  if (!same) {
    throw std::runtime_error(message("index_add_(): source tensor shape must match self tensor shape, excluding the "
                                     "specified dimension. Got self.shape = ",
                                     shape_str(self->sizes()), " source.shape = ", shape_str(source->sizes())));
  }
  return d;
}

bool index_add_is_noop(const Tensor& self, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  return index->numel() == 0 || source->numel() == 0 ||
         (self->numel() == 0 && !(self->dim() == 1 && alpha.to_double() != 1.0));
}

void throw_index_add_out_of_range(const Tensor& self, int64_t dim, const Scalar& alpha, int64_t bad, int64_t size) {
  // PyTorch's kernels differ in the error: RuntimeError where it goes through index_put
  // (alpha 1, not bool, first or last of >= 2 dims), IndexError elsewhere
  if (alpha.to_double() == 1.0 && self->dtype() != ScalarType::Bool && self->dim() >= 2 &&
      (dim == 0 || dim == self->dim() - 1)) {
    throw_index_out_of_bounds("index_add_()", bad, dim, size);
  }
  throw IndexError("index_add_(): index out of range in self");
}

// ---------------------------------------------------------------------------- embedding

Shape embedding_meta(const Tensor& weight, const Tensor& indices) {
  if (weight->dim() != 2) throw std::runtime_error("'weight' must be 2-D");
  check_embedding_indices("embedding", indices);
  Shape shape = indices->sizes();
  shape.push_back(weight->size(1));
  return shape;
}

void throw_embedding_index_out_of_range() { throw IndexError("index out of range in self"); }

Shape embedding_dense_backward_meta(const Tensor& grad_output, const Tensor& indices, int64_t num_weights) {
  const char* op = "embedding_dense_backward";
  check_embedding_indices(op, indices);
  if (num_weights < 0) {
    throw std::runtime_error(message(op, ": num_weights must be non-negative, but got ", num_weights));
  }
  if (grad_output->dim() != indices->dim() + 1 ||
      !std::equal(indices->sizes().begin(), indices->sizes().end(), grad_output->sizes().begin())) {
    throw std::runtime_error(message(op, ": expected grad_output of size indices.shape + (D,) = ",
                                     shape_str(indices->sizes()), " + (D,), but got ",
                                     shape_str(grad_output->sizes())));
  }
  return {num_weights, grad_output->size(-1)};
}

void group_positions_by_index(const int64_t* idx, int64_t n, int64_t num_weights, std::vector<int64_t>& start,
                              std::vector<int64_t>& order) {
  start.assign(static_cast<size_t>(num_weights) + 1, 0);
  for (int64_t p = 0; p < n; ++p) {
    const int64_t i = idx[p];
    if (i < 0 || i >= num_weights) throw_embedding_index_out_of_range();
    ++start[static_cast<size_t>(i + 1)];
  }
  for (size_t r = 0; r < static_cast<size_t>(num_weights); ++r) start[r + 1] += start[r];
  order.assign(static_cast<size_t>(n), 0);
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (int64_t p = 0; p < n; ++p) order[static_cast<size_t>(fill[static_cast<size_t>(idx[p])]++)] = p;
}

// ------------------------------------------------------------------------------ nll_loss

NllLossMeta nll_loss_meta(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction) {
  const char* op = "nll_loss";
  if (reduction < 0 || reduction > 2) {
    throw std::runtime_error(message(op, ": reduction must be 0 ('none'), 1 ('mean') or 2 ('sum'), but got ",
                                     reduction));
  }
  const int64_t nd = self->dim();
  if (nd < 1) throw std::runtime_error(message("Expected 1 or more dimensions (got ", nd, ")"));
  // self (C), (N, C) or (N, C, d1, ...); target (), (N) or (N, d1, ...)
  NllLossMeta m;
  m.C = nd == 1 ? self->size(0) : self->size(1);
  m.N = nd == 1 ? 1 : self->size(0);
  if (nd <= 2) {
    if (target->dim() > 1) throw std::runtime_error("0D or 1D target tensor expected, multi-target not supported");
    const bool ok = nd == 1 ? target->dim() == 0 : target->dim() == 1 && target->size(0) == m.N;
    if (!ok) {
      throw std::runtime_error(message("size mismatch (got input: ", shape_str(self->sizes()), ", target: ",
                                       shape_str(target->sizes()), ")"));
    }
  } else {
    Shape expected = {m.N};
    expected.insert(expected.end(), self->sizes().begin() + 2, self->sizes().end());
    if (target->sizes() != expected) {
      throw std::runtime_error(message("Expected target size ", shape_str(expected), ", got ",
                                       shape_str(target->sizes())));
    }
  }
  const ScalarType tt = target->dtype();
  if (tt != ScalarType::Int64 && tt != ScalarType::UInt8) {
    throw std::runtime_error(message("expected target dtype to be Long or Byte, but got ", scalar_type_name(tt)));
  }
  if (weight && weight->numel() != m.C) {
    throw std::runtime_error(message("weight tensor should be defined either for all ", m.C,
                                     " classes or no classes but got weight tensor of shape: ",
                                     shape_str(weight->sizes())));
  }
  if (weight && weight->dtype() != self->dtype()) {
    throw std::runtime_error(message(op, ": expected weight of dtype ", dtype_name(self->dtype()), ", but got ",
                                     dtype_name(weight->dtype())));
  }
  m.S = nd <= 2 ? 1 : self->numel() / std::max<int64_t>(m.N * m.C, 1);
  m.T = target->numel();  // N * S
  m.out_shape = reduction == 0 ? target->sizes() : Shape{};
  return m;
}

void throw_nll_loss_target_out_of_bounds(int64_t target) {
  throw IndexError(message("Target ", target, " is out of bounds."));
}

// ---------------------------------------------------------------------------- layer norm

void check_norm_param_dtype(const Tensor& input, const Tensor& p) {
  if (!p) return;
  const ScalarType it = input->dtype(), pt = p->dtype();
  const bool half = it == ScalarType::Float16 || it == ScalarType::BFloat16;
  if (pt != it && !(half && pt == ScalarType::Float32)) {
    throw std::runtime_error("mixed dtype (CPU): all inputs must share same datatype.");
  }
}

void check_norm_param_readable(const Tensor& t) {
  if (t && t->numel() > 0 && !is_floating(t->dtype())) {
    throw_dtype_unsupported("normalization", t->dtype(), "floating point");
  }
}

void check_norm_grad_out(const char* op, const Tensor& grad_out, const Tensor& input) {
  if (grad_out->sizes() != input->sizes()) {
    throw std::runtime_error(message(op, ": expected grad_out of the input's size ", shape_str(input->sizes()),
                                     ", but got ", shape_str(grad_out->sizes())));
  }
  if (grad_out->dtype() != input->dtype()) {
    throw std::runtime_error(message(op, ": expected grad_out of the input's dtype ", dtype_name(input->dtype()),
                                     ", but got ", dtype_name(grad_out->dtype())));
  }
}

LayerNormMeta native_layer_norm_meta(const Tensor& input, const Shape& normalized_shape, const Tensor& weight,
                                     const Tensor& bias) {
  if (normalized_shape.empty()) {
    throw std::runtime_error(message("Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                                     "least one element, but got normalized_shape = ", shape_str(normalized_shape)));
  }
  if (weight && weight->sizes() != normalized_shape) {
    throw std::runtime_error(message("Expected weight to be of same shape as normalized_shape, but got weight of shape ",
                                     shape_str(weight->sizes()), " and normalized_shape = ",
                                     shape_str(normalized_shape)));
  }
  if (bias && bias->sizes() != normalized_shape) {
    throw std::runtime_error(message("Expected bias to be of same shape as normalized_shape, but got bias of shape ",
                                     shape_str(bias->sizes()), " and normalized_shape = ",
                                     shape_str(normalized_shape)));
  }
  if (!ends_with(input, normalized_shape)) {
    std::string expected = "[*";
    for (int64_t s : normalized_shape) expected += message(", ", s);
    throw std::runtime_error(message("Given normalized_shape=", shape_str(normalized_shape),
                                     ", expected input with shape ", expected, "], but got input of size",
                                     shape_str(input->sizes())));
  }
  check_norm_param_dtype(input, weight);
  check_norm_param_dtype(input, bias);
  check_norm_param_readable(weight);
  check_norm_param_readable(bias);
  return layer_norm_rows(input, normalized_shape);
}

LayerNormMeta native_layer_norm_backward_meta(const Tensor& grad_out, const Tensor& input,
                                              const Shape& normalized_shape, const Tensor& mean, const Tensor& rstd,
                                              const Tensor& weight) {
  const char* op = "native_layer_norm_backward";
  check_norm_grad_out(op, grad_out, input);
  if (normalized_shape.empty() || !ends_with(input, normalized_shape)) {
    throw std::runtime_error(message(op, ": input of size ", shape_str(input->sizes()),
                                     " does not end with normalized_shape ", shape_str(normalized_shape)));
  }
  const LayerNormMeta m = layer_norm_rows(input, normalized_shape);
  if (mean->numel() != m.R || rstd->numel() != m.R) {
    throw std::runtime_error(message(op, ": expected mean and rstd of ", m.R, " elements"));
  }
  if (weight && weight->numel() != m.K) {
    throw std::runtime_error(message(op, ": expected a weight of ", m.K, " elements"));
  }
  check_norm_param_readable(mean);
  check_norm_param_readable(rstd);
  check_norm_param_readable(weight);
  return m;
}

}  // namespace ember
