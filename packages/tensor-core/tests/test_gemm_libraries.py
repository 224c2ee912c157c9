"""Both matrix-product libraries give right answers on every shape class.

The float and complex products go through MKL (Intel CPUs, when the build linked it) or
OpenBLAS (elsewhere), chosen once at load time; ``EMBER_BLAS=mkl|openblas`` overrides the
choice. A process runs only one of them, so each runs here in a child process: the shape
classes (square, ragged, tiled by rows and by columns, wide tiles, skinny, transposed
operands, batched small products, float64, complex64) at 1 and 2 threads against NumPy
float64 references, and a product in a child forked after products in its parent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

CHILD = r"""
import json, os, sys
import numpy as np
import ember_tensor as et

rng = np.random.default_rng(3)
# (batch, M, N, K): square, ragged, row tiles of a large B (wide tiles), column tiles of a
# large A, skinny both ways (few rows with a K cut into slices, the last one short), batched
# small, a small C over a long K (K cut among the threads, an uneven last slice)
SHAPES = [(1, 256, 256, 256), (1, 301, 517, 263), (1, 1100, 530, 520), (1, 300, 1500, 900),
          (1, 2048, 64, 700), (1, 48, 2100, 640), (2, 100, 700, 1000), (40, 24, 36, 52),
          (3, 200, 130, 170), (1, 40, 24, 3001), (1, 64, 64, 10000)]
errors = {}
for threads in (1, 2):
    et.set_num_threads(threads)
    for b, m, n, k in SHAPES:
        for dtype, tol in ((np.float32, 2e-5), (np.float64, 1e-12)):
            a = rng.standard_normal((b, m, k)).astype(dtype)
            bb = rng.standard_normal((b, k, n)).astype(dtype)
            ref = np.matmul(a.astype(np.float64), bb.astype(np.float64))
            scale = np.abs(ref).max() + 1e-30
            key = f"t{threads} {b}x{m}x{n}x{k} {np.dtype(dtype).name}"
            got = et.matmul(et.from_numpy(a), et.from_numpy(bb)).numpy()
            errors[key] = (float(np.abs(got - ref).max() / scale), tol)
            # transposed operands: views of the transposes, no copy
            at = np.ascontiguousarray(a.transpose(0, 2, 1))
            bt = np.ascontiguousarray(bb.transpose(0, 2, 1))
            at_view, bt_view = et.from_numpy(at).transpose(1, 2), et.from_numpy(bt).transpose(1, 2)
            got = et.matmul(at_view, bt_view).numpy()
            errors[key + " transposed"] = (float(np.abs(got - ref).max() / scale), tol)
    # beta C + alpha A B with K in slices (skinny; cut among the threads): beta scales C
    # once, not once per slice
    for m, n, k in ((64, 900, 1000), (48, 40, 5000)):
        a = rng.standard_normal((m, k)).astype(np.float32)
        bb = rng.standard_normal((k, n)).astype(np.float32)
        c = rng.standard_normal((m, n)).astype(np.float32)
        ref = 0.5 * c.astype(np.float64) + 2.0 * (a.astype(np.float64) @ bb.astype(np.float64))
        got = et.addmm(et.from_numpy(c), et.from_numpy(a), et.from_numpy(bb), beta=0.5, alpha=2.0)
        got = got.numpy()
        err = float(np.abs(got - ref).max() / np.abs(ref).max())
        errors[f"t{threads} addmm {m}x{n}x{k}"] = (err, 2e-5)
    # bfloat16: the library's own bfloat16 products (MKL on AMX) or float32 ones on widened
    # copies; float32 accumulation either way, so the error is the one final rounding (2^-9
    # of the magnitude) on operands that bfloat16 holds exactly
    bf = lambda x: et.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).to(et.bfloat16)
    for b, m, n, k in ((1, 300, 500, 200), (1, 48, 2100, 640), (6, 40, 50, 60)):
        a = bf(rng.standard_normal((b, m, k))).to(et.float32).numpy().astype(np.float64)
        bb = bf(rng.standard_normal((b, k, n))).to(et.float32).numpy().astype(np.float64)
        ref = np.matmul(a, bb)
        got = et.matmul(bf(a), bf(bb).transpose(1, 2).contiguous().transpose(1, 2))
        errors[f"t{threads} bf16 {b}x{m}x{n}x{k}"] = (
            float(np.abs(got.to(et.float32).numpy() - ref).max() / np.abs(ref).max()), 2.0**-8)
    c = bf(rng.standard_normal((300, 200))).to(et.float32).numpy().astype(np.float64)
    a = bf(rng.standard_normal((300, 100))).to(et.float32).numpy().astype(np.float64)
    bb = bf(rng.standard_normal((100, 200))).to(et.float32).numpy().astype(np.float64)
    ref = 0.5 * c + 2.0 * (a @ bb)
    got = et.addmm(bf(c), bf(a), bf(bb), beta=0.5, alpha=2.0).to(et.float32).numpy()
    errors[f"t{threads} bf16 addmm"] = (float(np.abs(got - ref).max() / np.abs(ref).max()), 2.0**-8)
    for m, n, k in ((130, 90, 70), (30, 20, 4000)):
        a = (rng.standard_normal((m, k)) + 1j * rng.standard_normal((m, k))).astype(np.complex64)
        c = (rng.standard_normal((k, n)) + 1j * rng.standard_normal((k, n))).astype(np.complex64)
        ref = a.astype(np.complex128) @ c.astype(np.complex128)
        got = et.matmul(et.from_numpy(a), et.from_numpy(c)).numpy()
        err = float(np.abs(got - ref).max() / np.abs(ref).max())
        errors[f"t{threads} complex64 {m}x{n}x{k}"] = (err, 2e-5)

# a product in a child forked after products here (the library keeps no threads to lose)
x = rng.standard_normal((700, 600)).astype(np.float32)
y = rng.standard_normal((600, 650)).astype(np.float32)
ref = x.astype(np.float64) @ y.astype(np.float64)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    got = et.matmul(et.from_numpy(x), et.from_numpy(y)).numpy()
    ok = np.abs(got - ref).max() / np.abs(ref).max() < 2e-5
    got16 = et.matmul(et.from_numpy(x).to(et.bfloat16), et.from_numpy(y).to(et.bfloat16))
    ok = ok and np.abs(got16.to(et.float32).numpy() - ref).max() / np.abs(ref).max() < 2e-2
    os.write(w, b"1" if ok else b"0")
    os._exit(0)
os.close(w)
_, status = os.waitpid(pid, 0)
forked = os.read(r, 1).decode()
info = et._C._build_info()
print(json.dumps({"gemm": info["gemm"], "bf16_gemm": info["bf16_gemm"], "errors": errors,
                  "forked": forked, "status": status}))
"""


def run_child(library: str) -> dict:
    env = {**os.environ, "EMBER_BLAS": library}
    done = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def chosen_library(env: dict) -> str:
    """The product library a fresh process picks under ``env``."""
    code = "import ember_tensor as et; print(et._C._build_info()['gemm'])"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    return done.stdout.strip()


def built_libraries() -> list[str]:
    import ember_tensor as et

    if et._C._build_info()["gemm"] == "built-in":
        return []
    # MKL is linked on x86-64 Linux builds that found the mkl-static wheel (CMakeLists.txt)
    mkl = chosen_library({**os.environ, "EMBER_BLAS": "mkl"}) == "MKL"
    return ["openblas", "mkl"] if mkl else ["openblas"]


@pytest.mark.parametrize("library", ["openblas", "mkl"])
def test_products_of_each_library_match_numpy(library):
    if library not in built_libraries():
        pytest.skip(f"this build has no {library} products")
    out = run_child(library)
    assert out["gemm"] == {"mkl": "MKL", "openblas": "OpenBLAS"}[library]
    bad = {k: v for k, v in out["errors"].items() if not v[0] <= v[1]}
    assert not bad, f"{library}: relative errors above tolerance: {bad}"
    # per thread count: the shapes x 2 dtypes x 2 layouts, 2 addmm, 4 bfloat16, 2 complex64
    assert len(out["errors"]) == 2 * (11 * 2 * 2 + 2 + 4 + 2)
    # bfloat16 operands are multiplied as they are by MKL on a CPU with AMX, else by oneDNN
    # where it is loaded and the CPU computes bfloat16, else as widened float32 copies
    with open("/proc/cpuinfo") as f:
        flags = set(next((ln for ln in f if ln.startswith("flags")), "").split())
    amx = {"amx_bf16", "amx_tile"} <= flags
    import ember_tensor as et

    dnnl = et._C._onednn_info()
    onednn = bool(dnnl["version"]) and dnnl["bf16"] and et._C._onednn_enabled()
    expected = "MKL" if library == "mkl" and amx else "oneDNN" if onednn else ""
    assert out["bf16_gemm"] == expected
    assert out["forked"] == "1" and out["status"] == 0


def test_default_library_follows_the_cpu_vendor():
    import ember_tensor as et

    libs = built_libraries()
    if "mkl" not in libs:
        pytest.skip("this build has no MKL products")
    env = {k: v for k, v in os.environ.items() if k != "EMBER_BLAS"}
    with open("/proc/cpuinfo") as f:
        intel = "GenuineIntel" in f.read()
    assert chosen_library(env) == ("MKL" if intel else "OpenBLAS")
    assert et._C._build_info()["gemm"] in ("MKL", "OpenBLAS")
