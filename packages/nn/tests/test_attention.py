"""scaled_dot_product_attention, multi_head_attention_forward and MultiheadAttention against
PyTorch 2.13: values and the gradients of queries, keys, values and every parameter in
float32 and float64 for each kind of mask, gradcheck in float64, parameter layout and
reprs, state dicts both ways, dropout statistics, warnings and errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember_autograd as ea
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as et
from nn_testing import assert_close, copy_state, np_of, pair, torch_repr

# ----------------------------------------------------------------------------- sdpa


def _mask(shape, seed=0, full_row=None):
    m = np.random.default_rng(seed).random(shape) > 0.35
    m[..., 0] = True  # every query keeps a key, unless a row is cleared on purpose
    if full_row is not None:
        m[..., full_row, :] = False
    return m


# (name, shapes of q, k, v, kwargs; mask: None | ("bool"|"float", shape, full_row))
SDPA = [
    ("plain", (2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6), {}, None),
    ("scale", (2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6), {"scale": 0.3}, None),
    ("causal_square", (2, 2, 5, 4), (2, 2, 5, 4), (2, 2, 5, 3), {"is_causal": True}, None),
    ("causal_tall", (1, 2, 6, 4), (1, 2, 3, 4), (1, 2, 3, 3), {"is_causal": True}, None),
    ("causal_wide", (1, 2, 3, 4), (1, 2, 6, 4), (1, 2, 6, 3), {"is_causal": True}, None),
    # 64 queries and more go in blocks of 32 rows that skip the hidden keys
    ("causal_blocks", (1, 2, 100, 4), (1, 2, 100, 4), (1, 2, 100, 3), {"is_causal": True}, None),
    ("causal_blocks_tall", (1, 1, 90, 4), (1, 1, 50, 4), (1, 1, 50, 3), {"is_causal": True}, None),
    ("causal_blocks_wide", (1, 1, 70, 4), (1, 1, 95, 4), (1, 1, 95, 3), {"is_causal": True}, None),
    ("bool_mask_2d", (2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6), {}, ("bool", (4, 5), None)),
    ("bool_mask_4d", (2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6), {},
     ("bool", (2, 3, 4, 5), None)),
    ("bool_mask_broadcast", (2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6), {},
     ("bool", (2, 1, 1, 5), None)),
    ("float_mask", (2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6), {}, ("float", (4, 5), None)),
    ("fully_masked_row_bool", (2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6), {},
     ("bool", (4, 5), 1)),
    ("fully_masked_row_float", (2, 1, 4, 8), (2, 1, 5, 8), (2, 1, 5, 6), {},
     ("float", (4, 5), 2)),
    ("three_dims", (3, 4, 8), (3, 5, 8), (3, 5, 2), {}, None),
    ("two_dims", (4, 8), (5, 8), (5, 2), {"is_causal": True}, None),
    ("broadcast_heads", (2, 3, 4, 8), (2, 1, 5, 8), (2, 1, 5, 6), {}, None),
    ("gqa", (2, 6, 4, 8), (2, 2, 5, 8), (2, 2, 5, 6), {"enable_gqa": True}, None),
    ("gqa_masked", (1, 4, 4, 8), (1, 1, 5, 8), (1, 1, 5, 6), {"enable_gqa": True},
     ("bool", (4, 5), None)),
]


def _sdpa_args(row, dtype, lib_pairs=True):
    name, qs, ks, vs, kwargs, mask = row
    rng = np.random.default_rng(len(name))
    args = [pair(rng.standard_normal(s), dtype, requires_grad=True) for s in (qs, ks, vs)]
    masks = (None, None)
    if mask is not None:
        kind, shape, full = mask
        m = _mask(shape, len(name), full)
        if kind == "float":
            m = np.where(m, rng.standard_normal(shape) * 0.5, -np.inf)
        masks = pair(m, dtype)
    return args, masks, kwargs


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("row", SDPA, ids=[r[0] for r in SDPA])
def test_sdpa_matches_torch(row, dtype: str) -> None:
    args, (m, tm), kwargs = _sdpa_args(row, dtype)
    out = F.scaled_dot_product_attention(*[a for a, _ in args], attn_mask=m, **kwargs)
    tout = TF.scaled_dot_product_attention(*[t for _, t in args], attn_mask=tm, **kwargs)
    assert_close(out, tout, dtype, "output", scale=10.0)
    w = np.random.default_rng(1).uniform(0.5, 1.5, size=tuple(tout.shape))
    (out * pair(w, dtype)[0]).sum().backward()
    (tout * pair(w, dtype)[1]).sum().backward()
    for name, (a, t) in zip("qkv", args):
        assert np.isfinite(np_of(a.grad)).all()
        assert_close(a.grad, t.grad, dtype, f"gradient of {name}", scale=10.0)


@pytest.mark.parametrize("row", SDPA, ids=[r[0] for r in SDPA])
def test_sdpa_gradcheck(row) -> None:
    args, (m, _), kwargs = _sdpa_args(row, "float64")
    inputs = tuple(a for a, _ in args)
    assert ea.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, m, **kwargs),
                        inputs)


def test_sdpa_gradgradcheck() -> None:
    args, (m, _), kwargs = _sdpa_args(SDPA[5], "float64")
    inputs = tuple(a for a, _ in args)
    assert ea.gradgradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, m),
                            inputs)


def test_sdpa_fully_masked_rows_are_zero() -> None:
    q, k, v = et.randn(2, 4, 3), et.randn(2, 5, 3), et.randn(2, 5, 3)
    mask = et.ones(4, 5, dtype=et.bool)
    mask[2] = False
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert (np_of(out)[:, 2] == 0).all() and np.isfinite(np_of(out)).all()


def test_sdpa_dropout_statistics() -> None:
    """Uniform attention (zero queries) over an identity value matrix returns the dropped,
    rescaled weights themselves: a fraction p of zeros, the rest 1 / (S (1 - p))."""
    et.manual_seed(0)
    length, source, p = 200, 50, 0.25
    q = et.zeros(4, length, 8)
    k = et.randn(4, source, 8)
    v = et.eye(source).expand(4, source, source)
    weights = np_of(F.scaled_dot_product_attention(q, k, v, dropout_p=p)).ravel()
    kept = weights != 0
    assert abs(kept.mean() - (1 - p)) < 0.01
    np.testing.assert_allclose(weights[kept], 1 / (source * (1 - p)), rtol=1e-5)
    no_drop = np_of(F.scaled_dot_product_attention(q, k, v, dropout_p=0.0))
    np.testing.assert_allclose(no_drop, 1 / source, rtol=1e-5)


def _error(call, lib):
    mod = (nn, F, et) if lib == "ember" else (torch.nn, TF, torch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call(*mod)
        except Exception as exc:  # noqa: BLE001 - compared below
            return type(exc).__name__, torch_repr(str(exc))
    return "no error", ""


def _qkv(T, dtype=None):
    dtype = dtype or T.float32
    return (T.ones(2, 3, 4, 8, dtype=dtype), T.ones(2, 3, 5, 8, dtype=dtype),
            T.ones(2, 3, 5, 6, dtype=dtype))


SDPA_ERRORS = {
    "mask_and_causal": lambda nn, F, T: F.scaled_dot_product_attention(
        *_qkv(T), attn_mask=T.ones(4, 5, dtype=T.bool), is_causal=True),
    "dropout_range": lambda nn, F, T: F.scaled_dot_product_attention(*_qkv(T), dropout_p=1.5),
}


@pytest.mark.parametrize("name", sorted(SDPA_ERRORS))
def test_sdpa_errors_match_torch(name: str) -> None:
    assert _error(SDPA_ERRORS[name], "ember") == _error(SDPA_ERRORS[name], "torch")


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        # PyTorch's two dtype messages spell the dtypes as C++ does (float, double, long int)
        (lambda: F.scaled_dot_product_attention(et.ones(2, 4, 8),
                                                et.ones(2, 5, 8, dtype=et.float64),
                                                et.ones(2, 5, 8)),
         "Expected query, key, and value to have the same dtype, but got query.dtype: "
         "float32 key.dtype: float64 and value.dtype: float32 instead."),
        (lambda: F.scaled_dot_product_attention(*_qkv(et), attn_mask=et.ones(4, 5,
                                                                             dtype=et.int64)),
         "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
         "attn_mask.dtype: int64 and  query.dtype: float32 instead."),
        (lambda: F.scaled_dot_product_attention(et.ones(2, 4, 8), et.ones(2, 5, 7),
                                                et.ones(2, 5, 8)),
         r"query and key must have the same embedding size \(last dim\), but got query "
         r"\[2, 4, 8\] and key \[2, 5, 7\]"),
        (lambda: F.scaled_dot_product_attention(et.ones(2, 4, 8), et.ones(2, 5, 8),
                                                et.ones(2, 6, 8)),
         r"key and value must have the same sequence length \(dim -2\)"),
        (lambda: F.scaled_dot_product_attention(et.ones(2, 4, 4, 8), et.ones(2, 3, 5, 8),
                                                et.ones(2, 3, 5, 8), enable_gqa=True),
         "Number of heads in key and value must divide the number of heads in query"),
        (lambda: F.scaled_dot_product_attention(et.ones(8), et.ones(5, 8), et.ones(5, 8)),
         "expected query to have at least 2 dimensions"),
        (lambda: F.scaled_dot_product_attention(et.ones(4, 8, dtype=et.int64),
                                                et.ones(5, 8, dtype=et.int64),
                                                et.ones(5, 8, dtype=et.int64)),
         "expected floating point"),
    ],
)
def test_sdpa_own_errors(call, pattern: str) -> None:
    with pytest.raises(RuntimeError, match=pattern):
        call()


# ----------------------------------------------------------------------------- MultiheadAttention

CONFIGS = [
    ({}, "self"),
    ({}, "cross"),
    ({"batch_first": True}, "self"),
    ({"batch_first": True}, "kv_same"),
    ({"kdim": 3, "vdim": 5}, "cross"),
    ({"kdim": 3, "vdim": 5, "batch_first": True, "bias": False}, "cross"),
    ({"add_bias_kv": True}, "self"),
    ({"add_zero_attn": True}, "cross"),
    ({"add_bias_kv": True, "add_zero_attn": True, "batch_first": True}, "cross"),
    ({"bias": False}, "kv_same"),
]

MASKS = ["none", "key_padding", "attn_2d", "attn_3d", "both", "float_both", "causal_hint"]


def _cfg_id(c) -> str:
    kwargs, kind = c
    return kind + "".join(f",{k}={v}" for k, v in kwargs.items())


def _inputs(kwargs, kind, dtype, rng, batch=3, length=4, source=5, embed=8):
    bf = kwargs.get("batch_first", False)

    def shape(n, d):
        return (batch, n, d) if bf else (n, batch, d)

    q = pair(rng.standard_normal(shape(length, embed)), dtype, requires_grad=True)
    if kind == "self":
        return [q], (q[0], q[0], q[0]), (q[1], q[1], q[1])
    k = pair(rng.standard_normal(shape(source, kwargs.get("kdim", embed))), dtype,
             requires_grad=True)
    if kind == "kv_same":
        return [q, k], (q[0], k[0], k[0]), (q[1], k[1], k[1])
    v = pair(rng.standard_normal(shape(source, kwargs.get("vdim", embed))), dtype,
             requires_grad=True)
    return [q, k, v], (q[0], k[0], v[0]), (q[1], k[1], v[1])


def _masks(mask, dtype, rng, batch, length, source, heads):
    """(ember kwargs, torch kwargs) of the forward's mask arguments."""
    ours, theirs = {}, {}
    if mask in ("key_padding", "both", "float_both"):
        kpm = np.zeros((batch, source), bool)
        kpm[0, 3:] = True
        kpm[2, 1] = True
        if mask == "float_both":
            kpm = np.where(kpm, -np.inf, rng.standard_normal(kpm.shape) * 0.1)
        ours["key_padding_mask"], theirs["key_padding_mask"] = pair(kpm, dtype)
    if mask in ("attn_2d", "both", "float_both", "causal_hint"):
        am = np.triu(np.ones((length, source), bool), 1 if mask == "causal_hint" else 2)
        if mask == "float_both":
            am = np.where(am, -np.inf, rng.standard_normal(am.shape) * 0.1)
        ours["attn_mask"], theirs["attn_mask"] = pair(am, dtype)
    if mask == "attn_3d":
        am = _mask((batch * heads, length, source), 3)
        ours["attn_mask"], theirs["attn_mask"] = pair(~am, dtype)
    if mask == "causal_hint":
        ours["is_causal"] = theirs["is_causal"] = True
    return ours, theirs


# the causal hint is for square self-attention
MHA_CASES = [(c, m) for c in CONFIGS for m in MASKS if m != "causal_hint" or c[1] == "self"]


def _mha_pair(kwargs, dtype, heads=2, embed=8):
    ours = nn.MultiheadAttention(embed, heads, **kwargs)
    theirs = torch.nn.MultiheadAttention(embed, heads, **kwargs)
    if dtype == "float64":
        ours.double()
        theirs.double()
    copy_state(ours, theirs)
    return ours, theirs


@pytest.mark.parametrize("need_weights", [True, False], ids=["weights", "no_weights"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("config", "mask"), MHA_CASES,
                         ids=[f"{_cfg_id(c)}-{m}" for c, m in MHA_CASES])
def test_mha_matches_torch(config, mask: str, dtype: str, need_weights: bool) -> None:
    kwargs, kind = config
    ours, theirs = _mha_pair(kwargs, dtype)
    rng = np.random.default_rng(len(mask) + len(kwargs))
    source = 4 if kind == "self" else 5
    leaves, args, targs = _inputs(kwargs, kind, dtype, rng, source=source)
    mk, tmk = _masks(mask, dtype, rng, 3, 4, source, 2)
    for average in (True, False):
        out, weights = ours(*args, need_weights=need_weights, average_attn_weights=average,
                            **mk)
        tout, tweights = theirs(*targs, need_weights=need_weights,
                                average_attn_weights=average, **tmk)
        assert_close(out, tout, dtype, "output", scale=10.0)
        if need_weights:
            assert_close(weights, tweights, dtype, "weights", scale=10.0)
        else:
            assert weights is None and tweights is None
    w = rng.uniform(0.5, 1.5, size=tuple(tout.shape))
    loss = (out * pair(w, dtype)[0]).sum()
    tloss = (tout * pair(w, dtype)[1]).sum()
    if need_weights:
        loss = loss + weights.square().sum()
        tloss = tloss + tweights.square().sum()
    loss.backward()
    tloss.backward()
    for i, (e, t) in enumerate(leaves):
        assert_close(e.grad, t.grad, dtype, f"gradient of input {i}", scale=10.0)
    tparams = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        assert_close(p.grad, tparams[name].grad, dtype, f"gradient of {name}", scale=10.0)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("config", [({}, "self"), ({"kdim": 3, "vdim": 5}, "cross"),
                                    ({"add_bias_kv": True, "add_zero_attn": True}, "cross")],
                         ids=_cfg_id)
def test_mha_unbatched_matches_torch(config, need_weights: bool) -> None:
    kwargs, kind = config
    ours, theirs = _mha_pair(kwargs, "float64")
    rng = np.random.default_rng(0)
    leaves, args, targs = _inputs(kwargs, kind, "float64", rng)
    args = [a[:, 0] for a in args]
    targs = [t[:, 0] for t in targs]
    source = args[1].shape[0]
    kpm = np.array([False, True, False, False, True])[:source]
    am = ~_mask((2, 4, source), 1)  # per head: (num_heads, L, S)
    km, tkm = pair(kpm, "float64")
    a3, ta3 = pair(am, "float64")
    out, weights = ours(*args, key_padding_mask=km, attn_mask=a3, need_weights=need_weights)
    tout, tweights = theirs(*targs, key_padding_mask=tkm, attn_mask=ta3,
                            need_weights=need_weights)
    assert tuple(out.shape) == tuple(tout.shape)
    assert_close(out, tout, "float64", "output")
    if need_weights:
        assert_close(weights, tweights, "float64", "weights")
    out.square().sum().backward()
    tout.square().sum().backward()
    for i, (e, t) in enumerate(leaves):
        assert_close(e.grad, t.grad, "float64", f"gradient of input {i}", scale=10.0)


def test_mha_fully_masked_query() -> None:
    """A query with every key masked: NaN weights and outputs with need_weights=True, zeros
    through scaled_dot_product_attention (need_weights=False), as in PyTorch."""
    ours, theirs = _mha_pair({}, "float64")
    x, tx = pair(np.random.default_rng(0).standard_normal((4, 2, 8)), "float64")
    am = np.zeros((4, 4), bool)
    am[1] = True
    m, tm = pair(am, "float64")
    for need in (True, False):
        out, _ = ours(x, x, x, attn_mask=m, need_weights=need)
        tout, _ = theirs(tx, tx, tx, attn_mask=tm, need_weights=need)
        np.testing.assert_array_equal(np.isnan(np_of(out)), np.isnan(np_of(tout)))
        ok = ~np.isnan(np_of(tout))
        np.testing.assert_allclose(np_of(out)[ok], np_of(tout)[ok], atol=1e-12)


def test_mha_gradcheck() -> None:
    mha = nn.MultiheadAttention(4, 2, kdim=3, vdim=2, add_bias_kv=True).double()
    rng = np.random.default_rng(0)
    q = et.from_numpy(rng.standard_normal((3, 2, 4))).requires_grad_()
    k = et.from_numpy(rng.standard_normal((5, 2, 3))).requires_grad_()
    v = et.from_numpy(rng.standard_normal((5, 2, 2))).requires_grad_()
    mask = et.from_numpy(np.triu(np.ones((3, 5), bool), 2))
    assert ea.gradcheck(lambda a, b, c: mha(a, b, c, attn_mask=mask)[0], (q, k, v))
    assert ea.gradcheck(lambda a, b, c: mha(a, b, c, attn_mask=mask, need_weights=False)[0],
                        (q, k, v))


def test_mha_structure_matches_torch() -> None:
    for kwargs in ({}, {"kdim": 3, "vdim": 5}, {"bias": False}, {"add_bias_kv": True},
                   {"batch_first": True, "dropout": 0.1, "add_zero_attn": True}):
        ours = nn.MultiheadAttention(8, 2, **kwargs)
        theirs = torch.nn.MultiheadAttention(8, 2, **kwargs)
        assert repr(ours) == repr(theirs)
        assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
            (n, tuple(p.shape)) for n, p in theirs.named_parameters()]
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for attr in ("embed_dim", "kdim", "vdim", "_qkv_same_embed_dim", "num_heads",
                     "dropout", "batch_first", "head_dim", "add_zero_attn"):
            assert getattr(ours, attr) == getattr(theirs, attr), attr
        assert type(ours.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
        assert isinstance(ours.out_proj, nn.Linear)
        # PyTorch's state dict loads into Ember
        result = ours.load_state_dict({k: et.from_numpy(v.detach().numpy().copy())
                                       for k, v in theirs.state_dict().items()})
        assert not result.missing_keys and not result.unexpected_keys


def test_mha_initialisation() -> None:
    et.manual_seed(0)
    mha = nn.MultiheadAttention(64, 4, add_bias_kv=True)
    bound = math.sqrt(6 / (64 + 3 * 64))  # xavier_uniform_ of (3E, E)
    w = np_of(mha.in_proj_weight)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert (np_of(mha.in_proj_bias) == 0).all() and (np_of(mha.out_proj.bias) == 0).all()
    assert np.abs(np_of(mha.out_proj.weight)).max() <= 1 / math.sqrt(64)
    assert np_of(mha.bias_k).std() > 0
    sep = nn.MultiheadAttention(8, 2, kdim=4, vdim=6)
    assert sep.in_proj_weight is None
    assert np.abs(np_of(sep.k_proj_weight)).max() <= math.sqrt(6 / (8 + 4))


def test_mha_dropout_train_and_eval() -> None:
    et.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, dropout=0.3)
    x = et.randn(40, 2, 8)
    mha.eval()
    _, w_eval = mha(x, x, x, average_attn_weights=False)
    np.testing.assert_allclose(np_of(w_eval).sum(-1), 1.0, rtol=1e-5)
    mha.train()
    _, w = mha(x, x, x, average_attn_weights=False)
    w = np_of(w)
    kept = w != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(w[kept], np_of(w_eval)[kept] / 0.7, rtol=1e-4)
    out1, _ = mha(x, x, x, need_weights=False)
    out2, _ = mha(x, x, x, need_weights=False)
    assert np.abs(np_of(out1) - np_of(out2)).max() > 1e-4


def test_mha_mask_types_bool_equals_float() -> None:
    mha = nn.MultiheadAttention(8, 2).double()
    x = et.randn(4, 2, 8, dtype=et.float64)
    kpm = et.tensor([[False, False, True, False], [False, True, True, False]])
    am = et.from_numpy(np.triu(np.ones((4, 4), bool), 1))
    fk = et.zeros(2, 4, dtype=et.float64).masked_fill(kpm, float("-inf"))
    fa = et.zeros(4, 4, dtype=et.float64).masked_fill(am, float("-inf"))
    a, _ = mha(x, x, x, key_padding_mask=kpm, attn_mask=am)
    b, _ = mha(x, x, x, key_padding_mask=fk, attn_mask=fa)
    np.testing.assert_allclose(np_of(a), np_of(b), atol=1e-12)
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and "
                                         "attn_mask is deprecated"):
        mha(x, x, x, key_padding_mask=kpm, attn_mask=fa)


def test_functional_mha_with_static_kv_matches_torch() -> None:
    rng = np.random.default_rng(0)
    e, heads, batch = 8, 2, 3
    q, tq = pair(rng.standard_normal((4, batch, e)), "float64", requires_grad=True)
    k, tk = pair(rng.standard_normal((5, batch, e)), "float64")
    sk, tsk = pair(rng.standard_normal((batch * heads, 6, e // heads)), "float64",
                   requires_grad=True)
    sv, tsv = pair(rng.standard_normal((batch * heads, 6, e // heads)), "float64",
                   requires_grad=True)
    w, tw = pair(rng.standard_normal((3 * e, e)) * 0.3, "float64", requires_grad=True)
    b, tb = pair(rng.standard_normal(3 * e) * 0.1, "float64", requires_grad=True)
    ow, tow = pair(rng.standard_normal((e, e)) * 0.3, "float64", requires_grad=True)
    ob, tob = pair(rng.standard_normal(e) * 0.1, "float64", requires_grad=True)
    out, weights = F.multi_head_attention_forward(q, k, k, e, heads, w, b, None, None, False,
                                                  0.0, ow, ob, static_k=sk, static_v=sv)
    tout, tweights = TF.multi_head_attention_forward(tq, tk, tk, e, heads, tw, tb, None, None,
                                                     False, 0.0, tow, tob, static_k=tsk,
                                                     static_v=tsv)
    assert_close(out, tout, "float64", "output")
    assert_close(weights, tweights, "float64", "weights")
    (out.sum() + weights.square().sum()).backward()
    (tout.sum() + tweights.square().sum()).backward()
    for e_, t_ in ((q, tq), (sk, tsk), (sv, tsv), (w, tw), (b, tb), (ow, tow), (ob, tob)):
        assert_close(e_.grad, t_.grad, "float64", "gradient")


def test_mha_is_causal_hint_equals_the_mask() -> None:
    mha = nn.MultiheadAttention(8, 2).double()
    x = et.randn(5, 2, 8, dtype=et.float64)
    mask = nn.Transformer.generate_square_subsequent_mask(5, dtype=et.float64) if hasattr(
        nn, "Transformer") else et.zeros(5, 5, dtype=et.float64).masked_fill(
        et.from_numpy(np.triu(np.ones((5, 5), bool), 1)), float("-inf"))
    a, _ = mha(x, x, x, attn_mask=mask, need_weights=False, is_causal=True)
    b, _ = mha(x, x, x, attn_mask=mask, need_weights=False)
    np.testing.assert_allclose(np_of(a), np_of(b), atol=1e-12)


MHA_ERRORS = {
    "embed_zero": lambda nn, F, T: nn.MultiheadAttention(0, 2),
    "heads_divide": lambda nn, F, T: nn.MultiheadAttention(8, 3),
    "causal_without_mask": lambda nn, F, T: nn.MultiheadAttention(8, 2)(
        T.ones(4, 2, 8), T.ones(4, 2, 8), T.ones(4, 2, 8), is_causal=True),
    "key_rank": lambda nn, F, T: nn.MultiheadAttention(8, 2)(
        T.ones(4, 2, 8), T.ones(4, 8), T.ones(4, 2, 8)),
    "unbatched_key_rank": lambda nn, F, T: nn.MultiheadAttention(8, 2)(
        T.ones(4, 8), T.ones(4, 2, 8), T.ones(4, 8)),
    "query_rank": lambda nn, F, T: nn.MultiheadAttention(8, 2)(
        T.ones(8), T.ones(8), T.ones(8)),
    "kpm_rank": lambda nn, F, T: nn.MultiheadAttention(8, 2)(
        T.ones(4, 2, 8), T.ones(4, 2, 8), T.ones(4, 2, 8),
        key_padding_mask=T.ones(2, 4, 1, dtype=T.bool)),
    "attn_mask_rank": lambda nn, F, T: nn.MultiheadAttention(8, 2)(
        T.ones(4, 2, 8), T.ones(4, 2, 8), T.ones(4, 2, 8),
        attn_mask=T.ones(1, 1, 4, 4, dtype=T.bool)),
    "attn_mask_2d_shape": lambda nn, F, T: nn.MultiheadAttention(8, 2)(
        T.ones(4, 2, 8), T.ones(5, 2, 8), T.ones(5, 2, 8),
        attn_mask=T.ones(4, 4, dtype=T.bool)),
    "attn_mask_3d_shape": lambda nn, F, T: nn.MultiheadAttention(8, 2)(
        T.ones(4, 2, 8), T.ones(5, 2, 8), T.ones(5, 2, 8),
        attn_mask=T.ones(2, 4, 5, dtype=T.bool)),
    "unbatched_attn_mask_3d": lambda nn, F, T: nn.MultiheadAttention(8, 2)(
        T.ones(4, 8), T.ones(5, 8), T.ones(5, 8), attn_mask=T.ones(3, 4, 5, dtype=T.bool)),
    "kpm_shape": lambda nn, F, T: nn.MultiheadAttention(8, 2)(
        T.ones(4, 2, 8), T.ones(5, 2, 8), T.ones(5, 2, 8),
        key_padding_mask=T.ones(2, 4, dtype=T.bool)),
    "mask_dtype": lambda nn, F, T: nn.MultiheadAttention(8, 2)(
        T.ones(4, 2, 8), T.ones(4, 2, 8), T.ones(4, 2, 8),
        key_padding_mask=T.ones(2, 4, dtype=T.int64)),
    "embed_check": lambda nn, F, T: nn.MultiheadAttention(8, 2)(
        T.ones(4, 2, 6), T.ones(4, 2, 6), T.ones(4, 2, 6)),
    "kv_shape": lambda nn, F, T: nn.MultiheadAttention(8, 2)(
        T.ones(4, 2, 8), T.ones(5, 2, 8), T.ones(6, 2, 8)),
    "kv_separate_shape": lambda nn, F, T: nn.MultiheadAttention(8, 2, kdim=3, vdim=4)(
        T.ones(4, 2, 8), T.ones(5, 2, 3), T.ones(6, 2, 4)),
}


@pytest.mark.parametrize("name", sorted(MHA_ERRORS))
def test_mha_errors_match_torch(name: str) -> None:
    assert _error(MHA_ERRORS[name], "ember") == _error(MHA_ERRORS[name], "torch")


def test_mha_trains_like_torch() -> None:
    """SGD steps of a self-attention block with a causal mask on both libraries."""
    ours, theirs = _mha_pair({"batch_first": True}, "float32", heads=4, embed=16)
    rng = np.random.default_rng(0)
    x, tx = pair(rng.standard_normal((2, 6, 16)), "float32")
    mask = np.triu(np.ones((6, 6), bool), 1)
    m, tm = pair(mask, "float32")
    for _ in range(3):
        out, _ = ours(x, x, x, attn_mask=m, need_weights=False)
        tout, _ = theirs(tx, tx, tx, attn_mask=tm, need_weights=False)
        assert_close(out, tout, "float32", "output", scale=100.0)
        loss, tloss = out.square().mean(), tout.square().mean()
        ours.zero_grad()
        theirs.zero_grad()
        loss.backward()
        tloss.backward()
        with ea.no_grad():
            for p in ours.parameters():
                p -= 0.5 * p.grad
        with torch.no_grad():
            for p in theirs.parameters():
                p -= 0.5 * p.grad
    for (n, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_close(p, tp, "float32", n, scale=100.0)
