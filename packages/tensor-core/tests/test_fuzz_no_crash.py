"""No input from Python may crash the process: every public op is called with many odd
argument combinations in a child process; each call must return or raise a Python
exception (the child exits 0). Ember only: the point is the C++ core's input checking."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    r"""
    import itertools, random, sys
    import ember_tensor as et

    random.seed(int(sys.argv[1]))
    names = [n for n in et.__all__ if callable(getattr(et, n)) and n not in (
        "set_num_threads", "set_default_dtype", "manual_seed", "set_printoptions",
        "Generator", "Tensor", "device", "dtype", "Size", "empty", "empty_like")]
    names = names[int(sys.argv[2])::int(sys.argv[3])]

    def tensors():
        yield et.tensor(1.5)
        yield et.zeros(0)
        yield et.zeros(0, 3)
        yield et.arange(6).reshape(2, 3)
        yield et.arange(6.0).reshape(2, 3).t()
        yield et.ones(3, dtype=et.bool)
        yield et.ones(2, 1, 3, dtype=et.float16)
        yield et.tensor([-1, 0, 7])
        yield et.tensor([[0, 1], [1, 0]])
        yield et.ones(4, dtype=et.uint8)[::2]

    others = [None, 0, 1, -1, 2, -5, 10**12, 2**63 - 1, 0.5, float("nan"), True, (), (0, 1),
              [1, -1], [0, 0], "x", et.float32, et.int64]
    pool = list(tensors()) + others
    calls = 0
    for name in names:
        fn = getattr(et, name)
        args_lists = [()] + [(a,) for a in pool]
        args_lists += [(random.choice(pool), random.choice(pool)) for _ in range(60)]
        args_lists += [tuple(random.choice(pool) for _ in range(3)) for _ in range(60)]
        for args in args_lists:
            try:
                fn(*args)
            except Exception:
                pass
            calls += 1
        # methods and in-place forms on each tensor
        for t in tensors():
            for meth in (name, name + "_"):
                try:
                    m = getattr(t, meth, None)
                except Exception:  # a property that refuses this tensor (t.imag of a real one)
                    continue
                if m is None:
                    continue
                for args in [()] + [(random.choice(pool),) for _ in range(15)] + \
                        [(random.choice(pool), random.choice(pool)) for _ in range(15)]:
                    try:
                        m(*args)
                    except Exception:
                        pass
                    calls += 1
    # indexing
    for t in tensors():
        for idx in others + list(tensors()) + [slice(None, None, -1), (None, ...), (..., None, 0),
                                                (0, 0, 0, 0), slice(5, 1), Ellipsis]:
            try:
                t[idx]
            except Exception:
                pass
            try:
                t[idx] = 1
            except Exception:
                pass
    print("calls", calls)
    """
)

SHARDS = 4


@pytest.mark.parametrize("shard", range(SHARDS))
def test_random_calls_never_crash(ember_only, shard, tmp_path):
    # in an empty directory: save("x") and load("x") write and read files there
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, "1234", str(shard), str(SHARDS)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert proc.returncode == 0, (
        f"the child crashed or failed (exit code {proc.returncode}):\n{proc.stderr[-3000:]}"
    )
    assert "calls" in proc.stdout
