// Matrix products on CUDA through cuBLAS: mm, bmm and matmul (broadcast batches become one
// strided-batched GEMM), and the row-major GEMM (cublas_gemm.h) that the other CUDA kernels
// (addmm, conv_transpose2d, the LSTM steps) call. cuBLAS is loaded at first use with dlopen
// (the nvidia-cublas wheel, or a system libcublas), so the module imports without it; its
// headers are needed at build time only (EMBER_HAVE_CUBLAS_HEADERS). float32 runs in full
// precision unless ember.backends.cuda.matmul.allow_tf32 is set (PyTorch's default); float16
// and bfloat16 accumulate in float32 on the tensor cores.
#include <dlfcn.h>

#include <algorithm>
#include <limits>
#include <atomic>
#include <mutex>
#include <string>

#include "ember/backends/cuda/cublas_gemm.h"
#include "ember/backends/cuda/cuda_common.h"
#include "ember/runtime/cuda_hooks.h"
#include "ember/ops/ops_util.h"

#ifdef EMBER_HAVE_CUBLAS_HEADERS
#include <cublas_v2.h>
#endif

namespace ember::cuda {

namespace {

[[maybe_unused]] void check_matrix_dtypes(const char* op, const Tensor& a, const Tensor& b) {
  if (a->dtype() != b->dtype()) {
    throw std::runtime_error(message(op, ": expected both operands to have the same dtype, but got ",
                                     dtype_name(a->dtype()), " and ", dtype_name(b->dtype())));
  }
  if (!is_floating(a->dtype()) && !is_complex(a->dtype())) {
    throw NotImplementedError(message(op, ": CUDA matrix products support float16, bfloat16, float32, float64, ",
                                      "complex64 and complex128, ",
                                      "got ", dtype_name(a->dtype())));
  }
}

#ifdef EMBER_HAVE_CUBLAS_HEADERS

using CreateFn = cublasStatus_t (*)(cublasHandle_t*);
using SetStreamFn = cublasStatus_t (*)(cublasHandle_t, cudaStream_t);
using GemmStridedBatchedFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                const void*, const void*, cudaDataType, int, long long int,
                                                const void*, cudaDataType, int, long long int, const void*, void*,
                                                cudaDataType, int, long long int, int, cublasComputeType_t,
                                                cublasGemmAlgo_t);

struct Cublas {
  CreateFn create = nullptr;
  SetStreamFn set_stream = nullptr;
  GemmStridedBatchedFn gemm_strided_batched = nullptr;
  std::string error;  // why it could not be loaded
};

const Cublas& cublas() {
  static Cublas lib;
  static std::once_flag once;
  static std::atomic<bool> loaded{false};
  if (!loaded.load(std::memory_order_acquire)) {
    std::string why;  // opened before call_once: finding the wheel takes the GIL
    void* h = open_cuda_library("libcublas.so.13", "cu13/lib/", &why);
    std::call_once(once, [&] {
      if (!h) {
        lib.error = "cuBLAS could not be loaded: " + why + ": pip install nvidia-cublas";
      } else {
        lib.create = reinterpret_cast<CreateFn>(dlsym(h, "cublasCreate_v2"));
        lib.set_stream = reinterpret_cast<SetStreamFn>(dlsym(h, "cublasSetStream_v2"));
        lib.gemm_strided_batched = reinterpret_cast<GemmStridedBatchedFn>(dlsym(h, "cublasGemmStridedBatchedEx"));
        if (!lib.create || !lib.set_stream || !lib.gemm_strided_batched) {
          lib.error = "the cuBLAS library found lacks cublasGemmStridedBatchedEx";
          lib.create = nullptr;
        }
      }
      loaded.store(true, std::memory_order_release);
    });
  }
  if (!lib.create) throw std::runtime_error(lib.error);
  return lib;
}

void check_cublas(cublasStatus_t st, const char* op) {
  if (st != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(message(op, ": cuBLAS call failed with status ", static_cast<int>(st)));
  }
}

// One cuBLAS handle per (thread, device), bound to the current stream at each use.
cublasHandle_t handle_for(int device, cudaStream_t stream, const char* op) {
  thread_local std::vector<cublasHandle_t> handles;
  if (static_cast<int>(handles.size()) <= device) handles.resize(static_cast<size_t>(device) + 1, nullptr);
  cublasHandle_t& h = handles[static_cast<size_t>(device)];
  if (!h) check_cublas(cublas().create(&h), op);
  check_cublas(cublas().set_stream(h, stream), op);
  return h;
}

cudaDataType data_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float16: return CUDA_R_16F;
    case ScalarType::BFloat16: return CUDA_R_16BF;
    case ScalarType::Float64: return CUDA_R_64F;
    case ScalarType::ComplexFloat: return CUDA_C_32F;
    case ScalarType::ComplexDouble: return CUDA_C_64F;
    default: return CUDA_R_32F;
  }
}

// out[b] = a[b] @ m[b] for contiguous a (B, m, k), m (B, k, n), out (B, m, n), row-major.
void gemm_batched(const char* op, const Tensor& a, const Tensor& b, const Tensor& out, int64_t batch, int64_t m,
                  int64_t k, int64_t n) {
  if (m == 0 || n == 0 || batch == 0) return;
  if (k == 0) {
    ops::zero(out, out);
    return;
  }
  gemm(op, out->device(), a->dtype(), m, n, k, 1.0, {a->data_ptr(), k, false}, m * k, {b->data_ptr(), n, false}, k * n,
       0.0, out->data_ptr(), n, m * n, batch);
}

#endif  // EMBER_HAVE_CUBLAS_HEADERS

// (batch, m, k) @ (batch, k, n) on contiguous copies; the result (batch, m, n).
Tensor batched_product(const char* op, const Tensor& a, const Tensor& b, int64_t batch, int64_t m, int64_t k,
                       int64_t n) {
#ifdef EMBER_HAVE_CUBLAS_HEADERS
  Tensor ac = ops::contiguous(a);
  Tensor bc = ops::contiguous(b);
  Tensor out = ember::empty({batch, m, n}, a->dtype(), a->device());
  gemm_batched(op, ac, bc, out, batch, m, k, n);
  return out;
#else
  throw NotImplementedError(message(op, ": this build of ember has no cuBLAS (its headers were not found at build "
                                    "time: pip install nvidia-cublas, then rebuild)"));
#endif
}

[[noreturn]] void cannot_multiply(const char* op, const Shape& a, const Shape& b) {
  throw std::runtime_error(message(op, ": mat1 and mat2 shapes cannot be multiplied (", shape_str(a), " and ",
                                   shape_str(b), ")"));
}

}  // namespace

void gemm(const char* op, const Device& device, ScalarType dtype, int64_t m, int64_t n, int64_t k,
          Complex<double> alpha, const GemmOperand& a, int64_t stride_a, const GemmOperand& b, int64_t stride_b,
          Complex<double> beta, void* c,
          int64_t ldc, int64_t stride_c, int64_t batch) {
  if (m == 0 || n == 0 || batch == 0) return;
#ifdef EMBER_HAVE_CUBLAS_HEADERS
  const int64_t int_max = std::numeric_limits<int>::max();
  if (m > int_max || n > int_max || k > int_max || a.ld > int_max || b.ld > int_max || ldc > int_max ||
      batch > int_max) {
    throw std::runtime_error(message(op, ": a matrix product of ", m, " x ", k, " by ", k, " x ", n, " (", batch,
                                     " of them) exceeds cuBLAS's 32-bit sizes"));
  }
  DeviceGuard guard(device.index);
  cudaStream_t stream = as_stream(cuda_hooks().current_stream(device.index));
  cublasHandle_t h = handle_for(device.index, stream, op);
  const cudaDataType type = data_type(dtype);
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (dtype == ScalarType::Float64 || dtype == ScalarType::ComplexDouble) {
    compute = CUBLAS_COMPUTE_64F;
  } else if (dtype == ScalarType::Float32 && allow_tf32()) {
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  }
  // alpha and beta in the compute type: a (real, imaginary) pair for the complex dtypes
  const Complex<float> alpha32(alpha), beta32(beta);
  const bool f64 = compute == CUBLAS_COMPUTE_64F;
  const void* pa = f64 ? static_cast<const void*>(&alpha) : &alpha32;
  const void* pb = f64 ? static_cast<const void*>(&beta) : &beta32;
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T; a row-major matrix is its
  // transpose in column-major order, so each operand keeps its own flag.
  check_cublas(cublas().gemm_strided_batched(
                   h, b.trans ? CUBLAS_OP_T : CUBLAS_OP_N, a.trans ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                   static_cast<int>(m), static_cast<int>(k), pa, b.data, type, static_cast<int>(b.ld), stride_b,
                   a.data, type, static_cast<int>(a.ld), stride_a, pb, c, type, static_cast<int>(ldc), stride_c,
                   static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT),
               op);
#else
  throw NotImplementedError(message(op, ": this build of ember has no cuBLAS (its headers were not found at build "
                                    "time: pip install nvidia-cublas, then rebuild)"));
#endif
}

GemmMatrix gemm_matrix(const Tensor& t) {
  const int64_t r = t->size(0), c = t->size(1), rs = t->stride(0), cs = t->stride(1);
  const int64_t int_max = std::numeric_limits<int>::max();
  if ((cs == 1 || c <= 1) && (r <= 1 || rs >= std::max<int64_t>(c, 1))) {
    const int64_t ld = r <= 1 ? std::max<int64_t>(c, 1) : rs;
    if (ld <= int_max) return {t, {t->data_ptr(), ld, false}};
  } else if ((rs == 1 || r <= 1) && (c <= 1 || cs >= std::max<int64_t>(r, 1))) {
    const int64_t ld = c <= 1 ? std::max<int64_t>(r, 1) : cs;
    if (ld <= int_max) return {t, {t->data_ptr(), ld, true}};
  }
  Tensor copy = ops::contiguous(t);
  return {copy, {copy->data_ptr(), std::max<int64_t>(c, 1), false}};
}

Tensor mm(const Tensor& self, const Tensor& mat2, const Tensor& out) {
  if (self->dim() != 2 || mat2->dim() != 2) {
    throw std::runtime_error(message("mm: expected 2-D tensors, got ", self->dim(), "-D and ", mat2->dim(), "-D"));
  }
  check_matrix_dtypes("mm", self, mat2);
  if (self->size(1) != mat2->size(0)) cannot_multiply("mm", self->sizes(), mat2->sizes());
  const int64_t m = self->size(0), k = self->size(1), n = mat2->size(1);
  Tensor r = batched_product("mm", ops::reshape(self, {1, m, k}), ops::reshape(mat2, {1, k, n}), 1, m, k, n);
  return finish_out("mm", out, ops::reshape(r, {m, n}));
}

Tensor bmm(const Tensor& self, const Tensor& mat2, const Tensor& out) {
  if (self->dim() != 3 || mat2->dim() != 3) {
    throw std::runtime_error(message("bmm: expected 3-D tensors, got ", self->dim(), "-D and ", mat2->dim(), "-D"));
  }
  check_matrix_dtypes("bmm", self, mat2);
  if (self->size(0) != mat2->size(0) || self->size(2) != mat2->size(1)) {
    throw std::runtime_error(message("bmm: batch1 and batch2 shapes cannot be multiplied (", shape_str(self->sizes()),
                                     " and ", shape_str(mat2->sizes()), ")"));
  }
  Tensor r = batched_product("bmm", self, mat2, self->size(0), self->size(1), self->size(2), mat2->size(2));
  return finish_out("bmm", out, r);
}

Tensor matmul(const Tensor& self, const Tensor& other, const Tensor& out) {
  const int64_t da = self->dim(), db = other->dim();
  if (da == 0 || db == 0) {
    throw std::runtime_error(message("matmul: both arguments need at least 1 dimension, got ", da, "-D and ", db,
                                     "-D"));
  }
  check_matrix_dtypes("matmul", self, other);
  // 1-D operands become matrices (a row, a column) whose added dim is dropped at the end
  Tensor a = da == 1 ? ops::unsqueeze(self, 0) : self;
  Tensor b = db == 1 ? ops::unsqueeze(other, 1) : other;
  const int64_t m = a->size(-2), k = a->size(-1), n = b->size(-1);
  if (b->size(-2) != k) cannot_multiply("matmul", self->sizes(), other->sizes());
  Shape batch_a(a->sizes().begin(), a->sizes().end() - 2), batch_b(b->sizes().begin(), b->sizes().end() - 2);
  Shape batch = broadcast_shapes(batch_a, batch_b, "matmul");
  const int64_t nbatch = shape_numel(batch);
  Shape ea = batch, eb = batch;
  ea.insert(ea.end(), {m, k});
  eb.insert(eb.end(), {k, n});
  Tensor r = batched_product("matmul", ops::reshape(ops::contiguous(ops::expand(a, ea)), {nbatch, m, k}),
                             ops::reshape(ops::contiguous(ops::expand(b, eb)), {nbatch, k, n}), nbatch, m, k, n);
  Shape rs = batch;
  if (da != 1) rs.push_back(m);
  if (db != 1) rs.push_back(n);
  return finish_out("matmul", out, ops::reshape(r, rs));
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(mm);
EMBER_REGISTER_CUDA_KERNEL(bmm);
EMBER_REGISTER_CUDA_KERNEL(matmul);
