"""The array API namespace (ember_tensor.array_api): dtypes, data type functions, the
inspection namespace, creation functions and the array API members of Tensor.

References: NumPy 2 (values, dtypes and shapes), array-api-strict (the standard's promotion
table, can_cast and signatures) and array-api-compat (namespace discovery).
"""

from __future__ import annotations

import array
import enum
import inspect
import itertools

import array_api_compat
import array_api_strict
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ember_tensor as et
import ember_tensor.array_api as xp
from conftest import IS_TORCH
from ember_tensor.array_api._dtypes import promote_types

pytestmark = pytest.mark.skipif(IS_TORCH, reason="ember's array API namespace")

STANDARD = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float32", "float64", "complex64", "complex128"]
EXTRAS = ["float16", "bfloat16"]
ALL = STANDARD + EXTRAS
UINTS = ["uint8", "uint16", "uint32", "uint64"]
INTS = ["int8", "int16", "int32", "int64"] + UINTS
FLOATS = ["float32", "float64", "float16", "bfloat16"]
COMPLEX = ["complex64", "complex128"]
KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
         "complex floating", "numeric"]
NP = {"bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32,
      "int64": np.int64, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
      "uint64": np.uint64, "float16": np.float16, "float32": np.float32,
      "float64": np.float64, "complex64": np.complex64, "complex128": np.complex128}

FAST = settings(max_examples=60, deadline=None)


def D(name):
    return getattr(xp, name)


def name_of(dtype) -> str:
    return str(dtype).split(".")[-1]


def to_np(t) -> np.ndarray:
    if t.dtype == xp.bfloat16:
        t = t.to(xp.float32)
    return np.array(t.numpy(), copy=True)


def assert_equal(t, expected, dtype: str | None = None):
    expected = np.asarray(expected)
    assert isinstance(t, et.Tensor)
    assert tuple(t.shape) == expected.shape
    if dtype is not None:
        assert name_of(t.dtype) == dtype
    np.testing.assert_array_equal(to_np(t), expected)


def shares_memory(t, arr) -> bool:
    return np.shares_memory(np.asarray(t), arr)


@pytest.fixture
def strict():
    with array_api_strict.ArrayAPIStrictFlags(api_version="2024.12"):
        yield array_api_strict


# ---------------------------------------------------------------------------------------------
# the namespace


def test_version_and_names():
    assert xp.__array_api_version__ == "2024.12"
    for name in xp.__all__:
        assert hasattr(xp, name), name
    for name in ALL:
        assert isinstance(D(name), et.dtype)
        assert name in xp.__all__
    assert xp.bool == et.bool and xp.float32 == et.float32


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64", "complex64", "complex128"])
def test_new_dtypes_are_present(name):
    assert D(name) == getattr(et, name)
    assert name in xp.__all__
    info = xp.__array_namespace_info__()
    assert info.dtypes()[name] == D(name)
    assert name in info.dtypes(kind=("integral", "real floating", "complex floating"))


def test_complex_scalars():
    assert xp.result_type(xp.float32, 1j) == xp.complex64
    assert xp.result_type(xp.float64, 1j) == xp.complex128
    assert xp.result_type(xp.complex64, 1j) == xp.complex64
    assert xp.result_type(xp.complex64, 2.5, 3) == xp.complex64
    for dtype in (xp.int8, xp.uint64, xp.bool):
        with pytest.raises(TypeError, match="complex"):
            xp.result_type(dtype, 1j)
    assert xp.result_type(xp.uint64, 2**64 - 1) == xp.uint64
    with pytest.raises(TypeError, match="uint64"):
        xp.result_type(xp.uint64, xp.int8)


def test_finfo_iinfo_of_the_new_dtypes():
    for name, real in (("complex64", np.float32), ("complex128", np.float64)):
        f = xp.finfo(D(name))
        nf = np.finfo(real)
        assert f.dtype == D(name.replace("complex", "float").replace("64", "32")
                            if name == "complex64" else "float64")
        assert (f.bits, f.eps, f.max, f.min, f.smallest_normal) == (
            nf.bits, float(nf.eps), float(nf.max), float(nf.min), float(nf.smallest_normal))
    for name in UINTS:
        i, ni = xp.iinfo(D(name)), np.iinfo(name)
        assert (i.bits, i.min, i.max, i.dtype) == (ni.bits, ni.min, ni.max, D(name))


def test_astype_complex():
    z = xp.asarray([1 + 2j, 0j])
    assert_equal(xp.astype(z, xp.complex128), np.array([1 + 2j, 0j]), "complex128")
    assert_equal(xp.astype(z, xp.bool), np.array([True, False]), "bool")
    assert_equal(xp.astype(xp.asarray([1.5]), xp.complex64), np.array([1.5 + 0j]),
                 "complex64")
    with pytest.raises(TypeError, match="real\\(x\\) or imag\\(x\\)"):
        xp.astype(z, xp.float32)


def test_creation_of_the_new_dtypes():
    assert_equal(xp.asarray([1j, 2]), np.array([1j, 2], np.complex64), "complex64")
    assert_equal(xp.asarray([1, 2**64 - 1], dtype=xp.uint64),
                 np.array([1, 2**64 - 1], np.uint64), "uint64")
    assert_equal(xp.full(2, 2**64 - 1, dtype=xp.uint64), np.full(2, 2**64 - 1, np.uint64),
                 "uint64")
    assert_equal(xp.full(2, 1 - 1j), np.full(2, 1 - 1j, np.complex64), "complex64")
    assert_equal(xp.linspace(0, 2 + 4j, 3), np.linspace(0, 2 + 4j, 3).astype(np.complex64),
                 "complex64")
    for name in ["uint16", "uint32", "uint64", "complex64", "complex128"]:
        a = np.arange(6).reshape(2, 3).astype(name)
        assert_equal(xp.asarray(a), a, name)
        assert_equal(xp.zeros(3, dtype=D(name)), np.zeros(3, name), name)
        assert_equal(xp.eye(2, dtype=D(name)), np.eye(2, dtype=name), name)
    with pytest.raises(TypeError, match="complex dtype"):
        xp.asarray([1j], dtype=xp.float32)
    with pytest.raises(TypeError, match="complex dtype"):
        xp.full(2, 1j, dtype=xp.float64)
    with pytest.raises(OverflowError):
        xp.asarray([2**64], dtype=xp.uint64)


SIGNATURES = ["arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full",
              "full_like", "linspace", "meshgrid", "ones", "ones_like", "tril", "triu",
              "zeros", "zeros_like", "astype", "can_cast", "finfo", "iinfo", "isdtype",
              "result_type"]


@pytest.mark.parametrize("name", SIGNATURES)
def test_signature_matches_the_standard(strict, name):
    """Parameter names and kinds (positional-only, keyword-only) as in array-api-strict."""
    ours = inspect.signature(getattr(xp, name)).parameters.values()
    ref = inspect.signature(getattr(strict, name)).parameters.values()
    assert [(p.name, p.kind) for p in ours] == [(p.name, p.kind) for p in ref]
    for p, q in zip(ours, ref):  # same defaults (array-api-strict's own sentinels aside)
        if q.default is not inspect.Parameter.empty and not isinstance(q.default, enum.Enum):
            assert p.default == q.default, (name, p.name)


def test_keyword_only_and_positional_only_are_enforced():
    with pytest.raises(TypeError):
        xp.eye(3, 3, 1)  # k is keyword-only
    with pytest.raises(TypeError):
        xp.eye(n_rows=3)  # n_rows is positional-only
    with pytest.raises(TypeError):
        xp.tril(xp.ones((2, 2)), 1)
    with pytest.raises(TypeError):
        xp.astype(x=xp.ones(2), dtype=xp.int8)
    with pytest.raises(TypeError):
        xp.zeros((2,), xp.int8)
    with pytest.raises(TypeError):
        xp.linspace(0, 1, 5, xp.float32)


# ---------------------------------------------------------------------------------------------
# type promotion


def strict_result(strict, a: str, b: str):
    try:
        return name_of(strict.result_type(getattr(strict, a), getattr(strict, b)))
    except TypeError:
        return None


@pytest.mark.parametrize("a,b", list(itertools.product(STANDARD, STANDARD)))
def test_promotion_table(strict, a, b):
    """The standard's table: array-api-strict's result, NumPy's where the standard defines
    one, TypeError between kinds."""
    want = strict_result(strict, a, b)
    if want is None:
        with pytest.raises(TypeError, match="cannot be promoted"):
            xp.result_type(D(a), D(b))
        with pytest.raises(TypeError):
            promote_types(D(a), D(b))
        assert ((a == "bool") != (b == "bool") or (a in INTS) != (b in INTS)
                or "uint64" in (a, b))
        return
    assert want == np.result_type(NP[a], NP[b]).name
    assert name_of(xp.result_type(D(a), D(b))) == want
    assert name_of(promote_types(D(a), D(b))) == want
    assert name_of(xp.result_type(xp.ones(2, dtype=D(a)), D(b))) == want


@pytest.mark.parametrize("a,b", [("float16", "float16"), ("float16", "float32"),
                                 ("float16", "float64"), ("bfloat16", "float32"),
                                 ("bfloat16", "float64"), ("float16", "bfloat16"),
                                 ("bfloat16", "bfloat16")])
def test_promotion_of_the_extensions(a, b):
    """float16/bfloat16 promote among floats as in PyTorch, never with other kinds."""
    want = name_of(torch.promote_types(getattr(torch, a), getattr(torch, b)))
    assert name_of(xp.result_type(D(a), D(b))) == want
    assert name_of(xp.result_type(D(b), D(a))) == want
    for other in ["bool", "int8", "uint8", "int64"]:
        with pytest.raises(TypeError):
            xp.result_type(D(a), D(other))


@FAST
@given(st.lists(st.sampled_from(STANDARD), min_size=1, max_size=5), st.randoms())
def test_result_type_of_many_is_order_independent(names, rnd):
    try:
        want = array_api_strict.result_type(*[getattr(array_api_strict, n) for n in names])
    except TypeError:
        with pytest.raises(TypeError):
            xp.result_type(*[D(n) for n in names])
        return
    shuffled = names[:]
    rnd.shuffle(shuffled)
    args = [xp.zeros(1, dtype=D(n)) if i % 2 else D(n) for i, n in enumerate(shuffled)]
    assert name_of(xp.result_type(*args)) == name_of(want)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("scalar", [True, 3, -2.5])
def test_result_type_with_python_scalars(strict, dtype, scalar):
    """2024.12: Python scalars are weak; a bool fits bool, an int integers and floats
    (real or complex), a float floats only."""
    fits = {bool: dtype == "bool", int: dtype in INTS + FLOATS + COMPLEX,
            float: dtype in FLOATS + COMPLEX}
    x = xp.ones(2, dtype=D(dtype))
    if fits[type(scalar)]:
        assert xp.result_type(x, scalar) == D(dtype)
        assert xp.result_type(scalar, D(dtype), scalar) == D(dtype)
        if dtype in STANDARD:
            assert name_of(strict.result_type(getattr(strict, dtype), scalar)) == dtype
    else:
        with pytest.raises(TypeError, match="cannot be combined"):
            xp.result_type(x, scalar)
        if dtype in STANDARD:
            with pytest.raises(TypeError):
                strict.result_type(getattr(strict, dtype), scalar)


def test_result_type_mixed_scalars_and_arrays():
    assert xp.result_type(xp.uint8, xp.int8, 7) == xp.int16
    assert xp.result_type(1, xp.ones(3, dtype=xp.float64), 2.5) == xp.float64
    assert xp.result_type(np.float32(1.5), xp.float32) == xp.float32  # NumPy scalars too


@pytest.mark.parametrize("args,exc,match", [
    ((), ValueError, "at least one array or dtype"),
    ((1, 2.0), ValueError, "at least one array or dtype"),
    ((xp.int32, 1j), TypeError, "complex"),
    (("float32",), TypeError, "argument 0"),
    ((xp.int8, np.float32), TypeError, "argument 1"),
    ((np.zeros(2),), TypeError, "argument 0"),
    ((xp.int8, None), TypeError, "argument 1"),
])
def test_result_type_errors(args, exc, match):
    with pytest.raises(exc, match=match):
        xp.result_type(*args)


@pytest.mark.parametrize("a,b", list(itertools.product(STANDARD, STANDARD)))
def test_can_cast(strict, a, b):
    want = strict.can_cast(getattr(strict, a), getattr(strict, b))
    assert xp.can_cast(D(a), D(b)) is want
    assert xp.can_cast(xp.zeros(1, dtype=D(a)), D(b)) is want
    if want:
        assert np.can_cast(NP[a], NP[b], casting="safe")


def test_can_cast_extensions_and_errors():
    assert xp.can_cast(xp.float16, xp.float32) and xp.can_cast(xp.bfloat16, xp.float64)
    assert not xp.can_cast(xp.float16, xp.bfloat16) and not xp.can_cast(xp.float32, xp.float16)
    assert not xp.can_cast(xp.int8, xp.float16)
    with pytest.raises(TypeError, match="from_"):
        xp.can_cast("int8", xp.int16)
    with pytest.raises(TypeError, match="to must be a dtype"):
        xp.can_cast(xp.int8, np.int16)


# ---------------------------------------------------------------------------------------------
# astype


CAST_VALUES = [0, 1, 2, 5, 100]  # exactly representable in every dtype
FRACTIONS = [0.5, 1.5, 2.75, 0.0, 98.5]  # truncated toward zero by casts to integers


@pytest.mark.parametrize("src,dst", list(itertools.product(ALL, ALL)))
def test_astype_values(src, dst):
    values = FRACTIONS if src in FLOATS else CAST_VALUES
    x = xp.asarray(values, dtype=D(src))
    if src in COMPLEX and dst not in COMPLEX + ["bool"]:  # not permitted by the standard
        with pytest.raises(TypeError, match="complex"):
            xp.astype(x, D(dst))
        return
    y = xp.astype(x, D(dst))
    assert y.dtype == D(dst) and y.shape == x.shape
    # the values are exact in bfloat16, whose reference is float32
    ref = np.asarray(values, dtype=NP.get(src, np.float32)).astype(NP.get(dst, np.float32))
    np.testing.assert_array_equal(to_np(y), ref)


@pytest.mark.parametrize("dtype", ALL)
def test_astype_copy(dtype):
    x = xp.asarray([1, 0, 1], dtype=D(dtype))
    assert xp.astype(x, D(dtype), copy=False) is x
    y = xp.astype(x, D(dtype))  # copy=True: new memory
    assert y is not x
    y[0] = 0
    assert to_np(x)[0] == 1
    other = xp.complex128 if dtype != "complex128" else xp.complex64
    z = xp.astype(x, other, copy=False)  # a conversion is always a new array
    assert z.dtype == other and z is not x


def test_astype_device_and_errors():
    x = xp.ones(3)
    assert xp.astype(x, xp.int8, device=x.device).dtype == xp.int8
    assert xp.astype(x, xp.int8, device="cpu").dtype == xp.int8
    with pytest.raises(ValueError, match="unsupported device"):
        xp.astype(x, xp.int8, device="cuda")
    with pytest.raises(TypeError, match="must be an array"):
        xp.astype(np.ones(3), xp.int8)
    with pytest.raises(TypeError, match="dtype must be a dtype"):
        xp.astype(x, "int8")
    with pytest.raises(TypeError, match="dtype must be a dtype"):
        xp.astype(x, np.float32)


# ---------------------------------------------------------------------------------------------
# finfo / iinfo / isdtype


@pytest.mark.parametrize("name", FLOATS)
def test_finfo(name):
    fi = xp.finfo(D(name))
    ref = torch.finfo(getattr(torch, name))  # NumPy has no bfloat16
    if name != "bfloat16":
        nf = np.finfo(NP[name])
        assert (fi.bits, fi.eps, fi.max, fi.min, fi.smallest_normal) == (
            nf.bits, float(nf.eps), float(nf.max), float(nf.min), float(nf.smallest_normal))
    assert (fi.bits, fi.eps, fi.max, fi.min, fi.smallest_normal) == (
        ref.bits, ref.eps, ref.max, ref.min, ref.smallest_normal)
    for attr in ("eps", "max", "min", "smallest_normal"):
        assert type(getattr(fi, attr)) is float
    assert fi.dtype == D(name)
    assert xp.finfo(xp.ones(2, dtype=D(name))).eps == fi.eps
    assert name in repr(fi)


@pytest.mark.parametrize("name", INTS)
def test_iinfo(name):
    ii = xp.iinfo(D(name))
    ref = np.iinfo(NP[name])
    assert (ii.bits, ii.max, ii.min) == (ref.bits, int(ref.max), int(ref.min))
    assert type(ii.max) is int and type(ii.min) is int
    assert ii.dtype == D(name)
    assert xp.iinfo(xp.zeros(2, dtype=D(name))).max == ii.max


@pytest.mark.parametrize("fn,arg,exc,match", [
    (xp.finfo, xp.int32, ValueError, "not a floating-point dtype"),
    (xp.finfo, xp.bool, ValueError, "not a floating-point dtype"),
    (xp.finfo, "float32", TypeError, "expected a dtype or an array"),
    (xp.finfo, np.float32, TypeError, "expected a dtype or an array"),
    (xp.iinfo, xp.float32, ValueError, "not an integer dtype"),
    (xp.iinfo, xp.bool, ValueError, "not an integer dtype"),
    (xp.iinfo, 3, TypeError, "expected a dtype or an array"),
])
def test_info_errors(fn, arg, exc, match):
    with pytest.raises(exc, match=match):
        fn(arg)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("kind", KINDS)
def test_isdtype(name, kind):
    want = kind in ("real floating", "numeric") if name == "bfloat16" else np.isdtype(
        NP[name], kind)
    assert xp.isdtype(D(name), kind) is bool(want)
    assert xp.isdtype(D(name), (kind, "bool")) is bool(want or name == "bool")


def test_isdtype_with_dtypes_and_errors():
    assert xp.isdtype(xp.int8, xp.int8) and not xp.isdtype(xp.int8, xp.int16)
    assert xp.isdtype(xp.float32, (xp.int8, "real floating"))
    assert not xp.isdtype(xp.float32, ())
    with pytest.raises(ValueError, match="unknown kind 'floating'"):
        xp.isdtype(xp.float32, "floating")
    with pytest.raises(TypeError, match="dtype must be a dtype"):
        xp.isdtype(np.float32, "real floating")
    with pytest.raises(TypeError, match="nested"):
        xp.isdtype(xp.float32, (("bool",),))
    with pytest.raises(TypeError, match="kind must be"):
        xp.isdtype(xp.float32, 3)


# ---------------------------------------------------------------------------------------------
# __array_namespace_info__


def test_info(strict):
    info = xp.__array_namespace_info__()
    caps = info.capabilities()
    assert caps == {"boolean indexing": True, "data-dependent shapes": True,
                    "max dimensions": None}
    assert set(caps) == set(strict.__array_namespace_info__().capabilities())
    cpu = info.default_device()
    assert cpu == xp.zeros(1).device == et.device("cpu")
    assert info.devices() == [cpu]
    defaults = info.default_dtypes()
    assert set(defaults) == set(strict.__array_namespace_info__().default_dtypes())
    assert defaults == {"real floating": xp.float32, "complex floating": xp.complex64,
                        "integral": xp.int64, "indexing": xp.int64}
    assert info.default_dtypes(device=cpu) == defaults


def test_info_dtypes(strict):
    info = xp.__array_namespace_info__()
    assert list(info.dtypes()) == STANDARD
    assert all(D(k) == v for k, v in info.dtypes().items())
    sinfo = strict.__array_namespace_info__()
    for kind in KINDS:
        want = [k for k in sinfo.dtypes(kind=kind) if k in STANDARD]
        assert sorted(info.dtypes(kind=kind)) == sorted(want), kind
    assert list(info.dtypes(kind="complex floating")) == ["complex64", "complex128"]
    assert list(info.dtypes(kind=("bool", "real floating"))) == ["bool", "float32", "float64"]
    assert info.dtypes(device=xp.zeros(1).device) == info.dtypes()
    with pytest.raises(ValueError, match="unknown kind"):
        info.dtypes(kind="floating")
    with pytest.raises(TypeError):
        info.dtypes(kind=3)
    with pytest.raises(ValueError, match="unsupported device"):
        info.dtypes(device="cuda")
    with pytest.raises(ValueError, match="unsupported device"):
        info.default_dtypes(device=et.device("cuda"))


def test_default_float_dtype_follows_the_core():
    old = et.get_default_dtype()
    et.set_default_dtype(et.float64)
    try:
        assert xp.__array_namespace_info__().default_dtypes()["real floating"] == xp.float64
        for t in (xp.zeros(2), xp.asarray(1.5), xp.asarray([1, 2.5]), xp.linspace(0, 1, 3),
                  xp.arange(0.5, 2), xp.full(2, 1.5), xp.eye(2)):
            assert t.dtype == xp.float64
    finally:
        et.set_default_dtype(old)


# ---------------------------------------------------------------------------------------------
# empty / zeros / ones / full and the *_like functions


@pytest.mark.parametrize("shape", [(), 0, 3, (2, 3), [4, 0, 2], (1, 1, 1, 1)])
@pytest.mark.parametrize("dtype", [None, *ALL])
def test_zeros_ones_empty_full(shape, dtype):
    d = None if dtype is None else D(dtype)
    want = "float32" if dtype is None else dtype
    npd = NP.get(want, np.float32)
    assert_equal(xp.zeros(shape, dtype=d), np.zeros(shape, npd), want)
    assert_equal(xp.ones(shape, dtype=d), np.ones(shape, npd), want)
    e = xp.empty(shape, dtype=d)
    assert tuple(e.shape) == np.empty(shape).shape and name_of(e.dtype) == want
    assert_equal(xp.full(shape, 1, dtype=d if d is not None else xp.float32),
                 np.full(shape, 1, npd), want)


@pytest.mark.parametrize("fill,want", [(True, "bool"), (False, "bool"), (7, "int64"),
                                       (-2**63, "int64"), (2.5, "float32"),
                                       (np.float32(0.25), "float32"), (np.int8(3), "int64")])
def test_full_infers_dtype(fill, want):
    t = xp.full((2, 2), fill)
    assert_equal(t, np.full((2, 2), fill, dtype=NP[want]), want)


def test_full_with_dtype_and_errors():
    assert_equal(xp.full(3, 7, dtype=xp.float64), np.full(3, 7.0), "float64")
    assert_equal(xp.full(3, True, dtype=xp.int8), np.ones(3, np.int8), "int8")
    assert_equal(xp.full(3, 2.75, dtype=xp.int32), np.full(3, 2, np.int32), "int32")
    assert_equal(xp.full(2, 1j), np.full(2, 1j, np.complex64), "complex64")
    with pytest.raises(TypeError, match="fill_value must be a Python scalar"):
        xp.full(2, "1")
    with pytest.raises(TypeError, match="fill_value must be a Python scalar"):
        xp.full(2, xp.asarray(1.0))
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        xp.full(2, 300, dtype=xp.int8)
    with pytest.raises(OverflowError, match="out of bounds for int64"):
        xp.full(2, 2**63)


@pytest.mark.parametrize("fn", [xp.zeros, xp.ones, xp.empty])
def test_shape_errors(fn):
    with pytest.raises(ValueError, match="negative dimensions"):
        fn((2, -1))
    with pytest.raises(TypeError, match="shape"):
        fn(2.0)
    with pytest.raises(TypeError, match="shape entries"):
        fn((2, "3"))
    with pytest.raises(TypeError, match="dtype must be a dtype"):
        fn(2, dtype="float32")
    with pytest.raises(ValueError, match="unsupported device"):
        fn(2, device="cuda")
    assert fn(2, device="cpu").device == fn(2, device=et.device("cpu")).device


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dst", [None, "int16", "float64", "bool"])
def test_like_functions(src, dst):
    x = xp.asarray([[1, 2, 3], [4, 5, 6]], dtype=D(src))
    d = None if dst is None else D(dst)
    want = src if dst is None else dst
    npd = NP.get(want, np.float32)
    assert_equal(xp.zeros_like(x, dtype=d), np.zeros((2, 3), npd), want)
    assert_equal(xp.ones_like(x, dtype=d), np.ones((2, 3), npd), want)
    assert_equal(xp.full_like(x, 1, dtype=d), np.ones((2, 3), npd), want)
    e = xp.empty_like(x, dtype=d)
    assert tuple(e.shape) == (2, 3) and name_of(e.dtype) == want


def test_like_functions_on_views_and_errors():
    x = xp.arange(12.0).reshape(3, 4)
    v = x.mT  # non-contiguous view
    assert_equal(xp.zeros_like(v), np.zeros((4, 3), np.float32), "float32")
    assert_equal(xp.full_like(v, 2.5), np.full((4, 3), 2.5, np.float32), "float32")
    assert_equal(xp.full_like(xp.ones(2, dtype=xp.int16), 9), np.full(2, 9, np.int16), "int16")
    for fn in (xp.zeros_like, xp.ones_like, xp.empty_like):
        with pytest.raises(TypeError, match="must be an array"):
            fn(np.zeros(3))
        with pytest.raises(ValueError, match="unsupported device"):
            fn(v, device="cuda")
    with pytest.raises(TypeError, match="must be an array"):
        xp.full_like([1, 2], 1)
    with pytest.raises(OverflowError):
        xp.full_like(xp.ones(2, dtype=xp.uint8), -1)
    with pytest.raises(TypeError, match="complex"):
        xp.full_like(xp.ones(2), 1j)


# ---------------------------------------------------------------------------------------------
# arange / linspace / eye / meshgrid / tril / triu


@FAST
@given(st.integers(-60, 60), st.one_of(st.none(), st.integers(-60, 60)),
       st.integers(-9, 9).filter(bool))
def test_arange_ints(start, stop, step):
    got = xp.arange(start, stop, step)
    want = np.arange(start, step=step) if stop is None else np.arange(start, stop, step)
    assert_equal(got, want, "int64")


@FAST
@given(st.floats(-50, 50), st.floats(-50, 50),
       st.floats(0.05, 9) | st.floats(-9, -0.05))
def test_arange_floats(start, stop, step):
    """Length ceil((stop - start) / step); values start + i * step computed in float64 then
    rounded (NumPy rounds each step in float32, so float64 is the reference)."""
    ref = np.arange(start, stop, step)
    got64 = xp.arange(start, stop, step, dtype=xp.float64)
    assert got64.shape[0] == ref.shape[0] == max(0, int(np.ceil((stop - start) / step)))
    # NumPy's step is (start + step) - start, off by up to an ulp of start
    np.testing.assert_allclose(to_np(got64), ref, rtol=1e-12, atol=1e-10)
    got = xp.arange(start, stop, step)
    assert got.dtype == xp.float32
    np.testing.assert_allclose(to_np(got), ref.astype(np.float32), rtol=2e-7, atol=1e-6)


@pytest.mark.parametrize("args,kw,want", [
    ((5,), {}, np.arange(5)),
    ((2, 11, 3), {}, np.arange(2, 11, 3)),
    ((10, 0, -3), {}, np.arange(10, 0, -3)),
    ((5, 2), {}, np.arange(5, 2)),
    ((0,), {}, np.arange(0)),
    ((0, 1, 0.25), {}, np.arange(0, 1, 0.25, dtype=np.float32)),
    ((3.0,), {}, np.arange(3.0, dtype=np.float32)),
    ((5,), {"dtype": xp.uint8}, np.arange(5, dtype=np.uint8)),
    ((5,), {"dtype": xp.float64}, np.arange(5, dtype=np.float64)),
    ((-3, 3), {"dtype": xp.int8}, np.arange(-3, 3, dtype=np.int8)),
    ((0, 2, 0.5), {"dtype": xp.float16}, np.arange(0, 2, 0.5, dtype=np.float16)),
])
def test_arange_cases(args, kw, want):
    got = xp.arange(*args, **kw)
    assert_equal(got, want, want.dtype.name)


def test_arange_errors():
    with pytest.raises(ValueError, match="step must not be zero"):
        xp.arange(0, 5, 0)
    with pytest.raises(TypeError, match="complex"):
        xp.arange(1j)
    with pytest.raises(TypeError, match="stop must be a Python scalar"):
        xp.arange(0, "5")
    with pytest.raises(ValueError, match="cannot compute a length"):
        xp.arange(0, float("inf"), 1.0)
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        xp.arange(300, dtype=xp.uint8)
    with pytest.raises(ValueError, match="unsupported device"):
        xp.arange(3, device="cuda")


@FAST
@given(st.floats(-1e3, 1e3), st.floats(-1e3, 1e3), st.integers(0, 40), st.booleans(),
       st.sampled_from(["float32", "float64", "int64", "int16", "float16"]))
def test_linspace_matches_numpy(start, stop, num, endpoint, dtype):
    """Computed as NumPy does (float64, then cast; integers take the floor): equal values."""
    got = xp.linspace(start, stop, num, endpoint=endpoint, dtype=D(dtype))
    want = np.linspace(start, stop, num, endpoint=endpoint, dtype=NP[dtype])
    assert_equal(got, want, dtype)


def test_linspace_cases_and_errors():
    assert_equal(xp.linspace(0, 1, 5), np.linspace(0, 1, 5, dtype=np.float32), "float32")
    assert_equal(xp.linspace(2, 3, 1), np.array([2.0], np.float32), "float32")
    assert_equal(xp.linspace(2, 3, 0), np.zeros(0, np.float32), "float32")
    assert_equal(xp.linspace(0, 1, 4, endpoint=False), np.array([0, .25, .5, .75], np.float32))
    last = to_np(xp.linspace(0.1, 0.7, 7, dtype=xp.float64))[-1]
    assert last == 0.7  # the endpoint is exact
    with pytest.raises(ValueError, match="num must be non-negative"):
        xp.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="num must be an integer"):
        xp.linspace(0, 1, 2.5)
    with pytest.raises(TypeError, match="complex"):
        xp.linspace(0, 1j, 3, dtype=xp.float32)
    with pytest.raises(ValueError, match="unsupported device"):
        xp.linspace(0, 1, 3, device="gpu")


@pytest.mark.parametrize("n_rows,n_cols", [(0, None), (1, None), (3, None), (3, 5), (5, 3),
                                           (4, 0)])
@pytest.mark.parametrize("k", [-6, -2, -1, 0, 1, 2, 4, 6])
def test_eye(n_rows, n_cols, k):
    assert_equal(xp.eye(n_rows, n_cols, k=k), np.eye(n_rows, n_cols, k=k, dtype=np.float32),
                 "float32")


@pytest.mark.parametrize("dtype", ALL)
def test_eye_dtypes_and_errors(dtype):
    assert_equal(xp.eye(3, k=1, dtype=D(dtype)),
                 np.eye(3, k=1, dtype=NP.get(dtype, np.float32)), dtype)
    with pytest.raises(ValueError, match="non-negative"):
        xp.eye(-1)
    with pytest.raises(TypeError, match="n_cols must be an integer"):
        xp.eye(2, 2.0)
    with pytest.raises(ValueError, match="unsupported device"):
        xp.eye(2, device="cuda")


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sizes", [(), (3,), (0,), (2, 3), (3, 1, 2), (2, 0, 4)])
def test_meshgrid(indexing, sizes):
    arrays = [np.arange(n, dtype=np.int16) * (i + 1) for i, n in enumerate(sizes)]
    ours = xp.meshgrid(*[xp.asarray(a) for a in arrays], indexing=indexing)
    want = np.meshgrid(*arrays, indexing=indexing)
    assert isinstance(ours, list) and len(ours) == len(want)
    for o, w in zip(ours, want):
        assert_equal(o, w, "int16")
        assert o.is_contiguous()


def test_meshgrid_outputs_are_new_arrays_and_errors():
    a = xp.asarray([1.0, 2.0])
    (g,) = xp.meshgrid(a)
    g[0] = 5.0
    assert to_np(a)[0] == 1.0
    with pytest.raises(ValueError, match="share one dtype"):
        xp.meshgrid(a, xp.asarray([1, 2]))
    with pytest.raises(ValueError, match="one-dimensional"):
        xp.meshgrid(xp.ones((2, 2)))
    with pytest.raises(ValueError, match="indexing must be"):
        xp.meshgrid(a, indexing="yx")
    with pytest.raises(TypeError, match="must be an array"):
        xp.meshgrid([1, 2])


@pytest.mark.parametrize("shape", [(3, 4), (4, 3), (2, 3, 3), (0, 2), (1, 2, 0, 5)])
@pytest.mark.parametrize("k", [-5, -1, 0, 1, 2, 5])
def test_tril_triu(shape, k):
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape) + 1
    x = xp.asarray(a)
    assert_equal(xp.tril(x, k=k), np.tril(a, k), "int32")
    assert_equal(xp.triu(x, k=k), np.triu(a, k), "int32")
    assert_equal(xp.tril(x.mT, k=k), np.tril(np.swapaxes(a, -1, -2), k), "int32")


def test_tril_triu_errors():
    for fn in (xp.tril, xp.triu):
        with pytest.raises(ValueError, match="at least two dimensions"):
            fn(xp.ones(3))
        with pytest.raises(TypeError, match="must be an array"):
            fn(np.ones((2, 2)))
        with pytest.raises(TypeError, match="k must be an integer"):
            fn(xp.ones((2, 2)), k=1.0)


# ---------------------------------------------------------------------------------------------
# asarray


@pytest.mark.parametrize("obj,want", [
    (True, "bool"), (3, "int64"), (2.5, "float32"), ([True, False], "bool"),
    ([1, True], "int64"), ([1, 2.5], "float32"), ([[1, 2], [3, 4]], "int64"),
    ([], "float32"), ([[], []], "float32"), ((1, 2), "int64"), (range(4), "int64"),
    ([[True], [False]], "bool"), ([np.float32(1.5), 2], "float32"),
    ([np.int8(1), np.bool_(True)], "int64"), ([2**62, -2**63], "int64"),
    ([1, 2**70, 0.5], "float32"),
])
def test_asarray_python_values(obj, want):
    t = xp.asarray(obj)
    ref = np.asarray(obj if not isinstance(obj, range) else list(obj), dtype=NP[want])
    assert_equal(t, ref, want)


@FAST
@given(st.recursive(
    st.one_of(st.booleans(), st.integers(-1000, 1000), st.floats(-1e6, 1e6)),
    lambda inner: st.lists(inner, min_size=0, max_size=3), max_leaves=12))
def test_asarray_nested_sequences(obj):
    try:
        ref = np.asarray(obj)
    except ValueError:  # ragged: NumPy and ember both refuse
        with pytest.raises(ValueError, match="ragged"):
            xp.asarray(obj)
        return
    kind = ref.dtype.kind
    want = "bool" if kind == "b" else "int64" if kind in "iu" else "float32"
    assert_equal(xp.asarray(obj), ref.astype(NP[want]), want)
    assert_equal(xp.asarray(obj, dtype=xp.float64), ref.astype(np.float64), "float64")


@pytest.mark.parametrize("dtype", [d for d in ALL if d != "bfloat16"])
def test_asarray_numpy_shares_memory(dtype):
    a = np.arange(12).reshape(3, 4).astype(NP[dtype])
    for copy in (None, False):
        t = xp.asarray(a, copy=copy)
        assert_equal(t, a, dtype)
        assert shares_memory(t, a)
    c = xp.asarray(a, copy=True)
    assert_equal(c, a, dtype)
    assert not shares_memory(c, a)
    for view in (a[:, ::2], a[::-1], a.T):  # strided views are shared too
        t = xp.asarray(view, copy=False)
        assert_equal(t, view, dtype)
        assert shares_memory(t, a)


def test_asarray_numpy_copies_when_needed():
    ro = np.arange(4.0)
    ro.flags.writeable = False
    t = xp.asarray(ro)  # ember arrays are writable: read-only memory is copied
    assert_equal(t, ro, "float64")
    assert not shares_memory(t, ro)
    with pytest.raises(ValueError, match="read-only"):
        xp.asarray(ro, copy=False)
    be = np.arange(3, dtype=">i4")
    assert_equal(xp.asarray(be), be.astype(np.int32), "int32")
    with pytest.raises(ValueError, match="byte order"):
        xp.asarray(be, copy=False)
    a = np.arange(3.0)
    assert_equal(xp.asarray(a, dtype=xp.float32), a.astype(np.float32), "float32")
    with pytest.raises(ValueError, match="float64 to float32 needs a copy"):
        xp.asarray(a, dtype=xp.float32, copy=False)
    assert_equal(xp.asarray(np.float32(1.5)), np.float32(1.5), "float32")
    assert_equal(xp.asarray(np.float64(1.5)), np.float64(1.5), "float64")
    with pytest.raises(ValueError, match="NumPy scalar"):
        xp.asarray(np.int16(3), copy=False)


@pytest.mark.parametrize("np_dtype", ["U3", "O", "float128" if hasattr(np, "float128") else "V4",
                                      "complex256" if hasattr(np, "complex256") else "S2"])
def test_asarray_unsupported_numpy_dtypes(np_dtype):
    with pytest.raises(TypeError, match="unsupported dtype"):
        xp.asarray(np.zeros(2, dtype=np_dtype))


def test_asarray_buffers():
    buf = bytearray(b"\x01\x02\x03")
    t = xp.asarray(buf)
    assert_equal(t, np.array([1, 2, 3], np.uint8), "uint8")
    t[0] = 9  # shared
    assert buf[0] == 9
    arr = array.array("d", [1.0, 2.0])
    t = xp.asarray(arr, copy=False)
    assert_equal(t, np.array([1.0, 2.0]), "float64")
    t[1] = 7.0
    assert arr[1] == 7.0
    assert_equal(xp.asarray(array.array("h", [1, -2])), np.array([1, -2], np.int16), "int16")
    assert_equal(xp.asarray(memoryview(b"ab")), np.array([97, 98], np.uint8), "uint8")
    data = b"xyz"  # immutable: copied
    t = xp.asarray(data)
    t[0] = 0
    assert data == b"xyz"
    with pytest.raises(ValueError, match="read-only"):
        xp.asarray(b"xyz", copy=False)
    assert_equal(xp.asarray(array.array("I", [1])), np.array([1], np.uint32), "uint32")


def test_asarray_of_arrays_and_dlpack_producers():
    x = xp.asarray([1.0, 2.0])
    assert xp.asarray(x) is x and xp.asarray(x, copy=False) is x
    assert xp.asarray(x, dtype=xp.float32) is x
    c = xp.asarray(x, copy=True)
    assert c is not x
    c[0] = 5.0
    assert to_np(x)[0] == 1.0
    assert_equal(xp.asarray(x, dtype=xp.int64), np.array([1, 2]), "int64")
    with pytest.raises(ValueError, match="float32 to int64 needs a copy"):
        xp.asarray(x, dtype=xp.int64, copy=False)
    tt = torch.arange(4, dtype=torch.int16)
    t = xp.asarray(tt)  # via DLPack, sharing memory
    assert_equal(t, np.arange(4, dtype=np.int16), "int16")
    tt[0] = 42
    assert to_np(t)[0] == 42
    assert not np.shares_memory(np.asarray(xp.asarray(tt, copy=True)), tt.numpy())
    bf = torch.tensor([1.5, -2.0], dtype=torch.bfloat16)
    assert_equal(xp.asarray(bf), np.array([1.5, -2.0], np.float32), "bfloat16")


@pytest.mark.parametrize("obj,exc,match", [
    ([1, 2], ValueError, "always makes a copy"),
    (3.5, ValueError, "always makes a copy"),
])
def test_asarray_copy_false_for_python_values(obj, exc, match):
    with pytest.raises(exc, match=match):
        xp.asarray(obj, copy=False)


@pytest.mark.parametrize("obj,kw,exc,match", [
    ([[1, 2], [3]], {}, ValueError, "ragged"),
    ([1, [2]], {}, ValueError, "ragged"),
    ([[1], 2], {}, ValueError, "ragged"),
    (1j, {"dtype": xp.float64}, TypeError, "complex"),
    ([1, 2j], {"dtype": xp.int64}, TypeError, "complex"),
    ("abc", {}, TypeError, "str"),
    (["a"], {}, TypeError, "only hold Python scalars"),
    ([None], {}, TypeError, "only hold Python scalars"),
    (None, {}, TypeError, "cannot convert NoneType"),
    (object(), {}, TypeError, "cannot convert object"),
    ([xp.asarray([1.0])], {}, TypeError, "use stack"),
    ([[1.0], xp.asarray([1.0])], {}, TypeError, "use stack"),
    ([np.arange(2)], {}, TypeError, "only hold Python scalars"),
    (2**63, {}, OverflowError, "out of bounds for int64"),
    ([-1], {"dtype": xp.uint8}, OverflowError, "out of bounds for uint8"),
    ([1], {"dtype": "int8"}, TypeError, "dtype must be a dtype"),
    ([1], {"dtype": np.int8}, TypeError, "dtype must be a dtype"),
    ([1], {"device": "cuda"}, ValueError, "unsupported device"),
    ([1], {"device": et.device("cuda")}, ValueError, "unsupported device"),
    ([1], {"device": 0}, ValueError, "unsupported device"),
])
def test_asarray_errors(obj, kw, exc, match):
    with pytest.raises(exc, match=match):
        xp.asarray(obj, **kw)


@pytest.mark.parametrize("items,dtype,expected", [
    # 0-d arrays in a sequence: their values, and their promoted dtype (NumPy's result)
    (lambda: [[xp.asarray(1, dtype=xp.uint8), xp.asarray(200, dtype=xp.uint8)]], None,
     np.array([[1, 200]], dtype=np.uint8)),
    (lambda: [xp.asarray(1, dtype=xp.int8), xp.asarray(2.5, dtype=xp.float64)], None,
     np.array([1, 2.5])),
    (lambda: [xp.asarray(1 + 2j, dtype=xp.complex64), xp.asarray(3, dtype=xp.int16)], None,
     np.array([1 + 2j, 3], dtype=np.complex64)),
    (lambda: [xp.asarray(2**64 - 1, dtype=xp.uint64)], None,
     np.array([2**64 - 1], dtype=np.uint64)),
    (lambda: [xp.asarray(True), False], None, np.array([True, False])),
    # a Python scalar of a higher kind: that kind's default dtype
    (lambda: [xp.asarray(1, dtype=xp.int8), 0.5], None, np.array([1, 0.5], dtype=np.float32)),
    (lambda: [xp.asarray(1, dtype=xp.int8), 7], xp.float64, np.array([1.0, 7.0])),
])
def test_asarray_of_zero_d_arrays_in_sequences(items, dtype, expected):
    """The conformance suite builds references this way; PyTorch's tensor() reads 0-d
    tensors in a sequence as their values too."""
    t = xp.asarray(items(), dtype=dtype)
    assert str(t.dtype).rsplit(".", 1)[-1] == expected.dtype.name
    np.testing.assert_array_equal(t.numpy(), expected)


@pytest.mark.parametrize("dtype", ALL)
def test_asarray_explicit_dtype(dtype):
    t = xp.asarray([[0, 1], [2, 3]], dtype=D(dtype), device=et.device("cpu"))
    assert_equal(t, np.array([[0, 1], [2, 3]]).astype(NP.get(dtype, np.float32)), dtype)
    t = xp.asarray(1.0, dtype=D(dtype))
    assert t.shape == () and t.dtype == D(dtype)


# ---------------------------------------------------------------------------------------------
# from_dlpack


def test_from_dlpack():
    a = np.arange(6.0).reshape(2, 3)
    t = xp.from_dlpack(a)
    assert_equal(t, a, "float64")
    assert shares_memory(t, a)
    c = xp.from_dlpack(a, copy=True)
    assert not shares_memory(c, a)
    assert_equal(xp.from_dlpack(a, device=et.device("cpu"), copy=False), a, "float64")
    back = np.from_dlpack(xp.asarray([1, 2, 3], dtype=xp.int8))
    assert back.dtype == np.int8 and back.tolist() == [1, 2, 3]
    x = xp.ones((2, 2), dtype=xp.uint8)
    assert_equal(xp.from_dlpack(x), np.ones((2, 2), np.uint8), "uint8")
    with pytest.raises(ValueError, match="unsupported device"):
        xp.from_dlpack(a, device="cuda")
    with pytest.raises(TypeError):
        xp.from_dlpack([1, 2])
    tt = torch.arange(3.0)
    t = xp.from_dlpack(tt)
    tt[0] = 7.0
    assert to_np(t)[0] == 7.0


def test_from_dlpack_copies_read_only_numpy_arrays():
    ro = np.arange(3.0)
    ro.flags.writeable = False
    t = xp.from_dlpack(ro)
    t[0] = 42.0
    assert ro[0] == 0.0
    with pytest.raises(BufferError, match="read-only"):
        xp.from_dlpack(ro, copy=False)


# ---------------------------------------------------------------------------------------------
# Tensor members


@pytest.mark.parametrize("version", [None, "2021.12", "2022.12", "2023.12", "2024.12"])
def test_array_namespace(version):
    x = xp.ones(2)
    assert x.__array_namespace__(api_version=version) is xp
    assert array_api_compat.array_namespace(x, api_version=version) is xp


@pytest.mark.parametrize("version,exc", [("2019.12", ValueError), ("2025.12", ValueError),
                                         ("latest", ValueError), (2024.12, TypeError)])
def test_array_namespace_bad_version(version, exc):
    with pytest.raises(exc, match="version"):
        xp.ones(2).__array_namespace__(api_version=version)


def test_array_api_compat_recognises_ember_arrays():
    x = xp.asarray([[1.0, 2.0]])
    assert array_api_compat.is_array_api_obj(x)
    assert array_api_compat.array_namespace(x, xp.ones(3), 1.0) is xp
    assert array_api_compat.device(x) == x.device
    assert not array_api_compat.is_numpy_array(x)
    assert not array_api_compat.is_torch_array(x)


def test_to_device():
    x = xp.ones(3)
    assert x.to_device(x.device) is x
    assert x.to_device("cpu") is x
    assert x.to_device(xp.__array_namespace_info__().default_device()) is x
    with pytest.raises(ValueError, match="unsupported device"):
        x.to_device("cuda")
    with pytest.raises(ValueError, match="no streams"):
        x.to_device(x.device, stream=1)
    with pytest.raises(TypeError):
        x.to_device(x.device, 1)  # stream is keyword-only
    assert array_api_compat.to_device(x, x.device) is x


@pytest.mark.parametrize("shape", [(2, 3), (4, 2, 3), (1, 0, 5)])
def test_mT(shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = xp.asarray(a)
    assert_equal(x.mT, np.swapaxes(a, -1, -2), "float32")
    if a.size:  # a view
        x.mT[..., 0, 0] = -1.0
        assert to_np(x)[..., 0, 0].tolist() == np.full(shape[:-2], -1.0).tolist()


@pytest.mark.parametrize("shape", [(), (3,)])
def test_mT_needs_two_dimensions(shape):
    with pytest.raises(RuntimeError, match="at least two dimensions"):
        _ = xp.ones(shape).mT
    if shape:  # the error of PyTorch (which deprecates, but allows, mT of 0-d tensors)
        with pytest.raises(RuntimeError):
            _ = torch.ones(shape).mT


def test_tensor_members_of_the_standard():
    assert xp.ones((2, 3)).mT.shape == (3, 2)
    assert xp.ones(1).__array_namespace__() is xp
