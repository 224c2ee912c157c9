"""derivatives.yaml is checked against the core's op schema: every differentiable op has an
entry, and an entry naming an unknown op, argument, name or method is an error."""

from __future__ import annotations

import pathlib

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
    ],
)
def test_bad_entry_names_the_entry(tmp_path, entry, message):
    data = [e for e in _shipped() if e["name"] != entry["name"]] + [entry]
    with pytest.raises(codegen.DerivativesError, match=message) as info:
        codegen.generate(_write(tmp_path, data), strict=False)
    assert f"({entry['name']!r})" in str(info.value)


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
