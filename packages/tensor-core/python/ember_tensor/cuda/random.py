"""The seeds of the CUDA devices' default generators.

Seeding before CUDA is initialised is not an error (as in PyTorch): the call is remembered and
applied when CUDA is initialised, and only the latest ``manual_seed`` (and the latest
``manual_seed_all``) counts. Without CUDA it is never applied, and costs nothing.
"""

from __future__ import annotations

import os

from .. import _C
from . import _lazy

__all__ = ["manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed"]


def _as_seed(value: object) -> int:
    seed = int(value)  # ValueError / TypeError for what is not a number, as in PyTorch
    if not -(1 << 63) <= seed < (1 << 64):
        raise ValueError(f"Overflow when unpacking long long: the seed {seed} is outside "
                         f"[-2**63, 2**64)")
    return seed & 0xFFFF_FFFF_FFFF_FFFF  # negative seeds wrap around, as in PyTorch


def manual_seed(seed: int) -> None:
    """Seeds the default generator of the current CUDA device. Before CUDA is initialised,
    the seed is applied at initialisation; without CUDA it is ignored."""
    value = _as_seed(seed)

    def apply() -> None:
        _C._cuda_manual_seed(value, int(_C._cuda_current_device()))

    _lazy.lazy_call(apply, seed="seed")


def manual_seed_all(seed: int) -> None:
    """Seeds the default generators of every CUDA device (lazily, like ``manual_seed``)."""
    value = _as_seed(seed)

    def apply() -> None:
        for i in range(_lazy.raw_device_count()):
            _C._cuda_manual_seed(value, i)

    _lazy.lazy_call(apply, seed="seed_all")


def _random_seed() -> int:
    return int.from_bytes(os.urandom(8), "little")


def seed() -> None:
    """Seeds the current device's default generator with a random number."""
    manual_seed(_random_seed())


def seed_all() -> None:
    """Seeds every device's default generator with one random number."""
    manual_seed_all(_random_seed())


def initial_seed() -> int:
    """The seed of the current device's default generator (initialises CUDA)."""
    _lazy.lazy_init()
    return int(_C._cuda_initial_seed(int(_C._cuda_current_device())))
