// Elementwise kernels over the strided engine: unary, binary and ternary maps.
//
// F is called with values in opmath_t of the input type (float for 16-bit floats) and
// returns a value convertible to the output type. Contiguous and scalar-broadcast inner
// loops are written out so the compiler vectorises them.
#pragma once

#include <algorithm>
#include <type_traits>
#include <utility>

#include "ember/backends/cpu/half_blocks.h"
#include "ember/backends/cpu/iter.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/simd.h"

namespace ember {

// A unary functor may carry a cheaper form valid on part of its domain: f.fast(x) equals
// f(x) (to the function's accuracy) wherever f.in_fast_range(x). Contiguous loops then run
// blocks of kFastFormBlock elements by f.fast when every element of the block is in range,
// else by f; the decision is made before the block is written (in-place ops are safe).
template <typename F, typename A, typename = void> struct has_fast_form : std::false_type {};
template <typename F, typename A>
struct has_fast_form<F, A, std::void_t<decltype(std::declval<const F&>().fast(std::declval<A>()))>>
    : std::true_type {};
constexpr int64_t kFastFormBlock = 256;

// A functor may also carry an AVX-512 kernel of whole contiguous runs of one floating
// dtype T, f.avx512(o, a, n) (unary) or f.avx512(o, a, b, n) (binary), for a function whose
// fast form needs instructions the vectoriser does not emit from scalar code (a table lookup
// by permutes): contiguous loops of T call it where simd_dispatch would run AVX-512 code.
template <typename F, typename T, typename = void> struct has_avx512_unary : std::false_type {};
template <typename F, typename T>
struct has_avx512_unary<F, T, std::void_t<decltype(std::declval<const F&>().avx512(
    std::declval<T*>(), std::declval<const T*>(), int64_t{}))>> : std::true_type {};
template <typename F, typename T, typename = void> struct has_avx512_binary : std::false_type {};
template <typename F, typename T>
struct has_avx512_binary<F, T, std::void_t<decltype(std::declval<const F&>().avx512(
    std::declval<T*>(), std::declval<const T*>(), std::declval<const T*>(), int64_t{}))>>
    : std::true_type {};

template <typename out_t, typename in_t, typename F>
inline void unary_loop(char** p, const int64_t* s, int64_t n, const F& f) {
  using acc = opmath_t<in_t>;
  if (s[0] == sizeof(out_t) && s[1] == sizeof(in_t)) {
    out_t* o = reinterpret_cast<out_t*>(p[0]);
    const in_t* a = reinterpret_cast<const in_t*>(p[1]);
    if constexpr (std::is_same_v<out_t, in_t> && has_avx512_unary<F, in_t>::value) {
      if (simd_avx512()) return f.avx512(o, a, n);
    }
    if constexpr (has_fast_form<F, acc>::value) {
      simd_dispatch([&] {
        const F g = f;
        for (int64_t start = 0; start < n; start += kFastFormBlock) {
          const int64_t end = std::min(n, start + kFastFormBlock);
          int out_of_range = 0;
          for (int64_t i = start; i < end; ++i) out_of_range |= !g.in_fast_range(static_cast<acc>(a[i]));
          if (out_of_range) {
            for (int64_t i = start; i < end; ++i) o[i] = static_cast<out_t>(g(static_cast<acc>(a[i])));
          } else {
            for (int64_t i = start; i < end; ++i) o[i] = static_cast<out_t>(g.fast(static_cast<acc>(a[i])));
          }
        }
      });
      return;
    }
    simd_dispatch([&] {
      const F g = f;  // a local copy: its captured state cannot alias o (see binary_loop)
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<out_t>(g(static_cast<acc>(a[i])));
    });
    return;
  }
  if (s[0] == sizeof(out_t) && s[1] == 0) {  // an operand broadcast from one element
    out_t* o = reinterpret_cast<out_t*>(p[0]);
    std::fill(o, o + n, static_cast<out_t>(f(static_cast<acc>(*reinterpret_cast<const in_t*>(p[1])))));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<out_t*>(p[0] + i * s[0]) =
        static_cast<out_t>(f(static_cast<acc>(*reinterpret_cast<const in_t*>(p[1] + i * s[1]))));
  }
}

template <typename out_t, typename in_t, typename F>
inline void binary_loop(char** p, const int64_t* s, int64_t n, const F& f) {
  using acc = opmath_t<in_t>;
  constexpr int64_t so = sizeof(out_t), si = sizeof(in_t);
  out_t* o = reinterpret_cast<out_t*>(p[0]);
  const in_t* a = reinterpret_cast<const in_t*>(p[1]);
  const in_t* b = reinterpret_cast<const in_t*>(p[2]);
  // Each loop calls a local copy of f: a functor with state (a flag, a mask) read through
  // the reference might alias o (a bool output is a char, which aliases anything), which
  // would reload the state every element and stop the vectoriser.
  if (s[0] == so && s[1] == si && s[2] == si) {
    if constexpr (std::is_same_v<out_t, in_t> && has_avx512_binary<F, in_t>::value) {
      if (simd_avx512()) return f.avx512(o, a, b, n);
    }
    simd_dispatch([&] {
      const F g = f;
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<out_t>(g(static_cast<acc>(a[i]), static_cast<acc>(b[i])));
    });
  } else if (s[0] == so && s[1] == si && s[2] == 0) {
    const acc bv = static_cast<acc>(b[0]);
    simd_dispatch([&] {
      const F g = f;
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<out_t>(g(static_cast<acc>(a[i]), bv));
    });
  } else if (s[0] == so && s[1] == 0 && s[2] == si) {
    const acc av = static_cast<acc>(a[0]);
    simd_dispatch([&] {
      const F g = f;
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<out_t>(g(av, static_cast<acc>(b[i])));
    });
  } else if (s[0] == so && s[1] == 0 && s[2] == 0) {
    // both operands broadcast from one element (an expanded gradient times a number)
    std::fill(o, o + n, static_cast<out_t>(f(static_cast<acc>(a[0]), static_cast<acc>(b[0]))));
  } else {
    for (int64_t i = 0; i < n; ++i) {
      *reinterpret_cast<out_t*>(p[0] + i * s[0]) = static_cast<out_t>(
          f(static_cast<acc>(*reinterpret_cast<const in_t*>(p[1] + i * s[1])),
            static_cast<acc>(*reinterpret_cast<const in_t*>(p[2] + i * s[2]))));
    }
  }
}

// float16 computes in float through blocks: its loops convert a block of each operand to
// float, run the float32 loop with the float32 functor (one compiled loop serves both dtypes)
// and convert the result back. Every functor of map_unary / map_binary computes in opmath_t
// of its tag, so make_f(float{}) is the functor of a float16 tag as well. Inlining float16's
// conversions into every loop instead made them slow to compile (a third of the elementwise
// kernels' compile time) and slow to run (no vector form); bfloat16, whose conversions are a
// shift and a rounding add, keeps its own loops (docs/building.md).
//
// half_blocks_loop is unary_loop / binary_loop of float16 (N = 2 or 3 operands, output
// first) through float blocks; out_t is float (written back as float16) or bool. An operand
// of stride 0 (a broadcast scalar) is converted once and stays of stride 0.
template <int N, typename out_t, typename F>
void half_blocks_loop(char** p, const int64_t* s, int64_t n, const F& f) {
  float in[N - 1][kHalfBlock];
  out_t res[kHalfBlock];
  // a bool result written straight into a contiguous output, else through res
  const bool direct = !std::is_same_v<out_t, float> && s[0] == static_cast<int64_t>(sizeof(out_t));
  for (int64_t start = 0; start < n; start += kHalfBlock) {
    const int64_t m = std::min(kHalfBlock, n - start);
    char* q[N];
    int64_t qs[N];
    q[0] = direct ? p[0] + start * s[0] : reinterpret_cast<char*>(res);
    qs[0] = sizeof(out_t);
    for (int k = 1; k < N; ++k) {
      widen_half_block(p[k] + start * s[k], s[k], in[k - 1], s[k] == 0 ? 1 : m);
      q[k] = reinterpret_cast<char*>(in[k - 1]);
      qs[k] = s[k] == 0 ? 0 : static_cast<int64_t>(sizeof(float));
    }
    if constexpr (N == 2) unary_loop<out_t, float>(q, qs, m, f);
    else binary_loop<out_t, float>(q, qs, m, f);
    if constexpr (std::is_same_v<out_t, float>) {
      narrow_half_block(res, p[0] + start * s[0], s[0], m);
    } else if (!direct) {
      for (int64_t i = 0; i < m; ++i) *reinterpret_cast<out_t*>(p[0] + (start + i) * s[0]) = res[i];
    }
  }
}

// Output tensor for an elementwise op: out itself when it has the shape and dtype (any
// strides), else a fresh tensor (finish_out later copies and checks).
inline Tensor elementwise_out(const Tensor& out, const Shape& shape, ScalarType dtype) {
  if (out && out->sizes() == shape && out->dtype() == dtype) return out;
  return empty(shape, dtype);
}

// result[i] = f(a[i]) with a of dtype in_dtype already; dispatch over `dispatch`.
template <typename Dispatch, typename MakeF>
Tensor map_unary(const char* op, const Tensor& a, const Tensor& out, ScalarType out_dtype,
                 Dispatch dispatch, MakeF make_f) {
  Tensor res = elementwise_out(out, a->sizes(), out_dtype);
  if (a->numel() > 0) {
    auto L = make_loop<2>(a->sizes(), {res.get(), a.get()});
    dispatch(a->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, Half>) {
        auto f = make_f(float{});
        using R = std::conditional_t<std::is_same_v<decltype(f(0.f)), bool>, bool, float>;
        for_each_strided<2>(L, [&f](char** p, const int64_t* s, int64_t n) { half_blocks_loop<2, R>(p, s, n, f); });
      } else if constexpr (std::is_same_v<decltype(make_f(tag)(opmath_t<T>{})), bool>) {
        auto f = make_f(tag);
        for_each_strided<2>(L, [&f](char** p, const int64_t* s, int64_t n) { unary_loop<bool, T>(p, s, n, f); });
      } else {
        auto f = make_f(tag);
        for_each_strided<2>(L, [&f](char** p, const int64_t* s, int64_t n) { unary_loop<T, T>(p, s, n, f); });
      }
    });
  }
  return finish_out(op, out, res);
}

// result = f(a, b) after broadcasting; a and b already have the compute dtype.
template <typename Dispatch, typename MakeF>
Tensor map_binary(const char* op, const Tensor& a, const Tensor& b, const Tensor& out,
                  ScalarType out_dtype, Dispatch dispatch, MakeF make_f) {
  const Shape shape = a->sizes() == b->sizes() ? a->sizes() : broadcast_shapes(a->sizes(), b->sizes(), op);
  Tensor res = elementwise_out(out, shape, out_dtype);
  if (res->numel() > 0) {
    Tensor ea = expand_to(a, shape, op), eb = expand_to(b, shape, op);
    auto L = make_loop<3>(shape, {res.get(), ea.get(), eb.get()});
    dispatch(a->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, Half>) {
        auto f = make_f(float{});
        using R = std::conditional_t<std::is_same_v<decltype(f(0.f, 0.f)), bool>, bool, float>;
        for_each_strided<3>(L, [&f](char** p, const int64_t* s, int64_t n) { half_blocks_loop<3, R>(p, s, n, f); });
      } else if constexpr (std::is_same_v<decltype(make_f(tag)(opmath_t<T>{}, opmath_t<T>{})), bool>) {
        auto f = make_f(tag);
        for_each_strided<3>(L, [&f](char** p, const int64_t* s, int64_t n) { binary_loop<bool, T>(p, s, n, f); });
      } else {
        auto f = make_f(tag);
        for_each_strided<3>(L, [&f](char** p, const int64_t* s, int64_t n) { binary_loop<T, T>(p, s, n, f); });
      }
    });
  }
  return finish_out(op, out, res);
}

// result[i] = f(a[i]) for a complex a and a real result (abs, angle): f takes Complex<T> and
// returns T.
template <typename F>
Tensor map_complex_to_real(const char* op, const Tensor& a, const Tensor& out, F f) {
  Tensor res = elementwise_out(out, a->sizes(), to_real(a->dtype()));
  if (a->numel() > 0) {
    auto L = make_loop<2>(a->sizes(), {res.get(), a.get()});
    dispatch_complex(a->dtype(), op, [&](auto tag) {
      using C = decltype(tag);
      auto g = [f](C z) { return f(z); };
      for_each_strided<2>(L, [&g](char** p, const int64_t* s, int64_t n) { unary_loop<real_t<C>, C>(p, s, n, g); });
    });
  }
  return finish_out(op, out, res);
}

struct DispatchAll {
  template <typename G> void operator()(ScalarType t, const char* op, G&& g) const { dispatch_all(t, op, g); }
};
struct DispatchNumeric {
  template <typename G> void operator()(ScalarType t, const char* op, G&& g) const { dispatch_numeric(t, op, g); }
};
struct DispatchFloat {
  template <typename G> void operator()(ScalarType t, const char* op, G&& g) const { dispatch_float(t, op, g); }
};
struct DispatchIntegral {
  template <typename G> void operator()(ScalarType t, const char* op, G&& g) const { dispatch_integral(t, op, g); }
};
// Base's dtypes and uint16/32/64: for the integer ops PyTorch (or the Array API namespace)
// defines on the wide unsigned types.
template <typename Base> struct WithUnsigned {
  template <typename G> void operator()(ScalarType t, const char* op, G&& g) const {
    switch (t) {
      case ScalarType::UInt16: g(uint16_t{}); break;
      case ScalarType::UInt32: g(uint32_t{}); break;
      case ScalarType::UInt64: g(uint64_t{}); break;
      default: Base{}(t, op, g);
    }
  }
};
struct DispatchComplex {
  template <typename G> void operator()(ScalarType t, const char* op, G&& g) const { dispatch_complex(t, op, g); }
};
struct DispatchAny {
  template <typename G> void operator()(ScalarType t, const char* op, G&& g) const { dispatch_any(t, op, g); }
};
// Base's dtypes and complex64/128: for the ops PyTorch defines on complex numbers, whose
// functor also takes Complex<T>.
template <typename Base> struct WithComplex {
  template <typename G> void operator()(ScalarType t, const char* op, G&& g) const {
    if (is_complex(t)) dispatch_complex(t, op, g);
    else Base{}(t, op, g);
  }
};

}  // namespace ember
