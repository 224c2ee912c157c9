"""ember_autograd.functional against torch.autograd.functional: values, nesting of tuple
results and shapes, create_graph, strict-mode errors and argument errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.autograd.functional as TF

import ember_autograd
import ember_autograd.functional as F
import ember_tensor as et

RNG = np.random.default_rng(99)
# torch's forward AD (forward-mode jacobian) loads its decompositions through torch.jit.script
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)


def data(*shape):
    return RNG.uniform(0.3, 1.3, shape) * np.where(RNG.random(shape) < 0.5, -1, 1)


def to_lib(a, lib, requires_grad=False):
    if isinstance(a, tuple):
        return tuple(to_lib(x, lib, requires_grad) for x in a)
    if lib is torch:
        return torch.from_numpy(np.array(a)).requires_grad_(requires_grad)
    return et.from_numpy(np.array(a)).requires_grad_(requires_grad)


def assert_like(ours, theirs, rtol=1e-10, atol=1e-12):
    """Same nesting of tuples (or lists), same shapes and values."""
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs), f"expected a {type(theirs).__name__}, got {ours!r}"
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert_like(o, t, rtol, atol)
        return
    assert isinstance(ours, et.Tensor), f"expected a Tensor, got {type(ours).__name__}"
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.requires_grad == theirs.requires_grad
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol)


def both(api, fn, inputs, *args, **kwargs):
    """Runs ``api`` (a function name) of ember and of torch on the same data."""
    ours = getattr(F, api)(lambda *a: fn(et, *a), to_lib(inputs, et), *[
        to_lib(a, et) for a in args], **kwargs)
    theirs = getattr(TF, api)(lambda *a: fn(torch, *a), to_lib(inputs, torch), *[
        to_lib(a, torch) for a in args], **kwargs)
    return ours, theirs


# ----------------------------------------------------------------------------- functions

def f_vec(m, x):  # R^3 -> R^2
    return (x.sin() * x).narrow(0, 0, 2) * x.narrow(0, 2, 1) + x.narrow(0, 1, 2).exp()


def f_index(m, x):  # indexing: x[...] (its backward, getitem_backward, twice)
    return (x.sin() * x)[:2] * x[2] + x[1:].exp()


def f_mat(m, x):  # (2, 3) -> (3, 2): views and reductions
    return (x.t() * x.sum(1)).tanh() + x.mean(0, keepdim=True).t()


def f_two(m, x, y):  # ((2, 3), (3,)) -> ((2,), ())
    return x.matmul(y).sin(), (x * y).sum() / (y * y + 1.0).sum()


def f_bcast(m, x, y):  # broadcasting (3, 1) with (1, 4), then a view
    return (x * y - y / (x * x + 1.0)).t().reshape(-1)


def f_scalar(m, x):
    return (x.sin() * x).sum() + x.matmul(x) * x.prod()


def f_scalar_two(m, x, y):
    return (2 * x.pow(2) + 3 * y.pow(2)).sum() + (x * y.exp()).sum()


def f_poly(m, x, y):  # backward formulas that do not use saved outputs
    return (x * x * y).sum() + x.sin().matmul(y.cos())


# ----------------------------------------------------------------------------- vjp / jvp


@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp(create_graph):
    assert_like(*both("vjp", f_vec, data(3), data(2), create_graph=create_graph))
    assert_like(*both("vjp", f_mat, data(2, 3), data(3, 2), create_graph=create_graph))
    assert_like(*both("vjp", f_two, (data(2, 3), data(3)), (data(2), data()),
                      create_graph=create_graph))
    assert_like(*both("vjp", f_bcast, (data(3, 1), data(1, 4)), data(12),
                      create_graph=create_graph))
    # v omitted for a single-element output
    assert_like(*both("vjp", f_scalar, data(4), create_graph=create_graph))


@pytest.mark.parametrize("create_graph", [False, True])
def test_jvp(create_graph):
    assert_like(*both("jvp", f_vec, data(3), data(3), create_graph=create_graph))
    assert_like(*both("jvp", f_mat, data(2, 3), data(2, 3), create_graph=create_graph))
    assert_like(*both("jvp", f_two, (data(2, 3), data(3)), (data(2, 3), data(3)),
                      create_graph=create_graph))
    assert_like(*both("jvp", f_bcast, (data(3, 1), data(1, 4)), (data(3, 1), data(1, 4)),
                      create_graph=create_graph))
    assert_like(*both("jvp", lambda m, x: x.exp() * 3.0, data(1)))


def test_vjp_through_indexing():
    assert_like(*both("vjp", f_index, data(3), data(2)))
    assert_like(*both("jacobian", f_index, data(3)))


def test_double_backward_through_indexing():
    assert_like(*both("jvp", f_index, data(3), data(3)))
    assert_like(*both("hvp", lambda m, x: (x[0] * x[1:]).sum() * x[2], data(3), data(3)))


def test_jvp_matches_finite_differences():
    x, v = data(2, 3), data(2, 3)
    _, jv = F.jvp(lambda a: f_mat(et, a), et.from_numpy(x), et.from_numpy(v))
    eps = 1e-6
    hi = f_mat(et, et.from_numpy(x + eps * v)).numpy()
    lo = f_mat(et, et.from_numpy(x - eps * v)).numpy()
    np.testing.assert_allclose(jv.numpy(), (hi - lo) / (2 * eps), rtol=1e-6, atol=1e-8)


def test_create_graph_results_are_differentiable():
    x, v = data(3), data(2)
    ours = F.vjp(lambda a: f_vec(et, a), et.from_numpy(x).requires_grad_(),
                 et.from_numpy(v), create_graph=True)
    xt = torch.from_numpy(x).requires_grad_()
    theirs = TF.vjp(lambda a: f_vec(torch, a), xt, torch.from_numpy(v), create_graph=True)
    assert ours[1].requires_grad and theirs[1].requires_grad
    xe = et.from_numpy(x).requires_grad_()
    (g,) = ember_autograd.grad(
        F.vjp(lambda a: f_vec(et, a), xe, et.from_numpy(v), create_graph=True)[1].sum(), xe)
    (gt,) = torch.autograd.grad(theirs[1].sum(), xt)
    np.testing.assert_allclose(g.numpy(), gt.numpy(), rtol=1e-10)


def test_results_have_no_history_without_create_graph():
    x = et.from_numpy(data(3)).requires_grad_()
    out, g = F.vjp(lambda a: f_vec(et, a), x, et.ones(2, dtype=et.float64))
    assert not out.requires_grad and not g.requires_grad
    assert x.grad is None and x.requires_grad
    y = et.from_numpy(data(3))
    F.jacobian(lambda a: f_vec(et, a), y)
    assert not y.requires_grad


def test_works_under_no_grad():
    with ember_autograd.no_grad():
        ours = F.jacobian(lambda a: f_vec(et, a), et.from_numpy(np.array([0.5, -0.2, 0.9])))
        assert not ember_autograd.is_grad_enabled()
    theirs = TF.jacobian(lambda a: f_vec(torch, a),
                         torch.tensor([0.5, -0.2, 0.9], dtype=torch.float64))
    assert_like(ours, theirs)


# ----------------------------------------------------------------------------- jacobian


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian(create_graph, vectorize):
    kw = dict(create_graph=create_graph, vectorize=vectorize)
    ours, theirs = both("jacobian", f_vec, data(3), **kw)
    assert tuple(ours.shape) == (2, 3)  # R^3 -> R^2: (m, n)
    assert_like(ours, theirs)
    ours, theirs = both("jacobian", f_mat, data(2, 3), **kw)
    assert tuple(ours.shape) == (3, 2, 2, 3)
    assert_like(ours, theirs)
    assert_like(*both("jacobian", f_two, (data(2, 3), data(3)), **kw))
    assert_like(*both("jacobian", f_bcast, (data(3, 1), data(1, 4)), **kw))
    assert_like(*both("jacobian", lambda m, x: (x.sum(), x * 2.0), data(2), **kw))


def test_jacobian_forward_mode():
    for fn, inputs in [(f_vec, data(3)), (f_mat, data(2, 3)), (f_two, (data(2, 3), data(3))),
                       (f_bcast, (data(3, 1), data(1, 4)))]:
        ours, theirs = both("jacobian", fn, inputs, vectorize=True, strategy="forward-mode")
        assert_like(ours, theirs)
        # the same values as reverse mode (which nests in tuples, forward mode in lists)
        rev = F.jacobian(lambda *a, fn=fn: fn(et, *a), to_lib(inputs, et))
        assert_like(_as_lists(rev), ours)


def _as_lists(r):
    return [_as_lists(x) for x in r] if isinstance(r, tuple) else r


def test_jacobian_of_an_input_independent_output():
    # no strict: zeros for the input an output does not depend on
    assert_like(*both("jacobian", lambda m, x, y: x * 2.0, (data(3), data(2))))
    assert_like(*both("vjp", lambda m, x, y: x * 2.0, (data(3), data(2)), data(3)))


# ----------------------------------------------------------------------------- hessian


@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian(create_graph):
    ours, theirs = both("hessian", f_scalar, data(4), create_graph=create_graph)
    assert tuple(ours.shape) == (4, 4)
    assert_like(ours, theirs)
    ours, theirs = both("hessian", f_scalar_two, (data(2, 2), data(2, 2)),
                        create_graph=create_graph)
    assert tuple(ours[0][1].shape) == (2, 2, 2, 2)
    assert_like(ours, theirs)
    assert_like(*both("hessian", lambda m, x: (x.sin() * x).sum(), data(2, 3), vectorize=True))


def test_hessian_forward_over_reverse():
    cases = [(f_poly, (data(3), data(3))), (lambda m, x: (x.sin() * x * x).sum(), data(4))]
    for fn, inputs in cases:
        ours, theirs = both("hessian", fn, inputs, vectorize=True,
                            outer_jacobian_strategy="forward-mode")
        assert_like(ours, theirs)


def test_hessian_forward_over_reverse_through_saved_outputs():
    assert_like(*both("hessian", f_scalar_two, (data(3), data(3)), vectorize=True,
                      outer_jacobian_strategy="forward-mode"))


@pytest.mark.parametrize("create_graph", [False, True])
def test_vhp_hvp(create_graph):
    for api in ("vhp", "hvp"):
        assert_like(*both(api, f_scalar, data(4), data(4), create_graph=create_graph))
        assert_like(*both(api, f_scalar_two, (data(2), data(2)), (data(2), data(2)),
                          create_graph=create_graph))
        assert_like(*both(api, lambda m, x: x.exp().sum() * x.sum(), data(1),
                          create_graph=create_graph))  # v omitted: one element


# ----------------------------------------------------------------------------- errors


def same_error(api, fn, inputs, *args, **kwargs):
    """Both raise the same exception type with the same message (torch. -> ember.)."""
    with pytest.raises(Exception) as theirs:
        getattr(TF, api)(lambda *a: fn(torch, *a), to_lib(inputs, torch),
                         *[to_lib(a, torch) for a in args], **kwargs)
    with pytest.raises(Exception) as ours:
        getattr(F, api)(lambda *a: fn(et, *a), to_lib(inputs, et),
                        *[to_lib(a, et) for a in args], **kwargs)
    assert type(ours.value) is type(theirs.value)
    expected = str(theirs.value).replace("torch.", "ember.")
    assert str(ours.value) == expected
    return str(ours.value)


def ignores_y(m, x, y):
    return x * 2.0


def constant(m, x):
    return m.ones(2, dtype=m.float64)


def linear(m, x):
    return (x * 3.0).sum()


@pytest.mark.parametrize("api, fn, inputs, args, kwargs, part", [
    ("vjp", ignores_y, (data(3), data(2)), (data(3),), {}, "independent of input 1"),
    ("vjp", constant, data(3), (data(2),), {}, "does not require gradients"),
    ("jvp", constant, data(3), (data(3),), {}, "does not require gradients"),
    ("jvp", ignores_y, (data(3), data(2)), ((data(3), data(2)),), {}, "independent"),
    ("jacobian", ignores_y, (data(3), data(2)), (), {}, "Output 0 of the user-provided"),
    ("jacobian", constant, data(3), (), {}, "does not require gradients"),
    ("jacobian", lambda m, x: x * 2.0, data(3), (), {"create_graph": True},
     "when create_graph=True"),
    ("hessian", linear, data(3), (), {}, "jacobian of the user-provided function"),
    ("vhp", linear, data(3), (data(3),), {}, "jacobian of the user-provided function"),
    ("hvp", linear, data(3), (data(3),), {}, "jacobian of the user-provided function"),
    ("vhp", lambda m, x, y: (x * x).sum() + y.sum(), (data(2), data(2)), ((data(2), data(2)),),
     {}, "with respect to input 1"),
])
def test_strict_errors(api, fn, inputs, args, kwargs, part):
    message = same_error(api, fn, inputs, *args, strict=True, **kwargs)
    assert part in message


@pytest.mark.parametrize("api, fn, inputs, args, kwargs", [
    ("vjp", f_vec, data(3), (), {}),  # v omitted for a non-scalar output
    ("jvp", f_vec, data(3), (), {}),  # v omitted for a multi-element input
    ("hvp", f_scalar, data(3), (), {}),
    ("vjp", f_vec, data(3), (data(3),), {}),  # v of the wrong size
    ("jvp", f_two, (data(2, 3), data(3)), ((data(2, 3), data(2)),), {}),
    ("jvp", f_two, (data(2, 3), data(3)), ((data(2, 3),),), {}),  # wrong length
    ("vjp", f_vec, data(3), ((data(2), data(2)),), {}),
    ("hessian", f_vec, data(3), (), {}),  # more than one element
    ("hessian", f_two, (data(2, 3), data(3)), (), {}),  # a tuple
    ("vhp", f_vec, data(3), (data(3),), {}),
    ("hvp", f_two, (data(2, 3), data(3)), ((data(2, 3), data(3)),), {}),
    ("jacobian", f_vec, data(3), (), {"strategy": "sideways"}),
    ("jacobian", f_vec, data(3), (), {"strict": True, "vectorize": True}),
    ("hessian", f_scalar, data(3), (), {"outer_jacobian_strategy": "sideways"}),
])
def test_argument_errors(api, fn, inputs, args, kwargs):
    same_error(api, fn, inputs, *args, **kwargs)


def test_forward_mode_jacobian_errors():
    # these messages name the module: compare after the names
    def run(mod, lib, **kw):
        with pytest.raises(Exception) as info:
            mod.jacobian(lambda a: f_vec(lib, a), to_lib(data(3), lib),
                         strategy="forward-mode", **kw)
        return info

    for kw in [{}, {"vectorize": True, "create_graph": True}, {"vectorize": True, "strict": True}]:
        ours, theirs = run(F, et, **kw), run(TF, torch, **kw)
        assert type(ours.value) is type(theirs.value)
        assert str(ours.value).replace("ember.", "torch.").replace(" is only", " isonly") == str(
            theirs.value)


def test_non_tensor_inputs():
    for api in ("vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"):
        with pytest.raises(TypeError) as theirs:
            getattr(TF, api)(lambda x: x, (torch.ones(2), 3))
        with pytest.raises(TypeError) as ours:
            getattr(F, api)(lambda x: x, (et.ones(2), 3))
        assert str(ours.value) == str(theirs.value)
        with pytest.raises(TypeError) as theirs:
            getattr(TF, api)(lambda x: x, [torch.ones(2)])
        with pytest.raises(TypeError) as ours:
            getattr(F, api)(lambda x: x, [et.ones(2)])
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(TypeError, match="outputs of the user-provided function given to vjp"):
        F.vjp(lambda x: 3.0, et.ones(1))
