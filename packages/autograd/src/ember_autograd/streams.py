"""Stream semantics of backward passes on CUDA (PyTorch's, simplified).

A node recorded for an op on a device tensor remembers the stream that was current when the
op ran (``remember``); the engine runs the node's backward on that same stream, so a forward
computed on a side stream has its backward there too. The engine runs one node at a time, in
order; to keep the gradients flowing between nodes correct whichever streams they use, a
switch to a stream makes it wait for all the work the pass queued so far on the other
streams (and, first of all, for the caller's current stream, on which the incoming
gradients were made). At the end, the caller's current stream waits for every stream the
pass used, so code after ``backward()`` sees the gradients, as in PyTorch. This waits more
than strictly needed when several streams are mixed, and costs nothing when only one is
used (the common case). CPU nodes never touch any of it.
"""

from __future__ import annotations

import contextlib

import ember_tensor as et


class _CudaStreams:
    """The stream calls the engine needs (replaceable, so the logic runs in tests without a
    GPU)."""

    @staticmethod
    def current(device):
        return et.cuda.current_stream(device)

    @staticmethod
    def use(stream):
        return et.cuda.stream(stream)

    @staticmethod
    def wait(waiter, stream) -> None:
        waiter.wait_stream(stream)


api = _CudaStreams()


def remember(node, device) -> None:
    """Records on ``node`` the current stream of ``device`` (the op's output device)."""
    node._stream = api.current(device)
    node._special = True


def remember_result(result) -> None:
    """``remember`` for the node behind ``result`` (a tensor or a sequence of tensors) when it
    lives on a device other than the CPU and does not have a stream yet."""
    t = result
    if not isinstance(t, et.Tensor):  # a Parameter is a tensor, not a sequence to search
        t = next((x for x in result if isinstance(x, et.Tensor)), None)
        if t is None:
            return
    if t.is_cpu:
        return
    node = t.grad_fn
    if node is not None and node._stream is None:
        remember(node, t.device)


class StreamOrder:
    """The streams one backward pass has queued work on (see the module docstring)."""

    __slots__ = ("ambient", "used", "last")

    def __init__(self, first) -> None:
        self.ambient = api.current(first.device)  # the caller's current stream
        self.used = [self.ambient]
        self.last = self.ambient  # the stream of the latest work

    def enter(self, stream):
        """A context that runs a node's backward on ``stream`` (None: the caller's stream, for
        nodes that remember none, such as the leaves' accumulators), after the work queued
        on the other streams."""
        if stream is None:
            stream = self.ambient
        if stream != self.last:
            for other in self.used:
                if other != stream:
                    api.wait(stream, other)
            if stream not in self.used:
                self.used.append(stream)
            self.last = stream
        if stream == self.ambient:
            return contextlib.nullcontext()
        return api.use(stream)

    def finish(self) -> None:
        """The caller's current stream waits for every stream the pass used (it did when the
        pass last switched to it)."""
        if self.last == self.ambient:
            return
        for other in self.used:
            if other != self.ambient:
                api.wait(self.ambient, other)
