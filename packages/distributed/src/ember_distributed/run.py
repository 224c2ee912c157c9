"""``python -m ember.distributed.run``: starts a training script once per process of this
node, as ``torchrun`` does, with its flags.

    python -m ember.distributed.run --nproc-per-node 4 train.py --epochs 3
    python -m ember.distributed.run --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 \\
        --master-port 29500 --nproc-per-node 8 train.py          # on each node, its rank

Each process gets ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``,
``GROUP_RANK``, ``MASTER_ADDR``, ``MASTER_PORT`` and ``TORCHELASTIC_RUN_ID`` in its
environment (``init_process_group()`` reads them), and ``OMP_NUM_THREADS=1`` unless it is
set (as torchrun: N processes on one machine share its cores). ``--rdzv-endpoint host:port``
is the master's address; ``--standalone`` picks a free local port. When a process fails, the
others are stopped (SIGTERM, then SIGKILL after a grace period) and the launcher exits
non-zero, naming the rank and its exit code or signal (its own traceback is above).
Ranks meet statically (every node passes the same ``--nnodes``); elastic membership and
restarts are not supported (``--max-restarts`` other than 0 is refused).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import uuid

__all__ = ["main", "parse_args"]


def _flag(parser: argparse.ArgumentParser, name: str, **kw) -> None:
    """A flag spelt both ways, as torchrun accepts (``--nproc-per-node``, ``--nproc_per_node``)."""
    dashed = "--" + name
    under = "--" + name.replace("-", "_")
    names = [dashed] if dashed == under else [dashed, under]
    parser.add_argument(*names, dest=name.replace("-", "_"), **kw)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m ember.distributed.run",
        description="Start a training script on every process of this node (torchrun's flags).")
    _flag(p, "nnodes", default="1", help="number of nodes (or MIN:MAX, which must be equal)")
    _flag(p, "nproc-per-node", default="1",
          help="processes on this node: a number, 'cpu' or 'auto'")
    _flag(p, "node-rank", type=int, default=0, help="this node's rank (0 .. nnodes-1)")
    _flag(p, "master-addr", default="127.0.0.1", help="address of the node of rank 0")
    _flag(p, "master-port", type=int, default=29500, help="a free port on that node")
    _flag(p, "rdzv-endpoint", default="", help="host:port of the master (overrides the two above)")
    _flag(p, "rdzv-backend", default="static", help="accepted: 'static' or 'c10d' (static meeting)")
    _flag(p, "rdzv-id", default="", help="a name for the job (TORCHELASTIC_RUN_ID)")
    _flag(p, "standalone", action="store_true", help="one node, master on a free local port")
    _flag(p, "max-restarts", type=int, default=0, help="only 0: restarts are not supported")
    _flag(p, "monitor-interval", type=float, default=0.1, help="seconds between checks")
    _flag(p, "no-python", action="store_true", help="run the script as an executable")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module")
    _flag(p, "grace-period", type=float, default=5.0,
          help="seconds between SIGTERM and SIGKILL when stopping the others")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    lo, _, hi = args.nnodes.partition(":")
    if hi and hi != lo:
        p.error("elastic --nnodes MIN:MAX is not supported: give one number")
    args.nnodes = int(lo)
    if args.max_restarts:
        p.error("--max-restarts: restarting failed processes is not supported (use 0)")
    if args.nproc_per_node in ("cpu", "auto"):
        args.nproc_per_node = os.cpu_count() or 1
    else:
        args.nproc_per_node = int(args.nproc_per_node)
    if args.nproc_per_node < 1 or args.nnodes < 1 or not 0 <= args.node_rank < args.nnodes:
        p.error(f"need nproc-per-node >= 1 and 0 <= node-rank < nnodes, got {args.nproc_per_node}, "
                f"{args.node_rank}, {args.nnodes}")
    if args.rdzv_endpoint:
        host, _, port = args.rdzv_endpoint.rpartition(":")
        args.master_addr, args.master_port = host or args.rdzv_endpoint, int(port or 29500)
    if args.standalone:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            args.master_addr, args.master_port = "127.0.0.1", s.getsockname()[1]
    return args


def _command(args) -> list[str]:
    if args.no_python:
        return [args.training_script, *args.training_script_args]
    if args.module:
        return [sys.executable, "-u", "-m", args.training_script, *args.training_script_args]
    return [sys.executable, "-u", args.training_script, *args.training_script_args]


def _describe(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def main(argv=None) -> int:
    args = parse_args(argv)
    n, world = args.nproc_per_node, args.nproc_per_node * args.nnodes
    run_id = args.rdzv_id or uuid.uuid4().hex[:12]
    procs = []
    for local in range(n):
        rank = args.node_rank * n + local
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(local), WORLD_SIZE=str(world),
                   LOCAL_WORLD_SIZE=str(n), GROUP_RANK=str(args.node_rank),
                   MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port),
                   TORCHELASTIC_RUN_ID=run_id)
        if n > 1:
            env.setdefault("OMP_NUM_THREADS", "1")
        procs.append((rank, subprocess.Popen(_command(args), env=env)))
    failed = None
    try:
        while procs and failed is None:
            time.sleep(args.monitor_interval)
            for rank, p in list(procs):
                code = p.poll()
                if code is None:
                    continue
                procs.remove((rank, p))
                if code != 0:
                    failed = (rank, p.pid, code)
                    break
    except KeyboardInterrupt:
        failed = failed or (None, None, -signal.SIGINT)
    if procs:
        _stop([p for _, p in procs], args.grace_period)
    if failed is None:
        return 0
    rank, pid, code = failed
    if rank is None:
        print("ember.distributed.run: interrupted; stopped every process", file=sys.stderr)
    else:
        print(f"ember.distributed.run: rank {rank} (local rank {rank - args.node_rank * n}, "
              f"pid {pid}) {_describe(code)}; stopped the other {len(procs)} process(es) of "
              "this node", file=sys.stderr)
    return 1


def _stop(procs: list, grace: float) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for p in procs:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


if __name__ == "__main__":
    sys.exit(main())
