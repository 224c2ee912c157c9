"""Device and dtype moves of a module's parameters and buffers: ``Module.to``, ``float``,
``double``, ``half``, ``bfloat16``, ``cpu``, ``cuda`` and the ``_apply`` they share."""

from __future__ import annotations

import ember_tensor as et
from ember_autograd import no_grad

from ..parameter import Parameter

__all__ = ["apply_to_tensors", "parse_to"]


def _is_device_like(x) -> bool:
    return isinstance(x, (str, et.device)) or (isinstance(x, int) and not isinstance(x, bool))


def parse_to(args: tuple, kwargs: dict):
    """``(device, dtype, non_blocking)`` from the arguments of ``Module.to`` (the forms of
    ``Tensor.to``: ``to(device)``, ``to(dtype)``, ``to(tensor)``, ``to(device, dtype)``, and
    the keywords ``device``, ``dtype``, ``non_blocking``, ``memory_format``)."""
    device = dtype = None
    non_blocking = False
    rest = list(args)
    if rest and isinstance(rest[0], et.Tensor):
        other = rest.pop(0)
        device, dtype = other.device, other.dtype
    elif rest and isinstance(rest[0], et.dtype):
        dtype = rest.pop(0)
    elif rest and (_is_device_like(rest[0]) or rest[0] is None):
        device = rest.pop(0)
        if rest and isinstance(rest[0], et.dtype):
            dtype = rest.pop(0)
    if rest and isinstance(rest[0], bool):
        non_blocking = rest.pop(0)
    if rest:
        raise TypeError(
            "to() received an invalid combination of arguments: expected to(device=None, "
            "dtype=None, non_blocking=False), to(dtype, non_blocking=False) or to(tensor, "
            f"non_blocking=False), got {tuple(type(a).__name__ for a in args)}"
        )
    for key, value in kwargs.items():
        if key == "device":
            device = value if value is not None else device
        elif key == "dtype":
            dtype = value if value is not None else dtype
        elif key == "non_blocking":
            non_blocking = bool(value)
        elif key == "memory_format":
            continue  # ember tensors have one (strided) layout
        else:
            raise TypeError(f"to() got an unexpected keyword argument '{key}'")
    if device is not None:
        device = et.device(f"cuda:{device}" if isinstance(device, int) else device)
    if dtype is not None:
        if not isinstance(dtype, et.dtype):
            raise TypeError(f"to(): dtype must be an ember dtype, got {type(dtype).__name__}")
        if not dtype.is_floating_point:
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={dtype}"
            )
    return device, dtype, non_blocking


def apply_to_tensors(module, fn, recurse: bool = True):
    """``fn`` applied to every parameter (with its gradient) and buffer, children first.

    A parameter whose converted tensor keeps its dtype keeps its identity (its storage is
    swapped through ``.data``); one whose dtype changes is replaced by a new ``Parameter``
    (same ``requires_grad``, gradient converted too), because the core's ``.data =`` cannot
    change a tensor's dtype. Optimizers should be made after converting a model.
    """
    if recurse:
        for child in module.children():
            child._apply(fn)
    for key, param in module._parameters.items():
        if param is None:
            continue
        with no_grad():
            applied = fn(param)
        if applied is param:
            out = param
        elif applied.dtype == param.dtype and applied.shape == param.shape:
            param.data = applied
            out = param
        else:
            out = Parameter(applied, param.requires_grad)
            module._parameters[key] = out
        grad = param.grad
        if grad is not None:
            with no_grad():
                grad_applied = fn(grad)
            if grad_applied is grad and out is param:
                continue
            if out is param and grad_applied.dtype == grad.dtype:
                grad.data = grad_applied
            else:
                out.grad = grad_applied.detach().requires_grad_(grad.requires_grad)
    for key, buf in module._buffers.items():
        if buf is not None:
            module._buffers[key] = fn(buf)
    return module


def convert_fn(device, dtype, non_blocking: bool):
    """The per-tensor conversion of ``Module.to``: floating tensors take ``dtype``, every
    tensor moves to ``device``."""

    def convert(t):
        target = dtype if (dtype is not None and t.is_floating_point()) else None
        if device is None and target is None:
            return t
        kwargs = {}
        if device is not None:
            kwargs["device"] = device
        if target is not None:
            kwargs["dtype"] = target
        return t.to(**kwargs, non_blocking=non_blocking)

    return convert
