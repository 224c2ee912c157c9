// What advanced indexing (index / index_put) and masked_select check and compute the same way
// on every device (defined in index_put_meta.cpp; the CPU kernels of index_cpu.cpp and the CUDA
// kernels of index_cuda.cu, select_cuda.cu and sort_cuda.cu call them): PyTorch's errors and
// messages, the normalisation of index_put's indices and the shapes and strides of the
// results. They read sizes, strides and dtypes, never element data, with one exception:
// index_put_indices turns bool masks into their nonzero() indices (on the mask's device).
// Index values are checked by the kernels, which throw throw_advanced_index_out_of_bounds.
#pragma once

#include <cstdint>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

// self[indices] for integer index tensors (see indexing.h): the indexed dims, the shape B the
// index tensors broadcast to, and the result's layout. Element p of the result is self's
// element at (self's data + the offset from src_strides) + the element offset of the index
// position, where the offsets of the index positions form a contiguous int64 tensor of shape
// B seen over the result's shape with off_strides.
struct AdvancedMeta {
  std::vector<int64_t> pos;  // the indexed dims of self, increasing
  Shape B;                   // the index tensors broadcast together
  Shape shape;               // the result's shape
  Shape src_strides;         // self's strides over shape (0 on the broadcast index dims)
  Shape off_strides;         // the offsets' strides over shape (0 on self's other dims)
  int64_t bfirst = 0;        // where the broadcast index dims start in shape
  int64_t bdims = 0;         // how many there are
};

// The checks of advanced indexing, in order: no more indices than dims, int64/int32 index
// tensors (IndexError), on the CPU when cpu_indices, broadcastable together (IndexError), at
// least one, and no index into a dim of size 0 when there is something to index. Index
// values must lie in [-size, size) (negative ones count from the end), checked per indexed
// dim in increasing order, and only when the result has elements.
AdvancedMeta advanced_index_meta(const Tensor& self, const std::vector<Tensor>& indices, bool cpu_indices);

// IndexError "index <bad> is out of bounds for dimension <position> with size <size>" (or
// "... for dimension with size 0"). As PyTorch's, the dimension named is the index tensor's
// position among the indexed dims (x[:, idx] names dimension 0), not the dim of self.
[[noreturn]] void throw_advanced_index_out_of_bounds(int64_t bad, int64_t position, int64_t size);

// RuntimeError "Index put requires the source and destination dtypes match, got Half for the
// destination and Double for the source." (PyTorch's words and type names).
[[noreturn]] void throw_index_put_dtypes(ScalarType destination, ScalarType source);

// values broadcast to the advanced index result's shape ("shape mismatch: value tensor of
// shape ... cannot be broadcast to indexing result of shape ..."); as in PyTorch's index_put_,
// no leading size-1 dims are dropped (x[key] = value drops them before, bind_indexing.cpp).
Tensor advanced_index_values(const Tensor& values, const Shape& shape);

// index_put's checks and its indices normalised: values of target's dtype; each entry of
// indices a null tensor (a full slice, kept null), a bool/uint8 mask covering as many dims as
// it has (their sizes must match target's; replaced by one index tensor per covered dim,
// the columns of its nonzero()), or an int64/int32 index tensor; no more dims indexed than
// target has (IndexError). The result has one entry per leading dim of target it indexes.
std::vector<Tensor> index_put_indices(const Tensor& target, const std::vector<Tensor>& indices, const Tensor& values);

// Whether PyTorch's index_put_ (not accumulating) is a masked_fill_ of value.item(), which
// takes a value of any dtype: one element put by one bool mask and no integer index tensor
// (a Python bool in a [] key counts as a mask). Elsewhere the value must have self's dtype.
inline bool index_put_fills_one_value(int64_t value_numel, int64_t masks, int64_t int_indices) {
  return value_numel == 1 && masks == 1 && int_indices == 0;
}

// index_put's values as written: converted to target's dtype (after PyTorch's overflow check of
// the value) where PyTorch's index_put_ becomes a masked_fill_ of value.item(), which takes any
// dtype: one element on the CPU, not accumulated, one bool/uint8 mask the only index. Otherwise
// values as given (index_put_indices then wants target's dtype).
Tensor index_put_values(const Tensor& target, const std::vector<Tensor>& indices, const Tensor& values,
                        bool accumulate);

// masked_select's checks: a bool mask, out (if given) of self's dtype, self and mask
// broadcastable. Returns the broadcast shape; the result is 1-d, the entries of self (seen
// with that shape) where the mask is true, in row-major order.
Shape masked_select_meta(const Tensor& self, const Tensor& mask, const Tensor& out);

}  // namespace ember
