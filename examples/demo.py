"""A tour of Ember's tensor library, written the way a PyTorch user would write it.

Run it with ``nox -s demo`` (builds the core once, installs it with the ``ember``
meta-package) or, with both installed, ``python examples/demo.py``. Every call here has
the same name, signature and meaning in PyTorch: replacing ``import ember`` with
``import torch as ember`` runs the same program.
"""

from __future__ import annotations

import numpy as np

import ember


def section(title: str) -> None:
    print(f"\n=== {title} ===")


def main() -> None:
    ember.manual_seed(0)
    ember.set_num_threads(2)

    section("creating tensors")
    x = ember.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    print("x =", x)
    print("shape", tuple(x.shape), "dtype", x.dtype, "numel", x.numel())
    print("zeros", ember.zeros(2, 3))
    print("ones float64", ember.ones(2, 2, dtype=ember.float64))
    print("arange", ember.arange(6))
    print("randn", ember.randn(2, 3))
    assert x.dtype == ember.float32
    assert ember.arange(6).dtype == ember.int64

    section("broadcasting arithmetic")
    row = ember.tensor([10.0, 20.0, 30.0])  # shape (3,)
    col = ember.tensor([[1.0], [2.0]])  # shape (2, 1)
    print("x + row =", x + row)
    print("x * col =", x * col)
    print("col * row (outer) =", col * row)
    print("2 * x - 1 =", 2 * x - 1)
    print("x / 2 =", x / 2)
    assert tuple((col * row).shape) == (2, 3)
    # PyTorch's type promotion: an int64 tensor plus a Python float is float32
    mixed = ember.arange(3) + 0.5
    print("arange(3) + 0.5 =", mixed, mixed.dtype)
    assert mixed.dtype == ember.float32

    section("reductions")
    print("x.sum() =", x.sum())
    print("x.sum(dim=0) =", x.sum(dim=0))
    print("x.mean(dim=1) =", x.mean(dim=1))
    print("x.sum(dim=1, keepdim=True) =", x.sum(dim=1, keepdim=True))
    print("x.max() =", x.max())
    assert x.sum().item() == 21.0
    assert tuple(x.sum(dim=1, keepdim=True).shape) == (2, 1)

    section("matmul")
    a = ember.randn(3, 4)
    b = ember.randn(4, 2)
    c = a @ b
    print("a @ b =", c)
    assert tuple(c.shape) == (3, 2)
    assert np.allclose(ember.matmul(a, b).numpy(), a.numpy() @ b.numpy(), atol=1e-5)

    section("indexing and views")
    print("x[0] =", x[0])
    print("x[:, 1] =", x[:, 1])
    print("x[:, ::2] =", x[:, ::2])
    print("x[1, 2].item() =", x[1, 2].item())
    m = ember.arange(12).reshape(3, 4)
    print("m =", m)
    print("m.t() strides", m.t().stride(), "contiguous", m.t().is_contiguous())
    first_row = m[0]  # a view: it shares m's storage
    first_row[1] = 100
    print("after m[0][1] = 100: m[0] =", m[0])
    assert m[0, 1].item() == 100

    section("NumPy round-trip (zero-copy)")
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ember.from_numpy(array)
    array[0, 0] = 42.0  # the tensor sees writes to the array: same memory
    print("from_numpy:", t)
    assert t[0, 0].item() == 42.0
    back = t.numpy()
    print("back to numpy:", back, back.dtype)
    assert np.shares_memory(back, array)

    section("printing")
    print(ember.tensor([True, False]))
    print(ember.tensor([[1, 2], [3, 4]], dtype=ember.int32))
    print(ember.tensor(3.5))
    print(ember.arange(2000, dtype=ember.float32))  # long tensors are summarised

    section("autograd: gradients of a small regression")
    ember.manual_seed(0)
    inputs = ember.randn(32, 3)
    targets = inputs @ ember.tensor([[2.0], [-1.0], [0.5]]) + 0.25
    w = ember.zeros(3, 1, requires_grad=True)  # loads ember-autograd on demand
    b = ember.zeros(1, requires_grad=True)
    for step in range(200):
        loss = ((inputs @ w + b - targets) ** 2).mean()
        loss.backward()
        with ember.no_grad():  # the update itself is not recorded
            w -= 0.1 * w.grad
            b -= 0.1 * b.grad
        w.grad = None
        b.grad = None
        if step % 50 == 0:
            print(f"step {step:3d}  loss {loss.item():.6f}  grad_fn {loss.grad_fn.name()}")
    print("fitted w", w.detach().flatten(), "b", b.detach())
    assert (w.detach().flatten() - ember.tensor([2.0, -1.0, 0.5])).abs().max().item() < 1e-3
    x = ember.tensor(2.0, requires_grad=True)
    (dy,) = ember.autograd.grad(x**3, x, create_graph=True)
    (d2y,) = ember.autograd.grad(dy, x)
    print("d/dx x^3 at 2 =", dy.item(), " d2/dx2 =", d2y.item())
    assert (dy.item(), d2y.item()) == (12.0, 12.0)

    print("\ndemo finished: all checks passed")


if __name__ == "__main__":
    main()
