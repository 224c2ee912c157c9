"""float32 convolutions through oneDNN (ops/conv/conv_onednn_cpu.cpp): every shape class against
PyTorch in float64 and against Ember's own kernels (``backends.mkldnn.enabled = False``), at 1
and 2 threads, batch slices of unequal size, a fork after use, and the switch and its module."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import ember_tensor as et
from ember_tensor.backends import mkldnn
from test_conv import _conv_inputs, _conv_refs

needs_onednn = pytest.mark.skipif(not mkldnn.is_available(),
                                  reason=f"oneDNN is not available: {mkldnn._unavailable_reason()}")

# (N, C, H, W), O, kernel, stride, padding, dilation, groups
SHAPES = [
    ((4, 16, 12, 12), 16, 3, 1, 1, 1, 1),   # 3x3, the common layer
    ((3, 24, 13, 30), 20, 3, 1, 0, 1, 1),   # odd batch: slices of 2 and 1 on two threads
    ((2, 8, 15, 15), 32, 3, 2, 1, 1, 1),    # strided
    ((2, 16, 14, 14), 16, 3, 1, 2, 2, 1),   # dilated
    ((2, 16, 9, 9), 32, 3, 1, 1, 1, 4),     # grouped
    ((2, 64, 7, 7), 32, 1, 1, 0, 1, 1),     # 1x1
    ((5, 6, 12, 12), 16, 5, 1, 0, 1, 1),    # LeNet's second layer
    ((2, 3, 32, 32), 16, 7, 2, 3, 1, 1),    # an RGB stem (backward-input stays on Ember's kernels)
    ((2, 32, 3, 3), 48, 3, 2, 1, 1, 1),     # tiny planes
]


def _close(got, want, terms, what):
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=1e-4,
                               atol=3e-6 * terms, err_msg=what)


def _three_passes(x, w, b, gy, s, p, d, g):
    ex, ew, egy = (et.from_numpy(a.astype(np.float32)) for a in (x, w, gy))
    eb = None if b is None else et.from_numpy(b.astype(np.float32))
    y = et.conv2d(ex, ew, eb, s, p, d, g)
    gx = et.conv2d_backward_input(egy, ew, list(x.shape), s, p, d, g)
    gw = et.conv2d_backward_weight(egy, ex, list(w.shape), s, p, d, g)
    return y.numpy(), gx.numpy(), gw.numpy()


@needs_onednn
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", SHAPES, ids=str)
def test_three_passes_against_torch(rng, case, threads):
    shape, o, k, s, p, d, g = case
    x, w, b, gy = _conv_inputs(rng, shape, o, k, s, p, d, g)
    x32, w32, b32, gy32 = (a.astype(np.float32).astype(np.float64) for a in (x, w, b, gy))
    want = _conv_refs(x32, w32, b32, s, p, d, g, gy32)
    old = et.get_num_threads()
    et.set_num_threads(threads)
    try:
        got = _three_passes(x, w, b, gy, s, p, d, g)
    finally:
        et.set_num_threads(old)
    n, c = shape[:2]
    for name, a, ref, terms in (("y", got[0], want[0], c // g * k * k),
                                ("gx", got[1], want[1], o * k * k),
                                ("gw", got[2], want[2], n * gy.shape[2] * gy.shape[3])):
        _close(a, ref, terms, f"{name} {case} threads={threads}")


@needs_onednn
@pytest.mark.parametrize("case", SHAPES[:5], ids=str)
def test_same_results_as_embers_own_kernels(rng, case):
    shape, o, k, s, p, d, g = case
    x, w, b, gy = _conv_inputs(rng, shape, o, k, s, p, d, g)
    on = _three_passes(x, w, b, gy, s, p, d, g)
    with mkldnn.flags(enabled=False):
        off = _three_passes(x, w, b, gy, s, p, d, g)
    n, c = shape[:2]
    for a, ref, terms in zip(on, off, (c // g * k * k, o * k * k, n * gy.shape[2] * gy.shape[3])):
        _close(a, ref.astype(np.float64), terms, str(case))


@needs_onednn
def test_non_contiguous_operands(rng):
    # x and grad_output as transposed views (H and W swapped), the weight as a slice
    x, w, b, gy = _conv_inputs(rng, (4, 16, 10, 10), 24, 3, 1, 1)
    wide = rng.standard_normal((24, 32, 3, 3))
    w = wide[:, ::2]
    x32, w32, gy32 = (a.astype(np.float32).astype(np.float64) for a in (x, w, gy))
    want = _conv_refs(x32.transpose(0, 1, 3, 2).copy(), w32.copy(), None, 1, 1, 1, 1,
                      gy32.transpose(0, 1, 3, 2).copy())
    ex = et.from_numpy(x.astype(np.float32)).transpose(2, 3)
    egy = et.from_numpy(gy.astype(np.float32)).transpose(2, 3)
    ew = et.from_numpy(wide.astype(np.float32))[:, ::2]
    assert not ex.is_contiguous() and not egy.is_contiguous() and not ew.is_contiguous()
    _close(et.conv2d(ex, ew, None, 1, 1).numpy(), want[0], 144, "y")
    _close(et.conv2d_backward_input(egy, ew, [4, 16, 10, 10], 1, 1).numpy(), want[1], 216, "gx")
    _close(et.conv2d_backward_weight(egy, ex, [24, 16, 3, 3], 1, 1).numpy(), want[2], 400, "gw")


@pytest.mark.parametrize("case", [((4, 16, 7, 7), 8, 3, 2, 1, 1, 1, 1),
                                  ((2, 8, 5, 6), 16, 4, 2, 1, 1, 2, 2),
                                  ((3, 12, 6, 6), 12, 3, 1, 1, 0, 1, 1)], ids=str)
@needs_onednn
def test_conv_transpose2d(rng, case):
    shape, o, k, s, p, op, d, g = case
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((shape[1], o // g, k, k)).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    got = et.conv_transpose2d(et.from_numpy(x), et.from_numpy(w), et.from_numpy(b), s, p, op, g, d)
    want = torch.conv_transpose2d(torch.from_numpy(x).double(), torch.from_numpy(w).double(),
                                  torch.from_numpy(b).double(), s, p, op, g, d)
    _close(got.numpy(), want.numpy(), shape[1] * k * k, str(case))


@needs_onednn
def test_switch_and_module():
    assert mkldnn.enabled is True
    # bfloat16 goes through oneDNN exactly where the CPU computes it
    flags = ""
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    assert et._C._onednn_info()["bf16"] == ("avx512_bf16" in flags or "amx_bf16" in flags)
    assert mkldnn._version().startswith("3.")
    assert mkldnn._library().endswith("libdnnl.so.3") or "libdnnl.so" in mkldnn._library()
    with mkldnn.flags(enabled=False):
        assert mkldnn.enabled is False
    assert mkldnn.enabled is True
    mkldnn.enabled = False
    try:
        assert "enabled=False" in repr(mkldnn)
    finally:
        mkldnn.enabled = True
    with pytest.raises(TypeError, match="expects a bool"):
        mkldnn.enabled = 1


BF16_SHAPES = [SHAPES[0], SHAPES[1], SHAPES[2], SHAPES[4], SHAPES[6]]


@pytest.mark.parametrize("case", BF16_SHAPES, ids=str)
def test_bfloat16_three_passes(rng, case):
    # oneDNN's bfloat16 kernels where the CPU has them (AVX512-BF16, AMX), Ember's float32
    # kernels on widened copies elsewhere: float32 accumulation, the result rounded once
    shape, o, k, s, p, d, g = case
    x, w, b, gy = _conv_inputs(rng, shape, o, k, s, p, d, g)
    ex, ew, eb, egy = (et.from_numpy(a.astype(np.float32)).bfloat16() for a in (x, w, b, gy))
    xr, wr, br, gyr = (t.double().numpy() for t in (ex, ew, eb, egy))  # the bfloat16 values
    want = _conv_refs(xr, wr, br, s, p, d, g, gyr)
    got = (et.conv2d(ex, ew, eb, s, p, d, g),
           et.conv2d_backward_input(egy, ew, list(shape), s, p, d, g),
           et.conv2d_backward_weight(egy, ex, list(w.shape), s, p, d, g))
    for name, t, ref in zip(("y", "gx", "gw"), got, want):
        assert t.dtype == et.bfloat16
        # one rounding to bfloat16 (8 bits) of a float32 sum
        np.testing.assert_allclose(t.double().numpy(), ref, rtol=2 ** -8,
                                   atol=1e-5 * np.abs(ref).max(), err_msg=f"{name} {case}")
    with mkldnn.flags(enabled=False):  # Ember's kernels on widened copies: the same to a rounding
        own = (et.conv2d(ex, ew, eb, s, p, d, g),
               et.conv2d_backward_input(egy, ew, list(shape), s, p, d, g),
               et.conv2d_backward_weight(egy, ex, list(w.shape), s, p, d, g))
    for name, t, ref in zip(("y", "gx", "gw"), got, own):
        np.testing.assert_allclose(t.double().numpy(), ref.double().numpy(), rtol=2 ** -7,
                                   atol=1e-5 * float(ref.double().abs().max()),
                                   err_msg=f"{name} {case}")


@needs_onednn
def test_more_shapes_than_the_plan_cache_holds(rng):
    # 262 widths: more plans than the 256 kept; the first shapes are made again after eviction
    w = rng.standard_normal((4, 4, 3, 3)).astype(np.float32)
    for width in list(range(8, 270)) + [8, 9]:
        x = rng.standard_normal((2, 4, 8, width)).astype(np.float32)
        got = et.conv2d(et.from_numpy(x), et.from_numpy(w), None, 1, 1).numpy()
        if width % 50 == 0 or width < 10:
            want = torch.conv2d(torch.from_numpy(x).double(), torch.from_numpy(w).double(),
                                None, 1, 1)
            _close(got, want.numpy(), 36, f"width {width}")


# A pool and oneDNN used in the parent, then a fork: the child's convolutions (two threads) must
# finish and agree with the parent's (OpenMP never started a thread to be lost in the fork).
FORK_CHILD = textwrap.dedent(r"""
    import os, sys
    import numpy as np
    import ember_tensor as et
    et.set_num_threads(2)
    rng = np.random.default_rng(0)
    x = et.from_numpy(rng.standard_normal((4, 16, 12, 12)).astype(np.float32))
    w = et.from_numpy(rng.standard_normal((16, 16, 3, 3)).astype(np.float32))
    y = et.conv2d(x, w, None, 1, 1).numpy()
    pid = os.fork()
    if pid == 0:
        ok = np.array_equal(et.conv2d(x, w, None, 1, 1).numpy(), y)
        gw = et.conv2d_backward_weight(et.ones(4, 16, 12, 12), x, [16, 16, 3, 3], 1, 1)
        os._exit(0 if ok and bool(et.isfinite(gw).all()) else 3)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))
""")


@needs_onednn
@pytest.mark.skipif(sys.platform != "linux", reason="fork")
def test_fork_after_use():
    done = subprocess.run([sys.executable, "-c", FORK_CHILD], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


@needs_onednn
def test_environment_switch_starts_off():
    code = "from ember_tensor.backends import mkldnn; print(mkldnn.enabled)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, EMBER_ONEDNN="0"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_available_where_the_core_depends_on_it():
    # the core depends on onednn-cpu-gomp on x86-64 Linux: there it must load
    if sys.platform == "linux" and platform.machine() == "x86_64":
        assert mkldnn.is_available(), mkldnn._unavailable_reason()
