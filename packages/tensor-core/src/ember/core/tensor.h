// The data model: Device, Allocator, Storage, TensorImpl and Scalar.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dtype.h"
#include "errors.h"

// The core holds Python objects (a tensor's Python twin, grad, grad_fn) only as opaque
// pointers: nothing here includes Python. PyRef's reference counting is defined in
// python/py_ref.cpp, the only place that touches them.
struct _object;
using PyObject = _object;

namespace ember {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = -1;  // -1: the current device of that type
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;  // "cpu", "cuda:0"
};

// Host or device memory provider. Implementations must be thread-safe. deallocate() gets
// the same nbytes that allocate() was called with.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* ptr, size_t nbytes) = 0;
};

// One statistic as torch.cuda.memory_stats reports it: "<name>.all.current/peak/allocated/freed".
struct MemoryStat {
  int64_t current = 0;
  int64_t peak = 0;       // high-water mark of current since the last reset_peak()
  int64_t allocated = 0;  // cumulative increase
  int64_t freed = 0;      // cumulative decrease
  void increase(int64_t n) {
    current += n;
    allocated += n;
    if (current > peak) peak = current;
  }
  void decrease(int64_t n) {
    current -= n;
    freed += n;
  }
};

// A caching allocator's statistics (host_allocator.h has the meaning of each).
struct MemoryStats {
  MemoryStat allocated_bytes;  // block bytes handed out and not yet given back
  MemoryStat reserved_bytes;   // block bytes held from the OS: allocated + cached
  MemoryStat requested_bytes;  // like allocated_bytes, but the sizes asked for (unrounded)
  MemoryStat allocation;       // number of blocks handed out
  MemoryStat segment;          // number of blocks held from the OS
  int64_t num_cache_hits = 0;     // allocations served from the cache
  int64_t num_cache_misses = 0;   // allocations that went to the OS
  int64_t num_alloc_retries = 0;  // OS refusals answered by emptying the cache and retrying
  int64_t num_ooms = 0;           // allocations that failed even after the retry
  int64_t cache_limit = 0;        // the most bytes kept cached (0 when caching is off)
};

// The host allocator every CPU storage takes its memory from: the caching allocator below,
// or a plugin's, installed before the first call (plug_points.cpp).
Allocator* cpu_allocator();
// The CPU (host) caching allocator, created at first use (host_allocator.cpp).
Allocator* caching_cpu_allocator();
MemoryStats cpu_memory_stats();
void reset_peak_cpu_memory();         // peaks := current values
void reset_accumulated_cpu_memory();  // cumulative counters := 0
void cpu_empty_cache();               // returns every cached (unused) block to the OS
void hold_cpu_allocator_lock(double seconds);  // tests only: fork while the lock is held

// A Python object reference that may be dropped without holding the GIL when empty.
class PyRef {
 public:
  PyRef() = default;
  ~PyRef() {
    if (obj_) reset();
  }
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  PyObject* get() const { return obj_; }
  void set(PyObject* o);  // caller holds the GIL
  void reset();           // takes the GIL when there is an object to drop

 private:
  PyObject* obj_ = nullptr;
};

// A reference-counted block of memory. Views share one Storage, and with it the version
// counter that in-place writes bump (autograd uses it to detect modified saved tensors).
class Storage {
 public:
  // Memory from `allocator`.
  Storage(size_t nbytes, Allocator* allocator, Device device);
  // Memory owned elsewhere (NumPy, DLPack): `release` runs when the last reference goes.
  Storage(void* data, size_t nbytes, Device device, std::function<void()> release);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  int64_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }
  bool is_external() const { return allocator_ == nullptr; }
  // Takes `larger`'s memory, into which the caller has copied this storage's bytes; `larger`
  // gets the old memory and frees it when it goes. Every view of this storage follows. How a
  // resizable (not external) storage grows, as PyTorch's resize_ grows one.
  void take_memory(Storage& larger);

  // Copies the bytes into `target`'s memory (a storage of the same size on the CPU) and uses
  // that memory from now on, keeping `target` alive: every view of this storage follows. How
  // a storage moves into memory shared between processes.
  void adopt_memory(std::shared_ptr<Storage> target);
  // What the memory sharer recorded about this storage's shared segment (null: not shared).
  PyRef& shared_record() { return shared_record_; }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  Allocator* allocator_ = nullptr;
  std::function<void()> release_;
  std::atomic<int64_t> version_{0};
  PyRef shared_record_;
};

using Shape = std::vector<int64_t>;

// A strided view over a Storage. Sizes and strides are in elements, offset in elements.
class TensorImpl {
 public:
  TensorImpl(std::shared_ptr<Storage> storage, Shape sizes, Shape strides, int64_t offset,
             ScalarType dtype);

  const std::shared_ptr<Storage>& storage() const { return storage_; }
  const Shape& sizes() const { return sizes_; }
  const Shape& strides() const { return strides_; }
  int64_t size(int64_t dim) const;  // dim may be negative
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t offset() const { return offset_; }
  ScalarType dtype() const { return dtype_; }
  size_t itemsize() const { return ember::itemsize(dtype_); }
  Device device() const { return storage_->device(); }
  bool is_contiguous() const { return contiguous_; }
  char* data_ptr() const {
    return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(itemsize());
  }
  template <typename T> T* data() const { return reinterpret_cast<T*>(data_ptr()); }

  // In-place metadata change (resize of an empty out=, as_strided_).
  void set_geometry(Shape sizes, Shape strides, int64_t offset);
  void set_storage(std::shared_ptr<Storage> storage, Shape sizes, Shape strides, int64_t offset) {
    storage_ = std::move(storage);
    view_base.reset();
    set_geometry(std::move(sizes), std::move(strides), offset);
  }
  void set_storage(std::shared_ptr<Storage> storage, Shape sizes, Shape strides, int64_t offset, ScalarType dtype) {
    dtype_ = dtype;
    set_storage(std::move(storage), std::move(sizes), std::move(strides), offset);
  }

  // A Python number converted to a 0-d tensor: weaker in type promotion.
  bool wrapped_number = false;

  // Autograd slots. The core only stores them; ember_autograd gives them meaning.
  bool requires_grad = false;
  // The provider sees ops on this tensor even when it does not require grad (dual tensors of
  // forward-mode AD carry a tangent without requiring grad).
  bool autograd_watched = false;
  PyRef grad;
  PyRef grad_fn;
  PyRef autograd_meta;  // free for the autograd provider (hooks, retain_grad, ...)
  // The tensor this one is a view of (the root: never itself a view); null when not a view.
  // Keeps the base's TensorImpl (and its autograd slots) alive, as PyTorch's _base does.
  std::shared_ptr<TensorImpl> view_base;
  // Made while this thread's grad mode was on: such a view requires grad whenever its base
  // does (also after the base gains a history by an in-place write). Views made under
  // no_grad do not.
  bool view_in_grad_mode = true;
  bool view_requires_grad() const { return view_base && view_in_grad_mode && view_base->requires_grad; }

 private:
  void refresh();
  std::shared_ptr<Storage> storage_;
  Shape sizes_, strides_;
  int64_t offset_ = 0;
  int64_t numel_ = 1;
  ScalarType dtype_;
  bool contiguous_ = true;
};

using Tensor = std::shared_ptr<TensorImpl>;

// A Python number as passed to ops (alpha, fill values, clamp bounds). A complex number keeps
// its real part in d (and i) and its imaginary part in im.
struct Scalar {
  enum class Kind : int8_t { Bool, Int, Float, Complex } kind = Kind::Int;
  int64_t i = 0;
  double d = 0.0;
  double im = 0.0;
  bool unsigned64 = false;  // see from_uint64
  Scalar() = default;
  static Scalar from_bool(bool b) { Scalar s; s.kind = Kind::Bool; s.i = b; s.d = b; return s; }
  static Scalar from_int(int64_t v) { Scalar s; s.kind = Kind::Int; s.i = v; s.d = static_cast<double>(v); return s; }
  // A Python int from 2**63 to 2**64 - 1: PyTorch's unsigned 64-bit scalar. i holds its bits
  // (what an integer tensor's arithmetic wraps it to), d its value.
  static Scalar from_uint64(uint64_t v) {
    Scalar s = from_int(static_cast<int64_t>(v));
    s.d = static_cast<double>(v);
    s.unsigned64 = true;
    return s;
  }
  // double -> int64 by truncation, defined for every double: NaN and values beyond int64 give
  // int64's minimum (x86's result; C++ leaves the conversion undefined, UBSan reports it)
  static int64_t trunc_to_int64(double v) {
    return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? static_cast<int64_t>(v) : INT64_MIN;
  }
  static Scalar from_double(double v) { Scalar s; s.kind = Kind::Float; s.d = v; s.i = trunc_to_int64(v); return s; }
  static Scalar from_complex(double re, double imag) {
    Scalar s = from_double(re);
    s.kind = Kind::Complex;
    s.im = imag;
    return s;
  }
  // Float and Complex both count as floating values (a NaN check, a range check on d).
  bool is_float() const { return kind == Kind::Float || kind == Kind::Complex; }
  bool is_complex() const { return kind == Kind::Complex; }
  bool is_bool() const { return kind == Kind::Bool; }
  double to_double() const { return is_float() || unsigned64 ? d : static_cast<double>(i); }
  int64_t to_int() const { return is_float() ? trunc_to_int64(d) : i; }
  // The dtype a tensor made from this number would have (float -> default float dtype).
  ScalarType natural_dtype() const;
  template <typename T> T to() const {
    if constexpr (is_complex_v<T>) {
      using R = real_t<T>;
      return T(static_cast<R>(to_double()), static_cast<R>(im));
    } else {
      if (is_complex()) return convert<T>(complex128_t(d, im));
      if (kind == Kind::Float) return convert<T>(d);
      if (unsigned64) return convert<T>(static_cast<uint64_t>(i));
      return convert<T>(i);
    }
  }
};

// ---- construction helpers (tensor_impl.cpp) ----
Shape contiguous_strides(const Shape& sizes);
int64_t shape_numel(const Shape& sizes);
Tensor empty(const Shape& sizes, ScalarType dtype, Device device = Device{});
Tensor empty_strided(const Shape& sizes, const Shape& strides, ScalarType dtype, Device device = Device{});
Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t offset);
// A view that reads the same bytes as another dtype (real / imag / view_as_real); the
// geometry is in elements of `dtype`.
Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t offset, ScalarType dtype);
Tensor scalar_tensor(const Scalar& s, ScalarType dtype);
Tensor wrapped_scalar(const Scalar& s);  // 0-d tensor marked as a wrapped number
void check_cpu(const Tensor& t, const char* op);

// requires_grad needs an autograd provider (ember-autograd); without one it is an error that
// says what to install. The binding layer sets the flag when a provider registers its hook.
void set_autograd_available(bool available);
void set_requires_grad(const Tensor& t, bool requires_grad);
// Called (GIL held) when requires_grad=True is asked for and no provider is installed yet,
// so a composing package can import its provider lazily.
void set_autograd_loader(void (*loader)());
// Whether the autograd provider records on this thread (its grad mode; on when none is installed).
bool grad_mode_enabled_on_thread();

}  // namespace ember
