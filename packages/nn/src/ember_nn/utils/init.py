"""``ember.nn.utils.skip_init``: a module built without initializing its parameters."""

from __future__ import annotations

import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` whose parameters and buffers the caller is to
    initialize (their values are unspecified). The class must take a ``device`` argument;
    ``device`` in ``kwargs`` (default ``"cpu"``) is where the module is built.

    Difference from PyTorch: Ember has no ``meta`` device, so the module is built normally
    on ``device`` and its initialization runs (no time or memory is saved); the values are
    those of the default initialization, which callers must not rely on either way.

    Raises ``RuntimeError`` when ``module_cls`` is not a ``Module`` subclass or takes no
    ``device`` argument (``TypeError`` when it is not a class).

    >>> import ember_nn as nn
    >>> from ember_nn.utils import skip_init
    >>> m = skip_init(nn.Linear, 5, 1)
    >>> tuple(m.weight.shape), str(m.weight.device)
    ((1, 5), 'cpu')
    """
    from ..modules.module import Module

    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    return module_cls(*args, **kwargs)
