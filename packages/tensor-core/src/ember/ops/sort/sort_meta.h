// What sort, argsort and topk check and compute the same way on every device (defined in
// sort_meta.cpp; the CPU kernels of sort_cpu.cpp and the CUDA kernels of sort_cuda.cu call
// them): the argument checks, the wrapped dim and the row length.
//
// The order both devices produce: keys compared as numbers in opmath (float for the 16-bit
// floats), NaN above every number (all NaNs equal), -0.0 equal to 0.0; descending reverses
// that. sort and argsort break ties by the original index (stable whatever `stable` says);
// values are the original elements, bit for bit.
#pragma once

#include <cstdint>

#include "ember/core/tensor.h"

namespace ember {

struct OrderMeta {
  int64_t dim;  // wrapped (0 for a 0-d self)
  int64_t K;    // the length of a row along dim (1 for a 0-d self)
  int64_t k;    // how many entries per row the result keeps: K for sort/argsort, k for topk
};

// The checks of sort / argsort (k_given false) and topk (k_given true, op "topk"): topk
// rejects bool ("topk does not support bool dtypes on CPU", as PyTorch words it), dim is
// wrapped, and k must lie in [0, K] ("topk(): selected index k out of range ...").
OrderMeta order_meta(const char* op, const Tensor& self, int64_t dim, int64_t k, bool k_given);

// _searchsorted_bounds (searchsorted's binary search, called by its composite, which has
// promoted both operands to one dtype and checked the shapes): the sequence's rows of n;
// one row for every value (one_row), or one row per run of per_row values.
struct SearchMeta {
  int64_t n;
  int64_t per_row;
  bool one_row;
};
SearchMeta search_meta(const Tensor& sorted_sequence, const Tensor& values);

}  // namespace ember
