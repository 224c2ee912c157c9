"""``AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (2017) for large
vocabularies. Frequent classes (below ``cutoffs[0]``) are scored by a head ``Linear``
together with one logit per tail cluster; each cluster's classes by a two-layer projection
narrowed by ``div_value`` per cluster.

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> asm = nn.AdaptiveLogSoftmaxWithLoss(16, 20, cutoffs=[5, 10])
>>> out = asm(et.randn(4, 16), et.tensor([0, 6, 12, 19]))
>>> tuple(out.output.shape), tuple(asm.log_prob(et.randn(4, 16)).shape)
((4,), (4, 20))
"""

from __future__ import annotations

from collections import namedtuple

import ember_tensor as et

from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """``forward(input, target)`` gives ``(output, loss)``: the log-probability of each
    target class (``(N,)`` for ``(N, in_features)`` input and ``(N,)`` targets, or 0-d for
    one sample) and the mean negative log-likelihood. ``log_prob(input)`` gives every
    class's log-probability ``(N, n_classes)``, ``predict(input)`` the most likely class.
    ``cutoffs``: increasing unique ints in [1, n_classes - 1] (else ``ValueError``)."""

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device,
                           dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(
                Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                Linear(hidden, size, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def _check(self, input, target) -> None:
        if target.dim() == 1:
            if input.shape[0] != target.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input.shape}")
        elif target.dim() == 0:
            if input.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input.shape}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")

    def forward(self, input_, target_):
        self._check(input_, target_)
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        if target.numel() and (bool(et.lt(target, 0).any()) or
                               bool(et.ge(target, self.n_classes).any())):
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{target.min().item()}, {target.max().item()}] were found. ")
        bounds = et.tensor(self.cutoffs[:-1], dtype=target.dtype, device=target.device)
        cluster = et.bucketize(target, bounds, right=True)  # 0: the shortlist
        # the head's column: the class itself, or its cluster's logit
        head_index = et.where(et.eq(cluster, 0), target, cluster + (self.shortlist_size - 1))
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = head_logprob.gather(1, head_index.unsqueeze(1)).squeeze(1)
        for i in range(1, self.n_clusters + 1):
            rows = et.eq(cluster, i).nonzero().flatten()
            if rows.numel() == 0:
                continue
            local = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
            relative = target.index_select(0, rows) - self.cutoffs[i - 1]
            output = output.index_add(0, rows, local.gather(1, relative.unsqueeze(1))
                                      .squeeze(1))
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob +
                         head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return et.cat(parts, 1)

    def log_prob(self, input):
        """``(N, n_classes)`` log-probabilities of every class for ``(N, in_features)``
        input."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most likely class of each row of ``(N, in_features)`` input: ``(N,)``."""
        return et.argmax(self.log_prob(input), dim=1)
