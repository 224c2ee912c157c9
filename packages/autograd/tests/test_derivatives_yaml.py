"""derivatives.yaml is checked against the core's op schema: every differentiable op has an
entry, and an entry naming an unknown op, argument, name or method is an error."""

from __future__ import annotations

import importlib
import json
import math
import os
import pathlib
import subprocess
import sys

import pytest
import yaml

from ember_autograd import codegen

SOURCE = pathlib.Path(codegen.__file__).with_name("derivatives.yaml")


def _write(tmp_path, entries) -> str:
    path = tmp_path / "derivatives.yaml"
    path.write_text(yaml.safe_dump(entries, sort_keys=False))
    return str(path)


def _shipped() -> list:
    return yaml.safe_load(SOURCE.read_text())


def test_every_differentiable_op_has_an_entry():
    # strict: a differentiable op of ops.yaml without an entry fails here
    source, entries, schema = codegen.generate(strict=True)
    assert "class MulBackward0(Node)" in source
    needing = [op.key for op in schema.values() if codegen.needs_entry(op)]
    assert len(needing) > 100
    for key in needing:
        assert key in entries or codegen.alias_target(schema[key], schema, entries), key


def test_missing_entry_is_an_error(tmp_path):
    data = [e for e in _shipped() if e["name"] != "exp"]
    with pytest.raises(codegen.DerivativesError, match="without a derivatives.yaml entry: .*exp"):
        codegen.generate(_write(tmp_path, data), strict=True)


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"name": "no_such_op", "self": "grad"}, r"no op 'no_such_op' in ops.yaml"),
        ({"name": "mul", "self": "grad * other", "input": "grad"}, r"mul has no argument 'input'"),
        (
            {"name": "add", "self": "grad", "alpha": "grad"},
            r"argument 'alpha' of add is not a tensor",
        ),
        ({"name": "mul", "self": "grad * othr"}, r"unknown name\(s\) othr"),
        ({"name": "mul", "self": "grad.no_such_method()"}, r"unknown op or method no_such_method"),
        ({"name": "mul", "self": "grad *"}, r"is not a Python expression"),
        ({"name": "mul"}, r"no formula for any tensor argument of mul"),
        # a composite with a Python body may have an entry, saying why in `why:`
        ({"name": "hardtanh", "self": "grad"}, r"hardtanh is a composite with a Python body "
                                               r".* needs a 'why:'"),
        ({"name": "mul", "self": "grad * other", "other": "grad * self", "why": "faster"},
         r"'why:' is for the entries of composites with a Python body"),
    ],
)
def test_bad_entry_names_the_entry(tmp_path, entry, message):
    data = [e for e in _shipped() if e["name"] != entry["name"]] + [entry]
    with pytest.raises(codegen.DerivativesError, match=message) as info:
        codegen.generate(_write(tmp_path, data), strict=False)
    assert f"({entry['name']!r})" in str(info.value)


def test_a_python_composite_may_have_an_entry(tmp_path):
    """Without an entry its body's ops are recorded; with one (and its `why:`), it is one
    node, listed in COMPOSITES for the core's composite layer."""
    _, entries, schema = codegen.generate(strict=True)
    assert not codegen.needs_entry(schema["logaddexp"]) and "logaddexp" not in entries
    assert "'logaddexp'" not in codegen.rules_source(entries, schema).split("COMPOSITES = ")[1]
    entry = {"name": "logaddexp", "why": "a test", "self": "grad * (self - result).exp()",
             "other": "grad * (other - result).exp()", "result": "auto_element_wise"}
    source, entries, schema = codegen.generate(_write(tmp_path, _shipped() + [entry]), strict=True)
    assert "class LogaddexpBackward0(Node)" in source
    composites = codegen.rules_source(entries, schema).split("COMPOSITES = ")[1]
    assert "'logaddexp'" in composites and "'hardtanh'" in composites


def test_duplicate_entry_is_an_error(tmp_path):
    data = _shipped() + [{"name": "mul", "self": "grad * other"}]
    with pytest.raises(codegen.DerivativesError, match="a second entry for 'mul'"):
        codegen.generate(_write(tmp_path, data), strict=False)


def test_aliases_reuse_their_target():
    import ember_autograd  # noqa: F401  (installs the rules)
    from ember_autograd import recording

    _, entries, schema = codegen.generate(strict=False)
    assert codegen.alias_target(schema["clip"], schema, entries) == "clamp"
    assert recording.RULES["clip"].record is recording.RULES["clamp"].record


def test_checked_in_generated_modules_are_current():
    # ember_autograd/_generated is what codegen makes of derivatives.yaml and the installed
    # core's op schema now, byte for byte
    directory = pathlib.Path(codegen.GENERATED_DIR)
    stale = [
        name
        for name, text in codegen.sources().items()
        if not (directory / name).is_file() or (directory / name).read_bytes() != text.encode()
    ]
    assert not stale, (
        f"{directory} is stale ({', '.join(stale)}): regenerate it with `{codegen.COMMAND}`"
    )


def test_fallback_when_the_core_schema_differs(monkeypatch):
    from ember_autograd import _generated, load_generated

    assert load_generated.load("rules") is importlib.import_module(f"{_generated.__name__}.rules")
    monkeypatch.setattr(_generated, "SCHEMA_SHA256", "0" * 64)  # as if made for another core
    load_generated._checked_in_is_current.cache_clear()
    try:
        assert not load_generated._checked_in_is_current()
        modules = load_generated.build()
    finally:
        monkeypatch.undo()
        load_generated._checked_in_is_current.cache_clear()
    assert sorted(modules) == ["backward", "forward", "rules"]
    assert modules["rules"].RULES == load_generated.load("rules").RULES
    assert modules["backward"].record_mul.__code__.co_filename.startswith("<ember_autograd")


# the child imports ember_autograd (the checked-in modules, or with "fallback" those it
# generates in memory: sha256 is skewed so that no fingerprint matches), differentiates in both
# modes, and reports which modules it imported
_CHILD = """
import hashlib, json, sys
if sys.argv[1] == "fallback":
    sha256 = hashlib.sha256
    hashlib.sha256 = lambda data: sha256(b"another core " + data)
import ember_tensor as et, ember_autograd, ember_autograd.forward_ad as fwAD
x = et.tensor([1.0, 2.0], requires_grad=True)
(x * x).sum().backward()
with fwAD.dual_level():
    t = fwAD.unpack_dual(fwAD.make_dual(x.detach(), et.ones(2)).exp()).tangent
parsers = sorted(set(sys.modules) & {"yaml", "ember_autograd.codegen"})
print(json.dumps([x.grad.tolist(), t.tolist(), parsers]))
"""


@pytest.mark.parametrize("mode", ["checked_in", "fallback"])
def test_import_writes_nothing_outside_the_package(tmp_path, mode):
    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    cache.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "EMBER_CACHE_DIR"}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(cache))
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, mode], cwd=home, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    grad, tangent, parsers = json.loads(out.stdout)
    assert grad == [2.0, 4.0]
    assert tangent == pytest.approx([math.exp(1.0), math.exp(2.0)])
    # the checked-in modules need neither derivatives.yaml's parser nor the generator
    assert parsers == ([] if mode == "checked_in" else ["ember_autograd.codegen", "yaml"])
    assert sorted(tmp_path.rglob("*")) == [cache, home]
