"""Tests for ember_tensor._printing: reprs must match PyTorch's byte for byte.

The tests run against ``FakeTensor`` (a NumPy-backed stand-in exposing the tensor API
the printer relies on), so they work whether or not the C++ core is built.  When
``ember_tensor`` imports and provides ``tensor``, real tensors are checked as well.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import pathlib
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

_PRINTING_PATH = (
    pathlib.Path(__file__).resolve().parents[1] / "python" / "ember_tensor" / "_printing.py"
)


def _load_printing():
    try:
        return importlib.import_module("ember_tensor._printing")
    except (ImportError, OSError):  # core not built / not importable: load the file itself
        name = "_ember_printing_under_test"
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, _PRINTING_PATH)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module


printing = _load_printing()

try:
    import ember_tensor as _ember

    _HAS_EMBER = hasattr(_ember, "tensor")
except Exception:  # noqa: BLE001 - any failure to import the core means "not built"
    _ember = None
    _HAS_EMBER = False


# ----------------------------------------------------------------------------------------
# Fake tensor
# ----------------------------------------------------------------------------------------

_FLOATING = {"float16", "bfloat16", "float32", "float64"}


class FakeDtype:
    def __init__(self, name: str) -> None:
        self.name = name
        self.is_floating_point = name in _FLOATING

    def __str__(self) -> str:
        return f"ember.{self.name}"

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FakeDtype) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


class FakeDevice:
    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return self.name


class MulBackward0:
    """Stand-in autograd node; only its class name matters."""


class FakeTensor:
    """NumPy-backed tensor with exactly the API ``_printing`` may use.

    For bfloat16 the array holds the (already bfloat16-rounded) values as float32 and
    ``numpy()`` refuses, like the real core.
    """

    def __init__(
        self, values, dtype: str, *, device: str = "cpu", requires_grad=False, grad_fn=None
    ) -> None:
        self._values = np.asarray(values)
        self.dtype = FakeDtype(dtype)
        self.device = FakeDevice(device)
        self.requires_grad = requires_grad
        self.grad_fn = grad_fn

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._values.shape)

    def dim(self) -> int:
        return self._values.ndim

    def numel(self) -> int:
        return int(self._values.size)

    def numpy(self):
        if self.dtype.name == "bfloat16":
            raise TypeError("Got unsupported ScalarType BFloat16")
        return self._values

    def to(self, dtype):
        name = dtype.name if isinstance(dtype, FakeDtype) else str(dtype).rsplit(".", 1)[-1]
        np_dtype = np.float32 if name == "bfloat16" else np.dtype(name)
        return FakeTensor(
            self._values.astype(np_dtype),
            name,
            device=str(self.device),
            requires_grad=self.requires_grad,
            grad_fn=self.grad_fn,
        )

    def float(self):
        return self.to(FakeDtype("float32"))


def fake_from_torch(tt, **kwargs) -> FakeTensor:
    name = str(tt.dtype).rsplit(".", 1)[-1]
    tt = tt.detach()
    values = tt.float().numpy() if tt.dtype is torch.bfloat16 else tt.numpy()
    return FakeTensor(values.copy(), name, **kwargs)


def torch_repr(tt) -> str:
    return repr(tt).replace("torch.", "ember.")


def check(data, dtype=None, **fake_kwargs):
    tt = data if isinstance(data, torch.Tensor) else torch.tensor(data, dtype=dtype)
    if isinstance(data, torch.Tensor) and dtype is not None:
        tt = tt.to(dtype)
    expected = torch_repr(tt)
    got = printing.tensor_repr(fake_from_torch(tt, **fake_kwargs))
    assert got == expected, f"\n--- got ---\n{got}\n--- expected ---\n{expected}"
    return got


@pytest.fixture(autouse=True)
def _reset_printoptions():
    torch.set_printoptions(profile="default")
    printing.set_printoptions(profile="default")
    yield
    torch.set_printoptions(profile="default")
    printing.set_printoptions(profile="default")


def set_both(**kwargs):
    torch.set_printoptions(**kwargs)
    printing.set_printoptions(**kwargs)


ALL_DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.uint8,
    torch.bool,
]
FLOAT_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


# ----------------------------------------------------------------------------------------
# Basic shapes
# ----------------------------------------------------------------------------------------


def test_documented_examples():
    assert check([[1.0, 2.0]]) == "tensor([[1., 2.]])"
    assert check([1, 2, 3]) == "tensor([1, 2, 3])"
    assert check([1, 2], torch.int32) == "tensor([1, 2], dtype=ember.int32)"
    assert check(3.5) == "tensor(3.5000)"
    assert check(torch.zeros(0, 3)) == "tensor([], size=(0, 3))"
    # bools are right-aligned to the widest element ("False")
    assert check([True, False]) == "tensor([ True, False])"
    assert check([True, True]) == "tensor([True, True])"


@pytest.mark.parametrize(
    "value",
    [
        0.0,
        -0.0,
        1.0,
        -2.0,
        3.5,
        1e-5,
        1e10,
        123456.789,
        -1e-10,
        float("nan"),
        float("inf"),
        float("-inf"),
    ],
)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_scalars(value, dtype):
    check(value, dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_int_scalars_and_vectors(dtype):
    check(1, dtype)
    check(0, dtype)
    check([0, 1, 1, 0, 1], dtype)
    if dtype not in (torch.uint8, torch.bool):
        check([-5, 7, -100, 3], dtype)
        check(-3, dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_shapes(dtype):
    rng = np.random.default_rng(0)
    for shape in [(1,), (5,), (2, 3), (3, 1), (1, 4), (2, 3, 4), (2, 1, 2, 3), (1, 1, 1)]:
        data = rng.integers(-50, 100, size=shape)
        if dtype is torch.uint8:
            data = np.abs(data)
        elif dtype is torch.bool:
            data = data > 20
        elif dtype.is_floating_point:
            data = data / 7.0
        check(torch.from_numpy(np.ascontiguousarray(data)), dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4), (0, 0)])
def test_empty(dtype, shape):
    check(torch.zeros(shape, dtype=dtype))


def test_negative_numbers():
    check([-1.5, 2.25, -3.125])
    check([[-1.0, 2.0], [3.0, -4.0]])
    check([-1, -22, -333])
    check([-0.0001, 0.5])
    check([-12345.678, 0.001])


def test_integer_valued_floats():
    check([1.0, 2.0, 3.0])
    check([0.0, 0.0])
    check([100.0, -7.0, 0.0])
    check([1e8, 1.0])  # int mode, forced sci by ratio
    check([1e9])  # int mode, sci by magnitude
    check([1000.0, 1.0])
    check([1001.0, 1.0])
    check([[1.0, 20.0], [300.0, 4000.0]])
    check([1.0, float("nan"), float("inf"), -float("inf")])


def test_sci_mode_selection():
    check([1e-5, 1.0])
    check([1e-4, 1.0])
    check([0.001, 1.5])
    check([1.5, 2000.5])
    check([1.5, 1e9])
    check([123456789.5])
    check([1e-30, 1e30])
    check([[1e-3, 2.0], [3e5, 4.5]])
    check([0.1, 0.2, 123.456])


def test_nan_inf():
    nan, inf = float("nan"), float("inf")
    check([nan])
    check([inf, -inf])
    check([nan, 1.5, 1e-5])
    check([nan, 1.0, 1e5])
    check([[nan, 0.5], [inf, -2.25]])
    check([nan, inf, 0.0])
    check([nan, 2.0, -inf], torch.float16)
    check([nan, 2.5, -inf], torch.bfloat16)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_low_precision_and_double(dtype):
    check([0.1, 0.2, 0.3], dtype)
    check([1.0 / 3.0, 65504.0, -2.0], dtype)
    check([[1e-3, 5.0], [6e4, -0.5]], dtype)
    check([3.14159265, 2.71828], dtype)


def test_float64_precision():
    check([1.0 / 3.0, 2.0 / 3.0], torch.float64)
    check([1e-300, 1e300], torch.float64)


# ----------------------------------------------------------------------------------------
# Summarisation and wrapping
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize(
    "shape",
    [
        (1001,),
        (2000,),
        (1000,),
        (40, 30),
        (3, 500),
        (500, 3),
        (11, 11, 11),
        (2, 3, 200),
        (5, 2, 10, 11),
    ],
)
def test_summarisation(dtype, shape):
    n = math.prod(shape)
    data = torch.arange(n, dtype=torch.float64).reshape(shape)
    if dtype is torch.bool:
        data = data.remainder(3) == 0
    elif dtype in (torch.int8, torch.uint8):
        data = data.remainder(100)
    elif dtype.is_floating_point:
        data = data / 3.0 - 50.0
    check(data.to(dtype))


def test_summarisation_random_floats():
    rng = np.random.default_rng(1)
    for shape in [(1200,), (50, 50), (4, 300), (10, 10, 20)]:
        check(torch.from_numpy(rng.standard_normal(shape)), torch.float32)
        check(torch.from_numpy(rng.standard_normal(shape) * 1e6), torch.float32)


def test_summarised_formatter_uses_only_visible_values():
    data = torch.ones(2000)
    data[1000] = 1e-7  # hidden in the summary: must not trigger sci mode
    check(data)
    data[0] = 1e-7  # visible
    check(data)


@pytest.mark.parametrize("n", [5, 12, 13, 14, 25, 60, 100, 999])
def test_wrapping_long_rows(n):
    check(torch.arange(n, dtype=torch.float32) * 1.5)
    check(torch.arange(n, dtype=torch.int64) * 1234567)
    check(torch.arange(n, dtype=torch.float64) / 7 - 3)
    check(torch.arange(n) % 2 == 0)
    check((torch.arange(n * 3, dtype=torch.float32) / 11).reshape(3, n))
    check((torch.arange(n * 4, dtype=torch.float32) * 1e-6).reshape(2, 2, n))


def test_suffix_wrapping():
    check(torch.arange(12, dtype=torch.int32) * 100000)
    check(torch.arange(11, dtype=torch.int32) * 100000)
    check(torch.arange(13, dtype=torch.float64) + 0.5)
    check(torch.arange(30, dtype=torch.int16).reshape(2, 15))
    check(torch.full((1, 7), 1.5, dtype=torch.float16))


# ----------------------------------------------------------------------------------------
# Autograd and device suffixes
# ----------------------------------------------------------------------------------------


def test_requires_grad_suffix():
    for data in ([1.0, 2.0], 3.5, [[1.5, 2.0], [3.0, 4.0]]):
        tt = torch.tensor(data, requires_grad=True)
        got = printing.tensor_repr(fake_from_torch(tt, requires_grad=True))
        assert got == torch_repr(tt)
    tt = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    assert printing.tensor_repr(fake_from_torch(tt, requires_grad=True)) == torch_repr(tt)
    tt = torch.arange(20, dtype=torch.float64).requires_grad_()
    assert printing.tensor_repr(fake_from_torch(tt, requires_grad=True)) == torch_repr(tt)


def test_grad_fn_suffix():
    for data in ([1.0, 2.0], 3.5, list(range(14)), list(range(18))):
        tt = torch.tensor(data, dtype=torch.float64, requires_grad=True) * 2
        assert type(tt.grad_fn).__name__ == "MulBackward0"
        fake = fake_from_torch(tt, requires_grad=True, grad_fn=MulBackward0())
        assert printing.tensor_repr(fake) == torch_repr(tt)


def test_device_suffix():
    fake = FakeTensor(np.array([1.0, 2.0], dtype=np.float32), "float32", device="cuda:0")
    assert printing.tensor_repr(fake) == "tensor([1., 2.], device='cuda:0')"
    fake = FakeTensor(
        np.array([1, 2], dtype=np.int32), "int32", device="cuda:0", requires_grad=True
    )
    assert printing.tensor_repr(fake) == (
        "tensor([1, 2], device='cuda:0', dtype=ember.int32, requires_grad=True)"
    )
    fake = FakeTensor(np.zeros((0, 2), dtype=np.int64), "int64", device="cuda:1")
    assert printing.tensor_repr(fake) == (
        "tensor([], device='cuda:1', size=(0, 2), dtype=ember.int64)"
    )


# ----------------------------------------------------------------------------------------
# Print options
# ----------------------------------------------------------------------------------------


def test_default_options():
    assert printing.get_printoptions() == torch._tensor_str.get_printoptions()
    assert printing.get_printoptions() == {
        "precision": 4,
        "threshold": 1000,
        "edgeitems": 3,
        "linewidth": 80,
        "sci_mode": None,
    }


@pytest.mark.parametrize(
    "kwargs",
    [
        {"profile": "short"},
        {"profile": "full"},
        {"profile": "short", "precision": 6},
        {"profile": "full", "edgeitems": 1},
        {"profile": "nonexistent"},
        {"precision": 2},
        {"precision": 0},
        {"precision": 8},
        {"threshold": 5},
        {"threshold": 0},
        {"edgeitems": 1, "threshold": 10},
        {"edgeitems": 0, "threshold": 10},
        {"linewidth": 40},
        {"linewidth": 10},
        {"linewidth": 200},
        {"sci_mode": True},
        {"sci_mode": False},
        {"sci_mode": True, "precision": 2},
    ],
)
def test_set_printoptions(kwargs):
    set_both(**kwargs)
    assert printing.get_printoptions() == torch._tensor_str.get_printoptions()
    rng = np.random.default_rng(2)
    check([1.0 / 3.0, 2.0, -5.5])
    check([1.0, 2.0, 3.0])
    check([1e-6, 1.0, 1e6])
    check([1e9, 1.0])
    check(2.5)
    check([1, 2, 3], torch.int32)
    check(torch.arange(30, dtype=torch.float32) / 3)
    check(torch.arange(40) * 1000)
    check(torch.arange(24, dtype=torch.float64).reshape(2, 3, 4) - 10.5)
    check(torch.from_numpy(rng.standard_normal((30, 40))))
    check(torch.from_numpy(rng.standard_normal(2500)), torch.float32)
    check(torch.arange(1200) % 2 == 0)
    tt = torch.arange(25, dtype=torch.float32).requires_grad_()
    assert printing.tensor_repr(fake_from_torch(tt, requires_grad=True)) == torch_repr(tt)


def test_sci_mode_reset_by_later_call():
    set_both(sci_mode=True)
    check([1.5, 2.5])
    set_both(precision=3)  # sci_mode argument omitted -> back to automatic
    assert printing.get_printoptions()["sci_mode"] is None
    check([1.5, 2.5])


def test_suffix_moves_to_next_line():
    got = check(torch.arange(7, dtype=torch.int32) * 100000)
    assert got.endswith("],\n       dtype=ember.int32)")
    got = check(torch.full((7,), 1666.5, dtype=torch.float64))
    assert got.endswith("], dtype=ember.float64)")


def test_edgeitems_zero_spells_out_size():
    set_both(edgeitems=0)
    assert check([1.0, 2.0]) == "tensor([1., 2.], size=(2,))"
    assert check(3.0) == "tensor(3., size=())"
    check([1, 2], torch.int32)
    check(torch.zeros(2, 0, 3, dtype=torch.int32))
    tt = torch.tensor([1.0, 2.0], requires_grad=True)
    assert printing.tensor_repr(fake_from_torch(tt, requires_grad=True)) == torch_repr(tt)
    set_both(edgeitems=0, threshold=0)
    assert check([1, 2, 3]) == "tensor([...], size=(3,))"
    check([[[1, 2], [3, 4]]], torch.int8)
    check(5.0)
    tt = torch.arange(8.0).reshape(2, 2, 2).requires_grad_() * 2
    fake = fake_from_torch(tt, requires_grad=True, grad_fn=MulBackward0())
    assert printing.tensor_repr(fake) == torch_repr(tt)


def test_forced_sci_mode_widths():
    nan, inf = float("nan"), float("inf")
    set_both(sci_mode=True)
    check([1.0, 2.0])
    check([1.0, nan])
    check([0.0, inf])  # no nonzero finite value: integer style despite sci_mode
    check([1e-6, 1.5])
    check([1, 2])
    check([[-1.0, 0.5], [nan, 1e20]], torch.float64)
    set_both(sci_mode=False)
    check([1e9, 1.0])
    check([1e-6, 1.5])
    check([nan, 1e10, 1.5])
    check([nan, 1e10, 1.0])
    check([[-1e-8, 3.0], [2.5e7, -inf]], torch.float64)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"profile": "short"},
        {"precision": 1, "linewidth": 50},
        {"sci_mode": True},
        {"sci_mode": False, "precision": 6},
        {"threshold": 20, "edgeitems": 2},
        {"threshold": 20, "edgeitems": 0},
    ],
)
def test_random_against_torch_with_options(kwargs):
    set_both(**kwargs)
    rng = np.random.default_rng(7)
    for _ in range(60):
        data = _random_case(rng)
        for dtype in (torch.float32, torch.float64, torch.bfloat16):
            check(torch.from_numpy(data), dtype)


def test_full_profile_disables_summarisation():
    set_both(profile="full")
    assert printing.get_printoptions()["threshold"] == math.inf
    check(torch.arange(1500))
    check(torch.arange(2100, dtype=torch.float32).reshape(30, 70) / 9)


def test_printoptions_context_manager():
    with printing.printoptions(precision=2, sci_mode=True):
        assert printing.get_printoptions()["precision"] == 2
        assert printing.get_printoptions()["sci_mode"] is True
    assert printing.get_printoptions() == torch._tensor_str.get_printoptions()


# ----------------------------------------------------------------------------------------
# Randomised comparison
# ----------------------------------------------------------------------------------------


def _random_case(rng):
    ndim = int(rng.integers(0, 4))
    shape = tuple(int(s) for s in rng.integers(1, 8, size=ndim))
    kind = int(rng.integers(0, 6))
    if kind == 0:
        data = rng.standard_normal(shape)
    elif kind == 1:
        data = rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 10, size=shape)
    elif kind == 2:
        data = rng.integers(-1000, 1000, size=shape).astype(np.float64)
    elif kind == 3:
        data = np.round(rng.standard_normal(shape), 1)
    elif kind == 4:
        data = rng.choice([0.0, np.nan, np.inf, -np.inf, 1.25, -3.0], size=shape)
    else:
        data = rng.uniform(-1e5, 1e5, size=shape)
    return np.asarray(data, dtype=np.float64)


@pytest.mark.parametrize("seed", range(20))
def test_random_against_torch(seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(25):
        data = _random_case(rng)
        for dtype in FLOAT_DTYPES:
            with np.errstate(invalid="ignore", over="ignore"):
                check(torch.from_numpy(data), dtype)
        finite = np.nan_to_num(data, nan=0.0, posinf=7.0, neginf=-7.0)
        ints = torch.from_numpy(np.asarray(np.clip(np.round(finite), -100, 100)))
        check(ints.to(torch.int64))
        check(ints.to(torch.int8))
        check(torch.from_numpy(np.asarray(finite > 0)))


# ----------------------------------------------------------------------------------------
# Real tensors (only when the C++ core is built)
# ----------------------------------------------------------------------------------------

needs_ember = pytest.mark.skipif(not _HAS_EMBER, reason="ember_tensor core not built")

_REAL_CASES = [
    ([[1.0, 2.0]], "float32"),
    ([1, 2, 3], "int64"),
    ([1, 2], "int32"),
    (3.5, "float32"),
    ([True, False], "bool"),
    ([1e-5, 1.0, float("nan")], "float64"),
    ([0.1, 2.5, -3.0], "float16"),
    ([0.1, 2.5, -3.0], "bfloat16"),
    ([[1, 2], [3, 4]], "uint8"),
    ([[-1, 2], [3, -4]], "int8"),
    ([[-1, 2], [3, -4]], "int16"),
    (list(range(1500)), "int64"),
    ([[float(i) / 3.0 for i in range(40)] for _ in range(40)], "float32"),
]


@needs_ember
@pytest.mark.parametrize(("data", "dtype_name"), _REAL_CASES)
def test_real_tensor_repr(data, dtype_name):
    et = _ember.tensor(data, dtype=getattr(_ember, dtype_name))
    tt = torch.tensor(data, dtype=getattr(torch, dtype_name))
    assert printing.tensor_repr(et) == torch_repr(tt)
    assert repr(et) == torch_repr(tt)
