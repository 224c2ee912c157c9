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
(``ember_data``).

Another provider (another entry point name in the slot's group) is chosen, in this order of
precedence, by ``ember.use(optim="name")`` before the slot's first use, by the environment
variable ``EMBER_<SLOT>`` (``EMBER_OPTIM=name``), or by the ``[tool.ember]`` table of the
nearest ``pyproject.toml`` (``optim = "name"``); installing a plugin changes nothing by
itself. An unknown name, a provider that fails to import or one of another interface version
is a ``SlotError`` naming the slot, the provider, its distribution and version, where the
choice came from, and the cause: never a silent fallback. A slot whose provider is not
installed raises an ``AttributeError``
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
for _name in ("accelerator", "compiler", "fft", "jit", "linalg", "signal", "sparse", "special"):
    if _name in _CORE_NAMES:
        _sys.modules[f"{__name__}.{_name}"] = getattr(_core, _name)
if "signal" in _CORE_NAMES:
    _sys.modules[f"{__name__}.signal.windows"] = _core.signal.windows
# ember.backends and its submodules (``import ember.backends.cudnn as cudnn``)
for _name in [m for m in _sys.modules if m.split(".")[:2] == ["ember_tensor", "backends"]]:
    _sys.modules[__name__ + _name[len("ember_tensor"):]] = _sys.modules[_name]

# ember.cuda is the core's ember_tensor.cuda, its submodules too (``import ember.cuda``,
# ``from ember.cuda.memory import memory_summary``); importing it does not touch the GPU
import ember_tensor.cuda as cuda  # noqa: E402, F401

for _name in [m for m in _sys.modules if m.split(".")[:2] == ["ember_tensor", "cuda"]]:
    _sys.modules[__name__ + _name[len("ember_tensor"):]] = _sys.modules[_name]

# ember.profiler is the core's ember_tensor.profiler, as ember.cuda is its cuda (``import
# ember.profiler``, ``from ember.profiler import profile, record_function``)
import ember_tensor.profiler as profiler  # noqa: E402, F401

_sys.modules[f"{__name__}.profiler"] = profiler

# ember.amp is the core's ember_tensor.amp (``ember.amp.GradScaler``), and its autocast and
# state functions are top-level names too, as in torch (``with ember.autocast("cpu"):``);
# __all__ stays exactly the core's names (tests/test_meta.py)
import ember_tensor.amp as amp  # noqa: E402
from ember_tensor.amp import (  # noqa: E402, F401
    autocast,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)

_sys.modules[f"{__name__}.amp"] = amp

# torch.func's functional_call (over the nn provider; importing it loads nothing), and
# torch.onnx's names without an exporter
from . import func, onnx  # noqa: E402, F401, I001

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
    "distributions": ("distributions", "ember_distributions", "ember-distributions"),
    "distributed": ("distributed", "ember_distributed", "ember-distributed"),
}

# The slots this version resolves, with the interface version their providers must declare
# (``INTERFACE_VERSION`` in the provider's module). Attributes of a resolved slot other than
# its own name (``ember.no_grad``) are the provider's attributes of the same name.
_INTERFACES: dict[str, int] = {"autograd": 1, "nn": 1, "optim": 1, "mp": 1, "data": 1,
                               "distributions": 1, "distributed": 1}
# ember.<module> -> the slot whose provider it is (``ember.multiprocessing`` is slot "mp")
_MODULE_SLOTS: dict[str, str] = {"autograd": "autograd", "nn": "nn", "optim": "optim",
                                 "multiprocessing": "mp", "data": "data", "utils.data": "data",
                                 "distributions": "distributions"}
_DEFAULT_PROVIDER = "ember"  # the entry point name of Ember's own provider in every slot
_providers: dict[str, object] = {}  # slot -> its provider's module, once resolved


class SlotError(ImportError):
    """A replacement slot's provider cannot be used: it fails to import, or implements
    another interface version. (A provider that is not installed at all makes the slot's
    attributes raise ``AttributeError``, as for components that do not exist yet.)"""


_chosen: dict[str, str] = {}  # slot -> provider name, from ember.use()
_project_table: tuple[dict, str] | None = None  # [tool.ember] of the project, and its file


def use(**providers: str) -> None:
    """Chooses the provider of slots by entry point name, before their first use:
    ``ember.use(optim="fastopt")``. Slots: autograd, nn, optim, data, mp, distributions. Overrides
    ``EMBER_<SLOT>`` and the project's ``[tool.ember]`` table. Choosing another provider
    for a slot already in use is an error; the name is checked when the slot resolves."""
    for slot, name in providers.items():
        if slot not in _INTERFACES:
            raise ValueError(f"ember.use: unknown slot {slot!r}; the slots are "
                             f"{', '.join(sorted(_INTERFACES))}")
        if not isinstance(name, str) or not name:
            raise TypeError(f"ember.use: the provider of {slot!r} must be an entry point name "
                            f"(a non-empty str), got {name!r}")
        active = _providers.get(slot)
        if active is not None and _active_names.get(slot) != name:
            raise RuntimeError(
                f"ember.use: the {slot!r} slot is already in use with provider "
                f"{_active_names.get(slot)!r} ({getattr(active, '__name__', active)}); choose "
                f"{name!r} before the first use of ember.{_slot_attr(slot)}")
    _chosen.update(providers)


_active_names: dict[str, str] = {}  # slot -> the entry point name of its active provider
_active_dists: dict[str, str] = {}  # slot -> "distribution version" of its active provider


def _slot_attr(slot: str) -> str:
    return "multiprocessing" if slot == "mp" else slot


def _project_choices() -> tuple[dict, str]:
    """The ``[tool.ember]`` table of the nearest pyproject.toml from the working directory
    up, and that file's path (read once)."""
    global _project_table
    if _project_table is None:
        import os

        table, where = {}, ""
        here = os.path.abspath(os.getcwd())
        while True:
            candidate = os.path.join(here, "pyproject.toml")
            if os.path.isfile(candidate):
                try:
                    import tomllib
                except ImportError:  # Python 3.10 without tomli: no project table
                    tomllib = None
                if tomllib is not None:
                    with open(candidate, "rb") as f:
                        table = tomllib.load(f).get("tool", {}).get("ember", {})
                    where = candidate
                break
            parent = os.path.dirname(here)
            if parent == here:
                break
            here = parent
        _project_table = (table, where)
    return _project_table


def _choice(slot: str) -> tuple[str, str]:
    """(provider name, where the choice came from) for ``slot``."""
    import os

    if slot in _chosen:
        return _chosen[slot], "ember.use()"
    env = f"EMBER_{slot.upper()}"
    if os.environ.get(env):
        return os.environ[env], f"the environment variable {env}"
    table, where = _project_choices()
    if table.get(slot):
        return str(table[slot]), f"[tool.ember] in {where}"
    return _DEFAULT_PROVIDER, "the default"


def _resolve(slot: str) -> object:
    """The module of the slot's provider, found through the entry point group
    ``ember.slots.<slot>``, imported and checked once, then cached."""
    provider = _providers.get(slot)
    if provider is not None:
        return provider
    from importlib import import_module, metadata

    group = f"ember.slots.{slot}"
    name, source = _choice(slot)
    entry_points = list(metadata.entry_points(group=group))
    found = [ep for ep in entry_points if ep.name == name]
    if not found and name != _DEFAULT_PROVIDER:
        known = sorted({ep.name for ep in entry_points})
        raise SlotError(
            f"ember: slot {slot!r}: no provider {name!r} (chosen by {source}) in entry point "
            f"group {group!r}; installed providers: {known or 'none'}")
    if not found:
        _, module, distribution = _SLOTS[slot]
        raise ModuleNotFoundError(
            f"ember.{slot} is provided by {distribution}, which is not installed (slot "
            f"{slot!r}: no provider {name!r} in entry point group {group!r}; "
            f"pip install {distribution})",
            name=f"{__name__}.{slot}",
        )

    def dist_of(ep) -> str:
        return f"{ep.dist.name} {ep.dist.version}" if ep.dist else "unknown distribution"

    if len({(ep.value, dist_of(ep)) for ep in found}) > 1:
        raise SlotError(
            f"ember: slot {slot!r}: provider name {name!r} (chosen by {source}) is declared by "
            f"several distributions in {group!r}: "
            f"{', '.join(f'{ep.value} ({dist_of(ep)})' for ep in found)}; uninstall all but one")
    ep = found[0]
    dist = dist_of(ep)
    where = f"slot {slot!r}, provider {name!r} ({ep.value}, {dist}; chosen by {source})"
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
    _active_names[slot] = name
    _active_dists[slot] = dist
    if slot == "nn":
        _compose_nn(provider)
    return provider


def _compose_nn(nn_provider) -> None:
    """``ember.nn.parallel.DistributedDataParallel``, where PyTorch programs look for it: the
    distributed slot's, resolved when first asked for (nn itself cannot depend on
    distributed)."""
    parallel = getattr(nn_provider, "parallel", None)
    if parallel is None or "DistributedDataParallel" in vars(parallel) or \
            "__getattr__" in vars(parallel):
        return

    def __getattr__(name: str):
        if name != "DistributedDataParallel":
            raise AttributeError(f"module {parallel.__name__!r} has no attribute {name!r}")
        from importlib import import_module

        try:
            provider = _resolve("distributed")
        except ModuleNotFoundError as exc:
            raise AttributeError(str(exc)) from None
        value = import_module(f"{provider.__name__}.parallel").DistributedDataParallel
        setattr(parallel, name, value)
        return value

    parallel.__getattr__ = __getattr__


def __getattr__(name: str) -> object:
    # Only reached for names not found in the module namespace: resolve the slot's provider
    # and cache the result in the module's namespace, so that the next access is plain.
    slot = _SLOTS.get(name)
    if name == "distributed":  # a submodule, loaded on first use as torch.distributed is there
        from importlib import import_module

        return import_module(f"{__name__}.distributed")
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
