// The checks and layouts of advanced indexing (index / index_put) and masked_select
// (index_put_meta.h), called by the CPU kernels (index_cpu.cpp) and the CUDA kernels
// (index_cuda.cu, select_cuda.cu, sort_cuda.cu).
#include "ember/ops/index/index_put_meta.h"

#include <string>

#include "ember/ops/index/indexing.h"
#include "ember/ops/ops_util.h"

namespace ember {

AdvancedMeta advanced_index_meta(const Tensor& self, const std::vector<Tensor>& indices, bool cpu_indices) {
  const int64_t nd = self->dim();
  if (static_cast<int64_t>(indices.size()) > nd) {
    throw IndexError(message("too many indices for tensor of dimension ", nd));
  }
  std::vector<int64_t> pos;
  Shape B;
  bool first = true;
  for (size_t j = 0; j < indices.size(); ++j) {
    const Tensor& ix = indices[j];
    if (!ix) continue;
    if (ix->dtype() != ScalarType::Int64 && ix->dtype() != ScalarType::Int32) {
      throw IndexError("tensors used as indices must be long, int, byte or bool tensors");
    }
    if (cpu_indices) check_cpu(ix, "index");
    pos.push_back(static_cast<int64_t>(j));
    if (first) {
      B = ix->sizes();
      first = false;
    } else {
      try {
        B = broadcast_shapes(B, ix->sizes(), "index");
      } catch (const std::runtime_error&) {
        std::string shapes;
        for (size_t q = 0; q < indices.size(); ++q) {
          if (!indices[q]) continue;
          shapes += (shapes.empty() ? "" : ", ") + shape_str(indices[q]->sizes());
        }
        throw IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes " + shapes);
      }
    }
  }
  if (pos.empty()) throw std::runtime_error("index: expected at least one index tensor");
  const bool adjacent = pos.back() - pos.front() + 1 == static_cast<int64_t>(pos.size());
  const int64_t nb = static_cast<int64_t>(B.size());
  AdvancedMeta A;
  A.bdims = nb;
  Shape sst;  // src strides
  Shape ost;  // offset-view strides
  const Shape bst = contiguous_strides(B);
  auto is_indexed = [&](int64_t d) { return d < static_cast<int64_t>(indices.size()) && indices[d]; };
  auto add_b = [&] {
    A.bfirst = static_cast<int64_t>(A.shape.size());
    for (int64_t i = 0; i < nb; ++i) {
      A.shape.push_back(B[i]);
      sst.push_back(0);
      ost.push_back(bst[i]);
    }
  };
  if (!adjacent) add_b();
  for (int64_t d = 0; d < nd; ++d) {
    if (is_indexed(d)) {
      if (adjacent && d == pos.front()) add_b();
      continue;
    }
    A.shape.push_back(self->sizes()[d]);
    sst.push_back(self->strides()[d]);
    ost.push_back(0);
  }
  for (int64_t d : pos) {
    if (self->sizes()[d] == 0 && shape_numel(B) > 0) {
      throw IndexError("index is out of bounds for dimension with size 0");
    }
  }
  A.pos = std::move(pos);
  A.B = std::move(B);
  A.src_strides = std::move(sst);
  A.off_strides = std::move(ost);
  return A;
}

void throw_advanced_index_out_of_bounds(int64_t bad, int64_t position, int64_t size) {
  if (size == 0) throw IndexError("index is out of bounds for dimension with size 0");
  throw IndexError(message("index ", bad, " is out of bounds for dimension ", position, " with size ", size));
}

void throw_index_put_dtypes(ScalarType destination, ScalarType source) {
  throw std::runtime_error(message("Index put requires the source and destination dtypes match, got ",
                                   scalar_type_name(destination), " for the destination and ", scalar_type_name(source),
                                   " for the source."));
}

Tensor advanced_index_values(const Tensor& values, const Shape& shape) {
  try {
    return expand_to(values, shape, "index_put_");
  } catch (const std::runtime_error&) {
    throw std::runtime_error(message("shape mismatch: value tensor of shape ", shape_str(values->sizes()),
                                     " cannot be broadcast to indexing result of shape ", shape_str(shape)));
  }
}

std::vector<Tensor> index_put_indices(const Tensor& target, const std::vector<Tensor>& indices, const Tensor& values) {
  if (values->dtype() != target->dtype()) throw_index_put_dtypes(target->dtype(), values->dtype());
  return advanced_indices("index_put", target, indices);
}

Tensor index_put_values(const Tensor& target, const std::vector<Tensor>& indices, const Tensor& values,
                        bool accumulate) {
  if (accumulate || values->dtype() == target->dtype() || values->device().type != DeviceType::CPU) return values;
  int64_t masks = 0, int_indices = 0;
  for (const Tensor& t : indices) {
    if (!t) continue;
    if (t->dtype() == ScalarType::Bool || t->dtype() == ScalarType::UInt8) ++masks;
    else ++int_indices;
  }
  if (!index_put_fills_one_value(values->numel(), masks, int_indices)) return values;
  check_fill_value(target->dtype(), scalar_of(values));
  return to_dtype(values, target->dtype());
}

std::vector<Tensor> advanced_indices(const char* op, const Tensor& target, const std::vector<Tensor>& indices) {
  std::vector<Tensor> adv;
  int64_t d = 0;
  for (const Tensor& t : indices) {
    if (!t) {  // None: a full slice
      adv.emplace_back();
      ++d;
      continue;
    }
    if (t->dtype() == ScalarType::Bool || t->dtype() == ScalarType::UInt8) {
      Tensor m = t;
      if (t->dtype() != ScalarType::Bool) {  // a uint8 mask, converted on its device
        m = ember::empty(t->sizes(), ScalarType::Bool, t->device());
        ops::copy(m, t, false, m);
      }
      const int64_t k = m->dim();
      if (d + k > target->dim()) {
        throw IndexError(message(op, ": too many indices for tensor of dimension ", target->dim()));
      }
      for (int64_t j = 0; j < k; ++j) {
        if (m->sizes()[j] != target->sizes()[d + j]) {
          throw IndexError(message("The shape of the mask ", shape_str(m->sizes()), " at index ", j,
                                   " does not match the shape of the indexed tensor ", shape_str(target->sizes()),
                                   " at index ", d + j));
        }
      }
      Tensor nz = ops::nonzero(m);
      const int64_t n = nz->sizes()[0];
      for (int64_t j = 0; j < k; ++j) adv.push_back(make_view(nz, {n}, {k}, nz->offset() + j));
      d += k;
      continue;
    }
    if (t->dtype() != ScalarType::Int64 && t->dtype() != ScalarType::Int32) {
      throw IndexError("tensors used as indices must be long, int, byte or bool tensors");
    }
    adv.push_back(t);
    ++d;
  }
  if (d > target->dim()) {
    throw IndexError(message(op, ": too many indices for tensor of dimension ", target->dim(), " (got ", d, ")"));
  }
  return adv;
}

Shape masked_select_meta(const Tensor& self, const Tensor& mask, const Tensor& out) {
  if (mask->dtype() != ScalarType::Bool) throw std::runtime_error("masked_select: expected BoolTensor for mask");
  if (out && out->dtype() != self->dtype()) {
    throw std::runtime_error("masked_select(): self and result must have the same scalar type");
  }
  return broadcast_shapes(self->sizes(), mask->sizes(), "masked_select");
}

}  // namespace ember
