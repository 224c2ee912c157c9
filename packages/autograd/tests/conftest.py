"""Shared fixtures of the ember_autograd tests."""

from __future__ import annotations

import pathlib

import pytest

import ember_autograd as ea
from ember_autograd import codegen, recording

DERIVATIVES = pathlib.Path(codegen.__file__).with_name("derivatives.yaml")


@pytest.fixture
def patch_derivative(tmp_path):
    """``patch_derivative(old, new, keys)``: installs, for the op keys ``keys``, the rules
    generated from a copy of derivatives.yaml where the text ``old`` is replaced by ``new``
    (backward nodes, and forward rules when forward mode is installed). Everything is
    restored when the test ends. Returns the generated (entries, namespace)."""
    from ember_autograd import forward_ad

    saved_rules: dict = {}
    saved_forward: dict = {}

    def patch(old: str, new: str, keys):
        text = DERIVATIVES.read_text()
        assert text.count(old) == 1, f"{old!r} must occur once in derivatives.yaml"
        path = tmp_path / "derivatives.yaml"
        path.write_text(text.replace(old, new))
        source, entries, schema = codegen.generate(path=str(path), strict=False)
        namespace: dict = {}
        exec(compile(source, "<patched derivatives.yaml>", "exec"), namespace)
        fwd = None
        if hasattr(forward_ad, "_ensure_installed"):
            from ember_autograd import forward_codegen

            forward_ad._ensure_installed()
            fwd = {}
            fwd_source = forward_codegen.generate(entries, schema)
            exec(compile(fwd_source, "<patched forward>", "exec"), fwd)
        for key in keys:
            saved_rules.setdefault(key, recording.RULES[key])
            ea._add_rule(key, entries[key], namespace)
            if fwd is not None:
                saved_forward.setdefault(key, forward_ad._FORWARD[key])
                forward_ad._FORWARD[key] = fwd[f"fwd_{codegen._ident(key)}"]
        return entries, namespace

    yield patch
    recording.RULES.update(saved_rules)
    if saved_forward:
        from ember_autograd import forward_ad

        forward_ad._FORWARD.update(saved_forward)
