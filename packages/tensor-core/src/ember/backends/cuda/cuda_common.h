// The CUDA runtime layer's internals, shared by the files of src/ember/cuda/ (and only by
// them: this is the one header outside the kernels that includes a CUDA header).
//
// - Every CUDA call goes through EMBER_CUDA_CHECK: a failure becomes a std::runtime_error
//   naming the call and CUDA's error ("CUDA error: out of memory (cudaErrorMemoryAllocation)
//   in cudaMalloc"), after clearing the error so that it does not surface again at the next
//   unrelated call.
// - DeviceGuard makes a device current for a scope (cudaSetDevice only when it differs).
// - Fork safety: once CUDA has been initialised (a successful cudaGetDeviceCount), a child
//   forked from this process cannot use it; require_usable() raises there instead of letting
//   the driver hang or fail obscurely.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ember/runtime/cuda_hooks.h"
#include "ember/memory/device_allocator.h"
#include "ember/memory/host_allocator.h"
#include "ember/core/tensor.h"

namespace ember::cuda {

// Throws std::runtime_error for `err` raised by `call` (an expression as written; the message
// keeps the function name). Clears CUDA's last error first.
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call);

inline void check(cudaError_t err, const char* call) {
  if (err != cudaSuccess) throw_cuda_error(err, call);
}

#define EMBER_CUDA_CHECK(expr) ::ember::cuda::check((expr), #expr)

// "cudaErrorNoDevice: no CUDA-capable device is detected"
std::string describe(cudaError_t err);

// ---- fork safety ----

// Records that CUDA was initialised in this process (a child forked later cannot use it).
void mark_initialised();
// Raises the "forked child" error when this process is a child forked after CUDA was
// initialised in its parent. Cheap: one atomic load.
void require_usable();
bool forked_after_init();

// ---- the current device ----

class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();  // restores the previous device; never throws
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;  // -1: nothing to restore
};

inline cudaStream_t as_stream(StreamId s) { return reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(s)); }
inline StreamId as_stream_id(cudaStream_t s) { return static_cast<StreamId>(reinterpret_cast<uintptr_t>(s)); }

// ---- the raw device calls of the caching allocator ----

class CudaBackend final : public DeviceBackend {
 public:
  const char* name() const override { return "cuda"; }
  void* raw_alloc(int device, size_t nbytes) override;  // nullptr when the device is full
  void raw_free(int device, void* ptr) override;
  void mem_info(int device, size_t* free_bytes, size_t* total_bytes) override;
  Event event_create(int device) override;
  void event_record(int device, Event event, StreamId stream) override;
  bool event_query(Event event) override;
  void event_synchronize(Event event) override;
  void event_destroy(Event event) override;
};

// ---- CUDA IPC (cuda_ipc.cpp): the work behind CudaHooks::ipc_export / ipc_import ----

// `caching`: the device's caching allocator, null while a pluggable allocator replaces it;
// `stream`: the device's current stream, where the event is recorded.
CudaIpcExport export_ipc_storage(const Storage& storage, int device, DeviceCachingAllocator* caching,
                                 StreamId stream);
// `stream`: the device's current stream, made to wait on the exporter's event.
std::shared_ptr<Storage> import_ipc_storage(int device, const std::string& mem_handle, size_t segment_size,
                                            size_t offset, size_t nbytes, const std::string& event_handle,
                                            StreamId stream);

// ---- libraries loaded at run time (cuBLAS, cuDNN) ----

// dlopen()s `soname` from the loader's search path, else from the folder `wheel_subdir`
// (e.g. "cu13/lib/") of each installed nvidia-* wheel; null when neither has it, with *why
// saying so. Call it outside any lock that a thread holding the GIL may wait on: finding the
// wheels asks Python.
void* open_cuda_library(const char* soname, const char* wheel_subdir, std::string* why);

// ---- pinned host memory ----

// Page-locked host memory from cudaHostAlloc, cached by the host CachingAllocator policy. A
// block that an asynchronous copy still reads or writes (record_use) is not reused before
// that copy completes: its release waits for the events recorded on the copies' streams.
class PinnedHostAllocator final : public Allocator {
 public:
  PinnedHostAllocator();
  void* allocate(size_t nbytes) override;
  void deallocate(void* ptr, size_t nbytes) override;  // never throws
  // `ptr` (anywhere inside a block of this allocator) is used by work just queued on `stream`
  // of `device`. False when ptr is not in one of its live blocks (nothing recorded).
  bool record_use(const void* ptr, int device, cudaStream_t stream);

 private:
  struct Raw final : RawMemory {
    void* alloc(size_t nbytes) override;
    void free(void* ptr, size_t nbytes) override;
    const char* device_name() const override { return "CUDA pinned host memory"; }
  };
  // An event recorded after the last use of a block on one stream (re-recorded at each use).
  struct Use {
    int device;
    cudaStream_t stream;
    cudaEvent_t event;
  };
  struct Live {
    size_t nbytes;
    std::vector<Use> uses;
  };
  struct Pending {
    void* ptr;
    size_t nbytes;
    std::vector<Use> uses;
  };
  void release_completed();  // hands back the pending blocks whose events have all completed

  Raw raw_;
  CachingAllocator cache_;
  std::mutex mu_;
  std::map<uintptr_t, Live> live_;  // block address -> block
  std::vector<Pending> pending_;
};

}  // namespace ember::cuda
