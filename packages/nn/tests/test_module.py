"""The Module protocol, run side by side with torch.nn: registration, iteration, modes,
gradients, conversion, pickling and repr."""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import pytest
import torch

import ember_nn as nn
import ember_tensor as et
from nn_testing import np_of, torch_repr

LIBS = pytest.mark.parametrize("lib", ["ember", "torch"])


def libs(name: str):
    """(nn module, tensor module) of one library."""
    return (nn, et) if name == "ember" else (torch.nn, torch)


def build(name: str):
    """A small model with nesting, a shared submodule, a shared parameter, buffers (one
    non-persistent), a None parameter and a None submodule."""
    N, T = libs(name)

    class Block(N.Module):
        def __init__(self):
            super().__init__()
            self.fc = N.Linear(3, 3)
            self.act = N.ReLU()
            self.register_buffer("steps", T.zeros(1))
            self.register_buffer("cache", T.ones(2), persistent=False)

        def forward(self, x):
            return self.act(self.fc(x))

    class Net(N.Module):
        def __init__(self):
            super().__init__()
            self.a = Block()
            self.b = Block()
            self.shared = self.a  # the same module twice
            self.head = N.Linear(3, 1, bias=False)
            self.tied = self.head.weight  # the same parameter twice
            self.register_parameter("unused", None)
            self.nothing = None
            self.register_module("gap", None)

        def forward(self, x):
            return self.head(self.b(self.a(x)))

    return Net()


@LIBS
def test_named_members_order_and_duplicates(lib: str) -> None:
    net = build(lib)
    expected_params = ["tied", "a.fc.weight", "a.fc.bias", "b.fc.weight", "b.fc.bias"]
    assert [n for n, _ in net.named_parameters()] == expected_params
    assert [n for n, _ in net.named_parameters(remove_duplicate=False)] == [
        "tied", "a.fc.weight", "a.fc.bias", "b.fc.weight", "b.fc.bias",
        "shared.fc.weight", "shared.fc.bias", "head.weight",
    ]  # fmt: skip
    assert [n for n, _ in net.named_parameters(prefix="m", recurse=False)] == ["m.tied"]
    assert len(list(net.parameters())) == 5
    assert [n for n, _ in net.named_buffers()] == ["a.steps", "a.cache", "b.steps", "b.cache"]
    assert [n for n, _ in net.named_children()] == ["a", "b", "head"]
    assert [n for n, _ in net.named_modules()] == [
        "", "a", "a.fc", "a.act", "b", "b.fc", "b.act", "head",
    ]  # fmt: skip
    assert [n for n, _ in net.named_modules(remove_duplicate=False)] == [
        "", "a", "a.fc", "a.act", "b", "b.fc", "b.act", "shared", "shared.fc", "shared.act",
        "head",
    ]  # fmt: skip
    assert [n for n, _ in net.named_modules(prefix="root")][:2] == ["root", "root.a"]
    assert list(net.modules())[0] is net
    assert next(iter(net.children())) is net.a


def test_members_are_the_same_objects() -> None:
    net = build("ember")
    params = dict(net.named_parameters())
    assert params["tied"] is net.head.weight
    assert params["a.fc.weight"] is net.a.fc.weight is net.shared.fc.weight
    assert net.get_parameter("a.fc.bias") is net.a.fc.bias
    assert net.get_submodule("b.fc") is net.b.fc
    assert net.get_buffer("a.steps") is net.a.steps
    assert net.get_submodule("") is net


def _lookup_errors(name: str) -> list[str]:
    net = build(name)
    out = []
    for call, arg in (
        ("get_submodule", "a.nope"),
        ("get_submodule", "a.fc.weight"),
        ("get_parameter", "a.steps"),
        ("get_parameter", "a.fc.nope"),
        ("get_buffer", "a.fc.weight"),
        ("get_buffer", "nope"),
    ):
        with pytest.raises(AttributeError) as info:
            getattr(net, call)(arg)
        out.append(str(info.value))
    with pytest.raises(AttributeError) as info:
        _ = net.zzz
    out.append(str(info.value))
    return out


def test_lookup_errors_match_torch() -> None:
    assert _lookup_errors("ember") == _lookup_errors("torch")


def _registration_errors(name: str) -> list[str]:
    N, T = libs(name)
    m = N.Module()
    m.x = 1
    out = []
    attempts = [
        lambda: m.register_parameter("a.b", None),
        lambda: m.register_parameter("", None),
        lambda: m.register_parameter("x", None),
        lambda: m.register_parameter(3, None),
        lambda: m.register_buffer("a.b", None),
        lambda: m.register_buffer("", None),
        lambda: m.register_buffer("x", None),
        lambda: m.register_buffer(3, None),
        lambda: m.add_module("a.b", None),
        lambda: m.add_module("", None),
        lambda: m.add_module("x", None),
        lambda: m.add_module(3, None),
        lambda: m.add_module("y", 3),
        lambda: m.register_parameter("p", T.ones(2)),
        lambda: m.register_parameter("p", N.Parameter(T.ones(2)) * 2),
        lambda: m.register_buffer("b", [1.0]),
    ]
    for attempt in attempts:
        try:
            attempt()
        except (KeyError, TypeError, ValueError) as exc:
            out.append(f"{type(exc).__name__}: {exc}")
        else:
            out.append("no error")
    return out


def test_registration_errors_match_torch() -> None:
    theirs = [
        torch_repr(s).replace("(torch Tensor or None", "(ember Tensor or None")
        for s in _registration_errors("torch")
    ]
    assert _registration_errors("ember") == theirs


@LIBS
def test_assignment_registers_and_reassignment_moves(lib: str) -> None:
    N, T = libs(lib)
    m = N.Module()
    m.p = N.Parameter(T.ones(2))
    assert list(m._parameters) == ["p"]
    m.c = N.Linear(1, 1)
    assert list(m._modules) == ["c"]
    m.register_buffer("b", T.ones(1))
    m.b = T.zeros(1)  # a plain tensor assigned to a buffer's name stays a buffer
    assert list(m._buffers) == ["b"] and float(m.b.sum()) == 0.0
    m.b = N.Parameter(T.ones(1))  # ... until a parameter takes the name
    assert "b" not in m._buffers and "b" in m._parameters
    m.c = N.Parameter(T.ones(1))
    assert "c" not in m._modules and "c" in m._parameters
    with pytest.raises(TypeError, match="as parameter 'p'"):
        m.p = N.Linear(1, 1)  # a parameter's name takes parameters (or None) only
    del m.p
    m.p = N.Linear(1, 1)
    assert "p" not in m._parameters and "p" in m._modules
    m.buf = N.Buffer(T.ones(1), persistent=False)
    assert "buf" in m._buffers and "buf" in m._non_persistent_buffers_set
    m.buf = T.ones(3)  # keeps its persistence
    assert "buf" in m._non_persistent_buffers_set
    m.p = None
    assert m._modules["p"] is None
    m.c = None
    assert m._parameters["c"] is None
    with pytest.raises(TypeError, match="as parameter 'c'"):
        m.c = T.ones(1)
    with pytest.raises(TypeError, match="as child module 'p'"):
        m.p = 3
    with pytest.raises(TypeError, match="as buffer 'buf'"):
        m.buf = 3
    del m.c, m.p, m.buf
    assert "c" not in m._parameters and "p" not in m._modules and "buf" not in m._buffers
    assert "buf" not in m._non_persistent_buffers_set
    m.plain = 3
    del m.plain
    with pytest.raises(AttributeError):
        del m.plain


@LIBS
def test_assignment_before_init(lib: str) -> None:
    N, T = libs(lib)

    class Early(N.Module):
        def __init__(self, what):
            if what == "param":
                self.p = N.Parameter(T.ones(1))
            elif what == "module":
                self.m = N.ReLU()
            super().__init__()

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        Early("param")
    with pytest.raises(AttributeError, match="cannot assign module before Module.__init__"):
        Early("module")
    m = N.Module.__new__(N.Module)
    with pytest.raises(AttributeError, match="cannot assign buffer before Module.__init__"):
        m.register_buffer("b", None)
    with pytest.raises(AttributeError, match="cannot assign parameter before Module.__init__"):
        m.register_parameter("b", None)


@LIBS
def test_init_arguments_and_missing_forward(lib: str) -> None:
    N, T = libs(lib)
    with pytest.raises(TypeError, match=r"Module.__init__\(\) takes 1 positional argument but 2"):
        N.Module(3)
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'foo'"):
        N.Module(foo=1)
    with pytest.raises(NotImplementedError, match='Module \\[Module\\] is missing the required '
                                                  '"forward" function'):
        N.Module()(T.ones(1))


@LIBS
def test_train_eval(lib: str) -> None:
    N, _ = libs(lib)
    seen = []

    class Custom(N.Module):
        def train(self, mode=True):
            seen.append(mode)
            return super().train(mode)

    net = N.Sequential(N.Linear(1, 1), N.Sequential(N.Dropout(), Custom()))
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    assert net.train() is net and all(m.training for m in net.modules())
    assert seen == [False, True]  # an override of train() in a child is called
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")


@LIBS
def test_zero_grad_and_requires_grad(lib: str) -> None:
    N, T = libs(lib)
    net = N.Sequential(N.Linear(2, 2), N.Linear(2, 1))
    net(T.ones(3, 2)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and float(p.grad.abs().sum()) == 0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    assert net.requires_grad_(False) is net
    assert not any(p.requires_grad for p in net.parameters())
    net.requires_grad_()
    assert all(p.requires_grad for p in net.parameters())


def test_zero_grad_detaches_a_grad_with_history() -> None:
    lin = nn.Linear(2, 1)
    (g,) = [lin.weight]
    lin(et.ones(1, 2)).square().sum().backward(create_graph=True)
    assert g.grad.requires_grad
    lin.zero_grad(set_to_none=False)
    assert not g.grad.requires_grad and g.grad.grad_fn is None
    assert float(g.grad.abs().sum()) == 0


@LIBS
def test_apply_order(lib: str) -> None:
    N, _ = libs(lib)
    net = N.Sequential(N.Linear(1, 1), N.Sequential(N.ReLU(), N.Tanh()))
    order = []
    assert net.apply(lambda m: order.append(type(m).__name__)) is net
    assert order == ["Linear", "ReLU", "Tanh", "Sequential", "Sequential"]


def test_dtype_conversion() -> None:
    net = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    net.register_buffer("count", et.zeros(1, dtype=et.int64))
    net.register_buffer("scale", et.ones(1))
    w_before = net[0].weight
    net(et.ones(1, 2)).sum().backward()
    assert net.double() is net
    assert all(p.dtype == et.float64 for p in net.parameters())
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in net.parameters())
    assert all(p.grad.dtype == et.float64 for p in net.parameters())
    assert net.count.dtype == et.int64 and net.scale.dtype == et.float64
    assert net[0].weight is not w_before  # see _convert: dtype changes make new Parameters
    np_w = np_of(net[0].weight)
    net.float()
    assert net[0].weight.dtype == et.float32
    assert abs(np_of(net[0].weight) - np_w).max() < 1e-6
    net.half()
    assert net[0].weight.dtype == et.float16 and net.count.dtype == et.int64
    net.bfloat16()
    assert net[0].weight.dtype == et.bfloat16
    net.to(et.float32)
    w = net[0].weight
    assert net.to("cpu") is net and net[0].weight is w  # no change: same objects
    assert net.cpu() is net and net[0].weight is w
    net.to(et.device("cpu"), et.float64)
    assert net[0].weight.dtype == et.float64
    net.to(dtype=et.float32, device="cpu", non_blocking=True)
    assert net[0].weight.dtype == et.float32
    net.to(et.zeros(1, dtype=et.float64))
    assert net[0].weight.dtype == et.float64
    with pytest.raises(TypeError, match="only accepts floating point or complex dtypes"):
        net.to(et.int32)
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        net.to(colour="red")


def test_to_dtype_error_matches_torch() -> None:
    with pytest.raises(TypeError) as ours:
        nn.Linear(1, 1).to(et.int64)
    with pytest.raises(TypeError) as theirs:
        torch.nn.Linear(1, 1).to(torch.int64)
    assert str(ours.value) == torch_repr(str(theirs.value))


@pytest.mark.skipif(et.cuda.is_available(), reason="checks the behaviour without a CUDA device")
def test_cuda_is_a_clear_error_without_cuda() -> None:
    with pytest.raises(RuntimeError, match="cuda"):
        nn.Linear(1, 1).cuda()


def test_same_dtype_conversion_keeps_identity_and_storage_swap() -> None:
    lin = nn.Linear(2, 2)
    w = lin.weight
    lin._apply(lambda t: t.clone())
    assert lin.weight is w


class Tied(nn.Module):
    """A module-level class (picklable): shared module, tied parameter, buffers."""

    def __init__(self):
        super().__init__()
        self.a = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
        self.shared = self.a
        self.head = nn.Linear(3, 1, bias=False)
        self.tied = self.head.weight
        self.register_buffer("cache", et.ones(2), persistent=False)

    def forward(self, x):
        return self.head(self.a(x))


def test_deepcopy_and_pickle_of_a_module() -> None:
    for net in (build("ember"), Tied()):
        _check_copies(net, [copy.deepcopy(net)])
    net = Tied()
    _check_copies(net, [pickle.loads(pickle.dumps(net))])


def _check_copies(net, clones) -> None:
    for clone in clones:
        assert [n for n, _ in clone.named_parameters()] == [
            n for n, _ in net.named_parameters()
        ]
        assert all(isinstance(p, nn.Parameter) for p in clone.parameters())
        assert clone.tied is clone.head.weight  # sharing survives
        assert clone.shared is clone.a
        first, orig = next(clone.parameters()), next(net.parameters())
        assert first is not orig and (np_of(first) == np_of(orig)).all()
        assert "cache" in [n.rsplit(".", 1)[-1] for n, _ in clone.named_buffers()]
        x = et.ones(2, 3)
        assert (np_of(clone(x)) == np_of(net(x))).all()


def test_setstate_fills_missing_dicts() -> None:
    m = nn.Linear(1, 1)
    state = m.__getstate__()
    for key in ("_forward_hooks_always_called", "_state_dict_pre_hooks",
                "_non_persistent_buffers_set", "_backward_pre_hooks"):
        del state[key]
    fresh = nn.Linear.__new__(nn.Linear)
    fresh.__setstate__(state)
    assert fresh._forward_hooks_always_called == OrderedDict()
    assert fresh._non_persistent_buffers_set == set()
    fresh(et.ones(1, 1))


@LIBS
def test_dir(lib: str) -> None:
    N, T = libs(lib)
    net = N.Sequential(N.Linear(1, 1))
    net.register_buffer("buf", T.ones(1))
    names = dir(net)
    assert "buf" in names and "forward" in names and "training" in names
    assert "0" not in names
    lin = N.Linear(1, 1)
    assert {"weight", "bias", "in_features"} <= set(dir(lin))
    assert dir(lin) == sorted(dir(lin))


def test_dir_matches_torch_for_a_linear() -> None:
    ours = set(dir(nn.Linear(1, 1)))
    for name in ("weight", "bias", "in_features", "out_features", "training", "forward",
                 "state_dict", "load_state_dict", "parameters", "named_modules", "zero_grad",
                 "register_forward_hook", "register_full_backward_hook", "extra_repr"):
        assert name in ours and name in set(dir(torch.nn.Linear(1, 1))), name


def test_call_runs_forward_with_args_and_kwargs() -> None:
    class Add(nn.Module):
        def forward(self, x, y=0, *, z=0):
            return x + y + z

    assert Add()(et.ones(1), 2, z=3).tolist() == [6.0]


def test_repr_matches_torch() -> None:
    ours, theirs = build("ember"), build("torch")
    assert repr(ours) == repr(theirs)
    assert repr(nn.Module()) == repr(torch.nn.Module()) == "Module()"

    class Multi(nn.Module):
        def extra_repr(self):
            return "first\nsecond"

    class TMulti(torch.nn.Module):
        def extra_repr(self):
            return "first\nsecond"

    m, t = Multi(), TMulti()
    assert repr(m) == repr(t).replace("TMulti", "Multi")
    m.child = nn.Linear(1, 2)
    t.child = torch.nn.Linear(1, 2)
    assert repr(m) == repr(t).replace("TMulti", "Multi")


def test_module_type_casts_every_tensor_as_pytorch():
    import torch

    m = nn.BatchNorm1d(3)
    tm = torch.nn.BatchNorm1d(3)
    assert m.type(et.float64) is m
    tm.type(torch.float64)
    assert {k: str(v.dtype).split(".")[1] for k, v in m.state_dict().items()} == \
        {k: str(v.dtype).split(".")[1] for k, v in tm.state_dict().items()}
    m.type("ember.FloatTensor")
    assert m.weight.dtype == et.float32 and m.num_batches_tracked.dtype == et.float32
