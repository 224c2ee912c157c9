// Meta functions of cat.
//
// A meta function is the part of an op that does not depend on the device: it checks the
// arguments (PyTorch's errors, types and messages, in PyTorch's order), wraps dims and
// computes the result's shape and dtype. The CPU and CUDA kernels of the family call them
// first, so that only the compute differs between devices. They read sizes, strides, dtypes
// and flags, never element data, so they run on tensors of any device; device checks stay in
// the kernels. Values (indices) are checked by the kernels, which throw the errors declared
// here.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

// ------------------------------------------------------------------------------------- cat

struct CatMeta {
  std::vector<const Tensor*> used;  // the inputs concatenated, in order (see cat_meta)
  ScalarType dtype;                 // all inputs' dtypes promoted
  Shape shape;                      // the result's shape
  int64_t dim;                      // the wrapped dim (0 when every input was skipped)
};

// cat's checks and result: a non-empty list (ValueError), no 0-d tensor, 1-d empty tensors
// skipped whatever the other inputs (legacy; with only such tensors the result is [0] and
// dim is not checked), the others of one number of dims and equal sizes outside dim, and the
// promoted dtype castable to out's (TypeError) when out is given. Pointers in `used` point
// into `tensors`.
CatMeta cat_meta(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out);

// What cat writes into: out when it has m's shape and dtype (any strides) and shares storage
// with none of `tensors`, else a fresh contiguous tensor on `device`.
Tensor cat_result(const std::vector<Tensor>& tensors, const Tensor& out, const CatMeta& m, const Device& device);

}  // namespace ember
