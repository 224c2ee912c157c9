// float32 conv2d and its two gradients through oneDNN (docs/conv-algorithms.md: on the study's
// shapes oneDNN runs at 80-100% of the CPU's peak, against 45-65% for Ember's direct and
// im2col + GEMM kernels; it is also what PyTorch's CPU convolutions run), and bfloat16 ones on
// CPUs with AVX512-BF16 or AMX (float32 accumulation and one rounding, as Ember's kernels on
// widened copies give; the weight gradient is computed in float32 and rounded once).
//
// The library and its threads: backends/cpu/onednn.h. The batch is cut into one slice per pool
// thread, each a oneDNN call on its own. The gradient of the weight is summed over the slices'
// partial gradients in a fixed order (the result does not depend on which thread ran which
// slice). A batch smaller than the pool leaves oneDNN to Ember's kernels, which spread one
// image over the threads.
//
// Layouts: operands come in and go out as contiguous NCHW / OIHW; oneDNN picks its own blocked
// layouts (format_tag::any) and reorders convert at the boundary, per slice (the reorders
// cost 10-45% of a call at the study's sizes and still leave oneDNN 1.2-3.8x ahead).
// Primitives are made once per (pass, slice shape, geometry) and kept; every call passes its
// own scratchpad (user scratchpad mode), so one primitive serves several threads at once.
#include "ember/ops/conv/conv_onednn_cpu.h"

#include <algorithm>
#include <memory>
#include <tuple>

#include "ember/backends/cpu/onednn.h"
#include "ember/ops/ops_util.h"
#include "ember/runtime/parallel.h"

namespace ember::cpu {

#ifndef EMBER_HAVE_ONEDNN_HEADERS

Tensor onednn_conv2d(const Tensor&, const Tensor&, const Tensor&, const Conv2dMeta&) { return Tensor(); }
Tensor onednn_conv2d_backward_input(const Tensor&, const Tensor&, const Conv2dMeta&, bool) { return Tensor(); }
Tensor onednn_conv2d_backward_weight(const Tensor&, const Tensor&, const Conv2dMeta&) { return Tensor(); }

#else

namespace {

using namespace onednn;

// ---- plans: the primitives of one pass over one batch slice ----

enum class Pass { Forward, BackwardData, BackwardWeights };

struct Key {
  Pass pass;
  int64_t n, C, H, W, O, kh, kw, sh, sw, ph, pw, dh, dw, groups;
  bool bias, bf16;  // bf16: bfloat16 operands (float32 accumulation; the weight gradient in float32)
  bool wide_result;  // bfloat16 backward data writing a float32 input gradient
  auto tie() const {
    return std::tie(pass, n, C, H, W, O, kh, kw, sh, sw, ph, pw, dh, dw, groups, bias, bf16, wide_result);
  }
  bool operator<(const Key& o) const { return tie() < o.tie(); }
};

// A reorder between a user's plain layout and oneDNN's (none when they are equal).
struct Reorder {
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_primitive_t prim = nullptr;
  size_t scratch = 0;
};

// One operand of the convolution: its plain NCHW/OIHW form, the form the primitive wants, and
// the reorder between them (into the primitive for inputs, out of it for outputs).
struct Operand {
  dnnl_memory_desc_t plain = nullptr;
  const_dnnl_memory_desc_t chosen = nullptr;  // owned by the plan's primitive descriptor
  Reorder reorder;
  size_t bytes = 0;  // of the chosen layout
};

struct Plan {
  bool ok = false;
  dnnl_primitive_desc_t pd = nullptr, hint = nullptr;  // hint: the forward pd a backward one needs
  dnnl_primitive_t prim = nullptr;
  Operand x, w, y;  // input (or its gradient), weight (or its gradient), output (or its gradient)
  dnnl_memory_desc_t b = nullptr;
  size_t scratch = 0;

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    const Api& a = api();
    for (Operand* o : {&x, &w, &y}) {
      if (o->reorder.prim) a.dnnl_primitive_destroy(o->reorder.prim);
      if (o->reorder.pd) a.dnnl_primitive_desc_destroy(o->reorder.pd);
      if (o->plain) a.dnnl_memory_desc_destroy(o->plain);
    }
    if (b) a.dnnl_memory_desc_destroy(b);
    if (prim) a.dnnl_primitive_destroy(prim);
    if (pd) a.dnnl_primitive_desc_destroy(pd);  // owns the chosen layouts
    if (hint) a.dnnl_primitive_desc_destroy(hint);
  }
};

// Fills op.chosen from the primitive and makes the reorder (plain -> chosen when `into`).
bool finish_operand(Operand& op, const_dnnl_primitive_desc_t pd, dnnl_query_t what, bool into) {
  op.chosen = api().dnnl_primitive_desc_query_md(pd, what, 0);
  if (!op.chosen) return false;
  op.bytes = api().dnnl_memory_desc_get_size(op.chosen);
  if (api().dnnl_memory_desc_equal(op.plain, op.chosen)) return true;
  const_dnnl_memory_desc_t from = into ? op.plain : op.chosen, to = into ? op.chosen : op.plain;
  dnnl_engine_t e = engine();
  if (api().dnnl_reorder_primitive_desc_create(&op.reorder.pd, from, e, to, e, user_scratchpad_attr()) != dnnl_success)
    return false;
  op.reorder.scratch = scratchpad_bytes(op.reorder.pd);
  return api().dnnl_primitive_create(&op.reorder.prim, op.reorder.pd) == dnnl_success;
}

// Makes the plan; ok stays false where oneDNN has no implementation (Ember's kernels run then).
void make_plan(Plan& p, const Key& k) {
  const Api& a = api();
  dnnl_engine_t e = engine();
  const int64_t oh = ConvGeometry{k.kh, k.kw, k.dh, k.dw, k.ph, k.pw, k.sh, k.sw}.oh(k.H);
  const int64_t ow = ConvGeometry{k.kh, k.kw, k.dh, k.dw, k.ph, k.pw, k.sh, k.sw}.ow(k.W);
  const dnnl_dims_t xd = {k.n, k.C, k.H, k.W}, yd = {k.n, k.O, oh, ow};
  const dnnl_dims_t wd4 = {k.O, k.C, k.kh, k.kw}, wd5 = {k.groups, k.O / k.groups, k.C / k.groups, k.kh, k.kw};
  const dnnl_dims_t bd = {k.O};
  const dnnl_dims_t strides = {k.sh, k.sw}, dil = {k.dh - 1, k.dw - 1}, pad = {k.ph, k.pw};
  const bool grouped = k.groups > 1;
  // the layouts oneDNN may choose; wf, xf: the weight and input of the forward descriptor (for
  // the backward passes, the hint), of the operands' type also when a gradient is float32
  dnnl_memory_desc_t xa = nullptr, wa = nullptr, ya = nullptr, wf = nullptr, xf = nullptr;
  const dnnl_data_type_t dt = k.bf16 ? dnnl_bf16 : dnnl_f32;
  // the weight gradient stays float32: the slices' partial gradients are summed before one rounding
  const dnnl_data_type_t wdt = k.pass == Pass::BackwardWeights ? dnnl_f32 : dt;
  // the input (gradient): float32 for a backward data pass asked to widen its result
  const dnnl_data_type_t xdt = k.wide_result ? dnnl_f32 : dt;
  auto md = [&](dnnl_memory_desc_t* out, int nd, const dnnl_dims_t d, dnnl_data_type_t type, dnnl_format_tag_t tag) {
    return a.dnnl_memory_desc_create_with_tag(out, nd, d, type, tag) == dnnl_success;
  };
  const int wnd = grouped ? 5 : 4;
  const int64_t* wd = grouped ? wd5 : wd4;
  bool ok = md(&p.x.plain, 4, xd, xdt, dnnl_nchw) && md(&p.y.plain, 4, yd, dt, dnnl_nchw) &&
            md(&p.w.plain, wnd, wd, wdt, grouped ? dnnl_goihw : dnnl_oihw) &&
            md(&xa, 4, xd, xdt, dnnl_format_tag_any) && md(&ya, 4, yd, dt, dnnl_format_tag_any) &&
            md(&wa, wnd, wd, wdt, dnnl_format_tag_any) && md(&wf, wnd, wd, dt, dnnl_format_tag_any) &&
            md(&xf, 4, xd, dt, dnnl_format_tag_any) &&
            (!k.bias || md(&p.b, 1, bd, dt, dnnl_x));
  // the forward descriptor: the primitive itself for Forward, the hint for the backward passes
  if (ok) {
    dnnl_primitive_desc_t* fwd = k.pass == Pass::Forward ? &p.pd : &p.hint;
    ok = a.dnnl_convolution_forward_primitive_desc_create(
             fwd, e, dnnl_forward_training, dnnl_convolution_direct,
             xf, wf, k.pass == Pass::Forward ? p.b : nullptr, ya, strides, dil, pad, pad,
             k.pass == Pass::Forward ? user_scratchpad_attr() : nullptr) == dnnl_success;
  }
  if (ok && k.pass == Pass::BackwardData) {
    ok = a.dnnl_convolution_backward_data_primitive_desc_create(&p.pd, e, dnnl_convolution_direct, xa, wa, ya, strides,
                                                                dil, pad, pad, p.hint, user_scratchpad_attr()) ==
         dnnl_success;
  } else if (ok && k.pass == Pass::BackwardWeights) {
    ok = a.dnnl_convolution_backward_weights_primitive_desc_create(&p.pd, e, dnnl_convolution_direct, xa, wa, nullptr,
                                                                   ya, strides, dil, pad, pad, p.hint,
                                                                   user_scratchpad_attr()) == dnnl_success;
  }
  for (dnnl_memory_desc_t d : {xa, wa, ya, wf, xf}) {
    if (d) a.dnnl_memory_desc_destroy(d);
  }
  if (!ok) return;
  switch (k.pass) {
    case Pass::Forward:
      ok = finish_operand(p.x, p.pd, dnnl_query_src_md, true) && finish_operand(p.w, p.pd, dnnl_query_weights_md, true) &&
           finish_operand(p.y, p.pd, dnnl_query_dst_md, false);
      break;
    case Pass::BackwardData:
      ok = finish_operand(p.x, p.pd, dnnl_query_diff_src_md, false) &&
           finish_operand(p.w, p.pd, dnnl_query_weights_md, true) &&
           finish_operand(p.y, p.pd, dnnl_query_diff_dst_md, true);
      break;
    case Pass::BackwardWeights:
      ok = finish_operand(p.x, p.pd, dnnl_query_src_md, true) &&
           finish_operand(p.w, p.pd, dnnl_query_diff_weights_md, false) &&
           finish_operand(p.y, p.pd, dnnl_query_diff_dst_md, true);
      break;
  }
  if (!ok) return;
  p.scratch = scratchpad_bytes(p.pd);
  p.ok = a.dnnl_primitive_create(&p.prim, p.pd) == dnnl_success;
}

std::shared_ptr<const Plan> plan(const Key& k) {
  static PlanCache<Key, Plan> plans;
  return plans.get(k, make_plan);
}

// ---- running a plan ----

// `plain` points at the operand in NCHW/OIHW; returns where the primitive finds or leaves it:
// `plain` itself, or `buffer` (allocated here) in its chosen layout, filled when `into`.
void* stage(const char* op, const Operand& o, void* plain, Buffer& buffer, bool into) {
  if (!o.reorder.prim) return plain;
  buffer = Buffer(o.bytes);
  if (into) {
    Args a;
    a.add(DNNL_ARG_FROM, o.plain, plain);
    a.add(DNNL_ARG_TO, o.chosen, buffer.ptr);
    a.run(op, o.reorder.pd, o.reorder.prim, o.reorder.scratch);
  }
  return buffer.ptr;
}

void unstage(const char* op, const Operand& o, void* chosen, void* plain) {
  if (!o.reorder.prim) return;
  Args a;
  a.add(DNNL_ARG_FROM, o.chosen, chosen);
  a.add(DNNL_ARG_TO, o.plain, plain);
  a.run(op, o.reorder.pd, o.reorder.prim, o.reorder.scratch);
}

// One pass over one batch slice; x, w, y, b: the slice's operands in their plain layouts.
void run_slice(const char* op, Pass pass, const Plan& p, void* x, void* w, void* y, void* b) {
  Buffer xb(0), wb(0), yb(0);
  void* xc = stage(op, p.x, x, xb, pass != Pass::BackwardData);
  void* wc = stage(op, p.w, w, wb, pass != Pass::BackwardWeights);
  void* yc = stage(op, p.y, y, yb, pass != Pass::Forward);
  {
    Args a;
    switch (pass) {
      case Pass::Forward:
        a.add(DNNL_ARG_SRC, p.x.chosen, xc);
        a.add(DNNL_ARG_WEIGHTS, p.w.chosen, wc);
        if (b) a.add(DNNL_ARG_BIAS, p.b, b);
        a.add(DNNL_ARG_DST, p.y.chosen, yc);
        break;
      case Pass::BackwardData:
        a.add(DNNL_ARG_DIFF_SRC, p.x.chosen, xc);
        a.add(DNNL_ARG_WEIGHTS, p.w.chosen, wc);
        a.add(DNNL_ARG_DIFF_DST, p.y.chosen, yc);
        break;
      case Pass::BackwardWeights:
        a.add(DNNL_ARG_SRC, p.x.chosen, xc);
        a.add(DNNL_ARG_DIFF_WEIGHTS, p.w.chosen, wc);
        a.add(DNNL_ARG_DIFF_DST, p.y.chosen, yc);
        break;
    }
    a.run(op, p.pd, p.prim, p.scratch);
  }
  if (pass == Pass::Forward) unstage(op, p.y, yc, y);
  if (pass == Pass::BackwardData) unstage(op, p.x, xc, x);
  if (pass == Pass::BackwardWeights) unstage(op, p.w, wc, w);
}

// The batch cut into one slice per pool thread: `per` images each, the last one fewer.
struct Slices {
  int64_t per, count, last;
  explicit Slices(int64_t N) {
    const int64_t threads = in_parallel_region() ? 1 : std::max(1, get_num_threads());
    per = (N + threads - 1) / threads;
    count = (N + per - 1) / per;
    last = N - (count - 1) * per;
  }
};

// Whether oneDNN takes this call: loaded and switched on, float32 (or bfloat16 on a CPU that
// computes it: AVX512-BF16 or AMX), no empty dims, not depthwise, not a 1x1
// stride-1 unpadded convolution (that is one matrix product on the plain layout, which Ember's
// GEMM does as fast or faster: 0.56 against 0.68 ms forward for 16x256x16x16 -> 64), at least
// 64 output positions per image, and a batch that gives every pool thread an image. Smaller
// outputs (the deep layers of a network at small input sizes: ResNet-50's last two stages at
// 64x64) run faster as Ember's matrix products with the batch folded in, one product for the
// whole batch, than as a oneDNN call per slice that re-lays out the whole weight each time
// (docs/conv-algorithms.md); smaller batches: Ember's kernels spread one image over the threads.
bool takes(const Tensor& t, const Conv2dMeta& m) {
  const ScalarType dtype = t->dtype();
  if (dtype != ScalarType::Float32 && dtype != ScalarType::BFloat16) return false;
  if (m.N <= 0 || m.C <= 0 || m.O <= 0 || m.H <= 0 || m.W <= 0 || m.oh * m.ow < 64) return false;
  const ConvGeometry& g = m.g;
  if (g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0) return false;  // a plain product
  if (m.groups == m.C) return false;  // depthwise: Ember's own kernel (on widened copies for bfloat16)
  const int threads = in_parallel_region() ? 1 : get_num_threads();
  if (m.N < threads) return false;
  return onednn_takes(dtype == ScalarType::BFloat16);
}

// An operand's bytes from image n0 on, `per_image` elements of t's itemsize each (null for none).
char* at(const Tensor& t, int64_t n0, int64_t per_image) {
  return t ? t->data<char>() + n0 * per_image * static_cast<int64_t>(t->itemsize()) : nullptr;
}

// The plans for the slices' sizes (made on this thread, under SerialOpenMP), or nulls when
// oneDNN has no implementation for one of them.
using Plans = std::pair<std::shared_ptr<const Plan>, std::shared_ptr<const Plan>>;

Plans plans_for(Pass pass, const Conv2dMeta& m, bool bias, ScalarType dtype, const Slices& s,
                bool wide_result = false) {
  const ConvGeometry& g = m.g;
  Key k{pass, s.per, m.C, m.H, m.W, m.O, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, m.groups, bias,
        dtype == ScalarType::BFloat16, wide_result};
  SerialOpenMP serial;
  std::shared_ptr<const Plan> full = plan(k);
  k.n = s.last;
  std::shared_ptr<const Plan> last = plan(k);
  if (!full->ok || !last->ok) return {};
  return {std::move(full), std::move(last)};
}

// Runs f(slice index, first image, plans' entry) for every slice on the pool.
template <typename F>
void over_slices(const Slices& s, const Plans& plans, F f) {
  parallel_for(0, s.count, 1, [&](int64_t begin, int64_t end) {
    SerialOpenMP serial;
    for (int64_t i = begin; i < end; ++i) f(i, i * s.per, i == s.count - 1 ? *plans.second : *plans.first);
  });
}

}  // namespace

Tensor onednn_conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dMeta& m) {
  if (!takes(input, m)) return Tensor();
  const Slices s(m.N);
  const auto plans = plans_for(Pass::Forward, m, static_cast<bool>(bias), input->dtype(), s);
  if (!plans.first) return Tensor();
  Tensor x = as_contiguous(input), w = as_contiguous(weight), b = bias ? as_contiguous(bias) : Tensor();
  Tensor y = empty({m.N, m.O, m.oh, m.ow}, input->dtype());
  over_slices(s, plans, [&](int64_t, int64_t n0, const Plan& p) {
    run_slice("conv2d", Pass::Forward, p, at(x, n0, m.C * m.H * m.W), at(w, 0, 0), at(y, n0, m.O * m.oh * m.ow),
              at(b, 0, 0));
  });
  return y;
}

Tensor onednn_conv2d_backward_input(const Tensor& grad_output, const Tensor& weight, const Conv2dMeta& m,
                                    bool float32_result) {
  // fewer than 4 input channels per group: oneDNN's backward-data kernels are slow there
  // (LeNet's first layer: 8x im2col's time, docs/conv-algorithms.md)
  if (m.C / m.groups < 4 || !takes(grad_output, m)) return Tensor();
  const bool wide = float32_result && grad_output->dtype() == ScalarType::BFloat16;
  const Slices s(m.N);
  const auto plans = plans_for(Pass::BackwardData, m, false, grad_output->dtype(), s, wide);
  if (!plans.first) return Tensor();
  Tensor gy = as_contiguous(grad_output), w = as_contiguous(weight);
  Tensor gx = empty({m.N, m.C, m.H, m.W}, wide ? ScalarType::Float32 : grad_output->dtype());
  over_slices(s, plans, [&](int64_t, int64_t n0, const Plan& p) {
    run_slice("conv2d_backward_input", Pass::BackwardData, p, at(gx, n0, m.C * m.H * m.W), at(w, 0, 0),
              at(gy, n0, m.O * m.oh * m.ow), nullptr);
  });
  return gx;
}

Tensor onednn_conv2d_backward_weight(const Tensor& grad_output, const Tensor& input, const Conv2dMeta& m) {
  if (!takes(grad_output, m)) return Tensor();
  const Slices s(m.N);
  const auto plans = plans_for(Pass::BackwardWeights, m, false, grad_output->dtype(), s);
  if (!plans.first) return Tensor();
  Tensor gy = as_contiguous(grad_output), x = as_contiguous(input);
  const int64_t wn = m.O * (m.C / m.groups) * m.g.kh * m.g.kw;
  // every slice's partial gradient in float32, summed below in slice order, rounded once
  Tensor parts = empty({s.count, wn}, ScalarType::Float32);
  over_slices(s, plans, [&](int64_t i, int64_t n0, const Plan& p) {
    run_slice("conv2d_backward_weight", Pass::BackwardWeights, p, at(x, n0, m.C * m.H * m.W), at(parts, i, wn),
              at(gy, n0, m.O * m.oh * m.ow), nullptr);
  });
  Tensor gw = empty({m.O, m.C / m.groups, m.g.kh, m.g.kw}, ScalarType::Float32);
  float *gwp = gw->data<float>(), *pp = parts->data<float>();
  std::copy(pp, pp + wn, gwp);
  for (int64_t i = 1; i < s.count; ++i) {
    const float* part = pp + i * wn;
    for (int64_t j = 0; j < wn; ++j) gwp[j] += part[j];
  }
  return conv_cast(gw, grad_output->dtype());
}

#endif  // EMBER_HAVE_ONEDNN_HEADERS

}  // namespace ember::cpu
