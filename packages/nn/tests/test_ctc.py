"""ctc_loss and CTCLoss against PyTorch 2.13: losses and gradients (through a log-softmax,
and with log-probabilities as the leaf, where PyTorch's gradient formula is kept) in float32
and float64, padded and concatenated targets, empty targets, short inputs, impossible
alignments with and without zero_infinity, unbatched inputs, every reduction; gradcheck in
float64; PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember_autograd as ea
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as et
from nn_testing import assert_close, error_of

T, N, C = 12, 4, 5
INPUT_LENGTHS = [12, 10, 12, 3]
TARGET_LENGTHS = [3, 6, 0, 4]  # the last cannot fit in 3 frames: an infinite loss


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((T, N, C)), rng.integers(1, C, (N, 6)), rng


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("concatenated", [False, True])
def test_loss_and_gradient_match_torch(dtype, reduction, zero_infinity, concatenated) -> None:
    x, targets, rng = _data()
    if concatenated:
        targets = np.concatenate([targets[i, :n] for i, n in enumerate(TARGET_LENGTHS)])
    xt = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    xe = et.tensor(x, dtype=getattr(et, dtype), requires_grad=True)
    kw = dict(reduction=reduction, zero_infinity=zero_infinity, blank=0)
    want = TF.ctc_loss(xt.log_softmax(2), torch.from_numpy(targets), INPUT_LENGTHS,
                       TARGET_LENGTHS, **kw)
    got = F.ctc_loss(xe.log_softmax(2), et.from_numpy(targets), et.tensor(INPUT_LENGTHS),
                     TARGET_LENGTHS, **kw)
    assert_close(got, want, dtype)
    if not zero_infinity and reduction != "none":
        return  # an infinite loss: its gradient is NaN in both
    cot = rng.standard_normal(tuple(want.shape))
    if not zero_infinity:
        cot[3] = 0.0
    (want * torch.tensor(cot, dtype=want.dtype)).sum().backward()
    (got * et.tensor(cot, dtype=got.dtype)).sum().backward()
    assert_close(xe.grad, xt.grad, dtype)


def test_gradient_with_log_probs_as_leaf_is_torchs_formula() -> None:
    x, targets, _ = _data(1)
    lp = torch.tensor(x).log_softmax(2).requires_grad_()
    le = et.tensor(lp.detach().numpy(), requires_grad=True)
    TF.ctc_loss(lp, torch.from_numpy(targets), INPUT_LENGTHS, TARGET_LENGTHS,
                zero_infinity=True).backward()
    F.ctc_loss(le, et.from_numpy(targets), INPUT_LENGTHS, TARGET_LENGTHS,
               zero_infinity=True).backward()
    assert_close(le.grad, lp.grad)


def test_gradcheck_through_log_softmax() -> None:
    x, targets, _ = _data(2)
    xe = et.tensor(x[:6, :2], requires_grad=True)
    tg = et.from_numpy(targets[:2, :3])

    def fn(v):
        return F.ctc_loss(v.log_softmax(2), tg, [6, 5], [3, 2], reduction="sum")

    assert ea.gradcheck(fn, (xe,))


def test_unbatched_input_and_module() -> None:
    x, targets, _ = _data(3)
    lp = torch.tensor(x[:, 0]).log_softmax(1)
    want = torch.nn.CTCLoss(blank=2, reduction="none")(lp, torch.from_numpy(targets[0, :4]),
                                                       [T], [4])
    got = nn.CTCLoss(blank=2, reduction="none")(et.tensor(lp.numpy()),
                                                et.from_numpy(targets[0, :4]), [T], [4])
    assert tuple(got.shape) == () and tuple(want.shape) == ()
    assert_close(got, want)


ERRORS = {
    "input_length": lambda F, T: F.ctc_loss(T.zeros(5, 2, 4).log_softmax(2),
                                            T.tensor([[1, 2], [1, 1]]), [5, 6], [2, 2]),
    "target_width": lambda F, T: F.ctc_loss(T.zeros(5, 2, 4).log_softmax(2),
                                            T.tensor([[1, 2], [1, 1]]), [5, 5], [2, 3]),
    "concatenated_size": lambda F, T: F.ctc_loss(T.zeros(5, 2, 4).log_softmax(2),
                                                 T.tensor([1, 2, 1]), [5, 5], [2, 2]),
    "negative_target_length": lambda F, T: F.ctc_loss(T.zeros(5, 2, 4).log_softmax(2),
                                                      T.tensor([[1, 2], [1, 1]]), [5, 5],
                                                      [2, -1]),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name: str) -> None:
    assert error_of(ERRORS[name], F, et) == error_of(ERRORS[name], TF, torch)
