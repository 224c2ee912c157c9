// What the DFT ops check and compute the same way on every device: the transformed dims,
// the result's sizes and dtype, and the normalization's scale (fft_meta.cpp).
#pragma once

#include <vector>

#include "ember/core/tensor.h"

namespace ember {

struct FftMeta {
  std::vector<int64_t> dims;  // the transformed dims, wrapped, in the order given
  Shape signal;               // their sizes on the real side (the logical DFT lengths)
  Shape out_sizes;            // the result's sizes
  ScalarType out_dtype;
  double scale;               // what the normalization multiplies the result by
};

// RuntimeError naming the op for a bad normalization (0 none, 1 by 1/sqrt(n), 2 by 1/n),
// repeated dims or a transformed dim of size 0; the dtype lists are the bindings' checks.
FftMeta fft_c2c_meta(const Tensor& self, const Shape& dim, int64_t normalization);
FftMeta fft_r2c_meta(const Tensor& self, const Shape& dim, int64_t normalization, bool onesided);
// The input's last transformed dim holds last_dim_size / 2 + 1 entries.
FftMeta fft_c2r_meta(const Tensor& self, const Shape& dim, int64_t normalization, int64_t last_dim_size);

// The permutation that puts the dims not transformed first (in order), then `dims` (in the
// order given), and its inverse.
Shape fft_permutation(int64_t ndim, const std::vector<int64_t>& dims);
Shape inverse_permutation(const Shape& perm);

// An FFT engine's input, on self's device: the transformed dims last, contiguous, in `dtype`
// (self itself when it already is); `perm` says how its dims are self's, `batch` how many
// signals it holds (0 when one has no elements).
struct FftInput {
  Tensor x;
  Shape perm;
  int64_t batch;
};
FftInput fft_input(const Tensor& self, const std::vector<int64_t>& dims, ScalarType dtype);

// sizes (in self's dim order) in the engine's order.
Shape fft_permuted(const Shape& sizes, const Shape& perm);

}  // namespace ember
