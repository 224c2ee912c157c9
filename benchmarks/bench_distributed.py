"""ember.distributed side by side with the MPI library underneath it and with PyTorch's gloo:

1. all_reduce (sum) of float32 buffers of 1 KB to 256 MB between 2 processes: bus bandwidth
   (NCCL-tests' convention, 2 (n - 1) / n * bytes / time; for n = 2 the bytes over the time)
   of Ember's ``all_reduce``, of mpi4py's ``Allreduce`` on NumPy buffers over the same MPI
   communicator (the engine's own speed), and of ``torch.distributed.all_reduce`` on gloo.
2. DistributedDataParallel training throughput (samples/s) of an MLP (4 layers of 1024, 12.6M
   parameters, batch 64 per process, SGD): Ember on 1 and 2 processes (scaling efficiency =
   throughput on 2 / (2 x throughput on 1)) and PyTorch DDP on gloo on 1 and 2 processes.

    python benchmarks/bench_distributed.py [--quick] [--max-mb 256]

Every measurement runs in its own processes (started here with the rendezvous environment,
one thread each), one after the other; each number is the median of repeats after warm-up,
a repeat of a small size being a loop of calls that moves about 1 MB.
Needs mpi4py (pip install "ember-distributed[mpi]") and torch for the comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys

import numpy as np
from timing import cpu_model, median_seconds

SIZES = [1 << k for k in range(10, 29, 2)]  # 1 KB .. 256 MB


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _job(mode: str, world: int, args) -> dict:
    """Runs this file as ``world`` workers in ``mode``; rank 0's JSON result."""
    port = _port()
    procs = []
    for r in range(world):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), OMP_NUM_THREADS="1", LOCAL_RANK=str(r))
        procs.append(subprocess.Popen(
            [sys.executable, __file__, "--worker", mode, "--max-mb", str(args.max_mb),
             *(["--quick"] if args.quick else [])],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=1800) for p in procs]
    for p, (_, err) in zip(procs, outs):
        if p.returncode != 0:
            raise SystemExit(f"{mode} worker failed:\n{err[-3000:]}")
    return json.loads(outs[0][0].strip().splitlines()[-1])


def _sizes(args) -> list[int]:
    return [s for s in SIZES if s <= args.max_mb * (1 << 20)]


def _per_call(fn, nbytes: int, repeats: int) -> float:
    """Seconds per call: the median of ``repeats`` samples, each a loop of calls moving
    about 1 MB (a single microsecond-long call would time the ranks' skew, not the call)."""
    inner = max(1, (1 << 20) // nbytes)

    def loop():
        for _ in range(inner):
            fn()

    return median_seconds(loop, repeats, 2.0, warmup=3) / inner


def worker_allreduce(kind: str, args) -> dict:
    """Seconds per all_reduce by size; for ``"ember+mpi4py"``, Ember's and mpi4py's on the
    same communicator in turns (rounds of both, a median each), so that the ratio of the two
    sees the same machine."""
    out = {}
    repeats = 10 if args.quick else 30
    if kind == "ember+mpi4py":
        import ember_distributed as dist
        import ember_tensor as et

        dist.init_process_group("gloo")
        comm = dist.distributed_c10d._World.pg._engine.comm
        from mpi4py import MPI
        rounds = 5
        for nbytes in _sizes(args):
            n = nbytes // 4
            t, a = et.ones(n), np.ones(n, np.float32)
            fns = {"ember": lambda t=t: dist.all_reduce(t),
                   "mpi4py": lambda a=a: comm.Allreduce(MPI.IN_PLACE, a)}
            times: dict = {k: [] for k in fns}
            for _ in range(rounds):
                for k, fn in fns.items():
                    dist.barrier()
                    times[k].append(_per_call(fn, nbytes, max(5, repeats // rounds)))
            for k, v in times.items():
                out.setdefault(k, {})[nbytes] = float(np.median(v))
    else:
        import torch
        import torch.distributed as tdist

        torch.set_num_threads(1)
        tdist.init_process_group("gloo")
        for nbytes in _sizes(args):
            t = torch.ones(nbytes // 4)
            tdist.barrier()
            out[nbytes] = _per_call(lambda t=t: tdist.all_reduce(t), nbytes, repeats)
        tdist.destroy_process_group()
    return out


def worker_ddp(kind: str, args) -> dict:
    steps = 5 if args.quick else 15
    world = int(os.environ["WORLD_SIZE"])
    if kind == "ember":
        import ember_autograd  # noqa: F401
        import ember_distributed as dist
        import ember_nn as nn
        import ember_optim as optim
        import ember_tensor as lib
        from ember_distributed.parallel import DistributedDataParallel as DDP

        dist.init_process_group("gloo")
        F = nn.functional
    else:
        import torch as lib
        import torch.distributed as dist
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.optim as optim
        from torch.nn.parallel import DistributedDataParallel as DDP

        lib.set_num_threads(1)
        dist.init_process_group("gloo")
    lib.manual_seed(0)
    layers = []
    for _ in range(4):
        layers += [nn.Linear(1024, 1024), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(1024, 10))
    ddp = DDP(model) if world > 1 else model
    opt = optim.SGD(ddp.parameters(), lr=0.01)
    x = lib.randn(64, 1024)
    y = lib.randint(0, 10, (64,))

    def step():
        opt.zero_grad()
        F.cross_entropy(ddp(x), y).backward()
        opt.step()

    seconds = median_seconds(step, steps, 10.0, warmup=3)
    dist.destroy_process_group()
    return {"samples_per_s": 64 * world / seconds}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--max-mb", type=int, default=256)
    p.add_argument("--worker", default="")
    p.add_argument("--skip-ddp", action="store_true")
    args = p.parse_args()
    if args.worker:
        what, kind = args.worker.split(":")
        res = worker_allreduce(kind, args) if what == "allreduce" else worker_ddp(kind, args)
        if os.environ["RANK"] == "0":
            print(json.dumps(res))
        return
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; one thread per process\n")
    runs = _job("allreduce:ember+mpi4py", 2, args)
    runs["torch"] = _job("allreduce:torch", 2, args)
    print("all_reduce (sum, float32) between 2 processes: bus bandwidth, GB/s (median)\n")
    print("| size | Ember | mpi4py Allreduce (same MPI) | Ember / MPI | torch gloo "
          "| Ember / gloo |")
    print("|---|---|---|---|---|---|")
    for nbytes in _sizes(args):
        bw = {k: nbytes / v[str(nbytes)] / 1e9 for k, v in runs.items()}
        size = f"{nbytes >> 10} KB" if nbytes < (1 << 20) else f"{nbytes >> 20} MB"
        print(f"| {size} | {bw['ember']:.3f} | {bw['mpi4py']:.3f} | "
              f"{bw['ember'] / bw['mpi4py']:.2f} | {bw['torch']:.3f} | "
              f"{bw['ember'] / bw['torch']:.2f} |")
    if args.skip_ddp:
        return
    ddp = {(k, w): _job(f"ddp:{k}", w, args)["samples_per_s"]
           for k in ("ember", "torch") for w in (1, 2)}
    print("\nDDP training, MLP 4x1024 (12.6M parameters), batch 64 per process: samples/s\n")
    print("| | 1 process | 2 processes | scaling efficiency |")
    print("|---|---|---|---|")
    for k in ("ember", "torch"):
        one, two = ddp[(k, 1)], ddp[(k, 2)]
        print(f"| {k} | {one:.0f} | {two:.0f} | {two / (2 * one):.2f} |")
    print(f"\nEmber / PyTorch on 2 processes: {ddp[('ember', 2)] / ddp[('torch', 2)]:.2f}")


if __name__ == "__main__":
    main()
