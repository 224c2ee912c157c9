"""Divergences from PyTorch that the differential fuzzer found in nn.functional, each
checked against PyTorch on the same call."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember_nn.functional as F
import ember_tensor as et


def _same(got, want):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.double().numpy(), want.double().numpy(), rtol=1e-6)


def test_huber_loss_is_in_the_input_dtype():
    for a, b in [("float16", "float32"), ("float32", "float16"), ("float16", "float64")]:
        x, y = [-1.5, 3.0, -1.5], [0.0, -2.0, 0.5]
        got = F.huber_loss(
            et.tensor(x, dtype=getattr(et, a)), et.tensor(y, dtype=getattr(et, b)), delta=0.5
        )
        want = TF.huber_loss(
            torch.tensor(x, dtype=getattr(torch, a)),
            torch.tensor(y, dtype=getattr(torch, b)),
            delta=0.5,
        )
        _same(got, want)


def test_gaussian_nll_loss_of_integers_has_a_float_variance():
    x, t = [[3], [-3]], [[2, 2], [0, 2]]
    got = F.gaussian_nll_loss(et.tensor(x, dtype=et.int16), et.tensor(t), 1.5)
    want = TF.gaussian_nll_loss(torch.tensor(x, dtype=torch.int16), torch.tensor(t), 1.5)
    _same(got, want)


def test_multilabel_soft_margin_loss_sums_over_classes():
    """A target that broadcasts the class dim away: the sum over no classes is 0 (PyTorch
    sums and divides by the class count; a mean of nothing would be NaN)."""
    got = F.multilabel_soft_margin_loss(
        et.tensor([2.0], dtype=et.float16), et.zeros(0, dtype=et.int64)
    )
    want = TF.multilabel_soft_margin_loss(
        torch.tensor([2.0], dtype=torch.float16), torch.zeros(0, dtype=torch.int64)
    )
    _same(got, want)
    x, y = [[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]], [[1, 0, 1], [0, 0, 1]]
    _same(F.multilabel_soft_margin_loss(et.tensor(x), et.tensor(y)),
          TF.multilabel_soft_margin_loss(torch.tensor(x), torch.tensor(y)))  # fmt: skip


def test_pairwise_distance_of_integers_with_an_int_eps():
    a, b = [[2, 1], [0, 254]], 254
    got = F.pairwise_distance(et.tensor(a, dtype=et.uint8), et.tensor(b, dtype=et.uint8), eps=1)
    want = TF.pairwise_distance(
        torch.tensor(a, dtype=torch.uint8), torch.tensor(b, dtype=torch.uint8), eps=1
    )
    _same(got, want)


def test_regression_losses_promote_a_bool_operand():
    for name in ("smooth_l1_loss", "huber_loss", "mse_loss"):
        got = getattr(F, name)(et.tensor([0.5, 0.25]), et.tensor([True, False]))
        want = getattr(TF, name)(torch.tensor([0.5, 0.25]), torch.tensor([True, False]))
        _same(got, want)
    for name in ("smooth_l1_loss", "mse_loss"):
        got = getattr(F, name)(et.tensor([True, False]), et.tensor([0.5, 0.25]))
        want = getattr(TF, name)(torch.tensor([True, False]), torch.tensor([0.5, 0.25]))
        _same(got, want)
    with pytest.raises(NotImplementedError, match="huber_loss"):
        F.huber_loss(et.tensor([True]), et.tensor([True]))
    # huber_loss writes input's dtype: a float loss into a bool or integer input is an error
    for x in ([True, False], [1, 0]):
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            TF.huber_loss(torch.tensor(x), torch.tensor([0.5, 0.25]))
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            F.huber_loss(et.tensor(x), et.tensor([0.5, 0.25]))


def test_weighted_mse_loss_takes_integers():
    x, t, w = [1, 2], [1, 5], [1, -3]
    got = F.mse_loss(
        et.tensor(x, dtype=et.int16), et.tensor(t), weight=et.tensor(w, dtype=et.int16)
    )
    want = TF.mse_loss(
        torch.tensor(x, dtype=torch.int16),
        torch.tensor(t),
        weight=torch.tensor(w, dtype=torch.int16),
    )
    _same(got, want)
    with pytest.raises(NotImplementedError):
        F.mse_loss(et.tensor(x), et.tensor(t))


@pytest.mark.parametrize("name", ["avg_pool2d", "max_pool2d", "avg_pool3d"])
@pytest.mark.parametrize("kernel", [True, 2.0, [2, 2.5]])
def test_pooling_sizes_refuse_bools_and_floats(name, kernel):
    dims = 5 if name.endswith("3d") else 4
    with pytest.raises(TypeError):
        getattr(TF, name)(torch.ones(*[1] * (dims - 2), 4, 4), kernel)
    with pytest.raises(TypeError, match="must be tuple of ints"):
        getattr(F, name)(et.ones(*[1] * (dims - 2), 4, 4), kernel)


def test_soft_margin_loss_writes_the_input_dtype():
    x, y = [1, 2], [1, -1]
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Char"):
        TF.soft_margin_loss(torch.tensor(x, dtype=torch.int8), torch.tensor(y, dtype=torch.int8))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Char"):
        F.soft_margin_loss(et.tensor(x, dtype=et.int8), et.tensor(y, dtype=et.int8))
    _same(F.soft_margin_loss(et.tensor([1.0, 2.0]), et.tensor(y)),
          TF.soft_margin_loss(torch.tensor([1.0, 2.0]), torch.tensor(y)))  # fmt: skip


def test_bce_with_logits_takes_log_sigmoid_in_the_input_dtype():
    """PyTorch forms log_sigmoid(input) in input's dtype: a float16 input rounds it before
    the float32 target is mixed in."""
    x, t = [1.0, 2.0, -0.7], [1.0, 0.0, 0.25]
    got = F.binary_cross_entropy_with_logits(
        et.tensor(x, dtype=et.float16), et.tensor(t), reduction="none"
    )
    want = TF.binary_cross_entropy_with_logits(
        torch.tensor(x, dtype=torch.float16), torch.tensor(t), reduction="none"
    )
    _same(got, want)


def test_bool_arguments_of_losses_and_dropout_are_checked():
    with pytest.raises(TypeError, match=r"'log_input' (\(position 3\) )?must be bool, not float"):
        TF.poisson_nll_loss(torch.ones(2), torch.ones(2), 1.5)
    with pytest.raises(TypeError, match=r"'log_input' (\(position 3\) )?must be bool, not float"):
        F.poisson_nll_loss(et.ones(2), et.ones(2), 1.5)
    with pytest.raises(TypeError, match=r"'train' \(position 3\) must be bool, not int"):
        TF.alpha_dropout(torch.ones(3), 0.5, 1)
    with pytest.raises(TypeError, match=r"'train' \(position 3\) must be bool, not int"):
        F.alpha_dropout(et.ones(3), 0.5, 1)


def test_cosine_similarity_promotes_to_the_common_float_dtype():
    got = F.cosine_similarity(et.tensor([[True, False]]), et.tensor([[1.0, 1.0]]))
    _same(got, TF.cosine_similarity(torch.tensor([[True, False]]), torch.tensor([[1.0, 1.0]])))
    with pytest.raises(RuntimeError, match="common dtype is Long"):
        F.cosine_similarity(et.tensor([[1, 0]]), et.tensor([[1, 1]]))
    # a float16 operand is normalized in float16 beside a float64 one, as PyTorch does
    x, y = [[-2.0, 1.0, -0.5], [2.0, -1.5, 0.0]], [[1.0, -0.5, -0.5], [0.0, -0.5, 3.0]]
    got = F.cosine_similarity(
        et.tensor(x, dtype=et.float16), et.tensor(y, dtype=et.float64), eps=0.0
    )
    want = TF.cosine_similarity(
        torch.tensor(x, dtype=torch.float16), torch.tensor(y, dtype=torch.float64), eps=0.0
    )
    _same(got, want)


@pytest.mark.parametrize(
    "call",
    [
        lambda F, L: F.binary_cross_entropy_with_logits(L.tensor([-2.0, 0.0]), L.tensor([1, 2])),
        lambda F, L: F.binary_cross_entropy_with_logits(
            L.tensor([-2.0, 0.0]), L.tensor([True, False])
        ),
        lambda F, L: F.binary_cross_entropy(L.tensor([0.5, 0.2]), L.tensor([1, 0])),
        lambda F, L: F.binary_cross_entropy(
            L.tensor([0.5, 0.2]), L.tensor([1.0, 0.0], dtype=L.float64)
        ),
        lambda F, L: F.soft_margin_loss(L.tensor([3.0]), L.tensor([[1]])),
    ],
)
def test_loss_operands_pytorch_refuses(call):
    """Integer or bool targets of the BCE losses, a target of another dtype for
    binary_cross_entropy, a target that broadcasts soft_margin_loss's input: PyTorch's
    errors, word for word."""
    with pytest.raises(RuntimeError) as want:
        call(TF, torch)
    with pytest.raises(RuntimeError) as got:
        call(F, et)
    assert str(got.value) == str(want.value)


def test_prelu_weight_of_another_dtype_is_an_error():
    with pytest.raises(RuntimeError, match="Type promoting not supported. Got Float and Int"):
        TF.prelu(torch.ones(2, 3), torch.tensor([1], dtype=torch.int32))
    with pytest.raises(RuntimeError, match="Type promoting not supported. Got Float and Int"):
        F.prelu(et.ones(2, 3), et.tensor([1], dtype=et.int32))


@pytest.mark.parametrize(
    "call",
    [
        lambda F, L: F.conv2d(L.ones(1, 1, 5, 5), L.ones(1, 1, 2, 2), stride=[1, 1, 1]),
        lambda F, L: F.conv1d(L.ones(1, 1, 5), L.ones(1, 1, 2), padding=[1, 1]),
        lambda F, L: F.conv_transpose1d(L.ones(1, 1, 5), L.ones(1, 1, 2), output_padding=[0, 0]),
        lambda F, L: F.conv3d(L.ones(1, 1, 5, 5, 5), L.ones(1, 1, 2, 2, 2), padding=[1, 1]),
        lambda F, L: F.unfold(L.ones(1, 1, 4, 4), 2, dilation=[1]),
        lambda F, L: F.fold(L.ones(1, 4, 9), 4, 2, dilation=[1]),
        lambda F, L: F.multi_margin_loss(L.ones(3, 2), L.zeros(3, 1, dtype=L.int64)),
        lambda F, L: F.multi_margin_loss(L.ones(2), L.zeros(2, dtype=L.int64)),
    ],
)
def test_argument_lengths_and_target_shapes_pytorch_checks(call):
    """A convolution's stride/padding/dilation/output_padding of 1 or n values (fold and
    unfold: exactly 2), multi_margin_loss's one target per sample: PyTorch's errors."""
    with pytest.raises(RuntimeError) as want:
        call(TF, torch)
    with pytest.raises(RuntimeError) as got:
        call(F, et)
    assert str(got.value) == str(want.value)


NN = {et: F, torch: TF}


def _both_nn(fn):
    return fn(et), fn(torch)


def test_linear_of_expanded_input_without_features():
    got, want = _both_nn(
        lambda lib: NN[lib].linear(lib.zeros(1, 1, 0).expand(2, 1, 0), lib.zeros(1, 0))
    )
    assert tuple(got.shape) == tuple(want.shape) == (2, 1, 1)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize(
    "shape, size", [((3, 0, 2), [1, 1]), ((1, 3, 2, 0), [1, 1]), ((0, 3, 2), [2, 1])]
)
def test_adaptive_avg_pool_of_empty_planes_to_one_by_one(shape, size):
    """PyTorch averages to 1x1 as a mean over the plane: NaN for an empty plane."""
    got, want = _both_nn(lambda lib: NN[lib].adaptive_avg_pool2d(lib.zeros(shape), size))
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match="non-zero size for non-batch dimensions"):
            NN[lib].adaptive_avg_pool2d(lib.zeros(3, 0, 2), [0, 1])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_loss_of_an_unbatched_input_with_a_target_of_one_element(reduction):
    x = [0.7, -5.0, -5.2]
    got, want = _both_nn(
        lambda lib: NN[lib].cross_entropy(
            lib.tensor(x), lib.tensor([1]), weight=lib.tensor([1.0, 2.0, 3.0]), reduction=reduction
        )
    )
    assert tuple(got.shape) == tuple(want.shape) == ()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    xe = et.tensor(x, requires_grad=True)
    F.nll_loss(xe, et.tensor([1]), reduction=reduction).backward()
    xt = torch.tensor(x, requires_grad=True)
    torch.nn.functional.nll_loss(xt, torch.tensor(1), reduction=reduction).backward()
    np.testing.assert_array_equal(xe.grad.numpy(), xt.grad.numpy())
    for lib in (et, torch):
        with pytest.raises(ValueError, match="For 1D input, 1D target must have size 1"):
            NN[lib].nll_loss(lib.tensor(x), lib.tensor([1, 2]))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: NN[lib].huber_loss(lib.tensor([1.0, -1.5]), lib.tensor([1, 1]), delta=10**20),
        lambda lib: NN[lib].pairwise_distance(
            lib.tensor([[0, 1], [4, 4]], dtype=lib.uint8),
            lib.tensor([[5, 0], [1, 3]], dtype=lib.uint8),
            p=-(2**63) - 1,
        ),
        lambda lib: NN[lib].poisson_nll_loss(
            lib.tensor([2.9, 3.2, 1.3]), lib.tensor(2.0), False, False, eps=10**20
        ),
        lambda lib: NN[lib].triplet_margin_loss(
            lib.tensor([[1.0]]), lib.tensor([[2.0]]), lib.tensor([[-3.0]]), margin=2**70, p=10**20
        ),
        lambda lib: NN[lib].bilinear(
            lib.ones(3, 2, 2), lib.ones(3, 2, 2), lib.ones(3, 2, 2), lib.ones(3, 1, 3)
        ),
    ],
)
def test_float_arguments_take_any_int_and_bias_broadcasts(call):
    """float arguments given ints beyond int64 (PyTorch's parser converts them to double);
    bilinear checks only the bias's first dim, then broadcasts it."""
    got, want = call(et), call(torch)
    _same(got, want)


def test_float_argument_of_another_type_and_bilinear_bias_checks():
    for lib in (et, torch):
        with pytest.raises(TypeError, match="argument 'delta'.* must be float, not str"):
            NN[lib].huber_loss(lib.ones(2), lib.ones(2), delta="a")
        with pytest.raises(
            RuntimeError, match="bias size does not match weight size: got 4 but expected 3"
        ):
            NN[lib].bilinear(lib.ones(2, 3), lib.ones(2, 3), lib.ones(3, 3, 3), lib.ones(4, 3))
        with pytest.raises(IndexError):
            NN[lib].bilinear(lib.ones(2, 3), lib.ones(2, 3), lib.ones(3, 3, 3), lib.tensor(1.0))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: NN[lib].hinge_embedding_loss(
            lib.tensor([[2.0, -1.5], [-0.5, -2.0]]), lib.tensor([[1], [0]]), margin=True
        ),
        lambda lib: NN[lib].margin_ranking_loss(
            lib.tensor([1.0, 2.0]), lib.tensor([2.0, 1.0]), lib.tensor([1.0, -1.0]), margin=10**20
        ),
        lambda lib: NN[lib].cosine_embedding_loss(
            lib.tensor([[1.0, 2.0]]), lib.tensor([[2.0, 1.0]]), lib.tensor([-1.0]), margin=False
        ),
        lambda lib: NN[lib].multi_margin_loss(
            lib.tensor([[1.0, 2.0, 0.5]]), lib.tensor([1]), margin=2
        ),
    ],
)
def test_margins_are_float_arguments(call):
    _same(call(et), call(torch))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: NN[lib].l1_loss(
            lib.tensor([1], dtype=lib.uint8), lib.tensor(0), reduction="none"
        ),
        lambda lib: NN[lib].mse_loss(
            lib.tensor(2.0), lib.tensor([1.0], dtype=lib.float16).expand(3)
        ),
        lambda lib: NN[lib].smooth_l1_loss(
            lib.tensor([-1.5], dtype=lib.float16), lib.tensor(-1.0, dtype=lib.bfloat16)
        ),
        lambda lib: NN[lib].bilinear(
            lib.tensor([[[3]]], dtype=lib.uint8),
            lib.tensor([[[4]]], dtype=lib.uint8),
            lib.tensor([[[2]]], dtype=lib.uint8),
            lib.tensor([[[0]]], dtype=lib.uint8),
        ),
    ],
)
def test_losses_broadcast_before_promoting_and_bilinear_keeps_integers(call):
    """A 0-d target of a wider dtype promotes once the operands are broadcast, as in
    PyTorch's losses; an integer bilinear stays in its dtype."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(call(et), call(torch))


def test_threshold_reads_a_0d_tensor_as_a_number():
    for value in (lambda lib: lib.tensor(2.0, dtype=lib.float16), lambda lib: 2):
        _same(
            F.threshold(et.tensor(-2.125, dtype=et.bfloat16), 0.1, value(et)),
            TF.threshold(torch.tensor(-2.125, dtype=torch.bfloat16), 0.1, value(torch)),
        )
    for lib, fn in ((et, F.threshold), (torch, TF.threshold)):
        with pytest.raises(TypeError, match="argument 'value'.* must be Number, not Tensor"):
            fn(lib.tensor([-2.0]), 0.1, lib.tensor([2.0]))


def test_cosine_similarity_eps_is_a_float_argument():
    _same(
        F.cosine_similarity(et.ones(2, 3), et.ones(2, 3), eps=10**20),
        TF.cosine_similarity(torch.ones(2, 3), torch.ones(2, 3), eps=10**20),
    )


def _same_error(call, kind=RuntimeError):
    """call(lib) raises ``kind`` with PyTorch's message, word for word."""
    with pytest.raises(kind) as want:
        call(torch)
    with pytest.raises(kind) as got:
        call(et)
    assert str(got.value) == str(want.value)


_ADAPTIVE = [f"adaptive_{k}_pool{d}d" for k in ("avg", "max") for d in (1, 2, 3)] + [
    f"adaptive_max_pool{d}d_with_indices" for d in (1, 2, 3)
]


@pytest.mark.parametrize("name", _ADAPTIVE)
@pytest.mark.parametrize("size", [None, True, False, "bool entry"])
def test_adaptive_pools_refuse_none_and_bool_output_sizes(name, size):
    nd = int(name.split("pool")[1][0])
    if size == "bool entry":
        size = (True,) + (1,) * (nd - 1)
    _same_error(lambda lib: getattr(NN[lib], name)(lib.ones(*[2] * (nd + 1)), size), TypeError)


@pytest.mark.parametrize("name", [n for n in _ADAPTIVE if "1d" not in n])
def test_adaptive_pools_keep_none_entries(name):
    nd = int(name.split("pool")[1][0])
    got, want = _both_nn(
        lambda lib: getattr(NN[lib], name)(lib.ones(*[2] * (nd + 1)), (None,) * nd)
    )
    got, want = (got[0], want[0]) if isinstance(got, tuple) else (got, want)
    _same(got, want)


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 4, 2)])
def test_local_response_norm_size_is_an_int(shape):
    _same_error(
        lambda lib: NN[lib].local_response_norm(lib.ones(shape), True, 1.0, -1.0, -1.0), TypeError
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: NN[lib].fractional_max_pool2d_with_indices(
            lib.ones(2, 2, 2, dtype=lib.float64),
            [2, 2],
            output_size=[1],
            _random_samples=lib.full((2, 2, 2), 0.5, dtype=lib.float64),
        ),
        lambda lib: NN[lib].fractional_max_pool2d(lib.ones(2, 4, 4), (2,), output_size=2),
        lambda lib: NN[lib].fractional_max_pool3d(lib.ones(2, 4, 4, 4), 2, output_size=(1,)),
        lambda lib: NN[lib].fractional_max_pool3d(lib.ones(2, 4, 4, 4), [2], output_size=1),
    ],
)
def test_fractional_max_pool_sizes_are_one_int_or_n(call):
    _same_error(call)


@pytest.mark.parametrize(
    "nd, shape",
    [
        (3, (2, 2, 2)),
        (3, (1, 1, 2, 2, 2, 2)),
        (2, (2, 2)),
        (2, (1, 1, 1, 2, 2)),
        (1, (2,)),
        (1, (1, 1, 1, 2)),
    ],
)
def test_max_unpool_input_ranks(nd, shape):
    def call(lib):
        x = lib.zeros(shape, dtype=lib.uint8 if nd == 3 else lib.float32)
        fn = getattr(NN[lib], f"max_unpool{nd}d")
        return fn(x, lib.zeros(shape, dtype=lib.int64), [2] * nd, [1] + [2] * (nd - 1))

    _same_error(call)


def test_max_unpool1d_indices_shape_message_is_the_2d_ops():
    _same_error(lambda lib: NN[lib].max_unpool1d(lib.zeros(1, 2, 2), lib.zeros(1, 2, 3).long(), 2))


@pytest.mark.parametrize("weight", [(), (1,), (1, 3), (4,)])
def test_rms_norm_weight_has_the_normalized_shape(weight):
    _same_error(
        lambda lib: NN[lib].rms_norm(
            lib.ones(3, 3, dtype=lib.float64),
            [3],
            weight=lib.ones(weight, dtype=lib.float64),
            eps=-1.0,
        )
    )
    for arg in ("weight", "bias"):
        _same_error(
            lambda lib, arg=arg: NN[lib].layer_norm(lib.ones(3, 3), [3], **{arg: lib.ones(weight)})
        )


@pytest.mark.parametrize(
    "call",
    [
        lambda F, L: F.batch_norm(
            L.zeros(1, 0, dtype=L.float64), L.zeros(4, dtype=L.float64), "abc", None, momentum=0.1
        ),
        lambda F, L: F.batch_norm(L.ones(2, 4), 1, L.ones(4)),
        lambda F, L: F.batch_norm(L.ones(2, 4), None, None, 2.0, training=True),
        lambda F, L: F.batch_norm(L.ones(2, 4), None, None, None, [1.0], training=True),
        lambda F, L: F.instance_norm(L.ones(2, 4, 3), "a"),
        lambda F, L: F.instance_norm(L.ones(2, 4, 3), None, None, None, 1.0),
        lambda F, L: F.layer_norm(L.ones(2, 3), [3], 1),
        lambda F, L: F.layer_norm(L.ones(2, 3), [3], None, "b"),
        lambda F, L: F.group_norm(L.ones(2, 4, 3), 2, "w"),
        lambda F, L: F.group_norm(L.ones(2, 4, 3), 2, None, 0),
        lambda F, L: F.rms_norm(L.ones(2, 3), [3], "w"),
    ],
)
def test_norm_tensor_arguments_refuse_other_types(call):
    _same_error(lambda lib: call(NN[lib], lib), TypeError)


@pytest.mark.parametrize(
    "call",
    [
        lambda F, L: F.batch_norm(
            L.zeros(3, 5, 0, dtype=L.bool)[:, :, ::2],
            L.zeros(3, 3, dtype=L.bool),
            L.zeros(3, 3, dtype=L.bool),
            training=True,
            momentum=1,
        ),
        lambda F, L: F.batch_norm(
            L.zeros(3, 5, 0, dtype=L.bool),
            None,
            None,
            L.ones(5, dtype=L.bool),
            L.ones(5, dtype=L.bool),
        ),
        lambda F, L: F.batch_norm(
            L.zeros(3, 5, 0, dtype=L.int8), None, None, L.ones(5, dtype=L.int64), training=True
        ),
        lambda F, L: F.batch_norm(L.zeros(3, 5, 0, dtype=L.int32), None, None, L.ones(5)),
        lambda F, L: F.batch_norm(L.zeros(0, 5), L.zeros(5), L.ones(5), L.ones(5, dtype=L.float64)),
        lambda F, L: F.batch_norm(L.zeros(0), None, None, L.ones(3)),
        lambda F, L: F.instance_norm(L.ones(0, 4, 2, dtype=L.bool)),
    ],
)
def test_batch_norm_of_an_empty_input_is_its_clone_times_weight_0_plus_bias_0(call):
    _same(*_both_nn(lambda lib: call(NN[lib], lib)))


@pytest.mark.parametrize(
    "call, kind",
    [
        (
            lambda F, L: F.batch_norm(L.ones(3, 5, 2, dtype=L.bool), None, None, training=True),
            NotImplementedError,
        ),
        (
            lambda F, L: F.batch_norm(L.ones(3, 5, 2, dtype=L.int32), L.zeros(5), L.ones(5)),
            NotImplementedError,
        ),
        (lambda F, L: F.instance_norm(L.ones(3, 5, 2, dtype=L.uint8)), NotImplementedError),
        (
            lambda F, L: F.batch_norm(L.ones(3, 5, 2, dtype=L.int32), L.ones(4), L.ones(4)),
            RuntimeError,
        ),
        (lambda F, L: F.batch_norm(L.ones(3, 5, 2, dtype=L.int64), None, None), RuntimeError),
        (lambda F, L: F.batch_norm(L.ones(3, 5, 2), None, L.ones(4), L.ones(4)), RuntimeError),
        (lambda F, L: F.batch_norm(L.zeros(3, 5, 0), None, None, L.tensor(2.0)), IndexError),
    ],
)
def test_batch_norm_checks_sizes_then_refuses_integers(call, kind):
    """PyTorch checks the statistics' and parameters' sizes (and that eval mode has running
    statistics), then its float-only kernel refuses bool and integer inputs."""
    if kind is IndexError:  # PyTorch's select() words, not Ember's indexing's
        for lib in (et, torch):
            with pytest.raises(IndexError):
                call(NN[lib], lib)
        return
    _same_error(lambda lib: call(NN[lib], lib), kind)


@pytest.mark.parametrize("name, shape", [("dropout1d", (2, 5)), ("dropout3d", (2, 5, 3, 2))])
@pytest.mark.parametrize("training", [False, True])
def test_unbatched_channel_dropout_in_place_refuses_a_leaf(name, shape, training):
    """PyTorch gives an unbatched input its batch dim in place (unsqueeze_), training or
    not: a leaf that requires grad, or a view of one, is refused."""
    for view in (False, True):

        def call(lib, view=view):
            x = lib.randn(*shape, dtype=lib.float16).requires_grad_(True)
            return getattr(NN[lib], name)(x[:] if view else x, training=training, inplace=True)

        _same_error(call)
    for lib in (et, torch):  # batched input, or no leaf: the identity when not training
        x = lib.randn(1, *shape, dtype=lib.float16).requires_grad_(True)
        assert getattr(NN[lib], name)(x, training=False, inplace=True) is x
        y = lib.randn(*shape) * 2
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert getattr(NN[lib], name)(y, 0.0, training=training, inplace=True).shape == shape


@pytest.mark.parametrize(
    "size, mode",
    [
        ([9223372036854775808, 1], "nearest"),
        (2**63, "bilinear"),
        ([1, -(2**63) - 1], "area"),
        ([2**64, 1], "nearest-exact"),
        ([True, 1], "nearest"),
        (1.5, "bilinear"),
        ([1.5, 1], "nearest"),
    ],
)
def test_interpolate_sizes_must_be_int64s(size, mode):
    for lib in (et, torch):
        with pytest.raises(
            TypeError, match="Overflow when unpacking long long|expected size|invalid combination"
        ):
            NN[lib].interpolate(lib.randn(1, 2, 2, 2, dtype=lib.float64), size, mode=mode)
    for lib in (et, torch):  # computed from scale_factor
        with pytest.raises(RuntimeError, match="cannot be converted to type int64_t"):
            NN[lib].interpolate(lib.randn(1, 2, 2, 2), scale_factor=1e19)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: NN[lib].multilabel_margin_loss(
            lib.tensor(1.47), lib.tensor([-1]), reduce=lib.tensor([-2], dtype=lib.int32)
        ),
        lambda lib: NN[lib].multilabel_margin_loss(lib.tensor(1.47), lib.tensor([0])),
        lambda lib: NN[lib].multilabel_margin_loss(lib.tensor([0.5]), lib.tensor(0)),
        lambda lib: NN[lib].multilabel_margin_loss(
            lib.tensor([0.5, -1.0]), lib.tensor([1, -1]), reduction="none"
        ),
    ],
)
def test_multilabel_margin_loss_reads_a_0d_input_as_one_frame_of_one_class(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(call(et), call(torch))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: NN[lib].multilabel_margin_loss(lib.tensor(1.0), lib.tensor([[0]])),
        lambda lib: NN[lib].multilabel_margin_loss(lib.tensor(1.0), lib.tensor([1])),
        lambda lib: NN[lib].multilabel_margin_loss(lib.zeros(2, 0), lib.zeros(2, 0).long()),
        lambda lib: NN[lib].multilabel_margin_loss(lib.ones(1, 1, 2), lib.zeros(1, 1, 2).long()),
        lambda lib: NN[lib].multilabel_margin_loss(lib.ones(2), lib.zeros(2, dtype=lib.int32)),
    ],
)
def test_multilabel_margin_loss_shape_and_target_checks(call):
    _same_error(call)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: NN[lib].smooth_l1_loss(
            lib.tensor([-3, 2]), target=lib.tensor(-1), size_average=(), beta=0.0
        ),
        lambda lib: NN[lib].smooth_l1_loss(
            lib.tensor([1], dtype=lib.uint8),
            lib.tensor([-4], dtype=lib.int8),
            reduction="none",
            beta=0,
        ),
        lambda lib: NN[lib].smooth_l1_loss(
            lib.tensor([1.5, 2.0], dtype=lib.float16), lib.tensor(0.5), beta=0
        ),
    ],
)
def test_smooth_l1_loss_with_beta_0_is_l1_loss(call):
    with warnings.catch_warnings():  # (both warn of the broadcast target)
        warnings.simplefilter("ignore")
        _same(call(et), call(torch))
        with pytest.raises(NotImplementedError):  # other betas have float kernels only
            F.smooth_l1_loss(et.tensor([-3, 2]), et.tensor(-1), beta=1.0)


@pytest.mark.parametrize("name", ["softshrink", "hardshrink"])
@pytest.mark.parametrize("lambd", [True, False, 1, lambda lib: lib.tensor(0.5)])
def test_shrink_lambd_is_a_number(name, lambd):
    def call(lib):
        value = lambd(lib) if callable(lambd) else lambd
        return getattr(NN[lib], name)(lib.tensor([[1.484375, -0.3]], dtype=lib.bfloat16), value)

    _same(call(et), call(torch))
    for lib in (et, torch):
        with pytest.raises(TypeError, match="argument 'lambd'"):
            getattr(NN[lib], name)(lib.ones(2), "a")
        with pytest.raises(OverflowError):
            getattr(NN[lib], name)(lib.ones(2), 2**70)
        with pytest.raises(NotImplementedError):
            getattr(NN[lib], name)(lib.ones(2, dtype=lib.int64), 1)


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize(
    "shape,pad",
    [((0, 3), [1, 1]), ((2, 0, 3), [1, 1]), ((0, 3, 3), [1, 1, 1, 1]), ((1, 2, 0, 3, 3), [1] * 6)],
)
def test_edge_padding_wants_every_dim_but_the_batch(mode, shape, pad):
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match="other non-zero dimensions for input, but got"):
            NN[lib].pad(lib.zeros(*shape), pad, mode=mode)
    # an empty batch is fine
    got, want = (NN[lib].pad(lib.zeros(0, 2, 3), [1, 1], mode=mode) for lib in (et, torch))
    assert tuple(got.shape) == tuple(want.shape)


def test_instance_norm_running_statistics_as_pytorchs():
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match="to be defined when use_input_stats is false"):
            NN[lib].instance_norm(lib.zeros(0, 3), lib.ones(1), use_input_stats=False)
        with pytest.raises(RuntimeError, match=r"shape '\[2, 3\]' is invalid"):
            NN[lib].instance_norm(
                lib.zeros(2, 3, 0, dtype=lib.bool), running_var=lib.tensor(False), momentum=0.5
            )
        with pytest.raises(ValueError, match="must either both be None or neither be None"):
            NN[lib].batch_norm(lib.ones(2, 3), None, lib.ones(3), training=True)


def test_inplace_dropout1d_of_a_leaf_view_made_before_it_required_grad():
    for lib in (et, torch):
        x = lib.ones(10, dtype=lib.float16).reshape((2, 5)).requires_grad_(True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            NN[lib].dropout1d(x, training=False, inplace=True)
