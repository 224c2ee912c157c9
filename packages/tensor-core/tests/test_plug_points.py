"""The core's plug points: kernel overrides (ember_tensor.library), the host allocator through
the C API capsule (a C extension compiled here, loaded by child processes) and the plug-point
conformance kit (ember_tensor.conformance), run against good and broken providers."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor import library
from ember_tensor.conformance_kit import kit_outcomes, run_kit

KIT, CLASS = "ember_tensor.conformance", "TestCorePluginConformance"


@pytest.fixture
def x():
    return et.tensor([-2.0, -0.5, 0.0, 1.5, float("nan")])


def _clamp_relu(calls):
    def relu(x, *, out=None):
        calls.append("out" if out is not None else "new")
        result = et.relu(x)  # inside an override: the built-in kernel, no recursion
        if out is None:
            return result * 1
        out.copy_(result)
        return out
    return relu


# -- kernel overrides ------------------------------------------------------------------------


def test_override_runs_for_every_variant(x):
    calls: list[str] = []
    expected = np.array([0, 0, 0, 1.5, np.nan], dtype=np.float32)
    with library.register_kernel("relu", "cpu", _clamp_relu(calls)) as handle:
        np.testing.assert_array_equal(et.relu(x).numpy(), expected)
        np.testing.assert_array_equal(x.relu().numpy(), expected)
        out = et.empty(5)
        assert et.relu(x, out=out) is out
        y = x.clone()
        assert y.relu_() is y
        np.testing.assert_array_equal(y.numpy(), expected)
        assert library.registered_kernels() == {"relu": f"{__name__}._clamp_relu.<locals>.relu"}
        assert repr(handle).startswith("KernelHandle(op='relu'")
    assert calls == ["new", "new", "out", "out"]
    assert library.registered_kernels() == {}
    et.relu(x)
    assert len(calls) == 4  # removed: the built-in kernel again
    handle.remove()  # a second remove does nothing


def test_not_implemented_falls_back(x):
    seen = []

    @library.register_kernel("add")
    def add(a, b, alpha, *, out=None):
        seen.append((a.dtype, b.dtype, alpha))
        return NotImplemented

    try:
        np.testing.assert_array_equal(et.add(x, 1, alpha=2).numpy(), x.numpy() + 2)
        assert seen and seen[0][2] == 2
    finally:
        library.KernelHandle("add", add).remove()  # the decorator returned the function
    assert library.registered_kernels() == {}


def test_override_result_is_checked(x):
    with library.register_kernel("relu", "cpu", lambda x, *, out=None: 3):
        with pytest.raises(TypeError, match=r"relu: the kernel registered for it .* returned "
                                            r"<class 'int'>, expected a Tensor"):
            et.relu(x)
    with library.register_kernel("relu", "cpu", lambda x, *, out=None: x.clamp(min=0)):
        with pytest.raises(TypeError, match="must write into out and return it"):
            x.clone().relu_()


def test_override_errors_propagate(x):
    def boom(x, *, out=None):
        raise ValueError("kernel exploded")

    with library.register_kernel("relu", "cpu", boom):
        with pytest.raises(ValueError, match="kernel exploded"):
            et.relu(x)
    np.testing.assert_array_equal(et.relu(x)[:4].numpy(), [0, 0, 0, 1.5])


def test_register_kernel_errors():
    with pytest.raises(ValueError, match="'no_such_op' is not an op of ember_tensor"):
        library.register_kernel("no_such_op", "cpu", print)
    with pytest.raises(ValueError, match="device 'cuda' is not available .* 'cpu'"):
        library.register_kernel("relu", "cuda", print)
    with pytest.raises(TypeError, match="fn must be callable, got int"):
        library.register_kernel("relu", "cpu", 3)
    with library.register_kernel("relu", "cpu", print):
        with pytest.raises(RuntimeError, match=r"'relu' on 'cpu' already has an override "
                                               r"\(builtins.print\)"):
            library.register_kernel("relu", "cpu", repr)


def test_gradients_flow_through_an_override(autograd):

    a = np.array([-1.0, 0.5, 2.0])
    with library.register_kernel("exp", "cpu", lambda x, *, out=None: (x * 1).exp()):
        t = et.tensor(a, requires_grad=True)
        t.exp().sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), np.exp(a))


def test_includes_and_capsule():
    assert (Path(library.get_include()) / "ember_plugin.h").is_file()
    assert et.get_include() == library.get_include()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    versions = (ctypes.c_uint32 * 2).from_address(get(et._C_API, b"ember_tensor._C_API"))
    assert tuple(versions) == et._C._c_api_version() == (1, 1)
    info = et._C._build_info()
    assert info["cuda"] is et._C._cuda_is_built() and info["simd"] == et._C._cpu_capability()


# -- the host allocator through the C API ----------------------------------------------------

EXTENSION = r"""
#include <stdlib.h>
#include "ember_plugin.h"
static const EmberCApi* api;
static int mode;  /* 0 good, 1 NULL above 1 MiB, 2 misaligned */
static long long live;
static void* alloc(void* ctx, size_t n) {
  if (mode == 1 && n > (1 << 20)) return NULL;
  char* p = aligned_alloc(64, (n + 127) & ~(size_t)63);
  if (!p) return NULL;
  __atomic_add_fetch(&live, (long long)n, __ATOMIC_RELAXED);
  return mode == 2 ? p + 8 : p;
}
static void dealloc(void* ctx, void* p, size_t n) {
  __atomic_sub_fetch(&live, (long long)n, __ATOMIC_RELAXED);
  free(mode == 2 ? (char*)p - 8 : (char*)p);
}
static EmberHostAllocator allocator = {"test-allocator", NULL, alloc, dealloc};
static PyObject* install(PyObject* self, PyObject* args) {
  if (!PyArg_ParseTuple(args, "i", &mode)) return NULL;
  if (api->set_host_allocator(&allocator) != 0) return NULL;
  Py_RETURN_NONE;
}
static PyObject* live_bytes(PyObject* self, PyObject* unused) {
  return PyLong_FromLongLong(__atomic_load_n(&live, __ATOMIC_RELAXED));
}
static PyMethodDef methods[] = {{"install", install, METH_VARARGS, ""},
                                {"live_bytes", live_bytes, METH_NOARGS, ""}, {0}};
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "testalloc", "", -1, methods};
PyMODINIT_FUNC PyInit_testalloc(void) {
  api = ember_import_c_api();
  return api ? PyModule_Create(&def) : NULL;
}
"""


@pytest.fixture(scope="module")
def extension_dir(tmp_path_factory) -> Path:
    """A directory holding the compiled test plugin ``testalloc``."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    include = sysconfig.get_paths()["include"]
    if cc is None or not Path(include, "Python.h").exists():
        pytest.skip("needs a C compiler and the Python headers")
    where = tmp_path_factory.mktemp("plugin")
    (where / "testalloc.c").write_text(EXTENSION)
    target = where / f"testalloc{sysconfig.get_config_var('EXT_SUFFIX')}"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", f"-I{include}", f"-I{et.get_include()}",
                    str(where / "testalloc.c"), "-o", str(target)], check=True)
    return where


def run_child(where: Path, code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=where,
                          capture_output=True, text=True, timeout=120)


def test_installed_allocator_serves_every_tensor(extension_dir):
    proc = run_child(extension_dir, """
        import testalloc
        testalloc.install(0)
        import ember_tensor as et, numpy as np
        x = et.randn(1000, 100, dtype=et.float64)
        assert testalloc.live_bytes() == 800000, testalloc.live_bytes()
        y = x @ x.t()
        assert np.allclose(y.numpy(), x.numpy() @ x.numpy().T)
        info = et._C._host_allocator()
        assert info["name"] == "test-allocator" and info["plugin"] and info["in_use"], info
        del x, y
        assert testalloc.live_bytes() == 0, testalloc.live_bytes()
        print("ok")
    """)
    assert proc.stdout.strip() == "ok", proc.stderr


def test_install_after_first_allocation_says_when(extension_dir):
    proc = run_child(extension_dir, """
        import ember_tensor as et
        def make():
            return et.zeros(3)
        make()
        import testalloc
        try:
            testalloc.install(0)
        except RuntimeError as e:
            print(e)
    """)
    msg = proc.stdout
    assert "cannot install the host allocator 'test-allocator'" in msg, proc.stderr
    assert "'ember caching allocator' has been in use since the first CPU allocation" in msg
    assert "s ago, at <string>:4 in make <- <string>:5 in <module>" in msg
    assert "Install it before any tensor is created" in msg


def test_second_install_is_refused(extension_dir):
    proc = run_child(extension_dir, """
        import testalloc
        testalloc.install(0)
        try:
            testalloc.install(0)
        except RuntimeError as e:
            print(e)
    """)
    assert "the host allocator 'test-allocator' is installed already" in proc.stdout, proc.stderr


@pytest.mark.parametrize("mode, message", [
    (1, "out of memory: the host allocator 'test-allocator' could not allocate 4000000 bytes"),
    (2, "the host allocator 'test-allocator' returned memory at 0x[0-9a-f]+, which is not "
        "aligned to 64 bytes"),
])
def test_allocator_failures_are_errors(extension_dir, mode, message):
    proc = run_child(extension_dir, f"""
        import testalloc
        testalloc.install({mode})
        import ember_tensor as et
        try:
            et.empty(1000, 1000)
        except RuntimeError as e:
            print(e)
        print(testalloc.live_bytes())
    """)
    lines = proc.stdout.splitlines()
    assert len(lines) == 2, proc.stdout + proc.stderr
    assert __import__("re").search(message, lines[0]), lines[0]
    assert lines[1] == "0"  # a refused block was given back


# -- the conformance kit ---------------------------------------------------------------------

PROVIDER = """
import ember_tensor as et
from ember_tensor import library
{setup}
INTERFACE_VERSION = 1
HOST_ALLOCATOR_NAME = {allocator!r}

def relu(x, *, out=None):
    {relu}

def kernels():
    return {{"relu": relu}}

def register_kernels():
    return [library.register_kernel(op, "cpu", fn) for op, fn in kernels().items()]
"""
GOOD_RELU = """if out is not None:
        return NotImplemented
    return et.where(x > 0, x, et.zeros_like(x)) + et.where(x != x, x, et.zeros_like(x))"""


def write_provider(where: Path, name: str, relu: str = GOOD_RELU, allocator=None, setup=""):
    (where / f"{name}.py").write_text(PROVIDER.format(relu=relu, allocator=allocator,
                                                      setup=setup))


def test_kit_passes_against_the_core_itself(tmp_path):
    proc = run_kit(KIT, tmp_path)
    got = kit_outcomes(proc.stdout, KIT, CLASS)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert got["test_interface"] == "PASSED"
    assert got["test_allocator_is_the_core_host_allocator"] == "SKIPPED"
    assert got["test_kernel_matches_builtin[no-kernels]"] == "SKIPPED"
    assert "provider: ember_tensor._builtin_plugins" in proc.stdout


def test_kit_passes_a_good_plugin_with_an_allocator(tmp_path, extension_dir):
    shutil.copy(next(extension_dir.glob("testalloc*.so")), tmp_path)
    write_provider(tmp_path, "goodplugin", allocator="test-allocator",
                   setup="import testalloc\ntestalloc.install(0)")
    proc = run_kit(KIT, tmp_path, "--core-provider=goodplugin")
    got = kit_outcomes(proc.stdout, KIT, CLASS)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert got["test_kernel_matches_builtin[relu]"] == "PASSED"
    assert got["test_threads_allocate_concurrently"] == "PASSED"
    assert got["test_impossible_request_is_out_of_memory"] == "PASSED"
    assert sum(v == "PASSED" for v in got.values()) >= 17, got


@pytest.mark.parametrize("relu, failure", [
    ("return x.abs() if out is None else NotImplemented", "test_kernel_matches_builtin[relu]"),
    ("return NotImplemented", "test_kernel_matches_builtin[relu]"),
    ("x.zero_()\n    return NotImplemented", "test_kernel_matches_builtin[relu]"),
])
def test_kit_catches_a_wrong_kernel(tmp_path, relu, failure):
    write_provider(tmp_path, "badplugin", relu=relu)
    proc = run_kit(KIT, tmp_path, "--core-provider=badplugin")
    got = kit_outcomes(proc.stdout, KIT, CLASS)
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert got[failure] == "FAILED"


def test_kit_catches_a_wrong_allocator_name(tmp_path):
    write_provider(tmp_path, "liar", allocator="not-installed")
    proc = run_kit(KIT, tmp_path, "--core-provider=liar", "-k", "host_allocator")
    assert kit_outcomes(proc.stdout, KIT, CLASS) == {
        "test_allocator_is_the_core_host_allocator": "FAILED"}, proc.stdout[-3000:]
