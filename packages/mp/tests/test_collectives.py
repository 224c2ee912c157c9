"""all_reduce, broadcast and barrier between local processes, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import ember_mp as mp
import ember_tensor as et
import mp_helpers


def run(target, world, *args, method="spawn"):
    ctx = mp.get_context(method)
    group = mp.ProcessGroup(world, timeout=60, ctx=ctx)
    out = ctx.Queue()
    procs = [ctx.Process(target=target, args=(r, group, *args, out)) for r in range(world)]
    for p in procs:
        p.start()
    results = dict(out.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    return [results[r] for r in range(world)]


@pytest.mark.parametrize(("op", "reduce"), [
    (mp.ReduceOp.SUM, lambda v: v.sum(0)), (mp.ReduceOp.AVG, lambda v: v.mean(0)),
    (mp.ReduceOp.MAX, lambda v: v.max(0)), (mp.ReduceOp.MIN, lambda v: v.min(0)),
    (mp.ReduceOp.PRODUCT, lambda v: v.prod(0))])
def test_all_reduce_matches_numpy(op, reduce):
    rng = np.random.default_rng(0)
    values = rng.standard_normal((3, 1001))  # a length the 3 shares split unevenly
    for got in run(mp_helpers.all_reduce_worker, 3, values, op):
        np.testing.assert_allclose(got, reduce(values), rtol=1e-12)


def test_all_reduce_integers_under_fork():
    values = np.arange(2 * 7, dtype=np.int64).reshape(2, 7)
    for got in run(mp_helpers.all_reduce_worker, 2, values, mp.ReduceOp.SUM, method="fork"):
        np.testing.assert_array_equal(got, values.sum(0))


def test_broadcast():
    values = np.arange(3 * 5, dtype=np.float32).reshape(3, 5)
    for got in run(mp_helpers.broadcast_worker, 3, values, 2):
        np.testing.assert_array_equal(got, values[2])


def test_collectives_need_a_group():
    mp.destroy_process_group()
    with pytest.raises(RuntimeError, match="all_reduce: no process group; call "
                                           r"init_process_group\(group, rank\) first"):
        mp.all_reduce(et.ones(2))
    group = mp.ProcessGroup(2)
    with pytest.raises(ValueError, match=r"rank must be in \[0, 2\), got 2"):
        mp.init_process_group(group, 2)


def test_a_missing_rank_times_out_with_a_clear_error():
    group = mp.ProcessGroup(2, timeout=0.5)
    mp.init_process_group(group, 0)
    try:
        with pytest.raises(RuntimeError, match=r"all_reduce: rank 0 of 2 waited 0.5 s for the "
                                               "other processes of the group"):
            mp.all_reduce(et.ones(4))
    finally:
        mp.destroy_process_group()
