"""The paper's Table 1: training throughput of six models, Ember against PyTorch on the
same device, in one process.

    python benchmarks/bench_table1.py [--device cpu|cuda] [--models alexnet,gnmt,...]
        [--batch N | --batch resnet50=32,ncf=4096] [--image-size N] [--steps N]
        [--repeats N] [--warmup N] [--dtype float32|bfloat16] [--threads N]
        [--json PATH] [--quick]

The models are those of ``benchmarks/models/`` (AlexNet, VGG-19, ResNet-50, MobileNetV2,
GNMT, NCF), built from one definition for both libraries; the PyTorch twin's initial
weights are copied into the Ember model, and both train on the same synthetic batch.

A training step is what a training loop runs per batch: ``zero_grad()``, forward, loss,
``backward()`` and ``SGD(lr=0.01, momentum=0.9).step()``, each library with its own
optimizer; under ``--dtype bfloat16`` forward and loss run inside the library's
``autocast(device_type, dtype=bfloat16)`` (weights, gradients and the update stay float32).
On CUDA each step ends with a device synchronisation, so the clock reads finished work.

Each library first takes ``--warmup`` untimed steps (alternating; at least one). Then the repeats
alternate: one repeat of Ember, one of PyTorch, and so on, so that both see the same machine
load. A repeat is a number of timed steps, the same for both libraries: at least
``--steps``, and enough for ``--min-time`` seconds at the slower library's last warm-up
step. It opens with untimed steps for ``timing.SETTLE`` seconds (at least one: the other
library's worker threads may still spin on the cores). Its throughput is
the units of one batch (images, source + target tokens, or samples) times the steps,
divided by their time. The table gives mean ± standard deviation over the repeats, and
``ember/torch``: the mean ± standard deviation of the ratio of the two libraries' paired
repeats (above 1: Ember is faster).

Before the timing, the loss of one forward pass in evaluation mode (no dropout, batch norm
on its running statistics, float32) is compared between the libraries: ``MISMATCH``
otherwise (exit status 1; 1 also when a model fails, 2 when PyTorch is missing). When
Ember's training step raises, PyTorch's column is still measured and the table says why
Ember's is missing (exit status 1).

The CPU defaults are small (images 64x64, small batches, a small GNMT and MovieLens-1M NCF)
so that a run finishes in minutes on two cores; the CUDA defaults are the usual ones of
the paper's setting (224x224 images, batch 128 or 64 for VGG-19, GNMT 4x1024 at batch 128
over 50 + 50 tokens, NCF at batch 65536 on MovieLens-20M's sizes).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import math
import os
import sys
import time
from contextlib import nullcontext

import numpy as np
from bench_core import machine_info, write_json
from models import MODEL_NAMES, copy_weights, module, to_lib
from timing import import_torch
from timing import settled_times as timed_block  # untimed settling calls, then timed calls

# least steps per repeat, repeats, warm-up steps, least seconds per repeat
RUN_DEFAULTS = {"cpu": (2, 5, 1, 1.0), "cuda": (20, 10, 10, 1.0)}
QUICK = (1, 2, 1, 0.0)
UNIT_LABELS = {"images": "img/s", "tokens": "tok/s", "samples": "smp/s"}


def parse_batch(text: str | None, names) -> dict[str, int]:
    """``--batch``: one size for every model, or ``name=N`` pairs."""
    if not text:
        return {}
    if "=" not in text:
        return dict.fromkeys(names, int(text))
    sizes = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        if name.strip() not in MODEL_NAMES:
            raise SystemExit(f"--batch: unknown model {name.strip()!r}")
        sizes[name.strip()] = int(value)
    return sizes


def model_config(name: str, device: str, args, batches: dict[str, int]) -> dict:
    mod = module(name)
    cfg = dict(mod.DEFAULTS[device])
    if name in batches:
        cfg["batch_size"] = batches[name]
    if "image_size" in cfg and args.image_size:
        cfg["image_size"] = args.image_size
    return cfg


def describe(mod, cfg: dict) -> str:
    """The input of one sample, for the table."""
    if mod.UNIT == "images":
        return f"3x{cfg['image_size']}x{cfg['image_size']}"
    if mod.UNIT == "tokens":
        return (
            f"{cfg['src_len']}+{cfg['tgt_len']} tok, h{cfg['hidden_size']}x"
            f"{cfg['num_layers']}, V{cfg['vocab_size']}"
        )
    return f"{cfg['num_users']} users, {cfg['num_items']} items"


class Side:
    """One library's model, optimizer, batch and training step."""

    def __init__(self, lib, mod, model, arrays, device: str, autocast, sync):
        self.lib, self.mod, self.model = lib, mod, model
        self.inputs, self.targets = to_lib(lib, arrays, device)
        self.opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        self.autocast, self.sync = autocast, sync

    def eval_loss(self) -> float:
        self.model.eval()
        try:
            with self.lib.no_grad():
                out = self.model(*self.inputs)
                return float(self.mod.loss(self.lib, out, self.targets).item())
        finally:
            self.model.train()

    def step(self) -> None:
        self.opt.zero_grad()
        with self.autocast():
            loss = self.mod.loss(self.lib, self.model(*self.inputs), self.targets)
        loss.backward()
        self.opt.step()
        self.sync()


def _stats(values) -> dict:
    values = [float(v) for v in values]
    std = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
    return {"mean": float(np.mean(values)), "std": std, "runs": values}


def run_model(name: str, cfg: dict, libs: dict, args, plan) -> dict:
    """Builds both twins of ``name``, checks them against each other and times them."""
    ember, torch = libs["ember"], libs["torch"]
    mod, device = module(name), args.device
    least_steps, repeats, warmup, least_time = plan
    sizes = {k: v for k, v in cfg.items() if k != "batch_size"}
    batch_size = cfg["batch_size"]
    with_ember = libs["ember_autocast"] is not None  # not: bfloat16 without ember.autocast
    torch.manual_seed(0)
    theirs = mod.build(torch, **sizes).to(device)
    arrays = mod.make_batch(np.random.default_rng(0), batch_size, **sizes)
    sides = {}
    if with_ember:
        ours = mod.build(ember, **sizes).to(device)
        copy_weights(theirs, ours, ember)
        sides["ember"] = Side(
            ember, mod, ours, arrays, device, libs["ember_autocast"], libs["ember_sync"]
        )
    sides["torch"] = Side(
        torch, mod, theirs, arrays, device, libs["torch_autocast"], libs["torch_sync"]
    )
    ember_loss = sides["ember"].eval_loss() if with_ember else None
    torch_loss = sides["torch"].eval_loss()
    ok = ember_loss is None or abs(ember_loss - torch_loss) <= 1e-3 * max(1.0, abs(torch_loss))
    failed = {}  # an Ember step that raises leaves PyTorch to run alone, for the table
    slowest = 0.0  # the slower library's step in the last warm-up round sets the steps
    for _ in range(max(warmup, 1)):
        slowest = 0.0
        for key, side in list(sides.items()):
            start = time.perf_counter()
            try:
                side.step()
            except Exception as exc:
                if key == "torch":
                    raise
                failed[key] = f"{type(exc).__name__}: {exc}"
                del sides[key]
                continue
            slowest = max(slowest, time.perf_counter() - start)
    steps = max(least_steps, math.ceil(least_time / slowest) if slowest else least_steps)
    units = mod.units(batch_size, **sizes)
    runs: dict[str, list[float]] = {k: [] for k in sides}
    for _ in range(repeats):
        for key, side in sides.items():
            runs[key].append(units * steps / sum(timed_block(side.step, steps)))
    result = {
        "model": mod.NAME,
        "key": name,
        "unit": mod.UNIT,
        "batch_size": batch_size,
        "input": describe(mod, cfg),
        "config": cfg,
        "steps": steps,
        "repeats": repeats,
        "warmup": warmup,
        "check": {"ember_loss": ember_loss, "torch_loss": torch_loss, "ok": ok},
    }
    if failed:
        result["ember_error"] = failed["ember"]
    for key, values in runs.items():
        result[key] = _stats(values)
    if "ember" in runs:
        result["ratio"] = _stats([a / b for a, b in zip(runs["ember"], runs["torch"])])
    return result


def _load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def _fmt(stats: dict | None) -> str:
    if not stats:
        return "n/a"
    return f"{stats['mean']:.4g} ± {stats['std']:.2g}"


def table(results: list[dict]) -> str:
    lines = [
        f"{'model':<12} {'batch':>6}  {'input':<30} {'unit':<6} {'ember':>18} "
        f"{'torch':>18} {'ember/torch':>13}"
    ]
    for r in results:
        if "error" in r:
            lines.append(f"{r['model']:<12} {r['batch_size']:>6}  FAILED: {r['error']}")
            continue
        ratio = r.get("ratio")
        ratio_text = f"{ratio['mean']:.2f} ± {ratio['std']:.2f}" if ratio else "n/a"
        mark = "" if r["check"]["ok"] else "  MISMATCH"
        if "ember_error" in r:
            mark += f"  (ember failed: {r['ember_error']})"
        lines.append(
            f"{r['model']:<12} {r['batch_size']:>6}  {r['input']:<30} "
            f"{UNIT_LABELS[r['unit']]:<6} {_fmt(r.get('ember')):>18} "
            f"{_fmt(r.get('torch')):>18} {ratio_text:>13}{mark}"
        )
    return "\n".join(lines)


def setup_libs(torch, args, notes: list[str]) -> dict:
    """The two libraries, with their autocast contexts and device synchronisation."""
    import ember

    if args.device == "cuda":
        if not torch.cuda.is_available():
            raise SystemExit("--device cuda: PyTorch sees no CUDA device")
        if not ember.cuda.is_available():
            raise SystemExit("--device cuda: Ember sees no CUDA device")
        ember_sync, torch_sync = ember.cuda.synchronize, torch.cuda.synchronize
    else:
        ember_sync = torch_sync = lambda: None  # noqa: E731
    libs = {
        "ember": ember,
        "torch": torch,
        "ember_sync": ember_sync,
        "torch_sync": torch_sync,
        "ember_autocast": nullcontext,
        "torch_autocast": nullcontext,
    }
    if args.dtype == "bfloat16":
        libs["torch_autocast"] = lambda: torch.autocast(args.device, dtype=torch.bfloat16)
        if hasattr(ember, "autocast"):
            libs["ember_autocast"] = lambda: ember.autocast(args.device, dtype=ember.bfloat16)
        else:
            libs["ember_autocast"] = None
            notes.append(
                "ember.autocast does not exist yet: Ember's bfloat16 column is "
                "skipped (PyTorch runs alone)"
            )
    return libs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument(
        "--models",
        default=",".join(MODEL_NAMES),
        help=f"comma-separated, of: {', '.join(MODEL_NAMES)}",
    )
    parser.add_argument("--batch", help="batch size of every model, or name=N,name=N")
    parser.add_argument("--image-size", type=int, help="CNN input size (CPU 64, CUDA 224)")
    parser.add_argument("--steps", type=int, help="least timed steps per repeat")
    parser.add_argument(
        "--min-time", type=float, help="least seconds per repeat, which sets the steps (default 1)"
    )
    parser.add_argument("--repeats", type=int, help="repeats per library")
    parser.add_argument("--warmup", type=int, help="untimed steps per library first")
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    parser.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count(),
        help="intra-op threads of both libraries (default: all cores)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 1 warm-up step, 2 repeats of 1 step each"
    )
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    for n in names:
        if n not in MODEL_NAMES:
            parser.error(f"unknown model {n!r}; the models are {', '.join(MODEL_NAMES)}")
    torch = import_torch()
    if torch is None:
        return 2
    notes: list[str] = []
    libs = setup_libs(torch, args, notes)
    ember = libs["ember"]
    ember.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    plan = list(QUICK if args.quick else RUN_DEFAULTS[args.device])
    for i, value in enumerate((args.steps, args.repeats, args.warmup, args.min_time)):
        if value is not None:
            plan[i] = value
    batches = parse_batch(args.batch, names)
    machine = machine_info()
    device_name = torch.cuda.get_device_name() if args.device == "cuda" else machine["cpu"]
    if args.device == "cpu":
        notes.append(
            "CPU run: small sizes (see the input column); CNN images "
            f"{args.image_size or 64}x{args.image_size or 64}, not the paper's "
            "224x224. GPU numbers need a GPU: --device cuda"
        )
    print(
        f"Table 1: training throughput, {args.device} ({device_name}), {args.dtype}; "
        f"threads: ember {ember.get_num_threads()}, torch {torch.get_num_threads()}; "
        f"torch {torch.__version__}, ember {ember.__version__}"
    )
    print(
        f"{plan[2]} warm-up steps, then {plan[1]} repeats per library, interleaved, each of "
        f"at least {plan[0]} steps and {plan[3]:g} s; load average {_load()}"
    )
    for note in notes:
        print(f"note: {note}")
    results, status = [], 0
    start_load = os.getloadavg()
    for i, name in enumerate(names, 1):
        cfg = model_config(name, args.device, args, batches)
        mod = module(name)
        print(
            f"[{i}/{len(names)}] {mod.NAME}: batch {cfg['batch_size']}, {describe(mod, cfg)} ...",
            end="",
            flush=True,
        )
        start = time.perf_counter()
        try:
            r = run_model(name, cfg, libs, args, plan)
        except Exception as exc:  # report the model and go on with the others
            r = {
                "model": mod.NAME,
                "key": name,
                "batch_size": cfg["batch_size"],
                "error": f"{type(exc).__name__}: {exc}",
            }
        gc.collect()
        results.append(r)
        if "error" in r:
            status = 1
            print(f" FAILED ({r['error']})", flush=True)
            continue
        status = status or (0 if r["check"]["ok"] and "ember_error" not in r else 1)
        ratio = f", ember/torch {r['ratio']['mean']:.2f}" if "ratio" in r else ""
        print(
            f" {time.perf_counter() - start:.0f} s: ember {_fmt(r.get('ember'))}, "
            f"torch {_fmt(r.get('torch'))} {UNIT_LABELS[r['unit']]}{ratio}"
            + ("" if r["check"]["ok"] else "  MISMATCH")
            + (f"  (ember failed: {r['ember_error']})" if "ember_error" in r else ""),
            flush=True,
        )
    print(f"load average {_load()}")
    print()
    print(table(results))
    if args.json:
        write_json(
            args.json,
            {
                "date": datetime.date.today().isoformat(),
                "machine": machine,
                "device": args.device,
                "device_name": device_name,
                "dtype": args.dtype,
                "threads": args.threads,
                "versions": {"torch": torch.__version__, "ember": ember.__version__},
                "plan": {
                    "least_steps": plan[0],
                    "repeats": plan[1],
                    "warmup": plan[2],
                    "least_seconds": plan[3],
                },
                "load_average": {"start": start_load, "end": os.getloadavg()},
                "notes": notes,
                "results": results,
            },
        )
    return status


if __name__ == "__main__":
    sys.exit(main())
