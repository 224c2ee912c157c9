"""Ember's CUDA tensor core and PyTorch's, side by side on the same GPU, in one run.

    python benchmarks/bench_cuda.py [--repeats N] [--json PATH]

Cases (issue 10's targets in brackets):
- alloc/free: one cached 1 MiB allocation and free through each caching allocator
  (``empty`` then drop), per call [Ember under 1 us];
- elementwise add at 256 MB per operand, as bandwidth (3 x 256 MB moved per call)
  [at least 90% of PyTorch's];
- matmul 4096 x 4096 in float32, TF32 and bfloat16, as TFLOP/s [at least 0.95x];
- issue 25: complex64 matmul 4096 (8 n^3 flops) and elementwise complex multiply at 256 MB;
  the FFTs of issue 25's list (1-D complex64 and float32 of 2^10 to 2^22 points, batched to
  2^22 points a call, 1000 and 3^12 points; 2-D 512x512 and 2048x2048) through cuFFT, as
  microseconds per call [at least 1.0x].

Timing: CUDA events around `inner` calls on the current stream after a warm-up, median of
`repeats`. ratio = torch time / ember time (above 1: Ember is faster). Results are compared
once, so a fast wrong answer is reported as MISMATCH. Needs a GPU; PyTorch with CUDA is
optional (without it only Ember's column is printed).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np


def cuda_torch():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def time_ms(lib, fn, inner: int, repeats: int) -> float:
    """Median milliseconds per call, timed with the library's own CUDA events."""
    for _ in range(3):
        fn()
    lib.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        start, end = lib.cuda.Event(enable_timing=True), lib.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / inner)
    return statistics.median(samples)


def host_time_us(fn, inner: int, repeats: int) -> float:
    """Median host microseconds per call (for the allocator, whose cost is on the CPU)."""
    for _ in range(1000):
        fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t0) / inner * 1e6)
    return statistics.median(samples)


def complex_cases(et, torch, rng, repeats, report):
    """Issue 25: complex matmul and multiply, and the FFTs, against torch on the same data."""

    def pair(host):
        e = et.from_numpy(host).cuda()
        return e, (torch.from_numpy(host).cuda() if torch else None)

    def close(e, t, rtol):
        if t is None:
            return True
        g, w = e.cpu().numpy(), t.cpu().numpy()
        return bool(np.abs(g - w).max() <= rtol * max(np.abs(w).max(), 1e-30))

    m = 4096
    a = (rng.standard_normal((m, m)) + 1j * rng.standard_normal((m, m))).astype(np.complex64)
    (ea, ta), (eb, tb) = pair(a), pair(a.T.copy())
    e_ms = time_ms(et, lambda: et.matmul(ea, eb), 5, repeats)
    t_ms = time_ms(torch, lambda: torch.matmul(ta, tb), 5, repeats) if torch else None
    flops = lambda ms: 8 * m**3 / (ms * 1e-3) / 1e12  # noqa: E731
    ok = close(et.matmul(ea, eb), torch.matmul(ta, tb) if torch else None, 1e-3)
    report("matmul 4096 complex64", "TFLOP/s", flops(e_ms), flops(t_ms) if t_ms else None, True, ok)

    n = 256 * (1 << 20) // 8
    z = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    (ea, ta), (eb, tb) = pair(z), pair(z[::-1].copy())
    e_ms = time_ms(et, lambda: et.mul(ea, eb), 5, repeats)
    t_ms = time_ms(torch, lambda: torch.mul(ta, tb), 5, repeats) if torch else None
    gbs = lambda ms: 3 * n * 8 / (ms * 1e-3) / 1e9  # noqa: E731
    ok = close(et.mul(ea, eb), torch.mul(ta, tb) if torch else None, 1e-6)
    report("mul 256 MB complex64", "GB/s", gbs(e_ms), gbs(t_ms) if t_ms else None, True, ok)

    # (name, transform, shape): complex64 input for the complex transforms, float32 for rfft*
    cases = []
    sizes = [(f"2^{k}", (max(1, (1 << 22) >> k), 1 << k)) for k in (10, 14, 18, 22)]
    for label, shape in sizes + [("1000", (4096, 1000)), ("3^12", (8, 3**12))]:
        cases += [(f"fft c64 {label} x{shape[0]}", "fft", shape)]
        cases += [(f"rfft f32 {label} x{shape[0]}", "rfft", shape)]
    for side in (512, 2048):
        cases += [(f"fft2 c64 {side}x{side}", "fft2", (side, side))]
        cases += [(f"rfft2 f32 {side}x{side}", "rfft2", (side, side))]
    for name, transform, shape in cases:
        x = rng.standard_normal(shape).astype(np.float32)
        if not transform.startswith("r"):
            x = (x + 1j * rng.standard_normal(shape)).astype(np.complex64)
        ex, tx = pair(x)
        fe, ft = getattr(et.fft, transform), getattr(torch.fft, transform) if torch else None
        e_ms = time_ms(et, lambda f=fe, v=ex: f(v), 5, repeats)
        t_ms = time_ms(torch, lambda f=ft, v=tx: f(v), 5, repeats) if torch else None
        ok = close(fe(ex), ft(tx) if torch else None, 1e-4)
        report(name, "us/call", e_ms * 1e3, t_ms * 1e3 if t_ms else None, False, ok)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()

    import ember_tensor as et

    if not et.cuda.is_available():
        print("bench_cuda: no CUDA device; nothing to measure", file=sys.stderr)
        return 2
    torch = cuda_torch()
    rows = []

    def report(name, unit, ember_value, torch_value, higher_is_better, ok=True):
        ratio = None
        if torch_value is not None:
            ratio = ember_value / torch_value if higher_is_better else torch_value / ember_value
        rows.append(
            {
                "case": name,
                "unit": unit,
                "ember": ember_value,
                "torch": torch_value,
                "ratio": ratio,
                "ok": ok,
            }
        )
        t = f"{torch_value:10.3f}" if torch_value is not None else "         -"
        r = f"{ratio:6.2f}" if ratio is not None else "     -"
        print(
            f"{name:34s} {ember_value:10.3f} {t} {r}  {unit}{'' if ok else '  MISMATCH'}",
            flush=True,
        )

    gpu = et.cuda.get_device_name()
    print(f"{'case':34s} {'ember':>10s} {'torch':>10s} {'ratio':>6s}  unit  (GPU: {gpu})")

    # the caching allocators: a cached 1 MiB block taken and given back
    e_us = host_time_us(lambda: et.empty((1 << 18,), device="cuda"), 2000, args.repeats)
    t_us = (
        host_time_us(lambda: torch.empty((1 << 18,), device="cuda"), 2000, args.repeats)
        if torch
        else None
    )
    report("alloc+free 1 MiB (cached)", "us/call", e_us, t_us, higher_is_better=False)

    # elementwise bandwidth at 256 MB per operand
    n = 256 * (1 << 20) // 4
    rng = np.random.default_rng(0)
    host = rng.standard_normal(n, dtype=np.float32)
    ea, eb = et.from_numpy(host).cuda(), et.from_numpy(host[::-1].copy()).cuda()
    eo = et.empty((n,), device="cuda")
    e_ms = time_ms(et, lambda: et.add(ea, eb, out=eo), 5, args.repeats)
    t_ms = ok = None
    if torch:
        ta, tb = torch.from_numpy(host).cuda(), torch.from_numpy(host[::-1].copy()).cuda()
        to = torch.empty(n, device="cuda")
        t_ms = time_ms(torch, lambda: torch.add(ta, tb, out=to), 5, args.repeats)
        ok = np.array_equal(eo.cpu().numpy(), to.cpu().numpy())
    gbs = lambda ms: 3 * n * 4 / (ms * 1e-3) / 1e9  # noqa: E731
    report(
        "add 256 MB float32", "GB/s", gbs(e_ms), gbs(t_ms) if t_ms else None, True, ok is not False
    )
    del ea, eb

    # matmul 4096 in float32, TF32 and bfloat16
    m = 4096
    a_host = rng.standard_normal((m, m), dtype=np.float32)
    b_host = rng.standard_normal((m, m), dtype=np.float32)
    tflops = lambda ms: 2 * m**3 / (ms * 1e-3) / 1e12  # noqa: E731
    for label, dtype_name, tf32 in [
        ("float32", "float32", False),
        ("TF32", "float32", True),
        ("bfloat16", "bfloat16", False),
    ]:
        et.backends.cuda.matmul.allow_tf32 = tf32
        edt = getattr(et, dtype_name)
        ea, eb = et.from_numpy(a_host).to("cuda", edt), et.from_numpy(b_host).to("cuda", edt)
        e_ms = time_ms(et, lambda a=ea, b=eb: et.matmul(a, b), 10, args.repeats)
        t_ms, ok = None, True
        if torch:
            torch.backends.cuda.matmul.allow_tf32 = tf32
            tdt = getattr(torch, dtype_name)
            ta, tb = (
                torch.from_numpy(a_host).to("cuda", tdt),
                torch.from_numpy(b_host).to("cuda", tdt),
            )
            t_ms = time_ms(torch, lambda a=ta, b=tb: torch.matmul(a, b), 10, args.repeats)
            got = et.matmul(ea, eb).to(et.float32).cpu().numpy()
            want = torch.matmul(ta, tb).float().cpu().numpy()
            ok = bool(np.allclose(got, want, rtol=5e-2, atol=5e-1))
        report(
            f"matmul 4096 {label}",
            "TFLOP/s",
            tflops(e_ms),
            tflops(t_ms) if t_ms else None,
            True,
            ok,
        )
    et.backends.cuda.matmul.allow_tf32 = False

    complex_cases(et, torch, rng, args.repeats, report)

    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
