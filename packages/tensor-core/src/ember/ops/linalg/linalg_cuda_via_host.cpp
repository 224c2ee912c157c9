// CUDA kernels that need no device code of their own:
// - flip: a copy of a negatively strided view (the CUDA copy kernel reads any strides);
// - _scatter_reduce_flat (scatter_reduce's kernel): on the host for now, in its serial order
//   (a kernel with atomics would give up the CPU's order of floating-point sums);
// - linalg: the factorisations and solvers run on the host. The inputs are copied to the CPU
//   (which waits for the queued work), the CPU kernel computes, and the results are copied to
//   the input's device. Results, errors (ember.linalg.LinAlgError on singular or indefinite
//   input) and dtypes are the CPU's by construction. The cost is two transfers and a
//   synchronisation per call, which is small beside the O(n^3) work for the matrix sizes
//   these ops see in models; a cuSOLVER path can replace any of them without changing callers.
#include <tuple>

#include "ember/ops/ops_util.h"

namespace ember::cuda {

namespace {

// The results of a host computation, each moved to device.
Tensor on(const Device& device, const Tensor& t) { return to_device(t, device); }
template <typename... T> std::tuple<T...> on(const Device& device, const std::tuple<T...>& r) {
  return std::apply([&](const auto&... t) { return std::make_tuple(to_device(t, device)...); }, r);
}

}  // namespace

Tensor flip(const Tensor& self, const Shape& dims) {
  const Tensor src = ops::reversed_view(self, dims);
  Tensor out = ember::empty(self->sizes(), self->dtype(), self->device());
  if (out->numel() > 0) ops::copy(out, src, false, out);
  return out;
}

Tensor linalg_cholesky(const Tensor& A, bool upper) {
  return on(A->device(), cpu::linalg_cholesky(to_host(A), upper));
}
std::tuple<Tensor, Tensor> linalg_qr(const Tensor& A, const std::string& mode) {
  return on(A->device(), cpu::linalg_qr(to_host(A), mode));
}
std::tuple<Tensor, Tensor> geqrf(const Tensor& self) { return on(self->device(), cpu::geqrf(to_host(self))); }
std::tuple<Tensor, Tensor, Tensor> _linalg_getrf(const Tensor& self) {
  return on(self->device(), cpu::_linalg_getrf(to_host(self)));
}
std::tuple<Tensor, Tensor> linalg_eigh(const Tensor& A, const std::string& UPLO) {
  return on(A->device(), cpu::linalg_eigh(to_host(A), UPLO));
}
Tensor linalg_eigvalsh(const Tensor& A, const std::string& UPLO) {
  return on(A->device(), cpu::linalg_eigvalsh(to_host(A), UPLO));
}
std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices) {
  return on(A->device(), cpu::linalg_svd(to_host(A), full_matrices));
}
Tensor linalg_svdvals(const Tensor& A) { return on(A->device(), cpu::linalg_svdvals(to_host(A))); }
std::tuple<Tensor, Tensor> linalg_eig(const Tensor& A) { return on(A->device(), cpu::linalg_eig(to_host(A))); }
Tensor linalg_eigvals(const Tensor& A) { return on(A->device(), cpu::linalg_eigvals(to_host(A))); }
Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left) {
  return on(A->device(), cpu::linalg_solve(to_host(A), to_host(B), left));
}
Tensor linalg_inv(const Tensor& A) { return on(A->device(), cpu::linalg_inv(to_host(A))); }
Tensor linalg_det(const Tensor& A) { return on(A->device(), cpu::linalg_det(to_host(A))); }
std::tuple<Tensor, Tensor> linalg_slogdet(const Tensor& A) {
  return on(A->device(), cpu::linalg_slogdet(to_host(A)));
}
Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular) {
  return on(A->device(), cpu::linalg_solve_triangular(to_host(A), to_host(B), upper, left, unitriangular));
}
std::tuple<Tensor, Tensor, Tensor> linalg_ldl_factor_ex(const Tensor& A, bool hermitian, bool check_errors) {
  return on(A->device(), cpu::linalg_ldl_factor_ex(to_host(A), hermitian, check_errors));
}
Tensor _scatter_reduce_flat(const Tensor& self, const Tensor& offsets, const Tensor& src, const std::string& reduce,
                            bool include_self) {
  return on(self->device(), cpu::_scatter_reduce_flat(to_host(self), to_host(offsets), to_host(src), reduce,
                                                      include_self));
}
Tensor linalg_ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian) {
  return on(LD->device(), cpu::linalg_ldl_solve(to_host(LD), to_host(pivots), to_host(B), hermitian));
}

}  // namespace ember::cuda

EMBER_REGISTER_CUDA_KERNEL(flip);
EMBER_REGISTER_CUDA_KERNEL(linalg_cholesky);
EMBER_REGISTER_CUDA_KERNEL(linalg_qr);
EMBER_REGISTER_CUDA_KERNEL(geqrf);
EMBER_REGISTER_CUDA_KERNEL(_linalg_getrf);
EMBER_REGISTER_CUDA_KERNEL(linalg_eigh);
EMBER_REGISTER_CUDA_KERNEL(linalg_eigvalsh);
EMBER_REGISTER_CUDA_KERNEL(linalg_eig);
EMBER_REGISTER_CUDA_KERNEL(linalg_eigvals);
EMBER_REGISTER_CUDA_KERNEL(linalg_svd);
EMBER_REGISTER_CUDA_KERNEL(linalg_svdvals);
EMBER_REGISTER_CUDA_KERNEL(linalg_solve);
EMBER_REGISTER_CUDA_KERNEL(linalg_inv);
EMBER_REGISTER_CUDA_KERNEL(linalg_det);
EMBER_REGISTER_CUDA_KERNEL(linalg_slogdet);
EMBER_REGISTER_CUDA_KERNEL(linalg_solve_triangular);
EMBER_REGISTER_CUDA_KERNEL(linalg_ldl_factor_ex);
EMBER_REGISTER_CUDA_KERNEL(linalg_ldl_solve);
EMBER_REGISTER_CUDA_KERNEL(_scatter_reduce_flat);
