"""The functions of ember_nn.functional on the core's nn kernels (pooling, normalization,
embedding, nll_loss, cross_entropy) against torch.nn.functional: one row per function and
setting, run on both libraries from the same NumPy data in float32 and float64, comparing
outputs and the gradients of every input; float64 rows also pass ember_autograd.gradcheck
(most gradgradcheck too). Then running statistics, errors and warnings."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember_autograd as ea
import ember_nn.functional as F
import ember_tensor as et
from nn_testing import assert_close, ember_from, np_of, pair, torch_from, torch_repr


@dataclass
class A:
    """One argument: a float array requiring grad (``grad``), or fixed values (indices,
    targets, running statistics)."""

    shape: tuple = ()
    grad: bool = True
    values: object = None
    kind: str = "normal"  # normal | distinct | prob | positive

    def make(self, rng):
        if self.values is not None:
            return np.asarray(self.values)
        if self.kind == "distinct":  # no ties for max pooling
            n = int(np.prod(self.shape))
            return rng.permutation(n).reshape(self.shape) / n * 4 - 2
        if self.kind == "prob":
            e = np.exp(rng.standard_normal(self.shape))
            return e / e.sum(1 if len(self.shape) > 1 else 0, keepdims=True)
        if self.kind == "positive":
            return rng.uniform(0.5, 2.0, self.shape)
        return rng.standard_normal(self.shape)


@dataclass
class Row:
    name: str
    fn: object  # fn(F, *args): the same call on both libraries
    args: list = field(default_factory=list)
    gradcheck: bool = True
    gradgrad: bool = True
    scale: float = 10.0  # gradient tolerance, times the dtype's value tolerance


def I(*values):  # noqa: E743 - an index array
    return A(values=np.array(values, dtype=np.int64), grad=False)


def const(values):
    return A(values=np.asarray(values, dtype=np.float64), grad=False)


X4 = A((2, 3, 7, 6), kind="distinct")
X5 = A((2, 2, 5, 6, 4), kind="distinct")
ROWS = [
    # ---- pooling
    Row("max_pool2d", lambda F, x: F.max_pool2d(x, 2), [X4]),
    Row("max_pool2d_stride_pad_dil_ceil",
        lambda F, x: F.max_pool2d(x, (3, 2), (2, 1), (1, 0), (1, 2), ceil_mode=True), [X4]),
    Row("max_pool2d_indices", lambda F, x: F.max_pool2d(x, 3, 2, 1, return_indices=True)[0],
        [A((3, 7, 6), kind="distinct")]),
    Row("avg_pool2d", lambda F, x: F.avg_pool2d(x, 3, 2, 1), [A((2, 3, 7, 6))]),
    Row("avg_pool2d_ceil_nopad", lambda F, x: F.avg_pool2d(x, (3, 2), 2, 1, True, False),
        [A((2, 3, 7, 6))]),
    Row("avg_pool2d_divisor", lambda F, x: F.avg_pool2d(x, 2, divisor_override=3),
        [A((3, 6, 6))]),
    Row("adaptive_avg_pool2d", lambda F, x: F.adaptive_avg_pool2d(x, (3, 4)), [A((2, 3, 7, 6))]),
    Row("adaptive_avg_pool2d_none", lambda F, x: F.adaptive_avg_pool2d(x, (None, 2)),
        [A((3, 5, 6))]),
    Row("adaptive_avg_pool2d_global", lambda F, x: F.adaptive_avg_pool2d(x, 1),
        [A((2, 3, 4, 4))]),
    Row("adaptive_max_pool2d", lambda F, x: F.adaptive_max_pool2d(x, 3), [X4]),
    Row("adaptive_max_pool2d_indices",
        lambda F, x: F.adaptive_max_pool2d(x, (2, 5), return_indices=True)[0], [X4]),
    Row("max_pool1d", lambda F, x: F.max_pool1d(x, 3, 2, 1), [A((2, 3, 9), kind="distinct")]),
    Row("avg_pool1d", lambda F, x: F.avg_pool1d(x, 3, 2, 1, True, False), [A((3, 9))]),
    Row("adaptive_avg_pool1d", lambda F, x: F.adaptive_avg_pool1d(x, 4), [A((2, 3, 9))]),
    Row("adaptive_max_pool1d", lambda F, x: F.adaptive_max_pool1d(x, 4),
        [A((2, 3, 9), kind="distinct")]),
    # ---- 3-D pooling (two 2-D poolings), unpooling, 3-D convolutions (2-D ones per depth tap)
    Row("max_pool3d", lambda F, x: F.max_pool3d(x, 2), [X5]),
    Row("max_pool3d_stride_pad_dil_ceil",
        lambda F, x: F.max_pool3d(x, (3, 2, 2), (2, 1, 2), (1, 0, 1), (1, 2, 1), ceil_mode=True),
        [X5]),
    Row("max_pool3d_unbatched_indices",
        lambda F, x: F.max_pool3d(x, 2, 1, return_indices=True)[0],
        [A((2, 4, 5, 3), kind="distinct")]),
    Row("avg_pool3d", lambda F, x: F.avg_pool3d(x, 3, 2, 1), [A((2, 2, 5, 6, 4))]),
    Row("avg_pool3d_ceil_nopad", lambda F, x: F.avg_pool3d(x, (3, 2, 2), 2, 1, True, False),
        [A((2, 2, 5, 6, 4))]),
    Row("avg_pool3d_divisor", lambda F, x: F.avg_pool3d(x, 2, divisor_override=3),
        [A((2, 4, 4, 4))]),
    Row("adaptive_avg_pool3d", lambda F, x: F.adaptive_avg_pool3d(x, (3, 2, 4)),
        [A((2, 2, 5, 6, 7))]),
    Row("adaptive_avg_pool3d_none", lambda F, x: F.adaptive_avg_pool3d(x, (None, 2, None)),
        [A((2, 5, 6, 3))]),
    Row("adaptive_max_pool3d", lambda F, x: F.adaptive_max_pool3d(x, (2, 3, 2)), [X5]),
    Row("max_unpool1d",
        lambda F, x: F.max_unpool1d(*F.max_pool1d(x, 2, return_indices=True), 2),
        [A((2, 3, 8), kind="distinct")]),
    Row("max_unpool2d_output_size",
        lambda F, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2,
                                    output_size=(7, 6)), [X4]),
    Row("max_unpool3d",
        lambda F, x: F.max_unpool3d(*F.max_pool3d(x, 2, return_indices=True), 2), [X5]),
    Row("conv3d", lambda F, x, w, b: F.conv3d(x, w, b, (1, 2, 1), (1, 0, 2), (2, 1, 1)),
        [A((2, 4, 6, 5, 4)), A((3, 4, 3, 2, 2)), A((3,))]),
    Row("conv3d_groups_same",
        lambda F, x, w: F.conv3d(x, w, padding="same", groups=2, dilation=2),
        [A((1, 4, 4, 3, 5)), A((2, 2, 2, 3, 2))]),
    Row("conv3d_unbatched", lambda F, x, w: F.conv3d(x, w, stride=2),
        [A((2, 5, 5, 5)), A((3, 2, 2, 2, 2))]),
    Row("conv_transpose3d",
        lambda F, x, w, b: F.conv_transpose3d(x, w, b, (2, 1, 2), (1, 0, 1), (1, 0, 0), 1,
                                              (1, 2, 1)),
        [A((2, 3, 3, 4, 3)), A((3, 2, 3, 2, 2)), A((2,))]),
    Row("conv_transpose3d_groups_output_padding",
        lambda F, x, w: F.conv_transpose3d(x, w, None, 2, 1, 1, groups=2, dilation=3),
        [A((1, 4, 3, 3, 2)), A((4, 1, 2, 2, 2))]),
    Row("conv_transpose2d_output_padding_past_stride",
        lambda F, x, w: F.conv_transpose2d(x, w, None, 2, 1, (2, 1), dilation=(3, 2)),
        [A((2, 2, 4, 3)), A((2, 3, 3, 2))]),
    # ---- normalization
    Row("batch_norm_train", lambda F, x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b, True, 0.2),
        [A((4, 3, 5)), A((3,)), A((3,)), const(np.zeros(3)), const(np.ones(3))]),
    Row("batch_norm_train_2d_no_stats",
        lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        [A((5, 4)), A((4,)), A((4,))]),
    Row("batch_norm_train_4d_no_affine",
        lambda F, x: F.batch_norm(x, None, None, training=True, eps=1e-3), [A((3, 2, 3, 2))]),
    Row("batch_norm_eval", lambda F, x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b),
        [A((4, 3, 5)), A((3,)), A((3,)), const([0.1, -0.3, 0.2]), const([0.5, 1.5, 2.0])]),
    Row("layer_norm", lambda F, x, w, b: F.layer_norm(x, (3, 4), w, b),
        [A((2, 3, 4)), A((3, 4)), A((3, 4))]),
    Row("layer_norm_no_affine", lambda F, x: F.layer_norm(x, (5,), eps=1e-3),
        [A((2, 3, 5))]),
    Row("layer_norm_weight_only", lambda F, x, w: F.layer_norm(x, [4], w), [A((3, 4)), A((4,))]),
    Row("group_norm", lambda F, x, w, b: F.group_norm(x, 2, w, b),
        [A((2, 6, 5)), A((6,)), A((6,))]),
    Row("group_norm_4d", lambda F, x: F.group_norm(x, 4, eps=1e-3), [A((2, 4, 3, 2))]),
    Row("group_norm_2d", lambda F, x, w: F.group_norm(x, 3, w), [A((3, 6)), A((6,))]),
    Row("instance_norm", lambda F, x, w, b: F.instance_norm(x, weight=w, bias=b),
        [A((2, 3, 5)), A((3,)), A((3,))]),
    Row("instance_norm_stats",
        lambda F, x, rm, rv: F.instance_norm(x, rm, rv, use_input_stats=True, momentum=0.3),
        [A((2, 3, 2, 3)), const(np.zeros(3)), const(np.ones(3))]),
    Row("instance_norm_eval",
        lambda F, x, rm, rv: F.instance_norm(x, rm, rv, use_input_stats=False),
        [A((2, 3, 4)), const([0.2, 0.1, -0.1]), const([1.0, 2.0, 0.5])]),
    # ---- embedding (padding_idx and scale_grad_by_freq change the gradient, not the function:
    # compared with torch, not finite differences)
    Row("embedding", lambda F, i, w: F.embedding(i, w), [I([0, 3, 4], [0, 2, 2]), A((5, 3))]),
    Row("embedding_padding_idx", lambda F, i, w: F.embedding(i, w, padding_idx=-2),
        [I([0, 3, 4], [3, 2, 2]), A((5, 3))], gradcheck=False),
    Row("embedding_scale_grad_by_freq",
        lambda F, i, w: F.embedding(i, w, padding_idx=0, scale_grad_by_freq=True),
        [I(0, 3, 4, 0, 2, 2, 2), A((5, 3))], gradcheck=False),
    Row("embedding_bag_mean_offsets", lambda F, i, w, o: F.embedding_bag(i, w, o),
        [I(1, 2, 4, 4, 3, 0), A((5, 3)), I(0, 0, 2, 5)]),
    Row("embedding_bag_sum_weights_last_offset",
        lambda F, i, w, o, p: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p,
                                              include_last_offset=True),
        [I(1, 2, 4, 4, 3, 0), A((5, 3)), I(0, 2, 2, 6), A((6,))]),
    Row("embedding_bag_max_padding", lambda F, i, w: F.embedding_bag(i, w, mode="max",
                                                                     padding_idx=2),
        [I([1, 2, 4], [2, 2, 2], [0, 3, 2]), A((5, 3), kind="distinct")]),
    Row("embedding_bag_mean_padding", lambda F, i, w, o: F.embedding_bag(i, w, o, padding_idx=-1),
        [I(1, 4, 4, 3, 1, 0), A((5, 3)), I(0, 3)]),
    Row("embedding_int32_indices", lambda F, i, w: F.embedding(i, w),
        [A(values=np.array([[1, 0], [4, 4]], dtype=np.int32), grad=False), A((5, 2))]),
]

for _red in ("none", "mean", "sum"):
    ROWS += [
        Row(f"nll_loss_{_red}", lambda F, x, t, r=_red: F.nll_loss(x, t, reduction=r),
            [A((5, 4)), I(0, 3, 1, 1, 2)]),
        Row(f"nll_loss_weight_ignore_{_red}",
            lambda F, x, t, w, r=_red: F.nll_loss(x, t, w, ignore_index=1, reduction=r),
            [A((5, 4)), I(0, 3, 1, 1, 2), const([0.5, 2.0, 1.0, 1.5])]),
        Row(f"nll_loss_nd_{_red}", lambda F, x, t, w, r=_red: F.nll_loss(x, t, w, reduction=r),
            [A((2, 3, 2, 2)), I([[0, 2], [1, 1]], [[2, 2], [0, 1]]), const([1.0, 2.0, 0.5])]),
        Row(f"cross_entropy_{_red}", lambda F, x, t, r=_red: F.cross_entropy(x, t, reduction=r),
            [A((5, 4)), I(0, 3, 1, 1, 2)]),
        Row(f"cross_entropy_weight_ignore_{_red}",
            lambda F, x, t, w, r=_red: F.cross_entropy(x, t, w, ignore_index=2, reduction=r),
            [A((5, 4)), I(0, 3, 1, 2, 2), const([0.5, 2.0, 1.0, 1.5])]),
        Row(f"cross_entropy_smoothing_{_red}",
            lambda F, x, t, r=_red: F.cross_entropy(x, t, reduction=r, label_smoothing=0.2),
            [A((5, 4)), I(0, 3, 1, 1, 2)]),
        Row(f"cross_entropy_smoothing_weight_ignore_{_red}",
            lambda F, x, t, w, r=_red: F.cross_entropy(x, t, w, ignore_index=0, reduction=r,
                                                       label_smoothing=0.3),
            [A((5, 4)), I(0, 3, 1, 0, 2), const([0.5, 2.0, 1.0, 1.5])]),
        Row(f"cross_entropy_probs_{_red}",
            lambda F, x, t, r=_red: F.cross_entropy(x, t, reduction=r),
            [A((5, 4)), A((5, 4), kind="prob")]),
        Row(f"cross_entropy_probs_weight_smoothing_{_red}",
            lambda F, x, t, w, r=_red: F.cross_entropy(x, t, w, reduction=r,
                                                       label_smoothing=0.1),
            [A((5, 4)), A((5, 4), kind="prob", grad=False), const([0.5, 2.0, 1.0, 1.5])]),
        Row(f"cross_entropy_nd_{_red}", lambda F, x, t, r=_red: F.cross_entropy(x, t, reduction=r),
            [A((2, 3, 4)), I([0, 2, 1, 1], [2, 2, 0, 1])]),
    ]
for _red in ("none", "mean", "sum"):
    ROWS += [
        Row(f"multilabel_margin_loss_{_red}",
            lambda F, x, t, r=_red: F.multilabel_margin_loss(x, t, reduction=r),
            [A((3, 5)), I([3, 0, -1, 1, 4], [0, 1, 2, 3, 4], [4, -1, 0, 0, 0])]),
        Row(f"linear_cross_entropy_{_red}",
            lambda F, x, w, t, b, r=_red: F.linear_cross_entropy(x, w, t, linear_bias=b,
                                                                 reduction=r),
            [A((4, 3)), A((5, 3)), I(0, 4, 2, 2), A((5,))]),
    ]
ROWS += [
    Row("multilabel_margin_loss_unbatched", lambda F, x, t: F.multilabel_margin_loss(x, t),
        [A((4,)), I(2, 1, -1, 3)]),
    Row("linear_cross_entropy_kdim_probs_smoothing",
        lambda F, x, w, t: F.linear_cross_entropy(x, w, t, label_smoothing=0.2),
        [A((3, 4)), A((5, 2, 4)), A((3, 5, 2), kind="prob", grad=False)]),
    Row("linear_cross_entropy_weight_ignore",
        lambda F, x, w, t, cw: F.linear_cross_entropy(x, w, t, weight=cw, ignore_index=1),
        [A((4, 3)), A((3, 3)), I(0, 1, 2, 2), const([0.5, 2.0, 1.5])]),
    Row("cross_entropy_unbatched", lambda F, x, t: F.cross_entropy(x, t),
        [A((4,)), A(values=np.array(2), grad=False)]),
    Row("cross_entropy_unbatched_probs", lambda F, x, t: F.cross_entropy(x, t, label_smoothing=0.1),
        [A((4,)), A((4,), kind="prob")]),
    Row("cross_entropy_nd_smoothing_weight",
        lambda F, x, t, w: F.cross_entropy(x, t, w, label_smoothing=0.2, ignore_index=1),
        [A((2, 3, 4)), I([0, 2, 1, 1], [2, 2, 0, 1]), const([1.0, 0.5, 2.0])]),
    Row("cross_entropy_nd_probs", lambda F, x, t: F.cross_entropy(x, t),
        [A((2, 3, 2, 2)), A((2, 3, 2, 2), kind="prob")]),
]

IDS = [r.name for r in ROWS]
assert len(set(IDS)) == len(IDS)


def _build(r: Row, lib: str, dtype: str, rng):
    out = []
    for a in r.args:
        v = a.make(rng)
        if v.dtype.kind == "f":
            out.append((ember_from if lib == "ember" else torch_from)(v, dtype, a.grad))
        else:
            out.append(et.from_numpy(v.copy()) if lib == "ember" else torch.from_numpy(v.copy()))
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("r", ROWS, ids=IDS)
def test_values_and_gradients_match_torch(r: Row, dtype: str) -> None:
    ours = _build(r, "ember", dtype, np.random.default_rng(5))
    theirs = _build(r, "torch", dtype, np.random.default_rng(5))
    out, tout = r.fn(F, *ours), r.fn(TF, *theirs)
    assert out.dtype == {"float32": et.float32, "float64": et.float64}[dtype]
    assert_close(out, tout, dtype, f"{r.name}: output", scale=2.0)
    w = np.random.default_rng(1).uniform(0.5, 1.5, size=tuple(tout.shape))
    (out * ember_from(w, dtype)).sum().backward()
    (tout * torch_from(w, dtype)).sum().backward()
    for i, (a, b, spec) in enumerate(zip(ours, theirs, r.args)):
        if spec.grad:
            assert_close(a.grad, b.grad, dtype, f"{r.name}: gradient of argument {i}",
                         scale=r.scale)
        elif isinstance(b, torch.Tensor) and b.is_floating_point():  # running stats, in place
            assert_close(a, b, dtype, f"{r.name}: argument {i} after the call", scale=2.0)


@pytest.mark.parametrize("r", [r for r in ROWS if r.gradcheck], ids=lambda r: r.name)
def test_gradcheck(r: Row) -> None:
    args = _build(r, "ember", "float64", np.random.default_rng(7))
    assert ea.gradcheck(lambda *t: r.fn(F, *t), tuple(args))


GRADGRAD = [r for r in ROWS if r.gradcheck and r.gradgrad and not r.name.startswith(
    ("nll_loss_weight", "cross_entropy_weight", "cross_entropy_probs_weight"))]


@pytest.mark.parametrize("r", GRADGRAD, ids=lambda r: r.name)
def test_gradgradcheck(r: Row) -> None:
    args = _build(r, "ember", "float64", np.random.default_rng(11))
    assert ea.gradgradcheck(lambda *t: r.fn(F, *t), tuple(args))


# ----------------------------------------------------------------------------- running stats


@pytest.mark.parametrize("momentum", [0.1, 0.5])
def test_batch_norm_running_statistics_over_steps(momentum: float) -> None:
    rng = np.random.default_rng(2)
    rm, trm = pair(np.zeros(3))
    rv, trv = pair(np.ones(3))
    for step in range(5):
        x, tx = pair(rng.standard_normal((6, 3, 4)) * (step + 1) + step)
        F.batch_norm(x, rm, rv, training=True, momentum=momentum)
        TF.batch_norm(tx, trm, trv, training=True, momentum=momentum)
        assert_close(rm, trm, "float64", f"running_mean after step {step}")
        assert_close(rv, trv, "float64", f"running_var after step {step}")


def test_max_pool_indices_match_torch() -> None:
    a = np.random.default_rng(4).permutation(2 * 3 * 7 * 6).reshape(2, 3, 7, 6) * 1.0
    x, tx = pair(a)
    _, idx = F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)
    _, tidx = TF.max_pool2d(tx, 3, 2, 1, ceil_mode=True, return_indices=True)
    np.testing.assert_array_equal(np_of(idx), tidx.numpy())
    _, idx = F.adaptive_max_pool2d(x, (4, 5), return_indices=True)
    _, tidx = TF.adaptive_max_pool2d(tx, (4, 5), return_indices=True)
    np.testing.assert_array_equal(np_of(idx), tidx.numpy())
    _, idx = F.max_pool1d(x[0], 3, return_indices=True)
    _, tidx = TF.max_pool1d(tx[0], 3, return_indices=True)
    np.testing.assert_array_equal(np_of(idx), tidx.numpy())


def test_embedding_max_norm_renormalizes_in_place() -> None:
    w = np.random.default_rng(3).standard_normal((6, 4)) * 3
    idx = np.array([[0, 2], [2, 5]])
    x, tx = pair(w, requires_grad=True)
    out = F.embedding(et.from_numpy(idx), x, max_norm=1.5, norm_type=1.0)
    tout = TF.embedding(torch.from_numpy(idx), tx, max_norm=1.5, norm_type=1.0)
    assert_close(out, tout, "float64", "output")
    assert_close(x, tx, "float64", "the weight after renormalization")
    out.sum().backward()
    tout.sum().backward()
    assert_close(x.grad, tx.grad, "float64", "gradient")


def test_cross_entropy_all_ignored_is_nan_like_torch() -> None:
    x, tx = pair(np.zeros((3, 4)), requires_grad=True)
    t = np.full(3, -100)
    out = F.cross_entropy(x, et.from_numpy(t))
    tout = TF.cross_entropy(tx, torch.from_numpy(t))
    assert np.isnan(np_of(out)) and np.isnan(tout.item())
    out.backward()
    tout.backward()
    assert_close(x.grad, tx.grad, "float64", "gradient (zero)")


# ----------------------------------------------------------------------------- errors, warnings


@pytest.mark.parametrize("fn", ["max_pool3d", "adaptive_max_pool3d"])
def test_max_pool3d_indices_match_torch(fn) -> None:
    a = np.random.default_rng(5).permutation(2 * 2 * 5 * 6 * 4).reshape(2, 2, 5, 6, 4) * 1.0
    a[0, 0, 1, 2, :2] = np.nan  # a NaN wins (the last one in (d, h, w) order)
    a[1, 1, 2] = a[1, 1, 3]  # ties across depth: the first depth wins
    x, tx = pair(a)
    args = ((3, 2, 2), (2, 1, 2), 1, 1, True) if fn == "max_pool3d" else ((3, 4, 2),)
    out, idx = getattr(F, fn)(x, *args, return_indices=True)
    tout, tidx = getattr(TF, fn)(tx, *args, return_indices=True)
    np.testing.assert_array_equal(np_of(idx), tidx.numpy())
    np.testing.assert_array_equal(np_of(out), tout.detach().numpy())


@pytest.mark.parametrize("fn", ["conv1d", "conv2d", "conv3d", "conv_transpose1d",
                                "conv_transpose2d", "conv_transpose3d"])
def test_integer_convolutions_are_exact_like_torch(fn) -> None:
    rng = np.random.default_rng(6)
    nd = int(fn[-2])
    x = rng.integers(-9, 9, (2, 4, *(5,) * nd))
    transposed = "transpose" in fn
    w = rng.integers(-9, 9, (4, 3, *(3,) * nd) if transposed else (6, 2, *(2,) * nd))
    b = rng.integers(-9, 9, (6,))
    kw = dict(stride=2, padding=1, groups=2, dilation=2)
    if transposed:
        kw["output_padding"] = 1
    got = getattr(F, fn)(et.from_numpy(x), et.from_numpy(w), et.from_numpy(b), **kw)
    want = getattr(TF, fn)(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), **kw)
    assert got.dtype == et.int64
    np.testing.assert_array_equal(np_of(got), want.numpy())


def test_avg_pool3d_and_local_response_norm_of_integers_truncate_like_torch() -> None:
    a = np.random.default_rng(7).integers(-40, 40, (2, 3, 5, 4, 6))
    for kw in (dict(count_include_pad=True), dict(count_include_pad=False),
               dict(divisor_override=4)):
        got = F.avg_pool3d(et.from_numpy(a), 3, 2, 1, ceil_mode=True, **kw)
        want = TF.avg_pool3d(torch.from_numpy(a), 3, 2, 1, ceil_mode=True, **kw)
        np.testing.assert_array_equal(np_of(got), want.numpy())
    got = F.local_response_norm(et.from_numpy(a[:, :, 0]), 3)
    want = TF.local_response_norm(torch.from_numpy(a[:, :, 0]), 3)
    assert_close(got, want, "float32")


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq_divides_by_each_index_count(mode: str) -> None:
    """PyTorch 2.13's CPU kernel divides by a wrong count (pytorch/pytorch#190063, fixed
    after 2.13); Ember divides each row's gradient by its index's count, as documented and as
    torch's embedding does, which gives the reference here."""
    idx = np.array([1, 4, 4, 3, 1, 0, 3, 3])
    starts = [0, 3, 5]
    a = np.random.default_rng(9).standard_normal((6, 3))
    w, tw = pair(a, requires_grad=True)
    out = F.embedding_bag(et.from_numpy(idx), w, et.tensor(starts), mode=mode, padding_idx=0,
                          scale_grad_by_freq=True)
    rows = TF.embedding(torch.from_numpy(idx), tw, padding_idx=0, scale_grad_by_freq=True)
    bags = []
    for lo, hi in zip(starts, starts[1:] + [len(idx)]):
        keep = torch.from_numpy(idx[lo:hi] != 0).unsqueeze(1)
        total = (rows[lo:hi] * keep).sum(0)
        bags.append(total / max(int(keep.sum()), 1) if mode == "mean" else total)
    want = torch.stack(bags)
    assert_close(out, want)
    cot = np.random.default_rng(10).standard_normal(tuple(want.shape))
    (out * et.from_numpy(cot)).sum().backward()
    (want * torch.from_numpy(cot)).sum().backward()
    assert_close(w.grad, tw.grad)


def _error(lib: str, call) -> tuple[str, str]:
    mod, T = (F, et) if lib == "ember" else (TF, torch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call(mod, T)
        except Exception as exc:  # noqa: BLE001 - compared below
            return type(exc).__name__, torch_repr(str(exc)).split("\n")[0]
    return "no error", ""


ERRORS = {
    "max_pool2d_kernel": lambda F, T: F.max_pool2d(T.ones(1, 1, 4, 4), (2, 2, 2)),
    "max_pool2d_too_small": lambda F, T: F.max_pool2d(T.ones(1, 2, 2, 2), 3),
    "max_pool2d_pad": lambda F, T: F.max_pool2d(T.ones(1, 1, 4, 4), 2, 1, 2),
    "max_pool2d_2d_input": lambda F, T: F.max_pool2d(T.ones(4, 4), 2),
    "avg_pool2d_divisor": lambda F, T: F.avg_pool2d(T.ones(1, 1, 4, 4), 2, divisor_override=0),
    "adaptive_avg_pool2d_size": lambda F, T: F.adaptive_avg_pool2d(T.ones(1, 1, 4, 4), (2, 2, 2)),
    "batch_norm_one_value": lambda F, T: F.batch_norm(T.ones(1, 3), T.zeros(3), T.ones(3),
                                                      training=True),
    "batch_norm_stats_size": lambda F, T: F.batch_norm(T.ones(2, 3), T.zeros(4), T.ones(4)),
    "batch_norm_weight_size": lambda F, T: F.batch_norm(T.ones(2, 3), T.zeros(3), T.ones(3),
                                                        T.ones(2)),
    "batch_norm_eval_no_stats": lambda F, T: F.batch_norm(T.ones(2, 3), None, None),
    "layer_norm_shape": lambda F, T: F.layer_norm(T.ones(2, 3), (4,)),
    "layer_norm_weight": lambda F, T: F.layer_norm(T.ones(2, 3), (3,), T.ones(2)),
    "group_norm_groups": lambda F, T: F.group_norm(T.ones(2, 6, 5), 4),
    "group_norm_dims": lambda F, T: F.group_norm(T.ones(6), 2),
    "group_norm_one_value": lambda F, T: F.group_norm(T.ones(1, 2), 2),
    "group_norm_weight": lambda F, T: F.group_norm(T.ones(2, 6, 5), 3, T.ones(5)),
    "embedding_oob": lambda F, T: F.embedding(T.tensor([5]), T.ones(5, 3)),
    "embedding_padding": lambda F, T: F.embedding(T.tensor([1]), T.ones(5, 3), padding_idx=5),
    "embedding_float_indices": lambda F, T: F.embedding(T.tensor([1.0]), T.ones(5, 3)),
    "embedding_weight_dims": lambda F, T: F.embedding(T.tensor([1]), T.ones(5)),
    "nll_target_oob": lambda F, T: F.nll_loss(T.zeros(4, 5), T.tensor([0, 1, 5, 2])),
    "nll_batch": lambda F, T: F.nll_loss(T.zeros(4, 5), T.tensor([0, 1, 2])),
    "nll_nd_target": lambda F, T: F.nll_loss(T.zeros(2, 5, 3), T.zeros(2, 4, dtype=T.int64)),
    "nll_0d": lambda F, T: F.nll_loss(T.zeros(()), T.tensor(0)),
    "nll_weight": lambda F, T: F.nll_loss(T.zeros(4, 5), T.tensor([0, 1, 2, 3]), T.ones(4)),
    "nll_reduction": lambda F, T: F.nll_loss(T.zeros(4, 5), T.tensor([0, 1, 2, 3]),
                                             reduction="foo"),
    "nll_target_dtype": lambda F, T: F.nll_loss(T.zeros(4, 5), T.tensor([0.0, 1, 2, 3])),
    "cross_entropy_smoothing": lambda F, T: F.cross_entropy(T.zeros(4, 5), T.tensor([0, 1, 2, 3]),
                                                            label_smoothing=1.5),
    "cross_entropy_probs_ignore": lambda F, T: F.cross_entropy(T.zeros(4, 5),
                                                               T.ones(4, 5) / 5, ignore_index=1),
    "cross_entropy_probs_int": lambda F, T: F.cross_entropy(T.zeros(4, 5),
                                                            T.ones(4, 5, dtype=T.int64)),
    "cross_entropy_target_shape": lambda F, T: F.cross_entropy(T.zeros(4, 5), T.ones(4, 4) / 4),
    "max_unpool_index_oob": lambda F, T: F.max_unpool2d(T.ones(1, 1, 2, 2),
                                                        T.tensor([[[[0, 1], [2, 99]]]]), 2),
    "max_unpool1d_index_oob": lambda F, T: F.max_unpool1d(T.ones(1, 1, 4),
                                                          T.tensor([[[0, 9, 2, 3]]]), 2),
    "max_unpool_float_indices": lambda F, T: F.max_unpool2d(T.ones(1, 1, 2, 2),
                                                            T.zeros(1, 1, 2, 2), 2),
    "max_unpool_indices_shape": lambda F, T: F.max_unpool2d(
        T.ones(1, 1, 2, 2), T.zeros(1, 1, 2, 1, dtype=T.int64), 2),
    "max_unpool_output_size": lambda F, T: F.max_unpool2d(
        T.ones(1, 1, 2, 2), T.zeros(1, 1, 2, 2, dtype=T.int64), 2, output_size=(9, 9)),
    "multilabel_margin_target_range": lambda F, T: F.multilabel_margin_loss(
        T.zeros(2, 3), T.tensor([[0, 3, -1], [0, 1, 2]])),
    "multilabel_margin_target_size": lambda F, T: F.multilabel_margin_loss(
        T.zeros(2, 3), T.tensor([[0, 1, -1]])),
    "linear_cross_entropy_in_features": lambda F, T: F.linear_cross_entropy(
        T.zeros(2, 3), T.zeros(4, 5), T.tensor([0, 1])),
    "linear_cross_entropy_probs_ignore": lambda F, T: F.linear_cross_entropy(
        T.zeros(2, 3), T.zeros(4, 3), T.ones(2, 4) / 4, ignore_index=0),
    "linear_cross_entropy_kdim_unbatched": lambda F, T: F.linear_cross_entropy(
        T.zeros(3), T.zeros(4, 2, 3), T.tensor([0, 1])),
    "unfold_integer": lambda F, T: F.unfold(T.ones(1, 1, 3, 3, dtype=T.int64), 2),
    "embedding_bag_offsets0": lambda F, T: F.embedding_bag(T.tensor([1, 2]), T.ones(4, 2),
                                                           T.tensor([1])),
    "embedding_bag_no_offsets": lambda F, T: F.embedding_bag(T.tensor([1, 2]), T.ones(4, 2)),
    "embedding_bag_weights_mode": lambda F, T: F.embedding_bag(
        T.tensor([1, 2]), T.ones(4, 2), T.tensor([0]), mode="max",
        per_sample_weights=T.ones(2)),
    "embedding_bag_range": lambda F, T: F.embedding_bag(T.tensor([1, 20]), T.ones(4, 2),
                                                        T.tensor([0])),
    "embedding_bag_mode": lambda F, T: F.embedding_bag(T.tensor([1, 2]), T.ones(4, 2),
                                                       T.tensor([0]), mode="min"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name: str) -> None:
    assert _error("ember", ERRORS[name]) == _error("torch", ERRORS[name])


def test_legacy_reduction_arguments_warn_like_torch() -> None:
    for mod, T in ((F, et), (TF, torch)):
        with pytest.warns(UserWarning, match="reduction='sum'"):
            out = mod.nll_loss(T.zeros(2, 3), T.tensor([0, 1]), size_average=False)
        assert float(out) == 0.0
