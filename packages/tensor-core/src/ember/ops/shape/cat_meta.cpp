// The meta functions declared in cat_meta.h.
#include "ember/ops/shape/cat_meta.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include "ember/ops/index/index_meta.h"

namespace ember {
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

}  // namespace ember
