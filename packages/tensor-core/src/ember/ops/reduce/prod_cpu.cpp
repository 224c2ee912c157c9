// CPU kernel of prod, on the engine of reduce_cpu.h (its own file: a product per input dtype
// is as long to compile as the sums of reduce_cpu.cpp).
#include "ember/ops/reduce/reduce_cpu.h"

namespace ember {
namespace cpu {

namespace {

// The product of complex numbers (not a product of parts): the reduced dim moved last and
// each row multiplied in order, in the result's dtype.
Tensor complex_prod(const Tensor& z, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  Tensor rows;
  Shape shape;
  if (dim) {
    const int64_t d = wrap_dim(*dim, z->dim(), "prod");
    rows = as_contiguous(ops::movedim(z, Shape{d}, Shape{-1}));
    shape = z->sizes();
    if (keepdim) shape[d] = 1;
    else shape.erase(shape.begin() + d);
  } else {
    rows = as_contiguous(ops::reshape(z, Shape{-1}));
    if (keepdim) shape.assign(z->dim(), 1);
  }
  const int64_t n = rows->dim() == 0 ? 1 : rows->size(-1);
  Tensor res = ember::empty(shape, z->dtype());
  dispatch_complex(z->dtype(), "prod", [&](auto tag) {
    using C = decltype(tag);
    const C* p = rows->data<C>();
    C* o = res->data<C>();
    parallel_for(0, res->numel(), std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)),
                 [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        C acc(1);
        for (int64_t k = 0; k < n; ++k) acc = acc * p[r * n + k];
        o[r] = acc;
      }
    });
  });
  return finish_out("prod", out, res);
}

}  // namespace

Tensor prod(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
            std::optional<ScalarType> dtype, const Tensor& out) {
  check_cpu(self, "prod");
  if (is_wide_unsigned(self->dtype())) return prod(to_dtype(self, ScalarType::Int64), dim, keepdim, dtype, out);
  if (is_complex(self->dtype()) && dtype && !is_complex(*dtype)) {  // PyTorch: the real parts
    return prod(to_dtype(self, *dtype), dim, keepdim, dtype, out);
  }
  if (is_complex(dtype.value_or(self->dtype()))) {
    return complex_prod(to_dtype(self, dtype.value_or(self->dtype())), dim, keepdim, out);
  }
  return sum_or_prod<true>("prod", self, prod_meta(self, dim, keepdim, dtype), keepdim, out);
}

}  // namespace cpu
}  // namespace ember
