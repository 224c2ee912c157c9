"""PyTorch's legacy tensor surface (ember_tensor/_legacy.py) against torch: the Tensor(...)
constructor, the typed classes (FloatTensor & co, isinstance), Python subclasses
(aliasing, as_subclass, _make_subclass, pickling), device flags and device pickling."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

import ember_tensor as et

CONSTRUCTIONS = [
    ("Tensor", ()), ("Tensor", (2, 3)), ("Tensor", ([1, 2],)), ("Tensor", ((2, 3),)),
    ("Tensor", ("np",)), ("Tensor", ("size23",)), ("FloatTensor", ([1, 2],)),
    ("LongTensor", ([1.5, -2.5],)), ("LongTensor", (3,)), ("ByteTensor", ([1, 2],)),
    ("BoolTensor", ([0, 1],)), ("DoubleTensor", (2,)), ("IntTensor", ([[1], [2]],)),
    ("HalfTensor", ([0.5],)), ("CharTensor", ([-1],)), ("ShortTensor", ([7],)),
    ("BFloat16Tensor", ([1.5],)),
]


def _args(lib, args):
    out = []
    for a in args:
        if a == "np":
            a = np.arange(3.0)
        elif a == "size23":
            a = lib.Size([2, 3])
        out.append(a)
    return out


@pytest.mark.parametrize("name,args", CONSTRUCTIONS, ids=[f"{n}{a}" for n, a in CONSTRUCTIONS])
def test_constructor_matches_torch(name, args):
    got = getattr(et, name)(*_args(et, args))
    want = getattr(torch, name)(*_args(torch, args))
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    assert tuple(got.shape) == tuple(want.shape)
    if not args or isinstance(args[0], (list, tuple)) and not all(
            isinstance(a, int) for a in args):
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("bad", [3.5, "ab", None])
def test_constructor_errors(bad):
    with pytest.raises(TypeError) as got:
        et.Tensor(bad)
    with pytest.raises(TypeError):
        torch.Tensor(bad)
    assert "Tensor" in str(got.value) or "sequence" in str(got.value)


def test_constructor_of_a_tensor_aliases_it():
    x = et.arange(3)
    y = et.Tensor(x)
    assert y.dtype == et.int64
    y[0] = 7
    assert x.tolist() == [7, 1, 2]
    assert et.Tensor(size=(2, 2)).shape == (2, 2)
    with pytest.raises(TypeError, match="expected"):
        et.FloatTensor(x)


@pytest.mark.parametrize("name", ["FloatTensor", "LongTensor", "BoolTensor", "DoubleTensor"])
def test_isinstance_checks_dtype_and_device(name):
    for dtype in ("float32", "int64", "bool", "float64"):
        e = et.zeros(2, dtype=getattr(et, dtype))
        t = torch.zeros(2, dtype=getattr(torch, dtype))
        assert isinstance(e, getattr(et, name)) == isinstance(t, getattr(torch, name))
        assert not isinstance(e, getattr(et.cuda, name))
    assert repr(et.FloatTensor) == "<class 'ember.FloatTensor'>"
    assert et.LongTensor.dtype == et.int64


class Tagged(et.Tensor):
    def doubled(self):
        return self * 2


def test_subclass_instances_alias_and_survive_copies():
    x = et.ones(3)
    m = Tagged(x)
    assert type(m) is Tagged and isinstance(m, et.Tensor)
    m[0] = 5
    assert x.tolist() == [5.0, 1.0, 1.0]
    assert m.doubled().tolist() == [10.0, 2.0, 2.0]
    m.tag = "kept"
    for c in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert type(c) is Tagged and c.tag == "kept" and c.tolist() == m.tolist()
        c[1] = 9
        assert x.tolist() == [5.0, 1.0, 1.0]
    assert type(x.as_subclass(Tagged)) is Tagged
    assert type(et.Tensor._make_subclass(Tagged, x)) is Tagged
    with pytest.raises(TypeError):
        et.Tensor._make_subclass(int, et.ones(1))


def test_device_flags_and_pickling():
    x = et.ones(1)
    for flag in ("is_xpu", "is_mps", "is_meta", "is_sparse", "is_quantized", "is_nested"):
        assert getattr(x, flag) is getattr(torch.ones(1), flag) is False
    for spec in ("cpu", "cuda:1", "cuda"):
        d = et.device(spec)
        assert pickle.loads(pickle.dumps(d)) == d


def test_cuda_amp_is_the_deprecated_alias():
    with pytest.warns(FutureWarning, match="torch.amp.autocast\\('cuda'"):
        ctx = et.cuda.amp.autocast(enabled=False)
    assert isinstance(ctx, et.amp.autocast)
    with pytest.warns(FutureWarning, match="GradScaler"):
        scaler = et.cuda.amp.GradScaler(enabled=False)
    assert isinstance(scaler, et.amp.GradScaler) and not scaler.is_enabled()
