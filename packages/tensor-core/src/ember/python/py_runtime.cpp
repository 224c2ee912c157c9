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

std::vector<std::string> python_data_lib_dirs() {
  std::vector<std::string> dirs;
  if (!Py_IsInitialized()) return dirs;
  PyGILState_STATE gil = PyGILState_Ensure();
  // sysconfig.get_path("data") (the environment's prefix), then site.getuserbase() (pip --user)
  const std::pair<const char*, const char*> sources[] = {{"sysconfig", "get_path"}, {"site", "getuserbase"}};
  for (const auto& [module, function] : sources) {
    PyObject* mod = PyImport_ImportModule(module);
    PyObject* fn = mod ? PyObject_GetAttrString(mod, function) : nullptr;
    PyObject* dir = fn ? (std::string(function) == "get_path" ? PyObject_CallFunction(fn, "s", "data")
                                                               : PyObject_CallNoArgs(fn))
                       : nullptr;
    if (const char* d = dir && PyUnicode_Check(dir) ? PyUnicode_AsUTF8(dir) : nullptr) dirs.push_back(std::string(d) + "/lib");
    Py_XDECREF(dir);
    Py_XDECREF(fn);
    Py_XDECREF(mod);
    PyErr_Clear();
  }
  PyGILState_Release(gil);
  return dirs;
}

}  // namespace ember
