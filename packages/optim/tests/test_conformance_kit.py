"""The conformance kit itself (``ember_optim.conformance``), run in child pytest processes,
each in a fresh temporary directory (no configuration file there), so that the kit is shown
to work from any directory, and a fake provider can sit next to it."""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from ember_tensor.conformance_kit import kit_outcomes
from ember_tensor.conformance_kit import run_kit as shared_run_kit

KIT = "ember_optim.conformance"
PREFIX = f"{KIT}::TestOptimConformance::"


def run_kit(cwd: Path, *args: str, plugin: bool = True) -> subprocess.CompletedProcess:
    return shared_run_kit(KIT, cwd, *args, plugin=plugin)


def outcomes(out: str) -> dict[str, str]:
    """{short test id: PASSED / FAILED / XFAIL / ...} from pytest -v output."""
    return kit_outcomes(out, KIT, "TestOptimConformance")


def test_kit_passes_against_ember_optim(tmp_path: Path) -> None:
    proc = run_kit(tmp_path)
    got = outcomes(proc.stdout)
    failed = sorted(k for k, v in got.items() if v != "PASSED")
    assert proc.returncode == 0, f"kit failed on ember_optim: {failed}\n{proc.stdout[-6000:]}"
    assert len(got) >= 50, proc.stdout[-3000:]
    for name in ("test_param_groups", "test_state_dict_round_trip",
                 "test_load_state_dict_errors", "test_step_hooks", "test_step_with_closure",
                 "test_zero_grad", "test_state_dict_hooks"):
        assert got.get(name) == "PASSED", name
    assert "ember optim conformance kit" in proc.stdout
    assert re.search(r"kit tests: \d+ passed$", proc.stdout, re.M), proc.stdout[-2000:]
    assert "interface version 1" in proc.stdout


def test_only_the_kit_is_collected_in_an_empty_directory(tmp_path: Path) -> None:
    proc = run_kit(tmp_path, "--collect-only", "-qq")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ids = [line for line in proc.stdout.splitlines() if "::" in line]
    assert ids and all(i.startswith(PREFIX) for i in ids), ids


def test_kit_runs_beside_other_tests(tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text("def test_mine():\n    pass\n")
    proc = run_kit(tmp_path, "-k", "mine or zero_grad")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "test_mine.py::test_mine PASSED" in proc.stdout
    assert outcomes(proc.stdout) == {"test_zero_grad": "PASSED"}


def test_not_loaded_without_p(tmp_path: Path) -> None:
    proc = run_kit(tmp_path, "-q", "--collect-only", plugin=False)
    assert "TestOptimConformance" not in proc.stdout
    assert proc.returncode == 5, proc.stdout  # no tests collected


def test_xfail_file_marks_tests_strict(tmp_path: Path) -> None:
    xfail = tmp_path / "xfail.txt"
    xfail.write_text(
        "# comment\n\nTestOptimConformance::test_interface_version : pretend it is missing\n"
    )
    proc = run_kit(tmp_path, f"--optim-xfail={xfail}", "-k", "interface_version")
    assert proc.returncode == 1, proc.stdout  # passed although listed: XPASS(strict)
    assert "XPASS(strict)" in proc.stdout
    assert "pretend it is missing" in proc.stdout


def test_xfail_file_with_a_failing_test(tmp_path: Path) -> None:
    (tmp_path / "half_optim.py").write_text(
        "from ember_optim import *  # noqa: F403\nfrom ember_optim import __version__\n"
    )  # no INTERFACE_VERSION
    xfail = tmp_path / "xfail.txt"
    xfail.write_text(f"{PREFIX}test_interface_version : declares no version yet\n")
    proc = run_kit(tmp_path, "--optim-provider=half_optim", f"--optim-xfail={xfail}",
                   "-k", "interface_version or zero_grad")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outcomes(proc.stdout) == {"test_interface_version": "XFAIL",
                                     "test_zero_grad": "PASSED"}
    assert "1 passed, 1 xfailed (expected failures)" in proc.stdout
    assert "declares no version yet" in proc.stdout


@pytest.mark.parametrize("line", ["TestOptimConformance::test_zero_grad",
                                  "TestOptimConformance::test_zero_grad :   "])
def test_xfail_line_without_reason_is_an_error(tmp_path: Path, line: str) -> None:
    xfail = tmp_path / "xfail.txt"
    xfail.write_text(line + "\n")
    proc = run_kit(tmp_path, f"--optim-xfail={xfail}")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "every expected failure needs a reason" in proc.stderr
    assert "xfail.txt:1" in proc.stderr


def test_xfail_line_naming_no_test_is_an_error(tmp_path: Path) -> None:
    xfail = tmp_path / "xfail.txt"
    xfail.write_text("TestOptimConformance::test_no_such_thing : typo\n")
    proc = run_kit(tmp_path, f"--optim-xfail={xfail}")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "names tests the kit does not have" in proc.stderr
    assert "test_no_such_thing" in proc.stderr


def test_missing_provider_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_kit(tmp_path, "--optim-provider=no_such_optim_provider")
    assert proc.returncode == 4
    assert "cannot import the optim provider 'no_such_optim_provider'" in proc.stderr


def test_broken_provider_fails_the_kit(tmp_path: Path) -> None:
    (tmp_path / "broken_zero_grad.py").write_text(
        textwrap.dedent(
            """\
            import ember_optim as _real
            from ember_optim import *  # noqa: F403
            from ember_optim import INTERFACE_VERSION, __version__, lr_scheduler  # noqa


            class SGD(_real.SGD):
                def zero_grad(self, set_to_none=True):
                    pass  # forgets to reset anything
            """
        )
    )
    proc = run_kit(tmp_path, "--optim-provider=broken_zero_grad", "-k",
                   "zero_grad or sgd_momentum_values")
    assert proc.returncode == 1, proc.stdout
    got = outcomes(proc.stdout)
    assert got == {"test_zero_grad": "FAILED", "test_sgd_momentum_values": "PASSED"}, got
    assert "provider: broken_zero_grad" in proc.stdout
