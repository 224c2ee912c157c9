// Tensors from Python data, NumPy and DLPack, and back (zero-copy where the layout allows).
#include <pybind11/numpy.h>

#include "ember/python/python_api.h"
#include "ember/runtime/cuda_hooks.h"
#include "ember/ops/index/indexing.h"  // scalar_of
#include "ember/ops/ops_util.h"

namespace ember {

// ---------------------------------------------------------------- DLPack (ABI of spec v1.x)
namespace {

struct DLDevice { int32_t device_type; int32_t device_id; };
struct DLDataType { uint8_t code; uint8_t bits; uint16_t lanes; };
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
struct DLPackVersion { uint32_t major; uint32_t minor; };
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned*);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr int32_t kDLCPU = 1, kDLCUDA = 2;
constexpr uint8_t kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLComplex = 5, kDLBool = 6;
constexpr uint64_t kDLFlagReadOnly = 1, kDLFlagIsCopied = 2;

DLDataType to_dl(ScalarType t) {
  uint8_t bits = static_cast<uint8_t>(itemsize(t) * 8);
  switch (t) {
    case ScalarType::Bool: return {kDLBool, 8, 1};
    case ScalarType::UInt8: case ScalarType::UInt16: case ScalarType::UInt32: case ScalarType::UInt64:
      return {kDLUInt, bits, 1};
    case ScalarType::ComplexFloat: case ScalarType::ComplexDouble: return {kDLComplex, bits, 1};
    case ScalarType::Float16: case ScalarType::Float32: case ScalarType::Float64: return {kDLFloat, bits, 1};
    case ScalarType::BFloat16: return {kDLBfloat, 16, 1};
    default: return {kDLInt, bits, 1};
  }
}

ScalarType from_dl(DLDataType d) {
  if (d.lanes != 1) throw std::runtime_error("from_dlpack: vector dtypes (lanes != 1) are not supported");
  switch (d.code) {
    case kDLBool: if (d.bits == 8) return ScalarType::Bool; break;
    case kDLUInt:
      if (d.bits == 8) return ScalarType::UInt8;
      if (d.bits == 16) return ScalarType::UInt16;
      if (d.bits == 32) return ScalarType::UInt32;
      if (d.bits == 64) return ScalarType::UInt64;
      break;
    case kDLComplex:
      if (d.bits == 64) return ScalarType::ComplexFloat;
      if (d.bits == 128) return ScalarType::ComplexDouble;
      break;
    case kDLInt:
      if (d.bits == 8) return ScalarType::Int8;
      if (d.bits == 16) return ScalarType::Int16;
      if (d.bits == 32) return ScalarType::Int32;
      if (d.bits == 64) return ScalarType::Int64;
      break;
    case kDLFloat:
      if (d.bits == 16) return ScalarType::Float16;
      if (d.bits == 32) return ScalarType::Float32;
      if (d.bits == 64) return ScalarType::Float64;
      break;
    case kDLBfloat: if (d.bits == 16) return ScalarType::BFloat16; break;
  }
  throw std::runtime_error(message("from_dlpack: unsupported DLPack dtype (code ", int(d.code), ", bits ",
                                   int(d.bits), ")"));
}

// What a capsule owns: the tensor (keeps storage alive) and the shape/stride arrays.
struct DLContext {
  Tensor tensor;
  Shape shape, strides;
};

void fill_dl(DLTensor& dl, DLContext* ctx) {
  const Tensor& t = ctx->tensor;
  dl.data = t->storage()->data();
  dl.device = t->device().type == DeviceType::CUDA ? DLDevice{kDLCUDA, t->device().index} : DLDevice{kDLCPU, 0};
  dl.ndim = static_cast<int32_t>(t->dim());
  dl.dtype = to_dl(t->dtype());
  ctx->shape = t->sizes();
  ctx->strides = t->strides();
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = static_cast<uint64_t>(t->offset()) * t->itemsize();
}

void delete_legacy(DLManagedTensor* m) {
  delete static_cast<DLContext*>(m->manager_ctx);
  delete m;
}
void delete_versioned(DLManagedTensorVersioned* m) {
  delete static_cast<DLContext*>(m->manager_ctx);
  delete m;
}

void capsule_destructor_legacy(PyObject* cap) {
  if (PyCapsule_IsValid(cap, "dltensor")) {  // never consumed
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    if (m && m->deleter) m->deleter(m);
  } else {
    PyErr_Clear();
  }
}
void capsule_destructor_versioned(PyObject* cap) {
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, "dltensor_versioned"));
    if (m && m->deleter) m->deleter(m);
  } else {
    PyErr_Clear();
  }
}

}  // namespace

// The DLPack stream protocol for CUDA: the consumer names the stream it will use (1: the
// legacy default stream, 2: the per-thread default stream, else a cudaStream_t; None means
// 1; -1: no ordering wanted). Work queued on this device's current stream is made to come
// first on that stream through an event, without blocking the host.
static void order_for_consumer(int device, py::object stream) {
  int64_t s = stream.is_none() ? 1 : stream.cast<int64_t>();
  if (s == -1) return;
  if (s == 0) throw ValueError("__dlpack__: stream 0 is ambiguous for CUDA; pass 1 for the legacy default stream");
  const CudaHooks& h = cuda_hooks();
  const StreamId consumer = s == 1 ? 0 : static_cast<StreamId>(s);
  const StreamId producer = h.current_stream(device);
  if (consumer == producer) return;
  void* ev = h.create_event(device, false, false, false);
  h.record_event(device, ev, producer);
  h.stream_wait_event(device, consumer, ev);
  h.destroy_event(device, ev);  // released once the wait is done
}

py::object to_dlpack(const Tensor& self, py::object stream, py::object max_version, py::object dl_device,
                     py::object copy) {
  const bool on_cuda = self->device().type == DeviceType::CUDA;
  if (!stream.is_none() && !on_cuda) {
    throw ValueError("__dlpack__: stream must be None for a cpu tensor");
  }
  if (!dl_device.is_none()) {
    py::tuple d = dl_device;
    const bool same = on_cuda ? d[0].cast<int>() == kDLCUDA && d[1].cast<int>() == self->device().index
                              : d[0].cast<int>() == kDLCPU;
    if (!same) {
      PyErr_SetString(PyExc_BufferError, message("__dlpack__: a ", self->device().str(),
                                                 " tensor can only be exported to its own device").c_str());
      throw py::error_already_set();
    }
  }
  if (on_cuda) order_for_consumer(self->device().index, stream);
  if (self->requires_grad || self->view_requires_grad()) {
    throw std::runtime_error("__dlpack__: can't export a tensor that requires grad; use tensor.detach()");
  }
  const bool do_copy = !copy.is_none() && copy.cast<bool>();
  auto* ctx = new DLContext{do_copy ? ops::clone(self) : self, {}, {}};
  bool versioned = false;
  if (!max_version.is_none()) {
    py::tuple mv = max_version;
    versioned = mv.size() >= 1 && mv[0].cast<int>() >= 1;
  }
  if (versioned) {
    auto* m = new DLManagedTensorVersioned{};
    m->version = {1, 0};
    m->manager_ctx = ctx;
    m->deleter = delete_versioned;
    m->flags = do_copy ? kDLFlagIsCopied : 0;
    fill_dl(m->dl_tensor, ctx);
    return py::reinterpret_steal<py::object>(PyCapsule_New(m, "dltensor_versioned", capsule_destructor_versioned));
  }
  auto* m = new DLManagedTensor{};
  m->manager_ctx = ctx;
  m->deleter = delete_legacy;
  fill_dl(m->dl_tensor, ctx);
  return py::reinterpret_steal<py::object>(PyCapsule_New(m, "dltensor", capsule_destructor_legacy));
}

static Tensor tensor_from_dltensor(const DLTensor& dl, std::function<void()> release) {
  Device device;
  if (dl.device.device_type == kDLCUDA) {
    device = Device{DeviceType::CUDA, dl.device.device_id};
  } else if (dl.device.device_type != kDLCPU) {
    release();
    throw std::runtime_error(message("from_dlpack: only cpu and cuda tensors can be imported (DLPack device type ",
                                     dl.device.device_type, ")"));
  }
  ScalarType dt;
  try {
    dt = from_dl(dl.dtype);
  } catch (...) {
    release();
    throw;
  }
  Shape sizes(dl.shape, dl.shape + dl.ndim);
  Shape strides = dl.strides ? Shape(dl.strides, dl.strides + dl.ndim) : contiguous_strides(sizes);
  char* base = static_cast<char*>(dl.data) + dl.byte_offset;
  // the storage starts at the lowest address the view touches
  int64_t min_off = 0, max_off = 0;
  for (int32_t d = 0; d < dl.ndim; ++d) {
    if (sizes[d] == 0) { min_off = max_off = 0; break; }
    int64_t span = (sizes[d] - 1) * strides[d];
    if (span < 0) min_off += span; else max_off += span;
  }
  const int64_t n = shape_numel(sizes);
  size_t nbytes = n == 0 ? 0 : static_cast<size_t>(max_off - min_off + 1) * itemsize(dt);
  auto storage = std::make_shared<Storage>(base + min_off * static_cast<int64_t>(itemsize(dt)), nbytes, device,
                                           std::move(release));
  return std::make_shared<TensorImpl>(std::move(storage), sizes, strides, -min_off, dt);
}

Tensor from_dlpack(py::object obj) {
  py::object cap;
  py::object cuda_stream = py::none();  // set for a CUDA producer
  if (py::hasattr(obj, "__dlpack__")) {
    if (py::hasattr(obj, "__dlpack_device__")) {
      py::tuple dev = obj.attr("__dlpack_device__")();
      const int type = dev[0].cast<int>();
      if (type == kDLCUDA) {
        // the producer orders its work before ours: we name our current stream (1: legacy default)
        const StreamId ours = cuda_hooks().current_stream(resolve_cuda_index(Device{DeviceType::CUDA, dev[1].cast<int>()}));
        cuda_stream = py::int_(ours == 0 ? int64_t(1) : static_cast<int64_t>(ours));
      } else if (type != kDLCPU) {
        throw std::runtime_error(message("from_dlpack: only cpu and cuda tensors can be imported (DLPack device type ",
                                         type, ")"));
      }
    }
    try {
      cap = cuda_stream.is_none() ? obj.attr("__dlpack__")(py::arg("max_version") = py::make_tuple(1, 0))
                                  : obj.attr("__dlpack__")(py::arg("stream") = cuda_stream,
                                                           py::arg("max_version") = py::make_tuple(1, 0));
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_TypeError)) throw;
      cap = obj.attr("__dlpack__")();
    }
  } else if (PyCapsule_CheckExact(obj.ptr())) {
    cap = obj;
  } else {
    throw TypeError(message("from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got ",
                            Py_TYPE(obj.ptr())->tp_name));
  }
  PyObject* c = cap.ptr();
  if (PyCapsule_IsValid(c, "dltensor_versioned")) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, "dltensor_versioned"));
    if (m->version.major > 1) {
      PyErr_SetString(PyExc_BufferError, "from_dlpack: the producer's DLPack major version is newer than 1");
      throw py::error_already_set();
    }
    PyCapsule_SetName(c, "used_dltensor_versioned");
    const bool read_only = m->flags & kDLFlagReadOnly;
    Tensor t = tensor_from_dltensor(m->dl_tensor, [m] {
      PyGILState_STATE st = PyGILState_Ensure();
      if (m->deleter) m->deleter(m);
      PyGILState_Release(st);
    });
    // Ember tensors are always writable: read-only memory (a read-only NumPy array) is
    // copied rather than shared, so no write can reach it
    return read_only ? ops::clone(t) : t;
  }
  if (PyCapsule_IsValid(c, "dltensor")) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
    PyCapsule_SetName(c, "used_dltensor");
    return tensor_from_dltensor(m->dl_tensor, [m] {
      PyGILState_STATE st = PyGILState_Ensure();
      if (m->deleter) m->deleter(m);
      PyGILState_Release(st);
    });
  }
  throw ValueError("from_dlpack: the capsule is not an unconsumed 'dltensor' or 'dltensor_versioned' capsule");
}

// ---------------------------------------------------------------- NumPy
namespace {

ScalarType dtype_from_numpy(const py::dtype& d) {
  const char kind = d.kind();
  const auto size = d.itemsize();
  if (kind == 'b') return ScalarType::Bool;
  if (kind == 'u') {
    if (size == 1) return ScalarType::UInt8;
    if (size == 2) return ScalarType::UInt16;
    if (size == 4) return ScalarType::UInt32;
    if (size == 8) return ScalarType::UInt64;
  }
  if (kind == 'c') {
    if (size == 8) return ScalarType::ComplexFloat;
    if (size == 16) return ScalarType::ComplexDouble;
  }
  if (kind == 'i') {
    if (size == 1) return ScalarType::Int8;
    if (size == 2) return ScalarType::Int16;
    if (size == 4) return ScalarType::Int32;
    if (size == 8) return ScalarType::Int64;
  }
  if (kind == 'f') {
    if (size == 2) return ScalarType::Float16;
    if (size == 4) return ScalarType::Float32;
    if (size == 8) return ScalarType::Float64;
  }
  throw TypeError(message("can't convert np.ndarray of type numpy.", std::string(py::str(d)),
                          ". The only supported types are: float64, float32, float16, complex64, complex128, int64, "
                          "int32, int16, int8, uint64, uint32, uint16, uint8, and bool."));
}

const char* numpy_typestr(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "?";
    case ScalarType::UInt8: return "u1";
    case ScalarType::Int8: return "i1";
    case ScalarType::Int16: return "i2";
    case ScalarType::Int32: return "i4";
    case ScalarType::Int64: return "i8";
    case ScalarType::Float16: return "f2";
    case ScalarType::Float32: return "f4";
    case ScalarType::Float64: return "f8";
    case ScalarType::ComplexFloat: return "c8";
    case ScalarType::ComplexDouble: return "c16";
    case ScalarType::UInt16: return "u2";
    case ScalarType::UInt32: return "u4";
    case ScalarType::UInt64: return "u8";
    default:
      throw TypeError(message("Got unsupported ScalarType ", dtype_name(t),
                              " (NumPy has no such dtype); convert first, e.g. tensor.float().numpy()"));
  }
}

}  // namespace

Tensor from_numpy(py::array arr) {
  ScalarType dt = dtype_from_numpy(arr.dtype());
  if (arr.dtype().byteorder() == '>') throw ValueError("from_numpy: big-endian arrays are not supported");
  if (!arr.writeable()) {
    // shared like PyTorch does, with its warning: a write through the tensor would change
    // (or, for read-only mapped memory, crash on) memory NumPy promised not to change
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "The given NumPy array is not writable, and Ember does not support non-writable tensors. "
                     "This means writing to this tensor will result in undefined behavior. You may want to "
                     "copy the array to protect its data or make it writable before converting it to a tensor.",
                     1) < 0) {
      throw py::error_already_set();
    }
  }
  const int64_t isz = static_cast<int64_t>(itemsize(dt));
  Shape sizes(arr.ndim()), strides(arr.ndim());
  for (py::ssize_t d = 0; d < arr.ndim(); ++d) {
    sizes[d] = arr.shape(d);
    const int64_t s = arr.strides(d);
    if (s < 0) {
      throw ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                       "strides are not currently supported. (You can probably work around this by making a "
                       "copy of your array with array.copy().)");
    }
    if (s % isz != 0) {
      throw ValueError("given numpy array strides not a multiple of the element byte size. Copy the numpy array "
                       "to reallocate the memory.");
    }
    strides[d] = s / isz;
  }
  int64_t span = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) { span = 0; break; }
    span += (sizes[d] - 1) * strides[d];
  }
  PyObject* owner = arr.ptr();
  Py_INCREF(owner);
  auto storage = std::make_shared<Storage>(const_cast<void*>(arr.data()), static_cast<size_t>(span * isz), Device{},
                                           [owner] {
                                             PyGILState_STATE st = PyGILState_Ensure();
                                             Py_DECREF(owner);
                                             PyGILState_Release(st);
                                           });
  return std::make_shared<TensorImpl>(std::move(storage), sizes, strides, 0, dt);
}

py::object to_numpy(const Tensor& self, bool force) {
  if ((self->requires_grad || self->view_requires_grad()) && !force) {
    throw std::runtime_error("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
  }
  if (self->device().type != DeviceType::CPU) {
    throw TypeError(message("can't convert ", self->device().str(), " device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first."));
  }
  py::dtype dt(numpy_typestr(self->dtype()));
  std::vector<py::ssize_t> shape(self->sizes().begin(), self->sizes().end());
  std::vector<py::ssize_t> strides;
  for (int64_t d = 0; d < self->dim(); ++d) {
    // a dim of one element is never stepped along: its stride (which may be huge, from a
    // slice with a huge step) is not multiplied into bytes
    const int64_t s = self->sizes()[d] <= 1 ? 0 : self->strides()[d];
    int64_t bytes = 0;
    if (__builtin_mul_overflow(s, static_cast<int64_t>(self->itemsize()), &bytes)) {
      throw std::runtime_error(message("numpy(): the stride ", s, " of dim ", d, " overflows in bytes"));
    }
    strides.push_back(bytes);
  }
  return py::array(dt, shape, strides, self->data_ptr(), py::cast(self));
}

// ---------------------------------------------------------------- tensor(data)
namespace {

struct Leaves {
  Shape shape;
  std::vector<Scalar> values;
  // the promoted dtype of the leaves, as PyTorch infers it: bool, int64 and the default float
  // dtype for Python numbers, a NumPy scalar's own dtype (np.float64(1.5) stays float64)
  std::optional<ScalarType> dtype;
  // the leaves that are Python ints in [2**63, 2**64): their bits, held as int64; only a
  // uint64 result takes them (PyTorch's rule), the others refuse them after the walk
  std::vector<size_t> above_int64;
  // the leaves that are Python ints no 64-bit type holds (below -2**63, from 2**64): only a
  // floating result takes them, as their nearest value (PyTorch's rule)
  std::vector<std::pair<size_t, double>> beyond_64;
};

// A NumPy scalar's dtype (None for anything else).
std::optional<ScalarType> numpy_scalar_dtype(py::handle obj) {
  PyObject* o = obj.ptr();
  if (PyFloat_CheckExact(o) || PyLong_CheckExact(o) || PyBool_Check(o)) return std::nullopt;  // the common case
  static const py::handle generic = py::object(py::module_::import("numpy").attr("generic")).release();  // kept
  if (!py::isinstance(obj, generic)) return std::nullopt;
  try {
    return dtype_from_numpy(py::reinterpret_borrow<py::object>(obj).attr("dtype").cast<py::dtype>());
  } catch (const std::exception&) {  // a NumPy dtype the core lacks: its value decides
    return std::nullopt;
  }
}

void walk(py::handle obj, size_t depth, Leaves& L) {
  Scalar s;
  // a tensor among the data is a number, as in PyTorch: one element, its dtype
  py::detail::make_caster<Tensor> tc;
  const bool number = PyFloat_CheckExact(obj.ptr()) || PyLong_CheckExact(obj.ptr());  // the common leaves
  if (!number && tc.load(obj, false)) {
    const Tensor t = py::detail::cast_op<Tensor>(tc);
    if (t->numel() != 1) throw ValueError("only one element tensors can be converted to Python scalars");
    if (depth != L.shape.size()) {
      throw ValueError(message("tensor: expected a sequence at dim ", depth, " but got a number"));
    }
    s = scalar_of(to_host(t));
    L.dtype = L.dtype ? promote_types(*L.dtype, t->dtype()) : t->dtype();
    L.values.push_back(s);
    return;
  }
  if (PyLong_CheckExact(obj.ptr()) && depth == L.shape.size()) {
    int overflow = 0;
    PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
    const unsigned long long u = overflow > 0 ? PyLong_AsUnsignedLongLong(obj.ptr()) : 0;
    if (overflow < 0 || (overflow > 0 && u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) {
      PyErr_Clear();  // below -2**63 or above 2**64 - 1: a float result only
      const double wide = PyLong_AsDouble(obj.ptr());
      if (wide == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        throw std::runtime_error("value cannot be converted to a 64-bit integer without overflow");
      }
      L.beyond_64.emplace_back(L.values.size(), wide);
      L.dtype = L.dtype ? promote_types(*L.dtype, ScalarType::Int64) : ScalarType::Int64;
      L.values.push_back(Scalar::from_int(0));
      return;
    }
    if (overflow > 0) {
      L.above_int64.push_back(L.values.size());
      L.dtype = L.dtype ? promote_types(*L.dtype, ScalarType::Int64) : ScalarType::Int64;
      L.values.push_back(Scalar::from_int(static_cast<int64_t>(u)));
      return;
    }
  }
  if (scalar_from_python(obj, s)) {
    if (depth != L.shape.size()) {
      throw ValueError(message("tensor: expected a sequence at dim ", depth, " but got a number"));
    }
    ScalarType dt = s.natural_dtype();
    if (auto np = numpy_scalar_dtype(obj)) dt = *np;
    L.dtype = L.dtype ? promote_types(*L.dtype, dt) : dt;
    L.values.push_back(s);
    return;
  }
  if (!PySequence_Check(obj.ptr()) || PyUnicode_Check(obj.ptr())) {
    std::string msg = message("tensor: could not infer dtype of ", Py_TYPE(obj.ptr())->tp_name);
    if (PyUnicode_Check(obj.ptr())) throw ValueError(msg);  // as PyTorch: strings are ValueError
    throw std::runtime_error(msg);
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
  const int64_t n = static_cast<int64_t>(py::len(seq));
  if (depth == L.shape.size() && L.values.empty()) {
    L.shape.push_back(n);
  } else if (depth >= L.shape.size() || L.shape[depth] != n) {
    throw ValueError(message("expected sequence of length ", depth < L.shape.size() ? L.shape[depth] : 0,
                             " at dim ", depth, " (got ", n, ")"));
  }
  for (int64_t i = 0; i < n; ++i) walk(seq[i], depth + 1, L);
}

}  // namespace

Tensor tensor_from_data(py::handle data, std::optional<ScalarType> dtype) {
  py::detail::make_caster<Tensor> tc;
  if (tc.load(data, false)) {
    Tensor t = py::detail::cast_op<Tensor>(tc);
    return ops::clone(to_dtype(t, dtype.value_or(t->dtype())));
  }
  if (py::isinstance<py::array>(data)) {
    Tensor t = from_numpy(py::reinterpret_borrow<py::array>(data));
    Tensor out = ember::empty(t->sizes(), dtype.value_or(t->dtype()));
    copy_into(out, t);
    return out;
  }
  Leaves L;
  walk(data, 0, L);
  // a 0-d leaf makes shape [] only if it was the top level; no leaf at all: the default float
  ScalarType dt = dtype.value_or(L.dtype.value_or(default_float_dtype()));
  if (!is_complex(dt) && L.dtype && is_complex(*L.dtype)) {
    throw TypeError("must be real number, not complex");  // PyTorch: complex data, real dtype
  }
  if (is_floating(dt) || is_complex(dt) || dt == ScalarType::Bool) {  // the nearest float, as PyTorch (bool: its truth)
    for (size_t i : L.above_int64) {
      L.values[i] = Scalar::from_double(static_cast<double>(static_cast<uint64_t>(L.values[i].to_int())));
    }
    for (const auto& [i, wide] : L.beyond_64) L.values[i] = Scalar::from_double(wide);
    L.above_int64.clear();
    L.beyond_64.clear();
  }
  if (!L.beyond_64.empty()) throw std::runtime_error("value cannot be converted to a 64-bit integer without overflow");
  if (!L.above_int64.empty() && dt != ScalarType::UInt64) {
    throw std::runtime_error("value cannot be converted to a 64-bit integer without overflow");
  }
  if (!is_floating(dt) && !is_complex(dt)) {  // PyTorch: an integer dtype refuses NaN and values beyond its range
    size_t next_above = 0;
    for (size_t i = 0; i < L.values.size(); ++i) {
      const Scalar& v = L.values[i];
      if (next_above < L.above_int64.size() && L.above_int64[next_above] == i) {  // uint64's own bits
        ++next_above;
        continue;
      }
      if (value_overflows(dt, v)) {
        throw std::runtime_error(message("value cannot be converted to type ", dtype_name(dt), " without overflow"));
      }
    }
  }
  Tensor out = ember::empty(L.shape, dt);
  dispatch_any(dt, "tensor", [&](auto tag) {
    using T = decltype(tag);
    T* p = out->data<T>();
    for (size_t i = 0; i < L.values.size(); ++i) p[i] = L.values[i].to<T>();
  });
  return out;
}

// ---------------------------------------------------------------- item / tolist
py::object element_to_python(ScalarType dt, const char* ptr) {
  return dispatch_any(dt, "item", [&](auto tag) -> py::object {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, ptr, sizeof(T));
    if constexpr (std::is_same_v<T, bool>) return py::bool_(v);
    else if constexpr (is_complex_v<T>) return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(v.re, v.im));
    else if constexpr (std::is_same_v<T, uint64_t>) return py::int_(v);
    else if constexpr (is_float_v<T>) return py::float_(static_cast<double>(static_cast<opmath_t<T>>(v)));
    else return py::int_(static_cast<int64_t>(v));
  });
}

py::object item(const Tensor& self) {
  if (self->numel() != 1) {
    throw std::runtime_error(message("a Tensor with ", self->numel(), " elements cannot be converted to Scalar"));
  }
  return element_to_python(self->dtype(), to_host(self)->data_ptr());
}

namespace {
py::object tolist_rec(const Tensor& t, int64_t dim, const char* ptr) {
  if (dim == t->dim()) return element_to_python(t->dtype(), ptr);
  const int64_t n = t->sizes()[dim];
  const int64_t stride = t->strides()[dim];
  const auto itemsize = static_cast<int64_t>(t->itemsize());
  py::list out(n);
  // (i * stride) * itemsize: a byte offset inside the tensor for every i < n; a one-element
  // dim may carry any stride (a slice with a huge step), which is never multiplied out
  for (int64_t i = 0; i < n; ++i) out[i] = tolist_rec(t, dim + 1, ptr + i * stride * itemsize);
  return std::move(out);
}
}  // namespace

py::object tolist(const Tensor& self) {
  const Tensor t = to_host(self);
  return tolist_rec(t, 0, t->data_ptr());
}

}  // namespace ember
