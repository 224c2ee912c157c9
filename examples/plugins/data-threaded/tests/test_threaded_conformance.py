"""Ember's data conformance kit (``ember_data.conformance``) against ember_data_threaded.

Two ways to run it, both checked here:

- the kit in this very pytest session, as the monorepo's nox session does::

      pytest -p ember_data.conformance --data-provider=ember_data_threaded \\
          --data-xfail=examples/plugins/data-threaded/conformance-xfail.txt \\
          examples/plugins/data-threaded/tests

  then the kit's ``TestDataConformance`` tests run beside these, and the test below only
  checks that the kit is pointed at this package;
- plain ``pytest tests`` (no ``-p``): the test below runs the kit in a child pytest, in an
  empty directory, and requires every kit test to pass (or to fail as listed in
  ``conformance-xfail.txt``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from threaded_helpers import KIT, PROVIDER, XFAIL_FILE, run


def test_conformance_kit(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    config = request.config
    if config.pluginmanager.has_plugin(KIT):
        provider = config.getoption("data_provider")
        assert provider == PROVIDER, (
            f"the kit runs in this session against {provider!r}, not this package: add "
            f"--data-provider={PROVIDER}")
        return  # its tests are collected in this session
    proc = run(["-m", "pytest", "-p", KIT, f"--data-provider={PROVIDER}",
                f"--data-xfail={XFAIL_FILE}", "-p", "no:cacheprovider", "-W", "error", "-q"],
               tmp_path)
    summary = re.search(r"^kit tests: (.*)$", proc.stdout, re.M)
    assert proc.returncode == 0 and summary, proc.stdout[-6000:] + proc.stderr[-2000:]
    counts = dict((kind, int(n)) for n, kind in re.findall(r"(\d+) (\w+)", summary[1]))
    assert counts.get("passed", 0) >= 25, summary[0]
    assert set(counts) <= {"passed", "xfailed"}, summary[0]
    assert re.search(rf"^provider: {PROVIDER} \S+, distribution ember-data-threaded ",
                     proc.stdout, re.M), proc.stdout[-2000:]
    assert "interface version 1" in proc.stdout
