"""The hot spots of whole programs (issue 31), Ember and PyTorch (CPU) side by side in one
run: the ops that made PyTorch programs slower on Ember, and a GPT-style model's training
iteration and evaluation.

    python benchmarks/bench_programs.py [--threads N] [--repeats N] [--filter SUBSTR]

Cases (float32 unless named): exact GELU (``approximate='none'``) and ``erf`` of a
(64, 4096) tensor; ``scaled_dot_product_attention`` forward, causal, of (8, 8, 256, 64);
``randn(1 << 20)``; float64 ``tanh`` and ``sigmoid`` of 1M elements; float32 ``log``,
``log1p`` and ``sin`` of 1M elements; a GPT (4 blocks of
causal self-attention and a 4x GELU MLP, 128 wide, 4 heads, 64 tokens of a 512-word
vocabulary, batch 16, AdamW) as a training iteration (forward, cross entropy, backward,
step, zero_grad) and as an evaluation (forward and loss under ``no_grad``).

``ratio`` is torch time / ember time (medians of alternating blocks, benchmarks/timing.py):
above 1 means Ember is faster. The GPT's loss is compared once between the libraries (the
weights are copied), ``MISMATCH`` otherwise (exit status 1). Run it on a quiet machine and
note the CPU model beside the table.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
from timing import alternating_medians, cpu_model, import_torch


def gpt(lib, vocab=512, block=64, width=128, heads=4, layers=4):
    """A GPT of ``lib`` (ember.nn or torch.nn) as nanoGPT writes it."""
    nn, F = lib.nn, lib.nn.functional

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(width, 3 * width)
            self.proj = nn.Linear(width, width)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(x).split(width, dim=2)
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.attn = Attention()
            self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                     nn.Linear(4 * width, width))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, width)
            self.pos = nn.Embedding(block, width)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab, bias=False)
            self.tok.weight = self.head.weight  # tied, as in nanoGPT

        def forward(self, idx, targets):
            t = idx.shape[1]
            x = self.tok(idx) + self.pos(lib.arange(t))
            for blk in self.blocks:
                x = blk(x)
            logits = self.head(self.ln(x))
            return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))

    return GPT()


def build_cases(ember, torch):
    """name -> (ember callable, torch callable)."""
    rng = np.random.default_rng(0)
    cases = {}

    def both(a):
        return ember.from_numpy(a), torch.from_numpy(a)

    x, tx = both(rng.standard_normal((64, 4096)).astype(np.float32))
    cases["gelu exact 64x4096"] = (lambda: ember.nn.functional.gelu(x),
                                   lambda: torch.nn.functional.gelu(tx))
    cases["erf 64x4096"] = (lambda: ember.erf(x), lambda: torch.erf(tx))
    q, tq = both(rng.standard_normal((8, 8, 256, 64)).astype(np.float32))
    cases["sdpa causal 8x8x256x64 fwd"] = (
        lambda: ember.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True),
        lambda: torch.nn.functional.scaled_dot_product_attention(tq, tq, tq, is_causal=True))
    cases["randn 1M"] = (lambda: ember.randn(1 << 20), lambda: torch.randn(1 << 20))
    d, td = both(rng.standard_normal(1 << 20))
    cases["tanh float64 1M"] = (lambda: ember.tanh(d), lambda: torch.tanh(td))
    cases["sigmoid float64 1M"] = (lambda: ember.sigmoid(d), lambda: torch.sigmoid(td))
    cases["gelu exact float64 1M"] = (lambda: ember.nn.functional.gelu(d),
                                      lambda: torch.nn.functional.gelu(td))
    cases["erf float64 1M"] = (lambda: ember.erf(d), lambda: torch.erf(td))
    p, tp = both(np.abs(rng.standard_normal(1 << 20)).astype(np.float32) * 3)
    for name in ("log", "log1p", "sin"):  # losses, softplus, positional encodings
        ours_fn, theirs_fn = getattr(ember, name), getattr(torch, name)
        cases[f"{name} 1M"] = (lambda f=ours_fn: f(p), lambda f=theirs_fn: f(tp))

    ours, theirs = gpt(ember), gpt(torch)
    theirs.load_state_dict({k: torch.from_numpy(v.detach().numpy().copy())
                            for k, v in ours.state_dict().items()})
    idx, tidx = both(rng.integers(0, 512, (16, 64)))
    tgt, ttgt = both(rng.integers(0, 512, (16, 64)))
    opt = ember.optim.AdamW(ours.parameters(), lr=1e-3)
    topt = torch.optim.AdamW(theirs.parameters(), lr=1e-3)

    def step(model, o, i, t):
        loss = model(i, t)
        loss.backward()
        o.step()
        o.zero_grad(set_to_none=True)
        return loss

    def evaluate(model, lib, i, t):
        with lib.no_grad():
            return model(i, t)

    first, tfirst = evaluate(ours, ember, idx, tgt).item(), evaluate(theirs, torch, tidx,
                                                                      ttgt).item()
    cases["gpt 4x128 batch16x64: eval"] = (lambda: evaluate(ours, ember, idx, tgt),
                                           lambda: evaluate(theirs, torch, tidx, ttgt))
    cases["gpt 4x128 batch16x64: train iteration"] = (lambda: step(ours, opt, idx, tgt),
                                                      lambda: step(theirs, topt, tidx, ttgt))
    return cases, (first, tfirst)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=0, help="threads for both (0: default)")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--budget", type=float, default=4.0, help="seconds per case")
    parser.add_argument("--filter", default="")
    args = parser.parse_args(argv)
    torch = import_torch()
    if torch is None:
        return 2
    import ember

    if args.threads:
        ember.set_num_threads(args.threads)
        torch.set_num_threads(args.threads)
    ember.manual_seed(0)
    torch.manual_seed(0)
    cases, (loss, tloss) = build_cases(ember, torch)
    status = 0
    if not math.isclose(loss, tloss, rel_tol=1e-4):
        print(f"MISMATCH: GPT loss ember {loss:.6f} vs torch {tloss:.6f}")
        status = 1
    print(f"CPU: {cpu_model()}; threads: ember {ember.get_num_threads()}, torch "
          f"{torch.get_num_threads()}\n")
    print("| case | ember ms | torch ms | ratio |\n| --- | ---: | ---: | ---: |")
    for name, (fn, tfn) in cases.items():
        if args.filter not in name:
            continue
        ours, theirs = alternating_medians(fn, tfn, args.repeats, args.budget)
        print(f"| {name} | {ours * 1e3:.3f} | {theirs * 1e3:.3f} | {theirs / ours:.2f} |",
              flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
