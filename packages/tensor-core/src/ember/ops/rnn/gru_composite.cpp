// _gru_forward_ and _gru_backward_: one direction of a GRU layer over all its time steps,
// for ember_nn's single-node GRU direction (the input projections of all steps and the weight
// gradients are single matrix products there; what must go step by step is here). Written
// once in terms of other ops, so they run on every device; each step is one recurrent
// product and a few elementwise ops on row blocks, with no Python in between.
//
// Gates are stacked r|z|n along the last dim (PyTorch's layout). With gh = h_prev @ w_hh^T +
// b_hh: r, z = sigmoid(x[:, :2H] + gh[:, :2H]), n = tanh(x[:, 2H:] + r * gh[:, 2H:]),
// h = n + z * (h_prev - n).
#include <string>
#include <vector>

#include "ember/ops/ops_util.h"

namespace ember::ops {
namespace {

void expect_gru(const char* op, const char* name, const Tensor& t, const Shape& shape, const Tensor& like) {
  if (t->sizes() != shape || t->dtype() != like->dtype() || t->device() != like->device() || !t->is_contiguous()) {
    throw std::runtime_error(message(op, ": expected ", name, " to be a contiguous ", dtype_name(like->dtype()),
                                     " tensor of shape ", shape_str(shape), " on ", like->device().str(), ", got ",
                                     dtype_name(t->dtype()), " of shape ", shape_str(t->sizes()), " on ",
                                     t->device().str(), t->is_contiguous() ? "" : " (not contiguous)"));
  }
}

// (T, N, H) of a (T, N, 3H) tensor.
std::array<int64_t, 3> gru_dims(const char* op, const char* name, const Tensor& g) {
  if (g->dim() != 3 || g->size(2) % 3 != 0) {
    throw std::runtime_error(message(op, ": expected ", name, " of shape (T, N, 3 * H), got ", shape_str(g->sizes())));
  }
  if (!is_floating(g->dtype())) {
    throw std::runtime_error(message(op, ": expected floating-point tensors, got ", dtype_name(g->dtype())));
  }
  return {g->size(0), g->size(1), g->size(2) / 3};
}

const Scalar kOne = Scalar::from_int(1);

}  // namespace

std::vector<Tensor> _gru_forward_(const Tensor& x_proj, const Tensor& h0, const Tensor& w_hh, const Tensor& b_hh,
                                  bool reverse, const Tensor& acts, const Tensor& hidden_n, const Tensor& outs) {
  const char* op = "_gru_forward_";
  const auto [steps, N, H] = gru_dims(op, "x_proj", x_proj);
  expect_gru(op, "x_proj", x_proj, {steps, N, 3 * H}, x_proj);
  expect_gru(op, "h0", h0, {N, H}, x_proj);
  expect_gru(op, "w_hh", w_hh, {3 * H, H}, x_proj);
  if (b_hh) expect_gru(op, "b_hh", b_hh, {3 * H}, x_proj);
  expect_gru(op, "acts", acts, {steps, N, 3 * H}, x_proj);
  expect_gru(op, "hidden_n", hidden_n, {steps, N, H}, x_proj);
  expect_gru(op, "outs", outs, {steps, N, H}, x_proj);
  const Tensor w_t = t(w_hh);
  Tensor h = h0;
  for (int64_t i = 0; i < steps; ++i) {
    const int64_t step = reverse ? steps - 1 - i : i;
    const Tensor gh = b_hh ? addmm(b_hh, h, w_t, kOne, kOne, Tensor()) : mm(h, w_t, Tensor());
    const Tensor a = select(acts, 0, step), x = select(x_proj, 0, step), o = select(outs, 0, step);
    const Tensor rz = narrow(a, 1, 0, 2 * H), gh_n = narrow(gh, 1, 2 * H, H), n = narrow(a, 1, 2 * H, H);
    sigmoid(add(narrow(x, 1, 0, 2 * H), narrow(gh, 1, 0, 2 * H), kOne, rz), rz);
    const Tensor hn = select(hidden_n, 0, step);
    copy(hn, gh_n, false, hn);
    tanh(add(mul(narrow(rz, 1, 0, H), gh_n, n), narrow(x, 1, 2 * H, H), kOne, n), n);
    add(mul(sub(h, n, kOne, o), narrow(rz, 1, H, H), o), n, kOne, o);  // n + z (h_prev - n)
    h = o;
  }
  return {};
}

std::vector<Tensor> _gru_backward_(const Tensor& acts, const Tensor& hidden_n, const Tensor& outs, const Tensor& h0,
                                   const Tensor& w_hh, const Tensor& d_outs, bool reverse, const Tensor& dh,
                                   const Tensor& d_x, const Tensor& d_gh) {
  const char* op = "_gru_backward_";
  const auto [steps, N, H] = gru_dims(op, "acts", acts);
  expect_gru(op, "hidden_n", hidden_n, {steps, N, H}, acts);
  expect_gru(op, "outs", outs, {steps, N, H}, acts);
  expect_gru(op, "h0", h0, {N, H}, acts);
  expect_gru(op, "w_hh", w_hh, {3 * H, H}, acts);
  if (d_outs) expect_gru(op, "d_outs", d_outs, {steps, N, H}, acts);
  expect_gru(op, "dh", dh, {N, H}, acts);
  expect_gru(op, "d_x", d_x, {steps, N, 3 * H}, acts);
  expect_gru(op, "d_gh", d_gh, {steps, N, 3 * H}, acts);
  for (int64_t i = 0; i < steps; ++i) {
    const int64_t step = reverse ? i : steps - 1 - i;  // backward order: the forward's last first
    const int64_t before = reverse ? step + 1 : step - 1;
    if (d_outs) add(dh, select(d_outs, 0, step), kOne, dh);
    const Tensor a = select(acts, 0, step);
    const Tensor r = narrow(a, 1, 0, H), z = narrow(a, 1, H, H), n = narrow(a, 1, 2 * H, H);
    const Tensor h_prev = i + 1 == steps ? h0 : select(outs, 0, before);
    const Tensor dx = select(d_x, 0, step), dg = select(d_gh, 0, step);
    const Tensor d_r = narrow(dx, 1, 0, H), d_z = narrow(dx, 1, H, H), d_n = narrow(dx, 1, 2 * H, H);
    // through h = n + z (h_prev - n), then tanh: d_n = dh (1 - z) (1 - n^2)
    const Tensor dh_z = mul(dh, z, Tensor());  // also the previous h's direct share
    sub(dh, dh_z, kOne, d_n);
    sub(d_n, mul(mul(n, n, Tensor()), d_n, Tensor()), kOne, d_n);
    // d_z = dh (h_prev - n) z (1 - z), d_r = d_n hidden_n r (1 - r)
    mul(mul(sub(h_prev, n, kOne, d_z), dh, d_z), sub(z, mul(z, z, Tensor()), kOne, Tensor()), d_z);
    mul(mul(d_n, select(hidden_n, 0, step), d_r), sub(r, mul(r, r, Tensor()), kOne, Tensor()), d_r);
    // gh's gradient: r and z as x's, n's through r
    copy(narrow(dg, 1, 0, 2 * H), narrow(dx, 1, 0, 2 * H), false, narrow(dg, 1, 0, 2 * H));
    mul(d_n, r, narrow(dg, 1, 2 * H, H));
    // the previous h: through the product and directly through z
    addmm(dh_z, dg, w_hh, kOne, kOne, dh);
  }
  return {};
}

}  // namespace ember::ops
