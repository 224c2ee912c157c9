"""Runs a piece of Python as every rank of a small job, for the tests and the conformance kit.

``run_ranks(body, world_size)`` starts ``world_size`` interpreters with the rendezvous
environment (``MASTER_ADDR``/``MASTER_PORT`` on a free local port, ``RANK``,
``WORLD_SIZE``), each running a prelude and then ``body``. The prelude imports NumPy, the core
as ``et`` and the provider under test as ``dist`` (``EMBER_DIST_PROVIDER``, default
``ember_distributed``), and defines ``rank``, ``world`` and ``report(**values)``, which prints
one JSON line that ``Rank.results`` collects.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import textwrap

PRELUDE = """\
import importlib, json, os, sys
import numpy as np
import ember_tensor as et
dist = importlib.import_module(os.environ.get("EMBER_DIST_PROVIDER", "ember_distributed"))
rank, world = int(os.environ.get("RANK", "-1")), int(os.environ.get("WORLD_SIZE", "-1"))
def report(**values):
    print("RESULT " + json.dumps(values), flush=True)
"""


@dataclasses.dataclass
class Rank:
    returncode: int | None
    stdout: str
    stderr: str

    @property
    def results(self) -> dict:
        out: dict = {}
        for line in self.stdout.splitlines():
            if line.startswith("RESULT "):
                out.update(json.loads(line[len("RESULT "):]))
        return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def script(body: str) -> str:
    return PRELUDE + textwrap.dedent(body)


def run_ranks(body: str, world_size: int, *, timeout: float = 120, env: dict | None = None,
              provider: str = "ember_distributed") -> list[Rank]:
    """Every rank's outcome, in rank order (a rank still running at ``timeout`` is killed:
    returncode None)."""
    port = free_port()
    code = script(body)
    procs = []
    for r in range(world_size):
        e = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(r),
                 WORLD_SIZE=str(world_size), EMBER_DIST_PROVIDER=provider, OMP_NUM_THREADS="1")
        e.update(env or {})
        procs.append(subprocess.Popen([sys.executable, "-c", code], env=e, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    return collect(procs, timeout)


def collect(procs: list, timeout: float) -> list[Rank]:
    import time

    deadline = time.monotonic() + timeout
    out = []
    for p in procs:
        try:
            so, se = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
            out.append(Rank(p.returncode, so, se))
        except subprocess.TimeoutExpired:
            p.kill()
            so, se = p.communicate()
            out.append(Rank(None, so, se))
    return out


def describe(ranks: list[Rank]) -> str:
    """Every rank's exit code and the end of its stderr, for an assertion message."""
    return "\n".join(f"rank {i}: exit {r.returncode}\n{r.stderr[-2000:]}"
                     for i, r in enumerate(ranks))
