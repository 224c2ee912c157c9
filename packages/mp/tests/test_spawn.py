"""spawn: every process runs, the first failure reaches the parent with its traceback, and
the other processes are terminated."""

from __future__ import annotations

import time

import pytest

import ember_mp as mp
import mp_helpers


def test_spawn_runs_every_process(tmp_path):
    assert mp.spawn(mp_helpers.spawned_ok, args=(str(tmp_path),), nprocs=3) is None
    assert sorted(p.read_text() for p in tmp_path.iterdir()) == ["0", "1", "4"]


def test_join_false_gives_the_context(tmp_path):
    context = mp.spawn(mp_helpers.spawned_ok, args=(str(tmp_path),), nprocs=2, join=False)
    assert isinstance(context, mp.ProcessContext) and len(context.pids()) == 2
    while not context.join(timeout=30):
        pass
    assert len(list(tmp_path.iterdir())) == 2


def test_child_exception_reaches_the_parent_and_others_stop():
    start = time.monotonic()
    with pytest.raises(mp.ProcessRaisedException) as info:
        mp.spawn(mp_helpers.spawned_raises, nprocs=3)
    assert time.monotonic() - start < 30  # the sleeping ones were terminated
    err = info.value
    assert err.error_index == 1
    assert "-- Process 1 terminated with the following error:" in str(err)
    assert "ValueError: bad value in process 1" in str(err)
    assert "in spawned_raises" in str(err)  # the child's traceback


def test_exit_code_and_signal():
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit "
                                                        "code 3") as info:
        mp.spawn(mp_helpers.spawned_exits, nprocs=2)
    assert info.value.exit_code == 3
    with pytest.raises(mp.ProcessExitedException, match="terminated with signal SIGKILL"):
        mp.start_processes(mp_helpers.spawned_killed, nprocs=1, start_method="fork")


def test_nprocs_must_be_positive():
    with pytest.raises(ValueError, match="nprocs must be at least 1, got 0"):
        mp.spawn(mp_helpers.spawned_killed, nprocs=0)
