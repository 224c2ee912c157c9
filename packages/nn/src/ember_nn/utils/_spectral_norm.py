"""``ember.nn.utils.spectral_norm``: spectral normalization with a forward pre-hook,
PyTorch's older form (``utils.parametrizations.spectral_norm`` is the current one).

The parameter ``<name>`` is moved to ``<name>_orig``; the buffers ``<name>_u`` and
``<name>_v`` hold the power method's singular-vector estimates, and before each forward a
pre-hook sets ``module.<name> = <name>_orig / sigma``. ``state_dict()`` records the
format version in its metadata (``spectral_norm`` / ``<name>.version``), and a version-0
state dict (with ``<name>`` and without ``<name>_v``) still loads.

>>> import ember_nn as nn
>>> from ember_nn.utils import spectral_norm, remove_spectral_norm
>>> m = spectral_norm(nn.Linear(3, 4))
>>> sorted(m.state_dict())
['bias', 'weight_orig', 'weight_u', 'weight_v']
>>> sorted(remove_spectral_norm(m).state_dict())
['bias', 'weight']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import ember_tensor as et
from ember_autograd import no_grad

from .. import functional as F
from ..parameter import Parameter

if TYPE_CHECKING:  # the layer modules import utils.hooks: no import cycle at run time
    from ..modules.module import Module

__all__ = [
    "SpectralNorm",
    "SpectralNormLoadStateDictPreHook",
    "SpectralNormStateDictHook",
    "remove_spectral_norm",
    "spectral_norm",
]


class SpectralNorm:
    """The forward pre-hook of ``spectral_norm`` on one parameter."""

    # version 1: <name>_v is a buffer; <name> is no longer in the state dict
    _version: int = 1
    name: str
    dim: int
    n_power_iterations: int
    eps: float

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(
                self.dim, *[d for d in range(weight_mat.dim()) if d != self.dim]
            )
        return weight_mat.reshape(weight_mat.size(0), -1)

    def compute_weight(self, module: Module, do_power_iteration: bool):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            # u and v are updated in place (they are the module's buffers), then cloned so
            # that two forward passes can be differentiated together
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v = F.normalize(et.mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = F.normalize(et.mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                u = u.clone()
                v = v.clone()
        sigma = et.dot(u, et.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        # a v with u^T W v = target_sigma (for version-0 state dicts, which lack v)
        v = et.linalg.multi_dot(
            [weight_mat.t().mm(weight_mat).pinverse(), weight_mat.t(), u.unsqueeze(1)]
        ).squeeze(1)
        return v.mul_(target_sigma / et.dot(u, et.mv(weight_mat, v)))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)

        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # a plain attribute until the first forward sets the normalized weight
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)

        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Loads a version-0 state dict (``<name>``, ``<name>_orig``, ``<name>_u``, no
    ``<name>_v``): ``<name>_v`` is solved for so that ``u^T W v`` is the old sigma."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is None or version < 1:
            weight_key = prefix + fn.name
            if (
                version is None
                and all(weight_key + s in state_dict for s in ("_orig", "_u", "_v"))
                and weight_key not in state_dict
            ):
                # a version-1 state dict saved without metadata
                return
            has_missing_keys = False
            for suffix in ("_orig", "", "_u"):
                key = weight_key + suffix
                if key not in state_dict:
                    has_missing_keys = True
                    if strict:
                        missing_keys.append(key)
            if has_missing_keys:
                return
            with no_grad():
                weight_orig = state_dict[weight_key + "_orig"]
                weight = state_dict.pop(weight_key)
                sigma = (weight_orig / weight).mean()
                weight_mat = fn.reshape_weight_to_matrix(weight_orig)
                u = state_dict[weight_key + "_u"]
                state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Records ``<name>.version`` under ``spectral_norm`` in the state dict's metadata."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata) -> None:
        if "spectral_norm" not in local_metadata:
            local_metadata["spectral_norm"] = {}
        key = self.fn.name + ".version"
        if key in local_metadata["spectral_norm"]:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        local_metadata["spectral_norm"][key] = self.fn._version


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Spectral normalization with a forward pre-hook: before each forward,
    ``module.<name> = <name>_orig / sigma``, ``sigma`` the spectral norm of the weight seen
    as a matrix ``(weight.shape[dim], -1)``, estimated by ``n_power_iterations`` steps of
    the power method on the buffers ``<name>_u``, ``<name>_v`` (in training mode only).
    ``dim`` defaults to 1 for ``ConvTranspose{1,2,3}d`` and 0 otherwise. Returns
    ``module``.

    Raises ``ValueError`` when ``n_power_iterations <= 0`` or the parameter is None,
    ``RuntimeError`` when ``name`` already has a spectral_norm hook, ``KeyError`` when
    ``module`` has no parameter ``name``.

    >>> import ember_tensor as et
    >>> import ember_nn as nn
    >>> from ember_nn.utils import spectral_norm
    >>> m = spectral_norm(nn.Linear(20, 40))
    >>> tuple(m.weight_u.shape), tuple(m.weight_v.shape)
    ((40,), (20,))
    """
    if dim is None:
        from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

        transposed = (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
        dim = 1 if isinstance(module, transposed) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undoes ``spectral_norm``: ``module.<name>`` is a Parameter again, holding the
    current normalized weight (no power iteration), and the state-dict hooks go. Returns
    ``module``.

    Raises ``ValueError`` when ``module`` has no spectral_norm hook on ``name``.

    >>> import ember_nn as nn
    >>> from ember_nn.utils import spectral_norm, remove_spectral_norm
    >>> m = remove_spectral_norm(spectral_norm(nn.Linear(2, 2)))
    >>> isinstance(m.weight, nn.Parameter)
    True
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")

    for k, hook in module._state_dict_hooks.items():
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[k]
            break
    for k, hook in module._load_state_dict_pre_hooks.items():
        if isinstance(hook, SpectralNormLoadStateDictPreHook) and hook.fn.name == name:
            del module._load_state_dict_pre_hooks[k]
            break
    return module
