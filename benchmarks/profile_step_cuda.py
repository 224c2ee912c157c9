"""One ResNet-50 training step on a GPU under ``ember.profiler``: the paper's Figure 1.

    python benchmarks/profile_step_cuda.py [--batch 64] [--trace PATH.json.gz]

The paper's Figure 1 shows the host queueing CUDA kernels ahead of the device: Python and
the dispatcher return long before the kernels they launched have run, and the device runs
them back to back. This script measures that on one step (``zero_grad``, forward,
cross-entropy, ``backward``, SGD with momentum) after warm-up steps:

- *host time*: from the start of the step until the host has queued all of it;
- *device time*: until ``ember.cuda.synchronize()`` returns;
- how far the host ran ahead (the time the host waited in that synchronisation), and the
  busy fraction of the device over the step (sum of kernel times / device time);

then writes a Chrome trace (ops on the host thread, kernels on the stream's track, arrows
from launch to kernel) and prints the ops with the most device time. Needs a GPU.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from models import module, to_lib


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--trace", default="resnet50_step_trace.json.gz")
    args = parser.parse_args(argv)

    import ember
    from ember.profiler import ProfilerActivity, profile

    if not ember.cuda.is_available():
        print("profile_step_cuda: no CUDA device", file=sys.stderr)
        return 2
    mod = module("resnet50")
    model = mod.build(ember).to("cuda")
    rng = np.random.default_rng(0)
    inputs, targets = mod.make_batch(rng, args.batch, args.image_size)
    inputs = to_lib(ember, inputs, "cuda")
    targets = to_lib(ember, targets, "cuda")
    opt = ember.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step():
        opt.zero_grad()
        loss = mod.loss(ember, model(*inputs), targets)
        loss.backward()
        opt.step()
        return loss

    for _ in range(args.warmup):
        step()
    ember.cuda.synchronize()

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        loss = step()
        t_queued = time.perf_counter()
        ember.cuda.synchronize()
        t_done = time.perf_counter()
    host_ms, device_ms = (t_queued - t0) * 1e3, (t_done - t0) * 1e3
    kernels = [
        e
        for e in prof.events()
        if getattr(e, "device_type", None) == ember.profiler.DeviceType.CUDA
    ]
    kernel_ms = sum(e.time_range.end - e.time_range.start for e in kernels) / 1e3
    prof.export_chrome_trace(args.trace)
    print(
        f"ResNet-50 training step, batch {args.batch}, {args.image_size}x{args.image_size}, "
        f"{ember.cuda.get_device_name()}: loss {float(loss.item()):.4f}"
    )
    print(f"host queued the step in {host_ms:.1f} ms; the device finished it at {device_ms:.1f} ms")
    print(f"the host waited {device_ms - host_ms:.1f} ms in synchronize (ran ahead of the device)")
    print(
        f"{len(kernels)} kernels, {kernel_ms:.1f} ms of kernel time: the device was busy "
        f"{100 * kernel_ms / device_ms:.0f}% of the step"
    )
    print(prof.key_averages().table(sort_by="self_device_time_total", row_limit=15))
    print(f"trace: {args.trace}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
