// CPU kernels of where and clamp.
#include "ember/ops/elementwise/binary_cpu.h"

namespace ember::cpu {

namespace {

// o[i] = c[i] ? x : y over a contiguous run, x = a[i] (kARun) or the one value av, y alike.
// Written so that it vectorises at every level: the operands are parameters (a captured
// value or pointer could be changed by the stores to o as far as the compiler knows), and
// both values are read before the selection, which compiles to a blend (`c[i] ? a[i] : b[i]`
// reads one of them: a masked load, which only AVX-512 has). At AVX2 the loops were scalar
// with a branch per element, 3-20x slower than the SSE2 build (AMD Zen 3).
template <typename T, bool kARun, bool kBRun>
inline void select_run(T* o, const uint8_t* c, const T* a, T av, const T* b, T bv, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T x = kARun ? a[i] : av, y = kBRun ? b[i] : bv;
    o[i] = c[i] ? x : y;
  }
}

// dst[i] = src[i] clamped to [l, h], computed in A; NaN compares false, so it stays NaN. The
// bounds are parameters, not captures, so the stores cannot change them as far as the
// compiler knows and the loop vectorises (it was a baseline SSE2 loop reloading both bounds
// at every element: 262K float32 on one thread, AMD Zen 3, 89 -> 44-53 us, PyTorch 47).
template <typename T, typename A> inline void clamp_run(const T* src, T* dst, int64_t n, A l, A h) {
  for (int64_t i = 0; i < n; ++i) {
    A v = static_cast<A>(src[i]);
    v = v < l ? l : v;
    v = v > h ? h : v;
    dst[i] = static_cast<T>(v);
  }
}

}  // namespace

Tensor where(const Tensor& condition, const Tensor& input, const Tensor& other, const Tensor& out) {
  const WhereMeta M = where_meta(condition, input, other);
  const Shape& shape = M.shape;
  Tensor res = elementwise_out(out, shape, M.dtype);
  if (res->numel() > 0) {
    Tensor c = to_dtype(expand_to(condition, shape, "where"), ScalarType::Bool);
    Tensor a = expand_to(to_dtype(input, M.dtype), shape, "where");
    Tensor b = expand_to(to_dtype(other, M.dtype), shape, "where");
    auto L = make_loop<4>(shape, {res.get(), c.get(), a.get(), b.get()});
    dispatch_itemsize(itemsize(M.dtype), [&](auto tag) {  // a selection: only the bits move
      using T = decltype(tag);
      for_each_strided<4>(L, [](char** p, const int64_t* s, int64_t n) {
        T* o = reinterpret_cast<T*>(p[0]);
        // the condition's bytes (0 or 1) as uint8_t: GCC does not widen a bool to a lane mask
        const uint8_t* c = reinterpret_cast<const uint8_t*>(p[1]);
        const T* a = reinterpret_cast<const T*>(p[2]);
        const T* b = reinterpret_cast<const T*>(p[3]);
        constexpr int64_t st = sizeof(T);
        // contiguous output and condition, each value contiguous or one broadcast number
        if (s[0] == st && s[1] == 1 && (s[2] == st || s[2] == 0) && (s[3] == st || s[3] == 0)) {
          const T av = a[0], bv = b[0];
          if (s[2] == st && s[3] == st) {
            simd_dispatch([&] { select_run<T, true, true>(o, c, a, av, b, bv, n); });
          } else if (s[2] == st) {
            simd_dispatch([&] { select_run<T, true, false>(o, c, a, av, b, bv, n); });
          } else if (s[3] == st) {
            simd_dispatch([&] { select_run<T, false, true>(o, c, a, av, b, bv, n); });
          } else {
            simd_dispatch([&] { select_run<T, false, false>(o, c, a, av, b, bv, n); });
          }
          return;
        }
        for (int64_t i = 0; i < n; ++i) {
          const bool cv = *reinterpret_cast<const bool*>(p[1] + i * s[1]);
          *reinterpret_cast<T*>(p[0] + i * s[0]) =
              *reinterpret_cast<const T*>(p[cv ? 2 : 3] + i * s[cv ? 2 : 3]);
        }
      });
    });
  }
  return finish_out("where", out, res);
}

namespace {

// The common clamp, x.clamp(lo, hi) with single-element bounds (not NaN) of x's dtype on a
// contiguous x into a contiguous result of its shape: a branch-free loop the compiler
// vectorises, in parallel. false: not that case (nothing written).
bool clamp_by_scalars(const Tensor& x, const Tensor& lo, const Tensor& hi, const Tensor& res) {
  const auto single = [](const Tensor& b) { return !b || b->numel() == 1; };
  if (!single(lo) || !single(hi) || !x->is_contiguous() || !res->is_contiguous() || x->sizes() != res->sizes() ||
      x->dtype() != res->dtype()) {
    return false;
  }
  bool done = false;
  dispatch_numeric(x->dtype(), "clamp", [&](auto tag) {
    using T = decltype(tag);
    using A = opmath_t<T>;
    using Limits = std::numeric_limits<A>;
    // a missing bound is one nothing is beyond
    const A l = lo ? static_cast<A>(*as_contiguous(lo)->template data<T>())
                   : (Limits::has_infinity ? -Limits::infinity() : Limits::lowest());
    const A h = hi ? static_cast<A>(*as_contiguous(hi)->template data<T>())
                   : (Limits::has_infinity ? Limits::infinity() : Limits::max());
    if constexpr (std::is_floating_point_v<A>) {
      if (std::isnan(l) || std::isnan(h)) return;  // a NaN bound: the general loop
    }
    const T* src = x->template data<T>();
    T* dst = res->template data<T>();
    parallel_for(0, x->numel(), kParallelGrain, [&](int64_t b, int64_t e) {
      simd_dispatch([&] { clamp_run(src + b, dst + b, e - b, l, h); });
    });
    done = true;
  });
  return done;
}

}  // namespace

Tensor clamp(const Tensor& self, const Tensor& min, const Tensor& max, const Tensor& out) {
  const ClampMeta M = clamp_meta(self, min, max, out);
  const ScalarType t = M.dtype;
  const Shape& shape = M.shape;
  Tensor x = to_dtype(self, t);
  Tensor lo = min ? to_dtype(min, t) : Tensor(), hi = max ? to_dtype(max, t) : Tensor();
  Tensor res = elementwise_out(out, shape, t);
  if (clamp_by_scalars(x, lo, hi, res)) return finish_out("clamp", out, res);
  if (res->numel() > 0) {
    // a missing bound is passed as the tensor itself and ignored by the loop
    const bool has_lo = static_cast<bool>(lo), has_hi = static_cast<bool>(hi);
    Tensor ex = expand_to(x, shape, "clamp");
    Tensor el = lo ? expand_to(lo, shape, "clamp") : ex, eh = hi ? expand_to(hi, shape, "clamp") : ex;
    auto L = make_loop<4>(shape, {res.get(), ex.get(), el.get(), eh.get()});
    dispatch_numeric(t, "clamp", [&](auto tag) {
      using T = decltype(tag);
      using A = opmath_t<T>;
      for_each_strided<4>(L, [has_lo, has_hi](char** p, const int64_t* s, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          A v = static_cast<A>(*reinterpret_cast<const T*>(p[1] + i * s[1]));
          A l = static_cast<A>(*reinterpret_cast<const T*>(p[2] + i * s[2]));
          A h = static_cast<A>(*reinterpret_cast<const T*>(p[3] + i * s[3]));
          A r = v;
          if constexpr (std::is_floating_point_v<A>) {
            if (has_lo && std::isnan(l)) r = l;
            else if (has_hi && std::isnan(h)) r = h;
            else if (!std::isnan(v)) {
              if (has_lo && r < l) r = l;
              if (has_hi && r > h) r = h;
            }
          } else {
            if (has_lo && r < l) r = l;
            if (has_hi && r > h) r = h;
          }
          *reinterpret_cast<T*>(p[0] + i * s[0]) = static_cast<T>(r);
        }
      });
    });
  }
  return finish_out("clamp", out, res);
}

}  // namespace ember::cpu
