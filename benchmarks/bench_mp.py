"""ember.multiprocessing and torch.multiprocessing side by side, in one run:

- round trip of a float32 tensor of 1 MB and of 64 MB to a child process and back through
  two queues, once the tensor is in shared memory (the first send moves it there, untimed);
- all_reduce (sum) of 16M float32 across 2 processes: Ember's ProcessGroup against
  torch.distributed with the gloo backend.

    python benchmarks/bench_mp.py [--repeats N] [--start-method spawn]

``ratio`` is torch time / ember time (medians): above 1 means Ember is faster. Each library
runs in its own child processes, one library after the other; the round trips alternate
between the libraries in blocks.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np
from timing import import_torch


def echo(q_in, q_out) -> None:
    while (item := q_in.get()) is not None:
        q_out.put(item)


class RoundTrip:
    """A child that echoes what it gets; ``time(t)`` is one timed round trip."""

    def __init__(self, mp, method: str):
        ctx = mp.get_context(method)
        self.q_in, self.q_out = ctx.Queue(), ctx.Queue()
        self.proc = ctx.Process(target=echo, args=(self.q_in, self.q_out))
        self.proc.start()

    def time(self, t) -> float:
        start = time.perf_counter()
        self.q_in.put(t)
        self.q_out.get()
        return time.perf_counter() - start

    def close(self) -> None:
        self.q_in.put(None)
        self.proc.join()


def round_trips(method: str, repeats: int) -> dict[str, tuple[float, float]]:
    import torch
    import torch.multiprocessing as tmp

    import ember_mp
    import ember_tensor as et

    ours, theirs = RoundTrip(ember_mp, method), RoundTrip(tmp, method)
    results = {}
    try:
        for mb in (1, 64):
            n = mb * 2**20 // 4
            a, b = et.ones(n), torch.ones(n)
            for _ in range(3):  # the first send moves the storage into shared memory
                ours.time(a)
                theirs.time(b)
            te, tt = [], []
            while len(te) < repeats:
                te += [ours.time(a) for _ in range(5)]
                tt += [theirs.time(b) for _ in range(5)]
            results[f"round trip {mb} MB"] = (float(np.median(te)), float(np.median(tt)))
    finally:
        ours.close()
        theirs.close()
    return results


def all_reduce_worker(lib, rank, setup, n, repeats, out) -> None:
    """Times `repeats` all_reduce calls of n ones in rank `rank` of a 2-process group
    (``setup``: Ember's ProcessGroup, or the init file of torch.distributed's gloo group)."""
    if lib == "ember":
        import ember_mp as dist
        import ember_tensor as backend

        dist.init_process_group(setup, rank)
    else:
        import torch as backend
        import torch.distributed as dist

        dist.init_process_group("gloo", init_method=f"file://{setup}", rank=rank, world_size=2)
    backend.set_num_threads(1)  # two processes on two cores
    t = backend.ones(n)
    times = []
    for _ in range(repeats + 2):
        dist.barrier()
        start = time.perf_counter()
        dist.all_reduce(t)
        times.append(time.perf_counter() - start)
    out.put((rank, float(np.median(times[2:])), t[0].item()))
    if lib == "torch":
        dist.destroy_process_group()


def all_reduces(method: str, repeats: int) -> dict[str, tuple[float, float]]:
    import ember_mp

    n = 16 * 2**20
    ctx = ember_mp.get_context(method)
    results = []
    for lib in ("ember", "torch"):
        out = ctx.Queue()
        setup = (ember_mp.ProcessGroup(2, ctx=ctx) if lib == "ember"
                 else os.path.join(tempfile.mkdtemp(), "init"))
        procs = [ctx.Process(target=all_reduce_worker, args=(lib, r, setup, n, repeats, out))
                 for r in range(2)]
        for p in procs:
            p.start()
        got = sorted(out.get() for _ in procs)
        for p in procs:
            p.join()
        want = 2.0 ** (repeats + 2)  # every call doubles the ones
        assert all(v == want for _, _, v in got), f"{lib}: wrong all_reduce result {got}"
        results.append(max(t for _, t, _ in got))
    return {"all_reduce 16M float32, 2 processes": (results[0], results[1])}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--start-method", default="spawn")
    args = parser.parse_args(argv)
    torch = import_torch()
    if torch is None:
        return 2
    print(f"torch {torch.__version__}; start method {args.start_method}")
    print(f"{'case':<40} {'ember':>10} {'torch':>10} {'ratio':>7}")
    results = round_trips(args.start_method, args.repeats)
    results.update(all_reduces(args.start_method, max(5, args.repeats // 5)))
    for name, (te, tt) in results.items():
        print(f"{name:<40} {te * 1e3:>8.3f}ms {tt * 1e3:>8.3f}ms {tt / te:>7.2f}")
    small, large = results["round trip 1 MB"][0], results["round trip 64 MB"][0]
    print(f"ember round trip 64 MB / 1 MB: {large / small:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
