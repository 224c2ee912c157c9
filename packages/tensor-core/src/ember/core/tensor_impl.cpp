#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "ember/runtime/cuda_hooks.h"
#include "ember/core/generator.h"
#include "ember/core/tensor.h"

namespace ember {

std::string shape_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  const int64_t n = std::max<int64_t>(ndim, 1);  // 0-d tensors accept dim 0 and -1
  if (dim < -n || dim >= n) {
    throw IndexError(message(op, ": dimension out of range (expected to be in range of [", -n, ", ",
                         n - 1, "], but got ", dim, ")"));
  }
  return dim < 0 ? dim + n : dim;
}

std::string Device::str() const {
  std::string s = type == DeviceType::CPU ? "cpu" : "cuda";
  if (index >= 0) s += ":" + std::to_string(index);
  return s;
}

// The CPU allocator lives in host_allocator.cpp.

// ---- Storage ----
Storage::Storage(size_t nbytes, Allocator* allocator, Device device)
    : nbytes_(nbytes), device_(device), allocator_(allocator) {
  data_ = allocator_->allocate(nbytes);
}

Storage::Storage(void* data, size_t nbytes, Device device, std::function<void()> release)
    : data_(data), nbytes_(nbytes), device_(device), release_(std::move(release)) {}

Storage::~Storage() {
  if (allocator_) {
    allocator_->deallocate(data_, nbytes_);
  } else if (release_) {
    release_();
  }
}

void Storage::adopt_memory(std::shared_ptr<Storage> target) {
  if (target.get() == this) return;
  std::memcpy(target->data(), data_, nbytes_);
  if (allocator_) {
    allocator_->deallocate(data_, nbytes_);
  } else if (release_) {
    release_();
  }
  data_ = target->data();
  allocator_ = nullptr;
  release_ = [keep = std::move(target)]() mutable { keep.reset(); };
}

void Storage::take_memory(Storage& larger) {
  std::swap(data_, larger.data_);
  std::swap(nbytes_, larger.nbytes_);
  std::swap(allocator_, larger.allocator_);
  std::swap(release_, larger.release_);
}

// ---- TensorImpl ----
TensorImpl::TensorImpl(std::shared_ptr<Storage> storage, Shape sizes, Shape strides,
                       int64_t offset, ScalarType dtype)
    : storage_(std::move(storage)), sizes_(std::move(sizes)), strides_(std::move(strides)),
      offset_(offset), dtype_(dtype) {
  refresh();
}

void TensorImpl::set_geometry(Shape sizes, Shape strides, int64_t offset) {
  sizes_ = std::move(sizes);
  strides_ = std::move(strides);
  offset_ = offset;
  refresh();
}

void TensorImpl::refresh() {
  numel_ = shape_numel(sizes_);
  contiguous_ = true;
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (sizes_[d] == 1) continue;
    if (strides_[d] != expected) {
      contiguous_ = false;
      break;
    }
    expected *= sizes_[d];
  }
  if (numel_ == 0) contiguous_ = true;
}

int64_t TensorImpl::size(int64_t d) const { return sizes_[wrap_dim(d, dim(), "size")]; }
int64_t TensorImpl::stride(int64_t d) const { return strides_[wrap_dim(d, dim(), "stride")]; }

ScalarType Scalar::natural_dtype() const {
  switch (kind) {
    case Kind::Bool: return ScalarType::Bool;
    case Kind::Int: return ScalarType::Int64;
    case Kind::Complex: return to_complex(default_float_dtype());
    default: return default_float_dtype();
  }
}

// ---- construction ----
Shape contiguous_strides(const Shape& sizes) {
  Shape st(sizes.size());
  int64_t acc = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    st[d] = acc;
    // the strides of a shape without elements can still overflow: PyTorch's error
    if (d > 0 && __builtin_mul_overflow(acc, std::max<int64_t>(sizes[d], 1), &acc)) {
      throw std::runtime_error("Stride calculation overflowed");
    }
  }
  return st;
}

int64_t shape_numel(const Shape& sizes) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t s : sizes) {
    if (s == 0) return 0;
    overflow = __builtin_mul_overflow(n, s, &n) || overflow;
  }
  // PyTorch's error: an expanded or strided view may name more elements than int64 counts
  if (overflow) throw std::runtime_error("numel: integer multiplication overflow");
  return n;
}

// Validates sizes and returns the byte size, refusing shapes whose size overflows.
static size_t checked_nbytes(const Shape& sizes, ScalarType dtype) {
  uint64_t n = itemsize(dtype);
  for (int64_t s : sizes) {
    if (s < 0) {
      throw std::runtime_error(message("Trying to create tensor with negative dimension ", s, ": ",
                                       shape_str(sizes)));
    }
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(s), &n) || n > (uint64_t(1) << 62)) {
      throw std::runtime_error(message("cannot allocate a tensor of shape ", shape_str(sizes), " and dtype ",
                                       dtype_name(dtype), ": its size in bytes overflows"));
    }
  }
  return static_cast<size_t>(n);
}

namespace {
// Fresh memory on a device: the host allocator, or the CUDA device's allocator.
std::shared_ptr<Storage> new_storage(size_t nbytes, const Device& device) {
  if (device.type == DeviceType::CPU) return std::make_shared<Storage>(nbytes, cpu_allocator(), Device{});
  const int index = resolve_cuda_index(device);
  return std::make_shared<Storage>(nbytes, cuda_hooks().allocator(index), Device{DeviceType::CUDA, index});
}
}  // namespace

Tensor empty(const Shape& sizes, ScalarType dtype, Device device) {
  const size_t nbytes = checked_nbytes(sizes, dtype);
  auto storage = new_storage(nbytes, device);
  return std::make_shared<TensorImpl>(std::move(storage), sizes, contiguous_strides(sizes), 0, dtype);
}

Tensor empty_strided(const Shape& sizes, const Shape& strides, ScalarType dtype, Device device) {
  checked_nbytes(sizes, dtype);
  int64_t span = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) { span = 0; break; }
    span += (sizes[d] - 1) * strides[d];
  }
  auto storage = new_storage(static_cast<size_t>(span) * itemsize(dtype), device);
  return std::make_shared<TensorImpl>(std::move(storage), sizes, strides, 0, dtype);
}

Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t offset) {
  return make_view(base, std::move(sizes), std::move(strides), offset, base->dtype());
}

Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t offset, ScalarType dtype) {
  Tensor v = std::make_shared<TensorImpl>(base->storage(), std::move(sizes), std::move(strides), offset, dtype);
  v->view_base = base->view_base ? base->view_base : base;
  v->view_in_grad_mode = grad_mode_enabled_on_thread();
  return v;
}

Tensor scalar_tensor(const Scalar& s, ScalarType dtype) {
  Tensor t = empty({}, dtype);
  dispatch_any(dtype, "scalar_tensor", [&](auto tag) {
    using T = decltype(tag);
    *t->data<T>() = s.to<T>();
  });
  return t;
}

Tensor wrapped_scalar(const Scalar& s) {
  Tensor t;
  switch (s.kind) {
    case Scalar::Kind::Bool: t = scalar_tensor(s, ScalarType::Bool); break;
    case Scalar::Kind::Int: t = scalar_tensor(s, s.unsigned64 ? ScalarType::UInt64 : ScalarType::Int64); break;
    case Scalar::Kind::Complex: t = scalar_tensor(s, ScalarType::ComplexDouble); break;
    default: t = scalar_tensor(s, ScalarType::Float64); break;
  }
  t->wrapped_number = true;
  return t;
}

void check_cpu(const Tensor& t, const char* op) {
  if (t->device().type != DeviceType::CPU) {
    throw std::runtime_error(message(op, ": expected a cpu tensor, got one on ", t->device().str()));
  }
}

namespace {
std::atomic<bool> g_autograd_available{false};
void (*g_autograd_loader)() = nullptr;
}

void set_autograd_available(bool available) { g_autograd_available.store(available); }

void set_autograd_loader(void (*loader)()) { g_autograd_loader = loader; }

void set_requires_grad(const Tensor& t, bool requires_grad) {
  if (requires_grad && !g_autograd_available.load() && g_autograd_loader) g_autograd_loader();
  if (requires_grad && !g_autograd_available.load()) {
    throw std::runtime_error(
        "requires_grad=True needs an autograd provider, and none is installed: "
        "pip install ember-autograd and import ember_autograd (or import ember)");
  }
  if (requires_grad && !is_floating(t->dtype()) && !is_complex(t->dtype())) {
    throw std::runtime_error(message("only Tensors of floating point and complex dtype can require gradients, got ",
                                     dtype_name(t->dtype())));
  }
  t->requires_grad = requires_grad;
}

Generator& default_generator() {
  static Generator g;
  return g;
}

}  // namespace ember
