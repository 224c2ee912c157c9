// embedding, embedding_dense_backward and nll_loss.
//
// embedding gathers rows of a (num_weights, D) weight; its backward sums the gradient rows of
// each index into a dense (num_weights, D) gradient, grouping the positions by index first
// (a counting sort) so that every weight row is written by one thread, in a fixed order: the
// result does not depend on the number of threads. nll_loss reads -input[n, target[n], ...]
// times the class weight; the sums of its reductions are taken in double over fixed-size
// blocks, also independent of the thread count. The argument checks and result shapes are
// the meta functions shared with the CUDA kernels (index_meta.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ember/ops/nn/nn_meta.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"

namespace ember::cpu {
namespace {

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

}  // namespace

// ----------------------------------------------------------------------------------- embedding

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  (void)padding_idx;
  (void)scale_grad_by_freq;
  (void)sparse;  // these shape the gradient only (derivatives.yaml)
  const char* op = "embedding";
  check_cpu(weight, op);
  check_cpu(indices, op);
  const Shape shape = embedding_meta(weight, indices);
  const int64_t V = weight->size(0), D = weight->size(1);
  const std::vector<int64_t> idx = index_values(indices);
  for (int64_t i : idx) {
    if (i < 0 || i >= V) throw_embedding_index_out_of_range();
  }
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
  check_cpu(indices, op);
  const Shape shape = embedding_dense_backward_meta(grad_output, indices, num_weights);
  const int64_t D = shape[1];
  const std::vector<int64_t> idx = index_values(indices);
  const int64_t n = static_cast<int64_t>(idx.size());
  // positions grouped by index: order[start[r] .. start[r + 1]) are the positions of row r
  std::vector<int64_t> start, order;
  group_positions_by_index(idx.data(), n, num_weights, start, order);
  Tensor g = as_contiguous(grad_output);
  Tensor res = empty(shape, grad_output->dtype());
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
  const NllLossMeta m = nll_loss_meta(self, target, weight, reduction);
  const int64_t C = m.C, S = m.S, T = m.T;
  Tensor x = as_contiguous(self);
  Tensor t = as_contiguous(target->dtype() == ScalarType::Int64 ? target : to_dtype(target, ScalarType::Int64));
  const int64_t* pt = t->data<int64_t>();
  for (int64_t i = 0; i < T; ++i) {
    const int64_t c = pt[i];
    if (c != ignore_index && (c < 0 || c >= C)) throw_nll_loss_target_out_of_bounds(c);
  }
  Tensor out = empty(m.out_shape, self->dtype());
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
    const int64_t blocks = (T + kNllLossBlock - 1) / kNllLossBlock;
    std::vector<double> sums(static_cast<size_t>(blocks)), wsums(static_cast<size_t>(blocks));
    parallel_for(0, blocks, std::max<int64_t>(1, kParallelGrain / kNllLossBlock), [&](int64_t b0, int64_t b1) {
      for (int64_t blk = b0; blk < b1; ++blk) {
        double s = 0, ws = 0, wt;
        for (int64_t i = blk * kNllLossBlock; i < std::min(T, (blk + 1) * kNllLossBlock); ++i) {
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
