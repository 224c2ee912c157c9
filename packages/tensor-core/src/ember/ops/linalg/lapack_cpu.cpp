// Matrix decompositions and solvers (ember.linalg): cholesky, qr, eigh, eigvalsh, svd, svdvals,
// solve, inv, det, slogdet, solve_triangular, eig, eigvals.
//
// Every op copies its (batch..., rows, cols) input into a tensor that stores each matrix
// column-major (strides (..., 1, rows)), the layout LAPACK reads and writes, and runs one
// LAPACK call per matrix of the batch; outputs are made in that layout too, so they come
// back to the user with PyTorch's column-major strides and no copy. float32, float64,
// complex64 and complex128 (PyTorch's types of error for the others); eigenvalues of
// Hermitian matrices, singular values and log|det| are real for complex input, as in
// PyTorch. LAPACK is the one inside the scipy-openblas32 wheel (LAPACKE interface, 32-bit
// ints, scipy_ prefix), found by the build with the BLAS.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ember/backends/cpu/blas.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"

#ifdef EMBER_HAVE_OPENBLAS
// LAPACKE's and CBLAS's routines of each precision (s, d: real; c, z: complex, whose scalars
// are ember's Complex, laid out as LAPACK's), declared by one macro.
#define EMBER_DECLARE_LAPACK(p, T, R, orgqr, syevd)                                                              \
  int scipy_LAPACKE_##p##potrf(int layout, char uplo, int n, T* a, int lda);                                    \
  int scipy_LAPACKE_##p##geqrf(int layout, int m, int n, T* a, int lda, T* tau);                                \
  int scipy_LAPACKE_##p##orgqr(int layout, int m, int n, int k, T* a, int lda, const T* tau);                   \
  int scipy_LAPACKE_##p##syevd(int layout, char jobz, char uplo, int n, T* a, int lda, R* w);                   \
  int scipy_LAPACKE_##p##gesdd(int layout, char jobz, int m, int n, T* a, int lda, R* s, T* u, int ldu, T* vt,  \
                               int ldvt);                                                                       \
  int scipy_LAPACKE_##p##gesv(int layout, int n, int nrhs, T* a, int lda, int* ipiv, T* b, int ldb);            \
  int scipy_LAPACKE_##p##getrf(int layout, int m, int n, T* a, int lda, int* ipiv);                           \
  int scipy_LAPACKE_##p##sytrf(int layout, char uplo, int n, T* a, int lda, int* ipiv);                        \
  int scipy_LAPACKE_##p##sytrs(int layout, char uplo, int n, int nrhs, const T* a, int lda, const int* ipiv,   \
                               T* b, int ldb);
// Hermitian (complex) LDL^H: hetrf / hetrs
#define EMBER_DECLARE_LAPACK_HE(p, T)                                                                            \
  int scipy_LAPACKE_##p##hetrf(int layout, char uplo, int n, T* a, int lda, int* ipiv);                        \
  int scipy_LAPACKE_##p##hetrs(int layout, char uplo, int n, int nrhs, const T* a, int lda, const int* ipiv,   \
                               T* b, int ldb);
extern "C" {
void scipy_LAPACKE_set_nancheck(int flag);
EMBER_DECLARE_LAPACK(s, float, float, orgqr, syevd)
EMBER_DECLARE_LAPACK(d, double, double, orgqr, syevd)
EMBER_DECLARE_LAPACK(c, ember::complex64_t, float, ungqr, heevd)
EMBER_DECLARE_LAPACK(z, ember::complex128_t, double, ungqr, heevd)
EMBER_DECLARE_LAPACK_HE(c, ember::complex64_t)
EMBER_DECLARE_LAPACK_HE(z, ember::complex128_t)
int scipy_LAPACKE_sgeev(int layout, char jobvl, char jobvr, int n, float* a, int lda, float* wr, float* wi, float* vl,
                        int ldvl, float* vr, int ldvr);
int scipy_LAPACKE_dgeev(int layout, char jobvl, char jobvr, int n, double* a, int lda, double* wr, double* wi,
                        double* vl, int ldvl, double* vr, int ldvr);
int scipy_LAPACKE_cgeev(int layout, char jobvl, char jobvr, int n, ember::complex64_t* a, int lda,
                        ember::complex64_t* w, ember::complex64_t* vl, int ldvl, ember::complex64_t* vr, int ldvr);
int scipy_LAPACKE_zgeev(int layout, char jobvl, char jobvr, int n, ember::complex128_t* a, int lda,
                        ember::complex128_t* w, ember::complex128_t* vl, int ldvl, ember::complex128_t* vr, int ldvr);
// alpha by value for the real types, by address for the complex ones (CBLAS's interface)
void scipy_cblas_strsm(int layout, int side, int uplo, int trans, int diag, int m, int n, float alpha,
                       const float* a, int lda, float* b, int ldb);
void scipy_cblas_dtrsm(int layout, int side, int uplo, int trans, int diag, int m, int n, double alpha,
                       const double* a, int lda, double* b, int ldb);
void scipy_cblas_ctrsm(int layout, int side, int uplo, int trans, int diag, int m, int n,
                       const ember::complex64_t* alpha, const ember::complex64_t* a, int lda, ember::complex64_t* b,
                       int ldb);
void scipy_cblas_ztrsm(int layout, int side, int uplo, int trans, int diag, int m, int n,
                       const ember::complex128_t* alpha, const ember::complex128_t* a, int lda,
                       ember::complex128_t* b, int ldb);
// the blocked LU's row swaps and trailing updates (real types)
int scipy_LAPACKE_slaswp(int layout, int n, float* a, int lda, int k1, int k2, const int* ipiv, int incx);
int scipy_LAPACKE_dlaswp(int layout, int n, double* a, int lda, int k1, int k2, const int* ipiv, int incx);
void scipy_cblas_sgemm(int layout, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda,
                       const float* b, int ldb, float beta, float* c, int ldc);
void scipy_cblas_dgemm(int layout, int ta, int tb, int m, int n, int k, double alpha, const double* a, int lda,
                       const double* b, int ldb, double beta, double* c, int ldc);
}
#undef EMBER_DECLARE_LAPACK
#undef EMBER_DECLARE_LAPACK_HE
#endif

namespace ember::cpu {
namespace {

// LAPACK's unblocked algorithms (getf2, getrs, potf2) for matrices up to kSmallN, where a
// library call costs more than the arithmetic. Column-major, LAPACK's info conventions.
constexpr int kSmallN = 16;

template <typename T> int small_getrf(int n, T* a, int* ipiv) {
  int info = 0;
  for (int j = 0; j < n; ++j) {
    int p = j;
    T best = std::abs(a[j + j * n]);
    for (int i = j + 1; i < n; ++i) {
      if (std::abs(a[i + j * n]) > best) {
        best = std::abs(a[i + j * n]);
        p = i;
      }
    }
    ipiv[j] = p + 1;
    if (a[p + j * n] != T(0)) {
      if (p != j) {
        for (int c = 0; c < n; ++c) std::swap(a[j + c * n], a[p + c * n]);
      }
      const T inv = T(1) / a[j + j * n];
      for (int i = j + 1; i < n; ++i) a[i + j * n] *= inv;
    } else if (info == 0) {
      info = j + 1;
    }
    for (int c = j + 1; c < n; ++c) {
      const T f = a[j + c * n];
      for (int i = j + 1; i < n; ++i) a[i + c * n] -= a[i + j * n] * f;
    }
  }
  return info;
}

// B (n x k) <- A^-1 B from small_getrf's factors.
template <typename T> void small_getrs(int n, int k, const T* a, const int* ipiv, T* b) {
  for (int c = 0; c < k; ++c) {
    T* x = b + c * n;
    for (int i = 0; i < n; ++i) {
      if (ipiv[i] - 1 != i) std::swap(x[i], x[ipiv[i] - 1]);
    }
    for (int j = 0; j < n; ++j) {  // L y = P b (unit diagonal)
      for (int i = j + 1; i < n; ++i) x[i] -= a[i + j * n] * x[j];
    }
    for (int j = n - 1; j >= 0; --j) {  // U x = y
      x[j] /= a[j + j * n];
      for (int i = 0; i < j; ++i) x[i] -= a[i + j * n] * x[j];
    }
  }
}

template <typename T> int small_potrf(bool upper, int n, T* a) {
  // element (i, j) of the factor: L (lower) or U^T (upper), so both run one algorithm
  auto at = [&](int i, int j) -> T& { return upper ? a[j + i * n] : a[i + j * n]; };
  for (int j = 0; j < n; ++j) {
    T d = at(j, j);
    for (int k = 0; k < j; ++k) d -= at(j, k) * at(j, k);
    if (!(d > T(0))) {  // NaN too, as LAPACK
      at(j, j) = d;
      return j + 1;
    }
    const T l = std::sqrt(d);
    at(j, j) = l;
    for (int i = j + 1; i < n; ++i) {
      T v = at(i, j);
      for (int k = 0; k < j; ++k) v -= at(i, k) * at(j, k);
      at(i, j) = v / l;
    }
  }
  return 0;
}

#ifdef EMBER_HAVE_OPENBLAS
constexpr int kColMajor = 102;  // LAPACK_COL_MAJOR / CblasColMajor
constexpr int kLeft = 141, kRight = 142, kUpper = 121, kLower = 122, kNoTrans = 111, kNonUnit = 131, kUnit = 132;

// The LAPACK routines of one element type (Routines<T>), and the calls the ops make
// (Lapack<T>): the unblocked small-matrix paths for the real types, LAPACK otherwise.
template <typename T> struct Routines;
#define EMBER_BIND_LAPACK(p, T, orgqr, syevd, hetrf, hetrs)       \
  template <> struct Routines<T> {                                \
    static constexpr auto sytrf = &scipy_LAPACKE_##p##sytrf;      \
    static constexpr auto sytrs = &scipy_LAPACKE_##p##sytrs;      \
    static constexpr auto hetrf_ = &scipy_LAPACKE_##p##hetrf;     \
    static constexpr auto hetrs_ = &scipy_LAPACKE_##p##hetrs;     \
    static constexpr auto potrf = &scipy_LAPACKE_##p##potrf;      \
    static constexpr auto geqrf = &scipy_LAPACKE_##p##geqrf;      \
    static constexpr auto orgqr_ = &scipy_LAPACKE_##p##orgqr;     \
    static constexpr auto syevd_ = &scipy_LAPACKE_##p##syevd;     \
    static constexpr auto gesdd = &scipy_LAPACKE_##p##gesdd;      \
    static constexpr auto gesv = &scipy_LAPACKE_##p##gesv;        \
    static constexpr auto getrf = &scipy_LAPACKE_##p##getrf;      \
    static constexpr auto trsm = &scipy_cblas_##p##trsm;          \
  };
EMBER_BIND_LAPACK(s, float, orgqr, syevd, sytrf, sytrs)  // a real Hermitian matrix is symmetric
EMBER_BIND_LAPACK(d, double, orgqr, syevd, sytrf, sytrs)
EMBER_BIND_LAPACK(c, complex64_t, ungqr, heevd, hetrf, hetrs)
EMBER_BIND_LAPACK(z, complex128_t, ungqr, heevd, hetrf, hetrs)
#undef EMBER_BIND_LAPACK

inline float blas_scalar(const float& v) { return v; }
inline double blas_scalar(const double& v) { return v; }
template <typename R> const Complex<R>* blas_scalar(const Complex<R>& v) { return &v; }

// LU with partial pivoting of one square column-major matrix on all of Ember's threads:
// right-looking, panels of kLuPanel columns. Each panel is factored by LAPACK's getrf on the
// calling thread (the critical path), then the columns right of it are cut into one tile per
// thread, and each tile gets the panel's row swaps, its rows of U (trsm) and its trailing update
// (gemm) independently. OpenBLAS's own threaded getrf gains little from a second thread below
// about 900x900; this does (AMD Zen 5, 2 threads against one LAPACK call, float64: 256 0.44 ->
// 0.31 ms, 512 2.4 -> 1.5, 1024 12.7 -> 7.1). Same pivots as LAPACK's (each panel's choice
// sees the same updated column); the values differ only in the order of their sums.
constexpr int kLuPanel = 32;
constexpr int kBlockedLuMin = 192;

template <typename T> void laswp(int ncols, T* a, int lda, int k1, int k2, const int* ipiv) {
  if constexpr (std::is_same_v<T, float>) {
    scipy_LAPACKE_slaswp(kColMajor, ncols, a, lda, k1, k2, ipiv, 1);
  } else {
    scipy_LAPACKE_dlaswp(kColMajor, ncols, a, lda, k1, k2, ipiv, 1);
  }
}

// c (m x n) -= a (m x k) b (k x n), column-major
template <typename T> void gemm_minus(int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c, int ldc) {
  if constexpr (std::is_same_v<T, float>) {
    scipy_cblas_sgemm(kColMajor, kNoTrans, kNoTrans, m, n, k, -1.0f, a, lda, b, ldb, 1.0f, c, ldc);
  } else {
    scipy_cblas_dgemm(kColMajor, kNoTrans, kNoTrans, m, n, k, -1.0, a, lda, b, ldb, 1.0, c, ldc);
  }
}

// Whether blocked_getrf takes an n x n matrix of T: real, large enough, more than one thread,
// and not already inside a parallel region (a batch's matrices are spread over the pool).
template <typename T> bool blocked_lu_takes(int64_t n) {
  return !is_complex_v<T> && n >= kBlockedLuMin && get_num_threads() > 1 && !in_parallel_region();
}

// Column tiles [c0, n) cut into one per thread, on multiples of 8 columns.
template <typename F> void over_column_tiles(int c0, int n, F&& f) {
  const int64_t threads = get_num_threads(), cols = n - c0;
  const int64_t tiles = std::max<int64_t>(1, std::min<int64_t>(threads, cols / 16));
  const int span = static_cast<int>((cols + tiles - 1) / tiles + 7) / 8 * 8;
  parallel_for(0, tiles, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int lo = c0 + static_cast<int>(t) * span, hi = std::min(n, lo + span);
      if (lo < hi) f(lo, hi);
    }
  });
}

template <typename T> int blocked_getrf(int n, T* a, int lda, int* ipiv) {
  int info = 0;
  for (int k = 0; k < n; k += kLuPanel) {
    const int b = std::min(kLuPanel, n - k);
    T* panel = a + k + static_cast<int64_t>(k) * lda;
    const int r = Routines<T>::getrf(kColMajor, n - k, b, panel, lda, ipiv + k);
    if (r < 0) return r;
    if (r > 0 && info == 0) info = r + k;
    for (int i = k; i < k + b; ++i) ipiv[i] += k;
    if (k > 0) laswp(k, a, lda, k + 1, k + b, ipiv);  // the columns left of the panel
    if (k + b >= n) break;
    over_column_tiles(k + b, n, [&](int c0, int c1) {
      T* cols = a + static_cast<int64_t>(c0) * lda;
      laswp(c1 - c0, cols, lda, k + 1, k + b, ipiv);
      Routines<T>::trsm(kColMajor, kLeft, kLower, kNoTrans, kUnit, b, c1 - c0, T(1), panel, lda, cols + k, lda);
      gemm_minus(n - k - b, c1 - c0, b, panel + b, lda, cols + k, lda, cols + k + b, lda);
    });
  }
  return info;
}

// B (n x nrhs) <- A^-1 B from blocked_getrf's factors: the right-hand sides in column tiles,
// one per thread (swaps, then the two triangular solves).
template <typename T> void blocked_getrs(int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb) {
  over_column_tiles(0, nrhs, [&](int c0, int c1) {
    T* cols = b + static_cast<int64_t>(c0) * ldb;
    laswp(c1 - c0, cols, ldb, 1, n, ipiv);
    Routines<T>::trsm(kColMajor, kLeft, kLower, kNoTrans, kUnit, n, c1 - c0, T(1), a, lda, cols, ldb);
    Routines<T>::trsm(kColMajor, kLeft, kUpper, kNoTrans, kNonUnit, n, c1 - c0, T(1), a, lda, cols, ldb);
  });
}

template <typename T> struct Lapack {
  using R = real_t<T>;
  using Raw = Routines<T>;
  static constexpr bool kSmallPaths = !is_complex_v<T>;

  static int potrf(char uplo, int n, T* a, int lda) {
    if constexpr (kSmallPaths) {
      if (n <= kSmallN) return small_potrf(uplo == 'U', n, a);
    }
    return Raw::potrf(kColMajor, uplo, n, a, lda);
  }
  static int geqrf(int m, int n, T* a, int lda, T* tau) { return Raw::geqrf(kColMajor, m, n, a, lda, tau); }
  // Q from geqrf's reflectors: orgqr (real) or ungqr (complex)
  static int orgqr(int m, int n, int k, T* a, int lda, const T* tau) {
    return Raw::orgqr_(kColMajor, m, n, k, a, lda, tau);
  }
  // symmetric (real) or Hermitian (complex) eigen-decomposition, real eigenvalues
  static int syevd(char jobz, char uplo, int n, T* a, int lda, R* w) {
    return Raw::syevd_(kColMajor, jobz, uplo, n, a, lda, w);
  }
  static int gesdd(char jobz, int m, int n, T* a, int lda, R* s, T* u, int ldu, T* vt, int ldvt) {
    return Raw::gesdd(kColMajor, jobz, m, n, a, lda, s, u, ldu, vt, ldvt);
  }
  static int gesv(int n, int nrhs, T* a, int lda, int* ipiv, T* b, int ldb) {
    if constexpr (kSmallPaths) {
      if (n <= kSmallN) {
        const int info = small_getrf(n, a, ipiv);
        if (info == 0) small_getrs(n, nrhs, a, ipiv, b);
        return info;
      }
      if (blocked_lu_takes<T>(n)) {
        const int info = getrf(n, n, a, lda, ipiv);
        if (info == 0) blocked_getrs(n, nrhs, a, lda, ipiv, b, ldb);
        return info;
      }
    }
    return Raw::gesv(kColMajor, n, nrhs, a, lda, ipiv, b, ldb);
  }
  static int getrf(int m, int n, T* a, int lda, int* ipiv) {
    if constexpr (kSmallPaths) {
      if (m == n && n <= kSmallN) return small_getrf(n, a, ipiv);
      if (m == n && blocked_lu_takes<T>(n)) {
        return blocked_getrf(n, a, lda, ipiv);
      }
    }
    return Raw::getrf(kColMajor, m, n, a, lda, ipiv);
  }
  // LDL^T (LDL^H when hermitian) with Bunch-Kaufman pivoting, lower triangle
  static int ldl(bool hermitian, int n, T* a, int lda, int* ipiv) {
    return hermitian ? Raw::hetrf_(kColMajor, 'L', n, a, lda, ipiv) : Raw::sytrf(kColMajor, 'L', n, a, lda, ipiv);
  }
  static int ldl_solve(bool hermitian, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb) {
    return hermitian ? Raw::hetrs_(kColMajor, 'L', n, nrhs, a, lda, ipiv, b, ldb)
                     : Raw::sytrs(kColMajor, 'L', n, nrhs, a, lda, ipiv, b, ldb);
  }
  static void trsm(int side, int uplo, int diag, int m, int n, const T* a, int lda, T* b, int ldb) {
    const T one(1);
    Raw::trsm(kColMajor, side, uplo, kNoTrans, diag, m, n, blas_scalar(one), a, lda, b, ldb);
  }
};
#endif

// f(T{}) for the float32/float64/complex64/complex128 element type of dt.
template <typename F> void dispatch_real_or_complex(ScalarType dt, F&& f) {
  if (dt == ScalarType::ComplexFloat) f(complex64_t{});
  else if (dt == ScalarType::ComplexDouble) f(complex128_t{});
  else dispatch_real(dt, f);
}

// RuntimeError unless t is a (batch of) float32, float64, complex64 or complex128 matrices
// (PyTorch's errors for the others); `square` also asks rows == cols.
void check_matrix(const char* op, const Tensor& t, bool square, const char* name = "A") {
  if (t->dim() < 2) {
    throw std::runtime_error(message(op, ": The input tensor ", name, " must have at least 2 dimensions."));
  }
  const ScalarType dt = t->dtype();
  if (!is_floating(dt) && !is_complex(dt)) {
    throw std::runtime_error(message(op, ": Expected a floating point or complex tensor as input. Got ",
                                     scalar_type_name(dt)));
  }
  if (dt != ScalarType::Float32 && dt != ScalarType::Float64 && !is_complex(dt)) {
    throw NotImplementedError(message(op, ": not implemented for '", scalar_type_name(dt),
                                      "' (float32, float64, complex64 and complex128 are supported)"));
  }
  if (square && t->size(-1) != t->size(-2)) {
    throw std::runtime_error(message(op, ": ", name, " must be batches of square matrices, but they are ",
                                     t->size(-2), " by ", t->size(-1), " matrices"));
  }
#ifdef EMBER_HAVE_OPENBLAS
  // LAPACKE scans every input for NaN before each call; the ops check what needs checking
  static const bool nancheck_off = (scipy_LAPACKE_set_nancheck(0), true);
  (void)nancheck_off;
#else
  throw std::runtime_error(message(op, ": this build of ember-tensor-core has no LAPACK (scipy-openblas32 was "
                                       "not found when it was compiled)"));
#endif
}

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  if (a->dtype() != b->dtype()) {
    throw std::runtime_error(message(op, ": Expected A and B to have the same dtype, but found A of type ",
                                     scalar_type_name(a->dtype()), " and B of type ", scalar_type_name(b->dtype()),
                                     " instead"));
  }
}

Shape batch_of(const Tensor& t) { return Shape(t->sizes().begin(), t->sizes().end() - 2); }

int64_t batch_count(const Shape& batch) { return shape_numel(batch); }

// An uninitialised (batch..., rows, cols) tensor whose matrices are stored column-major one
// after another: matrix b starts at data + b * rows * cols, leading dimension max(rows, 1).
Tensor fortran_empty(const Shape& batch, int64_t rows, int64_t cols, ScalarType dt) {
  Shape sizes = batch, strides(batch.size() + 2);
  sizes.push_back(rows);
  sizes.push_back(cols);
  strides[batch.size()] = 1;
  strides[batch.size() + 1] = std::max<int64_t>(rows, 1);
  int64_t step = rows * cols;
  for (int64_t i = static_cast<int64_t>(batch.size()) - 1; i >= 0; --i) {
    strides[i] = step;
    step *= batch[i];
  }
  return empty_strided(sizes, strides, dt);
}

// A column-major copy of t (broadcast to batch first): LAPACK's working matrices.
Tensor fortran_copy(const Tensor& t, const Shape& batch) {
  const int64_t rows = t->size(-2), cols = t->size(-1), count = batch_count(batch);
  Tensor out = fortran_empty(batch, rows, cols, t->dtype());
  if (rows * cols > 64 * 64 || count == 0) {  // big matrices: the general (blocked) copy
    copy_into(out, t);
    return out;
  }
  // many small matrices: one plain loop per matrix, spread over the pool
  const int64_t nb = static_cast<int64_t>(batch.size()), rs = t->stride(-2), cs = t->stride(-1);
  const char* src = t->data_ptr();
  char* dst = out->data_ptr();
  dispatch_itemsize(t->itemsize(), [&](auto unit) {
    using U = decltype(unit);
    parallel_for(0, count, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(rows * cols, 1)),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t b = begin; b < end; ++b) {
                     int64_t off = 0, rem = b;
                     for (int64_t d = nb - 1; d >= 0; --d) {
                       off += (rem % batch[d]) * t->stride(d);
                       rem /= batch[d];
                     }
                     const U* s = reinterpret_cast<const U*>(src) + off;
                     U* o = reinterpret_cast<U*>(dst) + b * rows * cols;
                     for (int64_t j = 0; j < cols; ++j) {
                       for (int64_t i = 0; i < rows; ++i) o[i + j * rows] = s[i * rs + j * cs];
                     }
                   }
                 });
  });
  return out;
}

int lapack_int(const char* op, int64_t v) {
  if (v > std::numeric_limits<int>::max()) {
    throw std::runtime_error(message(op, ": a matrix dimension of ", v, " exceeds LAPACK's 32-bit indices"));
  }
  return static_cast<int>(v);
}

// "(Batch element 3): " for batched inputs, as PyTorch prefixes its LinAlgErrors.
std::string batch_prefix(const Tensor& t, int64_t b) {
  return t->dim() > 2 ? message("(Batch element ", b, "): ") : std::string();
}

// Runs f(b) -> info for every matrix b < count and returns the first (b, info) with a
// nonzero info, or (-1, 0). `flops` estimates the work of one matrix. Matrices of a batch are
// spread over Ember's pool, one LAPACK call per thread, up to `threaded_from` flops each
// (default: 64^3); a larger matrix gets LAPACK's own threads for its inner products. Where
// OpenBLAS's threads lose below a size, the caller raises threaded_from (measured on AMD Zen 5,
// 2 threads against 1: getrf 256^3 0.45 against 0.33 ms, even only from about 900; potrf
// 256^3 0.49 against 0.22 ms, ahead from 512).
constexpr double kLapackThreadedFlops = 64.0 * 64.0 * 64.0;
constexpr double kGetrfThreadedFlops = 2.0 / 3.0 * 900.0 * 900.0 * 900.0;

// each_matrix's threaded_from for LU-based calls (getrf, gesv) of n x n matrices of T: never
// LAPACK's own threads where the blocked LU runs one matrix on the pool (it calls LAPACK from
// the pool's threads), else `otherwise`.
template <typename T> double lu_threaded_from(int64_t n, double otherwise) {
  return blocked_lu_takes<T>(n) ? std::numeric_limits<double>::infinity() : otherwise;
}
constexpr double kPotrfThreadedFlops = 400.0 * 400.0 * 400.0 / 3.0;

template <typename F>
std::pair<int64_t, int> each_matrix(int64_t count, double flops, F&& f,
                                    double threaded_from = kLapackThreadedFlops) {
  std::vector<int> infos(static_cast<size_t>(std::max<int64_t>(count, 0)), 0);
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) infos[b] = f(b);
  };
  if (flops > threaded_from) {
    BlasThreadsScope threaded;  // large matrices: LAPACK's inner products on all threads
    run(0, count);
  } else if (count > 1) {
    const double per_task = std::max(kLapackThreadedFlops, flops);
    const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(per_task / std::max(flops, 1.0)));
    parallel_for(0, count, grain, run);
  } else {
    run(0, count);
  }
  for (int64_t b = 0; b < count; ++b) {
    if (infos[b] != 0) return {b, infos[b]};
  }
  return {-1, 0};
}

template <typename T> bool all_finite(const T* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (is_complex_v<T>) {
      if (!std::isfinite(p[i].re) || !std::isfinite(p[i].im)) return false;
    } else if (!std::isfinite(p[i])) {
      return false;
    }
  }
  return true;
}

template <typename T> T quiet_nan() {
  const real_t<T> nan = std::numeric_limits<real_t<T>>::quiet_NaN();
  if constexpr (is_complex_v<T>) return T(nan, nan);
  else return nan;
}

template <typename T> void set_identity(T* p, int64_t rows, int64_t cols) {
  for (int64_t j = 0; j < cols; ++j) {
    for (int64_t i = 0; i < rows; ++i) p[i + j * rows] = i == j ? T(1) : T(0);
  }
}

Tensor broadcast_matrix(const Tensor& t, const Shape& batch) {
  Shape shape = batch;
  shape.push_back(t->size(-2));
  shape.push_back(t->size(-1));
  return expand_to(t, shape, "linalg");
}

// The LinAlgError of an eigen-solver that did not converge (PyTorch's words).
[[noreturn]] void throw_not_converged(const char* op, const Tensor& A, int64_t b, int info) {
  throw LinAlgError(message(op, ": ", batch_prefix(A, b),
                            "The algorithm failed to converge because the input matrix is ill-conditioned or has "
                            "too many repeated eigenvalues (error code: ",
                            info, ")."));
}

// Eigen-decomposition shared by eigh and eigvalsh.
std::tuple<Tensor, Tensor> symmetric_eigen(const char* op, const Tensor& A, const std::string& UPLO, bool vectors) {
  check_matrix(op, A, true);
  if (UPLO != "L" && UPLO != "U") {
    throw std::runtime_error(message(op, ": Expected UPLO argument to be 'L' or 'U', but got ", UPLO));
  }
  const Shape batch = batch_of(A);
  const int64_t n = A->size(-1);
  Tensor V = fortran_copy(A, batch);
  Shape wshape = batch;
  wshape.push_back(n);
  Tensor w = empty(wshape, to_real(A->dtype()));  // real eigenvalues, complex A too
#ifdef EMBER_HAVE_OPENBLAS
  const int ni = lapack_int(op, n);
  dispatch_real_or_complex(A->dtype(), [&](auto zero) {
    using T = decltype(zero);
    using R = real_t<T>;
    auto [b, info] = each_matrix(batch_count(batch), (is_complex_v<T> ? 36.0 : 9.0) * n * n * n, [&](int64_t b) {
      T* a = V->data<T>() + b * n * n;
      R* wb = w->data<R>() + b * n;
      if (n == 0) return 0;
      if (!all_finite(a, n * n)) {  // LAPACK's iterations are not defined on NaN: NaN out
        std::fill(a, a + n * n, quiet_nan<T>());
        std::fill(wb, wb + n, quiet_nan<R>());
        return 0;
      }
      return Lapack<T>::syevd(vectors ? 'V' : 'N', UPLO[0], ni, a, ni, wb);
    });
    if (info > 0) {
      throw_not_converged(op, A, b, info);
    }
  });
#endif
  return {w, V};
}

// LU factorisation of each matrix of A in place (a column-major copy); returns the pivots.
template <typename T> void lu_each(const Tensor& lu, int64_t n, int64_t count, std::vector<int>& piv) {
#ifdef EMBER_HAVE_OPENBLAS
  piv.assign(static_cast<size_t>(std::max<int64_t>(n, 1) * count), 0);
  const int ni = static_cast<int>(n);
  each_matrix(
      count, 0.67 * n * n * n,
      [&](int64_t b) { return n > 0 ? Lapack<T>::getrf(ni, ni, lu->data<T>() + b * n * n, ni, piv.data() + b * n) : 0; },
      lu_threaded_from<T>(n, kGetrfThreadedFlops));
#else
  (void)lu, (void)n, (void)count, (void)piv;
#endif
}

}  // namespace

Tensor linalg_cholesky(const Tensor& A, bool upper) {
  const char* op = "linalg.cholesky";
  check_matrix(op, A, true);
  const Shape batch = batch_of(A);
  const int64_t n = A->size(-1);
  Tensor L = fortran_copy(A, batch);
#ifdef EMBER_HAVE_OPENBLAS
  const int ni = lapack_int(op, n);
  dispatch_real_or_complex(A->dtype(), [&](auto zero) {
    using T = decltype(zero);
    auto [b, info] = each_matrix(batch_count(batch), n * n * n / 3.0, [&](int64_t b) {
      T* a = L->data<T>() + b * n * n;
      if (n == 0) return 0;
      for (int64_t j = 0; j < n; ++j) {  // clear the triangle LAPACK leaves untouched
        for (int64_t i = 0; i < n; ++i) {
          if (upper ? i > j : i < j) a[i + j * n] = T(0);
        }
      }
      return Lapack<T>::potrf(upper ? 'U' : 'L', ni, a, ni);
    }, kPotrfThreadedFlops);
    if (info > 0) {
      throw LinAlgError(message(op, ": ", batch_prefix(A, b),
                                "The factorization could not be completed because the input is not "
                                "positive-definite (the leading minor of order ",
                                info, " is not positive-definite)."));
    }
  });
#endif
  return L;
}

std::tuple<Tensor, Tensor> linalg_qr(const Tensor& A, const std::string& mode) {
  const char* op = "linalg.qr";
  if (mode != "reduced" && mode != "complete" && mode != "r") {
    throw std::runtime_error(message(op, ": qr received unrecognized mode '", mode,
                                     "' but expected one of 'reduced' (default), 'r', or 'complete'"));
  }
  check_matrix(op, A, false);
  const Shape batch = batch_of(A);
  const int64_t m = A->size(-2), n = A->size(-1), k = std::min(m, n);
  const bool complete = mode == "complete";
  const int64_t qcols = complete ? m : k, rrows = complete ? m : k;
  Tensor work = fortran_copy(A, batch);
  Tensor R = fortran_empty(batch, rrows, n, A->dtype());
  Tensor Q = mode == "r" ? empty({0}, A->dtype()) : fortran_empty(batch, m, qcols, A->dtype());
#ifdef EMBER_HAVE_OPENBLAS
  const int mi = lapack_int(op, m), ni = lapack_int(op, n), lda = std::max(mi, 1);
  dispatch_real_or_complex(A->dtype(), [&](auto zero) {
    using T = decltype(zero);
    const int64_t count = batch_count(batch);
    std::vector<T> taus(static_cast<size_t>(std::max<int64_t>(k, 1) * count));
    each_matrix(count, 4.0 * m * n * k, [&](int64_t b) {
      T* a = work->data<T>() + b * m * n;
      T* tau = taus.data() + b * std::max<int64_t>(k, 1);
      if (k > 0) Lapack<T>::geqrf(mi, ni, a, lda, tau);
      T* r = R->data<T>() + b * rrows * n;
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < rrows; ++i) r[i + j * rrows] = i <= j ? a[i + j * m] : T(0);
      }
      if (mode == "r") return 0;
      T* q = Q->data<T>() + b * m * qcols;
      for (int64_t j = 0; j < qcols; ++j) {  // the reflectors, then orgqr turns them into Q
        for (int64_t i = 0; i < m; ++i) q[i + j * m] = j < n ? a[i + j * m] : T(0);
      }
      if (m > 0 && qcols > 0) Lapack<T>::orgqr(mi, static_cast<int>(qcols), static_cast<int>(k), q, lda, tau);
      return 0;
    });
  });
#endif
  return {Q, R};
}

std::tuple<Tensor, Tensor, Tensor> _linalg_getrf(const Tensor& self) {
  const char* op = "_linalg_getrf";
  check_matrix(op, self, false, "input");
  const Shape batch = batch_of(self);
  const int64_t m = self->size(-2), n = self->size(-1), k = std::min(m, n);
  Tensor lu = fortran_copy(self, batch);
  Shape pshape = batch;
  pshape.push_back(k);
  Tensor pivots = empty(pshape, ScalarType::Int32);
  Tensor info = empty(batch, ScalarType::Int32);
  const int64_t count = batch_count(batch);
  int32_t* infos = info->data<int32_t>();
  std::fill(infos, infos + count, 0);
#ifdef EMBER_HAVE_OPENBLAS
  const int mi = lapack_int(op, m), ni = lapack_int(op, n), lda = std::max(mi, 1);
  dispatch_real_or_complex(self->dtype(), [&](auto zero) {
    using T = decltype(zero);
    int32_t* piv = pivots->data<int32_t>();
    // every matrix's info kept (each_matrix reports only the first nonzero one)
    each_matrix(count, 2.0 / 3.0 * m * n * k, [&](int64_t b) {
      if (k == 0) return 0;
      static_assert(sizeof(int) == sizeof(int32_t));
      const int r = Lapack<T>::getrf(mi, ni, lu->data<T>() + b * m * n, lda, reinterpret_cast<int*>(piv + b * k));
      infos[b] = r > 0 ? r : 0;
      return r < 0 ? r : 0;
    }, m == n ? lu_threaded_from<T>(n, kGetrfThreadedFlops) : kGetrfThreadedFlops);
  });
#else
  throw std::runtime_error(message(op, ": this core was built without LAPACK"));
#endif
  return {lu, pivots, info};
}

std::tuple<Tensor, Tensor> geqrf(const Tensor& self) {
  const char* op = "geqrf";
  check_matrix(op, self, false, "input");
  const Shape batch = batch_of(self);
  const int64_t m = self->size(-2), n = self->size(-1), k = std::min(m, n);
  Tensor a = fortran_copy(self, batch);
  Shape tshape = batch;
  tshape.push_back(k);
  Tensor tau = empty(tshape, self->dtype());
#ifdef EMBER_HAVE_OPENBLAS
  const int mi = lapack_int(op, m), ni = lapack_int(op, n), lda = std::max(mi, 1);
  dispatch_real_or_complex(self->dtype(), [&](auto zero) {
    using T = decltype(zero);
    each_matrix(batch_count(batch), 2.0 * m * n * k, [&](int64_t b) {
      return k > 0 ? Lapack<T>::geqrf(mi, ni, a->data<T>() + b * m * n, lda, tau->data<T>() + b * k) : 0;
    });
  });
#endif
  return {a, tau};
}

std::tuple<Tensor, Tensor> linalg_eigh(const Tensor& A, const std::string& UPLO) {
  return symmetric_eigen("linalg.eigh", A, UPLO, true);
}

Tensor linalg_eigvalsh(const Tensor& A, const std::string& UPLO) {
  return std::get<0>(symmetric_eigen("linalg.eigvalsh", A, UPLO, false));
}

namespace {

std::tuple<Tensor, Tensor, Tensor> svd_impl(const char* op, const Tensor& A, bool full_matrices, bool vectors) {
  check_matrix(op, A, false);
  const Shape batch = batch_of(A);
  const int64_t m = A->size(-2), n = A->size(-1), k = std::min(m, n);
  const int64_t ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  Tensor work = fortran_copy(A, batch);
  Shape sshape = batch;
  sshape.push_back(k);
  Tensor S = empty(sshape, to_real(A->dtype()));  // real singular values, complex A too
  Tensor U = vectors ? fortran_empty(batch, m, ucols, A->dtype()) : Tensor();
  Tensor Vh = vectors ? fortran_empty(batch, vrows, n, A->dtype()) : Tensor();
#ifdef EMBER_HAVE_OPENBLAS
  const int mi = lapack_int(op, m), ni = lapack_int(op, n);
  dispatch_real_or_complex(A->dtype(), [&](auto zero) {
    using T = decltype(zero);
    constexpr int kNonFinite = -1000;  // an info LAPACK never returns
    auto [b, info] = each_matrix(batch_count(batch), 14.0 * m * n * k, [&](int64_t b) {
      T unused = T(0);  // U and Vh when they are not computed (never referenced by LAPACK)
      T* a = work->data<T>() + b * m * n;
      T* u = vectors ? U->data<T>() + b * m * ucols : &unused;
      T* vt = vectors ? Vh->data<T>() + b * vrows * n : &unused;
      if (k == 0) {  // nothing to decompose: the singular vectors are any orthonormal basis
        if (vectors) {
          set_identity(u, m, ucols);
          set_identity(vt, vrows, n);
        }
        return 0;
      }
      if (!all_finite(a, m * n)) return kNonFinite;
      const char jobz = !vectors ? 'N' : (full_matrices ? 'A' : 'S');
      return Lapack<T>::gesdd(jobz, mi, ni, a, mi, S->data<real_t<T>>() + b * k, u, vectors ? mi : 1, vt,
                              vectors ? static_cast<int>(vrows) : 1);
    });
    if (info == kNonFinite) {
      throw LinAlgError(message(op, ": ", batch_prefix(A, b),
                                "The algorithm failed to converge because the input matrix contained non-finite "
                                "values."));
    }
    if (info > 0) {
      throw LinAlgError(message(op, ": ", batch_prefix(A, b),
                                "The algorithm failed to converge because the input matrix is ill-conditioned or "
                                "has too many repeated singular values (error code: ",
                                info, ")."));
    }
  });
#endif
  return {U, S, Vh};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices) {
  return svd_impl("linalg.svd", A, full_matrices, true);
}

Tensor linalg_svdvals(const Tensor& A) { return std::get<1>(svd_impl("linalg.svdvals", A, false, false)); }

namespace {

// X with A X = B for each matrix of the broadcast batch (B: (batch..., n, k)); a singular A
// is a LinAlgError worded as PyTorch words it for inv (`inverse`) or solve.
Tensor gesv_batched(const char* op, const Tensor& A, const Tensor& B, bool inverse) {
  const int64_t n = A->size(-1), k = B->size(-1);
  const Shape batch = broadcast_shapes(batch_of(A), batch_of(B), op);
  Tensor a = fortran_copy(broadcast_matrix(A, batch), batch);
  Tensor x = fortran_copy(broadcast_matrix(B, batch), batch);
#ifdef EMBER_HAVE_OPENBLAS
  const int ni = lapack_int(op, n), ki = lapack_int(op, k), ld = std::max(ni, 1);
  const int64_t count = batch_count(batch);
  std::vector<int> pivots(static_cast<size_t>(std::max<int64_t>(n, 1) * count));
  dispatch_real_or_complex(A->dtype(), [&](auto zero) {
    using T = decltype(zero);
    auto [b, info] = each_matrix(count, n * n * (0.67 * n + 2.0 * k), [&](int64_t b) {
      if (n == 0 || k == 0) return 0;
      return Lapack<T>::gesv(ni, ki, a->data<T>() + b * n * n, ld, pivots.data() + b * n,
                             x->data<T>() + b * n * k, ld);
    }, lu_threaded_from<T>(n, kLapackThreadedFlops));
    if (info > 0) {
      const std::string prefix = batch.empty() ? std::string() : message("(Batch element ", b, "): ");
      if (inverse) {
        throw LinAlgError(message(op, ": ", prefix, "The diagonal element ", info,
                                  " is zero, the inversion could not be completed because the input matrix is "
                                  "singular."));
      }
      throw LinAlgError(message(op, ": ", prefix, "The solver failed because the input matrix is singular."));
    }
  });
#endif
  return x;
}

}  // namespace

Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left) {
  const char* op = "linalg.solve";
  check_matrix(op, A, true);
  if (B->dim() < 1) {
    throw std::runtime_error(message(op, ": The input tensor B must have at least 1 dimensions."));
  }
  check_same_dtype(op, A, B);
  const int64_t n = A->size(-1);
  // B is a batch of vectors when it is 1-d or has exactly A's batch shape plus n (PyTorch's rule)
  Shape a_vec(A->sizes().begin(), A->sizes().end() - 1);
  const bool vector_case = B->dim() == 1 || (B->dim() == A->dim() - 1 && B->sizes() == a_vec);
  if (!left && vector_case && B->dim() > 1) {  // a column n x 1 on the right of X A: PyTorch's error
    throw std::runtime_error(message(op, ": Incompatible shapes of A and B for the equation XA = B (", n, "x", n,
                                     " and ", n, "x1)"));
  }
  if (!left) {  // X A = B  <=>  A^T X^T = B^T
    if (B->dim() < 2) {
      throw std::runtime_error(message(op, ": with left=False, B must be a (batch of) matrices, got shape ",
                                       shape_str(B->sizes())));
    }
    if (B->size(-1) != n) {
      throw std::runtime_error(message(op, ": Incompatible shapes of A and B for the equation XA = B (", n, "x", n,
                                       " and ", B->size(-2), "x", B->size(-1), ")"));
    }
    return transpose(gesv_batched(op, transpose(A, -2, -1), transpose(B, -2, -1), false), -2, -1);
  }
  Tensor Bm = vector_case ? unsqueeze(B, -1) : B;
  if (Bm->size(-2) != n) {
    throw std::runtime_error(message(op, ": Incompatible shapes of A and B for the equation AX = B (", n, "x", n,
                                     " and ", Bm->size(-2), "x", Bm->size(-1), ")"));
  }
  Tensor X = gesv_batched(op, A, Bm, false);
  return vector_case ? squeeze(X, Shape{-1}) : X;
}

Tensor linalg_inv(const Tensor& A) {
  const char* op = "linalg.inv";
  check_matrix(op, A, true);
  const int64_t n = A->size(-1);
  Tensor I = eye(n, std::nullopt, A->dtype(), std::nullopt, false, Tensor());
  return gesv_batched(op, A, I, true);
}

namespace {

// det, or sign and log|det|, of each matrix from its LU factorisation. A complex matrix
// has a complex det and sign (det / |det|) and a real log|det|, as in PyTorch.
std::tuple<Tensor, Tensor> lu_det(const char* op, const Tensor& A, bool log) {
  check_matrix(op, A, true);
  const Shape batch = batch_of(A);
  const int64_t n = A->size(-1), count = batch_count(batch);
  Tensor lu = fortran_copy(A, batch);
  Tensor first = empty(batch, A->dtype()), second = log ? empty(batch, to_real(A->dtype())) : Tensor();
  lapack_int(op, n);
  dispatch_real_or_complex(A->dtype(), [&](auto zero) {
    using T = decltype(zero);
    using R = real_t<T>;
    std::vector<int> piv;
    lu_each<T>(lu, n, count, piv);
    for (int64_t b = 0; b < count; ++b) {
      const T* a = lu->data<T>() + b * n * n;
      const int* p = piv.data() + b * n;
      T perm = T(1), sign = T(1), prod = T(1);  // sign: of the diagonal's product
      R logabs = R(0);
      for (int64_t i = 0; i < n; ++i) {
        const T d = a[i + i * n];
        if (p[i] != i + 1) perm = -perm;
        prod *= d;
        if constexpr (is_complex_v<T>) {
          const R mag = complex_abs(d);
          logabs += std::log(mag);
          sign *= mag > R(0) ? d / T(mag) : T(0);
        } else {
          if (d < T(0)) sign = -sign;
          logabs += std::log(std::abs(d));
        }
      }
      if (!log) {
        first->data<T>()[b] = perm * prod;
        continue;
      }
      sign *= perm;
      if (std::isnan(logabs)) sign = quiet_nan<T>();
      if (logabs == -std::numeric_limits<R>::infinity()) sign = T(0);
      first->data<T>()[b] = sign;
      second->data<R>()[b] = logabs;
    }
  });
  return {first, second};
}

}  // namespace

Tensor linalg_det(const Tensor& A) { return std::get<0>(lu_det("linalg.det", A, false)); }

std::tuple<Tensor, Tensor> linalg_slogdet(const Tensor& A) { return lu_det("linalg.slogdet", A, true); }

Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B_in, bool upper, bool left, bool unitriangular) {
  const char* op = "linalg.solve_triangular";
  check_matrix(op, A, true);
  // PyTorch's kernel solves in A's dtype, B cast to it; a complex B with a real A stays an error (PyTorch drops
  // the imaginary part with a warning)
  const bool castable = is_complex(A->dtype()) || !is_complex(B_in->dtype());
  const Tensor B = B_in->dtype() != A->dtype() && castable ? to_dtype(B_in, A->dtype()) : B_in;
  check_matrix(op, B, false, "B");
  check_same_dtype(op, A, B);
  const int64_t n = A->size(-1);
  if ((left ? B->size(-2) : B->size(-1)) != n) {
    throw std::runtime_error(message(op, ": Incompatible shapes of A and B for the equation ", left ? "AX" : "XA",
                                     " = B (", n, "x", n, " and ", B->size(-2), "x", B->size(-1), ")"));
  }
  const Shape batch = broadcast_shapes(batch_of(A), batch_of(B), op);
  Tensor a = fortran_copy(broadcast_matrix(A, batch), batch);
  Tensor x = fortran_copy(broadcast_matrix(B, batch), batch);
#ifdef EMBER_HAVE_OPENBLAS
  const int64_t rows = B->size(-2), cols = B->size(-1);
  const int ri = lapack_int(op, rows), ci = lapack_int(op, cols), ni = lapack_int(op, n);
  dispatch_real_or_complex(A->dtype(), [&](auto zero) {
    using T = decltype(zero);
    each_matrix(batch_count(batch), static_cast<double>(n) * rows * cols, [&](int64_t b) {
      if (rows == 0 || cols == 0) return 0;
      Lapack<T>::trsm(left ? kLeft : kRight, upper ? kUpper : kLower, unitriangular ? kUnit : kNonUnit, ri, ci,
                      a->data<T>() + b * n * n, std::max(ni, 1), x->data<T>() + b * rows * cols, std::max(ri, 1));
      return 0;
    });
  });
#endif
  return x;
}


namespace {

// The eigenvalues (and right eigenvectors, unit 2-norm, LAPACK's phase) of general square
// matrices, complex in any case: geev, whose real form packs a conjugate pair (j, j + 1)
// as the real and imaginary parts of the first's vector.
std::tuple<Tensor, Tensor> general_eigen(const char* op, const Tensor& A, bool vectors) {
  check_matrix(op, A, true);
  const Shape batch = batch_of(A);
  const int64_t n = A->size(-1);
  const ScalarType cdt = is_complex(A->dtype()) ? A->dtype() : to_complex(A->dtype());
  Tensor a = fortran_copy(A, batch);
  Shape wshape = batch;
  wshape.push_back(n);
  Tensor w = empty(wshape, cdt);
  Tensor V = vectors ? fortran_empty(batch, n, n, cdt) : Tensor();
#ifdef EMBER_HAVE_OPENBLAS
  const int ni = lapack_int(op, n), ld = std::max(ni, 1);
  const char jobvr = vectors ? 'V' : 'N';
  dispatch_real_or_complex(A->dtype(), [&](auto zero) {
    using T = decltype(zero);
    auto [b, info] = each_matrix(batch_count(batch), 10.0 * n * n * n, [&](int64_t b) {
      if (n == 0) return 0;
      T* ab = a->data<T>() + b * n * n;
      if constexpr (is_complex_v<T>) {
        using R = real_t<T>;
        T* wb = w->data<T>() + b * n;
        T* vb = vectors ? V->data<T>() + b * n * n : nullptr;
        bool finite = true;
        for (int64_t i = 0; i < n * n && finite; ++i) finite = std::isfinite(ab[i].re) && std::isfinite(ab[i].im);
        if (!finite) {  // LAPACK is not defined on them: PyTorch's error (eig), NaN (eigvals)
          if (vectors) return -1;
          const R nan = std::numeric_limits<R>::quiet_NaN();
          std::fill(wb, wb + n, T(nan, nan));
          return 0;
        }
        T dummy{};
        if constexpr (std::is_same_v<R, float>) {
          return scipy_LAPACKE_cgeev(kColMajor, 'N', jobvr, ni, ab, ld, wb, &dummy, 1, vb ? vb : &dummy, vb ? ld : 1);
        } else {
          return scipy_LAPACKE_zgeev(kColMajor, 'N', jobvr, ni, ab, ld, wb, &dummy, 1, vb ? vb : &dummy, vb ? ld : 1);
        }
      } else {
        Complex<T>* wb = w->data<Complex<T>>() + b * n;
        if (!all_finite(ab, n * n)) {  // PyTorch's error (eig), NaN (eigvals)
          if (vectors) return -1;
          std::fill(wb, wb + n, Complex<T>(std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::quiet_NaN()));
          return 0;
        }
        std::vector<T> wr(static_cast<size_t>(n)), wi(static_cast<size_t>(n));
        std::vector<T> vr(vectors ? static_cast<size_t>(n * n) : 1);
        T dummy = 0;
        int info;
        if constexpr (std::is_same_v<T, float>) {
          info = scipy_LAPACKE_sgeev(kColMajor, 'N', jobvr, ni, ab, ld, wr.data(), wi.data(), &dummy, 1, vr.data(),
                                     vectors ? ld : 1);
        } else {
          info = scipy_LAPACKE_dgeev(kColMajor, 'N', jobvr, ni, ab, ld, wr.data(), wi.data(), &dummy, 1, vr.data(),
                                     vectors ? ld : 1);
        }
        if (info != 0) return info;
        for (int64_t j = 0; j < n; ++j) wb[j] = Complex<T>(wr[j], wi[j]);
        if (vectors) {
          Complex<T>* vb = V->data<Complex<T>>() + b * n * n;
          for (int64_t j = 0; j < n; ++j) {
            const T* re = vr.data() + j * n;
            if (wi[j] != T(0) && j + 1 < n) {  // a conjugate pair: re + i im, re - i im
              const T* im = re + n;
              for (int64_t i = 0; i < n; ++i) {
                vb[i + j * n] = Complex<T>(re[i], im[i]);
                vb[i + (j + 1) * n] = Complex<T>(re[i], -im[i]);
              }
              ++j;
            } else {
              for (int64_t i = 0; i < n; ++i) vb[i + j * n] = Complex<T>(re[i], T(0));
            }
          }
        }
        return 0;
      }
    });
    if (info == -1) throw std::runtime_error(message(op, ": input tensor should not contain infs or NaNs."));
    if (info > 0) {
      throw_not_converged(op, A, b, info);
    }
  });
#endif
  return {w, V};
}

}  // namespace

std::tuple<Tensor, Tensor> linalg_eig(const Tensor& A) { return general_eigen("linalg.eig", A, true); }

Tensor linalg_eigvals(const Tensor& A) { return std::get<0>(general_eigen("linalg.eigvals", A, false)); }

}  // namespace ember::cpu

namespace ember::cpu {

std::tuple<Tensor, Tensor, Tensor> linalg_ldl_factor_ex(const Tensor& A, bool hermitian, bool check_errors) {
  const char* op = "torch.linalg.ldl_factor_ex";
  check_matrix(op, A, true);
  const Shape batch = batch_of(A);
  const int64_t n = A->size(-1), count = batch_count(batch);
  Tensor LD = fortran_copy(A, batch);
  Shape pshape = batch;
  pshape.push_back(n);
  Tensor pivots = empty(pshape, ScalarType::Int32);
  Tensor info = empty(batch, ScalarType::Int32);
#ifdef EMBER_HAVE_OPENBLAS
  const int ni = lapack_int(op, n);
  dispatch_real_or_complex(A->dtype(), [&](auto zero) {
    using T = decltype(zero);
    auto [b, first] = each_matrix(count, n * n * n / 3.0, [&](int64_t b) {
      T* a = LD->data<T>() + b * n * n;
      const int code = n > 0 ? Lapack<T>::ldl(hermitian, ni, a, std::max(ni, 1), pivots->data<int>() + b * n) : 0;
      for (int64_t j = 1; j < n; ++j) {  // LAPACK leaves the upper triangle as it was: zeros, as PyTorch
        std::fill(a + j * n, a + j * n + j, T(0));
      }
      info->data<int>()[b] = code;
      return code;
    });
    if (check_errors && first > 0) {
      throw LinAlgError(message(op, ": ", batch_prefix(A, b), "The factorization completed, but D[", first - 1,
                                ", ", first - 1, "] is exactly zero, so the matrix is singular and ldl_solve would ",
                                "divide by zero."));
    }
  });
#endif
  return {LD, pivots, info};
}

Tensor linalg_ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian) {
  const char* op = "torch.linalg.ldl_solve";
  check_matrix(op, LD, true, "LD");
  if (B->dim() < 2) {
    throw std::runtime_error(message(op, ": The input tensor B must have at least 2 dimensions."));
  }
  if (pivots->dtype() != ScalarType::Int32) {
    throw std::runtime_error(message(op, ": Expected pivots to be integers. Got ", scalar_type_name(pivots->dtype())));
  }
  if (LD->dtype() != B->dtype()) {
    throw std::runtime_error(message("Expected b and A to have the same dtype, but found b of type ",
                                     scalar_type_name(B->dtype()), " and A of type ", scalar_type_name(LD->dtype()),
                                     " instead."));
  }
  const int64_t n = LD->size(-1), k = B->size(-1);
  Shape lead(LD->sizes().begin(), LD->sizes().end() - 1);
  if (pivots->sizes() != lead) {
    throw std::runtime_error(message(op, ": Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots "
                                     "with shape ", shape_str(pivots->sizes()), " instead"));
  }
  if (B->size(-2) != n) {
    throw std::runtime_error(message("Incompatible matrix sizes for ", op, ": each A matrix is ", n, " by ", n,
                                     " but each b matrix is ", B->size(-2), " by ", k));
  }
  const Shape batch = broadcast_shapes(batch_of(LD), batch_of(B), op);
  Tensor a = fortran_copy(broadcast_matrix(LD, batch), batch);
  Tensor x = fortran_copy(broadcast_matrix(B, batch), batch);
  Shape pshape = batch;
  pshape.push_back(n);
  Tensor piv = as_contiguous(expand_to(pivots, pshape, op));
  const int* pv = piv->data<int>();
  for (int64_t i = 0; i < piv->numel(); ++i) {  // LAPACK indexes rows with them: never out of range
    if (pv[i] == 0 || pv[i] > n || pv[i] < -n) {
      throw std::runtime_error(message(op, ": Pivots given to ldl_solve must all satisfy 1 <= |pivot| <= ", n,
                                       ", but got ", pv[i], ". Did you properly pass the result of ldl_factor?"));
    }
  }
#ifdef EMBER_HAVE_OPENBLAS
  const int ni = lapack_int(op, n), ki = lapack_int(op, k), ld = std::max(ni, 1);
  dispatch_real_or_complex(LD->dtype(), [&](auto zero) {
    using T = decltype(zero);
    each_matrix(batch_count(batch), 2.0 * n * n * k, [&](int64_t b) {
      if (n == 0 || k == 0) return 0;
      return Lapack<T>::ldl_solve(hermitian, ni, ki, a->data<T>() + b * n * n, ld, piv->data<int>() + b * n,
                                  x->data<T>() + b * n * k, ld);
    });
  });
#endif
  return x;
}

}  // namespace ember::cpu
