// Support the generated bindings rely on: dtype/device objects, scalar conversion, result
// wrapping, the autograd hook.
#include <atomic>
#include <cstring>
#include <unordered_map>

#include "ember/ops/index/indexing.h"  // scalar_of
#include "ember/ops/ops_util.h"
#include "ember/python/python_api.h"

namespace ember {

namespace {
PyObject* g_dtype_objects[kNumScalarTypes] = {};
py::object* g_autograd_hook = nullptr;  // leaked on purpose: lives until interpreter exit
}  // namespace

void register_dtype_objects(py::module_& m) {
  py::class_<DTypeObject> cls(m, "dtype", "A tensor element type, e.g. ember.float32.");
  cls.def_property_readonly("is_floating_point", [](const DTypeObject& d) { return is_floating(d.type); })
      .def_property_readonly("is_signed", [](const DTypeObject& d) {
        return d.type != ScalarType::Bool && d.type != ScalarType::UInt8 && !is_wide_unsigned(d.type);
      })
      .def_property_readonly("is_complex", [](const DTypeObject& d) { return is_complex(d.type); })
      .def("to_real", [](const DTypeObject& d) { return py::handle(dtype_object(to_real(d.type))); },
           "The real dtype of a complex dtype (complex64 -> float32); other dtypes are returned as they are.")
      .def("to_complex", [](const DTypeObject& d) { return py::handle(dtype_object(to_complex(d.type))); },
           "The complex dtype of a floating dtype (float64 -> complex128); ValueError for other dtypes.")
      .def_property_readonly("itemsize", [](const DTypeObject& d) { return itemsize(d.type); })
      // PyTorch's C++ name of the type ("Float", "ComplexDouble"), which its messages use
      .def_property_readonly("_scalar_type_name", [](const DTypeObject& d) { return scalar_type_name(d.type); })
      .def("__repr__", [](const DTypeObject& d) { return std::string("ember.") + dtype_name(d.type); })
      .def("__reduce__", [](const DTypeObject& d) {
        return py::make_tuple(py::module_::import("ember_tensor").attr("_dtype_by_name"),
                              py::make_tuple(dtype_name(d.type)));
      });
  for (int i = 0; i < kNumScalarTypes; ++i) {
    auto t = static_cast<ScalarType>(i);
    py::object o = py::cast(DTypeObject{t});
    g_dtype_objects[i] = o.release().ptr();
    m.attr(dtype_name(t)) = py::handle(g_dtype_objects[i]);
  }
}

PyObject* dtype_object(ScalarType t) { return g_dtype_objects[static_cast<int>(t)]; }

Device parse_device(py::handle h) {
  std::string s = py::str(h);
  Device d;
  std::string type = s, idx;
  auto colon = s.find(':');
  if (colon != std::string::npos) {
    type = s.substr(0, colon);
    idx = s.substr(colon + 1);
  }
  if (type == "cpu") d.type = DeviceType::CPU;
  else if (type == "cuda") d.type = DeviceType::CUDA;
  else throw ValueError(message("Expected one of cpu, cuda device type at start of device string: ", s));
  if (!idx.empty()) {
    for (char c : idx)
      if (c < '0' || c > '9') throw ValueError(message("Invalid device string: '", s, "'"));
    d.index = std::stoi(idx);
  }
  return d;
}

bool tensor_from_ndarray(py::handle h, Tensor& out) {
  if (!py::isinstance<py::array>(h)) return false;
  try {
    out = tensor_from_data(h, std::nullopt);
  } catch (const std::exception&) {  // a dtype the core lacks: not an operand
    return false;
  }
  return true;
}

bool int_arg_from_python(py::handle h, int64_t& out) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return false;
  if (PyLong_Check(o)) {
    const long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();  // OverflowError
    out = v;
    return true;
  }
  py::detail::make_caster<Tensor> tc;
  if (tc.load(h, false)) {
    const Tensor t = py::detail::cast_op<Tensor>(tc);
    if (!t || t->dim() != 0 || !is_integral(t->dtype(), false)) return false;
    out = scalar_of(to_host(t)).i;
    return true;
  }
  const std::string tn = Py_TYPE(o)->tp_name;
  if (tn.rfind("numpy.", 0) != 0 || tn == "numpy.bool" || tn == "numpy.bool_" || !PyIndex_Check(o)) return false;
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(o));
  if (!index) {
    PyErr_Clear();
    return false;
  }
  const long long v = PyLong_AsLongLong(index.ptr());
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  out = v;
  return true;
}

bool scalar_from_python(py::handle h, Scalar& out) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) { out = Scalar::from_bool(o == Py_True); return true; }
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow < 0) {
      PyErr_SetString(PyExc_OverflowError, "can't convert negative int to unsigned");
      throw py::error_already_set();
    }
    if (overflow > 0) {
      // 2**63 .. 2**64 - 1: PyTorch's unsigned 64-bit scalar
      const unsigned long long u = PyLong_AsUnsignedLongLong(o);
      if (PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_SetString(PyExc_OverflowError, "int too big to convert");
        throw py::error_already_set();
      }
      out = Scalar::from_uint64(u);
      return true;
    }
    out = Scalar::from_int(v);
    return true;
  }
  if (PyFloat_Check(o)) { out = Scalar::from_double(PyFloat_AS_DOUBLE(o)); return true; }
  if (PyComplex_Check(o)) {
    out = Scalar::from_complex(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o));
    return true;
  }
  // 1-element tensors used as numbers (x.fill_(t), alpha=t)
  py::detail::make_caster<Tensor> tc;
  if (tc.load(h, false)) {
    Tensor t = py::detail::cast_op<Tensor>(tc);
    if (!t || t->numel() != 1 || t->dim() != 0) return false;
    out = scalar_of(to_host(t));  // a CUDA tensor's element is read through a copy, never its pointer
    return true;
  }
  // NumPy scalars and other numbers: integers through __index__, reals through __float__
  std::string tn = Py_TYPE(o)->tp_name;
  if (tn.rfind("numpy.", 0) == 0 && tn != "numpy.ndarray") {
    if (tn == "numpy.bool" || tn == "numpy.bool_") { out = Scalar::from_bool(PyObject_IsTrue(o)); return true; }
    if (PyIndex_Check(o)) {
      PyObject* index = PyNumber_Index(o);
      if (!index) { PyErr_Clear(); return false; }
      py::int_ v = py::reinterpret_steal<py::int_>(index);
      out = Scalar::from_int(v.cast<int64_t>());
      return true;
    }
    if (tn.rfind("numpy.complex", 0) == 0) {  // numpy.complex64 is no Python complex
      Py_complex c = PyComplex_AsCComplex(o);
      if (PyErr_Occurred()) { PyErr_Clear(); return false; }
      out = Scalar::from_complex(c.real, c.imag);
      return true;
    }
    if (PyNumber_Check(o)) {
      double v = PyFloat_AsDouble(o);
      if (PyErr_Occurred()) { PyErr_Clear(); return false; }
      out = Scalar::from_double(v);
      return true;
    }
  }
  return false;
}

// ---- results ----
py::object wrap_result(const char*, const Tensor& t) { return py::cast(t); }

py::object wrap_result(const char*, const std::vector<Tensor>& ts) {
  py::tuple out(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) out[i] = py::cast(ts[i]);
  return std::move(out);
}

py::object wrap_result(const char* op, const std::vector<Tensor>& ts, std::initializer_list<const char*> fields) {
  // namedtuple types like PyTorch's torch.return_types.max, one per op, made once
  static std::unordered_map<std::string, py::object>* types = new std::unordered_map<std::string, py::object>();
  auto it = types->find(op);
  if (it == types->end()) {
    py::tuple names(fields.size());
    size_t i = 0;
    for (const char* f : fields) names[i++] = py::str(f);
    py::object t = py::module_::import("collections").attr("namedtuple")(op, names);
    t.attr("__module__") = "ember_tensor.return_types";
    it = types->emplace(op, t).first;
  }
  py::tuple values(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) values[i] = py::cast(ts[i]);
  return it->second(*values);
}

py::object wrap_result(const char*, const Scalar& s) { return py::cast(s); }
py::object wrap_result(const char*, int64_t v) { return py::int_(v); }
py::object wrap_result(const char*, bool v) { return py::bool_(v); }

// ---- autograd hook ----
namespace {
// The provider turns the hook off on a thread while it records nothing there (no_grad, the
// backward pass), so ops then cost what they cost without autograd; forward-mode AD needs
// the hook in every mode and forces it on for all threads.
thread_local bool tls_hook_enabled = true;
std::atomic<int> g_hook_forced{0};

// Op and kind names as interned Python strings, made once per call site's literal.
PyObject* interned(const char* s) {
  static auto* cache = new std::unordered_map<const char*, PyObject*>();
  auto it = cache->find(s);
  if (it != cache->end()) return it->second;
  PyObject* o = PyUnicode_InternFromString(s);
  if (!o) throw py::error_already_set();
  cache->emplace(s, o);
  return o;
}
}  // namespace

bool autograd_provider_installed() { return g_autograd_hook != nullptr; }

bool grad_mode_enabled_on_thread() { return tls_hook_enabled; }

bool autograd_hook_installed() {
  return g_autograd_hook != nullptr && (tls_hook_enabled || g_hook_forced.load(std::memory_order_relaxed) > 0);
}

bool set_autograd_hook_enabled(bool enabled) {
  const bool prev = tls_hook_enabled;
  tls_hook_enabled = enabled;
  return prev;
}

void force_autograd_hook(bool on) {
  if (on) {
    g_hook_forced.fetch_add(1);
  } else if (g_hook_forced.fetch_sub(1) <= 0) {
    g_hook_forced.fetch_add(1);
    throw std::runtime_error("_force_autograd_hook(False) without a matching _force_autograd_hook(True)");
  }
}

void call_autograd_hook(const char* op, const char* kind, py::tuple args, py::object result) {
  PyObject* argv[4] = {interned(op), interned(kind), args.ptr(), result.ptr()};
  PyObject* r = PyObject_Vectorcall(g_autograd_hook->ptr(), argv, 4, nullptr);
  if (!r) throw py::error_already_set();
  Py_DECREF(r);
}

void set_autograd_hook(py::object hook) {
  if (hook.is_none()) {
    delete g_autograd_hook;
    g_autograd_hook = nullptr;
    set_autograd_available(false);
    return;
  }
  if (!PyCallable_Check(hook.ptr())) throw TypeError("_set_autograd_hook: the hook must be callable or None");
  if (!g_autograd_hook) g_autograd_hook = new py::object();
  *g_autograd_hook = hook;
  set_autograd_available(true);
}

namespace {
py::object* g_autograd_loader_fn = nullptr;  // leaked on purpose, like the hook

// A failing loader leaves the provider missing; the caller's error then says what to install.
void run_autograd_loader() {
  if (!g_autograd_loader_fn) return;
  py::object fn = *g_autograd_loader_fn;
  fn();
}
}  // namespace

void set_autograd_provider_loader(py::object loader) {
  if (loader.is_none()) {
    set_autograd_loader(nullptr);
    return;
  }
  if (!PyCallable_Check(loader.ptr())) throw TypeError("_set_autograd_loader: the loader must be callable or None");
  if (!g_autograd_loader_fn) g_autograd_loader_fn = new py::object();
  *g_autograd_loader_fn = loader;
  set_autograd_loader(&run_autograd_loader);
}

py::object get_autograd_hook() { return g_autograd_hook ? *g_autograd_hook : py::none(); }

void check_dtypes(const char* op, const Tensor& t, uint32_t mask) { check_dtypes(op, t->dtype(), mask); }

void check_dtypes(const char* op, ScalarType dtype, uint32_t mask) {
  if (!(mask & (1u << static_cast<int>(dtype)))) {
    std::string allowed;
    for (int i = 0; i < kNumScalarTypes; ++i) {
      if (mask & (1u << i)) allowed += (allowed.empty() ? "" : ", ") + std::string(dtype_name(static_cast<ScalarType>(i)));
    }
    std::string msg = message(op, ": dtype ", dtype_name(dtype), " is not supported (supported: ", allowed, ")");
    // PyTorch raises TypeError for ~ on floating point tensors
    if (std::strcmp(op, "bitwise_not") == 0) throw TypeError(msg);
    throw std::runtime_error(msg);
  }
}

void check_not_none(const char* op, const char* arg, const Tensor& t) {
  if (!t) throw TypeError(message(op, "(): argument '", arg, "' must be Tensor, not NoneType"));
}

void check_not_none(const char* op, const char* arg, const std::vector<Tensor>& ts) {
  for (size_t i = 0; i < ts.size(); ++i) {
    if (!ts[i]) throw TypeError(message(op, "(): expected Tensor as element ", i, " in argument '", arg, "', but got NoneType"));
  }
}

void check_inplace_dtype(const char* op, const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype && *dtype != self->dtype()) {
    throw std::runtime_error(message(op, "(): Bad in-place call: input tensor dtype ", dtype_name(self->dtype()),
                                     " and output tensor dtype ", dtype_name(*dtype), " should match"));
  }
}

Shape shape_from_varargs(const char* op, const char* arg, const py::args& args, const py::object& keyword) {
  auto conv = [&](py::handle h) -> Shape {
    py::detail::make_caster<Shape> c;
    if (!c.load(h, true)) {
      throw TypeError(message(op, "(): argument '", arg, "' must be a tuple of ints, but found element of type ",
                              Py_TYPE(h.ptr())->tp_name));
    }
    return py::detail::cast_op<Shape>(std::move(c));
  };
  if (!keyword.is_none()) {
    if (args.size() > 0) throw TypeError(message(op, "() got multiple values for argument '", arg, "'"));
    return conv(keyword);
  }
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return conv(args[0]);
  Shape out;
  for (auto a : args) {
    Shape one = conv(a);
    if (one.size() != 1 || !PyIndex_Check(a.ptr())) {
      throw TypeError(message(op, "(): argument '", arg, "' must be a tuple of ints, but found element of type ",
                              Py_TYPE(a.ptr())->tp_name));
    }
    out.push_back(one[0]);
  }
  return out;
}

}  // namespace ember
