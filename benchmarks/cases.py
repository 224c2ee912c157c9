"""The cases of ``bench_core.py``: what is measured, on which data, and how it is counted.

A case is one operation written once for both libraries: ``op(lib, *tensors)`` gets the
library module (``ember_tensor`` or ``torch``) and the inputs, made by NumPy and handed to
the library with ``from_numpy``. ``work`` is what one call moves or computes (bytes for
GB/s, floating-point operations for GFLOP/s); cases without it report time per call.
``target`` is the ratio (torch time / ember time) the case is held to.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

GB_S = "GB/s"
GFLOP_S = "GFLOP/s"
PER_CALL = "per call"

FLOOR = 0.8  # no figure below this ratio
OVERHEAD_TARGET = 1.25  # small ops: ember at most 0.8x torch's time per call
LAST_DIM_TARGET = 1.0  # reductions and softmax along the last dim

F32 = 4  # bytes of a float32
I64 = 8  # bytes of an int64

K, M, BIG = 1024, 1024 * 1024, 16 * 1024 * 1024
SIDE = 4096  # SIDE x SIDE float32 = BIG elements, 64 MiB


@dataclass(frozen=True)
class Case:
    group: str
    name: str
    inputs: Callable[[np.random.Generator], list[np.ndarray]]
    op: Callable[..., Any]  # op(lib, *tensors)
    unit: str = GB_S
    work: float = 0.0  # bytes (GB/s) or flops (GFLOP/s) per call
    per_call: int = 1  # operations done by one call of op (unrolled attribute reads)
    target: float = FLOOR
    rtol: float = 1e-5
    atol: float = 1e-5
    check: Callable[..., Any] | None = None  # what is compared (default: op's result)

    @property
    def key(self) -> str:
        return f"{self.group}/{self.name}"


def normal(*shapes: tuple[int, ...]) -> Callable[[np.random.Generator], list[np.ndarray]]:
    def make(rng: np.random.Generator) -> list[np.ndarray]:
        return [rng.standard_normal(shape, dtype=np.float32) for shape in shapes]

    return make


def complex_normal(
    dtype, *shapes: tuple[int, ...]
) -> Callable[[np.random.Generator], list[np.ndarray]]:
    def make(rng: np.random.Generator) -> list[np.ndarray]:
        return [(rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
                for shape in shapes]

    return make


def with_index(
    shape: tuple[int, ...], index_shape: tuple[int, ...], high: int
) -> Callable[[np.random.Generator], list[np.ndarray]]:
    def make(rng: np.random.Generator) -> list[np.ndarray]:
        x = rng.standard_normal(shape, dtype=np.float32)
        return [x, rng.integers(0, high, size=index_shape, dtype=np.int64)]

    return make


def _size_label(n: int) -> str:
    return f"{n // M}M" if n >= M else f"{n // K}K"


# --------------------------------------------------------------------------------------
# overhead: time per call of tiny ops, where dispatch dominates


READS = 8


def _reads(attr: str) -> Callable[..., Any]:
    getter = operator.attrgetter(*[attr] * READS)  # reads x.<attr> READS times, in C
    return lambda lib, x: getter(x)


def _overhead() -> list[Case]:
    one, one_one = normal((1,)), normal((1,), (1,))
    small = dict(group="overhead", unit=PER_CALL, target=OVERHEAD_TARGET)
    cases = [
        Case(name="add 1 elem (a+b)", inputs=one_one, op=lambda lib, a, b: a + b, **small),
        Case(name="mul 1 elem (a*b)", inputs=one_one, op=lambda lib, a, b: a * b, **small),
        Case(name="exp 1 elem", inputs=one, op=lambda lib, a: lib.exp(a), **small),
        Case(name="sum 1 elem", inputs=one, op=lambda lib, a: a.sum(), **small),
        Case(
            name="reshape 2x2 (view)",
            inputs=normal((4,)),
            op=lambda lib, a: a.reshape(2, 2),
            **small,
        ),
    ]
    # attribute reads, READS to a call so that the harness's own call cost is spread thin
    cases += [
        Case(
            group="overhead",
            name=f"x.{attr}",
            inputs=normal((2, 3)),
            op=_reads(attr),
            unit=PER_CALL,
            per_call=READS,
            check=lambda lib, x, attr=attr: getattr(x, attr),
        )
        for attr in ("shape", "dtype", "device")
    ]
    return cases


# --------------------------------------------------------------------------------------
# elementwise: bytes = inputs read once + output written once


def gelu_like(lib: Any, x: Any) -> Any:
    """The tanh approximation of GELU, as an expression of separate ops (no fused kernel)."""
    return 0.5 * x * (1 + lib.tanh(0.79788456 * (x + 0.044715 * x * x * x)))


def _elementwise() -> list[Case]:
    cases = []
    for n in (K, M, BIG):
        size = _size_label(n)
        two, one = normal((n,), (n,)), normal((n,))
        cases += [
            Case(
                group="elementwise",
                name=f"add {size}",
                inputs=two,
                op=lambda lib, a, b: a + b,
                work=3 * F32 * n,
                target=2.0 if n == BIG else FLOOR,
            ),
            Case(
                group="elementwise",
                name=f"mul {size}",
                inputs=two,
                op=lambda lib, a, b: a * b,
                work=3 * F32 * n,
            ),
            Case(
                group="elementwise",
                name=f"exp {size}",
                inputs=one,
                op=lambda lib, a: lib.exp(a),
                work=2 * F32 * n,
                rtol=1e-5,
                atol=1e-6,
            ),
            Case(
                group="elementwise",
                name=f"gelu-like {size}",
                inputs=one,
                op=gelu_like,
                work=2 * F32 * n,
                rtol=1e-4,
                atol=1e-5,
            ),
        ]
    return cases


# --------------------------------------------------------------------------------------
# reductions: bytes = the input read once (the output is small beside it; softmax writes
# an output as large as its input, so it counts both)


def _tolerance(method: str, n: int) -> float:
    """Absolute tolerance of a reduction of n float32 (sums differ with their order)."""
    return {"sum": 1e-4 * n**0.5, "mean": 1e-4 / n**0.5, "max": 0.0}[method]


def _reductions() -> list[Case]:
    flat, square, cube = normal((BIG,)), normal((SIDE, SIDE)), normal((256, 256, 256))
    red = dict(group="reductions", work=F32 * BIG, rtol=1e-4)
    cases = [
        Case(
            name=f"{method} 16M (all)",
            inputs=flat,
            op=lambda lib, x, m=method: getattr(x, m)(),
            target=LAST_DIM_TARGET,
            atol=_tolerance(method, BIG),
            **red,
        )
        for method in ("sum", "mean")
    ]
    cases += [
        Case(
            name=f"{method} 4096x4096 dim={dim}",
            inputs=square,
            # max(dim=) gives values and indices: both are checked
            op=lambda lib, x, m=method, d=dim: getattr(x, m)(dim=d),
            target=LAST_DIM_TARGET if dim == 1 else FLOOR,
            atol=_tolerance(method, SIDE),
            **red,
        )
        for dim in (0, 1)
        for method in ("sum", "mean", "max")
    ]
    soft = dict(group="reductions", work=2 * F32 * BIG, rtol=1e-4, atol=1e-7)
    for label, inputs, ndim in (("4096x4096", square, 2), ("256x256x256", cube, 3)):
        cases += [
            Case(
                name=f"softmax {label} dim={dim}",
                inputs=inputs,
                op=lambda lib, x, d=dim: lib.softmax(x, d),
                target=LAST_DIM_TARGET if dim == ndim - 1 else FLOOR,
                **soft,
            )
            for dim in range(ndim)
        ]
    return cases


# --------------------------------------------------------------------------------------
# matmul: flops = 2 * m * n * k (per batch element)


def _matmul() -> list[Case]:
    # (label, shape of both operands, target); flops = 2 * prod(shape) * shape[-1]
    specs = [(f"{n}x{n}", (n, n), 1.2 if n >= 1024 else FLOOR) for n in (64, 256, 1024, 2048)]
    specs.append(("batched 64x128x128", (64, 128, 128), FLOOR))  # 64 x (128x128 @ 128x128)
    return [
        Case(
            group="matmul",
            name=f"matmul {label}",
            inputs=normal(shape, shape),
            op=lambda lib, a, b: lib.matmul(a, b),
            unit=GFLOP_S,
            work=2.0 * math.prod(shape) * shape[-1],
            target=target,
            rtol=1e-3,
            atol=1e-3 * shape[-1] ** 0.5,
        )
        for label, shape, target in specs
    ] + [
        # complex: a multiply-add is 8 real flops (cgemm / zgemm)
        Case(
            group="matmul",
            name=f"matmul {np.dtype(dtype).name} {n}x{n}",
            inputs=complex_normal(dtype, (n, n), (n, n)),
            op=lambda lib, a, b: lib.matmul(a, b),
            unit=GFLOP_S,
            work=8.0 * n**3,
            target=FLOOR,
            rtol=1e-3,
            atol=1e-3 * n**0.5,
        )
        for dtype, n in ((np.complex64, 256), (np.complex64, 1024), (np.complex128, 512))
    ]


# --------------------------------------------------------------------------------------
# fft: the sizes, complex64 (fft, fft2) and float32 (rfft, rfft2); work is the
# conventional 5 n log2(n) flops of a complex transform (2.5 n log2(n) for a real one)


def _fft() -> list[Case]:
    def real(shape: tuple[int, ...]) -> Callable[[np.random.Generator], list[np.ndarray]]:
        return normal(shape)

    cases = []
    one_d = [(f"{_size_label(1 << p)}", 1 << p) for p in (10, 14, 18, 20, 22)]
    one_d += [("1000", 1000), ("3^12", 3**12)]
    for label, n in one_d:
        flops = 5.0 * n * math.log2(n)
        cases.append(Case(group="fft", name=f"fft c64 {label}",
                          inputs=complex_normal(np.complex64, (n,)),
                          op=lambda lib, x: lib.fft.fft(x), unit=GFLOP_S, work=flops,
                          target=1.0, rtol=1e-4, atol=1e-3 * math.sqrt(n)))
        cases.append(Case(group="fft", name=f"rfft f32 {label}", inputs=real((n,)),
                          op=lambda lib, x: lib.fft.rfft(x), unit=GFLOP_S, work=flops / 2,
                          target=1.0, rtol=1e-4, atol=1e-3 * math.sqrt(n)))
    for side in (512, 2048):
        n = side * side
        flops = 5.0 * n * math.log2(n)
        cases.append(Case(group="fft", name=f"fft2 c64 {side}x{side}",
                          inputs=complex_normal(np.complex64, (side, side)),
                          op=lambda lib, x: lib.fft.fft2(x), unit=GFLOP_S, work=flops,
                          target=1.0, rtol=1e-4, atol=1e-3 * side))
        cases.append(Case(group="fft", name=f"rfft2 f32 {side}x{side}", inputs=real((side, side)),
                          op=lambda lib, x: lib.fft.rfft2(x), unit=GFLOP_S, work=flops / 2,
                          target=1.0, rtol=1e-4, atol=1e-3 * side))
    cases.append(Case(group="fft", name="fft c128 batch 64x4096",
                      inputs=complex_normal(np.complex128, (64, 4096)),
                      op=lambda lib, x: lib.fft.fft(x), unit=GFLOP_S,
                      work=64 * 5.0 * 4096 * 12, target=1.0, rtol=1e-8, atol=1e-8))
    return cases


# --------------------------------------------------------------------------------------
# linalg: LAPACK decompositions and solvers, float64 (per call; results compared through
# what does not depend on the sign choices of the factorisations)


def _spd(n: int, batch: tuple[int, ...] = ()) -> Callable[[np.random.Generator], list[np.ndarray]]:
    def make(rng: np.random.Generator) -> list[np.ndarray]:
        a = rng.standard_normal((*batch, n, n))
        return [a @ np.swapaxes(a, -1, -2) + n * np.eye(n)]

    return make


def _general(*shapes: tuple[int, ...]) -> Callable[[np.random.Generator], list[np.ndarray]]:
    def make(rng: np.random.Generator) -> list[np.ndarray]:
        return [rng.standard_normal(shape) for shape in shapes]

    return make


def _linalg() -> list[Case]:
    specs = []
    for label, n, batch in (("256", 256, ()), ("batch 1000x8", 8, (1000,))):
        shape = (*batch, n, n)
        specs += [
            (f"solve {label}", _general(shape, shape[:-1] + (4,)),
             lambda lib, a, b: lib.linalg.solve(a, b), None),
            (f"inv {label}", _spd(n, batch), lambda lib, a: lib.linalg.inv(a), None),
            (f"cholesky {label}", _spd(n, batch), lambda lib, a: lib.linalg.cholesky(a), None),
            (f"det {label}", _spd(n, batch), lambda lib, a: lib.linalg.slogdet(a)[1], None),
            (f"eigh {label}", _spd(n, batch), lambda lib, a: lib.linalg.eigh(a),
             lambda lib, a: lib.linalg.eigh(a)[0]),
            (f"qr {label}", _general(shape), lambda lib, a: lib.linalg.qr(a),
             lambda lib, a: lib.linalg.qr(a)[1].abs()),
            (f"svd {label}", _general(shape), lambda lib, a: lib.linalg.svd(a),
             lambda lib, a: lib.linalg.svd(a)[1]),
            (f"svdvals {label}", _general(shape), lambda lib, a: lib.linalg.svdvals(a), None),
        ]
    return [
        Case(group="linalg", name=name, inputs=inputs, op=op, unit=PER_CALL, check=check,
             rtol=1e-6, atol=1e-6)
        for name, inputs, op, check in specs
    ]


# --------------------------------------------------------------------------------------
# indexing and memory: bytes = values read + indices read + output written


def _memory() -> list[Case]:
    rows = with_index((SIDE, SIDE), (SIDE,), SIDE)  # SIDE random rows, repeats allowed
    cols = with_index((SIDE, SIDE), (SIDE, SIDE // 4), SIDE)  # a quarter of each row
    row_bytes = 2 * F32 * BIG + I64 * SIDE
    gather_bytes = (2 * F32 + I64) * (SIDE * SIDE // 4)
    copy_bytes = 2 * F32 * BIG
    # (name, inputs, bytes, op)
    specs = [
        (
            "index_select 4096 rows of 4096x4096",
            rows,
            row_bytes,
            lambda lib, x, i: lib.index_select(x, 0, i),
        ),
        ("x[idx] 4096 rows of 4096x4096", rows, row_bytes, lambda lib, x, i: x[i]),
        (
            "gather dim=1 4096x1024 of 4096x4096",
            cols,
            gather_bytes,
            lambda lib, x, i: lib.gather(x, 1, i),
        ),
        (
            "take_along_dim dim=1 4096x1024",
            cols,
            gather_bytes,
            lambda lib, x, i: lib.take_along_dim(x, i, 1),
        ),
        (
            "cat 4 x 1024x4096 dim=0",
            normal(*[(SIDE // 4, SIDE)] * 4),
            copy_bytes,
            lambda lib, *xs: lib.cat(list(xs), 0),
        ),
        (
            "cat 4 x 4096x1024 dim=1",
            normal(*[(SIDE, SIDE // 4)] * 4),
            copy_bytes,
            lambda lib, *xs: lib.cat(list(xs), 1),
        ),
        (
            "transpose-copy 4096x4096",
            normal((SIDE, SIDE)),
            copy_bytes,
            lambda lib, x: x.t().contiguous(),
        ),
        ("clone 16M", normal((BIG,)), copy_bytes, lambda lib, x: x.clone()),
    ]
    return [
        Case(group="memory", name=name, inputs=inputs, op=op, work=work)
        for name, inputs, work, op in specs
    ]


# --------------------------------------------------------------------------------------
# the op library of issue 26: special-function kernels (float32, 1M elements: bytes read +
# written) and composites (per call)

M = 1 << 20


def _positive(*shapes: tuple[int, ...]) -> Callable[[np.random.Generator], list[np.ndarray]]:
    def make(rng: np.random.Generator) -> list[np.ndarray]:
        return [rng.uniform(0.1, 8.0, shape).astype(np.float32) for shape in shapes]

    return make


def _uniform(lo: float, hi: float, shape: tuple[int, ...]):
    def make(rng: np.random.Generator) -> list[np.ndarray]:
        return [rng.uniform(lo, hi, shape).astype(np.float32)]

    return make


def _integers(high: int, *shapes: tuple[int, ...]):
    def make(rng: np.random.Generator) -> list[np.ndarray]:
        return [rng.integers(0, high, shape, dtype=np.int64) for shape in shapes]

    return make


def _scatter_inputs(rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.standard_normal(1000, dtype=np.float32), rng.integers(0, 1000, M),
            rng.standard_normal(M, dtype=np.float32)]


def _library() -> list[Case]:
    unary = 2 * F32 * M
    special = [
        ("lgamma", _positive((M,)), lambda lib, x: lib.lgamma(x)),
        ("digamma", _positive((M,)), lambda lib, x: lib.digamma(x)),
        ("polygamma(1)", _positive((M,)), lambda lib, x: lib.polygamma(1, x)),
        ("erfinv", _uniform(-0.99, 0.99, (M,)), lambda lib, x: lib.erfinv(x)),
        ("erfc", _uniform(-4, 4, (M,)), lambda lib, x: lib.erfc(x)),
        ("i0", _uniform(-20, 20, (M,)), lambda lib, x: lib.i0(x)),
        ("special.i1e", _uniform(-20, 20, (M,)), lambda lib, x: lib.special.i1e(x)),
        ("special.ndtr", _uniform(-6, 6, (M,)), lambda lib, x: lib.special.ndtr(x)),
        ("special.log_ndtr", _uniform(-10, 6, (M,)), lambda lib, x: lib.special.log_ndtr(x)),
        ("special.ndtri", _uniform(0.001, 0.999, (M,)), lambda lib, x: lib.special.ndtri(x)),
        ("special.erfcx", _uniform(-4, 30, (M,)), lambda lib, x: lib.special.erfcx(x)),
        ("special.bessel_j0", _uniform(-30, 30, (M,)), lambda lib, x: lib.special.bessel_j0(x)),
        ("special.modified_bessel_k0", _positive((M,)),
         lambda lib, x: lib.special.modified_bessel_k0(x)),
        ("special.zeta", _positive((M,), (M,)), lambda lib, s, q: lib.special.zeta(s + 1.5, q)),
        ("igamma", _positive((M,), (M,)), lambda lib, a, x: lib.igamma(a, x)),
    ]
    cases = [
        Case(group="library", name=f"{name} 1M", inputs=inputs, op=op,
             work=unary * (1.5 if op.__code__.co_argcount == 3 else 1.0), rtol=1e-4, atol=1e-5)
        for name, inputs, op in special
    ]
    composite = [
        ("scatter_reduce amax 1M into 1000", _scatter_inputs,
         lambda lib, s, i, v: s.scatter_reduce(0, i, v, "amax")),
        ("scatter_reduce mean 1M into 1000", _scatter_inputs,
         lambda lib, s, i, v: s.scatter_reduce(0, i, v, "mean")),
        ("quantile 1M q=(0.1, 0.5, 0.9)", normal((M,)),
         lambda lib, x: lib.quantile(x, lib.tensor([0.1, 0.5, 0.9]))),
        ("median 1000x1000 dim=1", normal((1000, 1000)), lambda lib, x: x.median(1).values),
        ("unique 1M of 1000", _integers(1000, (M,)), lambda lib, x: lib.unique(x)),
        ("isin 1M in 1000", _integers(100000, (M,), (1000,)), lambda lib, x, t: lib.isin(x, t)),
        ("cdist 1000x64 to 1000x64", normal((1000, 64), (1000, 64)),
         lambda lib, a, b: lib.cdist(a, b)),
        ("cov 64x10000", normal((64, 10000)), lambda lib, x: lib.cov(x)),
        ("cummax 1M", normal((M,)), lambda lib, x: x.cummax(0).values),
        ("logcumsumexp 1M", normal((M,)), lambda lib, x: x.logcumsumexp(0)),
    ]
    cases += [
        Case(group="library", name=name, inputs=inputs, op=op, unit=PER_CALL, rtol=1e-4,
             atol=1e-4)
        for name, inputs, op in composite
    ]
    return cases


def _masks(*shapes: tuple[int, ...]) -> Callable[[np.random.Generator], list[np.ndarray]]:
    """float32 values and a random bool mask (half true) of each shape."""
    def make(rng: np.random.Generator) -> list[np.ndarray]:
        out = []
        for shape in shapes:
            out += [rng.standard_normal(shape, dtype=np.float32), rng.random(shape) < 0.5]
        return out

    return make


def _indexing() -> list[Case]:
    """Index-based reads and writes of 1M elements (per call): one index per element into a
    small table or a permutation, masks, and scatters of many values into few places."""
    small = with_index((1000,), (M,), 1000)
    perm = _permuted(M)
    specs = [
        ("index_select 1M of 1000", small, lambda lib, x, i: lib.index_select(x, 0, i)),
        ("x[perm] 1M", perm, lambda lib, x, i: x[i]),
        ("take perm 1M", perm, lambda lib, x, i: x.take(i)),
        ("x[perm] = 1.0 1M", perm, lambda lib, x, i: x.index_put_((i,), lib.ones(()))),
        ("nonzero 1M (half)", _masks((M,)), lambda lib, x, m: m.nonzero()),
        ("nonzero 1024x1024 (half)", _masks((K, K)), lambda lib, x, m: m.nonzero()),
        ("masked_select 1M (half)", _masks((M,)), lambda lib, x, m: x.masked_select(m)),
        ("x[mask] 1024x1024 (half)", _masks((K, K)), lambda lib, x, m: x[m]),
        ("scatter_ 1M into 1000", _scatter_inputs,
         lambda lib, s, i, v: s.clone().scatter_(0, i, v)),
        ("scatter_add 1M into 1000", _scatter_inputs, lambda lib, s, i, v: s.scatter_add(0, i, v)),
        ("scatter_add 16384x64 into 1000x64", _scatter_2d,
         lambda lib, s, i, v: s.scatter_add(0, i, v)),
        ("index_add_ 16384 rows into 50000x64", _rows_into,
         lambda lib, s, i, v: s.clone().index_add_(0, i, v)),
    ]
    return [Case(group="indexing", name=name, inputs=inputs, op=op, unit=PER_CALL)
            for name, inputs, op in specs]


def _permuted(n: int) -> Callable[[np.random.Generator], list[np.ndarray]]:
    def make(rng: np.random.Generator) -> list[np.ndarray]:
        return [rng.standard_normal(n, dtype=np.float32), rng.permutation(n)]

    return make


def _scatter_2d(rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.standard_normal((1000, 64), dtype=np.float32), rng.integers(0, 1000, (16384, 64)),
            rng.standard_normal((16384, 64), dtype=np.float32)]


def _rows_into(rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.standard_normal((50000, 64), dtype=np.float32), rng.integers(0, 50000, 16384),
            rng.standard_normal((16384, 64), dtype=np.float32)]


def _math() -> list[Case]:
    """The functions of math.h on 1M elements of float32 and float64 (each on its domain)."""
    functions = [
        ("exp", -5, 5), ("expm1", -2, 2), ("log", 0.01, 100), ("log1p", -0.9, 10),
        ("log2", 0.01, 100), ("log10", 0.01, 100), ("sin", -10, 10), ("cos", -10, 10),
        ("tan", -1.5, 1.5), ("atan", -10, 10), ("asin", -1, 1), ("acos", -1, 1),
        ("sinh", -5, 5), ("cosh", -5, 5), ("tanh", -5, 5), ("sigmoid", -10, 10),
        ("erf", -3, 3), ("exp2", -10, 10), ("asinh", -10, 10), ("acosh", 1, 10),
        ("atanh", -0.99, 0.99),
    ]
    cases = []
    for dtype in (np.float32, np.float64):
        for name, lo, hi in functions:
            def make(rng: np.random.Generator, lo=lo, hi=hi, dtype=dtype) -> list[np.ndarray]:
                return [rng.uniform(lo, hi, M).astype(dtype)]

            cases.append(Case(group="math", name=f"{name} {np.dtype(dtype).name} 1M",
                              inputs=make, op=lambda lib, x, name=name: getattr(lib, name)(x),
                              work=2 * np.dtype(dtype).itemsize * M, rtol=1e-5, atol=1e-6))
    return cases


CASES: list[Case] = (
    _overhead() + _elementwise() + _reductions() + _matmul() + _fft() + _linalg() + _memory()
    + _library() + _indexing() + _math()
)

# scaling: these cases again, at 1 and at 2 intra-op threads in both libraries
SCALING_THREADS = (1, 2)
_BY_KEY = {case.key: case for case in CASES}
SCALING: list[Case] = [
    _BY_KEY[key]
    for key in (
        "elementwise/add 16M",
        "elementwise/exp 16M",
        "reductions/sum 16M (all)",
        "reductions/softmax 4096x4096 dim=1",
        "matmul/matmul 1024x1024",
    )
]
