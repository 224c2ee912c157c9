"""Every SIMD level of the kernels gives right answers.

Hot inner loops are compiled for baseline x86-64, AVX2 and AVX-512, and the best level the
CPU has is picked at run time (``EMBER_CPU_CAPABILITY`` caps it). A machine runs only one
level by itself, so each level runs here in a child process and its results are compared
with NumPy float64 references and with the other levels.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

LEVELS = ["default", "avx2", "avx512"]

# The seeded inputs, made the same way in the child and here; sizes leave ragged tails.
INPUTS = r"""
import numpy as np

rng = np.random.default_rng(7)
x = (rng.standard_normal(100_003) * 4).astype(np.float32)
x[[5, 77_777]] = [np.inf, -np.inf]
y = rng.standard_normal(100_003).astype(np.float32)
m = rng.standard_normal((67, 129)).astype(np.float32)
h = rng.standard_normal(5_001).astype(np.float16)
i32 = rng.integers(-1000, 1000, 70_001).astype(np.int32)
d = rng.standard_normal(30_001) * 30
d[[3, 20_000]] = [800.0, -720.0]
"""

# Each op is computed in the child at the level its environment allows.
CHILD = INPUTS + r"""
import json
import ember_tensor as et

ex, ey, em = et.from_numpy(x), et.from_numpy(y), et.from_numpy(m)
results = {
    "exp": ex.exp(), "tanh": ex.tanh(), "sigmoid": ex.sigmoid(), "relu": ex.relu(),
    "add": ex + ey, "mul_scalar": ex * 1.5, "rsub_scalar": 2.0 - ey, "maximum": et.maximum(ex, ey),
    "sum": ey.sum(), "amax": ex.amax(), "amin": ey.amin(),
    "sum0": em.sum(0), "sum1": em.sum(1), "amax1": em.amax(1),
    "softmax0": et.softmax(em, 0), "softmax1": et.softmax(em, 1),
    "log_softmax1": et.log_softmax(em, 1), "logsumexp0": et.logsumexp(em, 0),
    "half_exp": et.from_numpy(h).exp(), "half_sum": et.from_numpy(h).sum(),
    "int_add": et.from_numpy(i32) + 7, "int_sum": et.from_numpy(i32).sum(),
    "transpose_copy": em.t().contiguous(),
    # exact GELU: AVX-512 runs table kernels on blocks of 16 within (-4, 4) or [7, inf), the
    # scalar kernel on the others (x's scale 4 mixes both kinds of block)
    "gelu": et.gelu(ex), "gelu_normal": et.gelu(ey),
    "gelu_backward": et.gelu_backward(ey, ex), "gelu_backward_normal": et.gelu_backward(ex, ey),
    "sigmoid_double": et.from_numpy(d).sigmoid(),
    # float16 conversions (F16C above the baseline): overflow to inf, rounding to nearest
    # even, subnormals; where and clamp with one broadcast value (blends at every level)
    "to_half": (ex * 5000).half(), "to_half_small": (ey * 1e-5).half(),
    "half_to_float": et.from_numpy(h).float(),
    "where_scalar": et.where(ex > 0, -0.0, ey), "where_tensors": et.where(ex > ey, ex, ey),
    "clamp_scalars": ex.clamp(-1.5, 2.0),
}
out = {k: {"dtype": str(v.dtype), "data": v.float().numpy().tolist() if v.dtype != et.int64
           else v.numpy().tolist()} for k, v in results.items()}
print(json.dumps({"level": et._C._cpu_capability(), "results": out}))
"""


def references() -> dict[str, np.ndarray]:
    inputs: dict = {}
    exec(INPUTS, inputs)  # noqa: S102 - our own constant code
    h, i32, d = inputs["h"], inputs["i32"], inputs["d"]
    xd, yd, md = (inputs[k].astype(np.float64) for k in ("x", "y", "m"))

    def softmax(a, axis):
        e = np.exp(a - a.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    def log_softmax(a, axis):
        s = a - a.max(axis=axis, keepdims=True)
        return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))

    def normal_cdf(a):
        return np.array([0.5 * math.erfc(-v / math.sqrt(2.0)) for v in a])

    def gelu_derivative(a):
        with np.errstate(invalid="ignore"):
            return normal_cdf(a) + a * np.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)

    with np.errstate(over="ignore", invalid="ignore"):
        return {
            "sigmoid_double": 1 / (1 + np.exp(-d)),
            "gelu": xd * normal_cdf(xd), "gelu_normal": yd * normal_cdf(yd),
            "gelu_backward": yd * gelu_derivative(xd),
            "gelu_backward_normal": xd * gelu_derivative(yd),
            "exp": np.exp(xd), "tanh": np.tanh(xd), "sigmoid": 1 / (1 + np.exp(-xd)),
            "relu": np.maximum(xd, 0), "add": xd + yd, "mul_scalar": xd * 1.5,
            "rsub_scalar": 2.0 - yd, "maximum": np.maximum(xd, yd),
            "sum": yd.sum(), "amax": xd.max(), "amin": yd.min(),
            "sum0": md.sum(0), "sum1": md.sum(1), "amax1": md.max(1),
            "softmax0": softmax(md, 0), "softmax1": softmax(md, 1),
            "log_softmax1": log_softmax(md, 1),
            "logsumexp0": np.log(np.exp(md).sum(0)),
            "half_exp": np.exp(h.astype(np.float64)), "half_sum": h.astype(np.float64).sum(),
            "int_add": i32.astype(np.int64) + 7, "int_sum": i32.astype(np.int64).sum(),
            "transpose_copy": md.T,
            "to_half": (inputs["x"] * np.float32(5000)).astype(np.float16).astype(np.float64),
            "to_half_small": (inputs["y"] * np.float32(1e-5)).astype(np.float16).astype(np.float64),
            "half_to_float": h.astype(np.float64),
            "where_scalar": np.where(xd > 0, -0.0, yd), "where_tensors": np.where(xd > yd, xd, yd),
            "clamp_scalars": np.clip(xd, -1.5, 2.0),
        }


TOLERANCE = {"half_exp": 1e-3, "half_sum": 2e-3}
# conversions and selections: bit for bit (inf included)
EXACT = {"to_half", "to_half_small", "half_to_float", "where_scalar", "where_tensors",
         "clamp_scalars"}
# sums: absolute error relative to the sum of magnitudes (float32 eps ~ 6e-8, pairwise)
ABSOLUTE = {"sum": 1e-6 * 80_000, "half_sum": 1e-3 * 4_000, "sum0": 1e-5, "sum1": 1e-5,
            # gelu' = Phi + x phi crosses 0: its error against the size of its terms
            "gelu_backward": 1e-6, "gelu_backward_normal": 1e-6}


def run_level(level: str) -> dict:
    env = dict(os.environ, EMBER_CPU_CAPABILITY=level)
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def level_results() -> dict[str, dict]:
    return {level: run_level(level) for level in LEVELS}


@pytest.mark.usefixtures("ember_only")
def test_capability_is_capped_by_the_environment(level_results):
    import ember_tensor as et

    best = et._C._cpu_capability()
    order = LEVELS.index(best)
    for level, got in level_results.items():
        assert got["level"] == LEVELS[min(LEVELS.index(level), order)]


@pytest.mark.usefixtures("ember_only")
@pytest.mark.parametrize("level", LEVELS)
def test_level_matches_numpy(level_results, level):
    refs = references()
    got = level_results[level]["results"]
    for name, ref in refs.items():
        actual = np.asarray(got[name]["data"], dtype=np.float64)
        if name.startswith("int_") or name in EXACT:
            np.testing.assert_array_equal(actual, ref, err_msg=f"{name} at {level}")
            continue
        np.testing.assert_allclose(actual, ref, rtol=TOLERANCE.get(name, 2e-6),
                                   atol=ABSOLUTE.get(name, 1e-37), err_msg=f"{name} at {level}")


@pytest.mark.usefixtures("ember_only")
def test_levels_agree_closely(level_results):
    base = level_results["default"]["results"]
    for level in LEVELS[1:]:
        for name, entry in level_results[level]["results"].items():
            a = np.asarray(entry["data"], dtype=np.float64)
            b = np.asarray(base[name]["data"], dtype=np.float64)
            assert entry["dtype"] == base[name]["dtype"], name
            np.testing.assert_allclose(a, b, rtol=TOLERANCE.get(name, 2e-6),
                                       atol=ABSOLUTE.get(name, 1e-30),
                                       err_msg=f"{name}: {level} vs default")


@pytest.mark.usefixtures("ember_only")
def test_unknown_capability_warns_and_is_ignored():
    env = dict(os.environ, EMBER_CPU_CAPABILITY="avx9000")
    code = "import ember_tensor as et; print(et._C._cpu_capability())"
    done = subprocess.run([sys.executable, "-W", "always", "-c", code], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "RuntimeWarning: EMBER_CPU_CAPABILITY=avx9000 is not one of" in done.stderr
    assert done.stdout.strip() in LEVELS


# Integer sums and products of every length up to 300 (GCC 12 once miscompiled the AVX-512
# lane folds of these: lengths 16, 24, 32, ... lost whole lanes), whole and along a dim.
INTEGER_CHILD = r"""
import json
import numpy as np
import ember_tensor as et

bad = []
for name in ["int8", "int16", "int32", "int64", "uint8"]:
    for n in range(1, 301):
        a = ((np.arange(n) * 7) % 11 - 5).astype(name)
        p = ((np.arange(n) % 3) - 1 | 1).astype(name)  # -1 and 1: products stay small
        t, tp = et.from_numpy(a), et.from_numpy(p)
        total = int(a.astype(np.int64).sum())
        checks = [
            ("sum", t.sum().item(), total),
            ("nansum", t.nansum().item(), total),
            ("prod", tp.prod().item(), int(p.astype(np.int64).prod())),
            ("rows", t.reshape(1, n).expand(3, n).sum(1).tolist(), [total] * 3),
        ]
        bad += [f"{name} n={n} {what}: {x} != {y}" for what, x, y in checks if x != y]
print(json.dumps(bad[:20]))
"""


@pytest.mark.usefixtures("ember_only")
@pytest.mark.parametrize("level", LEVELS)
def test_integer_sums_and_products_of_every_length(level):
    env = dict(os.environ, EMBER_CPU_CAPABILITY=level)
    done = subprocess.run([sys.executable, "-c", INTEGER_CHILD], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [], f"at {level}"
