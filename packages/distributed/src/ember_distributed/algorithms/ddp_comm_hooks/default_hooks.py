"""PyTorch's default DDP communication hooks: ``hook(process_group, bucket) -> Future`` of the
bucket's averaged gradients, for ``ddp.register_comm_hook(process_group, hook)`` (``None``:
the default group).

- ``allreduce_hook``: the gradients divided by the group's size, then summed across it (what
  DDP does without a hook);
- ``fp16_compress_hook`` / ``bf16_compress_hook``: the same on a float16 / bfloat16 copy,
  which halves the bytes sent, then written back in the gradients' dtype.

>>> import ember_distributed.algorithms.ddp_comm_hooks.default_hooks as hooks
>>> sorted(n for n in hooks.__all__)
['allreduce_hook', 'bf16_compress_hook', 'fp16_compress_hook']
"""

from __future__ import annotations

import ember_tensor as et

from ... import distributed_c10d as c10d

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook"]


def _group(process_group):
    return c10d._resolve(process_group)


def allreduce_hook(process_group, bucket):
    """The bucket's gradients averaged over the group (sum of the gradients / size)."""
    group = _group(process_group)
    tensor = bucket.buffer().div_(group.size())
    work = c10d.all_reduce(tensor, group=group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def _compress_hook(dtype, process_group, bucket):
    group = _group(process_group)
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(group.size())
    work = c10d.all_reduce(compressed, group=group, async_op=True)

    def decompress(fut):
        buffer.copy_(fut.value()[0])
        return buffer

    return work.get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """``allreduce_hook`` on a float16 copy of the gradients (half the bytes), written back
    in their dtype."""
    return _compress_hook(et.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """``allreduce_hook`` on a bfloat16 copy of the gradients, written back in their dtype."""
    return _compress_hook(et.bfloat16, process_group, bucket)
