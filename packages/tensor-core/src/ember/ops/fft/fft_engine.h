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

// out = DFT of in over the last n.size() dims (forward: exponent -2*pi*i/N, else +), times
// scale. in and out may be the same buffer.
template <typename R>
void c2c(const Complex<R>* in, Complex<R>* out, int64_t batch, const Shape& n, bool forward, R scale);
// out (complex, last dim n_k / 2 + 1) = forward DFT of the real in, times scale.
template <typename R>
void r2c(const R* in, Complex<R>* out, int64_t batch, const Shape& n, R scale);
// out (real, sizes n) = inverse DFT of the one-sided Hermitian in, times scale. in is
// scratch: its values are lost.
template <typename R>
void c2r(Complex<R>* in, R* out, int64_t batch, const Shape& n, R scale);

namespace builtin {
template <typename R>
void c2c(const Complex<R>* in, Complex<R>* out, int64_t batch, const Shape& n, bool forward, R scale);
template <typename R>
void r2c(const R* in, Complex<R>* out, int64_t batch, const Shape& n, R scale);
template <typename R>
void c2r(Complex<R>* in, R* out, int64_t batch, const Shape& n, R scale);
}  // namespace builtin

#ifdef EMBER_HAVE_MKL
namespace mkl {
template <typename R>
void c2c(const Complex<R>* in, Complex<R>* out, int64_t batch, const Shape& n, bool forward, R scale);
template <typename R>
void r2c(const R* in, Complex<R>* out, int64_t batch, const Shape& n, R scale);
template <typename R>
void c2r(Complex<R>* in, R* out, int64_t batch, const Shape& n, R scale);
}  // namespace mkl
#endif

}  // namespace ember::fft
