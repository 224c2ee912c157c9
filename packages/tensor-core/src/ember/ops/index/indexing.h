// Advanced (NumPy-style) indexing behind the [] operator. index_get and index_put are the CPU
// implementations (CPU tensors only); ops::_index and ops::index_put run them, or the CUDA
// kernels, on any device.
#pragma once

#include <vector>

#include "ember/core/tensor.h"

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

// indices in index_put's form (the `Tensor?[] indices` of index_put and _index) normalised for
// index_get / index_put: one entry per leading dim of target it indexes, a null tensor (a full
// slice, kept null), a bool/uint8 mask replaced by one index tensor per dim it covers (the
// columns of its nonzero(), computed on the mask's device; its sizes must match target's), or
// an int64/int32 index tensor as it is. IndexError (messages starting with `op`) for other
// dtypes and for more dims indexed than target has.
std::vector<Tensor> advanced_indices(const char* op, const Tensor& target, const std::vector<Tensor>& indices);

// The value of a 0-d tensor as a Scalar (bool, int or float by dtype category).
Scalar scalar_of(const Tensor& t);

// PyTorch's overflow check for a number written into a tensor of dtype (fill values, scatter
// values, assignments): RuntimeError "value cannot be converted to type ... without overflow".
// Negative integers may wrap into uint8; inf and nan are allowed for floating dtypes.
void check_value_fits(const char* op, const Scalar& v, ScalarType dtype, bool check_16bit_floats);

}  // namespace ember
