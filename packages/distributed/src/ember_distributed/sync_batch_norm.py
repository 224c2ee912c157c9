"""``SyncBatchNorm`` across processes: the statistics of every rank's batch together.

Installed into ``ember_nn`` when this component is imported (nn cannot depend on
distributed). In training, with a process group of more than one rank: per channel, the
sum of the samples and their count are summed over the group, then the sum of squared
deviations from the global mean (two passes: no cancellation in ``E[x^2] - E[x]^2``). Both
sums go through the differentiable all_reduce, so backward sums the statistics' gradients
over the group, which is what makes every rank's input gradient right. The running
statistics move towards the global mean and the unbiased global variance.
"""

from __future__ import annotations

import ember_autograd as autograd
import ember_tensor as et
from ember_nn.modules import batchnorm

from . import distributed_c10d as c10d
from .nn.functional import all_reduce

__all__ = ["sync_batch_norm"]


def sync_batch_norm(module, input, factor: float):
    """The training forward of ``module`` (a SyncBatchNorm) over every rank's batch; None
    when there is no group to synchronise with."""
    if not c10d.is_initialized():
        return None
    group = module.process_group
    pg = c10d._resolve(group)
    if pg.size() == 1:
        return None
    C = input.shape[1]
    dims = [0] + list(range(2, input.dim()))
    shape = [1, C] + [1] * (input.dim() - 2)
    local_n = input.numel() // C
    x = input if input.dtype in (et.float32, et.float64) else input.float()
    count = et.tensor([float(local_n)], dtype=x.dtype)
    sums = all_reduce(et.cat([x.sum(dims), count]), group=group)
    n = sums[C]
    total = int(n.item())
    if total <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{list(input.shape)} on every rank together")
    mean = sums[:C] / n
    centered = x - mean.view(shape)
    var = all_reduce((centered * centered).sum(dims), group=group) / n
    y = centered * (var + module.eps).rsqrt().view(shape)
    if module.weight is not None:
        y = y * module.weight.view(shape)
    if module.bias is not None:
        y = y + module.bias.view(shape)
    if module.track_running_stats and module.running_mean is not None:
        with autograd.no_grad():
            m, v = mean.detach(), var.detach() * (total / (total - 1))
            module.running_mean.mul_(1 - factor).add_(m.to(module.running_mean.dtype) * factor)
            module.running_var.mul_(1 - factor).add_(v.to(module.running_var.dtype) * factor)
    return y.to(input.dtype)


batchnorm.set_cross_process_norm(sync_batch_norm)
