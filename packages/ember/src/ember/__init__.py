"""Ember: the composed, PyTorch-shaped API.

``import ember`` loads the tensor core (``ember_tensor``) and nothing else. Every public
name of the core is re-exported here under its PyTorch name (``ember.tensor``,
``ember.zeros``, ``ember.float32``, ``ember.Tensor``, ...), taken from
``ember_tensor.__all__`` so that the two lists can never drift apart.

The other components (autograd, nn, optim, data, multiprocessing) are replacement slots.
Later issues resolve them lazily through the module ``__getattr__`` below: on first access,
``ember.nn`` will look up the active provider of the ``nn`` slot (entry point group
``ember.slots.nn``, ``ember.use(nn=...)``, ``EMBER_NN``, ``[tool.ember]``), import it and
cache it in this module's namespace. Until then, touching a slot raises an
``AttributeError`` that names the distribution providing it.
"""

from __future__ import annotations

import importlib.util as _importlib_util

import ember_tensor as _core

__version__ = "0.1.0"

try:
    _CORE_NAMES: tuple[str, ...] = tuple(_core.__all__)
except AttributeError:  # pragma: no cover - a broken core build
    raise ImportError(
        "ember: the tensor core 'ember_tensor' defines no __all__, so ember cannot tell "
        f"which names to re-export (ember_tensor loaded from {_core.__file__!r})"
    ) from None

# Re-export the core's public names: ember.tensor is ember_tensor.tensor, and so on.
globals().update({_name: getattr(_core, _name) for _name in _CORE_NAMES})

__all__ = list(_CORE_NAMES)

# attribute -> (slot, import name, distribution) of the component that provides it
_SLOTS: dict[str, tuple[str, str, str]] = {
    "autograd": ("autograd", "ember_autograd", "ember-autograd"),
    "no_grad": ("autograd", "ember_autograd", "ember-autograd"),
    "enable_grad": ("autograd", "ember_autograd", "ember-autograd"),
    "set_grad_enabled": ("autograd", "ember_autograd", "ember-autograd"),
    "nn": ("nn", "ember_nn", "ember-nn"),
    "optim": ("optim", "ember_optim", "ember-optim"),
    "data": ("data", "ember_data", "ember-data"),
    "utils": ("data", "ember_data", "ember-data"),  # ember.utils.data
    "multiprocessing": ("mp", "ember_mp", "ember-mp"),
}


def __getattr__(name: str) -> object:
    # Only reached for names not found in the module namespace. Later issues resolve the
    # slot's provider here and cache the result with globals()[name] = ...
    slot = _SLOTS.get(name)
    if slot is None:
        raise AttributeError(f"module 'ember' has no attribute {name!r}")
    slot_name, module, distribution = slot
    if _importlib_util.find_spec(module) is None:
        raise AttributeError(
            f"ember.{name} is provided by {distribution}, which is not installed yet "
            f"(slot {slot_name!r}, module {module!r})"
        )
    raise AttributeError(
        f"ember.{name} is provided by {distribution} (module {module!r}), which is installed, "
        f"but the ember meta-package does not resolve the {slot_name!r} slot yet"
    )


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
