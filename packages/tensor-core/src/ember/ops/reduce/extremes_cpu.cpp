// CPU kernels of max / min of all elements and amax / amin, on the engine of reduce_cpu.h: a NaN
// wins. (The ops that also give indices are in arg_extremes_cpu.cpp.)
#include "ember/ops/reduce/reduce_cpu.h"

namespace ember {
namespace cpu {

// ---------------------------------------------------------------------------------------------
// max, min (all elements), amax, amin

namespace {

// The values of max / min / amax / amin (M from reduce_meta.h).
template <bool Max> Tensor extreme(const char* op, const Tensor& self, const ReductionMeta& M, bool keepdim,
                                   const Tensor& out) {
  Plan P = make_plan(self, M.dims, keepdim);
  Tensor res = result_for(op, self, out, M.shape, M.dtype);
  dispatch_all(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    with_result<T>(res, [&](auto* o) { run_reduction(ExtremeOp<compute_t<T>, Max>{{}, o}, P); });
  });
  return finish_out(op, out, res);
}

template <bool Max>
Tensor amax_amin(const char* op, const Tensor& self, const Shape& dim, bool keepdim, const Tensor& out) {
  check_cpu(self, op);
  return extreme<Max>(op, self, amax_amin_meta(op, self, dim, keepdim), keepdim, out);
}

}  // namespace

Tensor max_all(const Tensor& self) {
  check_cpu(self, "max");
  return extreme<true>("max", self, extreme_all_meta("max", self), false, Tensor());
}

Tensor min_all(const Tensor& self) {
  check_cpu(self, "min");
  return extreme<false>("min", self, extreme_all_meta("min", self), false, Tensor());
}

Tensor amax(const Tensor& self, const Shape& dim, bool keepdim, const Tensor& out) {
  return amax_amin<true>("amax", self, dim, keepdim, out);
}

Tensor amin(const Tensor& self, const Shape& dim, bool keepdim, const Tensor& out) {
  return amax_amin<false>("amin", self, dim, keepdim, out);
}

}  // namespace cpu
}  // namespace ember
