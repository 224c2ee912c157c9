"""The compiled module keeps the static libraries linked into it private.

On the lent GPU machine (issue 29) the toolchain linked libstdc++ into ``_C`` statically and
exported its symbols; the process's own ``libstdc++.so.6`` (NumPy loads it) then took over
some of them, and the first number written into a ``std::ostringstream`` called a method of
the wrong locale facet: every other op crashed. ``--exclude-libs,ALL`` (CMakeLists.txt) keeps
such copies private. Template instantiations from the headers may still be exported (they are
vague-linkage symbols of every C++ module); what must not be is the library's own code.
"""

import shutil
import subprocess

import pytest

from ember_tensor import _C

# defined only by the C++ runtime library itself, never instantiated from a header
RUNTIME_SYMBOLS = {
    "_ZNSt6locale7classicEv": "std::locale::classic()",
    "_ZNSt8ios_base4InitC1Ev": "std::ios_base::Init::Init()",
    "__cxa_throw": "__cxa_throw",
    "cudaMalloc": "cudaMalloc (the CUDA runtime)",
}


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")
def test_no_static_runtime_library_is_exported():
    out = subprocess.run(
        ["nm", "-D", "--defined-only", _C.__file__], capture_output=True, text=True, check=True
    ).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
    assert "PyInit__C" in exported
    leaked = sorted(name for sym, name in RUNTIME_SYMBOLS.items() if sym in exported)
    assert not leaked, f"{_C.__file__} exports {leaked}"
