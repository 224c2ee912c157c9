// std(x, unbiased) and var(x, unbiased), PyTorch's overloads with a bool second argument,
// written once for every device: the moments over every element.
#include "ember/ops/ops_util.h"

namespace ember::ops {

Tensor std_unbiased(const Tensor& self, bool unbiased) {
  return std(self, std::nullopt, unbiased, false, std::nullopt, Tensor());
}

Tensor var_unbiased(const Tensor& self, bool unbiased) {
  return var(self, std::nullopt, unbiased, false, std::nullopt, Tensor());
}

}  // namespace ember::ops
