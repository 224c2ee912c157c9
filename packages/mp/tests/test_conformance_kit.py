"""The conformance kit (``ember_mp.conformance``) in child pytest processes, each in a fresh
temporary directory. The kit plumbing shared by every slot (options, xfail files, the
report) is tested with the other kits; here: the kit passes against ember_mp and catches a
provider that breaks the protocol."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

KIT = "ember_mp.conformance"
PREFIX = f"{KIT}::TestMPConformance::"


def run_kit(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(cwd), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", KIT, "-p", "no:cacheprovider", "-v", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def outcomes(out: str) -> dict[str, str]:
    return {m[1]: m[2] for m in re.finditer(
        rf"^{re.escape(PREFIX)}(\S+) (PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED)", out, re.M)}


def test_kit_passes_against_ember_mp(tmp_path: Path) -> None:
    proc = run_kit(tmp_path)
    got = outcomes(proc.stdout)
    failed = sorted(k for k, v in got.items() if v != "PASSED")
    assert proc.returncode == 0, f"kit failed on ember_mp: {failed}\n{proc.stdout[-6000:]}"
    for name in ("test_tensors_travel_through_shared_memory[spawn]",
                 "test_spawn_propagates_the_error", "test_all_reduce_and_broadcast"):
        assert got.get(name) == "PASSED", name
    assert "ember mp conformance kit" in proc.stdout


def test_kit_catches_a_provider_that_pickles_bytes(tmp_path: Path) -> None:
    """A provider whose queues copy tensors instead of sharing them: the writes of the
    receiver no longer reach the sender."""
    (tmp_path / "copying_mp.py").write_text(
        "from ember_mp import *  # noqa: F403\n"
        "from ember_mp import INTERFACE_VERSION, __version__  # noqa: F401\n"
        "from multiprocessing import reduction\n"
        "import ember_tensor as et\n"
        "reduction.ForkingPickler.register(et.Tensor, lambda t: t.__reduce_ex__(2))\n")
    proc = run_kit(tmp_path, "--mp-provider=copying_mp", "-k", "travel")
    got = outcomes(proc.stdout)
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert got == {"test_tensors_travel_through_shared_memory[fork]": "FAILED",
                   "test_tensors_travel_through_shared_memory[spawn]": "FAILED"}, got
