"""The op schema: codegen/gen.py accepts ops.yaml and rejects malformed entries with a
message naming the entry (the build runs the same generator and fails the same way)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GEN = Path(__file__).resolve().parents[1] / "codegen" / "gen.py"
OPS = GEN.parent.parent / "ops.yaml"

pytestmark = pytest.mark.skipif(not GEN.exists(), reason="needs the source tree (codegen/gen.py)")

GOOD = """\
- name: twice
  signature: "(Tensor self, *, Scalar alpha=2) -> Tensor"
  variants: [function, method, out]
  dtypes: float
  doc: "alpha * self."
"""

BAD = [
    ('signature: "(Tensor self, Foo x) -> Tensor"', "unknown type 'Foo'"),
    ('signature: "Tensor self -> Tensor"', "is not '(args) -> ret'"),
    ("variants: [function, sideways]", "variants must be"),
    ("dtypes: quaternion", "dtypes 'quaternion'"),
    ('signature: "(Tensor self, int k=1.5) -> Tensor"', "does not fit type int"),
    ('signature: "(int n) -> Tensor"\n  variants: [method]', "need a first argument 'Tensor self'"),
]


def run_gen(tmp_path, text, *extra):
    src = tmp_path / "ops.yaml"
    src.write_text(text)
    return subprocess.run([sys.executable, str(GEN), "--yaml", str(src), *extra],
                          capture_output=True, text=True)


def test_good_entry_generates_everything(tmp_path):
    out = tmp_path / "gen"
    proc = run_gen(tmp_path, GOOD, "--out", str(out), "--docs", str(tmp_path / "ops.md"))
    assert proc.returncode == 0, proc.stderr
    decl = (out / "ops_decl.h").read_text()
    assert "Tensor twice(const Tensor& self, const Scalar& alpha, const Tensor& out);" in decl
    binding = "".join(p.read_text() for p in out.glob("bind_ops_*.cpp"))
    assert 'm.def("twice"' in binding and 'cls.def("twice"' in binding
    assert 'py::arg("alpha") = py::int_(2)' in binding and "py::kw_only()" in binding
    stub = (out / "_C.pyi").read_text()
    assert "def twice(self: Tensor, *, alpha: float = 2, out: Tensor | None = None)" in stub
    assert "| `twice` |" in (tmp_path / "ops.md").read_text()


@pytest.mark.parametrize("line,problem", BAD, ids=[b[1] for b in BAD])
def test_malformed_entry_names_the_entry(tmp_path, line, problem):
    key = line.split(":")[0]
    text = "\n".join("  " + line if ln.strip().startswith(key + ":") else ln
                     for ln in GOOD.splitlines())
    if "\n" in line:  # replaces two keys
        text = GOOD.replace('  signature: "(Tensor self, *, Scalar alpha=2) -> Tensor"\n'
                            "  variants: [function, method, out]", "  " + line)
    proc = run_gen(tmp_path, text, "--out", str(tmp_path / "gen"))
    assert proc.returncode != 0
    assert "malformed op entry 0 ('twice')" in proc.stderr
    assert problem in proc.stderr


def test_dtypes_of_promoted_checks_the_operands_result_type(tmp_path):
    text = GOOD.replace('"(Tensor self, *, Scalar alpha=2) -> Tensor"',
                        '"(Tensor self, Tensor|Scalar other) -> Tensor"')
    out = tmp_path / "gen"
    promoted = text.replace("  dtypes: float\n", "  dtypes: float\n  dtypes_of: promoted\n")
    proc = run_gen(tmp_path, promoted, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    binding = "".join(p.read_text() for p in out.glob("bind_ops_*.cpp"))
    assert 'check_dtypes("twice", result_type({self.get(), other.t.get()}), ' in binding
    proc = run_gen(tmp_path, promoted.replace("promoted", "all"), "--out", str(out))
    assert proc.returncode != 0 and "dtypes_of must be 'promoted'" in proc.stderr


def test_invalid_yaml_is_a_clear_error(tmp_path):
    proc = run_gen(tmp_path, GOOD + "  - [unbalanced\n")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr and "is not valid YAML" in proc.stderr


def test_missing_key_and_duplicate(tmp_path):
    proc = run_gen(tmp_path, GOOD.replace('  doc: "alpha * self."\n', ""))
    assert proc.returncode != 0 and "missing required key 'doc'" in proc.stderr
    proc = run_gen(tmp_path, GOOD + GOOD)
    assert proc.returncode != 0 and "malformed op entry 1 ('twice')" in proc.stderr


def test_shipped_ops_yaml_is_valid(tmp_path):
    proc = subprocess.run([sys.executable, str(GEN), "--yaml", str(OPS), "--docs",
                           str(tmp_path / "ops.md")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    table = (tmp_path / "ops.md").read_text()
    for op in ("add", "matmul", "sum", "gather", "randn", "cat"):
        assert f"| `{op}` |" in table
