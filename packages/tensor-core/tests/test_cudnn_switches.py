"""ember_tensor.backends.cudnn (ember.backends.cudnn): the cuDNN switches, without a GPU.

The switches' defaults (PyTorch's), setting and reading them, their type check, ``flags()``
as a context manager, and ``is_available()`` / ``version()`` on a machine without a CUDA
device (False / None, with a reason). The convolutions themselves, with cuDNN on and off,
are tested on a GPU by test_cuda_ops_cudnn.py.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

import ember_tensor as et
import ember_tensor.backends
import ember_tensor.cuda
from ember_tensor import _C
from ember_tensor.backends import cudnn

pytestmark = pytest.mark.usefixtures("ember_only")

NAMES = ("enabled", "benchmark", "deterministic", "allow_tf32")
DEFAULTS = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True}
no_cuda = pytest.mark.skipif(
    ember_tensor.cuda.is_available(), reason="tests the behaviour without a CUDA device"
)


@pytest.fixture(autouse=True)
def restore_flags():
    """Every test leaves the switches as it found them."""
    saved = _C._cudnn_flags()
    yield
    _C._cudnn_set_flags(*saved)


def current() -> dict[str, bool]:
    return {name: getattr(cudnn, name) for name in NAMES}


def test_defaults_in_a_fresh_process() -> None:
    code = (
        "import ember_tensor.backends.cudnn as c; "
        "print(c.enabled, c.benchmark, c.deterministic, c.allow_tf32)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False", "False", "True"]


def test_defaults_match_pytorch() -> None:
    torch_cudnn = pytest.importorskip("torch.backends.cudnn")
    assert DEFAULTS == {name: getattr(torch_cudnn, name) for name in NAMES}


def test_reachable_as_backends_attribute() -> None:
    assert ember_tensor.backends.cudnn is cudnn
    assert "cudnn" in ember_tensor.backends.__all__
    if importlib.util.find_spec("ember") is None:
        pytest.skip("the ember meta-package is not installed")
    # in its own process: importing the meta-package installs autograd
    code = "import ember, ember_tensor.backends.cudnn as c; print(ember.backends.cudnn is c)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


@pytest.mark.parametrize("name", NAMES)
def test_each_switch_sets_and_reads_back(name) -> None:
    before = current()
    for value in (not DEFAULTS[name], DEFAULTS[name], not DEFAULTS[name]):
        setattr(cudnn, name, value)
        assert getattr(cudnn, name) is value
        assert _C._cudnn_flags()[NAMES.index(name)] is value
        # the other switches are untouched
        assert {k: v for k, v in current().items() if k != name} == {
            k: v for k, v in before.items() if k != name
        }


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("value", [1, 0, None, "yes", np.bool_(True)])
def test_switches_take_only_bools(name, value) -> None:
    before = current()
    with pytest.raises(TypeError, match=rf"cudnn\.{name} expects a bool, but got"):
        setattr(cudnn, name, value)
    assert current() == before


def test_flags_sets_all_four_and_restores() -> None:
    cudnn.benchmark = True
    before = current()
    with cudnn.flags(enabled=True, benchmark=False, deterministic=True, allow_tf32=False):
        assert current() == {
            "enabled": True,
            "benchmark": False,
            "deterministic": True,
            "allow_tf32": False,
        }
    assert current() == before


def test_flags_defaults_are_pytorchs() -> None:
    # torch.backends.cudnn.flags() defaults to enabled=False; so does Ember's
    before = current()
    with cudnn.flags():
        assert current() == {
            "enabled": False,
            "benchmark": False,
            "deterministic": False,
            "allow_tf32": True,
        }
    assert current() == before


def test_flags_restores_after_an_exception() -> None:
    before = current()
    with pytest.raises(ValueError, match="inside"):
        with cudnn.flags(enabled=False, benchmark=True):
            raise ValueError("inside")
    assert current() == before


def test_flags_checks_its_arguments() -> None:
    before = current()
    with pytest.raises(TypeError, match="benchmark expects a bool"):
        with cudnn.flags(enabled=True, benchmark=1):
            pass
    assert current() == before


def test_repr_shows_the_switches() -> None:
    cudnn.deterministic = True
    text = repr(cudnn)
    assert "ember_tensor.backends.cudnn" in text
    assert "deterministic=True" in text and "enabled=" in text


@no_cuda
def test_unavailable_without_a_cuda_device() -> None:
    assert cudnn.is_available() is False
    assert cudnn.version() is None
    reason = cudnn._unavailable_reason()
    assert isinstance(reason, str) and reason
    # the switches still work
    cudnn.enabled = False
    assert cudnn.enabled is False


@no_cuda
def test_unavailable_reason_names_the_missing_piece() -> None:
    reason = cudnn._unavailable_reason()
    if not ember_tensor.cuda.is_built():
        assert "built without CUDA" in reason
    else:
        assert "CUDA device" in reason or "cuDNN" in reason


def test_version_is_an_int_when_available() -> None:
    v = cudnn.version()
    if cudnn.is_available():
        assert isinstance(v, int) and v >= 90000
        assert cudnn._unavailable_reason() == ""
    else:
        assert v is None


def test_is_acceptable() -> None:
    x = et.ones(1, 1, 3, 3)
    assert cudnn.is_acceptable(x) is False  # a CPU tensor
    if cudnn.is_available():
        gpu = x.to("cuda")
        assert cudnn.is_acceptable(gpu) is True
        assert cudnn.is_acceptable(gpu.to(et.int64)) is False
        with cudnn.flags(enabled=False):
            assert cudnn.is_acceptable(gpu) is False


@pytest.mark.parametrize("enabled", [True, False])
def test_cpu_convolutions_ignore_the_switches(enabled) -> None:
    rng = np.random.default_rng(0)
    x = et.tensor(rng.standard_normal((2, 4, 7, 7)))
    w = et.tensor(rng.standard_normal((6, 2, 3, 3)))
    want = et.conv2d(x, w, None, 2, 1, 1, 2).numpy()
    with cudnn.flags(enabled=enabled, benchmark=True, deterministic=True):
        got = et.conv2d(x, w, None, 2, 1, 1, 2).numpy()
    np.testing.assert_array_equal(got, want)


def test_bindings_exist_in_every_build() -> None:
    assert len(_C._cudnn_flags()) == 4
    assert isinstance(_C._cudnn_version(), int)
    assert isinstance(_C._cudnn_unavailable_reason(), str)
