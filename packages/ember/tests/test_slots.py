"""Choosing a slot's provider: the default, ``EMBER_<SLOT>``, ``ember.use``, the project's
``[tool.ember]`` table, and the errors for an unknown provider, a broken one, an interface
mismatch and a choice after first use. Each case runs in a fresh interpreter, next to a
fake third-party provider installed as a distribution (a ``.dist-info`` on the path)."""

from __future__ import annotations

from pathlib import Path

import pytest

from slot_helpers import fake_plugins, fake_provider, run


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    return fake_plugins(tmp_path)


def test_installing_a_plugin_changes_nothing(plugins):
    out = run(plugins, "import ember, ember_optim; print(ember.optim is ember_optim)")
    assert out.stdout.split() == ["True"], out.stderr


def test_environment_variable_chooses(plugins):
    out = run(plugins, "import ember; print(ember.optim.PROVIDER)", EMBER_OPTIM="good")
    assert out.stdout.split() == ["good"], out.stderr


def test_use_chooses_and_overrides_the_environment(plugins):
    out = run(plugins, """
        import ember
        ember.use(optim="good")
        print(ember.optim.PROVIDER)
        try:
            ember.use(optim="ember")
        except RuntimeError as exc:
            print(exc)
    """, EMBER_OPTIM="ember")
    lines = out.stdout.splitlines()
    assert lines[0] == "good", out.stderr
    assert lines[1] == ("ember.use: the 'optim' slot is already in use with provider 'good' "
                        "(fake_good); choose 'ember' before the first use of ember.optim")


def test_project_table_chooses(plugins):
    (plugins / "pyproject.toml").write_text('[tool.ember]\noptim = "good"\n')
    sub = plugins / "src"
    sub.mkdir()
    out = run(sub, f"import sys; sys.path.insert(0, {str(plugins)!r}); import ember; "
                   "print(ember.optim.PROVIDER)")
    assert out.stdout.split() == ["good"], out.stderr


@pytest.mark.parametrize(("choice", "message"), [
    ("nosuch", "ember: slot 'optim': no provider 'nosuch' (chosen by the environment variable "
               "EMBER_OPTIM) in entry point group 'ember.slots.optim'; installed providers: "
               "['broken', 'ember', 'good', "),  # (and whatever else is installed), 'old']
    ("old", "ember: slot 'optim', provider 'old' (fake_old, fake-old 1.2; chosen by the "
            "environment variable EMBER_OPTIM) implements interface version 0, but this ember "
            "needs version 1 of the 'optim' slot"),
    ("broken", "ember: slot 'optim', provider 'broken' (fake_broken, fake-broken 1.2; chosen by "
               "the environment variable EMBER_OPTIM) failed to import: ImportError: needs "
               "libfoo"),
])
def test_bad_choices_are_errors_never_fallbacks(plugins, choice, message):
    out = run(plugins, """
        import ember
        try:
            ember.optim
        except ember.SlotError as exc:
            print(exc)
    """, EMBER_OPTIM=choice)
    assert out.stdout.strip().startswith(message), out.stderr


def test_use_checks_the_slot_name():
    import ember

    with pytest.raises(ValueError, match="ember.use: unknown slot 'optimizer'; the slots are "
                                         "autograd, data, distributed, distributions, mp, "
                                         "nn, optim"):
        ember.use(optimizer="x")


def test_a_name_declared_twice_is_an_error(plugins):
    fake_provider(plugins, "good", "INTERFACE_VERSION = 1\n", dist="other-good")
    out = run(plugins, """
        import ember
        try:
            ember.optim
        except ember.SlotError as exc:
            print(exc)
    """, EMBER_OPTIM="good")
    message = out.stdout.strip()
    assert message.startswith(
        "ember: slot 'optim': provider name 'good' (chosen by the environment variable "
        "EMBER_OPTIM) is declared by several distributions in 'ember.slots.optim': "
    ), out.stdout + out.stderr
    assert "fake_good (fake-good 1.2)" in message and "fake_good (other-good 1.2)" in message
    assert message.endswith("; uninstall all but one")
