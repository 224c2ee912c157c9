"""Checkpoint save/load: ``ember.save``/``ember.load`` and ``torch.save``/``torch.load`` side by
side, in one run, on the same state_dict.

    python benchmarks/bench_serialization.py [--mb 100] [--repeats 7] [--dir DIR] [--json PATH]

The state_dict is a transformer-like set of float32 weights (NumPy, fixed seed) of about
``--mb`` megabytes: per block a 4d x d attention matrix, two d x 4d MLP matrices and their
biases, plus an int64 step counter, handed to both libraries with
``from_numpy``. Each repeat saves to a file in ``--dir`` (default: a temporary directory on
the disk the system puts temporary files on) and loads it back; the libraries take turns,
and the times reported are medians. The files stay in the page cache, so ``load`` measures
parsing, allocation and copying, not the disk.

Rows:

- ``save``: ember writes a temporary file, fsyncs it and renames it over the target (the
  atomic save the design asks for); ``torch.save`` writes in place and does not fsync, so
  ``save (no fsync)`` is ember without its fsync, for a like-for-like figure.
- ``load``: ``ember.load`` (one read per tensor straight into its memory) against
  ``torch.load(weights_only=True)``, and ``torch.load(mmap=True)`` (pages read lazily: the
  time does not include touching the data) for reference.
- ``safetensors.torch`` save_file/load_file when the ``safetensors`` package is installed.

``ratio`` is torch time / ember time: above 1 means Ember is faster. Values are compared
after each load (exit status 1 on a mismatch).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np


def make_state(mb: float, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    d = 512
    per_block = (4 * d * d + 2 * 4 * d * d + 4 * d + 4 * d + d) * 4
    blocks = max(1, round(mb * 1e6 / per_block))
    state: dict[str, np.ndarray] = {}
    for i in range(blocks):
        p = f"blocks.{i}."
        state[p + "attn.weight"] = rng.standard_normal((4 * d, d), dtype=np.float32)
        state[p + "attn.bias"] = rng.standard_normal(4 * d, dtype=np.float32)
        state[p + "mlp.fc1.weight"] = rng.standard_normal((4 * d, d), dtype=np.float32)
        state[p + "mlp.fc1.bias"] = rng.standard_normal(4 * d, dtype=np.float32)
        state[p + "mlp.fc2.weight"] = rng.standard_normal((d, 4 * d), dtype=np.float32)
        state[p + "mlp.fc2.bias"] = rng.standard_normal(d, dtype=np.float32)
    state["step"] = np.array(1000, dtype=np.int64)
    return state


def timed(fn):
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        out = fn()
        return time.perf_counter() - t0, out
    finally:
        gc.enable()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=100.0)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)

    import ember_tensor as et
    from ember_tensor import serialization

    try:
        import torch
    except ImportError:
        torch = None
    try:
        import safetensors.torch as st_torch
    except ImportError:
        st_torch = None

    arrays = make_state(args.mb)
    nbytes = sum(a.nbytes for a in arrays.values())
    ember_sd = {k: et.from_numpy(a) for k, a in arrays.items()}
    torch_sd = {k: torch.from_numpy(a) for k, a in arrays.items()} if torch else None

    directory = args.dir or tempfile.mkdtemp(prefix="ember-bench-ser-")
    e_path = os.path.join(directory, "ember.safetensors")
    t_path = os.path.join(directory, "torch.pt")
    s_path = os.path.join(directory, "st.safetensors")

    def check(loaded, to_np):
        for k, a in arrays.items():
            if not np.array_equal(to_np(loaded[k]), a):
                raise AssertionError(f"mismatch in {k}")

    real_fsync = os.fsync

    def ember_save_nofsync():
        serialization.os.fsync = lambda fd: None
        try:
            et.save(ember_sd, e_path)
        finally:
            serialization.os.fsync = real_fsync

    cases = {  # row -> {library: callable}
        "save": {"ember": lambda: et.save(ember_sd, e_path)},
        "save (no fsync)": {"ember": ember_save_nofsync},
        "load": {"ember": lambda: et.load(e_path)},
    }
    if torch:
        cases["save"]["torch"] = lambda: torch.save(torch_sd, t_path)
        cases["save (no fsync)"]["torch"] = lambda: torch.save(torch_sd, t_path)
        cases["load"]["torch"] = lambda: torch.load(t_path, weights_only=True)
        cases["load (torch mmap)"] = {"torch": lambda: torch.load(t_path, weights_only=True,
                                                                   mmap=True)}
    if st_torch:
        cases["safetensors.torch save_file"] = {
            "safetensors": lambda: st_torch.save_file(torch_sd, s_path)}
        cases["safetensors.torch load_file"] = {
            "safetensors": lambda: st_torch.load_file(s_path)}

    times: dict[str, dict[str, list[float]]] = {row: {lib: [] for lib in libs}
                                                for row, libs in cases.items()}
    ok = True
    for rep in range(args.repeats + 1):  # the first round warms up, untimed
        for row, libs in cases.items():
            for lib, fn in libs.items():
                dt, out = timed(fn)
                del out
                if rep:
                    times[row][lib].append(dt)
    try:  # correctness, once
        check(et.load(e_path), lambda t: t.numpy())
        if torch:
            check(torch.load(t_path, weights_only=True), lambda t: t.numpy())
    except AssertionError as exc:
        print("MISMATCH:", exc)
        ok = False

    print(f"state_dict: {len(arrays)} tensors, {nbytes / 1e6:.1f} MB; files in {directory}; "
          f"{args.repeats} repeats, medians")
    print(f"ember-tensor-core {et.__version__}, torch {torch.__version__ if torch else 'n/a'}, "
          f"Python {sys.version.split()[0]}")
    print(f"{'case':32} {'ember':>10} {'other':>10} {'ratio':>7}   other = torch / safetensors")
    results = []
    for row, libs in times.items():
        med = {lib: statistics.median(v) for lib, v in libs.items()}
        e = med.get("ember")
        o = med.get("torch", med.get("safetensors"))
        ratio = o / e if e and o else None
        fmt = lambda s: f"{s * 1e3:8.1f}ms" if s is not None else f"{'-':>10}"  # noqa: E731
        print(f"{row:32} {fmt(e)} {fmt(o)} {f'{ratio:6.2f}x' if ratio else '':>7}"
              + (f"   ({nbytes / e / 1e9:.2f} GB/s)" if e else ""))
        results.append({"case": row, "median_s": med, "ratio": ratio})
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"bytes": nbytes, "tensors": len(arrays), "results": results}, fh,
                      indent=1)
    if not args.dir:
        for p in (e_path, t_path, s_path):
            if os.path.exists(p):
                os.unlink(p)
        os.rmdir(directory)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
