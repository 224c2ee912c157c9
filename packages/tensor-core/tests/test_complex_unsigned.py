"""complex64 / complex128 and uint16 / uint32 / uint64 (issue 25) against PyTorch and NumPy.

The op registry (test_op_registry.py) runs every op whose ops.yaml entry lists these dtypes
against torch; this file covers what a registry row cannot: the dtype objects, promotion
(every pair), Python complex numbers, creation, printing, casts, the views between complex
tensors and their parts (memory shared), NumPy and DLPack round trips without copies, the
ops PyTorch lacks for the wide unsigned types (against NumPy), and the errors.
"""

from __future__ import annotations

import itertools
import pickle
import warnings

import numpy as np
import pytest
import torch

import ember_tensor as et

NEW = ["complex64", "complex128", "uint16", "uint32", "uint64"]
ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
       "float64"] + NEW
COMPLEX = ["complex64", "complex128"]
UNSIGNED = ["uint16", "uint32", "uint64"]


def name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def complex_data(dt: str, n: int = 40, seed: int = 0) -> np.ndarray:
    """Random complex values with the special cases first (0, i, -1, inf, nan, tiny)."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(n) * 2 + 1j * rng.standard_normal(n) * 2
    z[:6] = [0, 1j, -1, complex(np.inf, 1), complex(np.nan, 0), 1e-7 + 1e-7j]
    return z.astype(dt)


def both(arr: np.ndarray):
    return et.from_numpy(arr.copy()), torch.from_numpy(arr.copy())


# ---------------------------------------------------------------------------------------------
# dtype objects and promotion


@pytest.mark.parametrize("dt", ALL)
def test_dtype_properties_match_torch(dt):
    e, t = getattr(et, dt), getattr(torch, dt)
    assert e.is_complex == t.is_complex
    assert e.is_floating_point == t.is_floating_point
    assert e.is_signed == t.is_signed
    assert e.itemsize == t.itemsize
    assert repr(e) == repr(t).replace("torch.", "ember.")
    assert name(e.to_real()) == name(t.to_real())
    assert pickle.loads(pickle.dumps(e)) is e
    if dt in ("float32", "float64", "bfloat16", "complex64", "complex128"):
        assert name(e.to_complex()) == name(t.to_complex())
    elif dt == "float16":
        assert e.to_complex() is et.complex64  # torch: complex32, which Ember does not have
    else:
        with pytest.raises(RuntimeError, match="Unknown Complex ScalarType"):
            e.to_complex()
        with pytest.raises(RuntimeError, match="Unknown Complex ScalarType"):
            t.to_complex()


def test_aliases():
    assert et.cfloat is et.complex64 and et.cdouble is et.complex128


def test_promotion_of_every_pair_matches_torch():
    """PyTorch's table; where PyTorch has no rule for uint16/32/64 (it raises), the array API
    standard's (NumPy's) for integers and bool, and PyTorch's error for uint64 with a signed
    integer and for complex (the standard has no rule there either)."""
    extended = 0
    for a, b in itertools.product(ALL, ALL):
        try:
            want = name(torch.promote_types(getattr(torch, a), getattr(torch, b)))
        except RuntimeError as err:
            assert "is not supported" in str(err)
            kinds = {np.dtype(a).kind, np.dtype(b).kind}
            if "c" in kinds or ("i" in kinds and "uint64" in (a, b)):
                with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64"):
                    et.promote_types(getattr(et, a), getattr(et, b))
            else:
                got = name(et.promote_types(getattr(et, a), getattr(et, b)))
                assert got == str(np.promote_types(a, b)), (a, b)
                extended += 1
            continue
        assert name(et.promote_types(getattr(et, a), getattr(et, b))) == want, (a, b)
    # ordered pairs: wide with wide (6), with bool or uint8 (12), uint16/32 with a signed (16)
    assert extended == 34


@pytest.mark.parametrize("dt", ["bool", "uint8", "int32", "int64", "bfloat16", "float32",
                                "float64", "complex64", "complex128"])
@pytest.mark.parametrize("number", [2.5, 1 + 2j, 3, True])
def test_python_numbers_are_weak(dt, number):
    e, t = both(np.array([1, 0, 1]).astype(np.float64))
    e, t = e.to(getattr(et, dt)), t.to(getattr(torch, dt))
    for op in ("add", "mul"):
        want = getattr(torch, op)(t, number)
        got = getattr(et, op)(e, number)
        assert name(got.dtype) == name(want.dtype), (op, dt, number)
        np.testing.assert_allclose(got.to(et.complex128).numpy(),
                                   want.to(torch.complex128).numpy(), rtol=1e-2)


# ---------------------------------------------------------------------------------------------
# creation, printing, items


@pytest.mark.parametrize("dt", NEW)
def test_factories(dt):
    factories = [("zeros", ((2, 3),)), ("ones", ((2, 3),)), ("full", ((2, 3), 7))]
    if dt in COMPLEX:  # torch has no eye for uint16/32/64
        factories.append(("eye", (3,)))
    for f, args in factories:
        got = getattr(et, f)(*args, dtype=getattr(et, dt))
        want = getattr(torch, f)(*args, dtype=getattr(torch, dt))
        assert name(got.dtype) == dt
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_tensor_from_complex_numbers():
    data = [[1 + 2j, 3], [-0.5j, 2.5]]
    got, want = et.tensor(data), torch.tensor(data)
    assert got.dtype is et.complex64 and got.tolist() == want.tolist()
    assert et.tensor(data, dtype=et.complex128).dtype is et.complex128
    assert et.tensor(1 + 1j).item() == 1 + 1j
    assert et.tensor([np.complex64(1 - 1j)]).dtype is et.complex64
    with pytest.raises(TypeError, match="must be real number, not complex"):
        et.tensor([1 + 2j], dtype=et.float32)


def test_random_complex_factories():
    et.manual_seed(0)
    z = et.randn(200_000, dtype=et.complex64).numpy()
    # each part of variance 1/2: E|z|^2 = 1, as torch.randn
    assert abs(z.real.var() - 0.5) < 0.01 and abs(z.imag.var() - 0.5) < 0.01
    assert abs(z.mean()) < 0.01
    u = et.rand(10_000, dtype=et.complex128).numpy()
    assert u.dtype == np.complex128
    assert (u.real >= 0).all() and (u.real < 1).all() and (u.imag >= 0).all() and (u.imag < 1).all()


@pytest.mark.parametrize("dt", COMPLEX)
def test_printing_matches_torch(dt):
    rng = np.random.default_rng(3)
    cases = [
        np.array([1 + 2j, 3 - 1j]),
        np.array([1.5 - 2.25j, -0.0 + 0.0j, complex(np.nan, 1), complex(np.nan, -np.inf)]),
        rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4)),
        rng.standard_normal(2000) * 1e5 + 1j * rng.standard_normal(2000),
        np.array(2 - 3j),
        np.array([1e-8 + 1j, 1e10j]),
        np.zeros((2, 0)),
        rng.standard_normal((2, 3, 40)) + 0.5j,
    ]
    for a in cases:
        e, t = both(a.astype(dt))
        assert repr(e) == repr(t).replace("torch.", "ember."), a


@pytest.mark.parametrize("dt", UNSIGNED)
def test_unsigned_printing_items_and_limits(dt):
    top = int(np.iinfo(dt).max)
    e, t = both(np.array([0, 7, top], dtype=dt))
    assert repr(e) == repr(t).replace("torch.", "ember.")
    assert e.tolist() == [0, 7, top]
    assert e[2].item() == top  # uint64's top value is no int64


# ---------------------------------------------------------------------------------------------
# casts, interop


def test_casts_to_and_from_the_new_dtypes_match_torch():
    # values every dtype holds (the out-of-range conversions are undefined in C++)
    vals = np.array([0, 1, 2.75, 100.25, 127, 3.5])
    for src, dst in itertools.product(ALL, ALL):
        if src not in NEW and dst not in NEW:
            continue
        t = torch.from_numpy(vals).to(getattr(torch, src))
        e = et.from_numpy(vals.copy()).to(getattr(et, src))
        if src in COMPLEX:
            t, e = t + 0.5j * t.real, e + 0.5j * e.real
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch: "Casting complex values to real discards..."
            want = t.to(getattr(torch, dst))
        got = e.to(getattr(et, dst))
        assert name(got.dtype) == dst
        gv = got.float().numpy() if dst == "bfloat16" else got.numpy()
        wv = want.float().numpy() if dst == "bfloat16" else want.numpy()
        np.testing.assert_array_equal(gv, wv, err_msg=f"{src} -> {dst}")


@pytest.mark.parametrize("dt", NEW)
def test_numpy_round_trip_shares_memory(dt):
    a = (np.arange(6) + (1j * np.arange(6) if dt in COMPLEX else 0)).astype(dt).reshape(2, 3)
    t = et.from_numpy(a)
    assert t.dtype is getattr(et, dt)
    a[1, 2] = 42
    assert t[1, 2].item() == 42
    back = t.numpy()
    assert back.dtype == a.dtype and np.shares_memory(back, a)


@pytest.mark.parametrize("dt", NEW)
def test_dlpack_round_trip_with_torch(dt):
    a = (np.arange(6) + (1j * np.arange(6) if dt in COMPLEX else 0)).astype(dt)
    e = et.from_numpy(a)
    t = torch.from_dlpack(e)
    assert name(t.dtype) == dt and t.data_ptr() == e.data_ptr()
    e2 = et.from_dlpack(t)
    assert e2.dtype is getattr(et, dt) and e2.data_ptr() == e.data_ptr()


# ---------------------------------------------------------------------------------------------
# the views between complex tensors and their parts


@pytest.mark.parametrize("dt", COMPLEX)
def test_parts_are_views(dt):
    z = et.from_numpy(complex_data(dt, 12).reshape(3, 4)[:, ::2].copy())
    zt = torch.from_numpy(z.numpy().copy())
    for f in (lambda m, x: x.real, lambda m, x: x.imag, lambda m, x: m.view_as_real(x),
              lambda m, x: x.t().real, lambda m, x: m.view_as_real(x[1:])):
        np.testing.assert_array_equal(f(et, z).numpy(), f(torch, zt).numpy())
    z.real[0, 0] = 5.0
    z.imag.fill_(-1)
    et.view_as_real(z)[1, 1, 0] = 9
    assert z[0, 0].item() == 5 - 1j and z[1, 1].item() == 9 - 1j
    z.imag = et.zeros(3, 2)
    assert (z.imag == 0).all()
    r = et.zeros(3, 4, 2, dtype=getattr(et, name(getattr(et, dt).to_real())))
    c = et.view_as_complex(r)
    c[2, 3] = 1 + 2j
    assert r[2, 3].tolist() == [1.0, 2.0]
    assert et.real(r) is r or et.real(r).data_ptr() == r.data_ptr()


def test_view_errors_match_torch():
    bad = [lambda m: m.view_as_complex(m.zeros(4, 3)),
           lambda m: m.view_as_complex(m.zeros(4, 2).t()),
           lambda m: m.view_as_complex(m.zeros(4, 3)[:, 1:]),
           lambda m: m.view_as_complex(m.zeros(3, 2, dtype=m.int32)),
           lambda m: m.view_as_real(m.zeros(3)), lambda m: m.zeros(3).imag,
           lambda m: m.complex(m.ones(2), m.ones(2, dtype=m.float64)),
           lambda m: m.polar(m.ones(2), m.ones(2, dtype=m.float64))]
    for f in bad:
        with pytest.raises(RuntimeError) as want:
            f(torch)
        with pytest.raises(RuntimeError) as got:
            f(et)
        if "view_as_complex is only supported" not in str(want.value):
            assert str(got.value) == str(want.value)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_complex_and_polar(dt):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 1)).astype(dt), rng.standard_normal(4).astype(dt)
    for f in ("complex", "polar"):
        got = getattr(et, f)(et.from_numpy(np.abs(a)), et.from_numpy(b))
        want = getattr(torch, f)(torch.from_numpy(np.abs(a)), torch.from_numpy(b))
        assert name(got.dtype) == name(want.dtype) and tuple(got.shape) == (3, 4)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# elementwise and reductions (the registry runs these too; here on the special values)

UNARY = ("exp log log1p expm1 sqrt rsqrt sin cos tan tanh sigmoid log2 log10 atan asin acos "
         "sinh cosh asinh acosh atanh reciprocal neg square abs angle sgn conj_physical isnan "
         "isinf isfinite logical_not").split()


@pytest.mark.parametrize("dt", COMPLEX)
@pytest.mark.parametrize("op", UNARY)
def test_unary_on_special_values_matches_torch(dt, op):
    e, t = both(complex_data(dt))
    got, want = getattr(et, op)(e).numpy(), getattr(torch, op)(t).numpy()
    assert got.dtype == want.dtype
    tol = 2e-6 if dt == "complex64" else 1e-13
    np.testing.assert_allclose(got, want, rtol=10 * tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("dt", COMPLEX)
@pytest.mark.parametrize("op", "add sub mul div eq ne logical_and logical_or logical_xor".split())
def test_binary_matches_numpy(dt, op):
    a, b = complex_data(dt), complex_data(dt, seed=1)[::-1].copy()
    got = getattr(et, op)(et.from_numpy(a), et.from_numpy(b)).numpy()
    ref = getattr(np, {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide",
                       "eq": "equal", "ne": "not_equal"}.get(op, op))
    with np.errstate(all="ignore"):
        want = ref(a, b)
    tol = 2e-6 if dt == "complex64" else 1e-13
    np.testing.assert_allclose(got, want, rtol=10 * tol, atol=tol, equal_nan=True)


def test_add_of_an_infinity_keeps_the_other_part():
    # torch multiplies by alpha = 1 first, so (inf + 1j) * (1 + 0j) makes a NaN of the
    # imaginary part; Ember (and NumPy) add the parts
    z = et.tensor([complex(np.inf, 1)]) + et.tensor([-1 - 1j])
    assert z.item() == complex(np.inf, 0)


@pytest.mark.parametrize("dt", COMPLEX)
def test_reductions_match_torch(dt):
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((3, 4, 5)) + 1j * rng.standard_normal((3, 4, 5))).astype(dt)
    e, t = both(a)
    cases = [lambda m, x: m.sum(x), lambda m, x: x.sum(1),
             lambda m, x: x.sum((0, -1), keepdim=True),
             lambda m, x: x.mean(), lambda m, x: x.mean(-1), lambda m, x: x.var(),
             lambda m, x: x.std(1), lambda m, x: x.var(0, correction=0), lambda m, x: x.cumsum(1),
             lambda m, x: x[0, 0, 0].sum(), lambda m, x: m.sum(x, 0, dtype=m.float64),
             lambda m, x: m.nonzero(x), lambda m, x: m.where(x.real > 0, x, x * 2)]
    for f in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = f(torch, t)
        got = f(et, e)
        assert name(got.dtype) == name(want.dtype) and tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)


def test_ops_without_complex_kernels_refuse():
    z = et.tensor([1 + 1j])
    for f in (lambda: z < z, lambda: z.floor(), lambda: z.max(), lambda: et.erf(z),
              lambda: z.sort(), lambda: z.relu()):
        with pytest.raises(RuntimeError, match="complex64"):
            f()


# ---------------------------------------------------------------------------------------------
# uint16 / uint32 / uint64: the ops PyTorch has, and those it lacks, against NumPy


@pytest.mark.parametrize("dt", UNSIGNED)
def test_unsigned_ops_against_numpy(dt):
    rng = np.random.default_rng(4)
    top = np.iinfo(dt).max
    a = rng.integers(0, top, size=(4, 5), dtype=dt, endpoint=True)
    b = rng.integers(0, top, size=(4, 5), dtype=dt, endpoint=True)
    a[0, :3] = [0, top, top - 1]
    e, f = et.from_numpy(a.copy()), et.from_numpy(b.copy())
    mask = a % 3 == 0
    checks = [
        (e * f, a * b),  # wraps modulo 2^bits
        (e == f, a == b), (e != e, a != a),
        (e & f, a & b), (e | f, a | b), (e ^ f, a ^ b), (~e, ~a),
        (e.flip(0), a[::-1]), (e.tril(), np.tril(a)), (e.triu(1), np.triu(a, 1)),
        (e.masked_fill(et.from_numpy(mask), 7), np.where(mask, 7, a).astype(dt)),
        (et.gather(e, 1, et.tensor([[0, 4]] * 4)),
         np.take_along_axis(a, np.array([[0, 4]] * 4), 1)),
        (et.cat([e, f]), np.concatenate([a, b])), (e[[2, 0], 1:], a[[2, 0], 1:]),
        (et.where(et.from_numpy(mask), e, f), np.where(mask, a, b)), (e.t().contiguous(), a.T),
        (e.to(et.float64), a.astype(np.float64)), (e / f, a / np.where(b == 0, 1, b)),
    ]
    for i, (got, want) in enumerate(checks[:-1]):
        assert got.numpy().dtype == want.dtype, i
        np.testing.assert_array_equal(got.numpy(), want, err_msg=str(i))
    nz = np.where(b == 0, 1, b).astype(dt)
    got = (e / et.from_numpy(nz)).numpy()
    np.testing.assert_allclose(got, a / nz, rtol=1e-6)


def test_unsigned_promotion_beyond_torch():
    """Where PyTorch has no rule for uint16/32/64 (it raises), the standard's (NumPy's):
    values and dtypes as NumPy's; uint64 with a signed integer stays PyTorch's error."""
    a = np.array([1, 40000, 7], dtype=np.uint16)
    b = np.array([-3, 2, 100], dtype=np.int16)
    c = np.array([70000, 1, 2], dtype=np.uint32)
    for x, y in ((a, b), (a, c), (c, b), (a, np.array([True, False, True]))):
        got = et.from_numpy(x) * et.from_numpy(y)
        want = x * y
        assert got.numpy().dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)
    f = lambda m: m.ones(2, dtype=m.uint64) * m.ones(2, dtype=m.int16)  # noqa: E731
    with pytest.raises(RuntimeError) as want:
        f(torch)
    with pytest.raises(RuntimeError) as got:
        f(et)
    assert str(got.value) == str(want.value)
    assert (et.ones(2, dtype=et.uint32) * et.ones(2, dtype=et.float32)).dtype is et.float32


# ---------------------------------------------------------------------------------------------
# matrix products (cgemm / zgemm), prod, pow, isclose


@pytest.mark.parametrize("dt", COMPLEX)
def test_products_match_torch(dt):
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((5, 7)) + 1j * rng.standard_normal((5, 7))).astype(dt)
    b = (rng.standard_normal((7, 3)) + 1j * rng.standard_normal((7, 3))).astype(dt)
    cases = [lambda m, x, y: x @ y, lambda m, x, y: x.t().contiguous().t() @ y,
             lambda m, x, y: m.bmm(x[None].expand(2, 5, 7), y[None].expand(2, 7, 3)),
             lambda m, x, y: m.addmm(x[:, :3], x, y, beta=0.5j, alpha=2 + 1j),
             lambda m, x, y: m.dot(x[0], y[:, 0]), lambda m, x, y: x @ y[:, 0],
             lambda m, x, y: m.matmul(x.conj(), y), lambda m, x, y: x.prod(1),
             lambda m, x, y: x.prod(), lambda m, x, y: x ** 2, lambda m, x, y: x ** (0.5 - 1j),
             lambda m, x, y: 2 ** x]
    tol = 1e-5 if dt == "complex64" else 1e-12
    for f in cases:
        want = f(torch, torch.from_numpy(a), torch.from_numpy(b)).resolve_conj().numpy()
        got = f(et, et.from_numpy(a), et.from_numpy(b)).numpy()
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_isclose_of_complex_matches_torch():
    a = np.array([1 + 1j, 1 + 1e-9j, complex(np.nan, 0), complex(np.inf, 1), 2 + 2j], np.complex64)
    b = np.array([1 + 1j, 1 + 0j, complex(np.nan, 0), complex(np.inf, 1), 2 + 2.1j], np.complex64)
    for equal_nan in (False, True):
        want = torch.isclose(torch.from_numpy(a), torch.from_numpy(b), equal_nan=equal_nan)
        got = et.isclose(et.from_numpy(a), et.from_numpy(b), equal_nan=equal_nan)
        assert got.tolist() == want.tolist()


@pytest.mark.parametrize("dt", UNSIGNED)
def test_unsigned_arithmetic_beyond_torch_against_numpy(dt):
    # PyTorch has no kernels of these for uint16/32/64; Ember's wrap as NumPy's do
    rng = np.random.default_rng(6)
    top = np.iinfo(dt).max
    a = rng.integers(0, top, size=(3, 7), dtype=dt, endpoint=True)
    b = rng.integers(1, top, size=(3, 7), dtype=dt, endpoint=True)
    a[0, :4] = [0, top, 1, top - 1]
    b[0, :4] = [1, 1, top, 2]
    e, f = et.from_numpy(a.copy()), et.from_numpy(b.copy())
    with np.errstate(over="ignore"):
        checks = [
            (e + f, a + b), (e - f, a - b), (e + 3, a + np.array(3, dt)),
            (et.add(e, f, alpha=2), a + b * np.array(2, dt)),
            (e // f, a // b), (e % f, a % b), (et.maximum(e, f), np.maximum(a, b)),
            (et.minimum(e, f), np.minimum(a, b)), (e < f, a < b), (e <= f, a <= b),
            (e > f, a > b), (e >= f, a >= b), (e.abs(), a), (-e, -a), (e.sign(), np.sign(a)),
            (e.square(), a * a),
        ]
    for i, (got, want) in enumerate(checks):
        assert got.numpy().dtype == want.dtype, i
        np.testing.assert_array_equal(got.numpy(), want, err_msg=str(i))
    # sums as PyTorch: in int64, the same bits modulo 2^64
    for got, want in ((e.sum(), a.astype(np.int64).sum()), (e.prod(1), a.astype(np.int64).prod(1)),
                      (e.cumsum(1), a.astype(np.int64).cumsum(1))):
        assert got.dtype is et.int64
        np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        e // et.zeros(3, 7, dtype=getattr(et, dt))


@pytest.mark.parametrize("dt", ["uint16", "uint32", "uint64"])
def test_unsigned_pow_wraps_as_numpy(dt):
    """pow of uint16/32/64 (PyTorch has no kernel): NumPy's values, wrapping on overflow."""
    a = np.array([0, 1, 2, 3, 7, 255, 40000], dtype=dt)
    e = np.array([0, 5, 3, 40, 2, 3, 2], dtype=dt)
    got = et.from_numpy(a) ** et.from_numpy(e)
    np.testing.assert_array_equal(got.numpy(), a ** e)
    np.testing.assert_array_equal((et.from_numpy(a) ** 3).numpy(), a ** np.array(3, dtype=dt))


def test_uint64_values_above_the_int64_range():
    """Python ints in [2**63, 2**64) fill uint64 tensors and convert to floats, as in PyTorch;
    with an integer dtype other than uint64 (or none) they overflow."""
    big = [2**64 - 1, 2**63, 5]
    want = torch.tensor(big, dtype=torch.uint64).tolist()
    assert et.tensor(big, dtype=et.uint64).tolist() == want
    assert et.tensor(2**64 - 1, dtype=et.uint64).item() == 2**64 - 1
    got = et.tensor([[1, 2**63]], dtype=et.float64).tolist()
    assert got == torch.tensor([[1, 2**63]], dtype=torch.float64).tolist()
    for kw in ({}, {"dtype": et.int64}):
        with pytest.raises(RuntimeError, match="without overflow"):
            et.tensor([2**63], **kw)
    with pytest.raises(RuntimeError, match="without overflow"):
        et.tensor([2**64], dtype=et.uint64)


@pytest.mark.parametrize("dt", UNSIGNED)
def test_unsigned_sorts_scans_and_predicates_match_torch(dt):
    """The ops PyTorch defines on uint16/32/64 beyond arithmetic: sort and argsort (in
    unsigned order, values above int64's range included), cumprod (int64, wrapping, as
    cumsum), any/all, the float predicates, rounding (the identity) and randint's bounds."""
    rng = np.random.default_rng(7)
    top = np.iinfo(dt).max
    a = rng.integers(0, top, size=(3, 6), dtype=dt, endpoint=True)
    a[0, :4] = [top, 0, top - 1, 2**(np.iinfo(dt).bits - 1)]
    a[1, :] = 0
    e = et.from_numpy(a.copy())
    t = torch.tensor(a.tolist(), dtype=getattr(torch, dt))

    def same(got, want, what):
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], what
        assert got.tolist() == want.tolist(), what

    for desc in (False, True):
        ev, ei = et.sort(e, 1, descending=desc)
        tv, ti = torch.sort(t, stable=True, dim=1, descending=desc)
        same(ev, tv, f"sort values, descending={desc}")
        same(ei, ti, f"sort indices, descending={desc}")
        same(et.argsort(e, 0, descending=desc),
             torch.argsort(t, stable=True, dim=0, descending=desc), f"argsort, descending={desc}")
    small = et.from_numpy((a % 7).astype(dt))
    same(small.cumprod(1), torch.from_numpy((a % 7).astype(np.int64)).cumprod(1), "cumprod")
    for name in ("any", "all"):
        same(getattr(e, name)(), getattr(t, name)(), name)
        same(getattr(e, name)(1), getattr(t, name)(1), f"{name} over dim 1")
    for name in ("isnan", "isinf", "isfinite", "signbit", "floor", "ceil", "round", "trunc"):
        same(getattr(et, name)(e), getattr(torch, name)(t), name)
    r = et.randint(3, 9, (1000,), dtype=getattr(et, dt))
    assert r.dtype == getattr(et, dt) and set(r.tolist()) == set(range(3, 9))
    with pytest.raises(RuntimeError, match=f"from is out of bounds for {dt}"):
        et.randint(-1, 5, (2,), dtype=getattr(et, dt))


@pytest.mark.parametrize("p", [2, 1, 3, 0, float("inf"), float("-inf"), "fro"])
@pytest.mark.parametrize("dim", [None, 1])
def test_norm_of_complex_tensors_is_the_norm_of_the_moduli(p, dim):
    rng = np.random.default_rng(3)
    z = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
    z[0, 1] = 0
    got = et.norm(et.tensor(z), p, dim=dim)
    want = torch.norm(torch.tensor(z), p, dim=dim)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1] == "float32"
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6)
    got = et.tensor(z).norm(p, dim=dim, dtype=et.complex128)
    want = torch.tensor(z).norm(p, dim=dim, dtype=torch.complex128)
    assert got.dtype == et.float64 and want.dtype == torch.float64
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumprod_of_complex_tensors_matches_torch(dt, dim):
    rng = np.random.default_rng(4)
    z = (rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))).astype(dt)
    z[1, 2] = 0
    got = et.cumprod(et.tensor(z), dim)
    want = torch.cumprod(torch.tensor(z), dim)
    assert str(got.dtype) == "ember." + dt
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6 if dt == "complex64" else 1e-14)
    got = et.linalg.vander(et.tensor(z[0]))
    want = torch.linalg.vander(torch.tensor(z[0]))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
