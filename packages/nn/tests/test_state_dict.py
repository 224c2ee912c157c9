"""state_dict / load_state_dict against torch.nn: keys, values, detaching, strict/assign,
error messages, metadata, hooks, extra state."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember_nn as nn
import ember_tensor as et
from nn_testing import copy_state, np_of, torch_repr


def model(lib):
    N, T = (nn, et) if lib == "ember" else (torch.nn, torch)

    class Net(N.Module):
        def __init__(self):
            super().__init__()
            self.body = N.Sequential(N.Linear(3, 4), N.ReLU(), N.Linear(4, 2))
            self.register_buffer("mean", T.zeros(2))
            self.register_buffer("scratch", T.zeros(5), persistent=False)
            self.scale = N.Parameter(T.ones(()))

        def forward(self, x):
            return self.body(x) * self.scale - self.mean

    return Net()


def test_keys_order_and_values_match_torch() -> None:
    ours, theirs = model("ember"), model("torch")
    copy_state(ours, theirs)
    sd, tsd = ours.state_dict(), theirs.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == list(tsd) == ["scale", "mean", "body.0.weight", "body.0.bias",
                                     "body.2.weight", "body.2.bias"]
    for k in sd:
        np.testing.assert_array_equal(np_of(sd[k]), np_of(tsd[k]), err_msg=k)
    assert dict(sd._metadata) == {k: dict(v) for k, v in tsd._metadata.items()}


def test_tensors_are_detached_unless_keep_vars() -> None:
    net = model("ember")
    sd = net.state_dict()
    assert not any(v.requires_grad for v in sd.values())
    assert not any(isinstance(v, nn.Parameter) for v in sd.values())
    assert sd["scale"].data_ptr() == net.scale.data_ptr()  # shares storage (no copy)
    kept = net.state_dict(keep_vars=True)
    assert kept["scale"] is net.scale and isinstance(kept["scale"], nn.Parameter)
    assert kept["mean"] is net.mean


def test_prefix_destination_and_positional_args() -> None:
    net = model("ember")
    assert list(net.state_dict(prefix="m."))[0] == "m.scale"
    dest = {}
    assert net.state_dict(destination=dest) is dest and "body.0.weight" in dest
    with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
        out = net.state_dict(None, "p.")
    assert list(out)[0] == "p.scale"


def test_round_trip_into_a_fresh_module() -> None:
    a, b = model("ember"), model("ember")
    with_grad = et.ones(2, 3)
    assert not np.allclose(np_of(a(with_grad)), np_of(b(with_grad)))
    result = b.load_state_dict(a.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_array_equal(np_of(a(with_grad)), np_of(b(with_grad)))
    assert isinstance(b.body[0].weight, nn.Parameter)  # copied into, not replaced


def test_load_from_torch_and_back() -> None:
    ours, theirs = model("ember"), model("torch")
    ours.load_state_dict({k: et.from_numpy(v.numpy().copy())
                          for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(np_of(ours(et.from_numpy(x))),
                               np_of(theirs(torch.from_numpy(x))), rtol=1e-6, atol=1e-6)


def _load_error(lib: str, edit) -> str:
    net = model(lib)
    sd = dict(net.state_dict())
    T = et if lib == "ember" else torch
    edit(sd, T)
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(sd)
    return str(info.value)


@pytest.mark.parametrize(
    "edit",
    [
        lambda sd, T: sd.pop("body.0.bias"),
        lambda sd, T: sd.update({"body.1.weight": T.ones(1), "extra": T.ones(1)}),
        lambda sd, T: (sd.pop("mean"), sd.update({"body.9.x": T.ones(1)})),
        lambda sd, T: sd.update({"body.0.weight": T.ones(3, 4)}),
        lambda sd, T: sd.update({"body.0.weight": T.ones(3, 4), "scale": T.ones(2)}),
        lambda sd, T: (sd.pop("scale"), sd.update({"body.2.bias": T.ones(3)})),
        lambda sd, T: sd.update({"mean": [1.0, 2.0]}),
    ],
    ids=["missing", "unexpected", "both", "size", "two-sizes", "missing-and-size", "not-tensor"],
)
def test_error_messages_match_torch(edit) -> None:
    assert _load_error("ember", edit) == torch_repr(_load_error("torch", edit))


def test_non_strict_returns_the_keys() -> None:
    for lib in ("ember", "torch"):
        net = model(lib)
        T = et if lib == "ember" else torch
        sd = dict(net.state_dict())
        sd.pop("mean")
        sd["body.0.extra"] = T.ones(1)
        result = net.load_state_dict(sd, strict=False)
        assert result.missing_keys == ["mean"]
        assert result.unexpected_keys == ["body.0.extra"]
        assert repr(result) == (
            "_IncompatibleKeys(missing_keys=['mean'], unexpected_keys=['body.0.extra'])"
        )


def test_non_strict_still_reports_size_mismatch() -> None:
    net = model("ember")
    sd = dict(net.state_dict())
    sd["body.0.weight"] = et.ones(1, 1)
    with pytest.raises(RuntimeError, match="size mismatch for body.0.weight"):
        net.load_state_dict(sd, strict=False)


def test_state_dict_must_be_a_mapping() -> None:
    with pytest.raises(TypeError) as ours:
        model("ember").load_state_dict([1, 2])
    with pytest.raises(TypeError) as theirs:
        model("torch").load_state_dict([1, 2])
    assert str(ours.value) == str(theirs.value)


def test_zero_dim_parameter_accepts_a_one_element_vector() -> None:
    net = model("ember")
    sd = dict(net.state_dict())
    sd["scale"] = et.tensor([3.0])
    net.load_state_dict(sd)
    assert net.scale.shape == () and net.scale.item() == 3.0


def test_load_casts_dtype_and_keeps_requires_grad() -> None:
    net = model("ember")
    sd = {k: v.double() for k, v in net.state_dict().items()}
    sd["scale"] = et.tensor(2.0, dtype=et.float64)
    net.load_state_dict(sd)
    assert net.scale.dtype == et.float32 and net.scale.item() == 2.0
    assert net.scale.requires_grad and net.scale.is_leaf


def test_assign() -> None:
    net = model("ember")
    new = {k: v.clone() for k, v in net.state_dict().items()}
    new["scale"] = et.tensor(5.0)
    net.load_state_dict(new, assign=True)
    assert net.scale.data_ptr() == new["scale"].data_ptr()  # taken, not copied
    assert isinstance(net.scale, nn.Parameter) and net.scale.requires_grad
    assert net.mean is new["mean"]
    net.scale.requires_grad_(False)
    p = nn.Parameter(et.tensor(1.0))  # a Parameter in the dict keeps the model's flag
    new2 = dict(new)
    new2["scale"] = p
    net.load_state_dict(new2, assign=True)
    assert net.scale is p and not p.requires_grad


def test_non_persistent_buffers_are_not_saved_nor_expected() -> None:
    net = model("ember")
    assert "scratch" not in net.state_dict()
    sd = dict(net.state_dict())
    sd["scratch"] = et.ones(5)
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "scratch"'):
        net.load_state_dict(sd)


def test_none_members_are_skipped() -> None:
    lin = nn.Linear(2, 2, bias=False)
    assert list(lin.state_dict()) == ["weight"]
    assert lin.bias is None
    lin.load_state_dict({"weight": et.ones(2, 2)})


def test_hooks() -> None:
    net = model("ember")
    calls = []
    pre = net.register_state_dict_pre_hook(lambda m, prefix, keep: calls.append(("pre", prefix)))

    def post(m, sd, prefix, meta):
        calls.append(("post", prefix))
        sd[prefix + "note"] = et.ones(1)

    net.body.register_state_dict_post_hook(post)
    sd = net.state_dict()
    assert calls == [("pre", ""), ("post", "body.")]
    assert "body.note" in sd
    pre.remove()

    seen = []

    def load_pre(module, state_dict, prefix, *rest):
        seen.append(("pre", type(module).__name__, prefix))
        state_dict.pop(prefix + "note", None)

    def load_post(module, keys):
        seen.append(("post", type(module).__name__, list(keys.missing_keys)))

    net.body.register_load_state_dict_pre_hook(load_pre)
    net.register_load_state_dict_post_hook(load_post)
    net.body.register_load_state_dict_post_hook(load_post)
    sd.pop("mean")
    net.load_state_dict(sd, strict=False)
    assert seen == [
        ("pre", "Sequential", "body."),
        ("post", "Sequential", ["mean"]),
        ("post", "Net", ["mean"]),
    ]
    bad = net.register_load_state_dict_post_hook(lambda m, k: "oops")
    with pytest.raises(AssertionError, match="not expected to return new values"):
        net.load_state_dict(sd, strict=False)
    bad.remove()
    net.register_state_dict_post_hook(lambda *a: 1)
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        net.state_dict()


class WithExtra(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(1, 1)
        self.counter = 0

    def get_extra_state(self):
        return {"counter": self.counter}

    def set_extra_state(self, state):
        self.counter = state["counter"]


def test_extra_state() -> None:
    a = WithExtra()
    a.counter = 7
    sd = a.state_dict()
    assert list(sd) == ["_extra_state", "lin.weight", "lin.bias"]  # own state first
    b = WithExtra()
    b.load_state_dict(sd)
    assert b.counter == 7
    del sd["_extra_state"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        b.load_state_dict(sd)
    plain = nn.Sequential(nn.Linear(1, 1))
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\).*"0._extra_state"'):
        plain.load_state_dict({**plain.state_dict(), "0._extra_state": 1})


def test_torch_save_files_load_into_ember_modules(tmp_path):
    import torch

    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    path = tmp_path / "model.pt"
    torch.save({"model": tmodel.state_dict(), "param": torch.nn.Parameter(torch.ones(2))},
               path)
    ckpt = et.load(path)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    model.load_state_dict(ckpt["model"])
    x = torch.randn(5, 3)
    np.testing.assert_allclose(model(et.tensor(x.numpy())).detach().numpy(),
                               tmodel(x).detach().numpy(), rtol=1e-6, atol=1e-6)
    assert ckpt["param"].requires_grad and ckpt["param"].tolist() == [1.0, 1.0]
