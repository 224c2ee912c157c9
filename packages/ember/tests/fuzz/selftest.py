"""Calls that prove the detectors work: ``make_call(seed, index)`` returns call ``index``
of a fixed script (the seed is ignored) whose Ember side crashes, hangs, leaks an exception,
returns a value different from its PyTorch twin, or agrees with it. Used by
``test_fuzz.py`` through the worker's ``--calls-module``."""

from __future__ import annotations

import os
import signal
import time

from .recipes import Call, Tensor
from .targets import Param, Target

SCRIPT = ("agree", "segfault", "agree", "sleep", "leak", "differ", "raise", "agree")


def agree(x):
    return x + 1


def segfault(x):
    os.kill(os.getpid(), signal.SIGSEGV)


def sleep(x):
    time.sleep(3600)


def leak(x):
    raise SystemError("<built-in method f> returned a result with an exception set")


def differ(x):
    return x + 2


def raise_(x):
    raise RuntimeError("refused")


def make_call(seed: int, index: int) -> Call:
    name = SCRIPT[index % len(SCRIPT)]
    fn = "raise_" if name == "raise" else name
    target = Target(
        name=f"selftest.{name}",
        op=name,
        ember=f"fuzz.selftest.{fn}",
        torch="fuzz.selftest.agree",
        params=(Param("x", "Tensor", True),),
        style="function",
        random=False,
    )
    x = Tensor("a0", "float32", (2,), (1.0, 2.0))
    return Call(index, target, (x,), ())
