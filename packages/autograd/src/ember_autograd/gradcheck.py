"""Finite-difference checks of gradients: ``gradcheck`` and ``gradgradcheck``.

Same interface, defaults and semantics as ``torch.autograd.gradcheck`` /
``torch.autograd.gradgradcheck``:

- the numerical Jacobian comes from central differences ``(f(x + eps) - f(x - eps)) /
  (2 eps)``, one input element at a time (the element is written in place under
  ``no_grad`` and restored afterwards, so non-contiguous inputs work), accumulated in
  float64;
- the analytical Jacobian comes from ``ember_autograd.grad`` with a one-hot
  ``grad_outputs`` per output element (reverse mode), or from forward-mode dual tensors
  with a one-hot tangent per input element (``check_forward_ad=True``);
- the two are compared with ``allclose(analytical, numerical, rtol, atol)``, i.e.
  ``|a - n| <= atol + rtol * |n|``. A mismatch raises :class:`GradcheckError` (a
  ``RuntimeError``), or returns ``False`` with ``raise_exception=False``.

Jacobians are laid out as in PyTorch: one per (input, output) pair, with a row per input
element and a column per output element.

Differences from PyTorch (documented, not silent):

- ``fast_mode=True`` runs the same (slow, exact) check: every Jacobian entry is compared,
  which is stricter than PyTorch's random-projection fast mode, and slower.
- ``check_batched_grad`` / ``check_batched_forward_grad``: ember has no vmap; the batched
  gradients would be computed one by one, which is exactly what the plain check does, so
  these flags add nothing.
- ``masked`` is accepted for compatibility (ember has no sparse tensors) and ignored.

Complex inputs and outputs follow PyTorch's convention (the gradient of a real loss with
respect to ``z`` is ``dL/d(re z) + i dL/d(im z)``): every complex tensor is checked as the
pair of its real and imaginary parts. The numerical Jacobian perturbs the two parts of each
complex input element separately (two rows), and the analytical one runs backward with a
``grad_output`` of ``1`` and of ``1j`` at each complex output element (two columns), reading
each complex gradient as its two parts. This is the Jacobian of the function seen as a map
between real vector spaces, which PyTorch's Wirtinger-based check also compares.

NumPy (which holds the Jacobians) is imported by the checks, not with ember_autograd.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import ember_tensor as et

from . import grad_mode

if TYPE_CHECKING:
    import numpy as np

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]

_FLOAT = (et.float16, et.bfloat16, et.float32, et.float64)
_COMPLEX = (et.complex64, et.complex128)


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` / :func:`gradgradcheck` when a check fails."""


# ----------------------------------------------------------------------------- helpers


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_tensor(x) -> bool:
    return isinstance(x, et.Tensor)


def _is_float(t) -> bool:
    """Float or complex: the dtypes that carry gradients."""
    return t.dtype in _FLOAT or t.dtype in _COMPLEX


def _real_size(t) -> int:
    """The number of real values ``t`` holds (two per complex element)."""
    return t.numel() * (2 if t.dtype in _COMPLEX else 1)


def _unit(t, flat_index: int):
    """A tensor of ``t``'s shape and dtype, zero but for one real value: element
    ``flat_index // 2`` set to 1 (even index) or 1j (odd) for a complex ``t``, element
    ``flat_index`` set to 1 otherwise."""
    import numpy as np
    if t.dtype in _COMPLEX:
        u = np.zeros(t.numel(), dtype=np.complex128)
        u[flat_index // 2] = 1.0 if flat_index % 2 == 0 else 1.0j
    else:
        u = np.zeros(t.numel(), dtype=np.float64)
        u[flat_index] = 1.0
    return et.from_numpy(u.reshape(tuple(t.shape))).to(t.dtype)


def _differentiable_outputs(outputs) -> tuple:
    return tuple(o for o in _as_tuple(outputs) if _is_tensor(o) and o.requires_grad)


def _to_numpy(t) -> np.ndarray:
    """A float64 NumPy copy of ``t`` (any dtype, any strides); a complex ``t`` becomes the
    flat sequence of its elements' (real, imaginary) pairs."""
    import numpy as np
    t = t.detach()
    if t.dtype in (et.float16, et.bfloat16):
        t = t.to(et.float64)
    if t.dtype in _COMPLEX:
        return np.array(t.numpy(), dtype=np.complex128).reshape(-1).view(np.float64)
    return np.array(t.numpy(), dtype=np.float64, copy=True)


def _as_ember(a: np.ndarray):
    import numpy as np
    return et.from_numpy(np.ascontiguousarray(a, dtype=np.float64))


def _fail(msg: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(msg)
    return False


def _mismatch_msg(analytical, numerical, out_idx: int, inp_idx: int, forward: bool) -> str:
    mode = " computed with forward mode" if forward else ""
    return (
        f"Jacobian{mode} mismatch for output {out_idx} with respect to input {inp_idx},\n"
        f"numerical:{_as_ember(numerical)!r}\nanalytical:{_as_ember(analytical)!r}\n"
    )


def _check_inputs(tupled_inputs) -> bool:
    any_grad = False
    for idx, inp in enumerate(tupled_inputs):
        if _is_tensor(inp) and inp.requires_grad:
            any_grad = True
            if inp.dtype not in (et.float64, et.complex128):
                warnings.warn(
                    f"Input #{idx} requires gradient and is not a double precision floating "
                    "point or complex. This check will likely fail if all the inputs are not "
                    "of double precision floating point or complex. ",
                    UserWarning,
                    stacklevel=3,
                )
    if not any_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, "
            "but none of the them have requires_grad=True."
        )
    return True


def _iter_indices(shape):
    import numpy as np
    return np.ndindex(*tuple(shape)) if len(shape) else iter([()])


# ----------------------------------------------------------------------------- numerical


def _numerical_jacobian(func, inputs, out_selector, eps: float) -> list[list[np.ndarray]]:
    """``J[i][k]`` (input i requiring grad, output k chosen by ``out_selector``): a float64
    array of shape (real size of input i, real size of output k) by central differences
    (the two parts of a complex element are perturbed one after the other)."""
    import numpy as np
    diff_inputs = [i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]
    jac: list[list[np.ndarray]] = []
    for i in diff_inputs:
        x = inputs[i]
        n_in = _real_size(x)
        steps = (eps, eps * 1j) if x.dtype in _COMPLEX else (eps,)
        cols: list[list[np.ndarray]] | None = None
        r = 0
        for idx in _iter_indices(x.shape):
            for step in steps:
                with grad_mode.no_grad():
                    orig = x[idx].item()
                    x[idx] = orig - step
                minus = [_to_numpy(o).reshape(-1) for o in out_selector(func(*inputs))]
                with grad_mode.no_grad():
                    x[idx] = orig + step
                plus = [_to_numpy(o).reshape(-1) for o in out_selector(func(*inputs))]
                with grad_mode.no_grad():
                    x[idx] = orig
                if cols is None:
                    cols = [np.zeros((n_in, p.size), dtype=np.float64) for p in plus]
                for k, (p, m) in enumerate(zip(plus, minus)):
                    cols[k][r, :] = (p - m) / (2.0 * eps)
                r += 1
        if cols is None:  # zero-size input: ask the function for the output sizes
            outs = out_selector(func(*inputs))
            cols = [np.zeros((0, _real_size(o)), dtype=np.float64) for o in outs]
        jac.append(cols)
    return jac


# ----------------------------------------------------------------------------- analytical


def _vjp_rows(output, diff_inputs, flat_index: int):
    """The gradients with respect to ``diff_inputs`` for the grad_output that is zero but
    for the real value ``flat_index`` of ``output`` (see ``_unit``)."""
    from . import grad as autograd_grad

    go = _unit(output, flat_index)
    return autograd_grad(output, diff_inputs, go, retain_graph=True, allow_unused=True)


def _analytical_jacobian_reverse(func, inputs, nondet_tol: float, check_grad_dtypes: bool):
    """Per differentiable output k and input i: the Jacobian by reverse mode (twice, for the
    reentrancy check). Returns (jacobians[i][k], error message or None)."""
    import numpy as np
    diff_inputs = [x for x in inputs if _is_tensor(x) and x.requires_grad]
    outputs = _differentiable_outputs(func(*inputs))
    jac = [[None] * len(outputs) for _ in diff_inputs]
    for k, out in enumerate(outputs):
        n_out = _real_size(out)
        j1 = [np.zeros((_real_size(x), n_out), dtype=np.float64) for x in diff_inputs]
        j2 = [np.zeros((_real_size(x), n_out), dtype=np.float64) for x in diff_inputs]
        for c in range(n_out):
            for rep, j in ((0, j1), (1, j2)):
                grads = _vjp_rows(out, diff_inputs, c)
                for i, (g, x) in enumerate(zip(grads, diff_inputs)):
                    if g is None:
                        continue
                    if rep == 0:
                        if check_grad_dtypes and g.dtype != x.dtype:
                            return jac, "Gradient has dtype mismatch"
                        if tuple(g.shape) != tuple(x.shape):
                            return jac, "Analytical gradient has incorrect size"
                    j[i][:, c] = _to_numpy(g).reshape(-1)
        for i in range(len(diff_inputs)):
            if j1[i].size and np.max(np.abs(j1[i] - j2[i])) > nondet_tol:
                return jac, (
                    f"Backward is not reentrant, i.e., running backward with same input and "
                    f"grad_output multiple times gives different values, although analytical "
                    f"gradient matches numerical gradient.The tolerance for nondeterminism was "
                    f"{nondet_tol}."
                )
            jac[i][k] = j1[i]
    return jac, None


def _analytical_jacobian_forward(func, inputs):
    """``J[i][k]`` by forward mode: a one-hot tangent per real value of input i."""
    import numpy as np

    from . import forward_ad as fwad

    diff_idx = [i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]
    jac: list[list[np.ndarray]] = []
    for i in diff_idx:
        x = inputs[i]
        n_in = _real_size(x)
        cols: list[np.ndarray] | None = None
        for r in range(n_in):
            tangent = _unit(x, r)
            with fwad.dual_level():
                args = list(inputs)
                for j in diff_idx:
                    primal = inputs[j].detach()
                    tan = tangent if j == i else et.zeros_like(primal)
                    args[j] = fwad.make_dual(primal, tan)
                outs = [o for o in _as_tuple(func(*args)) if _is_tensor(o) and _is_float(o)]
                tans = []
                for o in outs:
                    tt = fwad.unpack_dual(o)[1]
                    v = np.zeros(_real_size(o)) if tt is None else _to_numpy(tt).reshape(-1)
                    tans.append(v)
            if cols is None:
                cols = [np.zeros((n_in, v.size), dtype=np.float64) for v in tans]
            for k, v in enumerate(tans):
                cols[k][r, :] = v
        jac.append(cols or [])
    return jac


# ----------------------------------------------------------------------------- checks


def _check_undefined_grad(func, inputs, raise_exception: bool) -> bool:
    """Each output's node must accept an undefined (None) gradient and give None or zeros."""
    outputs = _differentiable_outputs(func(*inputs))
    for out in outputs:
        fn = out.grad_fn
        if fn is None:
            continue
        try:
            res = fn.apply([None] * getattr(fn, "_num_outputs", 1))
        except Exception as e:  # any failure is the finding
            return _fail(
                "Expected backward function to handle undefined output grads. Please look at "
                "\"Notes about undefined output gradients\" in derivatives.yaml"
                f" (calling {fn.name()} with undefined gradients raised {type(e).__name__}: {e})."
                " Call gradcheck with check_undefined_grad=False to disable this check.",
                raise_exception,
            )
        for g in res or ():
            if g is not None and _to_numpy(g).any():
                return _fail(
                    "Expected backward function to handle undefined output grads: "
                    f"{fn.name()} returned a nonzero gradient for undefined output gradients.",
                    raise_exception,
                )
    return True


def gradcheck(
    func,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Checks the gradients of ``func(*inputs)`` with respect to the inputs that require
    grad against central finite differences (PyTorch's ``torch.autograd.gradcheck``).

    ``inputs`` is a tensor or a tuple of arguments (tensors and anything else). Use float64
    inputs: lower precisions warn, and will likely fail at the default tolerances.

    Returns True when every Jacobian matches; otherwise raises :class:`GradcheckError`
    (``raise_exception=True``) or returns False. ``fast_mode`` runs the full (slow) check;
    see the module docstring for the other differences from PyTorch."""
    import numpy as np
    del check_batched_grad, check_batched_forward_grad, fast_mode, masked  # see docstring
    tupled = _as_tuple(inputs)
    _check_inputs(tupled)
    if not check_backward_ad and not check_forward_ad:
        raise ValueError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )

    outputs = func(*tupled)
    diff_out_pos = [
        k for k, o in enumerate(_as_tuple(outputs)) if _is_tensor(o) and o.requires_grad
    ]
    del outputs

    if not diff_out_pos and not check_forward_ad:
        # nothing differentiable came out: the function must be locally constant
        numerical = _numerical_jacobian(
            func, tupled,
            lambda outs: [o for o in _as_tuple(outs) if _is_tensor(o) and _is_float(o)], eps,
        )
        for per_in in numerical:
            for j in per_in:
                if j.size and np.any(np.abs(j) > 0):
                    return _fail("Numerical gradient for function expected to be zero",
                                 raise_exception)
        return True

    if check_backward_ad:

        def select(outs):
            outs = _as_tuple(outs)
            return [outs[k] for k in diff_out_pos]

        numerical = _numerical_jacobian(func, tupled, select, eps)
        analytical, err = _analytical_jacobian_reverse(func, tupled, nondet_tol, check_grad_dtypes)
        # mismatches are reported before reentrancy problems, as in PyTorch
        for i, per_in in enumerate(numerical):
            for k, n in enumerate(per_in):
                a = analytical[i][k]
                if a is None:
                    continue
                if not np.allclose(a, n, rtol=rtol, atol=atol):
                    return _fail(_mismatch_msg(a, n, k, i, False), raise_exception)
        if err is not None:
            return _fail(err, raise_exception)
        if check_undefined_grad and not _check_undefined_grad(func, tupled, raise_exception):
            return False

    if check_forward_ad:

        def select_float(outs):
            return [o for o in _as_tuple(outs) if _is_tensor(o) and _is_float(o)]

        numerical = _numerical_jacobian(func, tupled, select_float, eps)
        analytical = _analytical_jacobian_forward(func, tupled)
        for i, per_in in enumerate(numerical):
            for k, n in enumerate(per_in):
                a = analytical[i][k] if k < len(analytical[i]) else np.zeros_like(n)
                if not np.allclose(a, n, rtol=rtol, atol=atol):
                    return _fail(_mismatch_msg(a, n, k, i, True), raise_exception)
    return True


def _random_grad_outputs(outputs, noncontiguous: bool, seed: int = 0):
    import numpy as np
    rng = np.random.default_rng(seed)
    res = []
    for o in outputs:
        dtype = o.dtype if _is_float(o) else et.float64
        shape = tuple(o.shape)
        complex_ = dtype in _COMPLEX

        def draw(size, complex_=complex_):
            v = rng.uniform(-1.0, 1.0, size=size)
            return v + 1j * rng.uniform(-1.0, 1.0, size=size) if complex_ else v

        if noncontiguous and len(shape) and o.numel() > 1:
            big = draw(shape[:-1] + (shape[-1] * 2,))
            g = et.from_numpy(big).to(dtype)[..., ::2]
        else:
            g = et.from_numpy(draw(shape)).to(dtype)
        res.append(g.requires_grad_())
    return tuple(res)


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Checks second derivatives (PyTorch's ``torch.autograd.gradgradcheck``): gradcheck of
    ``(inputs, grad_outputs) -> autograd.grad(func(*inputs), inputs, grad_outputs,
    create_graph=True)``. Without ``grad_outputs``, random ones (uniform in [-1, 1), fixed
    seed, requiring grad; non-contiguous with ``gen_non_contig_grad_outputs``) are used."""
    from . import grad as autograd_grad

    tupled = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _differentiable_outputs(func(*tupled))
        tupled_grad_outputs = _random_grad_outputs(outs, gen_non_contig_grad_outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    n_go = len(tupled_grad_outputs)
    diff_in = {i for i, x in enumerate(tupled) if _is_tensor(x) and x.requires_grad}
    diff_go = {i for i, x in enumerate(tupled_grad_outputs) if _is_tensor(x) and x.requires_grad}

    def vjp(*args):
        ins = args[: len(args) - n_go] if n_go else args
        gos = args[len(args) - n_go:] if n_go else ()
        ins = tuple(x.requires_grad_() if i in diff_in and not x.requires_grad else x
                    for i, x in enumerate(ins))
        gos = tuple(x.requires_grad_() if i in diff_go and not x.requires_grad else x
                    for i, x in enumerate(gos))
        outs = _differentiable_outputs(func(*ins))
        wrt = tuple(x for i, x in enumerate(ins) if i in diff_in)
        grads = autograd_grad(outs, wrt, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        vjp,
        tupled + tuple(tupled_grad_outputs),
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
        fast_mode=fast_mode,
        masked=masked,
    )
