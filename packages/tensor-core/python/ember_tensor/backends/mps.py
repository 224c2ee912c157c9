"""Apple's Metal backend (as ``torch.backends.mps``): Ember has none, so
``is_available()`` and ``is_built()`` are False, as PyTorch's on every non-Apple machine
(``use_mps = torch.backends.mps.is_available()`` in PyTorch's examples then picks another
device)."""

from __future__ import annotations

__all__ = ["is_available", "is_built", "is_macos13_or_newer", "is_macos_or_newer"]


def is_available() -> bool:
    """False: Ember has no MPS backend."""
    return False


def is_built() -> bool:
    """False: Ember is never built with MPS."""
    return False


def is_macos_or_newer(major: int, minor: int) -> bool:
    """False (PyTorch's answer off macOS)."""
    return False


def is_macos13_or_newer(minor: int = 0) -> bool:
    """False (PyTorch's answer off macOS)."""
    return False
