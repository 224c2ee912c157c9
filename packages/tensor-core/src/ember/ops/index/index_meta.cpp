// The meta functions declared in index_meta.h.
#include "ember/ops/index/index_meta.h"

#include <algorithm>
#include <cstddef>
#include <string>

#include "ember/ops/index/indexing.h"  // check_value_fits
#include "ember/ops/ops_util.h"

namespace ember {
bool is_index_dtype(ScalarType t) { return t == ScalarType::Int64 || t == ScalarType::Int32; }

namespace {

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

}  // namespace ember
