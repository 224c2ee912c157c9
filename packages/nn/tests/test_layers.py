"""Layers and loss modules against torch.nn: the same constructor arguments on both
libraries, the ember module's state copied into the torch one, then forward values and the
gradients of the inputs and of every parameter compared in float32 and float64; reprs and
state_dict keys equal; initialisation bounds."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import ember_nn as nn
import ember_tensor as et
from nn_testing import assert_close, copy_state, np_of, pair, torch_repr

# (name, constructor args, kwargs, input shapes (or None for a target of ±1), kind)
LAYERS = [
    ("Identity", (3,), {"foo": 1}, [(2, 3)]),
    ("Linear", (3, 4), {}, [(5, 3)]),
    ("Linear", (3, 4), {"bias": False}, [(2, 5, 3)]),
    ("Linear", (3, 1), {}, [(3,)]),
    ("Bilinear", (3, 2, 4), {}, [(5, 3), (5, 2)]),
    ("Bilinear", (3, 2, 4), {"bias": False}, [(2, 5, 3), (2, 5, 2)]),
    ("Flatten", (), {}, [(2, 3, 4, 5)]),
    ("Flatten", (0, 2), {}, [(2, 3, 4, 5)]),
    ("Unflatten", (1, (2, 3)), {}, [(4, 6, 5)]),
    ("Unflatten", (-1, [2, -1]), {}, [(4, 6)]),
    ("Dropout", (0.3,), {}, [(4, 5)]),  # compared in eval mode (the identity)
    ("ReLU", (), {}, [(3, 4)]),
    ("ReLU6", (), {}, [(3, 4)]),
    ("LeakyReLU", (0.1,), {}, [(3, 4)]),
    ("ELU", (), {"alpha": 0.5}, [(3, 4)]),
    ("GELU", (), {}, [(3, 4)]),
    ("GELU", (), {"approximate": "tanh"}, [(3, 4)]),
    ("SiLU", (), {}, [(3, 4)]),
    ("Sigmoid", (), {}, [(3, 4)]),
    ("Tanh", (), {}, [(3, 4)]),
    ("Softplus", (), {"beta": 2.0, "threshold": 3.0}, [(3, 4)]),
    ("LogSigmoid", (), {}, [(3, 4)]),
    ("Hardtanh", (-0.5, 0.5), {}, [(3, 4)]),
    ("Threshold", (0.1, 20.0), {}, [(3, 4)]),
    ("SELU", (), {}, [(3, 4)]),
    ("CELU", (0.5,), {}, [(3, 4)]),
    ("GLU", (), {"dim": 0}, [(4, 3)]),
    ("Hardsigmoid", (), {}, [(3, 4)]),
    ("Hardswish", (), {}, [(3, 4)]),
    ("Mish", (), {}, [(3, 4)]),
    ("Softsign", (), {}, [(3, 4)]),
    ("Tanhshrink", (), {}, [(3, 4)]),
    ("Softmax", (), {"dim": 1}, [(3, 4)]),
    ("Softmin", (0,), {}, [(3, 4)]),
    ("LogSoftmax", (), {"dim": -1}, [(3, 4)]),
    ("MSELoss", (), {}, [(3, 4), (3, 4)]),
    ("MSELoss", (), {"reduction": "sum"}, [(3, 4), (3, 4)]),
    ("L1Loss", (), {"reduction": "none"}, [(3, 4), (3, 4)]),
    ("SmoothL1Loss", (), {"beta": 0.5}, [(3, 4), (3, 4)]),
    ("HuberLoss", (), {"delta": 0.5, "reduction": "sum"}, [(3, 4), (3, 4)]),
    ("BCELoss", (), {}, [("prob", (3, 4)), ("target", (3, 4))]),
    ("BCEWithLogitsLoss", (), {}, [(3, 4), ("target", (3, 4))]),
    ("KLDivLoss", (), {"reduction": "batchmean"}, [("logprob", (3, 4)), ("target", (3, 4))]),
    ("KLDivLoss", (), {"reduction": "sum", "log_target": True},
     [("logprob", (3, 4)), ("logprob", (3, 4))]),
    ("CosineEmbeddingLoss", (), {"margin": 0.1}, [(5, 3), (5, 3), ("sign", (5,))]),
]


def _array(spec, rng):
    if isinstance(spec[0], str):
        kind, shape = spec
        if kind == "sign":
            return rng.choice([-1.0, 1.0], size=shape), False
        e = np.exp(rng.standard_normal(shape))
        p = e / e.sum(-1, keepdims=True)
        # probabilities kept inside (0.05, 0.95); a "target" does not require grad
        return (np.log(p) if kind == "logprob" else np.clip(p, 0.05, 0.95)), kind != "target"
    return rng.standard_normal(spec), True


def _id(case) -> str:
    name, args, kwargs, _ = case
    bits = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{name}({', '.join(bits)})"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", LAYERS, ids=[_id(c) for c in LAYERS])
def test_layer_matches_torch(case, dtype: str) -> None:
    name, args, kwargs, shapes = case
    ours = getattr(nn, name)(*args, **kwargs)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    if dtype == "float64":
        ours.double()
        theirs.double()
    copy_state(ours, theirs)
    if name == "Dropout":
        ours.eval()
        theirs.eval()
    rng = np.random.default_rng(len(name))
    inputs = []
    for spec in shapes:
        a, grad = _array(spec, rng)
        inputs.append(pair(a, dtype, requires_grad=grad))
    out = ours(*[e for e, _ in inputs])
    tout = theirs(*[t for _, t in inputs])
    assert_close(out, tout, dtype, f"{name}: output")
    w = rng.uniform(0.5, 1.5, size=tuple(tout.shape))
    (out * pair(w, dtype)[0]).sum().backward()
    (tout * pair(w, dtype)[1]).sum().backward()
    # PyTorch's Hardsigmoid backward uses 1/6 in float32 for every dtype
    scale = 1e3 if name == "Hardsigmoid" else 10.0
    for i, (e, t) in enumerate(inputs):
        if t.requires_grad:
            assert_close(e.grad, t.grad, dtype, f"{name}: gradient of input {i}", scale=scale)
    tparams = dict(theirs.named_parameters())
    for pname, p in ours.named_parameters():
        assert_close(p.grad, tparams[pname].grad, dtype, f"{name}: gradient of {pname}",
                     scale=10.0)


@pytest.mark.parametrize(
    ("ctor", "kwargs"),
    [("ReLU", {"inplace": True}), ("LeakyReLU", {"negative_slope": 0.2, "inplace": True}),
     ("ELU", {"alpha": 2.0, "inplace": True}), ("SiLU", {"inplace": True}),
     ("Hardtanh", {"inplace": True}), ("ReLU6", {"inplace": True}),
     ("Dropout", {"p": 0.25, "inplace": True}), ("Softmax", {}), ("LogSoftmax", {"dim": 2}),
     ("SELU", {"inplace": True}), ("CELU", {"alpha": 0.5, "inplace": True}),
     ("Mish", {"inplace": True}), ("Hardswish", {"inplace": True}), ("GLU", {}),
     ("Threshold", {"threshold": 0.5, "value": 0.0, "inplace": True}),
     ("GELU", {"approximate": "none"}), ("Unflatten", {"dim": 1, "unflattened_size": (2, 2)}),
     ("BCEWithLogitsLoss", {"reduction": "sum"}), ("HuberLoss", {}),
     ("KLDivLoss", {"log_target": True}), ("CosineEmbeddingLoss", {})],
)
def test_repr_matches_torch(ctor: str, kwargs: dict) -> None:
    assert repr(getattr(nn, ctor)(**kwargs)) == repr(getattr(torch.nn, ctor)(**kwargs))


def mlp(lib):
    N = nn if lib == "ember" else torch.nn
    return N.Sequential(
        N.Flatten(),
        N.Linear(12, 16),
        N.ReLU(),
        N.Dropout(0.1),
        N.Sequential(N.Linear(16, 16), N.GELU(approximate="tanh")),
        N.ModuleList([N.Linear(16, 16) for _ in range(3)]),
        N.ModuleDict({"head": N.Linear(16, 3), "act": N.LogSoftmax(dim=1)}),
    )


def test_architecture_repr_matches_torch() -> None:
    assert repr(mlp("ember")) == repr(mlp("torch"))


def test_whole_model_forward_backward_matches_torch() -> None:
    def build(N):
        return N.Sequential(N.Flatten(), N.Linear(12, 8), N.ELU(), N.Linear(8, 8), N.SiLU(),
                            N.Linear(8, 3), N.LogSoftmax(dim=1))

    ours, theirs = build(nn).double(), build(torch.nn).double()
    copy_state(ours, theirs)
    x, tx = pair(np.random.default_rng(0).standard_normal((5, 3, 4)))
    target, ttarget = pair(np.eye(3)[[0, 2, 1, 1, 0]])
    loss = nn.KLDivLoss(reduction="batchmean")(ours(x), target)
    tloss = torch.nn.KLDivLoss(reduction="batchmean")(theirs(tx), ttarget)
    assert_close(loss, tloss, "float64", "loss")
    loss.backward()
    tloss.backward()
    for (n, p), (tn, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == tn
        assert_close(p.grad, tp.grad, "float64", f"grad of {n}")


# ----------------------------------------------------------------------------- init


def test_linear_init_bounds() -> None:
    et.manual_seed(0)
    lin = nn.Linear(50, 40)
    bound = 1 / math.sqrt(50)  # kaiming_uniform_(a=sqrt(5)) gives the same bound
    w, b = np_of(lin.weight), np_of(lin.bias)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert np.abs(b).max() <= bound and np.abs(b).max() > 0.8 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert lin.weight.dtype == et.float32 and lin.weight.requires_grad


def test_linear_dtype_and_zero_features() -> None:
    lin = nn.Linear(2, 3, dtype=et.float64)
    assert lin.weight.dtype == et.float64 and lin.bias.dtype == et.float64
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        empty = nn.Linear(0, 3)
    assert tuple(empty(et.ones(2, 0)).shape) == (2, 3)


def test_bilinear_init_and_errors() -> None:
    bil = nn.Bilinear(4, 2, 3)
    bound = 1 / math.sqrt(4)
    assert np.abs(np_of(bil.weight)).max() <= bound
    assert np.abs(np_of(bil.bias)).max() <= bound
    with pytest.raises(ValueError, match=r"in1_features must be > 0, but got \(in1_features=0\)"):
        nn.Bilinear(0, 2, 3)


def test_same_seed_same_init() -> None:
    et.manual_seed(3)
    a = np_of(nn.Linear(4, 4).weight)
    et.manual_seed(3)
    b = np_of(nn.Linear(4, 4).weight)
    np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------------------------- modes, errors


def test_dropout_module_train_and_eval() -> None:
    d = nn.Dropout(0.5)
    x = et.ones(1000)
    assert d(x) is not x and (np_of(d(x)) == 0).any()
    d.eval()
    assert d(x) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        nn.Dropout(1.5)


def test_constructor_errors_match_torch() -> None:
    cases = [
        ("Hardtanh", (1.0, -1.0)),
        ("Unflatten", (1, 3)),
        ("Unflatten", (1, (2, 2.0))),
    ]
    for name, args in cases:
        errors = []
        for lib in (nn, torch.nn):
            try:
                getattr(lib, name)(*args)
            except Exception as exc:  # noqa: BLE001 - compared
                errors.append((type(exc).__name__, str(exc)))
        assert len(errors) == 2 and errors[0] == errors[1], (name, errors)
    with pytest.raises(TypeError, match="delta must be a float or int"):
        nn.HuberLoss(delta="1")
    with pytest.raises(TypeError, match="named dimensions are not supported"):
        nn.Unflatten("features", (2, 2))


def test_hardtanh_deprecated_keywords() -> None:
    with pytest.warns(FutureWarning, match="`min_value` is deprecated"):
        h = nn.Hardtanh(min_value=-2.0)
    assert h.min_val == -2.0
    with pytest.warns(FutureWarning, match="`max_value` is deprecated"):
        assert nn.Hardtanh(max_value=3.0).max_val == 3.0


def test_loss_weights_are_buffers() -> None:
    w = et.tensor([1.0, 2.0])
    loss = nn.BCEWithLogitsLoss(weight=w, pos_weight=et.tensor([3.0, 1.0]))
    tloss = torch.nn.BCEWithLogitsLoss(weight=torch.tensor([1.0, 2.0]),
                                       pos_weight=torch.tensor([3.0, 1.0]))
    assert list(loss.state_dict()) == list(tloss.state_dict()) == ["weight", "pos_weight"]
    assert loss.weight is w
    assert list(nn.BCELoss(weight=w).state_dict()) == ["weight"]
    assert list(nn.BCELoss().state_dict()) == list(torch.nn.BCELoss().state_dict()) == []


def test_legacy_loss_arguments() -> None:
    for lib in (nn, torch.nn):
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, "
                                             "please use reduction='sum' instead."):
            assert lib.MSELoss(size_average=False).reduction == "sum"
        with pytest.warns(UserWarning, match="reduction='none'"):
            assert lib.L1Loss(reduce=False).reduction == "none"


def test_softmax_module_without_dim_warns_like_torch() -> None:
    for lib, T in ((nn, et), (torch.nn, torch)):
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
            lib.Softmax()(T.ones(2, 3))


def test_kl_div_module_mean_warns() -> None:
    x, tx = pair(np.log(np.full((2, 2), 0.5)))
    with pytest.warns(UserWarning, match="reduction: 'mean' divides the total loss"):
        out = nn.KLDivLoss()(x, x.exp())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(out, torch.nn.KLDivLoss()(tx, tx.exp()), "float64")


def test_identity_returns_its_input() -> None:
    x = et.ones(2)
    assert nn.Identity(1, 2, three=3)(x) is x
    assert torch_repr(repr(torch.nn.Identity())) == repr(nn.Identity()) == "Identity()"
