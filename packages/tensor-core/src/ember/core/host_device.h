// EMBER_HOST_DEVICE marks a function that host code and CUDA device code both call (the
// scalar functions of the ops, the random counters, the optimizers' per-element math):
// __host__ __device__ under nvcc, nothing elsewhere.
#pragma once

#if defined(__CUDACC__)
#define EMBER_HOST_DEVICE __host__ __device__
#else
#define EMBER_HOST_DEVICE
#endif
