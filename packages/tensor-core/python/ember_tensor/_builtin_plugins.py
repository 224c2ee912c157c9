"""The plug-point provider the core's conformance kit tests by default: Ember's own host
allocator (the caching allocator, installed by no plugin) and no kernel overrides. A plugin
package exposes the same three names (see ``ember_tensor.conformance``)."""

from __future__ import annotations

INTERFACE_VERSION = 1
HOST_ALLOCATOR_NAME = None  # the core's own allocator: nothing is installed


def kernels() -> dict:
    """No kernel overrides."""
    return {}


def register_kernels() -> list:
    """Registers nothing."""
    return []
