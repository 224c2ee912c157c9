// One direction of an LSTM layer over all its time steps, each way: _lstm_forward_ and
// _lstm_backward_, for ember_nn's single-node LSTM direction (the input projections of all
// steps and the weight gradients are single matrix products there; what must go step by
// step is here). Both write into tensors the caller provides, and allocate only the packed
// weight.
//
// Gates are stacked i|f|g|o along the last dim (PyTorch's layout). A step is one parallel
// region of tiles: R batch rows by a panel of hidden units. The recurrent product of a tile
// runs in registers against the weight packed once per call (a BLAS call per step would pack
// it again every step, which costs as much as the product at these sizes), and the tile's
// elementwise cell work follows while its rows are in cache:
// - forward: the tile holds the 4 gates of L hidden units (L = one vector), so the cell
//   (activations, c, h) of those units finishes in the tile;
// - backward: the tile holds dh of 4L hidden units for the previous step, so that step's
//   cell backward (d_gates, dc) for those units finishes in the tile.
// Vector widths follow the runtime level (simd.h): 64-byte vectors and 5 rows at AVX-512,
// 32 and 3 at AVX2, 16 and 3 at baseline; the packing follows the same width.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"
#include "ember/ops/rnn/rnn_meta.h"
#include "ember/runtime/simd.h"
#include "ember/ops/elementwise/vec_math.h"


namespace ember::cpu {
namespace {

// One row of each, as functions with restrict pointers: with the gates, state and output
// rows all possibly overlapping, the vectoriser would otherwise keep the loops scalar.
template <typename T>
inline void cell_row(T* __restrict__ i, T* __restrict__ f, T* __restrict__ g, T* __restrict__ o,
                     const T* __restrict__ cp, T* __restrict__ cr, T* __restrict__ hr, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    const T ai = sigmoid_(i[k]), af = sigmoid_(f[k]), ag = tanh_(g[k]), ao = sigmoid_(o[k]);
    const T cn = af * cp[k] + ai * ag;
    i[k] = ai;
    f[k] = af;
    g[k] = ag;
    o[k] = ao;
    cr[k] = cn;
    hr[k] = ao * tanh_(cn);
  }
}

template <typename T>
inline void cell_backward_row(const T* __restrict__ i, const T* __restrict__ f, const T* __restrict__ g,
                              const T* __restrict__ o, const T* __restrict__ cr, const T* __restrict__ cp,
                              const T* __restrict__ dhr, T* __restrict__ dcr, T* __restrict__ di,
                              T* __restrict__ df, T* __restrict__ dg, T* __restrict__ d_o, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    const T tc = tanh_(cr[k]);
    const T dct = dcr[k] + dhr[k] * o[k] * (T(1) - tc * tc);
    d_o[k] = dhr[k] * tc * o[k] * (T(1) - o[k]);
    di[k] = dct * g[k] * i[k] * (T(1) - i[k]);
    df[k] = dct * cp[k] * f[k] * (T(1) - f[k]);
    dg[k] = dct * i[k] * (T(1) - g[k] * g[k]);
    dcr[k] = dct * f[k];
  }
}

template <typename V, typename T> inline V vload(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
template <typename V, typename T> inline void vstore(T* p, V v) { std::memcpy(p, &v, sizeof(V)); }

// One step's forward: tiles of R rows x the 4 gates of L units (x, h_prev, c_prev: the
// step's inputs; acts, c, h: its outputs; wp: the packed weight).
template <typename T> struct ForwardStep {
  const T *x, *h_prev, *c_prev, *wp;
  T *acts, *c, *h;
  int64_t N, H, row_blocks;
};

// One step's backward: dh (N, H) = dg (N, 4H) @ w_hh in tiles of R rows x 4L units, then,
// when acts is set, the cell backward of the step before for those units.
template <typename T> struct BackwardStep {
  const T *dg, *wb;  // dg null: no product (the first step of the backward)
  T* dh;
  const T *acts, *c, *c_prev, *d_out;  // the step before: its activations, cell, input cell
  T *dc, *dg_prev;
  int64_t N, H, row_blocks;
};

template <typename T, int VB, int R> struct LstmKernels {
  static constexpr int L = VB / static_cast<int>(sizeof(T));
  typedef T V __attribute__((vector_size(VB)));

  // acc[r][v] = sum over k < K of a[r * K + k] * b[k * 4L + v L : ...]: NR rows of `a` times a
  // packed panel of 4 vectors per k, in registers
  template <int NR> static void tile_product(const T* a, const T* b, int64_t K, V (&acc)[NR][4]) {
    for (int64_t k = 0; k < K; ++k, b += 4 * L) {
      const V b0 = vload<V>(b), b1 = vload<V>(b + L), b2 = vload<V>(b + 2 * L), b3 = vload<V>(b + 3 * L);
      for (int r = 0; r < NR; ++r) {
        const T x = a[r * K + k];
        acc[r][0] += x * b0;
        acc[r][1] += x * b1;
        acc[r][2] += x * b2;
        acc[r][3] += x * b3;
      }
    }
  }

  // the 4 gates of units [u0, u0 + units) for rows r0..r0+NR of the step
  template <int NR> static void forward_tile(const ForwardStep<T>& s, int64_t r0, int64_t panel) {
    const int64_t H = s.H, u0 = panel * L;
    const int units = static_cast<int>(std::min<int64_t>(L, H - u0));
    V acc[NR][4] = {};
    tile_product<NR>(s.h_prev + r0 * H, s.wp + panel * H * 4 * L, H, acc);
    for (int r = 0; r < NR; ++r) {
      T* a = s.acts + (r0 + r) * 4 * H;
      const T* x = s.x + (r0 + r) * 4 * H;
      for (int g = 0; g < 4; ++g) {
        if (units == L) {
          vstore(a + g * H + u0, acc[r][g] + vload<V>(x + g * H + u0));
        } else {
          T tmp[L];
          vstore(tmp, acc[r][g]);
          for (int l = 0; l < units; ++l) a[g * H + u0 + l] = tmp[l] + x[g * H + u0 + l];
        }
      }
      const int64_t o = (r0 + r) * H + u0;
      cell_row(a + u0, a + H + u0, a + 2 * H + u0, a + 3 * H + u0, s.c_prev + o, s.c + o, s.h + o, units);
    }
  }

  template <int NR> static void backward_tile(const BackwardStep<T>& s, int64_t r0, int64_t panel) {
    const int64_t H = s.H, K = 4 * H, u0 = panel * 4 * L;
    const int units = static_cast<int>(std::min<int64_t>(4 * L, H - u0));
    if (s.dg) {
      V acc[NR][4] = {};
      tile_product<NR>(s.dg + r0 * K, s.wb + panel * K * 4 * L, K, acc);
      for (int r = 0; r < NR; ++r) {
        T* dh = s.dh + (r0 + r) * H + u0;
        if (units == 4 * L) {
          for (int v = 0; v < 4; ++v) vstore(dh + v * L, acc[r][v]);
        } else {
          T tmp[4 * L];
          for (int v = 0; v < 4; ++v) vstore(tmp + v * L, acc[r][v]);
          for (int l = 0; l < units; ++l) dh[l] = tmp[l];
        }
      }
    }
    if (!s.acts) return;
    for (int r = 0; r < NR; ++r) {
      const int64_t o = (r0 + r) * H + u0;
      T* dh = s.dh + o;
      if (s.d_out) {
        for (int l = 0; l < units; ++l) dh[l] += s.d_out[o + l];
      }
      const T* a = s.acts + (r0 + r) * K + u0;
      T* d = s.dg_prev + (r0 + r) * K + u0;
      cell_backward_row(a, a + H, a + 2 * H, a + 3 * H, s.c + o, s.c_prev + o, dh, s.dc + o, d, d + H, d + 2 * H,
                        d + 3 * H, units);
    }
  }

  // tiles [b, e) of a step; tile = panel * row_blocks + row block
  template <typename Step> static void tiles(const Step& s, int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t panel = t / s.row_blocks, r0 = (t % s.row_blocks) * R;
      run_rows<Step, R>(s, r0, panel, static_cast<int>(std::min<int64_t>(R, s.N - r0)));
    }
  }

  // the tile with `rows` (<= NR) rows
  template <typename Step, int NR> static void run_rows(const Step& s, int64_t r0, int64_t panel, int rows) {
    if constexpr (NR > 1) {
      if (rows < NR) return run_rows<Step, NR - 1>(s, r0, panel, rows);
    }
    if constexpr (std::is_same_v<Step, ForwardStep<T>>) {
      forward_tile<NR>(s, r0, panel);
    } else {
      backward_tile<NR>(s, r0, panel);
    }
  }
};

// A level: vector bytes and rows per tile, and the entry points compiled for it.
enum class Level { Default, AVX2, AVX512 };

Level lstm_level() {
#ifdef EMBER_SIMD_DISPATCH
  switch (cpu_level()) {
    case CpuLevel::AVX512: return Level::AVX512;
    case CpuLevel::AVX2: return Level::AVX2;
    default: break;
  }
#endif
  return Level::Default;
}

constexpr int vector_bytes(Level lv) { return lv == Level::AVX512 ? 64 : lv == Level::AVX2 ? 32 : 16; }
constexpr int tile_rows(Level lv) { return lv == Level::AVX512 ? 5 : 3; }

template <typename T, typename Step> void tiles_default(const Step& s, int64_t b, int64_t e) {
  LstmKernels<T, 16, 3>::tiles(s, b, e);
}
#ifdef EMBER_SIMD_DISPATCH
template <typename T, typename Step> EMBER_TARGET_AVX2 void tiles_avx2(const Step& s, int64_t b, int64_t e) {
  LstmKernels<T, 32, 3>::tiles(s, b, e);
}
template <typename T, typename Step> EMBER_TARGET_AVX512 void tiles_avx512(const Step& s, int64_t b, int64_t e) {
  LstmKernels<T, 64, 5>::tiles(s, b, e);
}
#endif

// All tiles of one step over the pool.
template <typename T, typename Step> void run_step(Level lv, const Step& s, int64_t panels, int64_t mac_per_tile) {
  const int64_t n = panels * s.row_blocks;
  parallel_for(0, n, std::max<int64_t>(1, 65536 / std::max<int64_t>(mac_per_tile, 1)), [&](int64_t b, int64_t e) {
#ifdef EMBER_SIMD_DISPATCH
    if (lv == Level::AVX512) return tiles_avx512<T>(s, b, e);
    if (lv == Level::AVX2) return tiles_avx2<T>(s, b, e);
#endif
    tiles_default<T>(s, b, e);
  });
}

// Forward packing: panel p, input k, gate g, lane l <- w_hh[g H + p L + l][k] (0 past H).
template <typename T> void pack_forward(const T* w, int64_t H, int L, T* wp) {
  const int64_t panels = (H + L - 1) / L;
  parallel_for(0, panels, 1, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      for (int64_t k = 0; k < H; ++k) {
        T* dst = wp + (p * H + k) * 4 * L;
        for (int g = 0; g < 4; ++g) {
          for (int l = 0; l < L; ++l) {
            const int64_t u = p * L + l;
            dst[g * L + l] = u < H ? w[(g * H + u) * H + k] : T(0);
          }
        }
      }
    }
  });
}

// Backward packing: panel q, row k of w_hh (4H), column j <- w_hh[k][q 4L + j] (0 past H).
template <typename T> void pack_backward(const T* w, int64_t H, int L, T* wb) {
  const int64_t panels = (H + 4 * L - 1) / (4 * L), K = 4 * H;
  parallel_for(0, panels, 1, [&](int64_t b, int64_t e) {
    for (int64_t q = b; q < e; ++q) {
      for (int64_t k = 0; k < K; ++k) {
        T* dst = wb + (q * K + k) * 4 * L;
        for (int j = 0; j < 4 * L; ++j) {
          const int64_t u = q * 4 * L + j;
          dst[j] = u < H ? w[k * H + u] : T(0);
        }
      }
    }
  });
}

}  // namespace

std::vector<Tensor> _lstm_forward_(const Tensor& x_proj, const Tensor& h0, const Tensor& c0, const Tensor& w_hh,
                                   bool reverse, const Tensor& acts, const Tensor& cells, const Tensor& outs) {
  const auto [steps, N, H] = lstm_forward_meta(x_proj, h0, c0, w_hh, acts, cells, outs);
  const ScalarType dt = x_proj->dtype();
  if (steps == 0 || N == 0 || H == 0) return {};
  const Level lv = lstm_level();
  dispatch_real(dt, [&](auto tag) {
    using S = decltype(tag);
    const int L = vector_bytes(lv) / static_cast<int>(sizeof(S)), R = tile_rows(lv);
    const int64_t panels = (H + L - 1) / L;
    Tensor packed = empty({panels * H * 4 * L}, dt);
    pack_forward(w_hh->data<S>(), H, L, packed->data<S>());
    ForwardStep<S> s{};
    s.wp = packed->data<S>();
    s.N = N;
    s.H = H;
    s.row_blocks = (N + R - 1) / R;
    const int64_t gate_step = N * 4 * H, state_step = N * H;
    for (int64_t i = 0; i < steps; ++i) {
      const int64_t t = reverse ? steps - 1 - i : i, before = reverse ? t + 1 : t - 1;
      s.x = x_proj->data<S>() + t * gate_step;
      s.h_prev = i == 0 ? h0->data<S>() : outs->data<S>() + before * state_step;
      s.c_prev = i == 0 ? c0->data<S>() : cells->data<S>() + before * state_step;
      s.acts = acts->data<S>() + t * gate_step;
      s.c = cells->data<S>() + t * state_step;
      s.h = outs->data<S>() + t * state_step;
      run_step<S>(lv, s, panels, int64_t{R} * 4 * L * H);
    }
  });
  for (const Tensor* t : {&acts, &cells, &outs}) (*t)->storage()->bump_version();
  return {};
}

std::vector<Tensor> _lstm_backward_(const Tensor& acts, const Tensor& cells, const Tensor& c0, const Tensor& w_hh,
                                    const Tensor& d_outs, bool reverse, const Tensor& dh, const Tensor& dc,
                                    const Tensor& d_gates) {
  const auto [steps, N, H] = lstm_backward_meta(acts, cells, c0, w_hh, d_outs, dh, dc, d_gates);
  const ScalarType dt = acts->dtype();
  if (steps == 0 || N == 0 || H == 0) return {};
  const Level lv = lstm_level();
  dispatch_real(dt, [&](auto tag) {
    using S = decltype(tag);
    const int L = vector_bytes(lv) / static_cast<int>(sizeof(S)), R = tile_rows(lv);
    const int64_t panels = (H + 4 * L - 1) / (4 * L);
    Tensor packed = empty({panels * 4 * H * 4 * L}, dt);
    pack_backward(w_hh->data<S>(), H, L, packed->data<S>());
    const int64_t gate_step = N * 4 * H, state_step = N * H;
    // time steps in backward order: order(0) ran last in the forward
    auto order = [&](int64_t i) { return reverse ? i : steps - 1 - i; };
    BackwardStep<S> s{};
    s.wb = packed->data<S>();
    s.dh = dh->data<S>();
    s.dc = dc->data<S>();
    s.N = N;
    s.H = H;
    s.row_blocks = (N + R - 1) / R;
    // i = -1: no product, the cell backward of order(0); i >= 0: the product of order(i)'s
    // gate gradients, then the cell backward of order(i + 1) (none after the last)
    for (int64_t i = -1; i < steps; ++i) {
      s.dg = i < 0 ? nullptr : d_gates->data<S>() + order(i) * gate_step;
      s.acts = nullptr;
      if (i + 1 < steps) {
        const int64_t t = order(i + 1), before = reverse ? t + 1 : t - 1;
        s.acts = acts->data<S>() + t * gate_step;
        s.c = cells->data<S>() + t * state_step;
        s.c_prev = i + 2 == steps ? c0->data<S>() : cells->data<S>() + before * state_step;
        s.d_out = d_outs ? d_outs->data<S>() + t * state_step : nullptr;
        s.dg_prev = d_gates->data<S>() + t * gate_step;
      }
      run_step<S>(lv, s, panels, s.dg ? int64_t{R} * 4 * L * 4 * H : int64_t{R} * 4 * L * 8);
    }
  });
  for (const Tensor* t : {&dh, &dc, &d_gates}) (*t)->storage()->bump_version();
  return {};
}

}  // namespace ember::cpu
