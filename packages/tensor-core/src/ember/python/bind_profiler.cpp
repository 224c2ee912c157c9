// The compiled side of ember_tensor.profiler: _C._profiler_* (profiler.h records).
#include <cstring>

#include "ember/runtime/profiler.h"
#include "ember/python/python_api.h"  // (Python.h, then frameobject.h below)

#include <frameobject.h>

namespace ember {

void bind_profiler(py::module_& m);

namespace {

// The Python stack of the calling thread (GIL held), innermost first, as "file(line): name";
// the profiler's own Python frames are left out.
std::vector<std::string> python_stack() {
  std::vector<std::string> out;
  PyFrameObject* f = PyEval_GetFrame();  // borrowed
  Py_XINCREF(f);
  while (f && out.size() < 128) {
    PyCodeObject* code = PyFrame_GetCode(f);  // new reference
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    const char* name = PyUnicode_AsUTF8(code->co_name);
    if (!file || !name) {
      PyErr_Clear();
    } else if (!std::strstr(file, "ember_tensor/profiler/")) {
      out.push_back(std::string(file) + "(" + std::to_string(PyFrame_GetLineNumber(f)) + "): " + name);
    }
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(f);  // new reference
    Py_DECREF(f);
    f = back;
  }
  Py_XDECREF(f);
  return out;
}

py::list shape_list(const Shape& s) {
  py::list l;
  for (int64_t d : s) l.append(d);
  return l;
}

const char* kind_name(profiler::Kind k) { return k == profiler::Kind::User ? "user_annotation" : "cpu_op"; }

// Events as tuples: (id, parent, name, cat, tid, start_ns, end_ns, depth, input_shapes,
// input_types, cpu_mem, cuda_mem, stack); the lists are None when not recorded.
py::dict result_to_python(profiler::Result& r, bool record_shapes, bool with_stack) {
  py::list events;
  for (const profiler::Event& e : r.events) {
    py::object shapes = py::none(), types = py::none(), stack = py::none();
    if (record_shapes && e.kind != profiler::Kind::User) {
      py::list sl, tl;
      for (const profiler::Input& in : e.inputs) {
        if (in.is_list) {
          py::list l;
          for (const Shape& s : in.shapes) l.append(shape_list(s));
          sl.append(l);
        } else {
          sl.append(in.shapes.empty() ? py::list() : shape_list(in.shapes[0]));
        }
        tl.append(in.type);
      }
      shapes = sl;
      types = tl;
    }
    if (with_stack) stack = py::cast(e.stack);
    events.append(py::make_tuple(e.id, e.parent, e.name(), kind_name(e.kind), e.tid, e.start_ns, e.end_ns,
                                 e.depth, shapes, types, e.cpu_mem, e.cuda_mem, stack));
  }
  // kernels: (id, op_id, name, device, stream, tid, launch_ns, start_ns, end_ns)
  py::list kernels;
  for (const profiler::GpuEvent& k : r.kernels) {
    kernels.append(
        py::make_tuple(k.id, k.op_id, k.name, k.device, k.stream, k.tid, k.launch_ns, k.start_ns, k.end_ns));
  }
  py::dict d;
  d["events"] = events;
  d["kernels"] = kernels;
  d["start_ns"] = r.start_ns;
  d["stop_ns"] = r.stop_ns;
  return d;
}

}  // namespace

void bind_profiler(py::module_& m) {
  profiler::set_stack_capture(&python_stack);
  m.def(
      "_profiler_start",
      [](bool record_shapes, bool profile_memory, bool with_stack, bool cuda, bool fake_gpu) {
        profiler::Options o;
        o.record_shapes = record_shapes;
        o.profile_memory = profile_memory;
        o.with_stack = with_stack;
        o.cuda = cuda;
        o.fake_gpu = fake_gpu;
        profiler::start(o);
      },
      py::kw_only(), py::arg("record_shapes") = false, py::arg("profile_memory") = false,
      py::arg("with_stack") = false, py::arg("cuda") = false, py::arg("fake_gpu") = false,
      "Starts recording (RuntimeError when a profile runs already).");
  m.def(
      "_profiler_stop",
      [](bool record_shapes, bool with_stack) {
        profiler::Result r;
        {
          py::gil_scoped_release nogil;  // waits for the GPU when kernels were timed
          r = profiler::stop();
        }
        return result_to_python(r, record_shapes, with_stack);
      },
      py::kw_only(), py::arg("record_shapes") = false, py::arg("with_stack") = false,
      "Stops recording; returns {'events', 'kernels', 'start_ns', 'stop_ns'} (RuntimeError when none runs).");
  m.def("_profiler_enabled", [] { return profiler::enabled(); }, "Whether a profile is recording.");
  m.def("_profiler_push_range", [](const std::string& name) { return profiler::push_range(name); },
        py::arg("name"), "Opens a user range on this thread; its id, or 0 when no profile runs.");
  m.def("_profiler_pop_range", [](uint64_t id) { profiler::pop_range(id); }, py::arg("id"),
        "Closes the user range `id` opened on this thread (nothing for 0 or a range not open).");
  m.def("_profiler_now_ns", [] { return profiler::now_ns(); }, "The profiler's clock (steady, nanoseconds).");
}

}  // namespace ember
