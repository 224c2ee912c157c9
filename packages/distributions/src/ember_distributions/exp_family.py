"""``ExponentialFamily``: distributions of the form
``p(x) = h(x) exp(<t(x), theta> - F(theta))``, whose entropy follows from the log
normalizer ``F`` by automatic differentiation (Bregman divergence)."""

from __future__ import annotations

import ember_autograd as _autograd

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of exponential-family distributions. A subclass defines
    ``_natural_params``, ``_log_normalizer`` and ``_mean_carrier_measure``; ``entropy``
    and the KL divergence between two members of one family come from them."""

    @property
    def _natural_params(self):
        """The natural parameters (a tuple of tensors)."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """The log normalizer ``F`` as a function of the natural parameters."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """The expectation of the log carrier measure ``log h(x)``."""
        raise NotImplementedError

    def entropy(self):
        """``F(theta) - <theta, grad F(theta)> - E[log h(x)]``, by autograd."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        with _autograd.enable_grad():
            lg_normal = self._log_normalizer(*nparams)
            gradients = _autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients):
            result = result - (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
