"""Shared by the table-driven gradient tests: an op's outputs and its inputs' gradients
against PyTorch's, through one random weighted sum of the outputs."""

from __future__ import annotations

import numpy as np
import torch

import ember_tensor as et


def outputs(res):
    """An op's result as a list of tensors."""
    return list(res) if isinstance(res, (tuple, list)) else [res]


def ember_fn(fn):
    """fn(module, *args) bound to ember_tensor, as gradcheck calls it."""
    return lambda *a: fn(et, *a)


def assert_matches_torch(e_res, t_res, inputs, rtol, atol, grad_rtol, grad_atol):
    """Values of e_res and t_res (tensors or tuples) agree; after backward of
    sum(w * output) over the outputs torch differentiates (same random w on both sides),
    the gradients of ``inputs`` (pairs of ember and torch tensors) agree too."""
    e_out, t_out = outputs(e_res), outputs(t_res)
    assert len(e_out) == len(t_out)
    rng = np.random.default_rng(7)
    e_loss, t_loss = None, None
    for e, t in zip(e_out, t_out):
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)
        if not t.requires_grad:
            continue
        w = rng.uniform(-1.0, 1.0, size=tuple(t.shape))
        e_term = (e * et.from_numpy(w)).sum()
        t_term = (t * torch.from_numpy(w)).sum()
        e_loss = e_term if e_loss is None else e_loss + e_term
        t_loss = t_term if t_loss is None else t_loss + t_term
    e_loss.backward()
    t_loss.backward()
    for e, t in inputs:
        if t.grad is None:
            continue
        assert e.grad is not None
        assert e.grad.dtype == et.float64 and tuple(e.grad.shape) == tuple(t.grad.shape)
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=grad_rtol, atol=grad_atol)
