"""Ember's autograd and PyTorch's (CPU) side by side, in one run.

    python benchmarks/bench_autograd.py [--threads N] [--repeats N] [--filter SUBSTR] [--quick]
                                        [--json PATH]

The cases:

- ``chain``: 20 small elementwise ops (mul, add, sub, exp, sin, tanh, with tensors and
  Python numbers) on 1-element float32 tensors that require grad: forward + backward (the
  cost of recording and running a graph of tiny ops, where per-op overhead is everything);
  forward only in grad mode (recording), forward only under ``no_grad``, and forward only
  on tensors that do not require grad (the plain ops, the baseline of the other two).
- ``mlp``: one training step's forward and backward of a two-layer perceptron,
  ``log_softmax(relu(x @ w1 + b1) @ w2 + b2)`` with the negative log-likelihood picked by
  ``gather`` (and, in one case, by advanced indexing), at batch 64 784-256-10 and at
  batch 256 1024-1024-100.

Both libraries run the same program (written once, ``op(lib, state)``) on the same data
(made by NumPy with a fixed seed, handed over with ``from_numpy``), with the timing of
``bench_core.py``: warm-up, repeats taken in turn, medians. ``ratio`` is torch time / ember
time: above 1 means Ember is faster. Each case's gradients (or outputs) are compared
between the libraries once, so a fast wrong answer shows up as ``MISMATCH`` (exit status 1,
as for a case that fails). PyTorch is optional: without it only Ember's column is printed.

Ember is used through the ``ember`` meta-package when it is installed (``ember.no_grad`` is
the autograd provider's), else through ``ember_tensor`` and ``ember_autograd`` directly.
"""

from __future__ import annotations

import gc
import sys
import time
import types
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from bench_core import (
    FLOOR,
    SEED,
    Report,
    Settings,
    _version,
    fmt_target,
    fmt_time,
    load_torch,
    median_seconds,
    parse_args,
    print_header,
    print_machine,
    print_summary,
    result_row,
    run_info,
    select,
    set_threads,
    write_json,
)

CHAIN_OPS = 20
NAME_W = 34


# --------------------------------------------------------------------------------------
# The programs, written once for both libraries


def chain(lib: Any, x: Any, w: Any) -> Any:
    """20 elementwise ops: 6 mul, 3 add, 3 sub, 2 exp, 3 sin, 3 tanh (5 of them with a number)."""
    h = x * w  # 1
    h = h + x  # 2
    h = lib.sin(h)  # 3
    h = h * 0.5  # 4
    h = lib.exp(h)  # 5
    h = h - w  # 6
    h = lib.tanh(h)  # 7
    h = h * h  # 8
    h = h + 1.0  # 9
    h = lib.sin(h)  # 10
    h = h * w  # 11
    h = lib.exp(h)  # 12
    h = h - x  # 13
    h = lib.tanh(h)  # 14
    h = h + w  # 15
    h = h * 0.25  # 16
    h = lib.sin(h)  # 17
    h = h - 0.5  # 18
    h = lib.tanh(h)  # 19
    return h * x  # 20


def mlp_loss(lib: Any, s: dict, indexing: bool = False) -> Any:
    h = lib.relu(s["x"] @ s["w1"] + s["b1"])
    logp = lib.log_softmax(h @ s["w2"] + s["b2"], dim=1)
    if indexing:
        picked = logp[s["rows"], s["target"]]
    else:
        picked = logp.gather(1, s["target"].unsqueeze(1))
    return -picked.mean()


# --------------------------------------------------------------------------------------
# Cases


@dataclass(frozen=True)
class Case:
    group: str
    name: str
    inputs: Callable[[np.random.Generator], dict[str, np.ndarray]]
    prepare: Callable[[Any, dict[str, np.ndarray]], dict]  # lib, arrays -> state
    run: Callable[[Any, dict], object]  # the timed call
    check: Callable[[Any, dict], list]  # run once on a fresh state: what is compared
    target: float = FLOOR
    rtol: float = 1e-4
    atol: float = 1e-5

    @property
    def key(self) -> str:
        return f"{self.group}/{self.name}"


def _chain_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "x": rng.uniform(0.2, 0.8, size=1).astype(np.float32),
        "w": rng.uniform(0.2, 0.8, size=1).astype(np.float32),
    }


def _leaves(requires_grad: bool) -> Callable[[Any, dict], dict]:
    def prepare(lib: Any, arrays: dict[str, np.ndarray]) -> dict:
        state = {}
        for name, a in arrays.items():
            t = lib.from_numpy(a.copy())
            if requires_grad and a.dtype.kind == "f":
                t.requires_grad_()
            state[name] = t
        return state

    return prepare


def _chain_backward(lib: Any, s: dict) -> None:
    x, w = s["x"], s["w"]
    x.grad = None  # zero_grad(set_to_none=True)
    w.grad = None
    chain(lib, x, w).backward()


def _chain_check_backward(lib: Any, s: dict) -> list:
    _chain_backward(lib, s)
    return [s["x"].grad, s["w"].grad]


def _chain_no_grad(lib: Any, s: dict) -> Any:
    with lib.no_grad():
        return chain(lib, s["x"], s["w"])


def _mlp_inputs(batch: int, n_in: int, hidden: int, n_out: int):
    def make(rng: np.random.Generator) -> dict[str, np.ndarray]:
        def init(fan_in: int, *shape: int) -> np.ndarray:
            bound = 1 / np.sqrt(fan_in)
            return rng.uniform(-bound, bound, size=shape).astype(np.float32)

        return {
            "x": rng.standard_normal((batch, n_in), dtype=np.float32),
            "w1": init(n_in, n_in, hidden),
            "b1": init(n_in, hidden),
            "w2": init(hidden, hidden, n_out),
            "b2": init(hidden, n_out),
            "target": rng.integers(0, n_out, size=batch, dtype=np.int64),
            "rows": np.arange(batch, dtype=np.int64),
        }

    return make


def _mlp_prepare(lib: Any, arrays: dict[str, np.ndarray]) -> dict:
    state = {name: lib.from_numpy(a.copy()) for name, a in arrays.items()}
    for name in ("w1", "b1", "w2", "b2"):
        state[name].requires_grad_()
    return state


PARAMS = ("w1", "b1", "w2", "b2")


def _mlp_step(indexing: bool) -> Callable[[Any, dict], None]:
    def step(lib: Any, s: dict) -> None:
        for name in PARAMS:
            s[name].grad = None
        mlp_loss(lib, s, indexing).backward()

    return step


def _mlp_check(indexing: bool) -> Callable[[Any, dict], list]:
    def check(lib: Any, s: dict) -> list:
        loss = mlp_loss(lib, s, indexing)
        loss.backward()
        return [loss.detach(), *(s[name].grad for name in PARAMS)]

    return check


def _cases() -> list[Case]:
    grad_leaves, plain_leaves = _leaves(True), _leaves(False)
    cases = [
        Case(
            "chain",
            f"{CHAIN_OPS} ops fwd+bwd (grad)",
            _chain_inputs,
            grad_leaves,
            _chain_backward,
            _chain_check_backward,
            target=1.0,
        ),
        Case(
            "chain",
            f"{CHAIN_OPS} ops fwd (grad mode)",
            _chain_inputs,
            grad_leaves,
            lambda lib, s: chain(lib, s["x"], s["w"]),
            lambda lib, s: [chain(lib, s["x"], s["w"]).detach()],
        ),
        Case(
            "chain",
            f"{CHAIN_OPS} ops fwd (no_grad)",
            _chain_inputs,
            grad_leaves,
            _chain_no_grad,
            lambda lib, s: [_chain_no_grad(lib, s)],
        ),
        Case(
            "chain",
            f"{CHAIN_OPS} ops fwd (no grad inputs)",
            _chain_inputs,
            plain_leaves,
            lambda lib, s: chain(lib, s["x"], s["w"]),
            lambda lib, s: [chain(lib, s["x"], s["w"])],
        ),
    ]
    for batch, n_in, hidden, n_out in ((64, 784, 256, 10), (256, 1024, 1024, 100)):
        label = f"{batch}x{n_in}-{hidden}-{n_out}"
        inputs = _mlp_inputs(batch, n_in, hidden, n_out)
        cases.append(
            Case(
                "mlp",
                f"step {label} gather",
                inputs,
                _mlp_prepare,
                _mlp_step(False),
                _mlp_check(False),
            )
        )
        if batch == 64:
            cases.append(
                Case(
                    "mlp",
                    f"step {label} indexing",
                    inputs,
                    _mlp_prepare,
                    _mlp_step(True),
                    _mlp_check(True),
                )
            )
    return cases


CASES = _cases()


# --------------------------------------------------------------------------------------
# Measuring


@dataclass
class Timing:
    seconds: float | None = None  # median per call
    repeats: int = 0
    inner: int = 0
    error: str | None = None

    def to_json(self) -> dict:
        out = asdict(self)
        out["median_s"] = out.pop("seconds")
        return out


def _error(exc: BaseException) -> Timing:
    return Timing(error=f"{type(exc).__name__}: {exc}".splitlines()[0][:200])


def _as_arrays(values: list) -> list[np.ndarray]:
    return [np.array(v.detach().numpy()) if v is not None else None for v in values]


def _same(a: list, b: list, case: Case) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is None or y is None:
            if x is not y:
                return False
            continue
        if x.shape != y.shape or not np.allclose(x, y, rtol=case.rtol, atol=case.atol):
            return False
    return True


def measure(
    case: Case, libs: dict[str, Any], arrays: dict[str, np.ndarray], settings: Settings
) -> tuple[dict[str, Timing], dict[str, list]]:
    timings: dict[str, Timing] = {}
    results: dict[str, list] = {}
    fns: dict[str, Callable[[], object]] = {}
    for name, lib in libs.items():
        try:
            results[name] = _as_arrays(case.check(lib, case.prepare(lib, arrays)))
            state = case.prepare(lib, arrays)
        except Exception as exc:  # noqa: BLE001 - any failure of the library is a result
            timings[name] = _error(exc)
            continue
        fns[name] = lambda lib=lib, state=state: case.run(lib, state)
    for name, got in median_seconds(fns, settings).items():
        if isinstance(got, Exception):
            timings[name] = _error(got)
            continue
        seconds, repeats, inner = got
        timings[name] = Timing(seconds, repeats, inner)
    return {name: timings[name] for name in libs}, results


def load_ember() -> Any:
    """The ``ember`` meta-package, or a namespace of ember_tensor + ember_autograd."""
    try:
        import ember

        ember.autograd  # noqa: B018 - resolves the slot now, outside the timings
        return ember
    except (ImportError, AttributeError):
        import ember_autograd
        import ember_tensor

        names = {n: getattr(ember_tensor, n) for n in ember_tensor.__all__}
        names.update(
            no_grad=ember_autograd.no_grad,
            enable_grad=ember_autograd.enable_grad,
            autograd=ember_autograd,
            __name__="ember_tensor+ember_autograd",
        )
        return types.SimpleNamespace(**names)


# --------------------------------------------------------------------------------------
# The run


def main(argv: list[str] | None = None) -> int:
    args = parse_args(
        argv,
        __doc__.splitlines()[0],
        threads_help="intra-op threads for both libraries (default: all cores)",
    )
    settings = Settings.make(quick=args.quick, repeats=args.repeats)
    try:
        ember = load_ember()
    except ImportError as exc:
        print(f"bench_autograd: cannot import Ember's autograd ({exc})", file=sys.stderr)
        return 2
    torch = load_torch()

    libs: dict[str, Any] = {"ember": ember}
    versions = {
        "ember-tensor-core": _version("ember-tensor-core", None),
        "ember-autograd": _version("ember-autograd", None),
        "numpy": np.__version__,
    }
    if torch is not None:
        libs["torch"] = torch
        versions["torch"] = _version("torch", torch)
    set_threads(libs, args.threads)

    cases = select(CASES, args.filter)
    if not cases:
        print(f"bench_autograd: no case matches {args.filter!r}", file=sys.stderr)
        return 2
    machine = print_machine(args, versions)
    print_header(f"{'case':<{NAME_W}} {'ember':>9} {'torch':>9} {'ratio':>6} {'target':>7}  check")

    report = Report()
    per_case: dict[str, dict[str, Timing]] = {}
    started = time.perf_counter()
    group = None
    for case in cases:
        if case.group != group:
            group = case.group
            print(f"[{group}]")
        arrays = case.inputs(np.random.default_rng(SEED))
        timings, results = measure(case, libs, arrays, settings)
        per_case[case.name] = timings
        ember_t, torch_t = timings["ember"], timings.get("torch")
        ratio = None
        if torch_t is not None and ember_t.seconds and torch_t.seconds:
            ratio = torch_t.seconds / ember_t.seconds
        if ember_t.error or (torch_t is not None and torch_t.error):
            word, match = "n/a (error)", None
        elif torch_t is None:
            word, match = "", None
        else:
            match = _same(results["ember"], results["torch"], case)
            word = "ok" if match else "MISMATCH"
        mark = report.rank(case.key, ratio, case.target)
        report.note(case.key, ember_t, torch_t, match)
        ratio_text = "-" if ratio is None else f"{ratio:.2f}"
        print(
            f"{case.name:<{NAME_W}} {fmt_time(ember_t.seconds):>9} "
            f"{fmt_time(torch_t.seconds) if torch_t else '-':>9} {ratio_text:>6} "
            f"{fmt_target(case.target):>7}  {word} {mark}".rstrip()
        )
        for name, t in timings.items():
            if t.error:
                print(f"    {name}: {t.error}")
        report.rows.append(result_row(case, timings, ratio, match))
        gc.collect()

    overhead = _recording_overhead(per_case)
    notes = []
    if overhead:
        notes.append(
            f"recording cost per op (fwd in grad mode - fwd on plain tensors) / {CHAIN_OPS}: "
            + ", ".join(f"{k} {fmt_time(v)}" for k, v in overhead.items())
        )
    print_summary(report, torch is not None, settings, notes)
    wall = time.perf_counter() - started
    print(f"run took {wall:.0f} s")

    if args.json:
        out = {
            **run_info(machine, versions, args, settings),
            "chain_ops": CHAIN_OPS,
            "wall_s": wall,
            "results": report.rows,
            "recording_cost_per_op_s": overhead,
            "summary": report.summary(),
        }
        write_json(args.json, out)
    return 1 if report.mismatches or report.errors else 0


def _recording_overhead(per_case: dict[str, dict[str, Timing]]) -> dict[str, float]:
    grad = per_case.get(f"{CHAIN_OPS} ops fwd (grad mode)")
    plain = per_case.get(f"{CHAIN_OPS} ops fwd (no grad inputs)")
    if grad is None or plain is None:
        return {}
    out = {}
    for name, t in grad.items():
        p = plain.get(name)
        if t.seconds is not None and p is not None and p.seconds is not None:
            out[name] = (t.seconds - p.seconds) / CHAIN_OPS
    return out


if __name__ == "__main__":
    sys.exit(main())
