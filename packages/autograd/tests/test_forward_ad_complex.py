"""Forward-mode AD through complex tensors: the tangents of the ops whose forward rules are
right for complex numbers (``complex_forward`` in derivatives.yaml: the linear ops, the
element-wise ones through their conjugated backward formulas, sgn's own rule, the product
rules, powers, the reductions and the decompositions) equal PyTorch's; an op without a
forward rule (linalg.eig) refuses with NotImplementedError."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import ember_autograd.forward_ad as fwAD
import ember_tensor as et

# torch's forward AD loads its decompositions through torch.jit.script on first use
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)

RNG = np.random.default_rng(31)


def _complex(shape):
    return RNG.uniform(0.2, 0.9, shape) + 1j * RNG.uniform(0.2, 0.9, shape)


def _pair(m, fw, primal, tangent):
    return fw.make_dual(m.tensor(primal), m.tensor(tangent))


def _tangent(m, fw, fn, primals, tangents):
    with fw.dual_level():
        duals = [_pair(m, fw, p, t) for p, t in zip(primals, tangents)]
        out = fn(m, *duals)
        outs = out if isinstance(out, (tuple, list)) else [out]
        return [fw.unpack_dual(o).tangent for o in outs]


def _hermitian(m, a):
    """A Hermitian positive definite matrix made of a (its tangent Hermitian too)."""
    return a @ a.mH + 3 * m.eye(a.shape[-1], dtype=a.dtype)


def _eigh_parts(m, a):
    values, vectors = m.linalg.eigh(_hermitian(m, a))
    return values, vectors.abs()


def _svd_parts(m, a):
    u, s, vh = m.linalg.svd(a, full_matrices=False)
    return s, u.abs(), vh.abs(), (u * s.unsqueeze(-2)) @ vh


OPS = {
    # element-wise, holomorphic
    "exp": (lambda m, z: m.exp(z), 1), "log": (lambda m, z: m.log(z), 1),
    "sqrt": (lambda m, z: m.sqrt(z), 1), "sin": (lambda m, z: m.sin(z), 1),
    "tanh": (lambda m, z: m.tanh(z), 1), "sigmoid": (lambda m, z: m.sigmoid(z), 1),
    "reciprocal": (lambda m, z: m.reciprocal(z), 1), "square": (lambda m, z: m.square(z), 1),
    "atanh": (lambda m, z: m.atanh(z), 1),
    # element-wise, real results of complex input
    "abs": (lambda m, z: m.abs(z), 1), "angle": (lambda m, z: m.angle(z), 1),
    # linear
    "conj": (lambda m, z: m.conj(z) * 1, 1), "real": (lambda m, z: m.real(z) * 1, 1),
    "imag": (lambda m, z: m.imag(z) * 1, 1), "neg": (lambda m, z: -z, 1),
    "sum": (lambda m, z: z.sum(0), 1), "mean": (lambda m, z: z.mean(), 1),
    "cumsum": (lambda m, z: z.cumsum(1), 1),
    "view_as_real": (lambda m, z: m.view_as_real(z) * 1, 1),
    "index": (lambda m, z: z[1:, ::2] * 1, 1), "cat": (lambda m, z: m.cat([z, z * 2]), 1),
    "fft": (lambda m, z: m.fft.fft(z), 1), "ifft2": (lambda m, z: m.fft.ifft2(z), 1),
    # products and quotients
    "mul": (lambda m, a, b: a * b, 2), "div": (lambda m, a, b: a / b, 2),
    "add_sub": (lambda m, a, b: (a + b * 2) - a * 1j, 2), "matmul": (lambda m, a, b: a @ b.mT, 2),
    "where": (lambda m, a, b: m.where(a.real > 0.5, a, b), 2),
    # element-wise, not holomorphic; powers; reductions with complex and real results
    "sgn": (lambda m, z: m.sgn(z), 1), "pow_number": (lambda m, z: z**2.5, 1),
    "pow_complex_number": (lambda m, z: z ** (0.5 - 1j), 1),
    "pow_tensors": (lambda m, a, b: a**b, 2), "number_pow": (lambda m, z: (1.5 + 1j) ** z, 1),
    "prod": (lambda m, z: z.prod(), 1), "prod_dim": (lambda m, z: z.prod(1), 1),
    "cumprod": (lambda m, z: z.cumprod(1), 1),
    "var": (lambda m, z: z.var(1), 1), "std": (lambda m, z: z.std(), 1),
    "addmm": (lambda m, a, b: m.addmm(a, a, b, beta=0.5 - 1j, alpha=2j), 2),
    # decompositions (outputs that do not depend on the eigen- / singular vectors' phases)
    "pinv": (lambda m, a: m.linalg.pinv(a), 1),
    "slogdet": (lambda m, a: m.linalg.slogdet(a + 2 * m.eye(3, dtype=a.dtype)), 1),
    "cholesky": (lambda m, a: m.linalg.cholesky(_hermitian(m, a)), 1),
    "qr": (lambda m, a: m.linalg.qr(a), 1),
    "qr_wide": (lambda m, a: m.linalg.qr(a[:2]), 1),
    "eigh_values_and_moduli": (lambda m, a: _eigh_parts(m, a), 1),
    "eigvalsh": (lambda m, a: m.linalg.eigvalsh(_hermitian(m, a)), 1),
    "svdvals": (lambda m, a: m.linalg.svdvals(a), 1),
    "svd": (lambda m, a: _svd_parts(m, a[:, :2]), 1),
    "inv": (lambda m, a: m.linalg.inv(a + 2 * m.eye(3, dtype=a.dtype)), 1),
    "det": (lambda m, a: m.linalg.det(a + 2 * m.eye(3, dtype=a.dtype)), 1),
    "solve": (lambda m, a, b: m.linalg.solve(a + 2 * m.eye(3, dtype=a.dtype), b), 2),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_complex_tangents_match_torch(name):
    fn, arity = OPS[name]
    shape = (3, 3)
    primals = [_complex(shape) for _ in range(arity)]
    tangents = [_complex(shape) - 0.5 for _ in range(arity)]
    got = _tangent(et, fwAD, fn, primals, tangents)
    want = _tangent(torch, tfw, fn, primals, tangents)
    for g, w in zip(got, want, strict=True):
        w = w.resolve_conj().numpy()
        assert g is not None
        assert g.is_complex() == np.iscomplexobj(w)
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-10, atol=1e-12)


def test_a_real_tangent_into_complex_ops_matches_torch():
    """A real dual through complex intermediates (rfft, then abs): the tangent is carried
    through the complex results, not dropped."""
    x, t = RNG.standard_normal(8), RNG.standard_normal(8)
    fn = lambda m, v: m.fft.rfft(v).abs()  # noqa: E731
    got = _tangent(et, fwAD, fn, [x], [t])[0]
    want = _tangent(torch, tfw, fn, [x], [t])[0]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_ops_without_forward_rules_refuse_complex_tangents():
    with fwAD.dual_level():
        z = fwAD.make_dual(et.tensor(_complex((3, 3))), et.tensor(_complex((3, 3))))
        with pytest.raises(NotImplementedError, match="linalg_eig"):
            et.linalg.eig(z)
