"""``ember.nn.utils.stateless``: ``functional_call``, a module called with other
parameters and buffers than its own (PyTorch's ``torch.nn.utils.stateless`` and
``torch.func.functional_call``).

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> from ember_nn.utils.stateless import functional_call
>>> m = nn.Linear(2, 1)
>>> params = {"weight": et.ones(1, 2), "bias": et.zeros(1)}
>>> functional_call(m, params, (et.tensor([[1.0, 2.0]]),)).tolist()
[[3.0]]
>>> m.weight is params["weight"]  # the module's own tensors are back
False
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

import ember_tensor as et

if TYPE_CHECKING:  # the layer modules import utils.hooks: no import cycle at run time
    from ..modules.module import Module

__all__ = ["functional_call"]

_MISSING = object()


def _submodule(root: Module, path: str, memo: dict) -> Module:
    """The submodule at the dotted ``path`` (``""``: ``root``)."""
    if not path:
        return root
    if path in memo:
        return memo[path]
    parent_path, _, attr = path.rpartition(".")
    from ..modules.module import Module

    parent = _submodule(root, parent_path, memo)
    try:
        sub = getattr(parent, attr)
    except AttributeError as ex:
        raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from ex
    if not isinstance(sub, Module):
        raise TypeError(f"submodule `{path}`: {sub} is not an instance of ember.nn.Module")
    memo[path] = sub
    return sub


def _swap_tensor(module: Module, name: str, tensor):
    """Puts ``tensor`` (or, for ``_MISSING``, nothing) under ``name`` in ``module`` (its
    parameter or buffer slot when it has one, a plain attribute otherwise); returns what
    was there (``_MISSING`` when nothing)."""
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, et.Tensor):
        raise TypeError(f"{tensor} is not an instance of ember.Tensor")
    if name in module._parameters:
        orig = module._parameters[name]
        if tensor is _MISSING:
            del module._parameters[name]
        else:
            module._parameters[name] = tensor
    elif name in module._buffers:
        orig = module._buffers[name]
        if tensor is _MISSING:
            del module._buffers[name]
        else:
            module._buffers[name] = tensor
    else:
        orig = getattr(module, name, _MISSING)
        if orig is not _MISSING and orig is not None and not isinstance(orig, et.Tensor):
            raise TypeError(f"attribute `{name}`: {orig} is not an instance of ember.Tensor")
        if tensor is not _MISSING:
            setattr(module, name, tensor)
        elif hasattr(module, name):
            delattr(module, name)
    return orig


def _swap_all(root: Module, named: dict, memo: dict) -> dict:
    """Swaps every ``dotted name -> tensor`` of ``named`` in; returns the previous values
    (all restored when one swap fails)."""
    previous: dict = {}
    try:
        for name, tensor in named.items():
            path, _, attr = name.rpartition(".")
            previous[name] = _swap_tensor(_submodule(root, path, memo), attr, tensor)
    except Exception:
        _restore(root, previous, memo)
        raise
    return previous


def _restore(root: Module, previous: dict, memo: dict) -> dict:
    current = {}
    for name, tensor in previous.items():
        path, _, attr = name.rpartition(".")
        current[name] = _swap_tensor(_submodule(root, path, memo), attr, tensor)
    return current


def _untie(module: Module, given: dict) -> dict:
    """``given`` extended to every name of a tied tensor (one object under several names)
    one of whose names is given. Raises ``ValueError`` when tied names get different
    tensors."""
    names_of: dict[int, set] = {}
    named = list(module.named_parameters(remove_duplicate=False))
    named += list(module.named_buffers(remove_duplicate=False))
    for name, tensor in named:
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    given_tied = {name for name in given if name in tied}
    for name in given_tied:
        names = tied[name]
        values = {id(given[n]) for n in names if n in given_tied}
        if len(values) > 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(names)}, which are "
                "tied. Consider using tie_weights=False"
            )
    untied = dict(given)
    for name in given_tied:
        for other in tied[name]:
            untied[other] = given[name]
    return untied


@contextlib.contextmanager
def _reparametrize_module(module: Module, parameters_and_buffers: dict,
                          tie_weights: bool = False, strict: bool = False):
    named = _untie(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        valid = {name for name, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {name for name, _ in module.named_buffers(remove_duplicate=False)}
        missing = sorted(valid - set(named))
        unexpected = sorted(set(named) - valid)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError(
                "Error(s) in reparametrizing for {}:\n\t{}".format(
                    module._get_name(), "\n\t".join(msgs)
                )
            )
    memo: dict = {}
    previous: dict = {}
    try:
        previous = _swap_all(module, named, memo)
        yield
    finally:
        current = _restore(module, previous, memo)
        # what forward assigned to a given name goes back into the caller's dict
        parameters_and_buffers.update(
            {k: current[k] for k in parameters_and_buffers if k in current}
        )


def functional_call(module: Module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """``module(*args, **kwargs)`` with the parameters and buffers named (dotted names, as
    in ``state_dict()``) in ``parameter_and_buffer_dicts`` (a dict, or a list/tuple of
    dicts without common keys) in place of the module's own; names not given keep the
    module's tensors. The module's tensors are put back afterwards, also when the call
    raises. Gradients flow to the given tensors.

    ``args`` is a tuple of positional arguments (a single non-tuple value is one argument),
    ``kwargs`` a dict. With ``tie_weights`` (default), a tensor the module holds under
    several names (tied weights) is replaced under all of them when one is given. With
    ``strict``, the names given must be exactly the module's parameters and buffers.

    Raises ``ValueError`` when tied names get different tensors or the dicts repeat a key,
    ``RuntimeError`` for missing or unexpected names with ``strict``.

    >>> import ember_tensor as et
    >>> import ember_nn as nn
    >>> from ember_nn.utils.stateless import functional_call
    >>> m = nn.Linear(1, 1)
    >>> w = et.tensor([[2.0]], requires_grad=True)
    >>> out = functional_call(m, {"weight": w, "bias": et.zeros(1)}, et.tensor([[3.0]]))
    >>> out.sum().backward()
    >>> w.grad.tolist()
    [[3.0]]
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError(
                "Expected all elements of parameter_and_buffer_dicts to be dictionaries"
            )
        counts: dict = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call "
                "is ambiguous"
            )
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, "
            f"but got {type(parameter_and_buffer_dicts)}"
        )
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights,
                               strict=strict):
        return module(*args, **kwargs)
