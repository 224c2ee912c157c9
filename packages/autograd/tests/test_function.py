"""ember_autograd.Function against torch.autograd.Function: the same custom functions written
for both, values, gradients, graph structure and error messages compared."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_autograd as ea
import ember_tensor as et
from ember_autograd import Function, once_differentiable
from ember_autograd.function import BackwardCFunction

# ----------------------------------------------------------------------------- helpers


def E(a, dtype=et.float32, requires_grad=False):
    t = et.tensor(np.asarray(a).tolist(), dtype=dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


def T(a, dtype=torch.float32, requires_grad=False):
    return torch.tensor(np.asarray(a), dtype=dtype, requires_grad=requires_grad)


def close(e, t, rtol=1e-6, atol=1e-6):
    assert e is not None and t is not None, (e, t)
    np.testing.assert_allclose(np.asarray(e.tolist()), t.detach().numpy(), rtol=rtol, atol=atol)


def raises_like(torch_fn, ember_fn, exc=RuntimeError):
    """Both raise ``exc``; returns the two messages."""
    with pytest.raises(exc) as te:
        torch_fn()
    with pytest.raises(exc) as ee:
        ember_fn()
    return str(te.value), str(ee.value)


def check_grad(fn, inputs):
    """gradcheck (ember's, float64), or where it is not written yet, torch's gradients of
    the same function as the reference (done by the callers)."""
    try:
        return ea.gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)
    except NotImplementedError:
        pytest.skip("ember_autograd.gradcheck is not implemented yet")


RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3))


# ----------------------------------------------------------------------------- the functions
# Each comes twice, for torch and for ember, written identically.


def make_exp(base):
    class Exp(base):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    return Exp


def make_sincos(base):
    class SinCos(base):
        """Two outputs; backward needs both gradients."""

        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x.sin() * scale, x.cos() * scale

        @staticmethod
        def backward(ctx, gs, gc):
            (x,) = ctx.saved_tensors
            return (gs * x.cos() - gc * x.sin()) * ctx.scale, None

    return SinCos


def make_scaled_mul(base):
    class ScaledMul(base):
        """forward(x, k, y) with a non-tensor in the middle."""

        @staticmethod
        def forward(ctx, x, k, y):
            ctx.save_for_backward(x, y)
            ctx.k = k
            ctx.seen_needs = ctx.needs_input_grad
            return x * y * k

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            gx = grad * y * ctx.k if ctx.needs_input_grad[0] else None
            gy = grad * x * ctx.k if ctx.needs_input_grad[2] else None
            return gx, None, gy

    return ScaledMul


def make_double_inplace(base):
    class DoubleInplace(base):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    return DoubleInplace


def make_max(base):
    class MaxWithIndex(base):
        @staticmethod
        def forward(ctx, x):
            values, indices = x.max(1)
            ctx.mark_non_differentiable(indices)
            ctx.save_for_backward(indices)
            ctx.shape = tuple(x.shape)
            return values, indices

        @staticmethod
        def backward(ctx, grad, grad_indices):
            ctx.grad_indices = grad_indices
            (indices,) = ctx.saved_tensors
            out = grad.new_zeros(ctx.shape)
            for i in range(ctx.shape[0]):
                out[i, int(indices[i])] = grad[i]
            return out

    return MaxWithIndex


def make_two_out(base, materialize):
    class TwoOut(base):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.got = (g1, g2)
            out = None
            if g1 is not None:
                out = g1 * 2
            if g2 is not None:
                out = g2 * 3 if out is None else out + g2 * 3
            return out

    return TwoOut


def make_cube(base, once):
    class Cube(base):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            ctx.grad_enabled_inside = (
                torch.is_grad_enabled() if isinstance(x, torch.Tensor) else ea.is_grad_enabled()
            )
            return grad * 3 * x * x

    if once:
        deco = torch.autograd.function.once_differentiable if base is torch.autograd.Function \
            else once_differentiable
        Cube.backward = staticmethod(deco(Cube.__dict__["backward"].__func__))
    return Cube


TExp, EExp = make_exp(torch.autograd.Function), make_exp(Function)


# ----------------------------------------------------------------------------- basics


def test_exp_saves_its_output():
    xt, xe = T(X, requires_grad=True), E(X, requires_grad=True)
    yt, ye = TExp.apply(xt), EExp.apply(xe)
    close(ye, yt)
    assert ye.requires_grad and not ye.is_leaf
    assert ye.grad_fn.name() == type(yt.grad_fn).__name__ == "ExpBackward"
    assert type(ye.grad_fn).__name__ == "ExpBackward"
    assert isinstance(ye.grad_fn, ea.Node) and isinstance(ye.grad_fn, BackwardCFunction)
    assert len(ye.grad_fn.next_functions) == len(yt.grad_fn.next_functions) == 1
    assert ye.grad_fn.next_functions[0][0].name() == "AccumulateGrad"
    assert ye.grad_fn.next_functions[0][0].variable is xe
    # the ctx is the node: saved tensors through grad_fn, any number of times
    s1 = ye.grad_fn.saved_tensors
    s2 = ye.grad_fn.saved_tensors
    close(s1[0], yt)
    close(s2[0], yt)
    assert s1[0].grad_fn is ye.grad_fn  # a saved output comes back with this node's history
    (yt * 2).sum().backward()
    (ye * 2).sum().backward()
    close(xe.grad, xt.grad)


def test_exp_double_backward_through_saved_output():
    xt = T(X, torch.float64, requires_grad=True)
    xe = E(X, et.float64, requires_grad=True)
    (gt,) = torch.autograd.grad(TExp.apply(xt).sum(), xt, create_graph=True)
    (ge,) = ea.grad(EExp.apply(xe).sum(), xe, create_graph=True)
    close(ge, gt)
    assert ge.requires_grad
    (ggt,) = torch.autograd.grad(gt.sum(), xt)
    (gge,) = ea.grad(ge.sum(), xe)
    close(gge, ggt)  # d2/dx2 exp = exp


def test_gradcheck_custom_exp():
    xe = E(X, et.float64, requires_grad=True)
    assert check_grad(EExp.apply, (xe,))


def test_gradcheck_custom_multi_input():
    _, em = make_scaled_mul(torch.autograd.Function), make_scaled_mul(Function)
    a = E(X, et.float64, requires_grad=True)
    b = E(X * 0.5 + 1, et.float64, requires_grad=True)
    assert check_grad(lambda x, y: em.apply(x, 1.5, y), (a, b))


def test_multi_output_and_output_nr():
    tf, ef = make_sincos(torch.autograd.Function), make_sincos(Function)
    xt, xe = T(X, requires_grad=True), E(X, requires_grad=True)
    st, ct = tf.apply(xt, 2.0)
    se, ce = ef.apply(xe, 2.0)
    close(se, st)
    close(ce, ct)
    assert se.grad_fn is ce.grad_fn
    assert se.grad_fn.name() == "SinCosBackward"
    assert (st.output_nr, ct.output_nr) == (0, 1)
    from ember_autograd.graph import meta_of

    assert (meta_of(se).output_nr, meta_of(ce).output_nr) == (0, 1)
    (st * 3 + ct * ct).sum().backward()
    (se * 3 + ce * ce).sum().backward()
    close(xe.grad, xt.grad, rtol=1e-5)


def test_one_of_two_outputs_used_materializes_zeros():
    tf, ef = make_two_out(torch.autograd.Function, True), make_two_out(Function, True)
    xt, xe = T(X, requires_grad=True), E(X, requires_grad=True)
    at, _ = tf.apply(xt)
    ae, _ = ef.apply(xe)
    at.sum().backward()
    ae.sum().backward()
    close(xe.grad, xt.grad)
    g1t, g2t = at.grad_fn.got
    g1e, g2e = ae.grad_fn.got
    close(g2e, g2t)
    assert g2e.shape == (2, 3) and float(g2e.abs().sum()) == 0.0


def test_set_materialize_grads_false_passes_none():
    tf, ef = make_two_out(torch.autograd.Function, False), make_two_out(Function, False)
    xt, xe = T(X, requires_grad=True), E(X, requires_grad=True)
    _, bt = tf.apply(xt)
    _, be = ef.apply(xe)
    bt.sum().backward()
    be.sum().backward()
    close(xe.grad, xt.grad)
    assert bt.grad_fn.got[0] is None and be.grad_fn.got[0] is None
    close(be.grad_fn.got[1], bt.grad_fn.got[1])


def test_non_tensor_argument_and_needs_input_grad():
    tf, ef = make_scaled_mul(torch.autograd.Function), make_scaled_mul(Function)
    xt, xe = T(X, requires_grad=True), E(X, requires_grad=True)
    yt, ye = T(X + 1), E(X + 1)  # no grad
    ot, oe = tf.apply(xt, 3.0, yt), ef.apply(xe, 3.0, ye)
    close(oe, ot)
    assert oe.grad_fn.seen_needs == ot.grad_fn.seen_needs == (True, False, False)
    assert oe.grad_fn.needs_input_grad == (True, False, False)
    # one edge per tensor input, (None, 0) for the one that needs no grad
    assert len(oe.grad_fn.next_functions) == len(ot.grad_fn.next_functions) == 2
    assert oe.grad_fn.next_functions[1] == (None, 0)
    assert ot.grad_fn.next_functions[1] == (None, 0)
    ot.sum().backward()
    oe.sum().backward()
    close(xe.grad, xt.grad)
    assert ye.grad is None


def test_apply_binds_keyword_arguments():
    class K(Function):
        @staticmethod
        def forward(ctx, x, k=3.0, bias=None):
            ctx.k = k
            return x * k if bias is None else x * k + bias

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.k, None, None

    xe = E([1.0, 2.0], requires_grad=True)
    out = K.apply(xe, k=4.0)
    assert out.tolist() == [4.0, 8.0]
    out.sum().backward()
    assert xe.grad.tolist() == [4.0, 4.0]
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        K.apply(xe, nope=1)


def test_backward_gradient_for_input_not_requiring_grad_is_dropped():
    class BothGrads(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, grad):
            return grad * 2, grad * 5  # y needs none: ignored

    xe, ye = E([1.0, 2.0], requires_grad=True), E([3.0, 4.0])
    BothGrads.apply(xe, ye).sum().backward()
    assert xe.grad.tolist() == [2.0, 2.0]
    assert ye.grad is None


def test_no_graph_under_no_grad_or_without_grad_inputs():
    xe = E(X, requires_grad=True)
    with ea.no_grad():
        y = EExp.apply(xe)
    assert y.grad_fn is None and not y.requires_grad
    y = EExp.apply(E(X))
    assert y.grad_fn is None and not y.requires_grad
    # forward runs without recording, whatever it does
    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mode = ea.is_grad_enabled()
            inner = x * 2
            ctx.inner_requires_grad = inner.requires_grad
            return inner

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    out = Probe.apply(xe)
    assert out.grad_fn.mode is False and out.grad_fn.inner_requires_grad is False


def test_setup_context_style():
    class TMul(torch.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y = inputs
            ctx.save_for_backward(x, y, output)

        @staticmethod
        def backward(ctx, grad):
            x, y, out = ctx.saved_tensors
            return grad * y, grad * x

    class EMul(Function):
        @staticmethod
        def forward(x, y):
            return x * y

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y = inputs
            ctx.save_for_backward(x, y, output)

        @staticmethod
        def backward(ctx, grad):
            x, y, out = ctx.saved_tensors
            return grad * y, grad * x

    xt, yt = T(X, requires_grad=True), T(X * 2, requires_grad=True)
    xe, ye = E(X, requires_grad=True), E(X * 2, requires_grad=True)
    close(EMul.apply(xe, ye), TMul.apply(xt, yt))
    TMul.apply(xt, yt).sum().backward()
    EMul.apply(xe, ye).sum().backward()
    close(xe.grad, xt.grad)
    close(ye.grad, yt.grad)


def test_vjp_alias_and_both_defined_error():
    class V(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, grad):
            return grad * 2

    xe = E([1.0], requires_grad=True)
    V.apply(xe).sum().backward()
    assert xe.grad.tolist() == [2.0]
    assert Function.vjp is Function.backward

    class TBoth(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad

        @staticmethod
        def vjp(ctx, grad):
            return grad

    class EBoth(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad

        @staticmethod
        def vjp(ctx, grad):
            return grad

    xt = T([1.0], requires_grad=True)
    mt, me = raises_like(
        lambda: TBoth.apply(xt).sum().backward(), lambda: EBoth.apply(xe).sum().backward()
    )
    assert me == mt


def test_unimplemented_forward_backward_and_legacy_call():
    class NoForward(Function):
        pass

    class TNoForward(torch.autograd.Function):
        pass

    mt, me = raises_like(
        lambda: TNoForward.apply(T([1.0])), lambda: NoForward.apply(E([1.0])), NotImplementedError
    )
    assert me == mt

    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    class TNoBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    mt, me = raises_like(
        lambda: TNoBackward.apply(T([1.0], requires_grad=True)).sum().backward(),
        lambda: NoBackward.apply(E([1.0], requires_grad=True)).sum().backward(),
        NotImplementedError,
    )
    assert me == mt
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        NoBackward()(E([1.0]))


def test_ctx_attributes_and_node_hooks():
    ef = make_sincos(Function)
    xe = E(X, requires_grad=True)
    se, _ = ef.apply(xe, 0.5)
    assert se.grad_fn.scale == 0.5
    seen = []
    se.grad_fn.register_prehook(lambda go: seen.append(("pre", len(go))))
    se.grad_fn.register_hook(lambda gi, go: seen.append(("post", len(gi), len(go))))
    se.sum().backward()
    assert seen == [("pre", 2), ("post", 1, 2)]


def test_non_tensor_outputs_pass_through():
    def make(base):
        class WithInfo(base):
            @staticmethod
            def forward(ctx, x):
                return x * 2, 7, "tag"

            @staticmethod
            def backward(ctx, g, g_int, g_str):
                ctx.got = (g_int, g_str)
                return g * 2

        return WithInfo

    tf, ef = make(torch.autograd.Function), make(Function)
    xt, xe = T([1.0, 2.0], requires_grad=True), E([1.0, 2.0], requires_grad=True)
    ot, it, st = tf.apply(xt)
    oe, ie, se = ef.apply(xe)
    assert (ie, se) == (it, st) == (7, "tag")
    ot.sum().backward()
    oe.sum().backward()
    close(xe.grad, xt.grad)
    assert oe.grad_fn.got == ot.grad_fn.got == (None, None)


def test_input_returned_unchanged_is_a_new_alias():
    def make(base):
        class Ident(base):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad * 3

        return Ident

    tf, ef = make(torch.autograd.Function), make(Function)
    xt, xe = T([1.0, 2.0], requires_grad=True), E([1.0, 2.0], requires_grad=True)
    ot, oe = tf.apply(xt), ef.apply(xe)
    assert (ot is xt) == (oe is xe) == False  # noqa: E712
    assert oe._is_view_of(xe) and ot._base is xt
    assert xe.is_leaf and xe.grad_fn is None
    assert oe.grad_fn.name() == "IdentBackward"
    ot.sum().backward()
    oe.sum().backward()
    close(xe.grad, xt.grad)


def _make_row(base):
    class Row(base):
        @staticmethod
        def forward(ctx, x):
            return x[0]  # a view of the input

        @staticmethod
        def backward(ctx, grad):
            out = grad.new_zeros((2, 3))
            out[0] = grad
            return out

    return Row


def test_view_output_written_in_place_is_refused():
    tf, ef = _make_row(torch.autograd.Function), _make_row(Function)

    def direct(f, mk):
        return lambda: f.apply(mk(X, requires_grad=True) * 1).mul_(2)

    mt, me = raises_like(direct(tf, T), direct(ef, E))
    assert me == mt
    assert me.startswith("Output 0 of Row is a view and is being modified inplace. This view was")

    def base_written(f, mk):
        def go():
            y = mk(X, requires_grad=True) * 1
            r = f.apply(y)
            y.mul_(2)
            (r * 1).sum().backward()

        return go

    mt, me = raises_like(base_written(tf, T), base_written(ef, E))
    assert me == mt
    assert "is a view and its base or another view of its base has been modified inplace" in me

    # the input returned as is: the same rule
    def make_id(base):
        class Id(base):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad

        return Id

    mt, me = raises_like(
        lambda: make_id(torch.autograd.Function).apply(T(X, requires_grad=True) * 1).mul_(2),
        lambda: make_id(Function).apply(E(X, requires_grad=True) * 1).mul_(2),
    )
    assert me == mt
    # any write is refused (ember: after the write, by replaying the view; an in-place op
    # whose recorder reads the view first reports it as a write into the base)
    with pytest.raises(RuntimeError, match="^Output 0 of Id is a view and .*This behavior is "
                       "forbidden"):
        make_id(Function).apply(E(X, requires_grad=True) * 1).add_(1)


def test_view_output_used_without_writes():
    tf, ef = _make_row(torch.autograd.Function), _make_row(Function)
    xt, xe = T(X, requires_grad=True), E(X, requires_grad=True)
    rt, re_ = tf.apply(xt * 1), ef.apply(xe * 1)
    (rt[1:].sum() * rt).sum().backward()  # views of the view, read only
    (re_[1:].sum() * re_).sum().backward()
    close(xe.grad, xt.grad)


# ----------------------------------------------------------------------------- mark_dirty


def test_mark_dirty_rebases_history():
    tf, ef = make_double_inplace(torch.autograd.Function), make_double_inplace(Function)
    at, ae = T(X, requires_grad=True), E(X, requires_grad=True)
    bt, be = at.clone(), ae.clone()
    ot, oe = tf.apply(bt), ef.apply(be)
    assert ot is bt and oe is be  # the dirty input itself is returned
    assert be._version == bt._version == 2  # the write, and the bump of mark_dirty
    assert be.grad_fn.name() == type(bt.grad_fn).__name__ == "DoubleInplaceBackward"
    assert be.grad_fn.next_functions[0][0].name() == "CloneBackward0"
    close(oe, ot)
    (ot * ot).sum().backward()
    (oe * oe).sum().backward()
    close(ae.grad, at.grad)


def test_mark_dirty_on_a_view():
    tf, ef = make_double_inplace(torch.autograd.Function), make_double_inplace(Function)
    at, ae = T(X, requires_grad=True), E(X, requires_grad=True)
    bt, be = at * 1, ae * 1
    vt, ve = bt[1], be[1]
    tf.apply(vt)
    ef.apply(ve)
    close(be, bt)
    assert ve.requires_grad and be.grad_fn is not None
    wt, we = T(RNG.standard_normal((2, 3))), None
    we = E(wt.numpy())
    (bt * wt).sum().backward()
    (be * we).sum().backward()
    close(ae.grad, at.grad)


def test_mark_dirty_and_save_the_dirty_tensor():
    def make(base):
        class ScaleInplace(base):
            @staticmethod
            def forward(ctx, x):
                x.mul_(3)
                ctx.mark_dirty(x)
                ctx.save_for_backward(x)  # saved after the write: an output now
                return x

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * 3 + x * 0

        return ScaleInplace

    tf, ef = make(torch.autograd.Function), make(Function)
    for where in (lambda b: b, lambda b: b[1]):
        at, ae = T(X, requires_grad=True), E(X, requires_grad=True)
        bt, be = at * 1, ae * 1
        tf.apply(where(bt))
        ef.apply(where(be))
        close(be, bt)
        (bt * bt).sum().backward()
        (be * be).sum().backward()
        close(ae.grad, at.grad)


def test_mark_dirty_errors():
    tf, ef = make_double_inplace(torch.autograd.Function), make_double_inplace(Function)
    mt, me = raises_like(
        lambda: tf.apply(T([1.0], requires_grad=True)),
        lambda: ef.apply(E([1.0], requires_grad=True)),
    )
    assert me == mt == "a leaf Variable that requires grad has been used in an in-place operation."

    def make(base):
        class DirtyNotReturned(base):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x * 1

            @staticmethod
            def backward(ctx, grad):
                return grad

        return DirtyNotReturned

    mt, me = raises_like(
        lambda: make(torch.autograd.Function).apply(T([1.0], requires_grad=True).clone()),
        lambda: make(Function).apply(E([1.0], requires_grad=True).clone()),
    )
    assert me == mt


# ----------------------------------------------------------------------------- non-differentiable


def test_mark_non_differentiable_output():
    tf, ef = make_max(torch.autograd.Function), make_max(Function)
    xt, xe = T(X, requires_grad=True), E(X, requires_grad=True)
    vt, it = tf.apply(xt)
    ve, ie = ef.apply(xe)
    close(ve, vt)
    assert ie.tolist() == it.tolist()
    assert ve.requires_grad and not ie.requires_grad and ie.grad_fn is None
    vt.sum().backward()
    ve.sum().backward()
    close(xe.grad, xt.grad)
    # the non-differentiable output still gets a (zero) gradient slot
    close(ve.grad_fn.grad_indices, vt.grad_fn.grad_indices)


def test_input_returned_as_is_and_marked_non_differentiable():
    """The returned alias of an input marked non-differentiable requires no grad (the mark
    must survive the input being replaced by its alias), as in PyTorch."""
    def make(base):
        class PassThrough(base):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_non_differentiable(x)
                return x, x * 2

            @staticmethod
            def backward(ctx, g_same, g_double):
                return g_double * 2
        return PassThrough

    xt, xe = T(X, requires_grad=True), E(X, requires_grad=True)
    (at, bt), (ae, be) = make(torch.autograd.Function).apply(xt), make(Function).apply(xe)
    assert (ae.requires_grad, be.requires_grad) == (at.requires_grad, bt.requires_grad)
    assert (ae.requires_grad, be.requires_grad) == (False, True)
    assert ae is not xe and ae.grad_fn is None
    bt.sum().backward()
    be.sum().backward()
    close(xe.grad, xt.grad)


def test_float_output_marked_non_differentiable_and_integer_outputs():
    def make(base):
        class Split(base):
            @staticmethod
            def forward(ctx, x):
                a, b = x * 2, x * 3
                ctx.mark_non_differentiable(b)
                return a, b, x.long()

            @staticmethod
            def backward(ctx, ga, gb, gi):
                ctx.got = (gb, gi)
                return ga * 2

        return Split

    tf, ef = make(torch.autograd.Function), make(Function)
    xt, xe = T([1.5, 2.5], requires_grad=True), E([1.5, 2.5], requires_grad=True)
    at, bt, it = tf.apply(xt)
    ae, be, ie = ef.apply(xe)
    assert not be.requires_grad and be.grad_fn is None and be.is_leaf
    assert not ie.requires_grad and ie.dtype == et.int64
    assert (bt.requires_grad, it.requires_grad) == (False, False)
    at.sum().backward()
    ae.sum().backward()
    close(xe.grad, xt.grad)
    close(ae.grad_fn.got[0], at.grad_fn.got[0])
    assert ae.grad_fn.got[1].tolist() == at.grad_fn.got[1].tolist() == [0, 0]


# ----------------------------------------------------------------------------- once_differentiable


def test_once_differentiable_runs_backward_without_grad_mode():
    tf, ef = make_cube(torch.autograd.Function, True), make_cube(Function, True)
    xt, xe = T([1.0, 2.0], requires_grad=True), E([1.0, 2.0], requires_grad=True)
    (gt,) = torch.autograd.grad(tf.apply(xt).sum(), xt, create_graph=True)
    (ge,) = ea.grad(ef.apply(xe).sum(), xe, create_graph=True)
    close(ge, gt)
    # the incoming gradient (ones) needs no grad: the result is a plain tensor, as in torch
    assert ge.requires_grad == gt.requires_grad == False  # noqa: E712


def test_once_differentiable_double_backward_error():
    tf, ef = make_cube(torch.autograd.Function, True), make_cube(Function, True)
    xt, xe = T([1.0, 2.0], requires_grad=True), E([1.0, 2.0], requires_grad=True)
    # the gradient reaching Cube depends on x: double backward goes through Cube's backward
    (gt,) = torch.autograd.grad((tf.apply(xt) * xt).sum(), xt, create_graph=True)
    (ge,) = ea.grad((ef.apply(xe) * xe).sum(), xe, create_graph=True)
    close(ge, gt)
    names = sorted(n.name() for n, _ in ge.grad_fn.next_functions if n is not None)
    assert "Error" in names
    mt, me = raises_like(lambda: gt.sum().backward(), lambda: ge.sum().backward())
    assert me == mt == (
        "trying to differentiate twice a function that was marked with @once_differentiable"
    )
    # a path to x that avoids the error node works, as in torch
    (gt,) = torch.autograd.grad((tf.apply(xt) * xt).sum(), xt, create_graph=True)
    (ge,) = ea.grad((ef.apply(xe) * xe).sum(), xe, create_graph=True)
    close(ea.grad(ge.sum(), xe)[0], torch.autograd.grad(gt.sum(), xt)[0])


def test_cube_without_once_differentiable_double_backward():
    tf, ef = make_cube(torch.autograd.Function, False), make_cube(Function, False)
    xt = T([1.0, 2.0], torch.float64, requires_grad=True)
    xe = E([1.0, 2.0], et.float64, requires_grad=True)
    (gt,) = torch.autograd.grad(tf.apply(xt).sum(), xt, create_graph=True)
    (ge,) = ea.grad(ef.apply(xe).sum(), xe, create_graph=True)
    close(ge, gt)
    (ggt,) = torch.autograd.grad(gt.sum(), xt)
    (gge,) = ea.grad(ge.sum(), xe)
    close(gge, ggt)
    assert gge.tolist() == [6.0, 12.0]


# ----------------------------------------------------------------------------- gradient checks


def _pair(body_t, body_e):
    """Two Functions, ``forward(*args) = args[-1] * 2``, with the given backwards."""

    def make(base, body):
        class Bad(base):
            @staticmethod
            def forward(ctx, *args):
                return args[-1] * 2

            @staticmethod
            def backward(ctx, grad):
                return body(grad)

        Bad.__name__ = Bad.__qualname__ = "Bad"
        return Bad

    return make(torch.autograd.Function, body_t), make(Function, body_e)


def test_wrong_number_of_gradients():
    tf, ef = _pair(lambda g: (g,), lambda g: (g,))

    def run(f, mk):
        def go():
            f.apply(mk([1.0], requires_grad=True), mk([2.0], requires_grad=True)).sum().backward()

        return go

    mt, me = raises_like(run(tf, T), run(ef, E))
    head = "function BadBackward returned an incorrect number of gradients"
    assert me == mt == f"{head} (expected 2, got 1)"
    # too many: an error too, unless the extra ones are None
    tf, ef = _pair(lambda g: (g, g), lambda g: (g, g))
    mt, me = raises_like(
        lambda: tf.apply(T([1.0], requires_grad=True)).sum().backward(),
        lambda: ef.apply(E([1.0], requires_grad=True)).sum().backward(),
    )
    assert me == mt == f"{head} (expected 1, got 2)"
    tf, ef = _pair(lambda g: (g * 2, None, None), lambda g: (g * 2, None, None))
    xe = E([1.0], requires_grad=True)
    ef.apply(xe).sum().backward()
    assert xe.grad.tolist() == [2.0]


def test_wrong_gradient_shape():
    tf, ef = _pair(lambda g: (None, torch.ones(3)), lambda g: (None, et.ones(3)))
    mt, me = raises_like(
        lambda: tf.apply(2, T(X, requires_grad=True)).sum().backward(),
        lambda: ef.apply(2, E(X, requires_grad=True)).sum().backward(),
    )
    assert me == mt
    assert me == (
        "Function BadBackward returned an invalid gradient at index 0 - got [3] but expected "
        "shape compatible with [2, 3]"
    )


def test_broadcastable_gradient_is_summed_and_dtype_cast():
    tf, ef = _pair(lambda g: torch.ones(4, 2, 3, dtype=torch.float64),
                   lambda g: et.ones(4, 2, 3, dtype=et.float64))
    xt, xe = T(X, requires_grad=True), E(X, requires_grad=True)
    tf.apply(xt).sum().backward()
    ef.apply(xe).sum().backward()
    close(xe.grad, xt.grad)
    assert xe.grad.dtype == et.float32 and xt.grad.dtype == torch.float32
    # the input's shape must expand to the gradient's, not the other way round
    tf, ef = _pair(lambda g: torch.ones(1, 3), lambda g: et.ones(1, 3))
    mt, me = raises_like(
        lambda: tf.apply(T(X, requires_grad=True)).sum().backward(),
        lambda: ef.apply(E(X, requires_grad=True)).sum().backward(),
    )
    assert me == mt


def test_gradient_for_non_tensor_input_and_non_tensor_gradient():
    tf, ef = _pair(lambda g: (g, g), lambda g: (g, g))
    mt, me = raises_like(
        lambda: tf.apply(3, T([1.0], requires_grad=True)).sum().backward(),
        lambda: ef.apply(3, E([1.0], requires_grad=True)).sum().backward(),
    )
    assert me == mt == (
        "function BadBackward returned a gradient different than None at position 1, but the "
        "corresponding forward input was not a Variable"
    )
    tf, ef = _pair(lambda g: 1.0, lambda g: 1.0)
    mt, me = raises_like(
        lambda: tf.apply(T([1.0], requires_grad=True)).sum().backward(),
        lambda: ef.apply(E([1.0], requires_grad=True)).sum().backward(),
    )
    assert me == mt == "expected Variable or None (got float)"


# ----------------------------------------------------------------------------- saved tensors


def test_saved_tensor_modified_in_place():
    xt, xe = T(X, requires_grad=True), E(X, requires_grad=True)
    yt, ye = TExp.apply(xt), EExp.apply(xe)
    yt.mul_(2)
    ye.mul_(2)
    mt, me = raises_like(lambda: yt.sum().backward(), lambda: ye.sum().backward())
    # same message shape as torch's; ours names the producer by node and the saved slot
    head = (
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: "
    )
    assert mt.startswith(head) and me.startswith(head)
    assert "[ember.FloatTensor [2, 3]], which is output 0 of ExpBackward, is at version 1; " \
        "expected version 0 instead" in me
    assert "(saved as 'saved_tensors[0]' by ExpBackward)" in me

    # a saved input written in place: the producer is the input's own node
    tf, ef = make_cube(torch.autograd.Function, False), make_cube(Function, False)
    at, ae = T(X, requires_grad=True).clone(), E(X, requires_grad=True).clone()
    ot, oe = tf.apply(at), ef.apply(ae)
    at.add_(1)
    ae.add_(1)
    mt, me = raises_like(lambda: ot.sum().backward(), lambda: oe.sum().backward())
    assert "is at version 1; expected version 0 instead" in me
    assert "which is output 0 of AddBackward0" in me


def test_saved_tensors_released_after_backward():
    xt, xe = T(X, requires_grad=True), E(X, requires_grad=True)
    yt, ye = TExp.apply(xt), EExp.apply(xe)
    yt.sum().backward()
    ye.sum().backward()
    mt, me = raises_like(lambda: yt.grad_fn.saved_tensors, lambda: ye.grad_fn.saved_tensors)
    assert mt.startswith("Trying to backward through the graph a second time")
    assert me.startswith("Trying to backward through the graph a second time")
    assert "in ExpBackward" in me
    mt, me = raises_like(lambda: yt.sum().backward(), lambda: ye.sum().backward())
    assert me.startswith("Trying to backward through the graph a second time")

    # with retain_graph: twice, gradients accumulate; nothing saved at all: still an error
    xe = E(X, requires_grad=True)
    ye = EExp.apply(xe)
    ye.sum().backward(retain_graph=True)
    ye.sum().backward()
    close(xe.grad, torch.tensor(X).exp() * 2, rtol=1e-5)


def test_save_for_backward_rejects_non_tensors():
    def make(base):
        class S(base):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad

        return S

    mt, me = raises_like(
        lambda: make(torch.autograd.Function).apply(T([1.0], requires_grad=True)),
        lambda: make(Function).apply(E([1.0], requires_grad=True)),
        TypeError,
    )
    assert me == mt == "save_for_backward can only save variables, but argument 1 is of type int"


def test_save_none_and_intermediate():
    class Mid(Function):
        @staticmethod
        def forward(ctx, x):
            mid = x * 3
            ctx.save_for_backward(None, mid)
            return mid.sin()

        @staticmethod
        def backward(ctx, grad):
            none, mid = ctx.saved_tensors
            assert none is None
            return grad * mid.cos() * 3

    class TMid(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            mid = x * 3
            ctx.save_for_backward(None, mid)
            return mid.sin()

        @staticmethod
        def backward(ctx, grad):
            none, mid = ctx.saved_tensors
            return grad * mid.cos() * 3

    xt, xe = T(X, requires_grad=True), E(X, requires_grad=True)
    TMid.apply(xt).sum().backward()
    Mid.apply(xe).sum().backward()
    close(xe.grad, xt.grad, rtol=1e-5)


def test_custom_function_inside_a_larger_graph():
    tf, ef = make_sincos(torch.autograd.Function), make_sincos(Function)
    xt, xe = T(X, requires_grad=True), E(X, requires_grad=True)
    wt, we = T(X.T.copy(), requires_grad=True), E(X.T.copy(), requires_grad=True)
    st, ct = tf.apply(xt.mm(wt), 1.0)
    se, ce = ef.apply(xe.mm(we), 1.0)
    (TExp.apply(st) * ct).sum().backward()
    (EExp.apply(se) * ce).sum().backward()
    close(xe.grad, xt.grad, rtol=1e-5, atol=1e-5)
    close(we.grad, wt.grad, rtol=1e-5, atol=1e-5)
