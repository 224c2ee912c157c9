"""NCF's NeuMF: a GMF tower (the elementwise product of user and item embeddings) and an
MLP tower (user and item embeddings concatenated, then Linear + ReLU layers), their outputs
concatenated into one logit per (user, item) pair, trained with binary cross entropy on
implicit feedback.

Sizes: MovieLens-20M's users and items (138,493 and 26,744) and the MLPerf layer widths on
CUDA; MovieLens-1M's (6,040 and 3,706) on CPU.
"""

from __future__ import annotations

import numpy as np

NAME = "NCF"
UNIT = "samples"
DEFAULTS = {
    "cpu": {"batch_size": 2048, "num_users": 6040, "num_items": 3706},
    "cuda": {"batch_size": 65536, "num_users": 138493, "num_items": 26744},
}


def build(
    lib,
    num_users: int = 138493,
    num_items: int = 26744,
    mf_dim: int = 64,
    layers: tuple[int, ...] = (256, 256, 128, 64),
    dropout: float = 0.0,
    **_,
):
    nn = lib.nn

    class NeuMF(nn.Module):
        def __init__(self):
            super().__init__()
            self.mf_user = nn.Embedding(num_users, mf_dim)
            self.mf_item = nn.Embedding(num_items, mf_dim)
            self.mlp_user = nn.Embedding(num_users, layers[0] // 2)
            self.mlp_item = nn.Embedding(num_items, layers[0] // 2)
            mlp = []
            for a, b in zip(layers[:-1], layers[1:]):
                mlp += [nn.Linear(a, b), nn.ReLU(inplace=True), nn.Dropout(dropout)]
            self.mlp = nn.Sequential(*mlp)
            self.final = nn.Linear(mf_dim + layers[-1], 1)

        def forward(self, users, items):
            gmf = self.mf_user(users) * self.mf_item(items)
            mlp = self.mlp(lib.cat([self.mlp_user(users), self.mlp_item(items)], 1))
            return self.final(lib.cat([gmf, mlp], 1)).squeeze(1)

    return NeuMF()


def make_batch(rng, batch_size: int, num_users: int = 138493, num_items: int = 26744, **_):
    """User ids, item ids ``(N,)``; targets: 0/1 labels as float32 ``(N,)``."""
    users = rng.integers(0, num_users, batch_size, dtype=np.int64)
    items = rng.integers(0, num_items, batch_size, dtype=np.int64)
    labels = (rng.random(batch_size) < 0.25).astype(np.float32)  # 1 positive : 3 negatives
    return (users, items), labels


def units(batch_size: int, **_) -> int:
    return batch_size


def loss(lib, output, targets):
    return lib.nn.functional.binary_cross_entropy_with_logits(output, targets)
