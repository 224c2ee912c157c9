"""PyTorch's ModuleInfo database against ember_nn (tests/moduleinfo/harness.py): every
ModuleInfo that ember_nn passed when moduleinfo/passing.txt was written must still pass
(float64 outputs, buffers after the forward, gradients of the inputs and parameters, in
training and eval mode, against torch in this run), and the harness itself must catch a
wrong module. The score by category comes from tools/moduleinfo_score.py."""

from __future__ import annotations

import pathlib
import types
import warnings

import pytest

pytest.importorskip("torch", reason="the ModuleInfo suite runs PyTorch's modules")
pytest.importorskip("expecttest", reason="PyTorch's module_db imports expecttest (pip install "
                                         "expecttest)")

import torch  # noqa: E402

import ember  # noqa: E402
import ember_nn  # noqa: E402
from moduleinfo import harness  # noqa: E402

PASSING = [line.strip() for line in
           (pathlib.Path(__file__).parent / "moduleinfo" / "passing.txt").read_text().splitlines()
           if line.strip() and not line.startswith("#")]

# samples per ModuleInfo and mode, spread over each generator's list (the tool scores them
# all): the transformers have ~70 each, LinearCrossEntropyLoss ~850
LIMIT = 8

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.fixture(scope="module")
def infos():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return harness.scored_modules()


@pytest.mark.parametrize("key", PASSING)
def test_moduleinfo_still_passes(infos, key):
    assert key in infos, f"{key} is no longer a ModuleInfo of torch's module_db (or is excluded)"
    got = harness.score(infos[key], limit=LIMIT)
    assert got.scored, f"{key}: torch no longer passes the harness against itself"
    assert got.passed, f"{key}: {got.failure}"


def test_every_exclusion_matches_a_moduleinfo_and_gives_a_reason():
    keys = [harness.key_of(info) for info in harness.module_db()]
    for prefix, why in harness.EXCLUDED_PREFIXES.items():
        assert why and any(k.startswith(prefix) for k in keys), prefix
    assert set(harness.excluded_modules()).isdisjoint(harness.scored_modules())


class _Scaled(ember_nn.ReLU):
    def forward(self, input):
        return super().forward(input) * 1.001


class _DetachedWeight(ember_nn.Linear):
    def forward(self, input):
        return ember_nn.functional.linear(input, self.weight.detach(), self.bias)


class _HalfMomentum(ember_nn.BatchNorm1d):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.momentum is not None:
            self.momentum /= 2  # the running statistics move at half the rate


class _Renamed(ember_nn.Linear):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.kernel = self.weight
        del self.weight

    def forward(self, input):
        return ember_nn.functional.linear(input, self.kernel, self.bias)


@pytest.mark.parametrize(("key", "name", "wrong", "says"), [
    ("ReLU", "ReLU", _Scaled, "output: values differ"),
    ("Linear", "Linear", _DetachedWeight, "grad of weight: "),
    ("BatchNorm1d", "BatchNorm1d", _HalfMomentum, "buffer running_mean after forward"),
    ("Linear", "Linear", _Renamed, "state_dict keys differ: only torch has ['weight']; "
                                   "only Ember has ['kernel']"),
    ("Tanh", "Tanh", None, "missing: ember_nn has no Tanh"),
])
def test_the_harness_catches_a_wrong_module(infos, monkeypatch, key, name, wrong, says):
    """A wrong output, parameter gradient, buffer update or state_dict key, and a missing
    class: each one scored as a failure that says so."""
    if wrong is None:
        monkeypatch.delattr(ember_nn, name)
    else:
        monkeypatch.setattr(ember_nn, name, wrong)
    got = harness.score(infos[key], limit=2)
    assert got.scored and not got.passed
    assert says in got.failure, got.failure


def _dropout_info():
    """A ModuleInfo-like stand-in: torch's Dropout on one input (random in training mode)."""
    from torch.testing._internal.common_modules import FunctionInput, ModuleInput

    def inputs(info, device, dtype, requires_grad, training):
        x = torch.randn(4, 5, dtype=dtype, device=device, requires_grad=requires_grad)
        return [ModuleInput(FunctionInput(0.5), FunctionInput(x))]

    return types.SimpleNamespace(name="nn.Dropout", module_cls=torch.nn.Dropout,
                                 module_inputs_func=inputs)


def test_torch_against_torch_leaves_out_random_samples():
    """Dropout's training-mode sample differs torch against torch: only eval is scored."""
    got = harness.score(_dropout_info())
    assert got.samples == 1 and got.reason.startswith("train sample 0: output: values differ")


def test_convert_keeps_aliasing_and_maps_torch_functions():
    t = torch.ones(2, dtype=torch.float64, requires_grad=True)
    leaves: list = []
    a, b = harness.convert(ember, (t, t), True, leaves)
    assert a is b and len(leaves) == 1 and leaves[0] is a and a.requires_grad
    assert harness.convert(ember, torch.nn.functional.gelu) is ember_nn.functional.gelu
    assert harness.convert(ember, torch.float64) == ember.float64
