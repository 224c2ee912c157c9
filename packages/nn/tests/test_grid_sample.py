"""grid_sample and affine_grid against PyTorch 2.13: every mode, padding mode and
align_corners on 4-D and 5-D inputs, grids reaching well outside [-1, 1] (and NaN), values
and the gradients of the input and the grid in float32 and float64; gradcheck in float64;
affine_grid's grids; the align_corners warning and PyTorch's errors."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember_autograd as ea
import ember_nn.functional as F
import ember_tensor as et
from nn_testing import assert_close, error_of

CASES = [(nd, mode, pad, align)
         for nd, mode, pad, align in itertools.product(
             (2, 3), ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"),
             (False, True))
         if not (nd == 3 and mode == "bicubic")]


def _inputs(nd: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    image = rng.standard_normal((2, 3, 5, 6) if nd == 2 else (2, 2, 4, 5, 3))
    grid = rng.uniform(-1.6, 1.6, (2, 4, 3, 2) if nd == 2 else (2, 3, 2, 4, 3))
    return image, grid, rng


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("nd,mode,pad,align", CASES,
                         ids=[f"{nd}d-{m}-{p}-{a}" for nd, m, p, a in CASES])
def test_values_and_gradients_match_torch(nd, mode, pad, align, dtype) -> None:
    image, grid, rng = _inputs(nd)
    te = [et.tensor(a, dtype=getattr(et, dtype), requires_grad=True) for a in (image, grid)]
    tt = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in (image, grid)]
    got = F.grid_sample(*te, mode=mode, padding_mode=pad, align_corners=align)
    want = TF.grid_sample(*tt, mode=mode, padding_mode=pad, align_corners=align)
    assert_close(got, want, dtype)
    cot = rng.standard_normal(tuple(want.shape))
    (got * et.tensor(cot, dtype=got.dtype)).sum().backward()
    (want * torch.tensor(cot, dtype=want.dtype)).sum().backward()
    assert_close(te[0].grad, tt[0].grad, dtype, "input gradient", scale=10)
    assert_close(te[1].grad, tt[1].grad, dtype, "grid gradient", scale=30)


@pytest.mark.parametrize("mode,pad", [("bilinear", "zeros"), ("bilinear", "reflection"),
                                      ("bicubic", "border"), ("bilinear", "border")])
def test_gradcheck(mode: str, pad: str) -> None:
    image, grid, _ = _inputs(2, 1)
    args = (et.tensor(image[:1, :2, :4, :4], requires_grad=True),
            et.tensor(grid[:1, :2, :2] * 0.7, requires_grad=True))
    assert ea.gradcheck(lambda x, g: F.grid_sample(x, g, mode, pad, align_corners=False), args)


def test_nan_and_huge_coordinates_sample_nothing_like_torch() -> None:
    image, grid, _ = _inputs(2, 2)
    grid[0, 0, 0] = np.nan
    grid[1, 1, 1, 0] = 1e20
    for mode, pad in itertools.product(("bilinear", "nearest", "bicubic"),
                                       ("zeros", "border", "reflection")):
        got = F.grid_sample(et.tensor(image), et.tensor(grid), mode, pad, align_corners=False)
        want = TF.grid_sample(torch.tensor(image), torch.tensor(grid), mode, pad,
                              align_corners=False)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12,
                                   err_msg=f"{mode} {pad}")


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 3, 1, 5), (2, 1, 3, 4, 2)])
@pytest.mark.filterwarnings("ignore:Since version 1.3.0, affine_grid")
def test_affine_grid_matches_torch(size, align: bool) -> None:
    rng = np.random.default_rng(3)
    theta = rng.standard_normal((2, 2, 3) if len(size) == 4 else (2, 3, 4))
    te = et.tensor(theta, requires_grad=True)
    tt = torch.tensor(theta, requires_grad=True)
    got = F.affine_grid(te, size, align_corners=align)
    want = TF.affine_grid(tt, size, align_corners=align)
    assert_close(got, want)
    got.sum().backward()
    want.sum().backward()
    assert_close(te.grad, tt.grad)


def test_align_corners_none_warns_like_torch() -> None:
    for lib, mod in ((et, F), (torch, TF)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mod.grid_sample(lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2))
            mod.affine_grid(lib.zeros(1, 2, 3), (1, 1, 2, 2))
        assert [str(w.message)[:56] for w in caught] == [
            "Default grid_sample and affine_grid behavior has changed"] * 2


ERRORS = {
    "mode": lambda F, T: F.grid_sample(T.zeros(1, 1, 2, 2), T.zeros(1, 1, 1, 2), "area",
                                       align_corners=False),
    "padding": lambda F, T: F.grid_sample(T.zeros(1, 1, 2, 2), T.zeros(1, 1, 1, 2),
                                          padding_mode="wrap", align_corners=False),
    "bicubic_3d": lambda F, T: F.grid_sample(T.zeros(1, 1, 2, 2, 2), T.zeros(1, 1, 1, 1, 3),
                                             "bicubic", align_corners=False),
    "affine_shape": lambda F, T: F.affine_grid(T.zeros(1, 3, 3), (1, 1, 2, 2),
                                               align_corners=False),
    "affine_size": lambda F, T: F.affine_grid(T.zeros(1, 2, 3), (1, 1, 2),
                                              align_corners=False),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name: str) -> None:
    def run(mod, lib):
        kind, text = error_of(ERRORS[name], mod, lib)
        return kind, text.replace("torch.", "").replace("ember.", "")

    assert run(F, et) == run(TF, torch)
