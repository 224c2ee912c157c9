"""Devices in ember_nn: every tensor that functional code and forward passes make is made on
its input's device, and ``Module.to``/``cuda``/``cpu`` move parameters, gradients and
buffers.

Without a GPU, the plumbing is checked on the CPU: the core's creation functions (and
``Tensor.to``) are wrapped to record the ``device`` they are given, and every creation in
the code under test must name the input's device. The tests marked ``cuda`` run the same
layers on a GPU where there is one.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch

import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as et
from ember_nn import init
from ember_nn.utils import clip_grad_norm_
from ember_nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

CREATIONS = ("empty", "zeros", "ones", "full", "arange", "tensor", "eye")
CPU = et.device("cpu")


@contextlib.contextmanager
def recorded(monkeypatch):
    """Records ``(function, device)`` for each call of the core's creation functions, and
    ``("to", device)`` for each ``Tensor.to`` of a tensor made by ``from_numpy``."""
    calls: list[tuple[str, object]] = []
    with monkeypatch.context() as m:
        for name in CREATIONS:
            real = getattr(et, name)

            def fake(*args, _real=real, _name=name, **kwargs):
                calls.append((_name, kwargs.get("device")))
                return _real(*args, **kwargs)

            m.setattr(et, name, fake)
        from_numpy, to = et.from_numpy, et.Tensor.to
        made: dict[int, et.Tensor] = {}

        def fake_from_numpy(array):
            t = from_numpy(array)
            made[id(t)] = t
            calls.append(("from_numpy", None))
            return t

        def fake_to(self, *args, **kwargs):
            if made.get(id(self)) is self:
                device = kwargs.get("device", args[0] if args else None)
                calls.append(("to", device if not isinstance(device, et.dtype) else None))
            return to(self, *args, **kwargs)

        m.setattr(et, "from_numpy", fake_from_numpy)
        m.setattr(et.Tensor, "to", fake_to)
        yield calls


def check_devices(calls, device=CPU, made_something: bool = True) -> None:
    """Every creation named ``device``; each ``from_numpy`` tensor was moved there."""
    if made_something:
        assert calls, "the code under test made no tensor: the check checked nothing"
    for name, got in calls:
        if name == "from_numpy":
            continue
        assert got is not None, f"et.{name} was called without device="
        assert et.device(got) == device, f"et.{name} made a tensor on {got}, not {device}"
    assert sum(n == "from_numpy" for n, _ in calls) == sum(n == "to" for n, _ in calls), (
        "a tensor made from NumPy was not moved to the input's device"
    )


def randn(*shape, dtype=et.float32):
    return et.from_numpy(np.random.default_rng(0).standard_normal(shape)).to(dtype)


# ----------------------------------------------------------------------------- functional


def test_scaled_dot_product_attention_causal_mask(monkeypatch):
    q, k, v = randn(2, 3, 4, 8), randn(2, 3, 5, 8), randn(2, 3, 5, 8)
    with recorded(monkeypatch) as calls:
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    check_devices(calls)
    want = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(t.numpy()) for t in (q, k, v)), is_causal=True
    )
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_multihead_attention_masks_and_zero_attention(monkeypatch):
    mha = nn.MultiheadAttention(8, 2, add_zero_attn=True, batch_first=True)
    x = randn(2, 5, 8)
    attn_mask = et.ones(5, 5, dtype=et.bool).triu(1)
    padding = et.tensor([[False] * 4 + [True], [False] * 5])
    with recorded(monkeypatch) as calls:
        out, _ = mha(x, x, x, attn_mask=attn_mask, key_padding_mask=padding)
    check_devices(calls)
    assert tuple(out.shape) == (2, 5, 8)


def test_transformer_detects_a_causal_mask_on_the_input_device(monkeypatch):
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
    encoder = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
    x = randn(5, 2, 8)
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    with recorded(monkeypatch) as calls:
        encoder(x, mask=mask)
    check_devices(calls)


@pytest.mark.parametrize("num_classes", [-1, 4])
def test_one_hot(monkeypatch, num_classes):
    idx = et.tensor([0, 2, 1])
    with recorded(monkeypatch) as calls:
        out = F.one_hot(idx, num_classes)
    check_devices(calls)
    assert (
        out.tolist() == torch.nn.functional.one_hot(torch.tensor([0, 2, 1]), num_classes).tolist()
    )
    empty = et.zeros(0, dtype=et.int64)
    with recorded(monkeypatch) as calls:
        assert tuple(F.one_hot(empty, 3).shape) == (0, 3)
    check_devices(calls)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad(monkeypatch, mode):
    x = randn(1, 2, 4, 5)
    with recorded(monkeypatch) as calls:
        out = F.pad(x, (1, 2, 2, 1), mode=mode)
    check_devices(calls)
    want = torch.nn.functional.pad(torch.from_numpy(x.numpy()), (1, 2, 2, 1), mode=mode)
    np.testing.assert_array_equal(out.numpy(), want.numpy())


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic", "area"])
def test_interpolate_moves_its_tables_to_the_input_device(monkeypatch, mode):
    x = randn(1, 2, 4, 5)
    with recorded(monkeypatch) as calls:
        out = F.interpolate(x, size=(7, 3), mode=mode)
    check_devices(calls)
    want = torch.nn.functional.interpolate(torch.from_numpy(x.numpy()), size=(7, 3), mode=mode)
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


def test_embedding_max_norm(monkeypatch):
    weight, idx = randn(6, 3) * 4, et.tensor([[0, 2], [2, 5]])
    with recorded(monkeypatch) as calls:
        F.embedding(idx, weight, max_norm=1.0)
    check_devices(calls)
    norms = weight.norm(2, 1).tolist()
    assert all(n <= 1.0 + 1e-5 for i, n in enumerate(norms) if i in (0, 2, 5))


# ----------------------------------------------------------------------------- utils


def test_pad_sequence_and_packing(monkeypatch):
    seqs = [randn(3, 2), randn(5, 2), randn(1, 2)]
    with recorded(monkeypatch) as calls:
        padded = pad_sequence(seqs, padding_value=-1.0)
        packed = pack_padded_sequence(padded, [3, 5, 1], enforce_sorted=False)
    check_devices(calls)
    assert packed.batch_sizes.device == CPU  # PyTorch keeps batch_sizes on the CPU
    assert packed.sorted_indices.device == padded.device
    with recorded(monkeypatch) as calls:
        unpacked, lengths = pad_packed_sequence(packed, padding_value=-1.0)
    check_devices(calls)
    assert lengths.tolist() == [3, 5, 1] and lengths.device == CPU
    np.testing.assert_array_equal(unpacked.numpy(), padded.numpy())


def test_packed_sequence_to_moves_the_index_tensors(monkeypatch):
    packed = pack_padded_sequence(randn(4, 3, 2), [2, 4, 1], enforce_sorted=False)
    moved = packed.to(et.float64)
    assert moved.data.dtype == et.float64 and moved.batch_sizes is packed.batch_sizes
    assert moved.sorted_indices.tolist() == packed.sorted_indices.tolist()
    assert packed.to("cpu") is packed and packed.cpu() is packed
    assert not packed.is_pinned()


def test_clip_grad_norm_keeps_the_norms_on_the_gradients_device(monkeypatch):
    params = [nn.Parameter(randn(3, 2)), nn.Parameter(randn(4))]
    for p in params:
        p.grad = randn(*p.shape) * 3
    twins = [torch.from_numpy(p.detach().numpy().copy()).requires_grad_() for p in params]
    for t, p in zip(twins, params):
        t.grad = torch.from_numpy(p.grad.numpy().copy())
    moves = []
    to = et.Tensor.to

    def fake_to(self, *args, **kwargs):
        moves.append(kwargs.get("device", args[0] if args else None))
        return to(self, *args, **kwargs)

    monkeypatch.setattr(et.Tensor, "to", fake_to)
    total = clip_grad_norm_(params, 1.0)
    monkeypatch.undo()
    # the norms go to the first gradient's device, the coefficient to each gradient's
    assert moves and all(isinstance(d, et.device) and d == CPU for d in moves)
    want = torch.nn.utils.clip_grad_norm_(twins, 1.0)
    assert total.item() == pytest.approx(want.item(), rel=1e-6)
    for p, t in zip(params, twins):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------- init


@pytest.mark.parametrize(
    "fill",
    [
        init.eye_,
        init.orthogonal_,
        lambda t: init.trunc_normal_(t, 0.0, 1.0, 2.0, 3.0),  # the rejection branch
        lambda t: init.trunc_normal_(t, 0.0, 1.0, -2.0, 2.0),
    ],
    ids=["eye", "orthogonal", "trunc_normal_tail", "trunc_normal"],
)
def test_init_temporaries_are_made_on_the_parameter_device(monkeypatch, fill):
    p = nn.Parameter(et.empty(4, 6))
    with recorded(monkeypatch) as calls:
        fill(p)
    check_devices(calls, made_something=False)
    assert bool(et.isfinite(p).all())


# ----------------------------------------------------------------------------- modules


def test_full_backward_hook_zeros_for_inputs_without_grad(monkeypatch):
    bil = nn.Bilinear(3, 2, 4)
    seen = []
    bil.register_full_backward_hook(lambda m, gi, go: seen.append(gi))
    x1, x2 = randn(5, 3).requires_grad_(), randn(5, 2)  # x2's grad_input: zeros
    with recorded(monkeypatch) as calls:
        bil(x1, x2).sum().backward()
    check_devices(calls)
    ((g1, g2),) = seen
    assert tuple(g1.shape) == (5, 3) and g2.tolist() == [[0.0, 0.0]] * 5


def _model():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    model(randn(5, 3)).sum().backward()
    return model


def test_to_moves_parameters_gradients_and_buffers(monkeypatch):
    model = _model()
    params = list(model.parameters())
    grads = [p.grad for p in params]
    moved = []
    to = et.Tensor.to

    def fake_to(self, *args, **kwargs):
        moved.append((id(self), kwargs.get("device")))
        return to(self, *args, **kwargs)

    monkeypatch.setattr(et.Tensor, "to", fake_to)
    assert model.to("cpu") is model
    monkeypatch.undo()
    ids = {i for i, _ in moved}
    assert all(id(p) in ids for p in params) and all(id(g) in ids for g in grads)
    assert all(id(b) in ids for b in model.buffers())
    assert all(d == CPU for _, d in moved)
    assert list(model.parameters()) == params  # same objects, as in PyTorch


def test_apply_swaps_storage_but_keeps_parameters_and_gradients():
    """What a device move does to a module, with a same-dtype copy standing in for it."""
    model = _model()
    params = list(model.parameters())
    grads = [p.grad for p in params]
    before = [p.detach().numpy().copy() for p in params]
    buffers = list(model.buffers())
    model._apply(lambda t: t.clone())
    assert list(model.parameters()) == params
    assert all(p.grad is g for p, g in zip(params, grads))
    assert all(np.array_equal(p.detach().numpy(), b) for p, b in zip(params, before))
    assert all(a is not b for a, b in zip(model.buffers(), buffers))


def test_cuda_arguments(monkeypatch):
    model = nn.Linear(2, 2)
    targets = []
    monkeypatch.setattr(type(model), "_apply", lambda self, fn: targets.append(fn) or self)
    for device in (None, 1, "cuda:1", et.device("cuda:1")):
        assert model.cuda(device) is model
    with pytest.raises(RuntimeError, match="Invalid device, must be cuda device"):
        model.cuda("cpu")


@pytest.mark.skipif(et.cuda.is_available(), reason="checks the CPU-only error")
def test_cuda_without_a_gpu_is_the_core_error():
    model = nn.Linear(2, 2)
    weight = model.weight
    with pytest.raises(RuntimeError, match="cuda"):
        model.cuda()
    assert model.weight is weight and model.weight.device == CPU


# ----------------------------------------------------------------------------- on a GPU

cuda = pytest.mark.skipif(not et.cuda.is_available(), reason="needs CUDA")


@cuda
def test_mixed_devices_are_the_core_error():
    model = nn.Linear(3, 2).cuda()
    with pytest.raises(RuntimeError, match="expected all tensors to be on the same device"):
        model(randn(4, 3))


@cuda
@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda: nn.Linear(3, 2), (4, 3)),
        (lambda: nn.Conv2d(2, 3, 3, padding=1), (2, 2, 5, 5)),
        (lambda: nn.Sequential(nn.BatchNorm1d(3), nn.ReLU()), (4, 3)),
        (lambda: nn.LSTM(3, 4, batch_first=True), (2, 5, 3)),
        (lambda: nn.MultiheadAttention(4, 2, batch_first=True), (2, 5, 4)),
    ],
)
def test_layers_on_cuda_match_the_cpu(make, shape):
    cpu_model = make()
    gpu_model = make()
    gpu_model.load_state_dict(cpu_model.state_dict())
    gpu_model.cuda()
    x = randn(*shape)
    xg = x.cuda()
    args = (x, x, x) if isinstance(cpu_model, nn.MultiheadAttention) else (x,)
    gargs = (xg, xg, xg) if len(args) == 3 else (xg,)
    out, gout = cpu_model(*args), gpu_model(*gargs)
    out, gout = (out[0], gout[0]) if isinstance(out, tuple) else (out, gout)
    assert gout.is_cuda
    np.testing.assert_allclose(gout.cpu().detach().numpy(), out.detach().numpy(), 1e-4, 1e-5)
    out.sum().backward()
    gout.sum().backward()
    for p, gp in zip(cpu_model.parameters(), gpu_model.parameters()):
        assert gp.grad.is_cuda
        np.testing.assert_allclose(gp.grad.cpu().numpy(), p.grad.numpy(), 1e-4, 1e-5)
    gpu_model.cpu()
    assert all(not p.is_cuda and not p.grad.is_cuda for p in gpu_model.parameters())
