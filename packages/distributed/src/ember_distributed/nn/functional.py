"""Collectives as differentiable functions (``torch.distributed.nn.functional``): they return
new tensors, and backward runs the matching collective on the gradients.

- ``all_reduce(tensor, op=ReduceOp.SUM, group=None)``: the sum over the group; its backward
  sums the gradients over the group (each rank's loss depends on every rank's input);
- ``all_gather(tensor, group=None)``: a tuple of every rank's tensor; backward sums each
  piece's gradient over the group and gives each rank its own.
"""

from __future__ import annotations

import ember_autograd as autograd

from .. import distributed_c10d as c10d

__all__ = ["all_reduce", "all_gather"]


class _AllReduceSum(autograd.Function):
    @staticmethod
    def forward(ctx, tensor, group):
        ctx.group = group
        out = tensor.detach().contiguous().clone()
        c10d.all_reduce(out, c10d.ReduceOp.SUM, group)
        return out

    @staticmethod
    def backward(ctx, grad):
        g = grad.contiguous().clone()
        c10d.all_reduce(g, c10d.ReduceOp.SUM, ctx.group)
        return g, None


def all_reduce(tensor, op=c10d.ReduceOp.SUM, group=None):
    """``tensor`` summed over ``group``, differentiably (only SUM has a gradient rule here,
    as PyTorch's)."""
    if op != c10d.ReduceOp.SUM:
        raise RuntimeError(f"ember.distributed.nn.functional.all_reduce: only ReduceOp.SUM is "
                           f"differentiable, got {op}")
    return _AllReduceSum.apply(tensor, group)


class _AllGather(autograd.Function):
    @staticmethod
    def forward(ctx, tensor, group):
        ctx.group = group
        pg = c10d._resolve(group)
        ctx.rank = pg.rank()
        t = tensor.detach().contiguous()
        outs = [t.new_empty(t.shape) for _ in range(pg.size())]
        c10d.all_gather(outs, t, group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        import ember_tensor as et

        stacked = et.stack([g.contiguous() for g in grads])
        c10d.all_reduce(stacked, c10d.ReduceOp.SUM, ctx.group)
        return stacked[ctx.rank].clone(), None


def all_gather(tensor, group=None):
    """Every rank's ``tensor``, in rank order, differentiably."""
    return _AllGather.apply(tensor, group)
