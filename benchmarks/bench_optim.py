"""Ember's optimizers and PyTorch's (CPU) side by side, in one run: one ``step()`` of an
optimizer over a list of float32 parameters, on every path of each library.

    python benchmarks/bench_optim.py [--threads N] [--repeats N] [--filter SUBSTR]
                                     [--optimizers Adam,AdamW,SGD] [--json PATH]

Layouts (gradients set once, the same in both libraries):

- ``64 x 256K``: 64 tensors of 262144 elements, 16M parameters (the issue's case:
  memory-bound);
- ``9 x 1M + 1000 x 1K``: nine 1000 x 1000 tensors and a thousand of 1000 elements (a
  model with many small biases and norms);
- ``10000 x 1K``: ten thousand tensors of 1000 elements (per-call overhead dominates).

Runs: Ember's default (the fused kernel where it applies), ``foreach=True`` and
``foreach=False`` (per tensor); PyTorch's default (per tensor on the CPU),
``foreach=True`` and ``fused=True``. SGD runs with ``momentum=0.9``. The time is the
median over the repeats of one ``step()``; the repeats of the runs are taken in turn, so
that they see the same machine load. ``ratio`` is the fastest PyTorch path's time / Ember's
default time: above 1 means Ember is faster.

``GB/s`` counts the bytes a step must move at the least: Adam and AdamW read the parameter,
gradient and both moments and write the parameter and moments (7 x 4 bytes per element),
SGD with momentum reads parameter, gradient and buffer and writes parameter and buffer
(5 x 4 bytes). ``of bw`` compares that with the machine's memory bandwidth, measured in
the same run as the fastest of 20 in-place ``a += b`` over 64 MiB arrays (3 x 4 bytes per
element, no write-allocate traffic, as in the optimizer's in-place updates) by NumPy and
by Ember. After the timing, the parameters of all runs (which took the same number of
steps) are compared with PyTorch's ``foreach=True`` run (``MISMATCH`` otherwise, exit
status 1).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time

import numpy as np
from timing import import_torch

LAYOUTS = {
    "64 x 256K": [(262144,)] * 64,
    "9 x 1M + 1000 x 1K": [(1000, 1000)] * 9 + [(1000,)] * 1000,
    "10000 x 1K": [(1000,)] * 10000,
}
KWARGS = {"Adam": {"lr": 1e-3}, "AdamW": {"lr": 1e-3}, "SGD": {"lr": 1e-3, "momentum": 0.9}}
BYTES_PER_ELEMENT = {"Adam": 7 * 4, "AdamW": 7 * 4, "SGD": 5 * 4}
RUNS = {  # name -> (library, path arguments)
    "ember": ("ember", {}),
    "ember fe": ("ember", {"foreach": True}),
    "ember 1by1": ("ember", {"foreach": False}),
    "torch": ("torch", {}),
    "torch fe": ("torch", {"foreach": True}),
    "torch fused": ("torch", {"fused": True}),
}


def build(lib, module, name, arrays, grads, flags):
    params = [lib.from_numpy(a.copy()) for a in arrays]
    for p, g in zip(params, grads):
        if module.__name__ == "torch.optim":
            p.requires_grad_()
        p.grad = lib.from_numpy(g.copy())
    return params, getattr(module, name)(params, **flags, **KWARGS[name])


def memory_bandwidth(et, repeats: int) -> float:
    """GB/s of an in-place ``a += b`` over 16M float32 elements: the fastest call of NumPy
    (one thread) and Ember (all threads), a ceiling rather than a typical figure."""
    n = 16 * 2**20
    a, b = np.ones(n, np.float32), np.ones(n, np.float32)
    ea, eb = et.ones(n), et.ones(n)
    best = float("inf")
    for fn in (lambda: np.add(a, b, out=a), lambda: ea.add_(eb)):
        fn()
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        best = min(best, min(times))
    return 3 * 4 * n / best / 1e9


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--filter", default="")
    parser.add_argument("--optimizers", default="Adam,AdamW,SGD")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)

    import ember_optim
    import ember_tensor as et

    torch = import_torch()
    if torch is None:
        return 2
    if args.threads:
        et.set_num_threads(args.threads)
        torch.set_num_threads(args.threads)
    bandwidth = memory_bandwidth(et, max(args.repeats, 20))
    print(f"threads: ember {et.get_num_threads()}, torch {torch.get_num_threads()}; "
          f"median of {args.repeats} steps; times in ms; memory bandwidth (a += b) "
          f"{bandwidth:.1f} GB/s")
    names = list(RUNS)
    print(f"{'case':28s} " + " ".join(f"{n:>11s}" for n in names)
          + f" {'ratio':>6s} {'GB/s':>6s} {'of bw':>6s}  check")
    results, status = [], 0
    rng = np.random.default_rng(0)
    libs = {"ember": (et, ember_optim), "torch": (torch, torch.optim)}
    for opt_name in args.optimizers.split(","):
        for layout, shapes in LAYOUTS.items():
            case = f"{opt_name} {layout}"
            if args.filter.lower() not in case.lower():
                continue
            arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
            grads = [rng.standard_normal(s).astype(np.float32) * 0.1 for s in shapes]
            runs = {key: build(*libs[lib], opt_name, arrays, grads, flags)
                    for key, (lib, flags) in RUNS.items()}
            times = {k: [] for k in runs}
            for _, opt in runs.values():  # warm-up: state created, buffers flattened
                opt.step()
                opt.step()
            gc.disable()
            try:
                for _ in range(args.repeats):
                    for key, (_, opt) in runs.items():
                        time.sleep(0.01)
                        start = time.perf_counter()
                        opt.step()
                        times[key].append(time.perf_counter() - start)
            finally:
                gc.enable()
            med = {k: float(np.median(v)) * 1e3 for k, v in times.items()}
            ref = [np.asarray(p.detach().numpy()) for p in runs["torch fe"][0]]
            ok = all(np.allclose(np.asarray(p.detach().numpy()), r, rtol=1e-4, atol=1e-6)
                     for key in runs for p, r in zip(runs[key][0], ref))
            status |= 0 if ok else 1
            best_torch = min(med["torch"], med["torch fe"], med["torch fused"])
            ratio = best_torch / med["ember"]
            elements = sum(int(np.prod(s)) for s in shapes)
            gbs = BYTES_PER_ELEMENT[opt_name] * elements / (med["ember"] / 1e3) / 1e9
            print(f"{case:28s} " + " ".join(f"{med[n]:11.2f}" for n in names)
                  + f" {ratio:6.2f} {gbs:6.1f} {gbs / bandwidth:6.0%}  "
                  + ("ok" if ok else "MISMATCH"))
            results.append({"case": case, "median_ms": med, "ratio": ratio, "gb_per_s": gbs,
                            "fraction_of_bandwidth": gbs / bandwidth, "match": ok})
            del runs
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": et.get_num_threads(), "bandwidth_gb_per_s": bandwidth,
                       "results": results}, f, indent=1)
    return status


if __name__ == "__main__":
    sys.exit(main())
