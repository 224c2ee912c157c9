"""conv2d, conv_transpose2d, im2col, col2im against PyTorch: shapes, strides, padding,
dilation, groups, dtypes, layouts and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from conftest import IS_TORCH, assert_close, tensor

# (N, C, H, W), O, kernel, stride, padding, dilation, groups
CONV = [
    ((2, 4, 7, 6), 6, 3, 1, 1, 1, 1),
    ((2, 4, 9, 8), 6, 3, 2, 0, 1, 2),
    ((1, 6, 10, 10), 3, (3, 2), (2, 1), (1, 2), (2, 1), 3),
    ((3, 1, 5, 5), 2, 5, 1, 2, 1, 1),
    ((2, 8, 6, 6), 8, 1, 1, 0, 1, 8),  # depthwise 1x1
    ((0, 2, 4, 4), 2, 3, 1, 1, 1, 1),  # empty batch
]


def _pair(k):
    return (k, k) if isinstance(k, int) else k


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", CONV, ids=str)
@pytest.mark.parametrize("layout", ["contig", "transposed"])
def test_conv2d(lib, rng, dtype, bias, case, layout):
    shape, o, k, s, p, d, g = case
    x = rng.standard_normal(shape)
    w = rng.standard_normal((o, shape[1] // g, *_pair(k)))
    b = rng.standard_normal(o) if bias else None
    got = lib.conv2d(tensor(lib, x, dtype, layout), tensor(lib, w, dtype),
                     tensor(lib, b, dtype) if bias else None, s, p, d, g)
    want = torch.conv2d(torch.from_numpy(x), torch.from_numpy(w),
                        torch.from_numpy(b) if bias else None, s, p, d, g)
    assert_close(got, want.numpy(), dtype, scale=10 * np.prod(_pair(k)) * shape[1])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CONV, ids=str)
def test_conv_transpose2d(lib, rng, dtype, case):
    shape, o, k, s, p, d, g = case
    out_pad = tuple(1 if si > 1 else 0 for si in _pair(s))
    x = rng.standard_normal(shape)
    w = rng.standard_normal((shape[1], o // g, *_pair(k)))
    b = rng.standard_normal(o)
    got = lib.conv_transpose2d(tensor(lib, x, dtype), tensor(lib, w, dtype), tensor(lib, b, dtype),
                               s, p, out_pad, g, d)
    want = torch.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b),
                                  s, p, out_pad, g, d)
    assert_close(got, want.numpy(), dtype, scale=10 * np.prod(_pair(k)) * shape[1])


@pytest.mark.skipif(IS_TORCH, reason="im2col/col2im are torch.nn.functional.unfold/fold there")
@pytest.mark.parametrize(
    "args", [((2, 3), 1, 1, 2), (3, 2, 0, 1), ((1, 2), (1, 2), (0, 1), (2, 1))], ids=str
)
def test_im2col_col2im_match_unfold_fold(lib, rng, args):
    k, d, p, s = args
    x = rng.standard_normal((2, 3, 7, 6))
    got = lib.im2col(tensor(lib, x, "float64"), k, d, p, s)
    want = F.unfold(torch.from_numpy(x), k, d, p, s)
    assert_close(got, want.numpy(), "float64")
    c = rng.standard_normal(tuple(want.shape))
    got = lib.col2im(tensor(lib, c, "float64"), [7, 6], k, d, p, s)
    want = F.fold(torch.from_numpy(c), (7, 6), k, d, p, s)
    assert_close(got, want.numpy(), "float64")


ERRORS = [
    (lambda L: L.conv2d(L.ones(1, 3, 5, 5), L.ones(2, 2, 3, 3)), "to have 2 channels, but got 3"),
    (lambda L: L.conv2d(L.ones(1, 1, 2, 2), L.ones(1, 1, 3, 3)),
     "Kernel size can't be greater than actual input size"),
    (lambda L: L.conv2d(L.ones(1, 1, 5, 5), L.ones(1, 1, 3, 3), L.ones(2)),
     "expected bias to be 1-dimensional with 1 elements"),
    (lambda L: L.conv2d(L.ones(1, 1, 5, 5), L.ones(1, 1, 3, 3), None, 0), "stride"),
    (lambda L: L.conv2d(L.ones(1, 1, 5, 5), L.ones(1, 1, 3, 3).double()), "Float.*Double"),
    (lambda L: L.conv_transpose2d(L.ones(1, 1, 3, 3), L.ones(1, 1, 3, 3), None, 1, 0, 1),
     "output padding must be smaller than either stride or dilation"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_conv_errors(lib, case):
    fn, text = ERRORS[case]
    with pytest.raises(RuntimeError, match=text):
        fn(lib)


@pytest.mark.skipif(IS_TORCH, reason="Ember's message")
def test_conv_integer_input_not_implemented(lib):
    with pytest.raises(RuntimeError, match="conv2d"):
        lib.conv2d(lib.ones(1, 1, 3, 3, dtype=lib.int64), lib.ones(1, 1, 2, 2, dtype=lib.int64))
