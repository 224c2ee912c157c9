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

}  // namespace ember
