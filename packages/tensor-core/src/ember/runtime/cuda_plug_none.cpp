// set_cuda_pluggable_allocator in a build without CUDA (CMake compiles this file only then).
#include "ember/runtime/cuda_plug.h"

#include <stdexcept>

namespace ember {

void set_cuda_pluggable_allocator(CudaPluggableAlloc, CudaPluggableFree, const char*) {
  throw std::runtime_error("change_current_allocator: ember was built without CUDA");
}

}  // namespace ember
