// The FFT engine on Intel MKL's DFTI (compiled where the build found the mkl-static and
// mkl-include wheels: EMBER_HAVE_MKL). MKL is linked statically, sequential, with its symbols
// hidden: no OpenMP runtime to ship, and no thread pool of its own for a forked DataLoader
// worker to inherit dead. Ember's intra-op threads share the work instead:
//
// - a batch of at least as many transforms as threads: whole transforms per thread;
// - an n-D transform of a small batch: one pass per dim, each pass's 1-D transforms (rows,
//   or strided columns) split between the threads;
// - one long 1-D complex transform whose length has a factor r up to 7: split into r
//   transforms of length n / r (one radix-r stage of a decimation in frequency), which the
//   threads compute side by side.
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

namespace ember::fft::mkl {
namespace {

enum class Kind { C2C, R2C, C2R };

void check(MKL_LONG status, const char* what) {
  if (status != 0 && !DftiErrorClass(status, DFTI_NO_ERROR)) {
    throw std::runtime_error(std::string("fft: MKL ") + what + " failed: " + DftiErrorMessage(status));
  }
}

// One batched transform: `howmany` signals of sizes n. For C2C of one dim, `stride` and `dist`
// (elements) place the signals anywhere (columns of a matrix: stride = row length, dist = 1);
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
  auto key() const { return std::tie(kind, dbl, n, howmany, stride, dist, inplace, scale); }
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
      check(DftiSetValue(h_, DFTI_OUTPUT_DISTANCE, dist), "DftiSetValue");
      if (L.stride != 1) {
        MKL_LONG strides[2] = {0, static_cast<MKL_LONG>(L.stride)};
        check(DftiSetValue(h_, DFTI_INPUT_STRIDES, strides), "DftiSetValue");
        check(DftiSetValue(h_, DFTI_OUTPUT_STRIDES, strides), "DftiSetValue");
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
// in place, split between the threads by (outer, column block).
template <typename R>
void columns_c2c(Complex<R>* data, int64_t outer, int64_t len, int64_t inner, bool forward, int64_t threads) {
  if (inner == 1) {  // contiguous rows
    split(outer, threads, [&](int64_t first, int64_t count) {
      compute({Kind::C2C, std::is_same_v<R, double>, {len}, count, 1, len, true, 1.0}, forward, data + first * len,
              nullptr);
    });
    return;
  }
  // blocks of at least 16 columns (MKL vectorises across them), one per thread
  const int64_t width = std::max<int64_t>(16, (outer * inner + threads - 1) / threads);
  const int64_t blocks = (inner + width - 1) / width;
  parallel_for(0, outer * blocks, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / blocks, first = (t % blocks) * width, count = std::min(width, inner - first);
      compute({Kind::C2C, std::is_same_v<R, double>, {len}, count, inner, 1, true, 1.0}, forward,
              data + o * len * inner + first, nullptr);
    }
  });
}

template <typename R> void scale_by(Complex<R>* x, int64_t count, R scale) {
  if (scale == R(1)) return;
  parallel_for(0, count, kParallelGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) x[i] = Complex<R>(x[i].re * scale, x[i].im * scale);
  });
}

// The smallest prime factor of n if it is at most 7, else 0.
int64_t small_radix(int64_t n) {
  for (int64_t p : {2, 3, 5, 7}) {
    if (n % p == 0) return p;
  }
  return 0;
}

// w_n^(j s) for s in [1, r) and j in [0, n / r), s-major: the twiddles of radix_split,
// computed once per (n, r, direction, precision) in double and kept.
template <typename R>
std::shared_ptr<const std::vector<Complex<R>>> split_twiddles(int64_t n, int64_t r, bool forward) {
  static std::mutex mu;
  static std::map<std::tuple<int64_t, int64_t, bool>, std::shared_ptr<const std::vector<Complex<R>>>> cache;
  const auto key = std::make_tuple(n, r, forward);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  const int64_t m = n / r;
  const double sign = forward ? -1.0 : 1.0;
  auto tw = std::make_shared<std::vector<Complex<R>>>(static_cast<size_t>((r - 1) * m));
  parallel_for(0, m, 4096, [&](int64_t b, int64_t e) {
    for (int64_t s = 1; s < r; ++s) {
      for (int64_t j = b; j < e; ++j) {
        const double a = sign * 2.0 * M_PI * static_cast<double>((j * s) % n) / static_cast<double>(n);
        (*tw)[static_cast<size_t>((s - 1) * m + j)] = Complex<R>(static_cast<R>(std::cos(a)), static_cast<R>(std::sin(a)));
      }
    }
  });
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 8) cache.clear();
  cache[key] = tw;
  return tw;
}

// One long 1-D transform split into r independent ones of length m = n / r (the first stage
// of a decimation in frequency): y_s[j] = w_n^(j s) sum_q x[j + q m] w_r^(q s) for each s < r,
// Y_s = DFT_m(y_s) on the threads side by side, and X[r k + s] = Y_s[k].
template <typename R>
void radix_split(const Complex<R>* in, Complex<R>* out, int64_t n, int64_t r, bool forward, R scale) {
  const bool dbl = std::is_same_v<R, double>;
  const int64_t m = n / r;
  const auto tw_holder = split_twiddles<R>(n, r, forward);
  const Complex<R>* tw = tw_holder->data();
  // scratch from the core's allocator, which reuses its blocks (a fresh std::vector would
  // page-fault through n elements on every call)
  const Tensor scratch = empty({n}, dbl ? ScalarType::ComplexDouble : ScalarType::ComplexFloat);
  Complex<R>* y = scratch->data<Complex<R>>();
  Complex<R> wr[49];  // w_r^(q s)
  const double sign = forward ? -1.0 : 1.0;
  for (int64_t q = 0; q < r; ++q) {
    for (int64_t t = 0; t < r; ++t) {
      const double a = sign * 2.0 * M_PI * static_cast<double>((q * t) % r) / static_cast<double>(r);
      wr[q * r + t] = Complex<R>(static_cast<R>(std::cos(a)), static_cast<R>(std::sin(a)));
    }
  }
  parallel_for(0, m, 8192, [&](int64_t b, int64_t e) {
    if (r == 2) {
      const Complex<R>* x0 = in;
      const Complex<R>* x1 = in + m;
      for (int64_t j = b; j < e; ++j) {
        const Complex<R> u = x0[j], v = x1[j];
        y[j] = u + v;
        y[m + j] = (u - v) * tw[j];
      }
      return;
    }
    for (int64_t s = 0; s < r; ++s) {
      for (int64_t j = b; j < e; ++j) {
        Complex<R> acc = in[j];
        for (int64_t q = 1; q < r; ++q) acc = acc + in[j + q * m] * wr[q * r + s];
        y[s * m + j] = s == 0 ? acc : acc * tw[(s - 1) * m + j];
      }
    }
  });
  parallel_for(0, r, 1, [&](int64_t b, int64_t e) {
    for (int64_t s = b; s < e; ++s) {
      compute({Kind::C2C, dbl, {m}, 1, 1, 0, true, static_cast<double>(scale)}, forward, y + s * m, nullptr);
    }
  });
  parallel_for(0, m, 8192, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      for (int64_t s = 0; s < r; ++s) out[r * k + s] = y[s * m + k];
    }
  });
}

}  // namespace

template <typename R>
void c2c(const Complex<R>* in, Complex<R>* out, int64_t batch, const Shape& n, bool forward, R scale) {
  const bool dbl = std::is_same_v<R, double>;
  const int64_t per = numel(n), threads = threads_for(batch * per);
  if (threads == 1 || batch >= threads) {
    split(batch, threads, [&](int64_t first, int64_t count) {
      compute({Kind::C2C, dbl, n, count, 1, 0, false, static_cast<double>(scale)}, forward,
              const_cast<Complex<R>*>(in + first * per), out + first * per);
    });
    return;
  }
  if (n.size() == 1) {  // one or a few long signals
    const int64_t r = small_radix(n[0]);
    for (int64_t b = 0; b < batch; ++b) {
      if (r > 0) {
        radix_split(in + b * per, out + b * per, n[0], r, forward, scale);
      } else {  // no factor up to 7 (a large prime, say): MKL alone
        compute({Kind::C2C, dbl, n, 1, 1, 0, false, static_cast<double>(scale)}, forward,
                const_cast<Complex<R>*>(in + b * per), out + b * per);
      }
    }
    return;
  }
  // an n-D signal: one pass per dim, in place in out
  if (in != out) {
    parallel_for(0, batch * per, kParallelGrain, [&](int64_t b, int64_t e) { std::copy(in + b, in + e, out + b); });
  }
  for (size_t i = n.size(); i-- > 0;) {
    columns_c2c(out, batch * numel(n, 0, i), n[i], numel(n, i + 1), forward, threads);
  }
  scale_by(out, batch * per, scale);
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
    columns_c2c(out, batch * numel(cn, 0, i), cn[i], numel(cn, i + 1), true, threads);
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
