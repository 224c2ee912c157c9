// Functions shared by the hand-written binding files (module.cpp, bind_*.cpp).
#pragma once

#include <pybind11/numpy.h>

#include "ember/python/bind_common.h"

namespace ember {

// generated bind_ops_<k>.cpp
void bind_ops_0(py::module_&, TensorClass&);
void bind_ops_1(py::module_&, TensorClass&);
void bind_ops_2(py::module_&, TensorClass&);
void bind_ops_3(py::module_&, TensorClass&);

// plug_points.cpp: the C API capsule, the host allocator's state, kernel overrides
void bind_plug_points(py::module_& m);

// bind_cuda.cpp: the compiled side of ember_tensor.cuda, and the fake-device allocator
void bind_cuda(py::module_& m);

// bind_support.cpp
void register_dtype_objects(py::module_& m);
void set_autograd_hook(py::object hook);
py::object get_autograd_hook();
void set_autograd_provider_loader(py::object loader);

// bind_interop.cpp
py::object to_dlpack(const Tensor& self, py::object stream, py::object max_version, py::object dl_device,
                     py::object copy);
Tensor from_dlpack(py::object obj);
Tensor from_numpy(py::array arr);
py::object to_numpy(const Tensor& self, bool force);
Tensor tensor_from_data(py::handle data, std::optional<ScalarType> dtype);
py::object element_to_python(ScalarType dt, const char* ptr);
py::object item(const Tensor& self);
py::object tolist(const Tensor& self);

// module.cpp
void bind_tensor_class(py::module_& m, TensorClass& cls);
void bind_module_functions(py::module_& m);

// bind_indexing.cpp
void bind_indexing(TensorClass& cls);

}  // namespace ember
