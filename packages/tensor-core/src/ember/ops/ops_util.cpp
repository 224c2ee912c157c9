#include "ember/ops/ops_util.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstring>

#include "ember/backends/cpu/half_blocks.h"
#include "ember/backends/cpu/iter.h"
#include "ember/runtime/parallel.h"

namespace ember {

ScalarType result_type(std::initializer_list<const TensorImpl*> tensors) {
  ScalarType dim_t = ScalarType::Undefined, zero_t = ScalarType::Undefined,
             wrapped_t = ScalarType::Undefined;
  for (const TensorImpl* t : tensors) {
    if (!t) continue;
    ScalarType dt = t->dtype();
    if (t->wrapped_number) {
      if (is_floating(dt)) dt = default_float_dtype();
      if (dt == ScalarType::UInt64) dt = ScalarType::Int64;  // a Python int, however large
      if (is_complex(dt)) dt = to_complex(default_float_dtype());
      wrapped_t = promote_types(wrapped_t, dt);
    } else if (t->dim() == 0) {
      zero_t = promote_types(zero_t, dt);
    } else {
      dim_t = promote_types(dim_t, dt);
    }
  }
  // a weaker tier only matters when it is of a higher category (bool < int < float < complex)
  auto combine = [](ScalarType higher, ScalarType lower) {
    if (higher == ScalarType::Undefined) return lower;
    if (lower == ScalarType::Undefined) return higher;
    if (category(lower) > category(higher)) return promote_types(higher, lower);
    return higher;
  };
  return combine(dim_t, combine(zero_t, wrapped_t));
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t sa = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t sb = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (sa != sb && sa != 1 && sb != 1) {
      throw std::runtime_error(message(op, ": shapes ", shape_str(a), " and ", shape_str(b),
                                   " cannot be broadcast together (size ", sa, " vs ", sb,
                                   " at dimension ", i, ")"));
    }
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

Tensor expand_to(const Tensor& t, const Shape& shape, const char* op) {
  if (t->sizes() == shape) return t;
  const int64_t nd = static_cast<int64_t>(shape.size()), td = t->dim();
  if (td > nd) {
    throw std::runtime_error(message(op, ": cannot broadcast a tensor of shape ", shape_str(t->sizes()),
                                 " to shape ", shape_str(shape)));
  }
  Shape strides(nd, 0);
  for (int64_t i = 0; i < td; ++i) {
    const int64_t d = nd - td + i;
    if (t->sizes()[i] == shape[d]) {
      strides[d] = t->strides()[i];
    } else if (t->sizes()[i] != 1) {
      throw std::runtime_error(message(op, ": cannot broadcast a tensor of shape ",
                                   shape_str(t->sizes()), " to shape ", shape_str(shape)));
    }
  }
  return make_view(t, shape, strides, t->offset());
}

namespace {

template <typename To, typename From> void convert_loop(char** p, const int64_t* s, int64_t n) {
  if (s[0] == sizeof(To) && s[1] == sizeof(From)) {
    To* o = reinterpret_cast<To*>(p[0]);
    const From* in = reinterpret_cast<const From*>(p[1]);
    if constexpr (std::is_same_v<To, From>) {
      std::memcpy(o, in, static_cast<size_t>(n) * sizeof(To));
    } else if constexpr (std::is_same_v<To, BFloat16> && std::is_same_v<From, float>) {
      narrow_block(in, o, n);  // vectorised: autocast's casts and 16-bit products' results
    } else if constexpr (std::is_same_v<To, float> && std::is_same_v<From, BFloat16>) {
      widen_block(in, o, n);
    } else {
      for (int64_t i = 0; i < n; ++i) o[i] = convert<To>(in[i]);
    }
    return;
  }
  char* o = p[0];
  const char* in = p[1];
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<To*>(o + i * s[0]) = convert<To>(*reinterpret_cast<const From*>(in + i * s[1]));
  }
}

// A conversion from or to float16 (not both): through float blocks, with the float32
// conversion loop in the middle. The values are the same (every conversion of a float16 goes
// through float; a double is rounded to odd on its way, as in convert), and the float16 side
// is one compiled loop for all nine other dtypes.
template <typename To, typename From> void convert_via_float(char** p, const int64_t* s, int64_t n) {
  float buf[kHalfBlock];
  constexpr int64_t fs = sizeof(float);
  for (int64_t start = 0; start < n; start += kHalfBlock) {
    const int64_t m = std::min(kHalfBlock, n - start);
    char* out = p[0] + start * s[0];
    const char* in = p[1] + start * s[1];
    if constexpr (std::is_same_v<From, Half>) {
      widen_half_block(in, s[1], buf, m);
      char* q[2] = {out, reinterpret_cast<char*>(buf)};
      const int64_t qs[2] = {s[0], fs};
      convert_loop<To, float>(q, qs, m);
    } else {
      if constexpr (std::is_same_v<From, double>) {  // rounded to odd: convert<Half>(double)
        for (int64_t i = 0; i < m; ++i) buf[i] = to_float_round_odd(*reinterpret_cast<const double*>(in + i * s[1]));
      } else {
        char* q[2] = {reinterpret_cast<char*>(buf), const_cast<char*>(in)};
        const int64_t qs[2] = {fs, s[1]};
        convert_loop<float, From>(q, qs, m);
      }
      narrow_half_block(buf, out, s[0], m);
    }
  }
}

// A same-dtype copy whose source runs along another dim than the destination (a transpose,
// either way: x.t().contiguous(), or a row-major matrix into LAPACK's column-major layout):
// element by element along one side's inner dim, every access of the other side would touch a
// new cache line. Copies kTransposeTile x kTransposeTile tiles instead, so both sides use whole
// lines. Returns false (nothing copied) when the layout is not such a transpose.
constexpr int64_t kTransposeTile = 32;

bool transposed_copy(const StridedLoop<2>& L, size_t itemsize) {
  const int64_t nd = static_cast<int64_t>(L.shape.size());
  const int64_t item = static_cast<int64_t>(itemsize);
  // dd: the dim along which the destination is contiguous; sd: the source's (the last such)
  int64_t dd = -1, sd = -1;
  for (int64_t d = 0; d < nd; ++d) {
    if (L.shape[d] < kTransposeTile) continue;
    if (L.strides[d][0] == item && L.strides[d][1] != item) dd = d;
    if (L.strides[d][1] == item && L.strides[d][0] != item) sd = d;
  }
  if (dd < 0 || sd < 0) return false;
  const int64_t R = L.shape[dd], C = L.shape[sd];
  const int64_t rt = (R + kTransposeTile - 1) / kTransposeTile, ct = (C + kTransposeTile - 1) / kTransposeTile;
  int64_t outer = 1;
  for (int64_t d = 0; d < nd; ++d) outer *= d == dd || d == sd ? 1 : L.shape[d];
  dispatch_itemsize(itemsize, [&](auto tag) {
    using U = decltype(tag);
    parallel_for(0, outer * rt * ct, std::max<int64_t>(1, kParallelGrain / (kTransposeTile * kTransposeTile)),
                 [&](int64_t b, int64_t e) {
      for (int64_t it = b; it < e; ++it) {
        const int64_t tile = it % (rt * ct), o = it / (rt * ct);
        const int64_t i0 = (tile / ct) * kTransposeTile, j0 = (tile % ct) * kTransposeTile;
        char* dp = L.base[0];
        const char* sp = L.base[1];
        for (int64_t d = nd - 1, rem = o; d >= 0; --d) {  // locate the outer index
          if (d == dd || d == sd) continue;
          const int64_t idx = rem % L.shape[d];
          rem /= L.shape[d];
          dp += idx * L.strides[d][0];
          sp += idx * L.strides[d][1];
        }
        // i runs along dd (the destination's lines), j along sd (the source's lines)
        const int64_t ss = L.strides[dd][1], ds = L.strides[sd][0];
        const int64_t ni = std::min(R - i0, kTransposeTile), nj = std::min(C - j0, kTransposeTile);
        // through a buffer: every source and destination line is then read or written whole
        // at once (reading straight across, lines a page apart would evict each other)
        U buf[kTransposeTile * kTransposeTile];
        for (int64_t i = 0; i < ni; ++i) {
          const U* src = reinterpret_cast<const U*>(sp + (i0 + i) * ss) + j0;
          for (int64_t j = 0; j < nj; ++j) buf[j * kTransposeTile + i] = src[j];
        }
        for (int64_t j = 0; j < nj; ++j) {
          U* dst = reinterpret_cast<U*>(dp + (j0 + j) * ds) + i0;
          for (int64_t i = 0; i < ni; ++i) dst[i] = buf[j * kTransposeTile + i];
        }
      }
    });
  });
  return true;
}

}  // namespace

namespace {

// dst and s viewed with their dims in the order of dst's strides, largest first: the loop then
// walks the destination in memory order (a column-major destination, LAPACK's layout, walked
// along its rows would stride every write, and a column-major copy of a column-major source
// would not merge into one run). The same views when dst is already in that order.
std::pair<Tensor, Tensor> in_destination_order(const Tensor& dst, const Tensor& s) {
  const int64_t nd = dst->dim();
  bool ordered = true;  // (the common case, checked without allocating)
  for (int64_t d = 1, prev = 0; d < nd && ordered; ++d) {
    if (dst->size(d) == 1) continue;
    if (dst->size(prev) != 1) ordered = dst->stride(prev) >= dst->stride(d);
    prev = d;
  }
  if (ordered) return {dst, s};
  std::vector<int64_t> perm(static_cast<size_t>(nd));
  for (int64_t d = 0; d < nd; ++d) perm[d] = d;
  // (size-1 dims first: their strides mean nothing, and the loop drops them)
  auto key = [&](int64_t d) { return dst->size(d) == 1 ? std::numeric_limits<int64_t>::max() : dst->stride(d); };
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) { return key(x) > key(y); });
  auto permuted = [&](const Tensor& t) {
    Shape sizes(static_cast<size_t>(nd)), strides(static_cast<size_t>(nd));
    for (int64_t d = 0; d < nd; ++d) {
      sizes[d] = t->size(perm[d]);
      strides[d] = t->stride(perm[d]);
    }
    return make_view(t, sizes, strides, t->offset());
  };
  return {permuted(dst), permuted(s)};
}

}  // namespace

void copy_into(const Tensor& dst_in, const Tensor& src) {
  Tensor expanded = expand_to(src, dst_in->sizes(), "copy_");
  if (dst_in->numel() == 0) return;
  const auto [dst, s] = in_destination_order(dst_in, expanded);
  auto L = make_loop<2>(dst->sizes(), {dst.get(), s.get()});
  if (dst->dtype() == s->dtype() && transposed_copy(L, dst->itemsize())) return;
  if (dst->dtype() >= ScalarType::ComplexFloat || s->dtype() >= ScalarType::ComplexFloat) {
    // a pair with one of the later dtypes: no float16 blocks (their few conversions are direct)
    dispatch_any(dst->dtype(), "copy_", [&](auto to_tag) {
      using To = decltype(to_tag);
      dispatch_any(s->dtype(), "copy_", [&](auto from_tag) {
        using From = decltype(from_tag);
        constexpr bool extra = scalar_type_of<To>() >= ScalarType::ComplexFloat ||
                               scalar_type_of<From>() >= ScalarType::ComplexFloat;
        if constexpr (extra) {
          for_each_strided<2>(L, [](char** p, const int64_t* st, int64_t n) { convert_loop<To, From>(p, st, n); });
        }
      });
    });
    return;
  }
  dispatch_all(dst->dtype(), "copy_", [&](auto to_tag) {
    using To = decltype(to_tag);
    dispatch_all(s->dtype(), "copy_", [&](auto from_tag) {
      using From = decltype(from_tag);
      if constexpr (std::is_same_v<To, Half> != std::is_same_v<From, Half>) {
        for_each_strided<2>(L, [](char** p, const int64_t* st, int64_t n) { convert_via_float<To, From>(p, st, n); });
      } else {
        for_each_strided<2>(L, [](char** p, const int64_t* st, int64_t n) { convert_loop<To, From>(p, st, n); });
      }
    });
  });
}

void throw_not_on_cpu(const Device& d) {
  throw NotImplementedError(message("a CPU kernel was given a tensor on ", d.str(), ": this operation has no ",
                                    d.type == DeviceType::CUDA ? "CUDA" : "device", " kernel yet"));
}

Tensor to_device(const Tensor& t, const Device& device) {
  if (!t || t->device() == device || (t->device().type == DeviceType::CPU && device.type == DeviceType::CPU)) return t;
  Tensor out = empty(t->sizes(), t->dtype(), device);
  ops::copy(out, t, false, out);
  return out;
}

Tensor to_host(const Tensor& t) { return to_device(t, Device{}); }

double finite_max(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Float16: return 65504.0;
    case ScalarType::BFloat16: return 3.3895313892515355e38;
    case ScalarType::Float32: return static_cast<double>(std::numeric_limits<float>::max());
    default: return std::numeric_limits<double>::max();
  }
}

const char* convert_type_name(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::UInt8: return "uint8_t";
    case ScalarType::Int8: return "int8_t";
    case ScalarType::Int16: return "int16_t";
    case ScalarType::Int32: return "int";
    case ScalarType::Int64: return "int64_t";
    case ScalarType::Float16: return "c10::Half";
    case ScalarType::BFloat16: return "c10::BFloat16";
    case ScalarType::Float32: return "float";
    case ScalarType::Float64: return "double";
    default: return dtype_name(dtype);
  }
}

bool value_overflows(ScalarType dtype, const Scalar& v) {
  if (is_complex(dtype) || v.is_bool()) return false;
  if (v.is_complex() && v.im != 0) return true;  // PyTorch: a complex number into a real tensor
  if (dtype == ScalarType::Bool || dtype == ScalarType::Float64) return false;
  if (is_floating(dtype)) {
    const double d = v.to_double();
    return std::isfinite(d) && (d < -finite_max(dtype) || d > finite_max(dtype));
  }
  bool overflow = false;
  dispatch_any(dtype, "convert", [&](auto tag) {
    using T = decltype(tag);
    using L = std::numeric_limits<T>;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (v.is_float()) {
        // the 64-bit types' max rounds up to 2**63 / 2**64 as a double: compare with the bound
        const double above = std::ldexp(1.0, L::digits);
        overflow = std::isnan(v.d) || v.d < static_cast<double>(L::lowest()) ||
                   v.d > static_cast<double>(L::max()) || (sizeof(T) == 8 && v.d >= above);
      } else if (v.unsigned64) {
        overflow = !std::is_same_v<T, uint64_t>;  // 2**63 and above: only uint64 holds them
      } else if (std::is_same_v<T, uint64_t>) {
        overflow = false;  // every int64 fits, negatives wrap
      } else if (std::is_unsigned_v<T>) {
        // negative integers wrap (two's complement), as PyTorch allows
        overflow = v.i > static_cast<int64_t>(L::max()) || (v.i < 0 && -v.i > static_cast<int64_t>(L::max()));
      } else {
        overflow = v.i < static_cast<int64_t>(L::lowest()) || v.i > static_cast<int64_t>(L::max());
      }
    }
  });
  return overflow;
}

void check_fill_value(ScalarType dtype, const Scalar& value) {
  if (value_overflows(dtype, value)) {
    throw std::runtime_error(message("value cannot be converted to type ", convert_type_name(dtype), " without overflow"));
  }
}

void fill_with(const Tensor& dst, const Scalar& value) {
  check_fill_value(dst->dtype(), value);
  if (dst->numel() == 0) return;
  dispatch_any(dst->dtype(), "fill_", [&](auto tag) {
    using T = decltype(tag);
    const T v = value.to<T>();
    auto L = make_loop<1>(dst->sizes(), {dst.get()});
    for_each_strided<1>(L, [v](char** p, const int64_t* st, int64_t n) {
      if (st[0] == sizeof(T)) {
        T* o = reinterpret_cast<T*>(p[0]);
        std::fill(o, o + n, v);
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * st[0]) = v;
      }
    });
  });
}

Tensor to_dtype(const Tensor& t, ScalarType dtype) {
  if (t->dtype() == dtype) return t;
  Tensor out = empty(t->sizes(), dtype, t->device());
  if (t->device().type == DeviceType::CPU) copy_into(out, t);
  else ops::copy(out, t, false, out);  // the device's copy kernel
  return out;
}

Tensor as_contiguous(const Tensor& t) {
  if (t->is_contiguous()) return t;
  Tensor out = empty(t->sizes(), t->dtype());
  copy_into(out, t);
  return out;
}

Tensor prepare_out(const char* op, const Tensor& out, const Shape& shape, ScalarType dtype) {
  if (!out) return empty(shape, dtype);
  check_cpu(out, op);
  if (out->sizes() == shape && out->dtype() == dtype && out->is_contiguous()) return out;
  return empty(shape, dtype);
}

namespace {

// Whether t's elements fill a range of its storage once each (a permutation of contiguous
// strides, dims of size 1 ignored).
bool dense_and_non_overlapping(const TensorImpl* t) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of the dims of size > 1
  for (int64_t d = 0; d < t->dim(); ++d) {
    if (t->size(d) == 0) return true;
    if (t->size(d) > 1) dims.emplace_back(t->strides()[static_cast<size_t>(d)], t->size(d));
  }
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

}  // namespace

void check_written(const char* op, const TensorImpl* dst, const TensorImpl* const* inputs, size_t count) {
  if (!dst || dst->numel() <= 1) return;
  for (int64_t d = 0; d < dst->dim(); ++d) {
    if (dst->size(d) > 1 && dst->strides()[static_cast<size_t>(d)] == 0) {
      throw std::runtime_error(message(
          op, ": unsupported operation: more than one element of the written-to tensor refers to a single memory "
          "location. Please clone() the tensor before performing the operation."));
    }
  }
  bool dst_dense = false, dense_known = false;
  for (size_t k = 0; k < count; ++k) {
    const TensorImpl* in = inputs[k];
    if (!in || in == dst || in->storage() != dst->storage() || in->numel() == 0) continue;
    if (in->offset() == dst->offset() && in->sizes() == dst->sizes() && in->strides() == dst->strides() &&
        in->dtype() == dst->dtype()) {
      continue;  // the written tensor itself as an operand: in place
    }
    if (!dense_known) {
      dst_dense = dense_and_non_overlapping(dst);
      dense_known = true;
    }
    if (!dst_dense || !dense_and_non_overlapping(in)) continue;  // too hard to tell: as PyTorch
    const int64_t a0 = dst->offset() * static_cast<int64_t>(dst->itemsize());
    const int64_t a1 = a0 + dst->numel() * static_cast<int64_t>(dst->itemsize());
    const int64_t b0 = in->offset() * static_cast<int64_t>(in->itemsize());
    const int64_t b1 = b0 + in->numel() * static_cast<int64_t>(in->itemsize());
    if (a0 < b1 && b0 < a1) {
      throw std::runtime_error(message(
          op, ": unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
          "single memory location. Please clone() the tensor before performing the operation."));
    }
  }
}

namespace {
thread_local const TensorImpl* t_inplace_target = nullptr;
}  // namespace

InplaceTarget::InplaceTarget(const TensorImpl* self) : previous_(t_inplace_target) { t_inplace_target = self; }
InplaceTarget::~InplaceTarget() { t_inplace_target = previous_; }

namespace {

// PyTorch's resize_ of an out= with no elements: the result's shape, contiguous, at out's
// offset in out's own storage, which grows (keeping its bytes; every view follows) when too
// small. Memory owned elsewhere (NumPy, DLPack, shared between processes) cannot grow:
// PyTorch's error, except for an empty one, which out leaves for fresh memory.
void resize_empty_out(const Tensor& out, const Shape& sizes) {
  Storage& storage = *out->storage();
  const int64_t elements = shape_numel(sizes);
  int64_t need = 0;
  if (__builtin_add_overflow(out->offset(), elements, &need) ||
      __builtin_mul_overflow(need, static_cast<int64_t>(out->itemsize()), &need)) {
    throw std::runtime_error(message("Storage size calculation overflowed with sizes=", shape_str(sizes)));
  }
  if (static_cast<size_t>(need) > storage.nbytes()) {
    if (storage.is_external() && storage.nbytes() == 0) {
      Tensor fresh = empty(sizes, out->dtype(), out->device());
      out->set_storage(fresh->storage(), sizes, fresh->strides(), 0);
      return;
    }
    if (storage.is_external()) throw std::runtime_error("Trying to resize storage that is not resizable");
    Tensor larger = empty({need}, ScalarType::UInt8, out->device());
    if (storage.nbytes() > 0) {
      const int64_t old_bytes = static_cast<int64_t>(storage.nbytes());
      Tensor old = std::make_shared<TensorImpl>(out->storage(), Shape{old_bytes}, Shape{1}, 0, ScalarType::UInt8);
      Tensor head = make_view(larger, {old_bytes}, {1}, 0);
      if (out->device().type == DeviceType::CPU) std::memcpy(head->data_ptr(), old->data_ptr(), storage.nbytes());
      else ops::copy(head, old, false, head);
    }
    storage.take_memory(*larger->storage());
  }
  out->set_geometry(sizes, contiguous_strides(sizes), out->offset());
}

}  // namespace

Tensor finish_out(const char* op, const Tensor& out, const Tensor& result) {
  if (!out || out == result) return result;
  if (out->sizes() != result->sizes()) {
    if (out.get() == t_inplace_target) {  // PyTorch's words for an in-place op
      throw std::runtime_error(message(op, ": output with shape ", shape_str(out->sizes()),
                                       " doesn't match the broadcast shape ", shape_str(result->sizes())));
    }
    if (out->numel() != 0) {
      throw std::runtime_error(message(op, ": output with shape ", shape_str(out->sizes()),
                                       " doesn't match the result shape ", shape_str(result->sizes())));
    }
    resize_empty_out(out, result->sizes());
  }
  if (!can_cast(result->dtype(), out->dtype())) {
    throw std::runtime_error(message(op, ": result type ", dtype_name(result->dtype()),
                                 " can't be cast to the desired output type ",
                                 dtype_name(out->dtype())));
  }
  if (out->device().type == DeviceType::CPU) {
    copy_into(out, result);
  } else {
    ops::copy(out, result, false, out);
  }
  return out;
}

void check_index_tensor(const char* op, const Tensor& index) {
  if (index->dtype() != ScalarType::Int64 && index->dtype() != ScalarType::Int32) {
    throw std::runtime_error(message(op, ": expected an index tensor of dtype int64, got ",
                                 dtype_name(index->dtype())));
  }
  check_cpu(index, op);
}

std::vector<int64_t> reduce_dims(const char* op, const std::optional<Shape>& dims, int64_t ndim) {
  std::vector<int64_t> out;
  if (!dims || dims->empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : *dims) {
    int64_t w = wrap_dim(d, ndim, op);
    if (std::find(out.begin(), out.end(), w) != out.end()) {
      throw std::runtime_error(message(op, ": dim ", w, " appears multiple times in the list of dims"));
    }
    out.push_back(w);
  }
  std::sort(out.begin(), out.end());
  if (ndim == 0) out.clear();
  return out;
}

Shape reduced_shape(const Shape& in, const std::vector<int64_t>& dims, bool keepdim) {
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
    bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!reduced) out.push_back(in[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

}  // namespace ember
