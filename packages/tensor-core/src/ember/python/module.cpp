// The ember_tensor._C module: the Tensor class's hand-written members (attributes,
// conversion, interop) and module-level functions. Ops come from the generated bind_ops_*.
#include <pybind11/numpy.h>

#include <chrono>
#include <cstring>

#include "ember/runtime/cuda_hooks.h"
#include "ember/ops/ops_util.h"
#include "ember/python/python_api.h"
#include "ember/backends/cpu/onednn.h"
#include "ember/ops/fft/fft_engine.h"
#include "ember/runtime/parallel.h"
#include "ember/runtime/profiler.h"
#include "ember/runtime/simd.h"

namespace ember {

PyTypeObject* g_tensor_type = nullptr;

namespace {

py::object g_size_type;  // ember_tensor.Size, registered from Python

// A tuple of `type` (tuple or ember_tensor.Size, a tuple subclass without a __dict__) holding
// the sizes, filled in place as tuple's own subtype constructor does, without a Python-level
// call. It holds ints only, so it can never be part of a reference cycle: it leaves the
// cyclic collector's lists (CPython untracks such exact tuples itself at its next pass, never
// subclasses). Autograd keeps a shape per recorded op; tracked, they were half the objects
// each full collection walked (a char-RNN epoch spent 40 ms of 160 in the collector).
py::object int_tuple(const Shape& s, PyTypeObject* type) {
  const auto n = static_cast<Py_ssize_t>(s.size());
  auto t = py::reinterpret_steal<py::object>(type->tp_alloc(type, n));
  if (!t) throw py::error_already_set();
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* v = PyLong_FromLongLong(s[static_cast<size_t>(i)]);
    if (!v) throw py::error_already_set();
    PyTuple_SET_ITEM(t.ptr(), i, v);
  }
  if (PyObject_GC_IsTracked(t.ptr())) PyObject_GC_UnTrack(t.ptr());
  return t;
}

// An ember_tensor.Size of the sizes.
py::object make_size(const Shape& s) {
  return int_tuple(s, g_size_type ? reinterpret_cast<PyTypeObject*>(g_size_type.ptr()) : &PyTuple_Type);
}

// The pending C++ exception as a Python error, through every registered translator (Ember's
// TypeError is Python's TypeError), as pybind11's own dispatcher does.
void set_python_error() {
#if __has_include(<pybind11/detail/exception_translation.h>)  // pybind11 2.12 and later
  py::detail::try_translate_exceptions();
#else
  py::detail::translate_exception(std::current_exception());
#endif
}

// ---- attributes read on every op of a model, as plain CPython getters ----
// pybind11's general dispatch costs about 100 ns a read; these skip it.
// self's Tensor for the plain CPython attributes and methods below, or null with a TypeError set.
const Tensor* self_tensor(PyObject* self) {
  const Tensor* t = held_tensor(self);
  if (t && *t) return t;
  PyErr_SetString(PyExc_TypeError, "expected an ember Tensor");
  return nullptr;
}

template <PyObject* (*Get)(const TensorImpl&)>
PyObject* fast_getter(PyObject* self, void*) {
  try {
    const Tensor* t = self_tensor(self);
    return t ? Get(**t) : nullptr;
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

PyObject* get_shape(const TensorImpl& t) { return make_size(t.sizes()).release().ptr(); }
PyObject* get_dtype(const TensorImpl& t) {
  PyObject* d = dtype_object(t.dtype());
  Py_INCREF(d);
  return d;
}
PyObject* get_device(const TensorImpl& t) { return device_object(t.device()).release().ptr(); }
// (sizes as a plain tuple, dtype): what autograd keeps of each input of a recorded op. Both
// tuples hold no GC-tracked object and are left untracked, so the graph's many copies never
// reach the older generations of the cyclic collector.
PyObject* get_shape_dtype(const TensorImpl& t) {
  const py::object sizes = int_tuple(t.sizes(), &PyTuple_Type);
  PyObject* pair = PyTuple_Pack(2, sizes.ptr(), dtype_object(t.dtype()));
  if (pair && PyObject_GC_IsTracked(pair)) PyObject_GC_UnTrack(pair);
  return pair;
}
PyObject* get_ndim(const TensorImpl& t) { return PyLong_FromLongLong(t.dim()); }
PyObject* get_is_cpu(const TensorImpl& t) { return PyBool_FromLong(t.device().type == DeviceType::CPU); }
PyObject* get_is_cuda(const TensorImpl& t) { return PyBool_FromLong(t.device().type == DeviceType::CUDA); }
PyObject* new_ref_or_none(PyObject* o) {
  if (!o) o = Py_None;
  Py_INCREF(o);
  return o;
}
PyObject* get_requires_grad(const TensorImpl& t) { return PyBool_FromLong(t.requires_grad || t.view_requires_grad()); }
PyObject* get_version(const TensorImpl& t) { return PyLong_FromLongLong(t.storage()->version()); }
PyObject* get_grad(const TensorImpl& t) { return new_ref_or_none(t.grad.get()); }
PyObject* get_grad_fn(const TensorImpl& t) { return new_ref_or_none(t.grad_fn.get()); }
PyObject* get_autograd_meta(const TensorImpl& t) { return new_ref_or_none(t.autograd_meta.get()); }
PyObject* get_base(const TensorImpl& t) {
  return t.view_base ? py::cast(t.view_base).release().ptr() : new_ref_or_none(nullptr);
}
PyObject* get_is_leaf(const TensorImpl& t) { return PyBool_FromLong(t.grad_fn.get() == nullptr && !t.view_requires_grad()); }

// The setters below get value null for `del t.<attribute>`.
void set_requires_grad_attr(const Tensor& t, PyObject* v) {
  if (!v || !PyBool_Check(v)) throw std::runtime_error("requires_grad must be a bool");  // PyTorch's words
  if (v == Py_False && t->grad_fn.get()) {
    throw std::runtime_error("you can only change requires_grad flags of leaf variables. If you want to use a "
                             "computed variable in a subgraph that doesn't require differentiation use "
                             "var_no_grad = var.detach().");
  }
  set_requires_grad(t, v == Py_True);
}
void set_grad(const Tensor& t, PyObject* g) {  // del t.grad is t.grad = None (PyTorch)
  if (!g) g = Py_None;
  if (g != Py_None) {
    const Tensor* held = held_tensor(g);
    if (!held || !*held) {
      throw TypeError(message("assigned grad expected to be a Tensor or None but got grad of type ", Py_TYPE(g)->tp_name));
    }
    const TensorImpl& gt = **held;
    if (gt.sizes() != t->sizes()) {  // PyTorch's words
      throw std::runtime_error(message("attempting to assign a gradient of size '", shape_str(gt.sizes()),
                                       "' to a tensor of size '", shape_str(t->sizes()),
                                       "'. Please ensure that the gradient and the tensor are the same size"));
    }
    if (gt.dtype() != t->dtype()) {
      throw std::runtime_error(message("attempting to assign a gradient with dtype '", dtype_name(gt.dtype()),
                                       "' to a tensor with dtype '", dtype_name(t->dtype()),
                                       "'. The gradient must match the tensor's dtype."));
    }
  }
  t->grad.set(g == Py_None ? nullptr : g);
}
void set_autograd_meta(const Tensor& t, PyObject* v) { t->autograd_meta.set(!v || v == Py_None ? nullptr : v); }

// The setter twin of fast_getter: Set(tensor, value), value null for a deletion.
template <void (*Set)(const Tensor&, PyObject*)>
int fast_setter(PyObject* self, PyObject* value, void*) {
  try {
    const Tensor* t = self_tensor(self);
    if (!t) return -1;
    Set(*t, value);
    return 0;
  } catch (...) {
    set_python_error();
    return -1;
  }
}
// Tensor._set_grad_fn(fn): the history autograd records for a new result (fn None: none).
PyObject* set_grad_fn_method(PyObject* self, PyObject* fn) {
  try {
    const Tensor* held = self_tensor(self);
    if (!held) return nullptr;
    if (!autograd_provider_installed()) throw std::runtime_error("_set_grad_fn: no autograd provider is installed");
    TensorImpl& t = **held;
    t.grad_fn.set(fn == Py_None ? nullptr : fn);
    if (fn != Py_None) t.requires_grad = true;
    Py_RETURN_NONE;
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}
// Tensor._has_shape_dtype(pair): whether pair, a (sizes tuple, dtype) from _shape_dtype, is
// this tensor's (autograd's backward asks it of every gradient before reducing one).
PyObject* has_shape_dtype_method(PyObject* self, PyObject* pair) {
  const Tensor* held = self_tensor(self);
  if (!held) return nullptr;
  if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
    PyErr_SetString(PyExc_TypeError, "_has_shape_dtype expects a (sizes, dtype) pair of a tensor");
    return nullptr;
  }
  const TensorImpl& t = **held;
  PyObject* sizes = PyTuple_GET_ITEM(pair, 0);
  if (PyTuple_GET_ITEM(pair, 1) != dtype_object(t.dtype()) || !PyTuple_Check(sizes) ||
      PyTuple_GET_SIZE(sizes) != static_cast<Py_ssize_t>(t.dim())) {
    Py_RETURN_FALSE;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(sizes); ++i) {
    PyObject* v = PyTuple_GET_ITEM(sizes, i);
    if (!PyLong_Check(v) || PyLong_AsLongLong(v) != t.sizes()[static_cast<size_t>(i)]) {
      PyErr_Clear();  // (an int beyond int64 is simply not this size)
      Py_RETURN_FALSE;
    }
  }
  Py_RETURN_TRUE;
}
PyMethodDef g_has_shape_dtype_def = {"_has_shape_dtype", has_shape_dtype_method, METH_O,
                                     "Whether (sizes, dtype) from _shape_dtype describes this tensor."};

PyMethodDef g_set_grad_fn_def = {"_set_grad_fn", set_grad_fn_method, METH_O,
                                 "Sets the node autograd recorded for this tensor (None: none)."};

PyGetSetDef g_fast_attributes[] = {
    {"shape", fast_getter<get_shape>, nullptr, "The size of each dim, as an ember.Size.", nullptr},
    {"dtype", fast_getter<get_dtype>, nullptr, "The element type.", nullptr},
    {"device", fast_getter<get_device>, nullptr, "Where the data lives.", nullptr},
    {"ndim", fast_getter<get_ndim>, nullptr, "The number of dims.", nullptr},
    {"is_cpu", fast_getter<get_is_cpu>, nullptr, "Whether the data is in host memory.", nullptr},
    {"is_cuda", fast_getter<get_is_cuda>, nullptr, "Whether the data is on a CUDA device.", nullptr},
    {"_shape_dtype", fast_getter<get_shape_dtype>, nullptr,
     "(the sizes as a plain tuple, the dtype), untracked by the cyclic GC (autograd's record).", nullptr},
    // ---- autograd slots (meaning given by the autograd provider), read on every recorded op ----
    {"requires_grad", fast_getter<get_requires_grad>, fast_setter<set_requires_grad_attr>,
     "Whether autograd records ops on this tensor.", nullptr},
    {"grad", fast_getter<get_grad>, fast_setter<set_grad>, "The gradient accumulated by backward (or None).",
     nullptr},
    {"_version", fast_getter<get_version>, nullptr, "The storage's count of in-place writes.", nullptr},
    {"grad_fn", fast_getter<get_grad_fn>, nullptr, "The node that made this tensor (None for a leaf).", nullptr},
    {"_autograd_meta", fast_getter<get_autograd_meta>, fast_setter<set_autograd_meta>,
     "The autograd provider's own record of this tensor (or None).", nullptr},
    {"_base", fast_getter<get_base>, nullptr, "The tensor this one is a view of (never itself a view), or None.",
     nullptr},
    {"is_leaf", fast_getter<get_is_leaf>, nullptr, "Whether no recorded op made this tensor.", nullptr},
};

void add_fast_attributes(TensorClass& cls) {
  auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  for (PyGetSetDef& def : g_fast_attributes) {
    auto descr = py::reinterpret_steal<py::object>(PyDescr_NewGetSet(type, &def));
    if (!descr || PyObject_SetAttrString(cls.ptr(), def.name, descr.ptr()) != 0) throw py::error_already_set();
  }
  for (PyMethodDef* def : {&g_set_grad_fn_def, &g_has_shape_dtype_def}) {
    auto method = py::reinterpret_steal<py::object>(PyDescr_NewMethod(type, def));
    if (!method || PyObject_SetAttrString(cls.ptr(), def->ml_name, method.ptr()) != 0) throw py::error_already_set();
  }
}

// Shares storage (and the version counter) but is not a view: like PyTorch, writes into a
// detached tensor are invisible to autograd, and it keeps nothing of self alive but the data.
Tensor detach(const Tensor& self) {
  Tensor t = make_view(self, self->sizes(), self->strides(), self->offset());
  t->view_base.reset();
  return t;
}

// Tensor.to(dtype) / to(device) / to(device, dtype) / to(other) with dtype=, device=, copy=.
py::object tensor_to(py::object py_self, py::args args, py::kwargs kwargs) {
  profiler::RecordScope rec_("ember::to", "to", profiler::Kind::Op);
  Tensor self = py_self.cast<Tensor>();
  std::optional<ScalarType> dtype;
  std::optional<Device> device;
  bool copy = false, non_blocking = false;
  auto take = [&](py::handle a) {
    py::detail::make_caster<ScalarType> dc;
    if (dc.load(a, false) && !PyUnicode_Check(a.ptr())) { dtype = py::detail::cast_op<ScalarType>(dc); return; }
    py::detail::make_caster<Tensor> tc;
    if (tc.load(a, false)) {
      Tensor o = py::detail::cast_op<Tensor>(tc);
      dtype = o->dtype();
      device = o->device();
      return;
    }
    py::detail::make_caster<Device> vc;
    if (vc.load(a, false)) { device = py::detail::cast_op<Device>(vc); return; }
    throw TypeError(message("to() received an invalid combination of arguments: got ", Py_TYPE(a.ptr())->tp_name,
                            "; expected a dtype, a device (or device string) or a tensor"));
  };
  for (auto a : args) {
    if (PyBool_Check(a.ptr())) {  // the legacy non_blocking positional
      non_blocking = a.cast<bool>();
      continue;
    }
    take(a);
  }
  for (auto kv : kwargs) {
    std::string k = py::str(kv.first);
    if (k == "dtype") { if (!kv.second.is_none()) dtype = kv.second.cast<ScalarType>(); }
    else if (k == "device") { if (!kv.second.is_none()) device = kv.second.cast<Device>(); }
    else if (k == "copy") copy = kv.second.cast<bool>();
    else if (k == "non_blocking") non_blocking = kv.second.cast<bool>();
    else if (k == "memory_format") continue;
    else throw TypeError(message("to() got an unexpected keyword argument '", k, "'"));
  }
  const Device target_device = device ? concrete_device(*device) : self->device();
  ScalarType target = dtype.value_or(self->dtype());
  if (rec_.wants_inputs()) {
    rec_.input(self);
    rec_.input(dtype ? "ScalarType" : "");
    rec_.input(device ? "Device" : "");
  }
  if (target == self->dtype() && target_device == self->device() && !copy) return py_self;
  Tensor out = ember::empty(self->sizes(), target, target_device);
  {
    py::gil_scoped_release nogil;
    ops::copy(out, self, non_blocking, out);
  }
  py::object res = py::cast(out);
  if (autograd_hook_installed() && needs_grad(self)) {
    call_autograd_hook("to", "function", py::make_tuple(py_self, py::cast(target)), res);
  }
  return res;
}

int64_t dim_arg(const Tensor& t, int64_t d, const char* op) {
  if (t->dim() == 0) throw IndexError(message(op, ": dimension specified as ", d, " but tensor has no dimensions"));
  return wrap_dim(d, t->dim(), op);
}

}  // namespace

void bind_tensor_class(py::module_& m, TensorClass& cls) {
  g_tensor_type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  add_fast_attributes(cls);
  // The only way Python makes a tensor object itself: an alias of data (detached, sharing its
  // storage and version counter). The Python layer wraps it with PyTorch's legacy
  // constructor (Tensor([1, 2]), Tensor(2, 3)) and uses it for subclass instances.
  cls.def(py::init([](const Tensor& data) { return detach(data); }), py::arg("data"));
  cls.def("size", [](const Tensor& t, std::optional<IntArg> dim) -> py::object {
        if (!dim) return make_size(t->sizes());
        return py::int_(t->sizes()[dim_arg(t, *dim, "size")]);
      }, py::arg("dim") = py::none())
      .def("stride", [](const Tensor& t, std::optional<IntArg> dim) -> py::object {
        if (!dim) return py::cast(t->strides());
        return py::int_(t->strides()[dim_arg(t, *dim, "stride")]);
      }, py::arg("dim") = py::none())
      .def("dim", [](const Tensor& t) { return t->dim(); })
      .def("ndimension", [](const Tensor& t) { return t->dim(); })
      .def("numel", [](const Tensor& t) { return t->numel(); })
      .def("nelement", [](const Tensor& t) { return t->numel(); })
      .def("element_size", [](const Tensor& t) { return t->itemsize(); })
      .def("storage_offset", [](const Tensor& t) { return t->offset(); })
      .def("is_contiguous", [](const Tensor& t, py::object) { return t->is_contiguous(); },
           py::arg("memory_format") = py::none())
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t->data_ptr()); })
      .def("_storage_data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t->storage()->data()); })
      .def("_storage_nbytes", [](const Tensor& t) { return t->storage()->nbytes(); })
      .def("_storage_use_count", [](const Tensor& t) { return t->storage().use_count(); },
           "How many tensors share this tensor's storage (1: it is the only one).")
      .def("_is_view_of", [](const Tensor& t, const Tensor& o) { return t->storage() == o->storage(); })
      // ---- memory shared between processes (meaning given by the memory sharer) ----
      .def("_adopt_storage_memory", [](const Tensor& t, const Tensor& target) {
        const auto& s = t->storage();
        const auto& d = target->storage();
        if (t->device().type != DeviceType::CPU || target->device().type != DeviceType::CPU) {
          throw std::runtime_error("_adopt_storage_memory: only CPU storages can move into shared memory");
        }
        if (s->nbytes() != d->nbytes()) {
          throw std::runtime_error(message("_adopt_storage_memory: the target storage holds ", d->nbytes(),
                                           " bytes, this one ", s->nbytes()));
        }
        s->adopt_memory(d);
      }, py::arg("target"),
         "Moves this tensor's storage into `target`'s memory (same byte size): its bytes are copied "
         "there and every view of the storage uses that memory from now on.")
      .def_property("_storage_record",
                    [](const Tensor& t) -> py::object {
                      PyObject* o = t->storage()->shared_record().get();
                      return o ? py::reinterpret_borrow<py::object>(o) : py::none();
                    },
                    [](const Tensor& t, py::object o) {
                      t->storage()->shared_record().set(o.is_none() ? nullptr : o.ptr());
                    },
                    "What the memory sharer recorded about the storage's shared segment (None: not shared).")
      .def("_reinterpret", [](const Tensor& t, ScalarType dtype, Shape sizes, Shape strides, int64_t offset) {
        if (sizes.size() != strides.size()) {
          throw std::runtime_error(message("_reinterpret: ", sizes.size(), " sizes but ", strides.size(), " strides"));
        }
        const int64_t item = static_cast<int64_t>(itemsize(dtype));
        int64_t lo = offset, hi = offset;  // element range touched
        bool empty = false;
        for (size_t d = 0; d < sizes.size(); ++d) {
          if (sizes[d] < 0) throw std::runtime_error(message("_reinterpret: negative size ", sizes[d]));
          if (sizes[d] == 0) empty = true;
          if (sizes[d] > 0) (strides[d] < 0 ? lo : hi) += strides[d] * (sizes[d] - 1);
        }
        const int64_t nbytes = static_cast<int64_t>(t->storage()->nbytes());
        if (offset < 0 || (!empty && (lo < 0 || (hi + 1) * item > nbytes))) {
          throw std::runtime_error(message("_reinterpret: sizes ", shape_str(sizes), ", strides ", shape_str(strides),
                                           " and offset ", offset, " of ", dtype_name(dtype),
                                           " reach outside the storage of ", nbytes, " bytes"));
        }
        return std::make_shared<TensorImpl>(t->storage(), std::move(sizes), std::move(strides), offset, dtype);
      }, py::arg("dtype"), py::arg("size"), py::arg("stride"), py::arg("offset"),
         "A tensor of another dtype and geometry over this tensor's storage (offset in its elements).")
      .def("_bump_version", [](const Tensor& t) { t->storage()->bump_version(); })
      // ---- autograd slots (meaning given by the autograd provider) ----
      .def("requires_grad_", [](py::object self, BoolArg v) {  // True or False, as PyTorch
        Tensor t = self.cast<Tensor>();
        if (!v && t->grad_fn.get()) throw std::runtime_error("you can only change requires_grad flags of leaf variables.");
        set_requires_grad(t, v);
        return self;
      }, py::arg("requires_grad") = true)
      .def_property("_autograd_watched", [](const Tensor& t) { return t->autograd_watched; },
                    [](const Tensor& t, bool v) { t->autograd_watched = v; })
      .def("_is_view", [](const Tensor& t) { return static_cast<bool>(t->view_base); })
      .def("detach", &detach, "A new tensor sharing storage with self, outside any autograd graph.")
      .def("detach_", [](py::object self) {
        Tensor t = self.cast<Tensor>();
        if (t->view_base) throw std::runtime_error("Can't detach views in-place. Use detach() instead.");
        t->grad_fn.set(nullptr);
        t->requires_grad = false;
        return self;
      })
      .def_property("data", &detach, [](const Tensor& t, const Tensor& src) {
        // t now views src's memory, with src's geometry and dtype (PyTorch's x.data = y)
        t->set_storage(src->storage(), src->sizes(), src->strides(), src->offset(), src->dtype());
      })
      // ---- conversion ----
      .def("to", &tensor_to)
      .def("cpu", [](py::object self, py::kwargs kw) {
        return tensor_to(self, py::make_tuple(py::str("cpu")), kw);
      })
      .def("cuda", [](py::object self, py::object device, py::kwargs kw) {
        py::object target = device.is_none() ? py::object(py::str("cuda")) : device;
        if (PyLong_Check(target.ptr())) target = py::str("cuda:" + std::to_string(target.cast<int64_t>()));
        return tensor_to(self, py::make_tuple(target), kw);
      }, py::arg("device") = py::none())
      .def("pin_memory", [](py::object self) -> py::object {
        Tensor t = self.cast<Tensor>();
        check_cpu(t, "pin_memory");
        if (cuda_hooks().is_pinned(t->storage()->data())) return self;
        auto storage = std::make_shared<Storage>(t->storage()->nbytes(), cuda_hooks().pinned_allocator(), Device{});
        Tensor out = std::make_shared<TensorImpl>(std::move(storage), t->sizes(), t->strides(), t->offset(), t->dtype());
        std::memcpy(out->storage()->data(), t->storage()->data(), t->storage()->nbytes());
        return py::cast(out);
      }, "A copy of this CPU tensor in page-locked (pinned) host memory, from which copies to CUDA can run "
         "asynchronously; the tensor itself when it is pinned already.")
      .def("is_pinned", [](const Tensor& t) {
        return t->device().type == DeviceType::CPU && t->storage()->data() &&
               cuda_hooks().is_pinned(t->storage()->data());
      })
      .def("record_stream", [](const Tensor& t, py::object stream) {
        if (t->device().type != DeviceType::CUDA) {
          throw std::runtime_error(message("record_stream: expected a cuda tensor, got one on ", t->device().str()));
        }
        DeviceCachingAllocator* a = cuda_hooks().caching_allocator(t->device().index);
        if (a && t->storage()->data() && !t->storage()->is_external()) {
          a->record_stream(t->storage()->data(), stream.attr("_handle").cast<StreamId>());
        }
      }, py::arg("stream"),
         "Marks this tensor's memory as used by `stream`: when freed, the caching allocator reuses it only after "
         "the work queued on that stream so far has completed.")
      .def("item", &item)
      .def("tolist", &tolist)
      .def("numpy", [](const Tensor& t, BoolArg force) { return to_numpy(t, force); }, py::kw_only(),
           py::arg("force") = false)
      .def("__dlpack__", &to_dlpack, py::kw_only(), py::arg("stream") = py::none(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
      .def("__dlpack_device__", [](const Tensor& t) {
        return t->device().type == DeviceType::CUDA ? py::make_tuple(2, t->device().index) : py::make_tuple(1, 0);
      })
      .def("__len__", [](const Tensor& t) {
        if (t->dim() == 0) throw TypeError("len() of a 0-d tensor");
        return t->sizes()[0];
      })
      .def("__bool__", [](const Tensor& t) {
        if (t->numel() != 1) {
          throw std::runtime_error(message("Boolean value of Tensor with ", t->numel() == 0 ? "no values" : "more than one value",
                                           " is ambiguous"));
        }
        return item(t).cast<bool>();
      })
      .def("__float__", [](const Tensor& t) { return item(t).cast<double>(); })
      .def("__int__", [](const Tensor& t) {
        // Python's int() of the value: an int for bool tensors too (True is 1), as in PyTorch
        PyObject* r = PyNumber_Long(item(t).ptr());
        if (!r) throw py::error_already_set();
        return py::reinterpret_steal<py::int_>(r);
      })
      .def("__index__", [](const Tensor& t) {
        if (!is_integral(t->dtype(), true) || t->numel() != 1) {
          throw TypeError("only integer tensors of a single element can be converted to an index");
        }
        return item(t).cast<int64_t>();
      })
      .def("__hash__", [](py::object self) { return reinterpret_cast<intptr_t>(self.ptr()); });

  m.def("tensor", [](py::handle data, std::optional<ScalarType> dtype, std::optional<Device> device,
                     bool requires_grad) {
    Tensor t = tensor_from_data(data, dtype);
    if (device) t = to_device(t, concrete_device(*device));
    if (requires_grad) set_requires_grad(t, true);
    return t;
  }, py::arg("data"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        py::arg("requires_grad") = false,
        "A new tensor holding a copy of data (nested lists, numbers, NumPy arrays or tensors).");
  m.def("from_numpy", &from_numpy, py::arg("ndarray"), "A tensor sharing memory with a NumPy array.");
  m.def("from_dlpack", [](py::object obj, py::object device, py::object copy) {
    Tensor t = from_dlpack(obj);
    if (!device.is_none()) {
      const Device want = concrete_device(parse_device(device));
      if (want != t->device()) return to_device(t, want);  // a copy to the device asked for
    }
    // copy is read as Python truth, as PyTorch's from_dlpack does (a 1-element tensor too)
    return (!copy.is_none() && py::bool_(copy)) ? ops::clone(t) : t;
  }, py::arg("ext_tensor"), py::kw_only(), py::arg("device") = py::none(), py::arg("copy") = py::none(),
        "A tensor sharing memory with any object that implements __dlpack__ (or a DLPack capsule).");
  m.def("_detach", &detach);
}

py::object device_object(const Device& d) {
  // device objects are immutable: one per (type, index) is made and handed out again
  constexpr int kCached = 64;
  static PyObject* cache[2][kCached + 1] = {};
  const int slot = d.index + 1;
  const int type = d.type == DeviceType::CPU ? 0 : 1;
  if (slot < 0 || slot > kCached) return py::cast(DeviceObject{d});
  PyObject*& obj = cache[type][slot];
  if (!obj) obj = py::cast(DeviceObject{d}).release().ptr();
  return py::reinterpret_borrow<py::object>(obj);
}

void bind_profiler(py::module_& m);  // bind_profiler.cpp
void bind_autocast(py::module_& m);  // bind_autocast.cpp

void bind_module_functions(py::module_& m) {
  py::class_<DeviceObject>(m, "device", "Where a tensor lives: ember.device('cpu'), ember.device('cuda', 0).")
      .def(py::init([](py::object type, std::optional<int> index) {
        if (py::isinstance<DeviceObject>(type)) return type.cast<DeviceObject>();
        Device d = parse_device(type);
        if (index) {
          if (d.index >= 0) throw ValueError("device: type (string) must not include an index because index was passed explicitly");
          if (*index < 0) throw std::runtime_error(message("Device index must not be negative, got ", *index));
          d.index = *index;
        }
        return DeviceObject{d};
      }), py::arg("type"), py::arg("index") = py::none())
      .def_property_readonly("type", [](const DeviceObject& d) { return d.device.type == DeviceType::CPU ? "cpu" : "cuda"; })
      .def_property_readonly("index", [](const DeviceObject& d) -> py::object {
        return d.device.index >= 0 ? py::object(py::int_(d.device.index)) : py::none();
      })
      .def("__str__", [](const DeviceObject& d) { return d.device.str(); })
      .def("__repr__", [](const DeviceObject& d) {
        std::string s = std::string("device(type='") + (d.device.type == DeviceType::CPU ? "cpu" : "cuda") + "'";
        if (d.device.index >= 0) s += ", index=" + std::to_string(d.device.index);
        return s + ")";
      })
      .def("__eq__", [](const DeviceObject& a, py::object b) {
        py::detail::make_caster<Device> c;
        return c.load(b, false) && py::detail::cast_op<Device>(c) == a.device;
      })
      .def("__hash__", [](const DeviceObject& d) { return static_cast<int>(d.device.type) * 1000 + d.device.index; });

  py::class_<Generator>(m, "Generator", "A random number generator state (seed, counter offset).")
      .def(py::init([](py::object device) {
        if (!device.is_none() && parse_device(device).type != DeviceType::CPU) {
          throw std::runtime_error("Generator: only cpu generators exist in this build");
        }
        return new Generator();
      }), py::arg("device") = "cpu")
      .def("manual_seed", [](py::object self, int64_t seed) {
        self.cast<Generator&>().manual_seed(static_cast<uint64_t>(seed));
        return self;
      }, py::arg("seed"))
      .def("initial_seed", [](Generator& g) { return g.initial_seed(); })
      .def("seed", [](Generator& g) {
        uint64_t s = random_bits(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&g)), g.initial_seed() ^ g.offset() ^
                                 static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
        s >>= 1;
        g.manual_seed(s);
        return s;
      })
      .def("get_state", [](Generator& g) { return py::make_tuple(g.initial_seed(), g.offset()); })
      .def("set_state", [](Generator& g, py::tuple st) { g.set_state(st[0].cast<uint64_t>(), st[1].cast<uint64_t>()); })
      .def_property_readonly("device", [](Generator&) { return Device{}; });
  m.attr("default_generator") = py::cast(&default_generator(), py::return_value_policy::reference);
  m.def("manual_seed", [](int64_t seed) {
    default_generator().manual_seed(static_cast<uint64_t>(seed));
    return py::module_::import("ember_tensor._C").attr("default_generator");
  }, py::arg("seed"), "Seeds the default generator; returns it.");
  m.def("initial_seed", [] { return default_generator().initial_seed(); });

  m.def("_fft_library", [] { return std::string(fft::library_name(fft::library())); },
        "The CPU FFT library in use: 'mkl' or 'builtin'.");
  m.def("_fft_set_library", [](const std::string& name) {
    if (name != "mkl" && name != "builtin") {
      throw std::runtime_error(message("_fft_set_library: expected 'mkl' or 'builtin', got '", name, "'"));
    }
    fft::set_library(name == "mkl" ? fft::Library::Mkl : fft::Library::Builtin);
  }, py::arg("name"));
  m.def("_has_mkl", &fft::mkl_available);
  m.def("_onednn_info", [] {
    const cpu::OnednnInfo info = cpu::onednn_info();  // loads the library at the first call
    py::dict d;
    d["version"] = info.version;
    d["path"] = info.path;
    d["reason"] = info.reason;
    d["bf16"] = info.bf16;
    return d;
  }, "oneDNN for CPU convolutions: {'version' ('' when not loaded), 'path', 'reason' (why not loaded), 'bf16' (bfloat16 through it too)}.");
  m.def("_onednn_enabled", &cpu::onednn_enabled);
  m.def("_onednn_set_enabled", &cpu::set_onednn_enabled, py::arg("enabled"));
  m.def("get_num_threads", &get_num_threads);
  m.def("set_num_threads", [](int n) {
    if (n < 1) throw std::runtime_error(message("set_num_threads expects a positive integer, got ", n));
    set_num_threads(n);
  }, py::arg("num"));
  if (const char* bad = unknown_cpu_capability()) {
    const std::string msg = message("EMBER_CPU_CAPABILITY=", bad, " is not one of 'default', 'avx2', 'avx512'; ",
                                    "it is ignored and the kernels run at '", cpu_level_name(cpu_level()), "'");
    if (PyErr_WarnEx(PyExc_RuntimeWarning, msg.c_str(), 1) != 0) throw py::error_already_set();
  }
  m.def("_cpu_capability", [] { return cpu_level_name(cpu_level()); },
        "The SIMD level the kernels run at: 'avx512', 'avx2' or 'default' (capped by "
        "EMBER_CPU_CAPABILITY).");
  m.def("get_default_dtype", [] { return default_float_dtype(); });
  m.def("set_default_dtype", &set_default_float_dtype, py::arg("d"));
  m.def("promote_types", &promote_types, py::arg("type1"), py::arg("type2"));
  m.def("can_cast", &can_cast, py::arg("from_"), py::arg("to"));
  m.def("result_type", [](const Operand& a, const Operand& b) { return result_type(a.t, b.t); },
        py::arg("tensor1"), py::arg("tensor2"));
  // CPU memory, named and shaped like torch.cuda's memory functions (host_allocator.h).
  m.def("memory_allocated", [] { return cpu_memory_stats().allocated_bytes.current; },
        "Bytes of CPU memory held by live tensors (in allocator blocks, so rounded up).");
  m.def("max_memory_allocated", [] { return cpu_memory_stats().allocated_bytes.peak; },
        "Peak of memory_allocated() since the start or reset_peak_memory_stats().");
  m.def("memory_reserved", [] { return cpu_memory_stats().reserved_bytes.current; },
        "Bytes of CPU memory the allocator holds from the OS: allocated plus cached.");
  m.def("max_memory_reserved", [] { return cpu_memory_stats().reserved_bytes.peak; },
        "Peak of memory_reserved() since the start or reset_peak_memory_stats().");
  m.def("reset_peak_memory_stats", &reset_peak_cpu_memory,
        "Sets every peak of memory_stats() to its current value.");
  m.def("reset_accumulated_memory_stats", &reset_accumulated_cpu_memory,
        "Zeroes memory_stats()'s cumulative counters (.allocated, .freed, num_*).");
  m.def("empty_cache", [] {
    py::gil_scoped_release nogil;
    cpu_empty_cache();
  }, "Returns the cached, unused CPU memory blocks to the OS; live tensors keep theirs.");
  m.def("memory_stats", [] {
    const MemoryStats s = cpu_memory_stats();
    py::dict d;  // keys inserted in sorted order, as torch.cuda.memory_stats returns them
    auto put = [&d](const std::string& name, const MemoryStat& st) {
      d[py::str(name + ".all.allocated")] = st.allocated;
      d[py::str(name + ".all.current")] = st.current;
      d[py::str(name + ".all.freed")] = st.freed;
      d[py::str(name + ".all.peak")] = st.peak;
    };
    put("allocated_bytes", s.allocated_bytes);
    put("allocation", s.allocation);
    d["cache_limit_bytes"] = s.cache_limit;
    d["num_alloc_retries"] = s.num_alloc_retries;
    d["num_cache_hits"] = s.num_cache_hits;
    d["num_cache_misses"] = s.num_cache_misses;
    d["num_ooms"] = s.num_ooms;
    d["num_os_allocs"] = s.segment.allocated;
    d["num_os_frees"] = s.segment.freed;
    put("requested_bytes", s.requested_bytes);
    put("reserved_bytes", s.reserved_bytes);
    put("segment", s.segment);
    return d;
  }, "CPU allocator statistics as a dict with torch.cuda.memory_stats-style keys.");
  m.def("_hold_cpu_allocator_lock", [](double seconds) {
    py::gil_scoped_release nogil;
    hold_cpu_allocator_lock(seconds);
  }, py::arg("seconds"), "Tests only: holds the CPU allocator's lock (the GIL released).");
  m.def("_set_autograd_hook", &set_autograd_hook, py::arg("hook"),
        "Installs the autograd provider's hook(op, kind, args, result), or removes it with None.");
  m.def("_get_autograd_hook", &get_autograd_hook);
  m.def("_set_autograd_hook_enabled", &set_autograd_hook_enabled, py::arg("enabled"),
        "Turns the hook on or off for ops run by this thread; returns the previous setting.");
  m.def("_force_autograd_hook", &force_autograd_hook, py::arg("on"),
        "Counted: while any force is on, the hook runs on every thread whatever its setting.");
  m.def("_set_autograd_loader", &set_autograd_provider_loader, py::arg("loader"),
        "Installs loader(), called when requires_grad=True is asked for before any provider is installed.");
  m.def("_set_size_type", [](py::object t) { g_size_type = t; });
  // for the composite layer (ember_tensor/_composites): the out= and autograd protocol of ops
  m.def("_finish_out", [](const std::string& op, const Tensor& out, const Tensor& result,
                          const std::vector<Tensor>& inputs) {
    check_not_none(op.c_str(), "out", out);
    std::vector<const TensorImpl*> read;
    for (const Tensor& t : inputs) read.push_back(t.get());
    check_written(op.c_str(), out.get(), read.data(), read.size());
    Tensor r;
    {
      MaybeNoGil nogil(result->numel());
      r = finish_out(op.c_str(), out, result);
    }
    if (r != result) bump_version(out);
    return r;
  }, py::arg("op"), py::arg("out"), py::arg("result"), py::arg("inputs") = std::vector<Tensor>(),
     "Writes an op's result into out= as the bindings do: out's memory is checked against itself "
     "and the op's tensor inputs (check_written), an empty out is resized, the result's dtype must "
     "cast to out's, the shapes must match (RuntimeError naming op otherwise).");
  m.def("_check_scalar", [](ScalarType dtype, const Scalar& value) { check_fill_value(dtype, value); },
        py::arg("dtype"), py::arg("value"),
        "RuntimeError 'value cannot be converted to type <T> without overflow' when dtype cannot hold "
        "value: PyTorch's checked conversion of an op's Scalar argument.");
  m.def("_int_arg", [](py::handle v) -> py::object {
    int64_t i = 0;
    if (int_arg_from_python(v, i)) return py::int_(i);
    return py::none();
  }, py::arg("value"),
     "value as the bindings read an int argument (IntArg: an int, a NumPy integer or a 0-d integer "
     "tensor; never a bool), or None when they refuse it; OverflowError beyond int64.");
  m.def("_autograd_hook_installed", []() { return autograd_hook_installed(); },
        "Whether ops run by this thread are shown to the autograd provider now (a provider is "
        "installed and grad mode is on, or forced).");
}

}  // namespace ember

PYBIND11_MODULE(_C, m) {
  using namespace ember;
  m.doc() = "ember_tensor's compiled core. Import ember_tensor, not this module.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const ZeroDivisionError& e) {
      PyErr_SetString(PyExc_ZeroDivisionError, e.what());
    } catch (const NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    }
  });
  // registered after the translator above, so tried before it
  py::register_exception<LinAlgError>(m, "LinAlgError", PyExc_RuntimeError);
  register_dtype_objects(m);
  TensorClass cls(m, "Tensor", "A strided n-dimensional view over reference-counted storage.");
  bind_module_functions(m);
  bind_plug_points(m);
  bind_cuda(m);
  bind_tensor_class(m, cls);
  bind_ops_0(m, cls);
  bind_ops_1(m, cls);
  bind_ops_2(m, cls);
  bind_ops_3(m, cls);
  bind_indexing(cls);
  bind_profiler(m);
  bind_autocast(m);
}
