"""Each Table 1 model in Ember against its PyTorch twin, with the twin's weights copied in:
the same parameter names and shapes, the same outputs, loss and gradients.

Small sizes (few classes, small images, small GNMT and NCF) keep the run short. Evaluation
mode is compared directly, and so is training mode (dropout off) for the models without
batch norm. With batch norm (ResNet-50, MobileNetV2), training mode normalises over a few
values per channel at these sizes, which makes the networks ill-conditioned in float32: both
libraries' float32 gradients are a few tenths of a percent off a float64 run, and a one-ulp
change of one weight can move them by a percent. There training mode is compared through a
float64 PyTorch run, and the gradients are also compared directly in evaluation mode.

    python -m pytest benchmarks/models/test_models.py
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ember = pytest.importorskip("ember")

from models import copy_weights, module, to_lib  # noqa: E402

# name -> (batch size, sizes): as small as the architecture allows (AlexNet's last pool
# needs 63 pixels; VGG's 7x7 adaptive pool repeats its 1x1 input at 32 pixels)
CASES = {
    "alexnet": (2, {"image_size": 64, "num_classes": 10}),
    "vgg19": (2, {"image_size": 32, "num_classes": 10}),
    "resnet50": (4, {"image_size": 64, "num_classes": 10}),
    "mobilenet_v2": (8, {"image_size": 64, "num_classes": 10}),
    "gnmt": (3, {"vocab_size": 50, "hidden_size": 16, "num_layers": 4, "src_len": 5, "tgt_len": 6}),
    "gnmt_dot": (
        3,
        {
            "vocab_size": 50,
            "hidden_size": 16,
            "num_layers": 3,
            "src_len": 5,
            "tgt_len": 6,
            "attention": "dot",
        },
    ),
    "ncf": (64, {"num_users": 50, "num_items": 40, "mf_dim": 8, "layers": (16, 16, 8)}),
}

# with batch norm: training mode compared through a float64 run (see the module docstring)
BATCH_NORM = ("resnet50", "mobilenet_v2")

_twins: dict[str, tuple] = {}


def twins(case: str):
    """(model module, torch model, ember model with the torch weights, batch size, sizes),
    built once per case; gradients cleared, and the torch model's batch-norm running
    statistics copied again (a training-mode step moves them in both libraries, through
    ill-conditioned batch statistics)."""
    if case not in _twins:
        batch_size, sizes = CASES[case]
        mod = module(case.removesuffix("_dot"))
        torch.manual_seed(0)
        theirs = mod.build(torch, dropout=0.0, **sizes)
        ours = mod.build(ember, dropout=0.0, **sizes)
        copy_weights(theirs, ours, ember)
        _twins[case] = (mod, theirs, ours, batch_size, sizes)
    mod, theirs, ours, batch_size, sizes = _twins[case]
    if case in BATCH_NORM:
        copy_weights(theirs, ours, ember)
    for model in (theirs, ours):
        for p in model.parameters():
            p.grad = None
    return mod, theirs, ours, batch_size, sizes


def _batch(mod, batch_size, sizes):
    return mod.make_batch(np.random.default_rng(1), batch_size, **sizes)


def _grads(model) -> list[np.ndarray]:
    return [p.grad.detach().numpy() for p in model.parameters()]


def _distance(a, b) -> float:
    """The Euclidean distance between two arrays, or two lists of arrays taken as one
    vector (one parameter at a time: VGG has 140M)."""
    if isinstance(a, list):
        assert [x.shape for x in a] == [y.shape for y in b]
        return float(np.sqrt(sum(_distance(x, y) ** 2 for x, y in zip(a, b))))
    assert np.shape(a) == np.shape(b)
    return float(np.linalg.norm(np.ravel(np.subtract(a, b))))


def _size(a) -> float:
    if isinstance(a, list):
        return float(np.sqrt(sum(_size(x) ** 2 for x in a)))
    return float(np.linalg.norm(np.ravel(a)))


def _run(mod, lib, model, inputs, targets):
    """(output, loss, gradients) as NumPy, after ``loss.backward()``."""
    output = model(*to_lib(lib, inputs))
    loss = mod.loss(lib, output, to_lib(lib, targets))
    loss.backward()
    return output.detach().numpy(), np.float64(loss.detach().numpy()), _grads(model)


@pytest.mark.parametrize("case", list(CASES))
def test_same_parameter_names_and_shapes(case):
    _, theirs, ours, _, _ = twins(case)
    expected = {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    got = {k: tuple(v.shape) for k, v in ours.state_dict().items()}
    assert got == expected
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]


@pytest.mark.parametrize("case", list(CASES))
def test_eval_forward_matches(case):
    mod, theirs, ours, batch_size, sizes = twins(case)
    inputs, _ = _batch(mod, batch_size, sizes)
    theirs.eval()
    ours.eval()
    try:
        with torch.no_grad():
            expected = theirs(*to_lib(torch, inputs)).numpy()
        with ember.no_grad():
            got = ours(*to_lib(ember, inputs)).numpy()
    finally:
        theirs.train()
        ours.train()
    assert got.shape == expected.shape
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5 * max(scale, 1.0))


def _assert_close(case, what, ours, theirs, names=None, rtol=1e-4):
    """Within ``rtol`` in norm; a list (the gradients) parameter by parameter, each within
    ``rtol`` of its own norm plus 1e-6 of the norm of all of them (for gradients near 0)."""
    if isinstance(theirs, list):
        floor = 1e-6 * _size(theirs)
        for name, o, t in zip(names, ours, theirs):
            err, size = _distance(o, t), _size(t)
            assert err <= rtol * size + floor, (
                f"{case} gradient of {name}: |ember - torch| = {err:.3g}, |torch| = {size:.3g}"
            )
        return
    err, size = _distance(ours, theirs), _size(theirs)
    assert err <= rtol * size, f"{case} {what}: |ember - torch| = {err:.3g}, |torch| = {size:.3g}"


@pytest.mark.parametrize("case", list(CASES))
def test_training_step_matches(case):
    """Output, loss and every gradient in training mode: within 1e-4 of PyTorch's (see
    ``_assert_close``); with batch norm, against a float64 run (``_assert_near_float64``: a
    channel of near-constant values amplifies rounding, and the float32 runs of both
    libraries are a few tenths of a percent off the float64 run)."""
    mod, theirs, ours, batch_size, sizes = twins(case)
    inputs, targets = _batch(mod, batch_size, sizes)
    theirs_run = _run(mod, torch, theirs, inputs, targets)
    ours_run = _run(mod, ember, ours, inputs, targets)
    if case not in BATCH_NORM:
        names = [n for n, _ in theirs.named_parameters()]
        for what, t, o in zip(("output", "loss", "gradients"), theirs_run, ours_run):
            _assert_close(case, what, o, t, names)
        return
    _assert_near_float64(case, mod, theirs, inputs, targets, theirs_run, ours_run)


def _assert_near_float64(case, mod, theirs, inputs, targets, theirs_run, ours_run):
    """Ember's distance to a float64 PyTorch run is at most 3x PyTorch float32's distance to
    it, plus 1e-5 of its size for the output and loss and 2e-2 for the gradients: a ReLU whose
    input lies within rounding of zero takes either side in float32, and one such unit moves
    the gradients of the layers before it by up to a few percent (seen: one of 16,384
    pre-activations of ResNet-50's last block, 1.3% of conv1.weight's gradient)."""
    reference = copy.deepcopy(theirs).double()
    ref_inputs = tuple(a.astype(np.float64) if a.dtype == np.float32 else a for a in inputs)
    ref = _run(mod, torch, reference, ref_inputs, targets)
    for what, r, t, o, rtol in zip(
        ("output", "loss", "gradients"), ref, theirs_run, ours_run, (1e-5, 1e-5, 2e-2)
    ):
        size, ours_err, theirs_err = _size(r), _distance(o, r), _distance(t, r)
        assert ours_err <= 3 * theirs_err + rtol * size, (
            f"{case} {what}: |ember - float64| = {ours_err:.3g}, "
            f"|torch - float64| = {theirs_err:.3g}, |float64| = {size:.3g}"
        )


@pytest.mark.parametrize("case", BATCH_NORM)
def test_eval_gradients_match(case):
    """The batch-norm networks in evaluation mode (running statistics): output, loss and
    gradients against a float64 run, as the training step (``_assert_near_float64``)."""
    mod, theirs, ours, batch_size, sizes = twins(case)
    inputs, targets = _batch(mod, batch_size, sizes)
    theirs.eval()
    ours.eval()
    try:
        theirs_run = _run(mod, torch, theirs, inputs, targets)
        ours_run = _run(mod, ember, ours, inputs, targets)
        _assert_near_float64(case, mod, theirs, inputs, targets, theirs_run, ours_run)
    finally:
        theirs.train()
        ours.train()


def test_dropout_is_active_in_training_mode():
    mod = module("ncf")
    model = mod.build(ember, num_users=10, num_items=10, mf_dim=4, layers=(8, 8), dropout=0.5)
    (users, items), _ = mod.make_batch(np.random.default_rng(0), 256, num_users=10, num_items=10)
    users, items = to_lib(ember, (users, items))
    with ember.no_grad():
        a, b = model(users, items).numpy(), model(users, items).numpy()
        model.eval()
        c, d = model(users, items).numpy(), model(users, items).numpy()
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(c, d)


@pytest.mark.parametrize("name", ["alexnet", "vgg19", "resnet50", "mobilenet_v2", "gnmt", "ncf"])
def test_batches_and_units(name):
    mod = module(name)
    sizes = {k: v for k, v in mod.DEFAULTS["cpu"].items() if k != "batch_size"}
    inputs, targets = mod.make_batch(np.random.default_rng(0), 5, **sizes)
    assert isinstance(inputs, tuple)
    if mod.UNIT == "images":
        assert inputs[0].shape == (5, 3, sizes["image_size"], sizes["image_size"])
        assert inputs[0].dtype == np.float32 and targets.dtype == np.int64
        assert mod.units(5, **sizes) == 5
    elif mod.UNIT == "tokens":
        assert inputs[0].shape == (sizes["src_len"], 5)
        assert inputs[1].shape == targets.shape == (sizes["tgt_len"], 5)
        assert mod.units(5, **sizes) == 5 * (sizes["src_len"] + sizes["tgt_len"])
    else:
        assert inputs[0].shape == inputs[1].shape == targets.shape == (5,)
        assert int(inputs[0].max()) < sizes["num_users"]
        assert mod.units(5, **sizes) == 5


def test_unknown_model_and_bad_gnmt_config():
    with pytest.raises(ValueError, match="unknown model 'lenet'"):
        module("lenet")
    gnmt = module("gnmt")
    with pytest.raises(ValueError, match="num_layers must be at least 2"):
        gnmt.build(ember, vocab_size=10, hidden_size=4, num_layers=1)
    with pytest.raises(ValueError, match="attention must be 'additive' or 'dot'"):
        gnmt.build(ember, vocab_size=10, hidden_size=4, attention="general")
