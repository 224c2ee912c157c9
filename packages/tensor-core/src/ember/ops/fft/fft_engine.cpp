// The CPU FFT engine's front: which library runs the transforms (fft_engine.h).
#include <atomic>
#include <stdexcept>

#include "ember/ops/fft/fft_engine.h"

namespace ember::fft {
namespace {
#ifdef EMBER_HAVE_MKL
std::atomic<Library> g_library{Library::Mkl};
#else
std::atomic<Library> g_library{Library::Builtin};
#endif
bool use_mkl() { return g_library.load(std::memory_order_relaxed) == Library::Mkl; }
}  // namespace

bool mkl_available() {
#ifdef EMBER_HAVE_MKL
  return true;
#else
  return false;
#endif
}

Library library() { return g_library.load(); }

void set_library(Library lib) {
  if (lib == Library::Mkl && !mkl_available()) {
    throw std::runtime_error("fft: this build of Ember did not link MKL (the mkl-static wheel was not installed "
                             "when it was built); the built-in FFT is the only one");
  }
  g_library.store(lib);
}

const char* library_name(Library lib) { return lib == Library::Mkl ? "mkl" : "builtin"; }

#ifdef EMBER_HAVE_MKL
#define EMBER_FFT_CALL(fn, ...) (use_mkl() ? mkl::fn(__VA_ARGS__) : builtin::fn(__VA_ARGS__))
#else
#define EMBER_FFT_CALL(fn, ...) ((void)use_mkl, builtin::fn(__VA_ARGS__))
#endif

template <typename R>
void c2c(const Complex<R>* in, Complex<R>* out, int64_t batch, const Shape& n, bool forward, R scale) {
  EMBER_FFT_CALL(c2c, in, out, batch, n, forward, scale);
}
template <typename R> void r2c(const R* in, Complex<R>* out, int64_t batch, const Shape& n, R scale) {
  EMBER_FFT_CALL(r2c, in, out, batch, n, scale);
}
template <typename R> void c2r(Complex<R>* in, R* out, int64_t batch, const Shape& n, R scale) {
  EMBER_FFT_CALL(c2r, in, out, batch, n, scale);
}
#undef EMBER_FFT_CALL

EMBER_FFT_INSTANTIATE_TRANSFORMS

}  // namespace ember::fft
