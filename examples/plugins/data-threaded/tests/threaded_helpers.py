"""Helpers of ember-data-threaded's tests: child processes with a clean environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent
PROVIDER = "ember_data_threaded"
KIT = "ember_data.conformance"
XFAIL_FILE = PACKAGE / "conformance-xfail.txt"


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a child process: no pytest variables, no slot choices
    (``EMBER_<SLOT>``) inherited from the caller, then ``extra``."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PYTEST_") and not k.startswith("EMBER_")}
    env.update(extra)
    return env


def run(args: list[str], cwd: Path, timeout: float = 300,
        **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, env=clean_env(**env),
                          capture_output=True, text=True, timeout=timeout)


def run_json(args: list[str], cwd: Path, **env: str) -> dict:
    """Runs a child Python that prints one JSON object as its last line of output."""
    proc = run(args, cwd, **env)
    assert proc.returncode == 0, f"child failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])
