"""The modules added for whole-program coverage (padding, channel-wise and alpha dropout,
shrinkage and parametric activations, distances, shuffles, RMS/LRN norms, the margin,
Poisson and Gaussian losses, LP and fractional pooling, the adaptive softmax, SyncBatchNorm,
DataParallel): each against torch.nn on the same values and weights (float64): repr,
state_dict keys, outputs, input and parameter gradients, and PyTorch's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember_autograd
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as et
from nn_testing import assert_close, error_of, np_of, pair, rng

# (module name, constructor args, constructor kwargs, input shapes, integer targets)
CASES = [
    ("ConstantPad1d", (2, 3.5), {}, [(2, 3, 4)]),
    ("ConstantPad2d", ((1, 0, 2, 1), -1.0), {}, [(2, 3, 4, 4)]),
    ("ConstantPad3d", (1, 0.5), {}, [(1, 2, 3, 3, 3)]),
    ("ZeroPad1d", ((0, 2),), {}, [(3, 4)]),
    ("ZeroPad2d", (2,), {}, [(2, 3, 4, 4)]),
    ("ZeroPad3d", ((1, 0, 0, 1, 2, 0),), {}, [(1, 2, 3, 3, 3)]),
    ("ReflectionPad1d", (2,), {}, [(2, 3, 5)]),
    ("ReflectionPad2d", ((1, 2, 0, 3),), {}, [(2, 3, 4, 5)]),
    ("ReflectionPad3d", (1,), {}, [(1, 2, 3, 3, 3)]),
    ("ReplicationPad1d", ((3, 1),), {}, [(2, 3, 4)]),
    ("ReplicationPad2d", (2,), {}, [(3, 4, 4)]),
    ("ReplicationPad3d", ((1, 0, 2, 1, 0, 1),), {}, [(1, 2, 3, 3, 3)]),
    ("CircularPad1d", (2,), {}, [(2, 3, 4)]),
    ("CircularPad2d", ((1, 2, 2, 0),), {}, [(1, 2, 4, 4)]),
    ("CircularPad3d", (1,), {}, [(1, 2, 3, 3, 3)]),
    ("Hardshrink", (0.3,), {}, [(3, 4)]),
    ("Softshrink", (), {"lambd": 0.7}, [(3, 4)]),
    ("PReLU", (), {}, [(2, 3, 4)]),
    ("PReLU", (3,), {"init": 0.1}, [(2, 3, 4)]),
    ("Softmax2d", (), {}, [(2, 3, 4, 4)]),
    ("CosineSimilarity", (), {"dim": 0, "eps": 1e-6}, [(4, 3), (4, 3)]),
    ("PairwiseDistance", (), {"p": 1.5, "keepdim": True}, [(4, 3), (4, 3)]),
    ("PixelShuffle", (2,), {}, [(2, 8, 3, 3)]),
    ("PixelUnshuffle", (2,), {}, [(2, 2, 4, 6)]),
    ("ChannelShuffle", (3,), {}, [(2, 6, 2, 2)]),
    ("RMSNorm", ((3, 4),), {}, [(2, 3, 4)]),
    ("RMSNorm", (4,), {"eps": 1e-3, "elementwise_affine": False}, [(2, 3, 4)]),
    ("LocalResponseNorm", (3,), {"alpha": 0.1, "beta": 0.5, "k": 2.0}, [(2, 5, 4)]),
    ("CrossMapLRN2d", (3,), {"alpha": 0.1, "beta": 0.6, "k": 1.5}, [(2, 6, 3, 3)]),
    ("CrossMapLRN2d", (4,), {}, [(1, 3, 2, 2)]),
    ("LPPool1d", (2, 3), {"stride": 2}, [(2, 3, 7)]),
    ("LPPool2d", (3.0, (2, 3)), {}, [(2, 3, 6, 6)]),
    ("LPPool3d", (2, 2), {"ceil_mode": True}, [(1, 2, 5, 5, 5)]),
    ("MarginRankingLoss", (), {"margin": 0.3}, [(5,), (5,), "sign5"]),
    ("HingeEmbeddingLoss", (), {"margin": 0.7, "reduction": "sum"}, [(5,), "sign5"]),
    ("SoftMarginLoss", (), {}, [(5,), "sign5"]),
    ("MultiLabelSoftMarginLoss", (), {"reduction": "none"}, [(3, 4), "binary34"]),
    ("MultiMarginLoss", (), {"p": 2, "margin": 0.5}, [(3, 4), "class3of4"]),
    ("TripletMarginLoss", (), {"margin": 0.5, "swap": True}, [(4, 3), (4, 3), (4, 3)]),
    ("TripletMarginWithDistanceLoss", (), {"margin": 0.5}, [(4, 3), (4, 3), (4, 3)]),
    ("PoissonNLLLoss", (), {"full": True}, [(5,), "positive5"]),
    ("PoissonNLLLoss", (), {"log_input": False}, [(5,), "positive5"]),
    ("GaussianNLLLoss", (), {"full": True}, [(4, 2), (4, 2), "positive42"]),
    ("NLLLoss2d", (), {}, [(2, 3, 2, 2), "class3in222"]),
    ("SyncBatchNorm", (3,), {}, [(4, 3, 2)]),
    ("LinearCrossEntropyLoss", (4, 5), {"bias": True}, [(3, 4), "class3of5"]),
]


# PyTorch's hand-written backward of the legacy CrossMapLRN2d is not the gradient of its
# forward (torch.autograd.gradcheck fails on it); Ember's is autograd's, checked against
# finite differences (docs/differences-from-pytorch.md)
TRUE_GRADIENT_ONLY = {"CrossMapLRN2d"}


def _positive(shape):
    return np.abs(rng(7).standard_normal(shape)) + 0.1


# inputs that are not plain normal values: targets and positive variances
SPECIAL = {
    "sign5": lambda: np.sign(rng(3).standard_normal(5)),
    "binary34": lambda: (rng(4).random((3, 4)) > 0.5).astype("float64"),
    "class3of4": lambda: np.array([0, 3, 1]),
    "class3of5": lambda: np.array([0, 4, 2]),
    "class3in222": lambda: rng(5).integers(0, 3, (2, 2, 2)),
    "positive5": lambda: _positive(5),
    "positive42": lambda: _positive((4, 2)),
}


def _inputs(shapes):
    """(ember inputs, torch inputs, which require grad)."""
    ems, tos = [], []
    for i, shape in enumerate(shapes):
        if isinstance(shape, str):
            value, grad = SPECIAL[shape](), False
        else:
            value, grad = rng(10 + i).standard_normal(shape), True
        e, t = pair(value, requires_grad=grad and np.asarray(value).dtype.kind == "f")
        ems.append(e)
        tos.append(t)
    return ems, tos


def _build(name, args, kwargs):
    with warnings.catch_warnings(record=True) as expected:
        warnings.simplefilter("always")
        tm = getattr(torch.nn, name)(*args, **kwargs).double()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        em = getattr(nn, name)(*args, **kwargs).double()
    assert [str(w.message) for w in got] == [str(w.message) for w in expected]
    em.load_state_dict({k: et.from_numpy(np_of(v).copy()) for k, v in tm.state_dict().items()})
    return em, tm


@pytest.mark.parametrize("name,args,kwargs,shapes", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_module_matches_torch(name, args, kwargs, shapes):
    em, tm = _build(name, args, kwargs)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    ems, tos = _inputs(shapes)
    eo, to = em(*ems), tm(*tos)
    assert_close(eo, to, what=f"{name} output")
    if name in TRUE_GRADIENT_ONLY:
        assert ember_autograd.gradcheck(em, tuple(ems))
        return
    g = rng(99).standard_normal(tuple(to.shape))
    eg, tg = pair(g)
    (eo * eg).sum().backward()
    (to * tg).sum().backward()
    for i, (e, t) in enumerate(zip(ems, tos)):
        if t.requires_grad:
            assert_close(e.grad, t.grad, what=f"{name} grad of input {i}")
    tparams = dict(tm.named_parameters())
    for pname, p in em.named_parameters():
        assert_close(p.grad, tparams[pname].grad, what=f"{name} grad of {pname}")


def test_sync_batch_norm_running_stats_and_conversion():
    em, tm = _build("SyncBatchNorm", (3,), {"momentum": None})
    for seed in range(3):
        e, t = pair(rng(seed).standard_normal((5, 3, 2)))
        em(e)
        tm(t)
    assert_close(em.running_mean, tm.running_mean)
    assert_close(em.running_var, tm.running_var)
    assert int(em.num_batches_tracked) == 3
    model = nn.Sequential(nn.Conv1d(2, 3, 1), nn.BatchNorm1d(3), nn.Sequential(nn.BatchNorm2d(3)))
    model.eval()
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(converted[1], nn.SyncBatchNorm)
    assert isinstance(converted[2][0], nn.SyncBatchNorm)
    assert converted[1].weight is model[1].weight and not converted[1].training
    assert error_of(lambda m, lib: m.SyncBatchNorm(3)(lib.ones(3)), nn, et) == (
        "ValueError", "expected at least 2D input (got 1D input)")


@pytest.mark.parametrize("name,kind", [("Dropout1d", 3), ("Dropout2d", 4), ("Dropout3d", 5)])
def test_channel_dropout_zeroes_whole_channels(name, kind):
    et.manual_seed(0)
    x = et.ones(*([40, 50] + [3] * (kind - 2)))
    y = getattr(nn, name)(0.3)(x)
    per_channel = y.reshape(40, 50, -1)
    first = per_channel[..., :1]
    assert bool(et.eq(per_channel, first).all()), "a channel is either all kept or all zeroed"
    kept = float(et.ne(first, 0).double().mean())
    assert abs(kept - 0.7) < 0.05
    assert np.allclose(np.unique(np_of(first)), [0.0, 1 / 0.7])
    m = getattr(nn, name)(0.3)
    m.eval()
    assert m(x) is x
    assert repr(m) == repr(getattr(torch.nn, name)(0.3))


def test_channel_dropout_ranks_and_warnings():
    for shape in ((4,), (1, 2, 3, 4)):
        got = error_of(lambda m, lib, shape=shape: m.dropout1d(lib.ones(*shape)), F, et)
        want = error_of(lambda m, lib, shape=shape: m.dropout1d(lib.ones(*shape)),
                        torch.nn.functional, torch)
        assert got == want
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.dropout2d(et.ones(2, 3, 4))
        F.dropout3d(et.ones(2, 3))
    with warnings.catch_warnings(record=True) as expected:
        warnings.simplefilter("always")
        torch.nn.functional.dropout2d(torch.ones(2, 3, 4))
        torch.nn.functional.dropout3d(torch.ones(2, 3))
    assert [str(w.message) for w in caught] == [str(w.message) for w in expected]
    assert error_of(lambda m, lib: m.Dropout2d(1.5), nn, et) == \
        error_of(lambda m, lib: m.Dropout2d(1.5), torch.nn, torch)


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_keeps_selu_statistics(feature):
    et.manual_seed(1)
    x = et.selu(et.randn(400, 300, dtype=et.float64))
    fn = F.feature_alpha_dropout if feature else F.alpha_dropout
    y = fn(x.unsqueeze(-1) if feature else x, 0.2, training=True)
    y = np_of(y).ravel()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02
    dropped = np.isclose(y, y.min())  # dropped elements all take one value
    assert abs(dropped.mean() - 0.2) < 0.02 or feature
    assert F.alpha_dropout(x, 0.2, training=False) is x


def test_rrelu_slopes_in_range_and_eval_mean():
    et.manual_seed(2)
    x = et.randn(1000, dtype=et.float64)
    m = nn.RReLU(0.1, 0.3)
    y = m(x)
    neg = np_of(x) < 0
    slopes = np_of(y)[neg] / np_of(x)[neg]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    assert np.array_equal(np_of(y)[~neg], np_of(x)[~neg])
    m.eval()
    e, t = pair(rng(3).standard_normal(20))
    assert_close(m(e), torch.nn.RReLU(0.1, 0.3).eval()(t))
    assert repr(nn.RReLU(inplace=True)) == repr(torch.nn.RReLU(inplace=True))
    assert error_of(lambda m, lib: m.rrelu(lib.ones(2), 0.5, 0.1, True), F, et)[1] == \
        "Lower bound should be less than or equal to the upper bound"


def test_rrelu_gradient_is_the_drawn_slope():
    et.manual_seed(4)
    x = et.randn(50, dtype=et.float64).requires_grad_()
    y = F.rrelu(x, training=True)
    y.sum().backward()
    assert np.allclose(np_of(x.grad), np_of(y.detach()) / np_of(x.detach()))


def test_gumbel_softmax():
    et.manual_seed(5)
    logits = et.tensor([[1.0, 2.0, 0.5]], dtype=et.float64).expand(20000, 3).contiguous()
    soft = F.gumbel_softmax(logits, tau=0.5)
    assert np.allclose(np_of(soft).sum(1), 1)
    logits.requires_grad_()
    hard = F.gumbel_softmax(logits, hard=True)
    h = np_of(hard.detach())
    assert set(np.unique(h)) == {0.0, 1.0} and np.all(h.sum(1) == 1)
    # argmax of logits + Gumbel noise is a sample of softmax(logits)
    freq = h.mean(0)
    want = np.exp([1.0, 2.0, 0.5]) / np.exp([1.0, 2.0, 0.5]).sum()
    assert np.allclose(freq, want, atol=0.015)
    (hard * et.tensor([1.0, 2.0, 3.0], dtype=et.float64)).sum().backward()
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool_matches_torch_with_samples(nd):
    x = rng(6).standard_normal((2, 3) + (9,) * nd)
    samples = rng(7).random((2, 3, nd))
    ex, tx = pair(x, requires_grad=True)
    es, ts = pair(samples)
    name = f"FractionalMaxPool{nd}d"
    em = getattr(nn, name)(2, output_size=4, return_indices=True, _random_samples=es)
    tm = getattr(torch.nn, name)(2, output_size=4, return_indices=True, _random_samples=ts)
    (ev, ei), (tv, ti) = em(ex), tm(tx)
    assert_close(ev, tv)
    assert np.array_equal(np_of(ei), np_of(ti))
    ev.sum().backward()
    tv.sum().backward()
    assert_close(ex.grad, tx.grad)
    fn = getattr(F, f"fractional_max_pool{nd}d")
    tfn = getattr(torch.nn.functional, f"fractional_max_pool{nd}d")
    assert_close(fn(ex[0], 3, output_ratio=(0.5,) * nd, _random_samples=es[:1]),
                 tfn(tx[0], 3, output_ratio=(0.5,) * nd, _random_samples=ts[:1]))
    et.manual_seed(0)
    free = fn(ex, 2, output_size=3)  # steps drawn: still windows of the input
    assert tuple(free.shape) == (2, 3) + (3,) * nd


def test_fractional_max_pool_errors():
    for call in (lambda m, lib: m.FractionalMaxPool2d(2),
                 lambda m, lib: m.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5),
                 lambda m, lib: m.FractionalMaxPool2d(2, output_ratio=1.5)):
        assert error_of(call, nn, et) == error_of(call, torch.nn, torch)
    assert error_of(lambda m, lib: m.fractional_max_pool2d(lib.ones(1, 1, 4, 4), 2), F,
                    et)[0] == "ValueError"


def test_adaptive_log_softmax_matches_torch():
    torch.manual_seed(0)
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10, 15], div_value=2.0,
                                             head_bias=True).double()
    em = nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10, 15], div_value=2.0, head_bias=True)
    em = em.double()
    assert list(em.state_dict()) == list(tm.state_dict())
    em.load_state_dict({k: et.from_numpy(np_of(v).copy()) for k, v in tm.state_dict().items()})
    ex, tx = pair(rng(8).standard_normal((6, 8)), requires_grad=True)
    et_, tt = pair(np.array([0, 5, 12, 19, 3, 10]))
    eo, to = em(ex, et_), tm(tx, tt)
    assert_close(eo.output, to.output)
    assert_close(eo.loss, to.loss)
    eo.loss.backward()
    to.loss.backward()
    assert_close(ex.grad, tx.grad)
    tparams = dict(tm.named_parameters())
    for name, p in em.named_parameters():
        assert_close(p.grad, tparams[name].grad, what=name)
    with torch.no_grad():
        assert_close(em.log_prob(ex), tm.log_prob(tx))
        assert np.array_equal(np_of(em.predict(ex)), np_of(tm.predict(tx)))
    one = em(ex[0], et_[0])
    assert one.output.dim() == 0
    for call in (lambda m, lib: m.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 25]),
                 lambda m, lib: m.AdaptiveLogSoftmaxWithLoss(8, 20, [])):
        assert error_of(call, nn, et) == error_of(call, torch.nn, torch)
    got = error_of(lambda m, x: em(x, et.tensor([0, 20, 1, 1, 1, 1])), nn, ex)
    want = error_of(lambda m, x: tm(x, torch.tensor([0, 20, 1, 1, 1, 1])), nn, tx)
    assert got == want


@pytest.mark.parametrize("call", [
    lambda m, lib: m.MultiMarginLoss(p=3),
    lambda m, lib: m.TripletMarginLoss(margin=0),
    lambda m, lib: m.TripletMarginWithDistanceLoss(margin=-1.0),
    lambda m, lib: m.CircularPad2d(1)(lib.ones(2, 2)),
    lambda m, lib: m.Softmax2d()(lib.ones(2, 2)),
    lambda m, lib: m.CrossMapLRN2d(3)(lib.ones(2, 2, 2)),
    lambda m, lib: m.LinearCrossEntropyLoss(3, 4, label_smoothing=2.0),
])
def test_constructor_and_input_errors(call):
    assert error_of(call, nn, et) == error_of(call, torch.nn, torch)


def test_data_parallel_runs_the_module_on_one_device():
    inner = nn.Linear(3, 2)
    model = nn.DataParallel(inner)
    assert model.module is inner and model.device_ids == []
    assert list(model.state_dict()) == ["module.weight", "module.bias"]
    x = et.ones(4, 3)
    assert np.array_equal(np_of(model(x)), np_of(inner(x)))
    assert np.array_equal(np_of(nn.parallel.data_parallel(inner, x)), np_of(inner(x)))
    import ember_nn.parallel as parallel

    assert parallel.DataParallel is nn.DataParallel


def test_container_is_deprecated():
    with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
        c = nn.Container(a=nn.ReLU())
    assert list(dict(c.named_children())) == ["a"]


def test_functional_extras_match_torch():
    tf = torch.nn.functional
    x, w, b = (rng(i).standard_normal(s) for i, s in enumerate([(5, 2, 3), (3, 3, 4), (4,)]))
    (ex, tx), (ew, tw), (eb, tb) = (pair(v, requires_grad=True) for v in (x, w, b))
    eo, to = F.conv_tbc(ex, ew, eb, 1), torch.conv_tbc(tx, tw, tb, 1)
    assert_close(eo, to)
    eo.sum().backward()
    to.sum().backward()
    for e, t in ((ex, tx), (ew, tw), (eb, tb)):
        assert_close(e.grad, t.grad)
    e, t = pair(rng(1).standard_normal((3, 4)))
    assert_close(F.threshold_(e.clone(), 0.1, 2.0), tf.threshold_(t.clone(), 0.1, 2.0))
    assert_close(F.selu_(e.clone()), tf.selu_(t.clone()))
    assert_close(F.celu_(e.clone(), 0.5), tf.celu_(t.clone(), 0.5))
    e4, t4 = pair(rng(2).standard_normal((2, 6, 2)))
    assert_close(F.native_channel_shuffle(e4, 2), tf.native_channel_shuffle(t4, 2))
    args = [pair(rng(i).standard_normal((4, 3))) for i in range(3)]

    def l1(a, b):
        return (a - b).abs().sum(-1)

    assert_close(F.triplet_margin_with_distance_loss(*[a[0] for a in args], distance_function=l1,
                                                     swap=True, reduction="none"),
                 tf.triplet_margin_with_distance_loss(*[a[1] for a in args],
                                                      distance_function=l1, swap=True,
                                                      reduction="none"))
