"""Regression tests of divergences from PyTorch that the differential fuzzer found
(packages/ember/tests/fuzz), each against PyTorch on the fuzzer's call."""

import warnings

import numpy as np
import pytest
import torch

import ember_tensor as et


def _both(fn):
    return fn(et), fn(torch)


@pytest.mark.parametrize("name", ["trapezoid", "cumulative_trapezoid"])
def test_trapezoid_sample_points_of_more_dims_difference_along_y_dim(name):
    y, x = [1.0, 4.0], [[6.0, 6, 0], [0, 1, 0], [4, 5, 4]]
    got, want = _both(lambda lib: getattr(lib, name)(lib.tensor(y), lib.tensor(x), dim=-1))
    np.testing.assert_allclose(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int32", "bool"])
def test_bincount_weights_dtype(dtype):
    got, want = _both(
        lambda lib: lib.bincount(lib.tensor([0, 1, 1]), lib.ones(3, dtype=getattr(lib, dtype)))
    )
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_index_copy_source_of_other_rank():
    msg = "When source and destination are not scalars, their dimensionality must match"
    for lib in (et, torch):
        with pytest.raises(IndexError, match=msg):
            lib.zeros(2, 3).index_copy(0, lib.tensor([1]), lib.tensor([3.0]))


def test_put_takes_only_int64_indices():
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match="Expected a long tensor for index, but got Int"):
            lib.put(lib.zeros(4), lib.tensor([1, 2], dtype=lib.int32), lib.ones(2))


def test_histogramdd_refuses_bool_bins():
    for lib in (et, torch):
        with pytest.raises(TypeError):
            lib.histogramdd(lib.zeros(4, 2), True)


def test_histogramdd_refuses_a_tensor_of_bins_16_bit_floats_and_infinite_ranges():
    for lib in (et, torch):
        with pytest.raises(TypeError):
            lib.histogramdd(lib.zeros(1, 1), lib.tensor([[3.0]]))
        with pytest.raises(NotImplementedError, match="not implemented for 'BFloat16'"):
            lib.histogramdd(lib.zeros(3, 3, dtype=lib.bfloat16), 1)
        with pytest.raises(RuntimeError, match=r"dimension 1's range \[nan, nan\] is not finite"):
            lib.histogramdd(lib.tensor([[1.0, float("nan")], [2.0, 3.0]]), 2)


def test_index_copy_slice_shapes_must_match():
    msg = "Source/destination tensor must have same slice shapes"
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match=msg):
            lib.zeros(2, 3, 3).index_copy(0, lib.tensor([0]), lib.tensor(1.0))
        with pytest.raises(RuntimeError, match=msg):
            lib.zeros(2, 3).index_copy(0, lib.tensor([0]), lib.ones(1, 4))


def test_unsafe_masked_index_arguments_as_pytorchs():
    x = [[0.0, 1, 2], [3, 4, 5]]
    for lib in (et, torch):
        with pytest.raises(IndexError, match="at least one index must be provided"):
            lib._unsafe_masked_index(lib.tensor(x), lib.tensor([True]), [], 1.0)
        with pytest.raises(TypeError, match="expected Tensor as element 1"):
            lib._unsafe_masked_index(
                lib.tensor(x), lib.tensor([True]), [lib.tensor([0]), None], 1.0
            )
    # a mask of another dtype reads nonzero as true
    got, want = _both(
        lambda lib: lib._unsafe_masked_index(
            lib.tensor(x), lib.tensor([1, 0, 2]), [lib.tensor([0, 1, 5])], 0.5
        )
    )
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# --------------------------------------------------------------------- stop 49 (issue 30)


def _raises_in_both(fn, exc, match=None):
    for lib in (et, torch):
        with pytest.raises(exc, match=match):
            fn(lib)


@pytest.mark.parametrize("start,n_base,n_out", [(2, 5, 3), (1, 2, 3), (0, 0, 4)])
def test_an_empty_out_view_is_resized_in_its_own_storage(start, n_base, n_out):
    # PyTorch's resize_: out keeps its offset and storage, which grows (keeping its bytes,
    # seen through every view) when too small
    results = []
    for lib in (et, torch):
        base = lib.arange(float(n_base))
        out = base[start:start]
        lib.neg(lib.ones(n_out), out=out)  # exact: the values are not the point
        results.append((base.tolist(), out.tolist(), out.storage_offset(), tuple(out.stride())))
    assert results[0][2:] == results[1][2:]
    np.testing.assert_allclose(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1])


def test_an_empty_out_of_a_transposed_view_gets_contiguous_strides():
    got = []
    for lib in (et, torch):
        a = lib.arange(6.0).reshape(2, 3)
        out = a.t()[:0]
        lib.neg(lib.ones(2, 2), out=out)
        got.append((tuple(out.stride()), a.tolist()))
    assert got[0][0] == got[1][0]
    np.testing.assert_allclose(got[0][1], got[1][1])


def test_memory_owned_by_numpy_cannot_grow():
    for lib in (et, torch):
        out = lib.from_numpy(np.zeros(2))[1:1]
        with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
            lib.sin(lib.ones(3, dtype=lib.float64), out=out)


@pytest.mark.parametrize("op", ["mul_", "add_", "logical_and_", "eq_"])
def test_in_place_ops_never_resize_self_even_without_elements(op):
    msg = r"output with shape \[1, 0\] doesn't match the broadcast shape \[2, 0\]"
    _raises_in_both(lambda lib: getattr(lib.ones(1, 0), op)(lib.ones(2, 0)), RuntimeError, msg)


@pytest.mark.parametrize("name", ["rad2deg", "sinc", "xlogy"])
def test_composite_out_that_overlaps_itself_is_refused(name):
    def call(lib):
        args = (lib.ones(2, 3),) * (2 if name == "xlogy" else 1)
        getattr(lib, name)(*args, out=lib.ones(3).expand(2, 3))

    _raises_in_both(call, RuntimeError, "more than one element of the written-to tensor")


def test_composite_out_that_partly_overlaps_an_input_is_refused():
    def call(lib):
        a = lib.arange(6.0)
        lib.masked_select(a[:4], lib.tensor([True, False, True, True]), out=a[1:4])

    _raises_in_both(call, RuntimeError, "refer to a single memory location")


@pytest.mark.parametrize("value", [2**63, 2**64 - 1])
def test_python_ints_between_2_63_and_2_64_are_unsigned_64_bit_scalars(value):
    for dtype in ("float32", "float64", "bfloat16"):
        got, want = _both(
            lambda lib, dt=dtype: (lib.ones(1, dtype=getattr(lib, dt)) + value).double()
        )
        np.testing.assert_allclose(got.numpy(), want.numpy())
    _raises_in_both(
        lambda lib: lib.zeros(1, dtype=lib.int64).fill_(value),
        RuntimeError,
        "value cannot be converted to type int64_t without overflow",
    )
    got, want = _both(lambda lib: lib.zeros(1, dtype=lib.uint64).fill_(2**63))
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize(
    "expr",
    [
        lambda lib: lib.tensor([1, 5]) + 2**63,
        lambda lib: lib.tensor([1, 2**62]) > 2**63,
        lambda lib: lib.tensor([9223372036854775807]) <= 2**63,
        lambda lib: lib.tensor([3], dtype=lib.uint8) + 2**63,
        lambda lib: lib.tensor([3], dtype=lib.int16) * (2**64 - 1),
    ],
)
def test_python_ints_between_2_63_and_2_64_wrap_in_integer_arithmetic_as_in_pytorch(expr):
    got, want = _both(expr)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize(
    "value,msg",
    [(2**64, "int too big to convert"), (-(2**63) - 1, "can't convert negative int to unsigned")],
)
def test_python_ints_beyond_64_bits_are_overflow_errors(value, msg):
    _raises_in_both(lambda lib: lib.ones(1) + value, OverflowError, msg)


@pytest.mark.parametrize("arg", ["bool", "float_tensor", "bool_tensor", "vector", "numpy_bool"])
def test_int_arguments_refuse_what_pytorchs_parser_refuses(arg):
    def call(lib):
        value = {
            "bool": True,
            "float_tensor": lib.tensor(0.0),
            "bool_tensor": lib.tensor(True),
            "vector": lib.tensor([0]),
            "numpy_bool": np.bool_(True),
        }[arg]
        return lib.ones(2, 3).unsqueeze(value)

    _raises_in_both(call, TypeError)


@pytest.mark.parametrize("value", [0, np.int64(1), "int_tensor"])
def test_int_arguments_take_ints_numpy_integers_and_0d_integer_tensors(value):
    got, want = _both(
        lambda lib: (
            lib.ones(2, 3).unsqueeze(lib.tensor(1) if value == "int_tensor" else value).shape
        )
    )
    assert tuple(got) == tuple(want)


@pytest.mark.parametrize("value", [1, 0.0, None, "tensor", np.bool_(True)])
def test_bool_arguments_take_only_true_or_false(value):
    def call(lib):
        keepdim = lib.tensor(True) if isinstance(value, str) else value
        return lib.ones(2, 3).sum(0, keepdim=keepdim)

    _raises_in_both(call, TypeError)


def test_composite_bool_and_int_arguments_are_as_strict():
    _raises_in_both(lambda lib: lib.ones(4).diff(n=True), TypeError)
    _raises_in_both(lambda lib: lib.ones(4).diff(n=lib.tensor(1.0)), TypeError)
    _raises_in_both(lambda lib: lib.std_mean(lib.ones(4), 0, keepdim=1), TypeError)


@pytest.mark.parametrize("op", ["all", "any"])
@pytest.mark.parametrize("dtype", ["int16", "float32"])
def test_all_any_write_only_bool_or_uint8(op, dtype):
    _raises_in_both(
        lambda lib: getattr(lib, op)(lib.ones(3), out=lib.empty(0, dtype=getattr(lib, dtype))),
        RuntimeError,
        f"{op} only supports bool tensor for result",
    )
    for out_dtype in ("bool", "uint8"):
        got, want = _both(
            lambda lib, dt=out_dtype: getattr(lib, op)(
                lib.ones(3), out=lib.empty(0, dtype=getattr(lib, dt))
            )
        )
        assert got.tolist() == want.tolist()


@pytest.mark.parametrize("op", ["isposinf", "isneginf"])
def test_isposinf_isneginf_write_only_bool(op):
    _raises_in_both(
        lambda lib: getattr(lib, op)(lib.ones(3), out=lib.empty(3, dtype=lib.uint8)),
        RuntimeError,
        f"{op} does not support non-boolean outputs",
    )


@pytest.mark.parametrize("op", ["add", "sub"])
def test_a_bool_alpha_needs_a_bool_result(op):
    _raises_in_both(
        lambda lib: getattr(lib, op)(lib.ones(3), 1, alpha=True),
        RuntimeError,
        "Boolean alpha only supported for Boolean results",
    )


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int64"])
def test_integers_to_negative_python_int_powers_are_refused(dtype):
    _raises_in_both(
        lambda lib: lib.pow(lib.ones(3, dtype=getattr(lib, dtype)), -2),
        RuntimeError,
        "Integers to negative integer powers are not allowed",
    )


def test_float_power_of_an_unsigned_tensor_to_a_negative_number():
    got, want = _both(lambda lib: lib.tensor(4, dtype=lib.uint8).float_power(-3))
    assert got.item() == want.item() == 4.0**-3


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "complex128"])
def test_float_power_writes_only_float64(dtype):
    _raises_in_both(
        lambda lib: lib.float_power(lib.ones(2), 2, out=lib.empty(2, dtype=getattr(lib, dtype))),
        RuntimeError,
        "requires dtype Double",
    )
    if dtype != "complex128":  # a complex128 base computes in its own dtype
        _raises_in_both(
            lambda lib: lib.ones(2, dtype=getattr(lib, dtype)).float_power_(2),
            RuntimeError,
            "the base given to float_power_ has dtype",
        )


def test_shifts_read_both_operands_in_the_result_dtype():
    got, want = _both(
        lambda lib: lib.tensor(-3).bitwise_right_shift(lib.tensor([[4]], dtype=lib.uint8))
    )
    assert got.tolist() == want.tolist() == [[15]]


def test_isclose_of_bools_compares_their_values():
    got, want = _both(
        lambda lib: lib.isclose(lib.tensor([False, True]), lib.tensor([True, True]), atol=1.0)
    )
    assert got.tolist() == want.tolist() == [True, True]


def test_cov_checks_its_weights():
    cases = [
        ({"fweights": [[1, 1, 1, 1]]}, "fweights to have one or fewer dimensions"),
        (
            {"fweights": [1.0, 1, 1, 1]},
            "fweights to have integral dtype but got fweights with Float",
        ),
        (
            {"fweights": [1, 1, 1]},
            "same numel as there are observations in the input but got 3 != 4",
        ),
        ({"fweights": [-1, 1, 1, 1]}, "fweights cannot be negative"),
        (
            {"aweights": [1, 1, 1, 1]},
            "aweights to have floating point dtype but got aweights with Long",
        ),
        ({"aweights": [-1.0, 1, 1, 1]}, "aweights cannot be negative"),
    ]
    for kwargs, msg in cases:
        _raises_in_both(
            lambda lib, kw=kwargs: lib.cov(
                lib.ones(2, 4), **{k: lib.tensor(v) for k, v in kw.items()}
            ),
            RuntimeError,
            msg,
        )


@pytest.mark.parametrize("shape", [(), (3,)])
def test_renorm_needs_two_dims(shape):
    _raises_in_both(
        lambda lib: lib.renorm(lib.ones(shape), 2, 0, 1.0),
        RuntimeError,
        f"renorm: input needs at least 2 dimensions, got {len(shape)} dimensions",
    )


def test_small_checks_with_pytorchs_messages():
    _raises_in_both(
        lambda lib: lib.meshgrid([]), RuntimeError, "meshgrid expects a non-empty TensorList"
    )
    _raises_in_both(
        lambda lib: lib.linalg.vander(lib.ones(3, dtype=lib.float16)),
        RuntimeError,
        "linalg.vander supports floating point, complex, and integer tensors, but got Half",
    )
    _raises_in_both(
        lambda lib: lib.logspace(0, lib.tensor([1.0]), 2),
        RuntimeError,
        r"logspace only supports 0-dimensional start and end tensors, but got end with 1",
    )
    _raises_in_both(
        lambda lib: lib.nanmean(lib.ones(3), dtype=lib.int8),
        RuntimeError,
        "nanmean\\(\\): could not infer output dtype",
    )
    _raises_in_both(lambda lib: lib.broadcast_shapes((2, -1)), ValueError, "negative length")
    _raises_in_both(
        lambda lib: lib.cdist(lib.ones(2, 2), lib.ones(2, 2), 2.0, None),
        ValueError,
        "None is not a valid value for compute_mode",
    )
    for linear in (et.linear, torch.nn.functional.linear):
        lib = et if linear is et.linear else torch
        with pytest.raises(RuntimeError, match="mat2 must be a matrix, got 1-D tensor"):
            linear(lib.ones(2), lib.ones(2), lib.ones(1))


def test_rsub_with_a_python_bool_is_the_bool_subtraction_error():
    _raises_in_both(
        lambda lib: lib.rsub(lib.ones(2, dtype=lib.uint8), other=False, alpha=0),
        RuntimeError,
        "Subtraction, the `-` operator, with a bool tensor is not supported",
    )


def test_dims_out_of_range_of_0d_and_other_tensors_are_index_errors():
    _raises_in_both(
        lambda lib: lib.tensor(1.0).aminmax(dim=3), IndexError, "Dimension out of range"
    )
    _raises_in_both(
        lambda lib: lib.ones(2, 3).repeat_interleave(2, dim=-3),
        IndexError,
        "Dimension out of range",
    )


def test_index_fill_takes_only_int64_indices():
    _raises_in_both(
        lambda lib: lib.ones(3).index_fill(0, lib.tensor([0], dtype=lib.int32), 1.0),
        IndexError,
        "index_fill_\\(\\): Expected dtype int64 for index",
    )


@pytest.mark.parametrize(
    "kwargs,msg",
    [
        ({"rtol": float("nan")}, "rtol must be greater than or equal to zero, but got nan"),
        ({"atol": -1.0}, "atol must be greater than or equal to zero, but got -1"),
    ],
)
def test_isclose_refuses_negative_and_nan_tolerances(kwargs, msg):
    _raises_in_both(lambda lib: lib.isclose(lib.ones(1), lib.ones(1), **kwargs), RuntimeError, msg)


@pytest.mark.parametrize("eps", [True, 1, 2**70, -(2**63) - 1])
def test_float_arguments_of_composites_take_ints_of_any_size(eps):
    got, want = _both(lambda lib: lib.logit(lib.full((2,), 0.5), eps))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_nan_to_num_of_nan_none_is_zero():
    got, want = _both(lambda lib: lib.tensor([float("nan"), 1.0]).nan_to_num(None))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("value", [-(2**63) - 1, 2**70])
def test_tensor_of_ints_no_64_bit_type_holds_takes_a_float_dtype(value):
    got, want = _both(lambda lib: lib.tensor(value, dtype=lib.float64))
    assert got.item() == want.item() == float(value)
    got, want = _both(lambda lib: lib.zeros(2, dtype=lib.float64).new_tensor([value, 1]))
    assert got.tolist() == want.tolist()
    for lib in (et, torch):
        with pytest.raises((ValueError, RuntimeError)):
            lib.tensor([value])


def test_more_checks_with_pytorchs_messages():
    msg = "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied"
    _raises_in_both(lambda lib: lib.unique(lib.ones(2, 0, 3), dim=0), RuntimeError, msg)
    _raises_in_both(lambda lib: lib.unique_consecutive(lib.ones(2, 0, 3), dim=2), RuntimeError, msg)
    _raises_in_both(
        lambda lib: lib.diff(lib.ones(3), prepend=lib.ones(2, 1)),
        RuntimeError,
        "diff expects prepend or append to be the same dimension as input",
    )
    _raises_in_both(
        lambda lib: lib.slice_scatter(lib.ones(4), lib.ones(2), step=0),
        RuntimeError,
        "slice step must be positive",
    )


NUMBER_SELF = [
    "add",
    "sub",
    "mul",
    "div",
    "true_divide",
    "floor_divide",
    "remainder",
    "multiply",
    "subtract",
    "divide",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
]


@pytest.mark.parametrize("name", NUMBER_SELF)
@pytest.mark.parametrize("number", [2, 2.5, True])
def test_a_number_stands_for_self_as_in_pytorch(name, number):
    """torch.add(2, x): PyTorch's parser lets a number be the tensor of these ops."""
    bitwise = name.startswith("bitwise")
    if bitwise and isinstance(number, float):
        return

    def call(lib):
        return getattr(lib, name)(number, lib.tensor([1, 3] if bitwise else [1.5, -3.0]))

    if number is True and name in ("sub", "subtract"):  # both refuse a bool minuend
        _raises_in_both(call, RuntimeError, "Subtraction, the `-` operator, with a bool tensor")
        return
    got, want = _both(call)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize(
    "name, a, b",
    [
        ("add", 2, 3),
        ("add", 2.5, 3),
        ("mul", True, 3),
        ("div", 1, 2),
        ("sub", 2, 1),
        ("floor_divide", 7, 2),
        ("true_divide", 1, 2),
        ("add", 1 + 2j, 1),
    ],
)
def test_two_numbers_make_a_tensor_where_pytorch_makes_one(name, a, b):
    got, want = _both(lambda lib: getattr(lib, name)(a, b))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.item() == want.item()


def test_number_self_keeps_the_ops_keywords_and_refuses_what_pytorch_refuses():
    got, want = _both(lambda lib: lib.sub(3, lib.tensor([1.0, 2.0]), alpha=2))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    got, want = _both(lambda lib: lib.div(7, lib.tensor([2.0, -2.0]), rounding_mode="floor"))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    for lib in (et, torch):
        with pytest.raises(TypeError):
            lib.remainder(7, 3)
        with pytest.raises(TypeError):
            lib.bitwise_and(1, 3)


OVERFLOWING_NUMBERS = [
    ("clamp_max bfloat16 1e39", lambda lib: lib.ones(2, dtype=lib.bfloat16).clamp_max(1e39)),
    ("clamp_max bfloat16 3.5e38", lambda lib: lib.ones(2, dtype=lib.bfloat16).clamp_max(3.5e38)),
    ("clamp half min 1e5", lambda lib: lib.clamp(lib.ones(2, dtype=lib.half), min=1e5)),
    ("clamp float max 1e39", lambda lib: lib.clamp(lib.ones(2), max=1e39)),
    ("clamp uint8 300", lambda lib: lib.clamp(lib.ones(2, dtype=lib.uint8), max=300)),
    ("clamp_ int8 -300", lambda lib: lib.ones(2, dtype=lib.int8).clamp_(min=-300)),
    ("threshold half value 1e5", lambda lib: lib.threshold(lib.ones(2, dtype=lib.half), 0, 1e5)),
    ("threshold float 1e39", lambda lib: lib.threshold(lib.ones(2), 1e39, 0)),
    ("threshold int32 2**40", lambda lib: lib.threshold(lib.ones(2, dtype=lib.int32), 0, 2**40)),
    ("addcmul uint8 300", lambda lib: lib.addcmul(*[lib.ones(2, dtype=lib.uint8)] * 3, value=300)),
    ("addcdiv half 1e39", lambda lib: lib.addcdiv(*[lib.ones(2, dtype=lib.half)] * 3, value=1e39)),
]


@pytest.mark.parametrize("case", OVERFLOWING_NUMBERS, ids=[c[0] for c in OVERFLOWING_NUMBERS])
def test_number_arguments_are_converted_with_pytorchs_overflow_check(case):
    got = want = None
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match="without overflow") as error:
            case[1](lib)
        got, want = want, str(error.value)
    assert got == want


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.clamp_max(lib.ones(2, dtype=lib.bfloat16), 1e38),
        lambda lib: lib.clamp(lib.ones(2, dtype=lib.half), max=float("inf")),
        lambda lib: lib.clamp(lib.ones(2, dtype=lib.uint8), min=-1),
        lambda lib: lib.threshold(lib.ones(2, dtype=lib.half), 1e5, 0),
        lambda lib: lib.addcmul(*[lib.ones(2, dtype=lib.half)] * 3, value=1e5),
    ],
)
def test_numbers_the_compute_type_holds_pass(call):
    got, want = _both(call)
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    "expr",
    [
        lambda lib, x: x.mul(70000.0),
        lambda lib, x: 70000.0 * x,
        lambda lib, x: x.clone().mul_(3.5e38),
        lambda lib, x: lib.div(x, 1e-40),
        lambda lib, x: x // 1e-40,
        lambda lib, x: lib.div(x, 1.0001, rounding_mode="trunc"),
        lambda lib, x: lib.div(x, 1.0001, rounding_mode="floor"),
        lambda lib, x: x / 3.0001,
        lambda lib, x: x * 70001,
        lambda lib, x: x + 70000.0,  # add rounds the number to the dtype first, as PyTorch
        lambda lib, x: x - 1e-3,
    ],
)
def test_16_bit_float_mul_and_div_read_a_python_number_in_float(dtype, expr):
    """PyTorch's CPU mul / div kernels take a Python number operand of a float16 / bfloat16
    op at float precision: 0 * 70000 is 0 (not 0 * inf), x // 1e-40 is not x // 0."""
    values = [0.0, 1.0, -1.0, 3.0, 0.3, 2.0, -65000.0]
    got, want = _both(lambda lib: expr(lib, lib.tensor(values, dtype=getattr(lib, dtype))))
    assert str(got.dtype).split(".")[-1] == dtype
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("self_dtype", ["float16", "float32", "int64"])
def test_reflected_division_is_pytorchs_reciprocal_times_other(self_dtype):
    """other / self is self.reciprocal() * other in PyTorch (Tensor.__rdiv__): a float16 self
    takes its reciprocal in float16 before the float32 product."""
    got, want = _both(
        lambda lib: lib.tensor([3, -1, 7, 9], dtype=getattr(lib, self_dtype)).__rtruediv__(
            lib.tensor([[-5.005]])
        )
    )
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    got, want = _both(
        lambda lib: 2.0 / lib.tensor([3.0, 7.0, 11.0], dtype=getattr(lib, self_dtype))
    )
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
    assert et.tensor([1.0]).__rtruediv__("a") is NotImplemented


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_addcmul_addcdiv_of_16_bit_floats_round_once(dtype):
    """PyTorch computes self + value * t1 / t2 (and * t2) in float for float16 / bfloat16 and
    rounds the result once: value * t1 may exceed float16's range on the way."""

    def run(lib):
        a = lib.tensor([-0.5, 2.0, -1.0, 3.0], dtype=getattr(lib, dtype)).reshape(2, 2)
        b = lib.tensor([0.688, 5.449, -1.156, -3.088], dtype=getattr(lib, dtype)).reshape(2, 2)
        c = lib.tensor([1.0, 2.0, 2.0, -0.5], dtype=getattr(lib, dtype)).reshape(2, 2)
        return lib.cat(
            [
                a.clone().addcdiv_(b, c, value=65504).flatten(),
                lib.addcmul(a, b, c, value=30000.0).flatten(),
                lib.addcmul(a, b, c, value=1.001).flatten(),
                # an int64 self beyond float16's range is inf in the result dtype: inf - inf
                lib.tensor([2**63 - 2, 1])
                .addcdiv(a[0, :1], lib.tensor([[0, -2], [0, 1]]))
                .flatten(),
            ]
        )

    got, want = _both(run)
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("decimals", [5, 3, 1, -1, -5])
def test_round_decimals_of_16_bit_floats_scales_in_float(dtype, decimals):
    """PyTorch scales by 10^decimals in float for float16 / bfloat16 and rounds once: 2 * 10^5
    does not overflow float16 on the way."""
    values = [2.0, 3.0, 1.0, -2.0, 0.5, 1.2345, 65000.0, 0.125]
    got, want = _both(
        lambda lib: lib.tensor(values, dtype=getattr(lib, dtype)).round(decimals=decimals)
    )
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize(
    "value, kwargs",
    [
        ([[1e30], [2e30]], dict(dim=1)),
        ([[1e30], [2e30]], dict(ord=3, dim=1)),
        ([[1e30], [2e30]], dict(ord=0.5, dim=1)),
        ([[1e30], [2e30]], dict(dim=0)),  # two elements: the square overflows in both
        ([[1e30, 1e30]], dict(dim=0)),
        ([3.0, 0.0], dict(ord=1e-5)),
        ([2.0], dict(ord=1e-5)),
        ([-3.0], dict(ord=0)),
        ([0.0], dict(ord=0)),
        ([-3.0], dict(ord=-2)),
        ([-3.0], dict(ord=float("inf"))),
        (5.0, {}),
    ],
)
def test_norms_of_single_elements_are_their_absolute_values(value, kwargs):
    """Where every result reduces one element, PyTorch's norms give |x| (x != 0 for p = 0)
    without squaring: the 2-norm of 1e30 in float32 is 1e30, not inf."""
    got, want = _both(lambda lib: lib.linalg.vector_norm(lib.tensor(value), **kwargs))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    got, want = _both(lambda lib: lib.tensor(value, dtype=lib.float16).norm(p=2**63 - 1))
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


def test_addr_multiplies_the_vectors_in_the_result_dtype():
    """int16 vectors of a float32 self: the outer product is float32 (PyTorch's), not an
    int16 product that wraps around."""

    def run(lib):
        self = lib.tensor([3.0, -0.0, 0.5, 2.0, -3.0])
        v1 = lib.tensor([1, -32767, 32766, -32767, 32766], dtype=lib.int16)
        v2 = lib.tensor([0, 2, 2, 2, -3], dtype=lib.int16)
        return lib.cat(
            [
                self.addr(v1, v2, alpha=-2.0).flatten(),
                lib.addr(self.double(), v1.int(), v2.half(), beta=-2).flatten(),
            ]
        )

    got, want = _both(run)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.diff(lib.tensor([1, 4, 9]), 0, prepend=lib.tensor([5])),
        lambda lib: lib.zeros(4, 1, 0, dtype=lib.int64).diff(0, append=lib.ones(4, 1, 3)),
        lambda lib: lib.bincount(lib.tensor([], dtype=lib.uint8), lib.tensor([])),
        lambda lib: lib.bincount(lib.tensor([], dtype=lib.uint8), minlength=3),
        lambda lib: lib.repeat_interleave(lib.tensor([3, 2], dtype=lib.int32)),
        lambda lib: lib.inner(lib.ones(2, 0), lib.ones(3, 0)),
        lambda lib: lib.inner(lib.ones(0), lib.ones(0)),
        lambda lib: lib.tensordot(lib.ones(2, 0, 3), lib.ones(0, 3, 4), 2),
        lambda lib: lib.ldexp(
            lib.tensor([5.5], dtype=lib.float64), lib.tensor([-0.5], dtype=lib.float16)
        ),
        lambda lib: lib.renorm(lib.tensor([[-65504.0, 1.0, 10000.0]], dtype=lib.float16), 2, 0, 3),
        lambda lib: lib.hypot(lib.tensor([3, 5]), lib.tensor([4.0, 12.0])),
        lambda lib: lib.logaddexp(lib.tensor([1.0, 2.0]), lib.tensor([1, 2], dtype=lib.int8)),
        lambda lib: lib.logaddexp2(lib.tensor([1, 2], dtype=lib.int16), lib.tensor([1.0, 2.0])),
        lambda lib: lib.nextafter(lib.tensor([1, 2], dtype=lib.int32), lib.tensor([0.0, 3.0])),
        lambda lib: lib.dist(lib.tensor([1], dtype=lib.int8), lib.tensor(-0.5, dtype=lib.bfloat16)),
    ],
)
def test_fuzz_value_and_dtype_findings_match_torch(call):
    """Divergences the differential fuzzer found (values, dtypes, shapes), each PyTorch's:
    diff's zeroth difference ignores prepend/append, bincount of nothing is int64 zeros even
    with weights, repeat_interleave keeps int32 counts, inner/tensordot over an empty dim,
    ldexp rounds 2**other to other's float dtype, renorm's float16 norm in float32, the float
    binary ops on integer operands promote first."""
    got, want = _both(call)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("name", ["hypot", "logaddexp", "logaddexp2", "nextafter"])
def test_float_binary_ops_refuse_two_integer_operands(name):
    """Promotion first: two integer operands still have no float kernel (PyTorch's
    NotImplementedError there; Ember's RuntimeError names the op and dtype)."""
    with pytest.raises(RuntimeError, match=f"{name}: dtype int64 is not supported"):
        getattr(et, name)(et.tensor([1, 2]), et.tensor([3, 4]))
    with pytest.raises(NotImplementedError):
        getattr(torch, name)(torch.tensor([1, 2]), torch.tensor([3, 4]))


def test_repeat_interleave_counts_of_other_integer_dtypes_raise():
    with pytest.raises(NotImplementedError, match="repeat_interleave_cpu.*Short"):
        et.repeat_interleave(et.tensor([1, 2], dtype=et.int16))
    with pytest.raises(NotImplementedError, match="repeat_interleave_cpu.*Short"):
        torch.repeat_interleave(torch.tensor([1, 2], dtype=torch.int16))


@pytest.mark.parametrize("x, n", [([1.0], None), (2.0, None), ([1.0, 2.0], 1)])
def test_vander_of_one_column_is_an_error(x, n):
    with pytest.raises(RuntimeError, match="N must be greater than 1"):
        torch.linalg.vander(torch.tensor(x), N=n)
    with pytest.raises(RuntimeError, match="N must be greater than 1"):
        et.linalg.vander(et.tensor(x), N=n)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.ones(2).requires_grad_(1.0),
        lambda lib: lib.isclose(lib.ones(2), lib.ones(2), equal_nan=None),
        lambda lib: lib.resolve_neg(1.0),
        lambda lib: lib.linalg.multi_dot(lib.ones(2, 2, 2)),
    ],
)
def test_arguments_of_the_wrong_type_are_type_errors(call):
    """A bool argument takes True or False, a tensor argument a tensor, a sequence of
    tensors is not one tensor (its rows): PyTorch's TypeError in each."""
    with pytest.raises(TypeError):
        call(torch)
    with pytest.raises(TypeError):
        call(et)


def test_diff_checks_prepend_shapes_even_for_the_zeroth_difference():
    for lib in (torch, et):
        with pytest.raises(
            RuntimeError, match=r"input.size\(0\) = 2, but got tensor.size\(0\) = 1"
        ):
            lib.diff(lib.ones(2, 4, 3, dtype=lib.bool), n=0, append=lib.ones(1, 4, 1))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.isclose(
            lib.tensor([-3e38, 1.0], dtype=lib.float64),
            lib.tensor([3.0, 1.0], dtype=lib.float64),
            1,
            10**20,
        ),
        lambda lib: lib.trapz(
            lib.arange(16.0).reshape(2, 2, 2, 2), lib.tensor([[1.0, 3.0], [2.0, 7.0]])
        ),
        lambda lib: lib.cumulative_trapezoid(
            lib.arange(16.0).reshape(2, 2, 2, 2), lib.tensor([[1.0, 3.0], [2.0, 7.0]])
        ),
        lambda lib: lib.linalg.matrix_exp(lib.tensor([[-1.79e308]], dtype=lib.float64)),
        lambda lib: lib.linalg.matrix_exp(
            lib.tensor([[-1e300, 1.0], [0.0, -2.0]], dtype=lib.float64)
        ),
        lambda lib: lib.from_dlpack(lib.tensor([255, 0], dtype=lib.uint8), copy=lib.tensor([1])),
    ],
)
def test_fuzz_findings_ember_refused_and_torch_computes(call):
    """Calls PyTorch computes that Ember refused: a tolerance beyond int64 (a float for
    PyTorch's parser), sample points of fewer dims than y (leading dims of 1), matrix_exp of
    a norm near the float64 range (the scaling 2**-s as a float), DLPack's copy by truth."""
    got, want = _both(call)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_matrix_exp_of_16_bit_floats_is_computed_wide(dtype):
    """PyTorch 2.13's matrix_exp of float16 / bfloat16 is wrong (-20896 for exp(I)); Ember's
    is the float64 result rounded once, compared here with SciPy's expm."""
    scipy_linalg = pytest.importorskip("scipy.linalg")
    a = np.array([[0.5, -1.0, 0.25], [2.0, 0.0, -0.5], [0.125, 1.5, -1.0]])
    x = et.tensor(a.tolist(), dtype=getattr(et, dtype))
    want = scipy_linalg.expm(x.double().numpy())
    for got in (et.matrix_exp(x), x.matrix_exp(), et.linalg.matrix_exp(x)):
        assert got.dtype == x.dtype
        np.testing.assert_allclose(
            got.double().numpy(), want, rtol=1e-2 if dtype == "bfloat16" else 2e-3, atol=1e-3
        )


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_ldexp_of_integer_exponents_scales_exactly(dtype):
    """C's ldexp, as NumPy's: no 2**n that overflows on the way (ldexp(1e-300, 2000) is
    finite, ldexp(0, 2**31 - 2) is 0, not 0 * inf = NaN)."""
    x = np.array([0.0, 1e-300, -1.5, 3.0, 1e300, 5e-324, 7.0, 0.75])
    n = np.array([2**31 - 2, 2000, 3, -1074, -2000, 1074, 0, -3])
    with np.errstate(over="ignore"):
        x = x.astype(dtype)
    got = et.ldexp(et.tensor(x), et.tensor(n))
    assert got.dtype == getattr(et, dtype)
    with np.errstate(over="ignore"):  # 1e300 beyond float16 and float32: inf, as Ember's
        want = np.ldexp(x.astype(np.float64), n).astype(dtype)
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize(
    "factor",
    [
        [[[1.0, 0.0], [2.0, 3.0]], [[1.0, 0.0], [2.0, 0.0]]],
        [[0.0, 0.0], [2.0, 1.0]],
        [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
        [1.0, 2.0],
    ],
)
def test_cholesky_inverse_of_a_singular_factor_is_an_error(factor):
    """PyTorch's errors, word for word: a zero on a factor's diagonal (LinAlgError), a
    factor that is not a batch of square matrices."""
    with pytest.raises(RuntimeError) as want:
        torch.cholesky_inverse(torch.tensor(factor))
    with pytest.raises(RuntimeError) as got:
        et.cholesky_inverse(et.tensor(factor))
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize(
    "shapes",
    [((2, 3, 3), (2, 2, 3)), ((2, 3, 3), (3, 2)), ((2, 3, 3), (2,)), ((3,), (1,))],
)
def test_householder_product_checks_tau_as_pytorch(shapes):
    a, t = shapes
    with pytest.raises(RuntimeError) as want:
        torch.linalg.householder_product(torch.ones(a), torch.ones(t))
    with pytest.raises(RuntimeError) as got:
        et.linalg.householder_product(et.ones(a), et.ones(t))
    assert str(got.value) == str(want.value)


def test_lu_unpack_wants_int32_pivots():
    for lib in (torch, et):
        with pytest.raises(RuntimeError, match="LU_pivots is expected to be a contiguous tensor"):
            lib.lu_unpack(lib.eye(3), lib.tensor([1, 2, 3]))
        unpacked = lib.lu_unpack(lib.eye(3), lib.tensor([1, 2, 3]), unpack_pivots=False)
        assert unpacked[1].shape == (3, 3)
        with pytest.raises(
            TypeError, match=r"argument 'LU_pivots' (\(position 2\) )?must be Tensor, not tuple"
        ):
            lib.lu_unpack(lib.eye(3), (), unpack_data=False, unpack_pivots=False)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.ones(2, 3).addr(lib.ones(2), lib.ones(3), alpha=True),
        lambda lib: lib.ones(2, 3).addr(lib.ones(2), lib.ones(3), beta=False),
        lambda lib: lib.cross(lib.ones(3, dtype=lib.int32), lib.ones(3, dtype=lib.int64)),
        lambda lib: lib.linalg.cross(lib.ones(3), lib.ones(3, dtype=lib.float64)),
    ],
)
def test_operands_pytorch_refuses_without_promotion(call):
    """A bool alpha or beta for a result that is not bool; cross of two dtypes (PyTorch's
    kernel takes one): PyTorch's errors, word for word."""
    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(RuntimeError) as got:
        call(et)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.ones(3).histogram(0),
        lambda lib: lib.zeros(0, dtype=lib.float64).histogram(
            lib.tensor([-2.0], dtype=lib.float64)
        ),
        lambda lib: lib.histogram(lib.ones(3, dtype=lib.float16), lib.tensor([0.0, 1.0, 2.0])),
        lambda lib: lib.ones(3).repeat_interleave(lib.ones(1, 1, dtype=lib.int64)),
        lambda lib: lib.trapezoid(lib.ones(3), lib.tensor([True, False, True])),
        lambda lib: lib.cumulative_trapezoid(lib.ones(3), lib.tensor([True, False, True])),
    ],
)
def test_arguments_pytorch_checks(call):
    """histogram's bin count and bin-edge dtype, repeats of more than one dim, bool sample
    points: PyTorch's errors, word for word."""
    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(RuntimeError) as got:
        call(et)
    assert str(got.value) == str(want.value)


def test_dist_of_a_number_is_a_type_error():
    for lib in (torch, et):
        with pytest.raises(TypeError, match=r"argument 'other' \(position 2\) must be Tensor"):
            lib.dist(lib.ones(2), 1.0)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.tensor([-1, -2], dtype=lib.int8).hypot(
            other=lib.tensor([1.5, -1.5], dtype=lib.float16)
        ),
        lambda lib: lib.logaddexp(lib.tensor([3], dtype=lib.int8), lib.tensor([0.5, -2.0])),
        lambda lib: lib.logaddexp2(lib.tensor(3, dtype=lib.int64), lib.tensor([0.5, -2.0])),
        lambda lib: lib.nextafter(
            lib.tensor(-1, dtype=lib.int16), lib.tensor([-0.5, 2.0], dtype=lib.float64)
        ),
        lambda lib: lib.tensor([True, False, True]).addcmul(
            lib.tensor([2], dtype=lib.int32), lib.tensor([-3], dtype=lib.int32), value=1.5
        ),
        lambda lib: lib.tensor([True, False]).addcdiv(
            lib.tensor([3.0, 2.0], dtype=lib.bfloat16), lib.tensor([True, True])
        ),
        lambda lib: lib.addcmul(
            lib.tensor([1, 2]), lib.tensor(2.5), lib.tensor(2.5, dtype=lib.float64)
        ),
        lambda lib: lib.clamp(lib.tensor([True, False, True]), min=0),
        lambda lib: lib.bucketize(-2, lib.tensor([False, True]), out_int32=True),
        lambda lib: lib.searchsorted(
            lib.tensor([False, True]), lib.tensor([-2, 1], dtype=lib.int32)
        ),
        lambda lib: lib.lerp(
            lib.tensor([3, -2], dtype=lib.int32),
            lib.tensor([1, 5], dtype=lib.int32),
            lib.tensor(1.5, dtype=lib.float64),
        ),
        lambda lib: lib.lerp(
            lib.tensor([3.0, -2.0], dtype=lib.float16),
            lib.tensor([1.0, 5.0], dtype=lib.float16),
            lib.tensor(1, dtype=lib.int16),
        ),
        lambda lib: lib.dist(
            lib.tensor([3, -2], dtype=lib.int32), lib.tensor(-0.5, dtype=lib.float64)
        ),
    ],
)
def test_dtype_checked_on_the_promoted_operands(call):
    """Ops whose kernels compute in the operands' common dtype check that dtype (ops.yaml
    ``dtypes_of: promoted``), not the first tensor's: PyTorch's result and dtype."""
    got, want = call(et), call(torch)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.double().numpy(), want.double().numpy(), rtol=1e-3)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.hypot(lib.tensor([1], dtype=lib.int8), lib.tensor([2], dtype=lib.int8)),
        lambda lib: lib.lerp(
            lib.tensor([3, -2], dtype=lib.int32), lib.tensor([3, -2], dtype=lib.int32), 0.5
        ),
        lambda lib: lib.lerp(
            lib.tensor([3.0], dtype=lib.float16),
            lib.tensor([3.0], dtype=lib.float16),
            lib.tensor([0.5], dtype=lib.float32),
        ),
        lambda lib: lib.tensor([1, -2], dtype=lib.int8).lerp_(
            lib.tensor([1, -2], dtype=lib.int8), lib.tensor(0.5, dtype=lib.float64)
        ),
        lambda lib: lib.addcmul(lib.tensor([True]), lib.tensor([True]), lib.tensor([True])),
    ],
)
def test_dtype_refusals_on_the_promoted_operands(call):
    with pytest.raises((RuntimeError, NotImplementedError)):
        call(torch)
    with pytest.raises(RuntimeError):
        call(et)


def test_matmul_operator_with_none_is_not_implemented():
    for lib in (et, torch):
        assert lib.ones(2).__matmul__(None) is NotImplemented
        assert lib.ones(2).__rmatmul__(None) is NotImplemented
        with pytest.raises(TypeError, match="unsupported operand"):
            lib.ones(2) @ None


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.ones(3).amax(None),
        lambda lib: lib.ones(2, 3).amin(None, True),
        lambda lib: lib.roll(lib.arange(4), 1, None),
        lambda lib: lib.ones(3).copy_(1.5),
        lambda lib: lib.ones(3, dtype=lib.int32).copy_(True),
        lambda lib: lib.ones(1, 1, 3).cross(other=lib.arange(27.0).reshape(3, 3, 3)),
        lambda lib: lib.tensor([1, 2, 3, 4]).diff(n=0, dim=1),
        lambda lib: lib.bincount(
            lib.tensor([], dtype=lib.int16), lib.tensor([0], dtype=lib.int16), 1
        ),
        lambda lib: lib.ones(3, 4).tile(lib.tensor([[2]], dtype=lib.uint8)),
        lambda lib: lib.arange(12.0).reshape(3, 4).unfold(0, 2, 2**62),
        lambda lib: lib.tensor([-0.5, float("nan"), float("inf")], dtype=lib.float16).nan_to_num(
            -(2**63) - 1, posinf=1e10
        ),
        lambda lib: lib.tensor([-0.5, 2.0], dtype=lib.float16).xlogy(65536.0),
        lambda lib: lib.xlogy(65536.0, lib.tensor([-0.5, 2.0], dtype=lib.float16)),
        lambda lib: lib.linspace(-1e300, -1, 1, out=lib.tensor([0.5], dtype=lib.float16)),
        lambda lib: lib.linalg.vector_norm(lib.tensor([1.0, 2.0]), float("nan")),
        lambda lib: lib.bitwise_left_shift(True, lib.tensor([1, 2], dtype=lib.uint8)),
        lambda lib: lib.bitwise_right_shift(-300, lib.tensor([1, 2], dtype=lib.int16)),
        lambda lib: lib.histogramdd(lib.zeros(4, 0, dtype=lib.float64), 1, density=True)[0],
        lambda lib: lib.tensor([[2.0, 1.0], [1.0, 3.0]]).lu(get_infos=[1])[2],
        lambda lib: lib.ones(2).map_(lib.tensor([1.0, 2.0]), callable=lambda x, y: x + 2 * y),
    ],
)
def test_calls_pytorch_takes(call):
    """None for an int[] argument with an empty default, a number for copy_'s source,
    cross's default dim from self, a one-element tensor for a list of sizes, a single
    window's stride, replacement values and numbers rounded to the dtype, p = NaN, a number
    as the shifts' first operand, points of no dims, get_infos by truthiness, map_'s
    callable by keyword: PyTorch's results."""
    got, want = call(et), call(torch)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_gradient_of_a_0d_bool_tensor_is_empty():
    assert et.gradient(et.tensor(True)) == torch.gradient(torch.tensor(True)) == ()


def test_linspace_still_checks_when_it_computes_a_step():
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match="without overflow"):
            lib.linspace(-1, -1e300, 2, out=lib.tensor([0.5], dtype=lib.float16))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.index_copy(
            lib.tensor(1.0, dtype=lib.float64),
            0,
            lib.tensor([0, 0, 0]),
            lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64),
        ),
        lambda lib: (
            lib.linalg.cholesky_ex(
                lib.tensor([3.75, 1.25, -1.0, 1.75, 0.5, -0.25]).reshape(3, 2, 1).expand(3, 2, 2),
                upper=True,
            ).info
        ),
        lambda lib: lib.linalg.matrix_rank(lib.zeros(2, 3, 0), hermitian=True),
        lambda lib: lib.linalg.solve_triangular(
            lib.tensor([[-0.5]], dtype=lib.float64),
            lib.tensor([[-1.5]], dtype=lib.float16),
            upper=True,
        ),
        lambda lib: lib.linalg.solve_triangular(lib.tensor([[2.0]]), lib.tensor([[3]]), upper=True),
        lambda lib: lib.lu_unpack(
            lib.tensor([[1.0, 2], [3, 4]], dtype=lib.bfloat16), lib.tensor([1, 2], dtype=lib.int32)
        )[1],
        lambda lib: lib.norm(lib.tensor([2.0, 3.0]), None, dim=[0]),
        lambda lib: lib.pow(1.5, lib.tensor([2.0, 3.0]), out=lib.empty(2)),
        lambda lib: lib.special.zeta(2.0, lib.tensor([1.0, 2.0])),
        lambda lib: lib.triu_indices(2**50, 2),
        lambda lib: lib.view_copy(lib.tensor([[3.0, 2.0], [-2.0, 3.0]]).t(), [-1]),
    ],
)
def test_linear_algebra_and_factories_pytorch_takes(call):
    """A 0-d index_copy target, cholesky_ex's info of the upper triangle, the rank of empty
    non-square matrices, B cast to A's dtype in solve_triangular, lu_unpack of any dtype,
    norm's p=None, pow of a number with out=, zeta of a number, a triangle's indices of a
    huge matrix with few columns, view_copy of a transpose: PyTorch's results."""
    got, want = call(et), call(torch)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.double().numpy(), want.double().numpy(), rtol=1e-6)


def test_randint_float_bounds_are_the_dtypes_range_and_beyond_exact_integers_a_warning():
    with pytest.warns(UserWarning, match="out of bounds"):
        r = et.randint(2**40, [2], dtype=et.bfloat16)
    assert r.dtype == et.bfloat16
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match="to - 1 is out of bounds for"):
            lib.randint(0, 2**40, [2], dtype=lib.float16)


def _nn_op(lib, name):
    return getattr(lib, name) if lib is et else getattr(torch._C._nn, name)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.tensor([1, 2]).clamp(2**63),
        lambda lib: lib.tensor([1, 2], dtype=lib.int32).where(
            lib.tensor([True, False]), other=3 * 10**9
        ),
        lambda lib: lib.tensor([1, 2], dtype=lib.uint8).__ipow__(256),
        lambda lib: lib.tensor([[1, 2]], dtype=lib.uint8).addmm(
            lib.tensor([[1], [2]], dtype=lib.uint8),
            lib.tensor([[1, 2]], dtype=lib.uint8),
            beta=-0.5,
        ),
        lambda lib: lib.addr(
            lib.zeros(2, 2, dtype=lib.int16),
            lib.tensor([1, 2], dtype=lib.int16),
            lib.tensor([1, 2], dtype=lib.int16),
            alpha=65504,
        ),
        lambda lib: lib.baddbmm(
            lib.zeros(1, 1, 1, dtype=lib.int8),
            lib.ones(1, 1, 1, dtype=lib.int8),
            lib.ones(1, 1, 1, dtype=lib.int8),
            beta=65504,
        ),
        lambda lib: _nn_op(lib, "hardtanh")(lib.tensor([1, 2]), -1, 2**63),
        lambda lib: _nn_op(lib, "elu")(lib.tensor([1.0, -2.0]), -1e300),
        lambda lib: _nn_op(lib, "leaky_relu")(lib.tensor([1.0, -2.0]), -1e300),
    ],
)
def test_numbers_out_of_the_computing_dtypes_range_are_errors(call):
    """A Python number converted to the dtype an op computes in (a clamp bound, where's
    operand, an integer power's exponent, addmm's beta, an activation's parameter): PyTorch's
    overflow error, never a wrapped or saturated value."""
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match="without overflow"):
            call(lib)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.linspace(-1e300, 255, 1),
        lambda lib: lib.logspace(lib.tensor(1.0, dtype=lib.float64), -1e300, steps=4),
        lambda lib: lib.histc(lib.tensor([3.2, -3.1], dtype=lib.float16), min=-(2**63), max=-2),
        lambda lib: lib.tensor(5, dtype=lib.uint8).index_fill(-1, lib.tensor(0), lib.tensor(-2.3)),
        lambda lib: lib.tensor([5, 6], dtype=lib.uint8).index_add(
            0, lib.tensor([0]), lib.tensor([1], dtype=lib.uint8), alpha=-2.0
        ),
        lambda lib: lib.tensor([2.5, -4.5], dtype=lib.bfloat16).pow(-1e300),
        lambda lib: lib.tensor([-1, 2], dtype=lib.int16).pow(65504),
        lambda lib: lib.tensor([2, 3]).pow(2**63),
        lambda lib: lib.tensor([1, 0]).clamp_max_(2**63),
    ],
)
def test_more_numbers_out_of_range_are_errors(call):
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match="without overflow"):
            call(lib)


def test_single_16_bit_float_linspace_value_and_float32_powers_round_to_inf():
    for call in (
        lambda lib: lib.linspace(-1e300, 255, 1, dtype=lib.bfloat16),
        lambda lib: lib.tensor([2.5]).pow(1e300),
    ):
        got, want = _both(call)
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.arange(3.0, False, 0.25, dtype=lib.int32),
        lambda lib: lib.arange(0.25, False, out=lib.tensor([], dtype=lib.uint8)),
        lambda lib: lib.arange(2**63),
        lambda lib: lib.bartlett_window(2**63 - 1),
    ],
)
def test_arange_checks_the_step_sign_before_truncating_and_refuses_bounds_beyond_int64(call):
    """(Ember's window of 2**63 - 1 points used to be empty: arange's end wrapped around.)"""
    for lib in (et, torch):
        with pytest.raises(RuntimeError):
            call(lib)
    with pytest.raises(
        RuntimeError, match="upper bound and lower bound inconsistent|without overflow"
    ):
        call(et)


def test_triangular_solve_copies_A_to_the_broadcast_batch_and_empty_histograms_span_0_to_1():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = _both(
            lambda lib: lib.triangular_solve(
                lib.ones(3, 1, 1, dtype=lib.float64),
                lib.tensor([[-0.9]], dtype=lib.float64),
                upper=False,
            )
        )
    for g, w in zip(got, want, strict=True):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.numpy(), w.numpy())
    for call in (
        lambda lib: lib.histogram(lib.zeros(0, dtype=lib.float64), 2)[1],
        lambda lib: lib.histogramdd(lib.zeros(3, 0, 2, dtype=lib.float64), 2)[1][0],
    ):
        got, want = _both(call)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("name", ["trapezoid", "cumulative_trapezoid"])
def test_trapezoid_refuses_a_bool_dx(name):
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match="we only support dx as a real number"):
            getattr(lib, name)(lib.ones(3), dx=True)
    got, want = _both(lambda lib: lib.trapz(lib.ones(3), dx=True))  # a float there: 1.0
    assert got.item() == want.item()


def test_repeat_interleave_checks_output_size():
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match="Invalid output_size, expected 3 but got 1"):
            lib.ones(5, 3).repeat_interleave(1, dim=-1, output_size=1)
    got, want = _both(lambda lib: lib.ones(5, 3).repeat_interleave(2, dim=-1, output_size=6))
    assert tuple(got.shape) == tuple(want.shape)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda lib: lib.renorm(lib.ones(2, 2), 2, 0, float("nan")), "expected maxnorm to be >= 0"),
        (
            lambda lib: lib.searchsorted(
                lib.tensor([1.0, 2, 3]), lib.tensor([2.0]), sorter=lib.tensor([0, 1])
            ),
            "boundary and sorter must have",
        ),
        (
            lambda lib: lib.cov(lib.tensor([[1.0, 2, 3]]), aweights=lib.tensor([0.0, 0, 0])),
            "weights sum to zero",
        ),
        (
            lambda lib: lib.index_copy(lib.zeros(3), 0, lib.tensor([True]), lib.tensor([1.0])),
            "Expected a long tensor for index, but got Bool",
        ),
    ],
)
def test_argument_checks_pytorch_makes(call, match):
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match=match):
            call(lib)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda lib: lib.trapezoid(lib.tensor([4.0, 3.0]), lib.tensor([6.0]), dim=0),
            RuntimeError,
            "There must be one `x` value for each sample point",
        ),
        (
            lambda lib: lib.stft(
                lib.ones(3, 4),
                n_fft=1,
                hop_length=2,
                pad_mode="bogus",
                window=lib.ones(1),
                return_complex=True,
            ),
            NotImplementedError,
            "Unrecognised padding mode bogus",
        ),
        (
            lambda lib: lib.index_copy(lib.tensor(-2.0), 0, lib.tensor(0), lib.ones(1, 5)),
            RuntimeError,
            "must have same slice shapes",
        ),
        (
            lambda lib: lib.tensor([1.0, float("nan")]).nan_to_num(neginf="inf"),
            TypeError,
            "argument 'neginf' must be float, not str",
        ),
    ],
)
def test_more_argument_checks_pytorch_makes(call, exc, match):
    for lib in (et, torch):
        with pytest.raises(exc, match=match):
            call(lib)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.bitwise_left_shift(300, lib.tensor([1, 2], dtype=lib.int8)),
        lambda lib: lib.bitwise_right_shift(-(2**40), lib.tensor([1, 2], dtype=lib.int32)),
        lambda lib: lib.linalg.matrix_rank(lib.eye(3), atol=10**20),
        lambda lib: lib.trapz(lib.tensor([[[3]]]), dx=-(2**63) - 1, dim=1),
        lambda lib: lib.histogram(lib.tensor([1.0, 3.0]), 2)[1],
    ],
)
def test_numbers_read_as_pytorch_reads_them(call):
    """A number first in a shift wraps to the tensor's dtype; float arguments take ints of any
    size."""
    got, want = _both(call)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_histogram_of_infinite_data_is_refused():
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match="range .* is not finite"):
            lib.histogram(lib.tensor([-float("inf"), 1.0, 3e38]), 1)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda lib: lib.narrow(lib.ones(2), 0, 1, 2**63 - 1), "exceeds dimension size"),
        (lambda lib: lib.movedim(lib.tensor(1), [0, -1, 0], [0, 0, 0]), "repeated dim in `source`"),
        (
            lambda lib: lib.linalg.solve(
                lib.ones(2, 2, 2, 2) + lib.eye(2), lib.ones(2, 2, 2), left=False
            ),
            r"equation XA = B \(2x2 and 2x1\)",
        ),
    ],
)
def test_shape_checks_pytorch_makes(call, match):
    """(narrow's start + length wrapped around int64 and asked for a huge list; a 0-d movedim
    took repeated dims; solve(left=False) took a batch of vectors for matrices.)"""
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match=match):
            call(lib)


def test_where_rounds_a_float_number_and_checks_an_integer_one():
    got, want = _both(
        lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float16).where(lib.tensor([True, False]), 1e30)
    )
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda lib: lib.renorm(lib.ones(2, 2), float("nan"), 0, 1.0), "non-positive-norm"),
        (
            lambda lib: lib.searchsorted(
                lib.tensor([1.0, 2]), lib.tensor([1.5]), sorter=lib.tensor([0.0, 1])
            ),
            "sorter must be a tensor of long",
        ),
        (
            lambda lib: lib.constant_pad_nd(lib.tensor([1.0, 2, 3]), [-4, 2], 0),
            "length must be non-negative",
        ),
    ],
)
def test_last_argument_checks_pytorch_makes(call, match):
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match=match):
            call(lib)
    got, want = _both(lambda lib: lib.constant_pad_nd(lib.tensor([1.0, 2, 3]), [-2, 1], 0))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# --------------------------------------------------------------------- stop 51 (issue 30)


def _same(got, want):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("method", ["size", "stride"])
def test_size_and_stride_refuse_a_bool_dim(method):
    _raises_in_both(lambda lib: getattr(lib.ones(2, 3), method)(True), TypeError)


def test_strides_of_a_shape_without_elements_can_overflow():
    _raises_in_both(
        lambda lib: lib.zeros(2).new_zeros(0, 2**63 - 1, 2, 3), RuntimeError, "Stride calculation"
    )


def test_arange_of_an_integer_dtype_refuses_an_infinite_step():
    _raises_in_both(
        lambda lib: lib.arange(-1.0, 3, float("inf"), dtype=lib.int8),
        RuntimeError,
        "value cannot be converted to type int64_t without overflow",
    )


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scans_into_a_wider_out_compute_in_its_dtype(op):
    def call(lib):
        x = lib.tensor([1.0009765625, 1e-4, 1e-4, 1e-4, 3.0], dtype=lib.float16)
        return getattr(lib, op)(x, 0, out=lib.zeros(5, dtype=lib.float64))

    _same(*_both(call))


def test_repeat_interleave_of_0_d_repeats_and_0_d_input_along_a_dim():
    _raises_in_both(lambda lib: lib.repeat_interleave(lib.tensor(3)), RuntimeError, "1D vector")
    _raises_in_both(
        lambda lib: lib.tensor(False).repeat_interleave(lib.tensor(True), dim=0),
        IndexError,
        "Dimension specified as 0 but tensor has no dimensions",
    )
    _same(*_both(lambda lib: lib.tensor(5).repeat_interleave(2)))


def test_norm_fro_over_more_than_two_dims_is_matrix_norms_error():
    _raises_in_both(
        lambda lib: lib.norm(lib.ones(3, 2, 3, 2), dim=[0, 2, 3]),
        RuntimeError,
        "linalg.matrix_norm: dim must be a 2-tuple",
    )
    _raises_in_both(lambda lib: lib.ones(2, 3, 3).norm("nuc"), RuntimeError, "2-tuple")
    got, want = _both(lambda lib: lib.arange(12.0).reshape(3, 4).norm("nuc"))
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-6)


def test_gradient_takes_a_0_d_integer_tensor_as_its_dim():
    got, want = _both(
        lambda lib: lib.gradient(lib.arange(6.0).reshape(2, 3) ** 2, dim=lib.tensor(-1))
    )
    _same(got[0], want[0])


@pytest.mark.parametrize(
    "a,tau,c,left",
    [
        ((4, 2), (1,), (4, 2), True),
        ((4, 2), (2,), (4, 2), True),
        ((4, 3), (2,), (2, 4), False),
        ((3, 3, 3, 3), (1, 3, 3), (3, 3, 3, 3), True),
        ((1, 3, 3, 3), (1, 3, 3), (3, 3, 3, 3), True),
        ((2, 4, 4), (2, 4), (4, 4), True),
        ((2, 5, 3), (2, 3), (2, 3, 5), False),
    ],
)
def test_ormqr_shape_checks_as_pytorchs(a, tau, c, left):
    def call(lib):
        g = lib.Generator().manual_seed(0)
        args = (lib.randn(*s, generator=g, dtype=lib.float64) for s in (a, tau, c))
        return lib.ormqr(*args, left=left)

    try:
        want = call(torch)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as got:
            call(et)
        assert str(got.value) == str(e)
        return
    assert tuple(call(et).shape) == tuple(want.shape)


def test_cumulative_trapezoid_of_an_empty_y_checks_that_x_broadcasts():
    _raises_in_both(
        lambda lib: lib.cumulative_trapezoid(lib.zeros(3, 0, 2, 3), lib.zeros(2, 2), dim=-3),
        RuntimeError,
        "3.*2.*dimension 3",
    )


@pytest.mark.parametrize(
    "a,b,db",
    [
        ((3,), (3,), "float64"),
        ((1, 1, 1, 1), (1,), "float64"),
        ((3, 3), (4,), "float64"),
        ((3, 3), (4, 2), "float64"),
        ((3, 3), (3, 2), "float32"),
        ((2, 3, 3), (3,), "float64"),
    ],
)
def test_lstsq_argument_checks_as_pytorchs(a, b, db):
    def call(lib):
        return lib.linalg.lstsq(
            lib.ones(*a, dtype=lib.float64), lib.ones(*b, dtype=getattr(lib, db))
        )

    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(RuntimeError) as got:
        call(et)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("shape", [(0, 3), (2, 0), (0,)])
def test_stft_reflect_padding_of_an_empty_signal_is_pytorchs_error(shape):
    def call(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lib.stft(lib.zeros(*shape, dtype=lib.float64), 3, 3, return_complex=True)

    _raises_in_both(call, RuntimeError, "other non-zero dimensions for input")


def test_index_put_of_one_mask_and_one_value_of_another_dtype_is_a_masked_fill():
    mask = [[True, False, True], [False, False, True]]

    def call(lib, value):
        x = lib.zeros(2, 3, dtype=lib.int32)
        return x.index_put_((lib.tensor(mask),), value(lib))

    for value in (lambda lib: lib.tensor(2.7), lambda lib: lib.tensor([5.5])):
        _same(*_both(lambda lib, value=value: call(lib, value)))
    _raises_in_both(lambda lib: call(lib, lambda lib: lib.tensor(3e10)), RuntimeError, "overflow")
    _raises_in_both(  # integer indices keep the dtype rule
        lambda lib: lib.zeros(3, dtype=lib.float16).index_put_(
            (lib.tensor([0, 1]),), lib.tensor(True)
        ),
        RuntimeError,
    )


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_keeps_leading_size_1_dims_of_the_values(accumulate):
    def put(lib):
        x = lib.zeros(3, 2)
        return x.index_put_((lib.tensor([1]),), lib.ones(1, 1, 2), accumulate=accumulate)

    _raises_in_both(put, RuntimeError, "shape mismatch: value tensor of shape")

    # assignment drops them, as NumPy's and PyTorch's
    def assign(lib):
        x = lib.zeros(3, 2)
        x[lib.tensor([1])] = lib.ones(1, 1, 2)
        return x

    _same(*_both(assign))


def test_new_factories_refuse_a_device_that_is_not_one():
    _raises_in_both(lambda lib: lib.ones(2).new_full([2], 2.0, device=()), TypeError)
    _same(*_both(lambda lib: lib.ones(2, dtype=lib.int32).new_zeros(3)))


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.ones(2, 5, 0).pinverse(rcond=[1, 2]),
        lambda lib: lib.ones(2, 3).numpy(force=5),
        lambda lib: lib.ones(2, 3).histogram(True),
    ],
)
def test_arguments_of_the_wrong_type(call):
    _raises_in_both(call, TypeError)


def test_hardtanh_refuses_none_bounds():
    def call(lib):
        hardtanh = lib.hardtanh if lib is et else torch._C._nn.hardtanh
        return hardtanh(lib.ones(2, 3), -3, None)

    _raises_in_both(call, TypeError)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.tensor([2**63], dtype=lib.bool),
        lambda lib: lib.tensor(True).new_tensor(-(2**63) - 1),
        lambda lib: lib.bucketize(2**63, boundaries=lib.tensor([1.0, 2.0])),
        lambda lib: lib.isin(lib.tensor([1.0, 0.0]), 2**63),
        lambda lib: lib.searchsorted(lib.tensor([1.0, 2.0]), 2**63),
    ],
)
def test_python_ints_beyond_int64_with_float_or_bool_data(call):
    _same(*_both(call))


def test_tensordot_refuses_dims_out_of_range():
    _raises_in_both(lambda lib: lib.tensordot(lib.ones(1), lib.ones(1), ([1], [0])), IndexError)
    _raises_in_both(lambda lib: lib.tensordot(lib.ones(1), lib.ones(1), [[1], [2]]), IndexError)


def _nn(lib):
    """The functional namespace: the core's own ops, or torch.nn.functional."""
    return lib if lib is et else torch.nn.functional


def test_linear_adds_a_bias_of_another_dtype_as_pytorchs_in_place_add():
    def mixed(lib):
        x = lib.arange(18.0).reshape(2, 3, 3).to(lib.bfloat16)
        bias = lib.tensor(0.5, dtype=lib.float64)
        return _nn(lib).linear(x, lib.ones(3, 3, dtype=lib.bfloat16), bias)

    _same(*_both(mixed))

    def refused(lib):
        x, w = lib.tensor([3], dtype=lib.uint8), lib.tensor([2], dtype=lib.uint8)
        return _nn(lib).linear(x, w, lib.tensor(0.77, dtype=lib.float16))

    _raises_in_both(refused, RuntimeError, "can't be cast to the desired output type")


def _im2col(lib, x, kernel, stride):
    if lib is et:
        return et.im2col(x, kernel, [1, 1], [0, 0], stride)
    return torch.nn.functional.unfold(x, kernel, stride=stride)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: _nn(lib).conv2d(lib.ones(1, 1, 1, 1), lib.ones(1, 1, 2, 1), stride=2),
        lambda lib: _im2col(lib, lib.zeros(1, 1, 1, 1), [2, 1], [2, 3]),
        lambda lib: _im2col(lib, lib.zeros(1, 1, 3, 3), [4, 4], [3, 3]),
    ],
)
def test_a_window_larger_than_the_input_by_less_than_a_stride_has_no_block(call):
    # (the block count is floor division: truncating toward zero counted one block and read
    # past the input)
    _raises_in_both(call, RuntimeError)


def test_native_group_norm_takes_any_shape_of_n_c_hxw_elements():
    got, want = _both(
        lambda lib: lib.native_group_norm(lib.tensor([1.0, 3.0]), None, None, 2, 1, 1, 1, 0.0)
    )
    for g, w in zip(got, want):
        _same(g, w)


def test_nll_loss_of_a_batch_wants_a_1_d_weight():
    _raises_in_both(
        lambda lib: _nn(lib).nll_loss(lib.zeros(2, 1), lib.tensor([0, 0]), weight=lib.tensor(1.0)),
        RuntimeError,
        "weight tensor should be defined either for all 1 classes",
    )
    _same(
        *_both(
            lambda lib: _nn(lib).nll_loss(
                lib.ones(2, 1, 3), lib.zeros(2, 3, dtype=lib.int64), weight=lib.tensor(2.0)
            )
        )
    )


# ---------------------------------------------------------------- sizes near int64's end
# (UBSan found each of these as a signed overflow under `nox -s sanitize`)


def test_repeat_and_reshape_refuse_sizes_whose_product_overflows():
    _raises_in_both(lambda lib: lib.arange(3).repeat(2**62), RuntimeError)
    with pytest.raises(RuntimeError, match=r"repeat: the size of dimension 1, 3 \* "):
        et.arange(6).reshape(2, 3).tile(2**63 - 1)
    _raises_in_both(
        lambda lib: lib.tensor([]).reshape(10**12, 2**63 - 1),
        RuntimeError,
        r"shape '\[1000000000000, 9223372036854775807\]' is invalid for input of size 0",
    )


@pytest.mark.parametrize("count", [2**63 - 1, 2**62 + 1, 7])
def test_split_and_chunk_with_huge_counts_are_exact(count):
    # ceil(size / count) without the overflow of (size + count - 1): the whole dim in one
    # split, one row per chunk, as PyTorch for a count it can add to (7); PyTorch's own
    # arithmetic overflows into "split_size=-1" for the others
    x = et.arange(6.0).reshape(3, 2)
    ref = torch.arange(6.0).reshape(3, 2)
    assert [p.tolist() for p in x.split(count)] == [p.tolist() for p in ref.split(7)]
    assert [p.tolist() for p in x.chunk(count)] == [p.tolist() for p in ref.chunk(7)]


def test_chunks_of_an_empty_dim_beyond_memory_are_refused_before_allocating():
    assert [tuple(p.shape) for p in et.zeros(0, 3).chunk(4)] == [
        tuple(p.shape) for p in torch.zeros(0, 3).chunk(4)
    ]
    with pytest.raises(RuntimeError, match="chunk: 1000000000000 chunks of an empty dimension"):
        et.zeros(0, 3).chunk(10**12)  # PyTorch allocates 10^12 sizes (and runs out of memory)


def test_polygamma_of_the_largest_order_is_defined():
    # n + 1 computed in double: no signed overflow; n! / x^(n+1) is beyond every float
    # (PyTorch answers NaN: documented in differences-from-pytorch.md)
    assert et.polygamma(2**63 - 1, et.tensor([1.5], dtype=et.float64)).item() == float("inf")


def test_numpy_of_a_view_with_a_huge_step_has_no_stride_overflow():
    # a slice with a step beyond the dim keeps one element with a huge stride (UBSan found
    # the stride's byte count overflowing in numpy()); as PyTorch's value
    x = et.tensor([1, 2, 3])
    v = x.slice(step=2**64)
    assert v.tolist() == [1] and v.numpy().tolist() == [1]
    assert str(v) == "tensor([1])"
    # on a dim with a stride > 1, stride * step overflows (UBSan, the sanitized fuzz slice)
    m = et.arange(15).reshape(3, 5)
    tm = torch.arange(15).reshape(3, 5)
    for step in (2**62, 2**63 - 1, 2**64):
        got = m.slice(step=step)
        assert got.tolist() == [[0, 1, 2, 3, 4]] and got.stride()[1] == 1
    assert m[::2**62].tolist() == tm[::2**62].tolist()
    assert m[:, ::2**62].tolist() == tm[:, ::2**62].tolist()
    assert m[::2**62, None].tolist() == tm[::2**62, None].tolist()
