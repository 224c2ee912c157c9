"""The complex64 / complex128 kernels on CUDA against the CPU's: arithmetic with tensors,
Python complex numbers and complex alpha, the unary functions (libcu++'s complex functions on
the device, the C++ library's on the host), |z|, angle, sgn, conj, the classifications,
eq / ne and the logical ops, pow, where, masked_fill, cat / stack, indexing, the reductions
(sum, mean, var / std, cumsum, prod), matrix products (cuBLAS's complex GEMM), copies and
casts, and the CPU's errors for the ops complex numbers do not have (orderings, rounding).

Runs only where a GPU is present; ``EMBER_CUDA_TEST_DEVICE=cpu`` (``nox -s cuda_cpu_mode``)
runs it against the CPU, which checks the tests themselves.
"""

import numpy as np
import pytest

import ember_tensor as et
from cuda_testing import assert_close, assert_equal, assert_same_error, on, requires_device

pytestmark = requires_device

COMPLEX = [et.complex64, et.complex128]


def cvalues(shape, dtype, seed=0, special=False):
    """Complex values of moderate size; with special, parts that are NaN, +-inf and -0."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    if special and a.size > 8:
        flat = a.reshape(-1)
        flat[1] = complex(np.nan, 1.0)
        flat[3] = complex(np.inf, -2.0)
        flat[4] = complex(1.0, -np.inf)
        flat[5] = complex(-0.0, 0.0)
        flat[6] = 0j
    return et.tensor(a).to(dtype)


# ---- arithmetic ----


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_arithmetic_of_tensors_broadcast_and_strided(dtype, op):
    a = cvalues((5, 7), dtype, 1, special=True)
    b = cvalues((7,), dtype, 2)
    f = getattr(et, op)
    assert_close(f(on(a), on(b)), f(a, b))
    assert_close(f(on(a).t(), on(a).t()), f(a.t(), a.t()))


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("number", [2.5 - 1j, 3, 0.5])
def test_arithmetic_with_python_numbers(dtype, op, number):
    a = cvalues((40,), dtype, 3)
    f = getattr(et, op)
    assert_close(f(on(a), number), f(a, number))
    if op in ("add", "mul"):  # the reflected operators
        assert_close(
            number + on(a) if op == "add" else number * on(a),
            number + a if op == "add" else number * a,
        )


def test_real_tensors_with_complex_numbers_promote():
    x = et.arange(6, dtype=et.float32)
    assert_close(on(x) * (1 + 2j), x * (1 + 2j))
    assert_close(on(x) + on(cvalues((6,), et.complex64)), x + cvalues((6,), et.complex64))
    assert_close(et.div(on(x), 1j), et.div(x, 1j))


@pytest.mark.parametrize("alpha", [2 - 3j, 1, -0.5])
def test_add_and_sub_with_alpha(alpha):
    a, b = cvalues((33,), et.complex128, 4), cvalues((33,), et.complex128, 5)
    assert_close(et.add(on(a), on(b), alpha=alpha), et.add(a, b, alpha=alpha))
    assert_close(et.sub(on(a), on(b), alpha=alpha), et.sub(a, b, alpha=alpha))


def test_in_place_and_out():
    a, b = cvalues((4, 4), et.complex64, 6), cvalues((4, 4), et.complex64, 7)
    da = on(a.clone())
    da.mul_(on(b))
    assert_close(da, a * b)
    out = on(et.empty((4, 4), dtype=et.complex64))
    et.div(on(a), on(b), out=out)
    assert_close(out, a / b)


# ---- unary functions ----

UNARY = [
    "exp",
    "log",
    "log1p",
    "expm1",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "asin",
    "acos",
    "atan",
    "asinh",
    "acosh",
    "atanh",
    "sigmoid",
    "reciprocal",
    "log2",
    "log10",
    "neg",
    "square",
    "sgn",
    "conj_physical",
]


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", UNARY)
def test_unary_functions(dtype, name):
    f = getattr(et, name)
    x = cvalues((6, 9), dtype, 8)
    # CUDA's complex functions round differently from the C++ library's: a few ulps
    assert_close(f(on(x)), f(x), scale=50)
    assert_close(f(on(x).t()), f(x.t()), scale=50)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "tanh", "sgn", "reciprocal", "neg"])
def test_unary_functions_of_special_values(name):
    f = getattr(et, name)
    x = cvalues((12,), et.complex128, 9, special=True)
    got, want = f(on(x)).cpu().numpy(), f(x).numpy()
    # NaN where the CPU has NaN; the finite and infinite parts equal otherwise
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_array_equal(np.isinf(g), np.isinf(w))
        ok = np.isfinite(w)
        np.testing.assert_allclose(g[ok], w[ok], rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_abs_and_angle_are_real(dtype):
    x = cvalues((50,), dtype, 10, special=True)
    for name in ("abs", "angle"):
        got = getattr(et, name)(on(x))
        assert got.dtype == (et.float32 if dtype == et.complex64 else et.float64)
        assert_close(got, getattr(et, name)(x), scale=4)


def test_angle_of_reals_on_the_device():
    x = et.tensor([-2.0, 0.0, 3.0, float("nan"), -0.0])
    assert_close(et.angle(on(x)), et.angle(x))


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_classifications(name):
    x = cvalues((20,), et.complex64, 11, special=True)
    assert_equal(getattr(et, name)(on(x)), getattr(et, name)(x))


def test_pow():
    a, b = cvalues((30,), et.complex128, 12), cvalues((30,), et.complex128, 13)
    assert_close(et.pow(on(a), on(b)), et.pow(a, b), scale=50)
    assert_close(et.pow(on(a), 2), et.pow(a, 2))
    assert_close(et.pow(on(a), 0.5 + 1j), et.pow(a, 0.5 + 1j), scale=50)


# ---- comparisons, selection, movement ----


@pytest.mark.parametrize("name", ["eq", "ne", "logical_and", "logical_or", "logical_xor"])
def test_equality_and_logical_ops(name):
    a = cvalues((16,), et.complex64, 14, special=True)
    b = a.clone()
    b[::3] = 1 + 1j
    f = getattr(et, name)
    assert_equal(f(on(a), on(b)), f(a, b))
    c = et.tensor(1 + 1j, dtype=et.complex64)  # a CPU 0-d operand
    assert_equal(f(on(a), c), f(a, c))
    assert_equal(et.logical_not(on(a)), et.logical_not(a))


def test_where_masked_fill_cat_stack_and_indexing():
    a, b = cvalues((4, 5), et.complex128, 15), cvalues((4, 5), et.complex128, 16)
    mask = et.tensor(np.random.default_rng(0).integers(0, 2, (4, 5)).astype(bool))
    assert_equal(et.where(on(mask), on(a), on(b)), et.where(mask, a, b))
    assert_equal(et.where(on(mask), on(a), 2 - 1j), et.where(mask, a, 2 - 1j))
    assert_equal(on(a).masked_fill(on(mask), 3j), a.masked_fill(mask, 3j))
    assert_equal(et.cat([on(a), on(b)], 1), et.cat([a, b], 1))
    assert_equal(et.stack([on(a), on(b)]), et.stack([a, b]))
    idx = et.tensor([3, 0, 2])
    assert_equal(on(a)[on(idx)], a[idx])
    assert_equal(on(a)[:, 1::2], a[:, 1::2])


def test_copies_casts_and_parts():
    z = cvalues((3, 4), et.complex64, 17)
    d = on(z)
    assert_equal(d, z)
    assert_equal(d.to(et.complex128), z.to(et.complex128))
    assert_equal(d.real.contiguous(), z.real.contiguous())
    assert_equal(d.imag.contiguous(), z.imag.contiguous())
    assert_equal(et.view_as_real(d).contiguous(), et.view_as_real(z).contiguous())
    assert_equal(
        on(et.arange(5, dtype=et.float64)).to(et.complex64),
        et.arange(5, dtype=et.float64).to(et.complex64),
    )
    assert_equal(et.complex(on(z.real), on(z.imag)), et.complex(z.real, z.imag))
    for dtype in (et.uint16, et.uint32, et.uint64):
        u = et.tensor([0, 1, 2**15, 65535]).to(dtype)
        assert_equal(on(u), u)
        assert_equal(on(u).to(et.complex128), u.to(et.complex128))
        assert_equal(on(et.full((3,), 7, dtype=dtype)), et.full((3,), 7, dtype=dtype))


# ---- reductions ----


@pytest.mark.parametrize("dtype", COMPLEX)
def test_sum_mean_cumsum_var_std_prod(dtype):
    x = cvalues((6, 8), dtype, 18)
    for dim in (None, 0, 1):
        kw = {} if dim is None else {"dim": dim}
        assert_close(et.sum(on(x), **kw), et.sum(x, **kw), scale=10)
        assert_close(et.mean(on(x), **kw), et.mean(x, **kw), scale=10)
        assert_close(et.var(on(x), **kw), et.var(x, **kw), scale=10)
        assert_close(et.std(on(x), **kw), et.std(x, **kw), scale=10)
    assert_close(et.cumsum(on(x), 1), et.cumsum(x, 1), scale=10)
    assert_close(et.prod(on(x), 1), et.prod(x, 1), scale=10)
    assert_close(et.sum(on(x), dtype=et.float64), et.sum(x, dtype=et.float64), scale=10)


# ---- matrix products ----


@pytest.mark.parametrize("dtype", COMPLEX)
def test_matrix_products(dtype):
    a, b = cvalues((7, 5), dtype, 19), cvalues((5, 6), dtype, 20)
    c = cvalues((7, 6), dtype, 21)
    scale = 20  # cuBLAS sums in another order
    assert_close(on(a) @ on(b), a @ b, scale)
    assert_close(et.mm(on(b).t(), on(a).t()), et.mm(b.t(), a.t()), scale)
    assert_close(
        et.addmm(on(c), on(a), on(b), beta=0.5 - 1j, alpha=2j),
        et.addmm(c, a, b, beta=0.5 - 1j, alpha=2j),
        scale,
    )
    x, y = cvalues((3, 4, 5), dtype, 22), cvalues((3, 5, 2), dtype, 23)
    assert_close(et.bmm(on(x), on(y)), et.bmm(x, y), scale)
    assert_close(on(x) @ on(y), x @ y, scale)
    assert_close(on(a) @ on(b[:, 0]), a @ b[:, 0], scale)


# ---- errors ----


@pytest.mark.parametrize(
    "call",
    [
        lambda x: et.lt(x, x),
        lambda x: et.floor(x),
        lambda x: et.sign(x),
        lambda x: et.relu(x),
        lambda x: et.erf(x),
        lambda x: et.signbit(x),
    ],
)
def test_ops_complex_numbers_lack_raise_the_cpus_errors(call):
    assert_same_error(lambda device: call(cvalues((4,), et.complex64).to(device)))
