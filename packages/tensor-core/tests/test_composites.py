"""The composite layer (ops.yaml `composite: python`, bodies in ember_tensor/_composites) and
the inverse trigonometric / hyperbolic kernels (unary_functions.h): values, dtypes and every
variant against PyTorch; the variant protocol's errors against the bound ops'.

Gradients of the composites (recorded through the ops they call) are checked in
packages/autograd/tests/test_composites_grad.py.
"""

import math

import numpy as np
import pytest
import torch

import ember_tensor as et
from ember_tensor import composite_ops

DTYPES = {"float32": (et.float32, torch.float32), "float64": (et.float64, torch.float64),
          "float16": (et.float16, torch.float16), "bfloat16": (et.bfloat16, torch.bfloat16)}
# tolerances (rtol, atol) per dtype: composites are within 2 ulp in float32/float64
TOL = {"float32": (2e-6, 1e-6), "float64": (1e-14, 1e-15), "float16": (1e-3, 1e-3),
       "bfloat16": (8e-3, 8e-3)}
SPECIALS = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 1e-30, -1e30, 0.5, -2.5]


def to_ember(t: torch.Tensor) -> et.Tensor:
    if t.dtype == torch.bfloat16:
        return et.from_numpy(t.float().numpy()).to(et.bfloat16)
    return et.from_numpy(t.numpy().copy())


def to_torch(t: et.Tensor) -> torch.Tensor:
    if t.dtype == et.bfloat16:
        return torch.from_numpy(t.to(et.float32).numpy()).to(torch.bfloat16)
    return torch.from_numpy(t.numpy().copy())


def assert_matches(got: et.Tensor, want: torch.Tensor, dtype_name: str) -> None:
    assert str(got.dtype).rpartition(".")[2] == str(want.dtype).rpartition(".")[2]
    assert tuple(got.shape) == tuple(want.shape)
    rtol, atol = TOL[dtype_name]
    torch.testing.assert_close(to_torch(got), want, rtol=rtol, atol=atol, equal_nan=True)


def grid(dtype: torch.dtype, lo: float, hi: float, n: int = 64, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(n, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype)


# --------------------------------------------------------------- inverse trig / hyperbolic kernels

UNARY = {"asin": (-1, 1), "acos": (-1, 1), "sinh": (-8, 8), "cosh": (-8, 8),
         "asinh": (-50, 50), "acosh": (1, 50), "atanh": (-1, 1)}


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("op", list(UNARY))
def test_unary_kernels_match_torch(op, dtype_name):
    edt, tdt = DTYPES[dtype_name]
    lo, hi = UNARY[op]
    x = torch.cat([grid(tdt, lo, hi), torch.tensor(SPECIALS, dtype=tdt)])
    want = getattr(torch, op)(x)
    assert_matches(getattr(et, op)(to_ember(x)), want, dtype_name)
    assert_matches(getattr(to_ember(x), op)(), want, dtype_name)
    e = to_ember(x)
    assert getattr(e, op + "_")() is e
    assert_matches(e, want, dtype_name)
    out = et.empty(0, dtype=edt)
    assert getattr(et, op)(to_ember(x), out=out) is out
    assert_matches(out, want, dtype_name)


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_kernels_integer_inputs_give_default_float(op):
    x = torch.tensor([-2, -1, 0, 1, 2, 3])
    assert_matches(getattr(et, op)(to_ember(x)), getattr(torch, op)(x), "float32")
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        getattr(to_ember(x), op + "_")()


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_kernels_non_contiguous_and_empty(op):
    lo, hi = UNARY[op]
    x = grid(torch.float64, lo, hi, 24).reshape(4, 6).t()
    assert_matches(getattr(et, op)(to_ember(x.contiguous()).t().contiguous().t()),
                   getattr(torch, op)(x), "float64")
    e = getattr(et, op)(et.empty(0, 3))
    assert tuple(e.shape) == (0, 3) and e.dtype == et.float32


# ------------------------------------------------------------------------- Python composites

BINARY = {"atan2": (-3, 3), "hypot": (-1e3, 1e3), "logaddexp": (-40, 40)}


def binary_inputs(tdt):
    a = torch.cat([grid(tdt, -3, 3, seed=1), torch.tensor(SPECIALS * len(SPECIALS), dtype=tdt)])
    b = torch.cat([grid(tdt, -3, 3, seed=2),
                   torch.tensor([s for s in SPECIALS for _ in SPECIALS], dtype=tdt)])
    return a, b


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("op", list(BINARY))
def test_composites_match_torch(op, dtype_name):
    edt, tdt = DTYPES[dtype_name]
    a, b = binary_inputs(tdt)
    want = getattr(torch, op)(a, b)
    assert_matches(getattr(et, op)(to_ember(a), to_ember(b)), want, dtype_name)
    assert_matches(getattr(to_ember(a), op)(to_ember(b)), want, dtype_name)
    out = et.empty(0, dtype=edt)
    assert getattr(et, op)(to_ember(a), to_ember(b), out=out) is out
    assert_matches(out, want, dtype_name)


@pytest.mark.parametrize("op", ["atan2", "hypot"])
def test_composites_inplace(op):
    a, b = binary_inputs(torch.float64)
    e = to_ember(a)
    assert getattr(e, op + "_")(to_ember(b)) is e
    assert_matches(e, getattr(torch, op)(a, b), "float64")


def test_composites_broadcast_and_promote():
    a = grid(torch.float32, -2, 2, 12).reshape(3, 4)
    b = grid(torch.float64, -2, 2, 4, seed=3)
    for op in BINARY:
        assert_matches(getattr(et, op)(to_ember(a), to_ember(b)), getattr(torch, op)(a, b),
                       "float64")
    i = torch.tensor([[1, -2], [0, 3]])
    assert_matches(et.atan2(to_ember(i), to_ember(i.t())), torch.atan2(i, i.t()), "float32")


def test_composites_accuracy_in_ulps_against_float64_numpy():
    """float32 results within 2 ulp of the exact (float64 NumPy) values."""
    rng = np.random.default_rng(0)
    a = rng.uniform(-100, 100, 2000).astype(np.float32)
    b = rng.uniform(-100, 100, 2000).astype(np.float32)
    exact = {"atan2": np.arctan2, "hypot": np.hypot, "logaddexp": np.logaddexp}
    for op, ref in exact.items():
        got = getattr(et, op)(et.from_numpy(a), et.from_numpy(b)).numpy()
        want = ref(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
        ulps = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
        assert ulps.max() <= 2, (op, ulps.max())


def test_composite_dtype_errors_match_the_bindings():
    i = et.tensor([1, 2])
    for op in ("hypot", "logaddexp"):
        with pytest.raises(RuntimeError, match=rf"^{op}: dtype int64 is not supported"):
            getattr(et, op)(i, i)
    with pytest.raises(RuntimeError, match=r"atan2: result type float32 can't be cast to the "
                                           r"desired output type int64"):
        et.tensor([1, 2]).atan2_(et.tensor([1, 1]))
    with pytest.raises(RuntimeError, match=r"hypot: output with shape \[2\] doesn't match the "
                                           r"result shape \[2, 2\]"):
        et.ones(2).hypot_(et.ones(2, 2))


def test_composite_argument_errors():
    x = et.ones(2)
    with pytest.raises(TypeError, match=r"^atan2\(\): argument 'other' \(position 2\) must be "
                                        r"Tensor, not float$"):
        et.atan2(x, 2.0)
    with pytest.raises(TypeError, match=r"^hypot\(\): argument 'input' \(position 1\) must be "
                                        r"Tensor, not NoneType$"):
        et.hypot(None, x)
    with pytest.raises(RuntimeError, match=r"^logaddexp: shapes \[2\] and \[3\] cannot be "
                                           r"broadcast together$"):
        et.logaddexp(x, et.ones(3))
    with pytest.raises(RuntimeError, match=r"^atan2: shapes \[2\] and \[3\]"):
        x.atan2_(et.ones(3))


def test_composite_out_errors_match_the_bindings():
    a = et.ones(3)
    with pytest.raises(RuntimeError, match=r"atan2: output with shape \[2\] doesn't match the "
                                           r"result shape \[3\]"):
        et.atan2(a, a, out=et.empty(2))
    with pytest.raises(RuntimeError, match="atan2: result type float32 can't be cast to the "
                                           "desired output type int64"):
        et.atan2(a, a, out=et.empty(3, dtype=et.int64))
    # a same-shape out of a wider dtype takes the cast result, as the bound ops' out= does
    out = et.empty(3, dtype=et.float64)
    et.logaddexp(a, a, out=out)
    assert out.dtype == et.float64 and abs(out[0].item() - (1 + math.log(2))) < 1e-6


def test_every_python_composite_is_installed_with_its_variants():
    assert composite_ops.OPS, "ops.yaml declares Python composites"
    for name, variants, _args, _dtypes in composite_ops.OPS:
        assert hasattr(et, name) == ("function" in variants), name
        assert hasattr(et.Tensor, name) == ("method" in variants), name
        assert hasattr(et.Tensor, name + "_") == ("inplace" in variants), name
        if "function" in variants:
            assert name in et.__all__
