"""Batch and instance normalization: ``BatchNorm1d``, ``BatchNorm2d``, ``BatchNorm3d``,
``SyncBatchNorm``, ``InstanceNorm1d``, ``InstanceNorm2d``, ``InstanceNorm3d``.

PyTorch's state: ``weight``/``bias`` (``affine``; keyword ``bias=False`` keeps the weight
only), the buffers ``running_mean``,
``running_var`` and ``num_batches_tracked`` (``track_running_stats``); in training the
running statistics move towards the batch's by ``momentum`` (``momentum=None``: the
cumulative average over the batches seen), in evaluation they normalize the input. A
state_dict of version 1 (without ``num_batches_tracked``) loads with the count at 0.

>>> import ember_tensor as et
>>> import ember_nn as nn
>>> bn = nn.BatchNorm2d(3)
>>> bn
BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
>>> _ = bn(et.randn(4, 3, 2, 2))
>>> int(bn.num_batches_tracked)
1
"""

from __future__ import annotations

import warnings

import ember_tensor as et

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = [
    "SyncBatchNorm",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
]


class _NormBase(Module):
    """The parameters, buffers, their (re)initialisation, repr and state_dict versioning
    that batch and instance normalization share."""

    _version = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(et.empty((num_features,), dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(et.empty((num_features,), dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean",
                                 et.zeros((num_features,), dtype=dtype, device=device))
            self.register_buffer("running_var",
                                 et.ones((num_features,), dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked",
                                 et.tensor(0, dtype=et.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # version 1 had no num_batches_tracked: it starts at 0
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (self.num_batches_tracked
                                   if self.num_batches_tracked is not None
                                   else et.tensor(0, dtype=et.int64,
                                                  device=self.running_mean.device))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    def _momentum_factor(self) -> float:
        """Counts this training batch; the running statistics' update factor."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # the cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        return factor

    def forward(self, input):
        self._check_input_dim(input)
        factor = self._momentum_factor()
        return self._local_forward(input, factor)

    def _local_forward(self, input, factor: float):
        # the batch's statistics in training, or when there are no running ones
        use_batch_stats = self.training or (self.running_mean is None and
                                            self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if keep else None,
            self.running_var if keep else None,
            self.weight,
            self.bias,
            use_batch_stats,
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalization of ``(N, C)`` or ``(N, C, L)`` inputs, per channel."""

    def _check_input_dim(self, input) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization of ``(N, C, H, W)`` inputs, per channel."""

    def _check_input_dim(self, input) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization of ``(N, C, D, H, W)`` inputs, per channel."""

    def _check_input_dim(self, input) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


# How SyncBatchNorm takes its statistics across processes, installed by the distributed
# component (which depends on nn, not the reverse): fn(module, input, factor) -> the output,
# or None where there is nothing to synchronise (no process group, a world of one).
_cross_process_norm = None


def set_cross_process_norm(fn) -> None:
    """Installs ``fn(module, input, factor)``, SyncBatchNorm's training forward across
    processes (None: every SyncBatchNorm normalizes over its own batch)."""
    global _cross_process_norm
    _cross_process_norm = fn


class SyncBatchNorm(_BatchNorm):
    """Batch normalization of ``(N, C, *)`` inputs whose statistics, in training, are taken
    over the batches of every process of ``process_group`` (default: the whole world of
    ``ember.distributed``): mean and variance of all ranks' samples together, gradients
    through them back to every rank. Without an initialized process group, or in a world of
    one process, it normalizes over the local batch, as PyTorch's does.
    ``convert_sync_batchnorm`` swaps the ``BatchNorm*d`` layers of a model for it."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        factor = self._momentum_factor()
        if self.training and _cross_process_norm is not None:
            out = _cross_process_norm(self, input, factor)
            if out is not None:
                return out
        return self._local_forward(input, factor)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every ``BatchNorm*d`` (at any depth) replaced by a
        ``SyncBatchNorm`` that shares its parameters, buffers and mode."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


class _InstanceNorm(_NormBase):
    _spatial = 1  # spatial dimensions of a sample

    def __init__(self, num_features: int, eps: float = 1e-5, momentum=0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input) -> None:
        n = self._spatial
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        no_batch = self._spatial + 1
        feature_dim = input.dim() - no_batch
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features"
                    f" ({self.num_features}), but got: {input.shape[feature_dim]}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can "
                "silence this warning by not passing in num_features, which is not used "
                "because affine=False",
                stacklevel=2,
            )
        unbatched = input.dim() == no_batch
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(
            x, self.running_mean, self.running_var, self.weight, self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0, self.eps,
        )
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of ``(N, C, L)`` or ``(C, L)`` inputs: each channel of each
    sample over its positions."""

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of ``(N, C, H, W)`` or ``(C, H, W)`` inputs."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs."""

    _spatial = 3
