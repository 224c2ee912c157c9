"""Ember's nn and PyTorch's (CPU) side by side, in one run: the training steps and layers
that issue 5 sets targets for, plus the other recurrent layers.

    python benchmarks/bench_nn.py [--threads N] [--repeats N] [--filter SUBSTR] [--quick]

A training *step* is what a training loop runs per batch: ``zero_grad``, forward, loss,
backward and ``SGD(lr=0.01, momentum=0.9).step()`` (each library's own optimizer, with
its defaults otherwise). The cases (float32, weights copied from the Ember model into the
PyTorch one):

- ``conv2d 3x3 64->64``: ``Conv2d(64, 64, 3, padding=1)`` on a (16, 64, 32, 32) input,
  forward alone and forward + backward of ``output.sum()`` (target 0.8x); forward +
  backward under ``autocast(dtype=bfloat16)`` with ``Linear(1024, 1024)`` on (256, 1024) too;
- ``mlp step``: 784-256-256-10 with ReLU, batch 64, cross entropy (target 1.2x);
- ``lenet step``: Conv(1,6,5)-ReLU-MaxPool2-Conv(6,16,5)-ReLU-MaxPool2-Linear(256,120)-
  ReLU-Linear(120,84)-ReLU-Linear(84,10), batch 64 of 28x28, cross entropy (target 1.0x);
- ``lstm lm step``: Embedding(1000, 256) -> 2-layer LSTM(256, 256) -> Linear(256, 1000)
  on 35x20 tokens, cross entropy over the next tokens (target 1.0x); also the LSTM alone,
  forward + backward and forward under ``no_grad``, and the same for ``GRU``;
- ``transformer step``: ``TransformerEncoder`` of 2 ``TransformerEncoderLayer(d_model=128,
  nhead=4, dim_feedforward=512, dropout=0.0, batch_first=True)`` on a (16, 64, 128) input,
  mean squared output as the loss (target 1.0x).

``ratio`` is torch time / ember time (medians): above 1 means Ember is faster. Each case's
loss is compared between the libraries once (``MISMATCH`` otherwise, exit status 1).
Timings on a machine busy with other work are meaningless; run it on a quiet one.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np
from timing import alternating_medians, import_torch


def _copy(ours, theirs, torch) -> None:
    theirs.load_state_dict({k: torch.from_numpy(np.array(v.detach().numpy()))
                            for k, v in ours.state_dict().items()})


def _training_step(model, loss_fn, opt):
    """One training step as a loop runs it; returns the loss."""
    def step():
        opt.zero_grad()
        loss = loss_fn(model)
        loss.backward()
        opt.step()
        return loss
    return step


def build_cases(et, nn, ea, optim, torch):
    """name -> (ember callable, torch callable), each returning a scalar to compare."""
    rng = np.random.default_rng(0)
    F, TF = nn.functional, torch.nn.functional
    cases = {}

    def pair(ours, theirs):
        _copy(ours, theirs, torch)
        return ours, theirs

    def steps(name, ours, theirs, loss, tloss):
        cases[name] = (_training_step(ours, loss, optim.SGD(ours.parameters(), lr=0.01,
                                                                momentum=0.9)),
                       _training_step(theirs, tloss, torch.optim.SGD(theirs.parameters(),
                                                                     lr=0.01, momentum=0.9)))

    def data(shape, high=None):
        a = (rng.integers(0, high, shape) if high else
             rng.standard_normal(shape).astype(np.float32))
        return et.from_numpy(a), torch.from_numpy(a)

    # conv2d 3x3 64->64 on 16x64x32x32
    conv, tconv = pair(nn.Conv2d(64, 64, 3, padding=1), torch.nn.Conv2d(64, 64, 3, padding=1))
    cx, ctx = data((16, 64, 32, 32))

    def conv_fwd_bwd(m, inp):
        loss = m(inp).sum()
        loss.backward()
        return loss

    def conv_fwd(m, inp, lib):
        with lib.no_grad():
            return m(inp).sum()

    cases["conv2d 3x3 64->64 16x64x32x32: fwd"] = (lambda: conv_fwd(conv, cx, ea),
                                                   lambda: conv_fwd(tconv, ctx, torch))
    cases["conv2d 3x3 64->64 16x64x32x32: fwd+bwd"] = (lambda: conv_fwd_bwd(conv, cx),
                                                       lambda: conv_fwd_bwd(tconv, ctx))

    # bfloat16 under autocast (weights and gradients float32): a linear layer and the conv
    def autocast_fwd_bwd(m, inp, lib, libt):
        with lib.autocast("cpu", dtype=libt.bfloat16):
            loss = m(inp).float().square().mean()
        loss.backward()
        return loss

    lin, tlin = pair(nn.Linear(1024, 1024), torch.nn.Linear(1024, 1024))
    linx, tlinx = data((256, 1024))
    cases["linear 1024->1024 batch256 bf16 autocast: fwd+bwd"] = (
        lambda: autocast_fwd_bwd(lin, linx, et, et),
        lambda: autocast_fwd_bwd(tlin, tlinx, torch, torch),
    )
    cases["conv2d 3x3 64->64 16x64x32x32 bf16 autocast: fwd+bwd"] = (
        lambda: autocast_fwd_bwd(conv, cx, et, et),
        lambda: autocast_fwd_bwd(tconv, ctx, torch, torch),
    )

    # MLP 784-256-256-10, batch 64
    def mlp(lib):
        return lib.Sequential(lib.Linear(784, 256), lib.ReLU(), lib.Linear(256, 256),
                              lib.ReLU(), lib.Linear(256, 10))

    ours, theirs = pair(mlp(nn), mlp(torch.nn))
    mx, tmx = data((64, 784))
    y, ty = data((64,), 10)
    steps("mlp 784-256-256-10 batch64: step", ours, theirs,
          lambda m: F.cross_entropy(m(mx), y), lambda m: TF.cross_entropy(m(tmx), ty))

    # LeNet-style CNN, batch 64 of 28x28
    def lenet(lib):
        return lib.Sequential(lib.Conv2d(1, 6, 5), lib.ReLU(), lib.MaxPool2d(2),
                              lib.Conv2d(6, 16, 5), lib.ReLU(), lib.MaxPool2d(2), lib.Flatten(),
                              lib.Linear(256, 120), lib.ReLU(), lib.Linear(120, 84), lib.ReLU(),
                              lib.Linear(84, 10))

    ours, theirs = pair(lenet(nn), lenet(torch.nn))
    lx, tlx = data((64, 1, 28, 28))
    steps("lenet batch64 28x28: step", ours, theirs,
          lambda m: F.cross_entropy(m(lx), y), lambda m: TF.cross_entropy(m(tlx), ty))

    # 2-layer LSTM language model: 35x20 tokens, vocab 1000, hidden 256
    def language_model(lib):
        class LM(lib.Module):
            def __init__(self):
                super().__init__()
                self.embed = lib.Embedding(1000, 256)
                self.rnn = lib.LSTM(256, 256, num_layers=2)
                self.decode = lib.Linear(256, 1000)

            def forward(self, tokens):
                return self.decode(self.rnn(self.embed(tokens))[0])
        return LM()

    ours, theirs = pair(language_model(nn), language_model(torch.nn))
    tokens, ttokens = data((36, 20), 1000)
    inp, tinp = tokens[:-1], ttokens[:-1]
    tgt, ttgt = tokens[1:].reshape(-1), ttokens[1:].reshape(-1)
    steps("lstm lm 2x256 vocab1000 35x20: step", ours, theirs,
          lambda m: F.cross_entropy(m(inp).reshape(-1, 1000), tgt),
          lambda m: TF.cross_entropy(m(tinp).reshape(-1, 1000), ttgt))

    # the recurrent layers alone
    for kind in ("LSTM", "GRU"):
        ours, theirs = pair(getattr(nn, kind)(256, 256, num_layers=2),
                            getattr(torch.nn, kind)(256, 256, num_layers=2))
        x, tx = data((35, 20, 256))

        def fwd_bwd(m, inp):
            loss = m(inp)[0].sum()
            loss.backward()
            return loss

        def fwd(m, inp, lib):
            with lib.no_grad():
                return m(inp)[0].sum()

        name = f"{kind.lower()} 2x256 seq35 batch20"
        cases[f"{name}: fwd+bwd"] = (lambda m=ours, i=x: fwd_bwd(m, i),
                                     lambda m=theirs, i=tx: fwd_bwd(m, i))
        cases[f"{name}: fwd no_grad"] = (lambda m=ours, i=x: fwd(m, i, ea),
                                         lambda m=theirs, i=tx: fwd(m, i, torch))

    # 2-layer TransformerEncoder, d_model 128, 4 heads, batch 16, seq 64
    def encoder(lib):
        layer = lib.TransformerEncoderLayer(128, 4, dim_feedforward=512, dropout=0.0,
                                            batch_first=True)
        return lib.TransformerEncoder(layer, 2)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's note about its nested-tensor fast path
        ours, theirs = pair(encoder(nn), encoder(torch.nn))
    ex, tex = data((16, 64, 128))
    steps("transformer encoder 2x128 h4 batch16 seq64: step", ours, theirs,
          lambda m: m(ex).square().mean(), lambda m: m(tex).square().mean())
    return cases


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--filter", default="")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    import ember_autograd as ea
    import ember_nn as nn
    import ember_optim as optim
    import ember_tensor as et

    torch = import_torch()
    if torch is None:
        return 2
    if args.threads:
        et.set_num_threads(args.threads)
        torch.set_num_threads(args.threads)
    repeats, budget = (5, 0.5) if args.quick else (args.repeats, 4.0)
    print(f"threads: ember {et.get_num_threads()}, torch {torch.get_num_threads()}; "
          f"torch {torch.__version__}")
    print(f"{'case':<54} {'ember':>10} {'torch':>10} {'ratio':>7}")
    status = 0
    for name, (ours, theirs) in build_cases(et, nn, ea, optim, torch).items():
        if args.filter.lower() not in name.lower():
            continue
        a, b = float(ours().item()), float(theirs().item())
        ok = abs(a - b) <= 1e-3 * max(1.0, abs(b))
        te, tt = alternating_medians(ours, theirs, repeats, budget)
        mark = "" if ok else "  MISMATCH"
        status = status or (0 if ok else 1)
        print(f"{name:<54} {te * 1e3:>8.1f}ms {tt * 1e3:>8.1f}ms {tt / te:>7.2f}{mark}")
    return status


if __name__ == "__main__":
    sys.exit(main())
