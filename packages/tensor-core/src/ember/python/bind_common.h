// What the generated bindings need: type casters for Ember types, result wrapping, the
// autograd hook, GIL release. Included only by binding translation units.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <optional>
#include <type_traits>
#include <string>
#include <tuple>
#include <vector>

#include "ember/core/generator.h"
#include "ember/core/tensor.h"

namespace py = pybind11;

namespace ember {

using TensorClass = py::class_<TensorImpl, std::shared_ptr<TensorImpl>>;

// The Python type of ember Tensors (set when the class is bound).
extern PyTypeObject* g_tensor_type;

// The Tensor an ember Tensor object (or an instance of a Python subclass, a Parameter) holds,
// read straight from pybind11's instance: pybind11's own caster finds the same holder through
// several table lookups, which cost more than the rest of a small op's binding. Null when `o`
// is not such an object or is not laid out simply (the caller then takes pybind11's way).
inline const Tensor* held_tensor(PyObject* o) {
  if (!g_tensor_type || (Py_TYPE(o) != g_tensor_type && !PyType_IsSubtype(Py_TYPE(o), g_tensor_type))) {
    return nullptr;
  }
  auto* inst = reinterpret_cast<py::detail::instance*>(o);
  if (!inst->simple_layout || !inst->simple_holder_constructed) return nullptr;
  return &py::detail::value_and_holder(inst, nullptr, 0, 0).holder<Tensor>();
}

// A Tensor argument that also accepts Python numbers (as weak, wrapped 0-d tensors).
struct Operand {
  Tensor t;
};

// Python-side dtype and device objects.
struct DTypeObject {
  ScalarType type;
};
struct DeviceObject {
  Device device;
};

PyObject* dtype_object(ScalarType t);  // borrowed reference to the singleton
py::object device_object(const Device& d);  // the shared (immutable) Python device object
Device parse_device(py::handle h);     // "cpu", "cuda:0", device objects; ValueError otherwise
bool scalar_from_python(py::handle h, Scalar& out);

// The `int` and `bool` arguments of the generated bindings, read as PyTorch's parser reads
// them. An int: a Python int (not a bool), a NumPy integer, or a 0-d integer tensor (not
// bool); beyond int64 it is OverflowError. A bool: True or False only. Anything else makes
// the overload not match (TypeError), where pybind11's own casters would take a bool as an
// int, and None, an int, a float or a tensor as a bool.
struct IntArg {
  int64_t v = 0;
  operator int64_t() const { return v; }
};
struct BoolArg {
  bool v = false;
  operator bool() const { return v; }
};
// A bool argument that also takes None, as False: PyTorch's factories' requires_grad.
struct FlagArg : BoolArg {};
bool int_arg_from_python(py::handle h, int64_t& out);
inline std::optional<bool> unwrap_bool(const std::optional<BoolArg>& b) {
  return b ? std::optional<bool>(b->v) : std::nullopt;
}
// A NumPy array given where a tensor operand goes becomes a tensor (a copy), as in PyTorch.
bool tensor_from_ndarray(py::handle h, Tensor& out);

// Releases the GIL for ops that touch many elements.
class MaybeNoGil {
 public:
  explicit MaybeNoGil(int64_t work) {
    if (work >= 16384) state_ = PyEval_SaveThread();
  }
  ~MaybeNoGil() {
    if (state_) PyEval_RestoreThread(state_);
  }
  MaybeNoGil(const MaybeNoGil&) = delete;
  MaybeNoGil& operator=(const MaybeNoGil&) = delete;

 private:
  PyThreadState* state_ = nullptr;
};

inline int64_t list_numel(const std::vector<Tensor>& ts) {
  int64_t n = 0;
  for (auto& t : ts) n += t->numel();
  return n;
}
// The provider sees ops on tensors that require grad, are watched, or view a base that
// requires grad (it decides what such a view's write means).
inline bool needs_grad(const Tensor& t) {
  return t && (t->requires_grad || t->autograd_watched || (t->view_base && t->view_base->requires_grad));
}
inline bool any_requires_grad(const std::vector<Tensor>& ts) {
  for (auto& t : ts)
    if (needs_grad(t)) return true;
  return false;
}
// A list of optional tensors as the ops take it: None becomes a null Tensor.
inline std::vector<Tensor> unwrap_optionals(const std::vector<std::optional<Tensor>>& ts) {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (auto& t : ts) out.push_back(t ? *t : Tensor());
  return out;
}
// A result keeps its view base only when it shares storage with an input (or out=): a view
// of a buffer the op made for itself is, for the user, a new tensor.
inline bool shares_storage(const Tensor& r, const Tensor& a) { return a && a->storage() == r->storage(); }
inline bool shares_storage(const Tensor& r, const std::vector<Tensor>& ts) {
  for (const auto& a : ts) {
    if (shares_storage(r, a)) return true;
  }
  return false;
}
template <class... In>
void drop_internal_base(const Tensor& r, const In&... ins) {
  if (r && r->view_base && !(false || ... || shares_storage(r, ins))) r->view_base.reset();
}
template <class... In>
void drop_internal_base(const std::vector<Tensor>& rs, const In&... ins) {
  for (const auto& r : rs) drop_internal_base(r, ins...);
}
template <class... Out, class... In>
void drop_internal_base(const std::tuple<Out...>& rs, const In&... ins) {
  std::apply([&](const auto&... r) { (drop_internal_base(r, ins...), ...); }, rs);
}

inline void bump_version(const Tensor& t) { t->storage()->bump_version(); }

// The autograd provider's hook: hook(op_name, kind, args, result) with kind one of
// "function", "inplace", "out". Called only when an input requires grad.
bool autograd_hook_installed();     // installed and enabled on this thread (or forced)
bool autograd_provider_installed();  // installed at all
bool set_autograd_hook_enabled(bool enabled);  // returns the previous value
void force_autograd_hook(bool on);
void call_autograd_hook(const char* op, const char* kind, py::tuple args, py::object result);

// Kernel overrides (ember_tensor.library.register_kernel): fn(*args) -- with out= for the
// in-place and out= variants -- runs instead of an op's built-in CPU kernel; returning
// NotImplemented falls back to the built-in one. Ops an override runs use the built-in kernels.
extern std::atomic<bool> g_kernel_overrides_active;
inline bool kernel_overrides_active() { return g_kernel_overrides_active.load(std::memory_order_relaxed); }
py::object find_kernel_override(const char* op);  // empty when op has none (or inside an override)
py::object call_kernel_override(const char* op, const py::object& fn, const py::tuple& args, const Tensor* out);
[[noreturn]] void override_result_error(const char* op, const py::object& fn, const py::object& result,
                                        const char* expected);
// Runs op's override into `result`; false when there is none or it returned NotImplemented.
template <class R>
bool run_kernel_override(const char* op, const py::tuple& args, const Tensor* out, R& result) {
  py::object fn = find_kernel_override(op);
  if (!fn) return false;
  py::object r = call_kernel_override(op, fn, args, out);
  if (r.is(py::reinterpret_borrow<py::object>(Py_NotImplemented))) return false;
  try {
    result = r.cast<R>();
  } catch (const py::cast_error&) {
    override_result_error(op, fn, r, std::is_same<R, Tensor>::value ? "a Tensor" : "the op's result type");
  }
  return true;
}

void check_dtypes(const char* op, const Tensor& t, uint32_t mask);
// the same check on a dtype: PyTorch's result_type of the arguments (ops.yaml `dtypes_of: promoted`)
void check_dtypes(const char* op, ScalarType dtype, uint32_t mask);
// TypeError for a None passed where a tensor (or a sequence of tensors) is required.
void check_not_none(const char* op, const char* arg, const Tensor& t);
void check_not_none(const char* op, const char* arg, const std::vector<Tensor>& ts);
// RuntimeError "Bad in-place call" for an in-place op (x.cumsum_(0, dtype=...)) asked for a
// result dtype other than self's, which it could not store.
void check_inplace_dtype(const char* op, const Tensor& self, std::optional<ScalarType> dtype);

// Shapes given as x.view(2, 3) or x.view((2, 3)).
// The int[] argument of a varargs op (view(*shape)): the spread ints, one sequence, or the
// argument given by name (keyword, None when not).
Shape shape_from_varargs(const char* op, const char* arg, const py::args& args, const py::object& keyword);

py::object wrap_result(const char* op, const Tensor& t);
py::object wrap_result(const char* op, const std::vector<Tensor>& ts);
// A namedtuple (ember_tensor.return_types.<op>, like torch.return_types) with the given fields.
py::object wrap_result(const char* op, const std::vector<Tensor>& ts, std::initializer_list<const char*> fields);
template <class... T>
py::object wrap_result(const char* op, const std::tuple<T...>& ts, std::initializer_list<const char*> fields) {
  std::vector<Tensor> v;
  std::apply([&](const auto&... t) { (v.push_back(t), ...); }, ts);
  return wrap_result(op, v, fields);
}
py::object wrap_result(const char* op, const Scalar& s);
py::object wrap_result(const char* op, int64_t v);
py::object wrap_result(const char* op, bool v);

}  // namespace ember

namespace pybind11::detail {

// Tensor arguments: held_tensor's direct read first, pybind11's holder caster otherwise. The
// Tensor read directly is the Python object's own holder, alive while the call holds its
// argument (bindings take const Tensor& or a copy).
template <> class type_caster<ember::Tensor> : public copyable_holder_caster<ember::TensorImpl, ember::Tensor> {
  using base = copyable_holder_caster<ember::TensorImpl, ember::Tensor>;
  ember::Tensor* held_ = nullptr;

 public:
  bool load(handle src, bool convert) {
    if (const ember::Tensor* h = ember::held_tensor(src.ptr())) {
      held_ = const_cast<ember::Tensor*>(h);
      this->value = h->get();
      return true;
    }
    held_ = nullptr;
    return base::load(src, convert);
  }
  explicit operator ember::Tensor&() { return held_ ? *held_ : static_cast<ember::Tensor&>(static_cast<base&>(*this)); }
  explicit operator ember::Tensor*() { return held_ ? held_ : static_cast<ember::Tensor*>(static_cast<base&>(*this)); }
  explicit operator ember::TensorImpl&() { return *static_cast<ember::TensorImpl*>(this->value); }
  explicit operator ember::TensorImpl*() { return static_cast<ember::TensorImpl*>(this->value); }
};

template <> struct type_caster<ember::Scalar> {
  PYBIND11_TYPE_CASTER(ember::Scalar, const_name("float"));
  bool load(handle src, bool) { return ember::scalar_from_python(src, value); }
  static handle cast(const ember::Scalar& s, return_value_policy, handle) {
    if (s.is_complex()) return PyComplex_FromDoubles(s.d, s.im);
    if (s.is_float()) return PyFloat_FromDouble(s.d);
    if (s.is_bool()) return handle(s.i ? Py_True : Py_False).inc_ref();
    if (s.unsigned64) return PyLong_FromUnsignedLongLong(static_cast<uint64_t>(s.i));
    return PyLong_FromLongLong(s.i);
  }
};

template <> struct type_caster<ember::IntArg> {
  PYBIND11_TYPE_CASTER(ember::IntArg, const_name("int"));
  bool load(handle src, bool) { return ember::int_arg_from_python(src, value.v); }
  static handle cast(const ember::IntArg& a, return_value_policy, handle) { return PyLong_FromLongLong(a.v); }
};

template <> struct type_caster<ember::BoolArg> {
  PYBIND11_TYPE_CASTER(ember::BoolArg, const_name("bool"));
  bool load(handle src, bool) {
    if (src.ptr() != Py_True && src.ptr() != Py_False) return false;
    value.v = src.ptr() == Py_True;
    return true;
  }
  static handle cast(const ember::BoolArg& a, return_value_policy, handle) {
    return handle(a.v ? Py_True : Py_False).inc_ref();
  }
};

template <> struct type_caster<ember::FlagArg> {
  PYBIND11_TYPE_CASTER(ember::FlagArg, const_name("bool | None"));
  bool load(handle src, bool convert) {
    if (src.is_none()) {
      value.v = false;
      return true;
    }
    make_caster<ember::BoolArg> b;
    if (!b.load(src, convert)) return false;
    value.v = cast_op<ember::BoolArg>(b).v;
    return true;
  }
  static handle cast(const ember::FlagArg& a, return_value_policy p, handle h) {
    return make_caster<ember::BoolArg>::cast(a, p, h);
  }
};

template <> struct type_caster<ember::Operand> {
  PYBIND11_TYPE_CASTER(ember::Operand, const_name("Tensor | float"));
  bool load(handle src, bool convert) {
    if (src.is_none()) return false;
    // a Python number first: pybind's failed load of one as a Tensor looks for foreign-module
    // and conduit attributes, raising and clearing two AttributeErrors (0.3 us an op)
    PyObject* o = src.ptr();
    if (PyFloat_Check(o) || PyLong_Check(o) || PyComplex_Check(o)) {
      ember::Scalar s;
      if (ember::scalar_from_python(src, s)) {
        value.t = ember::wrapped_scalar(s);
        return true;
      }
    }
    make_caster<ember::Tensor> tc;
    if (tc.load(src, convert)) {
      value.t = cast_op<ember::Tensor>(tc);
      return true;
    }
    ember::Scalar s;
    if (ember::scalar_from_python(src, s)) {
      value.t = ember::wrapped_scalar(s);
      return true;
    }
    return ember::tensor_from_ndarray(src, value.t);
  }
  static handle cast(const ember::Operand& o, return_value_policy p, handle h) {
    return make_caster<ember::Tensor>::cast(o.t, p, h);
  }
};

// int[] arguments: an int or a sequence of ints (not a str, not floats). An int beyond int64
// is Python's OverflowError, raised from here (never a false that leaves it pending).
template <> struct type_caster<std::vector<int64_t>> {
  PYBIND11_TYPE_CASTER(std::vector<int64_t>, const_name("Sequence[int]"));
  // an int object's value; OverflowError beyond int64
  static int64_t int64_of(PyObject* i) {
    const long long v = PyLong_AsLongLong(i);
    if (v == -1 && PyErr_Occurred()) throw error_already_set();
    return v;
  }
  // x.__index__() as int64: false when x has none (no error left set)
  static bool index_of(PyObject* x, int64_t& out) {
    object idx = reinterpret_steal<object>(PyNumber_Index(x));
    if (!idx) {
      PyErr_Clear();
      return false;
    }
    out = int64_of(idx.ptr());
    return true;
  }
  bool load(handle src, bool) {
    value.clear();
    if (PyLong_Check(src.ptr()) && !PyBool_Check(src.ptr())) {
      value.push_back(int64_of(src.ptr()));
      return true;
    }
    // NumPy integers and one-element integer tensors count as one int
    int64_t one = 0;
    if (PyIndex_Check(src.ptr()) && !PyBool_Check(src.ptr()) && index_of(src.ptr(), one)) {
      value.push_back(one);
      return true;
    }
    if (!PySequence_Check(src.ptr()) || PyUnicode_Check(src.ptr()) || PyBytes_Check(src.ptr())) return false;
    // tensors are sequences too, but a shape is never given as a tensor with a dtype check here
    Py_ssize_t n = PySequence_Size(src.ptr());
    if (n < 0) { PyErr_Clear(); return false; }
    for (Py_ssize_t i = 0; i < n; ++i) {
      object item = reinterpret_steal<object>(PySequence_GetItem(src.ptr(), i));
      if (!item) { PyErr_Clear(); return false; }
      if (PyBool_Check(item.ptr()) || PyFloat_Check(item.ptr())) return false;
      int64_t v = 0;
      if (!index_of(item.ptr(), v)) return false;
      value.push_back(v);
    }
    return true;
  }
  static handle cast(const std::vector<int64_t>& v, return_value_policy, handle) {
    PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(v.size()));
    for (size_t i = 0; i < v.size(); ++i) PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(v[i]));
    return t;
  }
};

template <> struct type_caster<ember::ScalarType> {
  PYBIND11_TYPE_CASTER(ember::ScalarType, const_name("dtype"));
  bool load(handle src, bool) {
    if (src.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) { value = ember::ScalarType::Float64; return true; }
    if (src.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) { value = ember::ScalarType::Int64; return true; }
    if (src.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) { value = ember::ScalarType::Bool; return true; }
    make_caster<ember::DTypeObject> c;
    if (!c.load(src, false)) return false;
    value = cast_op<ember::DTypeObject&>(c).type;
    return true;
  }
  static handle cast(ember::ScalarType t, return_value_policy, handle) {
    return handle(ember::dtype_object(t)).inc_ref();
  }
};

template <> struct type_caster<ember::Device> {
  PYBIND11_TYPE_CASTER(ember::Device, const_name("device"));
  bool load(handle src, bool) {
    if (!PyUnicode_Check(src.ptr())) {
      make_caster<ember::DeviceObject> c;
      if (!c.load(src, false)) return false;
      value = cast_op<ember::DeviceObject&>(c).device;
      return true;
    }
    value = ember::parse_device(src);
    return true;
  }
  static handle cast(const ember::Device& d, return_value_policy, handle) {
    return ember::device_object(d).release();
  }
};

}  // namespace pybind11::detail
