"""The backward / grad API against torch: gradients, retain_graph, create_graph, inputs=,
graph structure, leaves, hooks, anomaly mode and the error messages."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
import torch

import ember_autograd as ea
import ember_tensor as et
from ember_autograd import Function

LIBS = [
    pytest.param((torch, torch.autograd), id="torch"),
    pytest.param((et, ea), id="ember"),
]


def both(fn):
    """Runs ``fn(lib, autograd)`` for torch and for ember; returns (torch, ember) results."""
    return fn(torch, torch.autograd), fn(et, ea)


def lst(t):
    return None if t is None else np.asarray(t.detach().tolist() if hasattr(t, "detach") else t)


def same(pair, rtol=1e-6):
    t, e = pair
    if isinstance(t, (tuple, list)):
        assert len(t) == len(e)
        for a, b in zip(t, e):
            same((a, b), rtol)
        return
    if t is None or e is None:
        assert t is None and e is None, (t, e)
        return
    np.testing.assert_allclose(lst(e), lst(t), rtol=rtol, atol=1e-6)


def messages(fn, exc=RuntimeError):
    """Both libraries raise ``exc`` from ``fn(lib, autograd)``; returns (torch, ember) messages."""
    out = []
    for lib, ag in ((torch, torch.autograd), (et, ea)):
        with pytest.raises(exc) as info:
            fn(lib, ag)
        out.append(str(info.value))
    return tuple(out)


# ----------------------------------------------------------------------------- backward / grad


def test_backward_with_gradient_argument():
    def run(lib, ag):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x * x).backward(lib.tensor([1.0, 0.5, 2.0]))
        return x.grad

    same(both(run))


def test_backward_casts_a_real_gradient_of_another_dtype():
    """PyTorch's engine casts the gradient given to the output's dtype (an int8 gradient of a
    bfloat16 output, a float64 one of a float32 output)."""

    def run(lib, ag):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.bfloat16, requires_grad=True)
        (x * 2).backward(lib.tensor([1, -2, 3], dtype=lib.int8))
        y = lib.tensor([1.0, 2.0], requires_grad=True)
        (y * y).backward(lib.tensor([0.5, 1.5], dtype=lib.float64))
        return x.grad, y.grad

    (gt, ht), (ge, he) = both(run)
    assert str(ge.dtype).split(".")[-1] == str(gt.dtype).split(".")[-1] == "bfloat16"
    np.testing.assert_array_equal(ge.float().numpy(), gt.float().numpy())
    np.testing.assert_array_equal(he.numpy(), ht.numpy())


def test_non_scalar_backward_needs_gradient():
    mt, me = messages(lambda lib, ag: (lib.tensor([1.0, 2.0], requires_grad=True) * 2).backward())
    assert me == mt == "grad can be implicitly created only for scalar outputs"


def test_gradient_shape_mismatch():
    def run(lib, ag):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).backward(lib.ones(3))

    mt, me = messages(run)
    assert mt.startswith("Mismatch in shape: grad_output[0] has a shape of ")
    assert me.startswith("Mismatch in shape: grad_output[0] has a shape of ")


def test_backward_of_tensor_without_grad():
    mt, me = messages(lambda lib, ag: lib.ones(2).sum().backward())
    assert me == mt == "element 0 of tensors does not require grad and does not have a grad_fn"


def test_backward_several_roots():
    def run(lib, ag):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        ag.backward([(x * 2).sum(), x * 3], [None, lib.tensor([1.0, -1.0])])
        return x.grad

    same(both(run))


def test_second_backward_without_retain_graph():
    def run(lib, ag):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        z = (x * x).sum()
        z.backward()
        z.backward()

    mt, me = messages(run)
    head = "Trying to backward through the graph a second time"
    assert mt.startswith(head) and me.startswith(head)
    assert "Specify retain_graph=True if you need to backward through the graph a second time" in me


def test_retain_graph_accumulates():
    def run(lib, ag):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        z = (x * x * x).sum()
        z.backward(retain_graph=True)
        first = x.grad.clone()
        z.backward()
        return first, x.grad

    t, e = both(run)
    same((t, e))
    assert lst(e[1]).tolist() == [6.0, 24.0]


def test_create_graph_second_derivative_of_cube():
    def run(lib, ag):
        x = lib.tensor(2.0, requires_grad=True)
        y = x * x * x
        (g,) = ag.grad(y, x, create_graph=True)
        assert g.requires_grad and g.grad_fn is not None
        (gg,) = ag.grad(g, x)
        return g, gg

    t, e = both(run)
    same((t, e))
    assert float(e[1]) == 12.0 and float(e[0]) == 12.0


def test_create_graph_backward_keeps_grad_graph():
    def run(lib, ag):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * x * x).sum().backward(create_graph=True)
        g = x.grad
        assert g.requires_grad
        x.grad = None
        (gg,) = ag.grad(g.sum(), x)
        return g, gg

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about the grad <-> leaf cycle
        same(both(run))


def test_grad_with_grad_outputs_leaves_grad_untouched():
    def run(lib, ag):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (g,) = ag.grad(x * x, x, grad_outputs=lib.tensor([1.0, 3.0]))
        assert x.grad is None
        return g

    same(both(run))


def test_grad_of_non_leaf():
    def run(lib, ag):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 3
        return ag.grad((h * h).sum(), h)

    same(both(run))


def test_grad_allow_unused_and_materialize():
    def run(lib, ag):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([5.0], requires_grad=True)
        a = ag.grad((x * x).sum(), [x, w], allow_unused=True)
        b = ag.grad((x * x).sum(), [x, w], allow_unused=True, materialize_grads=True)
        return a, b

    t, e = both(run)
    assert e[0][1] is None and t[0][1] is None
    same((t[0][0], e[0][0]))
    same((t[1], e[1]))


def test_grad_unused_input_error():
    def run(lib, ag):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([5.0], requires_grad=True)
        ag.grad((x * x).sum(), [x, w])

    mt, me = messages(run)
    tail = (
        "appears to not have been used in the graph. Set allow_unused=True if this is the "
        "desired behavior."
    )
    assert mt.endswith(tail) and me.endswith(tail)


def test_grad_unused_input_error_names_index():
    def run(lib, ag):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([5.0], requires_grad=True)
        ag.grad((x * x).sum(), [x, w])

    mt, me = messages(run)
    assert me == mt


def test_grad_input_not_requiring_grad():
    def run(lib, ag):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        ag.grad((x * x).sum(), [lib.ones(2)])

    mt, me = messages(run)
    assert me == mt == "One of the differentiated Tensors does not require grad"


def test_backward_inputs_leaf_and_non_leaf():
    def run(lib, ag):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        h = a * b
        (h * h).sum().backward(inputs=[a])
        first = (a.grad, b.grad)
        a.grad = None
        h = a * b
        (h * h).sum().backward(inputs=[h])
        return first, (h.grad, a.grad, b.grad)

    t, e = both(run)
    assert e[0][1] is None and t[0][1] is None
    same((t[0][0], e[0][0]))
    same((t[1][0], e[1][0]))
    assert e[1][1] is None and e[1][2] is None


def test_backward_empty_inputs():
    mt, me = messages(
        lambda lib, ag: (lib.ones(2, requires_grad=True) * 2).sum().backward(inputs=[])
    )
    assert me == mt == "`inputs` argument to `backward()` cannot be empty."


# ----------------------------------------------------------------------------- graph structure


@pytest.mark.parametrize(
    "expr, name",
    [
        (lambda a, b: a * b, "MulBackward0"),
        (lambda a, b: a + b, "AddBackward0"),
        (lambda a, b: a - b, "SubBackward0"),
        (lambda a, b: a / b, "DivBackward0"),
        (lambda a, b: -a, "NegBackward0"),
        (lambda a, b: a.exp(), "ExpBackward0"),
        (lambda a, b: (a * b).sum(), "SumBackward0"),
        (lambda a, b: a.view(2, 1), "ViewBackward0"),
        (lambda a, b: a.view(1, 2).t(), "TBackward0"),
        (lambda a, b: a.clone(), "CloneBackward0"),
    ],
)
def test_grad_fn_names(expr, name):
    def run(lib, ag):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        return expr(a, b).grad_fn

    t, e = both(run)
    assert type(t).__name__ == name
    assert e.name() == name and type(e).__name__ == name


def test_next_functions_and_leaves():
    a = et.tensor([1.0, 2.0], requires_grad=True)
    b = et.tensor([3.0, 4.0], requires_grad=True)
    m = a * b + a
    nf = m.grad_fn.next_functions
    assert [(n.name(), nr) for n, nr in nf] == [("MulBackward0", 0), ("AccumulateGrad", 0)]
    acc_a = nf[1][0]
    assert acc_a.variable is a
    mul_nf = nf[0][0].next_functions
    assert mul_nf[0][0] is acc_a  # one AccumulateGrad per leaf
    assert mul_nf[1][0].variable is b
    assert isinstance(m.grad_fn, ea.Node)
    # torch's view of the same graph
    at = torch.tensor([1.0, 2.0], requires_grad=True)
    bt = torch.tensor([3.0, 4.0], requires_grad=True)
    mt = at * bt + at
    tnf = mt.grad_fn.next_functions
    assert [type(n).__name__ for n, _ in tnf] == ["MulBackward0", "AccumulateGrad"]
    assert tnf[0][0].next_functions[0][0] is tnf[1][0]


def test_next_functions_has_none_edge_for_input_without_grad():
    def run(lib, ag):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        c = lib.ones(2)
        return [(None if n is None else 0, nr) for n, nr in (a * c).grad_fn.next_functions]

    t, e = both(run)
    assert t == [(0, 0), (None, 0)]
    assert e == t


def test_multi_output_node_output_nr():
    from ember_autograd.graph import meta_of

    a = et.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    parts = a.unbind(0)
    assert parts[0].grad_fn is parts[1].grad_fn
    assert parts[0].grad_fn.name() == "UnbindBackward0"
    assert [meta_of(p).output_nr for p in parts] == [0, 1]
    (parts[1] * 2).sum().backward()
    assert a.grad.tolist() == [[0.0, 0.0], [2.0, 2.0]]
    # torch: the same
    at = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    pt = at.unbind(0)
    assert [p.output_nr for p in pt] == [0, 1]
    assert type(pt[0].grad_fn).__name__ == "UnbindBackward0"


def test_is_leaf_requires_grad_detach():
    def run(lib, ag):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        c = lib.ones(2)
        m = a * 2
        info = [a.is_leaf, c.is_leaf, m.is_leaf, m.requires_grad, c.requires_grad]
        c.requires_grad_()
        info += [c.requires_grad, c.is_leaf, (c * 2).requires_grad]
        d = m.detach()
        info += [d.requires_grad, d.is_leaf, d.grad_fn is None]
        d[0] = 7.0  # shares storage with m
        info += [float(m.detach()[0])]
        m2 = a * 3
        m2.detach_()
        info += [m2.requires_grad, m2.grad_fn is None, m2.is_leaf]
        return info

    t, e = both(run)
    assert e == t


def test_requires_grad_of_non_leaf_cannot_be_cleared():
    def run(lib, ag):
        m = lib.tensor([1.0], requires_grad=True) * 2
        m.requires_grad = False

    mt, me = messages(run)
    assert me == mt


def test_integer_outputs_do_not_require_grad():
    def run(lib, ag):
        x = lib.tensor([1.0, 3.0, 2.0], requires_grad=True)
        return [
            x.argmax().requires_grad,
            x.long().requires_grad,
            (x > 1).requires_grad,
            x.max(0).indices.requires_grad,
            x.max(0).values.requires_grad,
            x.argmax().grad_fn is None,
        ]

    t, e = both(run)
    assert e == t == [False, False, False, False, True, True]


def test_out_argument_with_grad_input():
    def run(lib, ag):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        lib.mul(a, a, out=lib.empty(2))

    mt, me = messages(run)
    assert me == mt == (
        "mul(): functions with out=... arguments don't support automatic differentiation, but "
        "one of the arguments requires grad."
    )


@pytest.mark.parametrize("call", [
    lambda lib, a: lib.cat([a, a], out=lib.empty(4)),  # in a list
    lambda lib, a: lib.atan2(lib.ones(2), other=a, out=lib.empty(2)),  # a composite's keyword
])
def test_out_argument_with_grad_input_anywhere_in_the_arguments(call):
    def run(lib, ag):
        call(lib, lib.tensor([1.0, 2.0], requires_grad=True))

    mt, me = messages(run)
    assert "functions with out=... arguments don't support automatic differentiation" in mt
    assert me == mt


def test_comparisons_write_out_freely_as_their_results_have_no_gradient():
    def run(lib, ag):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        out = lib.zeros(2, requires_grad=True)
        lib.le(a, 1.5, out=lib.empty(2))
        lib.gt(lib.ones(2), 0, out=out)
        return out.tolist()

    t, e = both(run)
    assert e == t == [1.0, 1.0]


def test_leaf_in_place_error():
    def run(lib, ag):
        lib.tensor([1.0], requires_grad=True).mul_(2)

    mt, me = messages(run)
    head = "a leaf Variable that requires grad is being used in an in-place operation"
    assert mt.startswith(head) and me.startswith(head)


# ----------------------------------------------------------------------------- retain_grad / hooks


def test_retain_grad():
    def run(lib, ag):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        h = a * 3
        h.retain_grad()
        h.retain_grad()  # twice: no double accumulation
        flags = (h.retains_grad, a.retains_grad)
        (h * h).sum().backward()
        return flags, h.grad, a.grad

    t, e = both(run)
    assert e[0] == t[0] == (True, False)
    same((t[1:], e[1:]))


def test_non_leaf_grad_is_none_without_retain_grad():
    h = et.tensor([1.0, 2.0], requires_grad=True) * 3
    (h * h).sum().backward()
    assert h.grad is None


def test_hook_errors_on_tensors_without_grad():
    mt, me = messages(lambda lib, ag: lib.ones(2).register_hook(lambda g: g))
    assert me == mt == "cannot register a hook on a tensor that doesn't require gradient"
    mt, me = messages(lambda lib, ag: lib.ones(2).retain_grad())
    assert me == mt == "can't retain_grad on Tensor that has requires_grad=False"


def test_leaf_hook_modifies_and_is_removed():
    def run(lib, ag):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        handle = a.register_hook(lambda g: g * 10)
        (a * a).sum().backward()
        first = a.grad.clone()
        handle.remove()
        a.grad = None
        (a * a).sum().backward()
        return first, a.grad

    same(both(run))


def test_non_leaf_hook_sees_and_replaces_grad():
    def run(lib, ag):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        h = a * 3
        seen = []
        h.register_hook(lambda g: seen.append(g.clone()))  # returns None: grad unchanged
        h.register_hook(lambda g: g + 1)
        (h * h).sum().backward()
        g1 = a.grad.clone()
        a.grad = None
        h = a * 3
        handle = h.register_hook(lambda g: g * 0)
        handle.remove()
        (h * h).sum().backward()
        return seen, g1, a.grad

    same(both(run))


def test_hook_then_retain_grad_order():
    def run(lib, ag):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        h = a * 3
        h.retain_grad()
        h.register_hook(lambda g: g * 2)
        (h * h).sum().backward()
        return h.grad, a.grad

    same(both(run))


def test_node_prehook_and_hook():
    def run(lib, ag):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        h = a * b
        log = []

        def pre(grad_outputs):
            log.append(("pre", [g.tolist() for g in grad_outputs]))
            return (grad_outputs[0] * 2,)

        def post(grad_inputs, grad_outputs):
            log.append(
                ("post", [g.tolist() for g in grad_inputs], [g.tolist() for g in grad_outputs])
            )

        r1 = h.grad_fn.register_prehook(pre)
        r2 = h.grad_fn.register_hook(post)
        h.sum().backward()
        first = (a.grad.clone(), b.grad.clone())
        r1.remove()
        r2.remove()
        a.grad = b.grad = None
        h = a * b
        h.grad_fn.register_hook(lambda gi, go: (gi[0] * 0 + 5, gi[1]))
        h.sum().backward()
        return log, first, (a.grad, b.grad)

    t, e = both(run)
    assert e[0] == t[0]
    same((t[1:], e[1:]))


# ----------------------------------------------------------------------------- anomaly mode


class _Boom(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        raise ValueError("boom in backward")


class _NaNGrad(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, grad):
        return grad * float("nan")


def _user_forward(x):
    return _Boom.apply(x)  # the line the trace must point at


@pytest.fixture
def anomaly_off():
    assert not ea.is_anomaly_enabled()
    yield
    ea.set_detect_anomaly(False)


def test_detect_anomaly_warns_and_restores(anomaly_off):
    with pytest.warns(UserWarning) as rec:
        cm = ea.detect_anomaly()
    with pytest.warns(UserWarning) as rec_t:
        torch.autograd.detect_anomaly()
    assert str(rec[0].message) == str(rec_t[0].message) == (
        "Anomaly Detection has been enabled. This mode will increase the runtime and should only "
        "be enabled for debugging."
    )
    assert rec[0].filename == __file__  # points at the caller
    assert not ea.is_anomaly_enabled()  # created, not entered
    with cm:
        assert ea.is_anomaly_enabled() and ea.is_anomaly_check_nan_enabled()
    assert not ea.is_anomaly_enabled()
    with pytest.warns(UserWarning):
        cm = ea.detect_anomaly(check_nan=False)
    with cm:
        assert ea.is_anomaly_enabled() and not ea.is_anomaly_check_nan_enabled()
    assert ea.is_anomaly_check_nan_enabled()


def test_detect_anomaly_as_decorator(anomaly_off):
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):

        @ea.detect_anomaly()
        def f():
            return ea.is_anomaly_enabled()

    assert not ea.is_anomaly_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # calling the decorated function warns no more
        assert f() is True
        assert f() is True
    assert not ea.is_anomaly_enabled()


def test_set_detect_anomaly_call_context_and_decorator(anomaly_off):
    ea.set_detect_anomaly(True)
    assert ea.is_anomaly_enabled()
    with ea.set_detect_anomaly(False):
        assert not ea.is_anomaly_enabled()
    assert ea.is_anomaly_enabled()
    ea.set_detect_anomaly(False)
    with ea.set_detect_anomaly(True, check_nan=False):
        assert ea.is_anomaly_enabled() and not ea.is_anomaly_check_nan_enabled()
    assert not ea.is_anomaly_enabled() and ea.is_anomaly_check_nan_enabled()

    @ea.set_detect_anomaly(True)
    def g():
        return ea.is_anomaly_enabled()

    assert not ea.is_anomaly_enabled()  # decorating changes nothing
    assert g() is True
    assert not ea.is_anomaly_enabled()


def test_anomaly_trace_points_at_user_code(anomaly_off):
    x = et.ones(2, requires_grad=True)
    y = _user_forward(x)  # recorded without anomaly mode: no trace
    with pytest.raises(ValueError) as info:
        y.sum().backward()
    assert str(info.value) == "boom in backward"
    with ea.set_detect_anomaly(True):
        y = _user_forward(x)
        with pytest.raises(ValueError) as info:
            y.sum().backward()
    msg = str(info.value)
    assert msg.startswith("boom in backward\n")
    assert "_BoomBackward" in msg
    assert f'File "{__file__}"' in msg
    assert "in _user_forward" in msg and "return _Boom.apply(x)" in msg
    assert "in test_anomaly_trace_points_at_user_code" in msg
    assert os.sep + "ember_autograd" + os.sep not in msg  # internal frames trimmed
    assert isinstance(info.value.__cause__, ValueError)


def test_anomaly_trace_of_generated_node(anomaly_off):
    def run(lib, ag):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.mul_(3)  # y was not saved: fine
        z = x.exp()
        w = z * 1
        z.add_(1)  # z is saved by ExpBackward0
        return w.sum()

    with ea.set_detect_anomaly(True):
        loss = run(et, ea)
        with pytest.raises(RuntimeError) as info:
            loss.backward()
    msg = str(info.value)
    assert msg.startswith("one of the variables needed for gradient computation has been modified")
    assert "ExpBackward0" in msg and "z = x.exp()" in msg
    assert os.sep + "ember_autograd" + os.sep not in msg.split("\n", 1)[1]


def test_anomaly_nan_check(anomaly_off):
    def run(lib, ag):
        z = lib.zeros(1, requires_grad=True)
        ((z * z) / z).sum().backward()

    with torch.autograd.set_detect_anomaly(True), ea.set_detect_anomaly(True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch also warns with the forward trace
            mt, me = messages(run)
    assert mt == "Function 'DivBackward0' returned nan values in its 1th output."
    assert me.startswith(mt)
    assert "((z * z) / z).sum().backward()" in me  # the forward trace of the node
    # check_nan=False, or anomaly mode off: no check
    with ea.set_detect_anomaly(True, check_nan=False):
        x = et.ones(2, requires_grad=True)
        _NaNGrad.apply(x).sum().backward()
    assert np.isnan(x.grad.tolist()).all()
    x.grad = None
    with ea.set_detect_anomaly(True):
        nan_msg = r"^Function '_NaNGradBackward' returned nan values in its 0th output\."
        with pytest.raises(RuntimeError, match=nan_msg):
            _NaNGrad.apply(x).sum().backward()
    _NaNGrad.apply(x).sum().backward()
    assert np.isnan(x.grad.tolist()).all()


def test_anomaly_is_global_not_thread_local(anomaly_off):
    import threading

    seen = {}
    with ea.set_detect_anomaly(True):
        th = threading.Thread(target=lambda: seen.setdefault("v", ea.is_anomaly_enabled()))
        th.start()
        th.join()
    assert seen["v"] is True  # as in torch: one global switch


class _TwoArgError(Exception):
    def __init__(self, code, detail):
        super().__init__(f"{code}: {detail}")


class _RaisesTwoArgError(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        raise _TwoArgError(3, "bad")


def test_anomaly_keeps_exceptions_that_take_several_arguments(anomaly_off):
    x = et.ones(2, requires_grad=True)
    with ea.set_detect_anomaly(True):
        y = _RaisesTwoArgError.apply(x)
        with pytest.raises(_TwoArgError) as info:
            y.sum().backward()
    assert str(info.value) == "3: bad"
    notes = getattr(info.value, "__notes__", [])
    if hasattr(info.value, "add_note"):  # Python >= 3.11: the trace comes as a note
        assert any("y = _RaisesTwoArgError.apply(x)" in n for n in notes)


def test_leaf_gradients_never_alias_each_other_or_the_callers_tensors():
    """.grad may take the incoming gradient without a copy only when nothing else holds it."""
    x = et.ones(3, requires_grad=True)
    y = et.ones(3, requires_grad=True)
    (x + y).sum().backward()  # add hands one gradient to both inputs
    x.grad.mul_(5)
    assert y.grad.tolist() == [1.0, 1.0, 1.0]

    g = et.full((3,), 2.0)
    z = et.ones(3, requires_grad=True)
    (z * 1).backward(g)  # mul passes g through for the scalar factor 1
    z.grad.add_(1)
    assert g.tolist() == [2.0, 2.0, 2.0]

    w = et.ones(2, 2, requires_grad=True)
    v = et.ones(2, 2, requires_grad=True)
    s = w.view(4) + v.reshape(4)  # the gradients reaching w and v are views of one tensor
    s.sum().backward()
    w.grad.zero_()
    assert v.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_fresh_leaf_gradient_is_taken_without_a_copy():
    a = et.randn(4, 3, requires_grad=True)
    b = et.randn(3, 5)
    out = a.mm(b)
    made = []
    out.grad_fn.register_hook(lambda grad_in, grad_out: made.append(grad_in[0].data_ptr()))
    out.sum().backward()
    # the gradient of mm is a fresh tensor: .grad is it, not a copy of it
    assert made == [a.grad.data_ptr()]
    np.testing.assert_allclose(a.grad.numpy(), np.ones((4, 5)) @ b.numpy().T, rtol=1e-6)


def test_in_place_writes_on_two_threads_keep_their_own_old_values():
    """Big in-place ops release the GIL between the hook's before and after calls: the old
    value kept for one thread's write must not be taken by another thread's."""
    import threading

    errors = []

    def work(seed):
        try:
            for _ in range(10):
                gen = et.Generator().manual_seed(seed)
                x = (et.rand(200_000, generator=gen) + 1).requires_grad_()
                a = x * 1
                a.mul_(a)  # a = x**2: backward needs the old a
                a.sum().backward()
                np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-6)
        except Exception as exc:  # reported to the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in (1, 2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_backward_on_several_threads_accumulates_every_gradient():
    import threading

    w = et.zeros(1000, requires_grad=True)
    x = et.ones(1000)

    def work():
        for _ in range(50):
            (w * x).sum().backward()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert w.grad.tolist() == [200.0] * 1000


def test_non_tensor_outputs_or_inputs_are_type_errors():
    x = et.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match=r"inputs\[0\]: expected a Tensor, got float"):
        ea.grad((x * 2).sum(), [1.0])
    with pytest.raises(TypeError, match="outputs: expected a Tensor or a sequence of Tensors"):
        ea.grad(None, x)
    with pytest.raises(TypeError, match=r"inputs\[0\]: expected a Tensor, got int"):
        (x * 2).sum().backward(inputs=[3])


@pytest.mark.parametrize("name", ["float", "to", "contiguous", "type_as"])
def test_an_op_returning_its_input_records_nothing(name):
    # x.float() of a float32 x is x itself (PyTorch's too), and x's history stays as it was
    def same(t, lib):
        return {"float": t.float, "to": lambda: t.to(lib.float32), "contiguous": t.contiguous,
                "type_as": lambda: t.type_as(t)}[name]()

    tx = torch.randn(3, requires_grad=True)
    assert same(tx, torch) is tx and tx.is_leaf
    x = et.randn(3, requires_grad=True)
    assert same(x, et) is x and x.is_leaf and x.grad_fn is None
    z = x * 2
    node = z.grad_fn
    for _ in range(3):  # a node was once chained onto z's history at every such call
        assert same(z, et) is z
    assert z.grad_fn is node and type(node).__name__ == "MulBackward0"
    (same(z, et) * 3).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0, 6.0]
