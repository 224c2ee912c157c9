// Helpers for writing ops: broadcasting, type promotion, out= handling, copies.
#pragma once

#include <initializer_list>
#include <vector>

#include "ember/core/tensor.h"
#include "ops_decl.h"

namespace ember {

// PyTorch's result_type over tensors (0-d tensors and wrapped numbers are weaker).
ScalarType result_type(std::initializer_list<const TensorImpl*> tensors);
inline ScalarType result_type(const Tensor& a, const Tensor& b) { return result_type({a.get(), b.get()}); }

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// ceil(a / b) for a >= 0, b > 0, without the overflow of (a + b - 1) / b near int64's end.
constexpr int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }
// A view of t broadcast to shape (t's dims align to the right); RuntimeError names the op.
Tensor expand_to(const Tensor& t, const Shape& shape, const char* op);

// t converted to dtype, on t's device, contiguous (t itself when it already has the dtype).
Tensor to_dtype(const Tensor& t, ScalarType dtype);
// t if C-contiguous, else a contiguous copy.
Tensor as_contiguous(const Tensor& t);

// Writes src (broadcast to dst's shape, cast to dst's dtype) into dst.
void copy_into(const Tensor& dst, const Tensor& src);
// t itself when on device (null stays null), else a copy of it there (a copy to the CPU waits
// for the source device's queued work).
Tensor to_device(const Tensor& t, const Device& device);
// to_device(t, the CPU).
Tensor to_host(const Tensor& t);
void fill_with(const Tensor& dst, const Scalar& value);
// PyTorch's checked conversion of a number to a dtype (c10::checked_convert): true for NaN or
// a value out of range for an integer dtype (uint8 takes the integers -255..-1 as wrapped),
// and for a finite value beyond a float16/bfloat16/float32 range (inf and NaN are fine
// there); bool and float64 take any value. check_value_fits (indexing.h) names the op.
bool value_overflows(ScalarType dtype, const Scalar& value);
// check_fill_value: RuntimeError "value cannot be converted to type <T> without overflow"
// (fill_, full, an op's alpha) when value_overflows.
void check_fill_value(ScalarType dtype, const Scalar& value);
// The largest finite value of a floating dtype.
double finite_max(ScalarType dtype);
// The C++ type PyTorch's conversion messages name for a dtype: "int64_t", "float", "Half", ...
const char* convert_type_name(ScalarType dtype);

// out= support. prepare_out returns the tensor to compute into: a fresh contiguous tensor
// when out is null, else out itself if it already has the shape and dtype, else a
// temporary. finish_out checks out (shape, castable dtype) and copies the result into it
// (on any device: CUDA kernels use it too).
// An out with zero elements is resized to the result's shape.
Tensor prepare_out(const char* op, const Tensor& out, const Shape& shape, ScalarType dtype);
Tensor finish_out(const char* op, const Tensor& out, const Tensor& result);
// While alive, names the tensor an in-place op writes (set by the bindings around the call):
// finish_out never resizes it, even with no elements, as PyTorch never resizes self.
class InplaceTarget {
 public:
  explicit InplaceTarget(const TensorImpl* self);
  ~InplaceTarget();
  InplaceTarget(const InplaceTarget&) = delete;
  InplaceTarget& operator=(const InplaceTarget&) = delete;

 private:
  const TensorImpl* previous_;
};

// The memory checks of a written tensor (an in-place op's self, an out= tensor), PyTorch's:
// RuntimeError naming op when dst has elements that share memory (a dim of size > 1 and
// stride 0: an expanded tensor), or when an input shares some, not all, of dst's memory
// (both dense: their byte ranges intersect without the same geometry; an input that is dst
// itself is an in-place operand and fine). Geometries too hard to decide cheaply pass, as
// in PyTorch. Null inputs are skipped.
void check_written(const char* op, const TensorImpl* dst, const TensorImpl* const* inputs, size_t count);
inline void check_written(const char* op, const TensorImpl* dst, std::initializer_list<const TensorImpl*> inputs) {
  check_written(op, dst, inputs.begin(), inputs.size());
}

// The bits of a 16-byte element (complex128) for the kernels that only move elements.
struct Bytes16 {
  uint64_t lo = 0, hi = 0;
  Bytes16() = default;
  EMBER_HOST_DEVICE constexpr explicit Bytes16(int) {}  // U(0): all bits clear
};

// Calls f(U{}) with U an unsigned type of the element size: copies need no more than that.
template <typename F> void dispatch_itemsize(size_t n, F&& f) {
  switch (n) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    case 8: f(uint64_t{}); break;
    case 16: f(Bytes16{}); break;
    default: throw std::runtime_error(message("unsupported element size ", n));
  }
}

// Calls f(T{}) with T the C++ type of a float32 (or anything else) / float64 dtype: for
// kernels whose callers have already checked that the dtype is one of the two.
template <typename F> void dispatch_real(ScalarType dt, F&& f) {
  if (dt == ScalarType::Float64) {
    f(double{});
  } else {
    f(float{});
  }
}

// An int64 `index` argument check: dtype int64 (int32 accepted), device cpu.
void check_index_tensor(const char* op, const Tensor& index);

// Reduction helpers: normalised, sorted, de-duplicated dims (all dims when `dims` is empty
// or absent); the output shape with or without kept dims.
std::vector<int64_t> reduce_dims(const char* op, const std::optional<Shape>& dims, int64_t ndim);
Shape reduced_shape(const Shape& in, const std::vector<int64_t>& dims, bool keepdim);

namespace ops {
// self seen with the order of dims reversed (negative strides; flip's checks and messages);
// self itself when empty.
Tensor reversed_view(const Tensor& self, const Shape& dims);
}  // namespace ops

}  // namespace ember
