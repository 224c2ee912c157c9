// What the core needs from the CUDA runtime, behind one interface, so that no file outside
// src/ember/cuda/ includes a CUDA header or needs an #ifdef. A build without CUDA (or with
// EMBER_CUDA=OFF) has the default CudaHooks, whose device_count() is 0 and whose other
// members raise "ember was built without CUDA"; a CUDA build installs CudaRuntimeHooks
// (cuda/cuda_runtime_hooks.cpp) at load time.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ember/memory/device_allocator.h"
#include "ember/core/tensor.h"

namespace ember {

// What another process needs to map a CUDA storage's memory (CudaHooks::ipc_export).
struct CudaIpcExport {
  int device = 0;
  std::string mem_handle;    // the cudaIpcMemHandle_t (64 bytes) of the segment holding the storage
  size_t segment_size = 0;   // the segment's size in bytes
  size_t offset = 0;         // where the storage starts in the segment, in bytes
  size_t nbytes = 0;         // the storage's size in bytes
  void* event = nullptr;     // an interprocess cudaEvent_t, owned by the caller (destroy_event)
  std::string event_handle;  // its cudaIpcEventHandle_t (64 bytes)
};

class CudaHooks {
 public:
  virtual ~CudaHooks() = default;
  virtual bool is_built() const { return false; }
  // Devices visible to this process; 0 when there is no driver or no GPU. Throws only in a
  // child forked after CUDA was initialised in the parent (CUDA cannot run there; use spawn).
  virtual int device_count() const { return 0; }
  // Why device_count() is 0 on a CUDA build ("no NVIDIA driver", ...), for error messages.
  virtual std::string unavailable_reason() const { return "ember was built without CUDA"; }
  virtual int current_device() const { unavailable(); }
  virtual void set_device(int) const { unavailable(); }
  virtual std::string device_name(int) const { unavailable(); }
  // (major, minor, total memory, multiprocessors)
  virtual void device_properties(int, int*, int*, size_t*, int*) const { unavailable(); }
  virtual void synchronize(int) const { unavailable(); }
  virtual void mem_get_info(int, size_t* /*free*/, size_t* /*total*/) const { unavailable(); }

  // The storage allocator of a device (the caching allocator, or the pluggable one).
  virtual Allocator* allocator(int) const { unavailable(); }
  // The caching allocator of a device, for stats and empty_cache; null while the pluggable
  // allocator is in use.
  virtual DeviceCachingAllocator* caching_allocator(int) const { unavailable(); }
  // Host memory that is page-locked (cudaHostAlloc), cached like the device memory.
  virtual Allocator* pinned_allocator() const { unavailable(); }
  virtual bool is_pinned(const void*) const { return false; }

  // Streams: StreamId 0 is the default (legacy) stream of the current device.
  virtual StreamId current_stream(int) const { unavailable(); }
  virtual void set_current_stream(int, StreamId) const { unavailable(); }
  virtual StreamId create_stream(int, int /*priority*/) const { unavailable(); }
  virtual void destroy_stream(int, StreamId) const { unavailable(); }
  virtual bool query_stream(int, StreamId) const { unavailable(); }
  virtual void synchronize_stream(int, StreamId) const { unavailable(); }
  virtual void stream_wait_event(int, StreamId, void*) const { unavailable(); }
  // Events: opaque handles (cudaEvent_t).
  virtual void* create_event(int, bool /*timing*/, bool /*blocking*/, bool /*interprocess*/) const { unavailable(); }
  virtual void destroy_event(int, void*) const { unavailable(); }
  virtual void record_event(int, void*, StreamId) const { unavailable(); }
  virtual bool query_event(void*) const { unavailable(); }
  virtual void synchronize_event(void*) const { unavailable(); }
  virtual float elapsed_ms(void*, void*) const { unavailable(); }

  // ---- CUDA IPC (ember.multiprocessing shares CUDA tensors between processes) ----
  // Exports a CUDA storage: the IPC handle of the caching allocator's segment that holds it
  // (or, for a storage imported from another process, of that process's segment), the
  // storage's place in it, and an interprocess event recorded on the device's current stream
  // after the work queued so far. The storage must stay alive until every receiver is done.
  virtual CudaIpcExport ipc_export(const Storage&) const { unavailable(); }
  // A storage of `nbytes` at `offset` of the segment another process exported. Each segment
  // is opened once per process (cudaIpcOpenMemHandle) and closed when its last storage dies;
  // that release first waits for the device's queued work, so that the exporter may reuse the
  // memory once told. The current stream waits on the event (none when event_handle is empty).
  virtual std::shared_ptr<Storage> ipc_import(int /*device*/, const std::string& /*mem_handle*/,
                                              size_t /*segment_size*/, size_t /*offset*/, size_t /*nbytes*/,
                                              const std::string& /*event_handle*/) const {
    unavailable();
  }

  // Copies nbytes between any two of host and device memory, ordered on the current stream
  // of the device involved. Synchronous unless non_blocking and the host side is pinned.
  virtual void copy_bytes(void*, Device, const void*, Device, size_t, bool /*non_blocking*/) const {
    unavailable();
  }

 protected:
  [[noreturn]] void unavailable() const;
};

// The installed hooks (never null).
const CudaHooks& cuda_hooks();
void set_cuda_hooks(const CudaHooks* hooks);  // called once, at load, by a CUDA build

// The index a Device names: its own, or the current CUDA device for "cuda" (-1). Raises
// a RuntimeError naming the device when it does not exist.
int resolve_cuda_index(const Device& d);
// ember.backends.cuda.matmul.allow_tf32: float32 matrix products may use TF32 tensor cores.
bool allow_tf32();
void set_allow_tf32(bool allow);

// d with its index made concrete: cpu stays "cpu", "cuda" becomes "cuda:<current device>".
Device concrete_device(const Device& d);

// ---- ember.backends.cudnn ----
// The switches are plain flags, present in every build (defaults as PyTorch's).
struct CudnnSettings {
  std::atomic<bool> enabled{true};         // CUDA convolutions may use cuDNN
  std::atomic<bool> benchmark{false};      // pick algorithms by timing them (cudnnFind*), per shape
  std::atomic<bool> deterministic{false};  // only algorithms that give the same bits every run
  std::atomic<bool> allow_tf32{true};      // float32 convolutions may use TF32 tensor cores
};
inline CudnnSettings& cudnn_settings() {
  static CudnnSettings settings;
  return settings;
}

// What cuDNN itself reports. The default is a build without cuDNN; a CUDA build installs its
// own at load (conv_cudnn.cpp), which loads the library at the first question.
class CudnnHooks {
 public:
  virtual ~CudnnHooks() = default;
  // cuDNN's version (9.3.0 is 90300) when it can run here: a CUDA device and the library;
  // else 0. Never throws.
  virtual int version() const { return 0; }
  // Why version() is 0.
  virtual std::string unavailable_reason() const { return "ember was built without CUDA"; }
};
inline std::atomic<const CudnnHooks*>& cudnn_hooks_slot() {
  static std::atomic<const CudnnHooks*> slot{nullptr};
  return slot;
}
inline const CudnnHooks& cudnn_hooks() {
  static const CudnnHooks none;
  const CudnnHooks* h = cudnn_hooks_slot().load(std::memory_order_acquire);
  return h ? *h : none;
}

}  // namespace ember
