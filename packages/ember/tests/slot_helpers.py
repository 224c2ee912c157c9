"""Fake third-party slot providers, installed as distributions (a ``.dist-info`` on the
path), and a runner of fresh interpreters that see them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path


def fake_provider(root: Path, name: str, module_body: str, dist: str = "") -> None:
    """A distribution ``fake-<name>`` 1.2 (or ``<dist>``) whose entry point ``<name>`` in
    ember.slots.optim is the module ``fake_<name>``."""
    (root / f"fake_{name}.py").write_text(textwrap.dedent(module_body))
    dist = dist or f"fake-{name}"
    info = root / f"{dist.replace('-', '_')}-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.2\n")
    (info / "entry_points.txt").write_text(f"[ember.slots.optim]\n{name} = fake_{name}\n")


def fake_plugins(tmp_path: Path) -> Path:
    """Providers of the optim slot: ``good`` (ember_optim's names, ``PROVIDER = "good"``),
    ``old`` (interface version 0) and ``broken`` (fails to import)."""
    fake_provider(tmp_path, "good", """
        from ember_optim import *  # noqa: F403
        INTERFACE_VERSION = 1
        PROVIDER = "good"
    """)
    fake_provider(tmp_path, "old", "INTERFACE_VERSION = 0\n")
    fake_provider(tmp_path, "broken", "raise ImportError('needs libfoo')\n")
    return tmp_path


def run(cwd: Path, code: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("EMBER_")}
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(cwd), environ.get("PYTHONPATH")]))
    environ.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=environ,
                          capture_output=True, text=True, timeout=120)
