"""Which CPU FFT library should Ember's ``ember.fft`` call? Times the candidates on the
issue's sizes, each against PyTorch's ``torch.fft`` (MKL in its x86 CPU wheels) in the same
run: NumPy's ``numpy.fft`` (pocketfft's C++ version, one thread), SciPy's ``scipy.fft``
(the same pocketfft, with ``workers=`` threads over the batch) and, when importable, Intel's
``mkl_fft`` (MKL's DFTI, the library PyTorch calls).

    python benchmarks/fft_libraries.py [--repeats N] [--json PATH]

Prints one row per case: the median time of each library and its speed relative to PyTorch
(>1: faster than PyTorch). The decision it informs is written in docs/fft.md.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from timing import cpu_model, median_seconds  # the CPU beside every table

# (name, shape, kind): kind c2c (complex64 fft over the last dim, or fft2 for 2-D shapes),
# r2c (float32 rfft / rfft2); batched 1-D shapes transform their last dim
CASES = [
    ("1024", (1 << 10,), "c2c"),
    ("2^14", (1 << 14,), "c2c"),
    ("2^18", (1 << 18,), "c2c"),
    ("2^20", (1 << 20,), "c2c"),
    ("2^22", (1 << 22,), "c2c"),
    ("1000", (1000,), "c2c"),
    ("3^12", (3 ** 12,), "c2c"),
    ("64x4096", (64, 4096), "c2c1"),
    ("512x512", (512, 512), "c2c"),
    ("2048x2048", (2048, 2048), "c2c"),
    ("2^20 real", (1 << 20,), "r2c"),
    ("3^12 real", (3 ** 12,), "r2c"),
    ("2048x2048 real", (2048, 2048), "r2c"),
]


def _libraries(threads: int):
    import scipy.fft as sfft
    import torch

    libs = {}

    def torch_fn(kind, two_d):
        if kind == "r2c":
            return (lambda a: torch.fft.rfft2(a)) if two_d else (lambda a: torch.fft.rfft(a))
        return (lambda a: torch.fft.fft2(a)) if two_d else (lambda a: torch.fft.fft(a))

    libs["torch"] = (torch_fn, torch.from_numpy)

    def numpy_fn(kind, two_d):
        if kind == "r2c":
            return np.fft.rfft2 if two_d else np.fft.rfft
        return np.fft.fft2 if two_d else np.fft.fft

    libs["numpy"] = (numpy_fn, lambda a: a)

    for w in sorted({1, threads}):
        def scipy_fn(kind, two_d, w=w):
            if kind == "r2c":
                f = sfft.rfft2 if two_d else sfft.rfft
            else:
                f = sfft.fft2 if two_d else sfft.fft
            return lambda a: f(a, workers=w)

        libs[f"scipy w={w}"] = (scipy_fn, lambda a: a)
    try:
        import mkl_fft

        def mkl_fn(kind, two_d):
            if kind == "r2c":
                return mkl_fft.rfft2 if two_d else mkl_fft.rfft
            return mkl_fft.fft2 if two_d else mkl_fft.fft

        libs["mkl_fft"] = (mkl_fn, lambda a: a)
    except ImportError:
        pass
    return libs


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    import torch

    threads = torch.get_num_threads()
    libs = _libraries(threads)
    rng = np.random.default_rng(0)
    print(f"CPU: {cpu_model()}, {threads} threads; torch {torch.__version__} "
          f"(MKL: {torch.backends.mkl.is_available()}), numpy {np.__version__}")
    names = list(libs)
    print(f"{'case':<16}" + "".join(f"{n:>16}" for n in names))
    rows = []
    for label, shape, kind in CASES:
        two_d = len(shape) == 2 and kind != "c2c1"
        if kind == "r2c":
            a = rng.standard_normal(shape).astype(np.float32)
        else:
            a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
        times = {}
        ref = None
        for n, (make, wrap) in libs.items():
            fn, x = make("r2c" if kind == "r2c" else "c2c", two_d), wrap(a)
            out = np.asarray(fn(x))
            if ref is None:
                ref = out
            else:  # every library computes the same transform
                np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-3 * np.abs(ref).max())
            times[n] = median_seconds(lambda fn=fn, x=x: fn(x), args.repeats)
        t0 = times["torch"]
        cells = "".join(
            f"{times[n] * 1e3:9.3f}ms" + (f" {t0 / times[n]:4.2f}x" if n != "torch" else "      ")
            for n in names
        )
        print(f"{label:<16}{cells}")
        rows.append({"case": label, "shape": shape, "kind": kind, "seconds": times})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_model(), "threads": threads, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
