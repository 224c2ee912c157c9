"""bfloat16 matrix products on every layout, by whichever path this CPU takes.

bfloat16 operands are multiplied as they are (float32 accumulation, one rounding) by MKL on
CPUs with AMX, by oneDNN's matmul on CPUs with AVX512-BF16 and no AMX, and as widened float32
copies elsewhere or with ``ember_tensor.backends.mkldnn.enabled = False``. Every layout the
products meet (transposed and strided operands, batches at equal and unequal distances, a
shared operand, ``alpha`` / ``beta``, tiles across threads) is checked against NumPy float64
products of the same bfloat16 values, and against PyTorch, on each path this machine has.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember_tensor as et

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)


def bf16_values(shape) -> np.ndarray:
    """Random float64 values that bfloat16 holds exactly."""
    x = et.from_numpy(RNG.standard_normal(shape).astype(np.float32)).to(et.bfloat16)
    return x.to(et.float32).numpy().astype(np.float64)


def as_ember(x: np.ndarray):
    return et.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).to(et.bfloat16)


def as_torch(x: np.ndarray):
    return torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).to(torch.bfloat16)


def check(got, ref: np.ndarray, expected_torch=None, roundings: int = 1) -> None:
    assert got.dtype == et.bfloat16
    g = got.to(et.float32).numpy().astype(np.float64)
    assert g.shape == ref.shape
    scale = np.abs(ref).max() + 1e-30
    # float32 accumulation and one rounding to bfloat16 (8 bits of mantissa)
    assert np.abs(g - ref).max() / scale <= roundings * 2.0**-8
    if expected_torch is not None:
        t = expected_torch.to(torch.float32).numpy().astype(np.float64)
        # both round float32 sums that may differ in their last bits (summation order, which
        # PyTorch's thread count changes): at most one bfloat16 ulp apart, 2^-7 of the largest
        assert np.abs(g - t).max() / scale <= 2.0**-7


@pytest.fixture(params=["default", "onednn off"])
def path(request):
    if request.param == "default":
        yield
        return
    with et.backends.mkldnn.flags(enabled=False):
        yield


@pytest.fixture(params=[1, 2])
def threads(request):
    before = et.get_num_threads()
    et.set_num_threads(request.param)
    yield request.param
    et.set_num_threads(before)


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (7, 5, 3), (64, 64, 64), (300, 500, 200),
                                   (1100, 130, 260), (48, 2100, 640)])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matrix_products_of_each_layout(path, threads, m, n, k, ta, tb):
    a, b = bf16_values((m, k)), bf16_values((k, n))
    ea = as_ember(a.T).t() if ta else as_ember(a)
    eb = as_ember(b.T).t() if tb else as_ember(b)
    tg = torch.matmul(as_torch(a), as_torch(b))
    check(et.matmul(ea, eb), a @ b, tg)


def test_strided_rows_and_vectors(path, threads):
    big = bf16_values((90, 400))
    a, b = big[:, 10:130], bf16_values((120, 70))  # rows 400 elements apart
    ea = as_ember(big)[:, 10:130]
    check(et.matmul(ea, as_ember(b)), a @ b)
    v = bf16_values((120,))
    check(et.matmul(ea, as_ember(v)), a @ v)
    w = bf16_values((90,))
    check(et.matmul(as_ember(w), ea), w @ a)


@pytest.mark.parametrize("batch,m,n,k", [(64, 64, 64, 64), (16, 128, 128, 128), (6, 40, 50, 60),
                                         (5, 300, 200, 100)])
def test_batched_products(path, threads, batch, m, n, k):
    a, b = bf16_values((batch, m, k)), bf16_values((batch, k, n))
    tg = torch.matmul(as_torch(a), as_torch(b))
    check(et.matmul(as_ember(a), as_ember(b)), np.matmul(a, b), tg)
    # one B for every product (a batch stride of 0), and B stored transposed
    b2 = bf16_values((k, n))
    check(et.matmul(as_ember(a), as_ember(b2)), np.matmul(a, b2))
    eb = as_ember(np.swapaxes(b, 1, 2)).transpose(1, 2)
    check(et.bmm(as_ember(a), eb), np.matmul(a, b))


def test_batches_at_unequal_distances(path, threads):
    a = bf16_values((2, 6, 30, 20))
    b = bf16_values((2, 3, 20, 25))
    ea = as_ember(a)[:, ::2]  # products 2 apart within a row of the batch, 6 across rows
    check(et.matmul(ea, as_ember(b)), np.matmul(a[:, ::2], b))


def test_alpha_beta(path, threads):
    c, a, b = bf16_values((300, 200)), bf16_values((300, 100)), bf16_values((100, 200))
    got = et.addmm(as_ember(c), as_ember(a), as_ember(b), beta=0.5, alpha=2.0)
    tg = torch.addmm(as_torch(c), as_torch(a), as_torch(b), beta=0.5, alpha=2.0)
    check(got, 0.5 * c + 2.0 * (a @ b), tg)
    # beta = 0 ignores the input, NaN included (as PyTorch)
    nan = as_ember(c)
    nan[3, 4] = float("nan")
    check(et.addmm(nan, as_ember(a), as_ember(b), beta=0.0), a @ b)
    x, y = bf16_values((4, 30, 20)), bf16_values((4, 20, 10))
    z = bf16_values((4, 30, 10))
    got = et.baddbmm(as_ember(z), as_ember(x), as_ember(y), beta=-1.0, alpha=0.25)
    # baddbmm is a composite: the product is rounded before the sum
    check(got, -z + 0.25 * np.matmul(x, y), roundings=2)


def test_linear_with_a_folded_batch(path, threads):
    x, w, bias = bf16_values((4, 64, 96)), bf16_values((80, 96)), bf16_values((80,))
    got = et.linear(as_ember(x), as_ember(w), as_ember(bias))
    tg = torch.nn.functional.linear(as_torch(x), as_torch(w), as_torch(bias))
    check(got, x @ w.T + bias, tg)
