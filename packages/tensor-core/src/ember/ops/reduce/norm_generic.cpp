// The vector norms of single elements, written once for every device: where every result of a
// norm reduces one element, PyTorch's norms give |x| (no square and root on the way: the 2-norm
// of 1e30 in float32 is 1e30, not inf; any p gives |x|), and x != 0 for p = 0.
#include "ember/ops/ops_util.h"
#include "ember/ops/reduce/reduce_meta.h"

namespace ember {

std::optional<Tensor> norm_of_single_elements(const Tensor& self, const VectorNormMeta& M) {
  int64_t count = 1;
  for (int64_t d : M.dims) count *= self->sizes()[d];
  if (count != 1) return std::nullopt;
  const Tensor x = to_dtype(self, M.dtype);
  const Tensor r = M.kind == NormKind::L0
                       ? to_dtype(ops::ne(x, wrapped_scalar(Scalar::from_double(0.0)), Tensor()), M.dtype)
                       : ops::abs(x, Tensor());
  return ops::reshape(r, M.shape);
}

}  // namespace ember
