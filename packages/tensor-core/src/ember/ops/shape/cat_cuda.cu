// CUDA kernel of cat: the checks and result come from cat_meta.h (the CPU's too).
#include <vector>
#include "ember/backends/cuda/elementwise.cuh"
#include "ember/ops/index/index_meta.h"
#include "ember/ops/shape/cat_meta.h"

namespace ember::cuda {

using namespace ember::cuda_engine;

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim, const Tensor& out) {
  const CatMeta m = cat_meta(tensors, dim, out);
  const int64_t d = m.dim;
  // out's device, else the first input's that is not on the host (CPU 0-d tensors may join)
  Device device = out ? out->device() : Device{};
  for (size_t i = 0; !out && i < tensors.size(); ++i) {
    if (!is_on_cpu(tensors[i])) {
      device = tensors[i]->device();
      break;
    }
  }
  // write straight into out when it fits and does not alias an input
  Tensor res = cat_result(tensors, out, m, device);
  int64_t offset = 0;
  for (const Tensor* tp : m.used) {
    const Tensor& t = *tp;
    const int64_t len = t->sizes()[static_cast<size_t>(d)];
    if (len == 0) continue;
    Shape sz = res->sizes();
    sz[static_cast<size_t>(d)] = len;
    const int64_t start = res->offset() + offset * res->strides()[static_cast<size_t>(d)];
    Tensor slot = make_view(res, std::move(sz), res->strides(), start);
    ops::copy(slot, t, false, slot);
    offset += len;
  }
  return finish_out("cat", out, res);
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(cat);
