// Meta functions of the index ops: gather, scatter, scatter_add, index_select, index_add, masked_fill.
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

// int64 or int32: the dtypes an index tensor may have.
bool is_index_dtype(ScalarType t);

// ------------------------------------------------------------------------ shared helpers

// A 0-d tensor seen as shape [1] (gather/scatter/index ops treat 0-d tensors as 1-d); any
// other tensor is returned as it is.
Tensor at_least_1d(const Tensor& t);

// t's data seen with `sizes` (each <= t's size) and t's strides, with the stride of dim
// zero_dim set to 0 (none when zero_dim < 0).
Tensor restride(const Tensor& t, const Shape& sizes, int64_t zero_dim);

// The tensor an op computes into: out when it is contiguous with `shape` and `dtype` and
// shares storage with none of `inputs` (null entries are skipped), else a fresh contiguous
// tensor on `device`. Does not check out's device.
Tensor out_or_fresh(const Tensor& out, const Shape& shape, ScalarType dtype, const Device& device,
                    std::initializer_list<const Tensor*> inputs);

// RuntimeError "<op>: index <bad> is out of bounds for dimension <dim> with size <size>"
// (op as PyTorch names it: "gather()", "scatter_add()", "index_add_()").
[[noreturn]] void throw_index_out_of_bounds(const char* op, int64_t bad, int64_t dim, int64_t size);

// --------------------------------------------------------------------- gather and scatter

// gather's checks: dim wrapped against self; when index has elements, an int32/int64 index
// of self's number of dims (0-d counting as 1-d) no larger than self outside dim; out (if
// given) of self's dtype. Returns the wrapped dim. The result has index's shape and self's
// dtype; indices must lie in [0, at_least_1d(self).size(dim)) (throw_index_out_of_bounds
// with "gather()").
int64_t gather_meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out);

// The checks of scatter (op "scatter") and scatter_add (op "scatter_add"): dim wrapped
// against self; an int32/int64 index when it has elements; src of self's dtype unless
// src_is_value (a wrapped number); when index has elements, index, self and src (unless a
// value) of one number of dims and index no larger than self outside dim nor than src.
// Returns the wrapped dim. The result has self's shape and dtype; indices must lie in
// [0, at_least_1d(self).size(dim)) (throw_index_out_of_bounds with "<op>()").
int64_t scatter_meta(const char* op, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                     bool src_is_value);

// --------------------------------------------------------------------------- index_select

struct IndexSelectMeta {
  int64_t dim;   // wrapped
  Shape shape;   // self's shape with index.numel() at dim
  int64_t size;  // the bound of the indices: at_least_1d(self).size(dim)
};

// index_select's checks before its indices are read: dim wrapped, a 0-d or 1-d index
// (IndexError), int32/int64, and exactly one index for a 0-d self.
IndexSelectMeta index_select_meta(const Tensor& self, int64_t dim, const Tensor& index);
// IndexError "index_select(): index out of range in self" (an index outside [0, size)).
[[noreturn]] void throw_index_select_out_of_range();
// index_select's out= check, made after the indices: out (if given) of self's dtype.
void check_index_select_out(const Tensor& self, const Tensor& out);

// ------------------------------------------------------------------------------ index_add

// index_add's checks: dim wrapped, a 0-d or 1-d int32/int64 index, source of self's dtype
// with index.numel() entries along dim and self's sizes elsewhere. Returns the wrapped dim.
// The result has self's shape and dtype.
int64_t index_add_meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
// Whether index_add has nothing to add and reads no index: no index, an empty source, or an
// empty self (PyTorch skips the index check then, except in its 1-d kernel with alpha != 1).
bool index_add_is_noop(const Tensor& self, const Tensor& index, const Tensor& source, const Scalar& alpha);
// The error of an index `bad` outside [0, size) along dim (wrapped): RuntimeError from
// throw_index_out_of_bounds where PyTorch goes through index_put (alpha 1, not bool, first or
// last of >= 2 dims), else IndexError "index_add_(): index out of range in self".
[[noreturn]] void throw_index_add_out_of_range(const Tensor& self, int64_t dim, const Scalar& alpha, int64_t bad,
                                               int64_t size);

// ---------------------------------------------------------------------------- masked_fill

// masked_fill (out null) / masked_fill_ (out is self): RuntimeError unless mask is bool, unless
// value is 0-d; when value is a CPU tensor, PyTorch's overflow check of it against self's dtype
// (a value on a device is converted without it: reading it would synchronise). Returns the
// result's shape, self and mask broadcast (RuntimeError naming "masked_fill" when they do not),
// which masked_fill_ requires to be self's shape (RuntimeError).
Shape masked_fill_meta(const Tensor& self, const Tensor& mask, const Tensor& value, const Tensor& out);

}  // namespace ember
