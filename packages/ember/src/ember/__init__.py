"""Ember: the composed, PyTorch-shaped API.

``import ember`` loads the tensor core (``ember_tensor``) and nothing else. Every public
name of the core is re-exported here under its PyTorch name (``ember.tensor``,
``ember.zeros``, ``ember.float32``, ``ember.Tensor``, ...), taken from
``ember_tensor.__all__`` so that the two lists can never drift apart.

The other components (autograd, nn, optim, data, multiprocessing) are replacement slots,
resolved lazily through the module ``__getattr__`` below. The ``autograd`` slot is resolved
today: on first access, ``ember.autograd`` (or ``ember.no_grad``, ``ember.enable_grad``,
``ember.set_grad_enabled``, ``ember.inference_mode``, ``ember.is_grad_enabled``) finds the
slot's default provider through the entry point group ``ember.slots.autograd`` (entry
point ``ember``: ``ember_autograd``), imports it, checks the interface version it declares,
and caches it in this module's namespace. ``import ember.autograd`` and
``from ember.autograd.forward_ad import dual_level`` give the provider's modules (a finder
on ``sys.meta_path``), and the core calls back (``_set_autograd_loader``) when
``requires_grad=True`` is first asked for, so ``ember.randn(3, requires_grad=True)`` works
without touching ``ember.autograd`` first. The ``nn`` slot is resolved the same way:
``ember.nn`` is the provider of the group ``ember.slots.nn`` (``ember_nn``), and
``import ember.nn``, ``import ember.nn.functional as F`` and ``from ember.nn import init``
give its modules. The ``optim`` slot too: ``ember.optim`` is the provider of the group
``ember.slots.optim`` (``ember_optim``), and ``import ember.optim``,
``ember.optim.lr_scheduler`` and ``from ember.optim.lr_scheduler import StepLR`` give its
modules. The ``mp`` slot too: ``ember.multiprocessing`` (and ``import
ember.multiprocessing as mp``) is the provider of the group ``ember.slots.mp``
(``ember_mp``). The ``data`` slot too: ``ember.data`` and ``ember.utils.data`` (and
``from ember.utils.data import DataLoader``) are the provider of ``ember.slots.data``
(``ember_data``). Choosing another provider (``ember.use``, ``EMBER_AUTOGRAD``, ``[tool.ember]``) is
not implemented yet. A slot whose provider is not installed raises an ``AttributeError``
that names the distribution providing it.
"""

from __future__ import annotations

import importlib.util as _importlib_util
import sys as _sys

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

# the core's submodules, importable as ember.<name> too (``import ember.linalg``)
for _name in ("linalg",):
    if _name in _CORE_NAMES:
        _sys.modules[f"{__name__}.{_name}"] = getattr(_core, _name)

# attribute -> (slot, import name, distribution) of the component that provides it
_SLOTS: dict[str, tuple[str, str, str]] = {
    "autograd": ("autograd", "ember_autograd", "ember-autograd"),
    "no_grad": ("autograd", "ember_autograd", "ember-autograd"),
    "enable_grad": ("autograd", "ember_autograd", "ember-autograd"),
    "set_grad_enabled": ("autograd", "ember_autograd", "ember-autograd"),
    "inference_mode": ("autograd", "ember_autograd", "ember-autograd"),
    "is_grad_enabled": ("autograd", "ember_autograd", "ember-autograd"),
    "nn": ("nn", "ember_nn", "ember-nn"),
    "optim": ("optim", "ember_optim", "ember-optim"),
    "data": ("data", "ember_data", "ember-data"),
    "utils": ("data", "ember_data", "ember-data"),  # ember.utils.data
    "multiprocessing": ("mp", "ember_mp", "ember-mp"),
}

# The slots this version resolves, with the interface version their providers must declare
# (``INTERFACE_VERSION`` in the provider's module). Attributes of a resolved slot other than
# its own name (``ember.no_grad``) are the provider's attributes of the same name.
_INTERFACES: dict[str, int] = {"autograd": 1, "nn": 1, "optim": 1, "mp": 1, "data": 1}
# ember.<module> -> the slot whose provider it is (``ember.multiprocessing`` is slot "mp")
_MODULE_SLOTS: dict[str, str] = {"autograd": "autograd", "nn": "nn", "optim": "optim",
                                 "multiprocessing": "mp", "data": "data", "utils.data": "data"}
_DEFAULT_PROVIDER = "ember"  # the entry point name of Ember's own provider in every slot
_providers: dict[str, object] = {}  # slot -> its provider's module, once resolved


class SlotError(ImportError):
    """A replacement slot's provider cannot be used: it fails to import, or implements
    another interface version. (A provider that is not installed at all makes the slot's
    attributes raise ``AttributeError``, as for components that do not exist yet.)"""


def _resolve(slot: str) -> object:
    """The module of the slot's provider, found through the entry point group
    ``ember.slots.<slot>``, imported and checked once, then cached."""
    provider = _providers.get(slot)
    if provider is not None:
        return provider
    from importlib import import_module, metadata

    group, name = f"ember.slots.{slot}", _DEFAULT_PROVIDER
    found = [ep for ep in metadata.entry_points(group=group) if ep.name == name]
    if not found:
        _, module, distribution = _SLOTS[slot]
        raise ModuleNotFoundError(
            f"ember.{slot} is provided by {distribution}, which is not installed (slot "
            f"{slot!r}: no provider {name!r} in entry point group {group!r}; "
            f"pip install {distribution})",
            name=f"{__name__}.{slot}",
        )
    ep = found[0]
    dist = f"{ep.dist.name} {ep.dist.version}" if ep.dist is not None else "unknown distribution"
    where = f"slot {slot!r}, provider {name!r} ({ep.value}, {dist})"
    try:
        provider = import_module(ep.value)
    except Exception as exc:
        raise SlotError(f"ember: {where} failed to import: {type(exc).__name__}: {exc}") from exc
    declared = getattr(provider, "INTERFACE_VERSION", None)
    if declared != _INTERFACES[slot]:
        raise SlotError(
            f"ember: {where} implements interface version {declared}, but this ember needs "
            f"version {_INTERFACES[slot]} of the {slot!r} slot"
        )
    _providers[slot] = provider
    return provider


def __getattr__(name: str) -> object:
    # Only reached for names not found in the module namespace: resolve the slot's provider
    # and cache the result in the module's namespace, so that the next access is plain.
    slot = _SLOTS.get(name)
    if slot is None:
        raise AttributeError(f"module 'ember' has no attribute {name!r}")
    slot_name, module, distribution = slot
    if name == "utils":  # a real subpackage whose attribute ``data`` is the data slot
        from importlib import import_module

        return import_module(f"{__name__}.utils")
    if slot_name in _INTERFACES:
        try:
            provider = _resolve(slot_name)
        except ModuleNotFoundError as exc:
            raise AttributeError(str(exc)) from None
        value = provider if _MODULE_SLOTS.get(name) == slot_name else getattr(provider, name)
        globals()[name] = value
        return value
    if _importlib_util.find_spec(module) is None:
        raise AttributeError(
            f"ember.{name} is provided by {distribution}, which is not installed yet "
            f"(slot {slot_name!r}, module {module!r})"
        )
    raise AttributeError(
        f"ember.{name} is provided by {distribution} (module {module!r}), which is installed, "
        f"but the ember meta-package does not resolve the {slot_name!r} slot yet"
    )


class _SlotImporter:
    """``import ember.autograd`` and ``from ember.autograd.forward_ad import dual_level``:
    the slot's provider (and its submodules) under the ``ember.`` names, no second copy."""

    _ember_slots = True

    @staticmethod
    def find_spec(fullname: str, path=None, target=None):
        parts = fullname.split(".")
        if parts[1:3] == ["utils", "data"]:  # ember.utils.data[.x]: the data slot
            parts = [parts[0], "utils.data", *parts[3:]]
        if len(parts) < 2 or parts[0] != __name__ or parts[1] not in _MODULE_SLOTS:
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(fullname, _SlotImporter)

    @staticmethod
    def create_module(spec):
        return None  # a placeholder module, replaced in sys.modules by exec_module

    @staticmethod
    def exec_module(module) -> None:
        import sys
        from importlib import import_module

        _, name, *rest = module.__name__.split(".")
        if name == "utils":  # ember.utils.data[.x]
            name, rest = "utils.data", rest[1:]
        provider = _resolve(_MODULE_SLOTS[name])
        target = import_module(".".join([provider.__name__, *rest])) if rest else provider
        sys.modules[module.__name__] = target  # what the import statement returns


def _load_autograd() -> None:
    """Called by the core when ``requires_grad=True`` is asked for and no autograd provider is
    installed yet: importing the ``autograd`` slot's provider installs it."""
    __getattr__("autograd")


def _install() -> None:
    import sys

    # a reload of this module replaces the finder of the previous one
    sys.meta_path[:] = [f for f in sys.meta_path if getattr(f, "_ember_slots", False) is False]
    sys.meta_path.insert(0, _SlotImporter)
    _core._set_autograd_loader(_load_autograd)


_install()


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
