"""ember.autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp (PyTorch's
``torch.autograd.functional``, same signatures, results and errors).

``inputs`` is a Tensor or a tuple of Tensors and results mirror it: a tuple where a tuple was
given. The inputs are used through fresh tensors (detached unless ``create_graph`` and they
require grad), so results have no history unless ``create_graph=True``. ``strict=True``
raises where some output (or gradient) is independent of some input, instead of returning
zeros.

``jvp`` and ``hvp`` use the double-backward trick, as PyTorch does; ``jacobian`` with
``strategy="forward-mode"`` (and ``hessian`` with ``outer_jacobian_strategy="forward-mode"``)
use ``ember_autograd.forward_ad``, one dual evaluation per input element. ``vectorize=True``
gives the same results as ``False`` (ember has no vmap; the products are computed one by
one), keeping PyTorch's rules on which combinations are allowed.
"""

from __future__ import annotations

import ember_tensor as et

from . import forward_ad, grad_mode

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


# ----------------------------------------------------------------------------- helpers


def _as_tuple(inp, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, et.Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but the {where} has type {type(el)}."
            )
    return is_tuple, items


def _unpack(res, flags):
    """Undoes ``_as_tuple`` on a result: ``flags`` is one bool, or (outer, inner) for a
    tuple of tuples (jacobian: outputs x inputs)."""
    if isinstance(flags, tuple):
        outer, inner = flags
        if not inner:
            res = tuple(r[0] for r in res)
        if not outer:
            res = res[0]
        return res
    return res if flags else res[0]


def _prepare(tensors, create_graph: bool, need_graph: bool) -> tuple:
    """New tensor objects for the inputs: differentiable views with ``create_graph`` (so the
    result keeps the inputs' history), detached leaves otherwise."""
    out = []
    for t in tensors:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(tensors, create_graph: bool):
    if create_graph:
        return tuple(tensors)
    if tensors and isinstance(tensors[0], et.Tensor):
        return tuple(t.detach() for t in tensors)
    return tuple(_finish(t, create_graph) for t in tensors)


def _check_v(v, other, other_is_tuple: bool) -> None:
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.size() != b.size():
            entry = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(
                f"{entry}v has invalid size: should be {b.size()} but got {a.size()}."
            )


def _strict_check(tensors, what: str, strict: bool) -> None:
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode."
            )
        if t.requires_grad:
            continue
        if what == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs."
            )
        if what == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example)."
            )
        if what == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode."
            )
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The "
            "outputs must be computed in a differentiable manner from the input when running "
            "in strict mode."
        )


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None) -> tuple:
    """autograd.grad over the outputs that require grad (None for an unreachable input)."""
    from . import grad as autograd_grad

    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    outs, gos = [], []
    for o, g in zip(outputs, grad_outputs):
        if o is not None and o.requires_grad:
            outs.append(o)
            gos.append(g)
    if not outs:
        return (None,) * len(inputs)
    return autograd_grad(
        outs, inputs, gos, retain_graph=retain_graph, create_graph=create_graph,
        allow_unused=True,
    )


_STAGE_NONE = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
    "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
    "grad_outputs when using the double backward trick to compute forward mode gradients. "
    "This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
    "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
    "{i} in the grad_jacobian. This is not allowed in strict mode as it prevents from using "
    "the double backward trick to replace forward mode AD.",
}


def _zeros_for_none(grads, refs, strict: bool, create_graph: bool, stage: str) -> tuple:
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STAGE_NONE[stage].format(i=i))
            g = et.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            kind = "hessian" if stage.startswith("double") else "jacobian"
            raise RuntimeError(
                f"The {kind} of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode when create_graph=True."
            )
        out.append(g)
    return tuple(out)


def _grad_mode_for(create_graph: bool):
    return grad_mode.set_grad_enabled(True if create_graph else grad_mode.is_grad_enabled())


def _prepared_inputs(inputs, create_graph: bool, name: str) -> tuple[bool, tuple]:
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    return inputs_tuple, _prepare(inputs, create_graph, True)


def _call(func, inputs, strict: bool, name: str) -> tuple[bool, tuple]:
    """``func(*inputs)`` as a tuple (and whether it was one), checked under ``strict``."""
    outputs_tuple, outputs = _as_tuple(
        func(*inputs), "outputs of the user-provided function", name
    )
    _strict_check(outputs, "outputs", strict)
    return outputs_tuple, outputs


_V_NONE_OUTPUTS = (
    "The vector v can only be None if the user-provided function returns a single "
    "Tensor with a single element."
)
_V_NONE_INPUTS = (
    "The vector v can only be None if the input to the user-provided function is a "
    "single Tensor with a single element."
)


def _vector(v, like, like_tuple: bool, create_graph: bool, name: str, none_message: str):
    """``v`` as a tuple of fresh tensors shaped like ``like``; None only where ``like`` is
    one single-element tensor (else ``none_message``)."""
    if v is not None:
        _, v = _as_tuple(v, "v", name)
        v = _prepare(v, create_graph, False)
        _check_v(v, like, like_tuple)
    elif len(like) != 1 or like[0].numel() != 1:
        raise RuntimeError(none_message)
    return v


def _inputs_and_v(inputs, v, create_graph: bool, name: str):
    inputs_tuple, inputs = _prepared_inputs(inputs, create_graph, name)
    v = _vector(v, inputs, inputs_tuple, create_graph, name, _V_NONE_INPUTS)
    return inputs_tuple, inputs, v


def _results(outputs, outputs_tuple, res, res_tuple, create_graph: bool) -> tuple:
    """``(outputs, res)``, detached unless ``create_graph``, each mirroring its argument."""
    return (
        _unpack(_finish(outputs, create_graph), outputs_tuple),
        _unpack(_finish(res, create_graph), res_tuple),
    )


# ----------------------------------------------------------------------------- vjp / jvp


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``. ``v`` (shaped
    like the outputs) may be omitted for a function returning one single-element tensor."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _prepared_inputs(inputs, create_graph, "vjp")
        outputs_tuple, outputs = _call(func, inputs, strict, "vjp")
        v = _vector(v, outputs, outputs_tuple, create_graph, "vjp", _V_NONE_OUTPUTS)
    with _grad_mode_for(create_graph):
        grads = _grad(outputs, inputs, v, create_graph=create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "back")
    return _results(outputs, outputs_tuple, result, inputs_tuple, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian-vector product at ``inputs``. ``v`` (shaped like
    the inputs) may be omitted for a single single-element input. Computed with the
    double-backward trick (the vjp's gradient with respect to its vector)."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs, v = _inputs_and_v(inputs, v, create_graph, "jvp")
        outputs_tuple, outputs = _call(func, inputs, strict, "jvp")
        # u -> u^T J is linear in u: its gradient with respect to u, applied to v, is J v
        dummies = tuple(et.zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, dummies, create_graph=True)
        _strict_check(grad_inputs, "grad_inputs", strict)
    with _grad_mode_for(create_graph):
        res = _grad(grad_inputs, dummies, v, create_graph=create_graph)
        res = _zeros_for_none(res, outputs, strict, create_graph, "back_trick")
    return _results(outputs, outputs_tuple, res, outputs_tuple, create_graph)


# ----------------------------------------------------------------------------- jacobian


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for output ``i`` and input ``j`` a tensor of
    shape ``outputs[i].shape + inputs[j].shape``; nested tuples mirror tuple outputs/inputs."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "ember.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.'
            )
        return _jacobian_forward(func, inputs, strict, vectorize)
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _prepared_inputs(inputs, create_graph, "jacobian")
        outputs_tuple, outputs = _call(func, inputs, strict, "jacobian")
        if vectorize and strict:
            raise RuntimeError(
                "ember.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                "not supported together. Please either set `strict=False` or "
                "`vectorize=False`."
            )
        result = []
        for i, out in enumerate(outputs):
            rows: list[list] = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(out.numel()):
                vj = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
                for j, (g, inp) in enumerate(zip(vj, inputs)):
                    if g is not None:
                        if strict and create_graph and not g.requires_grad:
                            raise RuntimeError(
                                "The jacobian of the user-provided function is independent of "
                                f"input {i}. This is not allowed in strict mode when "
                                "create_graph=True."
                            )
                        rows[j].append(g)
                    else:
                        if strict and not vectorize:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {j}. This is not allowed in strict mode."
                            )
                        rows[j].append(et.zeros_like(inp))
            result.append(tuple(
                _stack_rows(rows[j], out.shape, inp) for j, inp in enumerate(inputs)
            ))
        result = _finish(tuple(result), create_graph)
        return _unpack(result, (outputs_tuple, inputs_tuple))


def _stack_rows(rows: list, out_shape, inp):
    shape = (*out_shape, *inp.shape)
    if not rows:
        return et.zeros(shape, dtype=inp.dtype)
    return et.stack(rows, 0).view(shape)


def _jacobian_forward(func, inputs, strict: bool, vectorize: bool):
    """Columns of the Jacobian from dual evaluations, one per input element."""
    if strict:
        raise RuntimeError(
            "ember.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` "
            "are not supported together (yet). Please either set `strict=False` or "
            '`strategy="reverse-mode"`.'
        )
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
            "implemented for `vectorize=True`."
        )
    columns: list[list] | None = None  # per output, per input: list of tangents
    outputs_tuple = False
    primals = None
    for j, inp in enumerate(inputs):
        for k in range(inp.numel()):
            basis = et.zeros(inp.numel(), dtype=inp.dtype)
            basis[k] = 1.0
            basis = basis.view(inp.shape)
            with forward_ad.dual_level():
                duals = tuple(
                    forward_ad.make_dual(x, basis) if n == j else x for n, x in enumerate(inputs)
                )
                outputs_tuple, outs = _as_tuple(func(*duals), "outputs", "jacobian")
                unpacked = [forward_ad.unpack_dual(o) for o in outs]
                tangents = [
                    u.tangent if u.tangent is not None else et.zeros_like(u.primal)
                    for u in unpacked
                ]
                primals = [u.primal for u in unpacked]
            if columns is None:
                columns = [[[] for _ in inputs] for _ in outs]
            for i, t in enumerate(tangents):
                columns[i][j].append(t)
    if columns is None:  # every input is empty: one call gives the outputs' shapes
        outputs_tuple, outs = _as_tuple(func(*inputs), "outputs", "jacobian")
        primals = list(outs)
        columns = [[[] for _ in inputs] for _ in outs]
    result = []
    for i, out in enumerate(primals):
        per_input = []
        for j, inp in enumerate(inputs):
            cols = columns[i][j]
            shape = (*out.shape, *inp.shape)
            if not cols:
                per_input.append(et.zeros(shape, dtype=out.dtype))
                continue
            # stacked along the last dim: (out..., n) then the input's shape
            jac = et.stack([c.reshape(-1) for c in cols], -1)
            per_input.append(jac.reshape(shape))
        result.append(per_input)
    # lists, not tuples, where PyTorch's forward-mode jacobian gives lists
    return _unpack(result, (outputs_tuple, inputs_tuple))


# ----------------------------------------------------------------------------- hessian


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: for inputs ``i`` and ``j`` a tensor of shape
    ``inputs[i].shape + inputs[j].shape`` (nested tuples for tuple inputs)."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*inp):
        _, outs = _scalar_output(func, inp, strict, "hessian")
        return outs[0].squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar_func, inp, create_graph=True)
        _strict_check(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _unpack(res, (inputs_tuple, inputs_tuple))


def _scalar_output(func, inputs, strict: bool, name: str):
    outputs_tuple, outputs = _call(func, inputs, strict, name)
    if outputs_tuple or not isinstance(outputs[0], et.Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {name} should contain a single "
            "element"
        )
    return outputs_tuple, outputs


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for a scalar function (H: its Hessian at ``inputs``)."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs, v = _inputs_and_v(inputs, v, create_graph, "vhp")
        outputs_tuple, outputs = _scalar_output(func, inputs, strict, "vhp")
        jac = _grad(outputs, inputs, create_graph=True)
        _strict_check(jac, "jacobian", strict)
    with _grad_mode_for(create_graph):
        res = _grad(jac, inputs, v, create_graph=create_graph)
        res = _zeros_for_none(res, inputs, strict, create_graph, "double_back")
    return _results(outputs, outputs_tuple, res, inputs_tuple, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for a scalar function, by the double-backward trick (equal to
    ``vhp`` for twice continuously differentiable functions, and slower)."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs, v = _inputs_and_v(inputs, v, create_graph, "hvp")
        outputs_tuple, outputs = _scalar_output(func, inputs, strict, "hvp")
        jac = _grad(outputs, inputs, create_graph=True)
        _strict_check(jac, "jacobian", strict)
        dummies = tuple(et.zeros_like(x, requires_grad=True) for x in inputs)
        double_back = _grad(jac, inputs, dummies, create_graph=True)
        _strict_check(jac, "hessian", strict)
    with _grad_mode_for(create_graph):
        res = _grad(double_back, dummies, v, create_graph=create_graph)
        res = _zeros_for_none(res, inputs, strict, create_graph, "double_back_trick")
    return _results(outputs, outputs_tuple, res, inputs_tuple, create_graph)
