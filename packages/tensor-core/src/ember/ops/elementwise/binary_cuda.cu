// CUDA kernels of the comparisons (eq, ne, lt, le, gt, ge), the logical ops, maximum/minimum
// (and max/min of two tensors), pow, where, clamp, the bitwise ops (and, or, xor, not), the
// divisions (floor_divide, remainder, fmod) and isnan/isinf/isfinite/signbit, on the iteration engine
// of elementwise.cuh. Each mirrors its CPU kernel in binary_cpu.cpp / unary_cpu.cpp: the same type
// promotion (result_type), the same conversions (operands converted to the promoted dtype,
// then computed in its opmath type), the same NaN / -0 rules and the same error messages.
//
// A CPU 0-d tensor among the operands (a Python number, or a 0-d tensor the dispatcher let
// join the CUDA ones) is converted to the promoted dtype on the host, exactly as the CPU
// kernel converts it, and passed to the kernel by value. When every operand is such a CPU
// scalar (the op runs here only because out= is a CUDA tensor), the CPU kernel computes the
// value and finish_out moves it into out.
//
// Integer division by zero: the CPU raises ZeroDivisionError's RuntimeError after reading the
// whole divisor. Here a CPU divisor (a Python number, a CPU 0-d tensor) is checked the same
// way, on the host (division_meta). A divisor on the device is not read back, as that would
// synchronise the stream: like PyTorch's CUDA kernels, its zeros give 0 (floor_divide,
// remainder and fmod alike), deterministically and without a trap.
//
// The argument checks, the promoted dtypes and the broadcast shapes come from
// binary_meta.h, shared with the CPU kernels.
#include <cstring>
#include <limits>

#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/elementwise/binary_meta.h"
#include "ember/ops/elementwise/complex_functions.h"
#include "ember/ops/elementwise/unary_functions.h"

namespace ember::cuda_engine {
namespace {

// The value of a CPU 0-d tensor converted to dtype (T's) the CPU way, in T's opmath type.
template <typename T> opmath_t<T> host_value(const Tensor& t, ScalarType dtype) {
  using H = typename HostOf<T>::type;
  const Tensor h = to_dtype(t, dtype);
  return static_cast<opmath_t<T>>(static_cast<::ember::opmath_t<H>>(*h->data<H>()));
}

// The same value as T's storage bits (for kernels that only move values).
template <typename U> U host_bits(const Tensor& t, ScalarType dtype) {
  const Tensor h = to_dtype(t, dtype);
  U v;
  std::memcpy(&v, h->data_ptr(), sizeof(U));
  return v;
}

// The first CUDA device among the tensors, else out's (every input a CPU scalar).
Device op_device(std::initializer_list<const Tensor*> inputs, const Tensor& out) {
  for (const Tensor* t : inputs) {
    if (*t && (*t)->device().type != DeviceType::CPU) return (*t)->device();
  }
  if (out) return out->device();
  return Device{DeviceType::CUDA, cuda_hooks().current_device()};
}

Tensor result_tensor(const Tensor& out, const Shape& shape, ScalarType dtype, const Device& device) {
  if (out && out->sizes() == shape && out->dtype() == dtype) return out;
  return ember::empty(shape, dtype, device);
}

// Calls f(T{}) for the numeric (non-bool) device types; bool raises as the CPU's dispatch_numeric.
template <typename F> void dispatch_device_numeric(ScalarType t, const char* op, F&& f) {
  if (t == ScalarType::Bool) throw_dtype_unsupported(op, t, "numeric");
  dispatch_device_type(t, op, [&](auto tag) {
    if constexpr (!std::is_same_v<decltype(tag), bool>) f(tag);
  });
}

// ---- binary ops: two operands, each a CUDA tensor or a CPU scalar ----

struct Binary {
  Tensor a, b;    // CUDA operands in dtype, expanded to shape; a scalar side holds the other one (unread)
  Tensor ha, hb;  // the CPU scalar operands (null for a CUDA one)
  Shape shape;
  ScalarType dtype;
  Device device;
};

// The operands in dtype over shape (a BinaryMeta's or a PowMeta's).
Binary binary_args(const char* op, const Tensor& self, const Tensor& other, ScalarType dtype, const Shape& shape) {
  Binary r;
  r.dtype = dtype;
  r.device = is_on_cpu(self) ? other->device() : self->device();
  r.shape = shape;
  if (is_on_cpu(self)) r.ha = self;
  else r.a = expand_to(to_dtype(self, dtype), r.shape, op);
  if (is_on_cpu(other)) r.hb = other;
  else r.b = expand_to(to_dtype(other, dtype), r.shape, op);
  if (!r.a) r.a = r.b;
  if (!r.b) r.b = r.a;
  return r;
}

// res[i] = f(a[i], b[i]) with a and b in T's opmath type; R is res's element type.
template <typename T, typename R, typename F> void run_binary(const char* op, const Binary& P, const Tensor& res, F f) {
  using A = opmath_t<T>;
  const bool sa = static_cast<bool>(P.ha), sb = static_cast<bool>(P.hb);
  const A va = sa ? host_value<T>(P.ha, P.dtype) : A(0);
  const A vb = sb ? host_value<T>(P.hb, P.dtype) : A(0);
  launch_elementwise<3>(op, P.device, P.shape, {res.get(), P.a.get(), P.b.get()},
                        [f, sa, sb, va, vb] __device__(char** base, const int64_t* off) {
                          const A x = sa ? va : cvt<A>(*reinterpret_cast<const T*>(base[1] + off[1]));
                          const A y = sb ? vb : cvt<A>(*reinterpret_cast<const T*>(base[2] + off[2]));
                          *reinterpret_cast<R*>(base[0] + off[0]) = cvt<R>(f(x, y));
                        });
}

enum class Cmp { Eq, Ne, Lt, Le, Gt, Ge, And, Or, Xor };

template <typename T> void compare_t(const char* op, Cmp kind, const Binary& P, const Tensor& res) {
  using A = opmath_t<T>;
  switch (kind) {
    case Cmp::Eq: run_binary<T, bool>(op, P, res, [] __device__(A x, A y) { return x == y; }); break;
    case Cmp::Ne: run_binary<T, bool>(op, P, res, [] __device__(A x, A y) { return x != y; }); break;
    case Cmp::Lt: run_binary<T, bool>(op, P, res, [] __device__(A x, A y) { return x < y; }); break;
    case Cmp::Le: run_binary<T, bool>(op, P, res, [] __device__(A x, A y) { return x <= y; }); break;
    case Cmp::Gt: run_binary<T, bool>(op, P, res, [] __device__(A x, A y) { return x > y; }); break;
    case Cmp::Ge: run_binary<T, bool>(op, P, res, [] __device__(A x, A y) { return x >= y; }); break;
    case Cmp::And:
      run_binary<T, bool>(op, P, res, [] __device__(A x, A y) { return x != A(0) && y != A(0); });
      break;
    case Cmp::Or:
      run_binary<T, bool>(op, P, res, [] __device__(A x, A y) { return x != A(0) || y != A(0); });
      break;
    case Cmp::Xor:
      run_binary<T, bool>(op, P, res, [] __device__(A x, A y) { return (x != A(0)) != (y != A(0)); });
      break;
  }
}

// Complex operands: equality and the logical ops (the orderings are refused before).
template <typename T> void compare_complex(const char* op, Cmp kind, const Binary& P, const Tensor& res) {
  switch (kind) {
    case Cmp::Eq: run_binary<T, bool>(op, P, res, [] __device__(T x, T y) { return x == y; }); break;
    case Cmp::Ne: run_binary<T, bool>(op, P, res, [] __device__(T x, T y) { return x != y; }); break;
    case Cmp::And:
      run_binary<T, bool>(op, P, res, [] __device__(T x, T y) { return x != T(0) && y != T(0); });
      break;
    case Cmp::Or:
      run_binary<T, bool>(op, P, res, [] __device__(T x, T y) { return x != T(0) || y != T(0); });
      break;
    case Cmp::Xor:
      run_binary<T, bool>(op, P, res, [] __device__(T x, T y) { return (x != T(0)) != (y != T(0)); });
      break;
    default: break;
  }
}

// Comparisons and logical ops: operands promoted to result_type, a bool result.
Tensor compare(const char* op, Cmp kind, const Tensor& self, const Tensor& other, const Tensor& out,
               Tensor (*cpu_kernel)(const Tensor&, const Tensor&, const Tensor&)) {
  if (is_on_cpu(self) && is_on_cpu(other)) return finish_out(op, out, cpu_kernel(self, other, Tensor()));
  const BinaryMeta M = binary_meta(op, self, other, true);
  Binary P = binary_args(op, self, other, M.dtype, M.shape);
  if (is_complex(M.dtype) && kind != Cmp::Eq && kind != Cmp::Ne && kind != Cmp::And && kind != Cmp::Or &&
      kind != Cmp::Xor) {  // complex numbers have no order: the CPU kernel's error
    return finish_out(op, out, to_device(cpu_kernel(to_host(self), to_host(other), Tensor()), P.device));
  }
  Tensor res = result_tensor(out, M.shape, M.result_dtype, P.device);
  if (is_complex(M.dtype)) {
    dispatch_device_complex(M.dtype, op, [&](auto tag) { compare_complex<decltype(tag)>(op, kind, P, res); });
  } else {
    dispatch_device_type(M.dtype, op, [&](auto tag) { compare_t<decltype(tag)>(op, kind, P, res); });
  }
  return finish_out(op, out, res);
}

// maximum / minimum: NaN propagates (x + y of a NaN operand), else the larger / smaller.
template <typename T> void extreme_t(const char* op, bool max, const Binary& P, const Tensor& res) {
  using A = opmath_t<T>;
  if (max) {
    run_binary<T, T>(op, P, res, [] __device__(A x, A y) -> A {
      if constexpr (std::is_floating_point_v<A>) {
        if (x != x || y != y) return x + y;
      }
      return (x > y) ? x : y;
    });
  } else {
    run_binary<T, T>(op, P, res, [] __device__(A x, A y) -> A {
      if constexpr (std::is_floating_point_v<A>) {
        if (x != x || y != y) return x + y;
      }
      return (x < y) ? x : y;
    });
  }
}

Tensor extreme(const char* op, bool max, const Tensor& self, const Tensor& other, const Tensor& out) {
  if (is_on_cpu(self) && is_on_cpu(other)) {
    return finish_out(op, out, max ? cpu::maximum(self, other, Tensor()) : cpu::minimum(self, other, Tensor()));
  }
  const BinaryMeta M = binary_meta(op, self, other, false);
  Binary P = binary_args(op, self, other, M.dtype, M.shape);
  Tensor res = result_tensor(out, M.shape, M.result_dtype, P.device);
  dispatch_device_type(M.dtype, op, [&](auto tag) { extreme_t<decltype(tag)>(op, max, P, res); });
  return finish_out(op, out, res);
}

// pow: floats through pow (x * x for an exponent of 2), integers by squaring, wrapping.
__device__ __forceinline__ float pow_of(float x, float y) { return ::powf(x, y); }
__device__ __forceinline__ double pow_of(double x, double y) { return ::pow(x, y); }

template <typename T> void pow_t(const Binary& P, const Tensor& res) {
  using A = opmath_t<T>;
  run_binary<T, T>("pow", P, res, [] __device__(A x, A y) -> A {
    if constexpr (std::is_floating_point_v<A>) {
      if (y == A(2)) return x * x;
      return pow_of(x, y);
    } else {
      using U = std::make_unsigned_t<A>;
      if constexpr (std::is_signed_v<A>) {
        if (y < 0) return x == 1 ? A(1) : (x == -1 ? ((y & 1) ? A(-1) : A(1)) : A(0));
      }
      U result = 1, b = static_cast<U>(x);
      auto e = y;
      while (e > 0) {  // wraps like PyTorch's integer pow
        if (e & 1) result = static_cast<U>(result * b);
        b = static_cast<U>(b * b);
        e >>= 1;
      }
      return static_cast<A>(result);
    }
  });
}

// complex: x * x for an exponent of 2 (as the CPU), else the principal value.
template <typename T> void pow_complex(const Binary& P, const Tensor& res) {
  run_binary<T, T>("pow", P, res, [] __device__(T x, T y) -> T {
    if (y == T(2)) return x * x;
    return complex_fn::Pow{}(x, y);
  });
}

// ---- where ----

// Moves elements (any dtype of itemsize sizeof(U)): cond ? a : b, a or b possibly a scalar.
template <typename U>
void where_t(const Device& device, const Shape& shape, const Tensor& res, const Tensor& cond, const Tensor& a,
             const Tensor& b, bool sa, bool sb, U va, U vb) {
  launch_elementwise<4>("where", device, shape, {res.get(), cond.get(), a.get(), b.get()},
                        [sa, sb, va, vb] __device__(char** base, const int64_t* off) {
                          const bool c = *reinterpret_cast<const uint8_t*>(base[1] + off[1]) != 0;
                          U v;
                          if (c) v = sa ? va : *reinterpret_cast<const U*>(base[2] + off[2]);
                          else v = sb ? vb : *reinterpret_cast<const U*>(base[3] + off[3]);
                          *reinterpret_cast<U*>(base[0] + off[0]) = v;
                        });
}

// ---- clamp ----

// lo / hi: a CUDA operand (expanded) or a scalar; a missing bound is ignored (has_* false)
// and its operand slot holds x (unread), as on the CPU.
struct Bound {
  Tensor dev;   // expanded CUDA operand, or x when scalar / missing
  Tensor host;  // CPU scalar operand
  bool present = false;
};

template <typename T>
void clamp_t(const Device& device, const Shape& shape, const Tensor& res, const Tensor& x, const Bound& lo,
             const Bound& hi, ScalarType dt) {
  using A = opmath_t<T>;
  const bool has_lo = lo.present, has_hi = hi.present;
  const bool lo_s = static_cast<bool>(lo.host), hi_s = static_cast<bool>(hi.host);
  const A lv = lo_s ? host_value<T>(lo.host, dt) : A(0);
  const A hv = hi_s ? host_value<T>(hi.host, dt) : A(0);
  launch_elementwise<4>("clamp", device, shape, {res.get(), x.get(), lo.dev.get(), hi.dev.get()},
                        [has_lo, has_hi, lo_s, hi_s, lv, hv] __device__(char** base, const int64_t* off) {
                          const A v = cvt<A>(*reinterpret_cast<const T*>(base[1] + off[1]));
                          const A l = lo_s ? lv : cvt<A>(*reinterpret_cast<const T*>(base[2] + off[2]));
                          const A h = hi_s ? hv : cvt<A>(*reinterpret_cast<const T*>(base[3] + off[3]));
                          A r = v;
                          if constexpr (std::is_floating_point_v<A>) {
                            if (has_lo && l != l) {
                              r = l;
                            } else if (has_hi && h != h) {
                              r = h;
                            } else if (v == v) {
                              if (has_lo && r < l) r = l;
                              if (has_hi && r > h) r = h;
                            }
                          } else {
                            if (has_lo && r < l) r = l;
                            if (has_hi && r > h) r = h;
                          }
                          *reinterpret_cast<T*>(base[0] + off[0]) = cvt<T>(r);
                        });
}

// ---- bitwise ops ----

enum class Bit { And, Or, Xor };

template <typename T> void bitwise_t(const char* op, Bit kind, const Binary& P, const Tensor& res) {
  using A = opmath_t<T>;
  switch (kind) {
    case Bit::And: run_binary<T, T>(op, P, res, [] __device__(A x, A y) { return static_cast<A>(x & y); }); break;
    case Bit::Or: run_binary<T, T>(op, P, res, [] __device__(A x, A y) { return static_cast<A>(x | y); }); break;
    case Bit::Xor: run_binary<T, T>(op, P, res, [] __device__(A x, A y) { return static_cast<A>(x ^ y); }); break;
  }
}

// Calls f(T{}) for the integer and bool device types (what the CPU's dispatch_integral takes);
// a floating dtype raises its TypeError.
template <typename F> void dispatch_device_integral(ScalarType t, const char* op, F&& f) {
  if (is_floating(t)) throw_dtype_unsupported(op, t, "integral or bool");
  dispatch_device_type(t, op, [&](auto tag) {
    if constexpr (!std::is_floating_point_v<opmath_t<decltype(tag)>>) f(tag);
  });
}

// bitwise and / or / xor: operands promoted to result_type, the result in it; the dtype is
// checked (integral or bool) only when there are elements, as on the CPU.
Tensor bitwise(const char* op, Bit kind, const Tensor& self, const Tensor& other, const Tensor& out,
               Tensor (*cpu_kernel)(const Tensor&, const Tensor&, const Tensor&)) {
  if (is_on_cpu(self) && is_on_cpu(other)) return finish_out(op, out, cpu_kernel(self, other, Tensor()));
  const BinaryMeta M = binary_meta(op, self, other, false);
  Binary P = binary_args(op, self, other, M.dtype, M.shape);
  Tensor res = result_tensor(out, M.shape, M.dtype, P.device);
  if (res->numel() > 0) {
    dispatch_device_integral(M.dtype, op, [&](auto tag) { bitwise_t<decltype(tag)>(op, kind, P, res); });
  }
  return finish_out(op, out, res);
}

// ---- floor_divide, remainder, fmod ----

__device__ __forceinline__ float fmod_of(float x, float y) { return ::fmodf(x, y); }
__device__ __forceinline__ double fmod_of(double x, double y) { return ::fmod(x, y); }
__device__ __forceinline__ float floor_of(float x) { return ::floorf(x); }
__device__ __forceinline__ double floor_of(double x) { return ::floor(x); }
__device__ __forceinline__ float copysign_of(float x, float y) { return ::copysignf(x, y); }
__device__ __forceinline__ double copysign_of(double x, double y) { return ::copysign(x, y); }

// Python's floor division, as binary_cpu.cpp computes it. Floats: from fmod, so that exact
// quotients stay exact; a zero divisor gives x / y (inf or nan). Integers: truncation
// corrected toward -inf; x / -1 wraps; a zero divisor gives 0 (see the header).
template <typename A> __device__ __forceinline__ A floor_divide_of(A x, A y) {
  if constexpr (std::is_floating_point_v<A>) {
    if (y == A(0)) return x / y;
    const A q = x / y;
    const A m = fmod_of(x, y);
    A d = (x - m) / y;
    if (m != A(0) && ((y < A(0)) != (m < A(0)))) d -= A(1);
    A fd = floor_of(d);
    if (d - fd > A(0.5)) fd += A(1);
    return d == A(0) ? copysign_of(A(0), q) : fd;
  } else {
    if (y == A(0)) return A(0);
    if constexpr (std::is_signed_v<A>) {
      if (y == A(-1)) return unary_fn::wrapping_neg(x);  // INT_MIN / -1 wraps instead of trapping
      A q = static_cast<A>(x / y);
      if ((x % y != 0) && ((x < 0) != (y < 0))) q = static_cast<A>(q - 1);
      return q;
    } else {
      return static_cast<A>(x / y);
    }
  }
}

// Python's modulus: the sign of the divisor. Integers: x % -1 is 0, a zero divisor gives 0.
template <typename A> __device__ __forceinline__ A remainder_of(A x, A y) {
  if constexpr (std::is_floating_point_v<A>) {
    A r = fmod_of(x, y);
    if (r != A(0) && ((r < A(0)) != (y < A(0)))) r += y;
    return r;
  } else {
    if (y == A(0)) return A(0);
    if constexpr (std::is_signed_v<A>) {
      if (y == A(-1)) return A(0);
      A r = static_cast<A>(x % y);
      if (r != 0 && ((r < 0) != (y < 0))) r = static_cast<A>(r + y);
      return r;
    } else {
      return static_cast<A>(x % y);
    }
  }
}

// C's fmod: the sign of the dividend. Integers: x % -1 is 0, a zero divisor gives 0.
template <typename A> __device__ __forceinline__ A fmod_value(A x, A y) {
  if constexpr (std::is_floating_point_v<A>) {
    return fmod_of(x, y);
  } else {
    if (y == A(0)) return A(0);
    if constexpr (std::is_signed_v<A>) {
      if (y == A(-1)) return A(0);
    }
    return static_cast<A>(x % y);
  }
}

enum class Div { Floor, Remainder, Fmod };

template <typename T> void division_t(const char* op, Div kind, const Binary& P, const Tensor& res) {
  using A = opmath_t<T>;
  switch (kind) {
    case Div::Floor: run_binary<T, T>(op, P, res, [] __device__(A x, A y) { return floor_divide_of(x, y); }); break;
    case Div::Remainder: run_binary<T, T>(op, P, res, [] __device__(A x, A y) { return remainder_of(x, y); }); break;
    case Div::Fmod: run_binary<T, T>(op, P, res, [] __device__(A x, A y) { return fmod_value(x, y); }); break;
  }
}

Tensor division(const char* op, Div kind, const Tensor& self, const Tensor& other, const Tensor& out,
                Tensor (*cpu_kernel)(const Tensor&, const Tensor&, const Tensor&)) {
  if (is_on_cpu(self) && is_on_cpu(other)) return finish_out(op, out, cpu_kernel(self, other, Tensor()));
  const BinaryMeta M = division_meta(op, self, other);
  Binary P = binary_args(op, self, other, M.dtype, M.shape);
  Tensor res = result_tensor(out, M.shape, M.dtype, P.device);
  dispatch_device_numeric(M.dtype, op, [&](auto tag) { division_t<decltype(tag)>(op, kind, P, res); });
  return finish_out(op, out, res);
}

// ---- unary: logical_not, bitwise_not, isnan / isinf / isfinite / signbit ----

// res[i] = f(in[i]) with in[i] in T's opmath type; R is res's element type.
template <typename T, typename R, typename F> void run_unary(const char* op, const Tensor& res, const Tensor& in, F f) {
  using A = opmath_t<T>;
  launch_elementwise<2>(op, res->device(), res->sizes(), {res.get(), in.get()},
                        [f] __device__(char** base, const int64_t* off) {
                          *reinterpret_cast<R*>(base[0] + off[0]) =
                              cvt<R>(f(cvt<A>(*reinterpret_cast<const T*>(base[1] + off[1]))));
                        });
}

template <typename T> void logical_not_t(const Tensor& res, const Tensor& in) {
  using A = opmath_t<T>;
  run_unary<T, bool>("logical_not", res, in, [] __device__(A x) { return x == A(0); });
}

template <typename T> void bitwise_not_t(const Tensor& res, const Tensor& in) {
  using A = opmath_t<T>;
  run_unary<T, T>("bitwise_not", res, in, [] __device__(A x) -> A {
    if constexpr (std::is_same_v<A, bool>) return !x;
    else return static_cast<A>(~x);
  });
}

// A bool result per element: Fn is one of unary_functions.h's classifications.
template <typename T, typename Fn> void classify_t(const char* op, const Tensor& res, const Tensor& in) {
  using A = opmath_t<T>;
  if constexpr (std::is_same_v<Fn, unary_fn::SignBit> && sizeof(T) == 2 && !std::is_integral_v<T>) {
    // float16 / bfloat16: the top bit of the value itself (the device's conversion to float
    // returns NaNs as the canonical, positive NaN, so their sign would be lost)
    launch_elementwise<2>(op, res->device(), res->sizes(), {res.get(), in.get()},
                          [] __device__(char** base, const int64_t* off) {
                            *reinterpret_cast<bool*>(base[0] + off[0]) =
                                (*reinterpret_cast<const uint16_t*>(base[1] + off[1]) >> 15) != 0;
                          });
  } else {
    run_unary<T, bool>(op, res, in, [] __device__(A x) -> bool { return Fn{}(x); });
  }
}

template <typename Fn> Tensor classify(const char* op, const Tensor& self, Tensor (*cpu_kernel)(const Tensor&)) {
  if (is_complex(self->dtype())) {
    if constexpr (std::is_same_v<Fn, unary_fn::SignBit>) {
      return to_device(cpu_kernel(to_host(self)), self->device());  // the CPU's refusal of complex
    } else {
      Tensor res = ember::empty(self->sizes(), ScalarType::Bool, self->device());
      dispatch_device_complex(self->dtype(), op, [&](auto tag) { classify_t<decltype(tag), Fn>(op, res, self); });
      return res;
    }
  }
  Tensor res = ember::empty(self->sizes(), ScalarType::Bool, self->device());
  dispatch_device_type(self->dtype(), op, [&](auto tag) { classify_t<decltype(tag), Fn>(op, res, self); });
  return res;
}

}  // namespace
}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

Tensor eq(const Tensor& self, const Tensor& other, const Tensor& out) {
  return compare("eq", Cmp::Eq, self, other, out, &cpu::eq);
}
Tensor ne(const Tensor& self, const Tensor& other, const Tensor& out) {
  return compare("ne", Cmp::Ne, self, other, out, &cpu::ne);
}
Tensor lt(const Tensor& self, const Tensor& other, const Tensor& out) {
  return compare("lt", Cmp::Lt, self, other, out, &cpu::lt);
}
Tensor le(const Tensor& self, const Tensor& other, const Tensor& out) {
  return compare("le", Cmp::Le, self, other, out, &cpu::le);
}
Tensor gt(const Tensor& self, const Tensor& other, const Tensor& out) {
  return compare("gt", Cmp::Gt, self, other, out, &cpu::gt);
}
Tensor ge(const Tensor& self, const Tensor& other, const Tensor& out) {
  return compare("ge", Cmp::Ge, self, other, out, &cpu::ge);
}
Tensor logical_and(const Tensor& self, const Tensor& other, const Tensor& out) {
  return compare("logical_and", Cmp::And, self, other, out, &cpu::logical_and);
}
Tensor logical_or(const Tensor& self, const Tensor& other, const Tensor& out) {
  return compare("logical_or", Cmp::Or, self, other, out, &cpu::logical_or);
}
Tensor logical_xor(const Tensor& self, const Tensor& other, const Tensor& out) {
  return compare("logical_xor", Cmp::Xor, self, other, out, &cpu::logical_xor);
}

Tensor logical_not(const Tensor& self, const Tensor& out) {
  if (is_on_cpu(self)) return finish_out("logical_not", out, cpu::logical_not(self, Tensor()));  // out= on cuda
  Tensor res = result_tensor(out, self->sizes(), ScalarType::Bool, self->device());
  dispatch_device_with_complex(self->dtype(), "logical_not", [&](auto tag) { logical_not_t<decltype(tag)>(res, self); });
  return finish_out("logical_not", out, res);
}

Tensor maximum(const Tensor& self, const Tensor& other, const Tensor& out) {
  return extreme("maximum", true, self, other, out);
}
Tensor minimum(const Tensor& self, const Tensor& other, const Tensor& out) {
  return extreme("minimum", false, self, other, out);
}
Tensor max_other(const Tensor& self, const Tensor& other) { return extreme("maximum", true, self, other, Tensor()); }
Tensor min_other(const Tensor& self, const Tensor& other) { return extreme("minimum", false, self, other, Tensor()); }

Tensor pow(const Tensor& self, const Tensor& exponent, const Tensor& out) {
  if (is_on_cpu(self) && is_on_cpu(exponent)) return finish_out("pow", out, cpu::pow(self, exponent, Tensor()));
  const PowMeta M = pow_meta(self, exponent);
  if (M.result) return finish_out("pow", out, M.result);
  Binary P = binary_args("pow", self, exponent, M.dtype, M.shape);
  Tensor res = result_tensor(out, M.shape, M.dtype, P.device);
  if (is_complex(M.dtype)) dispatch_device_complex(M.dtype, "pow", [&](auto tag) { pow_complex<decltype(tag)>(P, res); });
  else dispatch_device_numeric(M.dtype, "pow", [&](auto tag) { pow_t<decltype(tag)>(P, res); });
  return finish_out("pow", out, res);
}

Tensor where(const Tensor& condition, const Tensor& input, const Tensor& other, const Tensor& out) {
  const WhereMeta M = where_meta(condition, input, other);
  const Device device = op_device({&condition, &input, &other}, out);
  const ScalarType dt = M.dtype;
  const Shape& shape = M.shape;
  Tensor res = result_tensor(out, shape, dt, device);
  if (res->numel() > 0) {
    Tensor c = expand_to(to_device(condition, device), shape, "where");
    const bool sa = is_on_cpu(input), sb = is_on_cpu(other);
    Tensor a = sa ? c : expand_to(to_dtype(input, dt), shape, "where");
    Tensor b = sb ? c : expand_to(to_dtype(other, dt), shape, "where");
    dispatch_itemsize(itemsize(dt), [&](auto tag) {
      using U = decltype(tag);
      const U va = sa ? host_bits<U>(input, dt) : U(0), vb = sb ? host_bits<U>(other, dt) : U(0);
      where_t<U>(device, shape, res, c, a, b, sa, sb, va, vb);
    });
  }
  return finish_out("where", out, res);
}

Tensor clamp(const Tensor& self, const Tensor& min, const Tensor& max, const Tensor& out) {
  const ClampMeta M = clamp_meta(self, min, max, out);
  const ScalarType t = M.dtype;
  const Shape& shape = M.shape;
  const Device device = op_device({&self, &min, &max}, out);
  Tensor x = to_dtype(to_device(self, device), t);
  Tensor res = result_tensor(out, shape, t, device);
  if (res->numel() > 0) {
    Tensor ex = expand_to(x, shape, "clamp");
    auto bound = [&](const Tensor& v) {
      Bound b;
      b.present = static_cast<bool>(v);
      if (v && is_on_cpu(v)) b.host = v;
      b.dev = v && !is_on_cpu(v) ? expand_to(to_dtype(v, t), shape, "clamp") : ex;
      return b;
    };
    const Bound lo = bound(min), hi = bound(max);
    dispatch_device_numeric(t, "clamp", [&](auto tag) { clamp_t<decltype(tag)>(device, shape, res, ex, lo, hi, t); });
  }
  return finish_out("clamp", out, res);
}

Tensor bitwise_and(const Tensor& self, const Tensor& other, const Tensor& out) {
  return bitwise("bitwise_and", Bit::And, self, other, out, &cpu::bitwise_and);
}
Tensor bitwise_or(const Tensor& self, const Tensor& other, const Tensor& out) {
  return bitwise("bitwise_or", Bit::Or, self, other, out, &cpu::bitwise_or);
}
Tensor bitwise_xor(const Tensor& self, const Tensor& other, const Tensor& out) {
  return bitwise("bitwise_xor", Bit::Xor, self, other, out, &cpu::bitwise_xor);
}

Tensor bitwise_not(const Tensor& self, const Tensor& out) {
  if (is_on_cpu(self)) return finish_out("bitwise_not", out, cpu::bitwise_not(self, Tensor()));  // out= on cuda
  Tensor res = result_tensor(out, self->sizes(), self->dtype(), self->device());
  if (res->numel() > 0) {
    dispatch_device_integral(self->dtype(), "bitwise_not", [&](auto tag) { bitwise_not_t<decltype(tag)>(res, self); });
  }
  return finish_out("bitwise_not", out, res);
}

Tensor floor_divide(const Tensor& self, const Tensor& other, const Tensor& out) {
  return division("floor_divide", Div::Floor, self, other, out, &cpu::floor_divide);
}
Tensor remainder(const Tensor& self, const Tensor& other, const Tensor& out) {
  return division("remainder", Div::Remainder, self, other, out, &cpu::remainder);
}
Tensor fmod(const Tensor& self, const Tensor& other, const Tensor& out) {
  return division("fmod", Div::Fmod, self, other, out, &cpu::fmod);
}

Tensor isnan(const Tensor& self) { return classify<unary_fn::IsNan>("isnan", self, &cpu::isnan); }
Tensor isinf(const Tensor& self) { return classify<unary_fn::IsInf>("isinf", self, &cpu::isinf); }
Tensor isfinite(const Tensor& self) { return classify<unary_fn::IsFinite>("isfinite", self, &cpu::isfinite); }
Tensor signbit(const Tensor& self) { return classify<unary_fn::SignBit>("signbit", self, &cpu::signbit); }

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(eq);
EMBER_REGISTER_CUDA_KERNEL(ne);
EMBER_REGISTER_CUDA_KERNEL(lt);
EMBER_REGISTER_CUDA_KERNEL(le);
EMBER_REGISTER_CUDA_KERNEL(gt);
EMBER_REGISTER_CUDA_KERNEL(ge);
EMBER_REGISTER_CUDA_KERNEL(logical_and);
EMBER_REGISTER_CUDA_KERNEL(logical_or);
EMBER_REGISTER_CUDA_KERNEL(logical_xor);
EMBER_REGISTER_CUDA_KERNEL(logical_not);
EMBER_REGISTER_CUDA_KERNEL(maximum);
EMBER_REGISTER_CUDA_KERNEL(minimum);
EMBER_REGISTER_CUDA_KERNEL(max_other);
EMBER_REGISTER_CUDA_KERNEL(min_other);
EMBER_REGISTER_CUDA_KERNEL(pow);
EMBER_REGISTER_CUDA_KERNEL(where);
EMBER_REGISTER_CUDA_KERNEL(clamp);
EMBER_REGISTER_CUDA_KERNEL(bitwise_and);
EMBER_REGISTER_CUDA_KERNEL(bitwise_or);
EMBER_REGISTER_CUDA_KERNEL(bitwise_xor);
EMBER_REGISTER_CUDA_KERNEL(bitwise_not);
EMBER_REGISTER_CUDA_KERNEL(floor_divide);
EMBER_REGISTER_CUDA_KERNEL(remainder);
EMBER_REGISTER_CUDA_KERNEL(fmod);
EMBER_REGISTER_CUDA_KERNEL(isnan);
EMBER_REGISTER_CUDA_KERNEL(signbit);
EMBER_REGISTER_CUDA_KERNEL(isinf);
EMBER_REGISTER_CUDA_KERNEL(isfinite);
