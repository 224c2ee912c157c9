// CPU kernels of all and any (every / some element nonzero), on the engine of reduce_cpu.h.
#include "ember/ops/reduce/reduce_cpu.h"

namespace ember {
namespace cpu {

namespace {

template <bool All>
Tensor all_any(const char* op, const Tensor& self, const std::optional<Shape>& dim, bool keepdim,
               const Tensor& out) {
  check_cpu(self, op);
  const AccumulateMeta M = all_any_meta(op, self, dim, keepdim, out);
  Plan P = make_plan(self, M.dims, keepdim);
  Tensor res = result_for(op, self, out, M.shape, M.dtype);
  dispatch_all_and_unsigned(self->dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, uint8_t>) {  // uint8 inputs give uint8 results
      if (M.dtype == ScalarType::UInt8) {
        run_reduction(AllAnyOp<T, uint8_t, All>{{}, res->data<uint8_t>()}, P);
        return;
      }
    }
    run_reduction(AllAnyOp<compute_t<T>, bool, All>{{}, res->data<bool>()}, P);
  });
  return finish_out(op, out, res);
}

}  // namespace

Tensor all(const Tensor& self, const std::optional<Shape>& dim, bool keepdim, const Tensor& out) {
  return all_any<true>("all", self, dim, keepdim, out);
}

Tensor any(const Tensor& self, const std::optional<Shape>& dim, bool keepdim, const Tensor& out) {
  return all_any<false>("any", self, dim, keepdim, out);
}

}  // namespace cpu
}  // namespace ember
