// CPU kernels of the DFT ops: the input's transformed dims are moved last and made
// contiguous, the engine (fft_engine.h: MKL or the built-in FFT) transforms the batch, and
// the result is the engine's buffer viewed back in the input's dim order.
#include <algorithm>

#include "ember/ops/fft/fft_engine.h"
#include "ember/ops/fft/fft_meta.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"

namespace ember {
namespace cpu {
namespace {

template <typename F> void with_real(ScalarType complex_or_real, F&& f) {
  if (complex_or_real == ScalarType::ComplexDouble || complex_or_real == ScalarType::Float64) f(double{});
  else f(float{});
}

// The full spectrum of a real signal from its one-sided part (Hermitian symmetry over every
// transformed dim): y[b, k] = conj(y[b, -k mod n]) for the last index past n / 2.
template <typename R> void fill_conjugate_symmetry(Complex<R>* y, int64_t batch, const Shape& n) {
  const size_t k = n.size();
  int64_t per = 1;
  for (int64_t v : n) per *= v;
  const int64_t last = n[k - 1], half = last / 2 + 1;
  parallel_for(0, batch * (per / last), std::max<int64_t>(1, kParallelGrain / last), [&](int64_t b, int64_t e) {
    std::vector<int64_t> idx(k - 1);
    for (int64_t row = b; row < e; ++row) {
      const int64_t bi = row / (per / last);
      int64_t r = row % (per / last);
      // the mirrored row: every leading index negated modulo its size
      int64_t mirror = 0, stride = last;
      for (size_t i = k - 1; i-- > 0;) {
        const int64_t ii = r % n[i];
        r /= n[i];
        mirror += ((n[i] - ii) % n[i]) * stride;
        stride *= n[i];
      }
      Complex<R>* dst = y + bi * per + (row % (per / last)) * last;
      const Complex<R>* src = y + bi * per + mirror;
      for (int64_t j = half; j < last; ++j) dst[j] = Complex<R>(src[last - j].re, -src[last - j].im);
    }
  });
}

}  // namespace

Tensor _fft_c2c(const Tensor& self, const Shape& dim, int64_t normalization, bool forward) {
  check_cpu(self, "_fft_c2c");
  const FftMeta m = fft_c2c_meta(self, dim, normalization);
  FftInput p = fft_input(self, m.dims, m.out_dtype);
  Tensor y = empty(fft_permuted(m.out_sizes, p.perm), m.out_dtype);
  if (p.batch > 0) {
    with_real(m.out_dtype, [&](auto tag) {
      using R = decltype(tag);
      fft::c2c<R>(p.x->data<Complex<R>>(), y->data<Complex<R>>(), p.batch, m.signal, forward, static_cast<R>(m.scale));
    });
  }
  return ops::permute(y, inverse_permutation(p.perm));
}

Tensor _fft_r2c(const Tensor& self, const Shape& dim, int64_t normalization, bool onesided) {
  check_cpu(self, "_fft_r2c");
  const FftMeta m = fft_r2c_meta(self, dim, normalization, onesided);
  FftInput p = fft_input(self, m.dims, self->dtype());
  Shape half_sizes = fft_permuted(m.out_sizes, p.perm);
  half_sizes.back() = m.signal.back() / 2 + 1;
  Tensor y = empty(fft_permuted(m.out_sizes, p.perm), m.out_dtype);
  if (p.batch > 0) {
    with_real(self->dtype(), [&](auto tag) {
      using R = decltype(tag);
      if (onesided) {
        fft::r2c<R>(p.x->data<R>(), y->data<Complex<R>>(), p.batch, m.signal, static_cast<R>(m.scale));
        return;
      }
      // the one-sided transform, spread into the full layout, then the mirrored half
      Tensor h = empty(half_sizes, m.out_dtype);
      fft::r2c<R>(p.x->data<R>(), h->data<Complex<R>>(), p.batch, m.signal, static_cast<R>(m.scale));
      const int64_t last = m.signal.back(), half = last / 2 + 1, rows = h->numel() / half;
      const Complex<R>* src = h->data<Complex<R>>();
      Complex<R>* dst = y->data<Complex<R>>();
      for (int64_t r = 0; r < rows; ++r) std::copy(src + r * half, src + (r + 1) * half, dst + r * last);
      fill_conjugate_symmetry<R>(dst, p.batch, m.signal);
    });
  }
  return ops::permute(y, inverse_permutation(p.perm));
}

Tensor _fft_c2r(const Tensor& self, const Shape& dim, int64_t normalization, int64_t last_dim_size) {
  check_cpu(self, "_fft_c2r");
  const FftMeta m = fft_c2r_meta(self, dim, normalization, last_dim_size);
  if (m.dims.size() > 1) {
    // the inverse over the leading dims first, then the one-sided one over the last: what
    // NumPy and PyTorch compute for an input that is not exactly Hermitian (MKL's n-D real
    // transform would read it differently); the two scales multiply to the n-D one
    const Shape lead(m.dims.begin(), m.dims.end() - 1);
    return _fft_c2r(_fft_c2c(self, lead, normalization, false), {m.dims.back()}, normalization, last_dim_size);
  }
  FftInput p = fft_input(self, m.dims, self->dtype());
  // the engine overwrites its input: never the caller's memory
  if (p.x->data_ptr() == self->data_ptr()) p.x = ops::clone(p.x);
  Tensor y = empty(fft_permuted(m.out_sizes, p.perm), m.out_dtype);
  int64_t signal = 1;
  for (int64_t s : m.signal) signal *= s;
  const int64_t batch = signal == 0 ? 0 : y->numel() / signal;
  if (batch > 0) {
    with_real(m.out_dtype, [&](auto tag) {
      using R = decltype(tag);
      fft::c2r<R>(p.x->data<Complex<R>>(), y->data<R>(), batch, m.signal, static_cast<R>(m.scale));
    });
  }
  return ops::permute(y, inverse_permutation(p.perm));
}

}  // namespace cpu
}  // namespace ember
