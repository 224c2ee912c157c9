"""conv2d, conv2d_backward_input and conv2d_backward_weight on CUDA (ops/conv/conv_cudnn.cpp)
against the CPU kernels, through cuDNN and without it.

Each op runs on the same inputs on both devices under each setting of
``ember_tensor.backends.cudnn``: cuDNN's heuristic choice, ``benchmark`` (timed choice),
``deterministic``, and ``enabled=False`` (im2col + cuBLAS). float32 runs with
``allow_tf32=False`` so that it is compared at float32 precision; one test allows TF32 and
compares loosely. Shapes cover stride, padding, dilation, groups (depthwise too),
non-contiguous operands, empty tensors and sizes large enough for many blocks; errors are
the CPU's whichever path runs.

Runs only where a GPU is present; skipped elsewhere (``EMBER_CUDA_TEST_DEVICE=cpu`` runs it
against the CPU to check the tests themselves).
"""

import importlib.util

import numpy as np
import pytest

import ember_tensor as et
from cuda_testing import (  # noqa: E402
    DEV,
    assert_close,
    assert_same_error,
    host,
    normal,
    on,
    requires_device,
)
from ember_tensor.backends import cudnn

pytestmark = requires_device

MODES = {
    "heuristic": {"enabled": True, "benchmark": False, "deterministic": False},
    "benchmark": {"enabled": True, "benchmark": True, "deterministic": False},
    "deterministic": {"enabled": True, "benchmark": False, "deterministic": True},
    "im2col": {"enabled": False, "benchmark": False, "deterministic": False},
}
DTYPES = [et.float32, et.float64]
# cuDNN's FFT and Winograd algorithms round differently from a direct sum (errors relative to
# the operands' size, not to each output's): 50x the tolerance table's rtol and 1000x its atol
# (1e-3 both in float32); assert_close(got, want, *CUDNN)
CUDNN = (50, 1000)

# (N, C, H, W), O, (kh, kw), stride, padding, dilation, groups
CASES = [
    ((2, 3, 8, 8), 4, (3, 3), 1, 0, 1, 1),
    ((2, 3, 9, 7), 5, (3, 2), 2, 1, 1, 1),
    ((1, 4, 10, 10), 6, (3, 3), 1, 2, 2, 2),
    ((3, 6, 11, 9), 6, (5, 3), (2, 1), (2, 1), (1, 2), 3),
    ((2, 8, 7, 7), 8, (3, 3), 1, 1, 1, 8),  # depthwise
    ((2, 4, 6, 6), 8, (1, 1), 1, 0, 1, 1),  # pointwise
    ((1, 2, 5, 5), 3, (5, 5), 1, 0, 1, 1),  # the window is the whole input
    ((2, 3, 4, 4), 2, (3, 3), 3, 2, 1, 1),  # stride > kernel, more padding than input
    ((2, 16, 12, 12), 32, (3, 3), 1, 1, 1, 1),
]


@pytest.fixture(params=list(MODES))
def mode(request):
    """Runs the test under one setting of the cuDNN switches (float32 without TF32)."""
    with cudnn.flags(allow_tf32=False, **MODES[request.param]):
        yield request.param


def inputs(case, dtype, seed=0):
    shape, o, k, _, _, _, g = case
    x = normal(shape, dtype, seed)
    w = normal((o, shape[1] // g, *k), dtype, seed + 1)
    b = normal((o,), dtype, seed + 2)
    return x, w, b


def geometry(case):
    return case[3:]  # stride, padding, dilation, groups


def grad_output(case, dtype, seed=3):
    x, w, _ = inputs(case, dtype)
    return normal(tuple(et.conv2d(x, w, None, *geometry(case)).shape), dtype, seed)


# ---------------------------------------------------------------------------------------------
# the three ops against the CPU


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_conv2d_matches_cpu(mode, case, dtype, bias):
    x, w, b = inputs(case, dtype)
    b = b if bias else None
    want = et.conv2d(x, w, b, *geometry(case))
    got = et.conv2d(on(x), on(w), on(b) if bias else None, *geometry(case))
    assert_close(got, want, *CUDNN)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_conv2d_backward_input_matches_cpu(mode, case, dtype):
    x, w, _ = inputs(case, dtype)
    gy = grad_output(case, dtype)
    size = list(x.shape)
    want = et.conv2d_backward_input(gy, w, size, *geometry(case))
    got = et.conv2d_backward_input(on(gy), on(w), size, *geometry(case))
    assert_close(got, want, *CUDNN)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_conv2d_backward_weight_matches_cpu(mode, case, dtype):
    x, w, _ = inputs(case, dtype)
    gy = grad_output(case, dtype)
    size = list(w.shape)
    want = et.conv2d_backward_weight(gy, x, size, *geometry(case))
    got = et.conv2d_backward_weight(on(gy), on(x), size, *geometry(case))
    assert_close(got, want, *CUDNN)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES[:5], ids=str)
def test_cudnn_on_and_off_agree(case, dtype):
    x, w, b = inputs(case, dtype)
    gy = grad_output(case, dtype)
    x, w, b, gy = on(x), on(w), on(b), on(gy)
    results = []
    for enabled in (True, False):
        with cudnn.flags(enabled=enabled, allow_tf32=False):
            results.append(
                [
                    et.conv2d(x, w, b, *geometry(case)),
                    et.conv2d_backward_input(gy, w, list(x.shape), *geometry(case)),
                    et.conv2d_backward_weight(gy, x, list(w.shape), *geometry(case)),
                ]
            )
    for with_cudnn, without in zip(*results):
        assert_close(with_cudnn, without, *CUDNN)  # dtype, shape and values


# ---------------------------------------------------------------------------------------------
# layouts, empty tensors, large sizes


@pytest.mark.parametrize("dtype", DTYPES)
def test_non_contiguous_operands(mode, dtype):
    case = ((2, 4, 9, 8), 6, (3, 2), 2, 1, 1, 2)
    x = normal((2, 4, 8, 9), dtype, 1).transpose(2, 3)
    w = normal((6, 2, 2, 3), dtype, 2).transpose(2, 3)
    b = normal((12,), dtype, 3)[::2]
    gy = normal(tuple(et.conv2d(x, w, None, *geometry(case)).shape)[::-1], dtype, 4).permute(
        3, 2, 1, 0
    )
    assert not (x.is_contiguous() or w.is_contiguous() or b.is_contiguous())
    assert not gy.is_contiguous()
    assert_close(
        et.conv2d(on(x), on(w), on(b), *geometry(case)),
        et.conv2d(x, w, b, *geometry(case)),
        *CUDNN,
    )
    assert_close(
        et.conv2d_backward_input(on(gy), on(w), list(x.shape), *geometry(case)),
        et.conv2d_backward_input(gy, w, list(x.shape), *geometry(case)),
        *CUDNN,
    )
    assert_close(
        et.conv2d_backward_weight(on(gy), on(x), list(w.shape), *geometry(case)),
        et.conv2d_backward_weight(gy, x, list(w.shape), *geometry(case)),
        *CUDNN,
    )


# (N, C, H, W), O, groups: a dimension of zero somewhere
EMPTY = [((0, 3, 5, 5), 2, 1), ((2, 0, 5, 5), 2, 1), ((2, 3, 5, 5), 0, 1), ((0, 4, 5, 5), 2, 2)]


@pytest.mark.parametrize("empty", EMPTY, ids=str)
def test_empty_tensors(mode, empty):
    shape, o, g = empty
    case = (shape, o, (3, 3), 1, 0, 1, g)
    x, w, b = inputs(case, et.float32)
    gy = et.zeros(shape[0], o, 3, 3)
    assert_close(et.conv2d(on(x), on(w), on(b), 1, 0, 1, g), et.conv2d(x, w, b, 1, 0, 1, g))
    assert_close(
        et.conv2d_backward_input(on(gy), on(w), list(shape), 1, 0, 1, g),
        et.conv2d_backward_input(gy, w, list(shape), 1, 0, 1, g),
    )
    assert_close(
        et.conv2d_backward_weight(on(gy), on(x), list(w.shape), 1, 0, 1, g),
        et.conv2d_backward_weight(gy, x, list(w.shape), 1, 0, 1, g),
    )


def test_large_sizes(mode):
    case = ((4, 32, 40, 40), 48, (3, 3), 1, 1, 1, 1)
    x, w, b = inputs(case, et.float32)
    gy = grad_output(case, et.float32)
    # sums of 288 products of normal values
    assert_close(et.conv2d(on(x), on(w), on(b), 1, 1), et.conv2d(x, w, b, 1, 1), *CUDNN)
    assert_close(
        et.conv2d_backward_input(on(gy), on(w), list(x.shape), 1, 1),
        et.conv2d_backward_input(gy, w, list(x.shape), 1, 1),
        *CUDNN,
    )
    # each weight gradient sums 4 * 40 * 40 products: 10x
    assert_close(
        et.conv2d_backward_weight(on(gy), on(x), list(w.shape), 1, 1),
        et.conv2d_backward_weight(gy, x, list(w.shape), 1, 1),
        *(10 * s for s in CUDNN),
    )


# ---------------------------------------------------------------------------------------------
# the switches' effects


def test_deterministic_runs_repeat_bit_for_bit():
    case = ((8, 16, 20, 20), 32, (3, 3), 1, 1, 1, 1)
    x, w, _ = inputs(case, et.float32)
    gy = on(grad_output(case, et.float32))
    x, w = on(x), on(w)
    with cudnn.flags(enabled=True, deterministic=True, allow_tf32=False):
        for op, args in [
            (et.conv2d_backward_weight, (gy, x, list(w.shape))),
            (et.conv2d_backward_input, (gy, w, list(x.shape))),
        ]:
            first = host(op(*args, 1, 1))
            for _ in range(3):
                np.testing.assert_array_equal(host(op(*args, 1, 1)), first)


def test_benchmark_reuses_its_choice():
    case = CASES[2]
    x, w, b = inputs(case, et.float32)
    want = et.conv2d(x, w, b, *geometry(case))
    with cudnn.flags(enabled=True, benchmark=True, allow_tf32=False):
        for _ in range(3):  # the first call times the algorithms, the others reuse the choice
            assert_close(et.conv2d(on(x), on(w), on(b), *geometry(case)), want, *CUDNN)


def test_tf32_allowed_stays_close():
    case = CASES[-1]
    x, w, b = inputs(case, et.float32)
    gy = grad_output(case, et.float32)
    with cudnn.flags(enabled=True, allow_tf32=True):
        # TF32 keeps 10 mantissa bits of each input: about 1e-3 relative per product (50x)
        tf32 = tuple(50 * s for s in CUDNN)
        assert_close(et.conv2d(on(x), on(w), on(b), 1, 1), et.conv2d(x, w, b, 1, 1), *tf32)
        assert_close(
            et.conv2d_backward_weight(on(gy), on(x), list(w.shape), 1, 1),
            et.conv2d_backward_weight(gy, x, list(w.shape), 1, 1),
            *tf32,
        )


# ---------------------------------------------------------------------------------------------
# errors: the CPU's, whichever path would run


def ones(device, *shape, dtype=et.float32):
    return et.ones(*shape, dtype=dtype).to(device)


BAD_CALLS = {
    "channels": lambda d: et.conv2d(ones(d, 1, 3, 5, 5), ones(d, 2, 2, 3, 3)),
    "kernel_too_big": lambda d: et.conv2d(ones(d, 1, 1, 2, 2), ones(d, 1, 1, 3, 3)),
    "bias_size": lambda d: et.conv2d(ones(d, 1, 1, 5, 5), ones(d, 1, 1, 3, 3), ones(d, 2)),
    "stride_zero": lambda d: et.conv2d(ones(d, 1, 1, 5, 5), ones(d, 1, 1, 3, 3), None, 0),
    "negative_padding": lambda d: et.conv2d(ones(d, 1, 1, 5, 5), ones(d, 1, 1, 3, 3), None, 1, -1),
    "groups_zero": lambda d: et.conv2d(ones(d, 1, 2, 5, 5), ones(d, 2, 1, 3, 3), None, 1, 0, 1, 0),
    "dtypes": lambda d: et.conv2d(ones(d, 1, 1, 5, 5), ones(d, 1, 1, 3, 3, dtype=et.float64)),
    "ints": lambda d: et.conv2d(
        ones(d, 1, 1, 5, 5, dtype=et.int64), ones(d, 1, 1, 3, 3, dtype=et.int64)
    ),
    "3d_input": lambda d: et.conv2d(ones(d, 1, 5, 5), ones(d, 1, 1, 3, 3)),
    "input_size": lambda d: et.conv2d_backward_input(
        ones(d, 2, 4, 3, 3), ones(d, 4, 3, 3, 3), [2, 3, 6, 6]
    ),
    "backward_dtypes": lambda d: et.conv2d_backward_input(
        ones(d, 2, 4, 3, 3), ones(d, 4, 3, 3, 3, dtype=et.float64), [2, 3, 5, 5]
    ),
    "weight_size_groups": lambda d: et.conv2d_backward_weight(
        ones(d, 2, 4, 3, 3), ones(d, 2, 3, 5, 5), [4, 2, 3, 3]
    ),
    "weight_size_rank": lambda d: et.conv2d_backward_weight(
        ones(d, 2, 4, 3, 3), ones(d, 2, 3, 5, 5), [4, 3, 3]
    ),
    "backward_weight_3d_input": lambda d: et.conv2d_backward_weight(
        ones(d, 2, 4, 3, 3), ones(d, 3, 5, 5), [4, 3, 3, 3]
    ),
}


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_errors_match_cpu(mode, name):
    assert_same_error(BAD_CALLS[name])


# ---------------------------------------------------------------------------------------------
# CUDA only: streams and the library itself


@pytest.mark.skipif(DEV != "cuda", reason="CUDA streams")
def test_runs_on_the_current_stream():
    case = CASES[-1]
    x, w, b = inputs(case, et.float32)
    gy = grad_output(case, et.float32)
    want = [
        et.conv2d(x, w, b, 1, 1),
        et.conv2d_backward_input(gy, w, list(x.shape), 1, 1),
        et.conv2d_backward_weight(gy, x, list(w.shape), 1, 1),
    ]
    xd, wd, bd, gyd = on(x), on(w), on(b), on(gy)
    stream = et.cuda.Stream()
    stream.wait_stream(et.cuda.current_stream())
    with cudnn.flags(enabled=True, allow_tf32=False), et.cuda.stream(stream):
        got = [
            et.conv2d(xd, wd, bd, 1, 1),
            et.conv2d_backward_input(gyd, wd, list(x.shape), 1, 1),
            et.conv2d_backward_weight(gyd, xd, list(w.shape), 1, 1),
        ]
    stream.synchronize()
    for g, wnt, times in zip(got, want, [1, 1, 10]):  # the weight gradient: 10x (test_large_sizes)
        assert_close(g, wnt, *(times * s for s in CUDNN))


@pytest.mark.skipif(DEV != "cuda", reason="cuDNN needs a CUDA device")
@pytest.mark.skipif(
    importlib.util.find_spec("nvidia") is None or importlib.util.find_spec("nvidia.cudnn") is None,
    reason="the nvidia-cudnn wheel is not installed",
)
def test_cudnn_loads_from_the_wheel():
    assert cudnn.is_available(), cudnn._unavailable_reason()
    assert cudnn.version() >= 90000
    assert cudnn._unavailable_reason() == ""
