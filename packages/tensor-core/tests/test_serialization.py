"""Checkpoints: ember_tensor.save / load (safetensors files plus JSON metadata).

Round trips of every dtype and shape, non-contiguous and shared tensors, nested structures
(a torch-like optimizer state dict), interop with the ``safetensors`` library both ways,
atomic saving, file objects, every kind of corrupt file, and files crafted to run code.
"""

from __future__ import annotations

import builtins
import collections
import ctypes
import io
import json
import math
import os
import pickle
import struct
import subprocess
import sys

import numpy as np
import pytest

import ember_tensor as et
from conftest import ALL_DTYPES, rand_array, tensor, to_np
from ember_tensor import serialization
from ember_tensor.serialization import CheckpointError

pytestmark = pytest.mark.usefixtures("ember_only")

SHAPES = [(), (1,), (5,), (0,), (3, 0, 2), (2, 3), (2, 3, 4)]


def raw(t) -> bytes:
    """The bytes of a tensor's values (bfloat16 included), in row-major order."""
    c = t.detach().contiguous()
    n = c.numel() * c.element_size()
    return ctypes.string_at(c.data_ptr(), n) if n else b""


def roundtrip(obj, **load_kw):
    buf = io.BytesIO()
    et.save(obj, buf)
    buf.seek(0)
    return et.load(buf, **load_kw)


def header_of(data: bytes) -> dict:
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n])


def ember_meta(data: bytes) -> dict:
    return json.loads(header_of(data)["__metadata__"]["ember"])


def saved_bytes(obj) -> bytes:
    buf = io.BytesIO()
    et.save(obj, buf)
    return buf.getvalue()


def same_storage(a, b) -> bool:
    return a._storage_data_ptr() == b._storage_data_ptr()


def craft(header, data: bytes = b"", *, raw_header: bytes | None = None) -> bytes:
    """A file with this header (a dict, dumped as JSON, or raw bytes) and data."""
    h = raw_header if raw_header is not None else json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + data


def ember_file(description: dict, entries: dict[str, tuple[str, list, bytes]]) -> bytes:
    """A file with the given Ember description and entries {name: (dtype, shape, bytes)}."""
    header = {"__metadata__": {"ember": json.dumps(description)}}
    data, pos = b"", 0
    for name, (st, shape, b) in entries.items():
        header[name] = {"dtype": st, "shape": shape, "data_offsets": [pos, pos + len(b)]}
        data += b
        pos += len(b)
    return craft(header, data)


def load_bytes(data: bytes, tmp_path=None):
    """Loads data from a BytesIO and, given tmp_path, from a file; both must agree."""
    out = et.load(io.BytesIO(data))
    if tmp_path is not None:
        p = tmp_path / "crafted.safetensors"
        p.write_bytes(data)
        out = et.load(p)
    return out


# ---------------------------------------------------------------------------------------------
# round trips


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_roundtrip_every_dtype_and_shape(rng, dtype, shape):
    t = tensor(et, rand_array(rng, shape, dtype), dtype)
    back = roundtrip(t)
    assert back.dtype == t.dtype and tuple(back.shape) == shape
    assert raw(back) == raw(t)
    assert back.is_contiguous()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_special_floats_are_bit_exact(dtype):
    t = et.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, 1e-30, 3.5]).to(getattr(et, dtype))
    back = roundtrip({"t": t})["t"]
    assert raw(back) == raw(t)


def test_roundtrip_through_a_path(tmp_path, rng):
    sd = {f"layer{i}.weight": tensor(et, rand_array(rng, (64, 33), "float32")) for i in range(5)}
    path = tmp_path / "model.safetensors"
    et.save(sd, path)
    back = et.load(path)
    assert list(back) == list(sd)
    for k in sd:
        assert raw(back[k]) == raw(sd[k])
    et.save(sd, str(path))  # str paths too, over an existing file
    assert list(et.load(str(path))) == list(sd)


def test_large_tensor_roundtrip(tmp_path, rng):
    big = tensor(et, rand_array(rng, (1 << 21,), "float32"))  # 8 MiB
    et.save({"big": big}, tmp_path / "big.st")
    assert raw(et.load(tmp_path / "big.st")["big"]) == raw(big)


@pytest.mark.parametrize("layout", ["transposed", "stepped"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64", "bool"])
def test_noncontiguous_saved_as_values(rng, dtype, layout):
    a = rand_array(rng, (4, 6), dtype)
    t = tensor(et, a, dtype, layout=layout)
    assert not t.is_contiguous()
    data = saved_bytes({"t": t})
    back = et.load(io.BytesIO(data))["t"]
    assert back.is_contiguous() and tuple(back.shape) == (4, 6)
    assert raw(back) == raw(t)
    begin, end = header_of(data)["t"]["data_offsets"]
    assert end - begin == t.numel() * t.element_size()  # values only, not the whole storage


def test_expanded_tensor_saved_as_values():
    t = et.arange(3).expand(4, 3)
    back = roundtrip(t)
    assert back.stride() == (3, 1)
    assert back.tolist() == t.tolist()


def test_a_slice_saves_only_its_values():
    big = et.zeros(1_000_000)
    small = big[10:20]
    data = saved_bytes({"s": small})
    assert len(data) < 2000
    assert roundtrip({"s": small})["s"].tolist() == [0.0] * 10


def test_loaded_tensors_own_their_memory():
    sd = {"a": et.ones(3), "b": et.zeros(3)}
    back = roundtrip(sd)
    assert not same_storage(back["a"], back["b"])
    back["a"].add_(1)
    assert back["b"].tolist() == [0.0, 0.0, 0.0]
    assert back["a"].tolist() == [2.0, 2.0, 2.0]


@pytest.fixture
def autograd_hook():
    """An autograd hook, so that tensors can require grad: the provider's when one is
    installed, else a no-op one for the test's duration (the core needs no provider)."""
    old = et._get_autograd_hook()
    if old is None:
        et._set_autograd_hook(lambda *args: None)
    yield
    if old is None:
        et._set_autograd_hook(None)


def test_requires_grad_roundtrips(autograd_hook):
    w = et.ones(2, 2).requires_grad_()
    back = roundtrip({"w": w, "d": w.detach(), "v": w.t()})
    assert back["w"].requires_grad and back["w"].is_leaf
    assert not back["d"].requires_grad  # shares w's storage, but did not require grad
    assert back["v"].requires_grad and back["v"].is_leaf  # as torch.load: leaves over storage
    assert same_storage(back["v"], back["w"])


def test_requires_grad_without_an_autograd_provider(autograd_hook, tmp_path):
    path = tmp_path / "grad.st"
    et.save({"w": et.ones(2).requires_grad_()}, path)
    code = ("import ember_tensor as et, sys\n"
            "try:\n"
            "    et.load(sys.argv[1])\n"
            "except et.serialization.CheckpointError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                         text=True, check=True).stdout
    assert "saved with requires_grad=True" in out and "autograd provider" in out


# ---------------------------------------------------------------------------------------------
# shared storage


def test_same_tensor_twice_is_stored_once_and_comes_back_as_one_object():
    w = et.randn(100, 10)
    data = saved_bytes({"a": w, "b": w, "c": [w]})
    assert len(data) < 100 * 10 * 4 + 1000
    back = et.load(io.BytesIO(data))
    assert back["a"] is back["b"] is back["c"][0]
    assert raw(back["a"]) == raw(w)


def test_tied_weights_share_storage_after_load():
    # what a state_dict holds for tied parameters: two detached tensors over one storage
    w = et.randn(50, 8)
    sd = collections.OrderedDict([("embed.weight", w.detach()), ("head.weight", w.detach())])
    data = saved_bytes(sd)
    header = header_of(data)
    assert set(header) == {"__metadata__", "embed.weight"}  # stored once
    back = et.load(io.BytesIO(data))
    e, h = back["embed.weight"], back["head.weight"]
    assert e is not h and same_storage(e, h)
    e[0, 0] = 123.0
    assert h[0, 0].item() == 123.0


def test_views_of_one_another_come_back_as_views():
    base = et.arange(24, dtype=et.float32).reshape(4, 6)
    views = {"base": base, "t": base.t(), "row": base[2], "col": base[:, 1], "flat": base.view(-1),
             "step": base[::2, 1::3], "exp": base[0].expand(3, 6)}
    data = saved_bytes(views)
    assert set(header_of(data)) == {"__metadata__", "base"}
    back = et.load(io.BytesIO(data))
    for k, v in views.items():
        assert tuple(back[k].shape) == tuple(v.shape) and back[k].stride() == v.stride(), k
        assert back[k].tolist() == v.tolist(), k
        assert same_storage(back[k], back["base"]), k
    back["base"][2, 1] = -7.0
    assert back["row"][1].item() == -7.0
    assert back["col"][2].item() == -7.0
    assert back["t"][1, 2].item() == -7.0
    assert back["flat"][13].item() == -7.0


def test_view_listed_before_its_base():
    base = et.arange(12, dtype=et.int32)
    back = roundtrip([base[3:6], base])
    assert back[0].tolist() == [3, 4, 5]
    back[1][4] = 100
    assert back[0][1].item() == 100


def test_overlapping_views_without_a_covering_one_share_a_stored_span():
    buf = et.arange(20, dtype=et.float64)
    a, b = buf[2:10], buf[6:14]
    data = saved_bytes({"a": a, "b": b})
    header = header_of(data)
    spans = [k for k in header if k.startswith("__ember_storage__")]
    assert len(spans) == 1 and header[spans[0]]["shape"] == [12]  # elements 2..13, once
    back = et.load(io.BytesIO(data))
    assert back["a"].tolist() == a.tolist() and back["b"].tolist() == b.tolist()
    back["a"][5] = -1.0  # element 7 of buf
    assert back["b"][1].item() == -1.0


def test_disjoint_slices_of_one_buffer_are_each_stored_once():
    # flat-parameter style: no element is reachable from two tensors, so nothing to share
    flat = et.arange(30, dtype=et.float32)
    sd = {"w": flat[:20].view(4, 5), "b": flat[20:25]}
    data = saved_bytes(sd)
    header = header_of(data)
    assert set(header) == {"__metadata__", "w", "b"}
    sizes = sum(e["data_offsets"][1] - e["data_offsets"][0]
                for k, e in header.items() if k != "__metadata__")
    assert sizes == 25 * 4
    back = et.load(io.BytesIO(data))
    assert back["w"].tolist() == sd["w"].tolist() and back["b"].tolist() == sd["b"].tolist()


def test_empty_tensors_share_nothing():
    buf = et.arange(5.0)
    back = roundtrip({"e1": buf[2:2], "e2": buf[3:3], "x": buf})
    assert tuple(back["e1"].shape) == (0,) and tuple(back["e2"].shape) == (0,)
    assert back["x"].tolist() == buf.tolist()


# ---------------------------------------------------------------------------------------------
# structures


def optimizer_state(rng):
    def t(*shape):
        return tensor(et, rand_array(rng, shape, "float32"))

    return {
        "state": {
            0: {"step": et.tensor(3.0), "exp_avg": t(4, 3), "exp_avg_sq": t(4, 3)},
            1: {"step": et.tensor(3.0), "exp_avg": t(4), "exp_avg_sq": t(4)},
            2: {"momentum_buffer": None},
        },
        "param_groups": [
            {"lr": 0.001, "betas": (0.9, 0.999), "eps": 1e-08, "weight_decay": 0,
             "amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
             "differentiable": False, "fused": None, "params": [0, 1]},
            {"lr": 0.1, "momentum": 0.9, "nesterov": True, "params": [2], "name": "head"},
        ],
    }


def assert_same(a, b, where="obj"):
    assert type(a) is type(b), (where, type(a), type(b))
    if isinstance(a, et.Tensor):
        assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape), where
        assert raw(a) == raw(b), where
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        assert [type(k) for k in a] == [type(k) for k in b], where
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), where
    else:
        assert a == b, where
        if isinstance(a, float):
            assert math.copysign(1, a) == math.copysign(1, b), where


def test_optimizer_state_dict_roundtrips_with_int_keys(rng):
    state = optimizer_state(rng)
    back = roundtrip(state)
    assert_same(back, state)
    assert list(back["state"]) == [0, 1, 2]  # int keys stay ints
    assert back["param_groups"][0]["betas"] == (0.9, 0.999)  # tuples stay tuples
    names = set(header_of(saved_bytes(state))) - {"__metadata__"}
    assert "state.0.exp_avg" in names and "state.1.exp_avg_sq" in names


def test_full_training_checkpoint(rng):
    sd = collections.OrderedDict(
        [("fc1.weight", tensor(et, rand_array(rng, (8, 4), "float32"))),
         ("fc1.bias", et.zeros(8)),
         ("bn.running_mean", et.zeros(8)),
         ("bn.num_batches_tracked", et.tensor(7))])
    sd._metadata = collections.OrderedDict([("", {"version": 1}), ("bn", {"version": 2})])
    ckpt = {"epoch": 12, "model": sd, "optimizer": optimizer_state(rng), "best": 0.25,
            "history": [1.5, 0.75, float("nan")], "note": None, "tag": "run-α"}
    back = roundtrip(ckpt)
    assert_same(back, ckpt)
    assert isinstance(back["model"], collections.OrderedDict)
    assert back["model"]._metadata == sd._metadata


def test_plain_values_and_keys_roundtrip():
    values = [None, True, False, 0, -5, 2**70, -(2**80), 1.5, -0.0, 1e300, 5e-324,
              float("inf"), float("-inf"), float("nan"), "", "quote \" and \\ and \n", "✓ 日本",
              [], (), {}, collections.OrderedDict(), [[[]]], ((1,), [2]), {"a": {"b": {"c": 1}}}]
    assert_same(roundtrip(values), values)
    keys = {0: "int", -3: "neg", "0": "str", True: "bool", None: "none", 2.5: "float",
            float("inf"): "inf", "": "empty", "a.b": "dotted"}
    assert_same(roundtrip(keys), keys)


def test_subclasses_are_saved_as_their_base_type():
    point = collections.namedtuple("point", "x y")
    dd = collections.defaultdict(list, a=[1])
    back = roundtrip({"p": point(1, 2), "dd": dd})
    assert type(back["p"]) is tuple and back["p"] == (1, 2)
    assert type(back["dd"]) is dict and back["dd"] == {"a": [1]}


def test_a_lone_tensor_and_names_that_collide():
    t = et.ones(2)
    data = saved_bytes(t)
    assert set(header_of(data)) == {"__metadata__", "tensor"}
    obj = {"a.b": et.ones(1), "a": {"b": et.zeros(1)}, "__metadata__": et.full((1,), 2.0)}
    data = saved_bytes(obj)
    names = set(header_of(data)) - {"__metadata__"}
    assert len(names) == 3 and "a.b" in names
    assert_same(et.load(io.BytesIO(data)), obj)


@pytest.mark.parametrize("bad", [
    {("tuple", "key"): 1}, {et.ones(1): 1}, lambda: 1, (x for x in ()),
], ids=lambda v: type(v).__name__)
def test_unsupported_objects_are_a_type_error_and_write_nothing(tmp_path, bad):
    path = tmp_path / "ckpt.st"
    with pytest.raises(TypeError, match="ember_tensor.save"):
        et.save({"x": [bad]}, path)
    assert not path.exists() and os.listdir(tmp_path) == []


VALUES = [{1, 2}, frozenset({"a"}), b"bytes", bytearray(b"x"), 1 + 2j, np.zeros(3),
          np.arange(6, dtype=np.int16).reshape(2, 3)[:, ::2], np.int64(-7), np.float32(1.5),
          np.bool_(True), np.complex128(1 - 1j), et.float16, et.device("cpu")]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_values_round_trip_as_data(value):
    got = roundtrip({"x": [value]})["x"][0]
    assert type(got) is type(value)
    if isinstance(value, np.ndarray):
        assert got.dtype == value.dtype and np.array_equal(got, value)
    else:
        assert got == value


class Config:  # a plain class: saved as its __dict__
    def __init__(self, lr, layers):
        self.lr, self.layers = lr, layers


def test_plain_objects_need_allowing_or_trust():
    import argparse

    state = {"args": argparse.Namespace(lr=0.1, name="run"), "cfg": Config(0.5, [1, 2]),
             "w": et.ones(2)}
    data = saved_bytes(state)
    with pytest.raises(pickle.UnpicklingError, match="add_safe_globals") as info:
        et.load(io.BytesIO(data))
    assert "argparse.Namespace" in str(info.value)
    with serialization.safe_globals([argparse.Namespace, Config]):
        got = et.load(io.BytesIO(data))
        assert Config in serialization.get_safe_globals()
    assert Config not in serialization.get_safe_globals()
    assert got["args"] == state["args"] and got["cfg"].layers == [1, 2]
    trusted = et.load(io.BytesIO(data), weights_only=False)
    assert isinstance(trusted["cfg"], Config) and trusted["cfg"].lr == 0.5
    serialization.add_safe_globals([(Config, f"{__name__}.Config"), argparse.Namespace])
    try:
        assert et.load(io.BytesIO(data))["cfg"].lr == 0.5
    finally:
        serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []


class Table:  # its state is not data (a tuple key): pickled whole
    def __init__(self):
        self.weight = et.ones(2)
        self.table = {(1, 2): "pair"}


def test_other_objects_are_pickled_and_load_only_when_trusted():
    data = saved_bytes({"obj": Table(), "w": et.arange(3.0), "fn": len})
    with pytest.raises(pickle.UnpicklingError, match="weights_only=False") as info:
        et.load(io.BytesIO(data))
    assert "Table" in str(info.value)
    got = et.load(io.BytesIO(data), weights_only=False, mmap=True)
    assert got["obj"].table == {(1, 2): "pair"} and got["obj"].weight.tolist() == [1.0, 1.0]
    assert got["fn"] is len and got["w"].tolist() == [0.0, 1.0, 2.0]
    # the abandoned attempt to save Table as data leaves no stray entry (obj.weight) behind
    assert set(header_of(data)) == {"__metadata__", "w", "obj.__pickle__", "fn.__pickle__"}


def test_files_without_new_values_keep_format_version_1():
    assert ember_meta(saved_bytes({"w": et.ones(1), "n": 3}))["version"] == 1
    assert ember_meta(saved_bytes({"s": {1}}))["version"] == 2


def test_cycles_and_deep_nesting_are_errors():
    a = []
    a.append(a)
    with pytest.raises(ValueError, match="cycle"):
        et.save(a, io.BytesIO())
    deep: list = []
    for _ in range(serialization.MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(ValueError, match="nested"):
        et.save(deep, io.BytesIO())
    shared = [1]
    assert roundtrip([shared, shared]) == [[1], [1]]  # shared, but no cycle: saved twice


def test_save_and_load_are_exported():
    assert {"save", "load", "serialization"} <= set(et.__all__)
    assert et.save is serialization.save and et.load is serialization.load
    ember = pytest.importorskip("ember")
    assert ember.save is et.save and ember.load is et.load
    assert issubclass(CheckpointError, RuntimeError)


# ---------------------------------------------------------------------------------------------
# the safetensors library


@pytest.fixture
def st():
    return pytest.importorskip("safetensors")


def state_dict_all_dtypes(rng):
    return {f"p.{d}": tensor(et, rand_array(rng, (3, 2), d), d) for d in ALL_DTYPES}


def test_safetensors_reads_ember_files(st, tmp_path, rng):
    import safetensors.numpy
    import safetensors.torch
    import torch

    sd = state_dict_all_dtypes(rng)
    sd["scalar"] = et.tensor(2.5)
    sd["empty"] = et.zeros(0, 3)
    path = tmp_path / "sd.safetensors"
    et.save(sd, path)
    th = safetensors.torch.load_file(path)
    assert set(th) == set(sd)
    for k, v in sd.items():
        assert str(th[k].dtype).split(".")[-1] == str(v.dtype).split(".")[-1], k
        assert tuple(th[k].shape) == tuple(v.shape), k
        assert th[k].reshape(-1).view(torch.uint8).numpy().tobytes() == raw(v), k
    with st.safe_open(path, framework="pt") as f:
        assert json.loads(f.metadata()["ember"])["format"] == "ember"

    sd.pop("p.bfloat16")  # NumPy has no bfloat16
    et.save(sd, path)
    nps = safetensors.numpy.load_file(path)
    th = safetensors.torch.load_file(path)
    assert set(nps) == set(th) == set(sd)
    for k in sd:
        np.testing.assert_array_equal(nps[k], th[k].numpy())
        np.testing.assert_array_equal(nps[k], to_np(sd[k]))


def test_ember_reads_safetensors_files(st, tmp_path, rng):
    import safetensors.numpy
    import safetensors.torch
    import torch

    arrays = {f"n.{d}": rand_array(rng, (2, 5), d) for d in ALL_DTYPES if d != "bfloat16"}
    arrays["zero_d"] = np.array(3, dtype=np.int32)
    path = tmp_path / "np.safetensors"
    safetensors.numpy.save_file(arrays, path, metadata={"format": "np"})
    back = et.load(path)
    assert type(back) is dict and set(back) == set(arrays)
    for k, a in arrays.items():
        np.testing.assert_array_equal(to_np(back[k]), a)
        assert to_np(back[k]).dtype == a.dtype

    tens = {"bf": torch.randn(4, 3).bfloat16(), "h": torch.randn(2).half(),
            "i": torch.arange(6).reshape(2, 3), "b": torch.tensor([True, False])}
    safetensors.torch.save_file(tens, tmp_path / "pt.safetensors")
    back = et.load(tmp_path / "pt.safetensors")
    for k, v in tens.items():
        assert raw(back[k]) == v.reshape(-1).view(torch.uint8).numpy().tobytes(), k
        assert str(back[k].dtype).split(".")[-1] == str(v.dtype).split(".")[-1]


def test_torch_state_dict_both_ways(st, tmp_path):
    import safetensors.torch
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    # torch -> ember
    safetensors.torch.save_file(model.state_dict(), tmp_path / "torch.st")
    sd = et.load(tmp_path / "torch.st")
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(to_np(sd[k]), v.numpy())
    # ember -> torch: the names are the state_dict's keys, so load_state_dict takes it
    et.save(sd, tmp_path / "ember.st")
    fresh = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    fresh.load_state_dict(safetensors.torch.load_file(tmp_path / "ember.st"))
    for k, v in model.state_dict().items():
        assert torch.equal(fresh.state_dict()[k], v)


def test_shared_span_files_are_valid_safetensors(st, tmp_path):
    import safetensors.numpy

    buf = et.arange(10, dtype=et.float32)
    et.save({"a": buf[0:6], "b": buf[4:10], "c": buf[0:6]}, tmp_path / "s.st")
    nps = safetensors.numpy.load_file(tmp_path / "s.st")
    assert list(nps) == ["__ember_storage__.a"]
    np.testing.assert_array_equal(nps["__ember_storage__.a"], np.arange(10, dtype=np.float32))


def test_file_layout(rng):
    sd = {"i8": et.ones(3, dtype=et.int8), "f64": et.ones(3, dtype=et.float64),
          "f16": et.ones(1, dtype=et.float16), "i32": et.ones(5, dtype=et.int32)}
    data = saved_bytes(sd)
    (n,) = struct.unpack("<Q", data[:8])
    assert (8 + n) % 8 == 0  # the data starts 8-byte aligned
    header = header_of(data)
    assert list(header)[0] == "__metadata__"
    for k, e in header.items():
        if k != "__metadata__":
            item = {"F64": 8, "I32": 4, "F16": 2, "I8": 1}[e["dtype"]]
            assert e["data_offsets"][0] % item == 0, k  # every tensor aligned
    assert header["f64"]["data_offsets"][0] == 0
    assert len(data) == 8 + n + header["i8"]["data_offsets"][1]


# ---------------------------------------------------------------------------------------------
# atomic save


def leftovers(directory) -> list[str]:
    return sorted(p for p in os.listdir(directory) if p.endswith(".tmp"))


@pytest.mark.parametrize("where", ["write", "fsync", "replace"])
def test_failed_save_leaves_the_old_file_intact(tmp_path, monkeypatch, where):
    path = tmp_path / "ckpt.safetensors"
    et.save({"v": et.ones(1000)}, path)
    before = path.read_bytes()
    if where == "write":  # fail after the header and the first tensor went out
        real, calls = serialization._byte_view, []

        def failing(t):
            calls.append(t)
            if len(calls) == 2:
                raise OSError("disk full (simulated)")
            return real(t)

        monkeypatch.setattr(serialization, "_byte_view", failing)
    else:
        def fail(*args):
            raise OSError(f"{where} failed (simulated)")

        monkeypatch.setattr(serialization.os, where, fail)
    with pytest.raises(OSError, match="simulated"):
        et.save({"a": et.zeros(1000), "b": et.zeros(1000), "c": et.zeros(10)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert et.load(path)["v"].tolist() == [1.0] * 1000
    assert leftovers(tmp_path) == []


def test_interrupted_save_leaves_no_file(tmp_path, monkeypatch):
    path = tmp_path / "new.safetensors"

    def interrupt(t):
        raise KeyboardInterrupt

    monkeypatch.setattr(serialization, "_byte_view", interrupt)
    with pytest.raises(KeyboardInterrupt):
        et.save({"a": et.ones(3)}, path)
    assert os.listdir(tmp_path) == []


def test_save_uses_a_temporary_file_and_rename(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.st"
    seen = []
    real = serialization.os.replace

    def spy(src, dst):
        seen.append((os.path.dirname(src), os.path.basename(src), os.fspath(dst)))
        assert not os.path.exists(dst) or open(dst, "rb").read() == b"old"
        return real(src, dst)

    path.write_bytes(b"old")
    monkeypatch.setattr(serialization.os, "replace", spy)
    et.save({"a": et.ones(2)}, path)
    ((directory, name, dst),) = seen
    assert directory == str(tmp_path) and name.startswith(".ckpt.st.") and dst == str(path)
    assert et.load(path)["a"].tolist() == [1.0, 1.0]


def test_save_keeps_permissions_and_writes_through_symlinks(tmp_path):
    target = tmp_path / "real.st"
    et.save({"a": et.ones(1)}, target)
    os.chmod(target, 0o640)
    et.save({"a": et.zeros(1)}, target)
    assert os.stat(target).st_mode & 0o777 == 0o640
    link = tmp_path / "link.st"
    link.symlink_to(target)
    et.save({"a": et.full((1,), 5.0)}, link)
    assert link.is_symlink()
    assert et.load(target)["a"].tolist() == [5.0]


def test_save_to_a_missing_directory_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        et.save({"a": et.ones(1)}, tmp_path / "nope" / "ckpt.st")


# ---------------------------------------------------------------------------------------------
# file objects


def test_file_objects_read_from_their_position():
    buf = io.BytesIO()
    buf.write(b"prefix")
    et.save({"a": et.ones(2)}, buf)
    buf.seek(6)
    assert et.load(buf)["a"].tolist() == [1.0, 1.0]
    buf.write(b"trailer")  # a seekable file object holds the checkpoint up to its end
    buf.seek(6)
    with pytest.raises(CheckpointError, match="7 bytes belong to no tensor"):
        et.load(buf)


class Trickle(io.RawIOBase):
    """A non-seekable reader that hands out at most 7 bytes a call."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def readable(self):
        return True

    def readinto(self, b):
        n = min(len(b), 7, len(self.data) - self.pos)
        b[:n] = self.data[self.pos:self.pos + n]
        self.pos += n
        return n


class ReadOnly:
    """A file-like object with read() only."""

    def __init__(self, data: bytes):
        self.f = io.BytesIO(data)

    def read(self, n=-1):
        return self.f.read(min(n, 5) if n >= 0 else n)


class ShortWriter(io.RawIOBase):
    """A raw writer that accepts at most 1000 bytes a call."""

    def __init__(self):
        self.out = bytearray()

    def writable(self):
        return True

    def write(self, b):
        b = bytes(memoryview(b)[:1000])
        self.out += b
        return len(b)


@pytest.mark.parametrize("reader", [Trickle, ReadOnly])
def test_partial_reads(reader, rng):
    obj = {"x": tensor(et, rand_array(rng, (50, 3), "float64")), "y": [et.ones(1), 2]}
    back = et.load(reader(saved_bytes(obj)))
    assert_same(back, obj)


def test_partial_writes(rng):
    obj = {"x": tensor(et, rand_array(rng, (500,), "float32"))}
    w = ShortWriter()
    et.save(obj, w)
    assert bytes(w.out) == saved_bytes(obj)


def test_text_mode_and_wrong_types(tmp_path):
    path = tmp_path / "c.st"
    et.save({"a": et.ones(1)}, path)
    with open(path, encoding="latin-1") as f, pytest.raises(CheckpointError, match="binary"):
        et.load(f)
    with pytest.raises(TypeError, match="BytesIO"):
        et.load(path.read_bytes())
    with pytest.raises(TypeError, match="path or"):
        et.load(42)
    with pytest.raises(TypeError, match="path or"):
        et.save({}, 42)


# ---------------------------------------------------------------------------------------------
# map_location and weights_only


@pytest.mark.parametrize("ml", [None, "cpu", "cpu:0", et.device("cpu"), {"cpu": "cpu"},
                                {"cuda:0": "cpu"}])
def test_map_location_cpu(ml):
    assert roundtrip({"a": et.ones(1)}, map_location=ml)["a"].device.type == "cpu"


@pytest.mark.parametrize("ml", ["cuda", "cuda:1", et.device("cuda"), {"cpu": "cuda:0"}])
def test_map_location_cuda_is_a_clear_error(ml):
    with pytest.raises(RuntimeError, match="no CUDA backend"):
        roundtrip({"a": et.ones(1)}, map_location=ml)


def test_map_location_callable_sees_each_tensor_and_cpu():
    seen = []

    def mapper(t, location):
        seen.append(location)
        return t * 2 if t.dtype == et.float32 else None  # None: the tensor as loaded

    got = roundtrip({"a": et.ones(2), "b": et.arange(3)}, map_location=mapper)
    assert got["a"].tolist() == [2.0, 2.0] and got["b"].tolist() == [0, 1, 2]
    assert seen == ["cpu", "cpu"]
    assert roundtrip({"a": et.ones(1)}, map_location=lambda s, loc: s)["a"].tolist() == [1.0]


def test_map_location_bad_values():
    with pytest.raises(TypeError, match="or a callable"):
        roundtrip({"a": et.ones(1)}, map_location=3)
    with pytest.raises(ValueError):
        roundtrip({"a": et.ones(1)}, map_location="tpu")


@pytest.mark.parametrize("weights_only", [True, False, None])
def test_weights_only_changes_nothing(weights_only, rng):
    state = optimizer_state(rng)
    assert_same(roundtrip(state, weights_only=weights_only), state)


def test_weights_only_must_be_a_bool():
    with pytest.raises(TypeError, match="weights_only"):
        roundtrip({}, weights_only="yes")


# ---------------------------------------------------------------------------------------------
# corrupt files: a CheckpointError naming the file and the problem, never a crash


@pytest.fixture
def good() -> bytes:
    return saved_bytes({"w": et.arange(6, dtype=et.float32).reshape(2, 3), "b": et.ones(2),
                        "step": 3})


def expect_error(data: bytes, match: str, tmp_path):
    with pytest.raises(CheckpointError, match=match) as info:
        et.load(io.BytesIO(data))
    assert "<BytesIO>" in str(info.value)
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    with pytest.raises(CheckpointError, match=match) as info:
        et.load(path)
    assert str(path) in str(info.value) and info.value.filename == repr(str(path))
    return info.value


@pytest.mark.parametrize("cut", [0, 3, 8, 20, -25, -1])
def test_truncated_file(good, tmp_path, cut):
    data = good[:cut] if cut > 0 else good[:len(good) + cut] if cut < 0 else b""
    match = "truncated|bad header length|past the end"
    expect_error(data, match, tmp_path)


def test_bad_header_length(good, tmp_path):
    n = struct.unpack("<Q", good[:8])[0]
    expect_error(struct.pack("<Q", n + 1000) + good[8:], "bad header length", tmp_path)
    expect_error(struct.pack("<Q", 2**63) + good[8:], "bad header length", tmp_path)
    expect_error(struct.pack("<Q", n - 20) + good[8:], "not valid JSON", tmp_path)
    # still valid JSON (only padding cut off): the data no longer matches the offsets
    expect_error(struct.pack("<Q", n - 1) + good[8:], "belong to no tensor", tmp_path)
    expect_error(struct.pack("<Q", 0) + good[8:], "not valid JSON", tmp_path)


def test_torch_save_files_load_and_legacy_pickles_are_refused_with_a_hint(tmp_path):
    import torch

    path = tmp_path / "torch.pt"
    torch.save({"a": torch.ones(2)}, path)
    assert et.load(path)["a"].tolist() == [1.0, 1.0]  # tests/test_torch_checkpoints.py
    with pytest.raises(CheckpointError, match="torch.save archive"):  # a broken zip
        et.load(io.BytesIO(b"PK\x03\x04" + b"\0" * 60))
    data = pickle.dumps({"a": 1}) + b"\0" * 64
    with pytest.raises(CheckpointError, match="pickle"):
        et.load(io.BytesIO(data))


@pytest.mark.parametrize("header, match", [
    (b"{not json", "not valid JSON"),
    (b'{"a": NaN}', "not valid JSON"),
    (b"\xff\xfe{}", "not valid JSON"),
    (b'[1, 2]', "not an object"),
    (b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
     b'"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}', "duplicate key"),
    (b"[" * 100_000, "not valid JSON"),
])
def test_invalid_json(tmp_path, header, match):
    expect_error(craft(None, b"\0" * 4, raw_header=header), match, tmp_path)


def entry(st="F32", shape=(1,), offsets=(0, 4)):
    return {"dtype": st, "shape": list(shape), "data_offsets": list(offsets)}


@pytest.mark.parametrize("header, data, match", [
    ({"a": entry(offsets=(0, 4))}, b"\0" * 2, "past the end"),
    ({"a": entry(offsets=(8, 12))}, b"\0" * 4, "past the end"),
    ({"a": entry(shape=(2,), offsets=(0, 8)), "b": entry(offsets=(4, 8))}, b"\0" * 8,
     "overlaps"),
    ({"a": entry(offsets=(4, 8))}, b"\0" * 8, "hole"),
    ({"a": entry()}, b"\0" * 8, "belong to no tensor"),
    ({"a": entry(offsets=(4, 0))}, b"\0" * 4, "data_offsets must be"),
    ({"a": entry(offsets=(-4, 0))}, b"\0" * 4, "data_offsets must be"),
    ({"a": entry(offsets=(0,))}, b"\0" * 4, "data_offsets must be"),
    ({"a": entry(offsets=(0, 4.0))}, b"\0" * 4, "data_offsets must be"),
    ({"a": entry(st="F8_E4M3")}, b"\0" * 4, "dtype 'F8_E4M3'.*not support"),
    ({"a": entry(st="C64", offsets=(0, 8))}, b"\0" * 8, "dtype 'C64'"),
    ({"a": entry(st="U16", offsets=(0, 2))}, b"\0" * 2, "dtype 'U16'"),
    ({"a": entry(st=7)}, b"\0" * 4, "dtype 7"),
    ({"a": entry(shape=(2,))}, b"\0" * 4, r"shape \[2\] of F32 needs 8 bytes"),
    ({"a": entry(st="F64")}, b"\0" * 4, "needs 8 bytes"),
    ({"a": entry(shape=(-1,))}, b"\0" * 4, "shape must be"),
    ({"a": entry(shape=(True,))}, b"\0" * 4, "shape must be"),
    ({"a": entry(shape=(2**40, 2**40), offsets=(0, 4))}, b"\0" * 4, "more bytes than"),
    ({"a": entry(shape=(2**30, 2**30), offsets=(0, 4))}, b"\0" * 4, "needs"),
    ({"a": {"dtype": "F32", "shape": [1]}}, b"\0" * 4, "data_offsets"),
    ({"a": [1, 2]}, b"", "expected an object"),
    ({"__metadata__": {"k": 1}, "a": entry()}, b"\0" * 4, "__metadata__ must be"),
    ({"__metadata__": [], "a": entry()}, b"\0" * 4, "__metadata__ must be"),
    ({"a": entry(st="BOOL", offsets=(0, 1))}, b"\x02", "other than 0 and 1"),
])
def test_malformed_headers(tmp_path, header, data, match):
    expect_error(craft(header, data), match, tmp_path)


def good_description(**overrides):
    d = {"format": "ember", "version": 1, "tensors": [{"entry": "a"}], "root": {"tensor": 0}}
    d.update(overrides)
    return d


A = {"a": ("F32", [2, 3], bytes(24))}


@pytest.mark.parametrize("meta, match", [
    ("{oops", "is not valid JSON"),
    ('{"format": "ember", "version": 1, "tensors": [], "root": NaN}', "not valid JSON"),
    ("[]", "not an Ember description"),
    ('{"format": "pickle"}', "not an Ember description"),
    (json.dumps(good_description(version=3)), "format version 3, newer"),
    (json.dumps(good_description(version="1")), "bad format version"),
    (json.dumps(good_description(tensors={})), "'tensors'"),
    (json.dumps({"format": "ember", "version": 1, "tensors": []}), "'root'"),
    (json.dumps(good_description(tensors=[{"entry": "zz"}])), "does not have"),
    (json.dumps(good_description(tensors=["a"])), "must be an object"),
    (json.dumps(good_description(tensors=[{"entry": "a", "class": "os.system"}])),
     "unknown fields"),
    (json.dumps(good_description(tensors=[{"entry": "a"}, {"entry": "a"}])), "already"),
    (json.dumps(good_description(tensors=[{"entry": "a", "shape": [6]}])),
     "needs shape, stride and offset"),
    (json.dumps(good_description(tensors=[
        {"entry": "a", "shape": [7], "stride": [1], "offset": 0}])), "reaches element 6"),
    (json.dumps(good_description(tensors=[
        {"entry": "a", "shape": [2, 2], "stride": [4, 1], "offset": 1}])), "reaches element 6"),
    (json.dumps(good_description(tensors=[
        {"entry": "a", "shape": [2], "stride": [-1], "offset": 3}])), "non-negative"),
    (json.dumps(good_description(tensors=[
        {"entry": "a", "shape": [0], "stride": [1], "offset": 7}])), "reaches element 7"),
    (json.dumps(good_description(tensors=[{"entry": "a", "requires_grad": "yes"}])),
     "requires_grad"),
    # views whose element count or strides overflow int64 (the W7)
    (json.dumps(good_description(tensors=[
        {"entry": "a", "shape": [2**62, 2**62], "stride": [0, 0], "offset": 0}])),
     "more elements than"),
    (json.dumps(good_description(tensors=[
        {"entry": "a", "shape": [1, 1], "stride": [2**70, 0], "offset": 0}])),
     "more elements than"),
    (json.dumps(good_description(crc32=[])), "'crc32' must map every tensor"),
    (json.dumps(good_description(crc32={})), "'crc32' must map every tensor"),
    (json.dumps(good_description(crc32={"a": -1})), "'crc32' must map every tensor"),
    (json.dumps(good_description(crc32={"a": 2**32})), "'crc32' must map every tensor"),
    (json.dumps(good_description(crc32={"a": 0, "b": 0})), "'crc32' must map every tensor"),
    (json.dumps(good_description(crc32={"a": 1})), "does not match its CRC-32"),
    (json.dumps(good_description(root={"tensor": 1})), "unknown node"),
    (json.dumps(good_description(root={"tensor": True})), "unknown node"),
    (json.dumps(good_description(root={"float": "1e400"})), "unknown node"),
    (json.dumps(good_description(root={"set": [1, 2]})), "unknown node"),  # a version-2 tag
    (json.dumps(good_description(version=2, root={"set": 5})), "bad set node"),
    (json.dumps(good_description(version=2, root={"npscalar": ["object", 1]})),
     "bad npscalar node"),
    (json.dumps(good_description(version=2, root={"ndarray": 3})), "bad tensor index"),
    (json.dumps(good_description(version=2, root={"dtype": "Tensor"})), "bad dtype node"),
    (json.dumps(good_description(version=2, root={"object": "os.system", "state": {}})),
     "bad object node"),
    (json.dumps(good_description(version=2, root={"pickle": 0})), "bad pickle node"),
    (json.dumps(good_description(version=2, root={"bytes": "!!"})), "bad bytes node"),
    (json.dumps(good_description(root={"dict": [[1, 2, 3]]})), "pair"),
    (json.dumps(good_description(root={"dict": [[[1], 2]]})), "key must be a plain value"),
    (json.dumps(good_description(root={"dict": [[{"tensor": 0}, 2]]})), "unknown node"),
    (json.dumps(good_description(root={"odict": [], "extra": 1})), "unknown node"),
    (json.dumps(good_description(root={"tuple": 5})), "unknown node"),
    (json.dumps(good_description(root={"__reduce__": ["os.system", ["echo hi"]]})),
     "unknown node"),
])
def test_malformed_ember_metadata(tmp_path, meta, match):
    header = {"__metadata__": {"ember": meta}, "a": entry(shape=(2, 3), offsets=(0, 24))}
    expect_error(craft(header, bytes(24)), match, tmp_path)


def test_the_deepest_structure_save_takes_loads():
    obj: object = {"t": et.ones(1), "nan": float("nan")}
    for _ in range(serialization.MAX_DEPTH - 1):
        obj = [obj]
    back = roundtrip(obj)
    for _ in range(serialization.MAX_DEPTH - 1):
        back = back[0]
    assert back["t"].tolist() == [1.0] and math.isnan(back["nan"])


def test_deeply_nested_metadata_is_refused(tmp_path):
    root: object = 1
    for _ in range(serialization.MAX_DEPTH + 2):
        root = [root]
    data = ember_file(good_description(root=root, tensors=[]), {})
    expect_error(data, "nested", tmp_path)
    data = ember_file(good_description(root=[], tensors=[]), {})
    assert load_bytes(data, tmp_path) == []


def test_unreferenced_entries_are_skipped(tmp_path):
    data = ember_file(good_description(root={"tensor": 0}, tensors=[{"entry": "b"}]),
                      {"a": ("F32", [2], bytes(8)), "b": ("I8", [3], b"\x01\x02\x03"),
                       "c": ("F32", [1], bytes(4))})
    assert load_bytes(data, tmp_path).tolist() == [1, 2, 3]
    assert et.load(Trickle(data)).tolist() == [1, 2, 3]  # skipping a non-seekable stream


# ---------------------------------------------------------------------------------------------
# loading never executes code


def test_loading_calls_no_pickle_eval_exec_or_import(monkeypatch, tmp_path, rng):
    path = tmp_path / "ckpt.st"
    state = {"model": collections.OrderedDict(a=et.ones(2)), "optim": optimizer_state(rng)}
    et.save(state, path)

    def forbidden(*args, **kwargs):
        raise AssertionError("loading a checkpoint must not run this")

    real_import = builtins.__import__

    def no_new_imports(name, *args, **kwargs):
        import sys

        if name not in sys.modules:
            raise AssertionError(f"loading a checkpoint imported {name}")
        return real_import(name, *args, **kwargs)

    for mod, name in [(pickle, "loads"), (pickle, "load"), (pickle, "Unpickler"),
                      (builtins, "eval"), (builtins, "exec"), (builtins, "compile")]:
        monkeypatch.setattr(mod, name, forbidden)
    monkeypatch.setattr(builtins, "__import__", no_new_imports)
    back = et.load(path)
    monkeypatch.undo()
    assert_same(back, state)


def test_malicious_metadata_cannot_execute_code(tmp_path):
    sentinel = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {sentinel}",))

    payload = pickle.dumps(Evil())
    attempts = [
        # a pickle where a description should be
        payload.decode("latin-1"),
        # a pickle as a string value, and tags naming callables
        json.dumps(good_description(root={"dict": [["p", payload.decode("latin-1")]]})),
        json.dumps(good_description(root={"object": {"module": "os", "name": "system",
                                                     "args": [f"touch {sentinel}"]}})),
        json.dumps(good_description(root={"__class__": "os.system"})),
        json.dumps(good_description(root={"py/object": "os.system"})),
        json.dumps(good_description(root={"odict": [], "_metadata": {"__import__": "os"}})),
        json.dumps(good_description(tensors=[{"entry": "a", "__reduce__": "os.system"}])),
    ]
    loaded = []
    for meta in attempts:
        header = {"__metadata__": {"ember": meta, "pickle": payload.decode("latin-1")},
                  "a": entry(shape=(2, 3), offsets=(0, 24))}
        data = craft(header, bytes(24))
        try:
            loaded.append(load_bytes(data, tmp_path))
        except CheckpointError:
            pass
    assert not sentinel.exists()
    # the one that loaded gives the pickle's bytes back as a plain string, never unpickled
    assert loaded == [{"p": payload.decode("latin-1")}]
    # a pickle file itself, under a safetensors name
    (tmp_path / "evil.safetensors").write_bytes(payload)
    with pytest.raises(CheckpointError):
        et.load(tmp_path / "evil.safetensors")
    assert not sentinel.exists()


def test_a_plain_safetensors_file_with_foreign_metadata(tmp_path):
    data = craft({"__metadata__": {"format": "pt", "other": "x"}, "w": entry()},
                 struct.pack("<f", 1.5))
    assert load_bytes(data, tmp_path)["w"].tolist() == [1.5]


# ---------------------------------------------------------------------------------------------
# data integrity: a CRC-32 of every tensor's bytes, checked on load


def test_every_flipped_data_byte_is_detected(tmp_path):
    """The issue's finding: flipped bytes of tensor data loaded silently. Each of them is now
    a CheckpointError naming the tensor; the header is untouched."""
    state = {"w": et.arange(12, dtype=et.float32).reshape(3, 4), "b": et.ones(5, dtype=et.int64),
             "h": et.ones(3, dtype=et.bfloat16), "flag": et.tensor([True, False])}
    data = saved_bytes(state)
    (n,) = struct.unpack("<Q", data[:8])
    start = 8 + n
    assert len(data) - start == 12 * 4 + 5 * 8 + 3 * 2 + 2
    for pos in range(start, len(data)):
        bad = bytearray(data)
        bad[pos] ^= 0x10  # a flip that keeps a BOOL byte 0 or 1 is caught by the CRC too
        with pytest.raises(CheckpointError, match="does not match its CRC-32.*corrupted"):
            et.load(io.BytesIO(bytes(bad)))
    assert_same(et.load(io.BytesIO(data)), state)


def test_checksums_are_of_the_saved_values():
    """A non-contiguous tensor is saved as its values: its CRC is theirs; the header holds
    one CRC per entry, and zlib computes the same numbers from the bytes."""
    import zlib

    t = et.arange(6, dtype=et.float64).reshape(2, 3).t()
    data = saved_bytes({"t": t, "e": et.zeros(0)})
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    crcs = json.loads(header["__metadata__"]["ember"])["crc32"]
    assert crcs.keys() == {"t", "e"}
    lo, hi = header["t"]["data_offsets"]
    assert crcs["t"] == zlib.crc32(data[8 + n + lo:8 + n + hi]) and crcs["e"] == 0
    assert et.load(io.BytesIO(data))["t"].tolist() == t.tolist()


def test_a_file_without_checksums_still_loads():
    """Files of other programs (and of Ember before the checksums) have no "crc32": they
    load unchecked."""
    desc = good_description()
    out = load_bytes(ember_file(desc, {"a": ("F32", [2, 3], struct.pack("<6f", *range(6)))}))
    assert out.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_the_description_is_validated_before_any_data_is_read():
    """A malformed description is refused before the loader reads tensor bytes: a file
    whose data would fail to read (a stream that raises) still reports the description."""

    class NoDataReads(io.BytesIO):
        def __init__(self, data, limit):
            super().__init__(data)
            self.limit = limit

        def readinto(self, b):
            if self.tell() >= self.limit:
                raise AssertionError("tensor data read before the description was checked")
            return super().readinto(b)

        def read(self, n=-1):
            if self.tell() >= self.limit:
                raise AssertionError("tensor data read before the description was checked")
            return super().read(n)

    desc = good_description(tensors=[{"entry": "a", "shape": [7], "stride": [1], "offset": 0}])
    data = ember_file(desc, {"a": ("F32", [2, 3], bytes(24))})
    (n,) = struct.unpack("<Q", data[:8])
    with pytest.raises(CheckpointError, match="reaches element 6"):
        et.load(NoDataReads(data, 8 + n))
