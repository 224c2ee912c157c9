"""Recurrent layers, cells and packed sequences against PyTorch 2.13: parameter names,
shapes and order, reprs, initialisation bounds; forward values, final states and the
gradients of the input, the initial states and every parameter in float32 and float64
(batched, batch_first, unbatched, packed); dropout between layers; errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.utils.rnn as TR

import ember_autograd as ea
import ember_nn as nn
import ember_tensor as et
from ember_nn.utils import rnn as R
from nn_testing import assert_close, copy_state, np_of, pair, torch_repr


def quiet(fn, *args, **kwargs):
    """A torch call with its warnings silenced (its LSTM warns that oneDNN has no
    projections)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _flat(state):
    """(h, c) or h as a list of tensors."""
    return list(state) if isinstance(state, tuple) else [state]


CONFIGS = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("RNN", {"bidirectional": True, "batch_first": True, "bias": False}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 3, "num_layers": 2, "batch_first": True}),
    ("LSTM", {"proj_size": 2, "bidirectional": True, "bias": False}),
    ("GRU", {}),
    ("GRU", {"num_layers": 3, "batch_first": True}),
    ("GRU", {"bidirectional": True, "num_layers": 2, "bias": False}),
]


def _cid(c) -> str:
    return c[0] + "(" + ", ".join(f"{k}={v}" for k, v in c[1].items()) + ")"


def _make(name, kwargs, dtype):
    ours = getattr(nn, name)(4, 5, **kwargs)
    theirs = getattr(torch.nn, name)(4, 5, **kwargs)
    if dtype == "float64":
        ours.double()
        theirs.double()
    copy_state(ours, theirs)
    return ours, theirs


def _states(name, kwargs, batch, rng, dtype, unbatched=False):
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    hsize = kwargs.get("proj_size") or 5
    shape_h = (layers, hsize) if unbatched else (layers, batch, hsize)
    shape_c = (layers, 5) if unbatched else (layers, batch, 5)
    h = pair(rng.standard_normal(shape_h) * 0.5, dtype, requires_grad=True)
    if name != "LSTM":
        return [h], h[0], h[1]
    c = pair(rng.standard_normal(shape_c) * 0.5, dtype, requires_grad=True)
    return [h, c], (h[0], c[0]), (h[1], c[1])


def _compare(ours, theirs, out, tout, state, tstate, leaves, dtype, rng):
    assert_close(out, tout, dtype, "output", scale=10.0)
    for k, (s, ts) in enumerate(zip(_flat(state), _flat(tstate))):
        assert_close(s, ts, dtype, f"final state {k}", scale=10.0)
    w = rng.uniform(0.5, 1.5, size=tuple(tout.shape))
    loss = (out * pair(w, dtype)[0]).sum()
    tloss = (tout * pair(w, dtype)[1]).sum()
    for k, (s, ts) in enumerate(zip(_flat(state), _flat(tstate))):
        loss = loss + s.sum() * (k + 2)
        tloss = tloss + ts.sum() * (k + 2)
    loss.backward()
    tloss.backward()
    for k, (e, t) in enumerate(leaves):
        assert_close(e.grad, t.grad, dtype, f"gradient of input {k}", scale=10.0)
    tparams = dict(theirs.named_parameters())
    for pname, p in ours.named_parameters():
        assert_close(p.grad, tparams[pname].grad, dtype, f"gradient of {pname}", scale=10.0)


@pytest.mark.parametrize("with_state", [False, True], ids=["zero_state", "given_state"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("config", CONFIGS, ids=[_cid(c) for c in CONFIGS])
def test_layer_matches_torch(config, dtype: str, with_state: bool) -> None:
    name, kwargs = config
    ours, theirs = _make(name, kwargs, dtype)
    rng = np.random.default_rng(len(name) + len(kwargs))
    shape = (3, 6, 4) if kwargs.get("batch_first") else (6, 3, 4)
    x = pair(rng.standard_normal(shape), dtype, requires_grad=True)
    leaves = [x]
    if with_state:
        pairs, hx, thx = _states(name, kwargs, 3, rng, dtype)
        leaves += pairs
        out, state = ours(x[0], hx)
        tout, tstate = quiet(theirs, x[1], thx)
    else:
        out, state = ours(x[0])
        tout, tstate = quiet(theirs, x[1])
    _compare(ours, theirs, out, tout, state, tstate, leaves, dtype, rng)


@pytest.mark.parametrize("config", CONFIGS[::2], ids=[_cid(c) for c in CONFIGS[::2]])
def test_unbatched_matches_torch(config) -> None:
    name, kwargs = config
    ours, theirs = _make(name, kwargs, "float64")
    rng = np.random.default_rng(7)
    x = pair(rng.standard_normal((6, 4)), "float64", requires_grad=True)
    pairs, hx, thx = _states(name, kwargs, None, rng, "float64", unbatched=True)
    out, state = ours(x[0], hx)
    tout, tstate = quiet(theirs, x[1], thx)
    assert tuple(out.shape) == tuple(tout.shape)
    _compare(ours, theirs, out, tout, state, tstate, [x] + pairs, "float64", rng)


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("config", CONFIGS, ids=[_cid(c) for c in CONFIGS])
def test_packed_sequence_matches_torch(config, enforce_sorted: bool) -> None:
    name, kwargs = config
    ours, theirs = _make(name, kwargs, "float64")
    rng = np.random.default_rng(3)
    batch_first = kwargs.get("batch_first", False)
    lengths = [6, 4, 4, 1] if enforce_sorted else [3, 6, 1, 4]
    shape = (4, 6, 4) if batch_first else (6, 4, 4)
    x = pair(rng.standard_normal(shape), "float64", requires_grad=True)
    pairs, hx, thx = _states(name, kwargs, 4, rng, "float64")
    packed = R.pack_padded_sequence(x[0], lengths, batch_first, enforce_sorted)
    tpacked = TR.pack_padded_sequence(x[1], lengths, batch_first, enforce_sorted)
    assert_close(packed.data, tpacked.data, "float64", "packed data")
    assert packed.batch_sizes.tolist() == tpacked.batch_sizes.tolist()
    out, state = ours(packed, hx)
    tout, tstate = quiet(theirs, tpacked, thx)
    assert isinstance(out, R.PackedSequence)
    assert out.batch_sizes.tolist() == tout.batch_sizes.tolist()
    padded, lens = R.pad_packed_sequence(out, batch_first=batch_first, total_length=7)
    tpadded, tlens = TR.pad_packed_sequence(tout, batch_first=batch_first, total_length=7)
    assert lens.tolist() == tlens.tolist() == lengths
    _compare(ours, theirs, padded, tpadded, state, tstate, [x] + pairs, "float64", rng)


def test_packed_equals_running_each_sequence_alone() -> None:
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True).double()
    rng = np.random.default_rng(0)
    seqs = [et.from_numpy(rng.standard_normal((n, 3))) for n in (5, 2, 4)]
    out, (h, c) = lstm(R.pack_sequence(seqs, enforce_sorted=False))
    padded, lengths = R.pad_packed_sequence(out)
    for b, s in enumerate(seqs):
        alone, (h1, c1) = lstm(s)
        n = s.shape[0]
        np.testing.assert_allclose(np_of(padded[:n, b]), np_of(alone), atol=1e-12)
        np.testing.assert_allclose(np_of(h[:, b]), np_of(h1), atol=1e-12)
        np.testing.assert_allclose(np_of(c[:, b]), np_of(c1), atol=1e-12)
        assert (np_of(padded[n:, b]) == 0).all()


# ----------------------------------------------------------------------------- structure


@pytest.mark.parametrize("config", CONFIGS, ids=[_cid(c) for c in CONFIGS])
def test_parameters_and_repr_match_torch(config) -> None:
    name, kwargs = config
    ours = getattr(nn, name)(4, 5, **kwargs)
    theirs = getattr(torch.nn, name)(4, 5, **kwargs)
    assert repr(ours) == repr(theirs)
    ours_params = [(n, tuple(p.shape)) for n, p in ours.named_parameters()]
    assert ours_params == [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours._flat_weights_names == theirs._flat_weights_names
    assert ours._all_weights == theirs._all_weights
    for attr in ("mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                 "dropout", "bidirectional", "proj_size"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    # a state dict saved by PyTorch loads into Ember
    result = ours.load_state_dict({k: et.from_numpy(v.detach().numpy().copy())
                                   for k, v in theirs.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys


def test_reprs_with_every_option() -> None:
    for name, kw in (("RNN", {"nonlinearity": "relu", "dropout": 0.5, "num_layers": 2}),
                     ("LSTM", {"proj_size": 2, "batch_first": True, "bias": False}),
                     ("GRU", {"bidirectional": True, "dropout": 0.25, "num_layers": 3})):
        assert repr(getattr(nn, name)(3, 4, **kw)) == repr(getattr(torch.nn, name)(3, 4, **kw))
    for name, kw in (("RNNCell", {}), ("RNNCell", {"bias": False, "nonlinearity": "relu"}),
                     ("LSTMCell", {}), ("GRUCell", {"bias": False})):
        assert repr(getattr(nn, name)(3, 4, **kw)) == repr(getattr(torch.nn, name)(3, 4, **kw))


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"])
def test_initialisation_bounds(name: str) -> None:
    et.manual_seed(0)
    kwargs = {} if name.endswith("Cell") else {"num_layers": 2}
    m = getattr(nn, name)(30, 64, **kwargs)
    bound = 1 / math.sqrt(64)
    values = np.concatenate([np_of(p).ravel() for p in m.parameters()])
    assert np.abs(values).max() <= bound + 1e-7
    assert np.abs(values).max() > 0.95 * bound
    assert abs(values.mean()) < 0.05 * bound
    assert abs(values.std() - bound / math.sqrt(3)) < 0.05 * bound


def test_all_weights_and_flatten_parameters() -> None:
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    assert len(lstm.all_weights) == 4 and all(len(w) == 4 for w in lstm.all_weights)
    assert lstm.all_weights[1][0] is lstm.weight_ih_l0_reverse
    assert lstm._flat_weights[0] is lstm.weight_ih_l0
    lstm.flatten_parameters()


def test_empty_batch() -> None:
    for name in ("RNN", "LSTM", "GRU"):
        out, state = getattr(nn, name)(3, 4, bidirectional=True)(et.ones(5, 0, 3))
        assert tuple(out.shape) == (5, 0, 8)
        assert tuple(_flat(state)[0].shape) == (2, 0, 4)


def test_dtype_argument() -> None:
    gru = nn.GRU(3, 4, dtype=et.float64)
    assert all(p.dtype == et.float64 for p in gru.parameters())
    out, h = gru(et.randn(2, 5, 3, dtype=et.float64))
    assert out.dtype == et.float64


# ----------------------------------------------------------------------------- dropout


def test_dropout_between_layers_train_only() -> None:
    lstm = nn.LSTM(8, 16, num_layers=3, dropout=0.5)
    x = et.randn(5, 4, 8)
    lstm.eval()
    a, _ = lstm(x)
    b, _ = lstm(x)
    np.testing.assert_array_equal(np_of(a), np_of(b))  # eval: deterministic
    lstm.train()
    et.manual_seed(1)
    c, _ = lstm(x)
    et.manual_seed(1)
    d, _ = lstm(x)
    np.testing.assert_array_equal(np_of(c), np_of(d))  # same seed, same masks
    e, _ = lstm(x)
    assert np.abs(np_of(c) - np_of(e)).max() > 1e-3  # another draw, other masks
    assert np.abs(np_of(a) - np_of(c)).max() > 1e-3  # train differs from eval


def test_dropout_statistics_between_layers() -> None:
    """With dropout p, the second layer sees the first layer's output with a fraction p of
    zeros, the rest scaled by 1/(1-p): checked through a hook-free copy of the recurrence
    (an RNN whose second layer has zero recurrent weights and identity input weights)."""
    et.manual_seed(0)
    rnn = nn.RNN(6, 200, num_layers=2, dropout=0.3, nonlinearity="relu", bias=False)
    with ea.no_grad():
        rnn.weight_hh_l0.zero_()
        rnn.weight_hh_l1.zero_()
        rnn.weight_ih_l1.copy_(et.eye(200))
        rnn.weight_ih_l0.copy_(et.ones(200, 6))
    out, _ = rnn(et.ones(10, 8, 6))  # layer 0 gives 6 everywhere; layer 1 relu(dropout(6))
    values = np_of(out).ravel()
    kept = values != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(values[kept], 6 / 0.7, rtol=1e-5)


def test_dropout_warning_and_errors_match_torch() -> None:
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.2)
    for kwargs, kind, pattern in (
        ({"dropout": 1.5}, ValueError, "dropout should be a number in range"),
        ({"dropout": True}, ValueError, "dropout should be a number in range"),
    ):
        with pytest.raises(kind, match=pattern):
            nn.GRU(3, 4, num_layers=2, **kwargs)


# ----------------------------------------------------------------------------- cells

CELLS = [
    ("RNNCell", {}),
    ("RNNCell", {"nonlinearity": "relu", "bias": False}),
    ("LSTMCell", {}),
    ("LSTMCell", {"bias": False}),
    ("GRUCell", {}),
    ("GRUCell", {"bias": False}),
]


@pytest.mark.parametrize("mode", ["zero_state", "given_state", "unbatched"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("config", CELLS, ids=[_cid(c) for c in CELLS])
def test_cell_matches_torch(config, dtype: str, mode: str) -> None:
    name, kwargs = config
    ours = getattr(nn, name)(4, 5, **kwargs)
    theirs = getattr(torch.nn, name)(4, 5, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    if dtype == "float64":
        ours.double()
        theirs.double()
    copy_state(ours, theirs)
    rng = np.random.default_rng(len(name))
    batch = () if mode == "unbatched" else (3,)
    x = pair(rng.standard_normal((*batch, 4)), dtype, requires_grad=True)
    leaves = [x]
    args, targs = [x[0]], [x[1]]
    if mode != "zero_state":
        h = pair(rng.standard_normal((*batch, 5)), dtype, requires_grad=True)
        leaves.append(h)
        if name == "LSTMCell":
            c = pair(rng.standard_normal((*batch, 5)), dtype, requires_grad=True)
            leaves.append(c)
            args.append((h[0], c[0]))
            targs.append((h[1], c[1]))
        else:
            args.append(h[0])
            targs.append(h[1])
    out, tout = ours(*args), theirs(*targs)
    outs, touts = _flat(out), _flat(tout)
    loss = tloss = 0
    for k, (o, t) in enumerate(zip(outs, touts)):
        assert_close(o, t, dtype, f"output {k}", scale=10.0)
        loss = loss + (o * (k + 1.5)).sum()
        tloss = tloss + (t * (k + 1.5)).sum()
    loss.backward()
    tloss.backward()
    for k, (e, t) in enumerate(leaves):
        assert_close(e.grad, t.grad, dtype, f"gradient of input {k}", scale=10.0)
    tparams = dict(theirs.named_parameters())
    for pname, p in ours.named_parameters():
        assert_close(p.grad, tparams[pname].grad, dtype, f"gradient of {pname}", scale=10.0)


def test_cells_unrolled_equal_the_layers() -> None:
    """An LSTMCell/GRUCell/RNNCell loop with the layer's weights gives the layer's output."""
    rng = np.random.default_rng(0)
    x = et.from_numpy(rng.standard_normal((5, 2, 3)))
    for layer_cls, cell_cls in ((nn.LSTM, nn.LSTMCell), (nn.GRU, nn.GRUCell),
                                (nn.RNN, nn.RNNCell)):
        layer, cell = layer_cls(3, 4).double(), cell_cls(3, 4).double()
        cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})
        out, _ = layer(x)
        state = None
        for t in range(5):
            state = cell(x[t], state)
            h = state[0] if isinstance(state, tuple) else state
            np.testing.assert_allclose(np_of(h), np_of(out[t]), atol=1e-12)


def test_gradcheck_through_the_layers() -> None:
    rng = np.random.default_rng(0)
    for m in (nn.LSTM(2, 3, num_layers=2, bidirectional=True, proj_size=2).double(),
              nn.GRU(2, 3, bidirectional=True).double(), nn.RNN(2, 3).double()):
        x = et.from_numpy(rng.standard_normal((4, 2, 2))).requires_grad_()
        assert ea.gradcheck(lambda t, m=m: m(t)[0], (x,))
    cell = nn.GRUCell(2, 3).double()
    x = et.from_numpy(rng.standard_normal((2, 2))).requires_grad_()
    h = et.from_numpy(rng.standard_normal((2, 3))).requires_grad_()
    assert ea.gradcheck(lambda a, b: cell(a, b), (x, h))


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_single_node_gradients(mode: str, bidirectional: bool) -> None:
    """Unpacked LSTM (without projection) and GRU directions run as one autograd node with
    their own backward: first and second derivatives by finite differences, through the
    initial state and the weights too, and second derivatives against PyTorch."""
    rng = np.random.default_rng(1)
    m = getattr(nn, mode)(2, 3, num_layers=2, bidirectional=bidirectional).double()
    d = 2 if bidirectional else 1
    x = et.from_numpy(rng.standard_normal((4, 2, 2))).requires_grad_()
    h0 = et.from_numpy(rng.standard_normal((2 * d, 2, 3))).requires_grad_()
    c0 = et.from_numpy(rng.standard_normal((2 * d, 2, 3))).requires_grad_()
    state = (h0, c0) if mode == "LSTM" else h0

    def run(x, *state_and_weights):
        *st, w_hh, b_hh = state_and_weights
        saved = m.weight_hh_l0, m.bias_hh_l0
        m.weight_hh_l0, m.bias_hh_l0 = w_hh, b_hh
        try:
            out, hidden = m(x, tuple(st) if mode == "LSTM" else st[0])
        finally:
            m.weight_hh_l0, m.bias_hh_l0 = saved
        return (out, *hidden) if mode == "LSTM" else (out, hidden)

    inputs = (x, *(state if mode == "LSTM" else (state,)), m.weight_hh_l0, m.bias_hh_l0)
    assert ea.gradcheck(run, inputs)
    assert ea.gradgradcheck(run, inputs)
    t = getattr(torch.nn, mode)(2, 3, num_layers=2, bidirectional=bidirectional).double()
    t.load_state_dict({k: torch.from_numpy(np_of(v).copy()) for k, v in m.state_dict().items()})
    tx = torch.from_numpy(np_of(x).copy()).requires_grad_()
    (tg,) = torch.autograd.grad(t(tx)[0].square().sum(), tx, create_graph=True)
    (eg,) = ea.grad(m(x)[0].square().sum(), x, create_graph=True)
    np.testing.assert_allclose(np_of(eg), tg.detach().numpy(), atol=1e-12)
    tg.square().sum().backward()
    eg.square().sum().backward()
    np.testing.assert_allclose(np_of(x.grad), tx.grad.numpy(), atol=1e-12)
    for name in ("weight_hh_l0", "weight_ih_l1", "bias_hh_l1"):
        np.testing.assert_allclose(np_of(getattr(m, name).grad),
                                   getattr(t, name).grad.numpy(), atol=1e-12)


# ----------------------------------------------------------------------------- utils.rnn


def test_pad_sequence_and_friends_match_torch() -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((n, 3)) for n in (2, 5, 3)]
    ours = [et.from_numpy(a) for a in arrays]
    theirs = [torch.from_numpy(a) for a in arrays]
    for kw in ({}, {"batch_first": True}, {"padding_value": -1.0, "padding_side": "left"}):
        assert_close(R.pad_sequence(ours, **kw), TR.pad_sequence(theirs, **kw), "float64",
                     str(kw))
    packed = R.pack_sequence(ours, enforce_sorted=False)
    tpacked = TR.pack_sequence(theirs, enforce_sorted=False)
    assert_close(packed.data, tpacked.data, "float64", "pack_sequence")
    assert packed.sorted_indices.tolist() == tpacked.sorted_indices.tolist()
    assert packed.unsorted_indices.tolist() == tpacked.unsorted_indices.tolist()
    for a, b in zip(R.unpack_sequence(packed), TR.unpack_sequence(tpacked)):
        assert_close(a, b, "float64", "unpack_sequence")
    padded = R.pad_sequence(ours)
    lengths = et.tensor([2, 5, 3])
    for a, b in zip(R.unpad_sequence(padded, lengths), arrays):
        np.testing.assert_array_equal(np_of(a), b)
    assert packed.double().data.dtype == et.float64
    assert packed.float().data.dtype == et.float32
    assert not packed.is_cuda


def test_packing_gradients_flow() -> None:
    x = et.randn(4, 3, 2, requires_grad=True)
    packed = R.pack_padded_sequence(x, [4, 2, 1])
    out, _ = R.pad_packed_sequence(packed)
    out.sum().backward()
    mask = np.zeros((4, 3, 2))
    for b, n in enumerate([4, 2, 1]):
        mask[:n, b] = 1
    np.testing.assert_array_equal(np_of(x.grad), mask)


def _error(call, lib):
    mod = (nn, R, et) if lib == "ember" else (torch.nn, TR, torch)
    try:
        quiet(call, *mod)
    except Exception as exc:  # noqa: BLE001 - compared below
        return type(exc).__name__, torch_repr(str(exc))
    return "no error", ""


SAME_ERRORS = {
    "input_size": lambda nn, R, T: nn.RNN(3, 4)(T.ones(5, 2, 4)),
    "empty_sequence": lambda nn, R, T: nn.LSTM(3, 4)(T.ones(0, 2, 3)),
    "rank": lambda nn, R, T: nn.RNN(3, 4)(T.ones(5, 2, 3, 1)),
    "lstm_rank": lambda nn, R, T: nn.LSTM(3, 4)(T.ones(5)),
    "hidden_size": lambda nn, R, T: nn.RNN(3, 4)(T.ones(5, 2, 3), T.ones(1, 3, 4)),
    "hidden_rank_batched": lambda nn, R, T: nn.GRU(3, 4)(T.ones(5, 2, 3), T.ones(2, 4)),
    "hidden_rank_unbatched": lambda nn, R, T: nn.RNN(3, 4)(T.ones(5, 3), T.ones(1, 2, 4)),
    "lstm_hidden1": lambda nn, R, T: nn.LSTM(3, 4)(T.ones(5, 2, 3),
                                                   (T.ones(1, 2, 4), T.ones(1, 3, 4))),
    "lstm_hidden_rank": lambda nn, R, T: nn.LSTM(3, 4)(T.ones(5, 2, 3),
                                                       (T.ones(1, 2, 4), T.ones(2, 4))),
    "lstm_hidden_rank_unbatched": lambda nn, R, T: nn.LSTM(3, 4)(
        T.ones(5, 3), (T.ones(1, 2, 4), T.ones(1, 2, 4))),
    "lstm_proj_hidden": lambda nn, R, T: nn.LSTM(3, 4, proj_size=2)(
        T.ones(5, 2, 3), (T.ones(1, 2, 4), T.ones(1, 2, 4))),
    "dropout_range": lambda nn, R, T: nn.RNN(3, 4, dropout=1.5),
    "hidden_zero": lambda nn, R, T: nn.RNN(3, 0),
    "layers_zero": lambda nn, R, T: nn.RNN(3, 4, num_layers=0),
    "nonlinearity": lambda nn, R, T: nn.RNN(3, 4, nonlinearity="foo"),
    "proj_big": lambda nn, R, T: nn.LSTM(3, 4, proj_size=4),
    "proj_negative": lambda nn, R, T: nn.LSTM(3, 4, proj_size=-1),
    "hidden_float": lambda nn, R, T: nn.RNN(3, 4.0),
    "cell_input_size": lambda nn, R, T: nn.RNNCell(3, 4)(T.ones(2, 5)),
    "cell_rank": lambda nn, R, T: nn.RNNCell(3, 4)(T.ones(2, 3, 3)),
    "cell_batch": lambda nn, R, T: nn.RNNCell(3, 4)(T.ones(2, 3), T.ones(3, 4)),
    "cell_hidden": lambda nn, R, T: nn.GRUCell(3, 4)(T.ones(2, 3), T.ones(2, 5)),
    "lstm_cell_states": lambda nn, R, T: nn.LSTMCell(3, 4)(T.ones(2, 3), (T.ones(2, 4),)),
    "lstm_cell_rank": lambda nn, R, T: nn.LSTMCell(3, 4)(T.ones(2, 3, 1)),
    "pack_unsorted": lambda nn, R, T: R.pack_padded_sequence(T.ones(4, 3, 2), [4, 2, 3]),
    "pack_zero_length": lambda nn, R, T: R.pack_padded_sequence(T.ones(4, 3, 2), [4, 2, 0],
                                                                enforce_sorted=False),
    "pad_total_length": lambda nn, R, T: R.pad_packed_sequence(
        R.pack_padded_sequence(T.ones(4, 3, 2), [4, 3, 2]), total_length=2),
    "pad_side": lambda nn, R, T: R.pad_sequence([T.ones(2)], padding_side="middle"),
}


@pytest.mark.parametrize("name", sorted(SAME_ERRORS))
def test_errors_match_torch(name: str) -> None:
    assert _error(SAME_ERRORS[name], "ember") == _error(SAME_ERRORS[name], "torch")


OWN_ERRORS = {
    # RNN and GRU have no proj_size argument (PyTorch's take **kwargs and refuse it)
    "proj_gru": (lambda: nn.GRU(3, 4, proj_size=2), TypeError, "proj_size"),
    # PyTorch names every recurrent layer "RNN" in this message
    "dtype": (lambda: nn.GRU(3, 4)(et.ones(5, 2, 3, dtype=et.float64)), ValueError,
              r"GRU input dtype \(ember.float64\) does not match weight dtype "
              r"\(ember.float32\). Convert input: input.to\(ember.float32\), or convert "
              r"model: model.to\(ember.float64\)"),
    # PyTorch raises an IndexError from inside its code for these two
    "lstm_hx_not_tuple": (lambda: nn.LSTM(3, 4)(et.ones(5, 2, 3), et.ones(1, 2, 4)),
                          RuntimeError, r"hx must be a tuple \(h_0, c_0\)"),
    "cell_unbatched_hidden": (lambda: nn.RNNCell(3, 4)(et.ones(3), et.ones(2, 4)),
                              RuntimeError, "for unbatched 1-D input, the hidden state"),
    # PyTorch accepts the nonlinearity and fails at the first forward
    "cell_nonlinearity": (lambda: nn.RNNCell(3, 4, nonlinearity="foo"), ValueError,
                          "Unknown nonlinearity 'foo'"),
    # PyTorch does not check the lengths against the padded length
    "pack_too_long": (lambda: R.pack_padded_sequence(et.ones(4, 3, 2), [4, 2, 5],
                                                     enforce_sorted=False), RuntimeError,
                      "is larger than the padded sequence length"),
    "pack_lengths_count": (lambda: R.pack_padded_sequence(et.ones(4, 3, 2), [4, 2]),
                           RuntimeError, "Expected `len\\(lengths\\)` to be equal to batch_size"),
    "int_input": (lambda: nn.RNN(3, 4)(et.ones(5, 2, 3, dtype=et.int64)), ValueError,
                  "expected a floating point input"),
}


@pytest.mark.parametrize("name", sorted(OWN_ERRORS))
def test_own_errors(name: str) -> None:
    call, kind, pattern = OWN_ERRORS[name]
    with pytest.raises(kind, match=pattern):
        call()


# ----------------------------------------------------------------------------- training


def test_lstm_language_model_trains_like_torch() -> None:
    """A few SGD steps of a 2-layer LSTM with a linear head keep both libraries together."""
    ours = nn.LSTM(6, 8, num_layers=2)
    theirs = torch.nn.LSTM(6, 8, num_layers=2)
    head, thead = nn.Linear(8, 6), torch.nn.Linear(8, 6)
    copy_state(ours, theirs)
    copy_state(head, thead)
    rng = np.random.default_rng(0)
    x, tx = pair(rng.standard_normal((7, 3, 6)), "float32")
    y, ty = pair(rng.standard_normal((7, 3, 6)), "float32")
    params = list(ours.parameters()) + list(head.parameters())
    tparams = list(theirs.parameters()) + list(thead.parameters())
    for _ in range(4):
        loss = nn.functional.mse_loss(head(ours(x)[0]), y)
        tloss = torch.nn.functional.mse_loss(thead(theirs(tx)[0]), ty)
        assert_close(loss, tloss, "float32", "loss", scale=10.0)
        for p in params:
            p.grad = None
        for p in tparams:
            p.grad = None
        loss.backward()
        tloss.backward()
        with ea.no_grad():
            for p in params:
                p -= 0.5 * p.grad
        with torch.no_grad():
            for p in tparams:
                p -= 0.5 * p.grad
    for p, tp in zip(params, tparams):
        assert_close(p, tp, "float32", "parameter after training", scale=100.0)
