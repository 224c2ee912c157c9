"""LBFGS against PyTorch 2.13: the Rosenbrock function and a least-squares fit, with and
without the strong-Wolfe line search, small histories, float32 and float64; the closure
protocol, state and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember_optim
import ember_tensor as et
from optim_testing import assert_close, clone_tree, ember_from, np_of, torch_from


def rosenbrock_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
    """The n-dimensional Rosenbrock function and its gradient (float64 NumPy)."""
    a, b = x[:-1], x[1:]
    f = np.sum(100.0 * (b - a * a) ** 2 + (1 - a) ** 2)
    g = np.zeros_like(x)
    g[:-1] += -400.0 * a * (b - a * a) - 2 * (1 - a)
    g[1:] += 200.0 * (b - a * a)
    return float(f), g


def make_closure(params, lib: str, dtype: str, counter: list):
    """A closure setting the gradient of Rosenbrock over the concatenated parameters, in
    float64 and rounded to the parameters' dtype: both libraries get the same numbers for
    the same parameter values."""

    def closure():
        counter.append(1)
        x = np.concatenate([np_of(p).reshape(-1).astype("float64") for p in params])
        f, g = rosenbrock_grad(x)
        offset = 0
        for p in params:
            n = int(np.prod(tuple(p.shape)))
            gi = g[offset:offset + n].reshape(tuple(p.shape)).astype(dtype)
            offset += n
            p.grad = ember_from(gi) if lib == "ember" else torch_from(gi)
        return np.float64(f).astype(dtype).item()

    return closure


CASES = [
    dict(),
    dict(lr=0.5, history_size=3),
    dict(max_iter=5, history_size=2),
    dict(line_search_fn="strong_wolfe"),
    dict(line_search_fn="strong_wolfe", history_size=4, max_iter=7),
    dict(line_search_fn="strong_wolfe", tolerance_grad=1e-3, tolerance_change=1e-5),
    dict(max_eval=7),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", CASES, ids=[str(c) for c in CASES])
def test_rosenbrock_matches_torch(kwargs, dtype) -> None:
    x0 = np.array([-1.2, 1.0, -0.5, 0.8, 1.5]).astype(dtype)
    ep = [ember_from(x0[:2]), ember_from(x0[2:])]
    tp = [torch_from(x0[:2]).requires_grad_(), torch_from(x0[2:]).requires_grad_()]
    eo = ember_optim.LBFGS(ep, **kwargs)
    to = torch.optim.LBFGS(tp, **kwargs)
    ecount, tcount = [], []
    eclosure = make_closure(ep, "ember", dtype, ecount)
    tclosure = make_closure(tp, "torch", dtype, tcount)
    # float32 amplifies the last-bit differences of the two-loop recursion over steps
    steps = 5 if dtype == "float64" else 1
    for _ in range(steps):
        el = eo.step(eclosure)
        tl = to.step(tclosure)
        assert el == pytest.approx(tl, rel=1e-6 if dtype == "float64" else 1e-4)
    scale = 1e3 if dtype == "float64" else 10
    for e, t in zip(ep, tp):
        assert_close(e, t, dtype, str(kwargs), scale=scale)
    assert len(ecount) == len(tcount)
    es, ts = eo.state[ep[0]], to.state[tp[0]]
    assert es["func_evals"] == ts["func_evals"] and es["n_iter"] == ts["n_iter"]
    assert sorted(es) == sorted(ts)
    assert len(es["old_dirs"]) == len(ts["old_dirs"])


def test_converges_on_rosenbrock() -> None:
    x = ember_from(np.array([-1.2, 1.0]))
    opt = ember_optim.LBFGS([x], line_search_fn="strong_wolfe", max_iter=100)
    opt.step(make_closure([x], "ember", "float64", []))
    np.testing.assert_allclose(np_of(x), [1.0, 1.0], atol=1e-4)
    t = torch_from(np.array([-1.2, 1.0])).requires_grad_()
    torch.optim.LBFGS([t], line_search_fn="strong_wolfe", max_iter=100).step(
        make_closure([t], "torch", "float64", []))
    assert_close(x, t, "float64", "converged point", scale=100)


def test_with_autograd_closure() -> None:
    """The usual closure: zero_grad, forward, backward, return the loss."""
    import ember_autograd  # noqa: F401  (the autograd provider: requires_grad)

    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal((20, 3)), rng.standard_normal(20)
    a, b = ember_from(a_np), ember_from(b_np)
    w = ember_from(np.zeros(3)).requires_grad_()
    opt = ember_optim.LBFGS([w], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((a @ w - b) ** 2).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert isinstance(loss, et.Tensor) and loss.requires_grad
    expected = np.linalg.lstsq(a_np, b_np, rcond=None)[0]
    np.testing.assert_allclose(np_of(w), expected, rtol=1e-6, atol=1e-8)
    assert w.is_leaf and w.grad_fn is None


def test_already_optimal_returns_at_once() -> None:
    x = ember_from(np.array([1.0, 1.0]))
    opt = ember_optim.LBFGS([x])
    count = []
    opt.step(make_closure([x], "ember", "float64", count))
    assert count == [1] and opt.state[x]["func_evals"] == 1
    assert "d" not in opt.state[x]


def test_errors() -> None:
    with pytest.raises(ValueError, match="^LBFGS doesn't support per-parameter options "
                                         r"\(parameter groups\)$"):
        ember_optim.LBFGS([{"params": [et.zeros(1)]}, {"params": [et.zeros(1)]}])
    x = ember_from(np.array([-1.2, 1.0]))
    opt = ember_optim.LBFGS([x], line_search_fn="armijo")
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(make_closure([x], "ember", "float64", []))
    with pytest.raises(RuntimeError, match="needs a closure"):
        ember_optim.LBFGS([x]).step(None)
    assert ember_optim.LBFGS([x], max_iter=8).defaults["max_eval"] == 10


def test_state_dict_round_trip() -> None:
    x = ember_from(np.array([-1.2, 1.0, 0.3]))
    opt = ember_optim.LBFGS([x], history_size=3)
    closure = make_closure([x], "ember", "float64", [])
    opt.step(closure)
    sd = opt.state_dict()
    assert sorted(sd["state"][0]) == sorted(
        ["func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "H_diag",
         "prev_flat_grad", "prev_loss", "al"]
    )
    y = ember_from(np_of(x))
    fresh = ember_optim.LBFGS([y], history_size=3)
    fresh.load_state_dict(clone_tree(sd))  # a checkpoint's copy: nothing shared
    opt.step(closure)
    fresh.step(make_closure([y], "ember", "float64", []))
    np.testing.assert_array_equal(np_of(x), np_of(y))


def test_deepcopy_keeps_working() -> None:
    import copy

    x = ember_from(np.array([-1.2, 1.0]))
    opt = ember_optim.LBFGS([x], max_iter=3)
    opt.step(make_closure([x], "ember", "float64", []))
    clone = copy.deepcopy(opt)
    y = clone.param_groups[0]["params"][0]
    assert y is not x and clone._params[0] is y
    clone.step(make_closure([y], "ember", "float64", []))
    opt.step(make_closure([x], "ember", "float64", []))
    np.testing.assert_array_equal(np_of(x), np_of(y))
