// bfloat16 products through oneDNN's matmul primitive (gemm_onednn_cpu.h). On an AMD EPYC
// (Zen 5, AVX512-BF16) its brgemm kernels ran at 290-440 GFLOP/s on one thread, against
// 85-100 for float32 products of widened copies and 210-360 for PyTorch's own bfloat16 matmul
// (docs/performance.md). Operands stay in the caller's layout (strided memory descriptors, no
// reorder); alpha is a runtime scale of the weights, beta a sum post-op. Primitives are made
// once per layout and kept (onednn::PlanCache); every call passes its own scratchpad.
#include "ember/ops/linalg/gemm_onednn_cpu.h"

#include "ember/backends/cpu/onednn.h"

#ifdef EMBER_HAVE_ONEDNN_HEADERS
#include <cstring>
#include <tuple>
#include <type_traits>
#endif

namespace ember::cpu {

#ifndef EMBER_HAVE_ONEDNN_HEADERS

bool onednn_gemm_bf16(bool, bool, int, int, int, float, const BFloat16*, int, const BFloat16*, int, float, float*,
                      int, int64_t, int64_t, int64_t, int64_t) {
  return false;
}
bool onednn_gemm_bf16(bool, bool, int, int, int, float, const BFloat16*, int, const BFloat16*, int, float,
                      BFloat16*, int, int64_t, int64_t, int64_t, int64_t) {
  return false;
}

#else

namespace {

using namespace onednn;

struct Key {
  bool ta, tb, scaled, c_bf16;  // scaled: alpha != 1; c_bf16: a bfloat16 C (else float32)
  int M, N, K, lda, ldb, ldc;
  float beta;
  int64_t batch, a_bs, b_bs, c_bs;
  auto tie() const { return std::tie(ta, tb, scaled, c_bf16, M, N, K, lda, ldb, ldc, beta, batch, a_bs, b_bs, c_bs); }
  bool operator<(const Key& o) const { return tie() < o.tie(); }
};

struct Plan {
  bool ok = false;
  dnnl_memory_desc_t a = nullptr, b = nullptr, c = nullptr, scale = nullptr;
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_primitive_t prim = nullptr;
  size_t scratch = 0;

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    const Api& x = api();
    for (dnnl_memory_desc_t d : {a, b, c, scale}) {
      if (d) x.dnnl_memory_desc_destroy(d);
    }
    if (prim) x.dnnl_primitive_destroy(prim);
    if (pd) x.dnnl_primitive_desc_destroy(pd);
  }
};

void make_plan(Plan& p, const Key& k) {
  const Api& x = api();
  // (batch, rows, cols) with the batch's stride; an operand shared by every product has a batch
  // dim of 1, which oneDNN broadcasts
  const int64_t ab = k.a_bs ? k.batch : 1, bb = k.b_bs ? k.batch : 1;
  const dnnl_dims_t ad = {ab, k.M, k.K}, bd = {bb, k.K, k.N}, cd = {k.batch, k.M, k.N}, one = {1};
  const dnnl_dims_t as = {k.a_bs ? k.a_bs : int64_t{k.M} * k.K, k.ta ? 1 : k.lda, k.ta ? k.lda : 1};
  const dnnl_dims_t bs = {k.b_bs ? k.b_bs : int64_t{k.K} * k.N, k.tb ? 1 : k.ldb, k.tb ? k.ldb : 1};
  const dnnl_dims_t cs = {k.c_bs ? k.c_bs : int64_t{k.M} * k.ldc, k.ldc, 1};
  bool ok = x.dnnl_memory_desc_create_with_strides(&p.a, 3, ad, dnnl_bf16, as) == dnnl_success &&
            x.dnnl_memory_desc_create_with_strides(&p.b, 3, bd, dnnl_bf16, bs) == dnnl_success &&
            x.dnnl_memory_desc_create_with_strides(&p.c, 3, cd, k.c_bf16 ? dnnl_bf16 : dnnl_f32, cs) == dnnl_success &&
            x.dnnl_memory_desc_create_with_tag(&p.scale, 1, one, dnnl_f32, dnnl_a) == dnnl_success;
  if (!ok) return;
  dnnl_primitive_attr_t attr = user_scratchpad_attr(/*created=*/true);
  dnnl_post_ops_t post = nullptr;
  if (k.beta != 0.0f) {
    ok = x.dnnl_post_ops_create(&post) == dnnl_success &&
         x.dnnl_post_ops_append_sum(post, k.beta, 0, dnnl_data_type_undef) == dnnl_success &&
         x.dnnl_primitive_attr_set_post_ops(attr, post) == dnnl_success;
  }
  if (ok && k.scaled) ok = x.dnnl_primitive_attr_set_scales_mask(attr, DNNL_ARG_WEIGHTS, 0) == dnnl_success;
  ok = ok && x.dnnl_matmul_primitive_desc_create(&p.pd, engine(), p.a, p.b, nullptr, p.c, attr) == dnnl_success;
  if (post) x.dnnl_post_ops_destroy(post);
  x.dnnl_primitive_attr_destroy(attr);
  if (!ok) return;
  p.scratch = scratchpad_bytes(p.pd);
  p.ok = x.dnnl_primitive_create(&p.prim, p.pd) == dnnl_success;
}

template <typename Out>
bool gemm(bool ta, bool tb, int M, int N, int K, float alpha, const BFloat16* A, int lda, const BFloat16* B, int ldb,
          float beta, Out* C, int ldc, int64_t batch, int64_t a_bs, int64_t b_bs, int64_t c_bs) {
  if (beta != beta || !onednn_takes(/*bf16=*/true)) return false;  // a NaN beta cannot key the cache
  static PlanCache<Key, Plan> plans;
  if (batch == 1) a_bs = b_bs = c_bs = 0;  // one product: one plan whatever the strides
  const Key k{ta, tb, alpha != 1.0f, std::is_same_v<Out, BFloat16>, M, N, K, lda, ldb, ldc, beta, batch, a_bs, b_bs,
              c_bs};
  SerialOpenMP serial;
  std::shared_ptr<const Plan> p = plans.get(k, make_plan);
  if (!p->ok) return false;
  Args args;
  args.add(DNNL_ARG_SRC, p->a, const_cast<BFloat16*>(A));
  args.add(DNNL_ARG_WEIGHTS, p->b, const_cast<BFloat16*>(B));
  args.add(DNNL_ARG_DST, p->c, C);
  if (k.scaled) args.add(DNNL_ARG_ATTR_SCALES | DNNL_ARG_WEIGHTS, p->scale, &alpha);
  args.run("matmul", p->pd, p->prim, p->scratch);
  return true;
}

}  // namespace

bool onednn_gemm_bf16(bool ta, bool tb, int M, int N, int K, float alpha, const BFloat16* A, int lda,
                      const BFloat16* B, int ldb, float beta, float* C, int ldc, int64_t batch, int64_t a_bs,
                      int64_t b_bs, int64_t c_bs) {
  return gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, batch, a_bs, b_bs, c_bs);
}

bool onednn_gemm_bf16(bool ta, bool tb, int M, int N, int K, float alpha, const BFloat16* A, int lda,
                      const BFloat16* B, int ldb, float beta, BFloat16* C, int ldc, int64_t batch, int64_t a_bs,
                      int64_t b_bs, int64_t c_bs) {
  return gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, batch, a_bs, b_bs, c_bs);
}

#endif  // EMBER_HAVE_ONEDNN_HEADERS

}  // namespace ember::cpu
