// Exception types that surface in Python as the builtin of the same name.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember {

struct TypeError : std::runtime_error { using std::runtime_error::runtime_error; };
struct ValueError : std::runtime_error { using std::runtime_error::runtime_error; };
struct IndexError : std::runtime_error { using std::runtime_error::runtime_error; };
struct ZeroDivisionError : std::runtime_error { using std::runtime_error::runtime_error; };
struct NotImplementedError : std::runtime_error { using std::runtime_error::runtime_error; };
// ember_tensor.linalg.LinAlgError, a RuntimeError (a failed decomposition or a singular matrix).
struct LinAlgError : std::runtime_error { using std::runtime_error::runtime_error; };
// Plain std::runtime_error maps to RuntimeError.

template <typename... Args> std::string message(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// "[2, 3]" as PyTorch prints shapes in messages.
std::string shape_str(const std::vector<int64_t>& v);

// Wraps a possibly negative dim into [0, ndim); IndexError names the op otherwise.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

// Services of the Python layer that the core calls without including Python (both defined in
// python/py_runtime.cpp):
// - a Python UserWarning raised from an op (the caller holds or has released the GIL; nothing
//   inside a parallel region); throws when the warning filter turned it into an error;
void warn_user(const std::string& msg);
// - the folders of the `nvidia` namespace package (the pip wheels of the CUDA libraries),
//   empty when Python or the package is not there.
std::vector<std::string> nvidia_wheel_dirs();
// - the lib/ folders where pip puts a wheel's shared libraries installed as data
//   (<prefix>/lib of sysconfig's "data" path, then the user base's), empty without Python.
std::vector<std::string> python_data_lib_dirs();

}  // namespace ember
