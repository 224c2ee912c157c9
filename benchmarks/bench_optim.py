"""Ember's optimizers and PyTorch's (CPU) side by side, in one run: one ``step()`` of an
optimizer over a list of parameters holding 10M float32 elements in all.

    python benchmarks/bench_optim.py [--threads N] [--repeats N] [--filter SUBSTR]
                                     [--optimizers Adam,SGD] [--json PATH]

Layouts of the 10M elements (gradients set once, the same in both libraries):

- ``10 x 1M``: ten 1000 x 1000 tensors (large layers: memory-bound);
- ``9 x 1M + 1000 x 1K``: nine 1000 x 1000 tensors and a thousand of 1000 elements (a
  model with many small biases and norms);
- ``10000 x 1K``: ten thousand tensors of 1000 elements (per-call overhead dominates).

Each layout is timed for Ember's per-tensor path (``foreach=False``, the default) and
multi-tensor path (``foreach=True``), and PyTorch's two paths (PyTorch's default on CPU is
per-tensor too). The time is the median over the repeats of one ``step()``; the repeats
of the four runs are taken in turn so that they see the same machine load. ``ratio`` is
PyTorch ``foreach=True`` time / Ember time: above 1 means Ember is faster. After the
timing, the parameters of the four runs (which took the same number of steps) are
compared (``MISMATCH`` otherwise, exit status 1).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time

import numpy as np

LAYOUTS = {
    "10 x 1M": [(1000, 1000)] * 10,
    "9 x 1M + 1000 x 1K": [(1000, 1000)] * 9 + [(1000,)] * 1000,
    "10000 x 1K": [(1000,)] * 10000,
}
KWARGS = {"Adam": {"lr": 1e-3}, "AdamW": {"lr": 1e-3}, "SGD": {"lr": 1e-3, "momentum": 0.9}}


def build(lib, module, name, arrays, grads, foreach):
    params = [lib.from_numpy(a.copy()) for a in arrays]
    for p, g in zip(params, grads):
        if module.__name__ == "torch.optim":
            p.requires_grad_()
        p.grad = lib.from_numpy(g.copy())
    return params, getattr(module, name)(params, foreach=foreach, **KWARGS[name])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--filter", default="")
    parser.add_argument("--optimizers", default="Adam")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)

    import ember_optim
    import ember_tensor as et

    try:
        import torch
    except ImportError:
        print("torch is not installed: nothing to compare with")
        return 2
    if args.threads:
        et.set_num_threads(args.threads)
        torch.set_num_threads(args.threads)
    print(f"threads: ember {et.get_num_threads()}, torch {torch.get_num_threads()}; "
          f"median of {args.repeats} steps; times in ms")
    print(f"{'case':44s} {'ember':>8s} {'ember fe':>9s} {'torch':>8s} {'torch fe':>9s} "
          f"{'ratio':>6s} {'ratio fe':>8s}  check")
    results, status = [], 0
    rng = np.random.default_rng(0)
    for opt_name in args.optimizers.split(","):
        for layout, shapes in LAYOUTS.items():
            case = f"{opt_name} {layout}"
            if args.filter.lower() not in case.lower():
                continue
            arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
            grads = [rng.standard_normal(s).astype(np.float32) * 0.1 for s in shapes]
            runs = {
                "ember": build(et, ember_optim, opt_name, arrays, grads, False),
                "ember fe": build(et, ember_optim, opt_name, arrays, grads, True),
                "torch": build(torch, torch.optim, opt_name, arrays, grads, False),
                "torch fe": build(torch, torch.optim, opt_name, arrays, grads, True),
            }
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
            ok = True
            for key in ("ember", "ember fe", "torch"):
                for p, r in zip(runs[key][0], ref):
                    if not np.allclose(np.asarray(p.detach().numpy()), r, rtol=1e-4,
                                       atol=1e-6):
                        ok = False
            status |= 0 if ok else 1
            ratio = med["torch fe"] / med["ember"]
            ratio_fe = med["torch fe"] / med["ember fe"]
            print(f"{case:44s} {med['ember']:8.1f} {med['ember fe']:9.1f} {med['torch']:8.1f} "
                  f"{med['torch fe']:9.1f} {ratio:6.2f} {ratio_fe:8.2f}  "
                  f"{'ok' if ok else 'MISMATCH'}")
            results.append({"case": case, "median_ms": med, "ratio": ratio,
                            "ratio_foreach": ratio_fe, "match": ok})
            del runs
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": et.get_num_threads(), "results": results}, f, indent=1)
    return status


if __name__ == "__main__":
    sys.exit(main())
