"""Helpers of the ember_optim tests: the same parameters and gradients on both libraries
(through NumPy), optimizers run side by side, comparisons with one tolerance table."""

from __future__ import annotations

import numpy as np
import torch

import ember_optim
import ember_tensor as et

DTYPES = ("float32", "float64")

# (rtol, atol) per dtype for parameters after many steps. Ember composes lerp/addcmul/
# addcdiv of core ops and its sqrt is correctly rounded; PyTorch's CPU kernels round some
# of these differently in the last bit, so results agree to a few ulps per step.
TOL = {"float32": (1e-4, 1e-6), "float64": (1e-10, 1e-12)}

SHAPES = ((5, 7), (13,), (3, 4, 5), ())


def np_of(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().cpu().numpy()
    return np.array(t.detach().numpy())


def ember_from(a, dtype: str | None = None):
    a = np.asarray(a)
    if dtype is not None:
        a = a.astype(dtype)
    return et.from_numpy(np.array(a, order="C", copy=True))


def torch_from(a, dtype: str | None = None):
    a = np.asarray(a)
    if dtype is not None:
        a = a.astype(dtype)
    return torch.from_numpy(np.array(a, order="C", copy=True))


def assert_close(actual, expected, dtype: str = "float64", what: str = "",
                 scale: float = 1.0) -> None:
    rtol, atol = TOL[dtype]
    a, e = np_of(actual), np_of(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape}, expected {e.shape}"
    np.testing.assert_allclose(a, e, rtol=rtol * scale, atol=atol * scale, err_msg=what)


def clone_tree(obj):
    """A deep copy of a state_dict whose tensors are cloned (no storage shared)."""
    if isinstance(obj, et.Tensor):
        return obj.clone()
    if isinstance(obj, dict):
        return {k: clone_tree(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(clone_tree(v) for v in obj)
    return obj


class Pair:
    """The same parameters on both libraries, an optimizer of each, and gradients fed to
    both from one NumPy generator. Parameters are plain leaf tensors (no autograd needed):
    gradients are set directly."""

    def __init__(self, name: str, kwargs: dict, dtype: str = "float32", shapes=SHAPES,
                 seed: int = 0, groups=None, ember_kwargs: dict | None = None,
                 torch_kwargs: dict | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.dtype = dtype
        self.shapes = shapes
        init = [self.rng.standard_normal(s).astype(dtype) for s in shapes]
        self.ember_params = [ember_from(a) for a in init]
        self.torch_params = [torch_from(a).requires_grad_() for a in init]
        e_kwargs = dict(kwargs, **(ember_kwargs or {}))
        t_kwargs = dict(kwargs, **(torch_kwargs or {}))
        if groups is None:
            e_spec, t_spec = self.ember_params, self.torch_params
        else:  # groups: list of (indices, options)
            e_spec = [dict(opts, params=[self.ember_params[i] for i in idx])
                      for idx, opts in groups]
            t_spec = [dict(opts, params=[self.torch_params[i] for i in idx])
                      for idx, opts in groups]
        self.ember = getattr(ember_optim, name)(e_spec, **e_kwargs)
        self.torch = getattr(torch.optim, name)(t_spec, **t_kwargs)

    def set_grads(self, skip: set[int] = frozenset(), scale: float = 1.0) -> None:
        for i, (e, t, s) in enumerate(zip(self.ember_params, self.torch_params, self.shapes)):
            g = (self.rng.standard_normal(s) * scale).astype(self.dtype)
            if i in skip:
                e.grad = None
                t.grad = None
            else:
                e.grad = ember_from(g)
                t.grad = torch_from(g)

    def step(self, n: int = 1, skip_every: int = 0) -> None:
        for k in range(n):
            skip = {k % len(self.shapes)} if skip_every and k % skip_every == 0 else set()
            self.set_grads(skip)
            self.ember.step()
            with torch.no_grad():
                self.torch.step()

    def assert_params_close(self, what: str = "", scale: float = 1.0) -> None:
        for i, (e, t) in enumerate(zip(self.ember_params, self.torch_params)):
            assert e.dtype == getattr(et, self.dtype)
            assert_close(e, t, self.dtype, f"{what} param {i}", scale)

    def assert_state_close(self, what: str = "", scale: float = 1.0) -> None:
        """Same state keys per parameter, tensors close, scalars equal."""
        for i, (e, t) in enumerate(zip(self.ember_params, self.torch_params)):
            es, ts = self.ember.state.get(e, {}), self.torch.state.get(t, {})
            assert sorted(es) == sorted(ts), f"{what} state keys of param {i}"
            for key, tv in ts.items():
                ev = es[key]
                if isinstance(tv, torch.Tensor):
                    assert isinstance(ev, et.Tensor), f"{what} state {key!r}"
                    assert str(ev.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], (
                        f"{what} state {key!r}: dtype {ev.dtype}, torch {tv.dtype}"
                    )
                    assert_close(ev, tv, self.dtype, f"{what} state {key!r} of param {i}",
                                 scale)
                else:
                    assert ev == tv, f"{what} state {key!r}"
