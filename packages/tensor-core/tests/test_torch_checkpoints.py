"""ember.load of torch.save files (PyTorch's zip format), without running code the file
names: tensors of every dtype with their views and sharing, parameters, containers, dtypes,
devices, Size; other classes refused unless allowed or trusted; map_location callables."""

from __future__ import annotations

import collections
import io
import pickle

import numpy as np
import pytest
import torch

import ember_tensor as et
from ember_tensor import serialization


def _saved(obj) -> io.BytesIO:
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return buf


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64",
                                   "int32", "int16", "int8", "uint8", "bool", "complex64"])
def test_tensors_of_every_dtype(dtype):
    t = (torch.arange(-3, 9).reshape(3, 4) % 5).to(getattr(torch, dtype))
    got = et.load(_saved({"t": t, "col": t[:, 1]}))
    assert str(got["t"].dtype) == f"ember.{dtype}"
    np.testing.assert_array_equal(got["t"].to(et.float64 if dtype != "complex64" else
                                              et.complex128).numpy(),
                                  t.to(torch.float64 if dtype != "complex64" else
                                       torch.complex128).numpy())
    assert got["col"].tolist() == t[:, 1].tolist() or dtype in ("float16", "bfloat16")


def test_state_dicts_views_and_plain_values():
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    x = torch.arange(12.0).reshape(3, 4)
    state = {"model": model.state_dict(), "epoch": 7, "lr": 0.1, "names": ["a", "b"],
             "pair": (1, 2.5), "base": x, "view": x[:, 1],
             "dtype": torch.float16, "device": torch.device("cpu"), "size": torch.Size([3]),
             "tags": {"x"}}
    got = et.load(_saved(state))
    sd = got["model"]
    assert isinstance(sd, collections.OrderedDict) and list(sd) == list(model.state_dict())
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(sd[k].numpy(), v.numpy())
    assert (got["epoch"], got["lr"], got["names"], got["pair"]) == (7, 0.1, ["a", "b"], (1, 2.5))
    assert got["dtype"] == et.float16 and got["device"] == et.device("cpu")
    assert got["size"] == et.Size([3]) and got["tags"] == {"x"}
    got["base"][0, 1] = 100.0  # the view shares its storage, as it did in PyTorch
    assert got["view"].tolist() == [100.0, 5.0, 9.0]


def test_classes_need_allowing_or_trust():
    data = _saved(torch.nn.ReLU()).getvalue()
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.activation.ReLU"):
        et.load(io.BytesIO(data))
    trusted = et.load(io.BytesIO(data), weights_only=False)  # PyTorch's class, imported
    assert type(trusted).__name__ == "ReLU"
    ns = _saved({"args": __import__("argparse").Namespace(a=1)}).getvalue()
    with pytest.raises(pickle.UnpicklingError, match="add_safe_globals"):
        et.load(io.BytesIO(ns))
    import argparse

    with serialization.safe_globals([argparse.Namespace]):
        assert et.load(io.BytesIO(ns))["args"].a == 1


def test_paths_and_map_location(tmp_path):
    path = tmp_path / "ckpt.pt"
    torch.save({"w": torch.ones(2)}, path)
    assert et.load(path)["w"].tolist() == [1.0, 1.0]
    assert et.load(str(path), map_location=lambda t, loc: t * 3)["w"].tolist() == [3.0, 3.0]
    assert et.load(path, map_location="cpu", mmap=True)["w"].tolist() == [1.0, 1.0]


def test_a_broken_archive_is_a_clear_error():
    data = bytearray(_saved({"w": torch.ones(2)}).getvalue())
    with pytest.raises((pickle.UnpicklingError, Exception)) as info:
        et.load(io.BytesIO(bytes(data[: len(data) // 2])))
    assert "ember_tensor.load" in str(info.value) or "zip" in str(info.value).lower()
