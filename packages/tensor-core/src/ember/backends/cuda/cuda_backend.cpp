// The CUDA runtime layer's building blocks (cuda_common.h): error checking, fork safety, the
// device guard, the raw device calls of the caching allocator, and pinned host memory.
#include "ember/backends/cuda/cuda_common.h"

#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

namespace ember::cuda {

// ---- errors ----

std::string describe(cudaError_t err) {
  return message(cudaGetErrorName(err), ": ", cudaGetErrorString(err));
}

void throw_cuda_error(cudaError_t err, const char* call) {
  (void)cudaGetLastError();  // a non-sticky error must not resurface at the next call
  std::string name(call);
  if (const size_t paren = name.find('('); paren != std::string::npos) name.resize(paren);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  std::string hint;
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorLaunchTimeout:
      hint = ". A kernel's error is reported asynchronously, at a later CUDA call; run with "
             "CUDA_LAUNCH_BLOCKING=1 to see it at the kernel that failed";
      break;
    default:
      break;
  }
  throw std::runtime_error(message("CUDA error: ", cudaGetErrorString(err), " (", cudaGetErrorName(err),
                                   ") in ", name, hint));
}

// ---- fork safety ----

namespace {

std::atomic<bool> g_initialised{false};
std::atomic<bool> g_forked_after_init{false};

void on_fork_child() {
  if (g_initialised.load(std::memory_order_relaxed)) g_forked_after_init.store(true, std::memory_order_relaxed);
}

}  // namespace

void mark_initialised() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, on_fork_child); });
  g_initialised.store(true, std::memory_order_relaxed);
}

bool forked_after_init() { return g_forked_after_init.load(std::memory_order_relaxed); }

void require_usable() {
  if (forked_after_init()) {
    throw std::runtime_error(
        "CUDA was initialised in the parent process before fork(); a forked child cannot use CUDA. "
        "Use the 'spawn' start method (multiprocessing.set_start_method('spawn'))");
  }
}

// ---- the current device ----

DeviceGuard::DeviceGuard(int device) {
  require_usable();
  int current = -1;
  EMBER_CUDA_CHECK(cudaGetDevice(&current));
  if (current != device) {
    EMBER_CUDA_CHECK(cudaSetDevice(device));
    previous_ = current;
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
}

// ---- the caching allocator's device calls ----

void* CudaBackend::raw_alloc(int device, size_t nbytes) {
  DeviceGuard guard(device);
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, nbytes);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // the caching allocator frees its cache and retries
    return nullptr;
  }
  check(err, "cudaMalloc");
  return p;
}

void CudaBackend::raw_free(int device, void* ptr) {
  DeviceGuard guard(device);
  EMBER_CUDA_CHECK(cudaFree(ptr));
}

void CudaBackend::mem_info(int device, size_t* free_bytes, size_t* total_bytes) {
  DeviceGuard guard(device);
  EMBER_CUDA_CHECK(cudaMemGetInfo(free_bytes, total_bytes));
}

DeviceBackend::Event CudaBackend::event_create(int device) {
  DeviceGuard guard(device);
  cudaEvent_t e = nullptr;
  EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

void CudaBackend::event_record(int device, Event event, StreamId stream) {
  DeviceGuard guard(device);
  EMBER_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), as_stream(stream)));
}

bool CudaBackend::event_query(Event event) {
  require_usable();
  const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  check(err, "cudaEventQuery");
  return true;
}

void CudaBackend::event_synchronize(Event event) {
  require_usable();
  EMBER_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
}

void CudaBackend::event_destroy(Event event) {
  require_usable();
  EMBER_CUDA_CHECK(cudaEventDestroy(static_cast<cudaEvent_t>(event)));
}

// ---- pinned host memory ----

void* PinnedHostAllocator::Raw::alloc(size_t nbytes) {
  require_usable();
  void* p = nullptr;
  const cudaError_t err = cudaHostAlloc(&p, nbytes, cudaHostAllocDefault);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // the policy empties its cache and retries, then raises
    return nullptr;
  }
  check(err, "cudaHostAlloc");
  return p;
}

void PinnedHostAllocator::Raw::free(void* ptr, size_t) {
  if (forked_after_init()) return;  // not ours to touch in a forked child
  const cudaError_t err = cudaFreeHost(ptr);
  if (err != cudaSuccess) {
    // called from deallocate paths that must not throw: report and leak the block
    (void)cudaGetLastError();
    std::fprintf(stderr, "ember: warning: cudaFreeHost failed: %s\n", describe(err).c_str());
  }
}

PinnedHostAllocator::PinnedHostAllocator()
    // Like PyTorch's pinned memory cache: freed blocks stay cached until the process ends
    // (page-locking is expensive, and cudaFreeHost synchronises the device).
    : cache_(raw_, CachingAllocator::Options{true, std::numeric_limits<int64_t>::max()}) {}

void* PinnedHostAllocator::allocate(size_t nbytes) {
  require_usable();
  release_completed();
  void* p = cache_.allocate(nbytes);
  try {
    std::lock_guard<std::mutex> lock(mu_);
    live_[reinterpret_cast<uintptr_t>(p)] = Live{nbytes, {}};
  } catch (...) {
    cache_.deallocate(p, nbytes);
    throw;
  }
  return p;
}

void PinnedHostAllocator::deallocate(void* ptr, size_t nbytes) {
  if (!ptr || forked_after_init()) return;  // a forked child leaves the parent's memory alone
  try {
    bool now = true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = live_.find(reinterpret_cast<uintptr_t>(ptr));
      if (it == live_.end()) {
        std::fprintf(stderr, "ember: warning: %p was not allocated by the CUDA pinned memory allocator\n", ptr);
        return;
      }
      if (!it->second.uses.empty()) {
        pending_.push_back(Pending{ptr, nbytes, std::move(it->second.uses)});
        now = false;
      }
      live_.erase(it);
    }
    if (now) cache_.deallocate(ptr, nbytes);
    release_completed();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember: warning: freeing pinned host memory failed: %s\n", e.what());
  }
}

bool PinnedHostAllocator::record_use(const void* ptr, int device, cudaStream_t stream) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.upper_bound(addr);
  if (it == live_.begin()) return false;
  --it;
  if (addr >= it->first + std::max<size_t>(it->second.nbytes, 1)) return false;
  std::vector<Use>& uses = it->second.uses;
  DeviceGuard guard(device);
  for (Use& u : uses) {
    if (u.device == device && u.stream == stream) {  // a later record covers the earlier work
      EMBER_CUDA_CHECK(cudaEventRecord(u.event, stream));
      return true;
    }
  }
  cudaEvent_t e = nullptr;
  EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  const cudaError_t err = cudaEventRecord(e, stream);
  if (err != cudaSuccess) {
    (void)cudaEventDestroy(e);
    throw_cuda_error(err, "cudaEventRecord");
  }
  uses.push_back(Use{device, stream, e});
  return true;
}

void PinnedHostAllocator::release_completed() {
  std::vector<std::pair<void*, size_t>> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_.empty()) return;
    for (auto it = pending_.begin(); it != pending_.end();) {
      bool done = true;
      for (const Use& u : it->uses) {
        const cudaError_t err = cudaEventQuery(u.event);
        if (err == cudaErrorNotReady) {
          (void)cudaGetLastError();
          done = false;
          break;
        }
        check(err, "cudaEventQuery");
      }
      if (!done) {
        ++it;
        continue;
      }
      for (const Use& u : it->uses) {
        if (cudaEventDestroy(u.event) != cudaSuccess) (void)cudaGetLastError();  // completed: harmless
      }
      ready.emplace_back(it->ptr, it->nbytes);
      it = pending_.erase(it);
    }
  }
  for (const auto& [p, n] : ready) cache_.deallocate(p, n);
}

// ---- libraries loaded at run time ----

void* open_cuda_library(const char* soname, const char* wheel_subdir, std::string* why) {
  if (void* h = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) return h;
  std::vector<std::string> dirs;  // <each folder of the nvidia namespace package>/<wheel_subdir>
  for (const std::string& d : nvidia_wheel_dirs()) dirs.push_back(d + "/" + wheel_subdir);
  for (const std::string& dir : dirs) {
    if (void* h = dlopen((dir + soname).c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  }
  if (why) {
    const char* err = dlerror();
    *why = std::string(soname) + " was not found" + (err ? std::string(" (") + err + ")" : std::string());
  }
  return nullptr;
}

}  // namespace ember::cuda
