"""A rank that dies, a rank that never arrives, and the launcher: the others end with an error
that names the rank, instead of hanging."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from ember_distributed._testing import describe, free_port, run_ranks, script

pytest.importorskip("mpi4py")


def test_a_rank_that_dies_is_named_by_the_others():
    body = """
import datetime
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
t = et.ones(2)
dist.all_reduce(t)
if rank == 1:
    os._exit(3)
import time
t0 = time.monotonic()
try:
    dist.all_reduce(t)
except dist.DistBackendError as e:
    report(msg=str(e), seconds=time.monotonic() - t0)
    time.sleep(3)  # rank 0 serves the store: the others still read it
    os._exit(0)
"""
    ranks = run_ranks(body, 3, timeout=60)
    assert ranks[1].returncode == 3
    for r in (0, 2):
        got = ranks[r].results
        assert ranks[r].returncode == 0, describe(ranks)
        assert (
            "all_reduce (operation 2 of process group 'default' of 3 ranks) stopped: rank 1 "
            "died" in got["msg"]
        )
        assert got["seconds"] < 20  # found through the store, long before the timeout


def test_a_timeout_names_the_ranks_that_did_not_arrive():
    body = """
import datetime, time
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=2))
if rank == 2:
    time.sleep(8)  # never reaches the collective in time
    os._exit(0)
try:
    dist.all_reduce(et.ones(2))
except dist.DistBackendError as e:
    report(msg=str(e))
    time.sleep(3 if rank == 0 else 0)  # rank 0 serves the store the others still read
    os._exit(0)
"""
    ranks = run_ranks(body, 3, timeout=60)
    for r in (0, 1):
        assert ranks[r].returncode == 0, describe(ranks)
        assert (
            ranks[r]
            .results["msg"]
            .endswith(
                "all_reduce (operation 1 of process group 'default' of 3 ranks) timed out after 2 "
                "seconds; rank 2 did not reach it"
            )
        )


def test_monitored_barrier_names_the_missing_ranks():
    body = """
import datetime, time
dist.init_process_group("gloo")
dist.monitored_barrier(timeout=datetime.timedelta(seconds=10))  # everyone: passes
if rank >= 2:
    time.sleep(6)
    os._exit(0)
try:
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=1), wait_all_ranks=True)
except dist.DistBackendError as e:
    report(msg=str(e))
time.sleep(3 if rank == 0 else 0)  # rank 0 serves the store the others still read
os._exit(0)
"""
    ranks = run_ranks(body, 4, timeout=60)
    for r in (0, 1):
        assert ranks[r].returncode == 0, describe(ranks)
        assert "ranks 2, 3 did not reach it" in ranks[r].results["msg"]


def _launch(tmp_path, body: str, *flags: str, timeout: float = 60):
    path = tmp_path / "job.py"
    path.write_text(script(body))
    cmd = [sys.executable, "-m", "ember_distributed.run", *flags, str(path), "--flag", "x"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp_path)


def test_the_launcher_sets_torchruns_environment(tmp_path):
    body = """
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR",
        "MASTER_PORT", "OMP_NUM_THREADS"]
dist.init_process_group("gloo")
t = et.ones(1)
dist.all_reduce(t)
values = dict({k: os.environ[k] for k in keys}, argv=sys.argv[1:], sum=t.item(),
              launched=dist.is_torchelastic_launched())
with open(f"rank{rank}.json", "w") as f:  # the ranks share the launcher's stdout
    json.dump(values, f)
"""
    port = free_port()
    proc = _launch(tmp_path, body, "--nproc_per_node=2", "--master-port", str(port))
    assert proc.returncode == 0, proc.stderr
    import json

    got = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    assert [g["RANK"] for g in got] == ["0", "1"] and [g["LOCAL_RANK"] for g in got] == ["0", "1"]
    for g in got:
        assert g["WORLD_SIZE"] == "2" and g["LOCAL_WORLD_SIZE"] == "2" and g["GROUP_RANK"] == "0"
        assert g["MASTER_ADDR"] == "127.0.0.1" and g["MASTER_PORT"] == str(port)
        assert g["argv"] == ["--flag", "x"] and g["sum"] == 2.0 and g["launched"] is True
        assert g["OMP_NUM_THREADS"] == os.environ.get("OMP_NUM_THREADS", "1")


def test_the_launcher_stops_the_others_when_one_fails(tmp_path):
    body = """
import time
dist.init_process_group("gloo")
if rank == 1:
    raise SystemExit(7)
time.sleep(60)
"""
    t0 = time.monotonic()
    proc = _launch(tmp_path, body, "--nproc-per-node", "3", "--standalone", "--grace-period", "2")
    assert proc.returncode == 1
    assert "rank 1 (local rank 1, pid" in proc.stderr and "exited with code 7" in proc.stderr
    assert "stopped the other 2 process(es)" in proc.stderr
    assert time.monotonic() - t0 < 30


def test_the_launcher_refuses_what_it_cannot_do(tmp_path):
    for flags, msg in [
        (["--max-restarts", "3"], "restarting failed processes is not supported"),
        (["--nnodes", "1:4"], "elastic --nnodes MIN:MAX is not supported"),
        (["--node-rank", "2"], "0 <= node-rank < nnodes"),
    ]:
        proc = _launch(tmp_path, "pass", *flags)
        assert proc.returncode == 2 and msg in proc.stderr, proc.stderr


def test_programs_run_under_mpiexec(tmp_path):
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if not os.path.exists(mpiexec):
        pytest.skip("no mpiexec next to this Python")
    path = tmp_path / "job.py"
    path.write_text(
        script(
            textwrap.dedent("""
        dist.init_process_group("mpi")
        t = et.full((3,), float(dist.get_rank() + 1))
        dist.all_reduce(t)
        report(rank=dist.get_rank(), world=dist.get_world_size(), t=t.tolist())
    """)
        )
    )
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")}
    proc = subprocess.run(
        [mpiexec, "-n", "3", sys.executable, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(
        proc.stdout.count(f'"rank": {r}, "world": 3, "t": [6.0, 6.0, 6.0]') for r in range(3)
    ) == [1, 1, 1], proc.stdout


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie not yet reaped by its parent is gone too
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(")")[-1].split()[0] == "Z"


KILLED = """
import datetime, signal, time
report(pid=os.getpid())
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
dist.all_reduce(et.ones(2))
if rank == 1:
    os.kill(os.getpid(), signal.SIGKILL)
dist.all_reduce(et.ones(2))
time.sleep(60)
"""

MISSING = """
import datetime, time
report(pid=os.getpid())
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3))
if rank == world - 1:
    time.sleep(600)
dist.all_reduce(et.ones(2))
"""


@pytest.mark.parametrize("launcher", ["run", "mpiexec"])
@pytest.mark.parametrize("case", ["killed", "missing"])
def test_a_failed_job_ends_with_an_error_and_leaves_no_process(launcher, case):
    if launcher == "mpiexec" and not os.path.exists(
        os.path.join(os.path.dirname(sys.executable), "mpiexec")
    ):
        pytest.skip("no mpiexec next to this Python")
    t0 = time.monotonic()
    ranks = run_ranks(KILLED if case == "killed" else MISSING, 4, launcher=launcher, timeout=90)
    took = time.monotonic() - t0
    assert ranks[0].returncode not in (0, None), describe(ranks)
    assert took < 60
    err = ranks[0].stderr
    if launcher == "run":
        if case == "killed":
            assert "rank 1 (local rank 1, pid" in err and "killed by signal SIGKILL" in err, err
        else:  # the others time out naming the sleeper; the launcher stops it
            assert "timed out after 3 seconds; rank 3 did not reach it" in err, err
    time.sleep(0.5)
    pids = [r.results["pid"] for r in ranks]
    assert all(_gone(p) for p in pids), (pids, err)


def _netns_pair():
    """Two network namespaces joined by a veth pair (10.231.x.1 and .2): two "machines" on this
    host, or pytest.skip with the reason when namespaces cannot be made here."""
    import shutil

    if shutil.which("ip") is None or os.geteuid() != 0:
        pytest.skip("network namespaces need iproute2's ip and root")
    tag = f"{os.getpid() % 100000}"
    a, b = f"embA{tag}", f"embB{tag}"
    net = f"10.231.{os.getpid() % 250}"
    steps = [
        ["ip", "netns", "add", a], ["ip", "netns", "add", b],
        ["ip", "link", "add", f"ea{tag}", "type", "veth", "peer", "name", f"eb{tag}"],
        ["ip", "link", "set", f"ea{tag}", "netns", a],
        ["ip", "link", "set", f"eb{tag}", "netns", b],
        ["ip", "-n", a, "addr", "add", f"{net}.1/24", "dev", f"ea{tag}"],
        ["ip", "-n", b, "addr", "add", f"{net}.2/24", "dev", f"eb{tag}"],
        ["ip", "-n", a, "link", "set", f"ea{tag}", "up"],
        ["ip", "-n", b, "link", "set", f"eb{tag}", "up"],
        ["ip", "-n", a, "link", "set", "lo", "up"], ["ip", "-n", b, "link", "set", "lo", "up"],
    ]  # fmt: skip
    for step in steps:
        proc = subprocess.run(step, capture_output=True, text=True)
        if proc.returncode != 0:
            for ns in (a, b):
                subprocess.run(["ip", "netns", "del", ns], capture_output=True)
            pytest.skip(f"cannot make network namespaces here: {' '.join(step)}: {proc.stderr}")
    return a, b, f"{net}.1"


def test_two_machines_joined_over_tcp(tmp_path):
    """Ranks in two network namespaces (two "machines"), each started by its own launcher with
    --nnodes 2, meet through rank 0's address and train one DDP step together."""
    a, b, master = _netns_pair()
    try:
        path = tmp_path / "job.py"
        path.write_text(
            script("""
import ember_autograd, ember_nn as nn
from ember_distributed.parallel import DistributedDataParallel as DDP
dist.init_process_group("gloo")
t = et.ones(3) * (dist.get_rank() + 1)
dist.all_reduce(t)
et.manual_seed(dist.get_rank())
model = DDP(nn.Linear(4, 1))
model(et.ones(2, 4) * (dist.get_rank() + 1)).sum().backward()
with open(f"rank{dist.get_rank()}.json", "w") as f:
    json.dump({"sum": t.tolist(), "world": dist.get_world_size(),
               "grad": model.module.weight.grad.tolist(), "node": os.environ["GROUP_RANK"]}, f)
""")
        )
        port = free_port()
        # one host: the MPI library would see one machine and pick shared memory, which the
        # namespaces' processes cannot set up between them; TCP is what two machines use
        env = dict(os.environ, UCX_TLS="tcp,self", OMP_NUM_THREADS="1")
        procs = [
            subprocess.Popen(
                [
                    "ip",
                    "netns",
                    "exec",
                    ns,
                    sys.executable,
                    "-m",
                    "ember_distributed.run",
                    "--nnodes",
                    "2",
                    "--node-rank",
                    str(node),
                    "--nproc-per-node",
                    "2",
                    "--master-addr",
                    master,
                    "--master-port",
                    str(port),
                    str(path),
                ],
                cwd=tmp_path,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )  # fmt: skip
            for node, ns in enumerate((a, b))
        ]
        outs = [p.communicate(timeout=120) for p in procs]
        assert all(p.returncode == 0 for p in procs), outs
        import json

        got = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(4)]
        for r, g in enumerate(got):
            assert g["sum"] == [10.0] * 3 and g["world"] == 4 and g["node"] == str(r // 2)
            # mean over ranks of d(sum(W x))/dW = 2 (r + 1) per weight: 2 * 2.5 = 5
            assert g["grad"] == [[5.0] * 4]
    finally:
        for ns in (a, b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
