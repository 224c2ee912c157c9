// Advanced (NumPy-style) indexing behind the [] operator.
#pragma once

#include <vector>

#include "ember/tensor.h"

namespace ember {

// self[indices] for integer index tensors. `indices` has at most self->dim() entries, one per
// leading dim of self; a null entry is a full slice ':'. The non-null entries are integer
// tensors (int64 or int32; bool masks must already be turned into nonzero() indices) that
// broadcast together to a shape B. Negative indices count from the end; out-of-range ones
// raise IndexError. The result follows NumPy: when the indexed dims are adjacent, B replaces
// them in place, otherwise B comes first and the remaining dims follow in order.
Tensor index_get(const Tensor& self, const std::vector<Tensor>& indices);

// self[indices] = values (or += with accumulate, duplicates adding up): values broadcast to
// the shape index_get would return (leading size-1 dims of values are ignored) and are cast
// to self's dtype. All indices are validated before anything is written.
void index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate);

// The value of a 0-d tensor as a Scalar (bool, int or float by dtype category).
Scalar scalar_of(const Tensor& t);

// PyTorch's overflow check for a number written into a tensor of dtype (fill values, scatter
// values, assignments): RuntimeError "value cannot be converted to type ... without overflow".
// Negative integers may wrap into uint8; inf and nan are allowed for floating dtypes.
void check_value_fits(const char* op, const Scalar& v, ScalarType dtype, bool check_16bit_floats);

}  // namespace ember

// The Python binding of Tensor.__getitem__ / __setitem__ (python_indexing.cpp). Only binding
// translation units include pybind11, so the declaration is guarded.
#ifdef PYBIND11_VERSION_MAJOR
#include "ember/bind_common.h"
namespace ember {
void bind_indexing(TensorClass& cls);
}  // namespace ember
#endif
