// The compiled side of ember_tensor.cuda: device management, streams, events, the caching
// allocator's statistics, and the fake-device allocator the policy tests drive. Works in every
// build: without CUDA the hooks report no device and the device calls raise.
#include "ember/runtime/cuda_hooks.h"
#include "ember/runtime/cuda_plug.h"
#include "ember/core/generator.h"
#include "ember/python/python_api.h"
#include "ops_decl.h"

namespace ember {

namespace {

constexpr const char* kStatNames[] = {"allocation",      "segment",        "active",
                                      "inactive_split",  "allocated_bytes", "reserved_bytes",
                                      "active_bytes",    "inactive_split_bytes", "requested_bytes"};
constexpr MemoryStat DevicePoolStats::*kStatMembers[] = {
    &DevicePoolStats::allocation,      &DevicePoolStats::segment,        &DevicePoolStats::active,
    &DevicePoolStats::inactive_split,  &DevicePoolStats::allocated_bytes, &DevicePoolStats::reserved_bytes,
    &DevicePoolStats::active_bytes,    &DevicePoolStats::inactive_split_bytes, &DevicePoolStats::requested_bytes};
constexpr const char* kPoolNames[] = {"all", "small_pool", "large_pool"};

// torch.cuda.memory_stats' flat dict: "<stat>.<pool>.<current|peak|allocated|freed>" and counters.
py::dict stats_dict(const DeviceMemoryStats& s) {
  py::dict d;
  for (size_t k = 0; k < std::size(kStatNames); ++k) {
    for (int p = 0; p < 3; ++p) {
      const MemoryStat& m = s.pools[p].*kStatMembers[k];
      const std::string prefix = std::string(kStatNames[k]) + "." + kPoolNames[p] + ".";
      d[py::str(prefix + "current")] = m.current;
      d[py::str(prefix + "peak")] = m.peak;
      d[py::str(prefix + "allocated")] = m.allocated;
      d[py::str(prefix + "freed")] = m.freed;
    }
  }
  d["num_alloc_retries"] = s.num_alloc_retries;
  d["num_ooms"] = s.num_ooms;
  d["num_device_alloc"] = s.num_device_alloc;
  d["num_device_free"] = s.num_device_free;
  d["num_sync_all_streams"] = s.num_sync_all_streams;
  return d;
}

py::list snapshot_list(const std::vector<SegmentInfo>& segments) {
  py::list out;
  for (const SegmentInfo& s : segments) {
    py::dict d;
    d["device"] = s.device;
    d["address"] = s.address;
    d["total_size"] = s.total_size;
    d["allocated_size"] = s.allocated_size;
    d["active_size"] = s.active_size;
    d["requested_size"] = s.requested_size;
    d["stream"] = s.stream;
    d["segment_type"] = s.small ? "small" : "large";
    py::list blocks;
    for (const BlockInfo& b : s.blocks) {
      py::dict bd;
      bd["address"] = b.address;
      bd["size"] = b.size;
      bd["requested_size"] = b.requested_size;
      bd["state"] = b.state;
      blocks.append(bd);
    }
    d["blocks"] = blocks;
    out.append(d);
  }
  return out;
}

// The caching allocator of device i; a clear error while a pluggable allocator replaces it.
DeviceCachingAllocator& caching(int i) {
  DeviceCachingAllocator* a = cuda_hooks().caching_allocator(i);
  if (!a) throw std::runtime_error("the CUDA caching allocator is not in use: a pluggable allocator replaced it");
  return *a;
}

// The fake device and its allocator, owned together (the tests' handle).
struct FakeCudaAllocator {
  FakeDevice device;
  DeviceCachingAllocator alloc;
  explicit FakeCudaAllocator(size_t capacity) : device(capacity), alloc(device, 0) {}
};

void* as_ptr(uint64_t address) { return reinterpret_cast<void*>(static_cast<uintptr_t>(address)); }
uint64_t as_address(void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

}  // namespace

void bind_cuda(py::module_& m) {
  py::register_exception<DeviceOutOfMemory>(m, "OutOfMemoryError", PyExc_RuntimeError);
  const CudaHooks* h = &cuda_hooks();  // installed at load, before this runs
  m.def("_cuda_is_built", [h] { return h->is_built(); });
  m.def("_cuda_device_count", [h] { return h->device_count(); });
  m.def("_cuda_unavailable_reason", [h] { return h->unavailable_reason(); });
  m.def("_cuda_current_device", [h] { return h->current_device(); });
  m.def("_cuda_set_device", [h](int i) { h->set_device(i); });
  m.def("_cuda_device_name", [h](int i) { return h->device_name(i); });
  m.def("_cuda_device_properties", [h](int i) {
    int major = 0, minor = 0, sms = 0;
    size_t total = 0;
    h->device_properties(i, &major, &minor, &total, &sms);
    return py::make_tuple(h->device_name(i), major, minor, total, sms);
  });
  m.def("_cuda_synchronize", [h](int i) {
    py::gil_scoped_release nogil;
    h->synchronize(i);
  });

  // memory
  m.def("_cuda_memory_stats", [](int i) { return stats_dict(caching(i).stats()); });
  m.def("_cuda_memory_snapshot", [h] {
    py::list out;
    for (int i = 0; i < h->device_count(); ++i) {
      if (DeviceCachingAllocator* a = h->caching_allocator(i)) out += snapshot_list(a->snapshot());
    }
    return out;
  });
  m.def("_cuda_empty_cache", [h] {
    py::gil_scoped_release nogil;
    for (int i = 0; i < h->device_count(); ++i) {
      if (DeviceCachingAllocator* a = h->caching_allocator(i)) a->empty_cache();
    }
  });
  m.def("_cuda_reset_peak_memory_stats", [](int i) { caching(i).reset_peak_stats(); });
  m.def("_cuda_reset_accumulated_memory_stats", [](int i) { caching(i).reset_accumulated_stats(); });
  m.def("_cuda_set_memory_fraction", [](double f, int i) { caching(i).set_memory_fraction(f); });
  m.def("_cuda_mem_get_info", [h](int i) {
    size_t free_bytes = 0, total = 0;
    h->mem_get_info(i, &free_bytes, &total);
    return py::make_tuple(free_bytes, total);
  });
  m.def("_cuda_set_pluggable_allocator", [](uint64_t alloc_fn, uint64_t free_fn, const std::string& name) {
    static std::string kept;  // the allocator keeps the name for the process's lifetime
    kept = name;
    set_cuda_pluggable_allocator(reinterpret_cast<CudaPluggableAlloc>(static_cast<uintptr_t>(alloc_fn)),
                                 reinterpret_cast<CudaPluggableFree>(static_cast<uintptr_t>(free_fn)),
                                 kept.c_str());
  });

  // streams and events: handles travel as integers
  m.def("_cuda_current_stream", [h](int i) { return h->current_stream(i); });
  m.def("_cuda_set_stream", [h](int i, StreamId s) { h->set_current_stream(i, s); });
  m.def("_cuda_create_stream", [h](int i, int priority) { return h->create_stream(i, priority); });
  m.def("_cuda_destroy_stream", [h](int i, StreamId s) { h->destroy_stream(i, s); });
  m.def("_cuda_query_stream", [h](int i, StreamId s) { return h->query_stream(i, s); });
  m.def("_cuda_synchronize_stream", [h](int i, StreamId s) {
    py::gil_scoped_release nogil;
    h->synchronize_stream(i, s);
  });
  m.def("_cuda_stream_wait_event", [h](int i, StreamId s, uint64_t e) { h->stream_wait_event(i, s, as_ptr(e)); });
  m.def("_cuda_create_event", [h](int i, bool timing, bool blocking, bool interprocess) {
    return as_address(h->create_event(i, timing, blocking, interprocess));
  });
  m.def("_cuda_destroy_event", [h](int i, uint64_t e) { h->destroy_event(i, as_ptr(e)); });
  m.def("_cuda_record_event", [h](int i, uint64_t e, StreamId s) { h->record_event(i, as_ptr(e), s); });
  m.def("_cuda_query_event", [h](uint64_t e) { return h->query_event(as_ptr(e)); });
  m.def("_cuda_synchronize_event", [h](uint64_t e) {
    py::gil_scoped_release nogil;
    h->synchronize_event(as_ptr(e));
  });
  m.def("_cuda_elapsed_time", [h](uint64_t a, uint64_t b) { return h->elapsed_ms(as_ptr(a), as_ptr(b)); });

  // CUDA IPC (ember.multiprocessing): handles travel as bytes, the event as an integer
  m.def("_cuda_ipc_export", [h](const Tensor& t) {
    if (t->device().type != DeviceType::CUDA) {
      throw std::runtime_error(message("_cuda_ipc_export: expected a cuda tensor, got one on ", t->device().str()));
    }
    CudaIpcExport e;
    {
      py::gil_scoped_release nogil;
      e = h->ipc_export(*t->storage());
    }
    return py::make_tuple(e.device, py::bytes(e.mem_handle), e.segment_size, e.offset, e.nbytes,
                          as_address(e.event), py::bytes(e.event_handle));
  }, py::arg("tensor"),
     "(device, mem_handle, segment_size, offset, nbytes, event, event_handle) of the tensor's storage: the IPC "
     "handle of the segment holding it, its byte offset there and its size, and an interprocess event recorded "
     "on the current stream that the caller owns (_cuda_destroy_event).");
  m.def("_cuda_ipc_import", [h](int device, py::bytes mem_handle, size_t segment_size, size_t offset, size_t nbytes,
                               py::object event_handle) {
    const std::string mh = mem_handle;
    const std::string eh = event_handle.is_none() ? std::string() : event_handle.cast<std::string>();
    std::shared_ptr<Storage> storage;
    {
      py::gil_scoped_release nogil;
      storage = h->ipc_import(device, mh, segment_size, offset, nbytes, eh);
    }
    return std::make_shared<TensorImpl>(std::move(storage), Shape{static_cast<int64_t>(nbytes)}, Shape{1}, 0,
                                        ScalarType::UInt8);
  }, py::arg("device"), py::arg("mem_handle"), py::arg("segment_size"), py::arg("offset"), py::arg("nbytes"),
     py::arg("event_handle") = py::none(),
     "A uint8 cuda tensor over `nbytes` at `offset` of a segment another process exported (_cuda_ipc_export); "
     "the current stream first waits on the exporter's event.");

  m.def("_cuda_kernel_coverage", [](bool registered) { return cuda_kernel_coverage(registered); },
        py::arg("registered") = true,
        "The C++ names of the ops that have a CUDA kernel (registered=False: of those that do not).");
  m.def("_cuda_allow_tf32", [] { return allow_tf32(); });
  m.def("_cuda_set_allow_tf32", [](bool allow) { set_allow_tf32(allow); });

  // ember.backends.cudnn. The first question loads cuDNN (a large library): without the GIL.
  m.def("_cudnn_version", [] {
    py::gil_scoped_release nogil;
    return cudnn_hooks().version();
  }, "cuDNN's version (90300 for 9.3.0) when it can run here, else 0.");
  m.def("_cudnn_unavailable_reason", [] {
    py::gil_scoped_release nogil;
    return cudnn_hooks().unavailable_reason();
  });
  m.def("_cudnn_flags", [] {
    const CudnnSettings& s = cudnn_settings();
    return py::make_tuple(s.enabled.load(), s.benchmark.load(), s.deterministic.load(), s.allow_tf32.load());
  }, "(enabled, benchmark, deterministic, allow_tf32)");
  m.def("_cudnn_set_flags", [](bool enabled, bool benchmark, bool deterministic, bool allow_tf32) {
    CudnnSettings& s = cudnn_settings();
    s.enabled.store(enabled);
    s.benchmark.store(benchmark);
    s.deterministic.store(deterministic);
    s.allow_tf32.store(allow_tf32);
  }, py::arg("enabled"), py::arg("benchmark"), py::arg("deterministic"), py::arg("allow_tf32"));

  // random numbers
  m.def("_cuda_manual_seed", [](uint64_t seed, int i) { cuda_generator(i).manual_seed(seed); });
  m.def("_cuda_initial_seed", [](int i) { return cuda_generator(i).initial_seed(); });

  py::class_<FakeCudaAllocator>(m, "_FakeCudaAllocator",
                                "The CUDA caching allocator's policy over a fake device of `capacity` bytes "
                                "(for tests: addresses are numbers, streams are numbers, events complete when "
                                "complete(stream) says so).")
      .def(py::init<size_t>(), py::arg("capacity"))
      .def("allocate", [](FakeCudaAllocator& f, size_t n, StreamId s) { return as_address(f.alloc.allocate(n, s)); },
           py::arg("nbytes"), py::arg("stream") = 0)
      .def("free", [](FakeCudaAllocator& f, uint64_t p) {
        try {
          f.alloc.free(as_ptr(p));
        } catch (const std::invalid_argument& e) {
          throw ValueError(e.what());
        }
      })
      .def("record_stream", [](FakeCudaAllocator& f, uint64_t p, StreamId s) {
        try {
          f.alloc.record_stream(as_ptr(p), s);
        } catch (const std::invalid_argument& e) {
          throw ValueError(e.what());
        }
      })
      .def("segment_of", [](FakeCudaAllocator& f, uint64_t p) {
        try {
          auto [base, size] = f.alloc.segment_of(as_ptr(p));
          return py::make_tuple(as_address(base), size);
        } catch (const std::invalid_argument& e) {
          throw ValueError(e.what());
        }
      }, "(base address, size) of the segment holding the live block that contains the address.")
      .def("complete", [](FakeCudaAllocator& f, StreamId s) { f.device.complete(s); })
      .def("empty_cache", [](FakeCudaAllocator& f) { f.alloc.empty_cache(); })
      .def("set_memory_fraction", [](FakeCudaAllocator& f, double x) {
        try {
          f.alloc.set_memory_fraction(x);
        } catch (const std::invalid_argument& e) {
          throw ValueError(e.what());
        }
      })
      .def("memory_stats", [](FakeCudaAllocator& f) { return stats_dict(f.alloc.stats()); })
      .def("memory_snapshot", [](FakeCudaAllocator& f) { return snapshot_list(f.alloc.snapshot()); })
      .def("reset_peak_memory_stats", [](FakeCudaAllocator& f) { f.alloc.reset_peak_stats(); })
      .def("reset_accumulated_memory_stats", [](FakeCudaAllocator& f) { f.alloc.reset_accumulated_stats(); })
      .def("raw_allocs", [](FakeCudaAllocator& f) { return f.device.raw_allocs(); })
      .def("device_used", [](FakeCudaAllocator& f) { return f.device.used(); })
      .def("live_events", [](FakeCudaAllocator& f) { return f.device.live_events(); });
}

}  // namespace ember
