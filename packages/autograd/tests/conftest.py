"""Shared fixtures of the ember_autograd tests."""

from __future__ import annotations

import pathlib

import pytest

import ember_autograd as ea
from ember_autograd import load_generated, recording

DERIVATIVES = pathlib.Path(load_generated.DERIVATIVES)


@pytest.fixture
def patch_derivative(tmp_path):
    """``patch_derivative(old, new, keys)``: installs, for the op keys ``keys``, the rules
    generated from a copy of derivatives.yaml where the text ``old`` is replaced by ``new``
    (backward nodes and forward rules). Everything is restored when the test ends. Returns
    the generated modules (``load_generated.build``)."""
    from ember_autograd import forward_ad

    saved_rules: dict = {}
    saved_forward: dict = {}

    def patch(old: str, new: str, keys):
        text = DERIVATIVES.read_text()
        assert text.count(old) == 1, f"{old!r} must occur once in derivatives.yaml"
        path = tmp_path / "derivatives.yaml"
        path.write_text(text.replace(old, new))
        modules = load_generated.build(str(path))
        forward_ad._ensure_installed()
        for key in keys:
            saved_rules.setdefault(key, recording.RULES[key])
            ea._add_rule(key, modules["rules"].RULES[key], modules["backward"])
            saved_forward.setdefault(key, forward_ad._FORWARD[key])
            forward_ad._FORWARD[key] = modules["forward"].FORWARD[key]
        return modules

    yield patch
    recording.RULES.update(saved_rules)
    forward_ad._FORWARD.update(saved_forward)
