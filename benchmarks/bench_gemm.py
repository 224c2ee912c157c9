"""Matrix products of each BLAS Ember can use (MKL, OpenBLAS) against PyTorch, same run.

Ember picks its product library once at load time (``EMBER_BLAS=mkl|openblas`` overrides
the default: MKL on Intel CPUs, OpenBLAS elsewhere), so each library runs in a child
process of its own, which times Ember and PyTorch in alternation: ``--rounds`` rounds of
about 10 ms per library and case, each after untimed calls that let the other library's
threads settle (``timing.settled_times``). Prints the median round's GFLOP/s and the ratio
Ember / PyTorch per case, with the CPU model.

    python benchmarks/bench_gemm.py [--threads 1 2] [--rounds 30] [--libraries mkl openblas]
                                    [--dtype float32|bfloat16]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
from timing import cpu_model, settled_times

# (batch, M, N, K): the square sizes, batched small, skinny both ways, a transformer
# MLP's product, batched attention-sized products
CASES = [
    (1, 256, 256, 256),
    (1, 1024, 1024, 1024),
    (1, 2048, 2048, 2048),
    (64, 64, 64, 64),
    (1, 4096, 64, 4096),
    (1, 64, 4096, 4096),
    (16, 128, 128, 128),
    (1, 512, 3072, 768),
    (64, 256, 64, 256),
]


def child(threads: int, rounds: int, dtype: str) -> None:
    import torch

    import ember_tensor as et

    et.set_num_threads(threads)
    torch.set_num_threads(threads)
    rng = np.random.default_rng(0)
    info = et._C._build_info()
    out = {"gemm": info["gemm"], "bf16_gemm": info["bf16_gemm"], "cases": {}}
    for b, m, n, k in CASES:
        a = rng.standard_normal((b, m, k), dtype=np.float32)
        bb = rng.standard_normal((b, k, n), dtype=np.float32)
        if b == 1:
            a, bb = a[0], bb[0]
        ea, eb = et.from_numpy(a).to(getattr(et, dtype)), et.from_numpy(bb).to(getattr(et, dtype))
        ta, tb = (torch.from_numpy(x).to(getattr(torch, dtype)) for x in (a, bb))
        calls = {
            "ember": lambda ea=ea, eb=eb: et.matmul(ea, eb),
            "torch": lambda ta=ta, tb=tb: torch.matmul(ta, tb),
        }
        got = calls["ember"]().to(et.float32).numpy()
        diff = float(np.abs(got - calls["torch"]().float().numpy()).max())
        start = time.perf_counter()
        calls["ember"]()
        reps = max(1, int(0.01 / max(time.perf_counter() - start, 1e-9)))
        rounds_s = {"ember": [], "torch": []}
        for _ in range(rounds):
            for name, fn in calls.items():
                rounds_s[name].append(sum(settled_times(fn, reps)) / reps)
        median = {name: float(np.median(ts)) for name, ts in rounds_s.items()}
        flop = 2.0 * b * m * n * k
        out["cases"][f"{b}x{m}x{n}x{k}"] = {
            "ember": flop / median["ember"] / 1e9,
            "torch": flop / median["torch"] / 1e9,
            "max_diff": diff,
        }
    print(json.dumps(out))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--libraries", nargs="+", default=["mkl", "openblas"])
    p.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child is not None:
        child(args.child, args.rounds, args.dtype)
        return 0
    import ember_tensor as et

    print(
        f"CPU: {cpu_model()}; {os.cpu_count()} cores; {args.dtype}; "
        f"GFLOP/s (median round of {args.rounds}); "
        "ratio = Ember / PyTorch timed in the same process\n"
        f"BLAS: {et._C._build_info()['blas']}"  # the OpenBLAS kernels picked for this CPU
    )
    for threads in args.threads:
        results = {}
        for lib in args.libraries:
            done = subprocess.run(
                [sys.executable, __file__, "--child", str(threads), "--rounds", str(args.rounds)]
                + ["--dtype", args.dtype],
                env={**os.environ, "EMBER_BLAS": lib},
                capture_output=True,
                text=True,
                check=True,
            )
            results[lib] = json.loads(done.stdout.strip().splitlines()[-1])
        # bfloat16: what multiplied the operands as they are ("MKL" on AMX, "oneDNN"), if anything
        bf16 = args.dtype == "bfloat16"
        names = [
            f"Ember {r['gemm']}"
            + ("" if not bf16 or r["bf16_gemm"] == r["gemm"]
               else f"+{r['bf16_gemm']}" if r["bf16_gemm"] else " (widened)")
            for r in results.values()
        ]
        print(f"\nthreads: {threads}\n")
        print(
            "| case (batch x M x N x K) | "
            + " | ".join(names)
            + " | PyTorch | "
            + " | ".join(f"ratio {n.split()[1]}" for n in names)
            + " |"
        )
        print("| --- |" + " ---: |" * (2 * len(names) + 1))
        for case in CASES:
            key = "x".join(map(str, case))
            rows = [results[lib]["cases"][key] for lib in args.libraries]
            torch_median = float(np.median([r["torch"] for r in rows]))  # timed in every child
            print(
                f"| {key} | "
                + " | ".join(f"{r['ember']:.0f}" for r in rows)
                + f" | {torch_median:.0f} | "
                + " | ".join(f"{r['ember'] / r['torch']:.2f}" for r in rows)
                + " |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
