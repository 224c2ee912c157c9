"""ember_autograd.gradcheck / gradgradcheck: pass on correct gradients, fail (with PyTorch's
messages) on wrong ones, PyTorch's interface and defaults."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import torch

import ember_autograd as ea
import ember_tensor as et
from ember_autograd import gradcheck, gradgradcheck
from ember_autograd.gradcheck import GradcheckError

MISMATCH = "^Jacobian mismatch for output {} with respect to input {},"


def _t(shape, seed=0, lo=-1.0, hi=1.0, grad=True):
    a = np.random.default_rng(seed).uniform(lo, hi, size=shape)
    t = et.from_numpy(a)
    return t.requires_grad_() if grad else t


def _has_forward_ad() -> bool:
    return all(hasattr(ea.forward_ad, n) for n in ("dual_level", "make_dual", "unpack_dual"))


# ----------------------------------------------------------------------------- passing


def test_public_names():
    assert ea.gradcheck is gradcheck and ea.gradgradcheck is gradgradcheck
    assert issubclass(GradcheckError, RuntimeError)


@pytest.mark.parametrize(
    "fn, inputs",
    [
        (lambda x: x.sin() * x, (_t((3, 4)),)),
        (lambda x, y: (x * y).exp(), (_t((3, 4)), _t((4,), 1))),
        (lambda x, n: x.pow(n), (_t((2, 3), lo=0.5), 3)),  # non-tensor arguments pass through
        (lambda x: (x.sum(), x.exp(), x.argmax()), (_t((2, 3)),)),  # several outputs
        (lambda x: x.sin(), (_t((4, 3)).detach().t().requires_grad_(),)),  # non-contiguous
        (lambda x: x * x, (_t(()),)),  # 0-d
        (lambda x, y: x.mm(y), (_t((2, 3)), _t((3, 2), 2, grad=False))),  # one input differentiated
        (lambda x: x.sort(1), (_t((3, 4)),)),  # named tuple output
    ],
)
def test_gradcheck_passes_on_correct_functions(fn, inputs):
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_single_tensor_input_and_inputs_restored():
    x = _t((3,))
    before = x.detach().clone().numpy()
    assert gradcheck(lambda t: t.tanh(), x)
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x.grad is None  # gradcheck does not accumulate into .grad


def test_gradcheck_on_noncontiguous_input_restores_its_storage():
    base = et.from_numpy(np.arange(12.0).reshape(3, 4) / 10)
    x = base[:, ::2].requires_grad_()
    assert not x.is_contiguous()
    assert gradcheck(lambda t: t.exp(), (x,))
    np.testing.assert_array_equal(base.numpy(), np.arange(12.0).reshape(3, 4) / 10)


def test_fast_mode_and_flags_accepted():
    x = _t((2, 3))
    assert gradcheck(lambda t: t.cos(), (x,), fast_mode=True, check_batched_grad=True,
                     check_grad_dtypes=True, nondet_tol=1e-12, masked=False)
    assert gradgradcheck(lambda t: t.cos(), (x,), fast_mode=True)


def test_gradgradcheck_grad_outputs():
    x = _t((2, 3))
    go = _t((2, 3), 5)
    assert gradgradcheck(lambda t: t.sin() * t, (x,), (go,))
    assert gradgradcheck(lambda t: t.sin() * t, (x,), gen_non_contig_grad_outputs=True)


def test_locally_constant_function_without_differentiable_outputs():
    x = _t((3,))
    assert gradcheck(lambda t: t.argmax(), (x,))
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda t: t.detach() * 2, (x,))
    assert gradcheck(lambda t: t.detach() * 2, (x,), raise_exception=False) is False


def test_no_input_requires_grad():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda t: t * 2, (_t((3,), grad=False),))


def test_forward_ad_check_passes():
    if not _has_forward_ad():
        pytest.skip("forward_ad not implemented")
    x, y = _t((3, 4)), _t((4,), 1)
    assert gradcheck(lambda a, b: (a * b).sin(), (x, y), check_forward_ad=True)
    assert gradcheck(lambda a, b: (a * b).sin(), (x, y), check_forward_ad=True,
                     check_backward_ad=False)


def test_neither_mode_is_an_error():
    with pytest.raises(ValueError, match="check_forward_ad or check_backward_ad"):
        gradcheck(lambda t: t * 2, (_t((3,)),), check_backward_ad=False)


# ----------------------------------------------------------------------------- failing


def test_wrong_formula_fails_with_message(patch_derivative):
    x = _t((2, 3))
    assert gradcheck(lambda t: t.sin(), (x,))
    patch_derivative("self: grad * self.cos().conj()", "self: grad * self.cos() * 1.01", ["sin"])
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda t: t.sin(), (x,))
    msg = str(info.value)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "\nanalytical:" in msg
    # the reported Jacobians are the real ones: numerical cos(x), analytical 1.01 cos(x)
    cos = np.cos(x.detach().numpy().reshape(-1))
    assert f"{cos[0]:.4f}" in msg and f"{1.01 * cos[0]:.4f}" in msg
    assert gradcheck(lambda t: t.sin(), (x,), raise_exception=False) is False
    # a loose tolerance accepts it
    assert gradcheck(lambda t: t.sin(), (x,), rtol=0.05)


def test_wrong_formula_reports_the_input(patch_derivative):
    patch_derivative("other: grad * conjugate(self)\n", "other: grad * self * 2\n", ["mul"])
    x, y = _t((2, 3)), _t((2, 3), 1)
    with pytest.raises(GradcheckError, match=MISMATCH.format(0, 1)):
        gradcheck(lambda a, b: a * b, (x, y))
    # only the first input differentiated: nothing wrong is seen
    assert gradcheck(lambda a, b: a * b, (x, y.detach()))


def test_wrong_output_index_reported(patch_derivative):
    patch_derivative("self: grad * result.conj()\n", "self: grad * result * 0.5\n", ["exp"])
    x = _t((3,))
    with pytest.raises(GradcheckError, match=MISMATCH.format(1, 0)):
        gradcheck(lambda t: (t.sin(), t.exp()), (x,))


def test_gradgradcheck_catches_a_non_differentiable_backward(patch_derivative):
    """A backward formula right at first order whose own derivative is lost (detach)."""
    x = _t((2, 3))
    patch_derivative("self: grad * self.cos().conj()", "self: grad * self.detach().cos()", ["sin"])
    assert gradcheck(lambda t: t.sin(), (x,))
    with pytest.raises(GradcheckError, match=MISMATCH.format(0, 0)):
        gradgradcheck(lambda t: t.sin(), (x,))
    assert gradgradcheck(lambda t: t.sin(), (x,), raise_exception=False) is False


def test_nondeterministic_backward_fails_reentrancy(patch_derivative):
    patch_derivative("self: grad * self.cos().conj()",
                     "self: grad * self.cos() + et.rand_like(grad) * 1e-10", ["sin"])
    x = _t((2, 3))
    with pytest.raises(GradcheckError, match="^Backward is not reentrant"):
        gradcheck(lambda t: t.sin(), (x,))
    assert gradcheck(lambda t: t.sin(), (x,), nondet_tol=1e-8)


def test_wrong_forward_formula_fails(patch_derivative):
    if not _has_forward_ad():
        pytest.skip("forward_ad not implemented")
    patch_derivative("\n  result: other_t * self + self_t * other\n",
                     "\n  result: other_t * self + self_t * other * 3\n", ["mul"])
    x, y = _t((2, 3)), _t((2, 3), 1)
    assert gradcheck(lambda a, b: a * b, (x, y))  # reverse mode is untouched
    with pytest.raises(GradcheckError, match="^Jacobian computed with forward mode mismatch for "
                                             "output 0 with respect to input 0,"):
        gradcheck(lambda a, b: a * b, (x, y), check_forward_ad=True)


def test_patched_rules_are_restored():
    x = _t((2, 3))
    assert gradcheck(lambda t: t.sin(), (x,))
    assert gradcheck(lambda a, b: a * b, (x, _t((2, 3), 1)), check_forward_ad=_has_forward_ad())


# ----------------------------------------------------------------------------- warnings, interface


def test_float32_inputs_warn():
    x = _t((3,)).detach().float().requires_grad_()
    msg = "Input #0 requires gradient and is not a double precision"
    with pytest.warns(UserWarning, match=msg):
        gradcheck(lambda t: t * 2, (x,), raise_exception=False)
    y = _t((3,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradcheck(lambda t: t * 2, (y,))  # float64: no warning


@pytest.mark.parametrize("name", ["gradcheck", "gradgradcheck"])
def test_signature_matches_torch(name):
    ours = inspect.signature(getattr(ea, name)).parameters
    theirs = inspect.signature(getattr(torch.autograd, name)).parameters
    for p in theirs.values():
        if p.name in ("check_sparse_nnz", "check_batched_forward_grad"):
            continue
        assert p.name in ours, p.name
        assert ours[p.name].kind == p.kind, p.name
        assert ours[p.name].default == p.default, p.name
