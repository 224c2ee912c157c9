// The meta functions declared in nn_meta.h.
#include "ember/ops/nn/nn_meta.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include "ember/ops/index/index_meta.h"

namespace ember {
namespace {

// PyTorch's legacy type names ("torch.FloatTensor"), as its argument checks print them.
std::string legacy_type_name(ScalarType t) { return message("ember.", scalar_type_name(t), "Tensor"); }

// embedding's indices: int64 or int32 (PyTorch's checkScalarTypes message).
void check_embedding_indices(const char* op, const Tensor& indices) {
  const ScalarType t = indices->dtype();
  if (!is_index_dtype(t)) {
    throw std::runtime_error(message("Expected tensor for argument #1 'indices' to have one of the following scalar "
                                     "types: Long, Int; but got ", legacy_type_name(t),
                                     " instead (while checking arguments for ", op, ")"));
  }
}


}  // namespace

// ---------------------------------------------------------------------------- embedding

Shape embedding_meta(const Tensor& weight, const Tensor& indices) {
  if (weight->dim() != 2) throw std::runtime_error("'weight' must be 2-D");
  check_embedding_indices("embedding", indices);
  Shape shape = indices->sizes();
  shape.push_back(weight->size(1));
  return shape;
}

void throw_embedding_index_out_of_range() { throw IndexError("index out of range in self"); }

Shape embedding_dense_backward_meta(const Tensor& grad_output, const Tensor& indices, int64_t num_weights) {
  const char* op = "embedding_dense_backward";
  check_embedding_indices(op, indices);
  if (num_weights < 0) {
    throw std::runtime_error(message(op, ": num_weights must be non-negative, but got ", num_weights));
  }
  if (grad_output->dim() != indices->dim() + 1 ||
      !std::equal(indices->sizes().begin(), indices->sizes().end(), grad_output->sizes().begin())) {
    throw std::runtime_error(message(op, ": expected grad_output of size indices.shape + (D,) = ",
                                     shape_str(indices->sizes()), " + (D,), but got ",
                                     shape_str(grad_output->sizes())));
  }
  return {num_weights, grad_output->size(-1)};
}

void group_positions_by_index(const int64_t* idx, int64_t n, int64_t num_weights, std::vector<int64_t>& start,
                              std::vector<int64_t>& order) {
  start.assign(static_cast<size_t>(num_weights) + 1, 0);
  for (int64_t p = 0; p < n; ++p) {
    const int64_t i = idx[p];
    if (i < 0 || i >= num_weights) throw_embedding_index_out_of_range();
    ++start[static_cast<size_t>(i + 1)];
  }
  for (size_t r = 0; r < static_cast<size_t>(num_weights); ++r) start[r + 1] += start[r];
  order.assign(static_cast<size_t>(n), 0);
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (int64_t p = 0; p < n; ++p) order[static_cast<size_t>(fill[static_cast<size_t>(idx[p])]++)] = p;
}

// ------------------------------------------------------------------------------ nll_loss

NllLossMeta nll_loss_meta(const Tensor& self, const Tensor& target, const Tensor& weight, int64_t reduction) {
  const char* op = "nll_loss";
  if (reduction < 0 || reduction > 2) {
    throw std::runtime_error(message(op, ": reduction must be 0 ('none'), 1 ('mean') or 2 ('sum'), but got ",
                                     reduction));
  }
  const int64_t nd = self->dim();
  if (nd < 1) throw std::runtime_error(message("Expected 1 or more dimensions (got ", nd, ")"));
  // self (C), (N, C) or (N, C, d1, ...); target (), (N) or (N, d1, ...)
  NllLossMeta m;
  m.C = nd == 1 ? self->size(0) : self->size(1);
  m.N = nd == 1 ? 1 : self->size(0);
  if (nd <= 2) {
    if (target->dim() > 1) throw std::runtime_error("0D or 1D target tensor expected, multi-target not supported");
    if (nd == 1 && target->dim() == 1 && target->size(0) != 1) {  // PyTorch takes a target of one element
      throw ValueError(message("For 1D input, 1D target must have size 1, but got target size: ", target->size(0)));
    }
    const bool ok = nd == 1 || (target->dim() == 1 && target->size(0) == m.N);
    if (!ok) {
      throw std::runtime_error(message("size mismatch (got input: ", shape_str(self->sizes()), ", target: ",
                                       shape_str(target->sizes()), ")"));
    }
  } else {
    Shape expected = {m.N};
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
  // (PyTorch's kernel of 1-d and 2-d inputs wants a 1-d weight, its nll_loss2d any shape)
  if (weight && (weight->numel() != m.C || (nd <= 2 && weight->dim() != 1))) {
    throw std::runtime_error(message("weight tensor should be defined either for all ", m.C,
                                     " classes or no classes but got weight tensor of shape: ",
                                     shape_str(weight->sizes())));
  }
  if (weight && weight->dtype() != self->dtype()) {
    throw std::runtime_error(message(op, ": expected weight of dtype ", dtype_name(self->dtype()), ", but got ",
                                     dtype_name(weight->dtype())));
  }
  m.S = nd <= 2 ? 1 : self->numel() / std::max<int64_t>(m.N * m.C, 1);
  m.T = target->numel();  // N * S
  m.out_shape = reduction == 0 && nd > 1 ? target->sizes() : Shape{};
  return m;
}

void throw_nll_loss_target_out_of_bounds(int64_t target) {
  throw IndexError(message("Target ", target, " is out of bounds."));
}

bool gelu_uses_tanh(const std::string& approximate) {
  if (approximate == "tanh") return true;
  if (approximate == "none") return false;
  throw std::runtime_error("approximate argument must be either none or tanh.");
}

}  // namespace ember
