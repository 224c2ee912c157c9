from __future__ import annotations

import pytest

import ember_mp as mp


@pytest.fixture(params=["file_descriptor", "file_system"])
def strategy(request):
    """Each test body under both sharing strategies (restored afterwards)."""
    old = mp.get_sharing_strategy()
    mp.set_sharing_strategy(request.param)
    yield request.param
    mp.set_sharing_strategy(old)
