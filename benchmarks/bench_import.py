"""``import ember`` against ``import torch``: wall time of a fresh interpreter that imports
the package, less that of one that imports nothing (so interpreter start-up cancels out),
and what ``import ember`` loads. ``import ember`` loads the core only; the second row also
loads every component (autograd, nn, optim, data, mp), which is what ``import torch`` does.

    python benchmarks/bench_import.py [--repeats N]

Runs alternate between the commands so that a noisy machine hurts each alike; the
table gives medians. ``ratio`` is torch / ember: above 1 means ``import ember`` is faster.
It also imports ember and each slot (``ember.nn``, ...) to time the lazy loads, and checks
that ``import ember`` loaded no component (only ``ember_tensor``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "nothing": "pass",
    "ember": "import ember",
    # what `import torch` gives at once: every component loaded
    "ember, every component": "import ember; ember.autograd, ember.nn, ember.optim, "
                              "ember.utils.data, ember.multiprocessing",
    "torch": "import torch",
}
COMPONENTS = ("ember_autograd", "ember_nn", "ember_optim", "ember_data", "ember_mp")
LAZY = """
import json, sys, time
t0 = time.perf_counter(); import ember; t1 = time.perf_counter()
loaded = sorted(m for m in {components!r} if m in sys.modules)
times = {{}}
for attr in ("autograd", "nn", "optim", "utils", "multiprocessing"):
    s = time.perf_counter(); getattr(ember, attr); times[attr] = time.perf_counter() - s
print(json.dumps({{"import": t1 - t0, "loaded": loaded, "slots": times}}))
"""


def wall(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    for code in COMMANDS.values():
        wall(code)  # warm the file cache
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeats):
        for name, code in COMMANDS.items():
            samples[name].append(wall(code))
    base = statistics.median(samples["nothing"])
    torch_s = statistics.median(samples["torch"]) - base
    print(f"interpreter start-up: {base * 1e3:.0f} ms (subtracted below)")
    print(f"{'case':<31}{'ember ms':>10}{'torch ms':>10}{'ratio':>8}")
    for name in ("ember", "ember, every component"):
        ember_s = statistics.median(samples[name]) - base
        print(f"{'import ' + name:<31}{ember_s * 1e3:>10.0f}{torch_s * 1e3:>10.0f}"
              f"{torch_s / ember_s:>8.2f}")
    lazy = json.loads(subprocess.run([sys.executable, "-c", LAZY.format(components=COMPONENTS)],
                                     check=True, capture_output=True, text=True).stdout)
    print(f"components loaded by import ember: {lazy['loaded'] or 'none'}")
    print("first access of each slot, ms: "
          + ", ".join(f"ember.{k} {v * 1e3:.0f}" for k, v in lazy["slots"].items()))


if __name__ == "__main__":
    main()
