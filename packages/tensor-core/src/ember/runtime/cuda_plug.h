// The pluggable CUDA allocator (ember_tensor.cuda.CUDAPluggableAllocator): user functions
// that replace the caching allocator for every device, installable only before the first
// CUDA allocation. Defined by the CUDA runtime layer (cuda/), or by cuda_plug_none.cpp in a
// build without CUDA (where it raises).
#pragma once

#include <cstddef>

namespace ember {

using CudaPluggableAlloc = void* (*)(size_t size, int device, void* stream);
using CudaPluggableFree = void (*)(void* ptr, size_t size, int device, void* stream);

// `name` must stay valid for the process's lifetime. std::runtime_error after the first CUDA
// allocation; alloc returning NULL makes the allocation raise DeviceOutOfMemory.
void set_cuda_pluggable_allocator(CudaPluggableAlloc alloc, CudaPluggableFree free, const char* name);

}  // namespace ember
