// CUDA kernels of the DFT ops on cuFFT. The input's transformed dims are moved last and made
// contiguous (fft_input, as on the CPU), one cuFFT plan transforms the whole batch on the
// current stream, and the result is that buffer viewed back in the input's dim order, scaled
// on the device when the normalization asks for it.
//
// cuFFT is loaded at first use with dlopen (libcufft.so.12: the system's, else the
// nvidia-cufft wheel's), so the module imports without it, and its few entry points are
// declared here, so that the build needs no cuFFT headers. Without the library the
// transforms run on the host (the CPU kernels: MKL or the built-in FFT, two copies and a
// synchronisation), with the same results. Plans are cached per (device, type, sizes, batch),
// their work areas come from the caching allocator on the current stream.
//
// As on the CPU: an n-D c2r is a c2c over the leading dims and a 1-D c2r over the last (what
// PyTorch computes for input that is not exactly Hermitian); a two-sided r2c is the c2c of the
// complex input; more than three dims (cuFFT's limit) are transformed three at a time.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "ember/backends/cuda/cuda_common.h"
#include "ember/ops/fft/fft_meta.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/cuda_hooks.h"

namespace ember::cuda {
namespace {

// cuFFT's C interface (cufft.h): a plan is an int, a result an int (0: success).
using PlanHandle = int;
using CufftResult = int;
constexpr int kC2C = 0x29, kR2C = 0x2a, kC2R = 0x2c, kZ2Z = 0x69, kD2Z = 0x6a, kZ2D = 0x6c;
constexpr int kForward = -1, kInverse = 1;
constexpr int kMaxRank = 3;  // cuFFT's plans transform at most three dims

struct Cufft {
  CufftResult (*create)(PlanHandle*) = nullptr;
  CufftResult (*set_auto_allocation)(PlanHandle, int) = nullptr;
  CufftResult (*make_plan_many64)(PlanHandle, int, long long*, long long*, long long, long long, long long*,
                                  long long, long long, int, long long, size_t*) = nullptr;
  CufftResult (*set_work_area)(PlanHandle, void*) = nullptr;
  CufftResult (*set_stream)(PlanHandle, cudaStream_t) = nullptr;
  CufftResult (*exec_c2c)(PlanHandle, void*, void*, int) = nullptr;
  CufftResult (*exec_z2z)(PlanHandle, void*, void*, int) = nullptr;
  CufftResult (*exec_r2c)(PlanHandle, void*, void*) = nullptr;
  CufftResult (*exec_d2z)(PlanHandle, void*, void*) = nullptr;
  CufftResult (*exec_c2r)(PlanHandle, void*, void*) = nullptr;
  CufftResult (*exec_z2d)(PlanHandle, void*, void*) = nullptr;
  CufftResult (*destroy)(PlanHandle) = nullptr;
};

// The loaded library, or null when it cannot be loaded (the host fallback then).
const Cufft* cufft() {
  static Cufft lib;
  static bool usable = false;
  static std::once_flag once;
  static std::atomic<bool> loaded{false};
  if (!loaded.load(std::memory_order_acquire)) {
    std::string why;  // opened before call_once: finding the wheel takes the GIL
    void* h = open_cuda_library("libcufft.so.12", "cu13/lib/", &why);
    std::call_once(once, [&] {
      if (h) {
        auto sym = [h](auto& fn, const char* name) {
          fn = reinterpret_cast<std::decay_t<decltype(fn)>>(dlsym(h, name));
        };
        sym(lib.create, "cufftCreate");
        sym(lib.set_auto_allocation, "cufftSetAutoAllocation");
        sym(lib.make_plan_many64, "cufftMakePlanMany64");
        sym(lib.set_work_area, "cufftSetWorkArea");
        sym(lib.set_stream, "cufftSetStream");
        sym(lib.exec_c2c, "cufftExecC2C");
        sym(lib.exec_z2z, "cufftExecZ2Z");
        sym(lib.exec_r2c, "cufftExecR2C");
        sym(lib.exec_d2z, "cufftExecD2Z");
        sym(lib.exec_c2r, "cufftExecC2R");
        sym(lib.exec_z2d, "cufftExecZ2D");
        sym(lib.destroy, "cufftDestroy");
        usable = lib.create && lib.set_auto_allocation && lib.make_plan_many64 && lib.set_work_area &&
                 lib.set_stream && lib.exec_c2c && lib.exec_z2z && lib.exec_r2c && lib.exec_d2z && lib.exec_c2r &&
                 lib.exec_z2d && lib.destroy;
      }
      loaded.store(true, std::memory_order_release);
    });
  }
  return usable ? &lib : nullptr;
}

void check_cufft(CufftResult r, const char* op, const char* call) {
  if (r != 0) throw std::runtime_error(message(op, ": ", call, " failed with cuFFT status ", r));
}

struct PlanKey {
  int device, type;
  std::vector<long long> n;
  long long batch;
  bool operator<(const PlanKey& o) const {
    return std::tie(device, type, n, batch) < std::tie(o.device, o.type, o.n, o.batch);
  }
};
struct Plan {
  PlanHandle handle;
  size_t work_bytes;
};

std::mutex& plan_mutex() {
  static std::mutex m;
  return m;
}

// The cached plan of key (made on first use; the cache is emptied when it holds kMaxPlans,
// after the device has finished the work queued on them). Call with plan_mutex() held.
Plan plan_for(const Cufft& lib, const PlanKey& key, const char* op) {
  constexpr size_t kMaxPlans = 64;
  static std::map<PlanKey, Plan> plans;
  auto it = plans.find(key);
  if (it != plans.end()) return it->second;
  if (plans.size() >= kMaxPlans) {
    cuda_hooks().synchronize(key.device);
    for (auto& [k, p] : plans) lib.destroy(p.handle);
    plans.clear();
  }
  Plan p{0, 0};
  check_cufft(lib.create(&p.handle), op, "cufftCreate");
  std::vector<long long> n = key.n;
  CufftResult r = lib.set_auto_allocation(p.handle, 0);  // work areas from Ember's allocator
  if (r == 0) {
    r = lib.make_plan_many64(p.handle, static_cast<int>(n.size()), n.data(), nullptr, 1, 0, nullptr, 1, 0, key.type,
                             key.batch, &p.work_bytes);
  }
  if (r != 0) {
    lib.destroy(p.handle);
    check_cufft(r, op, "cufftMakePlanMany64");
  }
  plans.emplace(key, p);
  return p;
}

// Runs exec(plan) for the transform `type` of `batch` contiguous signals of sizes n, on the
// current stream of the device of `on`.
template <typename Exec>
void run_plan(const Cufft& lib, const Tensor& on, int type, const Shape& n, int64_t batch, const char* op, Exec exec) {
  const int device = on->device().index;
  DeviceGuard guard(device);
  cudaStream_t stream = as_stream(cuda_hooks().current_stream(device));
  std::lock_guard<std::mutex> lock(plan_mutex());  // a plan runs on one stream at a time
  const Plan p = plan_for(lib, PlanKey{device, type, std::vector<long long>(n.begin(), n.end()), batch}, op);
  Tensor work;
  if (p.work_bytes > 0) {
    work = ember::empty({static_cast<int64_t>(p.work_bytes)}, ScalarType::UInt8, on->device());
    check_cufft(lib.set_work_area(p.handle, work->data_ptr()), op, "cufftSetWorkArea");
  }
  check_cufft(lib.set_stream(p.handle, stream), op, "cufftSetStream");
  check_cufft(exec(p.handle), op, "the cuFFT transform");
}

// One plan over self's transformed dims: the input prepared in in_dtype (a copy when cuFFT
// overwrites it: `overwrites`), exec(plan, in, out) run on it, the result scaled and viewed
// back in self's dim order.
template <typename Exec>
Tensor planned(const Cufft& lib, const Tensor& self, const FftMeta& m, ScalarType in_dtype, int type, bool overwrites,
               const char* op, Exec exec) {
  FftInput p = fft_input(self, m.dims, in_dtype);
  if (overwrites && p.x->data_ptr() == self->data_ptr()) p.x = ops::clone(p.x);
  Tensor y = ember::empty(fft_permuted(m.out_sizes, p.perm), m.out_dtype, self->device());
  if (p.batch > 0) {
    run_plan(lib, y, type, m.signal, p.batch, op,
             [&](PlanHandle h) { return exec(h, p.x->data_ptr(), y->data_ptr()); });
    if (m.scale != 1.0 && y->numel() > 0) ops::mul(y, wrapped_scalar(Scalar::from_double(m.scale)), y);
  }
  return ops::permute(y, inverse_permutation(p.perm));
}

bool is_double(ScalarType t) { return t == ScalarType::Float64 || t == ScalarType::ComplexDouble; }

}  // namespace

Tensor _fft_c2c(const Tensor& self, const Shape& dim, int64_t normalization, bool forward) {
  const Cufft* lib = cufft();
  if (!lib) return to_device(cpu::_fft_c2c(to_host(self), dim, normalization, forward), self->device());
  const FftMeta m = fft_c2c_meta(self, dim, normalization);
  if (m.dims.size() > static_cast<size_t>(kMaxRank)) {  // the last three dims, then the others
    const Shape last(m.dims.end() - kMaxRank, m.dims.end()), lead(m.dims.begin(), m.dims.end() - kMaxRank);
    return _fft_c2c(_fft_c2c(self, last, normalization, forward), lead, normalization, forward);
  }
  const bool z = is_double(m.out_dtype);
  return planned(*lib, self, m, m.out_dtype, z ? kZ2Z : kC2C, false, "_fft_c2c",
                 [&](PlanHandle h, void* in, void* out) {
                   return (z ? lib->exec_z2z : lib->exec_c2c)(h, in, out, forward ? kForward : kInverse);
                 });
}

Tensor _fft_r2c(const Tensor& self, const Shape& dim, int64_t normalization, bool onesided) {
  const Cufft* lib = cufft();
  if (!lib) return to_device(cpu::_fft_r2c(to_host(self), dim, normalization, onesided), self->device());
  const FftMeta m = fft_r2c_meta(self, dim, normalization, onesided);
  if (!onesided) {  // the full spectrum: the transform of the complex signal
    Tensor z = ember::empty(self->sizes(), m.out_dtype, self->device());
    ops::copy(z, self, false, z);
    return _fft_c2c(z, dim, normalization, true);
  }
  if (m.dims.size() > static_cast<size_t>(kMaxRank)) {  // the real transform of the last three, then c2c
    const Shape last(m.dims.end() - kMaxRank, m.dims.end()), lead(m.dims.begin(), m.dims.end() - kMaxRank);
    return _fft_c2c(_fft_r2c(self, last, normalization, true), lead, normalization, true);
  }
  const bool d = is_double(self->dtype());
  return planned(*lib, self, m, self->dtype(), d ? kD2Z : kR2C, false, "_fft_r2c",
                 [&](PlanHandle h, void* in, void* out) { return (d ? lib->exec_d2z : lib->exec_r2c)(h, in, out); });
}

Tensor _fft_c2r(const Tensor& self, const Shape& dim, int64_t normalization, int64_t last_dim_size) {
  const Cufft* lib = cufft();
  if (!lib) return to_device(cpu::_fft_c2r(to_host(self), dim, normalization, last_dim_size), self->device());
  const FftMeta m = fft_c2r_meta(self, dim, normalization, last_dim_size);
  if (m.dims.size() > 1) {  // as on the CPU: c2c over the leading dims, then the 1-D c2r
    const Shape lead(m.dims.begin(), m.dims.end() - 1);
    return _fft_c2r(_fft_c2c(self, lead, normalization, false), {m.dims.back()}, normalization, last_dim_size);
  }
  const bool d = is_double(m.out_dtype);  // cuFFT's c2r overwrites its input
  return planned(*lib, self, m, self->dtype(), d ? kZ2D : kC2R, true, "_fft_c2r",
                 [&](PlanHandle h, void* in, void* out) { return (d ? lib->exec_z2d : lib->exec_c2r)(h, in, out); });
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(_fft_c2c);
EMBER_REGISTER_CUDA_KERNEL(_fft_r2c);
EMBER_REGISTER_CUDA_KERNEL(_fft_c2r);
