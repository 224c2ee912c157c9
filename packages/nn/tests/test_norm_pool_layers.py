"""Pooling, normalization, embedding and the nll/cross-entropy loss modules against torch.nn:
the same constructor arguments on both libraries, the ember module's state copied into the
torch one, then forward values and the gradients of the input and of every parameter, in
float32 and float64, in training and in evaluation mode; running statistics over several
steps; reprs, state_dict keys and versions, initialisation, errors."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import ember_nn as nn
import ember_tensor as et
from nn_testing import assert_close, copy_state, np_of, pair

# (name, args, kwargs, input shape, kind): kind "float" (a float input requiring grad),
# "distinct" (float without ties, for max pooling), "index" (int64 indices < 10),
# "nll" (log-probabilities and class targets), "ce_probs" (logits and probabilities)
LAYERS = [
    ("MaxPool2d", (2,), {}, (2, 3, 6, 6), "distinct"),
    ("MaxPool2d", ((3, 2),), {"stride": (2, 1), "padding": 1, "dilation": (1, 2),
                              "ceil_mode": True}, (2, 3, 7, 8), "distinct"),
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1}, (2, 3, 9), "distinct"),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False},
     (2, 3, 7, 6), "float"),
    ("AvgPool2d", (2,), {"ceil_mode": True, "divisor_override": 3}, (3, 5, 5), "float"),
    ("AvgPool1d", (3,), {"stride": 1, "padding": 1}, (2, 3, 7), "float"),
    ("AdaptiveAvgPool2d", ((3, None),), {}, (2, 3, 7, 6), "float"),
    ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 4, 4), "float"),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 9), "float"),
    ("AdaptiveMaxPool2d", ((2, 3),), {}, (2, 3, 7, 6), "distinct"),
    ("AdaptiveMaxPool1d", (4,), {}, (2, 3, 9), "distinct"),
    ("MaxPool3d", (2,), {}, (2, 3, 4, 6, 6), "distinct"),
    ("MaxPool3d", ((3, 2, 2),), {"stride": (2, 1, 2), "padding": 1, "dilation": (1, 2, 1),
                                 "ceil_mode": True}, (2, 5, 7, 6), "distinct"),
    ("AvgPool3d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False},
     (2, 3, 5, 7, 6), "float"),
    ("AvgPool3d", (2,), {"ceil_mode": True, "divisor_override": 3}, (3, 5, 5, 3), "float"),
    ("AdaptiveAvgPool3d", ((3, None, 2),), {}, (2, 3, 7, 6, 5), "float"),
    ("AdaptiveMaxPool3d", ((2, 3, 1),), {}, (2, 3, 5, 7, 6), "distinct"),
    ("BatchNorm1d", (3,), {}, (5, 3), "float"),
    ("BatchNorm1d", (3,), {"momentum": None, "eps": 1e-3}, (5, 3, 4), "float"),
    ("BatchNorm1d", (3,), {"affine": False}, (4, 3, 2), "float"),
    ("BatchNorm2d", (4,), {}, (3, 4, 3, 2), "float"),
    ("BatchNorm2d", (4,), {"track_running_stats": False}, (3, 4, 3, 2), "float"),
    ("BatchNorm2d", (4,), {"bias": False}, (3, 4, 3, 2), "float"),
    ("BatchNorm3d", (2,), {"momentum": 0.3}, (2, 2, 3, 2, 2), "float"),
    ("LayerNorm", (4,), {}, (2, 3, 4), "float"),
    ("LayerNorm", ((3, 4),), {"eps": 1e-3, "bias": False}, (2, 3, 4), "float"),
    ("LayerNorm", ([4],), {"elementwise_affine": False}, (5, 4), "float"),
    ("GroupNorm", (2, 6), {}, (2, 6, 5), "float"),
    ("GroupNorm", (3, 6), {"bias": False}, (2, 6, 2, 2), "float"),
    ("GroupNorm", (3, 3), {"affine": False, "eps": 1e-3}, (2, 3, 2, 2), "float"),
    ("InstanceNorm1d", (3,), {"affine": True}, (2, 3, 5), "float"),
    ("InstanceNorm2d", (3,), {"track_running_stats": True}, (2, 3, 3, 4), "float"),
    ("InstanceNorm1d", (3,), {}, (3, 5), "float"),
    ("Embedding", (10, 3), {}, (2, 5), "index"),
    ("EmbeddingBag", (10, 3), {}, (2, 5), "index"),
    ("EmbeddingBag", (10, 3), {"mode": "sum", "padding_idx": 2}, (4, 5), "index"),
    ("EmbeddingBag", (10, 3), {"mode": "max"}, (4, 5), "index"),
    ("Embedding", (10, 3), {"padding_idx": 2, "scale_grad_by_freq": True}, (4, 5), "index"),
    ("NLLLoss", (), {}, (5, 4), "nll"),
    ("NLLLoss", (), {"ignore_index": 1, "reduction": "sum"}, (5, 4), "nll"),
    ("CrossEntropyLoss", (), {}, (5, 4), "nll"),
    ("CrossEntropyLoss", (), {"label_smoothing": 0.2, "ignore_index": 0}, (3, 4, 2), "nll"),
    ("CrossEntropyLoss", (), {"reduction": "none"}, (5, 4), "ce_probs"),
]


def _id(case) -> str:
    name, args, kwargs, shape, _ = case
    bits = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{name}({', '.join(bits)}){list(shape)}"


def _inputs(kind, shape, rng):
    """(array, requires_grad) pairs of the forward's arguments."""
    if kind == "distinct":
        n = int(np.prod(shape))
        return [(rng.permutation(n).reshape(shape) / n, True)]
    if kind == "index":
        return [(rng.integers(0, 10, size=shape), False)]
    if kind == "nll":
        x = rng.standard_normal(shape)
        t = rng.integers(0, shape[1], size=(shape[0],) + tuple(shape[2:]))
        return [(x, True), (t, False)]
    if kind == "ce_probs":
        e = np.exp(rng.standard_normal(shape))
        return [(rng.standard_normal(shape), True), (e / e.sum(1, keepdims=True), False)]
    return [(rng.standard_normal(shape) * 2 + 0.5, True)]


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", LAYERS, ids=[_id(c) for c in LAYERS])
def test_layer_matches_torch(case, dtype: str, mode: str) -> None:
    name, args, kwargs, shape, kind = case
    ours = getattr(nn, name)(*args, **kwargs)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    if dtype == "float64":
        ours.double()
        theirs.double()
    rng = np.random.default_rng(len(name) + len(kwargs))
    with torch.no_grad():  # non-trivial parameters and running statistics
        floats = [b for b in theirs.buffers() if b.is_floating_point()]
        for tp in list(theirs.parameters()) + floats:
            tp.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, size=tuple(tp.shape))))
    state = {k: et.from_numpy(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()}
    ours.load_state_dict(state)
    if mode == "eval":
        ours.eval()
        theirs.eval()
    for step in range(2):  # twice: the running statistics move in training
        inputs = [pair(a, dtype, g) for a, g in _inputs(kind, shape, rng)]
        out = ours(*[e for e, _ in inputs])
        tout = theirs(*[t for _, t in inputs])
        assert_close(out, tout, dtype, f"{name}: output (step {step})", scale=2.0)
        w = rng.uniform(0.5, 1.5, size=tuple(tout.shape))
        (out * pair(w, dtype)[0]).sum().backward()
        (tout * pair(w, dtype)[1]).sum().backward()
        for i, (e, t) in enumerate(inputs):
            if t.requires_grad:
                assert_close(e.grad, t.grad, dtype, f"{name}: gradient of input {i}", scale=10.0)
    tparams = dict(theirs.named_parameters())
    for pname, p in ours.named_parameters():
        assert_close(p.grad, tparams[pname].grad, dtype, f"{name}: gradient of {pname}",
                     scale=10.0)
    tbuffers = dict(theirs.named_buffers())
    for bname, b in ours.named_buffers():
        assert_close(b, tbuffers[bname], dtype if b.is_floating_point() else "float64",
                     f"{name}: buffer {bname}", scale=2.0)


# ----------------------------------------------------------------------------- batch norm


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_running_stats_over_steps_then_eval(momentum) -> None:
    ours, theirs = nn.BatchNorm2d(3, momentum=momentum), torch.nn.BatchNorm2d(3, momentum=momentum)
    rng = np.random.default_rng(0)
    for step in range(6):
        x, tx = pair(rng.standard_normal((4, 3, 2, 3)) * (step + 1) + step, "float32")
        assert_close(ours(x), theirs(tx), "float32", f"step {step}", scale=2.0)
    assert int(ours.num_batches_tracked) == int(theirs.num_batches_tracked) == 6
    assert_close(ours.running_mean, theirs.running_mean, "float32", "running_mean", scale=10)
    assert_close(ours.running_var, theirs.running_var, "float32", "running_var", scale=10)
    ours.eval()
    theirs.eval()
    x, tx = pair(rng.standard_normal((2, 3, 2, 3)), "float32")
    assert_close(ours(x), theirs(tx), "float32", "eval", scale=10)
    ours.reset_running_stats()
    assert int(ours.num_batches_tracked) == 0 and np_of(ours.running_var).tolist() == [1, 1, 1]


def test_batch_norm_without_running_stats_uses_batch_statistics_in_eval() -> None:
    ours = nn.BatchNorm1d(2, track_running_stats=False).eval()
    theirs = torch.nn.BatchNorm1d(2, track_running_stats=False).eval()
    assert ours.running_mean is None and ours.num_batches_tracked is None
    assert list(ours.state_dict()) == ["weight", "bias"]
    x, tx = pair(np.random.default_rng(1).standard_normal((5, 2)))
    assert_close(ours.double()(x), theirs.double()(tx), "float64")


def test_batch_norm_one_value_per_channel_in_training() -> None:
    for lib, T in ((nn, et), (torch.nn, torch)):
        with pytest.raises(ValueError, match="Expected more than 1 value per channel when "
                                             "training, got input size"):
            lib.BatchNorm1d(3)(T.ones(1, 3))
        lib.BatchNorm1d(3).eval()(T.ones(1, 3))  # fine in eval


def test_batch_norm_two_forwards_one_backward() -> None:
    """The running statistics written by a second forward do not invalidate the first
    graph (they are state, not inputs; PyTorch does not bump their version either)."""
    bn = nn.BatchNorm1d(3)
    x = et.randn(4, 3, requires_grad=True)
    loss = bn(x).square().sum() + bn(x * 2).square().sum()
    loss.backward()
    assert x.grad is not None and bn.weight.grad is not None


def test_batch_norm_state_dict_version_1_loads() -> None:
    ours = nn.BatchNorm2d(2)
    state = ours.state_dict()
    assert state._metadata[""]["version"] == torch.nn.BatchNorm2d(2).state_dict()._metadata[""][
        "version"] == 2
    del state["num_batches_tracked"]
    state._metadata[""]["version"] = 1
    ours.num_batches_tracked.fill_(5)
    ours.load_state_dict(state)  # no missing key: the old format had no count
    assert int(ours.num_batches_tracked) == 5
    state._metadata[""]["version"] = 2
    with pytest.raises(RuntimeError,
                       match='Missing key\\(s\\) in state_dict: "num_batches_tracked"'):
        ours.load_state_dict(state)


@pytest.mark.parametrize(("name", "shape", "message"), [
    ("BatchNorm1d", (2, 3, 4, 5), "expected 2D or 3D input (got 4D input)"),
    ("BatchNorm2d", (2, 3, 4), "expected 4D input (got 3D input)"),
    ("BatchNorm3d", (2, 3, 4, 5), "expected 5D input (got 4D input)"),
    ("InstanceNorm2d", (3, 4), "expected 3D or 4D input (got 2D input)"),
])
def test_input_dimension_errors(name, shape, message) -> None:
    for lib, T in ((nn, et), (torch.nn, torch)):
        with pytest.raises(ValueError, match=re.escape(message)):
            getattr(lib, name)(3)(T.ones(*shape))


def test_instance_norm_feature_mismatch() -> None:
    for lib, T in ((nn, et), (torch.nn, torch)):
        with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match "
                                             r"num_features \(3\), but got: 4."):
            lib.InstanceNorm1d(3, affine=True)(T.ones(2, 4, 5))
        with pytest.warns(UserWarning, match="does not match num_features"):
            lib.InstanceNorm1d(3)(T.ones(2, 4, 5))


# ----------------------------------------------------------------------------- init, reprs


def test_initial_values() -> None:
    bn = nn.BatchNorm1d(4, dtype=et.float64)
    assert np_of(bn.weight).tolist() == [1.0] * 4 and np_of(bn.bias).tolist() == [0.0] * 4
    assert bn.weight.dtype == bn.running_mean.dtype == et.float64
    assert bn.num_batches_tracked.dtype == et.int64
    ln = nn.LayerNorm((2, 3), bias=False)
    assert ln.bias is None and np_of(ln.weight).tolist() == [[1.0] * 3] * 2
    assert [n for n, _ in ln.named_parameters()] == ["weight"]
    gn = nn.GroupNorm(2, 4)
    assert np_of(gn.weight).tolist() == [1.0] * 4
    et.manual_seed(0)
    emb = nn.Embedding(1000, 20, padding_idx=-1)
    w = np_of(emb.weight)
    assert emb.padding_idx == 999 and (w[999] == 0).all()
    assert abs(w[:999].mean()) < 0.02 and abs(w[:999].std() - 1) < 0.02


@pytest.mark.parametrize(("name", "args", "kwargs"), [
    ("BatchNorm1d", (3,), {"eps": 1e-3, "momentum": None, "affine": False}),
    ("BatchNorm2d", (3,), {"track_running_stats": False}),
    ("InstanceNorm2d", (3,), {}),
    ("LayerNorm", ((2, 3),), {"elementwise_affine": False}),
    ("GroupNorm", (2, 4), {"affine": False}),
    ("EmbeddingBag", (10, 3), {"padding_idx": 0, "max_norm": 1.0, "mode": "sum",
                               "scale_grad_by_freq": True}),
    ("Embedding", (10, 3), {"padding_idx": 0, "max_norm": 1.0, "norm_type": 1.0,
                            "scale_grad_by_freq": True, "sparse": True}),
    ("MaxPool2d", ((2, 3),), {"stride": 1, "return_indices": True}),
    ("MaxPool1d", (2,), {}),
    ("AvgPool2d", (3,), {"padding": 1}),
    ("AvgPool1d", (3,), {"padding": 1}),
    ("AdaptiveAvgPool2d", ((None, 4),), {}),
    ("AdaptiveMaxPool2d", (3,), {"return_indices": True}),
    ("MaxPool3d", ((2, 1, 3),), {"stride": 1, "return_indices": True}),
    ("AvgPool3d", (3,), {"padding": 1}),
    ("AdaptiveAvgPool3d", ((None, 4, 2),), {}),
    ("AdaptiveMaxPool3d", (3,), {"return_indices": True}),
    ("MaxUnpool1d", (2,), {}),
    ("MaxUnpool2d", ((2, 3),), {"stride": 1, "padding": 1}),
    ("MaxUnpool3d", (2,), {"stride": (1, 2, 1)}),
    ("AdaptiveAvgPool1d", (3,), {}),
    ("NLLLoss", (), {"ignore_index": 3}),
    ("CrossEntropyLoss", (), {"label_smoothing": 0.1}),
])
def test_repr_matches_torch(name, args, kwargs) -> None:
    assert repr(getattr(nn, name)(*args, **kwargs)) == repr(getattr(torch.nn, name)(*args,
                                                                                    **kwargs))


def test_loss_weight_is_a_buffer() -> None:
    w = et.tensor([1.0, 2.0, 0.5])
    for cls in (nn.NLLLoss, nn.CrossEntropyLoss):
        loss = cls(weight=w)
        assert loss.weight is w and list(loss.state_dict()) == ["weight"]


def test_return_indices_modules() -> None:
    a = np.random.default_rng(2).permutation(2 * 3 * 6 * 6).reshape(2, 3, 6, 6) * 1.0
    x, tx = pair(a)
    for ours, theirs in ((nn.MaxPool2d(2, return_indices=True),
                          torch.nn.MaxPool2d(2, return_indices=True)),
                         (nn.AdaptiveMaxPool2d(4, return_indices=True),
                          torch.nn.AdaptiveMaxPool2d(4, return_indices=True))):
        (o, i), (to, ti) = ours(x), theirs(tx)
        assert_close(o, to, "float64")
        np.testing.assert_array_equal(np_of(i), ti.numpy())


# ----------------------------------------------------------------------------- embedding


def test_embedding_from_pretrained_and_errors() -> None:
    w = np.arange(12.0).reshape(4, 3)
    emb = nn.Embedding.from_pretrained(et.from_numpy(w.copy()))
    temb = torch.nn.Embedding.from_pretrained(torch.from_numpy(w.copy()))
    assert not emb.weight.requires_grad and repr(emb) == repr(temb)
    idx = np.array([3, 0])
    assert_close(emb(et.from_numpy(idx)), temb(torch.from_numpy(idx)), "float64")
    assert nn.Embedding.from_pretrained(et.ones(2, 2), freeze=False).weight.requires_grad
    for lib in (nn, torch.nn):
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            lib.Embedding(5, 3, padding_idx=5)
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            lib.Embedding(5, 3, padding_idx=-6)
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be "
                                             "2-dimensional"):
        nn.Embedding.from_pretrained(et.ones(3))


def test_embedding_max_norm_module_matches_torch() -> None:
    ours = nn.Embedding(6, 4, max_norm=1.0).double()
    theirs = torch.nn.Embedding(6, 4, max_norm=1.0).double()
    copy_state(ours, theirs)
    idx = np.array([[0, 5, 5], [2, 3, 0]])
    assert_close(ours(et.from_numpy(idx)), theirs(torch.from_numpy(idx)), "float64")
    assert_close(ours.weight, theirs.weight, "float64", "renormalized rows")


def test_group_norm_errors_match_torch() -> None:
    for lib in (nn, torch.nn):
        with pytest.raises(ValueError, match=r"num_channels \(6\) must be divisible by "
                                             r"num_groups \(4\)"):
            lib.GroupNorm(4, 6)


def test_training_a_small_convnet_style_model() -> None:
    """Pooling, batch norm and cross entropy in one model: the loss goes down."""
    et.manual_seed(0)
    model = nn.Sequential(nn.BatchNorm2d(1), nn.MaxPool2d(2), nn.Flatten(), nn.LayerNorm(4),
                          nn.Linear(4, 3))
    x = et.randn(12, 1, 4, 4)
    y = et.tensor([0, 1, 2] * 4)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.05)
    first = None
    for _ in range(30):
        loss = loss_fn(model(x), y)
        model.zero_grad()
        loss.backward()
        with et_no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad
        first = loss.item() if first is None else first
    assert loss.item() < first


def et_no_grad():
    from ember_autograd import no_grad

    return no_grad()


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_layers_invert_max_pool_like_torch(nd: int) -> None:
    shape = (2, 3) + (4, 6, 5)[3 - nd:]
    a = np.random.default_rng(8).permutation(int(np.prod(shape))).reshape(shape) * 1.0
    x, tx = pair(a, requires_grad=True)
    pool = getattr(nn, f"MaxPool{nd}d")(2, return_indices=True)
    tpool = getattr(torch.nn, f"MaxPool{nd}d")(2, return_indices=True)
    unpool = getattr(nn, f"MaxUnpool{nd}d")(2)
    tunpool = getattr(torch.nn, f"MaxUnpool{nd}d")(2)
    out = unpool(*pool(x), output_size=shape)
    tout = tunpool(*tpool(tx), output_size=shape)
    assert_close(out, tout)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    assert_close(x.grad, tx.grad)
