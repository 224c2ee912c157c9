// The LSTM cell's elementwise work as one pass each way: _lstm_cell_ (forward) and
// _lstm_cell_backward_ (backward), for ember_nn's single-node LSTM direction, which runs
// the recurrent matrix products itself. Both write into tensors the caller provides (the
// per-step slices of its (T, N, ...) buffers), so a step allocates nothing.
//
// Gates are stacked i|f|g|o along the last dim (PyTorch's layout); rows are independent.
#include <algorithm>
#include <string>
#include <vector>

#include "ember/ops_util.h"
#include "ember/parallel.h"
#include "ember/simd.h"
#include "ember/vec_math.h"

namespace ember::ops {
namespace {

// Every tensor contiguous, of one float dtype, with N rows; gates-like ones 4H wide and
// state-like ones H wide. Returns (N, H).
std::pair<int64_t, int64_t> check_cell(const char* op, const std::vector<std::pair<const char*, Tensor>>& gates,
                                       const std::vector<std::pair<const char*, Tensor>>& states) {
  const Tensor& ref = gates[0].second;
  if (ref->dim() != 2 || ref->size(1) % 4 != 0) {
    throw std::runtime_error(message(op, ": expected ", gates[0].first, " of shape (N, 4 * H), got ",
                                     shape_str(ref->sizes())));
  }
  const int64_t n = ref->size(0), h = ref->size(1) / 4;
  if (ref->dtype() != ScalarType::Float32 && ref->dtype() != ScalarType::Float64) {
    throw NotImplementedError(message(op, ": expected float32 or float64 tensors, got ", dtype_name(ref->dtype())));
  }
  auto check = [&](const char* name, const Tensor& t, int64_t width) {
    if (t->sizes() != Shape{n, width} || t->dtype() != ref->dtype() || !t->is_contiguous()) {
      throw std::runtime_error(message(op, ": expected ", name, " to be a contiguous ", dtype_name(ref->dtype()),
                                       " tensor of shape [", n, ", ", width, "], got ", dtype_name(t->dtype()),
                                       " of shape ", shape_str(t->sizes()),
                                       t->is_contiguous() ? "" : " (not contiguous)"));
    }
  };
  for (const auto& [name, t] : gates) check(name, t, 4 * h);
  for (const auto& [name, t] : states) check(name, t, h);
  return {n, h};
}

// One row of each, as functions with restrict pointers: with the gates, state and output
// rows all possibly overlapping, the vectoriser would otherwise keep the loops scalar.
template <typename T>
inline void cell_row(T* __restrict__ i, T* __restrict__ f, T* __restrict__ g, T* __restrict__ o,
                     const T* __restrict__ cp, T* __restrict__ cr, T* __restrict__ hr, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    const T ai = sigmoid_(i[k]), af = sigmoid_(f[k]), ag = tanh_(g[k]), ao = sigmoid_(o[k]);
    const T cn = af * cp[k] + ai * ag;
    i[k] = ai;
    f[k] = af;
    g[k] = ag;
    o[k] = ao;
    cr[k] = cn;
    hr[k] = ao * tanh_(cn);
  }
}

template <typename T>
inline void cell_backward_row(const T* __restrict__ i, const T* __restrict__ f, const T* __restrict__ g,
                              const T* __restrict__ o, const T* __restrict__ cr, const T* __restrict__ cp,
                              const T* __restrict__ dhr, T* __restrict__ dcr, T* __restrict__ di,
                              T* __restrict__ df, T* __restrict__ dg, T* __restrict__ d_o, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    const T tc = tanh_(cr[k]);
    const T dct = dcr[k] + dhr[k] * o[k] * (T(1) - tc * tc);
    d_o[k] = dhr[k] * tc * o[k] * (T(1) - o[k]);
    di[k] = dct * g[k] * i[k] * (T(1) - i[k]);
    df[k] = dct * cp[k] * f[k] * (T(1) - f[k]);
    dg[k] = dct * i[k] * (T(1) - g[k] * g[k]);
    dcr[k] = dct * f[k];
  }
}

template <typename F> void for_rows(int64_t n, int64_t h, F&& f) {
  // a row costs about 4 * h transcendental evaluations: a step of a usual batch is one task
  parallel_for(0, n, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(h, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) f(r);
  });
}

}  // namespace

std::vector<Tensor> _lstm_cell_(const Tensor& gates, const Tensor& c_prev, const Tensor& c, const Tensor& h) {
  const auto [n, hs] = check_cell("_lstm_cell_", {{"gates", gates}}, {{"c_prev", c_prev}, {"c", c}, {"h", h}});
  dispatch_real(gates->dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* G = gates->data<T>();
    const T* CP = c_prev->data<T>();
    T* C = c->data<T>();
    T* H = h->data<T>();
    for_rows(n, hs, [&](int64_t r) {
      T* i = G + r * 4 * hs;
      T* f = i + hs;
      T* g = f + hs;
      T* o = g + hs;
      const T* cp = CP + r * hs;
      T* cr = C + r * hs;
      T* hr = H + r * hs;
      simd_dispatch([&] { cell_row(i, f, g, o, cp, cr, hr, hs); });
    });
  });
  for (const Tensor* t : {&gates, &c, &h}) (*t)->storage()->bump_version();
  return {};
}

std::vector<Tensor> _lstm_cell_backward_(const Tensor& acts, const Tensor& c, const Tensor& c_prev, const Tensor& dh,
                                         const Tensor& dc, const Tensor& d_gates) {
  const auto [n, hs] = check_cell("_lstm_cell_backward_", {{"acts", acts}, {"d_gates", d_gates}},
                                  {{"c", c}, {"c_prev", c_prev}, {"dh", dh}, {"dc", dc}});
  dispatch_real(acts->dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* A = acts->data<T>();
    const T* C = c->data<T>();
    const T* CP = c_prev->data<T>();
    const T* DH = dh->data<T>();
    T* DC = dc->data<T>();
    T* DG = d_gates->data<T>();
    for_rows(n, hs, [&](int64_t r) {
      const T* i = A + r * 4 * hs;
      const T* f = i + hs;
      const T* g = f + hs;
      const T* o = g + hs;
      const T* cr = C + r * hs;
      const T* cp = CP + r * hs;
      const T* dhr = DH + r * hs;
      T* dcr = DC + r * hs;
      T* di = DG + r * 4 * hs;
      T* df = di + hs;
      T* dg = df + hs;
      T* d_o = dg + hs;
      simd_dispatch([&] { cell_backward_row(i, f, g, o, cr, cp, dhr, dcr, di, df, dg, d_o, hs); });
    });
  });
  for (const Tensor* t : {&dc, &d_gates}) (*t)->storage()->bump_version();
  return {};
}

}  // namespace ember::ops
