// CPU kernels of the statistics var / std and logsumexp, on the engine of reduce_cpu.h.
#include "ember/ops/reduce/reduce_cpu.h"

namespace ember {
namespace cpu {

// ---------------------------------------------------------------------------------------------
// var, std

namespace {

Tensor var_std(const char* op, const Tensor& self, const std::optional<Shape>& dim,
               std::optional<bool> unbiased, bool keepdim, std::optional<Scalar> correction,
               const Tensor& out, bool take_sqrt) {
  check_cpu(self, op);
  if (is_complex(self->dtype())) {
    return complex_var_std(op, self, dim, take_sqrt, out,
                           [&](const Tensor& x, const std::optional<Shape>& d, bool sq, const Tensor& o) {
                             return var_std(op, x, d, unbiased, keepdim, correction, o, sq);
                           });
  }
  const VarStdMeta M = var_std_meta(op, self, dim, unbiased, keepdim, correction);
  Plan P = make_plan(self, M.dims, keepdim);
  Tensor res = result_for(op, self, out, M.shape, M.dtype);
  dispatch_float(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    with_result<T>(res, [&](auto* o) { run_reduction(VarOp<compute_t<T>>{{}, o, M.dof, take_sqrt}, P); });
  });
  return finish_out(op, out, res);
}

}  // namespace

Tensor var(const Tensor& self, const std::optional<Shape>& dim, std::optional<bool> unbiased,
           bool keepdim, std::optional<Scalar> correction, const Tensor& out) {
  return var_std("var", self, dim, unbiased, keepdim, correction, out, false);
}

Tensor std(const Tensor& self, const std::optional<Shape>& dim, std::optional<bool> unbiased,
           bool keepdim, std::optional<Scalar> correction, const Tensor& out) {
  return var_std("std", self, dim, unbiased, keepdim, correction, out, true);
}

// ---------------------------------------------------------------------------------------------
// logsumexp

Tensor logsumexp(const Tensor& self, const Shape& dim, bool keepdim, const Tensor& out) {
  check_cpu(self, "logsumexp");
  const AccumulateMeta M = logsumexp_meta(self, dim, keepdim);
  Tensor x = to_dtype(self, M.input_dtype);
  Plan P = make_plan(x, M.dims, keepdim);
  Tensor res = result_for("logsumexp", self, out, M.shape, M.dtype);
  dispatch_float(x->dtype(), "logsumexp", [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    with_result<T>(res, [&](C* o) {
      if (!P.columns) {
        run_reduction(LogSumExpOp<C>{{}, o}, P);
        return;
      }
      // down columns the (max, sum) pairs would cost two exps an element: two passes instead
      using A = opmath_t<C>;
      const Tensor src = to_dtype(P.src, scalar_type_of<C>());
      const C* in = src->data<C>();
      const int64_t K = P.K, I = P.I, tiles = (I + kTile - 1) / kTile;
      parallel_for(0, P.O * tiles, std::max<int64_t>(1, kParallelGrain / (K * std::min(I, kTile))),
                   [&](int64_t b, int64_t e) {
        A m[kTile], s[kTile];
        for (int64_t it = b; it < e; ++it) {
          const int64_t oi = it / tiles, i0 = (it % tiles) * kTile, w = std::min(kTile, I - i0);
          simd_dispatch([&] { column_max_expsum(in + oi * K * I + i0, K, I, w, m, s); });
          for (int64_t j = 0; j < w; ++j) {
            o[oi * I + i0 + j] = static_cast<C>(std::isfinite(m[j]) ? std::log(s[j]) + m[j] : m[j]);
          }
        }
      });
    });
  });
  return finish_out("logsumexp", out, res);
}

}  // namespace cpu
}  // namespace ember
