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
