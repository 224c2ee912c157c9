"""A character-level transformer language model, trained with Ember on Python's own docs.

The text is the docstrings of some fifty standard-library modules, read from their source
files with ``ast`` (nothing is downloaded, and it works under ``python -OO`` too). The model
is a small GPT-style decoder: token and position embeddings, an ``nn.TransformerEncoder``
of pre-norm layers run with a causal mask (each position sees only the characters before
it), a final ``LayerNorm`` and a linear head over the characters. It is trained with
``AdamW`` under a warm-up then cosine learning-rate schedule on random windows of the text.

Every epoch prints the train loss and the loss on held-out text (the last 10%), in nats per
character, next to two baselines measured on the training text: the unigram entropy (what
a model that ignores the context can reach) and the bigram conditional entropy (the best a
model that sees only the previous character can do on the text it was fitted on). At the
end it samples some text from the model.

    python examples/char_lm.py [--epochs 5] [--steps-per-epoch N] [--d-model 64]
                               [--layers 2] [--heads 4] [--block 64] [--batch-size 32]

With the defaults it takes about a minute on two CPU cores and ends near 1.7 nats per
character, against a unigram entropy of about 3.3 (Python 3.11's docstrings; the text, and
so the numbers, change a little with the Python version). Replacing ``ember`` by ``torch`` runs the
same program with PyTorch.
"""

from __future__ import annotations

import argparse
import ast
import math
import sysconfig
import time
from collections import Counter
from pathlib import Path

import numpy as np

import ember
import ember.nn.functional as F
from ember import nn
from ember.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR

# standard-library modules whose docstrings make the corpus (those missing are skipped)
MODULES = (
    "abc argparse bisect calendar codecs configparser contextlib copy csv dataclasses "
    "datetime decimal difflib enum fnmatch fractions functools gettext glob heapq "
    "inspect locale operator optparse pathlib pprint queue random sched shutil statistics "
    "string subprocess tarfile tempfile textwrap threading typing weakref zipfile "
    "collections/__init__ email/message http/client json/__init__ logging/__init__ "
    "unittest/case urllib/parse"
).split()


def stdlib_docstrings() -> str:
    """The docstrings (module, class, function) of ``MODULES``, joined by blank lines."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    docs = []
    for name in MODULES:
        path = stdlib / f"{name}.py"
        if not path.exists():
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    docs.append(doc.strip())
    return "\n\n".join(docs)


def entropies(text: str) -> tuple[float, float]:
    """(unigram entropy, bigram conditional entropy H(next | previous)) of ``text``, in
    nats per character."""
    n = len(text)
    unigram = -sum(c / n * math.log(c / n) for c in Counter(text).values())
    pairs = Counter(zip(text, text[1:]))
    firsts = Counter(text[:-1])
    bigram = -sum(c / (n - 1) * math.log(c / firsts[a]) for (a, _), c in pairs.items())
    return unigram, bigram


class CharTransformer(nn.Module):
    """A decoder-only transformer over characters (an encoder stack with a causal mask)."""

    def __init__(self, vocab: int, block: int, d_model: int, layers: int, heads: int,
                 dropout: float = 0.0):
        super().__init__()
        self.block = block
        self.token = nn.Embedding(vocab, d_model)
        self.position = nn.Embedding(block, d_model)
        layer = nn.TransformerEncoderLayer(
            d_model, heads, dim_feedforward=4 * d_model, dropout=dropout, activation="gelu",
            batch_first=True, norm_first=True,
        )
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)
        # -inf above the diagonal: position i attends to positions 0..i only
        self.register_buffer("causal_mask", nn.Transformer.generate_square_subsequent_mask(block))

    def forward(self, idx):
        """Logits of the next character at every position: (batch, time) -> (batch, time,
        vocab)."""
        t = idx.shape[1]
        h = self.token(idx) + self.position(ember.arange(t))
        h = self.blocks(h, mask=self.causal_mask[:t, :t], is_causal=True)
        return self.head(self.norm(h))


def batch(data, starts, block: int):
    """Inputs and next-character targets for the windows beginning at ``starts``."""
    idx = starts.reshape(-1, 1) + ember.arange(block + 1)
    windows = data[idx]
    return windows[:, :-1], windows[:, 1:]


def lm_loss(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def evaluate(model, data, block: int, batch_size: int, max_batches: int) -> float:
    """Mean loss over non-overlapping windows of ``data`` (at most ``max_batches`` batches)."""
    model.eval()
    starts = ember.arange(0, data.shape[0] - block - 1, block)[: max_batches * batch_size]
    total, count = 0.0, 0
    with ember.no_grad():
        for i in range(0, starts.shape[0], batch_size):
            x, y = batch(data, starts[i:i + batch_size], block)
            total += lm_loss(model, x, y).item() * y.numel()
            count += y.numel()
    model.train()
    return total / count


def sample(model, prompt_ids: list[int], length: int, temperature: float, generator) -> list[int]:
    """Extends ``prompt_ids`` by ``length`` characters drawn from the model's softmax at
    ``temperature``."""
    model.eval()
    ids = list(prompt_ids)
    with ember.no_grad():
        for _ in range(length):
            context = ember.tensor([ids[-model.block:]])
            probs = (model(context)[0, -1] / temperature).softmax(dim=-1)
            ids.append(int(ember.multinomial(probs, 1, generator=generator).item()))
    model.train()
    return ids


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--steps-per-epoch", type=int, default=0,
                        help="batches per epoch (default: as many characters as the train text)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--block", type=int, default=64, help="context length in characters")
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--lr", type=float, default=6e-3, help="peak learning rate")
    parser.add_argument("--eval-batches", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample-chars", type=int, default=300)
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--prompt", default="Return the ")
    return parser.parse_args(argv)


def main(argv=None) -> dict[str, float]:
    """Trains and samples; returns the final losses and the baselines (nats per char)."""
    args = parse_args(argv)
    start = time.perf_counter()
    ember.manual_seed(args.seed)

    text = stdlib_docstrings()
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    data = ember.from_numpy(np.array([index[c] for c in text], dtype=np.int64))
    split = int(0.9 * len(text))
    train_data, val_data = data[:split], data[split:]
    unigram, bigram = entropies(text[:split])
    steps = args.steps_per_epoch or max(1, split // (args.batch_size * args.block))
    print(f"text: {len(text)} characters of stdlib docstrings, {len(chars)} distinct; "
          f"{split} train / {len(text) - split} validation")
    print(f"baselines on the train text: unigram entropy {unigram:.3f}, bigram conditional "
          f"entropy {bigram:.3f} nats/char")

    model = CharTransformer(len(chars), args.block, args.d_model, args.layers, args.heads)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {args.layers} layers, d_model {args.d_model}, {args.heads} heads, context "
          f"{args.block}, {n_params} parameters; {args.epochs} epochs of {steps} steps")
    optimizer = ember.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    total = args.epochs * steps
    warmup = max(1, total // 20)
    scheduler = SequentialLR(optimizer, [
        LinearLR(optimizer, start_factor=0.05, total_iters=warmup),
        CosineAnnealingLR(optimizer, T_max=max(1, total - warmup), eta_min=args.lr / 20),
    ], milestones=[warmup])

    val_loss = evaluate(model, val_data, args.block, args.batch_size, args.eval_batches)
    print(f"epoch 0: val loss {val_loss:.3f} (untrained; log(vocab) = {math.log(len(chars)):.3f})")
    train_loss = float("nan")
    for epoch in range(1, args.epochs + 1):
        losses = []
        for _ in range(steps):
            starts = ember.randint(0, train_data.shape[0] - args.block - 1, (args.batch_size,))
            loss = lm_loss(model, *batch(train_data, starts, args.block))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
        train_loss = float(np.mean(losses))
        val_loss = evaluate(model, val_data, args.block, args.batch_size, args.eval_batches)
        print(f"epoch {epoch}: train loss {train_loss:.3f}, val loss {val_loss:.3f} nats/char "
              f"({time.perf_counter() - start:.0f} s)", flush=True)

    generator = ember.Generator().manual_seed(args.seed)
    prompt = [index[c] for c in args.prompt if c in index]
    ids = sample(model, prompt, args.sample_chars, args.temperature, generator)
    print(f"\n--- sample (temperature {args.temperature}) ---")
    print("".join(chars[i] for i in ids))
    print("---\n")
    print(f"done: final train loss {train_loss:.3f}, val loss {val_loss:.3f} nats/char; unigram "
          f"entropy {unigram:.3f}, bigram {bigram:.3f}; {time.perf_counter() - start:.1f} s")
    return {"train_loss": train_loss, "val_loss": val_loss, "unigram": unigram,
            "bigram": bigram}


if __name__ == "__main__":
    main()
