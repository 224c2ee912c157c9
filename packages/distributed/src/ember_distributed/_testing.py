"""Runs a piece of Python as every rank of a small job, for the tests and the conformance kit.

``run_ranks(body, world_size, launcher=)`` starts ``world_size`` interpreters, each running a
prelude and then ``body``: with ``launcher="env"`` (default) started here with the rendezvous
environment (``MASTER_ADDR``/``MASTER_PORT`` on a free local port, ``RANK``, ``WORLD_SIZE``);
``"run"`` through ``python -m <provider>.run``; ``"mpiexec"`` through the ``mpiexec`` next to
this Python (ranks from MPI's world). The prelude imports NumPy, the core as ``et`` and the
provider under test as ``dist`` (``EMBER_DIST_PROVIDER``, default ``ember_distributed``), and
defines ``rank``, ``world`` and ``report(**values)``, whose values ``Rank.results`` collects
(a JSON file per rank: the ranks of a launcher share its stdout).
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
rank = int(os.environ.get("RANK", os.environ.get("PMI_RANK", "-1")))
world = int(os.environ.get("WORLD_SIZE", os.environ.get("PMI_SIZE", "-1")))
def report(**values):
    line = "RESULT " + json.dumps(values)
    where = os.environ.get("EMBER_DIST_RESULTS")
    if where:
        with open(os.path.join(where, f"rank{rank}.txt"), "a") as f:
            f.write(line + "\\n")
    else:
        print(line, flush=True)
"""


@dataclasses.dataclass
class Rank:
    returncode: int | None
    stdout: str  # with a launcher: what the rank reported (the launcher's output is shared)
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
              provider: str = "ember_distributed", launcher: str = "env") -> list[Rank]:
    """Every rank's outcome, in rank order (a rank still running at ``timeout`` is killed:
    returncode None). With a launcher, every rank gets the launcher's exit code and stderr."""
    import tempfile

    port = free_port()
    code = script(body)
    base = dict(os.environ, EMBER_DIST_PROVIDER=provider, OMP_NUM_THREADS="1")
    base.update(env or {})
    if launcher == "env":
        procs = []
        for r in range(world_size):
            e = dict(base, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(r),
                     WORLD_SIZE=str(world_size))
            e.update(env or {})
            procs.append(subprocess.Popen([sys.executable, "-c", code], env=e, text=True,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        return collect(procs, timeout)
    with tempfile.TemporaryDirectory() as where:
        path = os.path.join(where, "job.py")
        with open(path, "w") as f:
            f.write(code)
        results = os.path.join(where, "results")
        os.mkdir(results)
        base["EMBER_DIST_RESULTS"] = results
        if launcher == "run":
            cmd = [sys.executable, "-m", f"{provider}.run", "--nproc-per-node", str(world_size),
                   "--master-port", str(port), path]
        elif launcher == "mpiexec":
            for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
                base.pop(k, None)
            cmd = [os.path.join(os.path.dirname(sys.executable), "mpiexec"), "-n",
                   str(world_size), sys.executable, path]
        else:
            raise ValueError(f"unknown launcher {launcher!r}")
        (outcome,) = collect([subprocess.Popen(cmd, env=base, text=True, stdout=subprocess.PIPE,
                                               stderr=subprocess.PIPE)], timeout)
        ranks = []
        for r in range(world_size):
            file = os.path.join(results, f"rank{r}.txt")
            text = ""
            if os.path.exists(file):
                with open(file) as f:
                    text = f.read()
            ranks.append(Rank(outcome.returncode, text, outcome.stderr))
        return ranks


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
