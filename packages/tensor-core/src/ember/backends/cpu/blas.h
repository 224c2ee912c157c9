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
// The kernels OpenBLAS picked for this CPU at load time ("SkylakeX", "Haswell"; empty without
// OpenBLAS). ember_tensor's import asks for its AVX-512 kernels on AMD CPUs with AVX-512.
const char* openblas_kernels();

// The library of the float and complex matrix products, chosen once at load time:
// EMBER_BLAS=mkl|openblas when both are built in, else MKL on Intel CPUs and OpenBLAS
// elsewhere. LAPACK calls use OpenBLAS's LAPACK whichever it is.
enum class GemmLibrary { BuiltIn, OpenBLAS, MKL };
GemmLibrary gemm_library();
const char* gemm_library_name(GemmLibrary lib);
// What multiplies bfloat16 operands as they are (float32 accumulation, one rounding): MKL's
// bfloat16 GEMM on a CPU with AMX tiles, else oneDNN's matmul where it is loaded, switched on
// and the CPU computes bfloat16 (AVX512-BF16); elsewhere float32 products of widened copies.
enum class Bf16Gemm { Widened, MKL, OneDNN };
Bf16Gemm bf16_gemm();
inline bool bf16_gemm_native() { return bf16_gemm() != Bf16Gemm::Widened; }

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
