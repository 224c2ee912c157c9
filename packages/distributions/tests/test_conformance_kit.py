"""The conformance kit (``ember_distributions.conformance``), run in child pytest processes
in fresh temporary directories: it passes against Ember's implementation, is collected only
when enabled, honours an expected-failures file, and catches a broken provider."""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

from ember_tensor.conformance_kit import kit_outcomes
from ember_tensor.conformance_kit import run_kit as shared_run_kit

KIT = "ember_distributions.conformance"
CLASS = "TestDistributionsConformance"


def run_kit(cwd: Path, *args: str, plugin: bool = True) -> subprocess.CompletedProcess:
    return shared_run_kit(KIT, cwd, *args, plugin=plugin)


def test_kit_passes_against_ember_distributions(tmp_path: Path) -> None:
    proc = run_kit(tmp_path)
    got = kit_outcomes(proc.stdout, KIT, CLASS)
    failed = sorted(k for k, v in got.items() if v != "PASSED")
    assert proc.returncode == 0, f"kit failed: {failed}\n{proc.stdout[-4000:]}"
    assert len(got) >= 90, proc.stdout[-3000:]
    assert re.search(r"kit tests: \d+ passed$", proc.stdout, re.M), proc.stdout[-2000:]
    assert "interface version 1" in proc.stdout


def test_not_loaded_without_p(tmp_path: Path) -> None:
    proc = run_kit(tmp_path, "--collect-only", "-qq", plugin=False)
    assert CLASS not in proc.stdout


def test_a_broken_provider_fails_and_xfail_file(tmp_path: Path) -> None:
    (tmp_path / "broken_dists.py").write_text(textwrap.dedent("""
        from ember_distributions import *  # noqa
        import ember_distributions as _D
        from ember_distributions import constraints, transforms  # noqa
        INTERFACE_VERSION = 1

        class Normal(_D.Normal):
            def entropy(self):
                return super().entropy() + 1.0
    """))
    proc = run_kit(tmp_path, "--distributions-provider=broken_dists", "-k", "normal")
    got = kit_outcomes(proc.stdout, KIT, CLASS)
    assert proc.returncode != 0 and got.get("test_normal") == "FAILED", proc.stdout[-3000:]
    xfail = tmp_path / "xfail.txt"
    xfail.write_text(f"{CLASS}::test_normal : entropy is off by one on purpose\n")
    proc = run_kit(tmp_path, "--distributions-provider=broken_dists",
                   f"--distributions-xfail={xfail}", "-k", "test_normal")
    got = kit_outcomes(proc.stdout, KIT, CLASS)
    assert proc.returncode == 0 and got.get("test_normal") == "XFAIL", proc.stdout[-3000:]
