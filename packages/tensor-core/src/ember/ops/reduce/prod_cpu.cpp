// CPU kernel of prod, on the engine of reduce_cpu.h (its own file: a product per input dtype
// is as long to compile as the sums of reduce_cpu.cpp).
#include "ember/ops/reduce/reduce_cpu.h"

namespace ember {
namespace cpu {

Tensor prod(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
            std::optional<ScalarType> dtype, const Tensor& out) {
  check_cpu(self, "prod");
  return sum_or_prod<true>("prod", self, prod_meta(self, dim, keepdim, dtype), keepdim, out);
}

}  // namespace cpu
}  // namespace ember
