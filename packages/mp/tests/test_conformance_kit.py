"""The conformance kit (``ember_mp.conformance``) in child pytest processes, each in a fresh
temporary directory. The kit plumbing shared by every slot (options, xfail files, the
report) is tested with the other kits; here: the kit passes against ember_mp and catches a
provider that breaks the protocol."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ember_tensor.conformance_kit import kit_outcomes
from ember_tensor.conformance_kit import run_kit as shared_run_kit

KIT = "ember_mp.conformance"
PREFIX = f"{KIT}::TestMPConformance::"


def run_kit(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return shared_run_kit(KIT, cwd, *args)


def outcomes(out: str) -> dict[str, str]:
    """{short test id: PASSED / FAILED / XFAIL / ...} from pytest -v output."""
    return kit_outcomes(out, KIT, "TestMPConformance")


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
