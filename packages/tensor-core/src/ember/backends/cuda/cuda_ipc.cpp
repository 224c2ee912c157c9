// CUDA IPC: a CUDA storage's memory mapped into another process (cuda_common.h), the
// compiled half of ember.multiprocessing's CUDA sharing.
//
// Export: the IPC handle of the cudaMalloc segment that holds the storage (the caching
// allocator knows it: segment_of), the storage's byte offset in it, and an interprocess event
// recorded on the current stream after the work queued so far. A storage that was itself
// imported is exported under its original segment's handle, so a receiver can pass it on.
//
// Import: each (device, segment handle) is opened once per process and reference-counted by
// the storages over it; the last one to die closes it. Before that release, the device's
// queued work is waited for: the exporter reuses the memory once every receiver has released
// it, and must not race this process's kernels still reading or writing it.
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "ember/backends/cuda/cuda_common.h"

namespace ember::cuda {

namespace {

static_assert(sizeof(cudaIpcMemHandle_t) == 64 && sizeof(cudaIpcEventHandle_t) == 64,
              "CUDA IPC handles are 64 bytes");

using Key = std::pair<int, std::string>;  // (device, segment handle)

struct Mapping {
  char* base = nullptr;  // where the segment is mapped in this process
  size_t size = 0;
  int64_t storages = 0;  // live storages over it
};

// Never destroyed: storages may die during the interpreter's teardown.
struct Mappings {
  std::mutex mu;
  std::map<Key, Mapping> open;
};

Mappings& mappings() {
  static Mappings* m = new Mappings;
  return *m;
}

// The imported segment holding `ptr` on `device`: its handle, base and size; false if none.
bool find_imported(int device, const void* ptr, std::string* handle, char** base, size_t* size) {
  Mappings& m = mappings();
  std::lock_guard<std::mutex> lock(m.mu);
  const char* p = static_cast<const char*>(ptr);
  for (const auto& [key, mapping] : m.open) {
    if (key.first == device && p >= mapping.base && p < mapping.base + mapping.size) {
      *handle = key.second;
      *base = mapping.base;
      *size = mapping.size;
      return true;
    }
  }
  return false;
}

// A failure while releasing (from a storage's destructor): reported, never thrown. At
// process exit the runtime may be unloading already: nothing left to release then.
bool release_ok(cudaError_t err, const char* call) {
  if (err == cudaSuccess) return true;
  (void)cudaGetLastError();
  if (err != cudaErrorCudartUnloading) {
    std::fprintf(stderr, "ember: warning: %s failed while releasing memory imported through CUDA IPC: %s\n", call,
                 describe(err).c_str());
  }
  return false;
}

void release_mapping(const Key& key) noexcept {
  if (forked_after_init()) return;  // a forked child never used CUDA: nothing of it is its own
  int previous = -1;
  if (!release_ok(cudaGetDevice(&previous), "cudaGetDevice")) return;
  if (previous != key.first && !release_ok(cudaSetDevice(key.first), "cudaSetDevice")) return;
  // the exporter reuses the memory once told: this process's work on it must be done
  release_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  try {
    Mappings& m = mappings();
    std::lock_guard<std::mutex> lock(m.mu);
    auto it = m.open.find(key);
    if (it != m.open.end() && --it->second.storages == 0) {
      release_ok(cudaIpcCloseMemHandle(it->second.base), "cudaIpcCloseMemHandle");
      m.open.erase(it);
    }
  } catch (const std::exception& e) {  // the mutex: never in practice
    std::fprintf(stderr, "ember: warning: releasing memory imported through CUDA IPC failed: %s\n", e.what());
  }
  if (previous >= 0 && previous != key.first) release_ok(cudaSetDevice(previous), "cudaSetDevice");
}

}  // namespace

CudaIpcExport export_ipc_storage(const Storage& storage, int device, DeviceCachingAllocator* caching,
                                 StreamId stream) {
  DeviceGuard guard(device);
  CudaIpcExport out;
  out.device = device;
  out.nbytes = storage.nbytes();
  const void* ptr = storage.data();
  if (!ptr) throw ValueError("CUDA IPC: a storage of 0 bytes has no memory to share");
  char* base = nullptr;
  if (!find_imported(device, ptr, &out.mem_handle, &base, &out.segment_size)) {
    if (storage.is_external()) {
      throw std::runtime_error(message(
          "CUDA IPC: cannot share this cuda:", device, " tensor: its memory was not allocated by Ember (a tensor "
          "imported through DLPack?); share a copy made by Ember (tensor.clone())"));
    }
    if (!caching) {
      throw std::runtime_error(message(
          "CUDA IPC: cannot share this cuda:", device, " tensor: a pluggable allocator replaces the CUDA caching "
          "allocator, and CUDA IPC shares the caching allocator's segments"));
    }
    std::pair<void*, size_t> segment;
    try {
      segment = caching->segment_of(ptr);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(message("CUDA IPC: ", e.what()));
    }
    base = static_cast<char*>(segment.first);
    out.segment_size = segment.second;
    cudaIpcMemHandle_t handle;
    EMBER_CUDA_CHECK(cudaIpcGetMemHandle(&handle, base));
    out.mem_handle.assign(reinterpret_cast<const char*>(&handle), sizeof handle);
  }
  out.offset = static_cast<size_t>(static_cast<const char*>(ptr) - base);

  cudaEvent_t event = nullptr;
  EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming | cudaEventInterprocess));
  cudaIpcEventHandle_t event_handle;
  cudaError_t err = cudaEventRecord(event, as_stream(stream));
  if (err == cudaSuccess) err = cudaIpcGetEventHandle(&event_handle, event);
  if (err != cudaSuccess) {
    (void)cudaEventDestroy(event);
    throw_cuda_error(err, "cudaIpcGetEventHandle");
  }
  out.event = event;
  out.event_handle.assign(reinterpret_cast<const char*>(&event_handle), sizeof event_handle);
  return out;
}

std::shared_ptr<Storage> import_ipc_storage(int device, const std::string& mem_handle, size_t segment_size,
                                            size_t offset, size_t nbytes, const std::string& event_handle,
                                            StreamId stream) {
  if (mem_handle.size() != sizeof(cudaIpcMemHandle_t)) {
    throw ValueError(message("CUDA IPC: a memory handle is ", sizeof(cudaIpcMemHandle_t), " bytes, got ",
                             mem_handle.size()));
  }
  if (!event_handle.empty() && event_handle.size() != sizeof(cudaIpcEventHandle_t)) {
    throw ValueError(message("CUDA IPC: an event handle is ", sizeof(cudaIpcEventHandle_t), " bytes, got ",
                             event_handle.size()));
  }
  if (nbytes == 0 || offset > segment_size || nbytes > segment_size - offset) {
    throw ValueError(message("CUDA IPC: a storage of ", nbytes, " bytes at offset ", offset,
                             " does not fit in a segment of ", segment_size, " bytes"));
  }
  DeviceGuard guard(device);
  // the exporter's work on the memory comes first on this process's current stream
  if (!event_handle.empty()) {
    cudaIpcEventHandle_t eh;
    std::memcpy(&eh, event_handle.data(), sizeof eh);
    cudaEvent_t event = nullptr;
    EMBER_CUDA_CHECK(cudaIpcOpenEventHandle(&event, eh));
    const cudaError_t err = cudaStreamWaitEvent(as_stream(stream), event, 0);
    (void)cudaEventDestroy(event);  // the wait stays queued
    check(err, "cudaStreamWaitEvent");
  }
  Key key{device, mem_handle};
  char* base = nullptr;
  {
    Mappings& m = mappings();
    std::lock_guard<std::mutex> lock(m.mu);
    auto it = m.open.find(key);
    if (it == m.open.end()) {
      cudaIpcMemHandle_t handle;
      std::memcpy(&handle, mem_handle.data(), sizeof handle);
      void* p = nullptr;
      const cudaError_t err = cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess);
      if (err != cudaSuccess) {
        (void)cudaGetLastError();
        throw std::runtime_error(message(
            "CUDA IPC: cannot map cuda:", device, " memory of another process (", describe(err),
            " in cudaIpcOpenMemHandle). The exporting process must be alive, on the same machine and GPU, and a "
            "process cannot open its own memory this way"));
      }
      it = m.open.emplace(key, Mapping{static_cast<char*>(p), segment_size, 0}).first;
    }
    ++it->second.storages;
    base = it->second.base;
  }
  try {
    return std::make_shared<Storage>(base + offset, nbytes, Device{DeviceType::CUDA, device},
                                     [key]() { release_mapping(key); });
  } catch (...) {
    release_mapping(key);
    throw;
  }
}

}  // namespace ember::cuda
