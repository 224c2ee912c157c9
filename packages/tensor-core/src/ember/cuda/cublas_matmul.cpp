// Matrix products on CUDA through cuBLAS: mm, bmm and matmul (broadcast batches become one
// strided-batched GEMM). cuBLAS is loaded at first use with dlopen (the nvidia-cublas wheel,
// or a system libcublas), so the module imports without it; its headers are needed at build
// time only (EMBER_HAVE_CUBLAS_HEADERS). float32 runs in full precision unless
// ember.backends.cuda.matmul.allow_tf32 is set (PyTorch's default); float16 and bfloat16
// accumulate in float32 on the tensor cores.
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "ember/cuda/cuda_common.h"
#include "ember/cuda_hooks.h"
#include "ember/ops_util.h"

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
  if (!is_floating(a->dtype())) {
    throw NotImplementedError(message(op, ": CUDA matrix products support float16, bfloat16, float32 and float64, ",
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

// Where pip put the nvidia-cublas wheel's library, asked of Python (holding the GIL).
std::string wheel_library_dir() {
  PyGILState_STATE g = PyGILState_Ensure();
  std::string dir;
  PyObject* mod = PyImport_ImportModule("nvidia");
  if (mod) {
    PyObject* path = PyObject_GetAttrString(mod, "__path__");
    PyObject* list = path ? PySequence_List(path) : nullptr;
    if (list && PyList_Size(list) > 0) {
      const char* s = PyUnicode_AsUTF8(PyList_GetItem(list, 0));
      if (s) dir = std::string(s) + "/cu13/lib/";
    }
    Py_XDECREF(list);
    Py_XDECREF(path);
    Py_DECREF(mod);
  }
  PyErr_Clear();
  PyGILState_Release(g);
  return dir;
}

const Cublas& cublas() {
  static Cublas lib;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const std::string dir = wheel_library_dir();
      if (!dir.empty()) h = dlopen((dir + "libcublas.so.13").c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    if (!h) {
      lib.error = "cuBLAS (libcublas.so.13) was not found: pip install nvidia-cublas";
      return;
    }
    lib.create = reinterpret_cast<CreateFn>(dlsym(h, "cublasCreate_v2"));
    lib.set_stream = reinterpret_cast<SetStreamFn>(dlsym(h, "cublasSetStream_v2"));
    lib.gemm_strided_batched = reinterpret_cast<GemmStridedBatchedFn>(dlsym(h, "cublasGemmStridedBatchedEx"));
    if (!lib.create || !lib.set_stream || !lib.gemm_strided_batched) {
      lib.error = "the cuBLAS library found lacks cublasGemmStridedBatchedEx";
      lib.create = nullptr;
    }
  });
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
    default: return CUDA_R_32F;
  }
}

// out[b] = a[b] @ m[b] for contiguous a (B, m, k), m (B, k, n), out (B, m, n), row-major.
// Row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets the operands swapped.
void gemm_batched(const char* op, const Tensor& a, const Tensor& b, const Tensor& out, int64_t batch, int64_t m,
                  int64_t k, int64_t n) {
  if (m == 0 || n == 0 || batch == 0) return;
  if (k == 0) {
    ops::zero(out, out);
    return;
  }
  const int dev = out->device().index;
  DeviceGuard guard(dev);
  cudaStream_t stream = as_stream(cuda_hooks().current_stream(dev));
  cublasHandle_t h = handle_for(dev, stream, op);
  const ScalarType dt = a->dtype();
  const cudaDataType type = data_type(dt);
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (dt == ScalarType::Float64) compute = CUBLAS_COMPUTE_64F;
  else if (dt == ScalarType::Float32 && allow_tf32()) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  const double one64 = 1.0, zero64 = 0.0;
  const float one32 = 1.0f, zero32 = 0.0f;
  const void* alpha = dt == ScalarType::Float64 ? static_cast<const void*>(&one64) : &one32;
  const void* beta = dt == ScalarType::Float64 ? static_cast<const void*>(&zero64) : &zero32;
  check_cublas(cublas().gemm_strided_batched(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                                             static_cast<int>(k), alpha, b->data_ptr(), type, static_cast<int>(n),
                                             k * n, a->data_ptr(), type, static_cast<int>(k), m * k, beta,
                                             out->data_ptr(), type, static_cast<int>(n), m * n,
                                             static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT),
               op);
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
