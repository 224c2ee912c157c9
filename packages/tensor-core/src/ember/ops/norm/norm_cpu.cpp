// Normalization: native_batch_norm, native_layer_norm, native_group_norm.
//
// Each op returns its output and the statistics it normalized with (mean and inverse
// standard deviation, from the biased variance), which derivatives.yaml's formulas read.
// Statistics are accumulated in double (two passes: the mean, then the squared deviations
// from it), the output is written as x * scale + shift with per-channel (or per-row) scale and
// shift. batch_norm runs parallel over channels, layer_norm over rows, group_norm over
// (sample, group) rows. In training, batch_norm updates running_mean/running_var in place
// (the unbiased variance for the running estimate) without bumping their version counter, as
// PyTorch does: a running statistic is state, not an input of the graph. Float types; a
// 16-bit float input may come with float32 parameters (PyTorch's mixed-type rule).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ember/ops/norm/norm_meta.h"
#include "ember/backends/cpu/lane_sum.h"
#include "ember/ops/norm/norm_meta.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"
#include "ember/runtime/simd.h"


namespace ember::cpu {
namespace {

// The values of a 1-d (or any contiguous-able) float tensor as doubles.
std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t->numel()));
  if (v.empty()) return v;
  Tensor c = as_contiguous(t);
  dispatch_float(c->dtype(), "normalization", [&](auto tag) {
    using T = decltype(tag);
    const T* p = c->data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(static_cast<opmath_t<T>>(p[i]));
  });
  return v;
}

Tensor from_doubles(const std::vector<double>& v, const Shape& shape, ScalarType dtype) {
  Tensor t = empty(shape, dtype);
  dispatch_float(dtype, "normalization", [&](auto tag) {
    using T = decltype(tag);
    T* p = t->data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>(static_cast<opmath_t<T>>(v[i]));
  });
  return t;
}

// Mean and M2 (sum of squared deviations from the mean) of the n values at p (contiguous).
// The mean is the first value plus the mean offset from it: n equal values have exactly that
// value as their mean (a plain sum / n of three 0.1 is 0.1 + 1 ulp in double), so they
// normalize to exactly 0, as in PyTorch.
template <typename T> void row_stats(const T* p, int64_t n, double& mean_out, double& m2_out) {
  double mean = 0, m2 = 0;
  simd_dispatch([&] {
    const double first = n ? static_cast<double>(static_cast<opmath_t<T>>(p[0])) : 0.0;
    mean = n ? first + lane_sum(p, n, first) / static_cast<double>(n) : 0.0;
    m2 = lane_sqdev(p, n, mean);
  });
  mean_out = mean;
  m2_out = m2;
}

// y = (x - center) * scale + shift over n contiguous values. Layer and group norm subtract
// their mean first, so that a row of equal values normalizes to exactly 0 (as PyTorch's);
// folded into one shift, x * scale - mean * scale rounds to ~1e-4 for values near 1000.
template <typename T>
void affine_row(const T* x, T* y, int64_t n, double center, double scale, double shift) {
  using A = opmath_t<T>;
  const A m = static_cast<A>(center), a = static_cast<A>(scale), b = static_cast<A>(shift);
  simd_dispatch([&] {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>((static_cast<A>(x[i]) - m) * a + b);
  });
}

}  // namespace

// ---------------------------------------------------------------------------------- batch norm

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                     const Tensor& running_mean, const Tensor& running_var,
                                                     bool training, double momentum, double eps) {
  const char* op = "native_batch_norm";
  check_cpu(input, op);
  const BatchNormMeta bm = native_batch_norm_meta(input, weight, bias, running_mean, running_var, training);
  const int64_t N = bm.N, C = bm.C, S = bm.S, M = bm.M;
  const ScalarType sdt = bm.stat_dtype;
  const std::vector<double> w = weight ? to_doubles(weight) : std::vector<double>(C, 1.0);
  const std::vector<double> b = bias ? to_doubles(bias) : std::vector<double>(C, 0.0);
  std::vector<double> mean(C), invstd(C), scale(C), shift(C);
  Tensor x = as_contiguous(input);
  Tensor out = empty(input->sizes(), input->dtype());
  if (training) {
    std::vector<double> var_unbiased(C);
    dispatch_float(input->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      const T* px = x->data<T>();
      if (S == 1) {  // (N, C): accumulate rows of a block of channels, in double
        parallel_for(0, C, std::max<int64_t>(16, kParallelGrain / std::max<int64_t>(N, 1)), [&](int64_t c0, int64_t c1) {
          std::vector<double> sum(c1 - c0, 0.0), m2(c1 - c0, 0.0);
          simd_dispatch([&] {
            for (int64_t n = 0; n < N; ++n) {
              const T* row = px + n * C;
              for (int64_t c = c0; c < c1; ++c) sum[c - c0] += static_cast<double>(static_cast<opmath_t<T>>(row[c]));
            }
            for (int64_t c = c0; c < c1; ++c) mean[c] = sum[c - c0] / static_cast<double>(M);
            for (int64_t n = 0; n < N; ++n) {
              const T* row = px + n * C;
              for (int64_t c = c0; c < c1; ++c) {
                const double d = static_cast<double>(static_cast<opmath_t<T>>(row[c])) - mean[c];
                m2[c - c0] += d * d;
              }
            }
          });
          for (int64_t c = c0; c < c1; ++c) {
            invstd[c] = 1.0 / std::sqrt(m2[c - c0] / static_cast<double>(M) + eps);
            var_unbiased[c] = m2[c - c0] / static_cast<double>(M - 1);
          }
        });
        return;
      }
      parallel_for(0, C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(M, 1)), [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
          double sum = 0, m2 = 0;
          simd_dispatch([&] {
            for (int64_t n = 0; n < N; ++n) sum += lane_sum(px + (n * C + c) * S, S);
            for (int64_t n = 0; n < N; ++n) m2 += lane_sqdev(px + (n * C + c) * S, S, sum / static_cast<double>(M));
          });
          const double mu = sum / static_cast<double>(M);
          mean[c] = mu;
          invstd[c] = 1.0 / std::sqrt(m2 / static_cast<double>(M) + eps);
          var_unbiased[c] = m2 / static_cast<double>(M - 1);
        }
      });
    });
    for (int64_t c = 0; c < C; ++c) {
      scale[c] = invstd[c] * w[c];
      shift[c] = b[c] - mean[c] * scale[c];
    }
    if (running_mean) {
      std::vector<double> rm = to_doubles(running_mean);
      for (int64_t c = 0; c < C; ++c) rm[c] = (1 - momentum) * rm[c] + momentum * mean[c];
      copy_into(running_mean, from_doubles(rm, running_mean->sizes(), running_mean->dtype()));
    }
    if (running_var) {
      std::vector<double> rv = to_doubles(running_var);
      for (int64_t c = 0; c < C; ++c) rv[c] = (1 - momentum) * rv[c] + momentum * var_unbiased[c];
      copy_into(running_var, from_doubles(rv, running_var->sizes(), running_var->dtype()));
    }
  } else {
    const std::vector<double> rm = to_doubles(running_mean), rv = to_doubles(running_var);
    for (int64_t c = 0; c < C; ++c) {
      scale[c] = w[c] / std::sqrt(rv[c] + eps);
      shift[c] = b[c] - rm[c] * scale[c];
    }
  }
  if (out->numel() > 0) {
    dispatch_float(input->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      const T* px = x->data<T>();
      T* py = out->data<T>();
      if (S == 1) {
        using A = opmath_t<T>;
        std::vector<A> sc(scale.begin(), scale.end()), sh(shift.begin(), shift.end());
        parallel_for(0, N, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(C, 1)), [&](int64_t n0, int64_t n1) {
          simd_dispatch([&] {
            for (int64_t n = n0; n < n1; ++n) {
              const T* row = px + n * C;
              T* dst = py + n * C;
              for (int64_t c = 0; c < C; ++c) dst[c] = static_cast<T>(static_cast<A>(row[c]) * sc[c] + sh[c]);
            }
          });
        });
        return;
      }
      parallel_for(0, N * C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(S, 1)), [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          const int64_t c = p % C;
          affine_row(px + p * S, py + p * S, S, 0.0, scale[c], shift[c]);
        }
      });
    });
  }
  if (!training) return {out, empty({0}, sdt), empty({0}, sdt)};
  return {out, from_doubles(mean, {C}, sdt), from_doubles(invstd, {C}, sdt)};
}

// ---------------------------------------------------------------------------------- layer norm

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, const Shape& normalized_shape,
                                                     const Tensor& weight, const Tensor& bias, double eps) {
  const char* op = "native_layer_norm";
  check_cpu(input, op);
  const LayerNormMeta m = native_layer_norm_meta(input, normalized_shape, weight, bias);
  const int64_t K = m.K, R = m.R;
  const std::vector<double> w = weight ? to_doubles(weight) : std::vector<double>();
  const std::vector<double> b = bias ? to_doubles(bias) : std::vector<double>();
  Tensor x = as_contiguous(input);
  Tensor out = empty(input->sizes(), input->dtype());
  Tensor mean = empty(m.stat_shape, input->dtype()), rstd = empty(m.stat_shape, input->dtype());
  if (R == 0) return {out, mean, rstd};
  dispatch_float(input->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using A = opmath_t<T>;
    const T* px = x->data<T>();
    T* py = out->data<T>();
    T* pm = mean->data<T>();
    T* pr = rstd->data<T>();
    parallel_for(0, R, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(K, 1)), [&](int64_t r0, int64_t r1) {
      std::vector<A> wa(w.begin(), w.end()), ba(b.begin(), b.end());
      for (int64_t r = r0; r < r1; ++r) {
        double mu, m2;
        const T* row = px + r * K;
        T* dst = py + r * K;
        row_stats(row, K, mu, m2);
        const double rs = 1.0 / std::sqrt(m2 / static_cast<double>(K) + eps);  // K = 0: NaN
        pm[r] = static_cast<T>(static_cast<A>(mu));
        pr[r] = static_cast<T>(static_cast<A>(rs));
        if (wa.empty() && ba.empty()) {
          affine_row(row, dst, K, mu, rs, 0.0);
          continue;
        }
        const A a = static_cast<A>(rs), m = static_cast<A>(mu);
        const A* pw = wa.empty() ? nullptr : wa.data();
        const A* pb = ba.empty() ? nullptr : ba.data();
        simd_dispatch([&] {
          if (pw && pb) {
            for (int64_t i = 0; i < K; ++i) dst[i] = static_cast<T>((static_cast<A>(row[i]) - m) * a * pw[i] + pb[i]);
          } else if (pw) {
            for (int64_t i = 0; i < K; ++i) dst[i] = static_cast<T>((static_cast<A>(row[i]) - m) * a * pw[i]);
          } else {
            for (int64_t i = 0; i < K; ++i) dst[i] = static_cast<T>((static_cast<A>(row[i]) - m) * a + pb[i]);
          }
        });
      }
    });
  });
  return {out, mean, rstd};
}

// ---------------------------------------------------------------------------------- group norm

std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                     int64_t N, int64_t C, int64_t HxW, int64_t group, double eps) {
  const char* op = "native_group_norm";
  check_cpu(input, op);
  native_group_norm_meta(input, weight, bias, N, C, HxW, group);
  const int64_t D = C / group, K = D * HxW, R = N * group;
  const std::vector<double> w = weight ? to_doubles(weight) : std::vector<double>(C, 1.0);
  const std::vector<double> b = bias ? to_doubles(bias) : std::vector<double>(C, 0.0);
  Tensor x = as_contiguous(input);
  Tensor out = empty(input->sizes(), input->dtype());
  Tensor mean = empty({N, group}, input->dtype()), rstd = empty({N, group}, input->dtype());
  if (R == 0) return {out, mean, rstd};
  dispatch_float(input->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using A = opmath_t<T>;
    const T* px = x->data<T>();
    T* py = out->data<T>();
    T* pm = mean->data<T>();
    T* pr = rstd->data<T>();
    parallel_for(0, R, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(K, 1)), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        double mu, m2;
        row_stats(px + r * K, K, mu, m2);
        const double rs = 1.0 / std::sqrt(m2 / static_cast<double>(K) + eps);
        pm[r] = static_cast<T>(static_cast<A>(mu));
        pr[r] = static_cast<T>(static_cast<A>(rs));
        const int64_t c0 = (r % group) * D;
        for (int64_t j = 0; j < D; ++j) {
          const double sc = rs * w[c0 + j];
          affine_row(px + r * K + j * HxW, py + r * K + j * HxW, HxW, mu, sc, b[c0 + j]);
        }
      }
    });
  });
  return {out, mean, rstd};
}

// ------------------------------------------------------------------------- fused backward ops
//
// The first derivatives of the three normalizations in two passes over the data (the sums,
// then the input's gradient), for backward passes that record no graph; derivatives.yaml's
// formulas (composed of differentiable ops) remain what second derivatives go through. With
// g the output's gradient, gy = g * weight, xc = x - mean, s = rstd and K values per
// statistic: grad_input = s * gy - (s / K) * sum(gy) - (s^3 / K) * sum(gy * xc) * xc,
// grad_weight = sum(g * xc * s) and grad_bias = sum(g) over everything but the parameter's
// dim. A parameter that is None gets an empty (0,) gradient.

namespace {

struct NormGrads {
  Tensor input, weight, bias;
};

Tensor grads_tensor(const std::vector<double>& v, int64_t n, ScalarType dtype, bool wanted) {
  if (!wanted) return empty({0}, dtype);
  return from_doubles(v, {n}, dtype);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Tensor& weight, const Tensor& running_mean,
                                                              const Tensor& running_var, const Tensor& save_mean,
                                                              const Tensor& save_invstd, bool train, double eps) {
  const char* op = "native_batch_norm_backward";
  check_cpu(input, op);
  const BatchNormMeta bm = native_batch_norm_backward_meta(grad_out, input, weight, running_mean, running_var,
                                                           save_mean, save_invstd, train);
  const int64_t N = bm.N, C = bm.C, S = bm.S, M = bm.M;
  const Tensor& mean_t = train ? save_mean : running_mean;
  const Tensor& var_t = train ? save_invstd : running_var;
  std::vector<double> mean = to_doubles(mean_t), invstd = to_doubles(var_t);
  if (!train) {
    for (double& v : invstd) v = 1.0 / std::sqrt(v + eps);
  }
  const std::vector<double> w = weight ? to_doubles(weight) : std::vector<double>(C, 1.0);
  std::vector<double> sum_g(C, 0.0), sum_gx(C, 0.0);
  Tensor g = as_contiguous(grad_out), x = as_contiguous(input);
  Tensor gi = empty(input->sizes(), input->dtype());
  if (gi->numel() > 0) {
    dispatch_float(input->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      const T* pg = g->data<T>();
      const T* px = x->data<T>();
      T* po = gi->data<T>();
      parallel_for(0, C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(M, 1)), [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
          double sg = 0, sgx = 0;
          simd_dispatch([&] {
            for (int64_t n = 0; n < N; ++n) {
              double a, b;
              lane_grad_sums(pg + (n * C + c) * S, px + (n * C + c) * S, S, mean[c], a, b);
              sg += a;
              sgx += b;
            }
          });
          sum_g[c] = sg;
          sum_gx[c] = sgx;
          // grad_input = A * g + B * x + Cc
          const double k = w[c] * invstd[c];
          double A = k, B = 0, Cc = 0;
          if (train) {
            B = -k * invstd[c] * invstd[c] * sgx / static_cast<double>(M);
            Cc = -k * sg / static_cast<double>(M) - B * mean[c];
          }
          simd_dispatch([&] {
            for (int64_t n = 0; n < N; ++n) {
              const int64_t o = (n * C + c) * S;
              lane_axpbypc(pg + o, px + o, po + o, S, A, B, Cc);
            }
          });
        }
      });
    });
  }
  std::vector<double> gw(C);
  for (int64_t c = 0; c < C; ++c) gw[c] = sum_gx[c] * invstd[c];
  const ScalarType pdt = weight ? weight->dtype() : input->dtype();
  return {gi, grads_tensor(gw, C, pdt, static_cast<bool>(weight)), grads_tensor(sum_g, C, pdt, static_cast<bool>(weight))};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Shape& normalized_shape, const Tensor& mean,
                                                              const Tensor& rstd, const Tensor& weight,
                                                              const Tensor& bias) {
  const char* op = "native_layer_norm_backward";
  check_cpu(input, op);
  const LayerNormMeta m = native_layer_norm_backward_meta(grad_out, input, normalized_shape, mean, rstd, weight);
  const int64_t K = m.K, R = m.R;
  const std::vector<double> mu = to_doubles(mean), rs = to_doubles(rstd);
  const std::vector<double> w = weight ? to_doubles(weight) : std::vector<double>();
  const bool want_w = static_cast<bool>(weight), want_b = static_cast<bool>(bias);
  // weight and bias gradients: one partial sum per block of rows, added in block order
  const int64_t nblocks = std::max<int64_t>(
      1, std::min<int64_t>({R, std::max<int64_t>(32, R / 256), (int64_t{1} << 22) / std::max<int64_t>(K, 1)}));
  const bool partials = (want_w || want_b) && R > 0;
  std::vector<double> gw(want_w ? K : 0, 0.0), gb(want_b ? K : 0, 0.0);
  Tensor g = as_contiguous(grad_out), x = as_contiguous(input);
  Tensor gi = empty(input->sizes(), input->dtype());
  if (R > 0 && K > 0) {
    dispatch_float(input->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      using A = opmath_t<T>;
      const T* pg = g->data<T>();
      const T* px = x->data<T>();
      T* po = gi->data<T>();
      const std::vector<A> wa(w.begin(), w.end());
      // partial weight and bias gradients per block of rows (opmath), added in block order
      std::vector<A> pw(partials && want_w ? nblocks * K : 0, A(0)), pb(partials && want_b ? nblocks * K : 0, A(0));
      parallel_for(0, nblocks, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t blk = b0; blk < b1; ++blk) {
          const int64_t r0 = blk * R / nblocks, r1 = (blk + 1) * R / nblocks;
          A* bw = want_w ? pw.data() + blk * K : nullptr;
          A* bb = want_b ? pb.data() + blk * K : nullptr;
          for (int64_t r = r0; r < r1; ++r) {
            const T* gr = pg + r * K;
            const T* xr = px + r * K;
            T* orow = po + r * K;
            const double m = mu[r], s = rs[r];
            simd_dispatch([&] {
              double sg, sgx;
              if (want_w) {  // sums of gy = g * w and gy * (x - m), in lanes
                constexpr int L = 16;
                const A am = static_cast<A>(m);
                double tg = 0, tgx = 0;
                for (int64_t c0 = 0; c0 < K; c0 += kLaneBlock) {
                  const int64_t c1 = std::min(K, c0 + kLaneBlock);
                  A ag[L] = {}, agx[L] = {};
                  int64_t i = c0;
                  for (; i + L <= c1; i += L) {
                    for (int j = 0; j < L; ++j) {
                      const A gy = static_cast<A>(gr[i + j]) * wa[i + j];
                      ag[j] += gy;
                      agx[j] += gy * (static_cast<A>(xr[i + j]) - am);
                    }
                  }
                  for (; i < c1; ++i) {
                    const A gy = static_cast<A>(gr[i]) * wa[i];
                    tg += gy;
                    tgx += gy * (static_cast<A>(xr[i]) - am);
                  }
                  for (int j = 0; j < L; ++j) {
                    tg += ag[j];
                    tgx += agx[j];
                  }
                }
                sg = tg;
                sgx = tgx;
              } else {
                lane_grad_sums(gr, xr, K, m, sg, sgx);
              }
              const double B = -s * s * s * sgx / static_cast<double>(K);
              const double Cc = -s * sg / static_cast<double>(K) - B * m;
              if (want_w) {
                const A as = static_cast<A>(s), ab = static_cast<A>(B), ac = static_cast<A>(Cc);
                for (int64_t i = 0; i < K; ++i) {
                  orow[i] = static_cast<T>(as * wa[i] * static_cast<A>(gr[i]) + ab * static_cast<A>(xr[i]) + ac);
                }
              } else {
                lane_axpbypc(gr, xr, orow, K, s, B, Cc);
              }
              if (bw) {
                const A am = static_cast<A>(m), as = static_cast<A>(s);
                for (int64_t i = 0; i < K; ++i) bw[i] += static_cast<A>(gr[i]) * ((static_cast<A>(xr[i]) - am) * as);
              }
              if (bb) {
                for (int64_t i = 0; i < K; ++i) bb[i] += static_cast<A>(gr[i]);
              }
            });
          }
        }
      });
      for (int64_t blk = 0; partials && blk < nblocks; ++blk) {
        for (int64_t i = 0; want_w && i < K; ++i) gw[i] += static_cast<double>(pw[blk * K + i]);
        for (int64_t i = 0; want_b && i < K; ++i) gb[i] += static_cast<double>(pb[blk * K + i]);
      }
    });
  }
  Tensor tw = want_w ? from_doubles(gw, normalized_shape, weight->dtype()) : empty({0}, input->dtype());
  Tensor tb = want_b ? from_doubles(gb, normalized_shape, bias->dtype()) : empty({0}, input->dtype());
  return {gi, tw, tb};
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Tensor& mean, const Tensor& rstd,
                                                              const Tensor& weight, int64_t N, int64_t C,
                                                              int64_t HxW, int64_t group) {
  const char* op = "native_group_norm_backward";
  check_cpu(input, op);
  native_group_norm_backward_meta(grad_out, input, mean, rstd, weight, N, C, HxW, group);
  const int64_t D = C / group, K = D * HxW;
  const std::vector<double> mu = to_doubles(mean), rs = to_doubles(rstd);
  const std::vector<double> w = weight ? to_doubles(weight) : std::vector<double>(C, 1.0);
  std::vector<double> sg(N * C, 0.0), sgx(N * C, 0.0);  // per plane: sum(g), sum(g * xc)
  Tensor g = as_contiguous(grad_out), x = as_contiguous(input);
  Tensor gi = empty(input->sizes(), input->dtype());
  if (gi->numel() > 0) {
    dispatch_float(input->dtype(), op, [&](auto tag) {
      using T = decltype(tag);
      const T* pg = g->data<T>();
      const T* px = x->data<T>();
      T* po = gi->data<T>();
      parallel_for(0, N * group, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(K, 1)), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t n = r / group, c0 = (r % group) * D;
          const double m = mu[r], s = rs[r];
          double a = 0, b = 0;  // sum(gy), sum(gy * xc) over the group
          simd_dispatch([&] {
            for (int64_t j = 0; j < D; ++j) {
              const int64_t p = n * C + c0 + j;
              lane_grad_sums(pg + p * HxW, px + p * HxW, HxW, m, sg[p], sgx[p]);
              a += w[c0 + j] * sg[p];
              b += w[c0 + j] * sgx[p];
            }
          });
          const double B = -s * s * s * b / static_cast<double>(K);
          const double Cc = -s * a / static_cast<double>(K) - B * m;
          simd_dispatch([&] {
            for (int64_t j = 0; j < D; ++j) {
              const int64_t p = n * C + c0 + j;
              lane_axpbypc(pg + p * HxW, px + p * HxW, po + p * HxW, HxW, s * w[c0 + j], B, Cc);
            }
          });
        }
      });
    });
  }
  std::vector<double> gw(C, 0.0), gb(C, 0.0);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      gw[c] += sgx[n * C + c] * rs[n * group + c / D];
      gb[c] += sg[n * C + c];
    }
  }
  const ScalarType pdt = weight ? weight->dtype() : input->dtype();
  return {gi, grads_tensor(gw, C, pdt, static_cast<bool>(weight)), grads_tensor(gb, C, pdt, static_cast<bool>(weight))};
}

}  // namespace ember::cpu
