from __future__ import annotations

import os

import pytest

import ember_mp as mp

START_METHODS = ["fork", "spawn", "forkserver"]


def shm_segments() -> set[str]:
    """Ember's segments in /dev/shm right now."""
    return {n for n in os.listdir("/dev/shm") if n.startswith("ember_")}


@pytest.fixture(params=["file_descriptor", "file_system"])
def strategy(request):
    """Each test body under both sharing strategies (restored afterwards)."""
    old = mp.get_sharing_strategy()
    mp.set_sharing_strategy(request.param)
    yield request.param
    mp.set_sharing_strategy(old)
