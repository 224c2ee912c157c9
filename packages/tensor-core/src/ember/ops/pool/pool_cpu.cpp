// 2-D pooling: max_pool2d_with_indices, avg_pool2d, adaptive_avg_pool2d, adaptive_max_pool2d
// and their backward ops (the adjoints, which derivatives.yaml differentiates once more).
//
// Inputs are (N, C, H, W) or unbatched (C, H, W); every (n, c) plane is independent, so each
// kernel runs parallel_for over planes and loops over the output positions of a plane. Max
// pooling keeps, per output position, the flat index (y * W + x) of the maximum inside its
// input plane; its backward scatters the gradient to those indices. Float types (the 16-bit
// floats computed in float); max pooling also takes integer types. Argument checks and
// messages follow PyTorch's.
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

// One or two values of an int[] argument; `what` ends the PyTorch message.
std::pair<int64_t, int64_t> two(const Shape& v, bool allow_empty, const std::string& msg) {
  if (!(v.size() == 1 || v.size() == 2 || (allow_empty && v.empty()))) throw std::runtime_error(msg);
  if (v.empty()) return {0, 0};
  return {v[0], v.size() == 2 ? v[1] : v[0]};
}

// PyTorch's pooling output size (floor or ceil mode; a last window must start inside the
// input or its left padding).
int64_t out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil) {
  if (stride == 0) throw std::runtime_error("stride should not be zero");
  if (pad < 0) throw std::runtime_error(message("pad must be non-negative, but got pad: ", pad));
  if (pad > ((k - 1) * dilation + 1) / 2) {
    throw std::runtime_error(message("pad should be at most half of effective kernel size, but got pad=", pad,
                                     ", kernel_size=", k, " and dilation=", dilation));
  }
  const int64_t num = in + 2 * pad - dilation * (k - 1) - 1 + (ceil ? stride - 1 : 0);
  // floor division (num may be negative)
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil && (out - 1) * stride >= in + pad) --out;
  return out;
}

void check_float(const char* op, const Tensor& t) {
  if (!is_floating(t->dtype())) {
    throw NotImplementedError(message("\"", op, "\" not implemented for '", scalar_type_name(t->dtype()), "'"));
  }
}

// The pooling geometry after PyTorch's checks. `op` names the op in the argument messages.
Pool pool_geometry(const char* op, const Tensor& input, const Shape& kernel_size, const Shape& stride,
                   const Shape& padding, const Shape& dilation, bool ceil_mode) {
  const std::string name(op);
  auto [kh, kw] = two(kernel_size, false, name + ": kernel_size must either be a single int, or a tuple of two ints");
  auto [sh, sw] = stride.empty() ? std::pair<int64_t, int64_t>{kh, kw}
                                 : two(stride, true, name + ": stride must either be omitted, a single int, or a tuple "
                                                            "of two ints");
  auto [ph, pw] = two(padding, false, name + ": padding must either be a single int, or a tuple of two ints");
  auto [dh, dw] = two(dilation, false, name + ": dilation must be either a single int, or a tuple of two ints");
  Pool g{kh, kw, sh, sw, ph, pw, dh, dw};
  const int64_t nd = input->dim();
  if (nd != 3 && nd != 4) throw std::runtime_error("non-empty 3D or 4D (batch mode) tensor expected for input");
  g.batched = nd == 4;
  g.H = input->size(-2);
  g.W = input->size(-1);
  g.OH = out_size(g.H, kh, ph, sh, dh, ceil_mode);
  g.OW = out_size(g.W, kw, pw, sw, dw, ceil_mode);
  if (kh <= 0 || kw <= 0) {
    throw std::runtime_error(message("kernel size should be greater than zero, but got kH: ", kh, " kW: ", kw));
  }
  if (sh <= 0 || sw <= 0) {
    throw std::runtime_error(message("stride should be greater than zero, but got dH: ", sh, " dW: ", sw));
  }
  if (dh <= 0 || dw <= 0) {
    throw std::runtime_error(message("dilation should be greater than zero, but got dilationH: ", dh,
                                     " dilationW: ", dw));
  }
  const bool nonempty = nd == 3 ? input->size(0) != 0 && g.H != 0 && g.W != 0
                                : input->size(1) != 0 && g.H != 0 && g.W != 0;
  if (!nonempty) {
    throw std::runtime_error(message("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
                                     "input, but got:", shape_str(input->sizes())));
  }
  if (kw / 2 < pw || kh / 2 < ph) {
    throw std::runtime_error(message("pad should be smaller than or equal to half of kernel size, but got padW = ", pw,
                                     ", padH = ", ph, ", kW = ", kw, ", kH = ", kh));
  }
  if (g.OH < 1 || g.OW < 1) {
    const int64_t C = input->size(-3);
    throw std::runtime_error(message("Given input size: (", C, "x", g.H, "x", g.W, "). Calculated output size: (",
                                     C, "x", g.OH, "x", g.OW, "). Output size is too small"));
  }
  g.planes = input->numel() / (g.H * g.W);
  return g;
}


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

// Checks of a backward op's arguments: grad_output (and indices) of the expected shape.
void check_grad_shape(const char* op, const char* what, const Tensor& t, const Shape& expected) {
  if (t->sizes() != expected) {
    throw std::runtime_error(message(op, ": expected ", what, " of size ", shape_str(expected), ", but got ",
                                     shape_str(t->sizes())));
  }
}

void check_same_dtype(const char* op, const Tensor& grad, const Tensor& self) {
  if (grad->dtype() != self->dtype()) {
    throw std::runtime_error(message(op, ": expected grad_output and self of the same dtype, but got ",
                                     dtype_name(grad->dtype()), " and ", dtype_name(self->dtype())));
  }
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
            dst[oy * g.OW + ox] = static_cast<T>(sum * scale[oy * g.OW + ox]);
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

Pool avg_geometry(const Tensor& input, const Shape& kernel_size, const Shape& stride, const Shape& padding,
                  bool ceil_mode, std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d";
  two(kernel_size, false, "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  if (!stride.empty()) {
    two(stride, true, "avg_pool2d: stride must either be omitted, a single int, or a tuple of two ints");
  }
  two(padding, false, "avg_pool2d: padding must either be a single int, or a tuple of two ints");
  if (divisor_override && *divisor_override == 0) throw std::runtime_error("divisor must be not zero");
  return pool_geometry(op, input, kernel_size, stride, padding, {1}, ceil_mode);
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

std::pair<int64_t, int64_t> adaptive_output(const char* op, const Tensor& input, const Shape& output_size,
                                            bool max) {
  const std::string name(op);
  if (output_size.size() != 2) {
    throw std::runtime_error(max ? name + "(): internal error: output_size.size() must be 2"
                                 : name + ": output_size must be 2");
  }
  const int64_t nd = input->dim();
  if (nd != 3 && nd != 4) {
    throw std::runtime_error(message(op, "(): Expected 3D or 4D tensor, but got", max ? ": " : " ",
                                     shape_str(input->sizes())));
  }
  for (int64_t i = 1; i < nd; ++i) {
    if (input->size(i) == 0) {
      throw std::runtime_error(message(op, "(): Expected input to have non-zero size for non-batch dimensions, but "
                                       "input has sizes ", shape_str(input->sizes()), " with dimension ", i,
                                       " being empty"));
    }
  }
  if (output_size[0] < 0 || output_size[1] < 0) {
    if (max) {
      Shape s = input->sizes();
      s[s.size() - 2] = output_size[0];
      s[s.size() - 1] = output_size[1];
      throw std::runtime_error(message("Trying to create tensor with negative dimension ",
                                       std::min(output_size[0], output_size[1]), ": ", shape_str(s)));
    }
    throw std::runtime_error(message(op, ": elements of output_size must be greater than or equal to 0 but received {",
                                     output_size[0], ", ", output_size[1], "}"));
  }
  check_float(op, input);
  return {output_size[0], output_size[1]};
}

}  // namespace
}  // namespace ember::cpu

namespace ember {

// The checks of a backward op that scatters grad_output through max-pooling indices.
static void check_index_scatter(const char* op, const Tensor& grad_output, const Tensor& self, const Tensor& indices,
                                const Shape& out_shape) {
  cpu::check_float(op, grad_output);
  cpu::check_same_dtype(op, grad_output, self);
  cpu::check_grad_shape(op, "grad_output", grad_output, out_shape);
  if (indices->dtype() != ScalarType::Int64) {
    throw std::runtime_error(message(op, ": expected indices of dtype int64, but got ", dtype_name(indices->dtype())));
  }
  cpu::check_grad_shape(op, "indices", indices, out_shape);
}

Shape pooled_shape(const Tensor& input, int64_t OH, int64_t OW) {
  Shape s = input->sizes();
  s[s.size() - 2] = OH;
  s[s.size() - 1] = OW;
  return s;
}

PoolGeometry max_pool_meta(const Tensor& self, const Shape& kernel_size, const Shape& stride, const Shape& padding,
                           const Shape& dilation, bool ceil_mode) {
  return cpu::pool_geometry("max_pool2d", self, kernel_size, stride, padding, dilation, ceil_mode);
}

PoolGeometry max_pool_backward_meta(const Tensor& grad_output, const Tensor& self, const Shape& kernel_size,
                                    const Shape& stride, const Shape& padding, const Shape& dilation, bool ceil_mode,
                                    const Tensor& indices) {
  const PoolGeometry g = max_pool_meta(self, kernel_size, stride, padding, dilation, ceil_mode);
  check_index_scatter("max_pool2d_with_indices_backward", grad_output, self, indices, pooled_shape(self, g.OH, g.OW));
  return g;
}

PoolGeometry avg_pool_meta(const Tensor& self, const Shape& kernel_size, const Shape& stride, const Shape& padding,
                           bool ceil_mode, std::optional<int64_t> divisor_override) {
  const PoolGeometry g = cpu::avg_geometry(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  cpu::check_float("avg_pool2d", self);
  return g;
}

PoolGeometry avg_pool_backward_meta(const Tensor& grad_output, const Tensor& self, const Shape& kernel_size,
                                    const Shape& stride, const Shape& padding, bool ceil_mode,
                                    std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d_backward";
  const PoolGeometry g = cpu::avg_geometry(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  cpu::check_float(op, grad_output);
  cpu::check_same_dtype(op, grad_output, self);
  cpu::check_grad_shape(op, "grad_output", grad_output, pooled_shape(self, g.OH, g.OW));
  return g;
}

std::pair<int64_t, int64_t> adaptive_pool_meta(const char* op, const Tensor& self, const Shape& output_size,
                                               bool max) {
  return cpu::adaptive_output(op, self, output_size, max);
}

void adaptive_avg_pool_backward_meta(const Tensor& grad_output, const Tensor& self) {
  const char* op = "adaptive_avg_pool2d_backward";
  cpu::check_float(op, grad_output);
  cpu::check_same_dtype(op, grad_output, self);
  if (self->dim() != 3 && self->dim() != 4) {
    throw std::runtime_error(message(op, "(): Expected 3D or 4D tensor, but got ", shape_str(self->sizes())));
  }
  if (grad_output->dim() != self->dim() || grad_output->size(0) != self->size(0) ||
      grad_output->size(-3) != self->size(-3)) {
    throw std::runtime_error(message(op, ": expected grad_output of size ", shape_str(self->sizes()),
                                     " in its leading dimensions, but got ", shape_str(grad_output->sizes())));
  }
}

void adaptive_max_pool_backward_meta(const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
  const char* op = "adaptive_max_pool2d_backward";
  if (self->dim() != 3 && self->dim() != 4) {
    throw std::runtime_error(message(op, "(): Expected 3D or 4D tensor, but got ", shape_str(self->sizes())));
  }
  if (grad_output->dim() != self->dim()) {
    throw std::runtime_error(message(op, ": expected grad_output of ", self->dim(), " dimensions, but got ",
                                     shape_str(grad_output->sizes())));
  }
  check_index_scatter(op, grad_output, self, indices, pooled_shape(self, grad_output->size(-2), grad_output->size(-1)));
}

}  // namespace ember

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
  dispatch_float(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    avg_pool_kernel(src->data<T>(), out->data<T>(), g, count_include_pad, divisor_override);
  });
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
