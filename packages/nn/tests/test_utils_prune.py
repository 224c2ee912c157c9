"""ember_nn.utils.prune against torch.nn.utils.prune, in float64: masks (deterministic
methods compared entry by entry, random ones by their structure), the pruned weight and
the gradient of weight_orig, combined prunings (PruningContainer), state_dict keys,
remove, global pruning, and the errors for bad amounts, dims and names."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.utils.prune as torch_prune

import ember_nn as nn
import ember_tensor as et
from ember_nn.utils import prune
from nn_testing import assert_close, np_of

PR = {"ember": prune, "torch": torch_prune}


def libs(name: str):
    return (nn, et) if name == "ember" else (torch.nn, torch)


def pair(make):
    """The same module in both libraries, with torch's values (distinct magnitudes, so
    that the L1/Ln orders have no ties)."""
    torch.manual_seed(0)
    theirs = make("torch").double()
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for p in theirs.parameters():
            values = rng.permutation(p.numel()) + 1.0
            signs = rng.choice([-1.0, 1.0], size=p.numel())
            p.copy_(torch.tensor(values * signs / p.numel()).reshape(p.shape))
    ours = make("ember").double()
    ours.load_state_dict({k: et.tensor(np_of(v)) for k, v in theirs.state_dict().items()})
    return ours, theirs


def linear(name):
    return libs(name)[0].Linear(6, 4)


def conv(name):
    return libs(name)[0].Conv2d(3, 4, 2)


def check_same(ours, theirs, x_shape, what: str) -> None:
    assert list(ours.state_dict()) == list(theirs.state_dict()), what
    for k, v in theirs.state_dict().items():
        assert_close(ours.state_dict()[k], v, what=f"{what}: {k}")
    x = np.random.default_rng(1).standard_normal(x_shape)
    le = (ours(et.tensor(x)) ** 2).sum()
    lt = (theirs(torch.tensor(x)) ** 2).sum()
    assert_close(le, lt, what=f"{what}: loss")
    le.backward()
    lt.backward()
    for (k, p), (tk, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert k == tk
        assert_close(p.grad, tp.grad, what=f"{what}: grad {k}")


@pytest.mark.parametrize("amount", [0, 3, 0.0, 0.3, 1.0, 24])
def test_l1_unstructured_matches_torch(amount) -> None:
    ours, theirs = pair(linear)
    assert prune.l1_unstructured(ours, "weight", amount) is ours
    PR["torch"].l1_unstructured(theirs, "weight", amount)
    check_same(ours, theirs, (2, 6), f"l1 {amount}")
    assert isinstance(ours.weight_orig, nn.Parameter)
    assert not isinstance(ours.weight, nn.Parameter)
    assert prune.is_pruned(ours)


def test_l1_with_importance_scores_and_bias() -> None:
    ours, theirs = pair(linear)
    scores = np.random.default_rng(2).standard_normal((4, 6))
    prune.l1_unstructured(ours, "weight", 5, importance_scores=et.tensor(scores))
    PR["torch"].l1_unstructured(theirs, "weight", 5, importance_scores=torch.tensor(scores))
    prune.l1_unstructured(ours, "bias", 0.5)
    PR["torch"].l1_unstructured(theirs, "bias", 0.5)
    check_same(ours, theirs, (2, 6), "importance scores + bias")


@pytest.mark.parametrize("n,dim,amount", [(2, 0, 2), (1, 1, 0.5), (math.inf, -1, 1),
                                          (3, 0, 0.25), (-math.inf, 1, 3), (2, 0, 0)])
def test_ln_structured_matches_torch(n, dim, amount) -> None:
    ours, theirs = pair(conv)
    prune.ln_structured(ours, "weight", amount, n, dim)
    PR["torch"].ln_structured(theirs, "weight", amount, n, dim)
    check_same(ours, theirs, (2, 3, 4, 4), f"ln {n} {dim} {amount}")


def test_iterative_pruning_container_matches_torch() -> None:
    ours, theirs = pair(conv)
    for name, m in (("ember", ours), ("torch", theirs)):
        PR[name].l1_unstructured(m, "weight", 0.2)
        PR[name].ln_structured(m, "weight", 1, 2, 0)  # structured, on the kept entries
        PR[name].l1_unstructured(m, "weight", 5)
        PR[name].identity(m, "bias")
        mask = np_of(m.weight_mask)
        hook = [h for h in m._forward_pre_hooks.values()
                if isinstance(h, PR[name].BasePruningMethod) and h._tensor_name == "weight"]
        assert len(hook) == 1 and isinstance(hook[0], PR[name].PruningContainer)
        assert len(hook[0]) == 3
    np.testing.assert_array_equal(np_of(ours.weight_mask), mask)
    check_same(ours, theirs, (2, 3, 4, 4), "container")
    orig = ours.weight_orig
    for name, m in (("ember", ours), ("torch", theirs)):
        assert PR[name].remove(m, "weight") is m
        PR[name].remove(m, "bias")
        assert not PR[name].is_pruned(m)
    assert ours.weight is orig and isinstance(ours.weight, nn.Parameter)
    ours.zero_grad()
    theirs.zero_grad()
    check_same(ours, theirs, (2, 3, 4, 4), "removed")
    assert list(ours.state_dict()) == ["weight", "bias"]


def test_custom_from_mask_and_global_unstructured() -> None:
    ours, theirs = pair(lambda n: libs(n)[0].Sequential(linear(n), libs(n)[0].ReLU(),
                                                        libs(n)[0].Linear(4, 3)))
    mask = (np.random.default_rng(3).random((4,)) > 0.5).astype(np.float64)
    prune.custom_from_mask(ours[0], "bias", et.tensor(mask))
    PR["torch"].custom_from_mask(theirs[0], "bias", torch.tensor(mask))
    for name, m in (("ember", ours), ("torch", theirs)):
        PR[name].l1_unstructured(m[2], "weight", 2)  # combined with the global mask
        PR[name].global_unstructured(
            [(m[0], "weight"), (m[2], "weight"), (m[0], "bias")],
            pruning_method=PR[name].L1Unstructured, amount=0.4,
        )
    check_same(ours, theirs, (2, 6), "global")
    scores = {(ours[2], "weight"): et.ones(3, 4, dtype=et.float64)}
    tscores = {(theirs[2], "weight"): torch.ones(3, 4, dtype=torch.float64)}
    prune.global_unstructured([(ours[0], "weight"), (ours[2], "weight")],
                              prune.L1Unstructured, importance_scores=scores, amount=3)
    PR["torch"].global_unstructured([(theirs[0], "weight"), (theirs[2], "weight")],
                                    PR["torch"].L1Unstructured, importance_scores=tscores,
                                    amount=3)
    ours.zero_grad()
    theirs.zero_grad()
    check_same(ours, theirs, (2, 6), "global with scores")


def test_random_methods_structure() -> None:
    et.manual_seed(0)
    m = prune.random_unstructured(nn.Linear(6, 4), "weight", 0.25)
    mask = np_of(m.weight_mask)
    assert mask.sum() == 18 and set(np.unique(mask)) <= {0.0, 1.0}
    # a second random pruning prunes 3 of the entries still kept
    prune.random_unstructured(m, "weight", 3)
    mask2 = np_of(m.weight_mask)
    assert mask2.sum() == 15 and np.all(mask2 <= mask)
    np.testing.assert_array_equal(np_of(m.weight), np_of(m.weight_orig) * mask2)

    c = prune.random_structured(nn.Conv2d(3, 5, 2), "weight", 2, dim=0)
    per_channel = np_of(c.weight_mask).reshape(5, -1)
    assert sorted(per_channel.min(1).tolist()) == [0, 0, 1, 1, 1]
    assert np.all(per_channel.min(1) == per_channel.max(1))  # whole channels
    # structured on top: prunes among the channels still kept
    prune.random_structured(c, "weight", 1, dim=0)
    per_channel = np_of(c.weight_mask).reshape(5, -1)
    assert sorted(per_channel.max(1).tolist()) == [0, 0, 0, 1, 1]
    out = prune.RandomUnstructured(2).prune(et.ones(3, 3))
    assert int((out == 0).sum()) == 2


@pytest.mark.parametrize("case", ["neg", "float_above", "type", "too_many", "structured_1d",
                                  "bad_dim", "remove_unpruned", "global_type",
                                  "global_scores", "scores_shape", "container_name",
                                  "container_type", "missing_name"])
def test_errors_match_torch(case: str) -> None:
    def run(name):
        N, T = libs(name)
        p = PR[name]
        m = N.Linear(3, 2)
        try:
            if case == "neg":
                p.l1_unstructured(m, "weight", -1)
            elif case == "float_above":
                p.random_unstructured(m, "weight", 1.5)
            elif case == "type":
                p.l1_unstructured(m, "weight", "half")
            elif case == "too_many":
                p.l1_unstructured(m, "weight", 7)
            elif case == "structured_1d":
                p.ln_structured(m, "bias", 1, 2, 0)
            elif case == "bad_dim":
                p.random_structured(m, "weight", 1, 2)
            elif case == "remove_unpruned":
                p.remove(m, "weight")
            elif case == "global_type":
                p.global_unstructured([(m, "weight")], p.RandomStructured, amount=1)
            elif case == "global_scores":
                p.global_unstructured([(m, "weight")], p.L1Unstructured,
                                      importance_scores=[1], amount=1)
            elif case == "scores_shape":
                p.l1_unstructured(m, "weight", 1, importance_scores=T.ones(2))
            elif case == "container_name":
                p.l1_unstructured(m, "weight", 1)
                c = [h for h in m._forward_pre_hooks.values()][0]
                other = p.L1Unstructured(1)
                other._tensor_name = "bias"
                p.PruningContainer(c).add_pruning_method(other)
            elif case == "container_type":
                p.l1_unstructured(m, "weight", 1)
                c = [h for h in m._forward_pre_hooks.values()][0]
                p.PruningContainer(c).add_pruning_method(3)
            elif case == "missing_name":
                p.l1_unstructured(m, "kernel", 1)
        except Exception as exc:  # noqa: BLE001 - compared below
            # a failed pruning leaves the module as it was
            assert [k for k, _ in m.named_parameters()][:1] in (["weight"], ["bias"])
            text = str(exc).replace("torch.", "").replace("ember_nn.", "nn.")
            text = text.replace("ember.", "")
            return type(exc).__name__, text.split(" object at ")[0]
        return "no error", ""

    ours, theirs = run("ember"), run("torch")
    assert ours == theirs


def test_too_many_restores_module() -> None:
    m = nn.Linear(3, 2)
    w = m.weight
    with pytest.raises(ValueError, match=r"amount=7 should be smaller than the number of "
                                         r"parameters to prune=6"):
        prune.l1_unstructured(m, "weight", 7)
    assert m.weight is w and "weight_orig" not in m._parameters
    assert not m._forward_pre_hooks and "weight_mask" not in m._buffers


def test_ln_structured_fro_on_a_matrix() -> None:
    ours, theirs = pair(linear)
    prune.ln_structured(ours, "weight", 0.5, "fro", 1)
    PR["torch"].ln_structured(theirs, "weight", 0.5, "fro", 1)
    check_same(ours, theirs, (2, 6), "ln fro")
