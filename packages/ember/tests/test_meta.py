"""The meta-package re-exports the tensor core and loads nothing else."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import ember
import ember_tensor

COMPONENT_MODULES = ("ember_autograd", "ember_nn", "ember_optim", "ember_data", "ember_mp")


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


@pytest.mark.parametrize(
    ("attr", "distribution"),
    [
        ("nn", "ember-nn"),
        ("optim", "ember-optim"),
        ("autograd", "ember-autograd"),
        ("data", "ember-data"),
        ("multiprocessing", "ember-mp"),
        ("no_grad", "ember-autograd"),
    ],
)
def test_missing_component_names_its_distribution(attr: str, distribution: str) -> None:
    with pytest.raises(AttributeError, match=rf"ember\.{attr} is provided by {distribution}"):
        getattr(ember, attr)
    assert not hasattr(ember, attr)


def test_unknown_attribute() -> None:
    with pytest.raises(AttributeError, match="module 'ember' has no attribute 'no_such_thing'"):
        ember.no_such_thing  # noqa: B018


def test_from_import_of_missing_component() -> None:
    with pytest.raises(ImportError):
        from ember import nn  # noqa: F401
