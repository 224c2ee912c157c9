"""Convolution algorithm study driver: runs the C++ microbenchmark (build/conv_bench*) and
PyTorch on the same shapes and data in one session, checks every algorithm's outputs against
PyTorch, and writes results/results.json plus the markdown tables for docs/conv-algorithms.md.

    DNNL_ROOT=... DNNL_GOMP_ROOT=... ./build.sh
    python run_study.py --dnnl-root $DNNL_ROOT [--rounds 3] [--target-s 0.25]

Each round runs every binary and then PyTorch once; a (shape, algorithm, pass) keeps the
lowest median over the rounds, which filters out rounds disturbed by other processes on a
2-core machine. Times are medians of repeats inside a round.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent

# name -> (N, C, H, W, O, k, stride, pad); the same list as kShapes in conv_bench.cpp
SHAPES = {
    "c64_k3_n16_32x32": (16, 64, 32, 32, 64, 3, 1, 1),
    "lenet1_c1to6_k5": (64, 1, 28, 28, 6, 5, 1, 0),
    "lenet2_c6to16_k5": (64, 6, 12, 12, 16, 5, 1, 0),
    "c16to32_k3_n32_32x32": (32, 16, 32, 32, 32, 3, 1, 1),
    "c32_k3_s2_n32_32x32": (32, 32, 32, 32, 32, 3, 2, 1),
    "c256to64_k1_n16_16x16": (16, 256, 16, 16, 64, 1, 1, 0),
}
PASSES = ("fwd", "bwd_data", "bwd_weight")


def out_hw(h, k, s, p):
    return (h + 2 * p - k) // s + 1


def flops(shape):
    n, c, h, w, o, k, s, p = shape
    return 2.0 * n * o * out_hw(h, k, s, p) * out_hw(w, k, s, p) * c * k * k


def run_bench(binary: Path, algos: str, target_s: float, dump: str | None, env=None, threads=2):
    cmd = [str(binary), "--algos", algos, "--threads", str(threads), "--target-s", str(target_s)]
    if dump:
        cmd += ["--dump", dump]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stderr[-2000:]}")
    return [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]


def time_torch(fn, target_s):
    fn()
    fn()
    t0 = time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    reps = min(400, max(7, int(target_s / max(one, 1e-6))))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    ts.sort()
    return {"ms": ts[len(ts) // 2], "ms_min": ts[0], "reps": reps}


def load(dump, name, what, shape):
    return torch.from_numpy(
        np.fromfile(os.path.join(dump, f"{name}.{what}.f32"), dtype=np.float32).reshape(shape)
    )


def tensors(dump, name):
    n, c, h, w, o, k, s, p = SHAPES[name]
    oh, ow = out_hw(h, k, s, p), out_hw(w, k, s, p)
    return (
        load(dump, name, "x", (n, c, h, w)),
        load(dump, name, "w", (o, c, k, k)),
        load(dump, name, "gy", (n, o, oh, ow)),
        (n, c, h, w),
        (o, c, k, k),
        (n, o, oh, ow),
    )


def torch_results(dump, target_s):
    """Timings, reference outputs (float32 and float64) and the aten kernel used, per shape."""
    rows, refs = [], {}
    for name, (*_, s, p) in SHAPES.items():
        x, w, gy, *_ = tensors(dump, name)

        def bwd(mask, x=x, w=w, gy=gy, s=s, p=p):
            return torch.ops.aten.convolution_backward(
                gy, x, w, None, [s, s], [p, p], [1, 1], False, [0, 0], 1, mask
            )

        with torch.no_grad():
            fns = {
                "fwd": lambda x=x, w=w, s=s, p=p: F.conv2d(x, w, None, s, p),
                "bwd_data": lambda bwd=bwd: bwd([True, False, False]),
                "bwd_weight": lambda bwd=bwd: bwd([False, True, False]),
            }
            for ps, fn in fns.items():
                rows.append(
                    {"shape": name, "algo": "torch", "pass": ps, **time_torch(fn, target_s)}
                )
            ref = {
                "fwd": F.conv2d(x, w, None, s, p),
                "bwd_data": bwd([True, False, False])[0],
                "bwd_weight": bwd([False, True, False])[1],
            }
            xd, wd, gyd = x.double(), w.double(), gy.double()
            ref64 = {
                "fwd": F.conv2d(xd, wd, None, s, p),
                "bwd_data": torch.ops.aten.convolution_backward(
                    gyd,
                    xd,
                    wd,
                    None,
                    [s, s],
                    [p, p],
                    [1, 1],
                    False,
                    [0, 0],
                    1,
                    [True, False, False],
                )[0],
                "bwd_weight": torch.ops.aten.convolution_backward(
                    gyd,
                    xd,
                    wd,
                    None,
                    [s, s],
                    [p, p],
                    [1, 1],
                    False,
                    [0, 0],
                    1,
                    [False, True, False],
                )[1],
            }
        with torch.autograd.profiler.profile() as prof:
            F.conv2d(x, w, None, s, p)
        kernels = sorted(
            {e.name for e in prof.function_events if "conv" in e.name and e.name != "aten::conv2d"}
        )
        refs[name] = (ref, ref64, kernels)
    return rows, refs


def check(dump, refs):
    """(max |algo - torch fp32|, max |algo - torch fp64|) per (shape, algo, pass)."""
    errs = {}
    for name, (ref, ref64, _) in refs.items():
        for ps in PASSES:
            errs[(name, "torch", ps)] = (0.0, float((ref[ps].double() - ref64[ps]).abs().max()))
            for f in Path(dump).glob(f"{name}.*.{ps}.f32"):
                algo = f.name[len(name) + 1 : -len(f".{ps}.f32")]
                got = torch.from_numpy(np.fromfile(f, dtype=np.float32)).reshape(ref[ps].shape)
                errs[(name, algo, ps)] = (
                    float((got - ref[ps]).abs().max()),
                    float((got.double() - ref64[ps]).abs().max()),
                )
    return errs


def cpu_busy(interval=0.5):
    """Fraction of all CPUs busy over `interval` seconds (from /proc/stat)."""

    def snap():
        with open("/proc/stat") as f:
            vals = [int(v) for v in f.readline().split()[1:]]
        return vals[3] + vals[4], sum(vals)  # idle + iowait, total

    i0, t0 = snap()
    time.sleep(interval)
    i1, t1 = snap()
    return 1.0 - (i1 - i0) / max(t1 - t0, 1)


def wait_quiet(max_wait_s, threshold=0.15):
    """Wait (up to max_wait_s) for idle CPUs; returns the busy fraction last seen."""
    t_end = time.time() + max_wait_s
    busy = cpu_busy()
    while busy > threshold and time.time() < t_end:
        busy = cpu_busy(1.0)
    return busy


def machine_info():
    info = {
        "platform": platform.platform(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "loadavg_start": os.getloadavg(),
    }
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        info["cpu"] = {
            k.strip(): v.strip()
            for k, v in (ln.split(":", 1) for ln in lscpu.splitlines() if ":" in ln)
            if k.strip()
            in ("Model name", "CPU(s)", "L1d cache", "L2 cache", "L3 cache", "CPU family", "Model")
        }
    except OSError:
        pass
    return info


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--dnnl-root",
        default=os.environ.get("DNNL_ROOT"),
        help="prefix of the onednn wheels (SYCL build)",
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--target-s", type=float, default=0.25, help="time per measurement and round")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--max-wait-s", type=float, default=120, help="wait this long at most for idle CPUs per run"
    )
    ap.add_argument("--out", default=str(HERE / "results" / "results.json"))
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    build = HERE / "build"
    runs = [("conv_bench", "im2col_ember,im2col_blas2t,direct,winograd", None)]
    if (build / "conv_bench_dnnl_gomp").exists():
        runs.append(("conv_bench_dnnl_gomp", "onednn", None))
    if (build / "conv_bench_dnnl").exists():
        env = dict(os.environ)
        if args.dnnl_root:  # the SYCL CPU device needs the OpenCL CPU runtime of intel-opencl-rt
            env["OCL_ICD_FILENAMES"] = str(Path(args.dnnl_root) / "lib" / "libintelocl.so")
        runs.append(("conv_bench_dnnl", "onednn", env))

    info = machine_info()
    wait_quiet(args.max_wait_s)
    peak = subprocess.run(
        [str(build / "conv_bench"), "--peak", "--threads", str(args.threads)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    info["peak"] = [json.loads(ln) for ln in peak.splitlines() if ln.startswith("{")]

    best: dict[tuple, dict] = {}
    extras = []
    with tempfile.TemporaryDirectory() as dump:
        refs = None
        for rnd in range(args.rounds):
            rows = []
            for binary, algos, env in runs:
                busy = wait_quiet(args.max_wait_s)
                print(f"  {binary}: CPUs {100 * busy:.0f}% busy before the run", flush=True)
                got = run_bench(
                    build / binary,
                    algos,
                    args.target_s,
                    dump if rnd == 0 else None,
                    env,
                    args.threads,
                )
                for r in got:
                    if "pass" not in r:
                        if rnd == 0:
                            extras.append({**r, "binary": binary})
                        continue
                    if binary != "conv_bench":  # tell the two oneDNN builds apart
                        r["algo"] = r["algo"].replace(
                            "onednn", "onednn_gomp" if "gomp" in binary else "onednn_sycl"
                        )
                    rows.append(r)
                if rnd == 0 and binary != "conv_bench":  # keep each oneDNN build's dumps apart
                    tag = "onednn_gomp" if "gomp" in binary else "onednn_sycl"
                    for f in Path(dump).glob("*.onednn.*.f32"):
                        f.rename(f.with_name(f.name.replace(".onednn.", f".{tag}.")))
            busy = wait_quiet(args.max_wait_s)
            print(f"  torch: CPUs {100 * busy:.0f}% busy before the run", flush=True)
            trows, trefs = torch_results(dump, args.target_s)
            refs = refs or trefs
            rows += trows
            for r in rows:
                key = (r["shape"], r["algo"], r["pass"])
                r["round"] = rnd
                if key not in best or r["ms"] < best[key]["ms"]:
                    best[key] = r
            print(f"round {rnd + 1}/{args.rounds} done, load {os.getloadavg()}", flush=True)
        errs = check(dump, refs)
    info["loadavg_end"] = os.getloadavg()
    out = []
    for key, r in sorted(best.items()):
        r = dict(r)
        r["gflops"] = flops(SHAPES[r["shape"]]) / (r["ms"] * 1e6)
        e = errs.get(key) or errs.get((r["shape"], r["algo"].replace("+reorder", ""), r["pass"]))
        r["max_abs_err_vs_torch"], r["max_abs_err_vs_fp64"] = e if e else (None, None)
        out.append(r)
    kernels = {name: refs[name][2] for name in SHAPES}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps(
            {"info": info, "torch_fwd_kernels": kernels, "extras": extras, "results": out}, indent=1
        )
    )
    print(f"wrote {args.out}")
    md = markdown(out, info)
    Path(args.out).with_suffix(".md").write_text(md + "\n")
    print(md)


def markdown(rows, info):
    # machine peak: the 2-thread register-only FMA loop (16-float FMAs, as many as issue)
    peak = max(p["gflops"] for p in info["peak"] if p["peak"] == "fma_loop")
    algos = [
        "im2col_ember",
        "im2col_blas2t",
        "direct",
        "winograd",
        "onednn_gomp",
        "onednn_gomp+reorder",
        "onednn_sycl",
        "onednn_sycl+reorder",
        "torch",
    ]
    by = {(r["shape"], r["algo"], r["pass"]): r for r in rows}
    lines = []
    for name, shape in SHAPES.items():
        n, c, h, w, o, k, s, p = shape
        lines.append(
            f"\n#### {name}: N={n} C={c} {h}x{w} -> O={o}, {k}x{k}, stride {s}, pad {p} "
            f"({flops(shape) / 1e6:.0f} MFLOP per pass)\n"
        )
        lines.append(
            "| algorithm | fwd ms | GFLOP/s | %peak | bwd-data ms | GFLOP/s | %peak "
            "| bwd-weight ms | GFLOP/s | %peak | max err vs torch / fp64 |"
        )
        lines.append(
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        )
        for a in algos:
            cells, errs, seen = [], [], False
            for ps in PASSES:
                r = by.get((name, a, ps))
                if r is None:
                    cells += ["–", "–", "–"]
                    continue
                seen = True
                cells += [
                    f"{r['ms']:.3f}",
                    f"{r['gflops']:.1f}",
                    f"{100 * r['gflops'] / peak:.0f}%",
                ]
                if r.get("max_abs_err_vs_torch") is not None:
                    errs.append((r["max_abs_err_vs_torch"], r["max_abs_err_vs_fp64"]))
            if seen:
                err = (
                    f"{max(e[0] for e in errs):.1e} / {max(e[1] for e in errs):.1e}"
                    if errs
                    else "–"
                )
                lines.append(f"| {a} | " + " | ".join(cells) + f" | {err} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
