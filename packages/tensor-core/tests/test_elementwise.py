"""Elementwise ops: unary, binary, scalars, broadcasting, layouts, in-place and out= forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from conftest import (
    ALL_DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    assert_close,
    check,
    dtype_name,
    rand_array,
    round_to,
    tensor,
    to_np,
)

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _f(x):
    return np.asarray(x, dtype=np.float64)


# name, fn(lib, x), numpy reference, input domain
UNARY = [
    ("neg_op", lambda lib, x: -x, np.negative, "any"),
    ("neg", lambda lib, x: lib.neg(x), np.negative, "any"),
    ("abs", lambda lib, x: lib.abs(x), np.abs, "any"),
    ("exp", lambda lib, x: lib.exp(x), lambda x: np.exp(_f(x)), "any"),
    ("log", lambda lib, x: lib.log(x), lambda x: np.log(_f(x)), "pos"),
    ("log1p", lambda lib, x: lib.log1p(x), lambda x: np.log1p(_f(x)), "pos"),
    ("expm1", lambda lib, x: lib.expm1(x), lambda x: np.expm1(_f(x)), "any"),
    ("sqrt", lambda lib, x: lib.sqrt(x), lambda x: np.sqrt(_f(x)), "pos"),
    ("rsqrt", lambda lib, x: lib.rsqrt(x), lambda x: 1 / np.sqrt(_f(x)), "pos"),
    ("sin", lambda lib, x: lib.sin(x), lambda x: np.sin(_f(x)), "any"),
    ("cos", lambda lib, x: lib.cos(x), lambda x: np.cos(_f(x)), "any"),
    ("tanh", lambda lib, x: lib.tanh(x), lambda x: np.tanh(_f(x)), "any"),
    ("sigmoid", lambda lib, x: lib.sigmoid(x), lambda x: 1 / (1 + np.exp(-_f(x))), "any"),
    ("relu", lambda lib, x: lib.relu(x), lambda x: np.maximum(x, 0), "any"),
    ("erf", lambda lib, x: lib.erf(x), lambda x: _erf(_f(x)), "any"),
    ("logical_not", lambda lib, x: lib.logical_not(x), np.logical_not, "any"),
    ("bitwise_not", lambda lib, x: ~x, np.invert, "any"),
    ("isnan", lambda lib, x: lib.isnan(x), np.isnan, "any"),
    ("isinf", lambda lib, x: lib.isinf(x), np.isinf, "any"),
    ("isfinite", lambda lib, x: lib.isfinite(x), np.isfinite, "any"),
]
UNARY_IDS = [u[0] for u in UNARY]

# Methods with the same name as the function (x.exp() ...).
UNARY_METHODS = ["neg", "abs", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos",
                 "tanh", "sigmoid", "relu", "erf", "logical_not", "bitwise_not", "isnan"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name,fn,ref,domain", UNARY, ids=UNARY_IDS)
def test_unary_dtypes(lib, rng, name, fn, ref, domain, dtype):
    x = rand_array(rng, (3, 5), dtype, domain)
    check(lib, fn, ref, [x], [dtype])


@pytest.mark.parametrize("layout", ["contig", "transposed", "stepped"])
@pytest.mark.parametrize("shape", [(), (0, 3), (4, 5, 6), (7,)])
@pytest.mark.parametrize("name,fn,ref,domain", UNARY, ids=UNARY_IDS)
def test_unary_shapes_layouts(lib, rng, name, fn, ref, domain, shape, layout):
    dtype = "int32" if "bitwise" in name else "float32"
    x = rand_array(rng, shape, dtype, domain)
    check(lib, fn, ref, [x], [dtype], layout=layout)


@pytest.mark.parametrize("name", UNARY_METHODS)
def test_unary_method_form(lib, rng, name):
    row = UNARY[UNARY_IDS.index(name)]
    dtype = "int64" if name == "bitwise_not" else "float64"
    x = rand_array(rng, (2, 3), dtype, row[3])
    check(lib, lambda lib, t: getattr(t, name)(), row[2], [x], [dtype])


def test_special_values(lib):
    vals = np.array([0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, -2.5], dtype=np.float32)
    for dtype in FLOAT_DTYPES:
        x = tensor(lib, round_to(vals, dtype), dtype)
        assert to_np(lib.isnan(x)).tolist() == np.isnan(vals).tolist()
        assert to_np(lib.isinf(x)).tolist() == np.isinf(vals).tolist()
        assert to_np(lib.isfinite(x)).tolist() == np.isfinite(vals).tolist()
        assert dtype_name(lib.isnan(x).dtype) == "bool"
        with np.errstate(all="ignore"):
            assert_close(lib.exp(x), np.exp(vals.astype(np.float64)), dtype)
            assert_close(lib.log(x), np.log(vals.astype(np.float64)), dtype)
            assert_close(lib.sqrt(x), np.sqrt(vals.astype(np.float64)), dtype)
        assert_close(lib.relu(x[:5]), np.maximum(vals[:5], 0), dtype)
    for dtype in INT_DTYPES + ["bool"]:
        x = tensor(lib, np.array([0, 1, 2]).astype(dtype if dtype != "bool" else bool), dtype)
        assert not bool(lib.isnan(x).any())
        assert bool(lib.isfinite(x).all())


def test_sigmoid_tanh_saturate(lib):
    x = lib.tensor([-1000.0, -50.0, 0.0, 50.0, 1000.0])
    assert_close(lib.sigmoid(x), [0.0, 0.0, 0.5, 1.0, 1.0], "float32")
    assert_close(lib.tanh(x), [-1.0, -1.0, 0.0, 1.0, 1.0], "float32")
    assert not bool(lib.isnan(lib.sigmoid(x)).any())


# ---------------------------------------------------------------------------------------------
# binary ops

BINARY = [
    ("add_op", lambda lib, a, b: a + b, np.add, "any"),
    ("sub_op", lambda lib, a, b: a - b, np.subtract, "any"),
    ("mul_op", lambda lib, a, b: a * b, np.multiply, "any"),
    ("truediv_op", lambda lib, a, b: a / b, lambda a, b: _f(a) / _f(b), "nonzero"),
    ("floordiv_op", lambda lib, a, b: a // b, np.floor_divide, "nonzero"),
    ("mod_op", lambda lib, a, b: a % b, np.mod, "nonzero"),
    ("pow_op", lambda lib, a, b: a ** b, lambda a, b: np.power(_f(a), _f(b)), "expo"),
    ("add", lambda lib, a, b: lib.add(a, b), np.add, "any"),
    ("add_alpha", lambda lib, a, b: lib.add(a, b, alpha=2), lambda a, b: a + 2 * b, "any"),
    ("sub", lambda lib, a, b: lib.sub(a, b), np.subtract, "any"),
    ("mul", lambda lib, a, b: lib.mul(a, b), np.multiply, "any"),
    ("div", lambda lib, a, b: lib.div(a, b), lambda a, b: _f(a) / _f(b), "nonzero"),
    ("div_floor", lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
     lambda a, b: np.floor(_f(a) / _f(b)), "nonzero"),
    ("div_trunc", lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
     lambda a, b: np.trunc(_f(a) / _f(b)), "nonzero"),
    ("pow", lambda lib, a, b: lib.pow(a, b), lambda a, b: np.power(_f(a), _f(b)), "expo"),
    ("maximum", lambda lib, a, b: lib.maximum(a, b), np.maximum, "any"),
    ("minimum", lambda lib, a, b: lib.minimum(a, b), np.minimum, "any"),
    ("eq_op", lambda lib, a, b: a == b, np.equal, "any"),
    ("ne_op", lambda lib, a, b: a != b, np.not_equal, "any"),
    ("lt_op", lambda lib, a, b: a < b, np.less, "any"),
    ("le_op", lambda lib, a, b: a <= b, np.less_equal, "any"),
    ("gt_op", lambda lib, a, b: a > b, np.greater, "any"),
    ("ge_op", lambda lib, a, b: a >= b, np.greater_equal, "any"),
    ("eq", lambda lib, a, b: lib.eq(a, b), np.equal, "any"),
    ("ne", lambda lib, a, b: lib.ne(a, b), np.not_equal, "any"),
    ("lt", lambda lib, a, b: lib.lt(a, b), np.less, "any"),
    ("le", lambda lib, a, b: lib.le(a, b), np.less_equal, "any"),
    ("gt", lambda lib, a, b: lib.gt(a, b), np.greater, "any"),
    ("ge", lambda lib, a, b: lib.ge(a, b), np.greater_equal, "any"),
    ("logical_and", lambda lib, a, b: lib.logical_and(a, b), np.logical_and, "any"),
    ("logical_or", lambda lib, a, b: lib.logical_or(a, b), np.logical_or, "any"),
    ("logical_xor", lambda lib, a, b: lib.logical_xor(a, b), np.logical_xor, "any"),
    ("and_op", lambda lib, a, b: a & b, np.bitwise_and, "any"),
    ("or_op", lambda lib, a, b: a | b, np.bitwise_or, "any"),
    ("xor_op", lambda lib, a, b: a ^ b, np.bitwise_xor, "any"),
    ("bitwise_and", lambda lib, a, b: lib.bitwise_and(a, b), np.bitwise_and, "any"),
    ("bitwise_or", lambda lib, a, b: lib.bitwise_or(a, b), np.bitwise_or, "any"),
    ("bitwise_xor", lambda lib, a, b: lib.bitwise_xor(a, b), np.bitwise_xor, "any"),
]
BINARY_IDS = [b[0] for b in BINARY]
_BITWISE = {"and_op", "or_op", "xor_op", "bitwise_and", "bitwise_or", "bitwise_xor"}


def _binary_inputs(rng, name, domain, shape_a, shape_b, dtype_a, dtype_b):
    a_dom = "pos" if domain == "expo" else ("any" if domain == "nonzero" else domain)
    a = rand_array(rng, shape_a, dtype_a, a_dom)
    b = rand_array(rng, shape_b, dtype_b, domain)
    return a, b


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name,fn,ref,domain", BINARY, ids=BINARY_IDS)
def test_binary_dtypes(lib, rng, name, fn, ref, domain, dtype):
    a, b = _binary_inputs(rng, name, domain, (4, 5), (4, 5), dtype, dtype)
    check(lib, fn, ref, [a, b], [dtype, dtype])


BROADCAST_SHAPES = [
    ((3, 4), (3, 4)),
    ((3, 1), (1, 4)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 3, 4)),
    ((), (3,)),
    ((2, 1, 5), (3, 1)),
    ((0, 3), (1, 3)),
    ((0,), ()),
    ((), ()),
]


@pytest.mark.parametrize("layout", ["contig", "transposed", "stepped"])
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("name,fn,ref,domain", BINARY, ids=BINARY_IDS)
def test_binary_broadcast_layouts(lib, rng, name, fn, ref, domain, shapes, layout):
    dtype = "int32" if name in _BITWISE else "float32"
    a, b = _binary_inputs(rng, name, domain, shapes[0], shapes[1], dtype, dtype)
    check(lib, fn, ref, [a, b], [dtype, dtype], layout=layout)


@pytest.mark.parametrize("name,fn,ref,domain", BINARY, ids=BINARY_IDS)
def test_binary_int64_broadcast(lib, rng, name, fn, ref, domain):
    a, b = _binary_inputs(rng, name, domain, (2, 1, 4), (3, 1), "int64", "int64")
    check(lib, fn, ref, [a, b], ["int64", "int64"])


OPERATOR_OPS = [
    ("add", lambda a, b: a + b, np.add),
    ("sub", lambda a, b: a - b, np.subtract),
    ("mul", lambda a, b: a * b, np.multiply),
    ("truediv", lambda a, b: a / b, lambda a, b: _f(a) / _f(b)),
    ("floordiv", lambda a, b: a // b, lambda a, b: np.floor_divide(a, b)),
    ("mod", lambda a, b: a % b, np.mod),
    ("pow", lambda a, b: a ** b, lambda a, b: np.power(_f(a), _f(b))),
    ("eq", lambda a, b: a == b, np.equal),
    ("ne", lambda a, b: a != b, np.not_equal),
    ("lt", lambda a, b: a < b, np.less),
    ("le", lambda a, b: a <= b, np.less_equal),
    ("gt", lambda a, b: a > b, np.greater),
    ("ge", lambda a, b: a >= b, np.greater_equal),
    ("and", lambda a, b: a & b, np.bitwise_and),
    ("or", lambda a, b: a | b, np.bitwise_or),
    ("xor", lambda a, b: a ^ b, np.bitwise_xor),
]


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("scalar", [2, 3.5, True, -3], ids=repr)
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "uint8", "int8", "bool"])
@pytest.mark.parametrize("name,op,ref", OPERATOR_OPS, ids=[o[0] for o in OPERATOR_OPS])
def test_python_scalar_operands(lib, rng, name, op, ref, dtype, scalar, side):
    if dtype == "uint8" and scalar == -3:
        pytest.skip("negative scalar wraps modulo 256 for uint8 (not a NumPy reference)")
    if name == "pow" and side == "right" and dtype != "bool" and dtype not in FLOAT_DTYPES:
        domain = "expo"
    elif name in ("truediv", "floordiv", "mod", "pow") and side == "left":
        domain = "nonzero" if name != "pow" else "small"
    else:
        domain = "pos" if name == "pow" else "any"
    x = rand_array(rng, (3, 4), dtype, domain)
    if name == "pow" and dtype in INT_DTYPES and side == "left":
        x = np.abs(x).astype(x.dtype)
    if side == "right":
        check(lib, lambda lib, t, s: op(t, s), lambda t, s: ref(t, s), [x, scalar], [dtype, None])
    else:
        check(lib, lambda lib, t, s: op(s, t), lambda t, s: ref(s, t), [x, scalar], [dtype, None])


def test_reflected_operators_are_called(lib):
    x = lib.tensor([1.0, 2.0, 4.0])
    assert_close(2 - x, [1.0, 0.0, -2.0], "float32")
    assert_close(8 / x, [8.0, 4.0, 2.0], "float32")
    assert_close(2 ** x, [2.0, 4.0, 16.0], "float32")
    assert_close(7 // x, [7.0, 3.0, 1.0], "float32")
    assert_close(7 % x, [0.0, 1.0, 3.0], "float32")
    assert_close(1 + x, [2.0, 3.0, 5.0], "float32")
    assert_close(3 * x, [3.0, 6.0, 12.0], "float32")


def test_int_true_division_gives_float(lib):
    a = lib.tensor([7, -7, 6], dtype=lib.int64)
    b = lib.tensor([2, 2, 4], dtype=lib.int64)
    r = a / b
    assert dtype_name(r.dtype) == "float32"
    assert_close(r, [3.5, -3.5, 1.5], "float32")
    assert dtype_name(lib.tensor([1, 2], dtype=lib.int32).div(2).dtype) == "float32"
    assert dtype_name(lib.true_divide(a, b).dtype) == "float32"


def test_integer_division_semantics(lib):
    # Python/NumPy floor semantics for // and %, C semantics for div(rounding_mode='trunc').
    a = lib.tensor([7, -7, 7, -7, 0], dtype=lib.int64)
    b = lib.tensor([2, 2, -2, -2, 3], dtype=lib.int64)
    assert to_np(a // b).tolist() == [3, -4, -4, 3, 0]
    assert to_np(a % b).tolist() == [1, 1, -1, -1, 0]
    assert to_np(lib.div(a, b, rounding_mode="trunc")).tolist() == [3, -3, -3, 3, 0]
    assert to_np(lib.remainder(a, b)).tolist() == [1, 1, -1, -1, 0]
    assert to_np(lib.fmod(a, b)).tolist() == [1, -1, 1, -1, 0]
    assert dtype_name((a // b).dtype) == "int64"


def test_integer_division_by_zero_raises(lib):
    a = lib.tensor([1, 2], dtype=lib.int32)
    z = lib.tensor([1, 0], dtype=lib.int32)
    with pytest.raises(RuntimeError, match="(?i)zero"):
        a // z
    with pytest.raises(RuntimeError, match="(?i)zero"):
        a % z
    # float division by zero is IEEE
    r = lib.tensor([1.0, -1.0, 0.0]) / lib.tensor([0.0, 0.0, 0.0])
    v = to_np(r)
    assert v[0] == np.inf and v[1] == -np.inf and np.isnan(v[2])


def test_integer_overflow_wraps(lib):
    a = lib.tensor([127, -128], dtype=lib.int8)
    assert to_np(a + 1).tolist() == [-128, -127]
    u = lib.tensor([250, 3], dtype=lib.uint8)
    assert to_np(u + 10).tolist() == [4, 13]
    assert to_np(u - lib.tensor([251, 4], dtype=lib.uint8)).tolist() == [255, 255]
    assert dtype_name((u + 10).dtype) == "uint8"


def test_integer_pow(lib):
    a = lib.tensor([2, 3, -2], dtype=lib.int64)
    r = a ** 3
    assert dtype_name(r.dtype) == "int64"
    assert to_np(r).tolist() == [8, 27, -8]
    assert to_np(lib.pow(a, lib.tensor([0, 1, 2]))).tolist() == [1, 3, 4]
    with pytest.raises(RuntimeError, match="(?i)negative"):
        a ** -1
    assert dtype_name((a ** 0.5).dtype) == "float32"
    assert dtype_name(lib.pow(2, a).dtype) == "int64"
    assert to_np(lib.pow(2, a[:2])).tolist() == [4, 8]


def test_integer_bitwise_values(lib):
    a = lib.tensor([0b1100, 0b1010, -1], dtype=lib.int32)
    b = lib.tensor([0b1010, 0b0110, 5], dtype=lib.int32)
    assert to_np(a & b).tolist() == [0b1000, 0b0010, 5]
    assert to_np(a | b).tolist() == [0b1110, 0b1110, -1]
    assert to_np(a ^ b).tolist() == [0b0110, 0b1100, -6]
    assert to_np(~a).tolist() == [-13, -11, 0]
    m = lib.tensor([True, False, True])
    n = lib.tensor([True, True, False])
    assert to_np(m & n).tolist() == [True, False, False]
    assert to_np(m | n).tolist() == [True, True, True]
    assert to_np(m ^ n).tolist() == [False, True, True]
    assert to_np(~m).tolist() == [False, True, False]
    assert dtype_name((m & n).dtype) == "bool"


# ---------------------------------------------------------------------------------------------
# clamp / where


CLAMP = [
    ("both_scalars", lambda lib, x: lib.clamp(x, -1, 1), lambda x: np.clip(x, -1, 1)),
    ("min_only", lambda lib, x: lib.clamp(x, min=-0.5), lambda x: np.maximum(x, -0.5)),
    ("max_only", lambda lib, x: lib.clamp(x, max=0.5), lambda x: np.minimum(x, 0.5)),
    ("int_bounds", lambda lib, x: x.clamp(min=0, max=2), lambda x: np.clip(x, 0, 2)),
    ("clip_alias", lambda lib, x: lib.clip(x, -1, 2), lambda x: np.clip(x, -1, 2)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32",
                                   "int8", "uint8", "int64"])
@pytest.mark.parametrize("name,fn,ref", CLAMP, ids=[c[0] for c in CLAMP])
def test_clamp_scalars(lib, rng, name, fn, ref, dtype):
    if dtype == "uint8" and name in ("both_scalars", "clip_alias"):
        pytest.skip("a negative bound wraps modulo 256 for uint8")
    x = rand_array(rng, (4, 5), dtype)
    check(lib, fn, ref, [x], [dtype])


@pytest.mark.parametrize("layout", ["contig", "transposed"])
def test_clamp_tensors(lib, rng, layout):
    x = rand_array(rng, (4, 5), "float32")
    lo = rand_array(rng, (4, 1), "float32", "unit") - 1
    hi = rand_array(rng, (5,), "float32", "unit") + 1
    check(lib, lambda lib, a, b, c: lib.clamp(a, min=b, max=c),
          lambda a, b, c: np.minimum(np.maximum(a, b), c), [x, lo, hi],
          ["float32"] * 3, layout=layout)
    check(lib, lambda lib, a, b: lib.clamp(a, min=b), lambda a, b: np.maximum(a, b),
          [x, lo], ["float32"] * 2, layout=layout)
    check(lib, lambda lib, a, c: a.clamp(max=c), lambda a, c: np.minimum(a, c),
          [x, hi], ["float32"] * 2, layout=layout)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int32", "uint8"])
@pytest.mark.parametrize("bounds", [(-1, 2), (None, 0), (0, None), (-2.5, -2.5)], ids=str)
def test_clamp_scalar_bounds_special_values(lib, dtype, bounds):
    # large enough for the parallel loop; infinities, NaN and values on the bounds
    vals = np.array([-np.inf, np.nan, np.inf, -2.5, -1.0, 0.0, 2.0, 3.0, -0.0])
    a = np.resize(vals, 100003) if dtype.startswith(("float", "bfloat")) else np.arange(100003) % 7
    if dtype == "int32":
        a = a - 3
    import torch

    lo, hi = bounds
    negative = min(b for b in bounds if b is not None) < 0
    is_float = dtype.startswith(("float", "bfloat"))
    if not is_float and (isinstance(lo, float) or dtype == "uint8" and negative):
        pytest.skip("integer bounds, not below 0 for uint8")
    x = lib.tensor(a.tolist(), dtype=getattr(lib, dtype))
    got = x.clamp(lo, hi)
    want = torch.tensor(a.tolist(), dtype=getattr(torch, dtype)).clamp(lo, hi)
    np.testing.assert_array_equal(got.float().numpy() if dtype == "bfloat16" else got.numpy(),
                                  want.float().numpy() if dtype == "bfloat16" else want.numpy())


def test_clamp_requires_a_bound(lib):
    with pytest.raises(RuntimeError, match="(?i)clamp"):
        lib.clamp(lib.zeros(3))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_where(lib, rng, dtype):
    cond = rand_array(rng, (3, 1, 4), "bool")
    a = rand_array(rng, (2, 4), dtype)
    b = rand_array(rng, (3, 2, 1), dtype)
    check(lib, lambda lib, c, x, y: lib.where(c, x, y), lambda c, x, y: np.where(c, x, y),
          [cond, a, b], ["bool", dtype, dtype])


def test_where_scalars_and_promotion(lib, rng):
    cond = rand_array(rng, (5,), "bool")
    x = rand_array(rng, (5,), "float32")
    xi = rand_array(rng, (5,), "int32")
    check(lib, lambda lib, c, t: lib.where(c, t, 0.0), lambda c, t: np.where(c, t, 0.0),
          [cond, x], ["bool", "float32"])
    check(lib, lambda lib, c, t: lib.where(c, t, 2.5), lambda c, t: np.where(c, t, 2.5),
          [cond, xi], ["bool", "int32"])
    check(lib, lambda lib, c, t, u: lib.where(c, t, u), lambda c, t, u: np.where(c, t, u),
          [cond, xi, x], ["bool", "int32", "float32"])
    check(lib, lambda lib, c, t: t.where(c, -1), lambda c, t: np.where(c, t, -1),
          [cond, x], ["bool", "float32"])


def test_where_condition_only(lib):
    c = lib.tensor([[True, False], [False, True]])
    rows, cols = lib.where(c)
    assert to_np(rows).tolist() == [0, 1]
    assert to_np(cols).tolist() == [0, 1]


# ---------------------------------------------------------------------------------------------
# in-place variants

INPLACE = [
    ("add_", lambda x, y: x.add_(y), np.add, "any"),
    ("add_alpha_", lambda x, y: x.add_(y, alpha=-3), lambda x, y: x - 3 * y, "any"),
    ("sub_", lambda x, y: x.sub_(y), np.subtract, "any"),
    ("mul_", lambda x, y: x.mul_(y), np.multiply, "any"),
    ("div_", lambda x, y: x.div_(y), np.divide, "nonzero"),
    ("pow_", lambda x, y: x.pow_(y), np.power, "expo"),
    ("iadd", lambda x, y: x.__iadd__(y), np.add, "any"),
    ("isub", lambda x, y: x.__isub__(y), np.subtract, "any"),
    ("imul", lambda x, y: x.__imul__(y), np.multiply, "any"),
    ("itruediv", lambda x, y: x.__itruediv__(y), np.divide, "nonzero"),
    ("clamp_", lambda x, y: x.clamp_(min=y), np.maximum, "any"),
    ("maximum_", lambda x, y: x.copy_(x.maximum(y)), np.maximum, "any"),
    ("copy_", lambda x, y: x.copy_(y), lambda x, y: np.broadcast_to(y, x.shape), "any"),
]

INPLACE_UNARY = [
    ("exp_", lambda x: x.exp_(), np.exp, "any"),
    ("log_", lambda x: x.log_(), np.log, "pos"),
    ("sqrt_", lambda x: x.sqrt_(), np.sqrt, "pos"),
    ("neg_", lambda x: x.neg_(), np.negative, "any"),
    ("abs_", lambda x: x.abs_(), np.abs, "any"),
    ("sigmoid_", lambda x: x.sigmoid_(), lambda x: 1 / (1 + np.exp(-x)), "any"),
    ("tanh_", lambda x: x.tanh_(), np.tanh, "any"),
    ("relu_", lambda x: x.relu_(), lambda x: np.maximum(x, 0), "any"),
    ("sin_", lambda x: x.sin_(), np.sin, "any"),
    ("clamp_", lambda x: x.clamp_(-1, 1), lambda x: np.clip(x, -1, 1), "any"),
    ("fill_", lambda x: x.fill_(2.5), lambda x: np.full_like(x, 2.5), "any"),
    ("zero_", lambda x: x.zero_(), np.zeros_like, "any"),
    ("mul_scalar_", lambda x: x.mul_(3), lambda x: x * 3, "any"),
    ("add_scalar_", lambda x: x.add_(1.5), lambda x: x + 1.5, "any"),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("layout", ["contig", "transposed", "stepped"])
@pytest.mark.parametrize("name,fn,ref,domain", INPLACE, ids=[r[0] for r in INPLACE])
def test_inplace_binary(lib, rng, name, fn, ref, domain, layout, dtype):
    a = rand_array(rng, (3, 4), dtype, "pos" if domain == "expo" else "any")
    b = rand_array(rng, (4,), dtype, domain)
    x = tensor(lib, a, dtype, layout)
    y = tensor(lib, b, dtype)
    v0 = x._version
    r = fn(x, y)
    assert r is x
    assert x._version > v0
    with np.errstate(all="ignore"):
        expected = ref(a.astype(np.float64), b.astype(np.float64))
    assert_close(x, expected, dtype)


@pytest.mark.parametrize("layout", ["contig", "transposed", "stepped"])
@pytest.mark.parametrize("name,fn,ref,domain", INPLACE_UNARY, ids=[r[0] for r in INPLACE_UNARY])
def test_inplace_unary(lib, rng, name, fn, ref, domain, layout):
    a = rand_array(rng, (3, 4), "float32", domain)
    x = tensor(lib, a, "float32", layout)
    v0 = x._version
    r = fn(x)
    assert r is x
    assert x._version > v0
    assert_close(x, ref(a.astype(np.float64)), "float32")


def test_inplace_on_view_writes_base(lib):
    base = lib.zeros(4, 6)
    v = base[1:3, ::2]
    v.add_(1)
    v.mul_(lib.tensor([1.0, 2.0, 3.0]))
    expected = np.zeros((4, 6), np.float32)
    expected[1:3, ::2] = [1.0, 2.0, 3.0]
    assert_close(base, expected, "float32")
    col = base.t()[5]
    col.fill_(-1)
    expected[:, 5] = -1
    assert_close(base, expected, "float32")


def test_inplace_int_ops(lib):
    x = lib.tensor([1, 2, 3], dtype=lib.int32)
    x.add_(2)
    x.mul_(lib.tensor([2, 2, 2], dtype=lib.int32))
    x //= 3
    assert to_np(x).tolist() == [2, 2, 3]
    assert dtype_name(x.dtype) == "int32"
    x.add_(lib.tensor([True, False, True]))
    assert to_np(x).tolist() == [3, 2, 4]


def test_inplace_cannot_change_dtype(lib):
    x = lib.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="(?i)(Float|float32).*(Long|int64)|cast"):
        x.div_(2)
    with pytest.raises(RuntimeError):
        x.add_(lib.tensor([0.5, 0.5, 0.5]))
    with pytest.raises(RuntimeError):
        x.exp_()
    b = lib.tensor([True, False])
    with pytest.raises(RuntimeError):
        b.add_(1)
    # the tensor is unchanged by the failed ops
    assert to_np(x).tolist() == [1, 2, 3]


def test_inplace_cannot_broadcast_self(lib):
    x = lib.zeros(3)
    with pytest.raises(RuntimeError, match=r"3.*2, 3|2, 3.*3|shape|broadcast"):
        x.add_(lib.ones(2, 3))


def test_inplace_int_rejects_float_scalar(lib):
    # the result type of int64 * 1.5 is float32, which cannot be written back into int64
    x = lib.tensor([1, 2])
    with pytest.raises(RuntimeError):
        x.mul_(1.5)
    y = lib.tensor([1.0, 2.0])
    y.mul_(2)
    assert_close(y, [2.0, 4.0], "float32")


# ---------------------------------------------------------------------------------------------
# out= variants

OUT_OPS = [
    ("add", lambda lib, a, b, out: lib.add(a, b, out=out), np.add),
    ("sub", lambda lib, a, b, out: lib.sub(a, b, out=out), np.subtract),
    ("mul", lambda lib, a, b, out: lib.mul(a, b, out=out), np.multiply),
    ("div", lambda lib, a, b, out: lib.div(a, b, out=out), lambda a, b: a / b),
    ("maximum", lambda lib, a, b, out: lib.maximum(a, b, out=out), np.maximum),
    ("exp", lambda lib, a, b, out: lib.exp(a, out=out), lambda a, b: np.exp(a)),
    ("sqrt", lambda lib, a, b, out: lib.sqrt(lib.abs(a), out=out), lambda a, b: np.sqrt(abs(a))),
    ("clamp", lambda lib, a, b, out: lib.clamp(a, -1, 1, out=out), lambda a, b: np.clip(a, -1, 1)),
    ("where", lambda lib, a, b, out: lib.where(a > 0, a, b, out=out),
     lambda a, b: np.where(a > 0, a, b)),
    ("pow", lambda lib, a, b, out: lib.pow(lib.abs(a), 2, out=out), lambda a, b: np.abs(a) ** 2),
]


@pytest.mark.parametrize("out_layout", ["contig", "transposed", "empty"])
@pytest.mark.parametrize("name,fn,ref", OUT_OPS, ids=[o[0] for o in OUT_OPS])
def test_out_variants(lib, rng, name, fn, ref, out_layout):
    a = rand_array(rng, (3, 4), "float32")
    b = rand_array(rng, (3, 4), "float32", "nonzero")
    if out_layout == "contig":
        out = lib.zeros(3, 4)
    elif out_layout == "transposed":
        out = lib.zeros(4, 3).t()
    else:
        out = lib.empty(0)
    r = fn(lib, tensor(lib, a), tensor(lib, b), out)
    assert r is out
    assert_close(out, ref(a.astype(np.float64), b.astype(np.float64)), "float32")


def test_out_dtype_mismatch(lib):
    a = lib.tensor([1.5, 2.5])
    out = lib.zeros(2, dtype=lib.int64)
    with pytest.raises(RuntimeError):
        lib.add(a, a, out=out)
    # widening into a float64 out is allowed
    out64 = lib.zeros(2, dtype=lib.float64)
    lib.add(a, a, out=out64)
    assert_close(out64, [3.0, 5.0], "float64")
    # comparisons may write into a non-bool out
    outf = lib.zeros(2)
    lib.gt(a, 2.0, out=outf)
    assert_close(outf, [0.0, 1.0], "float32")


def test_out_aliasing_input(lib):
    a = lib.tensor([1.0, 2.0, 3.0])
    lib.mul(a, a, out=a)
    assert_close(a, [1.0, 4.0, 9.0], "float32")
    lib.add(a, 1, out=a)
    assert_close(a, [2.0, 5.0, 10.0], "float32")


# ---------------------------------------------------------------------------------------------
# large / vectorised paths


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "float16", "bfloat16"])
def test_large_tensors_tail_handling(lib, rng, dtype):
    # sizes that exercise SIMD main loops and scalar tails
    for n in (1, 7, 8, 9, 31, 33, 1000, 100003):
        a = rand_array(rng, (n,), dtype)
        b = rand_array(rng, (n,), dtype, "nonzero")
        ta, tb = tensor(lib, a, dtype), tensor(lib, b, dtype)
        assert_close(ta + tb, a.astype(np.float64) + b, dtype)
        assert_close(ta * tb, a.astype(np.float64) * b, dtype)
        if dtype not in INT_DTYPES:
            assert_close(lib.exp(ta), np.exp(a.astype(np.float64)), dtype)
            assert_close(ta / tb, a.astype(np.float64) / b, dtype)


def test_large_noncontiguous(lib, rng):
    a = rand_array(rng, (300, 500), "float32")
    t = tensor(lib, a, "float32", "transposed")
    assert_close(lib.tanh(t) + t[:, :1], np.tanh(a.astype(np.float64)) + a[:, :1], "float32")
    s = tensor(lib, a, "float32", "stepped")
    assert_close(s * 2 - t, a * 2.0 - a, "float32")


def test_helpers_roundtrip(lib, rng):
    for dtype in ALL_DTYPES:
        a = rand_array(rng, (2, 3), dtype)
        assert_close(tensor(lib, a, dtype), a, dtype)


# float16 is computed through float blocks of 2,048 elements (backends/cpu/elementwise.h):
# lengths around a block's end, broadcast operands of stride 0, strided inputs and strided
# out= targets, and bool results, checked bit for bit against torch (both compute in float
# and round once).
HALF_BLOCK_CASES = {
    "add": lambda m, a, b: m.add(a, b),
    "sub_alpha": lambda m, a, b: m.sub(a, b, alpha=0.5),
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b,
    "lt": lambda m, a, b: a < b,
    "eq": lambda m, a, b: m.eq(a, a * (b > 0)),
    "maximum": lambda m, a, b: m.maximum(a, b),
    "neg": lambda m, a, b: -a,
    "abs": lambda m, a, b: m.abs(a),
    "isnan": lambda m, a, b: m.isnan(a / b),
}


@pytest.mark.parametrize("n", [1, 2047, 2048, 2049, 5000])
@pytest.mark.parametrize("layout", ["contig", "scalar_b", "stepped", "transposed"])
@pytest.mark.parametrize("name", sorted(HALF_BLOCK_CASES))
def test_float16_blocks_match_torch(n, layout, name):
    import ember_tensor as et

    gen = np.random.default_rng(n)
    x = gen.standard_normal(2 * n + 100).astype(np.float16)
    y = gen.standard_normal(2 * n + 100).astype(np.float16)
    y[::7] = 0  # inf and nan quotients

    def operands(m):
        a, b = m.tensor(x), m.tensor(y)
        if layout == "contig":
            return a[:n], b[:n]
        if layout == "scalar_b":
            return a[:n], b[0]
        if layout == "stepped":
            return a[::2], b[1::2]
        rows = max(1, n // 50)
        return a[: rows * 50].reshape(50, rows).T, b[: rows * 50].reshape(rows, 50)

    fn = HALF_BLOCK_CASES[name]
    got, want = fn(et, *operands(et)), fn(torch, *operands(torch))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert dtype_name(got.dtype) == str(want.dtype).removeprefix("torch.")


@pytest.mark.parametrize("name", ["add", "lt", "neg"])
def test_float16_blocks_into_strided_out(name):
    import ember_tensor as et

    gen = np.random.default_rng(0)
    a = gen.standard_normal((3000, 2)).astype(np.float16)
    b = gen.standard_normal((3000, 2)).astype(np.float16)
    ea, eb, ta, tb = et.tensor(a), et.tensor(b), torch.tensor(a), torch.tensor(b)
    out_dtype = "bool" if name == "lt" else "float16"
    eo = et.zeros((2, 3000), dtype=getattr(et, out_dtype)).T  # strided target
    to = torch.zeros((2, 3000), dtype=getattr(torch, out_dtype)).T
    for m, args, out in ((et, (ea, eb), eo), (torch, (ta, tb), to)):
        if name == "neg":
            m.neg(args[0], out=out)
        else:
            getattr(m, name)(*args, out=out)
    np.testing.assert_array_equal(eo.numpy(), to.numpy())


@pytest.mark.parametrize("threads", [1, 2])
def test_strided_views_in_parallel_ranges_that_start_mid_row(threads):
    # the engine advances operand pointers run by run; parallel chunks start inside rows and
    # carry across several outer dims (a transposed view's short rows, a permuted 4-d view)
    import ember_tensor as et

    old = et.get_num_threads()
    et.set_num_threads(threads)
    try:
        rng = np.random.default_rng(11)
        a = rng.standard_normal((6, 70, 4, 130)).astype(np.float32)
        b = rng.standard_normal((6, 4, 70, 130)).astype(np.float32)
        ea = et.from_numpy(a).permute(0, 2, 1, 3)  # (6, 4, 70, 130), rows of 130 apart
        eb = et.from_numpy(b)
        np.testing.assert_array_equal((ea * 0.5).numpy(), a.transpose(0, 2, 1, 3) * np.float32(0.5))
        np.testing.assert_array_equal((ea + eb).numpy(), a.transpose(0, 2, 1, 3) + b)
        np.testing.assert_array_equal(ea.contiguous().numpy(), a.transpose(0, 2, 1, 3))
        q = et.from_numpy(a).transpose(1, 3)  # (6, 130, 4, 70): inner stride 130 elements
        np.testing.assert_allclose(q.exp().numpy(), np.exp(a.transpose(0, 3, 2, 1)), rtol=2e-6)
    finally:
        et.set_num_threads(old)


# Operands broadcast from one element with every stride 0 (the gradient of a mean is such an
# expanded scalar): the kernels fill the result from one computed value.
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "bool"])
@pytest.mark.parametrize("shape", [(5, 7), (3, 1000), (2, 3, 4)], ids=str)
def test_expanded_scalar_operands(lib, dtype, shape):
    dt = getattr(lib, dtype)
    a_val, b_val = (True, False) if dtype == "bool" else (3.0, 2.0)
    a = lib.tensor(a_val, dtype=dt).expand(*shape)
    b = lib.tensor([b_val], dtype=dt).expand(*shape)
    npd = NP_DTYPE_OF[dtype]
    is_bool = dtype == "bool"
    cases = [
        (a * b, np.full(shape, a_val * b_val, npd)),
        (a & b if is_bool else a * 2, np.full(shape, False if is_bool else a_val * 2, npd)),
        (~a if is_bool else -a, np.full(shape, (not a_val) if is_bool else -a_val, npd)),
        (a > b, np.full(shape, a_val > b_val)),
    ]
    if dtype not in ("int32", "bool"):
        cases.append((lib.exp(a), np.full(shape, math.exp(a_val), npd)))
    for got, want in cases:
        assert tuple(got.shape) == shape and got.is_contiguous()
        assert_close(got, want, dtype if got.dtype != lib.bool else "bool")
    # the result owns its memory: writing it leaves the broadcast operand alone
    r = a * b if dtype != "bool" else a & b
    r[0] = b[0]
    assert to_np(a).reshape(-1)[-1] == a_val


NP_DTYPE_OF = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
               "bfloat16": np.float32, "int32": np.int32, "bool": np.bool_}
