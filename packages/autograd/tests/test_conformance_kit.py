"""The conformance kit itself (``ember_autograd.conformance``), run in child pytest processes.

Each run happens in a fresh temporary directory (no configuration file there), so that the
kit is shown to work from any directory, and a fake provider can sit next to it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ember_tensor.conformance_kit import kit_outcomes
from ember_tensor.conformance_kit import run_kit as shared_run_kit

KIT = "ember_autograd.conformance"
PREFIX = f"{KIT}::TestAutogradConformance::"

def run_kit(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return shared_run_kit(KIT, cwd, *args)


def outcomes(out: str) -> dict[str, str]:
    """{short test id: PASSED / FAILED / XFAIL / ...} from pytest -v output."""
    return kit_outcomes(out, KIT, "TestAutogradConformance")


def test_kit_passes_against_ember_autograd(tmp_path: Path) -> None:
    proc = run_kit(tmp_path)
    got = outcomes(proc.stdout)
    failed = sorted(k for k, v in got.items() if v != "PASSED")
    assert proc.returncode == 0, f"kit failed on ember_autograd: {failed}\n{proc.stdout[-6000:]}"
    assert len(got) >= 40, proc.stdout[-3000:]
    for name in (
        "test_backward_values",
        "test_retain_graph",
        "test_create_graph_second_derivative",
        "test_leaf_inplace_error",
        "test_saved_tensor_modified_error",
        "test_grad_mode_is_thread_local",
        "test_custom_function",
        "test_forward_ad_jvp",
        "test_gradcheck_fails_on_a_wrong_derivative",
    ):
        assert got.get(name) == "PASSED", name
    assert "ember autograd conformance kit" in proc.stdout
    assert re.search(r"kit tests: \d+ passed$", proc.stdout, re.M), proc.stdout[-2000:]
    assert "interface version 1" in proc.stdout


def test_only_the_kit_is_collected_in_an_empty_directory(tmp_path: Path) -> None:
    proc = run_kit(tmp_path, "--collect-only", "-qq")  # -v -qq: one id a line
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ids = [line for line in proc.stdout.splitlines() if "::" in line]
    assert ids and all(i.startswith(PREFIX) for i in ids), ids


def test_kit_runs_beside_other_tests(tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text("def test_mine():\n    pass\n")
    proc = run_kit(tmp_path, "-k", "mine or retain_graph")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "test_mine.py::test_mine PASSED" in proc.stdout
    assert outcomes(proc.stdout) == {"test_retain_graph": "PASSED"}


def test_not_loaded_without_p(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "TestAutogradConformance" not in proc.stdout
    assert proc.returncode == 5, proc.stdout  # no tests collected


def test_xfail_file_marks_tests_strict(tmp_path: Path) -> None:
    xfail = tmp_path / "xfail.txt"
    xfail.write_text(
        textwrap.dedent(
            """\
            # comments and blank lines are ignored

            TestAutogradConformance::test_interface_version : pretend it is missing
            """
        )
    )
    # a listed test that passes is an XPASS(strict): a failure
    proc = run_kit(tmp_path, f"--autograd-xfail={xfail}", "-k", "interface_version")
    assert proc.returncode == 1, proc.stdout
    assert "XPASS(strict)" in proc.stdout
    assert "pretend it is missing" in proc.stdout


def test_xfail_file_with_a_failing_test(tmp_path: Path) -> None:
    (tmp_path / "half_provider.py").write_text(
        "from ember_autograd import *  # noqa: F403\nfrom ember_autograd import __version__\n"
    )  # no INTERFACE_VERSION
    xfail = tmp_path / "xfail.txt"
    xfail.write_text(
        f"{KIT}::TestAutogradConformance::test_interface_version : declares no version yet\n"
    )
    proc = run_kit(
        tmp_path,
        "--autograd-provider=half_provider",
        f"--autograd-xfail={xfail}",
        "-k",
        "interface_version or retain_graph",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = outcomes(proc.stdout)
    assert got == {"test_interface_version": "XFAIL", "test_retain_graph": "PASSED"}, got
    assert "1 passed, 1 xfailed (expected failures)" in proc.stdout
    assert "declares no version yet" in proc.stdout


@pytest.mark.parametrize(
    "line",
    [
        "TestAutogradConformance::test_retain_graph",
        "TestAutogradConformance::test_retain_graph :",
        "TestAutogradConformance::test_retain_graph :   ",
    ],
)
def test_xfail_line_without_reason_is_an_error(tmp_path: Path, line: str) -> None:
    xfail = tmp_path / "xfail.txt"
    xfail.write_text(line + "\n")
    proc = run_kit(tmp_path, f"--autograd-xfail={xfail}")
    assert proc.returncode == 4, proc.stdout + proc.stderr  # usage error
    assert "every expected failure needs a reason" in proc.stderr
    assert "xfail.txt:1" in proc.stderr


def test_xfail_line_naming_no_test_is_an_error(tmp_path: Path) -> None:
    xfail = tmp_path / "xfail.txt"
    xfail.write_text("TestAutogradConformance::test_no_such_thing : typo\n")
    proc = run_kit(tmp_path, f"--autograd-xfail={xfail}")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "names tests the kit does not have" in proc.stderr
    assert "test_no_such_thing" in proc.stderr


def test_missing_provider_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_kit(tmp_path, "--autograd-provider=no_such_autograd_provider")
    assert proc.returncode == 4
    assert "cannot import the autograd provider 'no_such_autograd_provider'" in proc.stderr


def test_broken_provider_fails_the_kit(tmp_path: Path) -> None:
    (tmp_path / "broken_autograd.py").write_text(
        textwrap.dedent(
            """\
            import ember_autograd as _real
            from ember_autograd import *  # noqa: F403
            from ember_autograd import INTERFACE_VERSION, __version__  # noqa: F401


            def grad(*args, **kwargs):
                # wrong by a factor of two
                return tuple(None if g is None else g * 2 for g in _real.grad(*args, **kwargs))
            """
        )
    )
    proc = run_kit(tmp_path, "--autograd-provider=broken_autograd")
    assert proc.returncode == 1, proc.stdout
    got = outcomes(proc.stdout)
    for name in (
        "test_grad_values_leave_dot_grad_untouched",
        "test_create_graph_second_derivative",
        "test_grad_allow_unused",
    ):
        assert got.get(name) == "FAILED", (name, got.get(name))
    assert got.get("test_backward_values") == "PASSED"  # untouched parts still pass
    assert "provider: broken_autograd" in proc.stdout
