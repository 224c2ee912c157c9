// Sums of contiguous runs for the nn kernels (pooling, normalization): 16 independent
// accumulators of the opmath type (which the compiler turns into vector registers inside a
// simd_dispatch body), combined in double per block of 4096 values, so that float32 runs keep
// close to double accuracy at float speed. Call them inside simd_dispatch.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ember/core/dtype.h"

namespace ember {

constexpr int64_t kLaneBlock = 4096;

// sum of p[i] - shift over p[0..n) as a double (a shift near the values, such as the first
// one, keeps the terms small: equal values sum to exactly 0).
template <typename T> inline double lane_sum(const T* p, int64_t n, double shift = 0.0) {
  using A = opmath_t<T>;
  constexpr int L = 16;
  const A c = static_cast<A>(shift);
  double total = 0;
  for (int64_t b = 0; b < n; b += kLaneBlock) {
    const int64_t e = std::min(n, b + kLaneBlock);
    A acc[L] = {};
    int64_t i = b;
    for (; i + L <= e; i += L) {
      for (int j = 0; j < L; ++j) acc[j] += static_cast<A>(p[i + j]) - c;
    }
    double s = 0;
    for (; i < e; ++i) s += static_cast<double>(static_cast<A>(p[i]) - c);
    for (int j = 0; j < L; ++j) s += static_cast<double>(acc[j]);
    total += s;
  }
  return total;
}

// sum of (p[i] - mean)^2 over p[0..n) as a double.
template <typename T> inline double lane_sqdev(const T* p, int64_t n, double mean) {
  using A = opmath_t<T>;
  constexpr int L = 16;
  const A m = static_cast<A>(mean);
  double total = 0;
  for (int64_t b = 0; b < n; b += kLaneBlock) {
    const int64_t e = std::min(n, b + kLaneBlock);
    A acc[L] = {};
    int64_t i = b;
    for (; i + L <= e; i += L) {
      for (int j = 0; j < L; ++j) {
        const A d = static_cast<A>(p[i + j]) - m;
        acc[j] += d * d;
      }
    }
    double s = 0;
    for (; i < e; ++i) {
      const double d = static_cast<double>(static_cast<A>(p[i])) - mean;
      s += d * d;
    }
    for (int j = 0; j < L; ++j) s += static_cast<double>(acc[j]);
    total += s;
  }
  return total;
}

}  // namespace ember

namespace ember {

// sums of g and of g * (x - mean) over n values, as doubles (the two reductions of a
// normalization's backward).
template <typename T>
inline void lane_grad_sums(const T* g, const T* x, int64_t n, double mean, double& sum_g, double& sum_gx) {
  using A = opmath_t<T>;
  constexpr int L = 16;
  const A m = static_cast<A>(mean);
  double sg = 0, sgx = 0;
  for (int64_t b = 0; b < n; b += kLaneBlock) {
    const int64_t e = std::min(n, b + kLaneBlock);
    A ag[L] = {}, agx[L] = {};
    int64_t i = b;
    for (; i + L <= e; i += L) {
      for (int j = 0; j < L; ++j) {
        const A gv = static_cast<A>(g[i + j]);
        ag[j] += gv;
        agx[j] += gv * (static_cast<A>(x[i + j]) - m);
      }
    }
    for (; i < e; ++i) {
      const double gv = static_cast<double>(static_cast<A>(g[i]));
      sg += gv;
      sgx += gv * (static_cast<double>(static_cast<A>(x[i])) - mean);
    }
    for (int j = 0; j < L; ++j) {
      sg += static_cast<double>(ag[j]);
      sgx += static_cast<double>(agx[j]);
    }
  }
  sum_g = sg;
  sum_gx = sgx;
}

// out = a * g + b * x + c over n values.
template <typename T>
inline void lane_axpbypc(const T* g, const T* x, T* out, int64_t n, double a, double b, double c) {
  using A = opmath_t<T>;
  const A aa = static_cast<A>(a), bb = static_cast<A>(b), cc = static_cast<A>(c);
  for (int64_t i = 0; i < n; ++i) {
    out[i] = static_cast<T>(aa * static_cast<A>(g[i]) + bb * static_cast<A>(x[i]) + cc);
  }
}

}  // namespace ember
