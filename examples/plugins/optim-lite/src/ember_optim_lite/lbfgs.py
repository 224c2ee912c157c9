"""L-BFGS with an optional strong-Wolfe line search.

The quasi-Newton direction comes from the two-loop recursion over the last
``history_size`` curvature pairs (Nocedal & Wright, *Numerical Optimization*, 2nd ed.,
Algorithm 7.4); the line search is their bracketing phase and ``zoom`` (Algorithms 3.5 and
3.6) with safeguarded cubic interpolation. All the parameters are treated as one flat
vector; the optimizer takes one parameter group.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import ember_tensor as et

from . import _grad
from .optimizer import Optimizer

__all__ = ["LBFGS"]

Tensor = et.Tensor


def _cubic_minimum(t1: float, f1: float, d1: float, t2: float, f2: float, d2: float,
                   lo: float, hi: float) -> float:
    """The minimiser, clamped into [lo, hi], of the cubic through (t1, f1) and (t2, f2)
    with slopes d1 and d2; the middle of [lo, hi] when the cubic has no minimum there."""
    if t1 == t2:
        return (lo + hi) / 2.0
    theta = d1 + d2 - 3.0 * (f1 - f2) / (t1 - t2)
    disc = theta * theta - d1 * d2
    if disc < 0.0:
        return (lo + hi) / 2.0
    gamma = math.copysign(math.sqrt(disc), t2 - t1)
    denom = d2 - d1 + 2.0 * gamma
    if denom == 0.0:
        return (lo + hi) / 2.0
    t = t2 - (t2 - t1) * (d2 + gamma - theta) / denom
    if not math.isfinite(t):
        return (lo + hi) / 2.0
    return min(max(t, lo), hi)


class _Point:
    """A trial step t along the direction: loss, flat gradient, directional derivative."""

    __slots__ = ("t", "f", "g", "slope")

    def __init__(self, t: float, f: float, g: Tensor, slope: float) -> None:
        self.t, self.f, self.g, self.slope = t, f, g, slope


def _strong_wolfe(evaluate: Callable[[float], tuple[float, Tensor]], d: Tensor, t: float,
                  start: _Point, c1: float = 1e-4, c2: float = 0.9,
                  tolerance_change: float = 1e-9, max_ls: int = 25) -> tuple[_Point, int]:
    """A step satisfying the strong Wolfe conditions (or the best found in ``max_ls``
    evaluations), and the number of evaluations. ``evaluate(t)`` is (loss, flat gradient)
    at ``x + t * d``; ``start`` is the point t = 0."""
    d_scale = d.abs().max().item()

    def probe(step: float) -> _Point:
        f, g = evaluate(step)
        return _Point(step, f, g, g.dot(d).item())

    def armijo_fails(p: _Point) -> bool:
        return p.f > start.f + c1 * p.t * start.slope

    def curvature_holds(p: _Point) -> bool:
        return abs(p.slope) <= -c2 * start.slope

    evals = 0
    prev, cur = start, probe(t)
    evals += 1
    lo = hi = None
    # bracketing: grow the step until an interval holds a point of the strong Wolfe set
    while True:
        # (no longer decreasing: from the third trial on, as PyTorch's search does)
        if armijo_fails(cur) or (evals > 2 and cur.f >= prev.f):
            lo, hi = prev, cur
            break
        if curvature_holds(cur):
            return cur, evals
        if cur.slope >= 0:
            lo, hi = cur, prev
            break
        if evals >= max_ls:
            return cur, evals
        nxt = _cubic_minimum(prev.t, prev.f, prev.slope, cur.t, cur.f, cur.slope,
                             cur.t + 0.01 * (cur.t - prev.t), cur.t * 10.0)
        prev, cur = cur, probe(nxt)
        evals += 1
    # zoom: shrink [lo, hi] (lo: the lowest loss so far that satisfies the Armijo condition)
    stalled = False
    while evals < max_ls:
        if abs(hi.t - lo.t) * d_scale < tolerance_change:
            break
        left, right = min(lo.t, hi.t), max(lo.t, hi.t)
        trial = _cubic_minimum(lo.t, lo.f, lo.slope, hi.t, hi.f, hi.slope, left, right)
        margin = 0.1 * (right - left)
        if min(right - trial, trial - left) < margin:
            # too close to an end: accept once, then force the trial inside
            if stalled or trial >= right or trial <= left:
                trial = right - margin if abs(trial - right) < abs(trial - left) else (
                    left + margin)
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        cur = probe(trial)
        evals += 1
        if armijo_fails(cur) or cur.f >= lo.f:
            hi = cur
            continue
        if curvature_holds(cur):
            return cur, evals
        if cur.slope * (hi.t - lo.t) >= 0:
            hi = lo
        lo = cur
    return lo, evals


class LBFGS(Optimizer):
    """Limited-memory BFGS. ``step(closure)`` runs up to ``max_iter`` iterations (and
    ``max_eval`` closure calls, default ``max_iter * 5 // 4``) and returns the first loss.
    With ``line_search_fn=None`` every iteration steps by ``lr`` along the quasi-Newton
    direction (the very first by ``lr * min(1, 1 / |g|_1)``); ``"strong_wolfe"`` searches
    the step. Stops when the gradient's largest entry is ``<= tolerance_grad`` or the step
    or the loss change is ``< tolerance_change``. One parameter group only; the whole state
    is kept with the first parameter."""

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got "
                             f"{line_search_fn!r}")
        super().__init__(params, {
            "lr": lr, "max_iter": max_iter, "max_eval": max_eval,
            "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
            "history_size": history_size, "line_search_fn": line_search_fn})
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def add_param_group(self, param_group: dict) -> None:
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    # -- the flat view of the parameters -------------------------------------------------

    def _flat_grad(self) -> Tensor:
        parts = []
        for p in self._params:
            g = p.grad
            parts.append(et.zeros(p.numel(), dtype=p.dtype, device=p.device) if g is None
                         else g.reshape(-1))
        return et.cat(parts)

    def _move(self, t: float, d: Tensor) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(d[offset:offset + n].reshape(p.shape), alpha=t)
            offset += n

    def _evaluate(self, closure: Callable) -> float:
        with _grad.enable_grad():
            return float(closure())

    # -- the step ------------------------------------------------------------------------

    def step(self, closure: Callable | None = None):
        if closure is None:
            raise RuntimeError("LBFGS.step needs a closure that re-evaluates the model and "
                               "returns the loss")
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history = group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with _grad.enable_grad():
            first_loss = closure()
        loss = float(first_loss)
        evals = 1
        state["func_evals"] += 1
        with _grad.no_grad():
            g = self._flat_grad()
            if g.abs().max().item() <= tol_grad:
                return first_loss
            d, t = state.get("d"), state.get("t")
            dirs, steps, rho = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
            h_diag = state.get("H_diag")
            g_prev, loss_prev = state.get("prev_flat_grad"), state.get("prev_loss")
            iters = 0
            while iters < max_iter:
                iters += 1
                state["n_iter"] += 1
                if state["n_iter"] == 1:
                    d = g.neg()
                    dirs, steps, rho, h_diag = [], [], [], 1.0
                else:
                    y = g.sub(g_prev)
                    s = d.mul(t)
                    ys = y.dot(s).item()
                    if ys > 1e-10:  # keep the pair only when the curvature is positive
                        if len(dirs) == history:
                            dirs.pop(0)
                            steps.pop(0)
                            rho.pop(0)
                        dirs.append(y)
                        steps.append(s)
                        rho.append(1.0 / ys)
                        h_diag = ys / y.dot(y).item()
                    d = self._two_loop(g, dirs, steps, rho, h_diag)
                g_prev = g.clone()
                loss_prev = loss
                t = min(1.0, 1.0 / g.abs().sum().item()) * lr if state["n_iter"] == 1 else lr
                slope = g.dot(d).item()
                if slope > -tol_change:  # not a descent direction
                    break
                used = 0
                if group["line_search_fn"] == "strong_wolfe":
                    origin = [p.clone() for p in self._params]

                    def at_step(step: float, _origin=origin, _d=d) -> tuple[float, Tensor]:
                        self._move(step, _d)
                        f = self._evaluate(closure)
                        grad = self._flat_grad()
                        for p, p0 in zip(self._params, _origin):
                            p.copy_(p0)
                        return f, grad

                    found, used = _strong_wolfe(at_step, d, t, _Point(0.0, loss, g, slope),
                                                tolerance_change=tol_change)
                    t, loss, g = found.t, found.f, found.g
                    self._move(t, d)
                else:
                    self._move(t, d)
                    if iters != max_iter:
                        loss = self._evaluate(closure)
                        g = self._flat_grad()
                        used = 1
                evals += used
                state["func_evals"] += used
                if iters == max_iter or evals >= max_eval:
                    break
                if g.abs().max().item() <= tol_grad:
                    break
                if d.abs().max().item() * abs(t) <= tol_change:
                    break
                if abs(loss - loss_prev) < tol_change:
                    break
            state.update(d=d, t=t, old_dirs=dirs, old_stps=steps, ro=rho, H_diag=h_diag,
                         prev_flat_grad=g_prev, prev_loss=loss_prev)
        return first_loss

    @staticmethod
    def _two_loop(g: Tensor, dirs: list, steps: list, rho: list, h_diag: float) -> Tensor:
        """-H g, H the L-BFGS inverse-Hessian approximation of the stored pairs."""
        q = g.neg()
        alphas = [0.0] * len(dirs)
        for i in range(len(dirs) - 1, -1, -1):
            alphas[i] = steps[i].dot(q).item() * rho[i]
            q.add_(dirs[i], alpha=-alphas[i])
        r = q.mul(h_diag)
        for i in range(len(dirs)):
            beta = dirs[i].dot(r).item() * rho[i]
            r.add_(steps[i], alpha=alphas[i] - beta)
        return r
