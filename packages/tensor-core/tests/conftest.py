"""Shared fixtures and helpers for the ember_tensor test suite.

Every test receives the library under test through the ``lib`` fixture.  By default this is
``ember_tensor``; with ``EMBER_TEST_LIB=torch`` it is PyTorch itself, which is how the suite
proves that its own expectations are right (ember mirrors PyTorch's tensor API).

Reference values come from NumPy (computed in float64 from the exactly representable inputs).
PyTorch is used as the oracle for things NumPy disagrees on: result dtypes (type promotion)
and which dtype/op combinations are errors.
"""

from __future__ import annotations

import importlib
import os
import zlib

import numpy as np
import pytest
import torch

LIB_NAME = os.environ.get("EMBER_TEST_LIB", "ember_tensor")
IS_TORCH = LIB_NAME == "torch"

# ---------------------------------------------------------------------------------------------
# dtypes

FLOAT_DTYPES = ["float32", "float64", "float16", "bfloat16"]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8"]
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + ["bool"]
NUMERIC_DTYPES = FLOAT_DTYPES + INT_DTYPES
# The dtypes added later (issue 25), run by the op registry wherever ops.yaml declares them.
COMPLEX_DTYPES = ["complex64", "complex128"]
WIDE_UNSIGNED_DTYPES = ["uint16", "uint32", "uint64"]

NP_DTYPES = {
    "float32": np.float32,
    "float64": np.float64,
    "float16": np.float16,
    "bfloat16": np.float32,  # NumPy has no bfloat16: values are held as (rounded) float32
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "bool": np.bool_,
    "complex64": np.complex64,
    "complex128": np.complex128,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
}

# Central tolerance table: (rtol, atol) for results of each dtype compared with a float64
# reference computed from the same (rounded) inputs, or with PyTorch's result of the same
# dtype (op_registry.py: a row scales or overrides it, never keeps its own). Integers and bool
# are exact.
TOLERANCES = {
    "float64": (1e-10, 1e-12),
    "float32": (2e-5, 1e-6),
    "float16": (2e-3, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
    **{name: (0.0, 0.0) for name in INT_DTYPES + WIDE_UNSIGNED_DTYPES + ["bool"]},
    "complex64": (2e-5, 1e-6),
    "complex128": (1e-10, 1e-12),
}


def tol(dtype_name: str, scale: float = 1.0) -> tuple[float, float]:
    """(rtol, atol) for a result dtype; integers and bool are exact."""
    rtol, atol = TOLERANCES.get(dtype_name, (0.0, 0.0))
    return rtol * scale, atol * scale


def dtype_name(dtype) -> str:
    """'float32' for ember.float32 / torch.float32 alike."""
    return str(dtype).split(".")[-1]


# ---------------------------------------------------------------------------------------------
# the library fixture


def _load(name):
    return importlib.import_module(name)


@pytest.fixture(scope="session")
def lib():
    return _load(LIB_NAME)


@pytest.fixture
def ember_only():
    if IS_TORCH:
        pytest.skip("ember-specific behaviour")


@pytest.fixture(params=[1, 2], ids=lambda n: f"{n}T")
def lib_threads(lib, request):
    """Runs the test with lib's intra-op threads set to 1, then 2 (restored after)."""
    before = lib.get_num_threads()
    lib.set_num_threads(request.param)
    yield request.param
    lib.set_num_threads(before)


@pytest.fixture
def rng(request):
    # A stable per-test seed so that failures reproduce.
    seed = zlib.crc32(request.node.nodeid.encode())
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------------------------------
# value generation and conversion


def round_bf16(a) -> np.ndarray:
    """Round to the nearest bfloat16 (ties to even), returned as float32."""
    a32 = np.array(a, dtype=np.float32, copy=True).reshape(-1)
    shape = np.shape(a)
    u = a32.view(np.uint32).astype(np.uint64)
    nan = np.isnan(a32)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    out = u.astype(np.uint32).view(np.float32).copy()
    out[nan] = np.nan
    return out.reshape(shape)


def round_to(a, name: str) -> np.ndarray:
    """Values as they are representable in dtype `name` (NumPy array of the matching type)."""
    if name == "bfloat16":
        return round_bf16(a)
    return np.asarray(a).astype(NP_DTYPES[name])


DOMAINS = {
    "any": (-3.0, 3.0),
    "pos": (0.1, 3.0),
    "unit": (-0.9, 0.9),
    "small": (-1.5, 1.5),
    "expo": (0.0, 1.5),
    "nonzero": (-3.0, 3.0),
    "ge1": (1.0, 3.0),
    "prob": (0.05, 0.95),
}


def rand_array(rng, shape, name: str, domain: str = "any") -> np.ndarray:
    """Random values of dtype `name` inside a domain (ints: small range, never 0 for 'pos')."""
    shape = tuple(shape)
    if name == "bool":
        return rng.random(shape) < 0.5
    if name in COMPLEX_DTYPES:  # both parts drawn from the domain
        part = "float64" if name == "complex128" else "float32"
        re, im = rand_array(rng, shape, part, domain), rand_array(rng, shape, part, domain)
        return (re + 1j * im).astype(NP_DTYPES[name])
    if name in INT_DTYPES or name in WIDE_UNSIGNED_DTYPES:
        lo, hi = DOMAINS[domain]
        lo, hi = int(np.floor(lo * 2)), int(np.ceil(hi * 2))
        if name.startswith("uint") or domain == "pos":
            lo = max(lo, 1 if domain == "pos" else 0)
        vals = rng.integers(lo, hi + 1, size=shape)
        if domain == "nonzero":
            vals = np.where(vals == 0, 1, vals)
            if name.startswith("uint"):
                vals = np.abs(vals)
        return vals.astype(NP_DTYPES[name])
    lo, hi = DOMAINS[domain]
    if domain == "nonzero":
        mag = rng.uniform(0.5, hi, size=shape)
        return round_to(np.where(rng.random(shape) < 0.5, -mag, mag), name)
    return round_to(rng.uniform(lo, hi, size=shape), name)


def tensor(lib, arr, name: str | None = None, layout: str = "contig"):
    """A lib tensor holding `arr` (NumPy) with dtype `name`, optionally non-contiguous.

    layout: 'contig', 'transposed' (all dims reversed then permuted back; non-contiguous when
    ndim >= 2) or 'stepped' (a [..., ::2] slice of a bigger tensor).
    """
    arr = np.asarray(arr)
    if name is None:
        name = {np.dtype(v).name: k for k, v in NP_DTYPES.items() if k != "bfloat16"}[
            arr.dtype.name
        ]
    if layout == "transposed" and arr.ndim >= 2:
        perm = list(reversed(range(arr.ndim)))
        base = tensor(lib, np.ascontiguousarray(arr.transpose(perm)), name)
        return base.permute(*perm)
    if layout == "stepped" and arr.ndim >= 1:
        big = np.zeros(arr.shape[:-1] + (arr.shape[-1] * 2,), dtype=arr.dtype)
        big[..., ::2] = arr
        return tensor(lib, big, name)[..., ::2]
    if name == "bfloat16":
        return lib.tensor(np.asarray(arr, dtype=np.float32)).to(lib.bfloat16)
    return lib.tensor(np.asarray(arr, dtype=NP_DTYPES[name]))


def to_np(t) -> np.ndarray:
    """A NumPy copy of a lib tensor (bfloat16 goes through float32)."""
    if dtype_name(t.dtype) == "bfloat16":
        t = t.float()
    return np.array(t.numpy(), copy=True)


def as_float64(a) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


def ref_input(a):
    """How reference functions see inputs: floats as float64, ints as int64, bool as bool."""
    if not isinstance(a, np.ndarray):
        return a
    if a.dtype == np.bool_:
        return a
    if np.issubdtype(a.dtype, np.integer):
        return a.astype(np.int64)
    return a.astype(np.float64)


def assert_close(actual, expected, name: str | None = None, rtol=None, atol=None, scale=1.0,
                 check_dtype=True):
    """Compare a lib tensor with a NumPy reference: shape, dtype name and values."""
    expected = np.asarray(expected)
    assert tuple(actual.shape) == expected.shape, (tuple(actual.shape), expected.shape)
    got_name = dtype_name(actual.dtype)
    if name is not None and check_dtype:
        assert got_name == name, (got_name, name)
    r, a = tol(got_name, scale)
    rtol = r if rtol is None else rtol
    atol = a if atol is None else atol
    got = to_np(actual)
    if got_name == "bool" or got_name in INT_DTYPES:
        np.testing.assert_array_equal(got, expected.astype(got.dtype))
    else:
        np.testing.assert_allclose(as_float64(got), as_float64(expected), rtol=rtol, atol=atol,
                                   equal_nan=True)


def torch_outcome(fn, arrays, names):
    """Run fn on torch with the same inputs: ('ok', result) or ('err', exception type)."""
    ts = [tensor(torch, a, n) if isinstance(a, np.ndarray) else a for a, n in zip(arrays, names)]
    try:
        return "ok", fn(torch, *ts)
    except Exception as e:  # noqa: BLE001 - we want the type
        return "err", type(e)


def check(lib, fn, ref, arrays, names, layout="contig", scale=1.0, rtol=None, atol=None,
          check_dtype=True):
    """Run `fn(lib, *tensors)` and compare with `ref(*arrays)` (see `ref_input`).

    Tensors are built from `arrays` with dtype names `names` (non-array entries, e.g. Python
    scalars, are passed through).  The expected dtype, shape and whether the call is an error
    come from PyTorch; the expected values come from the NumPy reference.
    """
    kind, tres = torch_outcome(fn, arrays, names)
    ts = [tensor(lib, a, n, layout) if isinstance(a, np.ndarray) else a
          for a, n in zip(arrays, names)]
    if kind == "err":
        # NotImplementedError ("kernel not implemented for dtype") is a RuntimeError subclass;
        # accept the base class for it, require the exact type otherwise.
        with pytest.raises(RuntimeError if tres is NotImplementedError else tres):
            fn(lib, *ts)
        return None
    out = fn(lib, *ts)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    touts = tres if isinstance(tres, (tuple, list)) else (tres,)
    with np.errstate(all="ignore"):
        refs = ref(*[ref_input(a) for a in arrays])
    refs = refs if isinstance(refs, tuple) else (refs,)
    assert len(outs) == len(touts) == len(refs)
    for o, t, r in zip(outs, touts, refs):
        want = dtype_name(t.dtype)
        r = np.asarray(r)
        if want == "bool":
            r = r.astype(bool)
        assert_close(o, np.broadcast_to(r, tuple(t.shape)), want if check_dtype else None,
                     rtol=rtol, atol=atol, scale=scale)
    return out


@pytest.fixture
def autograd():
    """ember_autograd's provider installed for one test, and the previous one (none, in this
    suite) back afterwards, so that the tests of "no provider" behaviour stay true."""
    import ember_tensor

    previous = ember_tensor._get_autograd_hook()  # before the import, which installs it
    module = pytest.importorskip("ember_autograd")
    ember_tensor._set_autograd_hook(module.recording.hook)
    yield module
    ember_tensor._set_autograd_hook(previous)
