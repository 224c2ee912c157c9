"""``DistributedDataParallel``: one model replica per process, gradients averaged across the
processes during backward (``ember.nn.parallel.DistributedDataParallel``).

At construction the parameters and buffers of rank 0 are broadcast to every rank, and the
parameters that require grad are cut into buckets of about ``bucket_cap_mb`` megabytes (in
reverse order of ``module.parameters()``, about the order backward produces their
gradients; one dtype per bucket). During backward, each parameter's accumulated gradient is
copied into its bucket as soon as autograd has written it (a post-accumulate-grad hook); a
bucket whose gradients are all in is averaged across ranks at once, asynchronously, so the
communication of early buckets overlaps the computation of the rest of backward. When the
last bucket is launched, the averaged gradients are written back into ``.grad``.

``no_sync()`` skips the averaging (gradients accumulate locally; the next synchronised
backward averages the accumulated sum). ``find_unused_parameters=True`` walks the output's
graph after each forward and counts parameters it does not reach as ready (their gradient
is averaged as zeros, and stays None where it was None on every rank). Without it, a
backward that leaves a parameter without gradient is reported at the next forward with
PyTorch's error. ``broadcast_buffers`` re-broadcasts rank 0's buffers before each forward.
"""

from __future__ import annotations

import contextlib

import ember_autograd as autograd
import ember_nn as nn
import ember_tensor as et

from . import distributed_c10d as c10d

__all__ = ["DistributedDataParallel", "GradBucket"]


def _flatten(tensors):
    return et.cat([t.detach().reshape(-1) for t in tensors]) if tensors else None


def _unflatten_into(flat, tensors) -> None:
    pos = 0
    with autograd.no_grad():
        for t in tensors:
            n = t.numel()
            t.copy_(flat[pos:pos + n].view(t.shape))
            pos += n


def _broadcast_coalesced(tensors, pg, src: int) -> None:
    """Broadcasts ``tensors`` from group rank ``src``, one message per dtype and device."""
    by_dtype: dict = {}
    for t in tensors:
        by_dtype.setdefault((t.dtype, t.device), []).append(t)
    for group in by_dtype.values():
        flat = _flatten(group)
        c10d.broadcast(flat, group=pg, group_src=src)
        _unflatten_into(flat, group)


def _output_tensors(out, found: list) -> None:
    if isinstance(out, et.Tensor):
        found.append(out)
    elif isinstance(out, (list, tuple)):
        for o in out:
            _output_tensors(o, found)
    elif isinstance(out, dict):
        for o in out.values():
            _output_tensors(o, found)


def _reached_leaves(outputs) -> set[int]:
    """ids of the leaf tensors the outputs' graphs reach, through PyTorch's graph API
    (``next_functions``, the ``variable`` of AccumulateGrad nodes), which the autograd slot's
    conformance kit requires of every provider."""
    seen, leaves = set(), set()
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            leaves.add(id(var))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return leaves


class _Bucket:
    def __init__(self, params) -> None:
        self.params = params
        self.flat = et.zeros(sum(p.numel() for p in params), dtype=params[0].dtype,
                             device=params[0].device)
        self.offsets = []
        pos = 0
        for p in params:
            self.offsets.append(pos)
            pos += p.numel()
        self.pending = len(params)
        self.work = None  # the averaging all_reduce, or the communication hook's future
        self.had_grad = [False] * len(params)


class GradBucket:
    """What a communication hook gets (``torch.distributed.GradBucket``): the flattened
    gradients of some parameters (``buffer()``, ``gradients()`` as views of it,
    ``parameters()``), ``index()`` (bucket 0 is filled last: buckets follow the parameters in
    reverse), ``is_last()``; ``set_buffer(tensor)`` replaces the buffer's values."""

    def __init__(self, index: int, bucket: _Bucket, last: bool) -> None:
        self._index, self._bucket, self._last = index, bucket, last

    def index(self) -> int:
        return self._index

    def buffer(self):
        return self._bucket.flat

    def gradients(self) -> list:
        b = self._bucket
        return [b.flat[o:o + p.numel()].view(p.shape) for o, p in zip(b.offsets, b.params)]

    def parameters(self) -> list:
        return list(self._bucket.params)

    def is_last(self) -> bool:
        return self._last

    def set_buffer(self, tensor) -> None:
        with autograd.no_grad():
            self._bucket.flat.copy_(tensor)


class DistributedDataParallel(nn.Module):
    """``module`` replicated on every rank of ``process_group`` (default: the whole world),
    its gradients averaged across them during backward.

    Parameters on a CUDA device are averaged there (the nccl backend), in buckets of one
    dtype and device. Accepted for PyTorch's signature and ignored: ``device_ids``,
    ``output_device`` (the module stays where it is), ``dim``, ``check_reduction``,
    ``gradient_as_bucket_view``, ``static_graph``. Errors:
    no process group (RuntimeError), a module without parameters that require grad."""

    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False):
        super().__init__()
        self.module = module
        self.process_group = c10d._resolve(process_group)
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        params, seen = [], set()
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self._params = params
        _broadcast_coalesced([p.detach() for p in module.parameters()] +
                             [b for b in module.buffers()], self.process_group, 0)
        self._buckets = self._make_buckets(params)
        self._where = {}
        for b in self._buckets:
            for i, p in enumerate(b.params):
                self._where[id(p)] = (b, i)
        self._hooks = [p.register_post_accumulate_grad_hook(self._on_grad) for p in params]
        self._comm_hook = None  # (state, hook) of register_comm_hook
        self._expect_backward = False
        self._ready = 0

    def _make_buckets(self, params):
        buckets, current, size = [], [], 0
        for p in reversed(params):
            nbytes = p.numel() * p.element_size()
            if current and (current[0].dtype != p.dtype or current[0].device != p.device
                            or size + nbytes > self.bucket_bytes_cap):
                buckets.append(_Bucket(current))
                current, size = [], 0
            current.append(p)
            size += nbytes
        if current:
            buckets.append(_Bucket(current))
        return buckets

    def register_comm_hook(self, state, hook) -> None:
        """Replaces the averaging of each bucket by ``hook(state, bucket)`` (a ``GradBucket``),
        which returns a ``Future`` whose value is the bucket's new flattened gradients (e.g.
        ``ember.distributed.algorithms.ddp_comm_hooks.default_hooks.fp16_compress_hook``).
        Once, before the first backward (PyTorch's rules and errors)."""
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        if not callable(hook):
            raise TypeError(f"register_comm_hook: hook must be callable, not "
                            f"{type(hook).__name__}")
        self._comm_hook = (state, hook)

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients of the backward passes inside accumulate locally, without averaging."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def forward(self, *inputs, **kwargs):
        if self._expect_backward and self._ready:
            unready = [i for i, p in enumerate(self._params)
                       if not self._where[id(p)][0].had_grad[self._where[id(p)][1]]]
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a "
                "new one. This error indicates that your module has parameters that were not "
                "used in producing loss. You can enable unused parameter detection by passing "
                "the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`. Parameter indices which did not "
                f"receive grad for rank {c10d.get_rank()}: {' '.join(map(str, unready))}")
        if self.broadcast_buffers:
            buffers = list(self.module.buffers())
            if buffers:
                _broadcast_coalesced(buffers, self.process_group, 0)
        out = self.module(*inputs, **kwargs)
        if autograd.is_grad_enabled() and self.require_backward_grad_sync:
            self._prepare(out)
        else:
            self._expect_backward = False
        return out

    def _prepare(self, out) -> None:
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None
            b.had_grad = [False] * len(b.params)
        self._ready = 0
        self._expect_backward = True
        if self.find_unused_parameters:
            found: list = []
            _output_tensors(out, found)
            reached = _reached_leaves(found)
            for p in self._params:
                if id(p) not in reached:
                    b, i = self._where[id(p)]
                    b.flat[b.offsets[i]:b.offsets[i] + p.numel()].zero_()
                    self._mark_ready(b)

    def _on_grad(self, p) -> None:
        if not self._expect_backward:
            return
        b, i = self._where[id(p)]
        if b.had_grad[i]:
            return
        b.had_grad[i] = True
        with autograd.no_grad():
            b.flat[b.offsets[i]:b.offsets[i] + p.numel()].copy_(p.grad.detach().reshape(-1))
        self._mark_ready(b)

    def _mark_ready(self, b: _Bucket) -> None:
        b.pending -= 1
        self._ready += 1
        if b.pending == 0:
            if self._comm_hook is None:
                b.work = c10d.all_reduce(b.flat, c10d.ReduceOp.AVG, self.process_group,
                                         async_op=True)
            else:
                state, hook = self._comm_hook
                i = self._buckets.index(b)
                b.work = hook(state, GradBucket(i, b, i == len(self._buckets) - 1))
                if not callable(getattr(b.work, "wait", None)):
                    raise RuntimeError(f"DDP communication hook must return a Future (with "
                                       f"wait()), got {type(b.work).__name__}")
        if self._ready == len(self._params):
            self._finish()

    def _finish(self) -> None:
        used = None
        if self.find_unused_parameters:  # which parameters some rank used this iteration
            used = et.tensor([int(h) for b in self._buckets for h in b.had_grad],
                             dtype=et.int32, device=self._params[0].device)
            c10d.all_reduce(used, c10d.ReduceOp.MAX, self.process_group)
            used = used.tolist()
        k = 0
        for b in self._buckets:
            result = b.work.wait()
            if self._comm_hook is not None:  # the hook's future: the new flat gradients
                if not isinstance(result, et.Tensor) or result.numel() != b.flat.numel():
                    raise RuntimeError(
                        f"DDP communication hook must return a Future whose value is a tensor "
                        f"of the bucket's {b.flat.numel()} elements, got "
                        f"{type(result).__name__}")
                if result is not b.flat:
                    with autograd.no_grad():
                        b.flat.copy_(result.reshape(-1))
            for i, p in enumerate(b.params):
                avg = b.flat[b.offsets[i]:b.offsets[i] + p.numel()].view(p.shape)
                if used is not None and not used[k]:
                    pass  # unused on every rank: its gradient is left as it is, as in PyTorch
                elif p.grad is None:
                    p.grad = avg.clone()
                else:
                    with autograd.no_grad():
                        p.grad.copy_(avg)
                k += 1
        self._expect_backward = False
        self._ready = 0
