// Ops composed of other ops: no kernels of their own.
#include <algorithm>

#include "ember/ops/ops_util.h"

namespace ember::ops {

std::vector<Tensor> where_cond(const Tensor& condition) {
  Tensor idx = ops::nonzero(condition);  // (n, ndim)
  if (condition->dim() == 0) {
    return {ops::zeros({idx->sizes()[0]}, ScalarType::Int64, std::nullopt, false, Tensor())};
  }
  return ops::unbind(ops::t(idx), 0);
}

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t nd = self->dim();
  const int64_t d1 = wrap_dim(dim1, nd, "diagonal"), d2 = wrap_dim(dim2, nd, "diagonal");
  if (d1 == d2) {
    throw std::runtime_error(message("diagonal: dimensions cannot be identical ", dim1, ", ", dim2));
  }
  int64_t len, start = self->offset();
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(self->sizes()[d1], self->sizes()[d2] - offset), 0);
    if (len > 0) start += offset * self->strides()[d2];
  } else {
    len = std::max<int64_t>(std::min(self->sizes()[d1] + offset, self->sizes()[d2]), 0);
    if (len > 0) start -= offset * self->strides()[d1];
  }
  Shape sizes, strides;
  for (int64_t d = 0; d < nd; ++d) {
    if (d == d1 || d == d2) continue;
    sizes.push_back(self->sizes()[d]);
    strides.push_back(self->strides()[d]);
  }
  sizes.push_back(len);
  strides.push_back(self->strides()[d1] + self->strides()[d2]);
  return make_view(self, sizes, strides, start);
}

Tensor movedim(const Tensor& self, const Shape& source, const Shape& destination) {
  const int64_t nd = self->dim();
  if (source.size() != destination.size()) {
    throw std::runtime_error(message("movedim: Invalid source or destination dims: source (", shape_str(source),
                                     " dims) should contain the same number of dims as destination (",
                                     shape_str(destination), " dims)"));
  }
  if (nd == 0) {  // a 0-d tensor: dims 0 and -1 name its only (virtual) dim, at most once
    for (size_t i = 0; i < source.size(); ++i) {
      wrap_dim(source[i], nd, "movedim");
      wrap_dim(destination[i], nd, "movedim");
    }
    if (source.size() > 1) {
      throw std::runtime_error(message("movedim: repeated dim in `source` (", shape_str(source), ")"));
    }
    return ops::permute(self, {});
  }
  std::vector<int64_t> perm(nd, -1);
  std::vector<bool> used_src(nd, false);
  for (size_t i = 0; i < source.size(); ++i) {
    int64_t s = wrap_dim(source[i], nd, "movedim"), d = wrap_dim(destination[i], nd, "movedim");
    if (perm[d] != -1 || used_src[s]) throw std::runtime_error("movedim: repeated dim in source or destination");
    perm[d] = s;
    used_src[s] = true;
  }
  int64_t next = 0;
  for (int64_t d = 0; d < nd; ++d) {
    if (perm[d] != -1) continue;
    while (used_src[next]) ++next;
    perm[d] = next++;
  }
  return ops::permute(self, perm);
}

Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  if (!dim) return ops::gather(ops::reshape(self, {-1}), 0, ops::reshape(indices, {-1}), Tensor());
  const int64_t nd = self->dim();
  if (indices->dim() != nd) {
    throw std::runtime_error(message("take_along_dim: input and indices should have the same number of dimensions, "
                                     "but got ", nd, " and ", indices->dim()));
  }
  if (nd == 0) {  // wrap_dim takes dim 0 of a 0-d tensor, which has no size to index
    throw IndexError(message("take_along_dim: Dimension specified as ", *dim, " but tensor has no dimensions"));
  }
  const int64_t d = wrap_dim(*dim, nd, "take_along_dim");
  Shape self_shape = self->sizes(), idx_shape = indices->sizes();
  self_shape[d] = 1;
  idx_shape[d] = 1;
  Shape b = broadcast_shapes(self_shape, idx_shape, "take_along_dim");
  Shape self_b = b, idx_b = b;
  self_b[d] = self->sizes()[d];
  idx_b[d] = indices->sizes()[d];
  return ops::gather(expand_to(self, self_b, "take_along_dim"), d, expand_to(indices, idx_b, "take_along_dim"),
                     Tensor());
}

}  // namespace ember::ops
