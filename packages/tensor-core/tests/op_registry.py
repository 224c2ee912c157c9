"""The op registry: one row per op name of ops.yaml, and what the tests know about it.

A row (``Row``) says how to run the op on Ember and on PyTorch with one lambda
(``fn(m, *args)``, ``m`` being ``ember_tensor`` or ``torch``: STYLE habit 4), on which sample
inputs, for which dtypes, within which tolerances (the central table is
``conftest.TOLERANCES``; a row only scales or overrides it), which autograd test checks its
gradient, and how the CUDA test files reach its kernel when not by its name. What ops.yaml
already declares is read from the installed schema (``ember_tensor/ops_schema.json``) and
the dispatcher, never copied here: the dtypes an op accepts, whether it is differentiable,
composite, and whether it has per-device kernels (``_C._cuda_kernel_coverage``).

test_op_registry.py runs the rows: every op of the schema must have a row (adding an op
adds a row, or the test names it), each row is run against torch for each of its dtypes,
every skip and shape-only comparison carries its reason and their counts may only shrink,
and every op with a CUDA kernel must be exercised by a CUDA test file (test_cuda_*.py).

Deeper, op-family tests live beside this table and are not repeated by it: the elementwise
and reduction tables (test_elementwise.py, test_reductions.py: NumPy references,
non-contiguous layouts, out=, broadcasting sweeps), shapes and views (test_shape.py),
indexing (test_indexing.py), the per-device comparisons (test_cuda_*.py), and the gradient
tables of ember-autograd (packages/autograd/tests/test_ops_grad_pointwise.py,
test_ops_grad_shape.py, test_linalg_grad.py, whose test_op_coverage.py checks that every
derivatives.yaml entry has a gradient-check row). The registry is the index over all ops
that keeps each one from falling between those files.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np
import torch

import ember_tensor as et
from conftest import (
    ALL_DTYPES,
    COMPLEX_DTYPES,
    TOLERANCES,
    WIDE_UNSIGNED_DTYPES,
    dtype_name,
    rand_array,
    tensor,
    to_np,
)
from ember_tensor import _C

# every dtype a row may run in: those of conftest's tables and the later ones
REGISTRY_DTYPES = tuple(ALL_DTYPES) + tuple(COMPLEX_DTYPES) + tuple(WIDE_UNSIGNED_DTYPES)

# ---------------------------------------------------------------------------------------------
# what ops.yaml declares (read from the installed schema and the dispatcher)


def _load_schema() -> dict[str, list[dict]]:
    """Op name -> its ops_schema.json entries (its overloads, in order)."""
    text = resources.files("ember_tensor").joinpath("ops_schema.json").read_text()
    schema: dict[str, list[dict]] = {}
    for entry in json.loads(text):
        schema.setdefault(entry["name"], []).append(entry)
    return schema


SCHEMA = _load_schema()
# the C++ names of the ops with per-device kernels (CPU and CUDA): registered or not, the
# dispatcher's table lists them in every build
KERNEL_OPS = frozenset(_C._cuda_kernel_coverage(True)) | frozenset(
    _C._cuda_kernel_coverage(False)
)

# the autograd test files that gradient-check ops (packages/autograd/tests)
PW = "test_ops_grad_pointwise.py"
SH = "test_ops_grad_shape.py"
LA = "test_linalg_grad.py"
CX = "test_complex_grad.py"  # ops whose inputs or results are complex
FT = "test_fft_grad.py"
GRAD_FILES = (PW, SH, LA, CX, FT)

# ---------------------------------------------------------------------------------------------
# sample inputs: specs resolved per dtype into NumPy arrays, then into each library's tensors


@dataclass(frozen=True)
class A:
    """A tensor of the dtype under test (or of ``dtype``): random values in a domain of
    conftest.DOMAINS, or the given ``values``; ``nc``: non-contiguous (transposed storage)."""

    shape: tuple = ()
    dom: str = "any"
    nc: bool = False
    dtype: str | None = None
    values: Any = None


def a(*shape, dom="any", nc=False, dtype=None):
    return A(tuple(shape), dom, nc, dtype)


def fixed(values, dtype="int64", nc=False):
    """A tensor of fixed values and dtype (indices, masks, targets; dtype None: the dtype
    under test)."""
    arr = np.asarray(values)
    return A(arr.shape, "any", nc, dtype, values=arr.tolist())


def mask(*shape, seed=0):
    return fixed(np.random.default_rng(seed).random(shape) < 0.5, "bool")


@dataclass(frozen=True)
class D:
    """A dtype argument, as each library's dtype object: ``D("float64")``, or ``DT``, the
    dtype under test."""

    name: str | None = None


DT = D()


class S:
    """One sample: positional and keyword arguments, each a spec (A, DT, a list of specs) or
    a plain value."""

    xfail: str | None = None  # see XS
    xfail_dtypes: tuple | None = None

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs

    def __repr__(self):
        return f"S{self.args}{self.kwargs or ''}"

    def fails_for(self, dt: str) -> bool:
        return self.xfail is not None and (self.xfail_dtypes is None or dt in self.xfail_dtypes)


class XS(S):
    """A sample on which Ember disagrees with torch today (a known bug, or a difference
    from PyTorch that the docs do not list): ``XS(reason, *args, dtypes=(...), **kwargs)``.
    The test expects the disagreement (strictly: it fails when the sample passes) and
    reports the case as an expected failure; the row's other samples are checked as usual."""

    def __init__(self, reason: str, *args, dtypes: tuple | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.xfail, self.xfail_dtypes = reason, dtypes


def _resolve(spec, dt: str, rng):
    """spec with its tensors drawn: ('T', array, dtype name, layout) leaves."""
    if isinstance(spec, A):
        name = spec.dtype or dt
        if spec.values is not None:
            arr = np.asarray(spec.values)
        else:
            arr = rand_array(rng, spec.shape, name, spec.dom)
        return ("T", arr, name, "transposed" if spec.nc else "contig")
    if isinstance(spec, list):
        return [_resolve(s, dt, rng) for s in spec]
    if isinstance(spec, tuple) and spec and spec[0] != "T":
        return tuple(_resolve(s, dt, rng) for s in spec)
    return spec


def _build(resolved, lib, dt: str):
    if isinstance(resolved, D):
        return getattr(lib, resolved.name or dt)
    if isinstance(resolved, tuple) and resolved and resolved[0] == "T":
        _, arr, name, layout = resolved
        return tensor(lib, arr, name, layout)
    if isinstance(resolved, list):
        return [_build(r, lib, dt) for r in resolved]
    if isinstance(resolved, tuple):
        return tuple(_build(r, lib, dt) for r in resolved)
    return resolved


def sample_args(sample: S, dt: str, seed: int):
    """(args, kwargs) of a sample for each library, {'ember_tensor': ..., 'torch': ...},
    built from the same NumPy arrays."""
    rng = np.random.default_rng(seed)
    args = [_resolve(s, dt, rng) for s in sample.args]
    kwargs = {k: _resolve(v, dt, rng) for k, v in sample.kwargs.items()}
    return {
        lib.__name__: (
            [_build(x, lib, dt) for x in args],
            {k: _build(v, lib, dt) for k, v in kwargs.items()},
        )
        for lib in (et, torch)
    }


# ---------------------------------------------------------------------------------------------
# rows


@dataclass
class Row:
    """What the tests know about one op name (see the module docstring).

    fn: ``fn(m, *args, **kwargs)`` for m in (ember_tensor, torch); default ``m.<name>``.
    samples: a couple of sample inputs (S; XS for a known disagreement), run for each dtype.
    dtypes, dtypes_why: the dtypes to test, and why not all those the schema lists (the
    default).
    grad: the autograd test file that gradient-checks it (differentiable ops), or
    no_grad: why a differentiable op has no gradient check.
    scale / tol: the central tolerance table scaled, or overridden per result dtype.
    skip: why the op is not run against torch here (counted; see test_op_registry.py).
    shape_only: why only dtype and shape are compared, not values (counted); check, a
    function of a result, asserts what can be (the range of a random op's values), on
    Ember's result and on torch's alike.
    xfail: {dtype or '*': reason}: a known Ember bug (strict: the fix must remove it).
    cuda_via: for an op with CUDA kernels that the CUDA test files reach other than by its
    name (x[key] for _index), the text in a test_cuda_*.py file that exercises it.
    cuda_xfail: a known gap of the op's CUDA kernel (test_cuda_ops_registry.py expects it
    to fail on a GPU, strictly; counted with the expected failures).
    cuda_refuses: dtypes the CUDA kernel refuses with a NotImplementedError naming CUDA, as
    PyTorch's CUDA build does too (test_cuda_ops_registry.py expects that error on a GPU).
    """

    name: str
    fn: Callable | None = None
    samples: tuple = ()
    dtypes: tuple | None = None
    dtypes_why: str | None = None
    grad: str | None = None
    no_grad: str | None = None
    scale: float = 1.0
    tol: dict = field(default_factory=dict)
    skip: str | None = None
    shape_only: str | None = None
    check: Callable | None = None
    xfail: dict = field(default_factory=dict)
    cuda_via: str | None = None
    cuda_xfail: str | None = None
    cuda_refuses: tuple = ()

    # ---- what the schema says

    @property
    def entries(self) -> list[dict]:
        return SCHEMA.get(self.name, [])

    @property
    def schema_dtypes(self) -> tuple:
        declared = {d for e in self.entries for d in e["dtypes"]}
        return tuple(d for d in REGISTRY_DTYPES if d in declared)

    @property
    def differentiable(self) -> bool:
        return any(e["differentiable"] for e in self.entries)

    @property
    def composite(self) -> bool:
        return all(e["composite"] for e in self.entries)

    @property
    def cuda(self) -> str:
        """'kernel': the op has per-device kernels (a CUDA kernel in a CUDA build);
        'composite': written in terms of other ops, it runs on any device through theirs;
        'generic': one implementation for every device (views, *_like)."""
        if any(not e["composite"] and e["cpp"] in KERNEL_OPS for e in self.entries):
            return "kernel"
        return "composite" if self.composite else "generic"

    # ---- how the test runs it

    @property
    def test_dtypes(self) -> tuple:
        return self.dtypes if self.dtypes is not None else self.schema_dtypes

    def call(self, m, args, kwargs):
        if self.fn is not None:
            return self.fn(m, *args, **kwargs)
        return getattr(m, self.name)(*args, **kwargs)

    def tolerance(self, result_dtype: str) -> tuple[float, float]:
        if result_dtype in self.tol:
            return self.tol[result_dtype]
        rtol, atol = TOLERANCES[result_dtype]
        return rtol * self.scale, atol * self.scale


def compare_results(row, got, want, where: str, on_device: str | None = None):
    """got (Ember's results) against want (torch's, or the CPU's): the same number of
    results, and each of the same dtype, shape and (unless the row compares shapes only)
    values within the row's tolerance for its dtype; on_device: where got must live."""
    if row.check is not None:
        row.check(want)  # the check itself holds for the reference
        row.check(got)
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want), f"{where}: {len(got)} results, the reference has {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        at = f"{where}, result {i}"
        if not isinstance(w, (et.Tensor, torch.Tensor)):
            assert g == w, at
            continue
        assert isinstance(g, et.Tensor), f"{at}: {type(g).__name__}, the reference has a tensor"
        if on_device is not None:
            assert g.device.type == on_device, at
        assert tuple(g.shape) == tuple(w.shape), f"{at}: shape {tuple(g.shape)} != {w.shape}"
        name = dtype_name(w.dtype)
        assert dtype_name(g.dtype) == name, f"{at}: dtype {dtype_name(g.dtype)} != {name}"
        if row.shape_only:
            continue
        gv, wv = to_np(g.cpu()), to_np(w.detach() if isinstance(w, torch.Tensor) else w)
        rtol, atol = row.tolerance(name)
        if rtol == atol == 0:  # exact (integers, bool): no detour through float64
            np.testing.assert_array_equal(gv, wv, err_msg=at)
        elif np.iscomplexobj(wv):
            np.testing.assert_allclose(gv.astype(np.complex128), wv.astype(np.complex128),
                                       rtol=rtol, atol=atol, equal_nan=True, err_msg=at)
        else:
            np.testing.assert_allclose(gv.astype(np.float64), wv.astype(np.float64), rtol=rtol,
                                       atol=atol, equal_nan=True, err_msg=at)


def _flat(out) -> list:
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _flat(o)]
    return [out]


def R(name, *samples, **kw) -> Row:
    return Row(name, samples=samples, **kw)


# ---------------------------------------------------------------------------------------------
# helpers for the lambdas


def aten(name):
    """ember_tensor.<name> on Ember, torch.ops.aten.<name> on torch (same signature)."""
    return lambda m, *args, **kw: (
        getattr(torch.ops.aten, name) if m is torch else getattr(m, name)
    )(*args, **kw)


def method(name, *extra):
    """x.<name>(*extra) (method-only and in-place-only ops)."""
    return lambda m, x, *args, **kw: getattr(x, name)(*extra, *args, **kw)


def inplace(name):
    """x.<name>_(*args), returning x (the in-place ops' result is the tensor itself)."""

    def run(m, x, *args, **kw):
        out = getattr(x, name + "_")(*args, **kw)
        assert out is x
        return x

    return run


def unary(name, dom="any", **kw):
    return R(name, S(a(3, 4, dom=dom)), S(a(2, 3, 4, dom=dom, nc=True)), S(a(dom=dom)), **kw)


def binary(name, dom="any", scalar=2, **kw):
    samples = [S(a(3, 4), a(3, 4, dom=dom)), S(a(2, 1, 4, nc=True), a(3, 4, dom=dom))]
    if scalar is not None:
        samples.append(S(a(3, 4), scalar))
    return R(name, *samples, **kw)


def _sd(m, g, out, dim, log):
    if m is torch:
        f = torch._log_softmax_backward_data if log else torch._softmax_backward_data
        return f(g, out, dim, out.dtype)
    return (m._log_softmax_backward_data if log else m._softmax_backward_data)(g, out, dim)


def _linalg(name, pick=None):
    """m.linalg.<name>; pick: what of the result to compare (sign-invariant parts)."""

    def run(m, *args, **kw):
        out = getattr(m.linalg, name)(*args, **kw)
        return out if pick is None else pick(m, out)

    return run


def _spd(n, batch=()):
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (*batch, n, n))
    return fixed(x @ np.swapaxes(x, -1, -2) + n * np.eye(n), None)


def _well_conditioned(n, batch=(), seed=6):
    rng = np.random.default_rng(seed)
    return fixed(rng.uniform(-1, 1, (*batch, n, n)) + 3 * np.eye(n), None)



def _searchsorted_bounds(m, seq, values, right):
    if m is torch:
        return torch.searchsorted(seq, values, right=right)
    return m._C._searchsorted_bounds(seq, values, right)


def _cumextreme(m, x, dim, maximum):
    if m is torch:
        return tuple((torch.cummax if maximum else torch.cummin)(x, dim))
    return tuple(m._C._cumextreme(x, dim, maximum))


def _order_select_indices(m, x, dim, position):
    if m is torch:
        return torch.argsort(x, dim=dim, stable=True).gather(dim, position)
    return m._C._order_select_indices(x, dim, position)


def _scatter_reduce_flat(m, x, offsets, src, reduce, include_self):
    if m is torch:
        return x.scatter_reduce(0, offsets, src, reduce, include_self=include_self)
    return m._C._scatter_reduce_flat(x, offsets, src, reduce, include_self)


_GRID_DTYPES = "PyTorch's CPU grid sampler takes float32 and float64"
_GRID_GRAD = ("its gradients (input and grid, every mode) are compared with PyTorch's by "
              "ember-nn's test_grid_sample.py")


def _ormqr(m, A, C, *args, **kw):
    return m.ormqr(*m.geqrf(A), C, *args, **kw)


def _symmetric_indefinite(n, batch=(), seed=7):
    """x + x^T: symmetric with eigenvalues of both signs (Bunch-Kaufman pivots in use)."""
    x = np.random.default_rng(seed).uniform(-1, 1, (*batch, n, n))
    return fixed(x + np.swapaxes(x, -1, -2), None)


def _ldl_solve(m, A, B, **kw):
    LD, pivots = m.linalg.ldl_factor(A, **kw)
    return m.linalg.ldl_solve(LD, pivots, B, **kw)


_LDL_NO_GRAD = "PyTorch has no derivative of the LDL factorization or solve (not implemented)"


def _tril_factor(n, upper=False):
    """A well-conditioned lower (upper) triangular matrix (a Cholesky factor), dtype under
    test."""
    rng = np.random.default_rng(8)
    x = np.tril(rng.uniform(-1, 1, (n, n))) + 2 * np.eye(n)
    return fixed(x.T if upper else x, None)


def _cholesky_solve(m, b, L, upper=False):
    return m.cholesky_solve(b, L, upper)


def _sign_fixed_qr(m, A, some=True):
    q, r = m.qr(A, some)
    d = r.diagonal(0, -2, -1).sign()
    return q * d.unsqueeze(-2), r * d.unsqueeze(-1)


def _quiet(fn, *args):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.lu is deprecated (both libraries say so)
        return fn(*args)


def _lu_solve(m, b, A):
    LU, piv = m.linalg.lu_factor(A)
    return _quiet(m.lu_solve, b, LU, piv)


def _lu_unpack(m, A):
    LU, piv = m.linalg.lu_factor(A)
    return m.lu_unpack(LU, piv)

def _distinct(*shape, seed=7, scale=1.0):
    """Values without ties, also once truncated to integers (for sorts, svd, pooling), as
    a tensor of the dtype under test."""
    n = int(np.prod(shape))
    v = np.random.default_rng(seed).permutation(n).reshape(shape) - n // 2
    return fixed(np.where(v >= 0, v + 0.25, v - 0.25) * scale, None)


def _conv_backward_input(m, gy, w, input_size, *args):
    if m is torch:
        return torch.nn.grad.conv2d_input(input_size, w, gy, *args)
    return m.conv2d_backward_input(gy, w, input_size, *args)


def _conv_backward_weight(m, gy, x, weight_size, *args):
    if m is torch:
        return torch.nn.grad.conv2d_weight(x, weight_size, gy, *args)
    return m.conv2d_backward_weight(gy, x, weight_size, *args)


def _im2col(m, x, *args):
    return torch.nn.functional.unfold(x, *args) if m is torch else m.im2col(x, *args)


def _col2im(m, x, *args):
    return torch.nn.functional.fold(x, *args) if m is torch else m.col2im(x, *args)


def _norm_backward(name):
    def run(m, *args):
        if m is torch:
            return getattr(torch.ops.aten, name)(*args, [True, True, True])
        return getattr(m, name)(*args)

    return run


def _batch_norm(m, x, w, b, rm, rv, training, momentum, eps):
    """The three results, and the running statistics the op updates in place."""
    return (*m.native_batch_norm(x, w, b, rm, rv, training, momentum, eps), rm, rv)


def _nll_loss(m, *args):
    return torch.ops.aten.nll_loss(*args) if m is torch else m.nll_loss(*args)


def _nn(name, torch_name=None):
    """ember_tensor.<name> on Ember; on torch the function of torch._C._nn (or torch, or
    torch.nn.functional) called ``torch_name`` (default: the same name)."""
    torch_name = torch_name or name
    ref = next(getattr(mod, torch_name) for mod in (torch._C._nn, torch, torch.nn.functional)
               if hasattr(mod, torch_name))
    return lambda m, *args, **kw: (ref if m is torch else getattr(m, name))(*args, **kw)


def _probabilities(*shape, seed=0, lo=0.05, hi=0.95):
    """Values in (0, 1) as a tensor of the dtype under test (BCE's inputs and targets)."""
    return fixed(np.random.default_rng(seed).uniform(lo, hi, shape), None)


# around the kinks of relu6 (0, 6) and hardsigmoid / hardswish (-3, 3), the bounds included
_KINKS = fixed([[-4.0, -3.0, -2.5, -0.5, 0.0, 0.5], [1.5, 2.5, 3.0, 4.0, 6.0, 7.5]], None)


def _fused_adam(m, params, grads, exp_avgs, exp_avg_sqs, steps, *, decoupled):
    hyper = dict(lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.05, eps=1e-8, amsgrad=False,
                 maximize=False)
    if m is torch:  # torch's optimizers count the step before the kernel; Ember's kernel does
        for s in steps:
            s.add_(1)
        (torch._fused_adamw_ if decoupled else torch._fused_adam_)(
            params, grads, exp_avgs, exp_avg_sqs, [], steps, **hyper)
    else:
        m._fused_adam_(params, grads, exp_avgs, exp_avg_sqs, [], steps, **hyper,
                       decoupled_weight_decay=decoupled)
    return [*params, *exp_avgs, *exp_avg_sqs, *steps]


def _fused_sgd(m, params, grads, bufs, *, first):
    m._fused_sgd_(params, grads, bufs, weight_decay=0.01, momentum=0.9, lr=0.1,
                  dampening=0.0, nesterov=True, maximize=False, is_first_step=first)
    return [*params, *bufs]


RANDOM = ("random: Ember's generator and samplers are its own (differences-from-pytorch.md, "
          "Random numbers); dtype, shape and the row's check compared")


def _values(t) -> np.ndarray:
    return np.asarray((t.double() if t.dtype.is_floating_point else t.long()).tolist())


def within(lo, hi):
    """A check: every value in [lo, hi)."""

    def check(out):
        v = _values(out)
        assert ((v >= lo) & (v < hi)).all(), v

    return check


def finite(out):
    assert np.isfinite(_values(out)).all()


def is_permutation(out):
    v = _values(out)
    assert sorted(v.tolist()) == list(range(v.size)), v


def _multinomial_check(out):
    v = _values(out)
    assert ((v >= 0) & (v < 4)).all(), v
    if v.ndim == 2:  # without replacement: distinct categories per row
        assert all(len(set(r)) == len(r) for r in v.tolist()), v


# float16 sums of 36 to 48 products: PyTorch's CPU kernels round partial sums to float16 on
# CPUs without native float16 arithmetic (seen on an AMD EPYC: up to 8.4e-3 from the exact sum
# of the rounded inputs, Ember 7.7e-3), so the two may differ by twice that on cancelling sums.
# bfloat16 likewise on CPUs without AVX512-BF16 (AMD EPYC Zen 3, conv2d_backward_input:
# PyTorch up to 8.2e-3 of the largest result from the exact sum, Ember 3.1e-3, on results up
# to 10, where one bfloat16 spacing is 6.25e-2)
_CONV_HALF_TOL = {"float16": (2e-3, 2e-2), "bfloat16": (1.6e-2, 8e-2)}
_FUSED_HALF = ("ops.yaml declares the float dtypes, but the fused kernels take float32 and "
               "float64 only (NotImplementedError); torch's take float16 and bfloat16 too")
EMPTY = "uninitialised memory: dtype and shape compared"
TORCH_NO_UNSIGNED = ("PyTorch has no kernel of this op for uint16/32/64 (NotImplementedError); "
                     "Ember's are compared with NumPy in test_complex_unsigned.py")


def no_wide_unsigned(name: str) -> tuple:
    """The dtypes the schema lists for op `name` but uint16/32/64 (TORCH_NO_UNSIGNED)."""
    declared = {d for e in SCHEMA.get(name, []) for d in e["dtypes"]}
    return tuple(d for d in REGISTRY_DTYPES if d in declared and d not in WIDE_UNSIGNED_DTYPES)


def unsigned_superset(name: str) -> dict:
    return {"dtypes": no_wide_unsigned(name), "dtypes_why": TORCH_NO_UNSIGNED}



_FLOATS = ("float16", "bfloat16", "float32", "float64")
_FOLD_INTEGERS = ("Ember's im2col/col2im take integers too (its integer convolutions are im2col "
                  "and an integer matmul); PyTorch's unfold/fold refuse them")
_NO_HALVES = tuple(d for d in ALL_DTYPES if d not in ("float16", "bfloat16"))
TORCH_NO_HALVES = "PyTorch's CPU kernel of this op takes no float16 / bfloat16 (Ember's does)"
TORCH_FLOATS_ONLY = "PyTorch's CPU kernel of this op takes floating dtypes only (Ember's any)"


def _special(name):
    """torch.special.<name> on torch, ember_tensor.special_<name> on Ember."""
    return lambda m, *args, **kw: (
        getattr(torch.special, name) if m is torch else getattr(m, "special_" + name)
    )(*args, **kw)


def _sort_complex(m, w):
    """Complex values sorted by real then imaginary part, along the last dim (as a
    NumPy-sorted copy in the library's tensor type, on w's device)."""
    arr = w.detach().resolve_conj().numpy() if m is torch else w.cpu().numpy()
    # conjugate pairs have real parts equal up to rounding: sort by them rounded, then by
    # the imaginary part
    keys = (arr.imag, np.round(arr.real, 3))
    order = np.lexsort(keys, axis=-1)
    result = m.tensor(np.take_along_axis(arr, order, -1))
    return result if m is torch else result.to(w.device)


def _stft(m, x, n_fft, hop=None, win=None):
    """stft with a Hann window of win (default n_fft) points in x's real dtype."""
    w = m.hann_window(win or n_fft, dtype=x.real.dtype)
    return m.stft(x, n_fft, hop, win, window=w, return_complex=True)


def _istft(m, z, n_fft, hop=None):
    return m.istft(z, n_fft, hop, window=m.hann_window(n_fft, dtype=z.real.dtype))


# ---------------------------------------------------------------------------------------------
# the rows, in ops.yaml's order

# Integer matrix products on CUDA: cuBLAS has no integer GEMM for them, and PyTorch's CUDA
# build refuses them too ("addmm_cuda" not implemented for 'Int').
INTEGER_PRODUCTS = ("uint8", "int8", "int16", "int32", "int64")

ROWS: list[Row] = [
    # --- elementwise binary
    R("add", S(a(3, 4), a(3, 4)), S(a(2, 1, 4, nc=True), a(3, 4)), S(a(3, 4), 2),
      S(a(3, 4), a(3, 4), alpha=2), grad=PW, **unsigned_superset("add")),
    R("sub", S(a(3, 4), a(3, 4)), S(a(2, 1, 4, nc=True), a(3, 4)), S(a(3, 4), 2),
      S(a(3, 4), a(3, 4), alpha=2), grad=PW, **unsigned_superset("sub")),
    binary("mul", scalar=2.5, grad=PW),
    R("div", S(a(3, 4), a(3, 4, dom="nonzero")), S(a(2, 1, 4, nc=True), a(3, 4, dom="nonzero")),
      S(a(3, 4), a(3, 4, dom="nonzero"), rounding_mode="floor"),
      S(a(3, 4), 3, rounding_mode="trunc"), grad=PW,
      cuda_xfail="the CUDA div kernel has no rounding_mode yet (NotImplementedError)",
      **unsigned_superset("div")),
    binary("floor_divide", dom="nonzero", scalar=3, grad=PW, **unsigned_superset("floor_divide")),
    binary("remainder", dom="nonzero", scalar=3, grad=PW, **unsigned_superset("remainder")),
    R("pow", S(a(3, 4), a(3, 4, dom="expo")), S(a(2, 1, 4, nc=True), 2), S(2, a(3, 4, dom="expo")),
      grad=PW, **unsigned_superset("pow")),
    binary("true_divide", dom="nonzero", scalar=2, grad=PW),
    binary("fmod", dom="nonzero", scalar=3, grad=PW),
    binary("maximum", scalar=None, grad=PW, **unsigned_superset("maximum")),
    # composites (composite: python): autograd records the ops their bodies call
    unary("positive", grad=PW),
    binary("atan2", scalar=None, grad=PW),
    binary("hypot", scalar=None, grad=PW),
    binary("copysign", grad=PW),
    binary("logaddexp", scalar=None, grad=PW),
    # elementwise and arithmetic composites (_composites/elementwise.py, arith.py)
    unary("deg2rad", grad=PW, **unsigned_superset("deg2rad")),
    unary("rad2deg", grad=PW, **unsigned_superset("rad2deg")),
    unary("exp2", dom="small", grad=PW, **unsigned_superset("exp2")),
    binary("logaddexp2", scalar=None, grad=PW),
    unary("frac", grad=PW),
    R("frexp", S(fixed([0.0, 1.5, -3.0, 1e-30, 8.0, float("inf")], None)), S(a(3, 4)),
      grad=PW),
    R("nextafter", S(a(3, 4), a(3, 4)),
      S(fixed([0.0, 1.0, -1.0, 0.5, float("inf"), 2.0, float("nan")], None),
        fixed([1.0, 2.0, -2.0, 0.0, 0.0, 2.0, 1.0], None)), dtypes=("float32", "float64"),
      dtypes_why="float32 and float64 (PyTorch's CPU kernel has no 16-bit floats)"),
    R("gcd", S(a(3, 4), a(3, 4)), S(fixed([12, -18, 0, 7]), fixed([8, 12, 0, 0])),
      dtypes=("uint8", "int8", "int16", "int32", "int64"), dtypes_why="integers only (as torch)"),
    R("lcm", S(a(3, 4), a(3, 4)), S(fixed([4, -6, 0]), fixed([6, 4, 3])),
      dtypes=("uint8", "int8", "int16", "int32", "int64"), dtypes_why="integers only (as torch)"),
    R("ldexp", S(a(3, 4), fixed([[1, 0, -2, 3]])), grad=PW, **unsigned_superset("ldexp")),
    binary("xlogy", dom="pos", scalar=3.0, grad=PW, **unsigned_superset("xlogy")),
    unary("sinc", grad=PW, **unsigned_superset("sinc")),
    R("logit", S(a(3, 4, dom="expo")), S(a(3, 4, dom="unit"), 0.2), grad=PW,
      **unsigned_superset("logit")),
    R("isposinf", S(fixed([1.0, float("inf"), -float("inf"), float("nan")], None)),
      S(a(2, 3)), dtypes=_FLOATS + ("int64",), dtypes_why="complex is refused (as torch)"),
    R("isneginf", S(fixed([1.0, float("inf"), -float("inf"), float("nan")], None)),
      S(a(2, 3)), dtypes=_FLOATS + ("int64",), dtypes_why="complex is refused (as torch)"),
    unary("isreal", **unsigned_superset("isreal")),
    R("addcmul", S(a(3, 4), a(3, 4), a(4)), S(a(3, 1), a(3, 4, nc=True), a(3, 4), value=2),
      grad=PW, **unsigned_superset("addcmul")),
    R("addcdiv", S(a(3, 4), a(3, 4), a(4, dom="pos")), S(a(3, 4), a(3, 4), a(3, 4, dom="pos"),
                                                        value=0.5),
      dtypes=_FLOATS + ("complex64", "complex128"),
      dtypes_why="two integer operands are refused (as torch)", grad=PW),
    R("lerp", S(a(3, 4), a(3, 4), 0.3), S(a(3, 4), a(4), 0.8), S(a(3, 4), a(3, 4), a(3, 4)),
      grad=PW),
    R("rsub", S(a(3, 4), a(3, 4)), S(a(3, 4, nc=True), 2), S(a(3, 4), a(4), alpha=2),
      dtypes=tuple(d for d in REGISTRY_DTYPES if d != "bool" and not d.startswith("uint")
                   or d == "uint8"),
      dtypes_why="bool - bool is refused; torch lacks sub on uint16/32/64", grad=PW),
    R("clamp_min", S(a(3, 4), a(4)), S(a(3, 4, nc=True), 1), grad=PW,
      **unsigned_superset("clamp_min")),
    R("clamp_max", S(a(3, 4), a(4)), S(a(3, 4, nc=True), 1), grad=PW,
      **unsigned_superset("clamp_max")),
    binary("fmax", scalar=None, grad=PW, **unsigned_superset("fmax")),
    binary("fmin", scalar=None, grad=PW, **unsigned_superset("fmin")),
    R("float_power", S(a(3, 4, dom="pos"), a(3, 4)), S(a(3, 4, dom="pos"), 2),
      grad=PW, **unsigned_superset("float_power")),
    R("heaviside", S(a(3, 4), a(3, 4)), S(fixed([0, 1, -2], None), fixed([5, 5, 5], None)),
      **unsigned_superset("heaviside"), no_grad="PyTorch defines no derivative for heaviside"),
    R("nan_to_num", S(fixed([1.0, float("inf"), -float("inf"), float("nan")], None)),
      S(fixed([1.0, float("inf"), float("nan")], None), 2.0, 3.0, -4.0), S(a(2, 3)),
      grad=PW, **unsigned_superset("nan_to_num")),
    binary("minimum", scalar=None, grad=PW, **unsigned_superset("minimum")),
    binary("eq", scalar=0, grad=PW),
    binary("ne", scalar=0, grad=PW),
    binary("lt", scalar=0, grad=PW, **unsigned_superset("lt")),
    binary("le", scalar=0, grad=PW, **unsigned_superset("le")),
    binary("gt", scalar=0, grad=PW, **unsigned_superset("gt")),
    binary("ge", scalar=0, grad=PW, **unsigned_superset("ge")),
    binary("logical_and", scalar=None),
    binary("logical_or", scalar=None),
    binary("logical_xor", scalar=None),
    *[R(name, S(a(3, 4), fixed(np.array([[0, 1, 2, 3], [4, 5, 6, 7], [1, 2, 3, 0]]))),
        S(a(2, 1, 4, nc=True), fixed(np.array([1, 0, 3, 2]))), S(a(3, 4), 3),
        dtypes=tuple(d for d in no_wide_unsigned(name) if d != "bool"),
        dtypes_why=TORCH_NO_UNSIGNED + "; bool: both raise NotImplementedError (test_composites)")
      for name in ("bitwise_left_shift", "bitwise_right_shift")],
    binary("bitwise_and", scalar=3),
    binary("bitwise_or", scalar=3),
    binary("bitwise_xor", scalar=3),
    R("where", S(mask(3, 4), a(3, 4), a(3, 4)), S(mask(2, 1, 4, seed=1), a(3, 4), 0),
      S(mask(3, 4, seed=2)), grad=PW),
    R("clamp", S(a(3, 4), -1, 1), S(a(3, 4), a(3, 4), a(3, 4)), S(a(2, 3, 4, nc=True), None, 0),
      grad=PW),
    R("clip", S(a(3, 4), -1, 1), S(a(3, 4), min=0), grad=PW),
    # --- elementwise unary
    unary("exp", grad=PW),
    unary("log", dom="pos", grad=PW),
    unary("log1p", dom="pos", grad=PW),
    unary("expm1", grad=PW),
    unary("sqrt", dom="pos", grad=PW),
    unary("rsqrt", dom="pos", grad=PW),
    unary("sin", grad=PW),
    unary("cos", grad=PW),
    unary("tan", dom="unit", grad=PW),
    unary("tanh", grad=PW),
    unary("sigmoid", grad=PW),
    unary("erf", grad=PW),
    # --- special functions (kernels of special_cpu.cpp / special_cuda.cu)
    unary("erfc", grad=PW),
    unary("erfinv", dom="unit", grad=PW),
    unary("lgamma", grad=PW),
    unary("digamma", grad=PW),
    # PyTorch's trigamma is accurate to ~5e-10 only (SciPy agrees with Ember: test_special_kernels)
    R("polygamma", *[S(n, a(3, 4, dom="pos")) for n in (0, 1, 3)], S(2, a(2, 3, dom="any")),
      grad=PW, tol={"float64": (1e-8, 1e-12)}),
    R("mvlgamma", S(a(3, 4, dom="ge1"), 1), S(a(2, 3, dom="ge1"), 3), grad=PW),
    unary("i0", grad=PW),
    *[unary(f"special_{n}", fn=_special(n), grad=PW) for n in ("i0e", "i1", "i1e", "ndtr")],
    *[unary(f"special_{n}", dom=dom, fn=_special(n), grad=PW, dtypes=_NO_HALVES,
            dtypes_why=TORCH_NO_HALVES)
      for n, dom in (("ndtri", "prob"), ("log_ndtr", "any"), ("erfcx", "any"))],
    *[unary(f"special_{n}", dom=dom, fn=_special(n), dtypes=_NO_HALVES,
            dtypes_why=TORCH_NO_HALVES)
      for n, dom in (("bessel_j0", "any"), ("bessel_j1", "any"), ("bessel_y0", "pos"),
                     ("bessel_y1", "pos"), ("modified_bessel_k0", "pos"),
                     ("modified_bessel_k1", "pos"), ("scaled_modified_bessel_k0", "pos"),
                     ("scaled_modified_bessel_k1", "pos"))],
    # PyTorch's airy_ai is off by up to ~2e-5 (relative) for negative arguments; SciPy agrees
    # with Ember (test_special_kernels.py)
    unary("special_airy_ai", fn=_special("airy_ai"), dtypes=_NO_HALVES,
          dtypes_why=TORCH_NO_HALVES, tol={"float64": (1e-4, 1e-6), "float32": (1e-4, 1e-6)}),
    *[R(n, S(a(3, 4, dom="pos"), a(3, 4, dom="pos")), S(a(2, 1, 4, dom="pos", nc=True),
                                                         a(3, 4, dom="pos")),
        grad=PW, dtypes=_FLOATS, dtypes_why=TORCH_FLOATS_ONLY) for n in ("igamma", "igammac")],
    R("special_zeta", S(a(3, 4, dom="ge1"), a(3, 4, dom="pos")), S(a(3, 4, dom="ge1"), 2.5),
      fn=_special("zeta"), grad=PW, dtypes=_NO_HALVES,
      dtypes_why=TORCH_NO_HALVES),
    unary("log2", dom="pos", grad=PW),
    unary("log10", dom="pos", grad=PW),
    unary("atan", grad=PW),
    unary("asin", dom="unit", grad=PW),
    unary("acos", dom="unit", grad=PW),
    unary("sinh", grad=PW),
    unary("cosh", grad=PW),
    unary("asinh", grad=PW),
    unary("acosh", dom="ge1", grad=PW),
    unary("atanh", dom="unit", grad=PW),
    unary("reciprocal", dom="nonzero", grad=PW),
    unary("abs", grad=PW, **unsigned_superset("abs")),
    unary("neg", grad=PW, **unsigned_superset("neg")),
    unary("sign", grad=PW, **unsigned_superset("sign")),
    # complex numbers (issue 25): autograd refuses complex tensors for now, so the gradient
    # rows run these on real inputs
    unary("sgn", grad=PW),
    unary("angle", grad=PW),
    unary("conj_physical", grad=PW),
    # torch's conj is a lazy view (no .numpy()): resolved on both
    R("conj", S(a(3, 4)), S(a(2, 3, 4, nc=True)), fn=lambda m, x: m.conj(x).resolve_conj(),
      grad=SH),
    R("real", S(a(3, 4)), S(a(2, 3, 4, nc=True)), grad=SH),
    R("imag", S(a(3, 4)), S(a(2, 3, 4, nc=True)), grad=CX),
    R("view_as_real", S(a(3, 4)), S(a(2, 3, 4, nc=True)), grad=CX),
    R("view_as_complex", S(a(3, 2)), S(a(2, 3, 2)), grad=CX,
      dtypes=tuple(d for d in REGISTRY_DTYPES if d != "float16"),
      dtypes_why="float16: PyTorch makes a complex32 view; Ember has no complex32 (RuntimeError)"),
    R("complex", S(a(3, 4), a(3, 4)), S(a(2, 1, 4, nc=True), a(3, 4)), grad=CX,
      dtypes=tuple(d for d in REGISTRY_DTYPES if d != "float16"),
      dtypes_why="float16: PyTorch makes a complex32 tensor; Ember has no complex32 "
                 "(RuntimeError)"),
    R("polar", S(a(3, 4, dom="pos"), a(3, 4)), S(a(2, 1, 4, dom="pos"), a(3, 4, nc=True)),
      grad=CX),
    unary("square", grad=PW, **unsigned_superset("square")),
    unary("relu", grad=PW),
    unary("floor", grad=PW),
    unary("ceil", grad=PW),
    unary("round", grad=PW),
    unary("trunc", grad=PW),
    unary("logical_not"),
    unary("bitwise_not", **unsigned_superset("bitwise_not")),
    unary("isnan"),
    unary("isinf"),
    unary("isfinite"),
    unary("signbit"),
    # --- reductions
    R("sum", S(a(3, 4)), S(a(2, 3, 4, nc=True), 1), S(a(2, 3, 4), (0, 2), True),
      S(a(3, 4), 0, dtype=D("float64")), grad=PW),
    R("mean", S(a(3, 4)), S(a(2, 3, 4, nc=True), 1), S(a(2, 3, 4), (0, 2), True), grad=PW),
    R("prod", S(a(3, 4, dom="small")), S(a(2, 3, 4, dom="small", nc=True), 1, True), grad=PW),
    R("max", S(a(3, 4)), S(a(2, 3, 4, nc=True), 1), S(a(3, 4), a(3, 4)), grad=PW),
    R("min", S(a(3, 4)), S(a(2, 3, 4, nc=True), 1, True), S(a(3, 4), a(3, 4)), grad=PW),
    R("amax", S(a(3, 4), 1), S(a(2, 3, 4, nc=True), (0, 2), True), grad=PW),
    R("amin", S(a(3, 4), 1), S(a(2, 3, 4, nc=True), (0, 2), True), grad=PW),
    R("argmax", S(a(3, 4)), S(a(2, 3, 4, nc=True), 1, True)),
    R("argmin", S(a(3, 4)), S(a(2, 3, 4, nc=True), 1, True)),
    R("var", S(a(3, 4)), S(a(2, 3, 4, nc=True), 1), S(a(3, 4), (0, 1), keepdim=True, correction=0),
      grad=PW),
    R("std", S(a(3, 4)), S(a(2, 3, 4, nc=True), 1), S(a(3, 4), (0, 1), keepdim=True, correction=0),
      grad=PW),
    R("norm", S(a(3, 4)), S(a(2, 3, 4, nc=True), 1, (1, 2)), S(a(3, 4), 3, 0, True), grad=PW),
    R("logsumexp", S(a(3, 4), 1), S(a(2, 3, 4, nc=True), (0, 2), True), grad=PW),
    # reduction, scan and order-statistic composites (_composites/reduction.py)
    R("count_nonzero", S(fixed([[0, 1, 2], [0, 0, 3]], None)), S(a(2, 3, 4), (0, 2)),
      **unsigned_superset("count_nonzero")),
    R("nansum", S(fixed([[1.0, float("nan")], [2.0, 3.0]], None)), S(a(2, 3, 4), (0, 2), True),
      grad=PW, **unsigned_superset("nansum")),
    R("nanmean", S(fixed([[1.0, float("nan")], [2.0, 3.0]], None), 1), S(a(2, 3, 4), (0, 2)),
      dtypes=_FLOATS + ("complex64", "complex128"), dtypes_why="integers are refused (as torch)",
      grad=PW),
    R("var_mean", S(a(3, 4)), S(a(2, 3, 4, nc=True), (0, 2), correction=0, keepdim=True),
      grad=PW),
    R("std_mean", S(a(3, 4), 1), S(a(2, 3, 4), (0, 2), False), grad=PW),
    R("aminmax", S(a(3, 4)), S(a(2, 3, 4, nc=True), dim=1, keepdim=True), grad=PW,
      **unsigned_superset("aminmax")),
    R("dist", S(a(3, 4), a(4)), S(a(3, 4), a(3, 4), 3), S(a(3, 4), a(3, 4), float("inf")),
      grad=PW),
    R("equal", S(a(3, 4), a(3, 4)), S(a(3), a(4))),
    R("logcumsumexp", S(a(3, 4), 1), S(a(2, 3, 4, nc=True), 0), grad=PW),
    R("cummax", S(a(3, 4), 1), S(a(2, 3, 4, nc=True), 0), grad=PW,
      **unsigned_superset("cummax")),
    R("cummin", S(a(3, 4), 1), S(fixed([1.0, float("nan"), 0.0, -1.0], None), 0), grad=PW,
      **unsigned_superset("cummin")),
    R("median", S(_distinct(3, 5)), S(_distinct(3, 5), 1), S(_distinct(4, 3), 0, True), grad=PW,
      **unsigned_superset("median")),
    R("nanmedian", S(fixed([[1.0, float("nan"), 3.0], [2.0, 0.0, -1.0]], None), 1),
      S(_distinct(3, 5)), grad=PW, **unsigned_superset("nanmedian")),
    R("kthvalue", S(_distinct(3, 5), 2), S(_distinct(4, 3), 1, 0, True), grad=PW,
      **unsigned_superset("kthvalue")),
    R("mode", S(fixed([[1, 3, 3, 2, 1, 1], [2, 2, 5, 5, 0, 0]], None)), grad=PW,
      **unsigned_superset("mode")),
    R("diff", S(a(3, 4)), S(a(3, 4, nc=True), 2, 0), S(a(3, 4), 1, -1, a(3, 1), a(3, 2)),
      grad=PW, **unsigned_superset("diff")),
    R("trapezoid", S(a(3, 4)), S(a(3, 4), a(4)), S(a(3, 4), dx=0.5, dim=0),
      grad=PW),
    R("trapz", S(a(3, 4)), S(a(3, 4), a(3, 4)), grad=PW),
    R("cumulative_trapezoid", S(a(3, 4)), S(a(3, 4), a(4)), S(a(3, 4), dx=2.0, dim=0),
      grad=PW),
    R("renorm", S(a(3, 4), 2, 0, 1.0), S(a(2, 3, 4, nc=True), 1, 1, 0.5), grad=PW),
    R("bincount", S(fixed([1, 1, 3, 0])), S(fixed([1, 1, 3, 0]), fixed([0.5, 1.0, 2.0, 1.0],
                                                                      "float64"), 6),
      dtypes=("int64", "int32", "uint8"), dtypes_why="integer inputs only (as torch)"),
    R("cov", S(a(3, 5)), S(a(4)), S(a(2, 6), correction=0),
      S(a(2, 4), fweights=fixed([1, 2, 1, 3]), aweights=fixed([0.5, 1.0, 2.0, 1.0], "float64")),
      grad=PW, **unsigned_superset("cov")),
    R("corrcoef", S(a(3, 5)), S(a(2, 4)), grad=PW, **unsigned_superset("corrcoef")),
    R("quantile", S(a(3, 4), 0.3), S(a(3, 4), fixed([0.1, 0.5, 1.0], None), 1, True),
      *[S(a(5), 0.4, interpolation=i) for i in ("lower", "higher", "midpoint", "nearest")],
      S(fixed([[1.0, float("nan"), 3.0], [2.0, 0.0, -1.0]], None), 0.5, 1), grad=PW,
      dtypes=("float32", "float64"), dtypes_why="float32 and float64 only (as torch)"),
    R("nanquantile", S(fixed([[1.0, float("nan"), 3.0], [2.0, 0.0, -1.0]], None), 0.5, 1),
      S(fixed([float("nan")] * 3, None), 0.5), S(a(3, 4), 0.7, keepdim=True), grad=PW,
      dtypes=("float32", "float64"), dtypes_why="float32 and float64 only (as torch)"),
    R("unique", S(fixed([3, 1, 2, 3, 1], None)),
      S(fixed([[1, 2], [1, 2], [0, 5]], None), True, True, True, 0),
      S(fixed([[2, 1, 2], [0, 1, 0]], None), True, False, True, 1), **unsigned_superset("unique")),
    R("unique_consecutive", S(fixed([1, 1, 2, 2, 3, 1, 1], None), True, True),
      S(fixed([[1, 1], [1, 1], [0, 2]], None), True, True, 0),
      dtypes=tuple(ALL_DTYPES), dtypes_why="PyTorch's has no complex or uint16/32/64 kernel"),
    R("isin", S(fixed([1, 2, 3, 4], None), fixed([2, 4, 6], None)),
      S(fixed([[1, 2], [3, 4]], None), fixed([1], None), invert=True),
      **unsigned_superset("isin")),
    R("histogram", S(a(3, 4), 5), S(a(6), 3, range=(-1.0, 1.0), density=True),
      S(a(5), fixed([-2.0, 0.0, 0.5, 3.0], None), weight=a(5)), dtypes=("float32", "float64"),
      dtypes_why="float32 and float64 only (as torch)"),
    R("histogramdd", S(a(6, 2), 3), S(a(2, 5, 3), [2, 3, 4], range=[-1.0, 1.0] * 3, density=True),
      S(a(7, 2), [fixed([-2.0, 0.0, 3.0], None), fixed([-1.0, 0.5, 1.0, 4.0], None)],
        weight=a(7)), dtypes=("float32", "float64"),
      dtypes_why="float32 and float64 only (as torch)"),
    R("gradient", S(a(5)), S(a(3, 4), spacing=2.0, dim=1), S(a(4, 3), edge_order=2),
      S(a(5), spacing=[fixed([0.0, 1.0, 3.0, 4.0, 7.0], None)]), grad=PW,
      **unsigned_superset("gradient")),
    R("cdist", S(a(3, 4), a(5, 4)), S(a(2, 3, 2), a(2, 4, 2), 1.0), S(a(3, 2), a(2, 2), 0.0),
      S(a(3, 2), a(2, 2), float("inf")), grad=PW, dtypes=("float32", "float64"),
      dtypes_why="float32 and float64 only (as torch)"),
    R("histc", S(a(3, 4), 5), S(a(20), 4, -1, 1), S(fixed([1.0, 2.0, 1.0, 4.0], None), 4, 0, 3)),
    R("searchsorted", S(fixed([1, 3, 5, 7], None), fixed([[0, 3], [6, 9]], None)),
      S(fixed([[1, 3, 5], [2, 4, 6]], None), fixed([[3, 3], [1, 7]], None), right=True),
      **unsigned_superset("searchsorted")),
    # the kernels behind searchsorted, cummax/cummin, median/kthvalue (Ember's own ops):
    # against the PyTorch ops they compute
    R("_searchsorted_bounds", S(fixed([1, 3, 5, 7], None), fixed([[0, 3], [6, 9]], None), False),
      S(fixed([[1, 3, 5], [2, 4, 6]], None), fixed([[3, 3], [1, 7]], None), True),
      fn=_searchsorted_bounds, **unsigned_superset("_searchsorted_bounds")),
    R("_cumextreme", S(a(3, 4), 1, True), S(a(2, 3, 4, nc=True), 0, False),
      S(fixed([1.0, float("nan"), 0.0, -1.0], None), 0, True), fn=_cumextreme, grad=PW,
      **unsigned_superset("_cumextreme")),
    R("_order_select_indices", S(_distinct(3, 5), 1, fixed([[2], [0], [4]])),
      S(_distinct(4, 3), 0, fixed([[3, 1, 0]])), fn=_order_select_indices,
      **unsigned_superset("_order_select_indices")),
    R("bucketize", S(fixed([[0, 3], [6, 9]], None), fixed([1, 3, 5, 7], None)),
      S(fixed([3, 5], None), fixed([1, 3, 5, 7], None), right=True, out_int32=True),
      **unsigned_superset("bucketize")),
    R("softmax", S(a(3, 4), 1), S(a(2, 3, 4, nc=True), 0), grad=PW),
    R("log_softmax", S(a(3, 4), 1), S(a(2, 3, 4, nc=True), 0), grad=PW),
    R("_softmax_backward_data", S(a(3, 4), a(3, 4, dom="expo"), 1),
      fn=lambda m, g, o, d: _sd(m, g, o, d, False), grad=PW),
    R("_log_softmax_backward_data", S(a(3, 4), a(3, 4, dom="expo"), 1),
      fn=lambda m, g, o, d: _sd(m, g, o, d, True), grad=PW),
    R("cumsum", S(a(3, 4), 1), S(a(2, 3, 4, nc=True), 0), grad=PW),
    R("cumprod", S(a(3, 4, dom="small"), 1), S(a(2, 3, 4, dom="small", nc=True), 0),
      grad=PW),
    R("all", S(a(3, 4)), S(a(2, 3, 4, nc=True), 1), S(a(2, 3, 4), (0, 2), True)),
    R("any", S(a(3, 4)), S(a(2, 3, 4, nc=True), 1), S(a(2, 3, 4), (0, 2), True)),
    # stable=True: Ember's sort is always stable, torch's only when asked
    # (differences-from-pytorch.md, Sorting)
    R("sort", S(a(3, 4), stable=True), S(a(2, 3, 4, nc=True), dim=1, descending=True, stable=True),
      S(_distinct(3, 5)), grad=PW),
    R("argsort", S(a(3, 4), stable=True),
      S(a(2, 3, 4, nc=True), dim=1, descending=True, stable=True)),
    R("topk", S(_distinct(3, 5), 2), S(_distinct(4, 3), 2, 0,
                                                          False), grad=PW),
    # --- shapes and views
    R("view", S(a(3, 4), 4, 3), S(a(2, 3, 4), -1), fn=method("view"), grad=SH),
    R("reshape", S(a(3, 4), (4, 3)), S(a(2, 3, 4, nc=True), (-1, 2)), grad=SH),
    R("permute", S(a(2, 3, 4), (2, 0, 1)), S(a(3, 4, nc=True), (1, 0)), grad=SH),
    R("transpose", S(a(2, 3, 4), 0, 2), S(a(3, 4, nc=True), -1, 0), grad=SH),
    R("swapaxes", S(a(2, 3, 4), 0, 2), S(a(3, 4, nc=True), -1, 0), grad=SH),
    R("t", S(a(3, 4)), S(a(4)), grad=SH),
    R("expand", S(a(3, 1), 3, 4), S(a(4), 2, -1), fn=method("expand"), grad=SH),
    R("expand_as", S(a(3, 1), a(3, 4)), fn=method("expand_as"), grad=SH),
    R("broadcast_to", S(a(3, 1), (2, 3, 4)), grad=SH),
    R("squeeze", S(a(3, 1, 4)), S(a(1, 3, 1), (0, 2)), grad=SH),
    R("unsqueeze", S(a(3, 4), 1), S(a(3, 4), -1), grad=SH),
    R("flatten", S(a(2, 3, 4)), S(a(2, 3, 4, nc=True), 1), grad=SH),
    R("unflatten", S(a(2, 12), 1, (3, 4)), grad=SH),
    R("narrow", S(a(3, 4), 1, 1, 2), S(a(3, 4, nc=True), 0, -2, 2), grad=SH),
    R("as_strided", S(a(3, 4), (2, 2), (1, 2)), S(a(3, 4), (2, 3), (4, 1), 1), grad=SH),
    R("select", S(a(3, 4), 1, 2), S(a(2, 3, 4, nc=True), 0, -1), grad=SH),
    R("diagonal", S(a(3, 4)), S(a(2, 3, 4, nc=True), 1, 1, 2), grad=SH),
    R("movedim", S(a(2, 3, 4), (0, 1), (2, 0)), S(a(2, 3, 4), 0, -1), grad=SH),
    R("contiguous", S(a(3, 4, nc=True)), fn=method("contiguous"), grad=SH),
    R("clone", S(a(3, 4)), S(a(3, 4, nc=True)), grad=PW),
    R("cat", S([a(2, 3), a(1, 3)]), S([a(2, 3, nc=True), a(2, 1)], 1), grad=SH),
    R("concat", S([a(2, 3), a(1, 3)]), grad=SH),
    R("stack", S([a(2, 3), a(2, 3)]), S([a(2, 3, nc=True), a(2, 3)], 2), grad=SH),
    R("split", S(a(5, 4), 2), S(a(5, 4), [1, 3], 1), grad=SH),
    R("chunk", S(a(5, 4), 2), S(a(5, 4, nc=True), 3, 1), grad=SH),
    R("unbind", S(a(3, 4)), S(a(3, 4, nc=True), 1), grad=SH),
    R("flip", S(a(3, 4), (0,)), S(a(2, 3, 4, nc=True), (0, 2)), grad=SH,
      **unsigned_superset("flip")),
    R("repeat", S(a(3, 4), 2, 1), S(a(3), 2, 2), fn=method("repeat"), grad=SH),
    # shape composites (_composites/shape.py)
    R("ravel", S(a(3, 4)), S(a(2, 3, 4, nc=True)), grad=SH),
    R("fliplr", S(a(3, 4)), S(a(2, 3, 4, nc=True)), grad=SH,
      **unsigned_superset("fliplr")),
    R("flipud", S(a(3, 4)), S(a(3)), grad=SH,
      **unsigned_superset("flipud")),
    R("hstack", S([a(2, 3), a(2, 1)]), S([a(3), a(2)]), grad=SH),
    R("vstack", S([a(2, 3), a(1, 3)]), S([a(3), a(3)]), grad=SH),
    R("trace", S(a(3, 4)), S(a(4, 4, nc=True)), grad=SH),
    R("outer", S(a(3), a(4)), grad=PW),
    R("tril_indices", S(4, 3), S(3, 5, 1), S(4, 4, -2, dtype=D("int32")), dtypes=("int64",),
      dtypes_why="a factory: no tensor input"),
    R("triu_indices", S(4, 3), S(3, 5, 1), S(4, 4, -2, dtype=D("int32")), dtypes=("int64",),
      dtypes_why="a factory: no tensor input"),
    R("unravel_index", S(fixed([0, 5, 11, -1]), (3, 4)), S(fixed([[7, 2]]), (2, 2, 2)),
      dtypes=("int64",), dtypes_why="indices are integers"),
    R("repeat_interleave", S(a(3, 2), 2), S(a(3, 2), fixed([1, 0, 2]), 0), S(a(2, 3), 3, 1),
      grad=SH, **unsigned_superset("repeat_interleave")),
    R("sum_to_size", S(a(3, 4), (1, 4)), S(a(2, 3, 4), (3, 1)),
      fn=lambda m, x, s: x.sum_to_size(s), grad=SH, **unsigned_superset("sum_to_size")),
    # products (_composites/products.py)
    R("mv", S(a(3, 4), a(4)), S(a(3, 4, nc=True), a(4)), grad=PW),
    R("addmv", S(a(3), a(3, 4), a(4)), S(a(3), a(3, 4, nc=True), a(4), beta=0.5, alpha=2),
      grad=PW),
    R("addr", S(a(3, 4), a(3), a(4)), S(a(4), a(3), a(4), beta=2, alpha=0.5), grad=PW),
    R("baddbmm", S(a(2, 3, 5), a(2, 3, 4), a(2, 4, 5)), S(a(3, 5), a(2, 3, 4), a(2, 4, 5),
                                                       beta=0.5), grad=PW),
    R("addbmm", S(a(3, 5), a(2, 3, 4), a(2, 4, 5)), S(a(5), a(2, 3, 4), a(2, 4, 5), alpha=2),
      grad=PW),
    R("vdot", S(a(4), a(4)), grad=PW),
    R("tensordot", S(a(2, 3, 4), a(3, 4, 5)), S(a(2, 3, 4), a(4, 3, 5), ([1, 2], [1, 0])),
      S(a(2, 3), a(3, 2), 1), grad=PW),
    R("inner", S(a(2, 3), a(4, 3)), S(a(), a(3, 2)), grad=PW),
    R("chain_matmul", S(a(2, 3), a(3, 4), a(4, 2)), grad=PW),
    R("cross", S(a(2, 3), a(2, 3)), S(a(3, 4), a(3, 1), 0), grad=PW),
    R("einsum", S("ij,jk->ik", a(2, 3), a(3, 4)), S("bij,bjk", a(2, 2, 3), a(2, 3, 4)),
      S("ii->i", a(3, 3)), S("...i,i", a(2, 3), a(3)), S("i,j->ij", a(2), a(3)), grad=PW),
    R("roll", S(a(3, 4), 1), S(a(3, 4, nc=True), (1, -1), (0, 1)), S(a(2, 3), 7, -1), grad=SH),
    R("rot90", S(a(3, 4)), S(a(2, 3, 4, nc=True), 3, (2, 0)), S(a(3, 4), -2), grad=SH,
      **unsigned_superset("rot90")),
    R("tile", S(a(3, 4), (2,)), S(a(3, nc=True), (2, 1, 2)), grad=SH),
    R("atleast_1d", S(a()), fn=lambda m, x: m.atleast_1d(x, x.reshape(1)), grad=SH),
    R("atleast_2d", S(a(3)), fn=lambda m, x: m.atleast_2d([x, x.sum()]), grad=SH),
    R("atleast_3d", S(a(3, 4)), S(a(4)), grad=SH),
    R("column_stack", S([a(3), a(3, 2)]), grad=SH),
    R("dstack", S([a(3), a(3)]), S([a(2, 3), a(2, 3, 2, nc=True)]), grad=SH),
    R("block_diag", S(a(2, 3), a(), a(4)), grad=SH),
    R("_chunk_cat", S([a(2, 5), a(2, 3)], 1, 2), S([a(3, 4, 2), a(3, 1)], 1, 3), grad=SH),
    R("broadcast_tensors", S(a(3, 1), a(4)), grad=SH),
    R("meshgrid", S(a(3), a(4), indexing="ij"), S(a(3), a(4), a(2), indexing="xy"), grad=SH),
    R("cartesian_prod", S(a(3), a(2)), grad=SH),
    R("tensor_split", S(a(7, 3), 3), S(a(3, 7, nc=True), [1, 5], 1), grad=SH),
    R("hsplit", S(a(3, 4), 2), S(a(6), [2]), grad=SH),
    R("vsplit", S(a(4, 3), 2), S(a(4, 3, nc=True), [1, 3]), grad=SH),
    R("dsplit", S(a(2, 3, 4), 2), S(a(2, 3, 4), [3]), grad=SH),
    R("split_with_sizes", S(a(5, 3), [2, 3]), S(a(3, 5, nc=True), [1, 1, 3], 1), grad=SH),
    R("unsafe_split", S(a(5, 3), 2), grad=SH),
    R("unsafe_chunk", S(a(5, 3), 2), S(a(3, 5), 3, 1), grad=SH),
    R("diag_embed", S(a(2, 3)), S(a(2, 3, nc=True), 1, 0, 2), S(a(3), -2), grad=SH),
    R("diag", S(a(3)), S(a(3), -1), S(a(3, 4, nc=True), 1), grad=SH),
    R("diagflat", S(a(2, 2)), S(a(3), 2), grad=SH),
    R("select_scatter", S(a(3, 4), a(4), 0, 1), S(a(3, 4, nc=True), a(3), 1, -1), grad=SH),
    R("slice_scatter", S(a(5, 4), a(2, 4), 0, 1, 5, 2), S(a(3, 4), a(3, 2), 1, None, 2),
      grad=SH),
    R("diagonal_scatter", S(a(3, 4), a(3)), S(a(3, 4, nc=True), a(2), 2), grad=SH),
    # (torch 2.13's kron refuses a transposed operand: "view size is not compatible")
    R("kron", S(a(2, 3), a(3, 2)), S(a(2), a(2, 2)), grad=SH),
    R("take", S(a(3, 4), fixed([[0, -1], [5, 11]])), grad=SH, **unsigned_superset("take")),
    R("msort", S(a(4, 3)), grad=SH),
    R("unfold", S(a(3, 7), 1, 3, 2), S(a(5), 0, 2, 1), fn=lambda m, x, *r: x.unfold(*r), grad=SH),
    R("alias_copy", S(a(3, 4, nc=True)), grad=SH),
    R("as_strided_copy", S(a(3, 4), (2, 2), (1, 2)), grad=SH),
    R("diagonal_copy", S(a(3, 4), 1), grad=SH),
    R("expand_copy", S(a(3, 1), (3, 4)), grad=SH),
    R("narrow_copy", S(a(3, 4), 1, 1, 2), grad=SH),
    R("permute_copy", S(a(2, 3, 4), (2, 0, 1)), grad=SH),
    R("squeeze_copy", S(a(3, 1, 4)), S(a(1, 3, 1), (0, 2)), grad=SH),
    R("t_copy", S(a(3, 4)), grad=SH),
    R("transpose_copy", S(a(2, 3, 4), 0, 2), grad=SH),
    R("unsqueeze_copy", S(a(3, 4), 1), grad=SH),
    R("view_copy", S(a(3, 4), (4, 3)), grad=SH),
    R("unfold_copy", S(a(3, 7), 1, 3, 2), grad=SH),
    R("unbind_copy", S(a(3, 4), 1), grad=SH),
    R("split_with_sizes_copy", S(a(5, 3), [2, 3]), grad=SH),
    R("tril", S(a(4, 5)), S(a(2, 4, 5, nc=True), -1), grad=SH, **unsigned_superset("tril")),
    R("triu", S(a(4, 5)), S(a(2, 4, 5, nc=True), 1), grad=SH, **unsigned_superset("triu")),
    # --- indexing
    R("gather", S(a(3, 4), 1, fixed([[0, 3], [1, 1], [2, 0]])), grad=SH,
      **unsigned_superset("gather")),
    R("scatter", S(a(3, 4), 1, fixed([[0, 3], [1, 2], [2, 0]]), a(3, 2)),
      S(a(3, 4), 0, fixed([[0, 1, 2, 0]]), 5), grad=SH),
    R("scatter_add", S(a(3, 4), 1, fixed([[0, 0], [1, 2], [3, 3]]), a(3, 2)), grad=SH),
    R("argwhere", S(a(3, 4)), S(mask(2, 3)), **unsigned_superset("argwhere")),
    R("combinations", S(a(4)), S(a(3), 3), S(a(3), 2, True), grad=SH,
      **unsigned_superset("combinations")),
    R("constant_pad_nd", S(a(2, 3), (1, 2)), S(a(2, 3, 4), (1, -1, 0, 2), 1.5), grad=SH,
      **unsigned_superset("constant_pad_nd")),
    R("scatter_reduce", *[S(a(3, 4), 1, fixed([[0, 0], [1, 2], [3, 3]]), a(3, 2), r)
                          for r in ("sum", "prod", "mean", "amax", "amin")],
      S(a(3, 4), 0, fixed([[0, 1], [0, 1]]), a(2, 2), "mean", include_self=False),
      S(a(3, 4), 0, fixed([[2, 2], [2, 2]]), a(2, 2), "prod", include_self=False), grad=SH),
    R("_scatter_reduce_flat", *[S(a(6), fixed([0, 0, 3, 5, 3]), a(5), r, r != "prod")
                                for r in ("sum", "prod", "mean", "amax", "amin")],
      S(a(6), fixed([4, 1, 4]), a(3), "mean", False), fn=_scatter_reduce_flat,
      dtypes=tuple(d for d in ALL_DTYPES if d != "bool"),
      dtypes_why="PyTorch's scatter_reduce has no 'mean' of bool (NotImplementedError); "
                 "Ember's sums bools as logical or"),
    R("index_reduce", *[S(a(3, 4), 0, fixed([2, 0, 2]), a(3, 4), r)
                        for r in ("prod", "mean", "amax", "amin")],
      S(a(3, 4), 1, fixed([1, 1]), a(3, 2), "amax", include_self=False), grad=SH,
      dtypes=tuple(d for d in ALL_DTYPES if d != "bool"),
      dtypes_why="PyTorch's has no bool kernel"),
    R("index_fill", S(a(3, 4), 1, fixed([0, 2]), 1.5), S(a(3, 4), 0, fixed([-1]), a()),
      grad=SH, **unsigned_superset("index_fill")),
    R("index_copy", S(a(3, 4), 0, fixed([2, 0]), a(2, 4)), S(a(3, 4), 1, fixed([3]), a(3, 1)),
      grad=SH, **unsigned_superset("index_copy")),
    R("masked_scatter", S(a(3, 4), mask(3, 4), a(12)), S(a(3, 4), mask(4, seed=1), a(13)),
      grad=SH, **unsigned_superset("masked_scatter")),
    R("put", S(a(3, 4), fixed([0, -1, 5]), a(3)), S(a(3, 4), fixed([1, 1]), a(2), True),
      grad=SH),
    R("as_strided_scatter", S(a(3, 4), a(2, 2), (2, 2), (4, 1), 1), grad=SH,
      **unsigned_superset("as_strided_scatter")),
    R("index_select", S(a(3, 4), 1, fixed([3, 0, 0])), S(a(3, 4, nc=True), 0, fixed([2])),
      grad=SH),
    R("index_add", S(a(3, 4), 0, fixed([2, 0, 2]), a(3, 4)),
      S(a(3, 4), 1, fixed([1, 1]), a(3, 2), alpha=2), grad=SH),
    R("take_along_dim", S(a(3, 4), fixed([[0], [3], [1]]), 1), S(a(3, 4), fixed([5, 0])),
      grad=SH),
    R("_index", S(a(3, 4), [fixed([2, 0, 2])]), S(a(3, 4), [None, mask(4)]),
      fn=lambda m, x, idx: torch.ops.aten.index(x, idx) if m is torch else m._C._index(x, idx),
      cuda_via="xd[kd]"),
    R("index_put", S(a(3, 4), [fixed([2, 0])], a(4)), S(a(3, 4), [fixed([1, 1])], a(2, 4), True),
      grad=SH),
    R("masked_fill", S(a(3, 4), mask(3, 4), 2), S(a(2, 3, 4, nc=True), mask(3, 4), a()),
      grad=SH, **unsigned_superset("masked_fill")),
    R("masked_select", S(a(3, 4), mask(3, 4)), S(a(2, 3, 4), mask(4)), grad=SH),
    R("_unsafe_masked_index", S(a(3, 4), mask(2), [fixed([5, -1]), fixed([0, 3])], 0.5),
      S(a(4, 2), mask(3, 1), [fixed([[0], [2], [9]])], 0), grad=SH,
      **unsigned_superset("_unsafe_masked_index")),
    R("_unsafe_masked_index_put_accumulate",
      S(a(3, 4), mask(2), [fixed([1, 7]), fixed([0, 0])], a(2)),
      S(a(4), mask(3), [fixed([0, -2, 0])], a(3)), grad=SH),
    R("nonzero", S(a(3, 4)), S(a(2, 3, 4, nc=True))),
    # --- linear algebra
    R("matmul", S(a(3, 4), a(4, 2)), S(a(2, 3, 4, nc=True), a(4)), S(a(4), a(2, 4, 3)), grad=PW,
      cuda_refuses=INTEGER_PRODUCTS),
    R("mm", S(a(3, 4), a(4, 2, nc=True)), grad=PW, cuda_refuses=INTEGER_PRODUCTS),
    R("bmm", S(a(2, 3, 4), a(2, 4, 2, nc=True)), grad=PW, cuda_refuses=INTEGER_PRODUCTS),
    R("addmm", S(a(3, 2), a(3, 4), a(4, 2)), S(a(2), a(3, 4), a(4, 2), beta=2, alpha=0.5),
      grad=PW),
    R("linear", S(a(3, 4), a(2, 4), a(2)), S(a(2, 3, 4), a(2, 4)),
      fn=lambda m, *args: (torch.nn.functional.linear if m is torch else m.linear)(*args),
      grad=PW),
    R("dot", S(a(4), a(4)), grad=PW),
    # PyTorch's top-level decompositions (_composites/decompositions.py)
    R("cholesky", S(_spd(4)), S(_spd(3, (2,)), True), grad=LA),
    R("cholesky_solve", S(a(4, 2), _tril_factor(4)), S(a(3, 2), _tril_factor(3, True), True),
      fn=_cholesky_solve, grad=LA),
    R("cholesky_inverse", S(_tril_factor(4)), grad=LA),
    R("qr", S(_well_conditioned(4)), S(_well_conditioned(3, (2,)), False), fn=_sign_fixed_qr,
      grad=LA),
    R("svd", S(_distinct(4, 3, scale=1 / 6)), fn=lambda m, x: m.svd(x)[1], grad=LA),
    R("pinverse", S(_well_conditioned(4)), S(_distinct(4, 3, scale=1 / 6)), grad=LA),
    R("logdet", S(_spd(4)), S(_well_conditioned(3, (2,))), grad=LA),
    R("triangular_solve", S(a(4, 2), _tril_factor(4, True)), S(a(4, 2), _tril_factor(4), False,
                                                                True),
      fn=lambda m, *a: _quiet(m.triangular_solve, *a), grad=LA),
    R("lu", S(_well_conditioned(4)), S(_well_conditioned(3, (2,)), True, True),
      fn=lambda m, *a: _quiet(m.lu, *a), grad=LA),
    R("lu_solve", S(a(4, 2), _well_conditioned(4)), fn=_lu_solve, grad=LA),
    R("lu_unpack", S(_well_conditioned(4)), fn=_lu_unpack, grad=LA),
    R("matrix_exp", S(_distinct(4, 4, scale=1 / 8)), S(_distinct(2, 3, 3, scale=1 / 9)),
      grad=LA, dtypes=("float32", "float64", "complex64", "complex128"),
      dtypes_why="PyTorch 2.13's float16/bfloat16 matrix_exp is wrong (exp(I) = -20896 I); "
                 "test_fuzz_triage.py compares those with SciPy"),
    R("linalg_cholesky", S(_spd(4)), S(_spd(3, (2,)), upper=True), fn=_linalg("cholesky"),
      grad=LA),
    R("linalg_qr", S(_well_conditioned(4)), S(_well_conditioned(3, (2,)), "complete"),
      fn=_linalg("qr"), grad=LA),
    # eigenvectors and singular vectors up to sign: their absolute values are compared
    R("linalg_eigh", S(_spd(4)), S(_spd(3, (2,)), "U"),
      fn=_linalg("eigh", lambda m, r: (r[0], m.abs(r[1]))), grad=LA),
    R("linalg_eigvalsh", S(_spd(4)), fn=_linalg("eigvalsh"), grad=LA),
    R("linalg_svd", S(_distinct(4, 3, scale=1 / 6)),
      S(_distinct(2, 3, 4, scale=1 / 12), False),
      fn=_linalg("svd", lambda m, r: (m.abs(r[0]), r[1], m.abs(r[2]))), grad=LA),
    R("linalg_svdvals", S(_distinct(4, 3, scale=1 / 6)), fn=_linalg("svdvals"), grad=LA),
    R("linalg_solve", S(_well_conditioned(4), a(4, 2)), S(_well_conditioned(3, (2,)), a(2, 3)),
      fn=_linalg("solve"), grad=LA),
    R("linalg_inv", S(_well_conditioned(4)), S(_well_conditioned(3, (2,))), fn=_linalg("inv"),
      grad=LA),
    R("linalg_pinv", S(_well_conditioned(4)), S(a(3, 5)), S(a(2, 4, 3), hermitian=False),
      S(a(4, 2), rtol=0.1), fn=_linalg("pinv"), grad=LA,
      dtypes=("float32", "float64", "complex64", "complex128"),
      dtypes_why="floating and complex only (as torch)"),
    # eig: the eigenvalues sorted (LAPACK's order differs between MKL and OpenBLAS); the
    # eigenvectors by test_linalg_eig.py (A V = V diag(L): their phases are LAPACK's)
    R("linalg_eig", S(_well_conditioned(4)), S(_well_conditioned(3, (2,), seed=3)),
      fn=lambda m, A: _sort_complex(m, m.linalg.eig(A)[0]), grad=CX),
    R("linalg_eigvals", S(_well_conditioned(4)), S(_well_conditioned(3, (2,), seed=3)),
      fn=lambda m, A: _sort_complex(m, m.linalg.eigvals(A)), grad=CX),
    R("linalg_det", S(_well_conditioned(4)), S(_well_conditioned(3, (2,))), fn=_linalg("det"),
      grad=LA),
    R("linalg_slogdet", S(_well_conditioned(4)), fn=_linalg("slogdet"), grad=LA),
    R("linalg_solve_triangular", S(_well_conditioned(4), a(4, 2), upper=True),
      S(_well_conditioned(3, (2,)), a(2, 3, 2), upper=False, left=True, unitriangular=True),
      # B of another dtype: cast to A's, as PyTorch's kernel does
      S(_well_conditioned(3), a(3, 2, dtype="float64"), upper=True),
      fn=_linalg("solve_triangular"), grad=LA),
    R("grid_sampler", S(a(2, 3, 4, 5), a(2, 3, 2, 2), 0, 0, False),
      S(a(1, 2, 3, 4, 3), a(1, 2, 2, 3, 3), 1, 2, True),
      S(a(1, 2, 5, 4), a(1, 3, 3, 2), 2, 1, False),
      dtypes=("float32", "float64"), dtypes_why=_GRID_DTYPES, no_grad=_GRID_GRAD),
    R("grid_sampler_2d", S(a(2, 3, 4, 5), a(2, 3, 2, 2), 0, 2, True),
      S(a(1, 2, 5, 4), a(1, 3, 3, 2), 1, 1, False), dtypes=("float32", "float64"),
      dtypes_why=_GRID_DTYPES, no_grad=_GRID_GRAD),
    R("grid_sampler_3d", S(a(1, 2, 3, 4, 3), a(1, 2, 2, 3, 3), 0, 1, False),
      dtypes=("float32", "float64"), dtypes_why=_GRID_DTYPES, no_grad=_GRID_GRAD),
    R("_linalg_getrf", S(_well_conditioned(4)), S(a(2, 5, 3)), S(a(3, 4)),
      fn=lambda m, A: m.linalg.lu_factor_ex(A) if m is torch else m._C._linalg_getrf(A)),
    R("geqrf", S(_well_conditioned(4)), S(a(2, 5, 3)), S(a(3, 4)),
      no_grad="PyTorch has no derivative of geqrf (not implemented)"),
    R("ormqr", S(a(5, 3), a(5, 2)), S(a(5, 3), a(2, 5), left=False),
      S(a(2, 4, 4), a(2, 4, 3), transpose=True), S(a(4, 2), a(3, 4), False, True),
      fn=_ormqr, no_grad="its gradient is PyTorch's on the OpInfo suite's samples "
      "(packages/ember/tests/opinfo): geqrf, which makes its inputs here, has none"),
    R("linalg_ldl_factor_ex", S(_symmetric_indefinite(5)),
      S(_symmetric_indefinite(4, (2,), seed=8), hermitian=True),
      fn=_linalg("ldl_factor_ex"), no_grad=_LDL_NO_GRAD),
    R("linalg_ldl_solve", S(_symmetric_indefinite(5), a(5, 2)),
      S(_symmetric_indefinite(4, (2,), seed=8), a(2, 4, 3), hermitian=True),
      fn=_ldl_solve, no_grad=_LDL_NO_GRAD),
    # --- discrete Fourier transforms (the inputs of _fft_c2r need not be Hermitian: every
    # library reads them the same way, see fft_cpu.cpp)
    R("_fft_c2c", S(a(4, 6), [1], 0, True), S(a(3, 5, 4, nc=True), [0, 2], 2, False),
      S(a(7), [0], 1, True), fn=aten("_fft_c2c"), grad=FT),
    R("_fft_r2c", S(a(4, 6), [1], 0, True), S(a(3, 5, 4, nc=True), [2, 0], 1, False),
      fn=aten("_fft_r2c"), grad=FT),
    R("_fft_c2r", S(a(4, 4), [1], 2, 6), S(a(3, 5, 3, nc=True), [0, 2], 0, 5), fn=aten("_fft_c2r"),
      grad=FT),
    # --- signal processing
    *[R(w, S(5, dtype=DT), S(8, False, dtype=DT), S(1, dtype=DT), S(0, dtype=DT),
        no_grad="a factory: its result is a leaf", dtypes=_FLOATS,
        dtypes_why="floating dtypes only (PyTorch: RuntimeError for the others)")
      for w in ("hann_window", "blackman_window", "bartlett_window")],
    R("hamming_window", S(6, dtype=DT), S(7, False, 0.5, 0.5, dtype=DT),
      no_grad="a factory: its result is a leaf", dtypes=_FLOATS,
      dtypes_why="floating dtypes only (PyTorch: RuntimeError for the others)"),
    R("kaiser_window", S(6, dtype=DT), S(9, False, 5.0, dtype=DT),
      no_grad="a factory: its result is a leaf", dtypes=_FLOATS,
      dtypes_why="floating dtypes only (PyTorch: RuntimeError for the others)"),
    R("stft", S(a(40), 16), S(a(2, 50, nc=True), 16, 4, 12), fn=_stft, grad=FT),
    R("istft", S(a(9, 7), 16), S(a(2, 5, 9, nc=True), 8, 2), fn=_istft, grad=FT),
    # --- convolution
    R("im2col", S(a(2, 3, 5, 4), (2, 3), 1, 1, 1), S(a(1, 2, 6, 6, nc=True), 3, 2, 1, 2),
      fn=_im2col, grad=SH, dtypes=("bool", *_FLOATS), dtypes_why=_FOLD_INTEGERS),
    R("col2im", S(a(2, 12, 16), (5, 6), (2, 3), 1, 0, 1),
      S(a(1, 12, 16, nc=True), (6, 6), 2, 1, 1, 2), fn=_col2im, grad=SH,
      dtypes=("float32", "float64"), dtypes_why=_FOLD_INTEGERS),
    R("conv2d", S(a(2, 4, 6, 5), a(3, 4, 3, 3), a(3)), S(a(1, 4, 7, 7, nc=True), a(4, 2, 3, 2),
                                                          None, 2, 1, 1, 2), grad=SH),
    R("conv2d_backward_input", S(a(2, 3, 4, 3), a(3, 4, 3, 3), [2, 4, 6, 5]),
      S(a(1, 4, 4, 4), a(4, 2, 3, 2), [1, 4, 7, 7], 2, 1, 1, 2), fn=_conv_backward_input,
      grad=SH, tol=_CONV_HALF_TOL),
    R("conv2d_backward_weight", S(a(2, 3, 4, 3), a(2, 4, 6, 5), [3, 4, 3, 3]),
      S(a(1, 4, 4, 4), a(1, 4, 7, 7), [4, 2, 3, 2], 2, 1, 1, 2), fn=_conv_backward_weight,
      grad=SH, tol=_CONV_HALF_TOL),
    R("conv_transpose2d", S(a(2, 4, 5, 4), a(4, 3, 3, 3), a(3)),
      S(a(1, 4, 4, 4, nc=True), a(4, 2, 3, 2), None, 2, 1, 1, 2, 1), grad=SH,
      tol=_CONV_HALF_TOL),
    # --- pooling
    R("max_pool2d_with_indices", S(a(2, 3, 6, 5), 2), S(a(1, 2, 7, 7, nc=True), 3, 2, 1, 1, True),
      fn=aten("max_pool2d_with_indices"), grad=SH),
    R("max_pool2d_with_indices_backward",
      S(a(1, 2, 3, 3), _distinct(1, 2, 6, 6, scale=0.1), [2, 2], [2, 2], [0, 0],
        [1, 1], False, fixed(np.tile([[0, 2, 4], [12, 14, 16], [24, 26, 28]], (1, 2, 1, 1)))),
      fn=aten("max_pool2d_with_indices_backward"), grad=SH),
    R("avg_pool2d", S(a(2, 3, 6, 5), 2), S(a(1, 2, 7, 7, nc=True), 3, 2, 1, True, False),
      S(a(1, 2, 6, 6), 2, 2, 0, False, True, 3), fn=aten("avg_pool2d"), grad=SH,
      cuda_refuses=("int64",)),  # PyTorch's CUDA kernel: floating types only
    R("avg_pool2d_backward", S(a(1, 2, 3, 3), a(1, 2, 6, 6), [2, 2], [2, 2], [0, 0], False, True,
                               None), fn=aten("avg_pool2d_backward"), grad=SH),
    R("adaptive_avg_pool2d", S(a(2, 3, 6, 5), (2, 3)), S(a(1, 2, 7, 7, nc=True), (3, 3)),
      fn=lambda m, x, s: torch.nn.functional.adaptive_avg_pool2d(x, s) if m is torch
      else m.adaptive_avg_pool2d(x, s), grad=SH),
    R("adaptive_avg_pool2d_backward", S(a(1, 2, 2, 3), a(1, 2, 5, 6)),
      fn=lambda m, g, x: torch.ops.aten._adaptive_avg_pool2d_backward(g, x) if m is torch
      else m.adaptive_avg_pool2d_backward(g, x), grad=SH),
    R("adaptive_max_pool2d", S(_distinct(2, 3, 6, 5, scale=0.1), (2, 3)),
      fn=aten("adaptive_max_pool2d"), grad=SH),
    R("adaptive_max_pool2d_backward",
      S(a(1, 1, 2, 2), _distinct(1, 1, 4, 4, scale=0.1), fixed([[[[0, 3], [8, 15]]]])),
      fn=aten("adaptive_max_pool2d_backward"), grad=SH),
    # --- normalization
    R("native_batch_norm", S(a(4, 3, 2), a(3), a(3), a(3), a(3, dom="pos"), True, 0.1, 1e-5),
      S(a(4, 3), None, None, a(3), a(3, dom="pos"), False, 0.1, 1e-5), fn=_batch_norm, grad=SH),
    R("native_layer_norm", S(a(2, 3, 4), [4], a(4), a(4), 1e-5), S(a(3, 4), [3, 4], None, None,
                                                                 1e-5), grad=SH),
    R("native_group_norm", S(a(2, 4, 3), a(4), a(4), 2, 4, 3, 2, 1e-5),
      S(a(2, 6, 2, 2), None, None, 2, 6, 4, 3, 1e-5), grad=SH),
    R("native_batch_norm_backward",
      S(a(4, 3, 2), a(4, 3, 2), a(3), a(3), a(3, dom="pos"), a(3), a(3, dom="pos"), True, 1e-5),
      fn=_norm_backward("native_batch_norm_backward"), scale=10),
    R("native_layer_norm_backward",
      S(a(2, 3, 4), a(2, 3, 4), [4], a(2, 3, 1), a(2, 3, 1, dom="pos"), a(4), a(4)),
      fn=_norm_backward("native_layer_norm_backward"), scale=10),
    R("native_group_norm_backward",
      S(a(2, 4, 3), a(2, 4, 3), a(2, 2), a(2, 2, dom="pos"), a(4), 2, 4, 3, 2),
      fn=_norm_backward("native_group_norm_backward"), scale=10),
    # --- nn
    R("embedding", S(a(5, 3), fixed([[0, 4], [2, 2]])), S(a(5, 3, nc=True), fixed([1, 3]), 1),
      grad=SH),
    R("embedding_dense_backward", S(a(2, 2, 3), fixed([[0, 4], [2, 2]]), 5, -1, False),
      S(a(3, 3), fixed([1, 3, 1]), 5, 1, True), fn=aten("embedding_dense_backward"), grad=SH),
    R("nll_loss", S(a(3, 4), fixed([0, 3, 1])), S(a(3, 4), fixed([0, 3, 1]), a(4, dom="pos"), 2, 3),
      S(a(3, 4), fixed([2, 2, 0]), None, 0), fn=_nll_loss, grad=SH),
    R("threshold_backward", S(a(3, 4), a(3, 4), 0), S(a(3, 4, nc=True), a(3, 4), 0.5),
      fn=aten("threshold_backward"), grad=PW),
    R("_lstm_forward_", skip="Ember's own fused LSTM step (no PyTorch op takes this layout): "
      "test_rnn_ops.py checks it against a NumPy recurrence"),
    R("_lstm_backward_", skip="Ember's own fused LSTM backward step (no PyTorch op takes this "
      "layout): test_rnn_ops.py checks it against NumPy backpropagation through time"),
    R("_gru_forward_", skip="Ember's own GRU recurrence (no PyTorch op takes this layout): "
      "test_rnn_ops.py checks it against a NumPy recurrence"),
    R("_gru_backward_", skip="Ember's own GRU backward recurrence (no PyTorch op takes this "
      "layout): test_rnn_ops.py checks it against NumPy backpropagation through time"),
    # --- activations and the binary cross-entropy (composite: python): torch's functions
    R("hardtanh", S(a(3, 4)), S(a(2, 3, 4, nc=True), -0.5, 0.7), S(_KINKS, -2.5, 3.0),
      fn=_nn("hardtanh"), grad=PW),
    R("relu6", S(a(3, 4)), S(_KINKS), fn=_nn("relu6"), grad=PW),
    R("elu", S(a(3, 4)), S(a(2, 3, 4, nc=True), 1.5), S(a(3, 4), 0.5, 2.0, 1.5), fn=_nn("elu"),
      grad=PW),
    R("selu", S(a(3, 4)), S(a(2, 3, 4, nc=True)), fn=_nn("selu"), grad=PW),
    R("celu", S(a(3, 4)), S(a(2, 3, 4, nc=True), 0.5), fn=_nn("celu"), grad=PW),
    R("leaky_relu", S(a(3, 4)), S(a(2, 3, 4, nc=True), 0.2), fn=_nn("leaky_relu"), grad=PW),
    R("hardsigmoid", S(a(3, 4)), S(_KINKS), fn=_nn("hardsigmoid"), grad=PW),
    R("hardswish", S(a(3, 4)), S(_KINKS), fn=_nn("hardswish"), grad=PW),
    R("mish", S(a(3, 4)), S(a(2, 3, 4, nc=True)), fn=_nn("mish"), grad=PW),
    R("softsign", S(a(3, 4)), S(a(2, 3, 4, nc=True)), fn=_nn("softsign"), grad=PW),
    R("tanhshrink", S(a(3, 4)), S(a(2, 3, 4, nc=True)), fn=_nn("tanhshrink"), grad=PW),
    R("silu", S(a(3, 4)), S(a(2, 3, 4, nc=True)), fn=_nn("silu"), grad=PW),
    R("softplus", S(a(3, 4)), S(a(2, 3, 4, nc=True), 2.0, 1.0), fn=_nn("softplus"), grad=PW),
    R("log_sigmoid", S(a(3, 4)), S(a(2, 3, 4, nc=True)), fn=_nn("log_sigmoid"), grad=PW),
    R("gelu", S(a(3, 4)), S(a(2, 3, 4, nc=True), approximate="tanh"), fn=_nn("gelu"), grad=PW),
    R("gelu_backward", S(a(3, 4), a(3, 4)), S(a(2, 3, 4, nc=True), a(2, 3, 4), approximate="tanh"),
      fn=aten("gelu_backward"), grad=PW),
    R("threshold", S(a(3, 4), 0.5, -2.0), S(a(2, 3, 4, nc=True), -0.5, 2.0),
      S(a(3, 4), 1, 2), fn=_nn("threshold"), grad=PW),
    R("glu", S(a(3, 4)), S(a(2, 4, 3, nc=True), 1), fn=_nn("glu"), grad=PW),
    R("binary_cross_entropy", S(_probabilities(3, 4), _probabilities(3, 4, seed=1)),
      S(_probabilities(3, 4), _probabilities(3, 4, seed=1), a(4, dom="pos"), 2),
      S(_probabilities(2, 3), _probabilities(2, 3, seed=2), None, 0),
      fn=aten("binary_cross_entropy"), grad=PW),
    R("_fused_adam_", S([a(3, 4), a(5)], [a(3, 4), a(5)], [a(3, 4), a(5)],
                        [a(3, 4, dom="pos"), a(5, dom="pos")],
                        [fixed(2.0, "float32"), fixed(0.0, "float32")], decoupled=False),
      S([a(3, 4)], [a(3, 4)], [a(3, 4)], [a(3, 4, dom="pos")], [fixed(0.0, "float32")],
        decoupled=True), fn=_fused_adam, xfail={"float16": _FUSED_HALF, "bfloat16": _FUSED_HALF}),
    R("_fused_sgd_", S([a(3, 4), a(5)], [a(3, 4), a(5)], [a(3, 4), a(5)], first=False),
      S([a(3, 4)], [a(3, 4)], [a(3, 4)], first=True), fn=_fused_sgd,
      xfail={"float16": _FUSED_HALF, "bfloat16": _FUSED_HALF}),
    # --- creation
    R("zeros", S((2, 3), dtype=DT), S(4, dtype=DT), no_grad="a factory: its result is a leaf"),
    R("ones", S((2, 3), dtype=DT), no_grad="a factory: its result is a leaf"),
    R("empty", S((2, 3), dtype=DT), shape_only=EMPTY, no_grad="a factory: its result is a leaf"),
    R("full", S((2, 3), 2, dtype=DT), S((4,), True, dtype=DT),
      no_grad="a factory: its result is a leaf"),
    unary("zeros_like"),
    unary("ones_like"),
    R("empty_like", S(a(3, 4)), shape_only=EMPTY),
    R("rand_like", S(a(3, 4)), shape_only=RANDOM, check=within(0, 1)),
    R("randn_like", S(a(3, 4)), shape_only=RANDOM, check=finite),
    R("full_like", S(a(3, 4), 2), S(a(3, 4), 1, dtype=D("float64"))),
    R("arange", S(5, dtype=DT), S(1, 7, 2, dtype=DT), S(0.5, 3, 1, dtype=DT),
      S(0, 3.5, 1.5, dtype=DT), S(-2.5, 3, 1.7, dtype=DT), S(0, 1e-8, dtype=DT),
      no_grad="a factory: its result is a leaf"),
    R("linspace", S(0, 1, 5, dtype=DT), S(-2, 3, 6, dtype=DT),
      no_grad="a factory: its result is a leaf"),
    R("eye", S(3, dtype=DT), S(2, 4, dtype=DT), no_grad="a factory: its result is a leaf"),
    R("logspace", S(0, 2, 5, dtype=DT), S(-1, 1, 3, 2.0, dtype=DT),
      dtypes=("float32", "float64"), dtypes_why="float results (integer ones round per PyTorch's "
      "own float computation)"),
    R("scalar_tensor", S(2, dtype=DT), S(1.5, dtype=DT), **unsigned_superset("scalar_tensor")),
    R("rand", S((2, 3), dtype=DT), shape_only=RANDOM, check=within(0, 1),
      no_grad="a factory: its result is a leaf"),
    R("randn", S((2, 3), dtype=DT), shape_only=RANDOM, check=finite,
      no_grad="a factory: its result is a leaf"),
    R("randint", S(5, (2, 3), dtype=DT), S(0, 3, (4,), dtype=DT), shape_only=RANDOM,
      check=within(0, 5),
      no_grad="a factory: its result is a leaf"),
    R("randperm", S(5, dtype=DT), shape_only=RANDOM, check=is_permutation),
    R("multinomial", S(a(3, 4, dom="pos"), 2), S(a(4, dom="pos"), 6, True), shape_only=RANDOM,
      check=_multinomial_check),
    R("normal", S(a(3, 4), 1, 2), fn=inplace("normal"), shape_only=RANDOM, check=finite, grad=PW),
    R("uniform", S(a(3, 4), -1, 2), fn=inplace("uniform"), shape_only=RANDOM, check=within(-1, 2),
      grad=PW),
    # p of 0 and 1 only: no randomness left to differ
    R("bernoulli", S(fixed([[0.0, 1.0, 1.0], [0.0, 0.0, 1.0]], None)),
      S(a(2, 3), fixed([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]], "float64")), S(a(3), 1.0),
      fn=lambda m, x, p=None: x.bernoulli_(p) if p is not None else m.bernoulli(x), grad=PW),
    # --- in-place utilities
    R("fill", S(a(3, 4), 2), S(a(3, 4, nc=True), a()), fn=inplace("fill"), grad=PW),
    R("zero", S(a(3, 4)), S(a(3, 4, nc=True)), fn=inplace("zero"), grad=PW),
    R("copy", S(a(3, 4), a(3, 4, dtype="float64")), S(a(3, 4, nc=True), a(4, dtype="int32")),
      fn=inplace("copy"), grad=PW),
    # --- casts
    *[R(name, S(a(3, 4)), S(a(2, 3, nc=True)), fn=method(name), grad=PW)
      for name in ("float", "double", "half", "bfloat16")],
    # negative floats cast to unsigned are undefined in C++ and differ between libraries
    *[R(name, S(a(3, 4, dom=dom)), S(a(2, 3, dom=dom, nc=True)), fn=method(name),
        no_grad="an integral result: never requires grad (test_ops_grad_pointwise.py checks "
        "that the casts do not record)")
      for name, dom in (("int", "any"), ("long", "any"), ("short", "any"), ("char", "any"),
                        ("byte", "pos"), ("bool", "any"))],
]

ROW_BY_NAME = {row.name: row for row in ROWS}


def _unary_math(entry: dict) -> bool:
    return (
        [(arg["name"], arg["type"]) for arg in entry["args"]] == [("self", "Tensor")]
        and entry["returns"] == [["Tensor", ""]]
        and {"function", "inplace"} <= set(entry["variants"])
        and entry["differentiable"]
    )


def unary_math_ops() -> list[str]:
    """The elementwise unary math ops with per-device kernels, read from the schema: one
    signature ``(Tensor self) -> Tensor`` with a function and an in-place form (the result
    keeps a float input's dtype), differentiable (a float result: not the predicates
    isnan/signbit/..., nor logical_not/bitwise_not). A CUDA test file that runs them all
    (test_cuda_ops.py) covers a new one without a list of its own."""
    return [
        row.name
        for row in ROWS
        if row.cuda == "kernel" and row.entries and all(map(_unary_math, row.entries))
    ]
