// The Python services the core calls (declared in core/tensor.h and core/errors.h): PyRef's
// reference counting, user warnings, the nvidia wheels' folders and the data lib/ folders.
#include <pybind11/pybind11.h>  // (Python.h) error_already_set: a warning that became an error

#include <string>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/runtime/parallel.h"

namespace ember {

void PyRef::set(PyObject* o) {
  Py_XINCREF(o);
  PyObject* old = obj_;
  obj_ = o;
  Py_XDECREF(old);
}

void PyRef::reset() {
  if (!obj_) return;
  // may run on a thread without the GIL (a tensor dropped inside a kernel)
  PyGILState_STATE st = PyGILState_Ensure();
  Py_CLEAR(obj_);
  PyGILState_Release(st);
}

void warn_user(const std::string& msg) {
  if (!Py_IsInitialized() || in_parallel_region()) return;
  PyGILState_STATE st = PyGILState_Ensure();
  if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) {
    pybind11::error_already_set err;  // the warning was turned into an error
    PyGILState_Release(st);
    throw err;
  }
  PyGILState_Release(st);
}

std::vector<std::string> nvidia_wheel_dirs() {
  std::vector<std::string> dirs;
  if (!Py_IsInitialized()) return dirs;
  PyGILState_STATE gil = PyGILState_Ensure();
  if (PyObject* mod = PyImport_ImportModule("nvidia")) {
    PyObject* path = PyObject_GetAttrString(mod, "__path__");
    PyObject* list = path ? PySequence_List(path) : nullptr;
    for (Py_ssize_t i = 0; list && i < PyList_Size(list); ++i) {
      if (const char* d = PyUnicode_AsUTF8(PyList_GetItem(list, i))) dirs.emplace_back(d);
    }
    Py_XDECREF(list);
    Py_XDECREF(path);
    Py_DECREF(mod);
  }
  PyErr_Clear();
  PyGILState_Release(gil);
  return dirs;
}

namespace {

// The str that module.function(arg) returns (no argument when arg is null), or "" on any
// error (cleared). The caller holds the GIL.
std::string python_str_call(const char* module, const char* function, const char* arg) {
  PyObject* mod = PyImport_ImportModule(module);
  PyObject* fn = mod ? PyObject_GetAttrString(mod, function) : nullptr;
  PyObject* out = !fn ? nullptr : arg ? PyObject_CallFunction(fn, "s", arg) : PyObject_CallNoArgs(fn);
  const char* text = out && PyUnicode_Check(out) ? PyUnicode_AsUTF8(out) : nullptr;
  std::string result = text ? text : "";
  Py_XDECREF(out);
  Py_XDECREF(fn);
  Py_XDECREF(mod);
  PyErr_Clear();
  return result;
}

}  // namespace

std::vector<std::string> python_data_lib_dirs() {
  std::vector<std::string> dirs;
  if (!Py_IsInitialized()) return dirs;
  PyGILState_STATE gil = PyGILState_Ensure();
  // the environment's prefix, then pip --user's
  for (const std::string& base :
       {python_str_call("sysconfig", "get_path", "data"), python_str_call("site", "getuserbase", nullptr)}) {
    if (!base.empty()) dirs.push_back(base + "/lib");
  }
  PyGILState_Release(gil);
  return dirs;
}

}  // namespace ember
