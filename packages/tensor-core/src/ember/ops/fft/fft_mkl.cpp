// The FFT engine on Intel MKL's DFTI (compiled where the build found the mkl-static and
// mkl-include wheels: EMBER_HAVE_MKL). MKL is linked statically, sequential, with its symbols
// hidden: no OpenMP runtime to ship, and no thread pool of its own for a forked DataLoader
// worker to inherit dead. Ember's intra-op threads share the work instead:
//
// - a batch of at least as many transforms as threads: whole transforms per thread;
// - an n-D transform of a small batch: one pass per dim, each pass's 1-D transforms (rows,
//   or strided columns) split between the threads;
// - one long 1-D complex transform (from 1 MB) of a length that is not prime: n1 * n2 short
//   transforms (the four-step FFT, four_step below), each step shared by the threads.
//
// Descriptors are committed once per thread and layout (a thread-local cache): committing one
// costs more than a small transform, and a thread never shares one with another.
#ifdef EMBER_HAVE_MKL
#include <mkl_dfti.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "ember/ops/fft/fft_engine.h"
#include "ember/runtime/parallel.h"
#include "ember/runtime/simd.h"

namespace ember::fft::mkl {
namespace {

enum class Kind { C2C, R2C, C2R };

void check(MKL_LONG status, const char* what) {
  if (status != 0 && !DftiErrorClass(status, DFTI_NO_ERROR)) {
    throw std::runtime_error(std::string("fft: MKL ") + what + " failed: " + DftiErrorMessage(status));
  }
}

// One batched transform: `howmany` signals of sizes n. For C2C of one dim, `stride` and `dist`
// (elements) place the signals anywhere (columns of a matrix: stride = row length, dist = 1),
// and `ostride` / `odist` the results where they differ (0: as the input);
// otherwise the signals are contiguous, one after the other.
struct Layout {
  Kind kind;
  bool dbl;
  Shape n;
  int64_t howmany;
  int64_t stride;
  int64_t dist;
  bool inplace;
  double scale;
  int64_t ostride = 0;
  int64_t odist = 0;
  auto key() const { return std::tie(kind, dbl, n, howmany, stride, dist, inplace, scale, ostride, odist); }
  bool operator<(const Layout& o) const { return key() < o.key(); }
};

class Descriptor {
 public:
  explicit Descriptor(const Layout& L) {
    std::vector<MKL_LONG> lengths(L.n.begin(), L.n.end());
    const auto prec = L.dbl ? DFTI_DOUBLE : DFTI_SINGLE;
    const auto domain = L.kind == Kind::C2C ? DFTI_COMPLEX : DFTI_REAL;
    const MKL_LONG st = lengths.size() == 1
                            ? DftiCreateDescriptor(&h_, prec, domain, 1, lengths[0])
                            : DftiCreateDescriptor(&h_, prec, domain, static_cast<MKL_LONG>(lengths.size()),
                                                   lengths.data());
    check(st, "DftiCreateDescriptor");
    const size_t k = L.n.size();
    int64_t real_total = 1;
    for (int64_t v : L.n) real_total *= v;
    const int64_t half = L.n[k - 1] / 2 + 1;
    check(DftiSetValue(h_, DFTI_PLACEMENT, L.inplace ? DFTI_INPLACE : DFTI_NOT_INPLACE), "DftiSetValue");
    check(DftiSetValue(h_, DFTI_NUMBER_OF_TRANSFORMS, static_cast<MKL_LONG>(L.howmany)), "DftiSetValue");
    if (L.kind == Kind::C2C) {
      const MKL_LONG dist = static_cast<MKL_LONG>(L.dist > 0 ? L.dist : real_total);
      check(DftiSetValue(h_, DFTI_INPUT_DISTANCE, dist), "DftiSetValue");
      check(DftiSetValue(h_, DFTI_OUTPUT_DISTANCE, L.odist > 0 ? static_cast<MKL_LONG>(L.odist) : dist),
            "DftiSetValue");
      const int64_t ostride = L.ostride > 0 ? L.ostride : L.stride;
      if (L.stride != 1 || ostride != 1) {
        MKL_LONG strides[2] = {0, static_cast<MKL_LONG>(L.stride)};
        MKL_LONG ostrides[2] = {0, static_cast<MKL_LONG>(ostride)};
        check(DftiSetValue(h_, DFTI_INPUT_STRIDES, strides), "DftiSetValue");
        check(DftiSetValue(h_, DFTI_OUTPUT_STRIDES, ostrides), "DftiSetValue");
      }
    } else {
      check(DftiSetValue(h_, DFTI_CONJUGATE_EVEN_STORAGE, DFTI_COMPLEX_COMPLEX), "DftiSetValue");
      // strides (elements, offset first) of the real and the one-sided complex layouts
      std::vector<MKL_LONG> rs(k + 1, 0), cs(k + 1, 0);
      MKL_LONG r = 1, c = 1;
      for (size_t i = k; i-- > 0;) {
        rs[i + 1] = r;
        cs[i + 1] = c;
        r *= static_cast<MKL_LONG>(L.n[i]);
        c *= static_cast<MKL_LONG>(i == k - 1 ? half : L.n[i]);
      }
      const bool fwd = L.kind == Kind::R2C;
      check(DftiSetValue(h_, DFTI_INPUT_STRIDES, fwd ? rs.data() : cs.data()), "DftiSetValue");
      check(DftiSetValue(h_, DFTI_OUTPUT_STRIDES, fwd ? cs.data() : rs.data()), "DftiSetValue");
      check(DftiSetValue(h_, DFTI_INPUT_DISTANCE, fwd ? r : c), "DftiSetValue");
      check(DftiSetValue(h_, DFTI_OUTPUT_DISTANCE, fwd ? c : r), "DftiSetValue");
    }
    if (L.scale != 1.0) {
      if (L.dbl) {
        check(DftiSetValue(h_, DFTI_FORWARD_SCALE, L.scale), "DftiSetValue");
        check(DftiSetValue(h_, DFTI_BACKWARD_SCALE, L.scale), "DftiSetValue");
      } else {
        check(DftiSetValue(h_, DFTI_FORWARD_SCALE, static_cast<float>(L.scale)), "DftiSetValue");
        check(DftiSetValue(h_, DFTI_BACKWARD_SCALE, static_cast<float>(L.scale)), "DftiSetValue");
      }
    }
    check(DftiCommitDescriptor(h_), "DftiCommitDescriptor");
  }
  ~Descriptor() { DftiFreeDescriptor(&h_); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  DFTI_DESCRIPTOR_HANDLE get() const { return h_; }

 private:
  DFTI_DESCRIPTOR_HANDLE h_ = nullptr;
};

// This thread's committed descriptor for L.
DFTI_DESCRIPTOR_HANDLE descriptor(const Layout& L) {
  thread_local std::map<Layout, std::unique_ptr<Descriptor>> cache;
  auto it = cache.find(L);
  if (it != cache.end()) return it->second->get();
  if (cache.size() >= 32) cache.clear();
  return cache.emplace(L, std::make_unique<Descriptor>(L)).first->second->get();
}

void compute(const Layout& L, bool forward, void* in, void* out) {
  DFTI_DESCRIPTOR_HANDLE h = descriptor(L);
  if (L.inplace) check(forward ? DftiComputeForward(h, in) : DftiComputeBackward(h, in), "DftiCompute");
  else check(forward ? DftiComputeForward(h, in, out) : DftiComputeBackward(h, in, out), "DftiCompute");
}

int64_t numel(const Shape& n, size_t begin = 0, size_t end = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = begin; i < std::min(end, n.size()); ++i) p *= n[i];
  return p;
}

// How many threads a transform of `total` elements may use (1: run it on this thread).
int64_t threads_for(int64_t total) {
  if (total < kParallelGrain || in_parallel_region()) return 1;
  return get_num_threads();
}

// Runs f(first, count) over [0, items) in at most `parts` contiguous pieces, in parallel.
template <typename F> void split(int64_t items, int64_t parts, F&& f) {
  parts = std::max<int64_t>(1, std::min(parts, items));
  const int64_t size = (items + parts - 1) / parts;
  parallel_for(0, parts, 1, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t first = p * size, count = std::min(size, items - first);
      if (count > 0) f(first, count);
    }
  });
}

// 1-D transforms of length len along the middle dim of data viewed as [outer, len, inner],
// times scale, split between the threads by (outer, column block): in place, or, for
// contiguous rows (inner == 1), from `in` when that is another buffer.
template <typename R>
void columns_c2c(const Complex<R>* in, Complex<R>* data, int64_t outer, int64_t len, int64_t inner, bool forward,
                 int64_t threads, R scale) {
  const bool dbl = std::is_same_v<R, double>;
  if (inner == 1) {  // contiguous rows
    split(outer, threads, [&](int64_t first, int64_t count) {
      compute({Kind::C2C, dbl, {len}, count, 1, len, in == data, static_cast<double>(scale)}, forward,
              const_cast<Complex<R>*>(in + first * len), data + first * len);
    });
    return;
  }
  // blocks of at least 16 columns (MKL vectorises across them), one per thread
  const int64_t width = std::max<int64_t>(16, (outer * inner + threads - 1) / threads);
  const int64_t blocks = (inner + width - 1) / width;
  parallel_for(0, outer * blocks, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / blocks, first = (t % blocks) * width, count = std::min(width, inner - first);
      compute({Kind::C2C, dbl, {len}, count, inner, 1, true, static_cast<double>(scale)}, forward,
              data + o * len * inner + first, nullptr);
    }
  });
}

// The four-step split of a length n = n1 * n2 (n1 the largest divisor of n up to sqrt(n)):
// 1 if n is prime (nothing to split).
int64_t four_step_rows(int64_t n) {
  for (auto d = static_cast<int64_t>(std::sqrt(static_cast<double>(n))); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

// What four_step needs for one (n, direction, precision), computed in double once and kept:
// the split n = n1 * n2, and the twiddles w_n^(k1 j2) without an n-long table to stream
// through: root(e) = lo[e % S] * hi[e / S] (S a power of two about sqrt(n)) gives w_n^e, and
// run[k1][d] = w_n^(k1 d) for d < kRun, so that w_n^(k1 (c + d)) = root(k1 c) * run[k1][d].
template <typename R> struct FourStepPlan {
  static constexpr int64_t kRun = 512 / static_cast<int64_t>(sizeof(Complex<R>));
  int64_t n1, n2;
  int shift;
  std::vector<Complex<R>> lo, hi, run;
  Complex<R> root(int64_t e) const {
    return lo[static_cast<size_t>(e & ((int64_t{1} << shift) - 1))] * hi[static_cast<size_t>(e >> shift)];
  }
};

template <typename R> std::shared_ptr<const FourStepPlan<R>> four_step_plan(int64_t n, bool forward) {
  static std::mutex mu;
  static std::map<std::pair<int64_t, bool>, std::shared_ptr<const FourStepPlan<R>>> cache;
  const auto key = std::make_pair(n, forward);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto plan = std::make_shared<FourStepPlan<R>>();
  plan->n1 = four_step_rows(n);
  plan->n2 = n / plan->n1;
  plan->shift = 0;
  while ((int64_t{1} << (2 * plan->shift)) < n) ++plan->shift;
  const int64_t S = int64_t{1} << plan->shift;
  const double sign = forward ? -2.0 * M_PI / static_cast<double>(n) : 2.0 * M_PI / static_cast<double>(n);
  auto exact = [&](int64_t e) {
    const double a = sign * static_cast<double>(e % n);
    return Complex<R>(static_cast<R>(std::cos(a)), static_cast<R>(std::sin(a)));
  };
  for (int64_t e = 0; e < S; ++e) plan->lo.push_back(exact(e));
  for (int64_t e = 0; e * S < n; ++e) plan->hi.push_back(exact(e * S));
  for (int64_t k1 = 0; k1 < plan->n1; ++k1) {
    for (int64_t d = 0; d < FourStepPlan<R>::kRun; ++d) plan->run.push_back(exact(k1 * d));
  }
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 16) cache.clear();
  cache[key] = plan;
  return plan;
}

// [first, first + count) ranges covering [0, items): one contiguous share per thread (so
// that two threads meet at one place only), each cut into pieces of at most `most`.
std::vector<std::vector<std::pair<int64_t, int64_t>>> shares(int64_t items, int64_t most, int64_t threads) {
  std::vector<std::vector<std::pair<int64_t, int64_t>>> out(static_cast<size_t>(threads));
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t begin = items * t / threads, end = items * (t + 1) / threads;
    const int64_t pieces = (end - begin + most - 1) / most;
    for (int64_t p = 0; p < pieces; ++p) {
      const int64_t b = begin + (end - begin) * p / pieces, e = begin + (end - begin) * (p + 1) / pieces;
      out[static_cast<size_t>(t)].emplace_back(b, e - b);
    }
  }
  return out;
}

// piece[r][j2] = B[k0 + r][j2] * w_n^((k0 + r) j2) for r < rows, j2 < n2 (piece rows ld
// apart), from B held in column pieces (those of `columns`: the piece of columns c0.. of width
// w holds B[k1][c0 + d] at Bc[c0 n1 + k1 w + d]): step 2 of four_step, as the rows are
// gathered into cache for step 3.
template <typename R>
void gather_twiddled(const FourStepPlan<R>& plan, const Complex<R>* Bc,
                     const std::vector<std::pair<int64_t, int64_t>>& columns, int64_t k0, int64_t rows,
                     Complex<R>* piece, int64_t ld) {
  constexpr int64_t W = FourStepPlan<R>::kRun;
  simd_dispatch([&] {
    for (const auto& [c0, w] : columns) {
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t k1 = k0 + r;
        const R* src = reinterpret_cast<const R*>(Bc + c0 * plan.n1 + k1 * w);
        R* dst = reinterpret_cast<R*>(piece + r * ld + c0);
        const R* t = reinterpret_cast<const R*>(plan.run.data() + k1 * W);
        for (int64_t c = 0; c < w; c += W) {
          const Complex<R> base = plan.root(k1 * (c0 + c));
          const R br = base.re, bi = base.im;
          const R* s = src + 2 * c;
          R* o = dst + 2 * c;
          const int64_t m = std::min(W, w - c);
          for (int64_t d = 0; d < m; ++d) {
            const R tr = br * t[2 * d] - bi * t[2 * d + 1], ti = br * t[2 * d + 1] + bi * t[2 * d];
            const R sr = s[2 * d], si = s[2 * d + 1];
            o[2 * d] = sr * tr - si * ti;
            o[2 * d + 1] = sr * ti + si * tr;
          }
        }
      }
    }
  });
}

// dst[r + ld * k] = src[r * src_ld + k] for r < rows, k < cols: step 3's results, transposed
// (at the CPU's best SIMD level: its gathers beat plain moves here, measured).
template <typename R>
void transpose_rows(const Complex<R>* src, int64_t src_ld, int64_t rows, int64_t cols, Complex<R>* dst, int64_t ld) {
  simd_dispatch([&] {
    for (int64_t k = 0; k < cols; ++k) {
      Complex<R>* o = dst + ld * k;
      for (int64_t r = 0; r < rows; ++r) o[r] = src[r * src_ld + k];
    }
  });
}

// One long 1-D transform as n1 * n2 short ones (Bailey's four steps), the threads sharing
// each step. With A[j1][j2] = in[j1 n2 + j2] (n1 rows, n2 columns):
//   1. B = the length-n1 transforms of A's columns: MKL on a few dozen columns at a time,
//      each piece of B written contiguous;
//   2. B[k1][j2] *= w_n^(k1 j2), as a few dozen rows of B are gathered into cache;
//   3. the length-n2 transforms of those rows, in cache, written transposed into
//      out[k1 + n1 k2].
// The data cross the memory twice (in to B, B to out). The pieces in cache have their rows
// padded by a cache line: a power-of-two row length would map a column onto a handful of
// cache sets.
template <typename R>
void four_step(const Complex<R>* in, Complex<R>* out, int64_t n, bool forward, R scale) {
  const bool dbl = std::is_same_v<R, double>;
  const auto plan_holder = four_step_plan<R>(n, forward);
  const FourStepPlan<R>& plan = *plan_holder;
  const int64_t n1 = plan.n1, n2 = plan.n2, threads = get_num_threads();
  const int64_t ld = n2 + 64 / static_cast<int64_t>(sizeof(Complex<R>));
  // columns (rows) per MKL call: 512 bytes of each, in a piece of at most 512 KB, which
  // stays in a core's cache (measured: the sizes matter little, the piece's bound does)
  const int64_t size = static_cast<int64_t>(sizeof(Complex<R>)), most = 512 / size, bytes = int64_t{512} << 10;
  const int64_t columns_most = std::clamp<int64_t>(bytes / (n1 * size), 1, most);
  const int64_t rows_most = std::clamp<int64_t>(bytes / (ld * size), 1, most);
  const auto column_shares = shares(n2, columns_most, threads), row_shares = shares(n1, rows_most, threads);
  std::vector<std::pair<int64_t, int64_t>> columns;
  for (const auto& share : column_shares) columns.insert(columns.end(), share.begin(), share.end());
  // B from the core's allocator, which reuses its blocks (a fresh std::vector would
  // page-fault through it on every call)
  const Tensor scratch = empty({n}, dbl ? ScalarType::ComplexDouble : ScalarType::ComplexFloat);
  Complex<R>* Bc = scratch->data<Complex<R>>();
  parallel_for(0, threads, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      for (const auto& [c0, w] : column_shares[static_cast<size_t>(t)]) {
        compute({Kind::C2C, dbl, {n1}, w, n2, 1, false, 1.0, w, 1}, forward, const_cast<Complex<R>*>(in + c0),
                Bc + c0 * n1);
      }
    }
  });
  parallel_for(0, threads, 1, [&](int64_t b, int64_t e) {
    const Tensor holder = empty({ld * rows_most}, scratch->dtype());
    Complex<R>* piece = holder->data<Complex<R>>();
    for (int64_t t = b; t < e; ++t) {
      for (const auto& [r0, h] : row_shares[static_cast<size_t>(t)]) {
        gather_twiddled(plan, Bc, columns, r0, h, piece, ld);
        compute({Kind::C2C, dbl, {n2}, h, 1, ld, true, static_cast<double>(scale)}, forward, piece, nullptr);
        transpose_rows(piece, ld, h, n2, out + r0, n1);
      }
    }
  });
}

}  // namespace

template <typename R>
void c2c(const Complex<R>* in, Complex<R>* out, int64_t batch, const Shape& n, bool forward, R scale) {
  const bool dbl = std::is_same_v<R, double>;
  const int64_t per = numel(n), threads = threads_for(batch * per);
  // one long 1-D signal (or fewer than threads) of a length that is not prime: four_step;
  // below 1 MB, MKL alone on one thread is faster (measured, docs/fft.md)
  const bool four = n.size() == 1 && per * static_cast<int64_t>(sizeof(Complex<R>)) >= (int64_t{1} << 20) &&
                    four_step_rows(per) > 1;
  if (threads == 1 || batch >= threads || (n.size() == 1 && !four)) {
    split(batch, threads, [&](int64_t first, int64_t count) {
      compute({Kind::C2C, dbl, n, count, 1, 0, false, static_cast<double>(scale)}, forward,
              const_cast<Complex<R>*>(in + first * per), out + first * per);
    });
    return;
  }
  if (four) {
    for (int64_t b = 0; b < batch; ++b) four_step(in + b * per, out + b * per, per, forward, scale);
    return;
  }
  // an n-D signal: one pass per dim, the last dim's rows from in to out, the others in place
  // in out; the scale in the last pass
  const size_t k = n.size();
  columns_c2c(in, out, batch * per / n[k - 1], n[k - 1], 1, forward, threads, R(1));
  for (size_t i = k - 1; i-- > 0;) {
    columns_c2c<R>(out, out, batch * numel(n, 0, i), n[i], numel(n, i + 1), forward, threads, i == 0 ? scale : R(1));
  }
}

template <typename R> void r2c(const R* in, Complex<R>* out, int64_t batch, const Shape& n, R scale) {
  const bool dbl = std::is_same_v<R, double>;
  const int64_t per = numel(n), threads = threads_for(batch * per);
  const int64_t half = n.back() / 2 + 1, cper = per / n.back() * half;
  if (threads == 1 || batch >= threads || n.size() == 1) {
    split(batch, threads, [&](int64_t first, int64_t count) {
      compute({Kind::R2C, dbl, n, count, 1, 0, false, static_cast<double>(scale)}, true,
              const_cast<R*>(in + first * per), out + first * cper);
    });
    return;
  }
  // the rows of the last dim (one-sided), then a complex pass per other dim
  const int64_t rows = batch * (per / n.back());
  split(rows, threads, [&](int64_t first, int64_t count) {
    compute({Kind::R2C, dbl, {n.back()}, count, 1, 0, false, static_cast<double>(scale)}, true,
            const_cast<R*>(in + first * n.back()), out + first * half);
  });
  Shape cn(n.begin(), n.end() - 1);
  cn.push_back(half);
  for (size_t i = cn.size() - 1; i-- > 0;) {
    columns_c2c<R>(out, out, batch * numel(cn, 0, i), cn[i], numel(cn, i + 1), true, threads, R(1));
  }
}

template <typename R> void c2r(Complex<R>* in, R* out, int64_t batch, const Shape& n, R scale) {
  // fft_cpu.cpp hands n-D inverses over as a complex pass and a 1-D one: only the rows here
  const bool dbl = std::is_same_v<R, double>;
  const int64_t per = numel(n), threads = threads_for(batch * per);
  const int64_t cper = per / n.back() * (n.back() / 2 + 1);
  split(batch, threads, [&](int64_t first, int64_t count) {
    compute({Kind::C2R, dbl, n, count, 1, 0, false, static_cast<double>(scale)}, false, in + first * cper,
            out + first * per);
  });
}

EMBER_FFT_INSTANTIATE_TRANSFORMS

}  // namespace ember::fft::mkl
#endif  // EMBER_HAVE_MKL
