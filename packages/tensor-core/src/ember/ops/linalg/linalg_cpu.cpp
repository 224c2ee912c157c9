// Matrix products: matmul, mm, bmm, addmm, dot.
//
// Every product reduces to one batched GEMM, C[b] = beta * C[b] + alpha * A[b] @ B[b], on a
// contiguous C and strided A, B (gemm_tensors below). float32/float64/complex go through a
// vendor BLAS called on one thread per tile (gemm_library(): MKL's sequential library on
// Intel CPUs when the build linked it, else OpenBLAS from the scipy-openblas32 wheel, whose
// symbols carry a scipy_ prefix and take 32-bit ints); a build without either, and the other
// dtypes, use the blocked GEMM in plain C++ below. float16/bfloat16 are computed in float32 and
// rounded once at the end; integer dtypes are computed in int64 with wrap-around arithmetic,
// which leaves the same low bits, hence the same narrowed result, as PyTorch's accumulation
// in the narrow type.
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/backends/cpu/blas.h"
#include "ember/backends/cpu/onednn.h"
#include "ember/ops/linalg/gemm_onednn_cpu.h"
#include "ember/ops/linalg/linalg_meta.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"
#include "ember/runtime/simd.h"

#ifdef EMBER_HAVE_OPENBLAS
// The few functions used from scipy-openblas32's cblas.h (not included on purpose: its names
// and types would clash with other BLAS headers). Enums are passed as the ints they are.
extern "C" {
void scipy_cblas_sgemm(int order, int transa, int transb, int m, int n, int k, float alpha,
                       const float* a, int lda, const float* b, int ldb, float beta, float* c,
                       int ldc);
void scipy_cblas_dgemm(int order, int transa, int transb, int m, int n, int k, double alpha,
                       const double* a, int lda, const double* b, int ldb, double beta, double* c,
                       int ldc);
// complex: alpha, beta and the matrices as pointers to (real, imaginary) pairs
void scipy_cblas_cgemm(int order, int transa, int transb, int m, int n, int k, const void* alpha,
                       const void* a, int lda, const void* b, int ldb, const void* beta, void* c,
                       int ldc);
void scipy_cblas_zgemm(int order, int transa, int transb, int m, int n, int k, const void* alpha,
                       const void* a, int lda, const void* b, int ldb, const void* beta, void* c,
                       int ldc);
float scipy_cblas_sdot(int n, const float* x, int incx, const float* y, int incy);
double scipy_cblas_ddot(int n, const double* x, int incx, const double* y, int incy);
void scipy_openblas_set_num_threads(int num_threads);
char* scipy_openblas_get_corename();
}
#endif

#ifdef EMBER_HAVE_MKL
// MKL's CBLAS products (lp64: 32-bit ints; the layout and transpose enums are ints of the
// same values as OpenBLAS's), from the static sequential MKL the FFT links (CMakeLists.txt).
extern "C" {
void cblas_sgemm(int order, int transa, int transb, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc);
// bfloat16 operands (MKL_BF16: the bits, as uint16), float32 accumulation and C
void cblas_gemm_bf16bf16f32(int order, int transa, int transb, int m, int n, int k, float alpha, const uint16_t* a,
                            int lda, const uint16_t* b, int ldb, float beta, float* c, int ldc);
void cblas_dgemm(int order, int transa, int transb, int m, int n, int k, double alpha, const double* a, int lda,
                 const double* b, int ldb, double beta, double* c, int ldc);
void cblas_cgemm(int order, int transa, int transb, int m, int n, int k, const void* alpha, const void* a,
                 int lda, const void* b, int ldb, const void* beta, void* c, int ldc);
void cblas_zgemm(int order, int transa, int transb, int m, int n, int k, const void* alpha, const void* a,
                 int lda, const void* b, int ldb, const void* beta, void* c, int ldc);
}
#endif

namespace ember {

#ifdef EMBER_HAVE_OPENBLAS
namespace {
std::mutex g_blas_threads_mu;
int g_blas_scopes = 0;
// OpenBLAS starts with as many threads as cores: one thread from the first product on.
[[maybe_unused]] const bool g_blas_single = [] {
  scipy_openblas_set_num_threads(1);
  return true;
}();
}  // namespace

BlasThreadsScope::BlasThreadsScope() {
  std::lock_guard<std::mutex> g(g_blas_threads_mu);
  if (g_blas_scopes++ == 0) scipy_openblas_set_num_threads(get_num_threads());
}

BlasThreadsScope::~BlasThreadsScope() {
  std::lock_guard<std::mutex> g(g_blas_threads_mu);
  if (--g_blas_scopes == 0) scipy_openblas_set_num_threads(1);
}
#else
BlasThreadsScope::BlasThreadsScope() {}
BlasThreadsScope::~BlasThreadsScope() {}
#endif

const char* openblas_kernels() {
#ifdef EMBER_HAVE_OPENBLAS
  return scipy_openblas_get_corename();
#else
  return "";
#endif
}

bool have_blas() {
#ifdef EMBER_HAVE_OPENBLAS
  return true;
#else
  return false;
#endif
}

namespace {
// EMBER_BLAS=mkl|openblas, else MKL on an Intel CPU (its kernels beat OpenBLAS's there:
// docs/performance.md) and OpenBLAS elsewhere (AMD: OpenBLAS was the faster).
GemmLibrary pick_gemm_library() {
#if defined(EMBER_HAVE_MKL) && defined(EMBER_HAVE_OPENBLAS)
  if (const char* want = std::getenv("EMBER_BLAS")) {
    if (!std::strcmp(want, "mkl")) return GemmLibrary::MKL;
    if (!std::strcmp(want, "openblas")) return GemmLibrary::OpenBLAS;
  }
  return cpu_vendor_is_intel() ? GemmLibrary::MKL : GemmLibrary::OpenBLAS;
#elif defined(EMBER_HAVE_OPENBLAS)
  return GemmLibrary::OpenBLAS;
#else
  return GemmLibrary::BuiltIn;
#endif
}
const GemmLibrary g_gemm_library = pick_gemm_library();
}  // namespace

GemmLibrary gemm_library() { return g_gemm_library; }

// MKL's bfloat16 kernels run on AMX tiles at 4-8x its float32 speed (1 thread, Intel Xeon
// with AMX: 256^3 547 against 157 GFLOP/s, 1024^3 647 against 163), and beat oneDNN 3.2's
// matmul there (263 at 1024^3). Without AMX MKL's were slower than float32 products on widened
// copies (AVX512-BF16 alone, Intel Xeon: 143 against 277 GFLOP/s at 1024^3, 2 threads), and
// oneDNN's matmul is the fast one (AMD Zen 5, 1 thread: 290-440 GFLOP/s against 85-100).
Bf16Gemm bf16_gemm() {
#ifdef EMBER_HAVE_OPENBLAS
#ifdef EMBER_HAVE_MKL
  static const bool amx = g_gemm_library == GemmLibrary::MKL && cpu_has_amx_bf16();
  if (amx) return Bf16Gemm::MKL;
#endif
  if (cpu::onednn_takes(/*bf16=*/true)) return Bf16Gemm::OneDNN;
#endif
  return Bf16Gemm::Widened;
}

bool products_native(ScalarType dtype, const Device& device) {
  if (dtype == ScalarType::Float16 || dtype == ScalarType::BFloat16) {
    return dtype == ScalarType::BFloat16 && device.type == DeviceType::CPU && bf16_gemm_native();
  }
  return is_floating(dtype) || is_complex(dtype);
}

const char* gemm_library_name(GemmLibrary lib) {
  switch (lib) {
    case GemmLibrary::MKL: return "MKL";
    case GemmLibrary::OpenBLAS: return "OpenBLAS";
    default: return "built-in";
  }
}

}  // namespace ember

namespace ember::cpu {
namespace {

#ifdef EMBER_HAVE_OPENBLAS
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
#endif

// Up to this many multiply-adds a single GEMM runs on one thread (OpenBLAS does not thread
// below 4 * 65536 either), so a batch of them is spread over Ember's pool instead.
constexpr int64_t kSmallGemm = 64 * 64 * 64;
// Up to this size a batch of products (as many as threads, at least) runs one product per
// thread rather than each product on all threads.
constexpr int64_t kBatchedGemm = 256 * 256 * 256;
// Products whose re-packed operand has more elements than this (1 MiB of float32) are cut
// into tiles of at least kWideTile rows (or columns): see gemm_blas.
constexpr int64_t kCachedOperand = 256 * 1024;
constexpr int64_t kWideTile = 1024;
// Every tile packs the shared operand again: below this many rows (or columns) packing
// outweighs what a further tile balances (AMD Zen 5, OpenBLAS, 2 threads, settled medians,
// GFLOP/s with the least span 16 / 64: 256^3 130 / 170, 1024x256x256 135 / 173, 128^3
// 111 / 151; PyTorch 162, 137, 106).
constexpr int64_t kMinTileSpan = 64;
// MKL's sequential sgemm with few rows of C (at most kSkinnyRows) and a large B (more than
// kCachedOperand elements) in row-major order runs at 0.6-0.7x of its own speed on the same
// product cut into slices of kSkinnyKBlock along K, accumulated with beta = 1 (64x4096x4096
// on an Intel Xeon, 1 thread: 73 -> 111 GFLOP/s; 2 threads: 147 -> 201; 32 or 128 rows
// alike; 64, 96 and 256 are no better; a 512x512 B gains nothing, and a transposed B, as
// linear's weight is, does not need it). OpenBLAS gains nothing.
constexpr int64_t kSkinnyRows = 192;
constexpr int kSkinnyKBlock = 128;
// A product whose C is too small to give every thread a tile is cut along K instead when
// each slice holds at least kMinKSlice of K and kSplitKWork multiply-adds (see gemm_blas).
constexpr int64_t kMinKSlice = 256;
constexpr int64_t kSplitKWork = 4 * kSmallGemm;
// The least multiply-adds of a tile of a bfloat16 product on AMX (see gemm_blas).
constexpr int64_t kSmallBf16Tile = int64_t{8} << 20;

std::string mat_str(const Tensor& t) {  // "2x3", as PyTorch prints matrices in messages
  std::string s;
  for (int64_t d = 0; d < t->dim(); ++d) s += (d ? "x" : "") + std::to_string(t->size(d));
  return s;
}

// The dtype a product is computed in.
ScalarType compute_dtype(ScalarType t) {
  if (t == ScalarType::Float16 || t == ScalarType::BFloat16) return ScalarType::Float32;
  if (is_integral(t, /*include_bool=*/false)) return ScalarType::Int64;
  return t;
}

// Whether a rows x cols matrix with element strides (rs, cs) can go to BLAS without a copy,
// and how: row-major as is (trans = false, leading dimension rs) or as the transpose of a
// row-major matrix (trans = true, leading dimension cs). Size-1 dims have arbitrary strides.
bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool* trans, int64_t* ld) {
  if ((cs == 1 || cols <= 1) && (rows <= 1 || rs >= std::max<int64_t>(cols, 1))) {
    *trans = false;
    *ld = rows <= 1 ? std::max<int64_t>(cols, 1) : rs;
  } else if ((rs == 1 || rows <= 1) && (cols <= 1 || cs >= std::max<int64_t>(rows, 1))) {
    *trans = true;
    *ld = cols <= 1 ? std::max<int64_t>(rows, 1) : cs;
  } else {
    return false;
  }
  return *ld <= INT_MAX;
}

// t in the compute dtype, its last two dims in a layout BLAS takes directly (else copied).
// t converted to dtype. A dense t (its elements fill numel() consecutive slots in some order
// of its dims, as a transposed matrix's do) keeps its layout, and the conversion runs in
// memory order: it streams, and BLAS takes a transposed matrix as it is (linear's weight).
Tensor convert_keeping_layout(const Tensor& t, ScalarType dtype) {
  Shape order(static_cast<size_t>(t->dim()));  // dims by decreasing stride: memory order
  for (int64_t d = 0; d < t->dim(); ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return t->stride(a) > t->stride(b); });
  int64_t expected = 1;
  for (auto d = order.rbegin(); d != order.rend(); ++d) {
    if (t->size(*d) == 1) continue;
    if (t->stride(*d) != expected) return to_dtype(t, dtype);  // not dense
    expected *= t->size(*d);
  }
  Tensor x = empty_strided(t->sizes(), t->strides(), dtype);
  copy_into(permute(x, order), permute(t, order));  // both contiguous in this order
  return x;
}

Tensor prep_operand(const Tensor& t, ScalarType ct) {
  Tensor x = t->dtype() == ct ? t : convert_keeping_layout(t, ct);
  const int64_t d = x->dim();
  bool trans;
  int64_t ld;
  if (!blas_layout(x->size(d - 2), x->size(d - 1), x->stride(d - 2), x->stride(d - 1), &trans, &ld)) {
    x = as_contiguous(x);
  }
  return x;
}

// Element offsets (relative to t's own offset) of every matrix in t's leading `nb` dims, in
// row-major order of those dims.
std::vector<int64_t> batch_offsets(const Tensor& t, int64_t nb) {
  int64_t n = 1;
  for (int64_t d = 0; d < nb; ++d) n *= t->size(d);
  std::vector<int64_t> off(static_cast<size_t>(n), 0);
  std::vector<int64_t> idx(static_cast<size_t>(nb), 0);
  int64_t cur = 0;
  for (int64_t i = 0; i < n; ++i) {
    off[static_cast<size_t>(i)] = cur;
    for (int64_t d = nb - 1; d >= 0; --d) {  // odometer increment
      if (++idx[d] < t->size(d)) {
        cur += t->stride(d);
        break;
      }
      cur -= t->stride(d) * (t->size(d) - 1);
      idx[d] = 0;
    }
  }
  return off;
}

// One batched GEMM on raw pointers: C[b] (contiguous M x N) = beta * C[b] + alpha * A[b] B[b],
// computed in T. In: the operands' type (bfloat16 with a float T where the library multiplies
// it natively); Out: C's (bfloat16 with a float T where oneDNN writes the rounded result).
template <typename T, typename In = T, typename Out = T> struct Gemm {
  int64_t M = 0, N = 0, K = 0, nbatch = 0;
  const In* a = nullptr;
  int64_t a_rs = 0, a_cs = 0;
  const int64_t* a_off = nullptr;
  const In* b = nullptr;
  int64_t b_rs = 0, b_cs = 0;
  const int64_t* b_off = nullptr;
  Out* c = nullptr;
  T alpha{}, beta{};
};

// Integers accumulate in uint64: wrap-around is defined there and matches two's complement.
template <typename T> using acc_t = std::conditional_t<std::is_integral_v<T>, uint64_t, T>;

// C = beta * C for every batch (beta == 0 writes zeros, ignoring NaN in C).
template <typename T, typename In, typename Out> void scale_c(const Gemm<T, In, Out>& g) {
  using Acc = std::conditional_t<std::is_same_v<Out, T>, acc_t<T>, Out>;
  const int64_t n = g.nbatch * g.M * g.N;
  Acc* c = reinterpret_cast<Acc*>(g.c);
  parallel_for(0, n, kParallelGrain, [&](int64_t b, int64_t e) {
    if (g.beta == T(0)) {
      std::fill(c + b, c + e, Acc(0));
    } else if (!(g.beta == T(1))) {
      if constexpr (std::is_same_v<Out, T>) {
        const Acc beta = static_cast<Acc>(g.beta);
        for (int64_t i = b; i < e; ++i) c[i] = static_cast<Acc>(beta * c[i]);
      } else {  // a 16-bit C scaled in T, rounded once
        for (int64_t i = b; i < e; ++i) c[i] = static_cast<Out>(g.beta * static_cast<T>(c[i]));
      }
    }
  });
}

// The built-in GEMM: tasks of (batch, block of kMB rows); each packs kKB x kNB panels of B
// and kMB x kKB blocks of A into contiguous buffers, accumulates a kMB x kNB tile with an
// axpy-style inner loop the compiler vectorises, then writes beta * C + alpha * tile.
template <typename T> void gemm_fallback(const Gemm<T>& g) {
  using Acc = acc_t<T>;
  constexpr int64_t kMB = 32, kKB = 256, kNB = 256;
  const int64_t row_blocks = (g.M + kMB - 1) / kMB;
  const int64_t tasks = g.nbatch * row_blocks;
  const int64_t task_work = std::max<int64_t>(1, kMB * g.N * g.K);
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 17) / task_work);
  const Acc alpha = static_cast<Acc>(g.alpha), beta = static_cast<Acc>(g.beta);
  const bool beta_zero = g.beta == T(0);
  parallel_for(0, tasks, grain, [&](int64_t t0, int64_t t1) {
    std::vector<Acc> ap(kMB * kKB), bp(kKB * kNB), tile(kMB * kNB);
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t bt = task / row_blocks;
      const int64_t i0 = (task % row_blocks) * kMB;
      const int64_t mb = std::min(kMB, g.M - i0);
      const T* A = g.a + g.a_off[bt];
      const T* B = g.b + g.b_off[bt];
      Acc* C = reinterpret_cast<Acc*>(g.c + bt * g.M * g.N);
      for (int64_t j0 = 0; j0 < g.N; j0 += kNB) {
        const int64_t nb = std::min(kNB, g.N - j0);
        std::fill(tile.begin(), tile.begin() + mb * nb, Acc(0));
        for (int64_t k0 = 0; k0 < g.K; k0 += kKB) {
          const int64_t kb = std::min(kKB, g.K - k0);
          for (int64_t k = 0; k < kb; ++k) {
            const T* brow = B + (k0 + k) * g.b_rs + j0 * g.b_cs;
            Acc* dst = bp.data() + k * nb;
            for (int64_t j = 0; j < nb; ++j) dst[j] = static_cast<Acc>(brow[j * g.b_cs]);
          }
          for (int64_t i = 0; i < mb; ++i) {
            const T* arow = A + (i0 + i) * g.a_rs + k0 * g.a_cs;
            Acc* dst = ap.data() + i * kb;
            for (int64_t k = 0; k < kb; ++k) dst[k] = static_cast<Acc>(arow[k * g.a_cs]);
          }
          for (int64_t i = 0; i < mb; ++i) {
            Acc* __restrict__ trow = tile.data() + i * nb;
            const Acc* __restrict__ arow = ap.data() + i * kb;
            for (int64_t k = 0; k < kb; ++k) {
              const Acc av = arow[k];
              const Acc* __restrict__ brow = bp.data() + k * nb;
              for (int64_t j = 0; j < nb; ++j) trow[j] += av * brow[j];
            }
          }
        }
        for (int64_t i = 0; i < mb; ++i) {
          Acc* crow = C + (i0 + i) * g.N + j0;
          const Acc* trow = tile.data() + i * nb;
          if (beta_zero) {
            for (int64_t j = 0; j < nb; ++j) crow[j] = static_cast<Acc>(alpha * trow[j]);
          } else {
            for (int64_t j = 0; j < nb; ++j) crow[j] = static_cast<Acc>(beta * crow[j] + alpha * trow[j]);
          }
        }
      }
    }
  });
}

#ifdef EMBER_HAVE_OPENBLAS
// One row-major product C = alpha op(A) op(B) + beta C on the calling thread, by the chosen
// library (gemm_library()).
template <typename T>
void blas_gemm(bool ta, bool tb, int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb, T beta,
               T* C, int ldc) {
  const int oa = ta ? kTrans : kNoTrans, ob = tb ? kTrans : kNoTrans;
#ifdef EMBER_HAVE_MKL
  if (g_gemm_library == GemmLibrary::MKL) {
    if constexpr (std::is_same_v<T, float>) {
      cblas_sgemm(kRowMajor, oa, ob, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    } else if constexpr (std::is_same_v<T, double>) {
      cblas_dgemm(kRowMajor, oa, ob, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    } else if constexpr (std::is_same_v<T, complex64_t>) {
      cblas_cgemm(kRowMajor, oa, ob, M, N, K, &alpha, A, lda, B, ldb, &beta, C, ldc);
    } else {
      cblas_zgemm(kRowMajor, oa, ob, M, N, K, &alpha, A, lda, B, ldb, &beta, C, ldc);
    }
    return;
  }
#endif
  if constexpr (std::is_same_v<T, float>) {
    scipy_cblas_sgemm(kRowMajor, oa, ob, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  } else if constexpr (std::is_same_v<T, double>) {
    scipy_cblas_dgemm(kRowMajor, oa, ob, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  } else if constexpr (std::is_same_v<T, complex64_t>) {
    scipy_cblas_cgemm(kRowMajor, oa, ob, M, N, K, &alpha, A, lda, B, ldb, &beta, C, ldc);
  } else {
    scipy_cblas_zgemm(kRowMajor, oa, ob, M, N, K, &alpha, A, lda, B, ldb, &beta, C, ldc);
  }
}

// bfloat16 operands, float32 C: MKL's bfloat16 kernels (AMX) or oneDNN's matmul, as
// bf16_gemm() says; bfloat16 C: oneDNN's matmul, which rounds the result once itself. A layout
// oneDNN has no primitive for is multiplied as float32 copies.
template <typename Out>
void blas_gemm(bool ta, bool tb, int M, int N, int K, float alpha, const BFloat16* A, int lda, const BFloat16* B,
               int ldb, float beta, Out* C, int ldc) {
#ifdef EMBER_HAVE_MKL
  if constexpr (std::is_same_v<Out, float>) {
    if (bf16_gemm() == Bf16Gemm::MKL) {
      cblas_gemm_bf16bf16f32(kRowMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, M, N, K, alpha,
                             reinterpret_cast<const uint16_t*>(A), lda, reinterpret_cast<const uint16_t*>(B), ldb,
                             beta, C, ldc);
      return;
    }
  }
#endif
  if (cpu::onednn_gemm_bf16(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)) return;
  // op(A), op(B) and C widened into contiguous row-major copies
  Tensor wa = empty({int64_t{M} * K}, ScalarType::Float32), wb = empty({int64_t{K} * N}, ScalarType::Float32);
  float *a = wa->data<float>(), *b = wb->data<float>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) a[i * K + k] = static_cast<float>(ta ? A[k * lda + i] : A[i * lda + k]);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) b[k * N + j] = static_cast<float>(tb ? B[j * ldb + k] : B[k * ldb + j]);
  if constexpr (std::is_same_v<Out, float>) {
    blas_gemm<float>(false, false, M, N, K, alpha, a, std::max(K, 1), b, std::max(N, 1), beta, C, ldc);
  } else {
    Tensor wc = empty({int64_t{M} * N}, ScalarType::Float32);
    float* c = wc->data<float>();
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) c[i * N + j] = beta == 0.0f ? 0.0f : static_cast<float>(C[i * ldc + j]);
    blas_gemm<float>(false, false, M, N, K, alpha, a, std::max(K, 1), b, std::max(N, 1), beta, c, std::max(N, 1));
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = static_cast<Out>(c[i * N + j]);
  }
}

// The slice of K each BLAS call of an M x N x K product takes (b_trans: B is stored
// transposed); K itself when the product is not cut.
int skinny_k_block(int64_t M, int64_t N, int64_t K, bool b_trans) {
#ifdef EMBER_HAVE_MKL
  if (g_gemm_library == GemmLibrary::MKL && M <= kSkinnyRows && K * N > kCachedOperand && !b_trans) {
    return kSkinnyKBlock;
  }
#endif
  (void)M, (void)N, (void)K, (void)b_trans;
  return INT_MAX;
}

template <typename T, typename In, typename Out> bool gemm_blas(const Gemm<T, In, Out>& g) {
  if (g.M > INT_MAX || g.N > INT_MAX || g.K > INT_MAX) return false;
  bool ta, tb;
  int64_t lda, ldb;
  if (!blas_layout(g.M, g.K, g.a_rs, g.a_cs, &ta, &lda) || !blas_layout(g.K, g.N, g.b_rs, g.b_cs, &tb, &ldb)) {
    return false;
  }
  const int M = static_cast<int>(g.M), N = static_cast<int>(g.N), K = static_cast<int>(g.K);
  const int kb = std::is_same_v<In, T> ? skinny_k_block(g.M, g.N, g.K, tb) : INT_MAX;
  // C[r0:r1, c0:c1] = alpha op(A) op(B) + beta C over K[k_lo:k_hi], into C (leading dim N)
  auto slice = [&](int64_t bt, int r0, int r1, int c0, int c1, int64_t k_lo, int64_t k_hi, Out* C, T beta) {
    const In* A = g.a + g.a_off[bt] + r0 * g.a_rs;
    const In* B = g.b + g.b_off[bt] + c0 * g.b_cs;
    for (int64_t k0 = k_lo; k0 < k_hi; k0 += kb) {
      const int k1 = static_cast<int>(std::min<int64_t>(k_hi, k0 + kb));
      const In* Ak = A + k0 * (ta ? lda : 1);
      const In* Bk = B + k0 * (tb ? 1 : ldb);
      blas_gemm(ta, tb, r1 - r0, c1 - c0, k1 - static_cast<int>(k0), g.alpha, Ak, static_cast<int>(lda), Bk,
                static_cast<int>(ldb), k0 == k_lo ? beta : T(1), C, std::max(N, 1));
    }
  };
  // C[bt][r0:r1, c0:c1] from rows r0:r1 of A[bt] and columns c0:c1 of B[bt]
  auto one = [&](int64_t bt, int r0, int r1, int c0, int c1) {
    slice(bt, r0, r1, c0, c1, 0, K, g.c + bt * g.M * g.N + r0 * g.N + c0, g.beta);
  };
  const int64_t work = g.M * g.N * g.K;
  const int threads = get_num_threads();
  if (g.nbatch > 1 && (work <= kSmallGemm || (work <= kBatchedGemm && g.nbatch >= threads))) {
    if constexpr (!std::is_same_v<In, T>) {
      // bfloat16 through oneDNN: one call per thread for its share of the batch (a call per
      // product costs a few microseconds, as much as a 64^3 product), when the products sit at
      // equal distances
      const int64_t a_bs = g.a_off[1] - g.a_off[0], b_bs = g.b_off[1] - g.b_off[0];
      bool even = bf16_gemm() == Bf16Gemm::OneDNN;
      for (int64_t bt = 2; bt < g.nbatch && even; ++bt) {
        even = g.a_off[bt] - g.a_off[bt - 1] == a_bs && g.b_off[bt] - g.b_off[bt - 1] == b_bs;
      }
      if (even) {
        const int64_t per = (g.nbatch + threads - 1) / threads, chunks = (g.nbatch + per - 1) / per;
        parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
          for (int64_t ch = c0; ch < c1; ++ch) {
            const int64_t b0 = ch * per, b1 = std::min(g.nbatch, b0 + per);
            if (!cpu::onednn_gemm_bf16(ta, tb, M, N, K, g.alpha, g.a + g.a_off[b0], static_cast<int>(lda),
                                       g.b + g.b_off[b0], static_cast<int>(ldb), g.beta, g.c + b0 * g.M * g.N,
                                       std::max(N, 1), b1 - b0, a_bs, b_bs, g.M * g.N)) {
              for (int64_t bt = b0; bt < b1; ++bt) one(bt, 0, M, 0, N);
            }
          }
        });
        return true;
      }
    }
    // many small products: one product per task
    parallel_for(0, g.nbatch, std::max<int64_t>(1, kSmallGemm / std::max<int64_t>(work, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t bt = b; bt < e; ++bt) one(bt, 0, M, 0, N);
                 });
    return true;
  }
  // Each product split into tiles along its longer side of C, so that the operand every tile
  // packs again (B for row tiles, A for column tiles) is the smaller one. A tile holds at
  // least kSmallGemm multiply-adds and kMinTileSpan rows or columns, a multiple of 16 (the
  // widest micro-kernels). Small products take a few tiles per thread (claimed as threads
  // come free: robust when another process takes a core); once the re-packed operand
  // outgrows the L2 cache, packing it again costs as much as a few hundred rows of products,
  // so each tile then takes at least kWideTile rows (1024^3 on 2 threads: 8 tiles
  // 238 GFLOP/s, 2 tiles 308, Intel Xeon, MKL).
  const bool by_rows = M >= N;
  const int64_t side = by_rows ? M : N;
  const int64_t shared = K * (by_rows ? N : M);  // elements of the operand every tile packs
  int64_t tiles = 1;
  if (threads > 1 && work > kSmallGemm) {
    tiles = std::min<int64_t>({int64_t{4} * threads, work / kSmallGemm, std::max<int64_t>(1, side / kMinTileSpan)});
    if (shared > kCachedOperand) tiles = std::min(tiles, std::max<int64_t>(threads, side / kWideTile));
    if (tiles > threads) tiles -= tiles % threads;  // equal rounds on a quiet machine
    tiles = std::max<int64_t>(tiles, 1);
  }
  if constexpr (!std::is_same_v<In, T>) {
    // AMX products re-lay out both operands into tiles at every call, which costs more
    // against their faster arithmetic: one tile per thread, and none split below
    // kSmallBf16Tile multiply-adds (Intel Xeon, 2 threads, GFLOP/s of 1 / 2 / 4 / 8 tiles:
    // 1024^3 311 / 444 / 457 / 452, 256^3 179 / 253 / 245 / 258, 128^3 167 / 104 / 106 / 106)
    tiles = std::clamp<int64_t>(work / kSmallBf16Tile, 1, threads);
  }
  const int64_t span = ((side + tiles - 1) / tiles + 15) / 16 * 16;
  tiles = (side + span - 1) / span;
  if constexpr (std::is_same_v<In, T> && std::is_same_v<Out, T>) {
    // C too small for a tile per thread and K long (a covariance, the weight gradient of a
    // small layer over many rows): K cut into a slice per thread, each slice's product into
    // its own copy of C (the first into C itself), the copies added after (cov 64x10000 on
    // 2 threads, AMD Zen 3: 1.33 -> 0.8 ms)
    const int64_t parts = std::min<int64_t>(threads, g.K / kMinKSlice);
    if (tiles < threads && parts > 1 && work >= parts * kSplitKWork) {
      Tensor copies = empty({(parts - 1) * g.M * g.N}, scalar_type_of<T>());
      T* extra = copies->data<T>();
      const int64_t kspan = (g.K + parts - 1) / parts, mn = g.M * g.N;
      for (int64_t bt = 0; bt < g.nbatch; ++bt) {
        T* C = g.c + bt * mn;
        parallel_for(0, parts, 1, [&](int64_t p0, int64_t p1) {
          for (int64_t p = p0; p < p1; ++p) {
            const int64_t k0 = p * kspan, k1 = std::min(g.K, k0 + kspan);
            slice(bt, 0, M, 0, N, k0, k1, p == 0 ? C : extra + (p - 1) * mn, p == 0 ? g.beta : T(0));
          }
        });
        for (int64_t p = 1; p < parts; ++p) {
          const T* e = extra + (p - 1) * mn;
          for (int64_t i = 0; i < mn; ++i) C[i] += e[i];
        }
      }
      return true;
    }
  }
  for (int64_t bt = 0; bt < g.nbatch; ++bt) {
    if (tiles == 1) {
      one(bt, 0, M, 0, N);
      continue;
    }
    parallel_for(0, tiles, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int lo = static_cast<int>(t * span), hi = static_cast<int>(std::min(side, (t + 1) * span));
        if (by_rows) {
          one(bt, lo, hi, 0, N);
        } else {
          one(bt, 0, M, lo, hi);
        }
      }
    });
  }
  return true;
}
#endif

#ifdef EMBER_HAVE_OPENBLAS
// Integer products through dgemm when that is exact: if K * max|A| * max|B| <= 2^53, every
// partial sum is an integer of at most 53 bits, which double holds exactly whatever the
// summation order (or fused multiply-adds). Checked on the data; only C = A @ B (alpha 1,
// beta 0), the plain matmul. The result is then exact, so narrowing it to the output dtype
// wraps exactly as the integer kernel would.
bool gemm_int_via_double(const Gemm<int64_t>& g) {
  if (g.alpha != 1 || g.beta != 0 || g.M > INT_MAX || g.N > INT_MAX || g.K > INT_MAX) return false;
  auto max_abs = [&](const int64_t* base, const int64_t* off, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
    uint64_t m = 0;
    for (int64_t bt = 0; bt < g.nbatch; ++bt) {
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t* row = base + off[bt] + i * rs;
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t v = row[j * cs];
          m = std::max(m, v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v));
        }
      }
    }
    return static_cast<double>(m);
  };
  const double ma = max_abs(g.a, g.a_off, g.M, g.K, g.a_rs, g.a_cs);
  const double mb = max_abs(g.b, g.b_off, g.K, g.N, g.b_rs, g.b_cs);
  if (static_cast<double>(g.K) * ma * mb > 9007199254740992.0) return false;  // 2^53
  const int M = static_cast<int>(g.M), N = static_cast<int>(g.N), K = static_cast<int>(g.K);
  // scratch from the caching allocator: no page faults, no zero fill
  Tensor ta = empty({g.M * g.K}, ScalarType::Float64), tb = empty({g.K * g.N}, ScalarType::Float64);
  Tensor tc = empty({g.M * g.N}, ScalarType::Float64);
  double *a = ta->data<double>(), *b = tb->data<double>(), *c = tc->data<double>();
  for (int64_t bt = 0; bt < g.nbatch; ++bt) {
    for (int64_t i = 0; i < g.M; ++i)
      for (int64_t k = 0; k < g.K; ++k) a[i * g.K + k] = static_cast<double>(g.a[g.a_off[bt] + i * g.a_rs + k * g.a_cs]);
    for (int64_t k = 0; k < g.K; ++k)
      for (int64_t j = 0; j < g.N; ++j) b[k * g.N + j] = static_cast<double>(g.b[g.b_off[bt] + k * g.b_rs + j * g.b_cs]);
    blas_gemm<double>(false, false, M, N, K, 1.0, a, std::max(K, 1), b, std::max(N, 1), 0.0, c, std::max(N, 1));
    int64_t* out = g.c + bt * g.M * g.N;
    for (int64_t i = 0; i < g.M * g.N; ++i) out[i] = static_cast<int64_t>(c[i]);
  }
  return true;
}
#endif

template <typename T, typename In, typename Out> void gemm_run(const Gemm<T, In, Out>& g) {
  if (g.M == 0 || g.N == 0 || g.nbatch == 0) return;
  if (g.K == 0 || g.alpha == T(0)) {
    scale_c(g);
    return;
  }
  if constexpr (!std::is_same_v<In, T>) {  // bfloat16 operands: only the library takes them
    if (!gemm_blas(g)) throw std::logic_error("gemm_run: bfloat16 operands the library cannot take");
  } else {
#ifdef EMBER_HAVE_OPENBLAS
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || is_complex_v<T>) {
      if (gemm_blas(g)) return;
    } else if constexpr (std::is_same_v<T, int64_t>) {
      if (gemm_int_via_double(g)) return;
    }
#endif
    gemm_fallback(g);
  }
}

// c (contiguous, batch... x M x N) = beta * c + alpha * a @ b, where a (batch... x M x K) and
// b (batch... x K x N) have c's dtype (float32, float64 or int64), or are both bfloat16 with a
// float32 c when bf16_gemm_native() (or a bfloat16 c when bf16_gemm() is oneDNN), and equal batch dims (broadcast views with zero strides
// are fine).
void gemm_tensors(const Tensor& a, const Tensor& b, const Tensor& c, const Scalar& alpha, const Scalar& beta) {
  const int64_t nd = c->dim(), nb = nd - 2;
  std::vector<int64_t> a_off = batch_offsets(a, nb), b_off = batch_offsets(b, nb);
  auto run = [&](auto tag, auto in_tag, auto out_tag) {
    using T = decltype(tag);
    using In = decltype(in_tag);
    using Out = decltype(out_tag);
    Gemm<T, In, Out> g;
    g.M = c->size(nd - 2);
    g.N = c->size(nd - 1);
    g.K = a->size(nd - 1);
    g.nbatch = static_cast<int64_t>(a_off.size());
    g.a = a->data<In>();
    g.a_rs = a->stride(nd - 2);
    g.a_cs = a->stride(nd - 1);
    g.a_off = a_off.data();
    g.b = b->data<In>();
    g.b_rs = b->stride(nd - 2);
    g.b_cs = b->stride(nd - 1);
    g.b_off = b_off.data();
    g.c = c->data<Out>();
    g.alpha = alpha.to<T>();
    g.beta = beta.to<T>();
    gemm_run(g);
  };
#ifdef EMBER_HAVE_OPENBLAS
  if (a->dtype() == ScalarType::BFloat16) {
    // (the path is chosen per call in blas_gemm: were oneDNN switched off since the caller
    // looked, the operands would be widened there)
    if (b->dtype() != ScalarType::BFloat16 ||
        (c->dtype() != ScalarType::Float32 && c->dtype() != ScalarType::BFloat16)) {
      throw std::logic_error("gemm_tensors: bfloat16 operands with an unexpected dtype of b or c");
    }
    if (c->dtype() == ScalarType::BFloat16) {
      run(float{}, BFloat16{}, BFloat16{});
    } else {
      run(float{}, BFloat16{}, float{});
    }
    return;
  }
#endif
  switch (c->dtype()) {
    case ScalarType::Float32: run(float{}, float{}, float{}); break;
    case ScalarType::Float64: run(double{}, double{}, double{}); break;
    case ScalarType::Int64: run(int64_t{}, int64_t{}, int64_t{}); break;
    case ScalarType::ComplexFloat: run(complex64_t{}, complex64_t{}, complex64_t{}); break;
    case ScalarType::ComplexDouble: run(complex128_t{}, complex128_t{}, complex128_t{}); break;
    default: throw std::logic_error("gemm_tensors: unexpected compute dtype");
  }
}

bool same_geometry(const Tensor& x, const Tensor& y) {
  return x->storage() == y->storage() && x->offset() == y->offset() && x->sizes() == y->sizes() &&
         x->strides() == y->strides() && x->dtype() == y->dtype();
}

// The product every op reduces to. a: (batch_a..., M, K), b: (batch_b..., K, N), their batch
// dims broadcast to `batch`; the GEMM result has shape gemm_shape = batch + [M, N] and is
// returned viewed as `final_shape` (same elements, 1-d operands' dims dropped). With `init`
// (broadcastable to gemm_shape) the result is beta * init + alpha * a @ b.
Tensor run_product(const char* op, const Tensor& a, const Tensor& b, const Shape& batch,
                   const Shape& final_shape, ScalarType dt, Tensor init, const Scalar& alpha,
                   const Scalar& beta, const Tensor& out) {
  check_out_dtype(op, out, dt);
  const int64_t M = a->size(-2), K = a->size(-1), N = b->size(-1);
  Shape gemm_shape = batch, a_shape = batch, b_shape = batch;
  gemm_shape.insert(gemm_shape.end(), {M, N});
  a_shape.insert(a_shape.end(), {M, K});
  b_shape.insert(b_shape.end(), {K, N});

  Tensor res = prepare_out(op, out, final_shape, dt);
  if (res == out && (out->storage() == a->storage() || out->storage() == b->storage())) {
    res = ember::empty(final_shape, dt);  // never write into an operand while reading it
  }
  const ScalarType ct = compute_dtype(dt);
  // bfloat16 operands go to the library as they are where it multiplies them natively
  const bool native16 = dt == ScalarType::BFloat16 && a->dtype() == dt && b->dtype() == dt &&
                        products_native(dt, a->device()) && M <= INT_MAX && N <= INT_MAX && K <= INT_MAX;
  Tensor av = expand_to(prep_operand(a, native16 ? dt : ct), a_shape, op);
  Tensor bv = expand_to(prep_operand(b, native16 ? dt : ct), b_shape, op);
  Tensor cv = make_view(res, gemm_shape, contiguous_strides(gemm_shape), res->offset());
  // oneDNN rounds a bfloat16 result itself (once, with beta * init added in float32 when
  // init is bfloat16 too); other 16-bit results are accumulated in float32 and rounded after
  const bool direct16 = native16 && bf16_gemm() == Bf16Gemm::OneDNN && (!init || init->dtype() == dt);
  Tensor c = ct == dt || direct16 ? cv : ember::empty(gemm_shape, ct);
  if (init) {
    if (init->storage() == c->storage() && !same_geometry(init, c)) init = ops::clone(init);
    if (!same_geometry(init, c)) copy_into(c, init);
  }
  gemm_tensors(av, bv, c, alpha, init ? beta : Scalar::from_int(0));
  if (c != cv) copy_into(cv, c);  // 16-bit floats and narrow integers: round once
  return finish_out(op, out, res);
}

// t's leading dims (all but the last) merged into one, as a view when the strides allow.
Tensor fold_rows(const Tensor& t) {
  const int64_t d = t->dim();
  int64_t rows = 1;
  for (int64_t i = 0; i < d - 1; ++i) rows *= t->size(i);
  int64_t inner = -1;  // the innermost non-size-1 leading dim seen so far
  bool ok = true;
  for (int64_t i = d - 2; i >= 0 && ok; --i) {
    if (t->size(i) == 1) continue;
    if (inner >= 0) ok = t->stride(i) == t->stride(inner) * t->size(inner);
    inner = i;
  }
  if (!ok || rows == 0) {
    Tensor c = as_contiguous(t);
    return make_view(c, {rows, t->size(-1)}, {t->size(-1), 1}, c->offset());
  }
  // the innermost non-1 dim gives the row stride; with none there is a single row
  int64_t rs = -1;
  for (int64_t i = d - 2; i >= 0; --i) {
    if (t->size(i) != 1) {
      rs = t->stride(i);
      break;
    }
  }
  if (rs < 0) rs = t->size(-1);
  return make_view(t, {rows, t->size(-1)}, {rs, t->stride(-1)}, t->offset());
}

// A 1-d tensor viewed as a row (1 x n) or column (n x 1) matrix.
Tensor as_row(const Tensor& v) { return make_view(v, {1, v->size(0)}, {v->size(0) * v->stride(0), v->stride(0)}, v->offset()); }
Tensor as_col(const Tensor& v) { return make_view(v, {v->size(0), 1}, {v->stride(0), 1}, v->offset()); }

// The dot product of reals: float16/bfloat16 and float32 accumulate in a wider type;
// integers wrap in uint64.
template <typename T> T real_dot(int64_t n, const T* x, int64_t sx, const T* y, int64_t sy) {
  using Acc = std::conditional_t<is_float_v<T>, double, uint64_t>;
  Acc acc = 0;
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (is_float_v<T>) {
      acc += static_cast<double>(static_cast<opmath_t<T>>(x[i * sx])) *
             static_cast<double>(static_cast<opmath_t<T>>(y[i * sy]));
    } else {
      acc += static_cast<uint64_t>(static_cast<int64_t>(x[i * sx])) *
             static_cast<uint64_t>(static_cast<int64_t>(y[i * sy]));
    }
  }
  if constexpr (is_float_v<T>) {
    return T(static_cast<opmath_t<T>>(acc));
  } else {
    return static_cast<T>(static_cast<int64_t>(acc));
  }
}

template <typename T> T dot_kernel(int64_t n, const T* x, int64_t sx, const T* y, int64_t sy) {
#ifdef EMBER_HAVE_OPENBLAS
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (n <= INT_MAX && sx > 0 && sx <= INT_MAX && sy > 0 && sy <= INT_MAX) {
      if constexpr (std::is_same_v<T, float>) {
        return scipy_cblas_sdot(static_cast<int>(n), x, static_cast<int>(sx), y, static_cast<int>(sy));
      } else {
        return scipy_cblas_ddot(static_cast<int>(n), x, static_cast<int>(sx), y, static_cast<int>(sy));
      }
    }
  }
#endif
  if constexpr (is_complex_v<T>) {  // no conjugate (torch.dot; vdot conjugates x)
    complex128_t acc;
    for (int64_t i = 0; i < n; ++i) acc += complex128_t(x[i * sx]) * complex128_t(y[i * sy]);
    return T(acc);
  } else {
    return real_dot(n, x, sx, y, sy);
  }
}



Tensor dot_impl(const char* op, const Tensor& self, const Tensor& tensor, const Tensor& out) {
  const ScalarType dt = dot_meta(op, self, tensor, out);
  Tensor res = prepare_out(op, out, {}, dt);
  auto kernel = [&](auto tag) {
    using T = decltype(tag);
    *res->data<T>() = dot_kernel<T>(self->numel(), self->data<T>(), self->stride(0), tensor->data<T>(),
                                    tensor->stride(0));
  };
  if (is_complex(dt)) dispatch_complex(dt, op, kernel);
  else dispatch_numeric(dt, op, kernel);
  return finish_out(op, out, res);
}

Tensor mm_impl(const char* op, const Tensor& self, const Tensor& mat2, const Tensor& out) {
  if (self->dim() != 2) {
    throw std::runtime_error(message(op, ": self must be a matrix, got a ", self->dim(), "-D tensor of shape ",
                                     shape_str(self->sizes())));
  }
  if (mat2->dim() != 2) {
    throw std::runtime_error(message(op, ": mat2 must be a matrix, got a ", mat2->dim(), "-D tensor of shape ",
                                     shape_str(mat2->sizes())));
  }
  check_same_dtype(op, self, mat2);
  check_not_bool(op, self->dtype());
  if (self->size(1) != mat2->size(0)) throw_cannot_multiply(op, self->sizes(), mat2->sizes());
  return run_product(op, self, mat2, {}, {self->size(0), mat2->size(1)}, self->dtype(), Tensor(),
                     Scalar::from_int(1), Scalar::from_int(0), out);
}

}  // namespace

Tensor dot(const Tensor& self, const Tensor& tensor, const Tensor& out) {
  return dot_impl("dot", self, tensor, out);
}

Tensor mm(const Tensor& self, const Tensor& mat2, const Tensor& out) { return mm_impl("mm", self, mat2, out); }

Tensor bmm(const Tensor& self, const Tensor& mat2, const Tensor& out) {
  if (self->dim() != 3) {
    throw std::runtime_error(message("bmm: batch1 must be a 3D tensor, got shape ", shape_str(self->sizes())));
  }
  if (mat2->dim() != 3) {
    throw std::runtime_error(message("bmm: batch2 must be a 3D tensor, got shape ", shape_str(mat2->sizes())));
  }
  check_same_dtype("bmm", self, mat2);
  check_not_bool("bmm", self->dtype());
  if (self->size(0) != mat2->size(0) || self->size(2) != mat2->size(1)) {
    throw std::runtime_error(message("bmm: expected size for first two dimensions of batch2 tensor to be: [",
                                     self->size(0), ", ", self->size(2), "] but got: [", mat2->size(0), ", ",
                                     mat2->size(1), "] (shapes ", shape_str(self->sizes()), " and ",
                                     shape_str(mat2->sizes()), ")"));
  }
  return run_product("bmm", self, mat2, {self->size(0)}, {self->size(0), self->size(1), mat2->size(2)},
                     self->dtype(), Tensor(), Scalar::from_int(1), Scalar::from_int(0), out);
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha,
             const Tensor& out) {
  const AddmmMeta m = addmm_meta(self, mat1, mat2, beta, alpha, out);
  Tensor bias = m.use_self ? expand_to(self, m.shape, "addmm") : Tensor();
  return run_product("addmm", mat1, mat2, {}, m.shape, m.dtype, bias, m.alpha, m.beta, out);
}

Tensor matmul(const Tensor& self, const Tensor& other, const Tensor& out) {
  const int64_t da = self->dim(), db = other->dim();
  if (da == 0 || db == 0) {
    throw std::runtime_error(message("matmul: both arguments to matmul need to be at least 1D, but they are ", da,
                                     "D and ", db, "D"));
  }
  check_same_dtype("matmul", self, other);
  const ScalarType dt = self->dtype();
  check_not_bool("matmul", dt);
  if (da == 1 && db == 1) return dot_impl("matmul", self, other, out);
  if (da == 2 && db == 2) return mm_impl("matmul", self, other, out);
  const Scalar one = Scalar::from_int(1), zero = Scalar::from_int(0);
  if (da == 2 && db == 1) {
    if (self->size(1) != other->size(0)) {
      throw std::runtime_error(message("matmul: size mismatch, got input (", self->size(0), "), mat (",
                                       mat_str(self), "), vec (", other->size(0), "): shapes ",
                                       shape_str(self->sizes()), " and ", shape_str(other->sizes())));
    }
    return run_product("matmul", self, as_col(other), {}, {self->size(0)}, dt, Tensor(), one, zero, out);
  }
  if (da == 1 && db == 2) {
    if (self->size(0) != other->size(0)) throw_cannot_multiply("matmul", {1, self->size(0)}, other->sizes());
    return run_product("matmul", as_row(self), other, {}, {other->size(1)}, dt, Tensor(), one, zero, out);
  }
  // batched: at least one operand has 3 or more dims
  Tensor a = da == 1 ? as_row(self) : self;
  Tensor b = db == 1 ? as_col(other) : other;
  const int64_t M = a->size(-2), K = a->size(-1), N = b->size(-1);
  if (b->size(-2) != K) throw_cannot_multiply("matmul", self->sizes(), other->sizes());
  const Shape batch_a(a->sizes().begin(), a->sizes().end() - 2);
  const Shape batch_b(b->sizes().begin(), b->sizes().end() - 2);
  const Shape batch = broadcast_shapes(batch_a, batch_b, "matmul");
  Shape final_shape = batch;
  if (da > 1) final_shape.push_back(M);
  if (db > 1) final_shape.push_back(N);
  if (b->dim() == 2) {
    // (batch..., M, K) @ (K, N): one GEMM with the batch folded into the rows
    return run_product("matmul", fold_rows(a), b, {}, final_shape, dt, Tensor(), one, zero, out);
  }
  return run_product("matmul", a, b, batch, final_shape, dt, Tensor(), one, zero, out);
}

}  // namespace ember::cpu


namespace ember::ops {

using cpu::throw_cannot_multiply;

// out + bias as PyTorch's linear adds a bias it cannot fold into addmm: output.add_(bias), so
// the product keeps its dtype and a bias of another dtype must cast to it ("result type ...
// can't be cast to the desired output type ...")
static Tensor add_bias(const Tensor& out, const Tensor& bias) {
  return add(out, bias, Scalar::from_int(1), bias->dtype() == out->dtype() ? Tensor() : out);
}

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  if (input->dim() == 0 || weight->dim() == 0 || weight->dim() > 2) {
    throw std::runtime_error(message("linear: expected input of at least 1 dimension and a weight of 1 or 2, got ",
                                     "input of shape ", shape_str(input->sizes()), " and weight of shape ",
                                     shape_str(weight->sizes())));
  }
  if (weight->dim() == 1) {  // (*, in) @ (in,) -> (*)
    // PyTorch adds a bias of 1 or more dims through addmm, which wants a matrix
    if (bias && bias->dim() > 0) throw std::runtime_error("linear: mat2 must be a matrix, got 1-D tensor");
    Tensor out = matmul(input, weight, Tensor());
    return bias ? add_bias(out, bias) : out;
  }
  const int64_t in = weight->size(1);
  int64_t rows = 1;  // the leading dims' product (not numel / in: in may be 0)
  for (int64_t d = 0; d + 1 < input->dim(); ++d) rows *= input->size(d);
  if (input->size(-1) != in) throw_cannot_multiply("linear", {rows, input->size(-1)}, {in, weight->size(0)});
  Tensor wt = t(weight);
  if (input->dim() == 2) {
    return bias ? addmm(bias, input, wt, Scalar::from_int(1), Scalar::from_int(1), Tensor())
                : mm(input, wt, Tensor());
  }
  // (*, in): one product over the leading dims folded into rows
  Shape out_shape = input->sizes();
  out_shape.back() = weight->size(0);
  Tensor flat = reshape(input, {rows, in});
  if (bias && bias->dtype() != input->dtype()) return add_bias(reshape(mm(flat, wt, Tensor()), out_shape), bias);
  Tensor res = bias ? addmm(bias, flat, wt, Scalar::from_int(1), Scalar::from_int(1), Tensor())
                    : mm(flat, wt, Tensor());
  return reshape(res, out_shape);
}

}  // namespace ember::ops
