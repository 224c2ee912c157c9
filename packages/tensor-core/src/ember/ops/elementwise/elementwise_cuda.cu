// CUDA kernels of the copy, fill and creation ops, the arithmetic binary ops and the common
// unary math ops, on the iteration engine of elementwise.cuh. Each is the
// ember::cuda::<op> that the generated dispatcher calls for CUDA tensors.
#include <cmath>
#include <cstring>

#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/elementwise/binary_meta.h"
#include "ember/ops/elementwise/complex_functions.h"
#include "ember/ops/elementwise/unary_functions.h"

namespace ember::cuda_engine {

double item_as_double(const Tensor& t);  // the value of a 0-d tensor on any device
Complex<double> item_as_complex(const Tensor& t);  // the same, its imaginary part too
Tensor clone(const Tensor& self);        // a contiguous copy on self's device

void check_launch(const char* op) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    throw std::runtime_error(message(op, ": CUDA kernel launch failed: ", cudaGetErrorName(err), ": ",
                                     cudaGetErrorString(err)));
  }
}

namespace {

template <typename To, typename From> void copy_t(const Tensor& dst, const Tensor& s) {
  launch_map<To, From>("copy_", dst, s, [] __device__(From v) { return cvt<To>(v); });
}

// dst (CUDA) := src (CUDA, same device, expanded to dst's shape), converting the dtype.
void device_copy(const Tensor& dst, const Tensor& src) {
  Tensor s = expand_to(src, dst->sizes(), "copy_");
  if (s->dtype() == dst->dtype() && s->is_contiguous() && dst->is_contiguous()) {
    cuda_hooks().copy_bytes(dst->data_ptr(), dst->device(), s->data_ptr(), s->device(),
                            static_cast<size_t>(dst->numel()) * dst->itemsize(), true);
    return;
  }
  dispatch_device_any(dst->dtype(), "copy_", [&](auto to_tag) {
    dispatch_device_any(s->dtype(), "copy_", [&](auto from_tag) {
      copy_t<decltype(to_tag), decltype(from_tag)>(dst, s);
    });
  });
}

template <typename T> void fill_t(const Tensor& t, T v) {
  launch_elementwise<1>("fill_", t->device(), t->sizes(), {t.get()},
                        [v] __device__(char** base, const int64_t* off) { *reinterpret_cast<T*>(base[0] + off[0]) = v; });
}

void fill_device(const Tensor& t, const Scalar& value) {
  check_fill_value(t->dtype(), value);
  dispatch_device_any(t->dtype(), "fill_", [&](auto tag) {
    using T = decltype(tag);
    // the value converted on the host the way the CPU converts it, then moved bit for bit
    T v;
    dispatch_any(t->dtype(), "fill_", [&](auto host_tag) {
      using H = decltype(host_tag);
      const H h = value.to<H>();
      if constexpr (sizeof(H) == sizeof(T)) std::memcpy(&v, &h, sizeof(T));  // the same dtype at run time
    });
    fill_t<T>(t, v);
  });
}


// ---- binary arithmetic ----

// One operand of a binary op: a CUDA tensor, or a CPU 0-d tensor read as a host value.
struct BinaryOperands {
  Tensor a, b;                       // CUDA tensors, expanded to the result shape (null: a scalar)
  Complex<double> sa = 0.0, sb = 0.0;  // the scalar values (the imaginary part 0 for real dtypes)
  Shape shape;
  ScalarType dtype;
  Device device;
};

Complex<double> scalar_value(const Tensor& t) { return item_as_complex(t); }

// A scalar operand in the opmath type A (its real part for a real A).
template <typename A> A scalar_as(Complex<double> v) {
  if constexpr (is_complex_v<A>) return A(static_cast<real_t<A>>(v.re), static_cast<real_t<A>>(v.im));
  else return static_cast<A>(v.re);
}

BinaryOperands binary_operands(const char* op, const Tensor& self, const Tensor& other, ScalarType dtype) {
  BinaryOperands r;
  r.dtype = dtype;
  const bool a_host = self->device().type == DeviceType::CPU;
  const bool b_host = other->device().type == DeviceType::CPU;
  r.device = a_host ? other->device() : self->device();
  r.shape = broadcast_shapes(self->sizes(), other->sizes(), op);
  if (a_host) r.sa = scalar_value(self);
  else r.a = expand_to(contiguous_in(self, dtype), r.shape, op);
  if (b_host) r.sb = scalar_value(other);
  else r.b = expand_to(contiguous_in(other, dtype), r.shape, op);
  return r;
}

// out[i] = f(a[i], b[i]) in opmath of dtype T; either side may be a scalar.
template <typename T, typename F>
void run_binary(const char* op, const BinaryOperands& P, const Tensor& res, F f) {
  using A = opmath_t<T>;
  const A sa = scalar_as<A>(P.sa), sb = scalar_as<A>(P.sb);
  if (P.a && P.b) {
    launch_map<T, T, T>(op, res, P.a, P.b, [f] __device__(T x, T y) { return cvt<T>(f(cvt<A>(x), cvt<A>(y))); });
  } else if (P.a) {
    launch_map<T, T>(op, res, P.a, [f, sb] __device__(T x) { return cvt<T>(f(cvt<A>(x), sb)); });
  } else {
    launch_map<T, T>(op, res, P.b, [f, sa] __device__(T y) { return cvt<T>(f(sa, cvt<A>(y))); });
  }
}

Tensor result_for(const char* op, const Tensor& out, const Shape& shape, ScalarType dtype, const Device& device) {
  if (out && out->sizes() == shape && out->dtype() == dtype) return out;
  return ember::empty(shape, dtype, device);
}

enum class Arith { Add, Sub, Mul, Div, ThresholdBackward };

template <typename T>
void arith_t(const char* op, Arith kind, const BinaryOperands& P, const Tensor& res, const Scalar& alpha,
             ScalarType dt) {
  using A = opmath_t<T>;
  const A al = static_cast<A>(alpha.to_double());
  const A al_int = static_cast<A>(alpha.to_int());
  const A a = is_floating(dt) ? al : al_int;
  switch (kind) {
    case Arith::Add:
      if constexpr (std::is_same_v<T, bool>) {
        run_binary<T>(op, P, res, [] __device__(A x, A y) { return static_cast<A>(x || y); });
      } else {
        run_binary<T>(op, P, res, [a] __device__(A x, A y) { return static_cast<A>(x + a * y); });
      }
      break;
    case Arith::Sub:
      run_binary<T>(op, P, res, [a] __device__(A x, A y) { return static_cast<A>(x - a * y); });
      break;
    case Arith::Mul:
      if constexpr (std::is_same_v<T, bool>) {
        run_binary<T>(op, P, res, [] __device__(A x, A y) { return static_cast<A>(x && y); });
      } else {
        run_binary<T>(op, P, res, [] __device__(A x, A y) { return static_cast<A>(x * y); });
      }
      break;
    case Arith::Div:
      run_binary<T>(op, P, res, [] __device__(A x, A y) { return static_cast<A>(x / y); });
      break;
    case Arith::ThresholdBackward:  // self <= threshold gives 0; anything else (NaN too) passes
      run_binary<T>(op, P, res, [a] __device__(A g, A x) { return x <= a ? A(0) : g; });
      break;
  }
}

// The complex forms: alpha is complex too; alpha 1 adds the parts directly, as the CPU
// ((1 + 0i) * (inf + i) would make a NaN part).
template <typename T>
void arith_complex(const char* op, Arith kind, const BinaryOperands& P, const Tensor& res, const Scalar& alpha) {
  using R = real_t<T>;
  const T a(static_cast<R>(alpha.to_double()), static_cast<R>(alpha.im));
  const bool unit = alpha.to_double() == 1.0 && alpha.im == 0.0;
  switch (kind) {
    case Arith::Add:
      if (unit) run_binary<T>(op, P, res, [] __device__(T x, T y) { return x + y; });
      else run_binary<T>(op, P, res, [a] __device__(T x, T y) { return x + a * y; });
      break;
    case Arith::Sub:
      if (unit) run_binary<T>(op, P, res, [] __device__(T x, T y) { return x - y; });
      else run_binary<T>(op, P, res, [a] __device__(T x, T y) { return x - a * y; });
      break;
    case Arith::Mul: run_binary<T>(op, P, res, [] __device__(T x, T y) { return x * y; }); break;
    case Arith::Div: run_binary<T>(op, P, res, [] __device__(T x, T y) { return x / y; }); break;
    case Arith::ThresholdBackward: throw_dtype_unsupported(op, res->dtype(), "real"); break;
  }
}

Tensor arith(const char* op, Arith kind, const Tensor& self, const Tensor& other, const Scalar& alpha,
             const Tensor& out) {
  ScalarType dt = result_type(self, other);
  if (kind == Arith::Div && !is_floating(dt) && !is_complex(dt)) dt = default_float_dtype();
  if (kind == Arith::Sub) check_sub_operands(self, other);
  if (kind == Arith::Add || kind == Arith::Sub) check_alpha(op, dt, alpha);
  if (dt == ScalarType::Bool && kind == Arith::ThresholdBackward) throw_dtype_unsupported(op, dt, "numeric");
  BinaryOperands P = binary_operands(op, self, other, dt);
  Tensor res = result_for(op, out, P.shape, dt, P.device);
  if (is_complex(dt)) {
    dispatch_device_complex(dt, op, [&](auto tag) { arith_complex<decltype(tag)>(op, kind, P, res, alpha); });
  } else {
    dispatch_device_type(dt, op, [&](auto tag) { arith_t<decltype(tag)>(op, kind, P, res, alpha, dt); });
  }
  return finish_out(op, out, res);
}

// ---- unary math: unary_cpu.cpp's dtype rules, unary_functions.h's scalar functions ----

enum class UnaryKind {
  KeepDtype,     // numeric (sign also bool)
  RealFunction,  // integers and bool compute in the default float dtype
  Rounding,      // integers are copied unchanged
};

template <typename T, typename F> void run_unary(const char* op, const Tensor& res, const Tensor& in, F f) {
  using A = opmath_t<T>;
  launch_map<T, T>(op, res, in, [f] __device__(T x) { return cvt<T>(f(cvt<A>(x))); });
}

// bool only for sign; integers only for the ops that keep the dtype (the others compute them in
// a float dtype, or copy them): the combinations the dtype rules never reach are not compiled.
template <typename Fn> constexpr bool kUnaryTakesBool = std::is_same_v<Fn, unary_fn::Sign>;

template <typename T, typename Fn, UnaryKind Kind> void unary_typed(const char* op, const Tensor& res, const Tensor& in) {
  constexpr bool kFloat = std::is_floating_point_v<opmath_t<T>>;
  constexpr bool kReachable =
      std::is_same_v<T, bool> ? kUnaryTakesBool<Fn> : (kFloat || Kind == UnaryKind::KeepDtype);
  if constexpr (kReachable) run_unary<T>(op, res, in, [] __device__(opmath_t<T> x) { return Fn{}(x); });
}

// The complex form of a unary_fn function: complex_fn's of the same name, or the function
// itself where it is plain arithmetic; void where the op takes no complex input.
template <typename Fn> struct ComplexForm { using type = void; };
#define EMBER_COMPLEX_FORM(NAME, CFN) \
  template <> struct ComplexForm<unary_fn::NAME> { using type = CFN; };
EMBER_COMPLEX_FORM(Neg, unary_fn::Neg)
EMBER_COMPLEX_FORM(Square, unary_fn::Square)
EMBER_COMPLEX_FORM(Exp, complex_fn::Exp)
EMBER_COMPLEX_FORM(Log, complex_fn::Log)
EMBER_COMPLEX_FORM(Log1p, complex_fn::Log1p)
EMBER_COMPLEX_FORM(Expm1, complex_fn::Expm1)
EMBER_COMPLEX_FORM(Sqrt, complex_fn::Sqrt)
EMBER_COMPLEX_FORM(Rsqrt, complex_fn::Rsqrt)
EMBER_COMPLEX_FORM(Sin, complex_fn::Sin)
EMBER_COMPLEX_FORM(Cos, complex_fn::Cos)
EMBER_COMPLEX_FORM(Tan, complex_fn::Tan)
EMBER_COMPLEX_FORM(Tanh, complex_fn::Tanh)
EMBER_COMPLEX_FORM(Sigmoid, complex_fn::Sigmoid)
EMBER_COMPLEX_FORM(Log2, complex_fn::Log2)
EMBER_COMPLEX_FORM(Log10, complex_fn::Log10)
EMBER_COMPLEX_FORM(Atan, complex_fn::Atan)
EMBER_COMPLEX_FORM(Asin, complex_fn::Asin)
EMBER_COMPLEX_FORM(Acos, complex_fn::Acos)
EMBER_COMPLEX_FORM(Sinh, complex_fn::Sinh)
EMBER_COMPLEX_FORM(Cosh, complex_fn::Cosh)
EMBER_COMPLEX_FORM(Asinh, complex_fn::Asinh)
EMBER_COMPLEX_FORM(Acosh, complex_fn::Acosh)
EMBER_COMPLEX_FORM(Atanh, complex_fn::Atanh)
EMBER_COMPLEX_FORM(Reciprocal, complex_fn::Reciprocal)
#undef EMBER_COMPLEX_FORM

using CpuUnary = Tensor (*)(const Tensor&, const Tensor&);

// A function of self's values (complex, or any dtype for the ops below) computed by the CPU
// kernel: its result moved to self's device, or its error (the dtype an op refuses).
Tensor via_host(const char* op, const Tensor& self, const Tensor& out, CpuUnary cpu_kernel) {
  return finish_out(op, out, to_device(cpu_kernel(to_host(self), Tensor()), self->device()));
}

template <typename T, typename F>
void map_complex_t(const char* op, const Tensor& res, const Tensor& self, bool real_result, F f) {
  using R = real_t<T>;
  if (real_result) launch_map<R, T>(op, res, self, [f] __device__(T z) { return static_cast<R>(f(z).re); });
  else launch_map<T, T>(op, res, self, [f] __device__(T z) { return T(f(z)); });
}

// out = f(z) over a complex tensor, in its dtype or (real_result: the real part of f's value)
// in the real dtype of it.
template <typename F> Tensor map_complex(const char* op, const Tensor& self, const Tensor& out, bool real_result, F f) {
  const ScalarType dt = self->dtype();
  Tensor res = result_for(op, out, self->sizes(), real_result ? to_real(dt) : dt, self->device());
  dispatch_device_complex(dt, op, [&](auto tag) { map_complex_t<decltype(tag)>(op, res, self, real_result, f); });
  return finish_out(op, out, res);
}

template <typename Fn, UnaryKind Kind>
Tensor unary(const char* op, const Tensor& self, const Tensor& out, CpuUnary cpu_kernel) {
  constexpr bool kBoolAllowed = kUnaryTakesBool<Fn>;
  ScalarType dt = self->dtype();
  if (is_complex(dt)) {
    using C = typename ComplexForm<Fn>::type;
    if constexpr (std::is_void_v<C>) {
      return via_host(op, self, out, cpu_kernel);  // the CPU's refusal of the dtype
    } else {
      return map_complex(op, self, out, false, [] __device__(auto z) { return C{}(z); });
    }
  }
  if (Kind == UnaryKind::RealFunction && !is_floating(dt)) dt = default_float_dtype();
  if (Kind == UnaryKind::Rounding && !is_floating(dt)) return finish_out(op, out, out == self ? self : clone(self));
  if (dt == ScalarType::Bool && std::is_same_v<Fn, unary_fn::Neg>) {
    throw std::runtime_error(
        "neg: negation, the `-` operator, on a bool tensor is not supported; use the `~` or "
        "`logical_not()` operator instead");
  }
  if (dt == ScalarType::Bool && !kBoolAllowed) throw_dtype_unsupported(op, dt, "numeric");
  Tensor in = contiguous_in(self, dt);
  Tensor res = result_for(op, out, self->sizes(), dt, self->device());
  dispatch_device_type(dt, op, [&](auto tag) { unary_typed<decltype(tag), Fn, Kind>(op, res, in); });
  return finish_out(op, out, res);
}

}  // namespace

// ---- the value of a CPU or CUDA 0-d tensor, on the host ----

double item_as_double(const Tensor& t) {
  const Tensor h = to_host(t);
  double v = 0.0;
  dispatch_all(h->dtype(), "item", [&](auto tag) {
    using H = decltype(tag);
    v = convert<double>(*reinterpret_cast<const H*>(h->data_ptr()));
  });
  return v;
}

Complex<double> item_as_complex(const Tensor& t) {
  return *to_dtype(to_host(t), ScalarType::ComplexDouble)->data<Complex<double>>();
}

Tensor clone(const Tensor& self) {
  Tensor out = ember::empty(self->sizes(), self->dtype(), self->device());
  device_copy(out, self);
  return out;
}

// ---- copies between any two of host and device ----

void copy_across(const Tensor& self, const Tensor& src, bool non_blocking) {
  const bool dst_cuda = self->device().type == DeviceType::CUDA;
  const bool src_cuda = src->device().type == DeviceType::CUDA;
  if (dst_cuda && src_cuda && self->device() == src->device()) {
    device_copy(self, src);
    return;
  }
  // Bytes move between devices in the runtime layer's copy_bytes (current streams; it waits
  // unless non_blocking with pinned host memory, whose block it keeps until the copy is done).
  // The dtype conversion and any strides are handled on one side: by the CPU for host data, by
  // device_copy on the destination GPU.
  auto transfer = [&](const Tensor& dst, const Tensor& from, bool async) {
    cuda_hooks().copy_bytes(dst->data_ptr(), dst->device(), from->data_ptr(), from->device(),
                            static_cast<size_t>(from->numel()) * from->itemsize(), async);
  };
  if (src_cuda) {  // device -> host or another GPU: a contiguous copy in src's dtype moves over
    Tensor d = contiguous_in(src, src->dtype());
    if (self->is_contiguous() && self->dtype() == d->dtype() && self->sizes() == d->sizes()) {
      transfer(self, d, non_blocking && !dst_cuda);
      return;
    }
    Tensor staged = ember::empty(d->sizes(), d->dtype(), self->device());
    transfer(staged, d, false);
    if (dst_cuda) device_copy(self, staged);
    else copy_into(self, staged);
    return;
  }
  // host -> device: the host side made contiguous in the target dtype first
  Tensor h = expand_to(src, self->sizes(), "copy_");
  if (!h->is_contiguous() || h->dtype() != self->dtype()) {
    Tensor c = ember::empty(self->sizes(), self->dtype());
    copy_into(c, h);
    h = c;
  }
  if (self->is_contiguous()) {
    transfer(self, h, non_blocking);
    return;
  }
  Tensor staged = ember::empty(self->sizes(), self->dtype(), self->device());
  transfer(staged, h, false);
  device_copy(self, staged);
}

}  // namespace ember::cuda_engine

namespace ember::cuda {

using namespace ember::cuda_engine;

Tensor copy(const Tensor& self, const Tensor& src, bool non_blocking, const Tensor&) {
  if (self == src) return self;
  Tensor s = src->storage() == self->storage() ? ops::clone(src) : src;
  copy_across(self, s, non_blocking);
  return self;
}

Tensor clone(const Tensor& self) { return cuda_engine::clone(self); }

Tensor contiguous(const Tensor& self) { return self->is_contiguous() ? self : clone(self); }

Tensor fill(const Tensor& self, const Scalar& value, const Tensor&) {
  fill_device(self, value);
  return self;
}

Tensor zero(const Tensor& self, const Tensor&) {
  fill_device(self, Scalar::from_int(0));
  return self;
}

Tensor zeros(const Shape& size, std::optional<ScalarType> dtype, std::optional<Device> device, bool requires_grad,
             const Tensor& out) {
  return create("zeros", size, dtype.value_or(out ? out->dtype() : default_float_dtype()), device, requires_grad, out,
                [](const Tensor& t) { fill_device(t, Scalar::from_int(0)); });
}

Tensor ones(const Shape& size, std::optional<ScalarType> dtype, std::optional<Device> device, bool requires_grad,
            const Tensor& out) {
  return create("ones", size, dtype.value_or(out ? out->dtype() : default_float_dtype()), device, requires_grad, out,
                [](const Tensor& t) { fill_device(t, Scalar::from_int(1)); });
}

Tensor empty(const Shape& size, std::optional<ScalarType> dtype, std::optional<Device> device, bool requires_grad,
             const Tensor& out) {
  return create("empty", size, dtype.value_or(out ? out->dtype() : default_float_dtype()), device, requires_grad, out,
                [](const Tensor&) {});
}

Tensor full(const Shape& size, const Scalar& fill_value, std::optional<ScalarType> dtype, std::optional<Device> device,
            bool requires_grad, const Tensor& out) {
  return create("full", size, dtype.value_or(out ? out->dtype() : fill_value.natural_dtype()), device, requires_grad,
                out, [&](const Tensor& t) { fill_device(t, fill_value); });
}

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {
  return arith("add", Arith::Add, self, other, alpha, out);
}
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {
  return arith("sub", Arith::Sub, self, other, alpha, out);
}
Tensor mul(const Tensor& self, const Tensor& other, const Tensor& out) {
  return arith("mul", Arith::Mul, self, other, Scalar::from_int(1), out);
}
Tensor div(const Tensor& self, const Tensor& other, const std::optional<std::string>& rounding_mode, const Tensor& out) {
  if (rounding_mode) throw NotImplementedError("div: rounding_mode is not implemented for CUDA tensors yet");
  return arith("div", Arith::Div, self, other, Scalar::from_int(1), out);
}

Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  const ScalarType t = result_type(grad_output, self);  // PyTorch's overflow check in the compute type
  check_fill_value(t == ScalarType::Float16 || t == ScalarType::BFloat16 ? ScalarType::Float32 : t, threshold);
  return arith("threshold_backward", Arith::ThresholdBackward, grad_output, self, threshold, Tensor());
}

Tensor neg(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Neg, UnaryKind::KeepDtype>("neg", self, out, &cpu::neg);
}
Tensor abs(const Tensor& self, const Tensor& out) {
  if (is_complex(self->dtype())) {  // |z|, a real result
    return map_complex("abs", self, out, true, [] __device__(auto z) { return decltype(z)(complex_abs(z)); });
  }
  return unary<unary_fn::Abs, UnaryKind::KeepDtype>("abs", self, out, &cpu::abs);
}
// z / |z| (0 at 0) for complex; sign for everything else, as PyTorch.
Tensor sgn(const Tensor& self, const Tensor& out) {
  if (!is_complex(self->dtype())) return ops::sign(self, out);
  return map_complex("sgn", self, out, false, [] __device__(auto z) { return complex_fn::Sgn{}(z); });
}
// The argument of complex numbers; of reals (pi for negatives, 0 otherwise) on the host, where
// the op is rare.
Tensor angle(const Tensor& self, const Tensor& out) {
  if (!is_complex(self->dtype())) return via_host("angle", self, out, &cpu::angle);
  return map_complex("angle", self, out, true,
                     [] __device__(auto z) { return decltype(z)(std::atan2(z.im, z.re)); });
}
Tensor conj_physical(const Tensor& self, const Tensor& out) {
  if (!is_complex(self->dtype())) return finish_out("conj_physical", out, out == self ? self : clone(self));
  return map_complex("conj_physical", self, out, false, [] __device__(auto z) { return complex_conj(z); });
}
Tensor relu(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Relu, UnaryKind::KeepDtype>("relu", self, out, &cpu::relu);
}
Tensor square(const Tensor& self, const Tensor& out) {
  if (Tensor converted = square_of_bool(self)) return finish_out("square", out, converted);
  return unary<unary_fn::Square, UnaryKind::KeepDtype>("square", self, out, &cpu::square);
}
Tensor sign(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Sign, UnaryKind::KeepDtype>("sign", self, out, &cpu::sign);
}
Tensor floor(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Floor, UnaryKind::Rounding>("floor", self, out, &cpu::floor);
}
Tensor ceil(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Ceil, UnaryKind::Rounding>("ceil", self, out, &cpu::ceil);
}
Tensor round(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Round, UnaryKind::Rounding>("round", self, out, &cpu::round);
}
Tensor trunc(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Trunc, UnaryKind::Rounding>("trunc", self, out, &cpu::trunc);
}
Tensor exp(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Exp, UnaryKind::RealFunction>("exp", self, out, &cpu::exp);
}
Tensor exp2(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Exp2, UnaryKind::RealFunction>("exp2", self, out, &cpu::exp2);
}
Tensor log(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Log, UnaryKind::RealFunction>("log", self, out, &cpu::log);
}
Tensor sqrt(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Sqrt, UnaryKind::RealFunction>("sqrt", self, out, &cpu::sqrt);
}
Tensor tanh(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Tanh, UnaryKind::RealFunction>("tanh", self, out, &cpu::tanh);
}
Tensor sigmoid(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Sigmoid, UnaryKind::RealFunction>("sigmoid", self, out, &cpu::sigmoid);
}
Tensor log1p(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Log1p, UnaryKind::RealFunction>("log1p", self, out, &cpu::log1p);
}
Tensor expm1(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Expm1, UnaryKind::RealFunction>("expm1", self, out, &cpu::expm1);
}
Tensor rsqrt(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Rsqrt, UnaryKind::RealFunction>("rsqrt", self, out, &cpu::rsqrt);
}
Tensor sin(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Sin, UnaryKind::RealFunction>("sin", self, out, &cpu::sin);
}
Tensor cos(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Cos, UnaryKind::RealFunction>("cos", self, out, &cpu::cos);
}
Tensor tan(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Tan, UnaryKind::RealFunction>("tan", self, out, &cpu::tan);
}
Tensor erf(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Erf, UnaryKind::RealFunction>("erf", self, out, &cpu::erf);
}
Tensor log2(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Log2, UnaryKind::RealFunction>("log2", self, out, &cpu::log2);
}
Tensor log10(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Log10, UnaryKind::RealFunction>("log10", self, out, &cpu::log10);
}
Tensor atan(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Atan, UnaryKind::RealFunction>("atan", self, out, &cpu::atan);
}
Tensor asin(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Asin, UnaryKind::RealFunction>("asin", self, out, &cpu::asin);
}
Tensor acos(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Acos, UnaryKind::RealFunction>("acos", self, out, &cpu::acos);
}
Tensor sinh(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Sinh, UnaryKind::RealFunction>("sinh", self, out, &cpu::sinh);
}
Tensor cosh(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Cosh, UnaryKind::RealFunction>("cosh", self, out, &cpu::cosh);
}
Tensor asinh(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Asinh, UnaryKind::RealFunction>("asinh", self, out, &cpu::asinh);
}
Tensor acosh(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Acosh, UnaryKind::RealFunction>("acosh", self, out, &cpu::acosh);
}
Tensor atanh(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Atanh, UnaryKind::RealFunction>("atanh", self, out, &cpu::atanh);
}
Tensor reciprocal(const Tensor& self, const Tensor& out) {
  return unary<unary_fn::Reciprocal, UnaryKind::RealFunction>("reciprocal", self, out, &cpu::reciprocal);
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(copy);
EMBER_REGISTER_CUDA_KERNEL(clone);
EMBER_REGISTER_CUDA_KERNEL(contiguous);
EMBER_REGISTER_CUDA_KERNEL(fill);
EMBER_REGISTER_CUDA_KERNEL(zero);
EMBER_REGISTER_CUDA_KERNEL(zeros);
EMBER_REGISTER_CUDA_KERNEL(ones);
EMBER_REGISTER_CUDA_KERNEL(empty);
EMBER_REGISTER_CUDA_KERNEL(full);
EMBER_REGISTER_CUDA_KERNEL(add);
EMBER_REGISTER_CUDA_KERNEL(sub);
EMBER_REGISTER_CUDA_KERNEL(mul);
EMBER_REGISTER_CUDA_KERNEL(div);
EMBER_REGISTER_CUDA_KERNEL(neg);
EMBER_REGISTER_CUDA_KERNEL(abs);
EMBER_REGISTER_CUDA_KERNEL(sgn);
EMBER_REGISTER_CUDA_KERNEL(angle);
EMBER_REGISTER_CUDA_KERNEL(conj_physical);
EMBER_REGISTER_CUDA_KERNEL(exp);
EMBER_REGISTER_CUDA_KERNEL(exp2);
EMBER_REGISTER_CUDA_KERNEL(log);
EMBER_REGISTER_CUDA_KERNEL(sqrt);
EMBER_REGISTER_CUDA_KERNEL(tanh);
EMBER_REGISTER_CUDA_KERNEL(sigmoid);
EMBER_REGISTER_CUDA_KERNEL(relu);
EMBER_REGISTER_CUDA_KERNEL(square);
EMBER_REGISTER_CUDA_KERNEL(sign);
EMBER_REGISTER_CUDA_KERNEL(floor);
EMBER_REGISTER_CUDA_KERNEL(ceil);
EMBER_REGISTER_CUDA_KERNEL(round);
EMBER_REGISTER_CUDA_KERNEL(trunc);
EMBER_REGISTER_CUDA_KERNEL(log1p);
EMBER_REGISTER_CUDA_KERNEL(expm1);
EMBER_REGISTER_CUDA_KERNEL(rsqrt);
EMBER_REGISTER_CUDA_KERNEL(sin);
EMBER_REGISTER_CUDA_KERNEL(cos);
EMBER_REGISTER_CUDA_KERNEL(tan);
EMBER_REGISTER_CUDA_KERNEL(erf);
EMBER_REGISTER_CUDA_KERNEL(log2);
EMBER_REGISTER_CUDA_KERNEL(log10);
EMBER_REGISTER_CUDA_KERNEL(atan);
EMBER_REGISTER_CUDA_KERNEL(asin);
EMBER_REGISTER_CUDA_KERNEL(acos);
EMBER_REGISTER_CUDA_KERNEL(sinh);
EMBER_REGISTER_CUDA_KERNEL(cosh);
EMBER_REGISTER_CUDA_KERNEL(asinh);
EMBER_REGISTER_CUDA_KERNEL(acosh);
EMBER_REGISTER_CUDA_KERNEL(atanh);
EMBER_REGISTER_CUDA_KERNEL(reciprocal);
EMBER_REGISTER_CUDA_KERNEL(threshold_backward);
