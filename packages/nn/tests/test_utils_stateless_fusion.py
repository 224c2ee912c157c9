"""ember_nn.utils.stateless.functional_call, utils.fusion and utils.skip_init against
torch, in float64: outputs and gradients with substituted tensors, the module restored
afterwards (also after an error), tied weights, strict key checks; fused conv/linear +
batch-norm layers; skip_init's checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.utils.stateless as torch_stateless

import ember_nn as nn
import ember_tensor as et
from ember_nn import utils
from ember_nn.utils import stateless
from nn_testing import assert_close, np_of

FC = {"ember": stateless.functional_call, "torch": torch.func.functional_call}


def libs(name: str):
    return (nn, et) if name == "ember" else (torch.nn, torch)


def model(name):
    N, _ = libs(name)
    return N.Sequential(N.Linear(3, 4), N.BatchNorm1d(4), N.Tanh(), N.Linear(4, 2)).double()


def values(seed: int, module) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for k, v in module.state_dict().items():
        if v.is_floating_point():
            out[k] = rng.standard_normal(tuple(v.shape))
            if "running_var" in k:
                out[k] = np.abs(out[k]) + 0.5
    return out


def test_functional_call_matches_torch_and_restores() -> None:
    torch.manual_seed(0)
    theirs = model("torch")
    ours = model("ember")
    ours.load_state_dict({k: et.tensor(np_of(v)) for k, v in theirs.state_dict().items()})
    before = {k: v for k, v in ours.state_dict(keep_vars=True).items()}
    new = values(1, theirs)
    new = {k: v for k, v in new.items() if not k.startswith("3.")}  # 3.* stays the module's
    pe = {k: et.tensor(v).requires_grad_("weight" in k or "bias" in k) for k, v in new.items()}
    pt = {k: torch.tensor(v).requires_grad_("weight" in k or "bias" in k)
          for k, v in new.items()}
    x = np.random.default_rng(2).standard_normal((5, 3))
    for training in (True, False):
        ours.train(training)
        theirs.train(training)
        out_e = FC["ember"](ours, pe, (et.tensor(x),))
        out_t = FC["torch"](theirs, pt, (torch.tensor(x),))
        assert_close(out_e, out_t, what=f"output, training={training}")
        (out_e ** 2).sum().backward()
        (out_t ** 2).sum().backward()
        for k in pt:
            if pt[k].requires_grad:
                assert_close(pe[k].grad, pt[k].grad, what=f"grad {k}")
                pe[k].grad = None
                pt[k].grad = None
        assert_close(ours[3].weight.grad, theirs[3].weight.grad, what="module's own param")
        ours.zero_grad()
        theirs.zero_grad()
    # the running stats given were updated in place in training mode, as in torch
    assert_close(pe["1.running_mean"], pt["1.running_mean"])
    # the module has its own tensors back (the same objects)
    after = ours.state_dict(keep_vars=True)
    assert all(after[k] is before[k] for k in before)
    assert ours[0].weight.grad is None


def test_functional_call_restores_after_error_and_args_forms() -> None:
    class Boom(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)

        def forward(self, x, *, fail=False, scale=1.0):
            if fail:
                raise RuntimeError("boom")
            return self.lin(x) * scale

    m = Boom()
    w = m.lin.weight
    with pytest.raises(RuntimeError, match="boom"):
        stateless.functional_call(m, {"lin.weight": et.zeros(2, 2)}, (et.ones(1, 2),),
                                  {"fail": True})
    assert m.lin.weight is w
    # a single non-tuple argument, kwargs, a list of dicts, a plain attribute name
    out = stateless.functional_call(m, [{"lin.weight": et.zeros(2, 2)},
                                        {"lin.bias": et.ones(2)}], et.ones(1, 2),
                                    {"scale": 3.0})
    assert out.tolist() == [[3.0, 3.0]]
    stateless.functional_call(m, {"extra": et.ones(1)}, et.ones(1, 2))
    assert not hasattr(m, "extra")
    with pytest.raises(ValueError, match=r"\['lin.bias'\] appeared in multiple dictionaries; "
                                         "behavior of functional call is ambiguous"):
        stateless.functional_call(m, ({"lin.bias": et.ones(2)}, {"lin.bias": et.ones(2)}),
                                  et.ones(1, 2))
    with pytest.raises(AttributeError, match="Boom has no attribute `nope`"):
        stateless.functional_call(m, {"lin.weight": et.zeros(2, 2), "nope.w": et.ones(1)},
                                  et.ones(1, 2))
    assert m.lin.weight is w


def _tied(name):
    N, _ = libs(name)

    _, T = libs(name)

    class Tied(N.Module):
        def __init__(self):
            super().__init__()
            # float64 from the start: Ember's .double() replaces each Parameter whose dtype
            # changes by a new one, which would untie the weights
            self.a = N.Linear(2, 2, bias=False, dtype=T.float64)
            self.b = N.Linear(2, 2, bias=False, dtype=T.float64)
            self.a.weight = N.Parameter(T.tensor([[0.5, -1.0], [2.0, 0.25]],
                                                 dtype=T.float64))
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    return Tied()


@pytest.mark.parametrize("tie", [True, False])
def test_tied_weights_match_torch(tie: bool) -> None:
    results = []
    w = np.array([[1.0, 2.0], [3.0, 4.0]])
    x = np.array([[1.0, -1.0]])
    for name in ("ember", "torch"):
        _, T = libs(name)
        m = _tied(name)
        out = FC[name](m, {"a.weight": T.tensor(w)}, (T.tensor(x),), tie_weights=tie)
        results.append(np_of(out))
        try:
            FC[name](m, {"a.weight": T.tensor(w), "b.weight": T.tensor(w)}, (T.tensor(x),),
                     tie_weights=tie)
            results.append("no error")
        except ValueError as exc:
            results.append(str(exc))
    np.testing.assert_allclose(results[0], results[2])
    assert results[1] == results[3]


def test_strict_keys_match_torch() -> None:
    messages = []
    for name in ("ember", "torch"):
        N, T = libs(name)
        m = N.Linear(2, 2)
        with pytest.raises(RuntimeError) as info:
            FC[name](m, {"weight": T.ones(2, 2), "extra": T.ones(1)}, (T.ones(1, 2),),
                     strict=True)
        messages.append(str(info.value))
        out = FC[name](m, {"weight": T.ones(2, 2), "bias": T.zeros(2)}, (T.ones(1, 2),),
                       strict=True)
        assert out.tolist() == [[2.0, 2.0]]
    assert messages[0] == messages[1]
    assert messages[0] == ("Error(s) in reparametrizing for Linear:\n\tUnexpected key(s): "
                           "'extra'.\n\tMissing key(s): 'bias'.")


def test_torch_stateless_is_the_same_contract() -> None:
    # torch.nn.utils.stateless.functional_call (deprecated there) gives the same result
    m = torch.nn.Linear(2, 1).double()
    p = {"weight": torch.ones(1, 2, dtype=torch.float64)}
    with pytest.warns(FutureWarning):
        a = torch_stateless.functional_call(m, p, (torch.ones(1, 2, dtype=torch.float64),))
    e = nn.Linear(2, 1).double()
    e.bias = nn.Parameter(et.tensor(np_of(m.bias)))
    b = stateless.functional_call(e, {"weight": et.ones(1, 2, dtype=et.float64)},
                                  (et.ones(1, 2, dtype=et.float64),))
    assert_close(b, a)


# ----------------------------------------------------------------------------- fusion


@pytest.mark.parametrize("kind", ["conv1d", "conv2d", "conv2d_nobias", "convT2d"])
def test_fuse_conv_bn_matches_torch(kind: str) -> None:
    def make(name):
        N, _ = libs(name)
        conv = {"conv1d": lambda: N.Conv1d(3, 4, 3), "conv2d": lambda: N.Conv2d(3, 4, 3),
                "conv2d_nobias": lambda: N.Conv2d(3, 4, 3, bias=False),
                "convT2d": lambda: N.ConvTranspose2d(3, 4, 3)}[kind]()
        bn = (N.BatchNorm1d if kind == "conv1d" else N.BatchNorm2d)(4)
        return conv.double().eval(), bn.double().eval()

    torch.manual_seed(0)
    tc, tb = make("torch")
    ec, eb = make("ember")
    rng = np.random.default_rng(3)
    for tm, em in ((tc, ec), (tb, eb)):
        state = {k: (np.abs(rng.standard_normal(tuple(v.shape))) + 0.2
                     if v.is_floating_point() else np_of(v))
                 for k, v in tm.state_dict().items()}
        tm.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
        em.load_state_dict({k: et.tensor(v) for k, v in state.items()})
    transpose = kind == "convT2d"
    tf = torch.nn.utils.fuse_conv_bn_eval(tc, tb, transpose=transpose)
    ef = utils.fuse_conv_bn_eval(ec, eb, transpose=transpose)
    assert ef is not ec and type(ef) is type(ec)
    assert isinstance(ef.weight, nn.Parameter) and isinstance(ef.bias, nn.Parameter)
    assert_close(ef.weight, tf.weight)
    assert_close(ef.bias, tf.bias)
    if kind == "conv2d_nobias":
        assert ec.bias is None
    shape = (2, 3, 6) if kind == "conv1d" else (2, 3, 6, 6)
    x = rng.standard_normal(shape)
    assert_close(ef(et.tensor(x)), eb(ec(et.tensor(x))))


def test_fuse_linear_bn_matches_torch() -> None:
    torch.manual_seed(0)
    for features in (4, 1):
        tl, tb = torch.nn.Linear(3, 4).double().eval(), torch.nn.BatchNorm1d(features).double()
        tb.eval()
        with torch.no_grad():
            tb.running_mean.uniform_(-1, 1)
            tb.running_var.uniform_(0.5, 2)
            tb.weight.uniform_(0.5, 2)
        el, eb = nn.Linear(3, 4).double().eval(), nn.BatchNorm1d(features).double().eval()
        el.load_state_dict({k: et.tensor(np_of(v)) for k, v in tl.state_dict().items()})
        eb.load_state_dict({k: et.tensor(np_of(v)) for k, v in tb.state_dict().items()})
        tf = torch.nn.utils.fuse_linear_bn_eval(tl, tb)
        ef = utils.fuse_linear_bn_eval(el, eb)
        assert_close(ef.weight, tf.weight)
        assert_close(ef.bias, tf.bias)


def test_fusion_errors_match_torch() -> None:
    messages = []
    for name in ("ember", "torch"):
        N, _ = libs(name)
        U = utils if name == "ember" else torch.nn.utils
        errs = []
        for fuse, first, bn in (
            (U.fuse_conv_bn_eval, N.Conv2d(1, 2, 1), N.BatchNorm2d(2).eval()),
            (U.fuse_linear_bn_eval, N.Linear(2, 3).eval(), N.BatchNorm1d(2).eval()),
            (U.fuse_linear_bn_eval, N.Linear(2, 3).eval(),
             N.BatchNorm1d(3, track_running_stats=False).eval()),
        ):
            with pytest.raises(AssertionError) as info:
                fuse(first, bn)
            errs.append(str(info.value))
        messages.append(errs)
    assert messages[0] == messages[1]


def test_fuse_weights_dtypes_and_requires_grad() -> None:
    w = et.ones(2, 1, 1, dtype=et.float64)
    b = et.zeros(2, dtype=et.float32)
    fw, fb = utils.fuse_conv_bn_weights(w, b, et.zeros(2), et.ones(2), 0.0, None, None)
    assert fw.dtype == et.float64 and fb.dtype == et.float32
    assert not fw.requires_grad and isinstance(fw, nn.Parameter)
    fw, fb = utils.fuse_linear_bn_weights(nn.Parameter(et.ones(2, 2)), None, et.zeros(2),
                                          et.ones(2), 0.0, et.ones(2), et.zeros(2))
    assert fw.requires_grad and not fb.requires_grad


# --------------------------------------------------------------------------- skip_init


def test_skip_init() -> None:
    m = utils.skip_init(nn.Linear, 4, 3, bias=False, dtype=et.float64)
    assert isinstance(m, nn.Linear) and m.weight.dtype == et.float64 and m.bias is None
    assert tuple(m.weight.shape) == (3, 4) and m.weight.device.type == "cpu"

    class NoDevice(nn.Module):
        pass

    for lib, nodev in ((utils, NoDevice), (torch.nn.utils, None)):
        with pytest.raises(RuntimeError, match="Expected a Module; got <class 'int'>"):
            lib.skip_init(int)
        if nodev is None:
            class nodev(torch.nn.Module):  # noqa: N801 - a local test class
                pass
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip "
                                               "initialization"):
            lib.skip_init(nodev)
