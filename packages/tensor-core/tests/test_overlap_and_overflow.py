"""Issue 30's crashes and silent wrong answers, each against PyTorch's behaviour on the same
call: writes into tensors whose elements share memory, int arguments beyond int64, sizes whose
products overflow, fill values out of a dtype's range, overload resolution and NumPy scalars.

Every crash case runs in a child process too, so that a regression is a failed test and not a
dead test run."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import ember_tensor as et

INTERNAL = "more than one element of the written-to tensor refers to a single memory location"
PARTIAL = "some elements of the input tensor and the written-to tensor refer to a single memory"


def both(fn):
    """fn(lib) for ember_tensor and torch: (ember's result or exception, torch's)."""
    out = []
    for lib in (et, torch):
        try:
            out.append(fn(lib))
        except Exception as e:  # noqa: BLE001 - compared below
            out.append(e)
    return out


def assert_same_error(fn, fragment, kind=RuntimeError):
    ours, theirs = both(fn)
    assert isinstance(theirs, kind) and fragment in str(theirs), theirs
    assert isinstance(ours, kind), ours
    assert fragment in str(ours), str(ours)


def assert_same_values(fn):
    ours, theirs = both(fn)
    assert not isinstance(theirs, Exception), theirs
    assert not isinstance(ours, Exception), ours
    np.testing.assert_array_equal(np.asarray(ours.tolist()), np.asarray(theirs.tolist()))


# ---- writes into tensors whose elements share memory


def expanded(lib, dtype="float32"):
    return lib.tensor([3], dtype=getattr(lib, dtype)).expand(4)


@pytest.mark.parametrize(
    "write",
    [
        lambda lib: expanded(lib).mul_(2),
        lambda lib: expanded(lib).add_(lib.ones(4)),
        lambda lib: expanded(lib).exp_(),
        lambda lib: expanded(lib).clamp_(0, 1),
        lambda lib: expanded(lib, "int64").remainder_(expanded(lib, "int64")),  # was SIGFPE
        lambda lib: expanded(lib, "int64").fmod_(expanded(lib, "int64")),
        lambda lib: expanded(lib).copy_(lib.arange(4.0)),
        lambda lib: lib.abs(lib.ones(4), out=expanded(lib)),
        lambda lib: lib.mm(lib.ones(4, 2), lib.ones(2, 1), out=lib.zeros(1, 1).expand(4, 1)),
    ],
    ids=["mul_", "add_", "exp_", "clamp_", "remainder_", "fmod_", "copy_", "abs_out", "mm_out"],
)
def test_writing_into_an_expanded_tensor_is_pytorchs_error(write):
    assert_same_error(write, INTERNAL)


def test_the_remainder_of_an_expanded_tensor_by_itself_does_not_kill_the_process():
    code = textwrap.dedent(
        """
        import ember_tensor as et
        x = et.tensor([3]).expand(2)
        try:
            x %= x
        except RuntimeError:
            pass
        """
    )
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0


def transposed_out(lib, op, binary=False, **kw):
    """op(a[, a], out=a.t()): the output is the input's transpose."""
    a = lib.tensor([[-1, 2], [3, -4]])
    args = (a, a) if binary else (a,)
    return getattr(lib, op)(*args, **kw, out=a.t())


@pytest.mark.parametrize(
    "write",
    [
        lambda lib: transposed_out(lib, "abs"),
        lambda lib: transposed_out(lib, "cumsum", dim=0),
        lambda lib: transposed_out(
            lib, "fmod", other=lib.tensor([[1, 2], [3, 4]]).t()
        ),  # was SIGFPE
        lambda lib: (lambda x: x[1:].copy_(x[:-1]))(lib.arange(4.0)),
    ],
    ids=["abs", "cumsum", "fmod", "copy_"],
)
def test_an_input_that_partly_overlaps_the_output_is_pytorchs_error(write):
    assert_same_error(write, PARTIAL)


@pytest.mark.parametrize(
    "write",
    [
        lambda lib: expanded(lib).fill_(2),
        lambda lib: expanded(lib).zero_(),
        lambda lib: expanded(lib).masked_fill_(lib.tensor([True, False, True, False]), 1.0),
        lambda lib: (lambda x: x.add_(x))(lib.arange(4.0)),  # the written tensor itself: in place
        lambda lib: (lambda x: x[2:].add_(x[:2]))(lib.arange(4.0)),  # disjoint halves
        lambda lib: (lambda x: x.t().add_(x.t()))(lib.arange(4.0).reshape(2, 2)),
    ],
    ids=["fill_", "zero_", "masked_fill_", "self", "disjoint", "self_transposed"],
)
@pytest.mark.filterwarnings("ignore:Use of masked_fill_ on expanded tensors")
def test_writes_pytorch_allows_still_work(write):
    assert_same_values(write)


# ---- int arguments beyond int64, sizes whose products overflow


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.unflatten(lib.zeros(4, 1, 0, 3), 2, [-(10**20), 3]),
        lambda lib: lib.ones(2, 3).any([1, 10**20]),
        lambda lib: lib.squeeze(lib.zeros(2, 1), [10**20]),
        lambda lib: lib.zeros(2).reshape(10**20),
    ],
    ids=["unflatten", "any", "squeeze", "reshape"],
)
def test_int_arguments_beyond_int64_are_an_error_not_a_pending_exception(call):
    ours, theirs = both(call)
    assert isinstance(theirs, (OverflowError, RuntimeError, TypeError)), theirs
    assert isinstance(ours, (OverflowError, TypeError)), repr(ours)
    # and nothing is left pending for the next call
    assert et.ones(2).sum().item() == 2.0


def test_a_kernel_whose_size_product_overflows_is_pytorchs_error():
    message = "the product of kernel_width and kernel_height overflowed"
    with pytest.raises(RuntimeError, match=message):
        torch.nn.functional.fold(torch.zeros(1, 2, 2), [4, 4], [2**62, 2**62])
    with pytest.raises(RuntimeError, match=message):
        et.col2im(et.zeros(1, 2, 2), [4, 4], [2**62, 2**62], [1, 1], [0, 0], [1, 1])
    with pytest.raises(RuntimeError, match=message):
        et.im2col(et.zeros(1, 1, 4, 4), [2**62, 2**62], [1, 1], [0, 0], [1, 1])


def test_col2im_with_a_huge_kernel_does_not_kill_the_process():
    code = textwrap.dedent(
        """
        import ember_tensor as et
        try:
            et.col2im(et.zeros(1, 2, 2), [4, 4], [2**62, 2**62], [1, 1], [0, 0], [1, 1])
        except RuntimeError:
            pass
        """
    )
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0


@pytest.mark.parametrize("diagonal", [2**63 - 1, -(2**63), 2**40, -(2**40), 5, -5])
@pytest.mark.parametrize("op", ["tril", "triu"])
def test_tril_triu_with_an_extreme_diagonal_match_pytorch(op, diagonal):
    assert_same_values(lambda lib: getattr(lib.arange(9.0).reshape(3, 3), op)(diagonal))
    assert_same_values(lambda lib: getattr(lib.arange(9.0).reshape(3, 3), op + "_")(diagonal))


# ---- fill values out of a dtype's range


@pytest.mark.parametrize(
    ("dtype", "value"),
    [
        ("int64", -float("inf")),
        ("int64", float("nan")),
        ("int8", 300),
        ("uint8", -300),
        ("int32", 2**31),
        ("float32", 1e308),
    ],
)
def test_fill_values_out_of_range_are_pytorchs_error(dtype, value):
    assert_same_error(
        lambda lib: lib.zeros(2, dtype=getattr(lib, dtype)).fill_(value),
        "without overflow",
    )
    assert_same_error(
        lambda lib: lib.full([2], value, dtype=getattr(lib, dtype)), "without overflow"
    )


@pytest.mark.parametrize(
    ("dtype", "value"),
    [("uint8", -1), ("float32", float("inf")), ("bool", 5), ("int32", 2.5), ("int64", 2**63 - 1)],
)
def test_fill_values_pytorch_accepts(dtype, value):
    assert_same_values(lambda lib: lib.zeros(2, dtype=getattr(lib, dtype)).fill_(value))


# ---- overloads and NumPy scalars


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_of_two_tensors_is_elementwise_even_for_a_one_element_integer_tensor(op):
    assert_same_values(lambda lib: getattr(lib, op)(lib.tensor([1.0, 5.0, 3.0]), lib.tensor([0])))
    assert_same_values(lambda lib: getattr(lib.tensor([1.0, 5.0, 3.0]), op)(lib.tensor([4])))
    assert_same_values(lambda lib: getattr(lib, op)(lib.tensor([[1.0, 5.0], [3.0, 0.0]]), 1).values)


@pytest.mark.parametrize(
    "data",
    [
        np.float64(1.5),
        np.int32(3),
        np.float16(1.0),
        np.bool_(True),
        [np.float64(1.5)],
        [np.float64(1.5), 2.0],
        [np.int32(1), 2],
        [np.float16(1.0), 2.0],
    ],
    ids=repr,
)
def test_numpy_scalars_keep_their_dtype_as_in_pytorch(data):
    ours, theirs = et.tensor(data), torch.tensor(data)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(np.asarray(ours.tolist()), np.asarray(theirs.tolist()))


@pytest.mark.parametrize(
    "view",
    [
        lambda lib: lib.zeros(1).expand(2**62, 2**62),
        lambda lib: lib.zeros(1).as_strided([2**62, 2**62], [0, 0]),
    ],
    ids=["expand", "as_strided"],
)
def test_a_view_with_more_elements_than_int64_counts_is_pytorchs_error(view):
    assert_same_error(view, "numel: integer multiplication overflow")
    assert_same_values(lambda lib: lib.zeros(1).expand(0, 2**62, 2**62).sum())  # empty: fine


def half_ones(lib):
    return lib.ones(2, dtype=lib.float16)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.as_tensor(float("nan"), dtype=lib.int64),
        lambda lib: lib.tensor([float("nan")], dtype=lib.int64),
        lambda lib: lib.tensor([300], dtype=lib.int8),
        lambda lib: lib.add(lib.ones(2), lib.ones(2), alpha=1e308),
        lambda lib: lib.sub(half_ones(lib), half_ones(lib), alpha=1e39),
        lambda lib: lib.add(half_ones(lib), half_ones(lib), alpha=1e5),
    ],
    ids=[
        "as_tensor_nan",
        "tensor_nan",
        "tensor_int8",
        "add_alpha",
        "sub_alpha_half",
        "add_alpha_half",
    ],
)
def test_numbers_a_dtype_cannot_hold_are_pytorchs_error(call):
    assert_same_error(call, "without overflow")


@pytest.mark.parametrize(
    ("dtype", "low", "high", "fragment"),
    [
        ("float32", 0.0, 1e308, "to is out of bounds for"),
        ("float32", -1e308, 0.0, "from is out of bounds for"),
        ("float16", 0.0, 1e5, "to is out of bounds for"),
        ("float32", 0.0, float("inf"), "to is out of bounds for"),
    ],
)
def test_uniform_bounds_beyond_the_dtype_are_pytorchs_error(dtype, low, high, fragment):
    assert_same_error(
        lambda lib: lib.zeros(3, dtype=getattr(lib, dtype)).uniform_(low, high), fragment
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.tensor([-1], dtype=lib.uint8),
        lambda lib: lib.tensor([1e308], dtype=lib.float32),
        lambda lib: lib.tensor([2.7], dtype=lib.int64),
        lambda lib: lib.add(half_ones(lib), half_ones(lib), alpha=6e4),
    ],
    ids=["uint8_wraps", "float_to_inf", "truncates", "half_alpha"],
)
def test_numbers_pytorch_converts(call):
    assert_same_values(call)


# ---- W12: factories that differed from PyTorch


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "float32"])
@pytest.mark.parametrize(
    "args", [(0, 5, 1.5), (0.5, 3, 1), (0, 1e-8), (-2.5, 3, 1.7), (0, -3, -1.5), (0.9, 5.9, 0.9)]
)
def test_arange_with_an_integer_dtype_truncates_as_pytorch(args, dtype):
    ours, theirs = both(lambda lib: lib.arange(*args, dtype=getattr(lib, dtype)).tolist())
    if isinstance(theirs, Exception):
        assert type(ours) is type(theirs) and "step must be nonzero" in str(ours), ours
    else:
        assert ours == theirs


@pytest.mark.parametrize(
    "data",
    [
        lambda T: [T(1.0), T(2.0)],
        lambda T: [T([1.0]), T([2.0])],
        lambda T: [[T([1.0])], [T([2.0])]],
        lambda T: [T([1.0]), 2.0],
        lambda T: [T(1), 2.5],
    ],
    ids=["0-d", "1-element", "nested", "mixed", "int_and_float"],
)
def test_tensors_inside_the_data_are_numbers_as_in_pytorch(data):
    ours, theirs = et.tensor(data(et.tensor)), torch.tensor(data(torch.tensor))
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.tolist() == theirs.tolist()
    assert_same_error(
        lambda lib: lib.tensor([lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])]),
        "only one element tensors can be converted to Python scalars",
        kind=ValueError,
    )


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "float32"])
@pytest.mark.parametrize(
    "args", [(0, -1.5, 4), (-1.7, 5.9, 3), (0.9, 10.2, 7), (3, 3, 5), (0, 1, 1), (0, 100, 0)]
)
def test_linspace_with_an_integer_dtype_converts_the_endpoints_first(args, dtype):
    """PyTorch converts start and end to the dtype before stepping: linspace(0, -1.5, 4) in
    int16 is 0, 0, 0, -1 (Ember gave 0, 0, -1, -1)."""
    ours, theirs = both(lambda lib: lib.linspace(*args, dtype=getattr(lib, dtype)).tolist())
    if isinstance(theirs, Exception):
        assert type(ours) is type(theirs), ours
    elif dtype == "float32":  # PyTorch steps in float32, Ember in float64: 1 ulp apart
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    else:
        assert ours == theirs


@pytest.mark.parametrize(
    "dtype, end, name",
    [("int16", 1e20, "int16_t"), ("uint8", 300, "uint8_t"), ("int32", float("nan"), "int"),
     ("float16", 1e6, "c10::Half")],
)
def test_linspace_endpoints_the_dtype_cannot_hold_are_pytorchs_error(dtype, end, name):
    assert_same_error(
        lambda lib: lib.linspace(0, end, 3, dtype=getattr(lib, dtype)),
        f"value cannot be converted to type {name} without overflow",
    )


@pytest.mark.parametrize("correction", [-2, -1, 0, 1, 2])
@pytest.mark.parametrize("shape, dim", [((0,), None), ((2, 0), 1), ((0, 3), 0), ((1,), None)])
def test_var_and_std_of_no_values_are_nan_whatever_the_correction(shape, dim, correction):
    for op in ("var", "std"):
        ours, theirs = both(
            lambda lib, op=op: getattr(lib.zeros(shape), op)(dim, correction=correction).tolist()
        )
        np.testing.assert_equal(ours, theirs)


@pytest.mark.parametrize("value", [0.1, -77.7, 1000.1, 12345.678])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_and_group_norm_of_equal_values_are_exactly_zero(value, dtype):
    """A row of equal values normalizes to 0, as in PyTorch (Ember gave up to 0.07 for
    12345.678: the mean was folded into the shift, x * s - mean * s)."""
    x = np.full((2, 4, 3), value, dtype=dtype)
    for lib in (et, torch):
        t = lib.from_numpy(x)
        out, _mean, _rstd = lib.native_layer_norm(t, [3], None, None, 1e-5)
        assert not out.numpy().any(), (lib.__name__, out)
        out, _mean, _rstd = lib.native_group_norm(t, None, None, 2, 4, 3, 2, 1e-5)
        assert not out.numpy().any(), (lib.__name__, out)


@pytest.mark.parametrize("op", ["cumsum_", "cumprod_"])
def test_an_in_place_scan_into_another_dtype_is_pytorchs_error(op):
    """cumsum_(0, dtype=int32) of a float tensor truncated and stored floats; PyTorch (and
    now Ember) refuse it, and a dtype equal to self's is fine."""
    assert_same_error(
        lambda lib: getattr(lib.tensor([1.5, 2.5]), op)(0, dtype=lib.int32),
        "Bad in-place call: input tensor dtype",
    )
    ours, theirs = both(lambda lib: getattr(lib.tensor([1.5, 2.5]), op)(0, dtype=lib.float32))
    assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("dim", [0, -1])
def test_take_along_dim_of_0d_tensors_with_a_dim_is_pytorchs_error(dim):
    """Found by the differential fuzzer: a segfault (dim 0 of a 0-d tensor's empty shape)."""
    assert_same_error(
        lambda lib: lib.take_along_dim(lib.tensor(1), lib.tensor(0), dim),
        "but tensor has no dimensions",
        kind=IndexError,
    )
    ours, theirs = both(lambda lib: lib.take_along_dim(lib.tensor(5), lib.tensor(0)).tolist())
    assert ours == theirs


@pytest.mark.parametrize("value, dtype", [(True, "bool"), (2.7, "float32"), (-3, "int8")])
def test_int_of_a_tensor_is_an_int_as_in_pytorch(value, dtype):
    """Found by the fuzzer: int() of a bool tensor returned True (a bool, with Python's
    DeprecationWarning for an __int__ that returns a subclass of int)."""
    ours, theirs = both(lambda lib: int(lib.tensor(value, dtype=getattr(lib, dtype))))
    assert type(ours) is int and ours == theirs


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_int_min_divided_by_minus_one_wraps_as_numpy(mode):
    """UBSan (nox -s sanitize) found the negation of INT_MIN in integer division by -1
    undefined; it wraps now, as NumPy's does. (PyTorch 2.13 dies of SIGFPE on this call, so
    NumPy is the reference.)"""
    x = np.array([-(2**31), 7, -7, 0], dtype=np.int32)
    y = np.array([-1, -1, 2, -1], dtype=np.int32)
    with np.errstate(over="ignore"):
        want = (np.floor_divide(x, y) if mode == "floor" else np.trunc(x / y).astype(np.int32))
    want[0] = -(2**31)  # NumPy's float route for trunc saturates differently: the wrap is this
    got = et.div(et.from_numpy(x), et.from_numpy(y), rounding_mode=mode).numpy()
    np.testing.assert_array_equal(got, want)
    assert et.from_numpy(x).abs().tolist()[0] == -(2**31)
    assert (-et.from_numpy(x)).tolist()[0] == -(2**31)


def test_as_strided_refuses_a_view_whose_extent_overflows():
    # (3 - 1) * 2**62 wraps int64 to a negative extent, which once passed the bounds check
    # and the copy read far past the storage (a segfault the fuzzer found)
    x = et.tensor([True]).reshape(1).as_strided((), ())
    for size, stride in (([3], [2**62]), ([2, 2], [2**62, 2**62])):
        with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
            x.as_strided(size, stride)
        with pytest.raises(RuntimeError):
            torch.ones(1, dtype=torch.bool).as_strided(size, stride)
    assert tuple(et.zeros(4).as_strided([0, 3], [2**62, 2**62]).shape) == (0, 3)
