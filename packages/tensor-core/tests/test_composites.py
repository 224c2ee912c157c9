"""The composite layer (ops.yaml `composite: python`, bodies in ember_tensor/_composites) and
the inverse trigonometric / hyperbolic kernels (unary_functions.h): values, dtypes and every
variant against PyTorch; the variant protocol's errors against the bound ops'.

The activations and the binary cross-entropy (_composites/activation.py): values in every
float dtype, integer inputs, the in-place and out= variants and the errors against PyTorch,
and their float64 gradients (with ember_autograd's provider) against torch, the kinks
included, and against finite differences. How autograd records the composites (through the
ops they call, or as one node with a derivatives.yaml entry) is checked in
packages/autograd/tests/test_composites_grad.py, their gradient table rows in
test_ops_grad_pointwise.py.
"""

import math

import numpy as np
import pytest
import torch

import ember_tensor as et
from ember_tensor import composite_ops

DTYPES = {"float32": (et.float32, torch.float32), "float64": (et.float64, torch.float64),
          "float16": (et.float16, torch.float16), "bfloat16": (et.bfloat16, torch.bfloat16)}
# tolerances (rtol, atol) per dtype: composites are within 2 ulp in float32/float64
TOL = {"float32": (2e-6, 1e-6), "float64": (1e-14, 1e-15), "float16": (1e-3, 1e-3),
       "bfloat16": (8e-3, 8e-3)}
SPECIALS = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 1e-30, -1e30, 0.5, -2.5]


def to_ember(t: torch.Tensor) -> et.Tensor:
    if t.dtype == torch.bfloat16:
        return et.from_numpy(t.float().numpy()).to(et.bfloat16)
    return et.from_numpy(t.numpy().copy())


def to_torch(t: et.Tensor) -> torch.Tensor:
    if t.dtype == et.bfloat16:
        return torch.from_numpy(t.to(et.float32).numpy()).to(torch.bfloat16)
    return torch.from_numpy(t.numpy().copy())


def assert_matches(got: et.Tensor, want: torch.Tensor, dtype_name: str) -> None:
    assert str(got.dtype).rpartition(".")[2] == str(want.dtype).rpartition(".")[2]
    assert tuple(got.shape) == tuple(want.shape)
    rtol, atol = TOL[dtype_name]
    torch.testing.assert_close(to_torch(got), want, rtol=rtol, atol=atol, equal_nan=True)


def grid(dtype: torch.dtype, lo: float, hi: float, n: int = 64, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(n, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype)


# --------------------------------------------------------------- inverse trig / hyperbolic kernels

UNARY = {"asin": (-1, 1), "acos": (-1, 1), "sinh": (-8, 8), "cosh": (-8, 8),
         "asinh": (-50, 50), "acosh": (1, 50), "atanh": (-1, 1)}


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("op", list(UNARY))
def test_unary_kernels_match_torch(op, dtype_name):
    edt, tdt = DTYPES[dtype_name]
    lo, hi = UNARY[op]
    x = torch.cat([grid(tdt, lo, hi), torch.tensor(SPECIALS, dtype=tdt)])
    want = getattr(torch, op)(x)
    assert_matches(getattr(et, op)(to_ember(x)), want, dtype_name)
    assert_matches(getattr(to_ember(x), op)(), want, dtype_name)
    e = to_ember(x)
    assert getattr(e, op + "_")() is e
    assert_matches(e, want, dtype_name)
    out = et.empty(0, dtype=edt)
    assert getattr(et, op)(to_ember(x), out=out) is out
    assert_matches(out, want, dtype_name)


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_kernels_integer_inputs_give_default_float(op):
    x = torch.tensor([-2, -1, 0, 1, 2, 3])
    assert_matches(getattr(et, op)(to_ember(x)), getattr(torch, op)(x), "float32")
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        getattr(to_ember(x), op + "_")()


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_kernels_non_contiguous_and_empty(op):
    lo, hi = UNARY[op]
    x = grid(torch.float64, lo, hi, 24).reshape(4, 6).t()
    assert_matches(getattr(et, op)(to_ember(x.contiguous()).t().contiguous().t()),
                   getattr(torch, op)(x), "float64")
    e = getattr(et, op)(et.empty(0, 3))
    assert tuple(e.shape) == (0, 3) and e.dtype == et.float32


# ------------------------------------------------------------------------- Python composites

BINARY = {"atan2": (-3, 3), "copysign": (-3, 3), "hypot": (-1e3, 1e3), "logaddexp": (-40, 40)}


def binary_inputs(tdt):
    a = torch.cat([grid(tdt, -3, 3, seed=1), torch.tensor(SPECIALS * len(SPECIALS), dtype=tdt)])
    b = torch.cat([grid(tdt, -3, 3, seed=2),
                   torch.tensor([s for s in SPECIALS for _ in SPECIALS], dtype=tdt)])
    return a, b


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("op", list(BINARY))
def test_composites_match_torch(op, dtype_name):
    edt, tdt = DTYPES[dtype_name]
    a, b = binary_inputs(tdt)
    want = getattr(torch, op)(a, b)
    assert_matches(getattr(et, op)(to_ember(a), to_ember(b)), want, dtype_name)
    assert_matches(getattr(to_ember(a), op)(to_ember(b)), want, dtype_name)
    out = et.empty(0, dtype=edt)
    assert getattr(et, op)(to_ember(a), to_ember(b), out=out) is out
    assert_matches(out, want, dtype_name)


@pytest.mark.parametrize("op", ["atan2", "copysign", "hypot"])
def test_composites_inplace(op):
    a, b = binary_inputs(torch.float64)
    e = to_ember(a)
    assert getattr(e, op + "_")(to_ember(b)) is e
    assert_matches(e, getattr(torch, op)(a, b), "float64")


def test_composites_broadcast_and_promote():
    a = grid(torch.float32, -2, 2, 12).reshape(3, 4)
    b = grid(torch.float64, -2, 2, 4, seed=3)
    for op in BINARY:
        assert_matches(getattr(et, op)(to_ember(a), to_ember(b)), getattr(torch, op)(a, b),
                       "float64")
    i = torch.tensor([[1, -2], [0, 3]])
    assert_matches(et.atan2(to_ember(i), to_ember(i.t())), torch.atan2(i, i.t()), "float32")


@pytest.mark.parametrize("dtype_name", list(DTYPES))
def test_signbit_and_copysign_see_signed_zeros_and_nans(dtype_name):
    """The sign bit itself, as PyTorch (and NumPy) read it: -0.0, -inf and NaNs with the bit
    set, on every float dtype; copysign's result carries other's bit even where self is NaN."""
    edt, tdt = DTYPES[dtype_name]
    a, b = binary_inputs(tdt)
    a = torch.cat([a, -a])  # NaNs of both signs (negation flips the bit, NaN or not)
    b = torch.cat([b, b.flip(0)])
    # torch's float32 -> bfloat16 conversion makes every NaN negative, so bfloat16 NaNs cannot
    # be carried across with their sign: they are compared as values only
    keep = ~torch.isnan(a) if tdt == torch.bfloat16 else torch.ones_like(a, dtype=torch.bool)
    assert et.signbit(to_ember(a)).numpy()[keep.numpy()].tolist() == torch.signbit(a)[keep].tolist()
    assert to_ember(a).signbit().numpy().tolist() == et.signbit(to_ember(a)).numpy().tolist()
    got = to_torch(et.copysign(to_ember(a), to_ember(b)))
    want = torch.copysign(a, b)
    keep = ~torch.isnan(want) if tdt == torch.bfloat16 else torch.ones_like(a, dtype=torch.bool)
    assert torch.signbit(got)[keep].tolist() == torch.signbit(want)[keep].tolist()
    torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype_name", ["int8", "int64", "uint8", "bool"])
def test_signbit_and_copysign_of_integers(dtype_name):
    t = torch.tensor([0, 1, 5, 100], dtype=getattr(torch, dtype_name))
    if dtype_name in ("int8", "int64"):
        t = torch.cat([t, -t])
    e = et.from_numpy(t.numpy().copy())
    assert et.signbit(e).numpy().tolist() == torch.signbit(t).tolist()
    other = torch.tensor([-1.5, 2.0, -0.0, 3.0] * (len(t) // 4))
    assert_matches(et.copysign(e, to_ember(other)), torch.copysign(t, other), "float32")
    for scalar in (-2, 0.0, -0.0, 7.5):  # a Python number as other, as torch.copysign takes
        assert_matches(et.copysign(e, scalar), torch.copysign(t, scalar), "float32")


def test_copysign_gradient_is_pytorchs(autograd):
    """d/dself is +-1 (0 where self is 0, as in PyTorch); other gets none."""
    a = torch.tensor([1.5, -2.0, 0.0, -0.0, 3.0, -0.25], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([-1.0, -1.0, -1.0, 1.0, 1.0, 0.0], dtype=torch.float64)
    torch.copysign(a, b).backward(torch.arange(1.0, 7.0, dtype=torch.float64))
    ea = to_ember(a.detach()).requires_grad_()
    et.copysign(ea, to_ember(b)).backward(to_ember(torch.arange(1.0, 7.0, dtype=torch.float64)))
    torch.testing.assert_close(to_torch(ea.grad), a.grad)
    x = to_ember(torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64)).requires_grad_()
    y = to_ember(torch.tensor([-1.0, 2.0, -0.5], dtype=torch.float64)).requires_grad_()
    assert autograd.gradcheck(et.copysign, (x, y))


def test_composites_accuracy_in_ulps_against_float64_numpy():
    """float32 results within 2 ulp of the exact (float64 NumPy) values."""
    rng = np.random.default_rng(0)
    a = rng.uniform(-100, 100, 2000).astype(np.float32)
    b = rng.uniform(-100, 100, 2000).astype(np.float32)
    exact = {"atan2": np.arctan2, "copysign": np.copysign, "hypot": np.hypot,
             "logaddexp": np.logaddexp}
    for op, ref in exact.items():
        got = getattr(et, op)(et.from_numpy(a), et.from_numpy(b)).numpy()
        want = ref(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
        ulps = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
        assert ulps.max() <= 2, (op, ulps.max())


def test_composite_dtype_errors_match_the_bindings():
    i = et.tensor([1, 2])
    for op in ("hypot", "logaddexp"):
        with pytest.raises(RuntimeError, match=rf"^{op}: dtype int64 is not supported"):
            getattr(et, op)(i, i)
    with pytest.raises(RuntimeError, match=r"atan2: result type float32 can't be cast to the "
                                           r"desired output type int64"):
        et.tensor([1, 2]).atan2_(et.tensor([1, 1]))
    with pytest.raises(RuntimeError, match=r"hypot: output with shape \[2\] doesn't match the "
                                           r"result shape \[2, 2\]"):
        et.ones(2).hypot_(et.ones(2, 2))


def test_composite_argument_errors():
    x = et.ones(2)
    with pytest.raises(TypeError, match=r"^atan2\(\): argument 'other' \(position 2\) must be "
                                        r"Tensor, not float$"):
        et.atan2(x, 2.0)
    with pytest.raises(TypeError, match=r"^hypot\(\): argument 'input' \(position 1\) must be "
                                        r"Tensor, not NoneType$"):
        et.hypot(None, x)
    with pytest.raises(RuntimeError, match=r"^logaddexp: shapes \[2\] and \[3\] cannot be "
                                           r"broadcast together$"):
        et.logaddexp(x, et.ones(3))
    with pytest.raises(RuntimeError, match=r"^atan2: shapes \[2\] and \[3\]"):
        x.atan2_(et.ones(3))


def test_composite_out_errors_match_the_bindings():
    a = et.ones(3)
    with pytest.raises(RuntimeError, match=r"atan2: output with shape \[2\] doesn't match the "
                                           r"result shape \[3\]"):
        et.atan2(a, a, out=et.empty(2))
    with pytest.raises(RuntimeError, match="atan2: result type float32 can't be cast to the "
                                           "desired output type int64"):
        et.atan2(a, a, out=et.empty(3, dtype=et.int64))
    # a same-shape out of a wider dtype takes the cast result, as the bound ops' out= does
    out = et.empty(3, dtype=et.float64)
    et.logaddexp(a, a, out=out)
    assert out.dtype == et.float64 and abs(out[0].item() - (1 + math.log(2))) < 1e-6


def test_every_python_composite_is_installed_with_its_variants():
    assert composite_ops.OPS, "ops.yaml declares Python composites"
    for name, variants, _args, _dtypes, operators, *_ in composite_ops.OPS:
        assert hasattr(et, name) == ("function" in variants), name
        assert hasattr(et.Tensor, name) == ("method" in variants), name
        assert hasattr(et.Tensor, name + "_") == ("inplace" in variants), name
        if "function" in variants:
            assert name in et.__all__
        for dunder in operators:  # PyTorch's operators of the op
            assert getattr(et.Tensor, dunder).__name__ == dunder, (name, dunder)
            assert hasattr(torch.Tensor, dunder), (name, dunder)


# --------------------------------------------------- activations and binary cross-entropy

TF = torch.nn.functional
# op -> (call on either library, domain); the ops behind ember.nn.functional, against
# torch.nn.functional (softsign and tanhshrink are compositions there, the others kernels)
ACTIVATIONS = {
    "hardtanh": (lambda m, x: (TF if m is torch else m).hardtanh(x, -0.5, 0.7), (-2, 2)),
    "relu6": (lambda m, x: (TF if m is torch else m).relu6(x), (-3, 9)),
    "elu": (lambda m, x: (TF if m is torch else m).elu(x, 1.5), (-6, 3)),
    "elu_scaled": (lambda m, x: (torch.ops.aten if m is torch else m).elu(x, 0.5, 2.0, 1.5),
                   (-6, 3)),
    "selu": (lambda m, x: (TF if m is torch else m).selu(x), (-6, 3)),
    "celu": (lambda m, x: (TF if m is torch else m).celu(x, 0.5), (-6, 3)),
    "leaky_relu": (lambda m, x: (TF if m is torch else m).leaky_relu(x, 0.2), (-3, 3)),
    "hardsigmoid": (lambda m, x: (TF if m is torch else m).hardsigmoid(x), (-5, 5)),
    "hardswish": (lambda m, x: (TF if m is torch else m).hardswish(x), (-5, 5)),
    "mish": (lambda m, x: (TF if m is torch else m).mish(x), (-30, 30)),
    "softsign": (lambda m, x: (TF if m is torch else m).softsign(x), (-5, 5)),
    "tanhshrink": (lambda m, x: (TF if m is torch else m).tanhshrink(x), (-3, 3)),
    "silu": (lambda m, x: (TF if m is torch else m).silu(x), (-10, 10)),
    "softplus": (lambda m, x: (TF if m is torch else m).softplus(x, 2.0, 1.0), (-30, 30)),
    "log_sigmoid": (lambda m, x: TF.logsigmoid(x) if m is torch else m.log_sigmoid(x),
                    (-30, 30)),
    "gelu": (lambda m, x: (TF if m is torch else m).gelu(x), (-5, 5)),
    "gelu_tanh": (lambda m, x: (TF if m is torch else m).gelu(x, approximate="tanh"), (-5, 5)),
    "threshold": (lambda m, x: (TF if m is torch else m).threshold(x, 0.5, -2.0), (-2, 2)),
    "glu": (lambda m, x: (TF if m is torch else m).glu(x[: x.shape[0] // 2 * 2], 0), (-5, 5)),
}
# PyTorch's CPU kernels give NaN where the limit is finite: hardswish(-inf) (-inf * 0) and
# gelu(+inf) in float32 (+inf in float64); Ember gives the limits, 0 and +inf
NOT_PYTORCHS = {"hardswish": [-math.inf, -1e30], "gelu": [math.inf, 1e30]}
KINKS = [-3.0, -0.5, 0.5, 0.7, 3.0, 6.0, 20.0, -20.0]


@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("op", list(ACTIVATIONS))
def test_activations_match_torch(op, dtype_name):
    _, tdt = DTYPES[dtype_name]
    fn, (lo, hi) = ACTIVATIONS[op]
    specials = [s for s in SPECIALS + KINKS if s not in NOT_PYTORCHS.get(op.split("_")[0], ())]
    x = torch.cat([grid(tdt, lo, hi), torch.tensor(specials + specials[:1], dtype=tdt)])
    assert_matches(fn(et, to_ember(x)), fn(torch, x), dtype_name)


def test_activations_take_the_limits_where_pytorch_gives_nan():
    x = et.tensor([-math.inf, math.inf])
    assert et.hardswish(x).tolist() == [0.0, math.inf]
    assert math.copysign(1.0, et.hardswish(x).tolist()[0]) == -1.0
    assert et.gelu(x).tolist()[1] == math.inf
    # +inf through the overflow-free softplus: mish(+inf) = +inf, log_sigmoid(-inf) = -inf
    assert et.mish(x).tolist()[1] == math.inf and et.log_sigmoid(x).tolist()[0] == -math.inf


@pytest.mark.parametrize("dtype_name", list(DTYPES))
def test_hardswish_signed_zero_matches_torch(dtype_name):
    # PyTorch computes x * relu6(x + 3) / 6: -0.0 at and below -3, +0.0 only for x = +0.0
    _, tdt = DTYPES[dtype_name]
    x = torch.tensor([-1e4, -4.0, -3.0, -0.0, 0.0, -2.5, 2.5], dtype=tdt)
    got = et.hardswish(to_ember(x)).tolist()
    want = TF.hardswish(x).tolist()
    assert got == want
    assert [math.copysign(1.0, v) for v in got] == [math.copysign(1.0, v) for v in want]


INPLACE = {  # op -> its in-place variant's arguments, and the torch function of the same name
    "hardtanh": ((-0.5, 0.7), torch._C._nn.hardtanh_),
    "relu6": ((), torch._C._nn.relu6_),
    "elu": ((1.5,), torch._C._nn.elu_),
    "selu": ((), torch.selu_),
    "celu": ((0.5,), torch.celu_),
    "leaky_relu": ((0.2,), torch._C._nn.leaky_relu_),
    "hardsigmoid": ((), torch._C._nn.hardsigmoid_),
    "hardswish": ((), torch._C._nn.hardswish_),
    "mish": ((), torch._C._nn.mish_),
    "silu": ((), torch._C._nn.silu_),
    "gelu": ((), torch._C._nn.gelu_),
    "threshold": ((0.5, -2.0), torch.threshold_),
}


@pytest.mark.parametrize("dtype_name", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("op", list(INPLACE))
def test_activation_inplace_variants(op, dtype_name):
    args, ref = INPLACE[op]
    x = grid(DTYPES[dtype_name][1], -5, 7, 48).reshape(6, 8)
    e = to_ember(x)
    view = e[1:5, ::2]  # non-contiguous: written through the view
    assert getattr(view, op + "_")(*args) is view
    want = x.clone()
    ref(want[1:5, ::2], *args)
    assert_matches(e, want, dtype_name)


OUT = {  # op -> arguments after the input (the ops with an out= variant)
    "hardtanh": (-0.5, 0.7), "elu": (1.5,), "celu": (0.5,), "leaky_relu": (0.2,),
    "hardsigmoid": (), "hardswish": (), "mish": (), "silu": (), "softplus": (2.0, 1.0),
    "log_sigmoid": (), "gelu": (), "threshold": (0.5, -2.0), "glu": (0,),
}


@pytest.mark.parametrize("op", list(OUT))
def test_activation_out_variants(op):
    x = grid(torch.float32, -4, 4, 24).reshape(4, 6)
    args = OUT[op]
    want = getattr(torch.ops.aten, op)(x, *args)
    out = et.empty(0)
    assert getattr(et, op)(to_ember(x), *args, out=out) is out
    assert_matches(out, want, "float32")
    wide = et.empty(tuple(want.shape), dtype=et.float64)  # cast into a wider out, as bound ops do
    getattr(et, op)(to_ember(x), *args, out=wide)
    assert_matches(wide, want.double(), "float32")
    with pytest.raises(RuntimeError, match=rf"^{op}: output with shape \[1\] doesn't match"):
        getattr(et, op)(to_ember(x), *args, out=et.empty(1))


def test_composite_variants_are_pytorchs():
    """A function variant where torch has the function; a method variant where torch.Tensor
    has the method; an
    in-place variant where torch has ``<name>_`` (a Tensor method, or a function of torch or
    torch._C._nn: Ember's form of an in-place op is the Tensor method)."""
    for name, variants, *_ in composite_ops.OPS:
        function_mods = (torch, torch._C._nn) + (() if name == "unfold" else (TF,))  # F.unfold:
        if name.startswith("linalg_"):  # im2col, not Tensor.unfold; linalg_x is torch.linalg.x
            function_mods, name_there = (torch.linalg,), name.removeprefix("linalg_")
        else:
            name_there = name
        assert ("function" in variants) == any(
            hasattr(mod, name_there) for mod in function_mods), name
        assert ("method" in variants) == hasattr(torch.Tensor, name), name
        torch_has_inplace = any(hasattr(mod, name + "_")
                                for mod in (torch.Tensor, torch, torch._C._nn))
        assert ("inplace" in variants) == torch_has_inplace, name


@pytest.mark.parametrize("op", ["hardtanh", "relu6", "threshold", "softsign", "tanhshrink"])
@pytest.mark.parametrize("dtype_name", ["int64", "int8", "uint8"])
def test_integer_inputs_match_torch(op, dtype_name):
    x = torch.tensor([-7, -3, -1, 0, 1, 2, 3, 5, 9]).to(getattr(torch, dtype_name))
    args = {"hardtanh": (-1.5, 2.5) if dtype_name != "uint8" else (0.5, 3.7),
            "threshold": (-0.5, 2) if dtype_name != "uint8" else (0.5, 7)}.get(op, ())
    want = getattr(TF, op)(x, *args)
    got = getattr(et, op)(et.from_numpy(x.numpy().copy()), *args)
    assert str(got.dtype).rpartition(".")[2] == str(want.dtype).rpartition(".")[2]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def _errors(call) -> tuple:
    """(the exception type, its message) of call() on Ember and on torch."""
    out = []
    for m in (et, torch):
        with pytest.raises(Exception) as info:  # noqa: PT011 - compared below
            call(m)
        out.append((info.type, str(info.value)))
    return tuple(out)


ERRORS = {
    "celu_alpha": lambda m: m.celu(m.ones(2), 0.0),
    "gelu_approximate": lambda m: (m if m is et else torch._C._nn).gelu(m.ones(2),
                                                                         approximate="foo"),
    "glu_odd": lambda m: (m if m is et else torch._C._nn).glu(m.ones(2, 3)),
    "glu_scalar": lambda m: (m if m is et else torch._C._nn).glu(m.ones(())),
    "hardtanh_unsigned": lambda m: (m if m is et else torch._C._nn).hardtanh(
        m.ones(2, dtype=m.uint8)),
    "threshold_overflow": lambda m: m.threshold(m.ones(2, dtype=m.uint8), -0.5, 2),
    "bce_input_range": lambda m: (m if m is et else torch._C._nn).binary_cross_entropy(
        m.tensor([1.5]), m.tensor([1.0])),
    "bce_target_range": lambda m: (m if m is et else torch._C._nn).binary_cross_entropy(
        m.tensor([0.5]), m.tensor([-0.5])),
    "not_a_tensor": lambda m: (m if m is et else torch._C._nn).elu(2.0),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_activation_errors_match_torch(name):
    (etype, emsg), (ttype, tmsg) = _errors(ERRORS[name])
    assert etype is ttype or (issubclass(ttype, RuntimeError) and etype is RuntimeError)
    assert emsg == tmsg


def test_activation_dtype_and_argument_errors():
    i = et.tensor([1, 2])
    for op in ("elu", "selu", "celu", "leaky_relu", "gelu", "silu", "mish", "softplus",
               "log_sigmoid", "hardsigmoid", "hardswish", "glu"):
        with pytest.raises(RuntimeError, match=rf"^{op}: dtype int64 is not supported"):
            getattr(et, op)(i)
    for op in ("hardtanh", "relu6", "threshold", "softsign", "tanhshrink"):
        args = (0, 1) if op == "threshold" else ()
        with pytest.raises(RuntimeError, match=rf"^{op}: dtype bool is not supported"):
            getattr(et, op)(et.tensor([True]), *args)
    with pytest.raises(RuntimeError, match=r"elu_: result type|^elu: dtype int64"):
        i.elu_()
    with pytest.raises(TypeError, match=r"^binary_cross_entropy\(\): argument 'target' "
                                        r"\(position 2\) must be Tensor, not float$"):
        et.binary_cross_entropy(et.ones(2) / 2, 0.5)
    with pytest.raises(RuntimeError, match=r"reduction must be 0 \('none'\), 1 \('mean'\) or "
                                           r"2 \('sum'\), but got 3"):
        et.binary_cross_entropy(et.ones(2) / 2, et.ones(2), None, 3)
    with pytest.raises(TypeError):
        et.gelu(et.ones(2), "tanh")  # approximate is keyword-only, as in PyTorch


@pytest.mark.parametrize("dtype_name", list(DTYPES))
def test_binary_cross_entropy_matches_torch(dtype_name):
    _, tdt = DTYPES[dtype_name]
    x = torch.cat([grid(tdt, 0, 1, 30), torch.tensor([0.0, 1.0, 1.0, 0.0, 0.5], dtype=tdt)])
    t = torch.cat([grid(tdt, 0, 1, 30, seed=4), torch.tensor([0.0, 1.0, 0.0, 1.0, 0.5],
                                                             dtype=tdt)])
    w = grid(tdt, 0.5, 2, 35, seed=5)
    for weight in (None, w):
        for reduction in (0, 1, 2):
            want = torch.ops.aten.binary_cross_entropy(x, t, weight, reduction)
            got = et.binary_cross_entropy(to_ember(x), to_ember(t),
                                          None if weight is None else to_ember(weight),
                                          reduction)
            assert_matches(got, want, dtype_name)
    out = et.empty(0, dtype=DTYPES[dtype_name][0])
    et.binary_cross_entropy(to_ember(x), to_ember(t), reduction=0, out=out)
    assert_matches(out, torch.ops.aten.binary_cross_entropy(x, t, None, 0), dtype_name)


# ---------------------------------------------- their gradients (with ember_autograd's provider)

GRAD_POINTS = np.array([-4.0, -3.0, -2.5, -1.0, -0.5, -0.2, 0.0, 0.3, 0.5, 0.7, 1.0, 2.9, 3.0,
                        5.5, 6.0, 7.0, 21.0])


@pytest.mark.parametrize("op", list(ACTIVATIONS))
def test_activation_gradients_match_torch_kinks_included(autograd, op):
    """float64 gradients against torch's at the kinks (where finite differences cannot
    tell), and against central differences away from them."""
    fn, _ = ACTIVATIONS[op]
    x = et.from_numpy(GRAD_POINTS.copy()).requires_grad_()
    tx = torch.from_numpy(GRAD_POINTS.copy()).requires_grad_()
    fn(et, x).sum().backward()
    fn(torch, tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-7,
                               err_msg=op)
    smooth = np.array([-2.2, -1.3, -0.8, 0.1, 0.9, 1.6, 2.4, 4.2])  # away from every kink
    assert autograd.gradcheck(lambda t: fn(et, t), (et.from_numpy(smooth).requires_grad_(),))


def test_hardtanh_has_pytorchs_gradient_at_the_bounds(autograd):
    """None at and beyond the bounds (the fused formula): the composition's clamp passes it
    at the bounds. A NaN passes it (PyTorch 2.13: none; its relu6 passes it)."""
    vals = np.array([-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, math.nan])
    x = et.from_numpy(vals.copy()).requires_grad_()
    tx = torch.from_numpy(vals.copy()).requires_grad_()
    et.hardtanh(x).sum().backward()
    TF.hardtanh(tx).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[:-1], tx.grad.numpy()[:-1])
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 1, 1, 1, 0, 0, 1])
    c = et.from_numpy(vals.copy()).requires_grad_()
    c.clamp(-1, 1).sum().backward()
    assert c.grad.numpy()[[1, 5]].tolist() == [1.0, 1.0]  # what the formula replaces


def test_binary_cross_entropy_gradients_at_zero_and_one(autograd):
    vals = np.array([0.0, 1.0, 1.0, 0.0, 0.5, 0.2])
    targets = np.array([0.0, 1.0, 0.0, 1.0, 0.5, 0.7])
    x = et.from_numpy(vals.copy()).requires_grad_()
    t = et.from_numpy(targets.copy()).requires_grad_()
    tx = torch.from_numpy(vals.copy()).requires_grad_()
    tt = torch.from_numpy(targets.copy()).requires_grad_()
    loss = et.binary_cross_entropy(x, t, None, 2)
    tloss = torch.ops.aten.binary_cross_entropy(tx, tt, None, 2)
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-12)
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    assert np.isfinite(x.grad.numpy()).all()
    # the target: the clamped log difference (PyTorch's is +-inf at 0 and 1)
    np.testing.assert_allclose(t.grad.numpy()[:4], [100.0, -100.0, -100.0, 100.0])
    np.testing.assert_allclose(t.grad.numpy()[4:], tt.grad.numpy()[4:], rtol=1e-12)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_binary_cross_entropy_gradcheck(autograd, reduction):
    rng = np.random.default_rng(3)
    x = et.from_numpy(rng.uniform(0.05, 0.95, (3, 4))).requires_grad_()
    t = et.from_numpy(rng.uniform(0, 1, (3, 4))).requires_grad_()
    w = et.from_numpy(rng.uniform(0.5, 2, (4,))).requires_grad_()
    f = lambda a, b, c: et.binary_cross_entropy(a, b, c, reduction)  # noqa: E731
    assert autograd.gradcheck(f, (x, t, w))
    assert autograd.gradgradcheck(f, (x, t, w))


def test_operators_of_python_composites():
    """<<, >>, their reflected and in-place forms, and unary + (Python composites with
    operators) give PyTorch's values and dtypes."""
    a = np.array([1, -3, 5, 100], dtype=np.int32)
    b = np.array([0, 2, 3, 1], dtype=np.int64)
    for fn in (lambda x, y: x << y, lambda x, y: x >> y, lambda x, y: x << 2,
               lambda x, y: 3 >> y, lambda x, y: 1 << y, lambda x, y: +x):
        e, t = fn(et.tensor(a), et.tensor(b)), fn(torch.tensor(a), torch.tensor(b))
        assert e.tolist() == t.tolist() and str(e.dtype)[6:] == str(t.dtype)[6:]
    e, t = et.tensor(a), torch.tensor(a)
    e <<= 2
    t <<= 2
    e >>= 1
    t >>= 1
    assert e.tolist() == t.tolist()
    x = et.tensor([1.0, -2.0])
    assert +x is x  # PyTorch's positive returns its input
    with pytest.raises(RuntimeError, match="bitwise_left_shift: dtype float32 is not supported"):
        x << 1


def test_shifts_of_bool_and_out_of_range_ints_are_pytorchs_errors():
    for m in (torch, et):
        b = m.tensor([True, False])
        with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
            b << b
        assert (b >> m.tensor([1, 0])).tolist() == [0, 0]
        with pytest.raises(OverflowError):
            m.tensor([1, 2]) << 2**70


# --------------------------------------------------- argument conversion of the composite layer


def test_integer_arguments_are_converted_as_the_bindings_convert_them():
    x = et.arange(6).reshape(2, 3)
    want = torch.roll(torch.arange(6).reshape(2, 3), 1, 1)
    for shift in (1, np.int64(1), et.tensor(1), [1], (et.tensor(1),)):
        np.testing.assert_array_equal(et.roll(x, shift, 1).numpy(), want.numpy())
    with pytest.raises(TypeError, match=r"roll\(\): argument 'shifts' must be tuple of ints, "
                                         r"but found element of type bool at pos 0"):
        et.roll(x, [True], [0])
    with pytest.raises(TypeError, match=r"roll\(\): argument 'dims' must be int or tuple of "
                                         r"ints, not float"):
        et.roll(x, 1, 1.5)
    with pytest.raises(TypeError, match=r"rot90\(\): argument 'k' must be int, not bool"):
        et.rot90(x, True)
    with pytest.raises(OverflowError, match=r"roll\(\): argument 'shifts' is out of the range "
                                            r"of int64"):
        et.roll(x, [10**20], [0])
    with pytest.raises(OverflowError, match="tile"):
        x.tile(2**63)
    # a 1-d integer tensor is a list (tensor_split's indices), a float one is refused
    got = et.tensor_split(et.arange(7), et.tensor([2, 5]))
    want = torch.tensor_split(torch.arange(7), torch.tensor([2, 5]))
    assert [t.tolist() for t in got] == [t.tolist() for t in want]
    with pytest.raises(TypeError, match="must be tuple of ints, not Tensor"):
        et.tile(x, et.tensor([1.0, 2.0]))


def test_varargs_are_packed_into_their_argument():
    x, y = et.ones(2), et.ones(3)
    assert x.tile(2, 2).shape == (2, 4)
    assert [t.shape for t in et.atleast_2d(x, y)] == [(1, 2), (1, 3)]
    assert isinstance(et.atleast_2d(x), et.Tensor)  # one tensor in, one out (as torch)
    assert isinstance(et.atleast_2d([x]), tuple)
    assert et.block_diag(x.reshape(1, 2), y).shape == (2, 5)
    assert et.cartesian_prod(x, y).shape == (6, 2)
    assert et.cartesian_prod(x).shape == (2,)
