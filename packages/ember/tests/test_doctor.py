"""``python -m ember doctor``: the core's build, every slot's provider, the other providers,
and the problems (an unknown, broken or outdated provider), with the exit status."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ember
from slot_helpers import fake_plugins, run

DOCTOR = "import sys; from ember.__main__ import main; sys.exit(main(sys.argv[1:]))"


def doctor(cwd: Path, *args: str, **env: str):
    return run(cwd, f"import sys; sys.argv[1:] = {list(args) or ['doctor']!r}\n{DOCTOR}", **env)


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    return fake_plugins(tmp_path)


def test_healthy_installation(plugins):
    proc = doctor(plugins)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    core = ember._core._C._build_info()
    assert f"Ember {ember.__version__}" in out
    cuda = "CUDA: built for sm_" if core["cuda"] else "CUDA: not built; "
    assert f"BLAS: {core['blas']}; {cuda}" in out and f"SIMD: {core['simd']}" in out
    assert "host allocator: ember caching allocator; kernel overrides: none" in out
    dnnl = ember._core._C._onednn_info()
    conv = (f"CPU convolutions: oneDNN {dnnl['version']} ({dnnl['path']})" if dnnl["version"]
            else f"CPU convolutions: Ember's kernels (oneDNN not loaded: {dnnl['reason']})")
    assert conv in out
    bf16 = {"MKL": "MKL's bfloat16 kernels (AMX)",
            "oneDNN": "oneDNN's bfloat16 matmul (AVX512-BF16)",
            "": "float32 products of widened copies, rounded once"}[core["bf16_gemm"]]
    assert f"bfloat16 products: {bf16}" in out
    for slot, module in [("autograd", "ember_autograd"), ("data", "ember_data"),
                         ("mp", "ember_mp"), ("nn", "ember_nn"), ("optim", "ember_optim"),
                         ("distributions", "ember_distributions"),
                         ("distributed", "ember_distributed")]:
        dist = module.replace("_", "-")
        row = re.search(rf"^{slot} +ember +{dist} \S+ +1 \(needs 1\) +the default +{module} ",
                        out, re.M)
        assert row, f"no row for {slot}:\n{out}"
    assert "optim: good (fake-good 1.2); choose it with ember.use(optim='good')" in out
    assert out.rstrip().endswith("problems: none")


@pytest.mark.parametrize("choice, problem", [
    ("good", None),
    ("nosuch", "slot 'optim': no provider 'nosuch' (chosen by the environment variable "
               "EMBER_OPTIM)"),
    ("broken", "provider 'broken' (fake_broken, fake-broken 1.2; chosen by the environment "
               "variable EMBER_OPTIM) failed to import: ImportError: needs libfoo"),
    ("old", "implements interface version 0, but this ember needs version 1"),
])
def test_chosen_provider_and_its_problems(plugins, choice, problem):
    proc = doctor(plugins, EMBER_OPTIM=choice)
    out = proc.stdout
    if problem is None:
        assert proc.returncode == 0, out + proc.stderr
        assert re.search(r"^optim +good +fake-good 1\.2 +1 \(needs 1\) +the environment "
                         r"variable EMBER_OPTIM +fake_good ", out, re.M), out
    else:
        assert proc.returncode == 1, out + proc.stderr
        problems = out[out.index("problems:"):]
        assert problem in problems, out
        assert re.search(r"^optim +\S+ +(error|not installed) ", out, re.M), out


def test_usage(tmp_path):
    proc = doctor(tmp_path, "frobnicate")
    assert proc.returncode == 2
    assert "usage: python -m ember doctor" in proc.stderr
