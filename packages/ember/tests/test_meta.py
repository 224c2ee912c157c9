"""The meta-package re-exports the tensor core, loads nothing else on import, and resolves
the autograd, nn and optim slots lazily."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap

import pytest

import ember
import ember_tensor

COMPONENT_MODULES = ("ember_autograd", "ember_nn", "ember_optim", "ember_data", "ember_mp",
                     "ember_distributions", "ember_distributed")


def test_core_defines_all() -> None:
    assert isinstance(ember_tensor.__all__, (list, tuple))
    assert len(ember_tensor.__all__) > 0
    assert len(set(ember_tensor.__all__)) == len(ember_tensor.__all__), "duplicate names"


@pytest.mark.parametrize("name", ember_tensor.__all__)
def test_every_core_name_is_reexported(name: str) -> None:
    assert getattr(ember, name) is getattr(ember_tensor, name)
    assert name in ember.__all__
    assert name in dir(ember)


@pytest.mark.parametrize(
    "name",
    [
        "tensor",
        "zeros",
        "ones",
        "randn",
        "arange",
        "from_numpy",
        "matmul",
        "manual_seed",
        "set_num_threads",
        "Tensor",
        "float32",
        "float64",
        "int64",
        "bool",
    ],
)
def test_pytorch_names(name: str) -> None:
    assert getattr(ember, name) is getattr(ember_tensor, name)


def test_identity_of_key_names() -> None:
    assert ember.tensor is ember_tensor.tensor
    assert ember.float32 is ember_tensor.float32
    assert ember.Tensor is ember_tensor.Tensor
    assert isinstance(ember.zeros(2, 3), ember.Tensor)
    assert ember.zeros(2, 3).dtype is ember.float32


def test_all_is_exactly_the_core_names() -> None:
    assert list(ember.__all__) == list(ember_tensor.__all__)


def test_version() -> None:
    from importlib.metadata import version

    assert ember.__version__ == version("ember")


def test_star_import() -> None:
    namespace: dict[str, object] = {}
    exec("from ember import *", namespace)
    assert namespace["tensor"] is ember_tensor.tensor
    assert "nn" not in namespace


def test_import_loads_the_core_only() -> None:
    code = (
        "import json, sys; import ember; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('ember', 'torch')))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    loaded = json.loads(out)
    assert "ember" in loaded and "ember_tensor" in loaded
    for module in COMPONENT_MODULES:
        assert not any(m == module or m.startswith(module + ".") for m in loaded), loaded
    assert not any(m == "torch" or m.startswith("torch.") for m in loaded), loaded


def test_data_is_the_data_slots_provider() -> None:
    import ember_data

    assert ember.data is ember_data and ember.utils.data is ember_data
    out = run_python("import ember.utils.data as d; from ember.data import DataLoader; "
                     "import ember_data; print(d is ember_data, DataLoader is "
                     "ember_data.DataLoader)")
    assert out.split() == ["True", "True"]


def test_multiprocessing_is_the_mp_slots_provider() -> None:
    import ember_mp

    assert ember.multiprocessing is ember_mp
    out = run_python("import ember.multiprocessing as mp, ember_mp; "
                     "print(mp is ember_mp, mp.get_sharing_strategy())")
    assert out.split() == ["True", "file_descriptor"]


# ----------------------------------------------------------------------------- autograd slot

GRAD_MODE_NAMES = (
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
)


def run_python(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout


def test_autograd_is_the_default_provider() -> None:
    import ember_autograd

    assert ember.autograd is ember_autograd
    assert "autograd" in vars(ember)  # cached: the next access is a plain global


@pytest.mark.parametrize("name", GRAD_MODE_NAMES)
def test_grad_mode_names_are_the_providers(name: str) -> None:
    import ember_autograd

    assert getattr(ember, name) is getattr(ember_autograd, name)


def test_grad_mode_names_work() -> None:
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        assert not ember.is_grad_enabled()
        assert not (x * 2).requires_grad
        with ember.enable_grad():
            assert (x * 2).requires_grad
    with ember.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    with ember.inference_mode():
        assert not (x * 2).requires_grad
    assert ember.is_grad_enabled()


def test_autograd_slot_is_declared_as_an_entry_point() -> None:
    from importlib import metadata

    eps = {ep.name: ep for ep in metadata.entry_points(group="ember.slots.autograd")}
    assert eps["ember"].value == "ember_autograd"
    assert eps["ember"].dist is not None and eps["ember"].dist.name == "ember-autograd"


def test_autograd_is_imported_on_first_use_only() -> None:
    code = (
        "import json, sys; import ember; before = 'ember_autograd' in sys.modules; "
        "ng = ember.no_grad; "
        "print(json.dumps([before, 'ember_autograd' in sys.modules, "
        "ng is sys.modules['ember_autograd'].no_grad, 'autograd' in vars(ember)]))"
    )
    assert json.loads(run_python(code)) == [False, True, True, False]


def test_requires_grad_loads_the_provider() -> None:
    code = (
        "import json, sys; import ember; before = 'ember_autograd' in sys.modules; "
        "x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True); (x * x).sum().backward(); "
        "print(json.dumps([before, 'ember_autograd' in sys.modules, x.requires_grad, "
        "x.grad.tolist()]))"
    )
    assert json.loads(run_python(code)) == [False, True, True, [2.0, 4.0, 6.0]]


def test_randn_requires_grad_loads_the_provider() -> None:
    code = (
        "import sys; import ember; x = ember.randn(3, requires_grad=True); "
        "print(x.requires_grad, 'ember_autograd' in sys.modules, "
        "type(x.backward).__name__)"
    )
    assert run_python(code).split() == ["True", "True", "method"]


def test_import_statements_give_the_providers_modules() -> None:
    code = """
import json, sys
import ember
import ember.autograd
import ember.autograd.forward_ad as fwAD
from ember.autograd import Function, grad
from ember.autograd.grad_mode import no_grad
import ember_autograd
print(json.dumps([
    ember.autograd is ember_autograd,
    sys.modules["ember.autograd"] is ember_autograd,
    fwAD is ember_autograd.forward_ad,
    sys.modules["ember.autograd.forward_ad"] is ember_autograd.forward_ad,
    Function is ember_autograd.Function and grad is ember_autograd.grad,
    no_grad is ember_autograd.no_grad,
    ember_autograd.__spec__.name,
]))
"""
    assert json.loads(run_python(code)) == [True] * 6 + ["ember_autograd"]


def test_import_of_a_missing_submodule() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ember.autograd.no_such_module")


class _FakeEntryPoints:
    """Makes importlib.metadata.entry_points show one autograd provider: ``value``."""

    def __init__(self, value: str | None) -> None:
        self.value = value

    def __call__(self, group: str):
        from importlib import metadata

        assert group == "ember.slots.autograd"
        if self.value is None:
            return []
        return [metadata.EntryPoint(name="ember", value=self.value, group=group)]


@pytest.fixture
def unresolved(monkeypatch: pytest.MonkeyPatch, tmp_path):
    """ember with the autograd slot not resolved yet, and tmp_path importable."""
    monkeypatch.setattr(ember, "_providers", {})
    for name in ("autograd", *GRAD_MODE_NAMES):
        monkeypatch.delitem(vars(ember), name, raising=False)
    for name in [m for m in sys.modules if m.split(".")[:2] == ["ember", "autograd"]]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def fake_provider(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    monkeypatch.setattr("importlib.metadata.entry_points", _FakeEntryPoints(value))


def test_provider_that_fails_to_import(unresolved, monkeypatch: pytest.MonkeyPatch) -> None:
    (unresolved / "failing_autograd_provider.py").write_text("raise ValueError('broken build')\n")
    fake_provider(monkeypatch, "failing_autograd_provider")
    with pytest.raises(ember.SlotError) as info:
        ember.no_grad  # noqa: B018
    message = str(info.value)
    assert "slot 'autograd'" in message and "provider 'ember'" in message
    assert "failing_autograd_provider" in message
    assert "ValueError: broken build" in message
    assert "no_grad" not in vars(ember)  # nothing cached


def test_provider_with_another_interface_version(
    unresolved, monkeypatch: pytest.MonkeyPatch
) -> None:
    (unresolved / "old_autograd_provider.py").write_text("INTERFACE_VERSION = 0\n")
    fake_provider(monkeypatch, "old_autograd_provider")
    expected = "implements interface version 0, but this ember needs version 1 of the 'autograd'"
    with pytest.raises(ember.SlotError, match=expected):
        ember.autograd  # noqa: B018


def test_provider_not_installed(unresolved, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_provider(monkeypatch, None)
    expected = r"ember\.autograd is provided by ember-autograd, which is not installed"
    with pytest.raises(AttributeError, match=expected):
        ember.autograd  # noqa: B018
    with pytest.raises(ModuleNotFoundError, match=expected):
        importlib.import_module("ember.autograd")


def test_unknown_attribute() -> None:
    with pytest.raises(AttributeError, match="module 'ember' has no attribute 'no_such_thing'"):
        ember.no_such_thing  # noqa: B018


def test_missing_provider_names_its_distribution(monkeypatch) -> None:
    from importlib import metadata

    monkeypatch.setattr(metadata, "entry_points", lambda group=None: [])
    monkeypatch.delitem(ember._providers, "data", raising=False)
    monkeypatch.delitem(vars(ember), "data", raising=False)
    with pytest.raises(AttributeError, match=r"ember\.data is provided by ember-data, which is "
                                             r"not installed \(slot 'data'"):
        _ = ember.data


# ----------------------------------------------------------------------------- nn slot


def test_nn_is_the_default_provider() -> None:
    import ember_nn

    assert ember.nn is ember_nn
    assert ember.nn.functional is ember_nn.functional
    assert "nn" in vars(ember)


def test_nn_slot_is_declared_as_an_entry_point() -> None:
    from importlib import metadata

    eps = {ep.name: ep for ep in metadata.entry_points(group="ember.slots.nn")}
    assert eps["ember"].value == "ember_nn"
    assert eps["ember"].dist is not None and eps["ember"].dist.name == "ember-nn"


def test_nn_is_imported_on_first_use_only() -> None:
    code = (
        "import json, sys; import ember; before = 'ember_nn' in sys.modules; "
        "lin = ember.nn.Linear(2, 3); "
        "print(json.dumps([before, 'ember_nn' in sys.modules, 'ember_autograd' in sys.modules, "
        "list(lin(ember.ones(4, 2)).shape)]))"
    )
    assert json.loads(run_python(code)) == [False, True, True, [4, 3]]


def test_nn_import_statements_give_the_providers_modules() -> None:
    code = """
import json, sys
import ember
import ember.nn
from ember.nn import functional as F
import ember.nn.functional as F2
import ember.nn.init as init
from ember.nn import Module, Parameter
from ember.nn.utils import clip_grad_norm_
import ember_nn
print(json.dumps([
    ember.nn is ember_nn,
    sys.modules["ember.nn"] is ember_nn,
    F is ember_nn.functional and F2 is ember_nn.functional,
    sys.modules["ember.nn.functional"] is ember_nn.functional,
    init is ember_nn.init,
    Module is ember_nn.Module and Parameter is ember_nn.Parameter,
    clip_grad_norm_ is ember_nn.utils.clip_grad_norm_,
    ember_nn.__spec__.name,
]))
"""
    assert json.loads(run_python(code)) == [True] * 7 + ["ember_nn"]


def test_nn_works_with_the_meta_package() -> None:
    import ember.nn as nn
    from ember.nn import functional as F

    class LinearLayer(nn.Module):
        def __init__(self, in_sz, out_sz):
            super().__init__()
            self.w = nn.Parameter(ember.randn(in_sz, out_sz))
            self.b = nn.Parameter(ember.randn(out_sz))

        def forward(self, activations):
            return ember.mm(activations, self.w) + self.b

    layer = LinearLayer(4, 2)
    loss = F.mse_loss(layer(ember.ones(3, 4)), ember.zeros(3, 2))
    loss.backward()
    assert tuple(layer.w.grad.shape) == (4, 2)
    with ember.no_grad():
        assert not layer(ember.ones(1, 4)).requires_grad


def test_import_of_a_missing_nn_submodule() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ember.nn.no_such_module")


def test_nn_provider_with_another_interface_version(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    from importlib import metadata

    monkeypatch.setattr(ember, "_providers", {})
    monkeypatch.delitem(vars(ember), "nn", raising=False)
    for name in [m for m in sys.modules if m.split(".")[:2] == ["ember", "nn"]]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "old_nn_provider.py").write_text("INTERFACE_VERSION = 0\n")

    def entry_points(group: str):
        assert group == "ember.slots.nn"
        return [metadata.EntryPoint(name="ember", value="old_nn_provider", group=group)]

    monkeypatch.setattr("importlib.metadata.entry_points", entry_points)
    expected = "implements interface version 0, but this ember needs version 1 of the 'nn'"
    with pytest.raises(ember.SlotError, match=expected):
        ember.nn  # noqa: B018


# ----------------------------------------------------------------------------- optim slot


def test_optim_is_the_default_provider() -> None:
    import ember_optim

    assert ember.optim is ember_optim
    assert ember.optim.lr_scheduler is ember_optim.lr_scheduler
    assert "optim" in vars(ember)


def test_optim_slot_is_declared_as_an_entry_point() -> None:
    from importlib import metadata

    eps = {ep.name: ep for ep in metadata.entry_points(group="ember.slots.optim")}
    assert eps["ember"].value == "ember_optim"
    assert eps["ember"].dist is not None and eps["ember"].dist.name == "ember-optim"


def test_optim_is_imported_on_first_use_only() -> None:
    code = (
        "import json, sys; import ember; before = 'ember_optim' in sys.modules; "
        "w = ember.ones(2); w.grad = ember.ones(2); "
        "opt = ember.optim.SGD([w], lr=0.5); opt.step(); "
        "print(json.dumps([before, 'ember_optim' in sys.modules, "
        "'ember_nn' in sys.modules, w.tolist()]))"
    )
    assert json.loads(run_python(code)) == [False, True, False, [0.5, 0.5]]


def test_optim_import_statements_give_the_providers_modules() -> None:
    code = """
import json, sys
import ember
import ember.optim
import ember.optim.lr_scheduler
from ember.optim import SGD, Adam
from ember.optim.lr_scheduler import StepLR
import ember.optim.lr_scheduler as lrs
import ember_optim
print(json.dumps([
    ember.optim is ember_optim,
    sys.modules["ember.optim"] is ember_optim,
    sys.modules["ember.optim.lr_scheduler"] is ember_optim.lr_scheduler,
    lrs is ember_optim.lr_scheduler and ember.optim.lr_scheduler is lrs,
    SGD is ember_optim.SGD and Adam is ember_optim.Adam,
    StepLR is ember_optim.lr_scheduler.StepLR,
    ember_optim.__spec__.name,
]))
"""
    assert json.loads(run_python(code)) == [True] * 6 + ["ember_optim"]


def test_optim_works_with_the_meta_package() -> None:
    import ember.nn as nn
    import ember.optim as optim
    from ember.nn import functional as F
    from ember.optim.lr_scheduler import StepLR

    model = nn.Linear(3, 1)
    opt = optim.Adam(model.parameters(), lr=0.1)
    sched = StepLR(opt, step_size=2, gamma=0.5)
    x, y = ember.randn(16, 3), ember.randn(16, 1)
    losses = []
    for _ in range(4):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert sched.get_last_lr() == [0.025]
    assert model.weight.is_leaf and model.weight.grad_fn is None
    assert set(opt.state_dict()["state"]) == {0, 1}


def test_import_of_a_missing_optim_submodule() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ember.optim.no_such_module")


def test_optim_provider_with_another_interface_version(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    from importlib import metadata

    monkeypatch.setattr(ember, "_providers", {})
    monkeypatch.delitem(vars(ember), "optim", raising=False)
    for name in [m for m in sys.modules if m.split(".")[:2] == ["ember", "optim"]]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "old_optim_provider.py").write_text("INTERFACE_VERSION = 0\n")

    def entry_points(group: str):
        assert group == "ember.slots.optim"
        return [metadata.EntryPoint(name="ember", value="old_optim_provider", group=group)]

    monkeypatch.setattr("importlib.metadata.entry_points", entry_points)
    expected = "implements interface version 0, but this ember needs version 1 of the 'optim'"
    with pytest.raises(ember.SlotError, match=expected):
        ember.optim  # noqa: B018


def test_optim_provider_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ember, "_providers", {})
    monkeypatch.delitem(vars(ember), "optim", raising=False)
    for name in [m for m in sys.modules if m.split(".")[:2] == ["ember", "optim"]]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [])
    expected = r"ember\.optim is provided by ember-optim, which is not installed"
    with pytest.raises(AttributeError, match=expected):
        ember.optim  # noqa: B018
    with pytest.raises(ModuleNotFoundError, match=expected):
        importlib.import_module("ember.optim.lr_scheduler")


def test_func_functional_call_matches_torch():
    import numpy as np
    import torch

    from ember.func import functional_call

    lin = ember.nn.Linear(3, 2)
    tlin = torch.nn.Linear(3, 2)
    w = np.arange(6.0, dtype="float32").reshape(2, 3)
    x = np.ones((4, 3), dtype="float32")
    got = functional_call(lin, {"weight": ember.tensor(w)}, (ember.tensor(x),))
    want = torch.func.functional_call(tlin, {"weight": torch.tensor(w),
                                            "bias": torch.tensor(lin.bias.tolist())},
                                      (torch.tensor(x),))
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)
    assert lin.weight.tolist() != w.tolist()  # the module's own weight is back
    import importlib

    for name in ("accelerator", "compiler", "jit"):
        assert importlib.import_module(f"ember.{name}") is getattr(ember, name)


def test_distributed_imports_without_its_component() -> None:
    # as torch.distributed in a PyTorch built without distributed support: programs that
    # guard their distributed code with is_available() / is_initialized() run on one process.
    # In a child where the slot has no provider (as without ember-distributed installed).
    code = textwrap.dedent("""
        import ember
        def missing(slot, _real=ember._resolve):
            if slot == "distributed":
                raise ModuleNotFoundError("not installed")
            return _real(slot)
        ember._resolve = missing
        import ember.distributed as dist
        from ember import distributed
        assert distributed is dist
        assert dist.is_available() is False and dist.is_initialized() is False
        try:
            dist.init_process_group("gloo")
        except AttributeError as e:
            print(e)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "init_process_group needs the ember-distributed" in proc.stdout


def test_distributed_is_the_default_provider_and_ddp_is_in_nn_parallel() -> None:
    import ember.distributed as dist
    import ember_distributed
    from ember_distributed.parallel import DistributedDataParallel

    assert dist is ember_distributed and ember.distributed is ember_distributed
    assert ember.nn.parallel.DistributedDataParallel is DistributedDataParallel
    from ember.nn.parallel import DistributedDataParallel as D

    assert D is DistributedDataParallel
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        ember.nn.parallel.Nope  # noqa: B018
    proc = subprocess.run([sys.executable, "-m", "ember.distributed.run", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "--nproc-per-node" in proc.stdout, proc.stderr


# ----------------------------------------------------------------------------- distributions slot


def test_distributions_is_the_default_provider() -> None:
    import ember_distributions

    assert ember.distributions is ember_distributions
    assert ember.distributions.Normal is ember_distributions.Normal
    assert "distributions" in vars(ember)


def test_distributions_slot_is_declared_as_an_entry_point() -> None:
    from importlib import metadata

    eps = {ep.name: ep for ep in metadata.entry_points(group="ember.slots.distributions")}
    assert eps["ember"].value == "ember_distributions"
    assert eps["ember"].dist is not None and eps["ember"].dist.name == "ember-distributions"


def test_distributions_import_statements_give_the_providers_modules() -> None:
    code = """
import json, sys
import ember
before = "ember_distributions" in sys.modules
import ember.distributions as D
from ember.distributions import constraints, transforms, kl_divergence
import ember_distributions
x = ember.tensor([0.5], requires_grad=True)
lp = D.Normal(x, ember.ones(1)).log_prob(ember.zeros(1)).sum()
lp.backward()
print(json.dumps([
    before,
    D is ember_distributions,
    sys.modules["ember.distributions"] is ember_distributions,
    constraints is ember_distributions.constraints,
    transforms is ember_distributions.transforms,
    kl_divergence is ember_distributions.kl_divergence,
    abs(x.grad.item() + 0.5) < 1e-6,
]))
"""
    assert json.loads(run_python(code)) == [False] + [True] * 6


def test_backends_import_as_modules():
    import importlib

    cudnn = importlib.import_module("ember.backends.cudnn")
    assert cudnn is ember.backends.cudnn
    assert importlib.import_module("ember.backends.mps").is_available() is False
    assert importlib.import_module("ember.sparse") is ember.sparse


def test_onnx_is_importable_without_an_exporter():
    # PyTorch programs import torch.onnx at their top (the word-language-model example) and
    # model code asks is_in_onnx_export(); exporting is a clear NotImplementedError
    import ember
    import ember.onnx

    assert ember.onnx is sys.modules["ember.onnx"]
    assert ember.onnx.is_in_onnx_export() is False
    with pytest.raises(NotImplementedError, match=r"ember\.onnx\.export: Ember has no ONNX"):
        ember.onnx.export(ember.nn.Linear(2, 1), (ember.ones(1, 2),), "model.onnx")
    with pytest.raises(NotImplementedError, match="dynamo_export"):
        ember.onnx.dynamo_export(ember.nn.Linear(2, 1), ember.ones(1, 2))
