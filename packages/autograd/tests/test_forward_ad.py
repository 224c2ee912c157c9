"""Forward-mode AD (ember_autograd.forward_ad) against torch.autograd.forward_ad and finite
differences: the dual-tensor API and its errors, tangents through elementwise ops,
broadcasting, reductions, matrix products, views and in-place writes, nested levels, and the
mixes with reverse mode."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import ember_autograd
import ember_autograd.forward_ad as fwAD
import ember_tensor as et

RNG = np.random.default_rng(1234)
# torch's forward AD loads its decompositions through torch.jit.script on first use
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)


def E(a):
    return et.from_numpy(np.ascontiguousarray(a))


def T(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def N(t):
    if t is None:
        return None
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def mixed(*shape):
    """Values away from 0 with both signs (no kinks of abs/relu/sign within reach)."""
    mag = RNG.uniform(0.3, 1.3, shape)
    return np.where(RNG.random(shape) < 0.5, -mag, mag)


def positive(*shape):
    return RNG.uniform(0.5, 1.5, shape)


# ----------------------------------------------------------------------------- harness


def _outputs(out):
    if isinstance(out, (et.Tensor, torch.Tensor)):
        return [out]
    return list(out)


def run_ember(fn, primals, tangents):
    with fwAD.dual_level():
        args = [
            fwAD.make_dual(E(p), E(t)) if t is not None else E(p)
            for p, t in zip(primals, tangents)
        ]
        outs = _outputs(fn(et, *args))
        res = []
        for o in outs:
            p, t = fwAD.unpack_dual(o)
            res.append((N(p), None if t is None else N(t)))
    return res


def run_torch(fn, primals, tangents):
    with tfw.dual_level():
        args = [
            tfw.make_dual(T(p), T(t)) if t is not None else T(p)
            for p, t in zip(primals, tangents)
        ]
        outs = _outputs(fn(torch, *args))
        res = []
        for o in outs:
            p, t = tfw.unpack_dual(o)
            res.append((N(p), None if t is None else N(t)))
    return res


def assert_same(ours, theirs, rtol=1e-10, atol=1e-12):
    assert len(ours) == len(theirs)
    for (p, t), (tp, tt) in zip(ours, theirs):
        np.testing.assert_allclose(p, tp, rtol=rtol, atol=atol)
        if tt is None or not np.issubdtype(np.asarray(tp).dtype, np.floating):
            assert t is None or not np.any(t), "a tangent where torch has none"
            continue
        if t is None:
            t = np.zeros_like(tp)
        assert t.shape == tt.shape
        np.testing.assert_allclose(t, tt, rtol=rtol, atol=atol)


def finite_difference(fn, primals, tangents, eps=1e-6):
    """Central difference of every output along the tangents (float64)."""
    def at(s):
        args = [E(p + s * t) if t is not None else E(p) for p, t in zip(primals, tangents)]
        return [N(o) for o in _outputs(fn(et, *args))]

    hi, lo = at(eps), at(-eps)
    return [(h - lo_) / (2 * eps) for h, lo_ in zip(hi, lo)]


# ----------------------------------------------------------------------------- cases

UNARY_POSITIVE = ["exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "log2", "log10",
                  "reciprocal"]
UNARY_MIXED = ["sin", "cos", "tan", "tanh", "sigmoid", "erf", "atan", "abs", "neg", "sign",
               "square", "relu", "floor", "ceil", "round", "trunc", "exp"]


def _unary(name):
    return lambda m, x: getattr(x, name)()


CASES = []
for _n in UNARY_POSITIVE:
    CASES.append((f"unary_{_n}", _unary(_n), [positive(3, 4)]))
for _n in UNARY_MIXED:
    CASES.append((f"unary_{_n}_mixed", _unary(_n), [mixed(3, 4)]))

CASES += [
    # elementwise chains and broadcasting
    ("chain", lambda m, x: ((x.sin() * x + x.exp() / (x * x + 3.0)).tanh() - 2.0 * x).sigmoid(),
     [mixed(4, 5)]),
    ("binary_broadcast", lambda m, x, y: x * y - y / (x * x + 1.0) + (x - y).abs(),
     [mixed(3, 4), mixed(4)]),
    ("broadcast_both", lambda m, x, y: x + y * 2.0, [mixed(3, 1), mixed(1, 4)]),
    ("add_alpha", lambda m, x, y: m.add(x, y, alpha=2.5), [mixed(3, 4), mixed(3, 4)]),
    ("sub_alpha", lambda m, x, y: m.sub(x, y, alpha=-1.5), [mixed(3, 4), mixed(4)]),
    ("rsub_scalar", lambda m, x: 1.0 - x * 3.0, [mixed(5)]),
    ("rdiv_scalar", lambda m, x: 2.0 / x, [mixed(5)]),
    ("div", lambda m, x, y: x / y, [mixed(3, 4), mixed(3, 4)]),
    ("true_divide", lambda m, x, y: m.true_divide(x, y), [mixed(3, 4), mixed(4)]),
    ("pow_tensor", lambda m, x, y: x.pow(y), [positive(3, 4), mixed(3, 4)]),
    ("pow_scalar_exp", lambda m, x: x ** 3, [mixed(3, 4)]),
    ("pow_scalar_base", lambda m, y: m.pow(2.0, y), [mixed(3, 4)]),
    ("maximum", lambda m, x, y: m.maximum(x, y), [mixed(3, 4), mixed(3, 4)]),
    ("minimum", lambda m, x, y: m.minimum(x, y), [mixed(3, 4), mixed(4)]),
    ("fmod", lambda m, x, y: m.fmod(x, y), [mixed(3, 4) * 3, positive(3, 4)]),
    ("remainder", lambda m, x, y: m.remainder(x, y), [mixed(3, 4) * 3, positive(3, 4)]),
    ("where", lambda m, x, y: m.where(x > 0, x, y), [mixed(3, 4), mixed(4)]),
    ("where_scalar", lambda m, x: m.where(x > 0, x, 0.5), [mixed(3, 4)]),
    ("clamp", lambda m, x: x.clamp(-0.7, 0.8), [mixed(3, 4)]),
    ("clamp_tensor", lambda m, x, lo: m.clamp(x, min=lo), [mixed(3, 4), mixed(4)]),
    # reductions
    ("sum_all", lambda m, x: x.sum(), [mixed(3, 4)]),
    ("sum_dim", lambda m, x: x.sum(1), [mixed(3, 4)]),
    ("sum_dims_keepdim", lambda m, x: x.sum((0, 2), keepdim=True), [mixed(2, 3, 4)]),
    ("mean", lambda m, x: x.mean(), [mixed(3, 4)]),
    ("mean_dim", lambda m, x: x.mean(0, keepdim=True), [mixed(3, 4)]),
    ("prod", lambda m, x: x.prod(), [mixed(3, 4)]),
    ("prod_dim", lambda m, x: x.prod(1), [mixed(3, 4)]),
    ("max_all", lambda m, x: x.max(), [mixed(3, 4)]),
    ("min_all", lambda m, x: x.min(), [mixed(3, 4)]),
    ("max_dim", lambda m, x: x.max(1), [mixed(3, 4)]),
    ("min_dim_keepdim", lambda m, x: x.min(0, keepdim=True), [mixed(3, 4)]),
    ("max_other", lambda m, x, y: x.max(y), [mixed(3, 4), mixed(3, 4)]),
    ("amax", lambda m, x: x.amax(1), [mixed(3, 4)]),
    ("amin", lambda m, x: x.amin((0, 1)), [mixed(3, 4)]),
    ("var", lambda m, x: x.var(1), [mixed(3, 4)]),
    ("std", lambda m, x: x.std(), [mixed(3, 4)]),
    ("norm", lambda m, x: x.norm(), [mixed(3, 4)]),
    ("logsumexp", lambda m, x: x.logsumexp(1), [mixed(3, 4)]),
    ("softmax", lambda m, x: x.softmax(1), [mixed(3, 4)]),
    ("log_softmax", lambda m, x: x.log_softmax(0), [mixed(3, 4)]),
    ("cumsum", lambda m, x: x.cumsum(1), [mixed(3, 4)]),
    ("cumprod", lambda m, x: x.cumprod(1), [mixed(3, 4)]),
    ("sort", lambda m, x: x.sort(1).values, [mixed(3, 4)]),
    ("topk", lambda m, x: x.topk(2).values, [mixed(3, 4)]),
    # matrix products
    ("matmul_2d", lambda m, x, w: x.matmul(w), [mixed(3, 4), mixed(4, 2)]),
    ("matmul_1d_2d", lambda m, x, w: x.matmul(w), [mixed(4), mixed(4, 2)]),
    ("matmul_batched", lambda m, x, w: x.matmul(w), [mixed(2, 3, 4), mixed(4, 5)]),
    ("matmul_op", lambda m, x, w: (x @ w).sin(), [mixed(3, 4), mixed(4, 3)]),
    ("mm", lambda m, x, w: m.mm(x, w), [mixed(3, 4), mixed(4, 2)]),
    ("bmm", lambda m, x, w: m.bmm(x, w), [mixed(2, 3, 4), mixed(2, 4, 2)]),
    ("addmm", lambda m, b, x, w: m.addmm(b, x, w), [mixed(2), mixed(3, 4), mixed(4, 2)]),
    ("dot", lambda m, x, y: m.dot(x, y), [mixed(5), mixed(5)]),
    # views and shapes
    ("t", lambda m, x: x.t() * 2.0, [mixed(3, 4)]),
    ("transpose", lambda m, x: x.transpose(0, 2), [mixed(2, 3, 4)]),
    ("permute", lambda m, x: x.permute(2, 0, 1), [mixed(2, 3, 4)]),
    ("reshape", lambda m, x: x.reshape(4, 3), [mixed(3, 4)]),
    ("view", lambda m, x: x.view(2, 6), [mixed(3, 4)]),
    ("view_of_transposed", lambda m, x: x.t().reshape(12), [mixed(3, 4)]),
    ("flatten", lambda m, x: x.flatten(1), [mixed(2, 3, 4)]),
    ("unflatten", lambda m, x: x.unflatten(1, (2, 2)), [mixed(3, 4)]),
    ("unsqueeze_squeeze", lambda m, x: x.unsqueeze(1).squeeze(), [mixed(3, 4)]),
    ("expand", lambda m, x: x.expand(2, 3, 4) * 1.5, [mixed(3, 1)]),
    ("expand_as", lambda m, x, y: x.expand_as(y) + y, [mixed(1, 4), mixed(3, 4)]),
    ("narrow", lambda m, x: x.narrow(1, 1, 2), [mixed(3, 4)]),
    ("select", lambda m, x: x.select(0, 1), [mixed(3, 4)]),
    ("diagonal", lambda m, x: x.diagonal(), [mixed(3, 4)]),
    ("movedim", lambda m, x: x.movedim(0, 2), [mixed(2, 3, 4)]),
    ("contiguous", lambda m, x: x.t().contiguous(), [mixed(3, 4)]),
    ("getitem_slices", lambda m, x: x[1:, ::2], [mixed(3, 4)]),
    ("getitem_int", lambda m, x: x[1], [mixed(3, 4)]),
    ("getitem_mask", lambda m, x: x[x > 0], [mixed(3, 4)]),
    ("split", lambda m, x: x.split(2, 1), [mixed(3, 5)]),
    ("chunk", lambda m, x: x.chunk(2, 0), [mixed(4, 3)]),
    ("unbind", lambda m, x: x.unbind(1), [mixed(3, 4)]),
    ("cat", lambda m, x, y: m.cat([x, y, x], 0), [mixed(2, 3), mixed(1, 3)]),
    ("stack", lambda m, x, y: m.stack([x, y], 1), [mixed(2, 3), mixed(2, 3)]),
    ("flip", lambda m, x: x.flip(0), [mixed(3, 4)]),
    ("repeat", lambda m, x: x.repeat(2, 1), [mixed(3, 4)]),
    ("tril_triu", lambda m, x: x.tril() + x.triu(1), [mixed(4, 4)]),
    ("gather", lambda m, x: x.gather(1, m.tensor([[0, 0], [1, 3], [2, 1]])), [mixed(3, 4)]),
    ("index_select", lambda m, x: x.index_select(1, m.tensor([3, 0, 3])), [mixed(3, 4)]),
    ("take_along_dim", lambda m, x: m.take_along_dim(x, x.argsort(1), 1), [mixed(3, 4)]),
    ("masked_fill", lambda m, x: x.masked_fill(x > 0, 0.25), [mixed(3, 4)]),
    ("masked_select", lambda m, x: x.masked_select(x > 0), [mixed(3, 4)]),
    ("scatter", lambda m, x, s: x.scatter(0, m.tensor([[1, 0, 2, 0]]), s),
     [mixed(3, 4), mixed(1, 4)]),
    ("scatter_add", lambda m, x, s: x.scatter_add(1, m.tensor([[0, 0], [1, 1], [3, 3]]), s),
     [mixed(3, 4), mixed(3, 2)]),
    ("index_add", lambda m, x, s: x.index_add(0, m.tensor([2, 0]), s), [mixed(3, 4), mixed(2, 4)]),
    ("to_float32", lambda m, x: x.to(m.float32).double(), [mixed(3, 4)]),
    ("float_double", lambda m, x: x.float().double(), [mixed(3, 4)]),
    ("min_other", lambda m, x, y: x.min(y), [mixed(3, 4), mixed(3, 4)]),
    ("where_method", lambda m, x, y: x.where(x > 0, y), [mixed(3, 4), mixed(3, 4)]),
    ("split_sections", lambda m, x: x.split([1, 2], 0), [mixed(3, 4)]),
    ("index_put", lambda m, x, v: x.index_put((m.tensor([0, 2]),), v), [mixed(3, 4), mixed(2, 4)]),
    ("index_put_accumulate", lambda m, x, v: x.index_put((m.tensor([0, 0]),), v, True),
     [mixed(3, 4), mixed(2, 4)]),
    ("fill_zero", lambda m, x: x.clone().fill_(2.0) * x + x.clone().zero_(), [mixed(3, 4)]),
    # in-place writes
    ("inplace_mul", lambda m, x, y: x.clone().mul_(y), [mixed(3, 4), mixed(4)]),
    ("inplace_chain", lambda m, x, y: x.clone().add_(y, alpha=2.0).div_(y).exp_(),
     [mixed(3, 4), positive(3, 4)]),
    ("inplace_self_alias", lambda m, x: x.clone().mul_(x.clone()), [mixed(3, 4)]),
    ("inplace_into_plain", lambda m, x, y: y.clone().sin_().mul_(x), [mixed(3, 4), mixed(3, 4)]),
    ("setitem", lambda m, x, y: _setitem(x.clone(), (slice(None), 1), y), [mixed(3, 4), mixed(3)]),
    ("write_view_updates_base", lambda m, x, y: _write_view(x.clone(), y), [mixed(3, 4), mixed(4)]),
    ("copy_", lambda m, x, y: x.clone().copy_(y), [mixed(3, 4), mixed(4)]),
]


def _setitem(t, key, value):
    t[key] = value
    return t


def _write_view(base, y):
    base[1].mul_(y)
    return base


@pytest.mark.parametrize("name, fn, primals", CASES, ids=[c[0] for c in CASES])
def test_matches_torch_forward_ad(name, fn, primals):
    tangents = [RNG.standard_normal(np.shape(p)) for p in primals]
    assert_same(run_ember(fn, primals, tangents), run_torch(fn, primals, tangents))


@pytest.mark.parametrize("name, fn, primals", CASES, ids=[c[0] for c in CASES])
def test_only_some_inputs_dual(name, fn, primals):
    # the last input without a tangent: its terms vanish (or zeros stand in)
    if len(primals) < 2:
        tangents = [None]
    else:
        tangents = [RNG.standard_normal(np.shape(p)) for p in primals[:-1]] + [None]
    assert_same(run_ember(fn, primals, tangents), run_torch(fn, primals, tangents))


SMOOTH = [c for c in CASES if c[0] in {
    "chain", "binary_broadcast", "div", "pow_tensor", "pow_scalar_base", "prod", "var", "std",
    "norm", "logsumexp", "softmax", "log_softmax", "cumprod", "matmul_batched", "addmm",
    "inplace_chain", "write_view_updates_base", "unary_tanh_mixed", "unary_rsqrt",
}]


@pytest.mark.parametrize("name, fn, primals", SMOOTH, ids=[c[0] for c in SMOOTH])
def test_jvp_matches_finite_differences(name, fn, primals):
    tangents = [RNG.standard_normal(np.shape(p)) for p in primals]
    ours = run_ember(fn, primals, tangents)
    fd = finite_difference(fn, primals, tangents)
    for (_, t), d in zip(ours, fd):
        np.testing.assert_allclose(t, d, rtol=1e-6, atol=1e-7)


def test_floor_divide_against_finite_differences():
    # torch has no forward AD for floor_divide; its derivative is 0 between the jumps
    def fn(m, x, y):
        return m.floor_divide(x, y) * x
    primals = [mixed(3, 4) * 3, positive(3, 4)]
    tangents = [RNG.standard_normal((3, 4)) for _ in primals]
    ((_, t),) = run_ember(fn, primals, tangents)
    (fd,) = finite_difference(fn, primals, tangents)
    np.testing.assert_allclose(t, fd, rtol=1e-6, atol=1e-7)


def test_random_fills_have_zero_tangents():
    x = et.from_numpy(mixed(3, 4))
    with fwAD.dual_level():
        for fill in (lambda t: t.normal_(0.0, 1.0), lambda t: t.uniform_(0.0, 1.0),
                     lambda t: t.bernoulli_(0.5), lambda t: t.bernoulli_(et.full((3, 4), 0.5))):
            d = fwAD.make_dual(x.clone(), et.ones(3, 4, dtype=et.float64))
            fill(d)
            np.testing.assert_array_equal(N(fwAD.unpack_dual(d).tangent), np.zeros((3, 4)))


def test_float32_tangents():
    x, v = mixed(3, 4).astype(np.float32), RNG.standard_normal((3, 4)).astype(np.float32)
    def fn(m, a):
        return (a.sin() * a).sum(1)
    assert_same(run_ember(fn, [x], [v]), run_torch(fn, [x], [v]), rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------- the API


def _torch_message(fn) -> str:
    with pytest.raises(Exception) as info:
        fn()
    return str(info.value)


def test_make_dual_outside_a_level():
    expected = _torch_message(lambda: tfw.make_dual(torch.ones(2), torch.ones(2)))
    with pytest.raises(RuntimeError) as info:
        fwAD.make_dual(et.ones(2), et.ones(2))
    assert str(info.value) == expected
    assert fwAD._levels == 0


def test_make_dual_shape_mismatch():
    with tfw.dual_level():
        expected = _torch_message(lambda: tfw.make_dual(torch.ones(3), torch.ones(4)))
    with fwAD.dual_level(), pytest.raises(RuntimeError) as info:
        fwAD.make_dual(et.ones(3), et.ones(4))
    assert str(info.value) == expected
    assert "different size" in expected


def test_make_dual_dtype_mismatch():
    with fwAD.dual_level(), pytest.raises(
        RuntimeError, match="forward gradient that has a different dtype than that of the "
        "original Tensor.*float32 while the given forward gradient is of dtype .*float64"
    ):
        fwAD.make_dual(et.ones(3), et.ones(3, dtype=et.float64))


def test_make_dual_integer_primal():
    with tfw.dual_level():
        expected = _torch_message(lambda: tfw.make_dual(torch.arange(3), torch.arange(3)))
    with fwAD.dual_level(), pytest.raises(ValueError) as info:
        fwAD.make_dual(et.arange(3), et.arange(3))
    assert str(info.value) == expected.replace("torch.", "ember.")


def test_make_dual_twice_at_one_level():
    with tfw.dual_level():
        d = tfw.make_dual(torch.ones(2), torch.ones(2))
        expected = _torch_message(lambda: tfw.make_dual(d, torch.ones(2)))
    with fwAD.dual_level(), pytest.raises(RuntimeError) as info:
        fwAD.make_dual(fwAD.make_dual(et.ones(2), et.ones(2)), et.ones(2))
    assert str(info.value) == expected


def test_exit_a_level_that_is_not_the_last():
    with tfw.dual_level():
        expected = _torch_message(lambda: tfw.exit_dual_level(level=3))
    with fwAD.dual_level(), pytest.raises(RuntimeError) as info:
        fwAD.exit_dual_level(level=3)
    assert str(info.value) == expected


def test_unsupported_op(monkeypatch):
    monkeypatch.setitem(fwAD._FORWARD, "sin", None)  # as if sin had no `result:` rule
    x = et.ones(3)
    assert x.sin() is not None  # plain tensors are unaffected
    with fwAD.dual_level():
        d = fwAD.make_dual(x, et.ones(3))
        with pytest.raises(NotImplementedError,
                           match="^Trying to use forward AD with sin that does not support it"):
            d.sin()
        with pytest.raises(NotImplementedError, match="with sin that does not support it"):
            d.clone().sin_()
        # ops without tangents are not concerned, even on tensors that require grad
        r = et.ones(3, requires_grad=True)
        r.sin().sum().backward()
        np.testing.assert_allclose(N(r.grad), np.cos(np.ones(3)), rtol=1e-6)


def test_forward_codegen_specializes_missing_tangents():
    from ember_autograd import codegen, forward_codegen

    _, entries, schema = codegen.generate(strict=False)
    source = forward_codegen.generate(entries, schema)
    compile(source, "<forward>", "exec")
    for key, entry in entries.items():
        if entry.forward is not None:
            assert f"def fwd_{codegen._ident(key)}(" in source, key
    from ember_autograd import formulas

    synthetic = codegen.parse_entries([
        {"name": "mul", "self": "grad * other", "other": "grad * self",
         "result": "other_t * self + self_t * other"},
        {"name": "where", "input": "grad", "other": "grad",
         "result": "et.where(condition, input_t, other_t)"},
        {"name": "exp", "self": "grad * result", "result": "auto_element_wise"},
        {"name": "neg", "self": "-grad", "result": "auto_linear"},
    ], schema, {n for n in dir(formulas) if not n.startswith("_")}, strict=False)
    mul = forward_codegen.emit_forward(synthetic["mul"])
    # both tangents, only self_t, only other_t: terms of a missing tangent are dropped
    assert "return other_t * self + self_t * other" in mul
    assert "return self_t * other" in mul and "return other_t * self" in mul
    assert "zeros" not in mul and "_zt" not in mul
    where = forward_codegen.emit_forward(synthetic["where"])
    assert "return et.where(condition, input_t, _zt(other))" in where  # a zero kept
    assert "return self_t * result" in forward_codegen.emit_forward(synthetic["exp"])
    assert "return _op_neg(self_t)" in forward_codegen.emit_forward(synthetic["neg"])
    assert "mm" in forward_codegen.generate(entries, schema).split("NEEDS_SELF")[1]


def test_out_variant_is_refused():
    with tfw.dual_level():
        d = tfw.make_dual(torch.ones(3), torch.ones(3))
        expected = _torch_message(lambda: torch.mul(d, d, out=torch.empty(3)))
    with fwAD.dual_level():
        d = fwAD.make_dual(et.ones(3), et.ones(3))
        out = et.empty(3)
        with pytest.raises(NotImplementedError) as info:
            et.mul(d, d, out=out)
    assert str(info.value) == expected
    assert "because it is an out= function" in expected


def test_unpack_dual():
    x, v = et.randn(3), et.randn(3)
    assert fwAD.unpack_dual(x) == (x, None)  # outside a level
    with fwAD.dual_level() as level:
        assert level == 0
        d = fwAD.make_dual(x, v)
        u = fwAD.unpack_dual(d)
        assert type(u).__name__ == "UnpackedDualTensor" and u._fields == ("primal", "tangent")
        assert u.tangent is v  # the tangent as given (as torch)
        assert u.primal is not d and u.primal._is_view_of(x)
        assert fwAD.unpack_dual(u.primal).tangent is None
        assert fwAD.unpack_dual(x).tangent is None
        assert fwAD.unpack_dual(d, level=level).tangent is v
        with pytest.raises(RuntimeError, match="Invalid level given to unpack_dual"):
            fwAD.unpack_dual(d, level=level + 1)
        with pytest.raises(RuntimeError, match="Invalid level given to make_dual"):
            fwAD.make_dual(x, v, level=level + 1)
    np.testing.assert_array_equal(N(d), N(x))


def test_tangents_go_with_their_level():
    x = et.randn(3, dtype=et.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, et.ones(3, dtype=et.float64))
        y = d * 2.0
        assert y._autograd_watched
    assert fwAD._levels == 0 and fwAD._current_level == -1
    assert not y._autograd_watched and not d._autograd_watched
    with fwAD.dual_level():
        assert fwAD.unpack_dual(y).tangent is None
        assert fwAD.unpack_dual(d).tangent is None
    # an exception inside the level still exits it
    with pytest.raises(ValueError), fwAD.dual_level():
        raise ValueError
    assert fwAD._levels == 0


def test_dual_level_as_decorator():
    @fwAD.dual_level()
    def f(x):
        return fwAD.unpack_dual(fwAD.make_dual(x, et.ones(2)) * 3.0).tangent

    np.testing.assert_array_equal(N(f(et.ones(2))), [3.0, 3.0])
    assert fwAD._levels == 0


def test_plain_computation_is_untouched():
    with fwAD.dual_level():
        d = fwAD.make_dual(et.ones(3), et.ones(3))
        a = et.ones(3) * 2.0
        assert not a._autograd_watched and a._autograd_meta is None
        assert fwAD.unpack_dual(d > 0).tangent is None
        assert fwAD.unpack_dual(d.argmax()).tangent is None
        assert fwAD.unpack_dual(d.detach()).tangent is None  # as torch
        assert fwAD.unpack_dual(d.long()).tangent is None


def test_tangent_layout_follows_the_primal():
    x = et.from_numpy(mixed(4, 3)).t()  # non-contiguous primal
    v = et.from_numpy(RNG.standard_normal((3, 4)))
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        t = fwAD.unpack_dual(d).tangent
        assert t.stride() == x.stride()
        np.testing.assert_array_equal(N(t), N(v))
        r = fwAD.unpack_dual(d.reshape(12)).tangent
        np.testing.assert_array_equal(N(r), N(v).reshape(-1))


def test_inplace_updates_the_given_tangent_like_torch():
    x, v = mixed(3, 4), RNG.standard_normal((3, 4))
    tv, ev = T(v.copy()), E(v.copy())
    with tfw.dual_level():
        d = tfw.make_dual(T(x), tv)
        d.mul_(2.0)
    with fwAD.dual_level():
        d = fwAD.make_dual(E(x), ev)
        d.mul_(2.0)
    np.testing.assert_allclose(N(ev), N(tv))
    np.testing.assert_allclose(N(ev), 2 * v)


def test_no_grad_does_not_stop_forward_ad():
    with fwAD.dual_level(), ember_autograd.no_grad():
        d = fwAD.make_dual(et.ones(3), et.full((3,), 2.0))
        np.testing.assert_array_equal(N(fwAD.unpack_dual(d * 3.0).tangent), [6.0, 6.0, 6.0])


def test_make_dual_keeps_reverse_history():
    x = et.tensor([1.0, 2.0], dtype=et.float64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, et.ones(2, dtype=et.float64))
        assert d.grad_fn is not None
        (d * d).sum().backward()
    np.testing.assert_array_equal(N(x.grad), [2.0, 4.0])


# ----------------------------------------------------------------------------- higher order


def f_nested(m, x):
    return (x.sin() * x + x.exp()).sum()


def test_nested_levels_forward_over_forward():
    x, u, v = mixed(4), RNG.standard_normal(4), RNG.standard_normal(4)
    with fwAD.dual_level() as outer:
        a = fwAD.make_dual(E(x), E(u))
        with fwAD.dual_level() as inner:
            assert inner == outer + 1
            b = fwAD.make_dual(a, E(v))
            y = f_nested(et, b)
            t_inner = fwAD.unpack_dual(y, level=inner).tangent
            t_outer = fwAD.unpack_dual(y, level=outer).tangent
        second = fwAD.unpack_dual(t_inner, level=outer).tangent
        assert fwAD.unpack_dual(y, level=outer).tangent is t_outer
    # u^T H v, J u and J v from torch.func
    def tf(t):
        return f_nested(torch, t)

    def jv(t):
        return torch.func.jvp(tf, (t,), (T(v),))[1]

    _, expected = torch.func.jvp(jv, (T(x),), (T(u),))
    np.testing.assert_allclose(N(second), N(expected), rtol=1e-12)
    np.testing.assert_allclose(N(t_inner), N(jv(T(x))), rtol=1e-12)
    np.testing.assert_allclose(N(t_outer), N(torch.func.jvp(tf, (T(x),), (T(u),))[1]), rtol=1e-12)


def test_reverse_over_forward():
    x, v = mixed(4), RNG.standard_normal(4)
    xe = E(x).requires_grad_()
    with fwAD.dual_level():
        t = fwAD.unpack_dual(f_nested(et, fwAD.make_dual(xe, E(v)))).tangent
    assert t.requires_grad
    (g,) = ember_autograd.grad(t, xe)
    xt = T(x).requires_grad_()
    with tfw.dual_level():
        tt = tfw.unpack_dual(f_nested(torch, tfw.make_dual(xt, T(v)))).tangent
    (gt,) = torch.autograd.grad(tt, xt)
    np.testing.assert_allclose(N(g), N(gt), rtol=1e-12)


def _forward_over_reverse(fn, x, v):
    with fwAD.dual_level():
        d = fwAD.make_dual(E(x).requires_grad_(), E(v))
        (g,) = ember_autograd.grad(fn(et, d), d, create_graph=True)
        return N(fwAD.unpack_dual(g).tangent)


def _torch_hvp(fn, x, v):
    return N(torch.func.jvp(torch.func.grad(lambda t: fn(torch, t)), (T(x),), (T(v),))[1])


def test_forward_over_reverse():
    def fn(m, x):
        return ((x.sin() * x).matmul(x.cos()) + (x * x * x).sum() / (x * x + 1.0).sum())
    x, v = mixed(5), RNG.standard_normal(5)
    np.testing.assert_allclose(_forward_over_reverse(fn, x, v), _torch_hvp(fn, x, v), rtol=1e-10)


def test_forward_over_reverse_through_saved_outputs():
    def fn(m, x):
        return x.exp().sum() + x.tanh().sum()
    x, v = mixed(5), RNG.standard_normal(5)
    np.testing.assert_allclose(_forward_over_reverse(fn, x, v), _torch_hvp(fn, x, v), rtol=1e-10)

