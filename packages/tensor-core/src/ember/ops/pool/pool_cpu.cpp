// 2-D pooling: max_pool2d_with_indices, avg_pool2d, adaptive_avg_pool2d, adaptive_max_pool2d
// and their backward ops (the adjoints, which derivatives.yaml differentiates once more).
//
// Inputs are (N, C, H, W) or unbatched (C, H, W); every (n, c) plane is independent, so each
// kernel runs parallel_for over planes and loops over the output positions of a plane. Max
// pooling keeps, per output position, the flat index (y * W + x) of the maximum inside its
// input plane; its backward scatters the gradient to those indices. Float types (the 16-bit
// floats computed in float); max pooling also takes integer types. The argument checks and
// the geometry are pool_meta.cpp's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ember/backends/cpu/lane_sum.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"
#include "ember/ops/pool/pool_meta.h"
#include "ember/runtime/simd.h"

namespace ember::cpu {
namespace {

using Pool = PoolGeometry;

int64_t plane_grain(int64_t work_per_plane) {
  return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(work_per_plane, 1));
}

template <typename T> inline bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  return false;
}

// ---------------------------------------------------------------------------------- max pool

template <typename A> constexpr A lowest_value() {
  return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::lowest();
}

// The output positions [lo, hi) of one axis whose windows lie inside the input (no bounds
// checks needed there).
std::pair<int64_t, int64_t> interior(int64_t out, int64_t in, int64_t k, int64_t s, int64_t pad, int64_t d) {
  int64_t lo = 0;
  while (lo < out && lo * s - pad < 0) ++lo;
  int64_t hi = lo;
  while (hi < out && hi * s - pad + (k - 1) * d < in) ++hi;
  return {lo, hi};
}

// Each output position scans its window row by row (the first maximum wins; a NaN wins and
// the last NaN's index is kept, as in PyTorch). Positions whose windows lie inside the
// input in x are done a kernel element at a time across the whole output row, which the
// compiler vectorizes (the running maxima and their int32 positions side by side).
template <typename T>
void max_pool_kernel(const T* in, T* out, int64_t* idx, const Pool& g) {
  using A = opmath_t<T>;
  const int64_t HW = g.H * g.W, L = g.OH * g.OW;
  const auto [xlo, xhi] = interior(g.OW, g.W, g.kw, g.sw, g.pw, g.dw);
  const bool rows = xhi > xlo && HW < (int64_t{1} << 31);
  parallel_for(0, g.planes, plane_grain(L * g.kh * g.kw), [&](int64_t p0, int64_t p1) {
    std::vector<A> best(rows ? g.OW : 0);
    std::vector<int32_t> pos(rows ? g.OW : 0);
    for (int64_t p = p0; p < p1; ++p) {
      const T* src = in + p * HW;
      T* dst = out + p * L;
      int64_t* ind = idx + p * L;
      simd_dispatch([&] {
        for (int64_t oy = 0; oy < g.OH; ++oy) {
          int64_t y0 = oy * g.sh - g.ph;
          const int64_t y1 = std::min(y0 + (g.kh - 1) * g.dh + 1, g.H);
          while (y0 < 0) y0 += g.dh;
          auto scalar = [&](int64_t ox) {
            int64_t x0 = ox * g.sw - g.pw;
            const int64_t x1 = std::min(x0 + (g.kw - 1) * g.dw + 1, g.W);
            while (x0 < 0) x0 += g.dw;
            A m = lowest_value<A>();
            int64_t at = y0 * g.W + x0;
            for (int64_t y = y0; y < y1; y += g.dh) {
              const T* row = src + y * g.W;
              for (int64_t x = x0; x < x1; x += g.dw) {
                const A v = static_cast<A>(row[x]);
                if (v > m || is_nan(v)) {
                  m = v;
                  at = y * g.W + x;
                }
              }
            }
            dst[oy * g.OW + ox] = static_cast<T>(m);
            ind[oy * g.OW + ox] = at;
          };
          if (!rows) {
            for (int64_t ox = 0; ox < g.OW; ++ox) scalar(ox);
            continue;
          }
          for (int64_t ox = 0; ox < xlo; ++ox) scalar(ox);
          for (int64_t ox = xhi; ox < g.OW; ++ox) scalar(ox);
          A* b = best.data();
          int32_t* a = pos.data();
          for (int64_t ox = xlo; ox < xhi; ++ox) {
            b[ox] = lowest_value<A>();
            a[ox] = static_cast<int32_t>(y0 * g.W + ox * g.sw - g.pw);
          }
          for (int64_t y = y0; y < y1; y += g.dh) {
            for (int64_t j = 0; j < g.kw; ++j) {
              const int64_t off = y * g.W + j * g.dw - g.pw;
              const T* base = src + off;
              for (int64_t ox = xlo; ox < xhi; ++ox) {
                const A v = static_cast<A>(base[ox * g.sw]);
                const bool take = v > b[ox] || is_nan(v);
                b[ox] = take ? v : b[ox];
                a[ox] = take ? static_cast<int32_t>(off + ox * g.sw) : a[ox];
              }
            }
          }
          for (int64_t ox = xlo; ox < xhi; ++ox) {
            dst[oy * g.OW + ox] = static_cast<T>(b[ox]);
            ind[oy * g.OW + ox] = a[ox];
          }
        }
      });
    }
  });
}

// grad_input (planes, HW) zeroed, then grad_input[p, indices[p, l]] += grad[p, l].
template <typename T>
void index_scatter_kernel(const char* op, const T* grad, const int64_t* idx, T* gin, int64_t planes, int64_t HW,
                          int64_t L, int64_t H, int64_t W) {
  using A = opmath_t<T>;
  parallel_for(0, planes, plane_grain(L + HW), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      T* dst = gin + p * HW;
      const T* g = grad + p * L;
      const int64_t* ind = idx + p * L;
      if constexpr (std::is_same_v<A, T>) {
        std::fill(dst, dst + HW, T(0));
        for (int64_t l = 0; l < L; ++l) {
          const int64_t i = ind[l];
          if (i < 0 || i >= HW) {
            throw std::runtime_error(message(op, ": found an invalid max index ", i, " (the input planes are of size ",
                                             H, "x", W, ")"));
          }
          dst[i] += g[l];
        }
      } else {  // 16-bit floats: accumulate in float
        std::vector<A> acc(static_cast<size_t>(HW), A(0));
        for (int64_t l = 0; l < L; ++l) {
          const int64_t i = ind[l];
          if (i < 0 || i >= HW) {
            throw std::runtime_error(message(op, ": found an invalid max index ", i, " (the input planes are of size ",
                                             H, "x", W, ")"));
          }
          acc[i] += static_cast<A>(g[l]);
        }
        for (int64_t i = 0; i < HW; ++i) dst[i] = static_cast<T>(acc[i]);
      }
    }
  });
}

template <typename F> void dispatch_pool(ScalarType dt, const char* op, F&& f) {
  dispatch_numeric(dt, op, std::forward<F>(f));
}

// grad_input of self's shape: grad_output scattered through the indices (checked already).
Tensor scatter_by_indices(const char* op, const Tensor& grad_output, const Tensor& self, const Tensor& indices,
                          const Shape& out_shape) {
  const int64_t H = self->size(-2), W = self->size(-1);
  const int64_t L = out_shape[out_shape.size() - 2] * out_shape[out_shape.size() - 1];
  const int64_t planes = self->numel() / std::max<int64_t>(H * W, 1);
  Tensor g = as_contiguous(grad_output), ind = as_contiguous(indices);
  Tensor res = empty(self->sizes(), self->dtype());
  if (res->numel() == 0) return res;
  dispatch_float(grad_output->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    index_scatter_kernel(op, g->data<T>(), ind->data<int64_t>(), res->data<T>(), planes, H * W, L, H, W);
  });
  return res;
}

// ---------------------------------------------------------------------------------- avg pool

// One axis of the average pooling windows: the clipped range [lo, hi) of output o and its
// extent for the divisor (PyTorch's rule: the window clipped to the padded input counts when
// count_include_pad, the part inside the input otherwise). Windows are separable, so the
// divisor of (oy, ox) is the product of the two axes' extents (or divisor_override).
struct AxisWindows {
  std::vector<int64_t> lo, hi;
  std::vector<double> extent;
};

AxisWindows axis_windows(int64_t out, int64_t in, int64_t k, int64_t s, int64_t pad, bool count_include_pad) {
  AxisWindows a;
  a.lo.resize(out);
  a.hi.resize(out);
  a.extent.resize(out);
  for (int64_t o = 0; o < out; ++o) {
    int64_t extent = 0;
    avg_window(o, in, k, s, pad, count_include_pad, &a.lo[o], &a.hi[o], &extent);
    a.extent[o] = static_cast<double>(extent);
  }
  return a;
}

// 1 / divisor of every output position of a plane.
std::vector<double> avg_scales(const AxisWindows& ys, const AxisWindows& xs, std::optional<int64_t> divisor) {
  const size_t OH = ys.lo.size(), OW = xs.lo.size();
  std::vector<double> scale(OH * OW);
  for (size_t oy = 0; oy < OH; ++oy) {
    for (size_t ox = 0; ox < OW; ++ox) {
      scale[oy * OW + ox] = 1.0 / (divisor ? static_cast<double>(*divisor) : ys.extent[oy] * xs.extent[ox]);
    }
  }
  return scale;
}

template <typename T>
void avg_pool_kernel(const T* in, T* out, const Pool& g, bool count_include_pad, std::optional<int64_t> divisor) {
  using A = opmath_t<T>;
  const int64_t HW = g.H * g.W, L = g.OH * g.OW;
  const AxisWindows ys = axis_windows(g.OH, g.H, g.kh, g.sh, g.ph, count_include_pad);
  const AxisWindows xs = axis_windows(g.OW, g.W, g.kw, g.sw, g.pw, count_include_pad);
  const std::vector<double> sd = avg_scales(ys, xs, divisor);
  const std::vector<A> scale(sd.begin(), sd.end());
  // int64 (PyTorch's one integer type here) divides the integer sum, truncating as C does
  std::vector<int64_t> divide(std::is_integral_v<T> ? L : 0);
  for (size_t i = 0; i < divide.size(); ++i) divide[i] = static_cast<int64_t>(std::llround(1.0 / sd[i]));
  parallel_for(0, g.planes, plane_grain(L * g.kh * g.kw), [&](int64_t p0, int64_t p1) {
    simd_dispatch([&] {
      for (int64_t p = p0; p < p1; ++p) {
        const T* src = in + p * HW;
        T* dst = out + p * L;
        for (int64_t oy = 0; oy < g.OH; ++oy) {
          const int64_t y0 = ys.lo[oy], y1 = ys.hi[oy];
          for (int64_t ox = 0; ox < g.OW; ++ox) {
            const int64_t x0 = xs.lo[ox], x1 = xs.hi[ox];
            A sum(0);
            for (int64_t y = y0; y < y1; ++y) {
              const T* row = src + y * g.W;
              for (int64_t x = x0; x < x1; ++x) sum += static_cast<A>(row[x]);
            }
            if constexpr (std::is_integral_v<T>) {
              dst[oy * g.OW + ox] = static_cast<T>(sum / divide[oy * g.OW + ox]);
            } else {
              dst[oy * g.OW + ox] = static_cast<T>(sum * scale[oy * g.OW + ox]);
            }
          }
        }
      }
    });
  });
}

template <typename T>
void avg_pool_backward_kernel(const T* grad, T* gin, const Pool& g, bool count_include_pad,
                              std::optional<int64_t> divisor) {
  using A = opmath_t<T>;
  const int64_t HW = g.H * g.W, L = g.OH * g.OW;
  const AxisWindows ys = axis_windows(g.OH, g.H, g.kh, g.sh, g.ph, count_include_pad);
  const AxisWindows xs = axis_windows(g.OW, g.W, g.kw, g.sw, g.pw, count_include_pad);
  const std::vector<double> sd = avg_scales(ys, xs, divisor);
  const std::vector<A> scale(sd.begin(), sd.end());
  parallel_for(0, g.planes, plane_grain(L * g.kh * g.kw + HW), [&](int64_t p0, int64_t p1) {
    std::vector<A> acc(static_cast<size_t>(HW));
    for (int64_t p = p0; p < p1; ++p) {
      T* dst = gin + p * HW;
      const T* go = grad + p * L;
      simd_dispatch([&] {
        std::fill(acc.begin(), acc.end(), A(0));
        for (int64_t oy = 0; oy < g.OH; ++oy) {
          const int64_t y0 = ys.lo[oy], y1 = ys.hi[oy];
          for (int64_t ox = 0; ox < g.OW; ++ox) {
            const int64_t x0 = xs.lo[ox], x1 = xs.hi[ox];
            const A v = static_cast<A>(go[oy * g.OW + ox]) * scale[oy * g.OW + ox];
            for (int64_t y = y0; y < y1; ++y) {
              A* row = acc.data() + y * g.W;
              for (int64_t x = x0; x < x1; ++x) row[x] += v;
            }
          }
        }
        for (int64_t i = 0; i < HW; ++i) dst[i] = static_cast<T>(acc[i]);
      });
    }
  });
}

// ------------------------------------------------------------------------------ adaptive pool


template <typename T>
void adaptive_avg_kernel(const T* in, T* out, int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW) {
  using A = opmath_t<T>;
  const int64_t HW = H * W, L = OH * OW;
  parallel_for(0, planes, plane_grain(HW + L), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* src = in + p * HW;
      T* dst = out + p * L;
      simd_dispatch([&] {
        for (int64_t oy = 0; oy < OH; ++oy) {
          const int64_t y0 = adaptive_start(oy, OH, H), y1 = adaptive_end(oy, OH, H);
          for (int64_t ox = 0; ox < OW; ++ox) {
            const int64_t x0 = adaptive_start(ox, OW, W), x1 = adaptive_end(ox, OW, W);
            double sum = 0;
            if (x0 == 0 && x1 == W) {  // whole rows: one contiguous run
              sum = lane_sum(src + y0 * W, (y1 - y0) * W);
            } else {
              for (int64_t y = y0; y < y1; ++y) sum += lane_sum(src + y * W + x0, x1 - x0);
            }
            dst[oy * OW + ox] = static_cast<T>(static_cast<A>(sum / static_cast<double>((y1 - y0) * (x1 - x0))));
          }
        }
      });
    }
  });
}

template <typename T>
void adaptive_avg_backward_kernel(const T* grad, T* gin, int64_t planes, int64_t H, int64_t W, int64_t OH,
                                  int64_t OW) {
  using A = opmath_t<T>;
  const int64_t HW = H * W, L = OH * OW;
  parallel_for(0, planes, plane_grain(HW + L), [&](int64_t p0, int64_t p1) {
    std::vector<A> acc(static_cast<size_t>(HW));
    for (int64_t p = p0; p < p1; ++p) {
      std::fill(acc.begin(), acc.end(), A(0));
      const T* go = grad + p * L;
      for (int64_t oy = 0; oy < OH; ++oy) {
        const int64_t y0 = adaptive_start(oy, OH, H), y1 = adaptive_end(oy, OH, H);
        for (int64_t ox = 0; ox < OW; ++ox) {
          const int64_t x0 = adaptive_start(ox, OW, W), x1 = adaptive_end(ox, OW, W);
          const A v = static_cast<A>(go[oy * OW + ox]) / static_cast<A>((y1 - y0) * (x1 - x0));
          for (int64_t y = y0; y < y1; ++y) {
            for (int64_t x = x0; x < x1; ++x) acc[y * W + x] += v;
          }
        }
      }
      T* dst = gin + p * HW;
      for (int64_t i = 0; i < HW; ++i) dst[i] = static_cast<T>(acc[i]);
    }
  });
}

template <typename T>
void adaptive_max_kernel(const T* in, T* out, int64_t* idx, int64_t planes, int64_t H, int64_t W, int64_t OH,
                         int64_t OW) {
  using A = opmath_t<T>;
  const int64_t HW = H * W, L = OH * OW;
  parallel_for(0, planes, plane_grain(HW + L), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* src = in + p * HW;
      for (int64_t oy = 0; oy < OH; ++oy) {
        const int64_t y0 = adaptive_start(oy, OH, H), y1 = adaptive_end(oy, OH, H);
        for (int64_t ox = 0; ox < OW; ++ox) {
          const int64_t x0 = adaptive_start(ox, OW, W), x1 = adaptive_end(ox, OW, W);
          A best = -std::numeric_limits<A>::infinity();
          int64_t at = y0 * W + x0;
          for (int64_t y = y0; y < y1; ++y) {
            for (int64_t x = x0; x < x1; ++x) {
              const A v = static_cast<A>(src[y * W + x]);
              if (v > best || std::isnan(v)) {
                best = v;
                at = y * W + x;
              }
            }
          }
          out[p * L + oy * OW + ox] = static_cast<T>(best);
          idx[p * L + oy * OW + ox] = at;
        }
      }
    }
  });
}

}  // namespace
}  // namespace ember::cpu


namespace ember::cpu {

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, const Shape& kernel_size, const Shape& stride,
                                                   const Shape& padding, const Shape& dilation, bool ceil_mode) {
  const char* op = "max_pool2d";
  const Pool g = max_pool_meta(self, kernel_size, stride, padding, dilation, ceil_mode);
  const Shape shape = pooled_shape(self, g.OH, g.OW);
  Tensor src = as_contiguous(self);
  Tensor out = empty(shape, self->dtype());
  Tensor idx = empty(shape, ScalarType::Int64);
  if (out->numel() == 0) return {out, idx};
  dispatch_pool(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    max_pool_kernel(src->data<T>(), out->data<T>(), idx->data<int64_t>(), g);
  });
  return {out, idx};
}

Tensor max_pool2d_with_indices_backward(const Tensor& grad_output, const Tensor& self, const Shape& kernel_size,
                                        const Shape& stride, const Shape& padding, const Shape& dilation,
                                        bool ceil_mode, const Tensor& indices) {
  const char* op = "max_pool2d_with_indices_backward";
  const Pool g = max_pool_backward_meta(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices);
  return scatter_by_indices(op, grad_output, self, indices, pooled_shape(self, g.OH, g.OW));
}

Tensor avg_pool2d(const Tensor& self, const Shape& kernel_size, const Shape& stride, const Shape& padding,
                  bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d";
  const Pool g = avg_pool_meta(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  Tensor src = as_contiguous(self);
  Tensor out = empty(pooled_shape(self, g.OH, g.OW), self->dtype());
  if (out->numel() == 0) return out;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    avg_pool_kernel(src->data<T>(), out->data<T>(), g, count_include_pad, divisor_override);
  };
  if (self->dtype() == ScalarType::Int64) {
    run(int64_t{});
  } else {
    dispatch_float(self->dtype(), op, run);
  }
  return out;
}

Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, const Shape& kernel_size,
                           const Shape& stride, const Shape& padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d_backward";
  const Pool g = avg_pool_backward_meta(grad_output, self, kernel_size, stride, padding, ceil_mode, divisor_override);
  Tensor go = as_contiguous(grad_output);
  Tensor res = empty(self->sizes(), self->dtype());
  if (res->numel() == 0) return res;
  dispatch_float(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    avg_pool_backward_kernel(go->data<T>(), res->data<T>(), g, count_include_pad, divisor_override);
  });
  return res;
}

Tensor adaptive_avg_pool2d(const Tensor& self, const Shape& output_size) {
  const char* op = "adaptive_avg_pool2d";
  auto [OH, OW] = adaptive_pool_meta(op, self, output_size, false);
  const int64_t H = self->size(-2), W = self->size(-1);
  Tensor src = as_contiguous(self);
  if (H == 0 || W == 0) {  // the mean of an empty plane: NaN, as PyTorch's
    return ops::full(pooled_shape(self, OH, OW), Scalar::from_double(NAN), self->dtype(), self->device(), false,
                     Tensor());
  }
  Tensor out = empty(pooled_shape(self, OH, OW), self->dtype());
  if (out->numel() == 0) return out;
  dispatch_float(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    adaptive_avg_kernel(src->data<T>(), out->data<T>(), self->numel() / (H * W), H, W, OH, OW);
  });
  return out;
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& self) {
  const char* op = "adaptive_avg_pool2d_backward";
  adaptive_avg_pool_backward_meta(grad_output, self);
  const int64_t H = self->size(-2), W = self->size(-1), OH = grad_output->size(-2), OW = grad_output->size(-1);
  Tensor go = as_contiguous(grad_output);
  Tensor res = empty(self->sizes(), self->dtype());
  if (res->numel() == 0) return res;
  dispatch_float(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    T* dst = res->data<T>();
    if (OH == 0 || OW == 0) {
      std::fill(dst, dst + res->numel(), T(0));
      return;
    }
    adaptive_avg_backward_kernel(go->data<T>(), dst, self->numel() / (H * W), H, W, OH, OW);
  });
  return res;
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& self, const Shape& output_size) {
  const char* op = "adaptive_max_pool2d";
  auto [OH, OW] = adaptive_pool_meta(op, self, output_size, true);
  const int64_t H = self->size(-2), W = self->size(-1);
  Tensor src = as_contiguous(self);
  const Shape shape = pooled_shape(self, OH, OW);
  Tensor out = empty(shape, self->dtype());
  Tensor idx = empty(shape, ScalarType::Int64);
  if (out->numel() == 0) return {out, idx};
  dispatch_float(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    adaptive_max_kernel(src->data<T>(), out->data<T>(), idx->data<int64_t>(), self->numel() / (H * W), H, W, OH,
                        OW);
  });
  return {out, idx};
}

Tensor adaptive_max_pool2d_backward(const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
  const char* op = "adaptive_max_pool2d_backward";
  adaptive_max_pool_backward_meta(grad_output, self, indices);
  return scatter_by_indices(op, grad_output, self, indices,
                            pooled_shape(self, grad_output->size(-2), grad_output->size(-1)));
}

}  // namespace ember::cpu
