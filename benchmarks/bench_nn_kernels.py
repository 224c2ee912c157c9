"""The core's nn kernels and PyTorch's (CPU) side by side, in one run: pooling, batch /
layer / group norm, embedding, cross entropy, depthwise and dense convolutions, forward alone
and forward + backward.

    python benchmarks/bench_nn_kernels.py [--threads N] [--repeats N] [--filter SUBSTR] [--quick]

The cases (float32; the timed calls of the two libraries alternate, so a busy machine slows
both alike; medians):

- ``max_pool2d k2`` / ``k3s2p1``, ``avg_pool2d k2``, ``adaptive_avg_pool2d 1`` on a
  (16, 64, 32, 32) input;
- ``batch_norm train`` / ``eval``, ``layer_norm [32, 32]``, ``group_norm 8`` on the same
  input (weight and bias of ones and zeros);
- ``embedding``: a (30000, 256) table looked up at (64, 128) indices;
- ``cross_entropy``: (256, 1000) logits and class targets;
- ``depthwise C HxW sS``: the 3x3 depthwise convolutions (groups == C, padding 1) of
  MobileNetV2 at the Table 1 harness's CPU batch and image size (batch 8, 64x64 images: the
  layers of ``models/mobilenet_v2.py``, one case per distinct shape), each pass alone:
  ``fwd`` (``conv2d``), ``bwd-input`` and ``bwd-weight`` (``conv2d_backward_input`` /
  ``_weight``, and ``aten.convolution_backward`` with one output);
- ``conv ...``: the same three passes of dense convolutions (``DENSE_CONVS``: the shapes of
  docs/conv-algorithms.md's study, LeNet's second layer and a ResNet-style stem), which run
  through oneDNN when it is loaded (``EMBER_ONEDNN=0``: Ember's own kernels).

The ``fwd`` rows time the op (``ember_tensor``'s, and PyTorch's ``torch.*``/aten one); the
``fwd+bwd`` rows the layer of ``ember.nn``/``torch.nn`` (or the ``F`` function) and a
backward pass from a gradient of ones, which also accumulates the parameters' gradients.
``ratio`` is torch time / ember time: above 1 means Ember is faster. The outputs are
compared once per case (``MISMATCH`` otherwise, exit status 1). Timings on a machine busy
with other work are noisy; run it on a quiet one.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from timing import alternating_medians


def build_cases(et, nn, F, torch):
    """name -> (ember call, torch call); each returns a tensor to compare."""
    tnn, TF = torch.nn, torch.nn.functional
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 64, 32, 32)).astype(np.float32)
    x, tx = et.from_numpy(a.copy()), torch.from_numpy(a.copy())
    xg, txg = et.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(a.copy()).requires_grad_()
    w, b, rm, rv = et.ones(64), et.zeros(64), et.zeros(64), et.ones(64)
    tw, tb, trm, trv = torch.ones(64), torch.zeros(64), torch.zeros(64), torch.ones(64)
    cases = {}

    def fwd_bwd(fn, tfn, inp, tinp):
        def run():
            out = fn()
            out.backward(et.ones_like(out))
            inp.grad = None
            return out

        def trun():
            out = tfn()
            out.backward(torch.ones_like(out))
            tinp.grad = None
            return out

        return run, trun

    cases["max_pool2d k2 fwd"] = (lambda: et.max_pool2d_with_indices(x, [2])[0],
                                  lambda: TF.max_pool2d(tx, 2))
    cases["max_pool2d k3s2p1 fwd"] = (lambda: et.max_pool2d_with_indices(x, [3], [2], [1])[0],
                                      lambda: TF.max_pool2d(tx, 3, 2, 1))
    cases["avg_pool2d k2 fwd"] = (lambda: et.avg_pool2d(x, [2]), lambda: TF.avg_pool2d(tx, 2))
    cases["adaptive_avg_pool2d 1 fwd"] = (lambda: et.adaptive_avg_pool2d(x, [1, 1]),
                                          lambda: TF.adaptive_avg_pool2d(tx, 1))
    cases["batch_norm train fwd"] = (
        lambda: et.native_batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5)[0],
        lambda: torch.native_batch_norm(tx, tw, tb, trm, trv, True, 0.1, 1e-5)[0])
    cases["batch_norm eval fwd"] = (
        lambda: et.native_batch_norm(x, w, b, rm, rv, False, 0.1, 1e-5)[0],
        lambda: torch.native_batch_norm(tx, tw, tb, trm, trv, False, 0.1, 1e-5)[0])
    cases["layer_norm [32, 32] fwd"] = (
        lambda: et.native_layer_norm(x, [32, 32], None, None, 1e-5)[0],
        lambda: torch.native_layer_norm(tx, [32, 32], None, None, 1e-5)[0])
    cases["group_norm 8 fwd"] = (
        lambda: et.native_group_norm(x, w, b, 16, 64, 1024, 8, 1e-5)[0],
        lambda: torch.native_group_norm(tx, tw, tb, 16, 64, 1024, 8, 1e-5)[0])

    cases["max_pool2d k2 fwd+bwd"] = fwd_bwd(lambda: F.max_pool2d(xg, 2),
                                             lambda: TF.max_pool2d(txg, 2), xg, txg)
    cases["avg_pool2d k2 fwd+bwd"] = fwd_bwd(lambda: F.avg_pool2d(xg, 2),
                                             lambda: TF.avg_pool2d(txg, 2), xg, txg)
    for name, ours, theirs in (
        ("BatchNorm2d train", nn.BatchNorm2d(64), tnn.BatchNorm2d(64)),
        ("LayerNorm [32, 32]", nn.LayerNorm([32, 32]), tnn.LayerNorm([32, 32])),
        ("GroupNorm 8", nn.GroupNorm(8, 64), tnn.GroupNorm(8, 64)),
    ):
        cases[f"{name} fwd+bwd"] = fwd_bwd(lambda m=ours: m(xg), lambda m=theirs: m(txg), xg,
                                           txg)

    table = rng.standard_normal((30000, 256)).astype(np.float32)
    ew, tew = et.from_numpy(table.copy()).requires_grad_(), torch.from_numpy(table.copy())
    tew.requires_grad_()
    idx = rng.integers(0, 30000, (64, 128))
    ei, ti = et.from_numpy(idx), torch.from_numpy(idx)
    cases["embedding fwd"] = (lambda: et.embedding(ew.detach(), ei),
                              lambda: torch.embedding(tew.detach(), ti))
    cases["embedding fwd+bwd"] = fwd_bwd(lambda: F.embedding(ei, ew),
                                         lambda: TF.embedding(ti, tew), ew, tew)
    logits = rng.standard_normal((256, 1000)).astype(np.float32)
    lx = et.from_numpy(logits.copy()).requires_grad_()
    tlx = torch.from_numpy(logits.copy()).requires_grad_()
    tg = rng.integers(0, 1000, 256)
    cases["cross_entropy fwd+bwd"] = fwd_bwd(lambda: F.cross_entropy(lx, et.from_numpy(tg)),
                                             lambda: TF.cross_entropy(tlx, torch.from_numpy(tg)),
                                             lx, tlx)
    cases.update(depthwise_cases(et, torch, rng))
    cases.update(conv_cases(et, torch, rng, DENSE_CONVS))
    return cases


def mobilenet_depthwise_layers():
    """(C, H, stride) of MobileNetV2's depthwise convolutions at its CPU size, distinct ones
    in network order, from the model's settings (models/mobilenet_v2.py)."""
    from models import mobilenet_v2 as mb

    size = mb.DEFAULTS["cpu"]["image_size"] // 2  # after the stride-2 stem
    layers, channels = [], 32
    for t, c, n, s in mb.SETTINGS:
        for i in range(n):
            stride = s if i == 0 else 1
            layer = (channels * t, size, stride)
            if layer not in layers:
                layers.append(layer)
            size, channels = (size + 2 - 3) // stride + 1, c
    return layers


# (name, N, C, H, O, kernel, stride, padding, groups) of the dense convolutions: the study's
# shapes (docs/conv-algorithms.md) and a ResNet-style stem.
DENSE_CONVS = [
    ("conv 64->64 32x32 3x3", 16, 64, 32, 64, 3, 1, 1, 1),
    ("conv 16->32 32x32 3x3", 32, 16, 32, 32, 3, 1, 1, 1),
    ("conv 128->128 14x14 3x3", 16, 128, 14, 128, 3, 1, 1, 1),
    ("conv 32->32 32x32 3x3 s2", 32, 32, 32, 32, 3, 2, 1, 1),
    ("conv 256->64 16x16 1x1", 16, 256, 16, 64, 1, 1, 0, 1),
    ("conv lenet 6->16 12x12 5x5", 64, 6, 12, 16, 5, 1, 0, 1),
    ("conv stem 3->64 64x64 7x7 s2", 8, 3, 64, 64, 7, 2, 3, 1),
]


def depthwise_cases(et, torch, rng):
    batch = 8  # models/mobilenet_v2.py DEFAULTS["cpu"]["batch_size"]
    layers = [(f"depthwise {c} {h}x{h} s{s}", batch, c, h, c, 3, s, 1, c)
              for c, h, s in mobilenet_depthwise_layers()]
    return conv_cases(et, torch, rng, layers)


def conv_cases(et, torch, rng, layers):
    """Each pass of each convolution alone: ``fwd`` (``conv2d``), ``bwd-input`` and
    ``bwd-weight`` (the core's backward ops, and ``aten.convolution_backward`` with one
    output)."""
    cases = {}
    for name, batch, c, h, o, k, s, p, g in layers:
        oh = (h + 2 * p - k) // s + 1
        x = rng.standard_normal((batch, c, h, h)).astype(np.float32)
        w = rng.standard_normal((o, c // g, k, k)).astype(np.float32)
        gy = rng.standard_normal((batch, o, oh, oh)).astype(np.float32)
        ex, ew, egy = (et.from_numpy(a.copy()) for a in (x, w, gy))
        tx, tw, tgy = (torch.from_numpy(a.copy()) for a in (x, w, gy))

        def torch_bwd(mask, tgy=tgy, tx=tx, tw=tw, s=s, p=p, g=g):
            out = torch.ops.aten.convolution_backward(tgy, tx, tw, None, [s, s], [p, p], [1, 1],
                                                      False, [0, 0], g, mask)
            return out[0] if mask[0] else out[1]

        cases[f"{name} fwd"] = (
            lambda ex=ex, ew=ew, s=s, p=p, g=g: et.conv2d(ex, ew, None, s, p, 1, g),
            lambda tx=tx, tw=tw, s=s, p=p, g=g: torch.conv2d(tx, tw, None, s, p, 1, g))
        cases[f"{name} bwd-input"] = (
            lambda egy=egy, ew=ew, s=s, p=p, g=g, shape=list(x.shape): et.conv2d_backward_input(
                egy, ew, shape, s, p, 1, g),
            lambda f=torch_bwd: f([True, False, False]))
        cases[f"{name} bwd-weight"] = (
            lambda egy=egy, ex=ex, s=s, p=p, g=g, shape=list(w.shape): et.conv2d_backward_weight(
                egy, ex, shape, s, p, 1, g),
            lambda f=torch_bwd: f([False, True, False]))
    return cases


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--repeats", type=int, default=21)
    p.add_argument("--filter", default="")
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    try:
        import torch

        import ember_nn as nn
        import ember_nn.functional as F
        import ember_tensor as et
    except ImportError as e:
        print(f"cannot import: {e}", file=sys.stderr)
        return 2
    threads = args.threads or et.get_num_threads()
    et.set_num_threads(threads)
    torch.set_num_threads(threads)
    cases = {k: v for k, v in build_cases(et, nn, F, torch).items()
             if args.filter.lower() in k.lower()}
    if not cases:
        print("no case matches --filter", file=sys.stderr)
        return 2
    repeats, budget = (5, 0.25) if args.quick else (args.repeats, 2.0)
    print(f"threads: {threads}, torch {torch.__version__}")
    print(f"{'case':36s} {'ember ms':>10s} {'torch ms':>10s} {'ratio':>7s}")
    status = 0
    for name, (fn, tfn) in cases.items():
        out, tout = fn(), tfn()
        want = tout.detach().numpy()
        # absolute slack scaled by the output's size: long float32 sums (a weight gradient adds
        # thousands of products) differ by their summation order
        ok = np.allclose(np.array(out.detach().numpy()), want, rtol=1e-4,
                         atol=1e-4 * max(1.0, float(np.abs(want).max(initial=0.0))))
        if not ok:
            status = 1
        me, mt = alternating_medians(fn, tfn, repeats, budget)
        flag = "" if ok else "  MISMATCH"
        print(f"{name:36s} {me * 1e3:10.3f} {mt * 1e3:10.3f} {mt / me:7.2f}{flag}")
    return status


if __name__ == "__main__":
    sys.exit(main())
