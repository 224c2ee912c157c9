// EMBER_HOST_DEVICE marks a function that host code and CUDA device code both call (the
// scalar functions of the ops, the random counters, the optimizers' per-element math):
// __host__ __device__ under nvcc, nothing elsewhere.
#pragma once

#if defined(__CUDACC__)
#define EMBER_HOST_DEVICE __host__ __device__
#else
#define EMBER_HOST_DEVICE
#endif

// EMBER_WRAPS_SIGNED marks a function whose signed integer arithmetic wraps around on
// purpose (PyTorch's integer sums and products): UndefinedBehaviorSanitizer does not report
// its overflow. Used where the unsigned form, which C++ defines, is miscompiled (see
// reduce_functions.h). Nothing under nvcc.
#if defined(__GNUC__) && !defined(__CUDACC__)
#define EMBER_WRAPS_SIGNED __attribute__((no_sanitize("signed-integer-overflow")))
#else
#define EMBER_WRAPS_SIGNED
#endif
