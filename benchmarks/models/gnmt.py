"""A GNMT-style LSTM encoder-decoder with attention, trained with teacher forcing.

Encoder: source embedding; a bidirectional LSTM layer; a unidirectional LSTM layer over
its two directions; ``num_layers - 2`` more LSTM layers with residual connections.
Decoder: target embedding; a first LSTM layer whose outputs query the attention over the
encoder's outputs; ``num_layers - 1`` more LSTM layers, each fed the previous layer's
output concatenated with the attention context, with residual connections from the third
decoder layer on; a linear projection to the vocabulary. Dropout before every LSTM layer
and the projection.

As in GNMT, attention is computed from the first decoder layer's output and fed to the
layers above it; unlike GNMT's decoder, that first layer does not also see the previous
step's context, so each layer runs over the whole sequence in one ``LSTM`` call.

Attention is ``"additive"`` (Bahdanau: ``v . tanh(W_q q + W_k k)``) or ``"dot"`` (scaled
dot product, ``q . k / sqrt(hidden_size)``). Sequences are time-major: source ``(S, N)``
and target ``(T, N)`` token ids; the model returns logits ``(T, N, vocab_size)``.
"""

from __future__ import annotations

import math

import numpy as np

NAME = "GNMT"
UNIT = "tokens"
DEFAULTS = {
    "cpu": {
        "batch_size": 16,
        "vocab_size": 2000,
        "hidden_size": 256,
        "num_layers": 4,
        "src_len": 20,
        "tgt_len": 20,
    },
    "cuda": {
        "batch_size": 128,
        "vocab_size": 32000,
        "hidden_size": 1024,
        "num_layers": 4,
        "src_len": 50,
        "tgt_len": 50,
    },
}


def build(
    lib,
    vocab_size: int = 32000,
    hidden_size: int = 1024,
    num_layers: int = 4,
    attention: str = "additive",
    dropout: float = 0.2,
    **_,
):
    if num_layers < 2:
        raise ValueError(f"GNMT: num_layers must be at least 2, got {num_layers}")
    if attention not in ("additive", "dot"):
        raise ValueError(f"GNMT: attention must be 'additive' or 'dot', got {attention!r}")
    nn, F = lib.nn, lib.nn.functional
    h = hidden_size

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            if attention == "additive":
                self.query = nn.Linear(h, h, bias=False)
                self.key = nn.Linear(h, h, bias=False)
                self.score = nn.Linear(h, 1, bias=False)

        def forward(self, query, memory):
            """Context ``(N, T, H)`` for queries ``(N, T, H)`` over memory ``(N, S, H)``."""
            if attention == "additive":
                hidden = self.query(query).unsqueeze(2) + self.key(memory).unsqueeze(1)
                scores = self.score(lib.tanh(hidden)).squeeze(3)
            else:
                scores = lib.bmm(query, memory.transpose(1, 2)) * (1.0 / math.sqrt(h))
            return lib.bmm(F.softmax(scores, dim=-1), memory)

    class GNMT(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_embed = nn.Embedding(vocab_size, h)
            self.tgt_embed = nn.Embedding(vocab_size, h)
            self.drop = nn.Dropout(dropout)
            self.enc_bi = nn.LSTM(h, h, bidirectional=True)
            self.enc = nn.ModuleList(
                [nn.LSTM(2 * h, h)] + [nn.LSTM(h, h) for _ in range(num_layers - 2)]
            )
            self.dec_first = nn.LSTM(h, h)
            self.attention = Attention()
            self.dec = nn.ModuleList([nn.LSTM(2 * h, h) for _ in range(num_layers - 1)])
            self.classifier = nn.Linear(h, vocab_size)

        def encode(self, src):
            x = self.enc_bi(self.drop(self.src_embed(src)))[0]
            for i, lstm in enumerate(self.enc):
                out = lstm(self.drop(x))[0]
                x = out if i == 0 else out + x
            return x

        def forward(self, src, tgt):
            memory = self.encode(src).transpose(0, 1)  # (N, S, H)
            x = self.dec_first(self.drop(self.tgt_embed(tgt)))[0]
            context = self.attention(x.transpose(0, 1), memory).transpose(0, 1)  # (T, N, H)
            for i, lstm in enumerate(self.dec):
                out = lstm(self.drop(lib.cat([x, context], 2)))[0]
                x = out if i == 0 else out + x
            return self.classifier(self.drop(x))

    return GNMT()


def make_batch(
    rng, batch_size: int, vocab_size: int = 32000, src_len: int = 50, tgt_len: int = 50, **_
):
    """Source ``(S, N)``, target input ``(T, N)``; targets: the target shifted by one."""
    src = rng.integers(0, vocab_size, (src_len, batch_size), dtype=np.int64)
    tgt = rng.integers(0, vocab_size, (tgt_len + 1, batch_size), dtype=np.int64)
    return (src, tgt[:-1]), tgt[1:]


def units(batch_size: int, src_len: int = 50, tgt_len: int = 50, **_) -> int:
    """Source plus target tokens."""
    return batch_size * (src_len + tgt_len)


def loss(lib, output, targets):
    return lib.nn.functional.cross_entropy(
        output.reshape(-1, output.shape[-1]), targets.reshape(-1)
    )
