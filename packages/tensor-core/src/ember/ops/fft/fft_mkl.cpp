// The FFT engine on Intel MKL's DFTI (compiled where the build found the mkl-static and
// mkl-include wheels: EMBER_HAVE_MKL). MKL is linked statically, sequential (no OpenMP: a
// DataLoader worker forked after an FFT must not inherit a dead thread pool), with its
// symbols hidden; Ember's intra-op threads split a batch between them, each chunk one
// committed descriptor. Descriptors are cached by (kind, precision, sizes, chunk, scale):
// committing one costs more than a small transform.
#ifdef EMBER_HAVE_MKL
#include <mkl_dfti.h>

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "ember/core/errors.h"
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

class Descriptor {
 public:
  Descriptor(Kind kind, bool dbl, const Shape& n, int64_t howmany, double scale) {
    std::vector<MKL_LONG> lengths(n.begin(), n.end());
    const auto prec = dbl ? DFTI_DOUBLE : DFTI_SINGLE;
    const auto domain = kind == Kind::C2C ? DFTI_COMPLEX : DFTI_REAL;
    MKL_LONG st = lengths.size() == 1 ? DftiCreateDescriptor(&h_, prec, domain, 1, lengths[0])
                                      : DftiCreateDescriptor(&h_, prec, domain, static_cast<MKL_LONG>(lengths.size()),
                                                             lengths.data());
    check(st, "DftiCreateDescriptor");
    const int64_t k = static_cast<int64_t>(n.size());
    int64_t real_total = 1;
    for (int64_t v : n) real_total *= v;
    const int64_t half = n[k - 1] / 2 + 1;
    const int64_t complex_total = kind == Kind::C2C ? real_total : real_total / n[k - 1] * half;
    check(DftiSetValue(h_, DFTI_PLACEMENT, DFTI_NOT_INPLACE), "DftiSetValue(PLACEMENT)");
    check(DftiSetValue(h_, DFTI_NUMBER_OF_TRANSFORMS, static_cast<MKL_LONG>(howmany)), "DftiSetValue(TRANSFORMS)");
    if (kind == Kind::C2C) {
      check(DftiSetValue(h_, DFTI_INPUT_DISTANCE, static_cast<MKL_LONG>(real_total)), "DftiSetValue(DISTANCE)");
      check(DftiSetValue(h_, DFTI_OUTPUT_DISTANCE, static_cast<MKL_LONG>(real_total)), "DftiSetValue(DISTANCE)");
    } else {
      check(DftiSetValue(h_, DFTI_CONJUGATE_EVEN_STORAGE, DFTI_COMPLEX_COMPLEX), "DftiSetValue(STORAGE)");
      // strides (element units, offset first) of the real and the one-sided complex layouts
      std::vector<MKL_LONG> rs(static_cast<size_t>(k + 1), 0), cs(static_cast<size_t>(k + 1), 0);
      MKL_LONG r = 1, c = 1;
      for (int64_t i = k - 1; i >= 0; --i) {
        rs[static_cast<size_t>(i + 1)] = r;
        cs[static_cast<size_t>(i + 1)] = c;
        r *= static_cast<MKL_LONG>(n[i]);
        c *= static_cast<MKL_LONG>(i == k - 1 ? half : n[i]);
      }
      const bool fwd = kind == Kind::R2C;
      check(DftiSetValue(h_, DFTI_INPUT_STRIDES, fwd ? rs.data() : cs.data()), "DftiSetValue(INPUT_STRIDES)");
      check(DftiSetValue(h_, DFTI_OUTPUT_STRIDES, fwd ? cs.data() : rs.data()), "DftiSetValue(OUTPUT_STRIDES)");
      check(DftiSetValue(h_, DFTI_INPUT_DISTANCE, static_cast<MKL_LONG>(fwd ? real_total : complex_total)),
            "DftiSetValue(DISTANCE)");
      check(DftiSetValue(h_, DFTI_OUTPUT_DISTANCE, static_cast<MKL_LONG>(fwd ? complex_total : real_total)),
            "DftiSetValue(DISTANCE)");
    }
    if (scale != 1.0) {
      if (dbl) {
        check(DftiSetValue(h_, DFTI_FORWARD_SCALE, scale), "DftiSetValue(SCALE)");
        check(DftiSetValue(h_, DFTI_BACKWARD_SCALE, scale), "DftiSetValue(SCALE)");
      } else {
        check(DftiSetValue(h_, DFTI_FORWARD_SCALE, static_cast<float>(scale)), "DftiSetValue(SCALE)");
        check(DftiSetValue(h_, DFTI_BACKWARD_SCALE, static_cast<float>(scale)), "DftiSetValue(SCALE)");
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

using Key = std::tuple<int, bool, Shape, int64_t, double>;

// A committed descriptor from the cache (a thread computes with it alone: each chunk of a
// parallel batch takes its own, so two chunks never share one).
std::shared_ptr<Descriptor> descriptor(Kind kind, bool dbl, const Shape& n, int64_t howmany, double scale,
                                       int slot) {
  static std::mutex mu;
  static std::map<std::pair<Key, int>, std::shared_ptr<Descriptor>> cache;
  const auto key = std::make_pair(Key{static_cast<int>(kind), dbl, n, howmany, scale}, slot);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end() && it->second.use_count() == 1) return it->second;
  }
  auto d = std::make_shared<Descriptor>(kind, dbl, n, howmany, scale);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 128) cache.clear();
  cache[key] = d;
  return d;
}

// Runs compute(descriptor, first, count) over chunks of the batch, in parallel when the
// batch is large enough to pay for it.
template <typename F>
void over_batch(Kind kind, bool dbl, const Shape& n, int64_t batch, double scale, F&& compute) {
  int64_t per = 1;
  for (int64_t v : n) per *= v;
  const int threads = get_num_threads();
  const int64_t chunks = (batch >= 2 && threads > 1 && batch * per >= kParallelGrain && !in_parallel_region())
                             ? std::min<int64_t>(threads, batch)
                             : 1;
  const int64_t size = (batch + chunks - 1) / chunks;
  parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t first = c * size, count = std::min(size, batch - first);
      if (count <= 0) continue;
      auto d = descriptor(kind, dbl, n, count, scale, static_cast<int>(c));
      compute(d->get(), first, count);
    }
  });
}

int64_t numel(const Shape& n) {
  int64_t p = 1;
  for (int64_t v : n) p *= v;
  return p;
}

int64_t half_numel(const Shape& n) { return numel(n) / n.back() * (n.back() / 2 + 1); }

}  // namespace

template <typename R>
void c2c(const Complex<R>* in, Complex<R>* out, int64_t batch, const Shape& n, bool forward, R scale) {
  const int64_t per = numel(n);
  over_batch(Kind::C2C, std::is_same_v<R, double>, n, batch, scale, [&](DFTI_DESCRIPTOR_HANDLE h, int64_t first,
                                                                          int64_t) {
    void* src = const_cast<Complex<R>*>(in + first * per);
    void* dst = out + first * per;
    check(forward ? DftiComputeForward(h, src, dst) : DftiComputeBackward(h, src, dst), "DftiCompute");
  });
}

template <typename R> void r2c(const R* in, Complex<R>* out, int64_t batch, const Shape& n, R scale) {
  const int64_t per = numel(n), cper = half_numel(n);
  over_batch(Kind::R2C, std::is_same_v<R, double>, n, batch, scale, [&](DFTI_DESCRIPTOR_HANDLE h, int64_t first,
                                                                          int64_t) {
    check(DftiComputeForward(h, const_cast<R*>(in + first * per), static_cast<void*>(out + first * cper)),
          "DftiComputeForward");
  });
}

template <typename R> void c2r(Complex<R>* in, R* out, int64_t batch, const Shape& n, R scale) {
  const int64_t per = numel(n), cper = half_numel(n);
  over_batch(Kind::C2R, std::is_same_v<R, double>, n, batch, scale, [&](DFTI_DESCRIPTOR_HANDLE h, int64_t first,
                                                                          int64_t) {
    check(DftiComputeBackward(h, static_cast<void*>(in + first * cper), out + first * per), "DftiComputeBackward");
  });
}

template void c2c<float>(const Complex<float>*, Complex<float>*, int64_t, const Shape&, bool, float);
template void c2c<double>(const Complex<double>*, Complex<double>*, int64_t, const Shape&, bool, double);
template void r2c<float>(const float*, Complex<float>*, int64_t, const Shape&, float);
template void r2c<double>(const double*, Complex<double>*, int64_t, const Shape&, double);
template void c2r<float>(Complex<float>*, float*, int64_t, const Shape&, float);
template void c2r<double>(Complex<double>*, double*, int64_t, const Shape&, double);

}  // namespace ember::fft::mkl
#endif  // EMBER_HAVE_MKL
