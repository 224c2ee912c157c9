// The argument checks of sort, argsort, topk and searchsorted's search (sort_meta.h), called by the CPU kernels
// (sort_cpu.cpp) and the CUDA kernels (sort_cuda.cu).
#include "ember/ops/sort/sort_meta.h"

#include <algorithm>

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

SearchMeta search_meta(const Tensor& sorted_sequence, const Tensor& values) {
  const char* op = "searchsorted";
  if (sorted_sequence->dtype() != values->dtype()) {
    throw std::runtime_error(message(op, ": expected sorted_sequence and values of one dtype, got ",
                                     dtype_name(sorted_sequence->dtype()), " and ", dtype_name(values->dtype())));
  }
  if (sorted_sequence->dim() == 0) {
    throw std::runtime_error(message(op, ": sorted_sequence must have at least 1 dimension"));
  }
  const int64_t n = sorted_sequence->size(-1);
  if (sorted_sequence->dim() == 1) return {n, 1, true};
  const Shape lead(sorted_sequence->sizes().begin(), sorted_sequence->sizes().end() - 1);
  if (values->dim() != sorted_sequence->dim() || !std::equal(lead.begin(), lead.end(), values->sizes().begin())) {
    throw std::runtime_error(message(op, ": the leading dims of sorted_sequence ", shape_str(sorted_sequence->sizes()),
                                     " and values ", shape_str(values->sizes()), " must match"));
  }
  return {n, std::max<int64_t>(values->size(-1), 1), false};
}

}  // namespace ember
