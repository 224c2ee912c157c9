// The argument checks of sort, argsort and topk (sort_meta.h), called by the CPU kernels
// (sort_cpu.cpp) and the CUDA kernels (sort_cuda.cu).
#include "ember/ops/sort/sort_meta.h"

#include "ember/ops/ops_util.h"

namespace ember {

OrderMeta order_meta(const char* op, const Tensor& self, int64_t dim, int64_t k, bool k_given) {
  if (k_given && self->dtype() == ScalarType::Bool) {
    throw std::runtime_error("topk does not support bool dtypes on CPU");
  }
  const int64_t d = wrap_dim(dim, self->dim(), op);
  const int64_t K = self->dim() == 0 ? 1 : self->sizes()[d];
  if (k_given && (k < 0 || k > K)) {
    throw std::runtime_error(message(op, "(): selected index k out of range (k = ", k,
                                     ", dimension ", d, " has size ", K, ")"));
  }
  return {d, K, k_given ? k : K};
}

}  // namespace ember
