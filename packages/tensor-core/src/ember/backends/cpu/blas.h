// The BLAS backend used by the matrix products (linalg_cpu.cpp) and LAPACK calls (lapack_cpu.cpp).
//
// OpenBLAS runs on one thread: Ember's pool splits every product into tiles itself. OpenBLAS's
// own threads meet at a barrier after each product, so when another process takes a core the
// whole product waits for the descheduled thread's time slice (measured: p90 of a small
// training step 96 ms against 1.9 ms); the pool's tiles are claimed as threads come free.
#pragma once

namespace ember {

// Whether the matrix products go through a vendor BLAS (false: the built-in blocked GEMM).
bool have_blas();

// The library of the float and complex matrix products, chosen once at load time:
// EMBER_BLAS=mkl|openblas when both are built in, else MKL on Intel CPUs and OpenBLAS
// elsewhere. LAPACK calls use OpenBLAS's LAPACK whichever it is.
enum class GemmLibrary { BuiltIn, OpenBLAS, MKL };
GemmLibrary gemm_library();
const char* gemm_library_name(GemmLibrary lib);
// Whether bfloat16 products go to the library as they are (float32 accumulation, one
// rounding), else as float32 products of widened copies: MKL on a CPU with AMX-BF16.
bool bf16_gemm_native();

// While alive, lets OpenBLAS use get_num_threads() threads: for one large LAPACK call, whose
// inner products Ember cannot split. Nested and concurrent scopes are counted.
class BlasThreadsScope {
 public:
  BlasThreadsScope();
  ~BlasThreadsScope();
  BlasThreadsScope(const BlasThreadsScope&) = delete;
  BlasThreadsScope& operator=(const BlasThreadsScope&) = delete;
};

}  // namespace ember
