"""How much of PyTorch's public API Ember has: the functions of ``torch``, the members of
``torch.Tensor``, and the functions of ``torch.special``, ``torch.linalg``, ``torch.fft`` and
``torch.nn.functional``, each against Ember's namespace of the same place. Prints the counts
and, with ``--missing``, the names Ember lacks; ``--write FILE`` writes them as a Markdown page
(docs/api-coverage.md).

    python tools/api_coverage.py
    python tools/api_coverage.py --missing --only linalg
    python tools/api_coverage.py --write docs/api-coverage.md

Left out of the count, with their reason: private names (a leading underscore), PyTorch's
sparse, quantized, nested and distributed machinery, its compiler and export entry points,
and the modules and classes of ``torch`` (only callables are counted).
"""

from __future__ import annotations

import argparse
import inspect
import sys

import torch
import torch.nn.functional

import ember
import ember.nn.functional

# name prefixes and words of torch's API that are not part of Ember's plan, and why
OUT_OF_PLAN = {
    "sparse": "sparse layouts",
    "quantize": "quantization",
    "quantized": "quantization",
    "q_": "quantized tensors",
    "mkldnn": "MKL-DNN layout",
    "nested": "nested tensors",
    "compile": "the compiler",
    "export": "torch.export",
    "vmap": "functorch transforms",
    "fbgemm": "FBGEMM kernels",
    "cudnn": "cuDNN-specific entry points",
    "miopen": "ROCm",
    "_foreach": "private",
}


def _out_of_plan(name: str) -> str | None:
    if name.startswith("_"):
        return "private"
    for key, why in OUT_OF_PLAN.items():
        if key in name:
            return why
    return None


def _callables(module) -> set[str]:
    names = set()
    for name in dir(module):
        if _out_of_plan(name):
            continue
        try:
            obj = getattr(module, name)
        except Exception:  # noqa: BLE001 - a lazy attribute that fails to import
            continue
        if inspect.ismodule(obj) or inspect.isclass(obj):
            continue
        if callable(obj):
            names.add(name)
    return names


def _members(cls) -> set[str]:
    return {n for n in dir(cls) if not _out_of_plan(n)}


def places() -> dict[str, tuple[set[str], object]]:
    """place -> (PyTorch's names there, Ember's object for the same place)."""
    return {
        "torch": (_callables(torch), ember),
        "Tensor": (_members(torch.Tensor), ember.Tensor),
        "special": (_callables(torch.special), getattr(ember, "special", None)),
        "linalg": (_callables(torch.linalg), ember.linalg),
        "fft": (_callables(torch.fft), ember.fft),
        "nn.functional": (_callables(torch.nn.functional), ember.nn.functional),
    }


def coverage() -> dict[str, tuple[int, list[str]]]:
    """place -> (how many of PyTorch's names Ember has, the missing names)."""
    out = {}
    for place, (names, target) in places().items():
        missing = sorted(n for n in names if target is None or not hasattr(target, n))
        out[place] = (len(names) - len(missing), missing)
    return out


def _table(cov) -> list[str]:
    lines = ["| place | PyTorch's names | Ember has | share |", "| --- | ---: | ---: | ---: |"]
    for place, (have, missing) in cov.items():
        total = have + len(missing)
        lines.append(f"| `{place}` | {total} | {have} | {100 * have // max(total, 1)}% |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--missing", action="store_true", help="list the names Ember lacks")
    ap.add_argument("--only", default="", help="one place (torch, Tensor, special, ...)")
    ap.add_argument("--write", help="write the table and missing names as Markdown here")
    opts = ap.parse_args(argv)
    cov = coverage()
    if opts.only:
        cov = {k: v for k, v in cov.items() if k == opts.only}
    print("\n".join(_table(cov)))
    if opts.missing:
        for place, (_, missing) in cov.items():
            print(f"\n{place}: {len(missing)} missing\n  " + " ".join(missing))
    if opts.write:
        lines = [
            "# API coverage",
            "",
            "Which of PyTorch's public names Ember has, by place, and the ones it lacks "
            "(written by `python tools/api_coverage.py --write docs/api-coverage.md`, against "
            f"PyTorch {torch.__version__.split('+')[0]}). Private names and PyTorch's sparse, "
            "quantized, nested-tensor, compiler and export entry points are not counted: they "
            "are not part of Ember's plan. Every missing name below is simply not written yet "
            "(the op-library and whole-program issues); the OpInfo score "
            "(`tools/opinfo_score.py`) measures the ones PyTorch's tests exercise.",
            "",
            *_table(cov),
        ]
        for place, (_, missing) in cov.items():
            lines += ["", f"## `{place}`: {len(missing)} missing", ""]
            lines.append(", ".join(f"`{n}`" for n in missing) if missing else "(none)")
        with open(opts.write, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
