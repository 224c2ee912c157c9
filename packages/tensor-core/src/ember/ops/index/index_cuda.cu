// CUDA kernels of index_select, gather, scatter, scatter_add, index_add, index_put and _index.
// The argument checks, dim wrapping and result shapes and dtypes are the meta functions the
// CPU kernels (index_cpu.cpp) call too (index_meta.h, index_put_meta.h); what is here is the
// compute.
//
// Indices are checked on the device before anything is written (a kernel finds the first
// bad one in flat order, whose value the error message names); reading that answer waits
// for the device, as reading any value does.
//
// - scatter / scatter_add / index_add: one thread per position of the other dims walks the
//   scattered dim in order, as one CPU thread does: the last write wins, and sums are added
//   in the CPU's order (with no fused multiply-add), so the results equal the CPU's.
// - index_put and _index (its read side, a gather of the same positions) check all their
//   index tensors with one wait (each tensor's first bad position found on the device, the
//   answers read back together; bool masks were already turned into indices by nonzero,
//   which waits too). Without accumulate, repeated targets get one of their values (which
//   one is unspecified, as on the CPU and in PyTorch). With accumulate, repeated targets add
//   up with atomics (compare-and-swap on the enclosing 32-bit word for the 1- and 2-byte
//   types), each addition rounded as on the CPU, but in an unspecified order: floating sums
//   may differ from the CPU's in the last bits.
#include <algorithm>
#include <cstring>
#include <vector>
#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/index/index_checks_cuda.cuh"
#include "ember/ops/index/index_meta.h"
#include "ember/ops/index/index_put_meta.h"
#include "ember/ops/index/indexing.h"

namespace ember::cuda_engine {
namespace {

// out[i] = *(src_i + idx[i] * step) over out's shape; src and idx are views of out's sizes
// (src's indexed dim with stride 0); step in bytes. Indices already checked.
template <typename U>
void gather_t(const char* op, const Tensor& out, const Tensor& src, const Tensor& idx, int64_t step) {
  launch_elementwise<3>(op, out->device(), out->sizes(), {out.get(), src.get(), idx.get()},
                        [step] __device__(char** base, const int64_t* off) {
                          const int64_t k = *reinterpret_cast<const int64_t*>(base[2] + off[2]);
                          *reinterpret_cast<U*>(base[0] + off[0]) =
                              *reinterpret_cast<const U*>(base[1] + off[1] + k * step);
                        });
}

void gather_bytes(const char* op, const Tensor& out, const Tensor& src, const Tensor& idx, int64_t step) {
  dispatch_itemsize(out->itemsize(), [&](auto tag) { gather_t<decltype(tag)>(op, out, src, idx, step); });
}

// ---------------------------------------------------------------------------------------------
// scatter, scatter_add, index_add: one thread per position of the other dims, walking the
// scattered dim in increasing order, as index_cpu.cpp's scatter_loop does on one CPU thread. The
// last write wins and sums are taken in the CPU's order: the results equal the CPU's.

// f(dst[col, idx[col, i]], src[col, i]) (as byte pointers) for i = 0 .. n-1 in order, one
// thread per column: the positions of `shape` with the scattered dim d set aside. dst is
// viewed with d's stride zeroed, step is the byte distance of one position along d in dst.
template <typename F>
void scatter_columns(const char* op, const Shape& shape, int64_t d, const Tensor& dst, const Tensor& idx,
                     const Tensor& src, int64_t step, F f) {
  const size_t ud = static_cast<size_t>(d);
  Shape cs = shape;  // the operands seen over shape with d of size 1: one element per column
  cs[ud] = 1;
  auto column = [&](const Tensor& t) { return make_view(t, cs, t->strides(), t->offset()); };
  Tensor cd = column(dst), ci = column(idx), cv = column(src);
  const int64_t n = shape[ud];
  const int64_t ids = idx->strides()[ud] * static_cast<int64_t>(sizeof(int64_t));
  const int64_t sds = src->strides()[ud] * static_cast<int64_t>(src->itemsize());
  launch_elementwise<3>(op, dst->device(), cs, {cd.get(), ci.get(), cv.get()},
                        [n, ids, sds, step, f] __device__(char** base, const int64_t* off) {
                          for (int64_t i = 0; i < n; ++i) {
                            const int64_t k = *reinterpret_cast<const int64_t*>(base[1] + off[1] + i * ids);
                            f(base[0] + off[0] + k * step, base[2] + off[2] + i * sds);
                          }
                        });
}

// *p = *v (or = value when has_value: v is not read).
template <typename U> struct CopyTo {
  bool has_value;
  U value;
  __device__ void operator()(char* p, const char* v) const {
    *reinterpret_cast<U*>(p) = has_value ? value : *reinterpret_cast<const U*>(v);
  }
};

// a + b and a * b rounded once each (no fused multiply-add: the CPU's arithmetic).
template <typename A> __device__ __forceinline__ A add_rn(A a, A b) {
  if constexpr (std::is_same_v<A, float>) return __fadd_rn(a, b);
  else if constexpr (std::is_same_v<A, double>) return __dadd_rn(a, b);
  else return static_cast<A>(a + b);
}
template <typename A> __device__ __forceinline__ A mul_rn(A a, A b) {
  if constexpr (std::is_same_v<A, float>) return __fmul_rn(a, b);
  else if constexpr (std::is_same_v<A, double>) return __dmul_rn(a, b);
  else return static_cast<A>(a * b);
}

// *p += al * *v (index_cpu.cpp's add_scaled; *p + *v when unit).
template <typename T> struct AddScaled {
  opmath_t<T> al;
  bool unit;
  __device__ void operator()(char* pp, const char* vp) const {
    using A = opmath_t<T>;
    T* p = reinterpret_cast<T*>(pp);
    const A v = cvt<A>(*reinterpret_cast<const T*>(vp));
    if constexpr (std::is_same_v<T, bool>) {
      *p = *p || (v && al);
    } else {
      const A t = cvt<A>(*p);
      *p = cvt<T>(unit ? add_rn(t, v) : add_rn(t, mul_rn(al, v)));
    }
  }
};

// What scatter and scatter_add write through: the indices (contiguous int64 on res's device,
// at least 1-d), res (at least 1-d) seen over their shape with dim d's stride zeroed, the
// byte distance of one position along d in res and the bound of the indices.
struct ScatterInto {
  Tensor ix, dst;
  int64_t step, size;
};

ScatterInto scatter_into(const Tensor& res, const Tensor& index, int64_t d) {
  const Tensor r1 = at_least_1d(res);
  const size_t ud = static_cast<size_t>(d);
  Tensor ix = index_int64(at_least_1d(index), res->device());
  Tensor dst = restride(r1, ix->sizes(), d);
  return {ix, dst, r1->strides()[ud] * static_cast<int64_t>(r1->itemsize()), r1->sizes()[ud]};
}

// src (moved to the device) seen over the indices' shape; a copy when it shares t.dst's storage.
Tensor scatter_source(const Tensor& src, const ScatterInto& t) {
  Tensor s1 = at_least_1d(to_device(src, t.dst->device()));
  Tensor sv = restride(s1, t.ix->sizes(), -1);
  return s1->storage() == t.dst->storage() ? ops::clone(sv) : sv;
}

void scatter_accumulate(const char* op, const Shape& shape, int64_t d, const Tensor& dst, const Tensor& idx,
                        const Tensor& src, int64_t step, const Scalar& alpha) {
  if (shape_numel(shape) == 0) return;
  if (is_complex(dst->dtype())) {
    dispatch_device_complex(dst->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      const T al(static_cast<real_t<T>>(alpha.to_double()), static_cast<real_t<T>>(alpha.im));
      scatter_columns(op, shape, d, dst, idx, src, step, AddScaled<T>{al, alpha.to_double() == 1.0 && alpha.im == 0.0});
    });
    return;
  }
  dispatch_all(dst->dtype(), op, [&](auto host_tag) {
    using H = decltype(host_tag);
    using T = std::conditional_t<std::is_same_v<H, Half>, __half,
                                 std::conditional_t<std::is_same_v<H, BFloat16>, __nv_bfloat16, H>>;
    const auto al = static_cast<opmath_t<T>>(alpha.to<::ember::opmath_t<H>>());
    scatter_columns(op, shape, d, dst, idx, src, step, AddScaled<T>{al, alpha.to_double() == 1.0});
  });
}

// ---------------------------------------------------------------------------------------------
// index_put

// *p += v as index_cpu.cpp's add_scaled does (in opmath, rounded once; bool: or), atomically.
template <typename T> __device__ __forceinline__ T add_opmath(T a, T b) {
  using A = opmath_t<T>;
  return cvt<T>(static_cast<A>(add_rn(cvt<A>(a), cvt<A>(b))));
}

template <typename T> __device__ void atomic_accumulate(T* p, T v) {
  if constexpr (is_complex_v<T>) {  // each part on its own (the sum of either is order-free alike)
    atomicAdd(&p->re, v.re);
    atomicAdd(&p->im, v.im);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (v) *p = true;  // every writer stores the same byte
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t>) {
    atomicAdd(p, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else {  // 1- and 2-byte types: compare-and-swap on the aligned 32-bit word holding *p
    static_assert(sizeof(T) == 1 || sizeof(T) == 2, "unexpected element size");
    using U = std::conditional_t<sizeof(T) == 1, uint8_t, uint16_t>;
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    unsigned int* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t(3));
    const unsigned int shift = static_cast<unsigned int>(addr & 3) * 8;
    const unsigned int mask = (sizeof(T) == 1 ? 0xFFu : 0xFFFFu) << shift;
    unsigned int old = *word, assumed;
    do {
      assumed = old;
      const U bits = static_cast<U>((assumed & mask) >> shift);
      T cur;
      memcpy(&cur, &bits, sizeof(T));
      const T sum = add_opmath(cur, v);
      U nb;
      memcpy(&nb, &sum, sizeof(T));
      old = atomicCAS(word, assumed, (assumed & ~mask) | (static_cast<unsigned int>(nb) << shift));
    } while (old != assumed);
  }
}

// Operands over the indexing result's shape: 0 the target (zero strides on the index dims),
// 1 the element offsets of the index positions, 2 the values. step: the target's itemsize.
template <typename U> struct PutValue {
  int64_t step;
  __device__ void operator()(char** base, const int64_t* off) const {
    const int64_t k = *reinterpret_cast<const int64_t*>(base[1] + off[1]);
    *reinterpret_cast<U*>(base[0] + off[0] + k * step) = *reinterpret_cast<const U*>(base[2] + off[2]);
  }
};
template <typename T> struct AccumulateValue {
  int64_t step;
  __device__ void operator()(char** base, const int64_t* off) const {
    const int64_t k = *reinterpret_cast<const int64_t*>(base[1] + off[1]);
    atomic_accumulate(reinterpret_cast<T*>(base[0] + off[0] + k * step), *reinterpret_cast<const T*>(base[2] + off[2]));
  }
};

// off += (v < 0 ? v + size : v) * stride (operand 0 the offsets, 1 an index tensor).
struct AddIndexOffset {
  int64_t size, stride;
  __device__ void operator()(char** base, const int64_t* off) const {
    int64_t v = *reinterpret_cast<const int64_t*>(base[1] + off[1]);
    if (v < 0) v += size;
    *reinterpret_cast<int64_t*>(base[0] + off[0]) += v * stride;
  }
};

// The element offsets into target of the broadcast index positions (int64 of shape A.B),
// after checking every index value against its dim (one wait for the device, then the CPU's
// error for the first bad value of the first dim that has one).
Tensor advanced_offsets(const char* op, const Tensor& target, const std::vector<Tensor>& adv, const AdvancedMeta& A) {
  const Device dev = target->device();
  Tensor off = ember::empty(A.B, ScalarType::Int64, dev);
  ops::zero(off, off);
  const size_t npos = A.pos.size();
  std::vector<Tensor> ixs;
  Tensor firsts = ember::empty({static_cast<int64_t>(npos)}, ScalarType::Int64, dev);
  {
    CurrentDevice guard(dev.index);
    cudaStream_t stream = stream_of(dev);
    const cudaError_t err = cudaMemsetAsync(firsts->data_ptr(), 0xff, npos * sizeof(int64_t), stream);
    if (err != cudaSuccess) {
      cudaGetLastError();
      throw std::runtime_error(message(op, ": cudaMemsetAsync failed: ", cudaGetErrorString(err)));
    }
    for (size_t j = 0; j < npos; ++j) {
      ixs.push_back(index_int64(adv[static_cast<size_t>(A.pos[j])], dev));
      const int64_t n = ixs[j]->numel();
      if (n == 0) continue;
      const int64_t size = target->sizes()[static_cast<size_t>(A.pos[j])];
      first_out_of_range_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
          reinterpret_cast<const int64_t*>(ixs[j]->data_ptr()), n, -size, size, false, 0,
          reinterpret_cast<unsigned long long*>(firsts->data_ptr()) + j);
      check_launch(op);
    }
  }
  const Tensor h = to_host(firsts);
  for (size_t j = 0; j < npos; ++j) {
    const int64_t bad = h->data<int64_t>()[j];
    if (bad < 0) continue;
    throw_advanced_index_out_of_bounds(value_at<int64_t>(ixs[j], bad), static_cast<int64_t>(j),
                                       target->sizes()[static_cast<size_t>(A.pos[j])]);
  }
  for (size_t j = 0; j < npos; ++j) {
    const size_t d = static_cast<size_t>(A.pos[j]);
    const Tensor ex = expand_to(ixs[j], A.B, "index");
    launch_elementwise<2>(op, dev, A.B, {off.get(), ex.get()}, AddIndexOffset{target->sizes()[d], target->strides()[d]});
  }
  return off;
}

// What index_put writes through and _index reads through, over the indexing result's shape:
// target with zero strides on the index dims, and the element offsets of the index positions
// (null when the result is empty: like the CPU, index values are only checked when some
// element is read or written). Element p is at target's data + its offset + offsets[p].
struct AdvancedOperands {
  Tensor target, offsets;
};

AdvancedOperands advanced_operands(const char* op, const Tensor& target, const std::vector<Tensor>& adv,
                                   const AdvancedMeta& A) {
  AdvancedOperands r;
  r.target = make_view(target, A.shape, A.src_strides, target->offset());
  if (shape_numel(A.shape) > 0) {
    const Tensor off = advanced_offsets(op, target, adv, A);
    r.offsets = make_view(off, A.shape, A.off_strides, off->offset());
  }
  return r;
}

// index_put's and _index's error for a CPU (0-d) self with `what` (index tensors, values) on a
// device.
[[noreturn]] void throw_indices_on_device(const char* op, const char* what, const Tensor& self) {
  throw std::runtime_error(message(op, ": ", what, " should be either on cpu or on the same device as the indexed "
                                   "tensor (", self->device().str(), ")"));
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  const int64_t d = gather_meta(self, dim, index, out);
  const Device dev = is_on_cpu(self) ? index->device() : self->device();
  Tensor res = out_or_fresh(out, index->sizes(), self->dtype(), dev, {&self, &index});
  if (index->numel() > 0) {
    Tensor s1 = at_least_1d(to_device(self, dev));
    Tensor ix = index_int64(at_least_1d(index), dev);
    const int64_t size = s1->sizes()[static_cast<size_t>(d)];
    const int64_t bad = first_out_of_range("gather", ix, 0, size);
    if (bad >= 0) throw_index_out_of_bounds("gather()", value_at<int64_t>(ix, bad), d, size);
    Tensor r1 = at_least_1d(res);
    gather_bytes("gather", r1, restride(s1, ix->sizes(), d), ix,
                 s1->strides()[static_cast<size_t>(d)] * static_cast<int64_t>(s1->itemsize()));
  }
  return finish_out("gather", out, res);
}

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  const IndexSelectMeta m = index_select_meta(self, dim, index);
  const int64_t d = m.dim, n = index->numel();
  const Device dev = is_on_cpu(self) ? index->device() : self->device();
  Tensor ix = index_int64(index, dev);
  Tensor s1 = at_least_1d(to_device(self, dev));
  if (first_out_of_range("index_select", ix, 0, m.size) >= 0) throw_index_select_out_of_range();
  check_index_select_out(self, out);
  Tensor res = out_or_fresh(out, m.shape, self->dtype(), dev, {&self});
  if (n > 0 && res->numel() > 0) {
    Tensor r1 = at_least_1d(res);
    Shape ist(static_cast<size_t>(r1->dim()), 0);
    ist[static_cast<size_t>(d)] = 1;
    Tensor iv = make_view(ix, r1->sizes(), std::move(ist), ix->offset());
    gather_bytes("index_select", r1, restride(s1, r1->sizes(), d), iv,
                 s1->strides()[static_cast<size_t>(d)] * static_cast<int64_t>(s1->itemsize()));
  }
  return finish_out("index_select", out, res);
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const Tensor& out) {
  const bool is_value = src->wrapped_number;
  const int64_t d = scatter_meta("scatter", self, dim, index, src, is_value);
  Tensor res = out == self ? self : ops::clone(self);
  if (index->numel() == 0) return res;
  const ScatterInto t = scatter_into(res, index, d);
  // (the CPU checks the indices first in place, else the value first)
  const bool inplace = res == self;
  if (is_value && !inplace) check_value_fits("scatter", scalar_of(src), self->dtype(), true);
  const int64_t bad = first_out_of_range("scatter", t.ix, 0, t.size);
  if (bad >= 0) throw_index_out_of_bounds("scatter()", value_at<int64_t>(t.ix, bad), d, t.size);
  const Shape& shape = t.ix->sizes();
  if (is_value) {
    if (inplace) check_value_fits("scatter", scalar_of(src), self->dtype(), true);
    const Tensor v = to_dtype(src, self->dtype());  // the value converted the CPU way
    dispatch_itemsize(res->itemsize(), [&](auto tag) {
      using U = decltype(tag);
      U bits;
      std::memcpy(&bits, v->data_ptr(), sizeof(U));
      scatter_columns("scatter", shape, d, t.dst, t.ix, t.ix, t.step, CopyTo<U>{true, bits});
    });
  } else {
    const Tensor sv = scatter_source(src, t);
    dispatch_itemsize(res->itemsize(), [&](auto tag) {
      using U = decltype(tag);
      scatter_columns("scatter", shape, d, t.dst, t.ix, sv, t.step, CopyTo<U>{false, U(0)});
    });
  }
  return res;
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const Tensor& out) {
  const int64_t d = scatter_meta("scatter_add", self, dim, index, src, false);
  Tensor res = out == self ? self : ops::clone(self);
  if (index->numel() == 0) return res;
  const ScatterInto t = scatter_into(res, index, d);
  const int64_t bad = first_out_of_range("scatter_add", t.ix, 0, t.size);
  if (bad >= 0) throw_index_out_of_bounds("scatter_add()", value_at<int64_t>(t.ix, bad), d, t.size);
  scatter_accumulate("scatter_add", t.ix->sizes(), d, t.dst, t.ix, scatter_source(src, t), t.step,
                     Scalar::from_int(1));
  return res;
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha,
                 const Tensor& out) {
  const int64_t d = index_add_meta(self, dim, index, source);
  check_fill_value(self->dtype(), alpha);  // PyTorch's overflow check (uint8 and alpha -2.0: RuntimeError)
  const Device dev = self->device();
  Tensor res = out == self ? self : ops::clone(self);
  if (index_add_is_noop(self, index, source, alpha)) return res;
  Tensor r1 = at_least_1d(res);
  Tensor ix = index_int64(index, dev);
  const int64_t size = r1->sizes()[static_cast<size_t>(d)];
  const int64_t bad = first_out_of_range("index_add", ix, 0, size);
  if (bad >= 0) throw_index_add_out_of_range(self, d, alpha, value_at<int64_t>(ix, bad), size);
  Tensor s1 = at_least_1d(to_device(source, dev));
  if (s1->storage() == res->storage()) s1 = ops::clone(s1);
  Shape ist(static_cast<size_t>(s1->dim()), 0);
  ist[static_cast<size_t>(d)] = 1;
  scatter_accumulate("index_add", s1->sizes(), d, restride(r1, s1->sizes(), d),
                     make_view(ix, s1->sizes(), std::move(ist), ix->offset()), s1,
                     r1->strides()[static_cast<size_t>(d)] * static_cast<int64_t>(r1->itemsize()), alpha);
  return res;
}

Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& given_values,
                 bool accumulate, const Tensor& out) {
  const char* op = "index_put";
  if (is_on_cpu(self)) throw_indices_on_device(op, "indices and values", self);  // a CPU 0-d self
  const Device dev = self->device();
  Tensor target = out ? out : ops::clone(self);
  const Tensor values = index_put_values(target, indices, given_values, accumulate);
  const std::vector<Tensor> adv = index_put_indices(target, indices, values);
  const Tensor vals = to_device(values, dev);
  bool any = false;
  for (const Tensor& t : adv) any |= static_cast<bool>(t);
  if (!any) {  // only full slices: the whole tensor
    Tensor v = ops::expand(vals, target->sizes());
    if (accumulate) ops::add(target, v, Scalar::from_int(1), target);
    else ops::copy(target, v->storage() == target->storage() ? ops::clone(v) : v, false, target);
    return target;
  }
  const AdvancedMeta A = advanced_index_meta(target, adv, false);
  const AdvancedOperands P = advanced_operands(op, target, adv, A);
  Tensor v = advanced_index_values(vals, A.shape);
  if (!P.offsets) return target;
  if (v->storage() == target->storage()) v = ops::clone(v);
  const int64_t step = static_cast<int64_t>(target->itemsize());
  if (!accumulate) {
    dispatch_itemsize(target->itemsize(), [&](auto tag) {
      using U = decltype(tag);
      launch_elementwise<3>(op, dev, A.shape, {P.target.get(), P.offsets.get(), v.get()}, PutValue<U>{step});
    });
  } else {
    dispatch_device_with_complex(target->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      launch_elementwise<3>(op, dev, A.shape, {P.target.get(), P.offsets.get(), v.get()}, AccumulateValue<T>{step});
    });
  }
  return target;
}

// self[indices] (index_cpu.cpp's cpu::_index): the gather of index_put's positions.
Tensor _index(const Tensor& self, const std::vector<Tensor>& indices) {
  const char* op = "index";
  if (is_on_cpu(self)) throw_indices_on_device(op, "indices", self);  // a CPU 0-d self
  const std::vector<Tensor> adv = advanced_indices(op, self, indices);
  bool any = false;
  for (const Tensor& t : adv) any |= static_cast<bool>(t);
  if (!any) return ops::clone(self);  // only full slices: a copy of self
  const AdvancedMeta A = advanced_index_meta(self, adv, false);
  const AdvancedOperands P = advanced_operands(op, self, adv, A);
  Tensor out = ember::empty(A.shape, self->dtype(), self->device());
  if (P.offsets) gather_bytes(op, out, P.target, P.offsets, static_cast<int64_t>(self->itemsize()));
  return out;
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(gather);
EMBER_REGISTER_CUDA_KERNEL(index_select);
EMBER_REGISTER_CUDA_KERNEL(scatter);
EMBER_REGISTER_CUDA_KERNEL(scatter_add);
EMBER_REGISTER_CUDA_KERNEL(index_add);
EMBER_REGISTER_CUDA_KERNEL(index_put);
EMBER_REGISTER_CUDA_KERNEL(_index);
