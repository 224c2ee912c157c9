// CudaRuntimeHooks: the CudaHooks of a CUDA build (cuda_hooks.h), over the CUDA runtime
// (linked statically, so a machine without the CUDA libraries still imports the module), and
// the pluggable allocator (cuda_plug.h). Installed at load time; no CUDA call runs before
// first use, and none runs from a static destructor (the per-device state is never freed:
// storages may outlive the interpreter's teardown, and the driver may be gone by then).
#include <cuda.h>  // only the driver API's types, for entry points found at run time
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/backends/cuda/cuda_common.h"
#include "ember/runtime/cuda_hooks.h"
#include "ember/runtime/cuda_plug.h"

namespace ember::cuda {

namespace {

constexpr int kMaxDevices = 256;

// The pluggable allocator's functions (set_cuda_pluggable_allocator).
struct Plug {
  CudaPluggableAlloc alloc;
  CudaPluggableFree free;
  std::string name;
};

// The process's CUDA state. Created at first use and never destroyed.
struct State {
  // device_count(), computed once
  std::once_flag count_once;
  int count = 0;
  std::string reason;  // why count is 0

  std::mutex mu;  // creation of the per-device objects below
  CudaBackend backend;
  std::array<std::atomic<DeviceCachingAllocator*>, kMaxDevices> caching{};
  std::array<std::atomic<Allocator*>, kMaxDevices> adapters{};
  std::array<std::atomic<const cudaDeviceProp*>, kMaxDevices> props{};
  std::once_flag pinned_once;
  PinnedHostAllocator* pinned = nullptr;

  // the pluggable allocator: settable until the first device allocation
  std::mutex plug_mu;
  std::atomic<bool> allocated{false};
  std::atomic<const Plug*> plug{nullptr};
  std::mutex plug_blocks_mu;
  std::unordered_map<void*, StreamId> plug_blocks;  // the stream each block was allocated on
};

State& state() {
  static State* s = new State;
  return *s;
}

// Each thread's current stream of each device (0: the device's legacy default stream).
thread_local std::vector<StreamId> t_streams;

std::string version_str(int v) { return message(v / 1000, ".", (v % 1000) / 10); }

std::string reason_for(cudaError_t err) {
  const std::string what = describe(err);
  if (err == cudaErrorInsufficientDriver) {
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) {
      (void)cudaGetLastError();
      driver = 0;
    }
    if (driver == 0) return message("no NVIDIA driver found (", what, ")");
    return message("the NVIDIA driver supports CUDA up to ", version_str(driver), ", but ember was built with CUDA ",
                   version_str(CUDART_VERSION), "; update the driver (", what, ")");
  }
  if (err == cudaErrorNoDevice) {
    std::string visible;
    if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) visible = message(", CUDA_VISIBLE_DEVICES='", v, "'");
    return message("no CUDA-capable device is detected (", what, visible, ")");
  }
  return message("cudaGetDeviceCount failed (", what, ")");
}

State& initialised() {
  State& s = state();
  std::call_once(s.count_once, [&s] {
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err == cudaSuccess && n > 0) {
      s.count = std::min(n, kMaxDevices);
      mark_initialised();
    } else if (err == cudaSuccess) {
      s.reason = "no CUDA-capable device is visible to this process";
    } else {
      (void)cudaGetLastError();
      s.reason = reason_for(err);
    }
  });
  return s;
}

// Whether some device has an active primary context (else no memory can be pinned yet, and
// asking cudaPointerGetAttributes would create one). Asks the driver through entry points
// found at run time, so that ember never links libcuda; when they cannot be found, assumes yes.
bool some_context_active(int count) {
  static std::atomic<bool> seen{false};
  if (seen.load(std::memory_order_relaxed)) return true;
  using GetState = CUresult (*)(CUdevice, unsigned int*, int*);
  using DeviceGet = CUresult (*)(CUdevice*, int);
  static const std::pair<GetState, DeviceGet> fns = [] {
    auto find = [](const char* symbol) -> void* {
      void* fn = nullptr;
      cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
      if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
          found != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        return nullptr;
      }
      return fn;
    };
    return std::make_pair(reinterpret_cast<GetState>(find("cuDevicePrimaryCtxGetState")),
                          reinterpret_cast<DeviceGet>(find("cuDeviceGet")));
  }();
  bool active = !fns.first || !fns.second;
  for (int d = 0; d < count && !active; ++d) {
    CUdevice dev = 0;
    unsigned int flags = 0;
    int on = 0;
    if (fns.second(&dev, d) != CUDA_SUCCESS || fns.first(dev, &flags, &on) != CUDA_SUCCESS) {
      active = true;  // cannot tell
    } else {
      active = on != 0;
    }
  }
  if (active) seen.store(true, std::memory_order_relaxed);
  return active;
}

// RAII for the events of a cross-device copy's barriers.
class ScopedEvent {
 public:
  explicit ScopedEvent(int device) {
    DeviceGuard guard(device);
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
  }
  ~ScopedEvent() {
    if (cudaEventDestroy(event_) != cudaSuccess) (void)cudaGetLastError();
  }
  ScopedEvent(const ScopedEvent&) = delete;
  ScopedEvent& operator=(const ScopedEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

const Plug* plug_in_use() { return state().plug.load(std::memory_order_acquire); }

// The allocator in use from now on (null: the caching allocator). Locks in the choice at the
// first device allocation: set_cuda_pluggable_allocator raises afterwards.
const Plug* plug_for_allocation() {
  State& s = state();
  if (!s.allocated.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(s.plug_mu);
    s.allocated.store(true, std::memory_order_release);
  }
  return plug_in_use();
}

DeviceCachingAllocator& caching_of(int device) {
  State& s = state();
  DeviceCachingAllocator* a = s.caching[device].load(std::memory_order_acquire);
  if (a) return *a;
  std::lock_guard<std::mutex> lock(s.mu);
  a = s.caching[device].load(std::memory_order_relaxed);
  if (!a) {
    a = new DeviceCachingAllocator(s.backend, device);  // never deleted (see the top)
    s.caching[device].store(a, std::memory_order_release);
  }
  return *a;
}

StreamId current_stream_of(int device) {
  return device < static_cast<int>(t_streams.size()) ? t_streams[device] : 0;
}

// The storage allocator of one device: the caching allocator on the current stream, or the
// pluggable allocator when one was installed before the first allocation.
class CudaDeviceAllocator final : public Allocator {
 public:
  explicit CudaDeviceAllocator(int device) : device_(device) {}

  void* allocate(size_t nbytes) override {
    require_usable();
    if (nbytes == 0) return nullptr;
    const Plug* plug = plug_for_allocation();
    const StreamId stream = current_stream_of(device_);
    if (!plug) return caching_of(device_).allocate(nbytes, stream);
    void* p = nullptr;
    {
      DeviceGuard guard(device_);
      p = plug->alloc(nbytes, device_, as_stream(stream));
    }
    if (!p) {
      throw DeviceOutOfMemory(message("CUDA out of memory. Tried to allocate ", format_bytes(nbytes), " on cuda:",
                                      device_, ": the pluggable allocator '", plug->name, "' returned NULL"));
    }
    State& s = state();
    std::lock_guard<std::mutex> lock(s.plug_blocks_mu);
    s.plug_blocks[p] = stream;
    return p;
  }

  void deallocate(void* ptr, size_t nbytes) override {
    // a forked child leaves the parent's device memory alone: the process cannot touch it
    if (!ptr || forked_after_init()) return;
    try {
      const Plug* plug = plug_in_use();
      if (!plug) {
        caching_of(device_).free(ptr);
        return;
      }
      State& s = state();
      StreamId stream = 0;
      {
        std::lock_guard<std::mutex> lock(s.plug_blocks_mu);
        auto it = s.plug_blocks.find(ptr);
        if (it != s.plug_blocks.end()) {
          stream = it->second;
          s.plug_blocks.erase(it);
        }
      }
      DeviceGuard guard(device_);
      plug->free(ptr, nbytes, device_, as_stream(stream));
    } catch (const std::exception& e) {  // from a storage's destructor: report, never throw
      std::fprintf(stderr, "ember: warning: freeing CUDA memory on cuda:%d failed: %s\n", device_, e.what());
    }
  }

 private:
  const int device_;
};

}  // namespace

class CudaRuntimeHooks final : public CudaHooks {
 public:
  bool is_built() const override { return true; }

  int device_count() const override {
    require_usable();
    return initialised().count;
  }

  std::string unavailable_reason() const override { return initialised().reason; }

  int current_device() const override {
    available();
    int d = 0;
    EMBER_CUDA_CHECK(cudaGetDevice(&d));
    return d;
  }

  void set_device(int device) const override {
    check_device(device, "set_device");
    int current = -1;
    EMBER_CUDA_CHECK(cudaGetDevice(&current));
    if (current != device) EMBER_CUDA_CHECK(cudaSetDevice(device));
  }

  std::string device_name(int device) const override { return props(device).name; }

  void device_properties(int device, int* major, int* minor, size_t* total_memory, int* multiprocessors) const override {
    const cudaDeviceProp& p = props(device);
    *major = p.major;
    *minor = p.minor;
    *total_memory = p.totalGlobalMem;
    *multiprocessors = p.multiProcessorCount;
  }

  void synchronize(int device) const override {
    check_device(device, "synchronize");
    DeviceGuard guard(device);
    EMBER_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void mem_get_info(int device, size_t* free_bytes, size_t* total_bytes) const override {
    check_device(device, "mem_get_info");
    state().backend.mem_info(device, free_bytes, total_bytes);
  }

  // ---- memory ----

  Allocator* allocator(int device) const override {
    check_device(device, "allocator");
    State& s = state();
    Allocator* a = s.adapters[device].load(std::memory_order_acquire);
    if (a) return a;
    std::lock_guard<std::mutex> lock(s.mu);
    a = s.adapters[device].load(std::memory_order_relaxed);
    if (!a) {
      a = new CudaDeviceAllocator(device);  // never deleted
      s.adapters[device].store(a, std::memory_order_release);
    }
    return a;
  }

  DeviceCachingAllocator* caching_allocator(int device) const override {
    check_device(device, "caching_allocator");
    if (plug_in_use()) return nullptr;
    return &caching_of(device);
  }

  Allocator* pinned_allocator() const override { return &pinned(); }

  bool is_pinned(const void* ptr) const override {
    if (!ptr || forked_after_init()) return false;
    const int n = initialised().count;
    if (n == 0 || !some_context_active(n)) return false;
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return attr.type == cudaMemoryTypeHost;
  }

  // ---- streams ----

  StreamId current_stream(int device) const override {
    check_device(device, "current_stream");
    return current_stream_of(device);
  }

  void set_current_stream(int device, StreamId stream) const override {
    check_device(device, "set_stream");
    if (static_cast<int>(t_streams.size()) <= device) t_streams.resize(static_cast<size_t>(device) + 1, 0);
    t_streams[device] = stream;
  }

  StreamId create_stream(int device, int priority) const override {
    check_device(device, "Stream");
    DeviceGuard guard(device);
    cudaStream_t s = nullptr;
    // out-of-range priorities are clamped by CUDA (lower numbers: higher priority)
    EMBER_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
    return as_stream_id(s);
  }

  void destroy_stream(int device, StreamId stream) const override {
    check_device(device, "destroy_stream");
    if (stream == 0) throw ValueError("destroy_stream: the default stream cannot be destroyed");
    DeviceGuard guard(device);
    EMBER_CUDA_CHECK(cudaStreamDestroy(as_stream(stream)));
    if (device < static_cast<int>(t_streams.size()) && t_streams[device] == stream) t_streams[device] = 0;
  }

  bool query_stream(int device, StreamId stream) const override {
    check_device(device, "query_stream");
    DeviceGuard guard(device);
    const cudaError_t err = cudaStreamQuery(as_stream(stream));
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    check(err, "cudaStreamQuery");
    return true;
  }

  void synchronize_stream(int device, StreamId stream) const override {
    check_device(device, "synchronize_stream");
    DeviceGuard guard(device);
    EMBER_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream)));
  }

  void stream_wait_event(int device, StreamId stream, void* event) const override {
    check_device(device, "wait_event");
    require_event(event, "wait_event");
    DeviceGuard guard(device);
    EMBER_CUDA_CHECK(cudaStreamWaitEvent(as_stream(stream), static_cast<cudaEvent_t>(event), 0));
  }

  // ---- events ----

  void* create_event(int device, bool timing, bool blocking, bool interprocess) const override {
    check_device(device, "Event");
    if (interprocess && timing) {
      throw ValueError("Event: an interprocess event cannot record timing (enable_timing=True and interprocess=True)");
    }
    unsigned int flags = timing ? cudaEventDefault : cudaEventDisableTiming;
    if (blocking) flags |= cudaEventBlockingSync;
    if (interprocess) flags |= cudaEventInterprocess | cudaEventDisableTiming;
    DeviceGuard guard(device);
    cudaEvent_t e = nullptr;
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
    return e;
  }

  void destroy_event(int device, void* event) const override {
    check_device(device, "destroy_event");
    require_event(event, "destroy_event");
    DeviceGuard guard(device);
    EMBER_CUDA_CHECK(cudaEventDestroy(static_cast<cudaEvent_t>(event)));
  }

  void record_event(int device, void* event, StreamId stream) const override {
    check_device(device, "record_event");
    require_event(event, "record_event");
    DeviceGuard guard(device);
    EMBER_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), as_stream(stream)));
  }

  bool query_event(void* event) const override {
    available();
    require_event(event, "query_event");
    return state().backend.event_query(event);
  }

  void synchronize_event(void* event) const override {
    available();
    require_event(event, "synchronize_event");
    EMBER_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
  }

  float elapsed_ms(void* start, void* end) const override {
    available();
    require_event(start, "elapsed_time");
    require_event(end, "elapsed_time");
    float ms = 0;
    EMBER_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)));
    return ms;
  }

  // ---- CUDA IPC ----

  CudaIpcExport ipc_export(const Storage& storage) const override {
    const int device = storage.device().index;
    check_device(device, "CUDA IPC");
    return export_ipc_storage(storage, device, plug_in_use() ? nullptr : &caching_of(device),
                              current_stream_of(device));
  }

  std::shared_ptr<Storage> ipc_import(int device, const std::string& mem_handle, size_t segment_size, size_t offset,
                                      size_t nbytes, const std::string& event_handle) const override {
    check_device(device, "CUDA IPC");
    return import_ipc_storage(device, mem_handle, segment_size, offset, nbytes, event_handle,
                              current_stream_of(device));
  }

  // ---- copies ----

  void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes,
                  bool non_blocking) const override {
    if (nbytes == 0) return;
    const bool to_cuda = dst_device.type == DeviceType::CUDA;
    const bool from_cuda = src_device.type == DeviceType::CUDA;
    if (!to_cuda && !from_cuda) {
      std::memcpy(dst, src, nbytes);
      return;
    }
    if (to_cuda && from_cuda) {
      copy_device_to_device(dst, resolve_cuda_index(dst_device), src, resolve_cuda_index(src_device), nbytes,
                            non_blocking);
      return;
    }
    // host <-> device, on the current stream of the device
    const int device = resolve_cuda_index(to_cuda ? dst_device : src_device);
    const void* host = to_cuda ? src : dst;
    const cudaStream_t stream = as_stream(current_stream_of(device));
    DeviceGuard guard(device);
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, stream));
    // Asynchronous only from/to pinned memory: pageable memory may be reused the moment this
    // returns. A pinned block of ours is then kept from reuse until the copy completes.
    if (non_blocking && is_pinned(host)) {
      if (State& s = state(); s.pinned) s.pinned->record_use(host, device, stream);
      return;
    }
    EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

 private:
  void available() const {
    if (device_count() == 0) unavailable();
  }

  void check_device(int device, const char* what) const {
    const int n = device_count();
    if (n == 0) unavailable();
    if (device < 0 || device >= n) {
      throw std::runtime_error(message(what, ": invalid CUDA device index ", device, ": this process sees ", n,
                                       " CUDA device", n == 1 ? "" : "s", " (cuda:0 to cuda:", n - 1, ")"));
    }
  }

  static void require_event(void* event, const char* what) {
    if (!event) throw ValueError(message(what, ": the event is null (already destroyed?)"));
  }

  const cudaDeviceProp& props(int device) const {
    check_device(device, "get_device_properties");
    State& s = state();
    const cudaDeviceProp* p = s.props[device].load(std::memory_order_acquire);
    if (p) return *p;
    auto fresh = std::make_unique<cudaDeviceProp>();
    EMBER_CUDA_CHECK(cudaGetDeviceProperties(fresh.get(), device));
    std::lock_guard<std::mutex> lock(s.mu);
    p = s.props[device].load(std::memory_order_relaxed);
    if (!p) {
      p = fresh.release();  // never deleted
      s.props[device].store(p, std::memory_order_release);
    }
    return *p;
  }

  PinnedHostAllocator& pinned() const {
    available();
    require_usable();
    State& s = state();
    std::call_once(s.pinned_once, [&s] { s.pinned = new PinnedHostAllocator; });  // never deleted
    return *s.pinned;
  }

  // The cross-device copy of PyTorch: on the source device's current stream, after the
  // destination's current stream has reached this point, and before its later work.
  void copy_device_to_device(void* dst, int dst_index, const void* src, int src_index, size_t nbytes,
                             bool non_blocking) const {
    const cudaStream_t copy_stream = as_stream(current_stream_of(src_index));
    if (dst_index == src_index) {
      DeviceGuard guard(src_index);
      EMBER_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, copy_stream));
      if (!non_blocking) EMBER_CUDA_CHECK(cudaStreamSynchronize(copy_stream));
      return;
    }
    const cudaStream_t dst_stream = as_stream(current_stream_of(dst_index));
    {
      ScopedEvent dst_ready(dst_index);
      {
        DeviceGuard guard(dst_index);
        EMBER_CUDA_CHECK(cudaEventRecord(dst_ready.get(), dst_stream));
      }
      DeviceGuard guard(src_index);
      EMBER_CUDA_CHECK(cudaStreamWaitEvent(copy_stream, dst_ready.get(), 0));
      EMBER_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_index, src, src_index, nbytes, copy_stream));
    }
    ScopedEvent src_ready(src_index);
    {
      DeviceGuard guard(src_index);
      EMBER_CUDA_CHECK(cudaEventRecord(src_ready.get(), copy_stream));
    }
    DeviceGuard guard(dst_index);
    EMBER_CUDA_CHECK(cudaStreamWaitEvent(dst_stream, src_ready.get(), 0));
    if (!non_blocking) EMBER_CUDA_CHECK(cudaStreamSynchronize(dst_stream));
  }
};

namespace {

// Installs the hooks when the module loads. Runs no CUDA call: CUDA initialises at first use.
struct Registration {
  Registration() { set_cuda_hooks(new CudaRuntimeHooks); }  // never deleted
};
const Registration g_registration;

}  // namespace

}  // namespace ember::cuda

namespace ember {

void set_cuda_pluggable_allocator(CudaPluggableAlloc alloc, CudaPluggableFree free, const char* name) {
  if (!alloc || !free) {
    throw ValueError("change_current_allocator: the pluggable allocator needs both an alloc and a free function");
  }
  cuda::State& s = cuda::state();
  std::lock_guard<std::mutex> lock(s.plug_mu);
  if (s.allocated.load(std::memory_order_acquire)) {
    throw std::runtime_error(
        "change_current_allocator: the CUDA allocator was already used; it can only be changed before the "
        "first CUDA allocation");
  }
  // A replaced Plug is kept (never deleted): nothing has used it, but keeping it is harmless.
  s.plug.store(new cuda::Plug{alloc, free, name ? name : "pluggable allocator"}, std::memory_order_release);
}

}  // namespace ember
