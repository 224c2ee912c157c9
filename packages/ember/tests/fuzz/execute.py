"""Run one call in Ember and in PyTorch and classify the outcome.

``run_call(call, mark)`` calls ``mark("E")`` before it touches Ember (building the
arguments, the call, reading the results back) and ``mark("T")`` before it touches PyTorch,
so a parent that watches the marks knows which library a crash or hang belongs to. It
returns an ``Outcome``; ``kind`` is one of

- ``ok``: both returned equal results (and left equal arguments), or both raised;
- ``leaked-exception``: Ember raised ``SystemError`` (a C++ error with a Python exception
  set, or a result returned with one);
- ``raises-only-in-ember`` / ``raises-only-in-torch``;
- ``structure-mismatch``, ``shape-mismatch``, ``dtype-mismatch``, ``value-mismatch``: of
  the results; ``mutation-mismatch``: of an argument the call wrote to;
- ``explained``: a one-sided exception that ``explain`` attributes to a documented
  difference (``detail`` names it);
- ``compare-error``: reading a result or argument back failed;
- ``build-error``: the arguments themselves could not be built (a fuzzer or tensor
  factory problem, reported so it is never silent).

``error_types`` is set when both raised with different exception types (reported apart,
not a failure: PyTorch raises RuntimeError where Ember raises TypeError or ValueError).
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass

from .compare import compare, rule_for
from .explain import ALIASED_INPUT, aliased, explain, explain_values, unaliased_args
from .targets import TORCH_TRUSTS_INDICES


@dataclass
class Outcome:
    kind: str
    detail: str = ""
    ember_error: str = ""
    torch_error: str = ""
    error_types: tuple[str, str] | None = None


def _describe(exc: BaseException | None) -> str:
    if exc is None:
        return ""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300] if text else ''}"


def _invoke(fn, args, kwargs):
    try:
        return fn(*args, **kwargs), None
    except Exception as exc:  # everything a call may raise is data here
        return None, exc


# EMBER_FUZZ_EMBER_ONLY=1: never call PyTorch (is a crash Ember's own, or heap corruption
# left by a PyTorch kernel given arguments it does not check?)
_EMBER_ONLY = os.environ.get("EMBER_FUZZ_EMBER_ONLY") == "1"


def run_call(call, mark=lambda phase: None) -> Outcome:
    import torch

    import ember

    target = call.target
    mark("E")
    try:
        e_fn, e_args, e_kwargs, e_env = call.build(ember)
    except SystemError as exc:
        return Outcome("leaked-exception", "while building arguments", _describe(exc))
    except Exception as exc:
        return Outcome("build-error", f"ember: {_describe(exc)}")
    e_res, e_exc = _invoke(e_fn, e_args, e_kwargs)
    if isinstance(e_exc, SystemError):
        return Outcome("leaked-exception", "", _describe(e_exc))
    if target.torch is None or _EMBER_ONLY or target.op in TORCH_TRUSTS_INDICES:
        # No twin: still read the result back, which exercises Ember's conversions.
        try:
            repr(e_res)
        except SystemError as exc:
            return Outcome("leaked-exception", "repr of the result", _describe(exc))
        except Exception:  # a result that cannot be printed is checked by its own target
            pass
        return Outcome("ok")
    mark("T")
    try:
        t_fn, t_args, t_kwargs, t_env = call.build(torch)
    except Exception as exc:
        return Outcome("build-error", f"torch: {_describe(exc)}")
    t_res, t_exc = _invoke(t_fn, t_args, t_kwargs)
    mark("E")
    out = _classify(call, e_res, e_exc, e_env, t_res, t_exc, t_env)
    del e_res, e_env, e_args, e_kwargs, e_fn
    gc.collect(0)
    return out


def _agrees_unaliased(call, e_res, rule) -> bool:
    """Whether PyTorch, given a copy for each argument that is another's tensor (``out=a``
    with ``a`` an input), returns Ember's result."""
    if not aliased(call):
        return False
    import torch

    try:
        fn, args, kwargs, _ = call.build(torch)
        args, kwargs = list(args), dict(kwargs)
        unaliased_args(call, args, kwargs)
        res, exc = _invoke(fn, args, kwargs)
        return exc is None and not compare(e_res, res, rule)
    except Exception:  # no comparable twin: the difference stays reported
        return False


def _classify(call, e_res, e_exc, e_env, t_res, t_exc, t_env) -> Outcome:
    e_err, t_err = _describe(e_exc), _describe(t_exc)
    if e_exc is not None and t_exc is not None:
        e_type, t_type = type(e_exc).__name__, type(t_exc).__name__
        return Outcome("ok", "", e_err, t_err, (e_type, t_type) if e_type != t_type else None)
    if e_exc is not None or t_exc is not None:
        reason = explain(call, e_exc, t_exc, t_res, e_env)
        if reason:
            return Outcome("explained", reason, e_err, t_err)
        side = "ember" if e_exc is not None else "torch"
        return Outcome(f"raises-only-in-{side}", "", e_err, t_err)
    rule = rule_for(call.target)
    try:
        found = compare(e_res, t_res, rule)
    except SystemError as exc:
        return Outcome("leaked-exception", "reading the result", _describe(exc))
    except Exception as exc:  # e.g. .numpy() of a result fails: reported, never hidden
        return Outcome("compare-error", f"reading the result: {_describe(exc)}")
    if found:
        reason = explain_values(call, found[0], found[1], e_env)
        if reason is None and _agrees_unaliased(call, e_res, rule):
            reason = ALIASED_INPUT
        if reason:
            return Outcome("explained", reason)
        return Outcome(f"{found[0]}-mismatch", found[1])
    for var, e_t in e_env.items():
        try:
            found = compare(e_t, t_env[var], rule, var)
        except SystemError as exc:
            return Outcome("leaked-exception", f"reading {var}", _describe(exc))
        except Exception as exc:
            return Outcome("compare-error", f"reading {var}: {_describe(exc)}")
        if found:
            reason = explain_values(call, "mutation", found[1], e_env)
            if reason:
                return Outcome("explained", reason)
            return Outcome("mutation-mismatch", found[1])
    return Outcome("ok")
