"""The conformance kit (``ember_data.conformance``) in a child pytest process in a fresh
directory: it passes against ember_data. (The plumbing shared by every slot's kit is tested
with the other kits.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_kit_passes_against_ember_data(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "ember_data.conformance", "-p",
         "no:cacheprovider", "-v"], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=600)
    assert proc.returncode == 0, proc.stdout[-6000:]
    assert "ember data conformance kit" in proc.stdout
    assert "TestDataConformance::test_worker_exception PASSED" in proc.stdout
