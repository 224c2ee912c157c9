// The CPU FFT engine behind _fft_c2c / _fft_r2c / _fft_c2r: batched transforms over the
// trailing dims of contiguous buffers. Two libraries implement it: Intel MKL's DFTI where the
// build linked it (x86-64, the mkl-static wheel; fft_mkl.cpp) and the built-in FFT
// (fft_builtin.cpp: radix-2 for powers of two, Bluestein's algorithm for other lengths), which
// every build has. docs/fft.md says why and what each costs.
//
// Layouts (row-major, contiguous): a batch of `batch` signals of sizes n = (n_1, ..., n_k);
// the complex side of a real transform holds n_k / 2 + 1 entries along its last dim. `scale`
// multiplies the result (the normalization).
#pragma once

#include <cstdint>

#include "ember/core/complex.h"
#include "ember/core/tensor.h"

namespace ember::fft {

enum class Library { Builtin, Mkl };

// Whether this build linked MKL's FFT.
bool mkl_available();
// The library the CPU kernels call: MKL when linked, unless set_library chose the built-in.
Library library();
// Chooses the library (tests compare the two); MKL when not linked is a RuntimeError.
void set_library(Library lib);
// The name of a library: "mkl" or "builtin".
const char* library_name(Library lib);

// The three transforms (declared for the front and for each library by this macro):
// - c2c: out = DFT of in over the last n.size() dims (forward: exponent -2*pi*i/N, else +),
//   times scale; in and out may be the same buffer;
// - r2c: out (complex, last dim n_k / 2 + 1) = forward DFT of the real in, times scale;
// - c2r: out (real, sizes n) = inverse DFT of the one-sided Hermitian in, times scale; in is
//   scratch: its values are lost.
#define EMBER_FFT_DECLARE_TRANSFORMS                                                                   \
  template <typename R>                                                                               \
  void c2c(const Complex<R>* in, Complex<R>* out, int64_t batch, const Shape& n, bool forward, R scale); \
  template <typename R> void r2c(const R* in, Complex<R>* out, int64_t batch, const Shape& n, R scale);  \
  template <typename R> void c2r(Complex<R>* in, R* out, int64_t batch, const Shape& n, R scale);

// Their float and double instantiations, in the file that defines them.
#define EMBER_FFT_INSTANTIATE_TRANSFORMS                                                                   \
  template void c2c<float>(const Complex<float>*, Complex<float>*, int64_t, const Shape&, bool, float);     \
  template void c2c<double>(const Complex<double>*, Complex<double>*, int64_t, const Shape&, bool, double); \
  template void r2c<float>(const float*, Complex<float>*, int64_t, const Shape&, float);                    \
  template void r2c<double>(const double*, Complex<double>*, int64_t, const Shape&, double);                \
  template void c2r<float>(Complex<float>*, float*, int64_t, const Shape&, float);                          \
  template void c2r<double>(Complex<double>*, double*, int64_t, const Shape&, double);

EMBER_FFT_DECLARE_TRANSFORMS

namespace builtin {
EMBER_FFT_DECLARE_TRANSFORMS
}  // namespace builtin

#ifdef EMBER_HAVE_MKL
namespace mkl {
EMBER_FFT_DECLARE_TRANSFORMS
}  // namespace mkl
#endif

}  // namespace ember::fft
