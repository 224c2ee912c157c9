"""PyTorch's OpInfo database run against Ember.

Each OpInfo of ``op_db`` (it ships in the torch wheel; it imports ``expecttest``) generates
its sample inputs with torch. The harness converts them to Ember tensors, calls Ember's op
of the same name (``ember.<name>``, ``ember.linalg.<name>``, ``ember.nn.functional.<name>``;
a Tensor method where torch has only the method) and compares the result with torch's.
Values are compared within the dtype's tolerance, with the dtype name and shape. For
differentiable ops it also compares the float64 gradient for a random cotangent of every
floating output.

An OpInfo passes a check (forward on a dtype, or the gradient) when at least one of its
samples was compared and every compared sample agreed. Samples that torch itself refuses
are skipped. ``reference=True`` runs torch against torch: it finds the checks this harness
can score at all (deterministic, comparable outputs), the denominator of the score.

Groups: ``core`` (torch.* and Tensor methods), ``special``, ``linalg``, ``fft`` and
``nn.functional``, by the OpInfo's name.
"""

from __future__ import annotations

import inspect
import itertools
import math
import types
from dataclasses import dataclass, field

import numpy as np
import torch

import ember

from . import skips

FORWARD_DTYPES = ("float32", "float64", "int64", "bool")
GROUP_PREFIXES = ("special.", "linalg.", "fft.", "nn.functional.")


def op_db():
    """PyTorch's OpInfos (imported on first use: the import takes seconds)."""
    from torch.testing._internal import common_utils
    from torch.testing._internal.common_methods_invocations import op_db as db
    from torch.testing._internal.opinfo import core

    # sample_inputs looks for the calling unittest.TestCase with inspect.stack(), which costs
    # ~0.1 s a call under pytest's deep stacks; there is none here
    common_utils.extract_test_fn = core.extract_test_fn = lambda: None
    return db


def key_of(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def group_of(name: str) -> str:
    for prefix in GROUP_PREFIXES:
        if name.startswith(prefix):
            return prefix[:-1]
    return "core"


class Unsupported(Exception):
    """A sample the harness cannot convert (a layout or argument Ember has no form of)."""


@dataclass
class Outcome:
    """The result of one check: 'pass', 'fail' (with the first difference), 'error' (Ember
    raised where torch did not) or 'none' (no sample could be compared)."""

    status: str
    detail: str = ""


@dataclass
class OpReport:
    key: str
    group: str
    checks: dict[str, Outcome] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        scored = [c for c in self.checks.values() if c.status != "none"]
        return bool(scored) and all(c.status == "pass" for c in scored)


# ----------------------------------------------------------------------------- conversion


def _ember_dtype(dt: torch.dtype):
    got = getattr(ember, str(dt).rsplit(".", 1)[-1], None)
    if got is None:
        raise Unsupported(f"dtype {dt}")
    return got


def _tensor(lib, t: torch.Tensor, grad: bool):
    if t.layout != torch.strided:
        raise Unsupported(f"layout {t.layout}")
    t = t.detach().resolve_conj().resolve_neg()
    if lib is torch:
        out = t.clone()
    else:
        low = t.dtype in (torch.bfloat16, torch.float16)
        arr = (t.float() if low else t).numpy().copy()
        out = ember.from_numpy(arr)
        if low:
            out = out.to(_ember_dtype(t.dtype))
    if grad and t.dtype.is_floating_point or grad and t.is_complex():
        out.requires_grad_(True)
    return out


def convert(lib, x, grad: bool = False, leaves: list | None = None):
    """x (a sample's input, args or kwargs) for lib (ember, or torch for a fresh copy);
    tensors that require grad become leaves of lib's autograd, appended to ``leaves``."""
    if isinstance(x, torch.Tensor):
        wants = grad and x.requires_grad
        out = _tensor(lib, x, wants)
        if wants and leaves is not None:
            leaves.append(out)
        return out
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, (list, tuple)):
        items = [convert(lib, v, grad, leaves) for v in x]
        return items if isinstance(x, list) else tuple(items)
    if isinstance(x, dict):
        return {k: convert(lib, v, grad, leaves) for k, v in x.items()}
    if isinstance(x, torch.dtype):
        return x if lib is torch else _ember_dtype(x)
    if isinstance(x, torch.device):
        return x if lib is torch else str(x)
    if isinstance(x, torch.memory_format):
        if lib is torch:
            return x
        raise Unsupported(f"memory_format {x}")
    if isinstance(x, torch.Generator):
        raise Unsupported("a torch.Generator")
    if callable(x) and not isinstance(x, type):
        raise Unsupported("a callable argument")
    return x


def _numpy(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        t = t.detach().resolve_conj().resolve_neg()
        if t.dtype == torch.complex32:
            t = t.to(torch.complex64)
        return (t.float() if t.dtype in (torch.bfloat16, torch.float16) else t).numpy()
    name = str(t.dtype).rsplit(".", 1)[-1]
    return (t.float() if name in ("bfloat16", "float16") else t).detach().numpy()


def _flatten(out) -> list:
    if isinstance(out, (tuple, list)):
        return [v for o in out for v in _flatten(o)]
    return [out]


def _tolerance(name: str) -> tuple[float, float]:
    return {"float16": (1e-2, 1e-2), "bfloat16": (2e-2, 2e-2), "float32": (1.3e-5, 1e-5),
            "complex64": (1.3e-5, 1e-5)}.get(name, (1e-7, 1e-7))


def _is_tensor(x) -> bool:
    return isinstance(x, (torch.Tensor, ember.Tensor))


def compare(got, want, where: str = "output", tolerances=None) -> str | None:
    """None when got (Ember's, or torch's in reference mode) matches want (torch's), else
    the first difference; tolerances: wider (rtol, atol) by dtype name (skips.TOLERANCES)."""
    g, w = _flatten(got), _flatten(want)
    if len(g) != len(w):
        return f"{where}: {len(g)} outputs, torch has {len(w)}"
    for i, (a, b) in enumerate(zip(g, w)):
        at = f"{where} {i}" if len(w) > 1 else where
        if _is_tensor(b):
            if not _is_tensor(a):
                return f"{at}: got {type(a).__name__}, torch has a tensor"
            an, bn = str(a.dtype).rsplit(".", 1)[-1], str(b.dtype).rsplit(".", 1)[-1]
            if an != bn:
                return f"{at}: dtype {an}, torch has {bn}"
            if tuple(a.shape) != tuple(b.shape):
                return f"{at}: shape {tuple(a.shape)}, torch has {tuple(b.shape)}"
            x, y = _numpy(a), _numpy(b)
            if x.dtype.kind in "fc":
                rtol, atol = (tolerances or {}).get(bn) or _tolerance(bn)
                if not np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
                    bad = ~np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True)
                    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: nan
                        err = np.max(np.abs(x[bad] - y[bad]))  # nan for a misplaced NaN too
                    return (f"{at}: values differ ({int(bad.sum())} of {bad.size}, "
                            f"max abs err {err:.3g})")
            elif not np.array_equal(x, y):
                return f"{at}: values differ"
        elif isinstance(b, (bool, int, float, complex)):
            if _is_tensor(a) or not isinstance(a, (bool, int, float, complex)):
                return f"{at}: got {type(a).__name__}, torch has {type(b).__name__}"
            if not (a == b or (isinstance(b, float) and math.isnan(b) and math.isnan(a))):
                if not (isinstance(b, float) and math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)):
                    return f"{at}: {a!r}, torch has {b!r}"
        elif b is None:
            if a is not None:
                return f"{at}: got {type(a).__name__}, torch has None"
        elif isinstance(b, torch.Size):
            if _is_tensor(a) or tuple(a) != tuple(b):
                return f"{at}: {a!r}, torch has {tuple(b)}"
        elif isinstance(b, torch.dtype):
            if str(a).rsplit(".", 1)[-1] != str(b).rsplit(".", 1)[-1]:
                return f"{at}: {a!r}, torch has {b!r}"
    return None


# ----------------------------------------------------------------------------- calling


def _resolve(name: str):
    obj = ember
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _lambda_on_ember(op):
    """An OpInfo whose op is a lambda calling torch (``lambda tensors, equation:
    torch.einsum(equation, tensors)``) run with ``torch`` meaning ember, so that its
    argument order is kept; None for other ops."""
    fn = getattr(op, "op", None)
    if getattr(fn, "__name__", "") != "<lambda>" or "torch" not in fn.__code__.co_names:
        return None
    return _on_ember(fn)


def _on_ember(fn):
    """fn (a torch lambda or function of the OpInfo database) with ``torch`` meaning ember."""
    code = getattr(fn, "__code__", None)
    if code is None or "torch" not in code.co_names:
        return fn
    moved = types.FunctionType(code, {**fn.__globals__, "torch": ember}, fn.__name__,
                               fn.__defaults__, fn.__closure__)
    moved.__kwdefaults__ = fn.__kwdefaults__
    return moved


def _plain(f, *args, **kwargs):
    return f(*args, **kwargs)


def _gradcheck_wrapper(op, x, args, kwargs):
    """The OpInfo's gradcheck wrapper when the sample's arguments suffice to call it (some
    take keyword arguments PyTorch's own tests add), else a plain call."""
    wrap = getattr(op, "gradcheck_wrapper", None)
    if wrap is None:
        return _plain
    try:
        inspect.signature(wrap).bind(op, x, *args, **kwargs)
    except TypeError:
        return _plain
    return wrap


def _processed(s, out, on_ember: bool):
    """out passed through the sample's output_process_fn_grad (what PyTorch differentiates:
    eigh's eigenvectors by absolute value, for one), if it has one."""
    post = getattr(s, "output_process_fn_grad", None)
    if post is None:
        return out
    return (_on_ember(post) if on_ember else post)(out)


def ember_callable(op):
    """Ember's function of the OpInfo's name (through the OpInfo's own lambda when its op is
    one), else a call of the Tensor method, else None."""
    wrapped = _lambda_on_ember(op)
    if wrapped is not None and _resolve(op.name) is not None:
        return wrapped
    fn = _resolve(op.name)
    if fn is not None and callable(fn):
        return fn
    method = op.name.rsplit(".", 1)[-1]
    torch_fn = torch
    for part in op.name.split("."):
        torch_fn = getattr(torch_fn, part, None)
    if "." in op.name or (callable(torch_fn) and not isinstance(torch_fn, torch.dtype)):
        return None  # torch has the function: Ember must have it too (not only the method)

    def call(x, *args, **kwargs):
        m = getattr(x, method, None)
        if m is None:
            raise AttributeError(f"'Tensor' object has no attribute {method!r}")
        return m(*args, **kwargs) if callable(m) else m

    return call


def _samples(op, dtype, grad: bool, limit: int):
    """The first ``limit`` samples of op on dtype, less those that draw random numbers
    (skips.RANDOM_SAMPLES)."""
    random = skips.RANDOM_SAMPLES.get(op.name, (lambda s: False, ""))[0]
    try:
        samples = (s for s in op.sample_inputs("cpu", dtype, requires_grad=grad)
                   if not random(s))
        return list(itertools.islice(samples, limit))
    except Exception:  # noqa: BLE001 - a sample generator that fails for this dtype
        return []


def _call_torch(op, s):
    torch.manual_seed(0)
    return op(s.input, *s.args, **s.kwargs)


def _short(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:160] if text else ''}"


def _sample_for(lib, s, grad: bool = False, leaves: list | None = None):
    """(input, args, kwargs) of the sample s converted for lib."""
    return (convert(lib, s.input, grad, leaves), convert(lib, list(s.args), grad, leaves),
            convert(lib, dict(s.kwargs), grad, leaves))


def _candidate(op, reference: bool):
    """What is checked against torch: Ember's op, or torch's again (seeded as the reference
    call is); None when Ember has no op of that name."""
    if reference:
        def again(x, *args, **kwargs):
            torch.manual_seed(0)
            return op(x, *args, **kwargs)

        return again
    return ember_callable(op)


def check_forward(op, dtype: torch.dtype, limit: int, reference: bool) -> Outcome:
    """The first ``limit`` samples of op on dtype, Ember (or torch again) against torch."""
    fn = _candidate(op, reference)
    if fn is None:
        return Outcome("error", f"no ember.{op.name}")
    compared = 0
    for s in _samples(op, dtype, False, limit):
        try:
            want = _call_torch(op, s)
        except Exception:  # noqa: BLE001 - torch refuses this sample: not scored
            continue
        try:
            x, args, kwargs = _sample_for(torch if reference else ember, s)
        except Unsupported:
            continue
        try:
            got = fn(x, *args, **kwargs)
        except Exception as e:  # noqa: BLE001 - Ember raised where torch computed
            return Outcome("error", f"sample {compared}: {_short(e)}")
        if op.name in skips.PHASE_FREE_OUTPUTS:
            at = skips.PHASE_FREE_OUTPUTS[op.name][0]
            got = _phase_fixed(got, at)
            want = _phase_fixed(want, at)
        if op.name in skips.SORT_INDICES and not s.kwargs.get("stable", False):
            diff = _sorts(s, got, want, op.name == "sort")
        elif op.name in skips.UNSPECIFIED_INDICES:
            at = skips.UNSPECIFIED_INDICES[op.name][0]
            diff = compare(got[0], want[0], "output 0") or _indices_select(s, got, at)
        else:
            diff = compare(got, want, tolerances=skips.tolerances(op.name))
        if diff is not None:
            return Outcome("fail", f"sample {compared}: {diff}")
        compared += 1
    return Outcome("pass") if compared else Outcome("none")


def _phase_fixed(out, at: int):
    """out with the vectors (columns) of output ``at`` scaled so that each one's largest
    element (the first of equal ones) is real and positive, as NumPy arrays."""
    out = list(out)
    v = _numpy(out[at])
    if v.size == 0:
        return tuple(out)
    idx = np.argmax(np.abs(v).round(6), axis=-2)[..., None, :]
    big = np.take_along_axis(v, idx, axis=-2)
    phase = np.where(big == 0, 1, big / np.where(big == 0, 1, np.abs(big)))
    out[at] = torch.from_numpy(np.ascontiguousarray(v / phase).astype(v.dtype))
    out = [torch.from_numpy(np.ascontiguousarray(_numpy(o))) if _is_tensor(o) else o
           for o in out]
    return tuple(out)


def _sorts(s, got, want, with_values: bool) -> str | None:
    """None when got's indices (the second output of sort, argsort's only one) order the
    sample's input along its dim as torch's order does (and sort's values match)."""
    if with_values:
        diff = compare(got[0], want[0], "output 0")
        if diff is not None:
            return diff
    x = s.input.detach()
    if x.dim() == 0:
        return None
    dim = s.kwargs.get("dim", s.args[0] if s.args else -1)
    mine = torch.from_numpy(_numpy(got[1] if with_values else got).copy())
    theirs = want[1] if with_values else want
    if tuple(mine.shape) != tuple(theirs.shape):
        return f"indices: shape {tuple(mine.shape)}, torch has {tuple(theirs.shape)}"
    a, b = torch.gather(x, dim, mine), torch.gather(x, dim, theirs)
    if not bool(((a == b) | ((a != a) & (b != b))).all()):  # NaNs sort alike too
        return "indices: they do not order the input as torch's do"
    return None


def _indices_select(s, got, at: int) -> str | None:
    """None when the indices of a (values, indices) result pick those values out of the
    sample's input along its dim (args[at], else -1; keepdim follows it): for ops whose
    choice among equal values is unspecified."""
    x = s.input.detach()
    dim = s.kwargs.get("dim", s.args[at] if len(s.args) > at else -1)
    keepdim = s.kwargs.get("keepdim", s.args[at + 1] if len(s.args) > at + 1 else False)
    values, idx = (torch.from_numpy(_numpy(t).copy()) for t in got)
    if x.dim() == 0:
        return None if idx.item() == 0 else "output 1: index of a 0-d input is not 0"
    if not keepdim:
        values, idx = values.unsqueeze(dim), idx.unsqueeze(dim)
    picked = torch.gather(x, dim, idx)
    if not torch.equal(picked.to(values.dtype), values):
        return "output 1: the indices do not select the values"
    return None


def _floating(t) -> bool:
    if not _is_tensor(t):
        return False
    name = str(t.dtype).rsplit(".", 1)[-1]
    return name.startswith(("float", "complex", "bfloat"))


def check_gradient(op, limit: int, reference: bool) -> Outcome:
    """float64 gradients of every input requiring grad for one random cotangent per
    floating output, Ember (or torch again) against torch."""
    if not op.supports_autograd or torch.float64 not in op.supported_backward_dtypes("cpu"):
        return Outcome("none")
    if op.name in skips.WRONG_TORCH_GRADIENTS:
        return Outcome("none")
    fn = _candidate(op, reference)
    if fn is None:
        return Outcome("error", f"no ember.{op.name}")
    rng = np.random.default_rng(7)
    compared = 0
    for s in _samples(op, torch.float64, True, limit):
        leaves_t: list = []
        try:
            x, args, kwargs = _sample_for(torch, s, True, leaves_t)
            torch.manual_seed(0)
            wrap = _gradcheck_wrapper(op, x, args, kwargs)
            outs = [o for o in _flatten(_processed(s, wrap(op, x, *args, **kwargs), False))
                    if _floating(o) and o.requires_grad]
            if not outs or not leaves_t:
                continue
            cot = [rng.standard_normal(tuple(o.shape)) for o in outs]
            cot = [c + 1j * rng.standard_normal(c.shape) if o.is_complex() else c
                   for c, o in zip(cot, outs)]
            want = torch.autograd.grad(outs, leaves_t, [torch.tensor(c, dtype=o.dtype)
                                                        for c, o in zip(cot, outs)],
                                       allow_unused=True)
        except Exception:  # noqa: BLE001 - torch cannot differentiate this sample
            continue
        leaves: list = []
        try:
            x, args, kwargs = _sample_for(torch if reference else ember, s, True, leaves)
        except Unsupported:
            continue
        try:
            # the OpInfo's gradcheck wrapper (a Hermitian input made of the sample: A + A^H)
            out = _processed(s, (wrap if reference else _on_ember(wrap))(fn, x, *args, **kwargs),
                             not reference)
            mine = [o for o in _flatten(out) if _floating(o)]
            if len(mine) < len(outs):
                return Outcome("fail", f"sample {compared}: {len(mine)} differentiable outputs, "
                                       f"torch has {len(outs)}")
            mine = [o for o in mine if o.requires_grad][:len(outs)]
            if len(mine) != len(outs):
                return Outcome("fail", f"sample {compared}: outputs without grad_fn")
            grad_fn = torch.autograd.grad if reference else ember.autograd.grad
            make = (lambda c, o: torch.tensor(c, dtype=o.dtype)) if reference else (
                lambda c, o: ember.from_numpy(np.array(c)).to(o.dtype))
            got = grad_fn(mine, leaves, [make(c, o) for c, o in zip(cot, mine)],
                          allow_unused=True)
        except Exception as e:  # noqa: BLE001 - Ember raised where torch differentiated
            return Outcome("error", f"sample {compared}: {_short(e)}")
        for i, (g, w) in enumerate(zip(got, want)):
            if w is None or g is None:
                zero = w if g is None else g
                if zero is not None and np.any(_numpy(zero) != 0):
                    return Outcome("fail", f"sample {compared}: input {i}: gradient missing")
                continue
            diff = compare(g, w, f"gradient of input {i}", skips.tolerances(op.name))
            if diff is not None:
                return Outcome("fail", f"sample {compared}: {diff}")
        compared += 1
    return Outcome("pass") if compared else Outcome("none")


def run(op, *, limit: int = 3, reference: bool = False, gradient: bool = True) -> OpReport:
    """Every check of one OpInfo."""
    report = OpReport(key_of(op), group_of(op.name))
    supported = op.supported_dtypes("cpu")
    def forward(dt):
        return lambda: check_forward(op, dt, limit, reference)

    checks = [(name, forward(getattr(torch, name)))
              for name in FORWARD_DTYPES if getattr(torch, name) in supported]
    if gradient:
        checks.append(("grad", lambda: check_gradient(op, limit, reference)))
    for name, check in checks:
        try:
            report.checks[name] = check()
        except Exception as e:  # noqa: BLE001 - the harness itself failed on this op
            report.checks[name] = Outcome("error", f"harness: {_short(e)}")
    return report


@dataclass
class Score:
    """One OpInfo scored: ``scored`` when torch passes the harness against itself (the
    checks it passes are the ones Ember is held to), ``passed`` when Ember passes them all,
    ``failure`` the first check Ember fails."""

    key: str
    group: str
    scored: bool
    passed: bool
    failure: str | None = None


def score(op, *, limit: int = 3) -> Score:
    ref = run(op, limit=limit, reference=True)
    if not ref.passed:
        return Score(ref.key, ref.group, False, False)
    mine = run(op, limit=limit)
    held = {k: c for k, c in mine.checks.items() if ref.checks[k].status == "pass"}
    bad = [f"{k}: {c.status} {c.detail}".strip() for k, c in held.items() if c.status != "pass"]
    return Score(ref.key, ref.group, True, bool(held) and not bad, bad[0] if bad else None)


def scored_ops():
    """The OpInfos the harness scores (skips.py says why the others are not), by key."""
    return {key_of(op): op for op in op_db() if skips.reason(op.name) is None}
