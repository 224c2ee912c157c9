"""CUDA ops built from other ops: stack and repeat (generic: views and copies on any device),
flip (a copy through a negatively strided view) and the linalg ops (computed on the host and
moved back), against the CPU.

Runs only where a GPU is present (or against the CPU with EMBER_CUDA_TEST_DEVICE=cpu).
"""

import numpy as np
import pytest

import ember_tensor as et
from cuda_testing import ALL, DEV, FLOATS, assert_close, assert_equal, on, requires_device, values

pytestmark = requires_device


@pytest.mark.parametrize("dtype", ALL)
def test_stack_repeat_flip_match_cpu(dtype):
    a = values((3, 4, 5), dtype, 1)
    b = values((3, 4, 5), dtype, 2)
    for dim in (0, 1, -1, 3):
        assert_equal(et.stack([on(a), on(b)], dim), et.stack([a, b], dim))
    assert_equal(on(a).repeat(2, 1, 3), a.repeat(2, 1, 3))
    assert_equal(on(a).repeat(2, 2, 1, 1), a.repeat(2, 2, 1, 1))
    assert_equal(on(a).transpose(0, 2).repeat(1, 2, 2), a.transpose(0, 2).repeat(1, 2, 2))
    for dims in ((0,), (2,), (0, 2), (-1, 1, 0)):
        assert_equal(et.flip(on(a), dims), et.flip(a, dims))
        assert_equal(on(a).transpose(0, 1).flip(dims), a.transpose(0, 1).flip(dims))


def test_stack_repeat_flip_of_empty_and_0d_tensors():
    e = et.zeros((0, 3))
    assert_equal(et.flip(on(e), (0,)), et.flip(e, (0,)))
    assert_equal(on(e).repeat(2, 2), e.repeat(2, 2))
    s = et.tensor(2.5)
    assert_equal(et.stack([on(s), on(s)]), et.stack([s, s]))
    assert_equal(et.flip(on(s), ()), et.flip(s, ()))


def test_stack_and_flip_errors_match_cpu():
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        et.stack([on(et.zeros(2)), on(et.zeros(3))])
    with pytest.raises(RuntimeError, match="appears multiple times"):
        et.flip(on(et.zeros((2, 2))), (0, 0))
    with pytest.raises(RuntimeError, match="can not be smaller"):
        on(et.zeros((2, 2))).repeat(2)


def spd(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n))
    return et.tensor(m @ m.T + n * np.eye(n)).to(dtype)


@pytest.mark.parametrize("dtype", [et.float32, et.float64])
def test_linalg_ops_match_cpu(dtype):
    # 5x the table (sums in another order); the products that rebuild A 10x that, det
    # (a product of the pivots) 1000x
    scale = 5
    A = spd(5, dtype)
    B = et.tensor(np.random.default_rng(1).standard_normal((5, 3))).to(dtype)
    la = et.linalg
    assert_close(la.cholesky(on(A)), la.cholesky(A), scale)
    assert_close(la.inv(on(A)), la.inv(A), scale)
    assert_close(la.det(on(A)), la.det(A), scale * 1e3)
    assert_close(la.solve(on(A), on(B)), la.solve(A, B), scale)
    assert_close(la.eigvalsh(on(A)), la.eigvalsh(A), scale)
    assert_close(la.svdvals(on(A)), la.svdvals(A), scale)
    L = la.cholesky(A)
    assert_close(
        la.solve_triangular(on(L), on(B), upper=False),
        la.solve_triangular(L, B, upper=False),
        scale,
    )
    for got, want in zip(la.slogdet(on(A)), la.slogdet(A)):
        assert_close(got, want, scale)
    q, r = la.qr(on(A))
    assert q.device.type == DEV and r.device.type == DEV
    assert_close(q @ r, on(A), scale * 10)
    u, s, vh = la.svd(on(A))
    assert_close(u @ (s[:, None] * vh), on(A), scale * 10)
    w, v = la.eigh(on(A))
    assert_close((on(A) @ v), v * w, scale * 10)


def test_linalg_errors_match_cpu():
    bad = et.tensor([[1.0, 2.0], [2.0, 1.0]])  # indefinite
    with pytest.raises(Exception) as cpu_error:
        et.linalg.cholesky(bad)
    with pytest.raises(type(cpu_error.value)) as dev_error:
        et.linalg.cholesky(on(bad))
    assert str(dev_error.value) == str(cpu_error.value)


@pytest.mark.parametrize("dtype", FLOATS[:2])
def test_device_move_backward_returns_the_gradient_to_the_source_device(dtype, autograd):
    x = et.tensor([1.0, -2.0, 3.0], dtype=dtype, requires_grad=True)
    y = (x.to(DEV) * 2).sum()
    y.backward()
    assert x.grad.device.type == "cpu"
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 2.0))
