"""Transformer layers against PyTorch 2.13: reprs, parameter names and shapes, state dicts
both ways, forward values and the gradients of the inputs and every parameter in float32
and float64 (post-norm and pre-norm, relu/gelu/callable activations, batch_first, every
mask, causal hints, unbatched inputs), dropout in training and eval, errors, a few training
steps."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import ember_autograd as ea
import ember_nn as nn
import ember_tensor as et
from nn_testing import assert_close, copy_state, np_of, pair, torch_repr


def quiet(fn, *args, **kwargs):
    """A torch call with its warnings silenced (TransformerEncoder warns about its
    nested-tensor fast path)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _activation(spec, lib):
    if spec == "gelu_module":
        return lib.GELU()
    if spec == "tanh_callable":
        return et.tanh if lib is nn else torch.tanh
    return spec


def _kwargs(kw, lib):
    kw = dict(kw)
    if "activation" in kw:
        kw["activation"] = _activation(kw["activation"], lib)
    return kw


D, H, FF = 8, 2, 16

LAYER_CONFIGS = [
    {},
    {"norm_first": True},
    {"activation": "gelu", "batch_first": True},
    {"activation": "gelu_module", "norm_first": True, "layer_norm_eps": 1e-3},
    {"activation": "tanh_callable", "bias": False},
]


def _cid(kw) -> str:
    return ",".join(f"{k}={v}" for k, v in kw.items()) or "default"


def _pair_modules(make_ours, make_theirs, dtype):
    ours = make_ours()
    theirs = quiet(make_theirs)
    if dtype == "float64":
        ours.double()
        theirs.double()
    copy_state(ours, theirs)
    return ours, theirs


def _seq(rng, n, batch, batch_first, dtype, unbatched=False):
    shape = (n, D) if unbatched else ((batch, n, D) if batch_first else (n, batch, D))
    return pair(rng.standard_normal(shape), dtype, requires_grad=True)


def _compare_grads(ours, theirs, out, tout, leaves, dtype, rng):
    assert_close(out, tout, dtype, "output", scale=10.0)
    w = rng.uniform(0.5, 1.5, size=tuple(tout.shape))
    (out * pair(w, dtype)[0]).sum().backward()
    (tout * pair(w, dtype)[1]).sum().backward()
    for i, (e, t) in enumerate(leaves):
        assert_close(e.grad, t.grad, dtype, f"gradient of input {i}", scale=100.0)
    tparams = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        assert_close(p.grad, tparams[name].grad, dtype, f"gradient of {name}", scale=100.0)


def _masks(mask, batch, tgt, src, dtype):
    """(ember, torch) keyword dicts for an encoder-style call (mask/src_key_padding_mask)."""
    ours, theirs = {}, {}
    kpm = np.zeros((batch, src), bool)
    kpm[0, -2:] = True
    kpm[1, 1] = True
    causal = np.triu(np.ones((tgt, src), bool), 1)
    if mask in ("padding", "both", "float_both"):
        m = kpm if mask != "float_both" else np.where(kpm, -np.inf, 0.0)
        ours["kpm"], theirs["kpm"] = pair(m, dtype)
    if mask in ("bool_mask", "both", "float_both", "causal_detected", "causal_hint"):
        m = causal if mask in ("bool_mask", "both") else np.where(causal, -np.inf, 0.0)
        ours["mask"], theirs["mask"] = pair(m, dtype)
    if mask == "causal_hint":
        ours["is_causal"] = theirs["is_causal"] = True
    return ours, theirs


ENCODER_MASKS = ["none", "padding", "bool_mask", "both", "float_both", "causal_detected",
                 "causal_hint"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask", ENCODER_MASKS)
@pytest.mark.parametrize("config", LAYER_CONFIGS, ids=[_cid(c) for c in LAYER_CONFIGS])
def test_encoder_layer_matches_torch(config, mask: str, dtype: str) -> None:
    ours, theirs = _pair_modules(
        lambda: nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, **_kwargs(config, nn)),
        lambda: torch.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0,
                                                 **_kwargs(config, torch.nn)),
        dtype)
    assert repr(ours) == repr(theirs)
    rng = np.random.default_rng(len(mask))
    bf = config.get("batch_first", False)
    x = _seq(rng, 5, 3, bf, dtype)
    mk, tmk = _masks(mask, 3, 5, 5, dtype)
    out = ours(x[0], src_mask=mk.get("mask"), src_key_padding_mask=mk.get("kpm"),
               is_causal=mk.get("is_causal", False))
    tout = theirs(x[1], src_mask=tmk.get("mask"), src_key_padding_mask=tmk.get("kpm"),
                  is_causal=tmk.get("is_causal", False))
    _compare_grads(ours, theirs, out, tout, [x], dtype, rng)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask", ENCODER_MASKS)
@pytest.mark.parametrize("norm", [False, True], ids=["no_norm", "final_norm"])
def test_encoder_matches_torch(norm: bool, mask: str, dtype: str) -> None:
    def make(lib):
        layer = lib.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True,
                                            norm_first=norm)
        return lib.TransformerEncoder(layer, 3, norm=lib.LayerNorm(D) if norm else None)

    ours, theirs = _pair_modules(lambda: make(nn), lambda: make(torch.nn), dtype)
    assert repr(ours) == repr(theirs)
    rng = np.random.default_rng(len(mask) + norm)
    x = _seq(rng, 5, 3, True, dtype)
    mk, tmk = _masks(mask, 3, 5, 5, dtype)
    hint = None if mask != "causal_hint" else True
    out = ours(x[0], mask=mk.get("mask"), src_key_padding_mask=mk.get("kpm"), is_causal=hint)
    tout = theirs(x[1], mask=tmk.get("mask"), src_key_padding_mask=tmk.get("kpm"),
                  is_causal=hint)
    _compare_grads(ours, theirs, out, tout, [x], dtype, rng)


DECODER_MASKS = ["none", "tgt_causal", "tgt_causal_hint", "all", "float_all"]


def _decoder_masks(mask, dtype, batch=3, tgt=4, src=5):
    ours, theirs = {}, {}
    if mask == "none":
        return ours, theirs
    causal = np.triu(np.ones((tgt, tgt), bool), 1)
    ours["tgt_mask"], theirs["tgt_mask"] = pair(np.where(causal, -np.inf, 0.0), dtype)
    if mask == "tgt_causal_hint":
        ours["tgt_is_causal"] = theirs["tgt_is_causal"] = True
    if mask in ("all", "float_all"):
        mem = np.zeros((tgt, src), bool)
        mem[1, 2:] = True
        tpad = np.zeros((batch, tgt), bool)
        tpad[0, -1] = True
        mpad = np.zeros((batch, src), bool)
        mpad[2, -2:] = True
        if mask == "float_all":
            mem, tpad, mpad = (np.where(m, -np.inf, 0.0) for m in (mem, tpad, mpad))
        else:
            ours["tgt_mask"], theirs["tgt_mask"] = pair(causal, dtype)
        for name, m in (("memory_mask", mem), ("tgt_key_padding_mask", tpad),
                        ("memory_key_padding_mask", mpad)):
            ours[name], theirs[name] = pair(m, dtype)
    return ours, theirs


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask", DECODER_MASKS)
@pytest.mark.parametrize("config", LAYER_CONFIGS, ids=[_cid(c) for c in LAYER_CONFIGS])
def test_decoder_layer_matches_torch(config, mask: str, dtype: str) -> None:
    ours, theirs = _pair_modules(
        lambda: nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, **_kwargs(config, nn)),
        lambda: torch.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0,
                                                 **_kwargs(config, torch.nn)),
        dtype)
    assert repr(ours) == repr(theirs)
    rng = np.random.default_rng(len(mask))
    bf = config.get("batch_first", False)
    tgt, mem = _seq(rng, 4, 3, bf, dtype), _seq(rng, 5, 3, bf, dtype)
    mk, tmk = _decoder_masks(mask, dtype)
    out = ours(tgt[0], mem[0], **mk)
    tout = theirs(tgt[1], mem[1], **tmk)
    _compare_grads(ours, theirs, out, tout, [tgt, mem], dtype, rng)


TRANSFORMER_CONFIGS = [
    {},
    {"batch_first": True, "norm_first": True, "activation": "gelu"},
    {"activation": "gelu_module", "bias": False, "layer_norm_eps": 1e-4},
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask", DECODER_MASKS)
@pytest.mark.parametrize("config", TRANSFORMER_CONFIGS,
                         ids=[_cid(c) for c in TRANSFORMER_CONFIGS])
def test_transformer_matches_torch(config, mask: str, dtype: str) -> None:
    ours, theirs = _pair_modules(
        lambda: nn.Transformer(D, H, 2, 2, FF, dropout=0.0, **_kwargs(config, nn)),
        lambda: torch.nn.Transformer(D, H, 2, 2, FF, dropout=0.0,
                                     **_kwargs(config, torch.nn)),
        dtype)
    rng = np.random.default_rng(len(mask))
    bf = config.get("batch_first", False)
    src, tgt = _seq(rng, 5, 3, bf, dtype), _seq(rng, 4, 3, bf, dtype)
    mk, tmk = _decoder_masks(mask, dtype)
    spad = np.zeros((3, 5), bool)
    spad[1, -1] = True
    mk["src_key_padding_mask"], tmk["src_key_padding_mask"] = pair(spad, dtype)
    out = ours(src[0], tgt[0], **mk)
    tout = theirs(src[1], tgt[1], **tmk)
    _compare_grads(ours, theirs, out, tout, [src, tgt], dtype, rng)


@pytest.mark.parametrize("kind", ["encoder_layer", "decoder_layer", "transformer"])
def test_unbatched_matches_torch(kind: str) -> None:
    rng = np.random.default_rng(0)
    if kind == "encoder_layer":
        ours, theirs = _pair_modules(
            lambda: nn.TransformerEncoderLayer(D, H, FF, dropout=0.0),
            lambda: torch.nn.TransformerEncoderLayer(D, H, FF, dropout=0.0), "float64")
        x = _seq(rng, 5, None, False, "float64", unbatched=True)
        kpm = pair(np.array([False, False, True, False, True]), "float64")
        out, tout = ours(x[0], src_key_padding_mask=kpm[0]), theirs(
            x[1], src_key_padding_mask=kpm[1])
        leaves = [x]
    elif kind == "decoder_layer":
        ours, theirs = _pair_modules(
            lambda: nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, norm_first=True),
            lambda: torch.nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, norm_first=True),
            "float64")
        t, m = (_seq(rng, n, None, False, "float64", unbatched=True) for n in (4, 5))
        out, tout = ours(t[0], m[0]), theirs(t[1], m[1])
        leaves = [t, m]
    else:
        ours, theirs = _pair_modules(
            lambda: nn.Transformer(D, H, 1, 1, FF, dropout=0.0),
            lambda: torch.nn.Transformer(D, H, 1, 1, FF, dropout=0.0), "float64")
        s, t = (_seq(rng, n, None, False, "float64", unbatched=True) for n in (5, 4))
        mask = nn.Transformer.generate_square_subsequent_mask(4, dtype=et.float64)
        tmask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
        out, tout = ours(s[0], t[0], tgt_mask=mask), theirs(s[1], t[1], tgt_mask=tmask)
        leaves = [s, t]
    assert tuple(out.shape) == tuple(tout.shape)
    _compare_grads(ours, theirs, out, tout, leaves, "float64", rng)


def test_custom_encoder_and_decoder() -> None:
    def make(lib):
        enc = lib.TransformerEncoder(lib.TransformerEncoderLayer(D, H, FF, dropout=0.0), 1)
        dec = lib.TransformerDecoder(lib.TransformerDecoderLayer(D, H, FF, dropout=0.0), 2,
                                     norm=lib.LayerNorm(D))
        return lib.Transformer(D, H, custom_encoder=enc, custom_decoder=dec, dropout=0.0)

    ours, theirs = _pair_modules(lambda: make(nn), lambda: make(torch.nn), "float64")
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    rng = np.random.default_rng(0)
    s, t = _seq(rng, 5, 2, False, "float64"), _seq(rng, 3, 2, False, "float64")
    _compare_grads(ours, theirs, ours(s[0], t[0]), theirs(s[1], t[1]), [s, t], "float64", rng)


# ----------------------------------------------------------------------------- structure


@pytest.mark.parametrize("config", LAYER_CONFIGS + [{"dropout": 0.3}],
                         ids=[_cid(c) for c in LAYER_CONFIGS + [{"dropout": 0.3}]])
def test_structure_matches_torch(config) -> None:
    for name, args in (("TransformerEncoderLayer", (D, H, FF)),
                       ("TransformerDecoderLayer", (D, H, FF)),
                       ("Transformer", (D, H, 2, 3, FF))):
        ours = getattr(nn, name)(*args, **_kwargs(config, nn))
        theirs = quiet(getattr(torch.nn, name), *args, **_kwargs(config, torch.nn))
        assert repr(ours) == torch_repr(repr(theirs)), name
        assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
            (n, tuple(p.shape)) for n, p in theirs.named_parameters()], name
        assert list(ours.state_dict()) == list(theirs.state_dict())
        result = ours.load_state_dict({k: et.from_numpy(v.detach().numpy().copy())
                                       for k, v in theirs.state_dict().items()})
        assert not result.missing_keys and not result.unexpected_keys
    layer = nn.TransformerEncoderLayer(D, H, **_kwargs(config, nn))
    tlayer = torch.nn.TransformerEncoderLayer(D, H, **_kwargs(config, torch.nn))
    assert layer.activation_relu_or_gelu == tlayer.activation_relu_or_gelu
    assert layer.norm_first == tlayer.norm_first
    encoder = nn.TransformerEncoder(layer, 2)
    assert encoder.layers[0] is not layer and encoder.layers[0] is not encoder.layers[1]
    assert encoder.num_layers == 2


def test_transformer_attributes_and_init() -> None:
    et.manual_seed(0)
    model = nn.Transformer(d_model=32, nhead=4, num_encoder_layers=1, num_decoder_layers=1,
                           dim_feedforward=64, batch_first=True)
    assert (model.d_model, model.nhead, model.batch_first) == (32, 4, True)
    w = np_of(model.encoder.layers[0].linear1.weight)  # xavier_uniform_ on (64, 32)
    bound = np.sqrt(6 / (64 + 32))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    ln = model.encoder.norm
    assert (np_of(ln.weight) == 1).all() and (np_of(ln.bias) == 0).all()


def test_generate_square_subsequent_mask_matches_torch() -> None:
    for sz, dtype, tdtype in ((4, None, None), (1, et.float64, torch.float64)):
        ours = nn.Transformer.generate_square_subsequent_mask(sz, dtype=dtype)
        theirs = torch.nn.Transformer.generate_square_subsequent_mask(sz, dtype=tdtype)
        assert ours.dtype == (dtype or et.float32)
        np.testing.assert_array_equal(np_of(ours), theirs.numpy())


def test_causal_mask_is_detected() -> None:
    """TransformerEncoder passes is_causal=True down when the mask is the causal mask (the
    result is the same either way)."""
    layer = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0)
    seen = []
    encoder = nn.TransformerEncoder(layer, 1)
    encoder.layers[0].register_forward_pre_hook(
        lambda m, args, kwargs: seen.append(kwargs["is_causal"]), with_kwargs=True)
    x = et.randn(5, 2, D)
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    a = encoder(x, mask=mask)
    b = encoder(x, mask=mask, is_causal=False)
    c = encoder(x, mask=et.zeros(5, 5))
    assert seen == [True, False, False]
    np.testing.assert_allclose(np_of(a), np_of(b), rtol=1e-5, atol=1e-6)
    assert np.abs(np_of(a) - np_of(c)).max() > 1e-4


# ----------------------------------------------------------------------------- dropout


def test_dropout_train_and_eval() -> None:
    et.manual_seed(0)
    model = nn.Transformer(D, H, 1, 1, FF, dropout=0.5)
    src, tgt = et.randn(6, 2, D), et.randn(5, 2, D)
    model.eval()
    a, b = model(src, tgt), model(src, tgt)
    np.testing.assert_array_equal(np_of(a), np_of(b))
    no_dropout = nn.Transformer(D, H, 1, 1, FF, dropout=0.0)
    no_dropout.load_state_dict(model.state_dict())
    np.testing.assert_allclose(np_of(no_dropout(src, tgt)), np_of(a), rtol=1e-5, atol=1e-6)
    model.train()
    c, d = model(src, tgt), model(src, tgt)
    assert np.abs(np_of(c) - np_of(d)).max() > 1e-3
    assert np.abs(np_of(c) - np_of(a)).max() > 1e-3


def test_dropout_statistics_in_the_feed_forward_block() -> None:
    et.manual_seed(1)
    layer = nn.TransformerEncoderLayer(16, 2, 512, dropout=0.25, activation="gelu")
    layer.train()
    captured = {}
    layer.dropout.register_forward_hook(lambda m, args, out: captured.update(x=args[0], y=out))
    layer(et.randn(20, 8, 16))
    x, y = np_of(captured["x"]), np_of(captured["y"])
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_allclose(y[kept], x[kept] / 0.75, rtol=1e-5)


# ----------------------------------------------------------------------------- errors


def _error(call, lib):
    mod = (nn, et) if lib == "ember" else (torch.nn, torch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call(*mod)
        except Exception as exc:  # noqa: BLE001 - compared below
            return type(exc).__name__, torch_repr(str(exc))
    return "no error", ""


ERRORS = {
    "batch": lambda nn, T: nn.Transformer(D, H, 1, 1, FF)(T.ones(5, 2, D), T.ones(4, 3, D)),
    "batch_first": lambda nn, T: nn.Transformer(D, H, 1, 1, FF, batch_first=True)(
        T.ones(2, 5, D), T.ones(3, 4, D)),
    "features": lambda nn, T: nn.Transformer(D, H, 1, 1, FF)(T.ones(5, 2, D),
                                                             T.ones(4, 2, D + 1)),
    "activation": lambda nn, T: nn.TransformerEncoderLayer(D, H, activation="swish"),
    "decoder_activation": lambda nn, T: nn.TransformerDecoderLayer(D, H, activation="tanh"),
    "heads": lambda nn, T: nn.TransformerEncoderLayer(D, 3),
    "causal_hint_without_mask": lambda nn, T: nn.TransformerEncoderLayer(D, H, FF)(
        T.ones(5, 2, D), is_causal=True),
    "mask_shape": lambda nn, T: nn.TransformerEncoderLayer(D, H, FF)(
        T.ones(5, 2, D), src_mask=T.ones(4, 4, dtype=T.bool)),
    "padding_shape": lambda nn, T: nn.TransformerEncoderLayer(D, H, FF)(
        T.ones(5, 2, D), src_key_padding_mask=T.ones(2, 4, dtype=T.bool)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    assert _error(ERRORS[name], "ember") == _error(ERRORS[name], "torch")


def test_mismatched_mask_types_warn_like_torch() -> None:
    layer = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0)
    x = et.randn(5, 2, D)
    kpm = et.zeros(2, 5, dtype=et.bool)
    with pytest.warns(UserWarning, match="Support for mismatched src_key_padding_mask and "
                                         "src_mask is deprecated"):
        layer(x, src_mask=et.zeros(5, 5), src_key_padding_mask=kpm)


# ----------------------------------------------------------------------------- training


def test_gradcheck_encoder_layer() -> None:
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, norm_first=True).double()
    x = et.from_numpy(np.random.default_rng(0).standard_normal((3, 2, 4))).requires_grad_()
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=et.float64)
    assert ea.gradcheck(lambda t: layer(t, src_mask=mask), (x,))


def test_small_transformer_trains_like_torch() -> None:
    ours, theirs = _pair_modules(
        lambda: nn.Transformer(D, H, 1, 1, FF, dropout=0.0, batch_first=True),
        lambda: torch.nn.Transformer(D, H, 1, 1, FF, dropout=0.0, batch_first=True),
        "float32")
    rng = np.random.default_rng(0)
    src, tsrc = pair(rng.standard_normal((3, 6, D)), "float32")
    tgt, ttgt = pair(rng.standard_normal((3, 5, D)), "float32")
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(5)
    for _ in range(3):
        out = ours(src, tgt, tgt_mask=mask)
        tout = theirs(tsrc, ttgt, tgt_mask=tmask)
        assert_close(out, tout, "float32", "output", scale=100.0)
        loss, tloss = (out - tgt).square().mean(), (tout - ttgt).square().mean()
        ours.zero_grad()
        theirs.zero_grad()
        loss.backward()
        tloss.backward()
        with ea.no_grad():
            for p in ours.parameters():
                p -= 0.1 * p.grad
        with torch.no_grad():
            for p in theirs.parameters():
                p -= 0.1 * p.grad
    for (n, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_close(p, tp, "float32", n, scale=300.0)
