"""ember_tensor.profiler: events, nesting, shapes, averages, tables, Chrome traces, schedules,
threads and the (faked) GPU side, checked on the CPU; structure compared with torch.profiler.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
import warnings

import pytest
import torch
import torch.profiler as tprof

import ember_tensor as et
from ember_tensor import _C
from ember_tensor import profiler as prof_mod
from ember_tensor.profiler import ProfilerAction, ProfilerActivity, profile, record_function

pytestmark = pytest.mark.usefixtures("ember_only")

CPU = [ProfilerActivity.CPU]


def cpu_events(p) -> list:
    return [e for e in p.events() if e.device_type == "cpu"]


def named(events, name: str) -> list:
    return [e for e in events if e.name == name]


def one(events, name: str):
    found = named(events, name)
    assert len(found) == 1, f"{name}: {len(found)} events in {[e.name for e in events]}"
    return found[0]


def model_step(lib, x, w, b):
    """The small model-like sequence of the tests: matmul, add, relu, sum."""
    return lib.matmul(x, w).add(b).relu().sum()


def inputs(lib):
    return lib.ones(4, 8), lib.ones(8, 16), lib.ones(16)


def check_nesting(events) -> None:
    """Every event's interval lies within its parent's, on the parent's thread."""
    for e in events:
        assert e.time_range.end >= e.time_range.start
        p = e.cpu_parent
        if p is not None:
            assert p.thread == e.thread
            assert p.time_range.start <= e.time_range.start
            assert e.time_range.end <= p.time_range.end
            assert e in p.cpu_children


def top_names(events) -> list[str]:
    return [e.name for e in events if e.cpu_parent is None]


# ---------------------------------------------------------------------------------------------
# events and nesting


def test_model_sequence_names_order_and_times():
    x, w, b = inputs(et)
    with profile(activities=CPU) as p:
        model_step(et, x, w, b)
    events = cpu_events(p)
    assert top_names(events) == ["ember::matmul", "ember::add", "ember::relu", "ember::sum"]
    for e in events:
        assert e.cpu_time_total >= 0 and e.self_cpu_time_total >= 0
        assert e.thread == threading.get_native_id()
        assert e.cat == "cpu_op"
    check_nesting(events)
    # the same top-level structure as PyTorch's, up to the namespace
    tx, tw, tb = inputs(torch)
    with tprof.profile(activities=[tprof.ProfilerActivity.CPU]) as tp:
        model_step(torch, tx, tw, tb)
    torch_top = [e.name for e in tp.events() if e.cpu_parent is None]
    assert [n.split("::")[1] for n in top_names(events)] == [n.split("::")[1] for n in torch_top]


def test_composite_op_contains_its_ops():
    x, w, b = inputs(et)
    with profile(activities=CPU) as p:
        et.linear(x, w.t(), b)
    events = cpu_events(p)
    linear = one(events, "ember::linear")
    assert linear.cpu_parent is None
    assert "ember::addmm" in [c.name for c in linear.cpu_children]
    assert linear.self_cpu_time_total <= linear.cpu_time_total
    check_nesting(events)
    # PyTorch's linear contains its addmm too
    tx, tw, tb = inputs(torch)
    with tprof.profile(activities=[tprof.ProfilerActivity.CPU]) as tp:
        torch.nn.functional.linear(tx, tw.t(), tb)
    tlinear = next(e for e in tp.events() if e.name == "aten::linear")
    assert "aten::addmm" in [c.name for c in tlinear.cpu_children]


def test_to_getitem_setitem_are_recorded_with_their_inner_ops():
    x = et.ones(4, 4)
    with profile(activities=CPU, record_shapes=True) as p:
        y = x.to(et.float64)
        x[1:3] = 2.0
        z = x[et.tensor([0, 2])]
    assert y.dtype == et.float64 and z.shape == (2, 4)
    events = cpu_events(p)
    to = one(events, "ember::to")
    assert "ember::copy" in [c.name for c in to.cpu_children]
    assert to.input_shapes[0] == [4, 4]
    one(events, "ember::__setitem__")
    getitem = one(events, "ember::__getitem__")
    assert getitem.input_shapes == [[4, 4], [2]]
    check_nesting(events)


def test_record_function_contains_its_ops_and_nests():
    x, w, b = inputs(et)
    with profile(activities=CPU) as p:
        with record_function("model"):
            with record_function("forward"):
                model_step(et, x, w, b)
            et.relu(x)
    events = cpu_events(p)
    model, forward = one(events, "model"), one(events, "forward")
    assert model.cat == forward.cat == "user_annotation"
    assert model.cpu_parent is None and forward.cpu_parent is model
    assert [c.name for c in forward.cpu_children] == [
        "ember::matmul",
        "ember::add",
        "ember::relu",
        "ember::sum",
    ]
    assert [c.name for c in model.cpu_children] == ["forward", "ember::relu"]
    check_nesting(events)
    # torch: a record_function range contains its ops the same way
    tx, tw, tb = inputs(torch)
    with tprof.profile(activities=[tprof.ProfilerActivity.CPU]) as tp:
        with tprof.record_function("forward"):
            model_step(torch, tx, tw, tb)
    tforward = next(e for e in tp.events() if e.name == "forward")
    assert [c.name.split("::")[1] for c in tforward.cpu_children] == [
        c.name.split("::")[1] for c in forward.cpu_children
    ]


def test_record_function_as_decorator_gives_one_range_per_call():
    @record_function("fact")
    def fact(n):
        return et.ones(1) if n == 0 else fact(n - 1).mul(n)

    with profile(activities=CPU) as p:
        assert fact(3).item() == 6.0
    ranges = named(cpu_events(p), "fact")
    assert len(ranges) == 4
    depth = [0] * 4
    for r in ranges:  # each recursive call nests in the previous one
        d, q = 0, r.cpu_parent
        while q is not None:
            d, q = d + 1, q.cpu_parent
        depth[d] += 1
    assert depth == [1, 1, 1, 1]
    check_nesting(cpu_events(p))


def test_an_op_that_raises_is_still_a_closed_event():
    a, b = et.ones(2, 3), et.ones(4, 5)
    with profile(activities=CPU) as p:
        with pytest.raises(RuntimeError):
            et.matmul(a, b)
        et.relu(a)
    events = cpu_events(p)
    assert top_names(events) == ["ember::matmul", "ember::relu"]
    check_nesting(events)


# ---------------------------------------------------------------------------------------------
# record_shapes, key_averages, table


def test_record_shapes_match_the_inputs_and_torch():
    x, y = et.ones(4, 8), et.ones(4, 8, dtype=et.float64)
    w = et.ones(8, 16)
    with profile(activities=CPU, record_shapes=True) as p:
        et.add(x, y)
        et.matmul(x, w)
        et.cat([x, x], 0)
    events = cpu_events(p)
    add = one(events, "ember::add")
    assert add.input_shapes == [[4, 8], [4, 8], []]
    assert add.input_types == ["float32", "float64", "Scalar"]
    assert one(events, "ember::matmul").input_shapes == [[4, 8], [8, 16]]
    assert one(events, "ember::cat").input_shapes == [[[4, 8], [4, 8]], []]
    tx, ty, tw = torch.ones(4, 8), torch.ones(4, 8, dtype=torch.float64), torch.ones(8, 16)
    with tprof.profile(activities=[tprof.ProfilerActivity.CPU], record_shapes=True) as tp:
        torch.add(tx, ty)
        torch.matmul(tx, tw)
    tev = {e.name: e for e in tp.events() if e.cpu_parent is None}
    assert add.input_shapes == tev["aten::add"].input_shapes
    assert one(events, "ember::matmul").input_shapes == tev["aten::matmul"].input_shapes


def test_without_record_shapes_there_are_none():
    with profile(activities=CPU) as p:
        et.add(et.ones(2), et.ones(2))
    assert one(cpu_events(p), "ember::add").input_shapes == []


def test_key_averages_counts_equal_the_calls():
    x = et.ones(3, 3)
    with profile(activities=CPU, record_shapes=True) as p:
        for _ in range(3):
            et.add(x, x)
        for _ in range(2):
            et.relu(x)
        et.add(et.ones(2), et.ones(2))
    avg = {a.key: a for a in p.key_averages()}
    assert avg["ember::add"].count == 4
    assert avg["ember::relu"].count == 2
    events = cpu_events(p)
    assert avg["ember::add"].cpu_time_total == pytest.approx(
        sum(e.cpu_time_total for e in named(events, "ember::add"))
    )
    assert avg["ember::relu"].cpu_time == pytest.approx(avg["ember::relu"].cpu_time_total / 2)
    by_shape = {(a.key, str(a.input_shapes)): a.count for a in p.key_averages(True)}
    assert by_shape[("ember::add", "[[3, 3], [3, 3], []]")] == 3
    assert by_shape[("ember::add", "[[2], [2], []]")] == 1


def test_table_has_the_op_names_columns_and_sorts():
    x = et.ones(64, 64)
    with profile(activities=CPU) as p:
        for _ in range(5):
            et.matmul(x, x)
        et.relu(x)
    averages = p.key_averages()
    table = averages.table(sort_by="cpu_time_total", row_limit=10)
    lines = table.splitlines()
    assert (
        lines[1].split()
        == "Name Self CPU % Self CPU CPU total % CPU total CPU time avg # of Calls".split()
    )
    assert lines[0].startswith("---") and lines[2].startswith("---")
    assert lines[-1].startswith("Self CPU time total:")
    rows = [ln.split()[0] for ln in lines[3:-2]]
    assert set(rows) >= {"ember::matmul", "ember::relu"}
    totals = {a.key: a.cpu_time_total for a in averages}
    assert [totals[r] for r in rows] == sorted((totals[r] for r in rows), reverse=True)
    count_row = next(ln for ln in lines if ln.startswith("ember::matmul"))
    assert count_row.split()[-1] == "5"
    by_count = averages.table(sort_by="count", row_limit=1).splitlines()
    assert len(by_count) == 6 and by_count[3].startswith("ember::matmul")
    with pytest.raises(ValueError, match="sort_by"):
        averages.table(sort_by="no_such_column")
    # PyTorch's table has the same header
    tx = torch.ones(64, 64)
    with tprof.profile(activities=[tprof.ProfilerActivity.CPU]) as tp:
        torch.matmul(tx, tx)
    theader = tp.key_averages().table(sort_by="cpu_time_total").splitlines()[1]
    assert theader.split() == lines[1].split()


def test_table_shape_and_memory_columns_match_torch():
    x = et.ones(32, 32)
    with profile(activities=CPU, record_shapes=True, profile_memory=True) as p:
        et.add(x, x)
    header = p.key_averages(group_by_input_shape=True).table().splitlines()[1]
    tx = torch.ones(32, 32)
    with tprof.profile(
        activities=[tprof.ProfilerActivity.CPU], record_shapes=True, profile_memory=True
    ) as tp:
        torch.add(tx, tx)
    theader = tp.key_averages(group_by_input_shape=True).table().splitlines()[1]
    assert header.split() == theader.split()
    assert "[[32, 32], [32, 32], []]" in p.key_averages(group_by_input_shape=True).table()


def test_profile_memory_counts_the_bytes_an_op_allocates():
    x = et.ones(256, 256)  # 256 KiB of float32
    with profile(activities=CPU, profile_memory=True) as p:
        y = et.add(x, x)
        with record_function("alloc_and_free"):
            z = et.mul(x, 2)
            del z
    del y
    events = cpu_events(p)
    assert one(events, "ember::add").cpu_memory_usage >= 256 * 256 * 4
    assert one(events, "alloc_and_free").cpu_memory_usage == 0  # allocated, then freed
    table = p.key_averages().table()
    assert "CPU Mem" in table and "Self CPU Mem" in table


def test_with_stack_points_at_the_caller():
    with profile(activities=CPU, with_stack=True) as p:
        et.relu(et.ones(2))
    relu = one(cpu_events(p), "ember::relu")
    assert relu.stack and relu.stack[0].startswith(__file__ + "(")
    assert relu.stack[0].endswith(": test_with_stack_points_at_the_caller")


# ---------------------------------------------------------------------------------------------
# the Chrome trace


def load_trace(p, tmp_path, name="trace.json"):
    path = tmp_path / name
    p.export_chrome_trace(str(path))
    if name.endswith(".gz"):
        import gzip

        return json.loads(gzip.decompress(path.read_bytes()))
    return json.loads(path.read_text())


def assert_nested_per_thread(complete: list[dict]) -> None:
    """On each (pid, tid), the intervals form a tree: each one inside any it overlaps."""
    by_track: dict[tuple, list] = {}
    for ev in complete:
        by_track.setdefault((ev["pid"], ev["tid"]), []).append(ev)
    for evs in by_track.values():
        evs.sort(key=lambda ev: (ev["ts"], -ev["dur"]))
        stack: list[float] = []  # end times of the open ancestors
        for ev in evs:
            while stack and ev["ts"] >= stack[-1] - 1e-6:
                stack.pop()
            end = ev["ts"] + ev["dur"]
            if stack:
                assert end <= stack[-1] + 1e-3, f"{ev['name']} leaves its parent"
            stack.append(end)


def test_chrome_trace_is_valid_and_nested(tmp_path):
    x, w, b = inputs(et)
    with profile(activities=CPU, record_shapes=True) as p:
        with record_function("forward"):
            model_step(et, x, w, b)
            et.linear(x, w.t(), b)
    trace = load_trace(p, tmp_path)
    complete = [ev for ev in trace["traceEvents"] if ev["ph"] == "X"]
    assert len(complete) == len(p.events())
    for ev in complete:
        assert {"ph", "name", "pid", "tid", "ts", "dur", "cat", "args"} <= set(ev)
        assert isinstance(ev["ts"], (int, float)) and ev["dur"] >= 0
        assert ev["pid"] == os.getpid() and ev["tid"] == threading.get_native_id()
        assert ev["cat"] in ("cpu_op", "user_annotation")
    add = next(ev for ev in complete if ev["name"] == "ember::add")
    assert add["args"]["Input Dims"] == [[4, 16], [16], []]
    forward = next(ev for ev in complete if ev["name"] == "forward")
    assert forward["cat"] == "user_annotation"
    for ev in complete:  # everything is inside forward
        assert (
            forward["ts"] <= ev["ts"]
            and ev["ts"] + ev["dur"] <= forward["ts"] + forward["dur"] + 1e-3
        )
    assert_nested_per_thread(complete)
    # parents by id agree with the time nesting
    linear = one(cpu_events(p), "ember::linear")
    addmm = next(c for c in linear.cpu_children if c.name == "ember::addmm")
    tl = next(ev for ev in complete if ev["args"]["External id"] == linear.id)
    ta = next(ev for ev in complete if ev["args"]["External id"] == addmm.id)
    assert tl["ts"] <= ta["ts"] and ta["ts"] + ta["dur"] <= tl["ts"] + tl["dur"] + 1e-3
    meta = [ev for ev in trace["traceEvents"] if ev["ph"] == "M"]
    assert any(ev["name"] == "process_name" for ev in meta)
    gz = load_trace(p, tmp_path, "trace.json.gz")
    assert gz["traceEvents"] == trace["traceEvents"]


# ---------------------------------------------------------------------------------------------
# schedule and on_trace_ready


@pytest.mark.parametrize(
    "kw",
    [
        dict(wait=1, warmup=1, active=2),
        dict(wait=1, warmup=1, active=2, repeat=2),
        dict(wait=0, warmup=2, active=1, repeat=3, skip_first=2),
        dict(wait=2, warmup=1, active=3, repeat=1, skip_first=1, skip_first_wait=1),
    ],
)
def test_schedule_matches_torch(kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = prof_mod.schedule(**kw), tprof.schedule(**kw)
    for step in range(30):
        assert ours(step).name == theirs(step).name, step


def test_schedule_rejects_bad_arguments():
    with pytest.raises(ValueError, match="active"):
        prof_mod.schedule(wait=1, warmup=1, active=0)
    with pytest.raises(ValueError, match="wait"):
        prof_mod.schedule(wait=-1, warmup=1, active=1)
    with pytest.warns(UserWarning, match="warmup"):
        prof_mod.schedule(wait=1, warmup=0, active=1)


def run_scheduled(mod, lib, kw, steps, with_step_names=False):
    """(step_num, count of relu events[, ProfilerStep#n ranges]) at each on_trace_ready."""
    calls = []

    def ready(p):
        names = [e.name for e in p.events()]
        call = (p.step_num, sum(n.endswith("::relu") for n in names))
        if with_step_names:  # (torch's events() name them all "ProfilerStep*")
            call += (sorted(n for n in names if n.startswith("ProfilerStep#")),)
        calls.append(call)

    x = lib.ones(4)
    acts = [mod.ProfilerActivity.CPU]
    with mod.profile(activities=acts, schedule=mod.schedule(**kw), on_trace_ready=ready) as p:
        for _ in range(steps):
            lib.relu(x)
            p.step()
    return calls


@pytest.mark.filterwarnings("ignore:Incorrect schedule", "ignore:Warning. Profiler clears")
@pytest.mark.parametrize(
    "kw, steps",
    [
        (dict(wait=1, warmup=1, active=2, repeat=2), 10),
        (dict(wait=1, warmup=1, active=2), 9),
        (dict(wait=0, warmup=1, active=1, repeat=2, skip_first=3), 8),
    ],
)
def test_on_trace_ready_calls_match_torch(kw, steps):
    ours = run_scheduled(prof_mod, et, kw, steps)
    theirs = run_scheduled(tprof, torch, kw, steps)
    assert ours == theirs
    assert ours  # the cases do record


def test_on_trace_ready_steps():
    kw = dict(wait=1, warmup=1, active=2, repeat=2)
    calls = run_scheduled(prof_mod, et, kw, 10, with_step_names=True)
    assert calls == [
        (4, 2, ["ProfilerStep#2", "ProfilerStep#3"]),
        (8, 2, ["ProfilerStep#6", "ProfilerStep#7"]),
    ]


def test_without_schedule_on_trace_ready_runs_once_at_stop():
    seen = []
    with profile(activities=CPU, on_trace_ready=lambda p: seen.append(len(p.events()))) as p:
        et.relu(et.ones(2))
        p.step()
        et.relu(et.ones(2))
    assert len(seen) == 1 and seen[0] >= 2
    assert not [e for e in p.events() if e.name.startswith("ProfilerStep")]


def test_tensorboard_trace_handler_writes_a_trace_per_cycle(tmp_path):
    handler = prof_mod.tensorboard_trace_handler(str(tmp_path / "tb"), worker_name="w")
    sched = prof_mod.schedule(wait=0, warmup=1, active=1, repeat=2)
    with profile(activities=CPU, schedule=sched, on_trace_ready=handler) as p:
        for _ in range(5):
            et.relu(et.ones(2))
            p.step()
    files = sorted(os.listdir(tmp_path / "tb"))
    assert files and all(f.startswith("w.") and f.endswith(".pt.trace.json") for f in files)
    for f in files:
        json.loads((tmp_path / "tb" / f).read_text())


def test_profiler_action_values():
    theirs = [a.name for a in tprof.ProfilerAction]
    assert [a.name for a in ProfilerAction] == theirs[:4]


# ---------------------------------------------------------------------------------------------
# off, errors, threads


def test_nothing_is_recorded_while_no_profile_runs():
    x = et.ones(2)
    et.relu(x)  # before
    assert not _C._profiler_enabled()
    with record_function("outside"):  # harmless without a profile
        et.relu(x)
    with profile(activities=CPU) as p:
        assert _C._profiler_enabled()
        et.add(x, x)
    assert not _C._profiler_enabled()
    et.relu(x)  # after
    assert [e.name for e in p.events()] == ["ember::add"]
    with profile(activities=CPU) as p2:
        pass
    assert list(p2.events()) == []  # nothing leaks into the next profile


def test_profiles_do_not_nest_and_events_need_a_stop():
    p = profile(activities=CPU)
    with pytest.raises(RuntimeError, match="no results yet"):
        p.events()
    with p:
        with pytest.raises(RuntimeError, match="already running"):
            with profile(activities=CPU):
                pass
    assert isinstance(p.events(), list)
    with pytest.raises(TypeError, match="ProfilerActivity"):
        profile(activities=["cpu"])


@pytest.mark.skipif(et.cuda.is_available(), reason="a GPU is available")
def test_cuda_without_gpu_warns_and_profiles_cpu():
    with pytest.warns(UserWarning, match="CUDA is not available, disabling CUDA profiling"):
        p = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    assert p.activities == {ProfilerActivity.CPU}
    assert prof_mod.supported_activities() == {ProfilerActivity.CPU}
    x = et.ones(3)
    with p:
        et.relu(x)
    assert [e.name for e in p.events()] == ["ember::relu"]
    assert "CUDA" not in p.key_averages().table()


def test_threads_get_their_own_tids():
    x = et.ones(16, 16)
    tids: dict[str, int] = {}
    barrier = threading.Barrier(2)

    def work(tag):
        tids[tag] = threading.get_native_id()
        barrier.wait()
        with record_function(tag):
            for _ in range(20):
                et.add(x, x).relu()

    with profile(activities=CPU) as p:
        threads = [threading.Thread(target=work, args=(t,)) for t in ("a", "b")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    events = cpu_events(p)
    assert tids["a"] != tids["b"]
    for tag in ("a", "b"):
        r = one(events, tag)
        assert r.thread == tids[tag]
        mine = [e for e in events if e.thread == tids[tag]]
        assert len(mine) == 41 and all(e is r or e.cpu_parent is r for e in mine)
    check_nesting(events)


def _child_profiles_on_its_own():
    assert not _C._profiler_enabled()  # the parent's profile is not the child's
    x = et.ones(2)
    et.relu(x)
    with profile(activities=CPU) as p:
        et.add(x, x)
    assert [e.name for e in p.events()] == ["ember::add"]


def test_a_forked_child_does_not_record():
    ctx = multiprocessing.get_context("fork")
    x = et.ones(2)
    with profile(activities=CPU) as p:
        et.relu(x)
        child = ctx.Process(target=_child_profiles_on_its_own)
        child.start()
        child.join(60)
        et.relu(x)
    assert child.exitcode == 0
    assert [e.name for e in p.events()] == ["ember::relu", "ember::relu"]


# ---------------------------------------------------------------------------------------------
# the GPU side, faked on the host clock (the real one needs a GPU)


@pytest.fixture
def fake_gpu(monkeypatch):
    monkeypatch.setattr("ember_tensor.profiler._profile._FAKE_GPU", True)


@pytest.mark.usefixtures("fake_gpu")
def test_gpu_events_are_linked_to_their_ops(tmp_path):
    x, w, b = inputs(et)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        model_step(et, x, w, b)
        et.linear(x, w.t(), b)
    events = p.events()
    kernels = [e for e in events if e.device_type == "cuda"]
    ops = [e for e in events if e.device_type == "cpu"]
    assert kernels and all(k.linked_op is not None for k in kernels)
    for k in kernels:
        op = k.linked_op
        assert k.name == op.name.replace("ember::", "ember::cuda::")
        assert op.time_range.start <= k.launch_us <= op.time_range.end
        assert any(kk.name == k.name for kk in op.kernels)
    relu = one(ops, "ember::relu")
    assert len(relu.kernels) == 1 and relu.self_device_time_total == relu.kernels[0].duration
    linear = one(ops, "ember::linear")
    assert linear.device_time_total == pytest.approx(
        linear.self_device_time_total + sum(c.device_time_total for c in linear.cpu_children)
    )
    table = p.key_averages().table(sort_by="self_cuda_time_total")
    header = table.splitlines()[1]
    for col in ("Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"):
        assert col in header
    assert "Self CUDA time total:" in table
    trace = load_trace(p, tmp_path)["traceEvents"]
    tk = [ev for ev in trace if ev["ph"] == "X" and ev["cat"] == "kernel"]
    assert len(tk) == len(kernels)
    starts = {ev["id"]: ev for ev in trace if ev["ph"] == "s"}
    finishes = {ev["id"]: ev for ev in trace if ev["ph"] == "f"}
    assert set(starts) == set(finishes) == {ev["args"]["correlation"] for ev in tk}
    ops_by_id = {ev["args"]["External id"]: ev for ev in trace if ev.get("cat") == "cpu_op"}
    for ev in tk:
        s, f = starts[ev["args"]["correlation"]], finishes[ev["args"]["correlation"]]
        op = ops_by_id[ev["args"]["External id"]]
        assert (s["pid"], s["tid"]) == (op["pid"], op["tid"])
        assert op["ts"] <= s["ts"] <= op["ts"] + op["dur"] + 1e-3
        assert (f["pid"], f["tid"], f["ts"]) == (ev["pid"], ev["tid"], ev["ts"])
        assert f["bp"] == "e"
