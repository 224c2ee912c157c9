// Index checks on the device, shared by the CUDA kernels that take index tensors (index and
// nn families): the first out-of-range position found by a kernel, read back once.
#pragma once

#include <cstdint>
#include "ember/backends/cuda/elementwise.cuh"

namespace ember::cuda_engine {
namespace {

// The value of element i (flat, contiguous t) on the host.
template <typename H> H value_at(const Tensor& t, int64_t i) {
  return *to_host(make_view(t, {}, {}, t->offset() + i))->data<H>();
}

// The first i (flat) with p[i] outside [lo, hi) and p[i] != skip (when has_skip), or -1.
__global__ void first_out_of_range_kernel(const int64_t* p, int64_t n, int64_t lo, int64_t hi, bool has_skip,
                                          int64_t skip, unsigned long long* first) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t v = p[i];
    if ((v < lo || v >= hi) && !(has_skip && v == skip)) atomicMin(first, static_cast<unsigned long long>(i));
  }
}

int64_t first_out_of_range(const char* op, const Tensor& idx, int64_t lo, int64_t hi, bool has_skip = false,
                           int64_t skip = 0) {
  const int64_t n = idx->numel();
  if (n == 0) return -1;
  const Device dev = idx->device();
  Tensor first = ember::empty({}, ScalarType::Int64, dev);
  {
    CurrentDevice guard(dev.index);
    const cudaError_t err = cudaMemsetAsync(first->data_ptr(), 0xff, sizeof(int64_t), stream_of(dev));
    if (err != cudaSuccess) {
      cudaGetLastError();
      throw std::runtime_error(message(op, ": cudaMemsetAsync failed: ", cudaGetErrorString(err)));
    }
    first_out_of_range_kernel<<<blocks_for(n), kThreads, 0, stream_of(dev)>>>(
        reinterpret_cast<const int64_t*>(idx->data_ptr()), n, lo, hi, has_skip, skip,
        reinterpret_cast<unsigned long long*>(first->data_ptr()));
    check_launch(op);
  }
  return *to_host(first)->data<int64_t>();
}

// An index tensor as contiguous int64 on device (int32 widened, a CPU 0-d one moved).
Tensor index_int64(const Tensor& idx, const Device& device) {
  return contiguous_in(to_device(idx, device), ScalarType::Int64);
}

}  // namespace
}  // namespace ember::cuda_engine
