"""Helpers of the ember_nn tests: the same data on both libraries (through NumPy), weights
copied across, and comparisons with one tolerance table."""

from __future__ import annotations

import numpy as np
import torch

import ember_tensor as et

DTYPES = {"float32": (et.float32, torch.float32), "float64": (et.float64, torch.float64)}

# (rtol, atol) per dtype, for values and for gradients
TOL = {"float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12)}


def np_of(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().cpu().numpy()
    return np.array(t.detach().numpy())


def ember_from(a, dtype: str = "float64", requires_grad: bool = False):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        a = a.astype(dtype)
    t = et.from_numpy(np.array(a, order="C", copy=True))
    return t.requires_grad_() if requires_grad else t


def torch_from(a, dtype: str = "float64", requires_grad: bool = False):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        a = a.astype(dtype)
    t = torch.from_numpy(np.array(a, order="C", copy=True))
    return t.requires_grad_() if requires_grad else t


def pair(a, dtype: str = "float64", requires_grad: bool = False):
    """The same values as an ember tensor and a torch tensor."""
    return ember_from(a, dtype, requires_grad), torch_from(a, dtype, requires_grad)


def assert_close(actual, expected, dtype: str = "float64", what: str = "", scale: float = 1.0):
    rtol, atol = TOL[dtype]
    a, e = np_of(actual), np_of(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape}, expected {e.shape}"
    np.testing.assert_allclose(a, e, rtol=rtol * scale, atol=atol * scale, err_msg=what)


def copy_state(ember_module, torch_module) -> None:
    """Makes the torch module's parameters and buffers equal to the ember module's (same
    names, through NumPy)."""
    state = {k: torch.from_numpy(np_of(v).copy()) for k, v in ember_module.state_dict().items()}
    torch_module.load_state_dict(state)


def torch_repr(text: str) -> str:
    """A torch repr or message with the library's name as Ember spells it."""
    return text.replace("torch.nn.", "ember.nn.").replace("torch.", "ember.")


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def error_of(call, mod, lib) -> tuple[str, str]:
    """(exception type name, message) of ``call(mod, lib)``, or ("no error", "")."""
    try:
        call(mod, lib)
    except Exception as exc:  # noqa: BLE001 - compared by the caller
        return type(exc).__name__, str(exc)
    return "no error", ""
