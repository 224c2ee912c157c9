"""The cyclic garbage collector's thresholds while Ember's autograd records graphs.

A recorded op leaves a few Python objects (its node, edges and records of its inputs), so a
training step of small ops allocates tens of thousands. With CPython's default thresholds
``(700, 10, 10)`` they survive two young collections within milliseconds, reach the oldest
generation, and make it due for a full collection about every second step; a full
collection walks every tracked object of the process (modules, functions, the program's
own data), which cost a char-RNN training epoch a quarter of its time (PyTorch's graph is
C++ objects that the collector never sees). The graph holds no reference cycles, so
reference counting frees it after ``backward``: a middle generation that is collected ten
times less often lets it die there instead (a char-RNN epoch: 22 ms of collector time ->
9 ms).

At import, :func:`apply` raises the middle generation's threshold from 10 to 100 when the
thresholds are still CPython's defaults; a program that set its own keeps them, and
``EMBER_GC_TUNING=0`` in the environment leaves them alone. Young cycles are still found
every 700 allocations, as before.
"""

from __future__ import annotations

import gc
import os

DEFAULT_THRESHOLDS = (700, 10, 10)
TUNED_THRESHOLDS = (700, 100, 10)


def apply() -> bool:
    """Sets :data:`TUNED_THRESHOLDS` if the thresholds are the defaults and the environment
    allows it; returns whether it did."""
    if os.environ.get("EMBER_GC_TUNING", "1") == "0":
        return False
    if gc.get_threshold() != DEFAULT_THRESHOLDS:
        return False
    gc.set_threshold(*TUNED_THRESHOLDS)
    return True
