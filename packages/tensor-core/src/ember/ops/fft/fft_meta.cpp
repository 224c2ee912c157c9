// The DFT ops' checks, sizes and scale (fft_meta.h).
#include "ember/ops/fft/fft_meta.h"

#include <cmath>
#include <string>

#include "ember/core/errors.h"
#include "ember/ops/ops_util.h"

namespace ember {
namespace {

std::vector<int64_t> wrapped_dims(const char* op, const Tensor& self, const Shape& dim, bool need_one) {
  const int64_t nd = self->dim();
  std::vector<int64_t> dims;
  for (int64_t d : dim) {
    const int64_t w = wrap_dim(d, nd, op);
    for (int64_t seen : dims) {
      if (seen == w) throw std::runtime_error(message(op, ": dims must be unique, got dim ", d, " twice"));
    }
    dims.push_back(w);
  }
  if (need_one && dims.empty()) throw std::runtime_error(message(op, ": expected at least one dim to transform"));
  return dims;
}

double scale_for(const char* op, int64_t normalization, const Shape& signal) {
  double n = 1.0;
  for (int64_t s : signal) n *= static_cast<double>(s);
  switch (normalization) {
    case 0: return 1.0;
    case 1: return 1.0 / std::sqrt(n);
    case 2: return 1.0 / n;
    default:
      throw std::runtime_error(message(op, ": normalization must be 0 (none), 1 (by 1/sqrt(n)) or 2 (by 1/n), got ",
                                       normalization));
  }
}

void check_sizes(const char* op, const Shape& signal) {
  for (int64_t s : signal) {
    if (s < 1) throw std::runtime_error(message(op, ": Invalid number of data points (", s, ") specified"));
  }
}

// The dims, their sizes (checked) and the input's sizes: what every transform starts from.
FftMeta transform_meta(const char* op, const Tensor& self, const Shape& dim, bool need_one) {
  FftMeta m;
  m.dims = wrapped_dims(op, self, dim, need_one);
  for (int64_t d : m.dims) m.signal.push_back(self->size(d));
  check_sizes(op, m.signal);
  m.out_sizes = self->sizes();
  return m;
}

}  // namespace

FftMeta fft_c2c_meta(const Tensor& self, const Shape& dim, int64_t normalization) {
  FftMeta m = transform_meta("_fft_c2c", self, dim, false);
  m.out_dtype = self->dtype();
  m.scale = scale_for("_fft_c2c", normalization, m.signal);
  return m;
}

FftMeta fft_r2c_meta(const Tensor& self, const Shape& dim, int64_t normalization, bool onesided) {
  FftMeta m = transform_meta("_fft_r2c", self, dim, true);
  if (onesided) m.out_sizes[m.dims.back()] = m.signal.back() / 2 + 1;
  m.out_dtype = to_complex(self->dtype());
  m.scale = scale_for("_fft_r2c", normalization, m.signal);
  return m;
}

FftMeta fft_c2r_meta(const Tensor& self, const Shape& dim, int64_t normalization, int64_t last_dim_size) {
  const char* op = "_fft_c2r";
  FftMeta m;
  m.dims = wrapped_dims(op, self, dim, true);
  if (last_dim_size < 1) {
    throw std::runtime_error(message(op, ": Invalid number of data points (", last_dim_size, ") specified"));
  }
  const int64_t have = self->size(m.dims.back());
  if (have != last_dim_size / 2 + 1) {
    throw std::runtime_error(message(op, ": a real output of ", last_dim_size, " points along dim ", m.dims.back(),
                                     " takes ", last_dim_size / 2 + 1, " input entries there, got ", have));
  }
  for (int64_t d : m.dims) m.signal.push_back(self->size(d));
  m.signal.back() = last_dim_size;
  check_sizes(op, m.signal);
  m.out_sizes = self->sizes();
  m.out_sizes[m.dims.back()] = last_dim_size;
  m.out_dtype = to_real(self->dtype());
  m.scale = scale_for(op, normalization, m.signal);
  return m;
}

Shape fft_permutation(int64_t ndim, const std::vector<int64_t>& dims) {
  Shape perm;
  for (int64_t d = 0; d < ndim; ++d) {
    bool transformed = false;
    for (int64_t t : dims) transformed = transformed || t == d;
    if (!transformed) perm.push_back(d);
  }
  perm.insert(perm.end(), dims.begin(), dims.end());
  return perm;
}

Shape inverse_permutation(const Shape& perm) {
  Shape inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

FftInput fft_input(const Tensor& self, const std::vector<int64_t>& dims, ScalarType dtype) {
  FftInput p;
  p.perm = fft_permutation(self->dim(), dims);
  Tensor moved = ops::permute(self, p.perm);
  if (moved->is_contiguous() && moved->dtype() == dtype) {
    p.x = moved;
  } else {
    p.x = empty(moved->sizes(), dtype, self->device());
    ops::copy(p.x, moved, false, p.x);
  }
  int64_t signal = 1;
  for (int64_t d : dims) signal *= self->size(d);
  p.batch = signal == 0 ? 0 : p.x->numel() / signal;
  return p;
}

Shape fft_permuted(const Shape& sizes, const Shape& perm) {
  Shape s;
  for (int64_t d : perm) s.push_back(sizes[static_cast<size_t>(d)]);
  return s;
}

}  // namespace ember
