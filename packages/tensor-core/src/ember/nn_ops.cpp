// embedding, embedding_dense_backward and nll_loss.
//
// embedding gathers rows of a (num_weights, D) weight; its backward sums the gradient rows of
// each index into a dense (num_weights, D) gradient, grouping the positions by index first
// (a counting sort) so that every weight row is written by one thread, in a fixed order: the
// result does not depend on the number of threads. nll_loss reads -input[n, target[n], ...]
// times the class weight; the sums of its reductions are taken in double over fixed-size
// blocks, also independent of the thread count. PyTorch's argument checks and messages.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ember/ops_util.h"
#include "ember/parallel.h"

namespace ember::cpu {
namespace {

// PyTorch's legacy type names ("torch.FloatTensor"), as its argument checks print them.
std::string legacy_type_name(ScalarType t) {
  const char* n = "";
  switch (t) {
    case ScalarType::Bool: n = "Bool"; break;
    case ScalarType::UInt8: n = "Byte"; break;
    case ScalarType::Int8: n = "Char"; break;
    case ScalarType::Int16: n = "Short"; break;
    case ScalarType::Int32: n = "Int"; break;
    case ScalarType::Int64: n = "Long"; break;
    case ScalarType::Float16: n = "Half"; break;
    case ScalarType::BFloat16: n = "BFloat16"; break;
    case ScalarType::Float32: n = "Float"; break;
    case ScalarType::Float64: n = "Double"; break;
    default: break;
  }
  return message("ember.", n, "Tensor");
}

void check_indices(const char* op, const Tensor& indices) {
  const ScalarType t = indices->dtype();
  if (t != ScalarType::Int64 && t != ScalarType::Int32) {
    throw std::runtime_error(message("Expected tensor for argument #1 'indices' to have one of the following scalar "
                                     "types: Long, Int; but got ", legacy_type_name(t),
                                     " instead (while checking arguments for ", op, ")"));
  }
  check_cpu(indices, op);
}

// The indices as int64 values (a contiguous copy when needed).
std::vector<int64_t> index_values(const Tensor& indices) {
  std::vector<int64_t> v(static_cast<size_t>(indices->numel()));
  if (v.empty()) return v;
  Tensor c = as_contiguous(indices);
  if (c->dtype() == ScalarType::Int64) {
    std::memcpy(v.data(), c->data<int64_t>(), v.size() * sizeof(int64_t));
  } else {
    const int32_t* p = c->data<int32_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  }
  return v;
}

constexpr int64_t kBlock = 4096;  // elements per partial sum of a reduction

}  // namespace

// ----------------------------------------------------------------------------------- embedding

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  (void)padding_idx;
  (void)scale_grad_by_freq;
  (void)sparse;  // these shape the gradient only (derivatives.yaml)
  const char* op = "embedding";
  check_cpu(weight, op);
  if (weight->dim() != 2) throw std::runtime_error("'weight' must be 2-D");
  check_indices(op, indices);
  const int64_t V = weight->size(0), D = weight->size(1);
  const std::vector<int64_t> idx = index_values(indices);
  for (int64_t i : idx) {
    if (i < 0 || i >= V) throw IndexError("index out of range in self");
  }
  Shape shape = indices->sizes();
  shape.push_back(D);
  Tensor out = empty(shape, weight->dtype());
  if (out->numel() == 0) return out;
  Tensor w = as_contiguous(weight);
  const size_t row = static_cast<size_t>(D) * w->itemsize();
  const char* src = w->data_ptr();
  char* dst = out->data_ptr();
  const int64_t n = static_cast<int64_t>(idx.size());
  parallel_for(0, n, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(D, 1)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) std::memcpy(dst + i * row, src + idx[i] * row, row);
  });
  return out;
}

Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                int64_t padding_idx, bool scale_grad_by_freq) {
  const char* op = "embedding_dense_backward";
  check_cpu(grad_output, op);
  check_indices(op, indices);
  if (num_weights < 0) {
    throw std::runtime_error(message(op, ": num_weights must be non-negative, but got ", num_weights));
  }
  if (grad_output->dim() != indices->dim() + 1 ||
      !std::equal(indices->sizes().begin(), indices->sizes().end(), grad_output->sizes().begin())) {
    throw std::runtime_error(message(op, ": expected grad_output of size indices.shape + (D,) = ",
                                     shape_str(indices->sizes()), " + (D,), but got ",
                                     shape_str(grad_output->sizes())));
  }
  const int64_t D = grad_output->size(-1);
  const std::vector<int64_t> idx = index_values(indices);
  const int64_t n = static_cast<int64_t>(idx.size());
  // positions grouped by index: order[start[r] .. start[r + 1]) are the positions of row r
  std::vector<int64_t> start(static_cast<size_t>(num_weights) + 1, 0);
  for (int64_t i : idx) {
    if (i < 0 || i >= num_weights) throw IndexError("index out of range in self");
    ++start[i + 1];
  }
  for (int64_t r = 0; r < num_weights; ++r) start[r + 1] += start[r];
  std::vector<int64_t> order(static_cast<size_t>(n)), fill(start.begin(), start.end() - 1);
  for (int64_t p = 0; p < n; ++p) order[fill[idx[p]]++] = p;
  Tensor g = as_contiguous(grad_output);
  Tensor res = empty({num_weights, D}, grad_output->dtype());
  if (res->numel() == 0) return res;
  dispatch_float(grad_output->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    using A = opmath_t<T>;
    const T* pg = g->data<T>();
    T* pr = res->data<T>();
    const int64_t per_row = std::max<int64_t>(D * std::max<int64_t>(n / std::max<int64_t>(num_weights, 1), 1), 1);
    parallel_for(0, num_weights, std::max<int64_t>(1, kParallelGrain / per_row), [&](int64_t r0, int64_t r1) {
      std::vector<A> acc(static_cast<size_t>(D));
      for (int64_t r = r0; r < r1; ++r) {
        std::fill(acc.begin(), acc.end(), A(0));
        const int64_t count = start[r + 1] - start[r];
        if (r != padding_idx) {
          for (int64_t k = start[r]; k < start[r + 1]; ++k) {
            const T* src = pg + order[k] * D;
            for (int64_t j = 0; j < D; ++j) acc[j] += static_cast<A>(src[j]);
          }
          if (scale_grad_by_freq && count > 1) {
            for (int64_t j = 0; j < D; ++j) acc[j] /= static_cast<A>(count);
          }
        }
        T* dst = pr + r * D;
        for (int64_t j = 0; j < D; ++j) dst[j] = static_cast<T>(acc[j]);
      }
    });
  });
  return res;
}

// ------------------------------------------------------------------------------------ nll_loss

Tensor nll_loss(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction,
                int64_t ignore_index) {
  const char* op = "nll_loss";
  check_cpu(self, op);
  if (reduction < 0 || reduction > 2) {
    throw std::runtime_error(message(op, ": reduction must be 0 ('none'), 1 ('mean') or 2 ('sum'), but got ",
                                     reduction));
  }
  const int64_t nd = self->dim();
  if (nd < 1) throw std::runtime_error(message("Expected 1 or more dimensions (got ", nd, ")"));
  // self (C), (N, C) or (N, C, d1, ...); target (), (N) or (N, d1, ...)
  const int64_t C = nd == 1 ? self->size(0) : self->size(1);
  const int64_t N = nd == 1 ? 1 : self->size(0);
  if (nd <= 2) {
    if (target->dim() > 1) throw std::runtime_error("0D or 1D target tensor expected, multi-target not supported");
    const bool ok = nd == 1 ? target->dim() == 0 : target->dim() == 1 && target->size(0) == N;
    if (!ok) {
      throw std::runtime_error(message("size mismatch (got input: ", shape_str(self->sizes()), ", target: ",
                                       shape_str(target->sizes()), ")"));
    }
  } else {
    Shape expected = {N};
    expected.insert(expected.end(), self->sizes().begin() + 2, self->sizes().end());
    if (target->sizes() != expected) {
      throw std::runtime_error(message("Expected target size ", shape_str(expected), ", got ",
                                       shape_str(target->sizes())));
    }
  }
  const ScalarType tt = target->dtype();
  if (tt != ScalarType::Int64 && tt != ScalarType::UInt8) {
    throw std::runtime_error(message("expected target dtype to be Long or Byte, but got ", scalar_type_name(tt)));
  }
  if (weight && weight->numel() != C) {
    throw std::runtime_error(message("weight tensor should be defined either for all ", C,
                                     " classes or no classes but got weight tensor of shape: ",
                                     shape_str(weight->sizes())));
  }
  if (weight && weight->dtype() != self->dtype()) {
    throw std::runtime_error(message(op, ": expected weight of dtype ", dtype_name(self->dtype()), ", but got ",
                                     dtype_name(weight->dtype())));
  }
  const int64_t S = nd <= 2 ? 1 : self->numel() / std::max<int64_t>(N * C, 1);
  const int64_t T = target->numel();  // N * S
  Tensor x = as_contiguous(self);
  Tensor t = as_contiguous(target->dtype() == ScalarType::Int64 ? target : to_dtype(target, ScalarType::Int64));
  const int64_t* pt = t->data<int64_t>();
  for (int64_t i = 0; i < T; ++i) {
    const int64_t c = pt[i];
    if (c != ignore_index && (c < 0 || c >= C)) throw IndexError(message("Target ", c, " is out of bounds."));
  }
  Tensor out = reduction == 0 ? empty(target->sizes(), self->dtype()) : empty({}, self->dtype());
  dispatch_float(self->dtype(), op, [&](auto tag) {
    using X = decltype(tag);
    using A = opmath_t<X>;
    const X* px = x->data<X>();
    std::vector<double> w(static_cast<size_t>(C), 1.0);
    if (weight) {
      Tensor wc = as_contiguous(weight);
      for (int64_t c = 0; c < C; ++c) w[c] = static_cast<double>(static_cast<A>(wc->data<X>()[c]));
    }
    // element i = (n, s): class c at px[(n * C + c) * S + s]
    auto term = [&](int64_t i, double& wt) {
      const int64_t c = pt[i];
      if (c == ignore_index) {
        wt = 0;
        return 0.0;
      }
      const int64_t n = i / S, s = i % S;
      wt = w[c];
      return -wt * static_cast<double>(static_cast<A>(px[(n * C + c) * S + s]));
    };
    if (reduction == 0) {
      X* po = out->data<X>();
      parallel_for(0, T, kParallelGrain, [&](int64_t b, int64_t e) {
        double wt;
        for (int64_t i = b; i < e; ++i) po[i] = static_cast<X>(static_cast<A>(term(i, wt)));
      });
      return;
    }
    const int64_t blocks = (T + kBlock - 1) / kBlock;
    std::vector<double> sums(static_cast<size_t>(blocks)), wsums(static_cast<size_t>(blocks));
    parallel_for(0, blocks, std::max<int64_t>(1, kParallelGrain / kBlock), [&](int64_t b0, int64_t b1) {
      for (int64_t blk = b0; blk < b1; ++blk) {
        double s = 0, ws = 0, wt;
        for (int64_t i = blk * kBlock; i < std::min(T, (blk + 1) * kBlock); ++i) {
          s += term(i, wt);
          ws += wt;
        }
        sums[blk] = s;
        wsums[blk] = ws;
      }
    });
    double total = 0, total_w = 0;
    for (int64_t blk = 0; blk < blocks; ++blk) {
      total += sums[blk];
      total_w += wsums[blk];
    }
    const double res = reduction == 2 ? total : total / total_w;  // mean over nothing: NaN
    out->data<X>()[0] = static_cast<X>(static_cast<A>(res));
  });
  return out;
}

}  // namespace ember::cpu
