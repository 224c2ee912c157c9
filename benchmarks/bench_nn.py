"""Ember's nn layers and PyTorch's (CPU) side by side, in one run: training steps (forward
and backward) of the layers that are composed in Python.

    python benchmarks/bench_nn.py [--threads N] [--repeats N] [--filter SUBSTR] [--quick]

The cases (float32, weights copied from the Ember model into the PyTorch one):

- ``lstm``: ``LSTM(256, 256, num_layers=2)`` on a (35, 20, 256) input (sequence 35, batch
  20), loss ``output.sum()``: the forward and backward of one step of a word-level language
  model; also its forward under ``no_grad``. Ember runs the recurrence as a Python loop of
  core ops (one ``addmm`` and the gate arithmetic per time step); PyTorch runs its fused
  C++ kernel.
- ``gru``: the same with ``GRU``.
- ``transformer``: ``TransformerEncoder`` of 2 ``TransformerEncoderLayer(d_model=128,
  nhead=4, dim_feedforward=512, dropout=0.0, batch_first=True)`` on a (16, 64, 128) input.
- ``conv``: ``Conv2d(16, 32, 3, padding=1)`` -> ReLU -> ``Conv2d(32, 32, 3, stride=2)`` on
  a (32, 16, 32, 32) input.

``ratio`` is torch time / ember time (medians): above 1 means Ember is faster. Each case's
loss is compared between the libraries once (``MISMATCH`` otherwise, exit status 1).
Timings on a machine busy with other work are meaningless; run it on a quiet one.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np


def _median(fn, repeats: int, budget: float) -> float:
    fn()
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < repeats:
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        if len(times) >= 5 and time.perf_counter() - start > budget:
            break
    return float(np.median(times))


def _copy(ours, theirs, torch) -> None:
    theirs.load_state_dict({k: torch.from_numpy(np.array(v.detach().numpy()))
                            for k, v in ours.state_dict().items()})


def build_cases(et, nn, ea, torch):
    """name -> (ember step, torch step, ember loss, torch loss)."""
    rng = np.random.default_rng(0)
    cases = {}

    def recurrent(kind):
        ours = getattr(nn, kind)(256, 256, num_layers=2)
        theirs = getattr(torch.nn, kind)(256, 256, num_layers=2)
        _copy(ours, theirs, torch)
        a = rng.standard_normal((35, 20, 256)).astype(np.float32)
        x, tx = et.from_numpy(a), torch.from_numpy(a)

        def step():
            loss = ours(x)[0].sum()
            loss.backward()
            return loss

        def tstep():
            loss = theirs(tx)[0].sum()
            loss.backward()
            return loss

        def fwd():
            with ea.no_grad():
                return ours(x)[0].sum()

        def tfwd():
            with torch.no_grad():
                return theirs(tx)[0].sum()

        cases[f"{kind.lower()} 2x256 seq35 batch20: fwd+bwd"] = (step, tstep)
        cases[f"{kind.lower()} 2x256 seq35 batch20: fwd no_grad"] = (fwd, tfwd)

    recurrent("LSTM")
    recurrent("GRU")

    layer = nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, dropout=0.0,
                                       batch_first=True)
    ours = nn.TransformerEncoder(layer, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's note about its nested-tensor fast path
        tlayer = torch.nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, dropout=0.0,
                                                  batch_first=True)
        theirs = torch.nn.TransformerEncoder(tlayer, 2)
    _copy(ours, theirs, torch)
    a = rng.standard_normal((16, 64, 128)).astype(np.float32)
    x, tx = et.from_numpy(a), torch.from_numpy(a)

    def tr_step():
        loss = ours(x).square().mean()
        loss.backward()
        return loss

    def tr_tstep():
        loss = theirs(tx).square().mean()
        loss.backward()
        return loss

    cases["transformer encoder 2x128 h4 batch16 seq64: fwd+bwd"] = (tr_step, tr_tstep)

    conv = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3,
                                                                               stride=2))
    tconv = torch.nn.Sequential(torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.Conv2d(32, 32, 3, stride=2))
    _copy(conv, tconv, torch)
    a = rng.standard_normal((32, 16, 32, 32)).astype(np.float32)
    cx, ctx = et.from_numpy(a), torch.from_numpy(a)

    def conv_step():
        loss = conv(cx).square().mean()
        loss.backward()
        return loss

    def conv_tstep():
        loss = tconv(ctx).square().mean()
        loss.backward()
        return loss

    cases["conv2d x2 batch32 16->32 32x32: fwd+bwd"] = (conv_step, conv_tstep)
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
    import ember_tensor as et

    try:
        import torch
    except ImportError:
        print("torch is not installed: nothing to compare with")
        return 2
    if args.threads:
        et.set_num_threads(args.threads)
        torch.set_num_threads(args.threads)
    repeats, budget = (5, 0.5) if args.quick else (args.repeats, 4.0)
    print(f"threads: ember {et.get_num_threads()}, torch {torch.get_num_threads()}; "
          f"torch {torch.__version__}")
    print(f"{'case':<54} {'ember':>10} {'torch':>10} {'ratio':>7}")
    status = 0
    for name, (ours, theirs) in build_cases(et, nn, ea, torch).items():
        if args.filter.lower() not in name.lower():
            continue
        a, b = float(ours().item()), float(theirs().item())
        ok = abs(a - b) <= 1e-3 * max(1.0, abs(b))
        te = _median(ours, repeats, budget)
        tt = _median(theirs, repeats, budget)
        mark = "" if ok else "  MISMATCH"
        status = status or (0 if ok else 1)
        print(f"{name:<54} {te * 1e3:>8.1f}ms {tt * 1e3:>8.1f}ms {tt / te:>7.2f}{mark}")
    return status


if __name__ == "__main__":
    sys.exit(main())
