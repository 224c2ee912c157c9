"""Stream semantics of backward passes (ember_autograd.streams): a device node's backward runs
on the stream of its forward, after the work of the other streams, and the caller's stream
waits for the pass. The ordering logic runs here with fake streams; the CUDA test needs a GPU."""

from __future__ import annotations

import numpy as np
import pytest

import ember_autograd as ag
import ember_tensor as et
from ember_autograd import streams


class FakeStream:
    def __init__(self, name):
        self.name = name
        self.device = "fake"

    def __eq__(self, other):
        return isinstance(other, FakeStream) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return self.name


class FakeApi:
    """Logs what the engine asks of the streams."""

    def __init__(self):
        self.log = []
        self.current_name = "caller"

    def current(self, device):
        return FakeStream(self.current_name)

    def use(self, stream):
        api = self

        class Use:
            def __enter__(self):
                api.log.append(("use", stream.name))
                api.current_name = stream.name

            def __exit__(self, *exc):
                api.log.append(("leave", stream.name))
                api.current_name = "caller"

        return Use()

    def wait(self, waiter, stream):
        self.log.append(("wait", waiter.name, stream.name))


@pytest.fixture
def fake(monkeypatch):
    api = FakeApi()
    monkeypatch.setattr(streams, "api", api)
    return api


def graph():
    x = et.tensor(np.linspace(-1.0, 1.0, 6)).requires_grad_()
    y = x * 2.0
    z = y.sin()
    return x, y, z


def test_cpu_nodes_remember_no_stream():
    _, y, z = graph()
    assert y.grad_fn._stream is None and z.grad_fn._stream is None


def test_a_node_runs_on_its_stream_and_the_caller_waits(fake):
    x, y, z = graph()
    streams.remember(z.grad_fn, "fake")  # sin's forward ran on "caller": a no-op switch
    fake.current_name = "side"
    streams.remember(y.grad_fn, "fake")  # mul's forward ran on "side"
    fake.current_name = "caller"
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(2 * x.detach().numpy()))
    assert fake.log == [
        ("wait", "side", "caller"),  # mul's backward on "side" waits for sin's, on "caller"
        ("use", "side"),
        ("leave", "side"),
        ("wait", "caller", "side"),  # the leaf's accumulation (no stream: the caller's)
    ]


def test_the_caller_waits_for_a_pass_that_ends_on_a_side_stream(fake):
    x, y, z = graph()
    fake.current_name = "side"
    streams.remember(z.grad_fn, "fake")
    fake.current_name = "caller"
    grad = ag.grad(z.sum(), [y])[0]  # ends at sin's node, on "side"
    np.testing.assert_allclose(grad.numpy(), np.cos(y.detach().numpy()))
    assert fake.log == [("wait", "side", "caller"), ("use", "side"), ("leave", "side"),
                        ("wait", "caller", "side")]


def test_one_stream_costs_no_waits(fake):
    x, y, z = graph()
    for node in (y.grad_fn, z.grad_fn):
        streams.remember(node, "fake")
    z.sum().backward()
    assert fake.log == []
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(2 * x.detach().numpy()))


def test_the_stream_is_left_when_a_node_raises(fake):
    class Boom(ag.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 1.0

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    x = et.tensor([1.0, 2.0]).requires_grad_()
    out = Boom.apply(x)
    fake.current_name = "side"
    streams.remember(out.grad_fn, "fake")
    fake.current_name = "caller"
    with pytest.raises(ValueError, match="boom"):
        out.sum().backward()
    assert fake.log[-1] == ("leave", "side") and fake.current_name == "caller"


@pytest.mark.skipif(not et.cuda.is_available(), reason="needs a CUDA device")
def test_backward_of_a_side_stream_forward_on_cuda():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 256))
    x = et.tensor(a, device="cuda").requires_grad_()
    side = et.cuda.Stream()
    side.wait_stream(et.cuda.current_stream())
    with et.cuda.stream(side):
        y = (x @ x).tanh()
    assert y.grad_fn._stream == side
    et.cuda.current_stream().wait_stream(side)
    y.sum().backward()
    xc = et.tensor(a).requires_grad_()
    (xc @ xc).tanh().sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), xc.grad.numpy(), rtol=1e-10, atol=1e-10)
