// The built-in FFT (every build; the only one where MKL is not linked): one-dimensional
// transforms along each transformed dim in turn, in double precision whatever the dtype.
// Powers of two use the iterative radix-2 algorithm; other lengths use Bluestein's algorithm
// (the DFT as a convolution with a chirp, computed by radix-2 transforms of a power of two
// at least 2n - 1), so every length costs O(n log n). Plans (twiddles, chirps) are cached per
// length. Lines are spread over the intra-op threads.
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "ember/ops/fft/fft_engine.h"
#include "ember/runtime/parallel.h"

namespace ember::fft::builtin {
namespace {

struct C {  // a complex double, multiplied without the C99 special cases of std::complex
  double re, im;
};
inline C mul(C a, C b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
inline C conj(C a) { return {a.re, -a.im}; }

bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// In-place forward DFT of x (length m, a power of two) with twiddles tw[k] = e^{-2 pi i k/m}.
void radix2(C* x, int64_t m, const std::vector<C>& tw) {
  for (int64_t i = 1, j = 0; i < m; ++i) {  // bit reversal
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(x[i], x[j]);
  }
  for (int64_t len = 2; len <= m; len <<= 1) {
    const int64_t half = len >> 1, step = m / len;
    for (int64_t i = 0; i < m; i += len) {
      for (int64_t j = 0; j < half; ++j) {
        const C u = x[i + j], v = mul(x[i + j + half], tw[j * step]);
        x[i + j] = {u.re + v.re, u.im + v.im};
        x[i + j + half] = {u.re - v.re, u.im - v.im};
      }
    }
  }
}

std::vector<C> twiddles(int64_t m) {
  std::vector<C> tw(static_cast<size_t>(m / 2 + 1));
  for (int64_t k = 0; k <= m / 2; ++k) {
    const double a = -2.0 * M_PI * static_cast<double>(k) / static_cast<double>(m);
    tw[static_cast<size_t>(k)] = {std::cos(a), std::sin(a)};
  }
  return tw;
}

// The forward DFT of one length.
class Plan {
 public:
  explicit Plan(int64_t n) : n_(n), m_(n) {
    if (is_pow2(n)) {
      tw_ = twiddles(n);
      return;
    }
    m_ = 1;
    while (m_ < 2 * n - 1) m_ <<= 1;
    tw_ = twiddles(m_);
    chirp_.resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      // k^2 mod 2n keeps the angle small (exact for n < 2^31)
      const int64_t k2 = static_cast<int64_t>((static_cast<unsigned __int128>(k) * k) % (2 * n));
      const double a = -M_PI * static_cast<double>(k2) / static_cast<double>(n);
      chirp_[static_cast<size_t>(k)] = {std::cos(a), std::sin(a)};
    }
    kernel_.assign(static_cast<size_t>(m_), C{0.0, 0.0});
    kernel_[0] = conj(chirp_[0]);
    for (int64_t k = 1; k < n; ++k) kernel_[k] = kernel_[m_ - k] = conj(chirp_[k]);
    radix2(kernel_.data(), m_, tw_);
    const double inv = 1.0 / static_cast<double>(m_);  // folds the inverse's 1/m in
    for (auto& v : kernel_) v = {v.re * inv, v.im * inv};
  }

  // Scratch values forward() needs beside x.
  int64_t work_size() const { return chirp_.empty() ? 0 : m_; }

  // x (n values) <- its forward DFT.
  void forward(C* x, C* work) const {
    if (chirp_.empty()) {
      radix2(x, n_, tw_);
      return;
    }
    for (int64_t k = 0; k < n_; ++k) work[k] = mul(x[k], chirp_[k]);
    for (int64_t k = n_; k < m_; ++k) work[k] = {0.0, 0.0};
    radix2(work, m_, tw_);
    // the inverse transform of the product, as conj(forward(conj(.)))
    for (int64_t k = 0; k < m_; ++k) work[k] = conj(mul(work[k], kernel_[k]));
    radix2(work, m_, tw_);
    for (int64_t k = 0; k < n_; ++k) x[k] = mul(conj(work[k]), chirp_[k]);
  }

 private:
  int64_t n_, m_;
  std::vector<C> tw_, chirp_, kernel_;
};

std::shared_ptr<const Plan> plan_for(int64_t n) {
  static std::mutex mu;
  static std::map<int64_t, std::shared_ptr<const Plan>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(n);
  if (it != cache.end()) return it->second;
  if (cache.size() >= 64) cache.clear();
  auto p = std::make_shared<const Plan>(n);
  cache.emplace(n, p);
  return p;
}

int64_t prod(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

// Runs f(line, work, first, last) over lines [0, count) of length len, with per-thread
// scratch: `line` holds len values, `work` the plan's scratch.
template <typename F> void for_lines(int64_t count, int64_t len, const Plan& plan, F&& f) {
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(len, 1));
  parallel_for(0, count, grain, [&](int64_t b, int64_t e) {
    std::vector<C> line(static_cast<size_t>(len)), work(static_cast<size_t>(plan.work_size()));
    f(line.data(), work.data(), b, e);
  });
}

// In place: the DFT along the middle dim of data viewed as [outer, len, inner].
template <typename R> void lines_c2c(Complex<R>* data, int64_t outer, int64_t len, int64_t inner, bool forward) {
  if (len == 1 || outer * inner == 0) return;
  auto plan = plan_for(len);
  for_lines(outer * inner, len, *plan, [&](C* line, C* work, int64_t b, int64_t e) {
    for (int64_t l = b; l < e; ++l) {
      Complex<R>* p = data + (l / inner) * len * inner + (l % inner);
      const double sign = forward ? 1.0 : -1.0;  // the inverse as conj(forward(conj(x)))
      for (int64_t k = 0; k < len; ++k) line[k] = {double(p[k * inner].re), sign * double(p[k * inner].im)};
      plan->forward(line, work);
      for (int64_t k = 0; k < len; ++k) p[k * inner] = Complex<R>(R(line[k].re), R(sign * line[k].im));
    }
  });
}

// In place: the DFT over every dim of data viewed as [batch, n...].
template <typename R> void all_dims_c2c(Complex<R>* data, int64_t batch, const Shape& n, bool forward) {
  for (size_t i = 0; i < n.size(); ++i) {
    lines_c2c(data, batch * prod(n, 0, i), n[i], prod(n, i + 1, n.size()), forward);
  }
}

template <typename R> void scale_by(Complex<R>* x, int64_t count, R scale) {
  if (scale == R(1)) return;
  for (int64_t i = 0; i < count; ++i) x[i] = Complex<R>(x[i].re * scale, x[i].im * scale);
}

}  // namespace

template <typename R>
void c2c(const Complex<R>* in, Complex<R>* out, int64_t batch, const Shape& n, bool forward, R scale) {
  const int64_t total = batch * prod(n, 0, n.size());
  if (in != out) std::copy(in, in + total, out);
  all_dims_c2c(out, batch, n, forward);
  scale_by(out, total, scale);
}

template <typename R> void r2c(const R* in, Complex<R>* out, int64_t batch, const Shape& n, R scale) {
  const size_t k = n.size();
  const int64_t len = n[k - 1], half = len / 2 + 1;
  const int64_t rows = batch * prod(n, 0, k - 1);
  auto plan = plan_for(len);
  for_lines(rows, len, *plan, [&](C* line, C* work, int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const R* x = in + r * len;
      for (int64_t j = 0; j < len; ++j) line[j] = {double(x[j]), 0.0};
      plan->forward(line, work);
      Complex<R>* y = out + r * half;
      for (int64_t j = 0; j < half; ++j) y[j] = Complex<R>(R(line[j].re), R(line[j].im));
    }
  });
  Shape outer_n(n.begin(), n.end() - 1);
  outer_n.push_back(half);
  for (size_t i = 0; i + 1 < k; ++i) {
    lines_c2c(out, batch * prod(outer_n, 0, i), outer_n[i], prod(outer_n, i + 1, k), true);
  }
  scale_by(out, rows * half, scale);
}

template <typename R> void c2r(Complex<R>* in, R* out, int64_t batch, const Shape& n, R scale) {
  const size_t k = n.size();
  const int64_t len = n[k - 1], half = len / 2 + 1;
  const int64_t rows = batch * prod(n, 0, k - 1);
  Shape in_n(n.begin(), n.end() - 1);
  in_n.push_back(half);
  for (size_t i = 0; i + 1 < k; ++i) {
    lines_c2c(in, batch * prod(in_n, 0, i), in_n[i], prod(in_n, i + 1, k), false);
  }
  auto plan = plan_for(len);
  for_lines(rows, len, *plan, [&](C* line, C* work, int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const Complex<R>* x = in + r * half;
      // the full Hermitian spectrum, conjugated (the inverse as conj(forward(conj(x)))); only
      // real parts are kept, so the imaginary parts of the DC and Nyquist terms drop out
      for (int64_t j = 0; j < half; ++j) line[j] = {double(x[j].re), -double(x[j].im)};
      for (int64_t j = half; j < len; ++j) line[j] = {double(x[len - j].re), double(x[len - j].im)};
      plan->forward(line, work);
      R* y = out + r * len;
      for (int64_t j = 0; j < len; ++j) y[j] = R(line[j].re * double(scale));
    }
  });
}

EMBER_FFT_INSTANTIATE_TRANSFORMS

}  // namespace ember::fft::builtin
