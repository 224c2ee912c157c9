"""Whole programs through the composed `ember` API: a CNN trained on a real dataset, and
the paper's Listing 2 (a GAN step) against PyTorch step for step."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F
from ember import nn


def test_small_cnn_learns_the_digits():
    """The 8x8 handwritten digits shipped by scikit-learn: >= 95% test accuracy, fast."""
    datasets = pytest.importorskip("sklearn.datasets")
    X, y = datasets.load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    y = y.astype(np.int64)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(X))
    X, y = X[order], y[order]
    Xte, yte, Xtr, ytr = X[:360], y[:360], X[360:], y[360:]

    start = time.perf_counter()
    ember.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 2 * 2, 10),
    )
    opt = ember.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(6):
        perm = rng.permutation(len(Xtr))
        for i in range(0, len(Xtr), 64):
            b = perm[i:i + 64]
            loss = F.cross_entropy(model(ember.from_numpy(Xtr[b])), ember.from_numpy(ytr[b]))
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    with ember.no_grad():
        pred = model(ember.from_numpy(Xte)).argmax(1).numpy()
    accuracy = float((pred == yte).mean())
    assert accuracy >= 0.95, accuracy
    assert time.perf_counter() - start < 60


def _gan(lib):
    """Listing 2's models (a small MLP generator and discriminator) in lib."""
    gen = lib.nn.Sequential(lib.nn.Linear(4, 16), lib.nn.ReLU(), lib.nn.Linear(16, 6))
    disc = lib.nn.Sequential(lib.nn.Linear(6, 16), lib.nn.LeakyReLU(0.2), lib.nn.Linear(16, 1),
                             lib.nn.Sigmoid())
    return gen, disc


def _copy_weights(src, dst):
    for p, q in zip(src.parameters(), dst.parameters()):
        with ember.no_grad():
            q.copy_(ember.from_numpy(p.detach().numpy().copy()))


def test_listing2_gan_step_matches_torch():
    torch.manual_seed(0)
    t_gen, t_disc = _gan(torch)
    e_gen, e_disc = _gan(ember)
    _copy_weights(t_gen, e_gen)
    _copy_weights(t_disc, e_disc)
    rng = np.random.default_rng(1)

    def run(lib, generator, discriminator, batches):
        loss = lib.nn.BCELoss()
        optimD = lib.optim.Adam(discriminator.parameters())
        optimG = lib.optim.Adam(generator.parameters())
        real_label = lib.ones(8, 1)
        fake_label = lib.zeros(8, 1)
        for real_sample, noise in batches:
            real_sample, noise = lib.from_numpy(real_sample), lib.from_numpy(noise)
            # (1) update the discriminator
            optimD.zero_grad()
            errD_real = loss(discriminator(real_sample), real_label)
            errD_real.backward()
            fake = generator(noise)
            errD_fake = loss(discriminator(fake.detach()), fake_label)
            errD_fake.backward()
            optimD.step()
            # (2) update the generator
            optimG.zero_grad()
            errG = loss(discriminator(fake), real_label)
            errG.backward()
            optimG.step()
        return [p.detach().numpy() for p in [*generator.parameters(), *discriminator.parameters()]]

    batches = [(rng.standard_normal((8, 6), dtype=np.float32),
                rng.standard_normal((8, 4), dtype=np.float32)) for _ in range(5)]
    want = run(torch, t_gen, t_disc, batches)
    got = run(ember, e_gen, e_disc, batches)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
