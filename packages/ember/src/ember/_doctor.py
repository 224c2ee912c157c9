"""``python -m ember doctor``: what this installation of Ember is made of, and what is wrong
with it. Prints the tensor core's build (BLAS, CUDA, SIMD level, threads, compiler, C API,
host allocator, kernel overrides), then every replacement slot: its active provider, the
distribution and version it comes from, the interface version it declares against the one
this ember needs, how it was chosen and where its module lives; then the other installed
providers and the problems found. Exits with 1 when there is a problem, else 0."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata

import ember


def _dist_of(module_name: str) -> str:
    """'name version' of the distribution that installs the top-level module, or '?'."""
    top = module_name.split(".")[0]
    names = metadata.packages_distributions().get(top, [])
    for name in names:
        try:
            return f"{name} {metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
    return "?"


def _cuda_summary(core, build: dict) -> str:
    """'not built', or what the CUDA build holds: architectures, kernel coverage, devices."""
    if not build["cuda"]:
        return "not built"
    C = core._C
    have, lack = len(C._cuda_kernel_coverage()), len(C._cuda_kernel_coverage(False))
    n = C._cuda_device_count()
    if n:
        devices = f"{n} device{'s' if n != 1 else ''}"
    else:
        devices = f"no device ({C._cuda_unavailable_reason()})"
    archs = "sm_" + build.get("cuda_archs", "?").replace(",", ", sm_")
    return f"built for {archs}, {have} of {have + lack} ops with CUDA kernels, {devices}"


def _conv_summary(core) -> str:
    """oneDNN's version and library, or why Ember's own kernels run every convolution."""
    info = core._C._onednn_info()
    if not info["version"]:
        return f"Ember's kernels (oneDNN not loaded: {info['reason']})"
    state = "" if core._C._onednn_enabled() else ", switched off (backends.mkldnn.enabled)"
    dtypes = "float32 and bfloat16" if info["bf16"] else "float32"
    return (f"oneDNN {info['version']} ({info['path']}), {dtypes}{state}; "
            "Ember's kernels for the rest")


# what multiplies bfloat16 operands, by the core's _build_info()["bf16_gemm"]
_BF16_GEMM = {
    "MKL": "MKL's bfloat16 kernels (AMX)",
    "oneDNN": "oneDNN's bfloat16 matmul (AVX512-BF16)",
    "": "float32 products of widened copies, rounded once",
}


def _core_lines(problems: list[str]) -> list[str]:
    core = ember._core
    build = core._C._build_info()
    allocator = core._C._host_allocator()
    overrides = core.library.registered_kernels()
    major, level = build["c_api"]
    return [
        f"tensor core: {_dist_of('ember_tensor')}, {os.path.dirname(core.__file__)}",
        f"  BLAS: {build['blas']}; CUDA: {_cuda_summary(core, build)}; "
        f"SIMD: {build['simd']}; threads: {core.get_num_threads()}; compiler: {build['compiler']}",
        f"  CPU convolutions: {_conv_summary(core)}",
        "  bfloat16 products: " + _BF16_GEMM[build["bf16_gemm"]],
        f"  C API: {major}.{level}; host allocator: {allocator['name']}"
        f"{' (plugin)' if allocator['plugin'] else ''}; kernel overrides: "
        + (", ".join(f"{op} -> {fn}" for op, fn in overrides.items()) or "none"),
    ]


def _slot_row(slot: str, problems: list[str]) -> list[str]:
    name, source = ember._choice(slot)
    try:
        provider = ember._resolve(slot)
    except ModuleNotFoundError as exc:
        problems.append(f"{slot}: {exc}")
        return [slot, name, "not installed", "-", source, "-"]
    except ember.SlotError as exc:
        problems.append(str(exc))
        return [slot, name, "error", "-", source, "-"]
    declared = getattr(provider, "INTERFACE_VERSION", None)
    dist = ember._active_dists.get(slot) or _dist_of(provider.__name__)
    return [slot, name, dist, f"{declared} (needs {ember._INTERFACES[slot]})",
            source, f"{provider.__name__} {os.path.dirname(getattr(provider, '__file__', '?'))}"]


def _other_providers(problems: list[str]) -> list[str]:
    lines = []
    for slot in sorted(ember._INTERFACES):
        group = f"ember.slots.{slot}"
        seen: dict[str, list[str]] = {}
        for ep in metadata.entry_points(group=group):
            dist = f"{ep.dist.name} {ep.dist.version}" if ep.dist is not None else "?"
            seen.setdefault(ep.name, []).append(dist)
        for name, dists in sorted(seen.items()):
            if len(dists) > 1:
                problems.append(f"{slot}: provider name {name!r} is declared by several "
                                f"distributions ({', '.join(dists)}) in {group!r}")
            if name != ember._active_names.get(slot):
                lines.append(f"  {slot}: {name} ({', '.join(dists)}); choose it with "
                             f"ember.use({slot}={name!r}) or EMBER_{slot.upper()}={name}")
    return lines


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def report() -> tuple[str, list[str]]:
    """The doctor's report, and the problems it found (also listed in the report)."""
    problems: list[str] = []
    lines = [f"Ember {ember.__version__} (Python {platform.python_version()}, "
             f"{platform.system()} {platform.machine()})", ""]
    lines += _core_lines(problems)
    rows = [["slot", "provider", "distribution", "interface", "chosen by", "module"]]
    rows += [_slot_row(slot, problems) for slot in sorted(ember._INTERFACES)]
    lines += ["", *_table(rows)]
    others = _other_providers(problems)
    lines += ["", "other providers installed:" if others else "other providers installed: none",
              *others, ""]
    lines += ["problems:", *(f"  - {p}" for p in problems)] if problems else ["problems: none"]
    return "\n".join(lines), problems


def main() -> int:
    text, problems = report()
    print(text)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
