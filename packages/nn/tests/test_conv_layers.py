"""Convolutions, fold/unfold and interpolation against PyTorch 2.13: every module and
functional on the same NumPy data in float32 and float64 (values, input and parameter
gradients), gradcheck of the functionals in float64, reprs, initialisation, errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember_autograd as ea
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as et
from nn_testing import assert_close, copy_state, np_of, pair, torch_repr


def quiet(fn, *args, **kwargs):
    """Calls a torch function with its warnings silenced (PyTorch warns that an even kernel
    with padding='same' copies the input; Ember does not warn)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


# ----------------------------------------------------------------------------- modules

# (name, constructor args, kwargs, input shape, forward kwargs)
MODULES = [
    ("Conv1d", (3, 4, 3), {}, (2, 3, 9), {}),
    ("Conv1d", (4, 6, 2), {"stride": 2, "padding": 1, "dilation": 2, "groups": 2}, (2, 4, 11),
     {}),
    ("Conv1d", (3, 4, 4), {"padding": "same", "bias": False}, (2, 3, 8), {}),
    ("Conv1d", (3, 4, 3), {"padding": "valid"}, (3, 7), {}),  # unbatched
    ("Conv1d", (3, 2, 3), {"padding": 2, "padding_mode": "reflect"}, (2, 3, 6), {}),
    ("Conv1d", (3, 2, 3), {"padding": 2, "padding_mode": "circular"}, (2, 3, 6), {}),
    ("Conv2d", (3, 4, 3), {}, (2, 3, 7, 6), {}),
    ("Conv2d", (3, 4, (3, 2)), {"stride": (2, 1), "padding": (1, 2)}, (2, 3, 7, 6), {}),
    ("Conv2d", (4, 6, 3), {"groups": 2, "dilation": 2, "padding": 2}, (2, 4, 8, 8), {}),
    ("Conv2d", (4, 4, 3), {"groups": 4, "bias": False}, (1, 4, 6, 6), {}),  # depthwise
    ("Conv2d", (3, 4, (4, 3)), {"padding": "same"}, (2, 3, 7, 6), {}),  # even: asymmetric
    ("Conv2d", (3, 4, 2), {"padding": "same", "dilation": (3, 2)}, (2, 3, 7, 6), {}),
    ("Conv2d", (3, 4, 3), {"padding": "valid"}, (3, 7, 6), {}),  # unbatched
    ("Conv2d", (3, 4, 3), {"padding": 1, "padding_mode": "reflect"}, (2, 3, 5, 6), {}),
    ("Conv2d", (3, 4, 3), {"padding": (2, 1), "padding_mode": "replicate"}, (2, 3, 5, 6), {}),
    ("Conv2d", (3, 4, 3), {"padding": 1, "padding_mode": "circular", "stride": 2},
     (2, 3, 5, 6), {}),
    ("Conv2d", (3, 4, 4), {"padding": "same", "padding_mode": "reflect"}, (2, 3, 6, 6), {}),
    ("ConvTranspose1d", (3, 4, 3), {"stride": 2}, (2, 3, 5), {}),
    ("ConvTranspose1d", (4, 6, 3), {"stride": 2, "padding": 1, "output_padding": 1,
                                    "groups": 2, "dilation": 1}, (4, 5), {}),
    ("ConvTranspose2d", (3, 4, 3), {}, (2, 3, 5, 4), {}),
    ("ConvTranspose2d", (4, 6, (3, 2)), {"stride": (2, 3), "padding": (1, 0),
                                         "output_padding": (1, 2), "groups": 2}, (2, 4, 4, 3),
     {}),
    ("ConvTranspose2d", (3, 2, 3), {"dilation": 2, "bias": False}, (3, 4, 4), {}),
    ("ConvTranspose2d", (3, 4, 3), {"stride": 2, "padding": 1}, (2, 3, 4, 5),
     {"output_size": (8, 10)}),
    ("ConvTranspose2d", (3, 4, 3), {"stride": 3}, (2, 3, 4, 5),
     {"output_size": [2, 4, 12, 17]}),
    ("Conv3d", (3, 4, 3), {}, (2, 3, 5, 6, 4), {}),
    ("Conv3d", (4, 6, (3, 2, 2)), {"stride": (2, 1, 1), "padding": (1, 0, 1), "groups": 2,
                                   "dilation": (1, 2, 1)}, (2, 4, 5, 5, 4), {}),
    ("Conv3d", (3, 2, 2), {"padding": "same", "padding_mode": "replicate"}, (3, 4, 4, 5), {}),
    ("ConvTranspose3d", (3, 4, 3), {"stride": 2}, (2, 3, 3, 4, 2), {}),
    ("ConvTranspose3d", (4, 2, (2, 3, 2)), {"stride": (2, 1, 2), "padding": 1,
                                            "output_padding": (1, 0, 1), "groups": 2,
                                            "bias": False}, (4, 3, 3, 3), {}),
    ("ConvTranspose3d", (3, 2, 3), {"stride": 2, "padding": 1}, (1, 3, 3, 3, 2),
     {"output_size": (6, 5, 4)}),
    ("Unfold", (2,), {}, (2, 3, 4, 5), {}),
    ("Unfold", ((2, 3),), {"dilation": 2, "padding": 1, "stride": (2, 1)}, (3, 6, 7), {}),
    ("Fold", ((4, 5), 2), {}, (2, 12, 12), {}),
    ("Fold", ((6, 7), (2, 3)), {"dilation": 2, "padding": 1, "stride": 2}, (24, 9), {}),
    ("Upsample", (), {"scale_factor": 2}, (2, 3, 4, 5), {}),
    ("Upsample", (), {"size": (7, 3), "mode": "bilinear"}, (2, 3, 4, 5), {}),
    ("Upsample", (), {"scale_factor": (1.5, 2.0), "mode": "bilinear", "align_corners": True},
     (2, 3, 4, 5), {}),
    ("Upsample", (), {"scale_factor": 2.5, "mode": "linear"}, (2, 3, 4), {}),
    ("Upsample", (), {"size": 5, "mode": "trilinear"}, (1, 2, 3, 4, 3), {}),
    ("Upsample", (), {"scale_factor": 1.7, "mode": "bicubic"}, (2, 2, 4, 5), {}),
    ("UpsamplingNearest2d", (), {"size": (5, 9)}, (2, 3, 4, 5), {}),
    ("UpsamplingBilinear2d", (), {"scale_factor": 2}, (2, 3, 4, 5), {}),
]


def _mid(case) -> str:
    name, args, kwargs, shape, fkw = case
    bits = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{name}({', '.join(bits)}){list(shape)}{'+' if fkw else ''}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", MODULES, ids=[_mid(c) for c in MODULES])
def test_module_matches_torch(case, dtype: str) -> None:
    name, args, kwargs, shape, fkw = case
    ours = getattr(nn, name)(*args, **kwargs)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for k, v in ours.state_dict().items():
        assert tuple(v.shape) == tuple(theirs.state_dict()[k].shape), k
    if dtype == "float64":
        ours.double()
        theirs.double()
    copy_state(ours, theirs)
    rng = np.random.default_rng(len(name) + len(shape))
    x, tx = pair(rng.standard_normal(shape), dtype, requires_grad=True)
    out, tout = ours(x, **fkw), quiet(theirs, tx, **fkw)
    assert_close(out, tout, dtype, f"{name}: output", scale=10.0)
    w = rng.uniform(0.5, 1.5, size=tuple(tout.shape))
    (out * pair(w, dtype)[0]).sum().backward()
    (tout * pair(w, dtype)[1]).sum().backward()
    assert_close(x.grad, tx.grad, dtype, f"{name}: input gradient", scale=10.0)
    tparams = dict(theirs.named_parameters())
    for pname, p in ours.named_parameters():
        assert_close(p.grad, tparams[pname].grad, dtype, f"{name}: gradient of {pname}",
                     scale=10.0)


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [("Conv1d", {}), ("Conv2d", {"groups": 3}), ("Conv2d", {"padding": "same"}),
     ("Conv2d", {"padding": "valid", "dilation": 2, "stride": 2, "padding_mode": "circular"}),
     ("Conv2d", {"padding": (1, 2), "bias": False, "padding_mode": "replicate"}),
     ("ConvTranspose1d", {"output_padding": 1, "stride": 2}),
     ("ConvTranspose2d", {"groups": 3, "dilation": (1, 2), "padding": 1})],
)
def test_conv_repr_matches_torch(name: str, kwargs: dict) -> None:
    assert repr(getattr(nn, name)(6, 3, 3, **kwargs)) == repr(getattr(torch.nn, name)(6, 3, 3,
                                                                                       **kwargs))


def test_conv_attributes_match_torch() -> None:
    for kwargs in ({"padding": 1}, {"padding": "same", "kernel_size": 4},
                   {"padding": "same", "dilation": 3, "padding_mode": "reflect"},
                   {"padding": (1, 2)}, {"padding": "valid"}):
        kwargs = {"kernel_size": 3, **kwargs}
        ours, theirs = nn.Conv2d(2, 3, **kwargs), torch.nn.Conv2d(2, 3, **kwargs)
        for attr in ("in_channels", "out_channels", "kernel_size", "stride", "padding",
                     "dilation", "transposed", "output_padding", "groups", "padding_mode"):
            assert getattr(ours, attr) == getattr(theirs, attr), attr
        assert list(ours._reversed_padding_repeated_twice) == list(
            theirs._reversed_padding_repeated_twice)


@pytest.mark.parametrize(
    ("name", "args", "fan_in"),
    [("Conv1d", (4, 8, 5), 20), ("Conv2d", (6, 8, (3, 5)), 90),
     ("Conv2d", (6, 9, 3, 1, 0, 1, 3), 18), ("ConvTranspose2d", (6, 8, 3), 72),
     ("ConvTranspose1d", (6, 8, 3, 1, 0, 0, 2), 12)],
)
def test_initialisation_bounds(name: str, args: tuple, fan_in: int) -> None:
    et.manual_seed(0)
    bound = 1 / math.sqrt(fan_in)
    ws, bs = [], []
    for _ in range(20):
        m = getattr(nn, name)(*args)
        ws.append(np_of(m.weight).ravel())
        bs.append(np_of(m.bias).ravel())
    w, b = np.concatenate(ws), np.concatenate(bs)
    # kaiming_uniform_(a=sqrt(5)) is U(-1/sqrt(fan_in), 1/sqrt(fan_in)), the bias too
    for v in (w, b):
        assert np.abs(v).max() <= bound + 1e-7
        assert np.abs(v).max() > 0.9 * bound
        assert abs(v.std() - bound / math.sqrt(3)) < 0.1 * bound
    t = getattr(torch.nn, name)(*args)
    assert tuple(m.weight.shape) == tuple(t.weight.shape)


def test_conv_dtype_argument_and_double() -> None:
    m = nn.Conv2d(2, 3, 3, dtype=et.float64)
    assert m.weight.dtype == et.float64 and m.bias.dtype == et.float64
    out = m(et.ones(1, 2, 4, 4, dtype=et.float64))
    assert out.dtype == et.float64


def test_convtranspose_output_size_picks_output_padding() -> None:
    m, t = nn.ConvTranspose2d(2, 3, 3, stride=2), torch.nn.ConvTranspose2d(2, 3, 3, stride=2)
    copy_state(m, t)
    x, tx = pair(np.random.default_rng(0).standard_normal((1, 2, 4, 4)), "float32")
    for size in ((9, 9), (10, 9), (9, 10), (10, 10)):
        out, tout = m(x, output_size=size), t(tx, output_size=size)
        assert tuple(out.shape[2:]) == size
        assert_close(out, tout, "float32", str(size), scale=10.0)


# ----------------------------------------------------------------------------- functional


def _rand(rng, shape):
    return rng.standard_normal(shape)


# (name, ember fn, torch fn, shapes of the tensor arguments)
def _both(fn, **kwargs):
    return (lambda *a: getattr(F, fn)(*a, **kwargs), lambda *a: getattr(TF, fn)(*a, **kwargs))


FUNCS = [
    ("conv1d", *_both("conv1d"), [(2, 3, 7), (4, 3, 3), (4,)]),
    ("conv1d_stride_pad_dil", *_both("conv1d", stride=2, padding=2, dilation=2),
     [(2, 3, 9), (4, 3, 3)]),
    ("conv1d_groups", *_both("conv1d", groups=3), [(2, 6, 7), (3, 2, 2), (3,)]),
    ("conv1d_same_even", *_both("conv1d", padding="same"), [(2, 3, 7), (2, 3, 4)]),
    ("conv1d_unbatched", *_both("conv1d", padding=1), [(3, 7), (2, 3, 3), (2,)]),
    ("conv2d", *_both("conv2d"), [(2, 3, 6, 5), (4, 3, 3, 2), (4,)]),
    ("conv2d_stride_pad", *_both("conv2d", stride=(2, 1), padding=(1, 2)),
     [(2, 3, 6, 5), (4, 3, 3, 3)]),
    ("conv2d_dilation_groups", *_both("conv2d", dilation=(2, 1), groups=2, padding=1),
     [(2, 4, 7, 6), (6, 2, 3, 3), (6,)]),
    ("conv2d_same", *_both("conv2d", padding="same"), [(2, 3, 5, 6), (2, 3, 3, 3)]),
    ("conv2d_same_even", *_both("conv2d", padding="same", dilation=(1, 3)),
     [(1, 3, 5, 8), (2, 3, 4, 2), (2,)]),
    ("conv2d_valid", *_both("conv2d", padding="valid"), [(1, 3, 5, 6), (2, 3, 4, 2)]),
    ("conv2d_unbatched", *_both("conv2d", stride=2), [(3, 5, 6), (2, 3, 3, 3), (2,)]),
    ("conv_transpose1d", *_both("conv_transpose1d", stride=2, output_padding=1),
     [(2, 3, 5), (3, 2, 3), (2,)]),
    ("conv_transpose1d_unbatched", *_both("conv_transpose1d", padding=1, dilation=2),
     [(4, 5), (4, 3, 3)]),
    ("conv_transpose2d", *_both("conv_transpose2d"), [(2, 3, 4, 5), (3, 2, 3, 3), (2,)]),
    ("conv_transpose2d_all", *_both("conv_transpose2d", stride=(2, 3), padding=(1, 0),
                                    output_padding=(1, 2), groups=2, dilation=(1, 2)),
     [(2, 4, 3, 4), (4, 3, 3, 2), (6,)]),
    ("conv_transpose2d_unbatched", *_both("conv_transpose2d", stride=2),
     [(3, 4, 4), (3, 2, 2, 2)]),
    ("unfold", *_both("unfold", kernel_size=(2, 3), dilation=(1, 2), padding=1,
                      stride=(2, 1)), [(2, 3, 5, 6)]),
    ("unfold_unbatched", *_both("unfold", kernel_size=2), [(3, 4, 4)]),
    ("fold", *_both("fold", output_size=(5, 6), kernel_size=(2, 3), dilation=(1, 2),
                    padding=1, stride=(2, 1)), [(2, 18, 12)]),
    ("fold_unbatched", *_both("fold", output_size=4, kernel_size=2), [(12, 9)]),
    ("interpolate_nearest", *_both("interpolate", scale_factor=2), [(2, 3, 3, 4)]),
    ("interpolate_nearest_size", *_both("interpolate", size=(5, 3)), [(2, 3, 3, 4)]),
    ("interpolate_nearest_odd_scale", *_both("interpolate", scale_factor=(1.7, 0.6)),
     [(1, 2, 5, 7)]),
    ("interpolate_nearest_1d", *_both("interpolate", scale_factor=3), [(2, 3, 4)]),
    ("interpolate_nearest_3d", *_both("interpolate", size=(3, 5, 2)), [(1, 2, 2, 3, 4)]),
    ("interpolate_nearest_exact", *_both("interpolate", scale_factor=0.7, mode="nearest-exact"),
     [(1, 2, 6, 7)]),
    ("interpolate_bilinear", *_both("interpolate", size=(6, 5), mode="bilinear"),
     [(2, 3, 3, 4)]),
    ("interpolate_bilinear_down", *_both("interpolate", scale_factor=0.6, mode="bilinear"),
     [(2, 3, 7, 6)]),
    ("interpolate_bilinear_align", *_both("interpolate", size=(7, 2), mode="bilinear",
                                          align_corners=True), [(2, 3, 3, 4)]),
    ("interpolate_bilinear_scale", *_both("interpolate", scale_factor=(1.3, 2.5),
                                          mode="bilinear"), [(1, 2, 4, 3)]),
    ("interpolate_bilinear_recompute", *_both("interpolate", scale_factor=1.3,
                                              mode="bilinear", recompute_scale_factor=True),
     [(1, 2, 4, 3)]),
    ("interpolate_linear", *_both("interpolate", scale_factor=2.5, mode="linear"),
     [(2, 3, 4)]),
    ("interpolate_trilinear", *_both("interpolate", size=(3, 5, 4), mode="trilinear",
                                     align_corners=True), [(1, 2, 2, 3, 4)]),
    ("interpolate_bicubic", *_both("interpolate", scale_factor=1.6, mode="bicubic"),
     [(1, 2, 4, 5)]),
    ("interpolate_bicubic_align", *_both("interpolate", size=(3, 7), mode="bicubic",
                                         align_corners=True), [(1, 2, 4, 5)]),
    ("interpolate_area", *_both("interpolate", size=(3, 4), mode="area"), [(2, 3, 7, 9)]),
    ("interpolate_area_scale", *_both("interpolate", scale_factor=0.5, mode="area"),
     [(2, 3, 6, 5)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("row", FUNCS, ids=[r[0] for r in FUNCS])
def test_functional_matches_torch(row, dtype: str) -> None:
    name, ours, theirs, shapes = row
    rng = np.random.default_rng(len(name))
    args = [pair(_rand(rng, s), dtype, requires_grad=True) for s in shapes]
    out = ours(*[a for a, _ in args])
    tout = quiet(theirs, *[t for _, t in args])
    assert_close(out, tout, dtype, f"{name}: output", scale=10.0)
    w = rng.uniform(0.5, 1.5, size=tuple(tout.shape))
    (out * pair(w, dtype)[0]).sum().backward()
    (tout * pair(w, dtype)[1]).sum().backward()
    for i, (a, t) in enumerate(args):
        assert_close(a.grad, t.grad, dtype, f"{name}: gradient of argument {i}", scale=10.0)


@pytest.mark.parametrize("row", FUNCS, ids=[r[0] for r in FUNCS])
def test_functional_gradcheck(row) -> None:
    name, ours, _, shapes = row
    rng = np.random.default_rng(1)
    args = tuple(pair(_rand(rng, s), "float64", requires_grad=True)[0] for s in shapes)
    assert ea.gradcheck(lambda *t: ours(*t), args)


@pytest.mark.parametrize("name", ["conv2d_dilation_groups", "conv_transpose2d_all",
                                  "interpolate_bicubic", "fold"])
def test_functional_gradgradcheck(name: str) -> None:
    _, ours, _, shapes = next(r for r in FUNCS if r[0] == name)
    rng = np.random.default_rng(2)
    args = tuple(pair(_rand(rng, s) * 0.5, "float64", requires_grad=True)[0] for s in shapes)
    assert ea.gradgradcheck(lambda *t: ours(*t), args)


def test_interpolate_identity_and_integer_nearest() -> None:
    x = et.arange(12).reshape(1, 1, 3, 4)
    out = F.interpolate(x, scale_factor=2)
    tout = TF.interpolate(torch.arange(12).reshape(1, 1, 3, 4).float(), scale_factor=2)
    np.testing.assert_array_equal(np_of(out), tout.numpy())
    assert out.dtype == et.int64
    y = et.randn(1, 2, 3, 3)
    same = F.interpolate(y, size=3, mode="bilinear")
    assert same is not y
    np.testing.assert_array_equal(np_of(same), np_of(y))


def test_deprecated_upsample_functions_warn() -> None:
    x = et.randn(1, 1, 2, 3)
    tx = torch.from_numpy(np_of(x))
    for name, kw in (("upsample", {"mode": "bilinear"}), ("upsample_nearest", {}),
                     ("upsample_bilinear", {})):
        with pytest.warns(UserWarning, match=f"nn.functional.{name}` is deprecated"):
            out = getattr(F, name)(x, scale_factor=2, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tout = getattr(TF, name)(tx, scale_factor=2, **kw)
        assert_close(out, tout, "float32", name)


# ----------------------------------------------------------------------------- errors


def _error(call, lib):
    mod = (nn, F, et) if lib == "ember" else (torch.nn, TF, torch)
    try:
        call(*mod)
    except Exception as exc:  # noqa: BLE001 - compared below
        return type(exc).__name__, torch_repr(str(exc))
    return "no error", ""


# errors whose type and message are PyTorch's
SAME_ERRORS = {
    "groups": lambda nn, F, T: nn.Conv2d(3, 4, 3, groups=0),
    "in_channels_groups": lambda nn, F, T: nn.Conv2d(3, 4, 3, groups=2),
    "out_channels_groups": lambda nn, F, T: nn.Conv2d(4, 3, 3, groups=2),
    "same_strided": lambda nn, F, T: nn.Conv2d(3, 4, 3, padding="same", stride=2),
    "transpose_padding_mode": lambda nn, F, T: nn.ConvTranspose2d(3, 4, 3,
                                                                  padding_mode="reflect"),
    "conv2d_rank": lambda nn, F, T: nn.Conv2d(3, 4, 3)(T.ones(3, 5)),
    "conv1d_rank": lambda nn, F, T: nn.Conv1d(3, 4, 3)(T.ones(1, 3, 5, 5)),
    "conv_transpose2d_rank": lambda nn, F, T: nn.ConvTranspose2d(3, 4, 3)(T.ones(3, 5)),
    "f_same_strided": lambda nn, F, T: F.conv2d(T.ones(1, 3, 5, 5), T.ones(4, 3, 3, 3),
                                                padding="same", stride=2),
    "f_padding_string": lambda nn, F, T: F.conv2d(T.ones(1, 3, 5, 5), T.ones(4, 3, 3, 3),
                                                  padding="foo"),
    "output_size_range": lambda nn, F, T: nn.ConvTranspose2d(3, 4, 3, stride=2)(
        T.ones(1, 3, 4, 4), output_size=(20, 20)),
    "output_size_length": lambda nn, F, T: nn.ConvTranspose2d(3, 4, 3, stride=2)(
        T.ones(1, 3, 4, 4), output_size=(1, 2, 3, 20, 20)),
    "transpose_string_padding": lambda nn, F, T: F.conv_transpose2d(
        T.ones(1, 3, 4, 4), T.ones(3, 2, 3, 3), padding="same"),
    "unfold_rank": lambda nn, F, T: F.unfold(T.ones(1, 1, 5, 5, 5), 2),
    "fold_rank": lambda nn, F, T: F.fold(T.ones(1, 12, 16, 1), (5, 5), 2),
    "unfold_kernel_len": lambda nn, F, T: F.unfold(T.ones(1, 3, 5, 5), (2, 2, 2)),
    "interp_align": lambda nn, F, T: F.interpolate(T.ones(1, 1, 2, 2), scale_factor=2,
                                                   align_corners=True),
    "interp_both": lambda nn, F, T: F.interpolate(T.ones(1, 1, 2, 2), size=3, scale_factor=2),
    "interp_neither": lambda nn, F, T: F.interpolate(T.ones(1, 1, 2, 2)),
    "interp_size_len": lambda nn, F, T: F.interpolate(T.ones(1, 1, 2, 2), size=(3,)),
    "interp_scale_len": lambda nn, F, T: F.interpolate(T.ones(1, 1, 2, 2),
                                                       scale_factor=(1, 2, 3)),
    "interp_recompute": lambda nn, F, T: F.interpolate(T.ones(1, 1, 2, 2), size=3,
                                                       recompute_scale_factor=True),
    "interp_linear_rank": lambda nn, F, T: F.interpolate(T.ones(1, 1, 2, 2), size=3,
                                                         mode="linear"),
    "interp_bilinear_rank": lambda nn, F, T: F.interpolate(T.ones(1, 2, 2), size=3,
                                                           mode="bilinear"),
    "interp_trilinear_rank": lambda nn, F, T: F.interpolate(T.ones(1, 1, 2, 2), size=3,
                                                            mode="trilinear"),
    "interp_bicubic_rank": lambda nn, F, T: F.interpolate(T.ones(1, 2, 2), size=3,
                                                          mode="bicubic"),
    "interp_mode": lambda nn, F, T: F.interpolate(T.ones(1, 1, 2, 2), size=3, mode="foo"),
    "interp_rank": lambda nn, F, T: F.interpolate(T.ones(2, 2), size=3),
    "interp_zero": lambda nn, F, T: F.interpolate(T.ones(1, 1, 4, 4), scale_factor=0.1),
    "interp_antialias": lambda nn, F, T: F.interpolate(T.ones(1, 1, 4, 4), size=3,
                                                       antialias=True),
}


@pytest.mark.parametrize("name", sorted(SAME_ERRORS))
def test_errors_match_torch(name: str) -> None:
    ours = _error(SAME_ERRORS[name], "ember")
    theirs = _error(SAME_ERRORS[name], "torch")
    assert ours == theirs


# errors where Ember's message differs (more context, or PyTorch has none): (call, type,
# pattern)
OWN_ERRORS = {
    # PyTorch prints the modes as a set, in an order that changes from run to run
    "padding_mode": (lambda: nn.Conv2d(3, 4, 3, padding_mode="mirror"), ValueError,
                     r"padding_mode must be one of \{'zeros', 'circular', 'reflect', "
                     r"'replicate'\}, but got padding_mode='mirror'"),
    "padding_string": (lambda: nn.Conv1d(3, 4, 3, padding="full"), ValueError,
                       r"Invalid padding string 'full', should be one of \{'same', 'valid'\}"),
    # PyTorch accepts padding='same' here and builds padding=('s', 'a', 'm', 'e')
    "transpose_same": (lambda: nn.ConvTranspose2d(3, 4, 3, padding="same"), ValueError,
                       "padding must be an int or a tuple of ints"),
    "weight_rank": (lambda: F.conv1d(et.ones(2, 3, 5), et.ones(4, 3, 3, 3)), RuntimeError,
                    r"Expected 4-dimensional input for 4-dimensional weight \[4, 3, 3, 3\]"),
    "kernel_too_big": (lambda: F.conv2d(et.ones(1, 3, 2, 2), et.ones(4, 3, 3, 3)),
                       RuntimeError, "Kernel size can't be greater than actual input size"),
    "channels": (lambda: nn.Conv2d(3, 4, 3)(et.ones(1, 2, 5, 5)), RuntimeError,
                 r"expected input\[1, 2, 5, 5\] to have 3 channels, but got 2"),
    "dtype": (lambda: nn.Conv2d(3, 4, 3)(et.ones(1, 3, 5, 5, dtype=et.float64)),
              RuntimeError, "Input type \\(Double\\) and weight type \\(Float\\)"),
    "output_padding": (lambda: F.conv_transpose2d(et.ones(1, 3, 4, 4), et.ones(3, 2, 3, 3),
                                                  stride=2, output_padding=2),
                       RuntimeError, "output padding must be smaller than either stride"),
    "antialias": (lambda: F.interpolate(et.ones(1, 1, 4, 4), size=3, mode="bilinear",
                                        antialias=True), NotImplementedError, "antialias"),
    "bilinear_int": (lambda: F.interpolate(et.ones(1, 1, 2, 2, dtype=et.int64), size=3,
                                           mode="bilinear"), NotImplementedError, "int64"),
    "fold_blocks": (lambda: F.fold(et.ones(1, 12, 15), (5, 5), (2, 2)), RuntimeError,
                    "calculated number of sliding blocks"),
}


@pytest.mark.parametrize("name", sorted(OWN_ERRORS))
def test_own_errors(name: str) -> None:
    call, kind, pattern = OWN_ERRORS[name]
    with pytest.raises(kind, match=pattern):
        call()


# ----------------------------------------------------------------------------- a small model


def test_small_cnn_trains_like_torch() -> None:
    """Conv -> ReLU -> Conv(stride) -> Upsample -> ConvTranspose; a few SGD steps on both
    libraries stay together."""

    def build(lib):
        return lib.Sequential(
            lib.Conv2d(2, 4, 3, padding=1), lib.ReLU(),
            lib.Conv2d(4, 4, 3, stride=2, padding="valid"), lib.Tanh(),
            lib.Upsample(scale_factor=2, mode="bilinear"),
            lib.ConvTranspose2d(4, 1, 2, stride=1),
        )

    ours, theirs = build(nn), build(torch.nn)
    copy_state(ours, theirs)
    rng = np.random.default_rng(0)
    x, tx = pair(rng.standard_normal((3, 2, 9, 9)), "float32")
    for _ in range(3):
        out, tout = ours(x), theirs(tx)
        assert_close(out, tout, "float32", "output", scale=100.0)
        loss, tloss = out.square().mean(), tout.square().mean()
        ours.zero_grad()
        theirs.zero_grad()
        loss.backward()
        tloss.backward()
        with ea.no_grad():
            for p in ours.parameters():
                p -= 0.1 * p.grad
        with torch.no_grad():
            for p in theirs.parameters():
                p -= 0.1 * p.grad
    for (n, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_close(p, tp, "float32", n, scale=100.0)
