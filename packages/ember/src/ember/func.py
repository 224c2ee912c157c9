"""``ember.func``: ``functional_call``, PyTorch's ``torch.func.functional_call``: a module
called with other parameters and buffers, its own left unchanged (the ``nn`` provider's
``utils.stateless.functional_call``).

>>> import ember
>>> from ember.func import functional_call
>>> lin = ember.nn.Linear(2, 1, bias=False)
>>> functional_call(lin, {"weight": ember.ones(1, 2)}, (ember.ones(1, 2),)).tolist()
[[2.0]]
"""

from __future__ import annotations

__all__ = ["functional_call"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """``module(*args, **kwargs)`` with the named tensors of ``parameter_and_buffer_dicts``
    (a dict, or a sequence of dicts with distinct keys) in place of the module's own, which
    are restored afterwards, even when the call raises."""
    import ember

    stateless = ember.nn.utils.stateless
    return stateless.functional_call(module, parameter_and_buffer_dicts, args, kwargs,
                                     tie_weights=tie_weights, strict=strict)
