"""The conformance kit of Ember's ``nn`` slot: a pytest plugin, enabled explicitly.

    python -m pytest -p ember_nn.conformance [--nn-provider=MODULE] [--nn-xfail=FILE]

Run from any directory: the plugin adds one aggregate test class, ``TestNNConformance``,
to whatever else pytest collects there (nothing else in an empty directory; the package's
own tests when run from ``packages/nn``). Its tests check the Module protocol that makes an
implementation a drop-in ``ember.nn``: registration of parameters, buffers and submodules
(by attribute and by method, removal, errors), iteration (names, order, duplicates),
``state_dict``/``load_state_dict`` (round trip, strictness, messages, ``assign``), forward
and full backward hooks, ``train``/``eval``, ``zero_grad``, ``requires_grad_``, dtype
conversion, containers, and a few layers and functions against hand-computed NumPy values.

Options:

``--nn-provider=MODULE``
    The implementation under test: an importable module exposing the nn interface
    (``Module``, ``Parameter``, ``Buffer``, the containers, ``Linear``, ``ReLU``,
    ``MSELoss``, ``functional``, ``init``, ``utils``, ...) and ``INTERFACE_VERSION``. It
    works on ``ember_tensor`` tensors and the installed autograd provider. Default:
    ``ember_nn``.

``--nn-xfail=FILE``
    Expected failures. Every non-blank line that does not start with ``#`` reads
    ``<test id> : <reason>``, where the test id is ``TestNNConformance::test_name`` (with
    ``[param]`` for a parametrized one; the full node id is accepted too). A line without a
    reason, or naming a test the kit does not have, is a usage error. Each listed test is
    marked ``xfail(strict=True)`` with its reason: it must fail, and a fix that makes it
    pass is reported (as a failure) until its line is removed. The terminal summary counts
    the kit's outcomes and lists the expected failures.
"""

from __future__ import annotations

import copy
import math
from collections import OrderedDict

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor.conformance_kit import define_kit

KIT_NODEID = "ember_nn.conformance"
CLASS_NAME = "TestNNConformance"
INTERFACE_VERSION = 1

# the names a provider must expose (its module's attributes)
INTERFACE_NAMES = (
    "Module",
    "Parameter",
    "Buffer",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "ParameterDict",
    "Identity",
    "Linear",
    "Bilinear",
    "Flatten",
    "Unflatten",
    "Dropout",
    "ReLU",
    "LeakyReLU",
    "ELU",
    "GELU",
    "SiLU",
    "Sigmoid",
    "Tanh",
    "Softplus",
    "Softmax",
    "LogSoftmax",
    "Hardtanh",
    "MSELoss",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "KLDivLoss",
    "CosineEmbeddingLoss",
    "functional",
    "init",
    "utils",
)


# --------------------------------------------------------------------------------------
# The plugin (its plumbing: ember_tensor.conformance_kit)

# the pytest plugin: its hooks come from ember_tensor.conformance_kit
_KIT = define_kit(globals(), component="nn", class_name=CLASS_NAME,
                  default_provider="ember_nn")


# --------------------------------------------------------------------------------------
# Helpers of the tests


def _np(t) -> np.ndarray:
    return np.array(t.detach().numpy())


def _t(values, requires_grad: bool = False):
    return et.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def _close(actual, expected, what: str, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    assert actual is not None, f"{what}: got None"
    got = _np(actual)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, expected {expected.shape}"
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=what)


# --------------------------------------------------------------------------------------
# The aggregate test class


class TestNNConformance:
    """What an ``nn`` provider must do. ``self.nn`` is the provider under test."""

    @pytest.fixture(autouse=True)
    def _provider(self, request: pytest.FixtureRequest):
        self.nn = request.config.stash[_KIT].provider

    def _net(self):
        """Linear(3, 4) -> ReLU -> Linear(4, 2) in float64, with a buffer and a
        non-persistent buffer, built with the provider's classes."""
        nn = self.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(3, 4)
                self.act = nn.ReLU()
                self.fc2 = nn.Linear(4, 2)
                self.register_buffer("offset", et.zeros(2, dtype=et.float64))
                self.register_buffer("scratch", et.zeros(1), persistent=False)

            def forward(self, x):
                return self.fc2(self.act(self.fc1(x))) + self.offset

        return Net().double()

    # -- the interface -------------------------------------------------------------------

    @pytest.mark.parametrize("name", INTERFACE_NAMES)
    def test_interface_name(self, name: str) -> None:
        assert hasattr(self.nn, name), f"the provider has no {name!r}"

    def test_interface_version(self) -> None:
        assert getattr(self.nn, "INTERFACE_VERSION", None) == INTERFACE_VERSION

    # -- Parameter and Buffer ------------------------------------------------------------

    def test_parameter(self) -> None:
        data = et.ones(2, 3)
        p = self.nn.Parameter(data)
        assert isinstance(p, self.nn.Parameter) and isinstance(p, et.Tensor)
        assert p.requires_grad and p.is_leaf
        assert p.data_ptr() == data.data_ptr(), "Parameter(data) must share data's storage"
        assert not isinstance(p.detach(), self.nn.Parameter)
        assert not isinstance(p * 2, self.nn.Parameter)
        assert not self.nn.Parameter(et.ones(1), requires_grad=False).requires_grad
        assert repr(p).startswith("Parameter containing:\ntensor(")
        q = copy.deepcopy(p)
        assert isinstance(q, self.nn.Parameter) and q.data_ptr() != p.data_ptr()

    def test_buffer(self) -> None:
        b = self.nn.Buffer(et.ones(2), persistent=False)
        assert isinstance(b, self.nn.Buffer) and not isinstance(b, self.nn.Parameter)
        m = self.nn.Module()
        m.stat = b
        assert "stat" in dict(m.named_buffers()) and "stat" not in m.state_dict()
        m.kept = self.nn.Buffer(et.ones(1))
        assert "kept" in m.state_dict()

    # -- registration ------------------------------------------------------------------

    def test_registration_by_attribute(self) -> None:
        nn = self.nn
        m = nn.Module()
        m.w = nn.Parameter(et.ones(2))
        m.child = nn.Linear(2, 2)
        m.register_buffer("b", et.zeros(1))
        m.plain = et.ones(1)  # a plain tensor attribute is not registered
        assert [n for n, _ in m.named_parameters()] == ["w", "child.weight", "child.bias"]
        assert [n for n, _ in m.named_buffers()] == ["b"]
        assert [n for n, _ in m.named_children()] == ["child"]
        assert m.w is dict(m.named_parameters())["w"]
        del m.w
        assert "w" not in dict(m.named_parameters())
        m.child = None
        assert list(m.named_children()) == []

    def test_registration_methods_and_errors(self) -> None:
        nn = self.nn
        m = nn.Module()
        m.register_parameter("p", nn.Parameter(et.ones(1)))
        m.add_module("a", nn.ReLU())
        m.register_module("b", nn.Tanh())
        assert [n for n, _ in m.named_children()] == ["a", "b"]
        m.x = 1
        with pytest.raises(KeyError, match="attribute 'x' already exists"):
            m.register_parameter("x", None)
        with pytest.raises(KeyError, match="buffer name can"):
            m.register_buffer("a.b", None)
        with pytest.raises(TypeError, match="cannot assign"):
            m.register_parameter("q", et.ones(1))
        with pytest.raises(TypeError, match="is not a Module subclass"):
            m.add_module("c", 3)
        with pytest.raises(TypeError, match="as parameter 'p'"):
            m.p = et.ones(1)

    def test_get_submodule_parameter_buffer(self) -> None:
        net = self._net()
        assert net.get_submodule("fc1") is net.fc1
        assert net.get_parameter("fc2.bias") is net.fc2.bias
        assert net.get_buffer("offset") is net.offset
        with pytest.raises(AttributeError, match="has no attribute `nope`"):
            net.get_submodule("nope")
        with pytest.raises(AttributeError, match="is not an nn.Parameter"):
            net.get_parameter("offset")

    def test_named_members_and_duplicates(self) -> None:
        nn = self.nn
        shared = nn.Linear(2, 2)
        net = nn.Sequential(shared, nn.ReLU(), shared)
        assert [n for n, _ in net.named_parameters()] == ["0.weight", "0.bias"]
        assert len(list(net.named_parameters(remove_duplicate=False))) == 4
        assert [n for n, _ in net.named_modules()] == ["", "0", "1"]
        assert [n for n, _ in net.named_modules(prefix="m")] == ["m", "m.0", "m.1"]
        assert list(net.modules())[0] is net
        assert [n for n, _ in net.named_parameters(prefix="x", recurse=False)] == []

    # -- state dict ----------------------------------------------------------------------

    def test_state_dict_keys_and_detach(self) -> None:
        net = self._net()
        sd = net.state_dict()
        assert isinstance(sd, OrderedDict)
        assert list(sd) == ["offset", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
        assert not any(v.requires_grad for v in sd.values())
        assert sd["fc1.weight"].data_ptr() == net.fc1.weight.data_ptr()
        assert net.state_dict(keep_vars=True)["fc1.weight"] is net.fc1.weight
        assert list(net.state_dict(prefix="net."))[0] == "net.offset"

    def test_state_dict_round_trip(self) -> None:
        a, b = self._net(), self._net()
        x = _t(np.arange(6.0).reshape(2, 3) / 6)
        result = b.load_state_dict(a.state_dict())
        assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
        _close(b(x), _np(a(x)), "output after loading")
        assert isinstance(b.fc1.weight, self.nn.Parameter) and b.fc1.weight.requires_grad

    def test_load_state_dict_strict_errors(self) -> None:
        net = self._net()
        sd = dict(net.state_dict())
        del sd["fc1.bias"]
        sd["fc3.weight"] = et.ones(1)
        with pytest.raises(RuntimeError) as info:
            net.load_state_dict(sd)
        assert str(info.value) == (
            "Error(s) in loading state_dict for Net:\n"
            '\tMissing key(s) in state_dict: "fc1.bias". \n'
            '\tUnexpected key(s) in state_dict: "fc3.weight". '
        )
        result = net.load_state_dict(sd, strict=False)
        assert list(result.missing_keys) == ["fc1.bias"]
        assert list(result.unexpected_keys) == ["fc3.weight"]

    def test_load_state_dict_size_mismatch(self) -> None:
        net = self._net()
        sd = dict(net.state_dict())
        sd["fc2.bias"] = et.ones(3, dtype=et.float64)
        with pytest.raises(RuntimeError, match="size mismatch for fc2.bias: copying a param "
                                               "with shape .*3.* from checkpoint, the shape in "
                                               "current model is .*2"):
            net.load_state_dict(sd)

    def test_load_state_dict_assign(self) -> None:
        net = self._net()
        sd = {k: v.clone() for k, v in net.state_dict().items()}
        net.load_state_dict(sd, assign=True)
        assert net.fc1.weight.data_ptr() == sd["fc1.weight"].data_ptr()
        assert isinstance(net.fc1.weight, self.nn.Parameter) and net.fc1.weight.requires_grad

    # -- calling and hooks -----------------------------------------------------------------

    def test_forward_hooks(self) -> None:
        nn = self.nn
        m = nn.Identity()
        log = []
        h = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        m.register_forward_hook(lambda mod, args, out: out + 1)
        m.register_forward_hook(lambda mod, args, out: log.append("first"), prepend=True)
        m.register_forward_pre_hook(
            lambda mod, args, kwargs: log.append(sorted(kwargs)), with_kwargs=True
        )
        _close(m(_t([1.0])), [3.0], "pre-hook doubles, hook adds one")
        assert log == [[], "first"]
        h.remove()
        _close(m(_t([1.0])), [2.0], "after removing the pre-hook")

    def test_always_call_hook(self) -> None:
        nn = self.nn

        class Boom(nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        m, seen = Boom(), []
        m.register_forward_hook(lambda mod, args, out: seen.append("plain"))
        m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
        with pytest.raises(ValueError, match="boom"):
            m(_t([1.0]))
        assert seen == [None]

    def test_full_backward_hooks(self) -> None:
        nn = self.nn
        lin = nn.Linear(2, 1, bias=False).double()
        with_grad = _t([[1.0, 2.0]], requires_grad=True)
        seen = {}

        def pre(mod, grad_output):
            seen["grad_output"] = _np(grad_output[0])
            return (grad_output[0] * 3,)

        def hook(mod, grad_input, grad_output):
            seen["grad_input"] = _np(grad_input[0])

        lin.register_full_backward_pre_hook(pre)
        lin.register_full_backward_hook(hook)
        lin(with_grad).sum().backward()
        w = _np(lin.weight)
        np.testing.assert_allclose(seen["grad_output"], [[1.0]])
        np.testing.assert_allclose(seen["grad_input"], 3 * w)
        _close(with_grad.grad, 3 * w, "the replaced grad_output reaches the input")
        _close(lin.weight.grad, 3 * np.array([[1.0, 2.0]]), "and the weight")

    # -- modes and gradients ---------------------------------------------------------------

    def test_train_eval(self) -> None:
        nn = self.nn
        net = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(0.5)))
        assert all(m.training for m in net.modules())
        assert net.eval() is net and not any(m.training for m in net.modules())
        x = et.ones(4, 2)
        drop = net[1][0]
        assert drop(x) is x or (_np(drop(x)) == 1).all(), "Dropout is the identity in eval"
        net.train()
        assert all(m.training for m in net.modules())

    def test_zero_grad_and_requires_grad(self) -> None:
        net = self._net()
        net(_t(np.ones((2, 3)))).sum().backward()
        assert all(p.grad is not None for p in net.parameters())
        net.zero_grad(set_to_none=False)
        assert all(float(p.grad.abs().sum()) == 0.0 for p in net.parameters())
        net.zero_grad()
        assert all(p.grad is None for p in net.parameters())
        net.requires_grad_(False)
        assert not any(p.requires_grad for p in net.parameters())

    def test_dtype_conversion(self) -> None:
        net = self._net().float()
        assert all(p.dtype == et.float32 for p in net.parameters())
        assert all(isinstance(p, self.nn.Parameter) for p in net.parameters())
        net.to(et.float64)
        assert all(p.dtype == et.float64 for p in net.parameters())
        assert net.offset.dtype == et.float64
        with pytest.raises(TypeError, match="floating point"):
            net.to(et.int64)

    def test_apply_and_repr(self) -> None:
        nn = self.nn
        net = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
        names = []
        net.apply(lambda m: names.append(type(m).__name__))
        assert names == ["Linear", "ReLU", "Sequential"]
        assert repr(net) == (
            "Sequential(\n"
            "  (0): Linear(in_features=3, out_features=4, bias=True)\n"
            "  (1): ReLU()\n"
            ")"
        )

    # -- containers ----------------------------------------------------------------------

    def test_containers(self) -> None:
        nn = self.nn
        seq = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid())
        assert len(seq) == 3 and type(seq[1:]).__name__ == "Sequential" and len(seq[1:]) == 2
        del seq[0]
        assert [type(m).__name__ for m in seq] == ["Tanh", "Sigmoid"]
        ml = nn.ModuleList([nn.Linear(1, 1)])
        ml.append(nn.Linear(1, 1))
        assert len(list(ml.parameters())) == 4
        md = nn.ModuleDict({"a": nn.ReLU()})
        assert "a" in md and list(md.keys()) == ["a"]
        pl = nn.ParameterList([et.ones(1)])
        assert isinstance(pl[0], nn.Parameter)
        pd = nn.ParameterDict({"w": et.ones(1)})
        assert isinstance(pd["w"], nn.Parameter)

    # -- layers and functions against NumPy ------------------------------------------------

    def test_linear_values_and_init(self) -> None:
        lin = self.nn.Linear(4, 3).double()
        bound = 1 / math.sqrt(4)
        assert np.abs(_np(lin.weight)).max() <= bound and np.abs(_np(lin.bias)).max() <= bound
        x = np.arange(8.0).reshape(2, 4) / 8
        w, b = _np(lin.weight), _np(lin.bias)
        xt = _t(x, requires_grad=True)
        out = lin(xt)
        _close(out, x @ w.T + b, "Linear forward")
        out.sum().backward()
        _close(lin.weight.grad, np.ones((3, 2)) @ x, "d/dweight")
        _close(xt.grad, np.ones((2, 3)) @ w, "d/dinput")

    def test_functional_values(self) -> None:
        F = self.nn.functional
        x0 = np.array([-2.0, -0.5, 0.5, 2.0])
        x = _t(x0)
        _close(F.relu(x), np.maximum(x0, 0), "relu")
        _close(F.leaky_relu(x, 0.1), np.where(x0 > 0, x0, 0.1 * x0), "leaky_relu")
        _close(F.elu(x), np.where(x0 > 0, x0, np.expm1(x0)), "elu")
        _close(F.sigmoid(x), 1 / (1 + np.exp(-x0)), "sigmoid")
        _close(F.softplus(x), np.log1p(np.exp(x0)), "softplus")
        _close(F.hardtanh(x), np.clip(x0, -1, 1), "hardtanh")
        _close(F.softmax(x, dim=0), np.exp(x0) / np.exp(x0).sum(), "softmax")
        _close(F.mse_loss(x, _t(np.zeros(4))), (x0**2).mean(), "mse_loss")
        _close(F.l1_loss(x, _t(np.zeros(4)), reduction="sum"), np.abs(x0).sum(), "l1_loss")
        _close(F.one_hot(et.tensor([0, 2]), 3), [[1, 0, 0], [0, 0, 1]], "one_hot")
        _close(F.pad(_t([[1.0, 2.0]]), (1, 1)), [[0.0, 1.0, 2.0, 0.0]], "pad")

    def test_loss_module_and_reduction(self) -> None:
        nn = self.nn
        x, t = _t([0.0, 2.0], requires_grad=True), _t([1.0, 1.0])
        loss = nn.MSELoss(reduction="sum")(x, t)
        _close(loss, 2.0, "MSELoss sum")
        loss.backward()
        _close(x.grad, [-2.0, 2.0], "d/dx")
        with pytest.raises(ValueError, match="is not a valid value for reduction"):
            nn.MSELoss(reduction="avg")(x, t)

    def test_init_and_utils(self) -> None:
        nn = self.nn
        assert nn.init.calculate_gain("relu") == math.sqrt(2.0)
        p = nn.Parameter(et.empty(3, 3, dtype=et.float64))
        assert nn.init.eye_(p) is p and p.requires_grad
        _close(p, np.eye(3), "eye_")
        p.grad = _t(np.full((3, 3), 1.0))
        total = nn.utils.clip_grad_norm_([p], 1.5)
        _close(total, 3.0, "total norm")
        _close(p.grad, np.full((3, 3), 0.5), "clipped gradient", rtol=1e-6)
