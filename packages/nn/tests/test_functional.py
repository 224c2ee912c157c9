"""ember_nn.functional against torch.nn.functional: one row per function and setting, run
on both libraries from the same NumPy data in float32 and float64, comparing outputs and
the gradients of every input; float64 rows also pass ember_autograd.gradcheck. Then the
values and gradients at the kinks, the errors and the warnings."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember_autograd as ea
import ember_nn.functional as F
import ember_tensor as et
from nn_testing import assert_close, ember_from, np_of, pair, torch_from, torch_repr


@dataclass
class Arg:
    """One tensor argument: its NumPy values and whether it requires grad."""

    shape: tuple
    lo: float = -2.0
    hi: float = 2.0
    grad: bool = True
    away: float = 0.0  # keep |x - k| >= away for every kink k
    kinks: tuple = (0.0,)
    values: np.ndarray | None = None
    kind: str = "uniform"  # uniform | logprob | prob | sign | int

    def make(self, rng: np.random.Generator) -> np.ndarray:
        if self.values is not None:
            return np.asarray(self.values, dtype=np.float64)
        if self.kind == "sign":
            return rng.choice([-1.0, 1.0], size=self.shape)
        if self.kind == "int":
            return rng.integers(0, 4, size=self.shape)
        a = rng.uniform(self.lo, self.hi, size=self.shape)
        if self.kind in ("logprob", "prob"):
            e = np.exp(a)
            p = e / e.sum(-1, keepdims=True)
            return np.log(p) if self.kind == "logprob" else p
        for k in self.kinks:
            near = np.abs(a - k) < self.away
            a = np.where(near, k + np.sign(a - k + 1e-300) * self.away, a)
        return a


@dataclass
class Row:
    name: str
    ours: object  # fn(*tensors) -> tensor
    theirs: object
    args: list = field(default_factory=list)
    gradcheck: bool = True
    warns: bool = False  # the call warns on both libraries (kl_div 'mean')
    grad_scale: float = 10.0  # gradient tolerance, times the dtype's value tolerance


def row(name, ours, theirs, *args, **kw) -> Row:
    return Row(name, ours, theirs, list(args), **kw)


def both(fn_name, **kwargs):
    """The same functional, called with the same keyword arguments, on both libraries."""
    return (lambda *a: getattr(F, fn_name)(*a, **kwargs),
            lambda *a: getattr(TF, fn_name)(*a, **kwargs))


X = Arg((3, 4), away=0.05)
ROWS = [
    row("relu", *both("relu"), X),
    row("leaky_relu", *both("leaky_relu", negative_slope=0.2), X),
    row("elu", *both("elu", alpha=1.5), X),
    row("gelu", *both("gelu"), Arg((3, 4), lo=-4, hi=4)),
    row("gelu_tanh", *both("gelu", approximate="tanh"), Arg((3, 4), lo=-4, hi=4)),
    row("silu", *both("silu"), Arg((3, 4), lo=-5, hi=5)),
    row("sigmoid", *both("sigmoid"), Arg((3, 4), lo=-5, hi=5)),
    row("tanh", *both("tanh"), Arg((3, 4), lo=-3, hi=3)),
    row("softplus", *both("softplus"), Arg((3, 4), lo=-30, hi=30)),
    row("softplus_beta_threshold", *both("softplus", beta=2.0, threshold=1.0),
        Arg((3, 4), lo=-3, hi=3, away=0.05, kinks=(0.5,))),
    row("logsigmoid", *both("logsigmoid"), Arg((3, 4), lo=-30, hi=30)),
    row("hardtanh", *both("hardtanh", min_val=-0.5, max_val=0.7),
        Arg((3, 4), away=0.05, kinks=(-0.5, 0.7))),
    row("relu6", *both("relu6"), Arg((3, 4), lo=-3, hi=9, away=0.05, kinks=(0.0, 6.0))),
    row("selu", *both("selu"), X),
    row("celu", *both("celu", alpha=2.0), X),
    row("threshold", *both("threshold", threshold=0.3, value=-2.0),
        Arg((3, 4), away=0.05, kinks=(0.3,))),
    row("glu", *both("glu"), Arg((3, 4))),
    row("glu_dim0", *both("glu", dim=0), Arg((4, 3))),
    # PyTorch's hardsigmoid backward uses 1/6 in float32 for every dtype: a 3e-8 difference
    row("hardsigmoid", *both("hardsigmoid"), Arg((3, 4), lo=-5, hi=5, away=0.05,
                                                 kinks=(-3.0, 3.0)), grad_scale=1e3),
    row("hardswish", *both("hardswish"), Arg((3, 4), lo=-5, hi=5, away=0.05,
                                             kinks=(-3.0, 3.0))),
    row("mish", *both("mish"), Arg((3, 4), lo=-30, hi=30)),
    row("softsign", *both("softsign"), X),
    row("tanhshrink", *both("tanhshrink"), X),
    row("softmax", *both("softmax", dim=1), Arg((3, 4))),
    row("softmax_dim0", *both("softmax", dim=0), Arg((3, 4, 2))),
    row("log_softmax", *both("log_softmax", dim=-1), Arg((3, 4))),
    row("softmin", *both("softmin", dim=1), Arg((3, 4))),
    row("linear", *both("linear"), Arg((5, 3)), Arg((4, 3)), Arg((4,))),
    row("linear_nobias_3d", *both("linear"), Arg((2, 5, 3)), Arg((4, 3))),
    row("linear_1d", *both("linear"), Arg((3,)), Arg((4, 3)), Arg((4,))),
    row("bilinear", *both("bilinear"), Arg((5, 3)), Arg((5, 2)), Arg((4, 3, 2)), Arg((4,))),
    row("bilinear_nobias_3d", *both("bilinear"), Arg((2, 5, 3)), Arg((2, 5, 2)),
        Arg((4, 3, 2))),
    row("normalize", *both("normalize"), Arg((3, 4))),
    row("normalize_p1_dim0", *both("normalize", p=1.0, dim=0), Arg((3, 4), away=0.05)),
    row("pad_constant", *both("pad", pad=(1, 2, 0, 1), value=0.5), Arg((2, 3, 4))),
    row("pad_negative", *both("pad", pad=(-1, 2, 1, -1)), Arg((2, 3, 4))),
    row("pad_reflect", *both("pad", pad=(2, 1), mode="reflect"), Arg((2, 3, 4))),
    row("pad_reflect_2d", *both("pad", pad=(1, 2, 2, 1), mode="reflect"), Arg((2, 3, 4))),
    row("pad_replicate", *both("pad", pad=(3, 1, 0, 2), mode="replicate"), Arg((1, 2, 3, 4))),
    row("pad_circular", *both("pad", pad=(2, 4, 1, 1), mode="circular"), Arg((1, 2, 3, 4))),
    row("pad_circular_negative", *both("pad", pad=(-1, 2), mode="circular"), Arg((2, 4))),
    row("pad_reflect_3d", *both("pad", pad=(1, 1, 1, 0, 0, 2), mode="reflect"),
        Arg((1, 3, 3, 3))),
]

T = Arg((3, 4), lo=-2, hi=2, grad=True)
for _red in ("none", "mean", "sum"):
    ROWS += [
        row(f"mse_{_red}", *both("mse_loss", reduction=_red), X, T),
        row(f"mse_weight_{_red}", lambda a, b, w, r=_red: F.mse_loss(a, b, reduction=r, weight=w),
            lambda a, b, w, r=_red: TF.mse_loss(a, b, reduction=r, weight=w),
            X, T, Arg((3, 4), lo=0.1, hi=1.0, grad=False)),
        row(f"l1_{_red}", *both("l1_loss", reduction=_red),
            Arg((3, 4), values=np.linspace(-2, 2, 12).reshape(3, 4)),
            Arg((3, 4), values=np.linspace(1.9, -2.1, 12).reshape(3, 4))),
        row(f"smooth_l1_{_red}", *both("smooth_l1_loss", reduction=_red, beta=0.5),
            Arg((3, 4), values=np.linspace(-2, 2, 12).reshape(3, 4)), Arg((3, 4))),
        row(f"smooth_l1_beta0_{_red}", *both("smooth_l1_loss", reduction=_red, beta=0.0),
            Arg((3, 4), values=np.linspace(-2, 2, 12).reshape(3, 4)),
            Arg((3, 4), values=np.linspace(1.9, -2.1, 12).reshape(3, 4))),
        row(f"huber_{_red}", *both("huber_loss", reduction=_red, delta=0.7),
            Arg((3, 4), values=np.linspace(-2, 2, 12).reshape(3, 4)), Arg((3, 4))),
        row(f"huber_weight_{_red}",
            lambda a, b, w, r=_red: F.huber_loss(a, b, reduction=r, delta=0.7, weight=w),
            lambda a, b, w, r=_red: TF.huber_loss(a, b, reduction=r, delta=0.7, weight=w),
            Arg((3, 4), values=np.linspace(-2, 2, 12).reshape(3, 4)), Arg((3, 4)),
            Arg((3, 4), lo=0.1, hi=1.0, grad=False)),
        row(f"bce_{_red}", *both("binary_cross_entropy", reduction=_red),
            Arg((3, 4), lo=0.05, hi=0.95), Arg((3, 4), lo=0.0, hi=1.0)),
        row(f"bce_weight_{_red}",
            lambda a, b, w, r=_red: F.binary_cross_entropy(a, b, weight=w, reduction=r),
            lambda a, b, w, r=_red: TF.binary_cross_entropy(a, b, weight=w, reduction=r),
            Arg((3, 4), lo=0.05, hi=0.95), Arg((3, 4), lo=0.0, hi=1.0, grad=False),
            Arg((4,), lo=0.5, hi=2.0, grad=False)),
        row(f"bce_logits_{_red}", *both("binary_cross_entropy_with_logits", reduction=_red),
            Arg((3, 4), lo=-30, hi=30), Arg((3, 4), lo=0.0, hi=1.0)),
        row(f"bce_logits_weights_{_red}",
            lambda a, b, w, pw, r=_red: F.binary_cross_entropy_with_logits(
                a, b, w, reduction=r, pos_weight=pw),
            lambda a, b, w, pw, r=_red: TF.binary_cross_entropy_with_logits(
                a, b, w, reduction=r, pos_weight=pw),
            Arg((3, 4), lo=-5, hi=5), Arg((3, 4), lo=0.0, hi=1.0),
            Arg((3, 1), lo=0.5, hi=2.0, grad=False), Arg((4,), lo=0.5, hi=3.0, grad=False)),
        row(f"kl_div_log_target_{_red}", *both("kl_div", reduction=_red, log_target=True),
            Arg((3, 4), kind="logprob"), Arg((3, 4), kind="logprob"), warns=_red == "mean"),
        row(f"cosine_embedding_{_red}", *both("cosine_embedding_loss", reduction=_red,
                                              margin=0.2),
            Arg((5, 3)), Arg((5, 3)), Arg((5,), kind="sign", grad=False)),
    ]
ROWS += [
    row("kl_div_batchmean", *both("kl_div", reduction="batchmean"),
        Arg((3, 4), kind="logprob"), Arg((3, 4), kind="prob")),
    row("kl_div_sum", *both("kl_div", reduction="sum"),
        Arg((3, 4), kind="logprob"), Arg((3, 4), kind="prob")),
    row("kl_div_none_zero_target", *both("kl_div", reduction="none"),
        Arg((2, 3), kind="logprob"),
        Arg((2, 3), values=np.array([[0.5, 0.0, 0.5], [0.2, 0.3, 0.5]]), grad=False)),
    row("kl_div_mean", *both("kl_div"), Arg((3, 4), kind="logprob"), Arg((3, 4), kind="prob"),
        warns=True),
    row("cosine_embedding_single", *both("cosine_embedding_loss"),
        Arg((4,)), Arg((4,)), Arg((), values=np.array(-1.0), grad=False)),
]


def _run(r: Row, lib: str, tensors):
    fn = r.ours if lib == "ember" else r.theirs
    with warnings.catch_warnings():
        if r.warns:
            warnings.simplefilter("ignore", UserWarning)
        return fn(*tensors)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("r", ROWS, ids=[r.name for r in ROWS])
def test_values_and_gradients_match_torch(r: Row, dtype: str) -> None:
    rng = np.random.default_rng(abs(hash(r.name)) % 2**32)
    arrays = [a.make(rng) for a in r.args]
    ours = [ember_from(a, dtype, arg.grad) for a, arg in zip(arrays, r.args)]
    theirs = [torch_from(a, dtype, arg.grad) for a, arg in zip(arrays, r.args)]
    out, tout = _run(r, "ember", ours), _run(r, "torch", theirs)
    assert out.dtype == {"float32": et.float32, "float64": et.float64}[dtype], out.dtype
    assert_close(out, tout, dtype, f"{r.name}: output")
    weights = rng.uniform(0.5, 1.5, size=tuple(tout.shape))
    (out * ember_from(weights, dtype)).sum().backward()
    (tout * torch_from(weights, dtype)).sum().backward()
    for i, (a, b, arg) in enumerate(zip(ours, theirs, r.args)):
        if arg.grad:
            assert_close(a.grad, b.grad, dtype, f"{r.name}: gradient of argument {i}",
                         scale=r.grad_scale)


@pytest.mark.parametrize("r", [r for r in ROWS if r.gradcheck], ids=lambda r: r.name)
def test_gradcheck(r: Row) -> None:
    rng = np.random.default_rng(7)
    arrays = [a.make(rng) for a in r.args]
    inputs = tuple(ember_from(a, "float64", arg.grad) for a, arg in zip(arrays, r.args))
    with warnings.catch_warnings():
        if r.warns:
            warnings.simplefilter("ignore", UserWarning)
        assert ea.gradcheck(lambda *t: r.ours(*t), inputs)


SECOND_ORDER = ["gelu", "silu", "softplus", "logsigmoid", "elu", "softmax", "log_softmax",
                "mish", "glu", "softsign",
                "bce_logits_mean", "mse_mean", "normalize", "bilinear", "cosine_embedding_mean",
                "kl_div_batchmean"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_gradgradcheck(name: str) -> None:
    r = next(r for r in ROWS if r.name == name)
    rng = np.random.default_rng(11)
    arrays = [a.make(rng) for a in r.args]
    inputs = tuple(ember_from(a, "float64", arg.grad) for a, arg in zip(arrays, r.args))
    assert ea.gradgradcheck(lambda *t: r.ours(*t), inputs)


def test_bce_second_derivative_through_its_function() -> None:
    x = ember_from(np.array([0.2, 0.5, 0.9]), requires_grad=True)
    t = ember_from(np.array([0.0, 1.0, 0.3]))
    assert ea.gradgradcheck(lambda a: F.binary_cross_entropy(a, t), (x,))


# ----------------------------------------------------------------------------- kinks

KINKS = np.array([-3.0, -2.0, -1.0, -0.7, -0.5, 0.0, 0.5, 0.7, 1.0, 2.0, 3.0, 6.0, 20.0])

KINK_ROWS = [
    ("relu", {}), ("leaky_relu", {}), ("elu", {}), ("hardtanh", {}), ("relu6", {}),
    ("hardtanh", {"min_val": -0.5, "max_val": 0.5}), ("softplus", {"beta": 2.0, "threshold": 1.0}),
    ("softplus", {"threshold": 20.0}), ("logsigmoid", {}), ("silu", {}), ("gelu", {}),
    ("selu", {}), ("celu", {"alpha": 0.5}), ("hardsigmoid", {}), ("hardswish", {}),
    ("mish", {}), ("softsign", {}), ("threshold", {"threshold": 1.0, "value": -5.0}),
]


@pytest.mark.parametrize(("name", "kwargs"), KINK_ROWS, ids=lambda v: str(v))
def test_gradients_at_the_kinks_match_torch(name: str, kwargs: dict) -> None:
    x, tx = pair(KINKS, "float64", requires_grad=True)
    getattr(F, name)(x, **kwargs).sum().backward()
    getattr(TF, name)(tx, **kwargs).sum().backward()
    scale = 1e3 if name == "hardsigmoid" else 1.0  # see its row in ROWS
    assert_close(x.grad, tx.grad, "float64", name, scale=scale)


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [("l1_loss", {}), ("smooth_l1_loss", {"beta": 1.0}), ("huber_loss", {"delta": 1.0}),
     ("mse_loss", {})],
)
def test_loss_gradients_at_the_kinks_match_torch(name: str, kwargs: dict) -> None:
    target = np.zeros_like(KINKS)
    x, tx = pair(KINKS, "float64", requires_grad=True)
    getattr(F, name)(x, ember_from(target), **kwargs).backward()
    getattr(TF, name)(tx, torch_from(target), **kwargs).backward()
    assert_close(x.grad, tx.grad, "float64", name)


@pytest.mark.parametrize("name", ["mse_loss", "smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize(
    ("input_dtype", "target_dtype"),
    [("int64", "int64"), ("int32", "int32"), ("bool", "bool"), ("float32", "int64"),
     ("float64", "float64")],
)
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_regression_losses_take_the_dtypes_torch_takes(name, input_dtype, target_dtype,
                                                       reduction) -> None:
    """No integer or bool kernel, as in PyTorch (which raises NotImplementedError); a float
    input with an integer target promotes to the float dtype."""
    x_np, t_np = np.array([1, 0, 3]), np.array([2, 0, 1])
    x = et.tensor(x_np, dtype=getattr(et, input_dtype))
    t = et.tensor(t_np, dtype=getattr(et, target_dtype))
    tx = torch.tensor(x_np, dtype=getattr(torch, input_dtype))
    tt = torch.tensor(t_np, dtype=getattr(torch, target_dtype))
    try:
        want = getattr(TF, name)(tx, tt, reduction=reduction)
    except NotImplementedError:
        with pytest.raises(NotImplementedError, match=f"{name}: not implemented for dtype"):
            getattr(F, name)(x, t, reduction=reduction)
        return
    got = getattr(F, name)(x, t, reduction=reduction)
    assert str(got.dtype).rsplit(".", 1)[-1] == str(want.dtype).rsplit(".", 1)[-1]
    np.testing.assert_allclose(np_of(got), want.numpy(), rtol=1e-6)


def test_bce_gradient_is_finite_at_zero_and_one() -> None:
    values = np.array([0.0, 1.0, 1.0, 0.0, 0.5])
    targets = np.array([0.0, 1.0, 0.0, 1.0, 0.5])
    x, tx = pair(values, "float32", requires_grad=True)
    t, tt = pair(targets, "float32", requires_grad=True)
    out = F.binary_cross_entropy(x, t, reduction="sum")
    tout = TF.binary_cross_entropy(tx, tt, reduction="sum")
    assert_close(out, tout, "float32", "bce at 0 and 1 (logs clamped at -100)")
    out.backward()
    tout.backward()
    assert_close(x.grad, tx.grad, "float32", "d/dinput")
    # d/dtarget: the derivative of the clamped loss, -100 + ... = +-100 where PyTorch's
    # unclamped formula gives +-inf (listed in the differences page)
    np.testing.assert_array_equal(np_of(t.grad), [100.0, -100.0, -100.0, 100.0, 0.0])
    assert np.isinf(tt.grad.numpy()[:4]).all()


def test_sigmoid_bce_matches_the_logits_version_far_out() -> None:
    logits = ember_from(np.array([-40.0, -5.0, 0.0, 5.0, 40.0]), requires_grad=True)
    F.binary_cross_entropy_with_logits(logits, et.ones(5, dtype=et.float64)).backward()
    assert np.isfinite(np_of(logits.grad)).all()


# ----------------------------------------------------------------------------- in place


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [("relu", {}), ("leaky_relu", {"negative_slope": 0.3}), ("elu", {}), ("silu", {}),
     # celu: alpha a power of two (PyTorch's in-place celu_ takes 1/alpha in float32)
     ("hardtanh", {}), ("relu6", {}), ("selu", {}), ("celu", {"alpha": 0.5}),
     ("hardsigmoid", {}), ("hardswish", {}), ("mish", {}),
     ("threshold", {"threshold": 0.5, "value": 2.0})],
)
def test_inplace_variants_match_torch(name: str, kwargs: dict) -> None:
    a = np.random.default_rng(3).uniform(-3, 8, size=(3, 4))
    x, tx = pair(a, "float64", requires_grad=True)
    y, ty = x * 2, tx * 2
    out = getattr(F, name)(y, inplace=True, **kwargs)
    tout = getattr(TF, name)(ty, inplace=True, **kwargs)
    assert out is y
    assert_close(y, ty, "float64", f"{name} in place")
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    scale = 1e3 if name == "hardsigmoid" else 1.0  # see its row in ROWS
    assert_close(x.grad, tx.grad, "float64", f"{name} in place: gradient", scale=scale)


def test_inplace_on_a_leaf_is_refused() -> None:
    x = et.ones(3, requires_grad=True)
    for fn in (F.relu_, F.leaky_relu_, F.elu_, F.hardtanh_):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            fn(x)


def test_inplace_without_grad() -> None:
    x = et.tensor([-1.0, 2.0])
    assert F.elu(x, inplace=True) is x
    assert abs(x[0].item() - (np.exp(-1) - 1)) < 1e-6 and x[1].item() == 2.0


# ----------------------------------------------------------------------------- dropout


def test_dropout_statistics_and_scaling() -> None:
    et.manual_seed(0)
    x = et.ones(20000)
    y = F.dropout(x, p=0.3)
    kept = np_of(y) != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(np_of(y)[kept], 1 / 0.7, rtol=1e-6)
    x = et.ones(1000, requires_grad=True)
    y = F.dropout(x, p=0.5)
    y.sum().backward()
    np.testing.assert_array_equal(np_of(x.grad), np_of(y.detach()))  # grad = mask / (1 - p)


def test_dropout_identities_and_extremes() -> None:
    x = et.randn(4, 5)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert TF.dropout(torch.ones(2), 0.0) is not None
    assert (np_of(F.dropout(x, 1.0)) == 0).all()
    y = et.ones(3) * 1
    assert F.dropout(y, 1.0, inplace=True) is y and (np_of(y) == 0).all()
    z = et.ones(1000) * 1
    out = F.dropout(z, 0.5, inplace=True)
    assert out is z and set(np.unique(np_of(z))) <= {0.0, 2.0}
    empty = et.ones(0)
    assert F.dropout(empty) is empty


def test_dropout_reproducible_with_the_seed() -> None:
    et.manual_seed(5)
    a = np_of(F.dropout(et.ones(100)))
    et.manual_seed(5)
    b = np_of(F.dropout(et.ones(100)))
    np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------------------------- one_hot


def test_one_hot_matches_torch() -> None:
    idx = np.array([[0, 3], [2, 1]])
    for n in (-1, 5):
        ours = F.one_hot(et.from_numpy(idx), n)
        theirs = TF.one_hot(torch.from_numpy(idx), n)
        assert ours.dtype == et.int64
        np.testing.assert_array_equal(np_of(ours), theirs.numpy())
    assert tuple(F.one_hot(et.zeros(0, dtype=et.int64), 3).shape) == (0, 3)


# ----------------------------------------------------------------------------- errors


def _error(lib: str, call) -> tuple[str, str]:
    mod, T = (F, et) if lib == "ember" else (TF, torch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call(mod, T)
        except Exception as exc:  # noqa: BLE001 - compared below
            return type(exc).__name__, torch_repr(str(exc))
    return "no error", ""


ERRORS = {
    "gelu_approximate": lambda F, T: F.gelu(T.ones(2), approximate="foo"),
    "bce_input_range": lambda F, T: F.binary_cross_entropy(T.tensor([1.5]), T.tensor([1.0])),
    "bce_target_range": lambda F, T: F.binary_cross_entropy(T.tensor([0.5]), T.tensor([1.5])),
    "bce_size": lambda F, T: F.binary_cross_entropy(T.rand(3, 4), T.rand(4)),
    "bce_logits_size": lambda F, T: F.binary_cross_entropy_with_logits(T.rand(3, 4), T.rand(4)),
    "huber_delta": lambda F, T: F.huber_loss(T.ones(2), T.ones(2), delta=0),
    "smooth_l1_beta": lambda F, T: F.smooth_l1_loss(T.ones(2), T.ones(2), beta=-1),
    "reduction": lambda F, T: F.mse_loss(T.ones(2), T.ones(2), reduction="foo"),
    "reduction_weighted": lambda F, T: F.mse_loss(T.ones(2), T.ones(2), reduction="foo",
                                                  weight=T.ones(2)),
    "weight_size": lambda F, T: F.l1_loss(T.ones(2), T.ones(2), weight=T.ones(3)),
    "one_hot_dtype": lambda F, T: F.one_hot(T.tensor([1.0, 2.0])),
    "one_hot_negative": lambda F, T: F.one_hot(T.tensor([-1, 2])),
    "one_hot_too_small": lambda F, T: F.one_hot(T.tensor([1, 2]), 2),
    "one_hot_empty": lambda F, T: F.one_hot(T.zeros(0, dtype=T.int64)),
    "pad_odd": lambda F, T: F.pad(T.ones(3, 4), (1,)),
    "pad_too_long": lambda F, T: F.pad(T.ones(3, 4), (1, 1, 1, 1, 1, 1)),
    "pad_mode": lambda F, T: F.pad(T.ones(3, 4), (1, 1), mode="foo"),
    "pad_reflect_too_big": lambda F, T: F.pad(T.ones(3, 4), (4, 4), mode="reflect"),
    "pad_reflect_dims": lambda F, T: F.pad(T.ones(3, 4), (1, 1, 1, 1), mode="reflect"),
    "pad_reflect_1d": lambda F, T: F.pad(T.ones(4), (1, 1), mode="reflect"),
    "pad_circular_wrap": lambda F, T: F.pad(T.ones(2, 4), (5, 1), mode="circular"),
    "pad_value_with_mode": lambda F, T: F.pad(T.ones(3, 4), (1, 1), mode="reflect", value=2.0),
    "cosine_target_2d": lambda F, T: F.cosine_embedding_loss(T.ones(3, 4), T.ones(3, 4),
                                                             T.ones(3, 1)),
    "cosine_target_0d": lambda F, T: F.cosine_embedding_loss(T.ones(3, 4), T.ones(3, 4),
                                                             T.ones(())),
    "cosine_target_1d": lambda F, T: F.cosine_embedding_loss(T.ones(4), T.ones(4), T.ones(4)),
    "bilinear_in2": lambda F, T: F.bilinear(T.ones(3, 4), T.ones(3, 5), T.ones(2, 4, 4)),
    "bilinear_in1": lambda F, T: F.bilinear(T.ones(3, 5), T.ones(3, 4), T.ones(2, 4, 4)),
    "bilinear_batch": lambda F, T: F.bilinear(T.ones(3, 4), T.ones(2, 5), T.ones(2, 4, 5)),
    "bilinear_dims": lambda F, T: F.bilinear(T.ones(3, 4), T.ones(5), T.ones(2, 4, 5)),
    "bilinear_bias": lambda F, T: F.bilinear(T.ones(3, 4), T.ones(3, 5), T.ones(2, 4, 5),
                                             T.ones(3)),
    "dropout_p": lambda F, T: F.dropout(T.ones(2), 1.5),
    "hardtanh_bounds": lambda F, T: F.hardtanh(T.ones(2), 1.0, -1.0),
    "celu_alpha": lambda F, T: F.celu(T.ones(2), 0.0),
    "glu_odd": lambda F, T: F.glu(T.ones(2, 3)),
    "glu_scalar": lambda F, T: F.glu(T.ones(())),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name: str) -> None:
    assert _error("ember", ERRORS[name]) == _error("torch", ERRORS[name])


@pytest.mark.parametrize("name", ["leaky_relu", "elu", "gelu", "silu", "softplus", "selu",
                                  "celu", "mish", "hardswish", "hardsigmoid"])
def test_integer_inputs_are_refused(name: str) -> None:
    with pytest.raises(NotImplementedError, match=f"{name}: not implemented for dtype int64"):
        getattr(F, name)(et.tensor([1, 2]))
    with pytest.raises(NotImplementedError):
        getattr(TF, name)(torch.tensor([1, 2]))


def test_linear_shape_error_names_the_shapes() -> None:
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(3x4 and 3x5\)"):
        F.linear(et.ones(3, 4), et.ones(5, 3))


# ----------------------------------------------------------------------------- warnings


def _warnings(lib: str, call) -> list[tuple[str, str]]:
    mod, T = (F, et) if lib == "ember" else (TF, torch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call(mod, T)
    return [(w.category.__name__, torch_repr(str(w.message))) for w in caught]


WARNINGS = {
    "mse_size": lambda F, T: F.mse_loss(T.ones(3, 4), T.ones(4)),
    "l1_size": lambda F, T: F.l1_loss(T.ones(3, 1), T.ones(3)),
    "smooth_l1_size": lambda F, T: F.smooth_l1_loss(T.ones(3, 1), T.ones(3)),
    "huber_size": lambda F, T: F.huber_loss(T.ones(3, 1), T.ones(3)),
    "legacy_reduction": lambda F, T: F.mse_loss(T.ones(2), T.ones(2), size_average=False),
    "legacy_reduce_none": lambda F, T: F.binary_cross_entropy(T.ones(2) / 2, T.ones(2),
                                                              reduce=False),
    "elementwise_mean": lambda F, T: F.l1_loss(T.ones(2), T.ones(2),
                                               reduction="elementwise_mean"),
    "kl_div_mean": lambda F, T: F.kl_div(T.zeros(2), T.ones(2) / 2),
    "softmax_implicit_dim": lambda F, T: F.softmax(T.ones(2, 3)),
    "log_softmax_implicit_dim": lambda F, T: F.log_softmax(T.ones(2, 3, 4)),
}


@pytest.mark.parametrize("name", list(WARNINGS))
def test_warnings_match_torch(name: str) -> None:
    ours = _warnings("ember", WARNINGS[name])
    assert ours and ours == _warnings("torch", WARNINGS[name])


def test_implicit_softmax_dim_choice_matches_torch() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for shape in [(4,), (2, 3), (2, 3, 4), (2, 3, 4, 5)]:
            a = np.random.default_rng(0).standard_normal(shape)
            x, tx = pair(a)
            assert_close(F.softmax(x), TF.softmax(tx), "float64", str(shape))


@pytest.mark.parametrize("mode", ["replicate", "reflect", "circular"])
def test_a_huge_padding_is_an_error_at_once(mode) -> None:
    # the source positions are computed with tensor ops: no Python loop over 2**40 positions
    with pytest.raises(RuntimeError):
        F.pad(et.zeros(1, 1, 2), (0, 2**40), mode=mode)
    with pytest.raises(RuntimeError):
        TF.pad(torch.zeros(1, 1, 2), (0, 2**40), mode=mode)


@pytest.mark.parametrize("mode", ["replicate", "reflect", "circular"])
@pytest.mark.parametrize("pad", [(2, 3), (0, 1), (-1, 2), (3, -2)])
def test_pad_modes_match_torch(mode, pad) -> None:
    x = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    try:
        want = TF.pad(torch.from_numpy(x), pad, mode=mode)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            F.pad(et.tensor(x), pad, mode=mode)
        return
    got = F.pad(et.tensor(x), pad, mode=mode)
    np.testing.assert_array_equal(np.asarray(got.tolist()), want.numpy())
