"""The vectorisable kernels of vec_math.h / special_float.h that replaced C library calls:
float64 exp, tanh and sigmoid and float32 erf, held to a few ulp of the C library (NumPy,
math.erf) over random arguments of every scale, and to its values at the edges."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ember_tensor as et


def _ulps(got, want) -> float:
    got, want = np.asarray(got), np.asarray(want)
    spacing = np.spacing(np.abs(want)).astype(np.float64)
    with np.errstate(invalid="ignore"):
        err = np.abs(got.astype(np.float64) - want.astype(np.float64)) / spacing
    return float(np.nanmax(err))


@pytest.mark.parametrize("scale", [1e-9, 0.3, 3.0, 40.0, 700.0])
@pytest.mark.parametrize("name,limit", [("exp", 1), ("tanh", 3)])
def test_float64_exp_and_tanh_within_a_few_ulp(name, limit, scale):
    x = np.random.default_rng(1).standard_normal(100_000) * scale
    with np.errstate(over="ignore"):
        want = getattr(np, name)(x)
    finite = np.isfinite(want)
    got = getattr(et, name)(et.tensor(x)).numpy()
    assert _ulps(got[finite], want[finite]) <= limit
    assert np.array_equal(np.isinf(got), np.isinf(want))


def test_float64_sigmoid_within_a_few_ulp():
    x = np.random.default_rng(2).standard_normal(100_000) * 20
    with np.errstate(over="ignore"):
        want = 1.0 / (1.0 + np.exp(-x))
    assert _ulps(et.sigmoid(et.tensor(x)).numpy(), want) <= 3


EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 709.7, 709.8, -745.1, -746.0, 1e-320,
                  -708.5, 20.0, -20.0, 1e-17, -1e-300])


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid"])
def test_float64_edges_match_the_c_library(name):
    with np.errstate(over="ignore"):
        want = {"exp": np.exp, "tanh": np.tanh,
                "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v))}[name](EDGES)
    got = getattr(et, name)(et.tensor(EDGES)).numpy()
    np.testing.assert_array_equal(np.signbit(got[~np.isnan(want)]),
                                  np.signbit(want[~np.isnan(want)]))
    np.testing.assert_allclose(got, want, rtol=4e-16, atol=0)


@pytest.mark.parametrize("scale", [1e-6, 0.3, 1.0, 3.0, 10.0])
def test_float32_erf_within_a_few_ulp(scale):
    x = (np.random.default_rng(3).standard_normal(50_000) * scale).astype(np.float32)
    want = np.array([math.erf(float(v)) for v in x], dtype=np.float64).astype(np.float32)
    assert _ulps(et.erf(et.tensor(x)).numpy(), want) <= 3


def test_float32_erf_edges():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 12.0, -30.0, 1e-40],
                 dtype=np.float32)
    got = et.erf(et.tensor(x)).numpy()
    want = np.array([math.erf(float(v)) if not np.isnan(v) else np.nan for v in x],
                    dtype=np.float32)
    np.testing.assert_allclose(got, want, rtol=2.5e-7, atol=0)
    assert np.signbit(got[1]) and np.isnan(got[4])


def test_float32_randn_follows_the_float64_stream():
    # float32 normals take their radius from vec_math's log_pos_d and their angle from
    # sincos_turn_f; the float64 ones from the C library, on the same counters: they differ
    # only by the float angle's 24-bit turn and rounding
    et.manual_seed(7)
    single = et.randn(200_001).numpy().astype(np.float64)
    et.manual_seed(7)
    double = et.randn(200_001, dtype=et.float64).numpy()
    assert np.max(np.abs(single - double) / np.maximum(1.0, np.abs(double))) < 4e-6
    assert abs(single.mean()) < 0.01 and abs(single.std() - 1) < 0.01
