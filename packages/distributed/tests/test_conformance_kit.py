"""The conformance kit (``ember_distributed.conformance``) in child pytest processes, each in
a fresh temporary directory: it passes against ember_distributed and catches a provider
whose all_reduce does not reduce."""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from ember_tensor.conformance_kit import kit_outcomes
from ember_tensor.conformance_kit import run_kit as shared_run_kit

pytest.importorskip("mpi4py")

KIT = "ember_distributed.conformance"
CLASS = "TestDistributedConformance"


def run_kit(cwd: Path, *args: str, plugin: bool = True) -> subprocess.CompletedProcess:
    return shared_run_kit(KIT, cwd, *args, plugin=plugin)


def test_kit_passes_against_ember_distributed(tmp_path: Path) -> None:
    proc = run_kit(tmp_path)
    got = kit_outcomes(proc.stdout, KIT, CLASS)
    failed = sorted(k for k, v in got.items() if v != "PASSED")
    assert proc.returncode == 0, f"kit failed: {failed}\n{proc.stdout[-4000:]}"
    assert len(got) >= 40, proc.stdout[-3000:]
    assert re.search(r"kit tests: \d+ passed$", proc.stdout, re.M), proc.stdout[-2000:]


def test_not_loaded_without_p(tmp_path: Path) -> None:
    proc = run_kit(tmp_path, "--collect-only", "-qq", plugin=False)
    assert CLASS not in proc.stdout


def test_a_provider_that_does_not_reduce_fails_and_xfail_file(tmp_path: Path) -> None:
    pkg = tmp_path / "lazy_dist"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        textwrap.dedent("""
        from ember_distributed import *  # noqa
        from ember_distributed import INTERFACE_VERSION, parallel, run  # noqa

        def all_reduce(tensor, op=None, group=None, async_op=False):
            return None  # leaves every rank's tensor as it was
    """)
    )
    (pkg / "run.py").write_text(
        "from ember_distributed.run import main\nraise SystemExit(main())\n"
    )
    (pkg / "parallel.py").write_text("from ember_distributed.parallel import *  # noqa\n")
    args = ["--distributed-provider=lazy_dist", "-k", "collectives_match"]
    proc = run_kit(tmp_path, *args)
    got = kit_outcomes(proc.stdout, KIT, CLASS)
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert got.get("test_collectives_match_numpy") == "FAILED", proc.stdout[-3000:]
    xfail = tmp_path / "xfail.txt"
    xfail.write_text(f"{CLASS}::test_collectives_match_numpy : all_reduce is a no-op on purpose\n")
    proc = run_kit(tmp_path, *args, f"--distributed-xfail={xfail}")
    got = kit_outcomes(proc.stdout, KIT, CLASS)
    assert proc.returncode == 0 and got.get("test_collectives_match_numpy") == "XFAIL", proc.stdout[
        -3000:
    ]
