"""The conformance kit of the tensor core's plug points: a pytest plugin, enabled explicitly.

    python -m pytest -p ember_tensor.conformance --core-provider=MODULE [--core-xfail=FILE]

It checks a package that plugs into the core (docs/plugins.md): a host allocator installed
through the C API (``ember_plugin.h``) and kernel overrides registered through
``ember_tensor.library``. The provider under test is an importable module exposing:

``INTERFACE_VERSION``
    ``1``, the version of this protocol.
``HOST_ALLOCATOR_NAME``
    The name of the host allocator that importing the module installed, or ``None`` when it
    installs none. The kit imports the provider when pytest is configured, before any tensor
    exists, so the allocator is in place for every test.
``kernels()``
    A dict ``{op name: kernel}`` of the overrides it offers (may be empty).
``register_kernels()``
    Registers them all with ``ember_tensor.library.register_kernel``; returns the handles.

Allocator tests (skipped when ``INTERFACE_VERSION``
    ``1``, the version of this protocol.
``HOST_ALLOCATOR_NAME`` is None): the allocator is the core's
host allocator, its memory is 64-byte aligned and holds what is written to it for sizes from
zero bytes to several MiB, ops give NumPy's results on it, views and NumPy arrays keep its
blocks alive, threads and a forked child allocate safely, and an impossible request is an
"out of memory" ``RuntimeError``. Kernel tests, for every op of ``kernels()`` whose required
arguments are all tensors: on float, integer and special values, contiguous, strided, empty
and 0-d tensors, and on each variant the op has (function, method, in-place, ``out=``), the
kernel gives the built-in kernel's result (same dtype and shape, equal values within the
dtype's rounding, NaN where NaN), leaves its inputs unchanged, handles at least one case
itself (a kernel that always returns ``NotImplemented`` is dead code), and gradients flow
through it as through the built-in kernel (when an autograd provider is installed).

``--core-xfail=FILE`` lists expected failures, one ``<test id> : <reason>`` a line, as for the
other kits (``ember_tensor.conformance_kit``).
"""

from __future__ import annotations

import gc
import os
import threading

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor import library
from ember_tensor.conformance_kit import define_kit

CLASS_NAME = "TestCorePluginConformance"
INTERFACE_VERSION = 1

# the pytest plugin: its hooks come from ember_tensor.conformance_kit
_KIT = define_kit(globals(), component="core", class_name=CLASS_NAME,
                  default_provider="ember_tensor._builtin_plugins")

# dtypes the kernel cases are drawn in (those the op accepts), and their comparison tolerance
_DTYPES = {"float32": 1e-6, "float64": 1e-13, "int64": 0, "int32": 0, "uint8": 0, "bool": 0}
_schema = library._op_schema  # op name -> its ops_schema.json entry


def _tensor_arity(op: str) -> int | None:
    """How many tensors the op's required arguments are, or None when some required argument
    is not a tensor (the kit cannot draw inputs for it)."""
    required = [a for a in _schema()[op]["args"] if a["default"] is None]
    if not required or any(a["type"] != "Tensor" for a in required):
        return None
    return len(required)


def _values(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("float"):
        v = rng.standard_normal(shape) * 3
        flat = v.reshape(-1)
        specials = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-30]
        flat[: min(len(flat), len(specials))] = specials[: len(flat)]
        return v.astype(dtype)
    lo = 0 if dtype == "uint8" else -50
    return rng.integers(lo, 50, shape).astype(dtype)


def _layouts(arity: int):
    """(name, [shapes of the inputs], how to make each input from a NumPy array)."""
    same = lambda s: [s] * arity  # noqa: E731
    yield "contiguous", same((3, 5)), lambda a: et.from_numpy(a.copy())
    yield "0-d", same(()), lambda a: et.tensor(a)
    yield "empty", same((4, 0)), lambda a: et.from_numpy(a.copy())
    yield "transposed", same((5, 3)), lambda a: et.from_numpy(a.T.copy()).t()
    yield "sliced", same((4, 12)), lambda a: et.from_numpy(np.repeat(a, 2, axis=1).copy())[:, ::2]
    if arity == 2:
        yield "broadcast", [(3, 1), (1, 5)], lambda a: et.from_numpy(a.copy())


def _same(actual, expected, what: str, tol: float) -> None:
    assert isinstance(actual, et.Tensor), f"{what}: got {type(actual).__name__}"
    assert actual.dtype == expected.dtype, (
        f"{what}: dtype {actual.dtype}, built-in {expected.dtype}")
    assert tuple(actual.shape) == tuple(expected.shape), (
        f"{what}: shape {tuple(actual.shape)}, built-in {tuple(expected.shape)}")
    a, e = actual.numpy(), expected.numpy()
    if tol:
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(a, e, err_msg=what)


class TestCorePluginConformance:
    """What a package plugging into the core must do. ``self.plugin`` is the provider."""

    @staticmethod
    def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
        if "kernel_op" in metafunc.fixturenames:
            ops = sorted(metafunc.config.stash[_KIT].provider.kernels())
            metafunc.parametrize("kernel_op", ops or [None], ids=ops or ["no-kernels"])

    @pytest.fixture(autouse=True)
    def _provider(self, request: pytest.FixtureRequest):
        self.plugin = request.config.stash[_KIT].provider

    def _needs_allocator(self) -> str:
        name = getattr(self.plugin, "HOST_ALLOCATOR_NAME", None)
        if name is None:
            pytest.skip("the provider installs no host allocator (HOST_ALLOCATOR_NAME is None)")
        return name

    # -- the host allocator ------------------------------------------------------------------

    def test_interface(self):
        declared = getattr(self.plugin, "INTERFACE_VERSION", None)
        assert declared == INTERFACE_VERSION, (
            f"the provider declares INTERFACE_VERSION {declared!r}, the kit checks "
            f"{INTERFACE_VERSION}")
        assert hasattr(self.plugin, "HOST_ALLOCATOR_NAME"), "no HOST_ALLOCATOR_NAME"
        assert callable(getattr(self.plugin, "kernels", None)), "the provider has no kernels()"
        assert callable(getattr(self.plugin, "register_kernels", None)), (
            "the provider has no register_kernels()")
        for op, fn in self.plugin.kernels().items():
            assert op in _schema(), f"kernels(): {op!r} is not an op of ember_tensor"
            assert callable(fn), f"kernels()[{op!r}] is not callable"

    def test_allocator_is_the_core_host_allocator(self):
        name = self._needs_allocator()
        et.zeros(3)
        info = et._C._host_allocator()
        assert info["name"] == name and info["plugin"] and info["in_use"], info

    @pytest.mark.parametrize("nbytes", [0, 1, 3, 64, 1000, 4097, 1 << 20, 3 << 21])
    def test_blocks_are_aligned_and_hold_their_bytes(self, nbytes):
        self._needs_allocator()
        t = et.empty(nbytes, dtype=et.uint8)
        if nbytes:
            assert t.data_ptr() % 64 == 0, f"{nbytes} bytes at {t.data_ptr():#x}: not 64-aligned"
        pattern = (np.arange(nbytes) % 251).astype(np.uint8)
        t.copy_(et.from_numpy(pattern))
        others = [et.full((nbytes // 8 + 1,), 7.0, dtype=et.float64) for _ in range(3)]
        np.testing.assert_array_equal(t.numpy(), pattern)
        assert all(bool((o == 7.0).all()) for o in others)

    def test_ops_agree_with_numpy(self):
        self._needs_allocator()
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal((64, 48)), rng.standard_normal((48, 32))
        ta, tb = et.from_numpy(a), et.from_numpy(b)
        np.testing.assert_allclose((ta @ tb).numpy(), a @ b, rtol=1e-12)
        np.testing.assert_allclose((ta.exp() + 1).sum(dim=0).numpy(), (np.exp(a) + 1).sum(0),
                                   rtol=1e-12)
        np.testing.assert_array_equal(ta.argsort(dim=1).numpy(), np.argsort(a, 1, kind="stable"))

    def test_views_and_numpy_keep_blocks_alive(self):
        self._needs_allocator()
        x = et.arange(1000, dtype=et.float64)
        view, array = x[10:20], x.numpy()
        del x
        gc.collect()
        et.full((1000,), -1.0, dtype=et.float64)  # would reuse a freed block
        np.testing.assert_array_equal(view.numpy(), np.arange(10, 20.0))
        np.testing.assert_array_equal(array, np.arange(1000.0))

    def test_threads_allocate_concurrently(self):
        self._needs_allocator()
        errors: list[BaseException] = []

        def work(seed: int) -> None:
            try:
                rng = np.random.default_rng(seed)
                for _ in range(30):
                    a = rng.standard_normal((96, 96))
                    got = (et.from_numpy(a) @ et.from_numpy(a)).numpy()  # GIL released
                    np.testing.assert_allclose(got, a @ a, rtol=1e-10)
                    del got
            except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads), "a thread hung allocating"
        assert not errors, errors[0]

    @pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
    def test_forked_child_allocates(self):
        self._needs_allocator()
        keep = et.ones(1 << 16)
        pid = os.fork()
        if pid == 0:  # the child: allocate, check, exit without pytest's teardown
            ok = bool((et.ones(1 << 16) + keep).sum().item() == 2 * (1 << 16))
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, f"the forked child failed: {status}"

    def test_impossible_request_is_out_of_memory(self):
        self._needs_allocator()
        with pytest.raises(RuntimeError, match="out of memory"):
            et.empty(1 << 50, dtype=et.uint8)
        assert bool((et.ones(4) + 1 == 2).all())  # and the allocator still works

    # -- kernel overrides --------------------------------------------------------------------

    def _kernel(self, op):
        if op is None:
            pytest.skip("the provider offers no kernel overrides (kernels() is empty)")
        arity = _tensor_arity(op)
        if arity is None:
            pytest.skip(f"{op}: the kit draws inputs only for ops whose required arguments are "
                        "all tensors")
        return self.plugin.kernels()[op], arity

    def _cases(self, op, arity):
        rng = np.random.default_rng(0)
        dtypes = [d for d in _DTYPES if d in _schema()[op]["dtypes"]]
        for dtype in dtypes:
            for layout, shapes, make in _layouts(arity):
                arrays = [_values(s, dtype, rng) for s in shapes]
                yield f"{op} {dtype} {layout}", dtype, (lambda arrays=arrays, make=make:
                                                        [make(a) for a in arrays])

    def test_kernel_matches_builtin(self, kernel_op):
        fn, arity = self._kernel(kernel_op)
        handled = 0

        def counting(*args, **kwargs):
            nonlocal handled
            result = fn(*args, **kwargs)
            handled += result is not NotImplemented
            return result

        entry = _schema()[kernel_op]
        variants = entry["variants"]
        builtin = getattr(et, kernel_op)
        for what, dtype, inputs in self._cases(kernel_op, arity):
            tol = _DTYPES[dtype]
            try:
                expected = builtin(*inputs())
            except Exception:  # noqa: BLE001 - a case the op itself refuses
                continue
            args = inputs()
            before = [a.clone() for a in args]
            with library.register_kernel(kernel_op, "cpu", counting):
                _same(builtin(*args), expected, f"{what}: function", tol)
                if "method" in variants:
                    _same(getattr(args[0], kernel_op)(*args[1:]), expected, f"{what}: method", tol)
                for a, b in zip(args, before):
                    _same(a, b, f"{what}: the kernel changed an input", 0)
                if "out" in variants:
                    out = et.empty(tuple(expected.shape), dtype=expected.dtype)
                    _same(builtin(*args, out=out), expected, f"{what}: out=", tol)
                    _same(out, expected, f"{what}: the out= tensor", tol)
                if "inplace" in variants and expected.dtype == args[0].dtype and (
                        tuple(expected.shape) == tuple(args[0].shape)):
                    target = args[0].clone()
                    _same(getattr(target, kernel_op + "_")(*args[1:]), expected,
                          f"{what}: in-place result", tol)
                    _same(target, expected, f"{what}: the in-place target", tol)
        assert handled, (f"{kernel_op}: the kernel returned NotImplemented for every case the kit "
                         "tried, so it never runs")

    def test_gradients_flow_through_kernel(self, kernel_op):
        fn, arity = self._kernel(kernel_op)
        pytest.importorskip("ember_autograd", reason="needs an autograd provider")
        import ember_autograd  # noqa: F401  (installs the core's autograd hook)

        if "float32" not in _schema()[kernel_op]["dtypes"]:
            pytest.skip(f"{kernel_op} takes no float32 tensors")
        rng = np.random.default_rng(1)
        arrays = [rng.standard_normal((4, 6)).astype(np.float32) + 0.1 for _ in range(arity)]

        def grads(register: bool):
            xs = [et.from_numpy(a.copy()).requires_grad_() for a in arrays]
            if register:
                with library.register_kernel(kernel_op, "cpu", fn):
                    y = getattr(et, kernel_op)(*xs)
            else:
                y = getattr(et, kernel_op)(*xs)
            (y * et.from_numpy(arrays[0])).sum().backward()
            return y, [x.grad for x in xs]

        y_k, g_k = grads(True)
        y_b, g_b = grads(False)
        _same(y_k.detach(), y_b.detach(), f"{kernel_op}: forward", 1e-6)
        for i, (a, b) in enumerate(zip(g_k, g_b)):
            _same(a, b, f"{kernel_op}: gradient of input {i}", 1e-6)

    def test_register_kernels_registers_them_all(self):
        offered = set(self.plugin.kernels())
        handles = self.plugin.register_kernels()
        try:
            assert set(library.registered_kernels()) >= offered, (
                f"register_kernels() registered {sorted(library.registered_kernels())}, "
                f"kernels() offers {sorted(offered)}")
        finally:
            for h in handles:
                h.remove()
        assert not set(library.registered_kernels()) & offered, (
            "removing the handles register_kernels() returned left overrides in place")
