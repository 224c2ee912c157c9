"""``parameters_to_vector`` and ``vector_to_parameters``."""

from __future__ import annotations

import ember_tensor as et

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_device(param, device):
    if device is not None and param.device != device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return param.device


def parameters_to_vector(parameters):
    """All ``parameters`` flattened and concatenated into one 1-d tensor (differentiable
    with respect to them)."""
    device = None
    pieces = []
    for param in parameters:
        device = _check_device(param, device)
        pieces.append(param.reshape(-1))
    return et.cat(pieces)


def vector_to_parameters(vec, parameters) -> None:
    """Makes each parameter's data the next slice of the 1-d ``vec`` (shared, not copied:
    the parameters become views of ``vec``'s storage)."""
    if not isinstance(vec, et.Tensor):
        from ..modules.module import _typename

        raise TypeError(f"expected ember.Tensor, but got: {_typename(vec)}")
    device = None
    offset = 0
    for param in parameters:
        device = _check_device(param, device)
        n = param.numel()
        param.data = vec[offset:offset + n].view_as(param).data
        offset += n
