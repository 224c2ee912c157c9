"""The child process: runs calls ``start, start+step, ... < stop`` of a seed and reports on
file descriptor ``--fd``, one line per event, flushed at once:

- ``E <i>`` before call ``i`` touches Ember, ``T <i>`` before it touches PyTorch (and
  ``E <i>`` again before the results are read back), so the parent knows where a crash or
  hang happened;
- ``F <json>`` for every outcome other than ``ok`` (and for ``ok`` calls where both raised
  exceptions of different types): index, kind, detail, the two error messages;
- ``Z`` when the range is done.

Python warnings are ignored (they are not findings), both libraries run single-threaded so
that several workers share the machine fairly, and the address space is capped so a huge
size is refused by the allocator instead of swapping the machine.

Run as ``python -m fuzz.worker --seed S --start A --stop B --step J --fd N``.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import resource
import warnings


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--start", type=int, required=True)
    ap.add_argument("--stop", type=int, required=True)
    ap.add_argument("--step", type=int, default=1)
    ap.add_argument("--fd", type=int, required=True)
    ap.add_argument("--memory-limit-gb", type=float, default=8.0)
    ap.add_argument("--calls-module", default="fuzz.generate")
    args = ap.parse_args(argv)

    faulthandler.enable()
    warnings.simplefilter("ignore")
    import torch

    import ember

    from .execute import run_call

    make_call = __import__(args.calls_module, fromlist=["make_call"]).make_call
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    if args.memory_limit_gb > 0:
        limit = int(args.memory_limit_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    out = os.fdopen(args.fd, "w", buffering=1)
    current = [0]

    def mark(phase: str) -> None:
        out.write(f"{phase} {current[0]}\n")
        out.flush()

    for i in range(args.start, args.stop, args.step):
        current[0] = i
        call = make_call(args.seed, i)
        outcome = run_call(call, mark)
        if outcome.kind != "ok" or outcome.error_types:
            record = {
                "index": i,
                "callable": call.target.name,
                "kind": outcome.kind,
                "detail": outcome.detail,
                "ember_error": outcome.ember_error,
                "torch_error": outcome.torch_error,
                "error_types": outcome.error_types,
            }
            out.write("F " + json.dumps(record) + "\n")
    out.write("Z\n")
    out.flush()


if __name__ == "__main__":
    main()
