// Convolution algorithm study: times forward, backward-data and backward-weights of
//   im2col+GEMM (Ember's scheme: single-threaded OpenBLAS sgemm tiles over 2 threads, and
//   plain OpenBLAS with its own 2 threads), a blocked direct convolution, Winograd F(2x2,3x3)
//   (3x3 stride 1 only), and oneDNN (when built with -DHAVE_DNNL)
// on float32 NCHW tensors. One JSON object per measurement on stdout; with --dump DIR, the
// inputs and every result are written as raw float32 files for run_study.py to check
// against PyTorch. Bias is left out everywhere (it is a broadcast add / a reduction).
//
//   conv_bench --algos im2col_ember,im2col_blas2t,direct,winograd,onednn --threads 2
//              [--shapes NAME,...] [--target-s 0.25] [--dump DIR] | --peak
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#ifdef HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

extern "C" {
void scipy_cblas_sgemm(int order, int transa, int transb, int m, int n, int k, float alpha, const float* a,
                       int lda, const float* b, int ldb, float beta, float* c, int ldc);
void scipy_openblas_set_num_threads(int n);
}
namespace {
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

int g_threads = 2;

// ---------------------------------------------------------------- shapes and buffers
struct Conv {
  std::string name;
  int N, C, H, W, O, kh, kw, s, p;
  int oh() const { return (H + 2 * p - kh) / s + 1; }
  int ow() const { return (W + 2 * p - kw) / s + 1; }
  double flops() const { return 2.0 * N * O * oh() * ow() * C * kh * kw; }
  size_t nx() const { return size_t(N) * C * H * W; }
  size_t nw() const { return size_t(O) * C * kh * kw; }
  size_t ny() const { return size_t(N) * O * oh() * ow(); }
};

const std::vector<Conv> kShapes = {
    {"c64_k3_n16_32x32", 16, 64, 32, 32, 64, 3, 3, 1, 1},
    {"lenet1_c1to6_k5", 64, 1, 28, 28, 6, 5, 5, 1, 0},
    {"lenet2_c6to16_k5", 64, 6, 12, 12, 16, 5, 5, 1, 0},
    {"c16to32_k3_n32_32x32", 32, 16, 32, 32, 32, 3, 3, 1, 1},
    {"c32_k3_s2_n32_32x32", 32, 32, 32, 32, 32, 3, 3, 2, 1},
    {"c256to64_k1_n16_16x16", 16, 256, 16, 16, 64, 1, 1, 1, 0},
};

template <typename T> struct Buf {  // 64-byte aligned, uninitialised
  T* p = nullptr;
  size_t n = 0;
  Buf() = default;
  explicit Buf(size_t n_) : n(n_) { p = static_cast<T*>(std::aligned_alloc(64, ((n * sizeof(T) + 63) / 64 + 1) * 64)); }
  Buf(const Buf&) = delete;
  Buf& operator=(Buf&& o) noexcept { std::swap(p, o.p); std::swap(n, o.n); return *this; }
  ~Buf() { std::free(p); }
  T* data() { return p; }
  void zero() { std::memset(p, 0, n * sizeof(T)); }
};
using FBuf = Buf<float>;

struct Stat { double med_ms, min_ms; int reps; };

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double g_target_s = 0.25;

Stat timeit(const std::function<void()>& f) {
  f();
  f();  // warm-up (first-touch, JIT, caches)
  double t0 = now_s();
  f();
  double one = now_s() - t0;
  int reps = std::clamp(int(g_target_s / std::max(one, 1e-6)), 7, 400);
  std::vector<double> ts(reps);
  for (int r = 0; r < reps; ++r) {
    double a = now_s();
    f();
    ts[r] = (now_s() - a) * 1e3;
  }
  std::sort(ts.begin(), ts.end());
  return {ts[reps / 2], ts[0], reps};
}

std::string g_dump;
void dump(const Conv& cv, const std::string& what, const float* p, size_t n) {
  if (g_dump.empty()) return;
  std::string path = g_dump + "/" + cv.name + "." + what + ".f32";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) { std::perror(path.c_str()); std::exit(1); }
  std::fwrite(p, sizeof(float), n, f);
  std::fclose(f);
}

void report(const Conv& cv, const std::string& algo, const char* pass, const Stat& st, const std::string& note = "") {
  std::printf("{\"shape\": \"%s\", \"algo\": \"%s\", \"pass\": \"%s\", \"ms\": %.5f, \"ms_min\": %.5f, \"reps\": %d, "
              "\"gflops\": %.2f, \"note\": \"%s\"}\n",
              cv.name.c_str(), algo.c_str(), pass, st.med_ms, st.min_ms, st.reps, cv.flops() / (st.med_ms * 1e6),
              note.c_str());
  std::fflush(stdout);
}

// ---------------------------------------------------------------- im2col / col2im (as in Ember)
void im2col(const float* img, float* cols, const Conv& g) {
  const int oh = g.oh(), ow = g.ow(), L = oh * ow, planes = g.N * g.C;
#pragma omp parallel for schedule(static)
  for (int pl = 0; pl < planes; ++pl) {
    const float* src = img + size_t(pl) * g.H * g.W;
    float* dst = cols + size_t(pl) * g.kh * g.kw * L;
    for (int i = 0; i < g.kh; ++i)
      for (int j = 0; j < g.kw; ++j, dst += L)
        for (int y = 0; y < oh; ++y) {
          const int sy = y * g.s - g.p + i;
          float* row = dst + y * ow;
          if (sy < 0 || sy >= g.H) { std::fill(row, row + ow, 0.f); continue; }
          const float* line = src + sy * g.W;
          const int off = j - g.p;
          if (g.s == 1) {
            const int lo = std::clamp(-off, 0, ow), hi = std::clamp(g.W - off, lo, ow);
            std::fill(row, row + lo, 0.f);
            std::copy(line + lo + off, line + hi + off, row + lo);
            std::fill(row + hi, row + ow, 0.f);
          } else {
            for (int x = 0; x < ow; ++x) {
              const int sx = x * g.s + off;
              row[x] = sx >= 0 && sx < g.W ? line[sx] : 0.f;
            }
          }
        }
  }
}

void col2im(const float* cols, float* img, const Conv& g) {
  const int oh = g.oh(), ow = g.ow(), L = oh * ow, planes = g.N * g.C;
#pragma omp parallel for schedule(static)
  for (int pl = 0; pl < planes; ++pl) {
    float* dst = img + size_t(pl) * g.H * g.W;
    std::fill(dst, dst + g.H * g.W, 0.f);
    const float* src = cols + size_t(pl) * g.kh * g.kw * L;
    for (int i = 0; i < g.kh; ++i)
      for (int j = 0; j < g.kw; ++j, src += L)
        for (int y = 0; y < oh; ++y) {
          const int sy = y * g.s - g.p + i;
          if (sy < 0 || sy >= g.H) continue;
          float* line = dst + sy * g.W;
          const float* row = src + y * ow;
          const int off = j - g.p;
          for (int x = 0; x < ow; ++x) {
            const int sx = x * g.s + off;
            if (sx >= 0 && sx < g.W) line[sx] += row[x];
          }
        }
  }
}

// ---------------------------------------------------------------- Ember's batched GEMM split
// C[b] (M x N, contiguous) = op(A[b]) @ op(B[b]) with single-threaded OpenBLAS calls spread
// over g_threads threads by the same rules as linalg.cpp's gemm_blas.
void ember_gemm(int nbatch, bool ta, bool tb, int M, int N, int K, const float* a, size_t sa, int lda,
                const float* b, size_t sb, int ldb, float* c) {
  constexpr int64_t kSmallGemm = 64 * 64 * 64, kBatchedGemm = 256 * 256 * 256;
  auto one = [&](int bt, int r0, int r1, int c0, int c1) {
    const float* A = a + bt * sa + size_t(r0) * (ta ? 1 : lda);
    const float* B = b + bt * sb + size_t(c0) * (tb ? ldb : 1);
    float* C = c + size_t(bt) * M * N + size_t(r0) * N + c0;
    scipy_cblas_sgemm(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, r1 - r0, c1 - c0, K, 1.f, A, lda,
                      B, ldb, 0.f, C, N);
  };
  const int64_t work = int64_t(M) * N * K;
  const int threads = g_threads;
  if (nbatch > 1 && (work <= kSmallGemm || (work <= kBatchedGemm && nbatch >= threads))) {
#pragma omp parallel for schedule(static)
    for (int bt = 0; bt < nbatch; ++bt) one(bt, 0, M, 0, N);
    return;
  }
  const bool by_rows = M >= N;
  const int64_t side = by_rows ? M : N;
  int64_t tiles = 1;
  if (threads > 1 && work > kSmallGemm) {
    tiles = std::min<int64_t>({int64_t{4} * threads, work / kSmallGemm, (side + 15) / 16});
    if (tiles > threads) tiles -= tiles % threads;
    tiles = std::max<int64_t>(tiles, 1);
  }
  const int64_t span = ((side + tiles - 1) / tiles + 15) / 16 * 16;
  tiles = (side + span - 1) / span;
  for (int bt = 0; bt < nbatch; ++bt) {
    if (tiles == 1) { one(bt, 0, M, 0, N); continue; }
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < tiles; ++t) {
      const int lo = int(t * span), hi = int(std::min(side, (t + 1) * span));
      if (by_rows) one(bt, lo, hi, 0, N); else one(bt, 0, M, lo, hi);
    }
  }
}

// ---------------------------------------------------------------- im2col + GEMM, both ways
struct Data { FBuf x, w, gy; };

void run_im2col(const Conv& g, Data& d, bool ember) {
  const int K = g.C * g.kh * g.kw, L = g.oh() * g.ow(), O = g.O, N = g.N;
  FBuf cols(size_t(N) * K * L), y(g.ny()), gx(g.nx()), gw(g.nw()), tmp(size_t(N) * O * K);
  const std::string algo = ember ? "im2col_ember" : "im2col_blas2t";
  scipy_openblas_set_num_threads(ember ? 1 : g_threads);
  auto fwd = [&] {
    im2col(d.x.data(), cols.data(), g);
    if (ember) {
      ember_gemm(N, false, false, O, L, K, d.w.data(), 0, K, cols.data(), size_t(K) * L, L, y.data());
    } else {
      for (int n = 0; n < N; ++n)
        scipy_cblas_sgemm(kRowMajor, kNoTrans, kNoTrans, O, L, K, 1.f, d.w.data(), K, cols.data() + size_t(n) * K * L,
                          L, 0.f, y.data() + size_t(n) * O * L, L);
    }
  };
  auto bwd_data = [&] {
    if (ember) {
      ember_gemm(N, true, false, K, L, O, d.w.data(), 0, K, d.gy.data(), size_t(O) * L, L, cols.data());
    } else {
      for (int n = 0; n < N; ++n)
        scipy_cblas_sgemm(kRowMajor, kTrans, kNoTrans, K, L, O, 1.f, d.w.data(), K, d.gy.data() + size_t(n) * O * L, L,
                          0.f, cols.data() + size_t(n) * K * L, L);
    }
    col2im(cols.data(), gx.data(), g);
  };
  auto bwd_weight = [&] {
    im2col(d.x.data(), cols.data(), g);  // Ember recomputes the columns in backward
    if (ember) {  // batched (N, O, K) products, then .sum(0)
      ember_gemm(N, false, true, O, K, L, d.gy.data(), size_t(O) * L, L, cols.data(), size_t(K) * L, L, tmp.data());
      const int64_t OK = int64_t(O) * K;
#pragma omp parallel for schedule(static)
      for (int64_t e = 0; e < OK; ++e) {
        float s = 0.f;
        for (int n = 0; n < N; ++n) s += tmp.data()[n * OK + e];
        gw.data()[e] = s;
      }
    } else {  // accumulate over the batch with beta = 1
      for (int n = 0; n < N; ++n)
        scipy_cblas_sgemm(kRowMajor, kNoTrans, kTrans, O, K, L, 1.f, d.gy.data() + size_t(n) * O * L, L,
                          cols.data() + size_t(n) * K * L, L, n ? 1.f : 0.f, gw.data(), K);
    }
  };
  report(g, algo, "fwd", timeit(fwd));
  dump(g, algo + ".fwd", y.data(), y.n);
  report(g, algo, "bwd_data", timeit(bwd_data));
  dump(g, algo + ".bwd_data", gx.data(), gx.n);
  report(g, algo, "bwd_weight", timeit(bwd_weight));
  dump(g, algo + ".bwd_weight", gw.data(), gw.n);
  scipy_openblas_set_num_threads(1);
}

// ---------------------------------------------------------------- direct convolution
// Vectorised over output width: 16-float vectors (AVX-512 zmm with -march=native), register
// tile of OCB output channels x RY output rows x XV vectors. The input is first laid out
// zero-padded and split into `s` column phases (phase q holds padded columns q, q+s, ...),
// so that every tap of a strided convolution is a contiguous unaligned load.
typedef float v16 __attribute__((vector_size(64)));
typedef float v16u __attribute__((vector_size(64), aligned(4)));
inline v16 ld(const float* p) { return *reinterpret_cast<const v16u*>(p); }
inline void st(float* p, v16 v) { *reinterpret_cast<v16u*>(p) = v; }

struct Prep {  // phase-split padded planes: [planes][s][Hp][Wq]
  int S, Hp, Wq;
  size_t plane() const { return size_t(S) * Hp * Wq; }
};

// Output tile geometry of the direct kernel: ohr x owr (owr a multiple of 16, ohr of RY).
struct DirectGeom {
  int Cin, Cout, kh, kw, s, oh, ow, ohr, owr;
  Prep pr;
};

template <int OCB, int RY, int XV>
void direct_tile(const float* in, const float* wt, float* out, const DirectGeom& g, int y0, int x0) {
  v16 acc[OCB][RY][XV];
  for (int o = 0; o < OCB; ++o)
    for (int r = 0; r < RY; ++r)
      for (int v = 0; v < XV; ++v) acc[o][r][v] = v16{} ;
  const int Wq = g.pr.Wq, Hp = g.pr.Hp, S = g.pr.S;
  size_t joff[16];  // tap j's offset: its column phase plane and the column within it
  for (int j = 0; j < g.kw && j < 16; ++j) joff[j] = size_t(j % S) * Hp * Wq + j / S;
  for (int c = 0; c < g.Cin; ++c) {
    for (int i = 0; i < g.kh; ++i) {
      const float* rowp = in + (size_t(c) * S * Hp + y0 * g.s + i) * Wq + x0;
      for (int j = 0; j < g.kw; ++j) {
        const float* base = rowp + joff[j];
        const float* wp = wt + ((size_t(c) * g.kh + i) * g.kw + j) * OCB;
        v16 xin[RY][XV];
        for (int r = 0; r < RY; ++r)
          for (int v = 0; v < XV; ++v) xin[r][v] = ld(base + r * g.s * Wq + v * 16);
        for (int o = 0; o < OCB; ++o) {
          const v16 wv = v16{} + wp[o];
          for (int r = 0; r < RY; ++r)
            for (int v = 0; v < XV; ++v) acc[o][r][v] += wv * xin[r][v];
        }
      }
    }
  }
  for (int o = 0; o < OCB; ++o)
    for (int r = 0; r < RY; ++r)
      for (int v = 0; v < XV; ++v) st(out + (size_t(o) * g.ohr + y0 + r) * g.owr + x0 + v * 16, acc[o][r][v]);
}

using TileFn = void (*)(const float*, const float*, float*, const DirectGeom&, int, int);

struct TilePick { TileFn fn; int ocb, ry, xv; };

template <int OCB> TilePick pick_ryxv(int xv_total, int ohr_hint) {
  // widest tile of at most 24 accumulators
  if (xv_total % 2 == 0 && OCB * 2 <= 24) {
    if (OCB * 4 <= 24 && ohr_hint % 2 == 0) return {direct_tile<OCB, 2, 2>, OCB, 2, 2};
    return {direct_tile<OCB, 1, 2>, OCB, 1, 2};
  }
  if (OCB * 3 <= 24 && ohr_hint % 3 == 0) return {direct_tile<OCB, 3, 1>, OCB, 3, 1};
  if (OCB * 2 <= 24) return {direct_tile<OCB, 2, 1>, OCB, 2, 1};
  return {direct_tile<OCB, 1, 1>, OCB, 1, 1};
}

TilePick pick_tile(int Cout, int xv_total, int oh) {
  int ocb = 1;
  for (int cand : {8, 6, 4, 2, 1})
    if (Cout % cand == 0) { ocb = cand; break; }
  // rows per tile: prefer the one that wastes fewest padded rows
  int hint = (oh % 3 == 0 || (oh % 2 != 0 && (oh + 2) / 3 * 3 - oh < (oh + 1) / 2 * 2 - oh)) ? 3 : 2;
  switch (ocb) {
    case 8: return pick_ryxv<8>(xv_total, hint);
    case 6: return pick_ryxv<6>(xv_total, hint);
    case 4: return pick_ryxv<4>(xv_total, hint);
    case 2: return pick_ryxv<2>(xv_total, hint);
    default: return pick_ryxv<1>(xv_total, hint);
  }
}

// Direct convolution engine for one geometry: the weight re-layout, the (phase-split, padded)
// input preparation and the tiled output are its parts. Used for forward (input x) and for
// backward-data (input = zero-inserted, fully padded grad_out; flipped, transposed weight).
struct DirectConv {
  DirectGeom g;
  TilePick tp;
  int N;
  FBuf prep, wt, outp;
  DirectConv(int N_, int Cin, int Cout, int kh, int kw, int s, int oh, int ow) : N(N_) {
    g.Cin = Cin; g.Cout = Cout; g.kh = kh; g.kw = kw; g.s = s; g.oh = oh; g.ow = ow;
    g.owr = (ow + 15) / 16 * 16;
    tp = pick_tile(Cout, g.owr / 16, oh);
    g.ohr = (oh + tp.ry - 1) / tp.ry * tp.ry;
    g.pr.S = s;
    g.pr.Hp = (g.ohr - 1) * s + kh;
    g.pr.Wq = g.owr + (kw - 1) / s + 1;
    prep = FBuf(size_t(N) * Cin * g.pr.plane());
    wt = FBuf(size_t(Cout) * Cin * kh * kw);
    outp = FBuf(size_t(N) * Cout * g.ohr * g.owr);
  }
  // w[o][c][i][j] (flip: w[c][o][kh-1-i][kw-1-j], i.e. the weight of the adjoint) -> [ob][c][i][j][OCB]
  void layout_weight(const float* w, bool adjoint) {
    const int OCB = tp.ocb, KK = g.kh * g.kw;
#pragma omp parallel for schedule(static)
    for (int o = 0; o < g.Cout; ++o)
      for (int c = 0; c < g.Cin; ++c)
        for (int k = 0; k < KK; ++k) {
          const float v = adjoint ? w[(size_t(c) * g.Cout + o) * KK + (KK - 1 - k)] : w[(size_t(o) * g.Cin + c) * KK + k];
          wt.data()[((size_t(o / OCB) * g.Cin + c) * KK + k) * OCB + o % OCB] = v;
        }
  }
  // Input planes (N*Cin of Hi x Wi) placed at padded position (y*ins + off, x*ins + off)
  // (ins > 1: zero insertion for the adjoint of a strided convolution), phase-split.
  void prepare(const float* src, int Hi, int Wi, int off, int ins) {
    const int S = g.pr.S, Hp = g.pr.Hp, Wq = g.pr.Wq;
    const int planes = N * g.Cin;
#pragma omp parallel for schedule(static)
    for (int pl = 0; pl < planes; ++pl) {
      float* dst = prep.data() + pl * g.pr.plane();
      std::memset(dst, 0, g.pr.plane() * sizeof(float));
      const float* sp = src + size_t(pl) * Hi * Wi;
      for (int y = 0; y < Hi; ++y) {
        const int py = y * ins + off;
        if (py < 0 || py >= Hp) continue;
        for (int x = 0; x < Wi; ++x) {
          const int px = x * ins + off;
          const int q = px % S, xx = px / S;
          if (xx < Wq) dst[(size_t(q) * Hp + py) * Wq + xx] = sp[y * Wi + x];
        }
      }
    }
  }
  void compute(float* out) {
    const int OCB = tp.ocb, nob = g.Cout / OCB, nyt = g.ohr / tp.ry, nxt = g.owr / (16 * tp.xv);
    const int64_t tasks = int64_t(N) * nyt * nxt * nob;
    const bool direct_out = g.ohr == g.oh && g.owr == g.ow;
    float* o_base = direct_out ? out : outp.data();
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < tasks; ++t) {
      const int ob = int(t % nob);  // output-channel blocks innermost: they share the input rows
      int64_t r = t / nob;
      const int xt = int(r % nxt); r /= nxt;
      const int yt = int(r % nyt);
      const int n = int(r / nyt);
      tp.fn(prep.data() + size_t(n) * g.Cin * g.pr.plane(), wt.data() + size_t(ob) * OCB * g.Cin * g.kh * g.kw,
            o_base + (size_t(n) * g.Cout + size_t(ob) * OCB) * g.ohr * g.owr, g, yt * tp.ry, xt * 16 * tp.xv);
    }
    if (!direct_out) {
      const int planes = N * g.Cout;
#pragma omp parallel for schedule(static)
      for (int pl = 0; pl < planes; ++pl)
        for (int y = 0; y < g.oh; ++y)
          std::memcpy(out + (size_t(pl) * g.oh + y) * g.ow, outp.data() + (size_t(pl) * g.ohr + y) * g.owr,
                      g.ow * sizeof(float));
    }
  }
};

// grad_weight[o][c][i][j] = sum_{n,y,x} gy[n][o][y][x] * xpad[n][c][y*s+i][x*s+j]: vectors over
// x, an OCB x KW block of vector accumulators per (output-channel block, c, i), summed at the end.
template <int OCB, int KW>
void dw_task(const float* gyp, const float* prep, float* gw, const Conv& cv, const DirectGeom& g, int ob, int c, int i) {
  v16 acc[OCB][KW];
  for (int o = 0; o < OCB; ++o)
    for (int j = 0; j < KW; ++j) acc[o][j] = v16{};
  const int oh = cv.oh(), owr = g.owr, S = g.pr.S, Hp = g.pr.Hp, Wq = g.pr.Wq;
  for (int n = 0; n < cv.N; ++n) {
    const float* pn = prep + (size_t(n) * cv.C + c) * g.pr.plane();
    const float* gn = gyp + (size_t(n) * cv.O + size_t(ob) * OCB) * oh * owr;
    for (int y = 0; y < oh; ++y) {
      const float* rows[KW];
      for (int j = 0; j < KW; ++j) rows[j] = pn + (size_t(j % S) * Hp + y * cv.s + i) * Wq + j / S;
      for (int x0 = 0; x0 < owr; x0 += 16) {
        v16 xin[KW];
        for (int j = 0; j < KW; ++j) xin[j] = ld(rows[j] + x0);
        for (int o = 0; o < OCB; ++o) {
          const v16 gv = ld(gn + (size_t(o) * oh + y) * owr + x0);
          for (int j = 0; j < KW; ++j) acc[o][j] += gv * xin[j];
        }
      }
    }
  }
  for (int o = 0; o < OCB; ++o)
    for (int j = 0; j < KW; ++j) {
      float s = 0.f;
      for (int l = 0; l < 16; ++l) s += acc[o][j][l];
      gw[((size_t(ob) * OCB + o) * cv.C + c) * cv.kh * cv.kw + i * cv.kw + j] = s;
    }
}

using DwFn = void (*)(const float*, const float*, float*, const Conv&, const DirectGeom&, int, int, int);
template <int KW> std::pair<DwFn, int> pick_dw_kw(int O) {
  for (int cand : {8, 6, 4, 2, 1}) {
    if (O % cand || cand * KW > 24) continue;
    switch (cand) {
      case 8: return {dw_task<8, KW>, 8};
      case 6: return {dw_task<6, KW>, 6};
      case 4: return {dw_task<4, KW>, 4};
      case 2: return {dw_task<2, KW>, 2};
      default: return {dw_task<1, KW>, 1};
    }
  }
  return {dw_task<1, KW>, 1};
}
std::pair<DwFn, int> pick_dw(int kw, int O) {
  switch (kw) {
    case 1: return pick_dw_kw<1>(O);
    case 3: return pick_dw_kw<3>(O);
    case 5: return pick_dw_kw<5>(O);
    default: std::fprintf(stderr, "direct bwd_weight: kw=%d not instantiated\n", kw); std::exit(2);
  }
}

void run_direct(const Conv& cv, Data& d) {
  const int oh = cv.oh(), ow = cv.ow();
  FBuf y(cv.ny()), gx(cv.nx()), gw(cv.nw());
  DirectConv f(cv.N, cv.C, cv.O, cv.kh, cv.kw, cv.s, oh, ow);
  // adjoint: a stride-1 convolution of grad_out, zero-inserted (stride s) and padded by
  // k-1-p, with the flipped, transposed weight
  DirectConv b(cv.N, cv.O, cv.C, cv.kh, cv.kw, 1, cv.H, cv.W);
  char note[160];
  std::snprintf(note, sizeof note, "fwd tile %dx%dx%d; bwd_data tile %dx%dx%d%s", f.tp.ocb, f.tp.ry, f.tp.xv, b.tp.ocb,
                b.tp.ry, b.tp.xv, cv.s > 1 ? " (zero-inserted: s*s x the flops)" : "");
  auto fwd = [&] {
    f.layout_weight(d.w.data(), false);
    f.prepare(d.x.data(), cv.H, cv.W, cv.p, 1);
    f.compute(y.data());
  };
  auto bwd_data = [&] {
    b.layout_weight(d.w.data(), true);
    b.prepare(d.gy.data(), oh, ow, cv.kh - 1 - cv.p, cv.s);
    b.compute(gx.data());
  };
  // grad_out padded to the 16-wide rows; input prepared as for forward
  FBuf gyp(size_t(cv.N) * cv.O * oh * f.g.owr);
  auto [dwfn, docb] = pick_dw(cv.kw, cv.O);
  auto bwd_weight = [&] {
    f.prepare(d.x.data(), cv.H, cv.W, cv.p, 1);
    const int planes = cv.N * cv.O, owr = f.g.owr;
#pragma omp parallel for schedule(static)
    for (int pl = 0; pl < planes; ++pl)
      for (int yy = 0; yy < oh; ++yy) {
        float* dst = gyp.data() + (size_t(pl) * oh + yy) * owr;
        std::memcpy(dst, d.gy.data() + (size_t(pl) * oh + yy) * ow, ow * sizeof(float));
        std::fill(dst + ow, dst + owr, 0.f);
      }
    const int nob = cv.O / docb, tasks = nob * cv.C * cv.kh;
#pragma omp parallel for schedule(dynamic, 1)
    for (int t = 0; t < tasks; ++t) {
      const int i = t % cv.kh, c = (t / cv.kh) % cv.C, ob = t / (cv.kh * cv.C);
      dwfn(gyp.data(), f.prep.data(), gw.data(), cv, f.g, ob, c, i);
    }
  };
  report(cv, "direct", "fwd", timeit(fwd), note);
  dump(cv, "direct.fwd", y.data(), y.n);
  report(cv, "direct", "bwd_data", timeit(bwd_data), note);
  dump(cv, "direct.bwd_data", gx.data(), gx.n);
  std::snprintf(note, sizeof note, "bwd_weight block %dx%d", docb, cv.kw);
  report(cv, "direct", "bwd_weight", timeit(bwd_weight), note);
  dump(cv, "direct.bwd_weight", gw.data(), gw.n);
}

// ---------------------------------------------------------------- Winograd F(2x2, 3x3)
// Y = A^T [ (G g G^T) . (B^T d B) ] A over 4x4 input tiles (stride 2) giving 2x2 outputs.
// Tiles are processed in blocks of TB: input transform into V[16][C][TB], 16 single-threaded
// sgemms U[e] (O x C) @ V[e] -> M[e] (O x TB), output transform; blocks over the threads.
struct Winograd {
  int N, C, O, H, W, p, oh, ow, th, tw;
  FBuf U;
  static constexpr int TB = 128;
  Winograd(int N_, int C_, int O_, int H_, int W_, int p_) : N(N_), C(C_), O(O_), H(H_), W(W_), p(p_) {
    oh = H + 2 * p - 2; ow = W + 2 * p - 2;
    th = (oh + 1) / 2; tw = (ow + 1) / 2;
    U = FBuf(size_t(16) * O * C);
  }
  // weight [O][C][3][3] (adjoint: w[c][o] flipped) -> U[16][O][C]
  void transform_weight(const float* w, bool adjoint) {
#pragma omp parallel for schedule(static)
    for (int o = 0; o < O; ++o)
      for (int c = 0; c < C; ++c) {
        float g[3][3], t[4][3];
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            g[i][j] = adjoint ? w[((size_t(c) * O + o) * 3 + (2 - i)) * 3 + (2 - j)] : w[((size_t(o) * C + c) * 3 + i) * 3 + j];
        for (int j = 0; j < 3; ++j) {  // t = G g
          t[0][j] = g[0][j];
          t[1][j] = 0.5f * (g[0][j] + g[1][j] + g[2][j]);
          t[2][j] = 0.5f * (g[0][j] - g[1][j] + g[2][j]);
          t[3][j] = g[2][j];
        }
        for (int i = 0; i < 4; ++i) {  // U = t G^T
          float u[4] = {t[i][0], 0.5f * (t[i][0] + t[i][1] + t[i][2]), 0.5f * (t[i][0] - t[i][1] + t[i][2]), t[i][2]};
          for (int j = 0; j < 4; ++j) U.data()[(size_t(i * 4 + j) * O + o) * C + c] = u[j];
        }
      }
  }
  void run(const float* x, float* y) {
    const int T = N * th * tw, nblk = (T + TB - 1) / TB;
#pragma omp parallel
    {
      std::vector<float> V(size_t(16) * C * TB), M(size_t(16) * O * TB);
#pragma omp for schedule(static)
      for (int blk = 0; blk < nblk; ++blk) {
        const int t0 = blk * TB, nt = std::min(TB, T - t0);
        for (int c = 0; c < C; ++c)
          for (int tt = 0; tt < nt; ++tt) {
            const int t = t0 + tt, n = t / (th * tw), ty = (t / tw) % th, tx = t % tw;
            const float* src = x + (size_t(n) * C + c) * H * W;
            float d[4][4];
            const int y0 = ty * 2 - p, x0 = tx * 2 - p;
            for (int i = 0; i < 4; ++i)
              for (int j = 0; j < 4; ++j) {
                const int yy = y0 + i, xx = x0 + j;
                d[i][j] = yy >= 0 && yy < H && xx >= 0 && xx < W ? src[yy * W + xx] : 0.f;
              }
            float b[4][4];  // B^T d
            for (int j = 0; j < 4; ++j) {
              b[0][j] = d[0][j] - d[2][j];
              b[1][j] = d[1][j] + d[2][j];
              b[2][j] = d[2][j] - d[1][j];
              b[3][j] = d[1][j] - d[3][j];
            }
            for (int i = 0; i < 4; ++i) {  // (B^T d) B
              const float v[4] = {b[i][0] - b[i][2], b[i][1] + b[i][2], b[i][2] - b[i][1], b[i][1] - b[i][3]};
              for (int j = 0; j < 4; ++j) V[(size_t(i * 4 + j) * C + c) * TB + tt] = v[j];
            }
          }
        for (int e = 0; e < 16; ++e)
          scipy_cblas_sgemm(kRowMajor, kNoTrans, kNoTrans, O, nt, C, 1.f, U.data() + size_t(e) * O * C, C,
                            V.data() + size_t(e) * C * TB, TB, 0.f, M.data() + size_t(e) * O * TB, TB);
        for (int o = 0; o < O; ++o)
          for (int tt = 0; tt < nt; ++tt) {
            const int t = t0 + tt, n = t / (th * tw), ty = (t / tw) % th, tx = t % tw;
            float m[4][4];
            for (int e = 0; e < 16; ++e) m[e / 4][e % 4] = M[(size_t(e) * O + o) * TB + tt];
            float a[2][4];  // A^T m
            for (int j = 0; j < 4; ++j) {
              a[0][j] = m[0][j] + m[1][j] + m[2][j];
              a[1][j] = m[1][j] - m[2][j] - m[3][j];
            }
            float* dst = y + (size_t(n) * O + o) * oh * ow;
            for (int i = 0; i < 2; ++i) {
              const int yy = ty * 2 + i;
              if (yy >= oh) continue;
              const float r0 = a[i][0] + a[i][1] + a[i][2], r1 = a[i][1] - a[i][2] - a[i][3];
              dst[yy * ow + tx * 2] = r0;
              if (tx * 2 + 1 < ow) dst[yy * ow + tx * 2 + 1] = r1;
            }
          }
      }
    }
  }
};

void run_winograd(const Conv& cv, Data& d) {
  if (cv.kh != 3 || cv.kw != 3 || cv.s != 1) return;
  scipy_openblas_set_num_threads(1);
  FBuf y(cv.ny()), gx(cv.nx());
  Winograd f(cv.N, cv.C, cv.O, cv.H, cv.W, cv.p);
  Winograd b(cv.N, cv.O, cv.C, cv.oh(), cv.ow(), 2 - cv.p);  // adjoint: pad k-1-p
  auto fwd = [&] { f.transform_weight(d.w.data(), false); f.run(d.x.data(), y.data()); };
  auto bwd_data = [&] { b.transform_weight(d.w.data(), true); b.run(d.gy.data(), gx.data()); };
  report(cv, "winograd", "fwd", timeit(fwd), "F(2x2,3x3), GFLOP/s counted as direct flops");
  dump(cv, "winograd.fwd", y.data(), y.n);
  report(cv, "winograd", "bwd_data", timeit(bwd_data), "F(2x2,3x3), GFLOP/s counted as direct flops");
  dump(cv, "winograd.bwd_data", gx.data(), gx.n);
}

// ---------------------------------------------------------------- oneDNN
#ifdef HAVE_DNNL
std::string md_str(const dnnl::memory::desc& md) {
  // inner blocking, e.g. "blk:1x16" (channel block 16); "plain" for none
  auto blks = md.get_inner_blks();
  auto idxs = md.get_inner_idxs();
  if (blks.empty()) return "plain";
  std::string s = "blk:";
  for (size_t k = 0; k < blks.size(); ++k) s += std::to_string(idxs[k]) + "x" + std::to_string(blks[k]) + (k + 1 < blks.size() ? "," : "");
  return s;
}

void run_onednn(const Conv& cv, Data& d, bool winograd_too) {
  using namespace dnnl;
  using dt = memory::data_type;
  using tag = memory::format_tag;
  static engine eng(engine::kind::cpu, 0);
  static stream strm(eng);
  const memory::dims xd{cv.N, cv.C, cv.H, cv.W}, wd{cv.O, cv.C, cv.kh, cv.kw}, yd{cv.N, cv.O, cv.oh(), cv.ow()};
  const memory::dims strides{cv.s, cv.s}, pad{cv.p, cv.p};
  memory::desc x_any(xd, dt::f32, tag::any), w_any(wd, dt::f32, tag::any), y_any(yd, dt::f32, tag::any);
  memory::desc x_user(xd, dt::f32, tag::nchw), w_user(wd, dt::f32, tag::oihw), y_user(yd, dt::f32, tag::nchw);
  FBuf y(cv.ny()), gx(cv.nx()), gw(cv.nw());
  memory ux(x_user, eng, d.x.data()), uw(w_user, eng, d.w.data()), ugy(y_user, eng, d.gy.data());
  memory uy(y_user, eng, y.data()), ugx(x_user, eng, gx.data()), ugw(w_user, eng, gw.data());

  auto fpd = convolution_forward::primitive_desc(eng, prop_kind::forward_training, algorithm::convolution_direct,
                                                 x_any, w_any, y_any, strides, pad, pad);
  auto dpd = convolution_backward_data::primitive_desc(eng, algorithm::convolution_direct, x_any, w_any, y_any,
                                                       strides, pad, pad, fpd);
  auto wpd = convolution_backward_weights::primitive_desc(eng, algorithm::convolution_direct, x_any, w_any, y_any,
                                                          strides, pad, pad, fpd);
  // memory in the formats each primitive wants, plus the reorders from/to NCHW
  struct Arg { memory mem; bool needs; };
  auto want = [&](const memory::desc& md, memory& user) {
    return Arg{md == user.get_desc() ? user : memory(md, eng), md != user.get_desc()};
  };
  auto rd = [&](memory& from, memory& to) { reorder(from, to).execute(strm, from, to); };

  // forward
  Arg fx = want(fpd.src_desc(), ux), fw = want(fpd.weights_desc(), uw), fy = want(fpd.dst_desc(), uy);
  convolution_forward fprim(fpd);
  auto fwd_core = [&] {
    fprim.execute(strm, {{DNNL_ARG_SRC, fx.mem}, {DNNL_ARG_WEIGHTS, fw.mem}, {DNNL_ARG_DST, fy.mem}});
    strm.wait();
  };
  auto fwd_full = [&] {
    if (fx.needs) rd(ux, fx.mem);
    if (fw.needs) rd(uw, fw.mem);
    fprim.execute(strm, {{DNNL_ARG_SRC, fx.mem}, {DNNL_ARG_WEIGHTS, fw.mem}, {DNNL_ARG_DST, fy.mem}});
    if (fy.needs) rd(fy.mem, uy);
    strm.wait();
  };
  fwd_full();  // fills the native buffers once
  std::string note = std::string(fpd.impl_info_str()) + " src " + md_str(fpd.src_desc()) + " wei " +
                     md_str(fpd.weights_desc()) + " dst " + md_str(fpd.dst_desc());
  report(cv, "onednn", "fwd", timeit(fwd_core), note);
  report(cv, "onednn+reorder", "fwd", timeit(fwd_full), note);
  dump(cv, "onednn.fwd", y.data(), y.n);

  // backward data
  Arg bgy = want(dpd.diff_dst_desc(), ugy), bw = want(dpd.weights_desc(), uw), bgx = want(dpd.diff_src_desc(), ugx);
  convolution_backward_data dprim(dpd);
  auto bd_core = [&] {
    dprim.execute(strm, {{DNNL_ARG_DIFF_DST, bgy.mem}, {DNNL_ARG_WEIGHTS, bw.mem}, {DNNL_ARG_DIFF_SRC, bgx.mem}});
    strm.wait();
  };
  auto bd_full = [&] {
    if (bgy.needs) rd(ugy, bgy.mem);
    if (bw.needs) rd(uw, bw.mem);
    dprim.execute(strm, {{DNNL_ARG_DIFF_DST, bgy.mem}, {DNNL_ARG_WEIGHTS, bw.mem}, {DNNL_ARG_DIFF_SRC, bgx.mem}});
    if (bgx.needs) rd(bgx.mem, ugx);
    strm.wait();
  };
  bd_full();
  note = std::string(dpd.impl_info_str()) + " diff_dst " + md_str(dpd.diff_dst_desc()) + " wei " +
         md_str(dpd.weights_desc()) + " diff_src " + md_str(dpd.diff_src_desc());
  report(cv, "onednn", "bwd_data", timeit(bd_core), note);
  report(cv, "onednn+reorder", "bwd_data", timeit(bd_full), note);
  dump(cv, "onednn.bwd_data", gx.data(), gx.n);

  // backward weights
  Arg wx = want(wpd.src_desc(), ux), wgy = want(wpd.diff_dst_desc(), ugy), wgw = want(wpd.diff_weights_desc(), ugw);
  convolution_backward_weights wprim(wpd);
  auto bw_core = [&] {
    wprim.execute(strm, {{DNNL_ARG_SRC, wx.mem}, {DNNL_ARG_DIFF_DST, wgy.mem}, {DNNL_ARG_DIFF_WEIGHTS, wgw.mem}});
    strm.wait();
  };
  auto bw_full = [&] {
    if (wx.needs) rd(ux, wx.mem);
    if (wgy.needs) rd(ugy, wgy.mem);
    wprim.execute(strm, {{DNNL_ARG_SRC, wx.mem}, {DNNL_ARG_DIFF_DST, wgy.mem}, {DNNL_ARG_DIFF_WEIGHTS, wgw.mem}});
    if (wgw.needs) rd(wgw.mem, ugw);
    strm.wait();
  };
  bw_full();
  note = std::string(wpd.impl_info_str()) + " src " + md_str(wpd.src_desc()) + " diff_dst " +
         md_str(wpd.diff_dst_desc()) + " diff_wei " + md_str(wpd.diff_weights_desc());
  report(cv, "onednn", "bwd_weight", timeit(bw_core), note);
  report(cv, "onednn+reorder", "bwd_weight", timeit(bw_full), note);
  dump(cv, "onednn.bwd_weight", gw.data(), gw.n);

  if (winograd_too && cv.kh == 3 && cv.kw == 3 && cv.s == 1) {
    auto wino = convolution_forward::primitive_desc(eng, prop_kind::forward_training, algorithm::convolution_winograd,
                                                    x_any, w_any, y_any, strides, pad, pad, primitive_attr(), true);
    std::printf("{\"shape\": \"%s\", \"algo\": \"onednn_winograd\", \"available\": %s}\n", cv.name.c_str(),
                wino ? "true" : "false");
  }
}
#endif

// ---------------------------------------------------------------- peak estimate
void run_peak() {
  const int n = 2048;
  FBuf a(size_t(n) * n), b(size_t(n) * n), c(size_t(n) * n);
  for (size_t i = 0; i < a.n; ++i) a.data()[i] = b.data()[i] = 1e-3f * float(i % 97);
  Conv fake{"sgemm_2048", 1, 1, 1, 1, 1, 1, 1, 1, 0};
  for (int thr : {1, g_threads}) {
    scipy_openblas_set_num_threads(thr);
    Stat st = timeit([&] {
      scipy_cblas_sgemm(kRowMajor, kNoTrans, kNoTrans, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
    });
    std::printf("{\"peak\": \"openblas_sgemm_%d\", \"threads\": %d, \"ms\": %.4f, \"gflops\": %.2f}\n", n, thr,
                st.med_ms, 2.0 * n * n * n / (st.med_ms * 1e6));
  }
  (void)fake;
  scipy_openblas_set_num_threads(1);
  // register-only FMA loop: 12 independent 16-float accumulators per thread
  const long iters = 20000000;
  for (int thr : {1, g_threads}) {
    std::vector<double> best(1, 1e30);
    for (int rep = 0; rep < 5; ++rep) {
      float sink = 0.f;
      double t0 = now_s();
#pragma omp parallel num_threads(thr) reduction(+ : sink)
      {
        const v16 m = v16{} + 0.999999f, a = v16{} + 1e-7f;
        v16 a0 = v16{} + 1e-7f, a1 = a0 * 2, a2 = a0 * 3, a3 = a0 * 4, a4 = a0 * 5, a5 = a0 * 6;
        v16 a6 = a0 * 7, a7 = a0 * 8, a8 = a0 * 9, a9 = a0 * 10, a10 = a0 * 11, a11 = a0 * 12;
        for (long it = 0; it < iters; ++it) {
          a0 = a0 * m + a; a1 = a1 * m + a; a2 = a2 * m + a; a3 = a3 * m + a; a4 = a4 * m + a; a5 = a5 * m + a;
          a6 = a6 * m + a; a7 = a7 * m + a; a8 = a8 * m + a; a9 = a9 * m + a; a10 = a10 * m + a; a11 = a11 * m + a;
        }
        v16 acc[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
        for (int k = 0; k < 12; ++k) sink += acc[k][0];
      }
      best[0] = std::min(best[0], now_s() - t0);
      if (sink == 12345.f) std::printf(" ");
    }
    const double gf = 2.0 * 16 * 12 * double(iters) * thr / best[0] / 1e9;
    std::printf("{\"peak\": \"fma_loop\", \"threads\": %d, \"ms\": %.4f, \"gflops\": %.2f}\n", thr, best[0] * 1e3, gf);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string algos = "im2col_ember,im2col_blas2t,direct,winograd", shapes;
  bool peak = false;
  for (int a = 1; a < argc; ++a) {
    std::string k = argv[a];
    auto next = [&] { if (a + 1 >= argc) { std::fprintf(stderr, "missing value for %s\n", k.c_str()); std::exit(2); } return std::string(argv[++a]); };
    if (k == "--algos") algos = next();
    else if (k == "--shapes") shapes = next();
    else if (k == "--threads") g_threads = std::stoi(next());
    else if (k == "--target-s") g_target_s = std::stod(next());
    else if (k == "--dump") g_dump = next();
    else if (k == "--peak") peak = true;
    else { std::fprintf(stderr, "unknown argument %s\n", k.c_str()); return 2; }
  }
  omp_set_num_threads(g_threads);
  scipy_openblas_set_num_threads(1);
  if (peak) { run_peak(); return 0; }
  auto has = [&](const std::string& list, const std::string& x) { return ("," + list + ",").find("," + x + ",") != std::string::npos; };
  for (size_t si = 0; si < kShapes.size(); ++si) {
    const Conv& cv = kShapes[si];
    if (!shapes.empty() && !has(shapes, cv.name)) continue;
    Data d{FBuf(cv.nx()), FBuf(cv.nw()), FBuf(cv.ny())};
    std::mt19937 rng(1234 + unsigned(si));
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (size_t i = 0; i < d.x.n; ++i) d.x.data()[i] = u(rng);
    for (size_t i = 0; i < d.w.n; ++i) d.w.data()[i] = u(rng) / std::sqrt(float(cv.C * cv.kh * cv.kw));
    for (size_t i = 0; i < d.gy.n; ++i) d.gy.data()[i] = u(rng);
    dump(cv, "x", d.x.data(), d.x.n);
    dump(cv, "w", d.w.data(), d.w.n);
    dump(cv, "gy", d.gy.data(), d.gy.n);
    if (has(algos, "im2col_ember")) run_im2col(cv, d, true);
    if (has(algos, "im2col_blas2t")) run_im2col(cv, d, false);
    if (has(algos, "direct")) run_direct(cv, d);
    if (has(algos, "winograd")) run_winograd(cv, d);
#ifdef HAVE_DNNL
    if (has(algos, "onednn")) run_onednn(cv, d, true);
#else
    if (has(algos, "onednn")) { std::fprintf(stderr, "built without oneDNN\n"); return 2; }
#endif
  }
  return 0;
}
