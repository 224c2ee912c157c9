"""Shared helpers of the CUDA op tests: inputs, the device under test, comparisons.

The tests run each op on the same inputs on the CPU and on ``DEV`` and compare. ``DEV`` is
``cuda``; with ``EMBER_CUDA_TEST_DEVICE=cpu`` the CUDA test files run against the CPU instead
(every comparison then holds trivially), which checks the tests themselves on a machine
without a GPU. Without a device the tests are skipped (``requires_device``).

Floating results are compared within the suite's one tolerance table (``conftest.TOLERANCES``:
``(rtol, atol)`` per result dtype; integers and bool exact). Where a comparison needs more
room (sums taken in another order, CUDA's own math functions, cuDNN's algorithms), the call
site scales the table's values and says why (``assert_close(got, want, scale)``); there is
no second table.
"""

import os

import numpy as np
import pytest

import ember_tensor as et
from conftest import dtype_name, tol
from ember_tensor import _C

DEV = os.environ.get("EMBER_CUDA_TEST_DEVICE", "cuda")
requires_device = pytest.mark.skipif(
    DEV == "cuda" and _C._cuda_device_count() == 0, reason="no CUDA device"
)

FLOATS = [et.float32, et.float64, et.float16, et.bfloat16]
INTS = [et.int64, et.int32, et.int16, et.int8, et.uint8]
ALL = FLOATS + INTS + [et.bool]


def values(shape, dtype, seed=0, special=False):
    """Small values with many ties (so that eq/ne/max see equal operands); floats may hold
    NaN, inf and -0.0."""
    rng = np.random.default_rng(seed)
    if dtype == et.bool:
        return et.tensor(rng.integers(0, 2, shape).astype(bool))
    if dtype in INTS:
        lo = 0 if dtype == et.uint8 else -4
        return et.tensor(rng.integers(lo, 5, shape)).to(dtype)
    a = rng.integers(-3, 4, shape).astype(np.float64) * 0.5
    if special and a.size > 4:
        flat = a.reshape(-1)
        flat[::7] = np.nan
        flat[3] = np.inf
        flat[4] = -np.inf
        flat[1] = -0.0
    return et.tensor(a).to(dtype)


def normal(shape, dtype=et.float32, seed=0):
    rng = np.random.default_rng(seed)
    return et.tensor(rng.standard_normal(shape)).to(dtype)


def on(t):
    """t on the device under test."""
    return t.to(DEV)


def host(t):
    """A numpy array of t's values (bfloat16 through float64, which holds them exactly)."""
    t = t.cpu()
    if t.dtype == et.bfloat16:
        t = t.to(et.float64)
    return t.numpy()


def assert_equal(got, want):
    """got (on DEV) has want's (CPU) dtype, shape and exact values (NaN equal to NaN)."""
    assert got.device.type == DEV
    assert got.dtype == want.dtype
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(host(got), host(want))


def tolerance(dtype, scale=1.0, atol_scale=None) -> tuple[float, float]:
    """(rtol, atol) for results of `dtype`: the central table's (conftest.TOLERANCES) times
    scale; atol_scale, where given, scales the table's atol instead (for errors that follow
    the operands' size rather than each result's). Integers and bool: (0, 0), exact."""
    rtol, atol = tol(dtype_name(dtype), scale)
    if atol_scale is not None:
        atol = tol(dtype_name(dtype), atol_scale)[1]
    return rtol, atol


def assert_close(got, want, scale=1.0, atol_scale=None):
    """got (on DEV) has want's dtype and shape, and values within ``tolerance(want.dtype,
    scale, atol_scale)`` of want's (NaN equal to NaN); scale 0: equal."""
    assert got.device.type == DEV
    assert got.dtype == want.dtype
    assert tuple(got.shape) == tuple(want.shape)
    rtol, atol = tolerance(want.dtype, scale, atol_scale)
    np.testing.assert_allclose(parts(got), parts(want), rtol=rtol, atol=atol)


def parts(t):
    """t's values as float64, a complex t's as (real, imaginary) pairs (so that each part is
    compared on its own, NaN and infinities included)."""
    a = host(t)
    if np.iscomplexobj(a):
        return np.ascontiguousarray(a.astype(np.complex128)).view(np.float64)
    return a.astype(np.float64)


def assert_same_error(run):
    """run(device) raises on the CPU; on DEV it raises the same type with the same message."""
    with pytest.raises(Exception) as cpu_error:
        run("cpu")
    want = cpu_error.value
    try:
        run(DEV)
    except Exception as error:  # noqa: BLE001 - compared with the CPU's below
        got = error
    else:
        pytest.fail(f"{DEV} did not raise; the CPU raised {want!r}")
    assert isinstance(got, type(want)) and str(got) == str(want), f"{DEV}: {got!r}; cpu: {want!r}"
