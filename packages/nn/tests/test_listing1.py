"""Listing 1 of the PyTorch paper (Paszke et al., NeurIPS 2019), ported by changing the
imports: a custom layer made of ``nn.Parameter``s and ``mm``, and a model combining it with
a convolution. The component's tests run without the ``ember`` meta-package, so ``ember``
here is the tensor core and ``nn`` this package (``packages/ember/tests`` runs the layer
through ``import ember`` too)."""

from __future__ import annotations

import numpy as np
import torch

import ember_nn as nn
import ember_tensor as ember
from ember_autograd import no_grad
from nn_testing import assert_close, np_of


class LinearLayer(nn.Module):
    def __init__(self, in_sz, out_sz):
        super().__init__()
        t1 = ember.randn(in_sz, out_sz)
        self.w = nn.Parameter(t1)
        t2 = ember.randn(out_sz)
        self.b = nn.Parameter(t2)

    def forward(self, activations):
        t = ember.mm(activations, self.w)
        return t + self.b


class TorchLinearLayer(torch.nn.Module):
    def __init__(self, in_sz, out_sz):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(in_sz, out_sz))
        self.b = torch.nn.Parameter(torch.randn(out_sz))

    def forward(self, activations):
        return torch.mm(activations, self.w) + self.b


def test_linear_layer_registers_its_parameters() -> None:
    layer = LinearLayer(128, 10)
    assert [n for n, _ in layer.named_parameters()] == ["w", "b"]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in layer.parameters())
    assert list(layer.state_dict()) == ["w", "b"]
    assert repr(layer) == "LinearLayer()"


def test_linear_layer_trains_like_torch() -> None:
    ours, theirs = LinearLayer(6, 3), TorchLinearLayer(6, 3)
    theirs.load_state_dict({k: torch.from_numpy(np_of(v).copy())
                            for k, v in ours.state_dict().items()})
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 6)).astype(np.float32)
    y = rng.standard_normal((8, 3)).astype(np.float32)
    for _ in range(5):  # plain SGD steps, written out as in the paper's era
        loss = nn.functional.mse_loss(ours(ember.from_numpy(x)), ember.from_numpy(y))
        tloss = torch.nn.functional.mse_loss(theirs(torch.from_numpy(x)), torch.from_numpy(y))
        assert_close(loss, tloss, "float32", "loss")
        ours.zero_grad()
        theirs.zero_grad()
        loss.backward()
        tloss.backward()
        with no_grad():
            for p in ours.parameters():
                p -= 0.1 * p.grad
        with torch.no_grad():
            for p in theirs.parameters():
                p -= 0.1 * p.grad
    for (n, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_close(p, tp, "float32", n, scale=10.0)


def test_full_basic_model() -> None:
    class FullBasicModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 128, 3)
            self.fc = LinearLayer(128, 10)

        def forward(self, x):
            t1 = self.conv(x)
            t2 = nn.functional.relu(t1)
            # the listing feeds the (N, 128, 1, 1) feature map to mm directly, which fails in
            # PyTorch too; flattened here
            t3 = self.fc(t2.flatten(1))
            return nn.functional.softmax(t3, dim=1)

    class TorchFullBasicModel(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(1, 128, 3)
            self.fc = TorchLinearLayer(128, 10)

        def forward(self, x):
            t2 = torch.nn.functional.relu(self.conv(x))
            return torch.nn.functional.softmax(self.fc(t2.flatten(1)), dim=1)

    model = FullBasicModel()
    x = ember.randn(4, 1, 3, 3)
    out = model(x)
    assert tuple(out.shape) == (4, 10)
    np.testing.assert_allclose(np_of(out.sum(dim=1)), np.ones(4), rtol=1e-5)
    theirs = TorchFullBasicModel()
    theirs.load_state_dict({k: torch.from_numpy(np_of(v).copy())
                            for k, v in model.state_dict().items()})
    assert_close(out, theirs(torch.from_numpy(np_of(x).copy())), "float32", "output",
                 scale=10.0)
