"""The forms PyTorch accepts beyond an op's main signature (ember_tensor/_torch_overloads.py
and ops.yaml's overload entries): norm with 'fro' / 'nuc', scatter with reduce=, fill as a
function, std/var(x, unbiased), var_mean/std_mean(x, unbiased), round(decimals=), the
varargs ops' argument by name (flip(dims=...)), Tensor.slice, cfloat/cdouble, __rdiv__,
resolve_neg and zero_ as functions; each against PyTorch."""

import numpy as np
import pytest
import torch

import ember_tensor as et

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4, 5))


def _both(a=A):
    return et.tensor(a), torch.tensor(a)


def _close(got, want, rtol=1e-12):
    if isinstance(want, (tuple, list)):
        for g, w in zip(got, want, strict=True):
            _close(g, w, rtol)
        return
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("args,kwargs", [
    ((), {}), (("fro",), {}), (("fro", (1, 2)), {}), (("nuc", (0, 2)), {}),
    ((2, 1), {}), ((float("inf"),), {"dim": 2, "keepdim": True}), ((1,), {"dtype": None}),
])
def test_norm_takes_fro_and_nuc(args, kwargs):
    e, t = _both()
    _close(et.norm(e, *args, **kwargs), torch.norm(t, *args, **kwargs))
    _close(e.norm(*args, **kwargs), t.norm(*args, **kwargs))


def test_norm_nuc_of_a_matrix():
    e, t = _both(A[0])
    _close(et.norm(e, "nuc"), torch.norm(t, "nuc"))


def test_norm_refuses_other_strings():
    with pytest.raises(RuntimeError):
        et.norm(et.ones(3), "bad")


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_reduce_argument(reduce):
    base = RNG.standard_normal((3, 5))
    index = np.array([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]])
    src = RNG.standard_normal((2, 5))
    e, t = _both(base)
    ei, ti = et.tensor(index), torch.tensor(index)
    _close(et.scatter(e, 0, ei, et.tensor(src), reduce=reduce),
           torch.scatter(t, 0, ti, torch.tensor(src), reduce=reduce))
    _close(e.scatter(0, ei, 1.5, reduce=reduce), t.scatter(0, ti, 1.5, reduce=reduce))
    e2, t2 = e.clone(), t.clone()
    e2.scatter_(0, ei, et.tensor(src), reduce=reduce)
    t2.scatter_(0, ti, torch.tensor(src), reduce=reduce)
    _close(e2, t2)
    _close(e.scatter(0, ei, et.tensor(src)), t.scatter(0, ti, torch.tensor(src)))
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
        et.scatter(e, 0, ei, et.tensor(src), reduce="max")


def test_fill_function():
    e, t = _both()
    _close(et.fill(e, 2.5), torch.fill(t, 2.5))
    _close(et.fill(e, et.tensor(-1.0)), torch.fill(t, torch.tensor(-1.0)))
    with pytest.raises(RuntimeError, match="0-dimension value tensor"):
        et.fill(e, et.ones(2))


def test_unbiased_overloads():
    e, t = _both()
    for unbiased in (True, False):
        _close(et.std(e, unbiased), torch.std(t, unbiased))
        _close(e.var(unbiased), t.var(unbiased))
        _close(et.var_mean(e, unbiased), torch.var_mean(t, unbiased))
        _close(et.std_mean(e, unbiased), torch.std_mean(t, unbiased))
    _close(et.std(e, 1), torch.std(t, 1))  # an int is still the dim


@pytest.mark.parametrize("decimals", [0, 1, 3, -1, -2])
def test_round_decimals(decimals):
    a = RNG.standard_normal(50) * 300
    e, t = _both(a)
    _close(et.round(e, decimals=decimals), torch.round(t, decimals=decimals))
    e32, t32 = et.tensor(a, dtype=et.float32), torch.tensor(a, dtype=torch.float32)
    _close(e32.round(decimals=decimals), t32.round(decimals=decimals))


def test_varargs_arguments_by_name():
    e, t = _both()
    _close(et.flip(e, dims=(0, 2)), torch.flip(t, dims=(0, 2)))
    _close(e.permute(dims=(2, 0, 1)), t.permute(dims=(2, 0, 1)))
    _close(e.reshape(shape=(4, 15)), t.reshape(shape=(4, 15)))
    with pytest.raises(TypeError, match="multiple values for argument 'dims'"):
        e.permute(2, 0, 1, dims=(2, 0, 1))


def test_small_methods_and_functions():
    e, t = _both()
    _close(e.slice(1, 1, 4, 2), torch.ops.aten.slice(t, 1, 1, 4, 2))
    _close(e.cfloat(), t.cfloat())
    _close(e.cdouble(), t.cdouble())
    _close(e.__rdiv__(2.0), t.__rdiv__(2.0))
    assert et.resolve_neg(e) is e
    z = e.clone()
    assert et.zero_(z) is z and not z.numpy().any()


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16", "int64", "int8",
                                  "uint8", "bool", "complex64", "uint16"])
def test_legacy_type_names_and_nbytes(name):
    e = et.zeros(3, dtype=getattr(et, name))
    t = torch.zeros(3, dtype=getattr(torch, name))
    assert e.type() == t.type().replace("torch.", "ember.")
    assert e.nbytes == t.nbytes


def test_type_converts_by_dtype_or_name():
    e, t = _both(A)
    for target in ("torch.IntTensor", "ember.HalfTensor", "torch.DoubleTensor"):
        got = e.type(target)
        want = t.type(target.replace("ember.", "torch."))
        _close(got.double(), want.double())
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert e.type(et.float64) is e
    assert e.type(et.int64).dtype == et.int64
    with pytest.raises(ValueError, match="invalid type"):
        e.type("ember.NoSuchTensor")


def test_apply_and_map_in_place_like_torch():
    e, t = _both(np.arange(6.0).reshape(2, 3))
    assert e.apply_(lambda v: v * v - 1) is e
    t.apply_(lambda v: v * v - 1)
    _close(e, t)
    other_e, other_t = _both(np.array([1.0, -2.0, 0.5]))
    e.map_(other_e, lambda a, b: a * b + 1)
    t.map_(other_t, lambda a, b: a * b + 1)
    _close(e, t)
