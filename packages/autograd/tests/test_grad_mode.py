"""Grad modes against torch: no_grad / enable_grad / set_grad_enabled / inference_mode as
context managers, decorators (functions and generators) and plain calls; thread-locality."""

from __future__ import annotations

import threading

import pytest
import torch

import ember_autograd as ea
import ember_tensor as et

LIBS = [
    pytest.param((torch, torch.autograd, torch.is_grad_enabled), id="torch"),
    pytest.param((et, ea, ea.is_grad_enabled), id="ember"),
]


@pytest.fixture(autouse=True)
def _grad_mode_restored():
    yield
    assert ea.is_grad_enabled() and torch.is_grad_enabled()
    assert not ea.is_inference_mode_enabled()


def _records(lib, x) -> bool:
    return (x * 2).requires_grad


@pytest.mark.parametrize("libs", LIBS)
def test_no_grad_and_enable_grad_context(libs):
    lib, ag, enabled = libs
    x = lib.ones(2, requires_grad=True)
    assert enabled() and _records(lib, x)
    with ag.no_grad():
        assert not enabled() and not _records(lib, x)
        with ag.enable_grad():
            assert enabled() and _records(lib, x)
        assert not enabled()
        y = x * 2
    assert enabled() and not y.requires_grad and y.grad_fn is None
    # an exception inside restores the mode
    with pytest.raises(KeyError):
        with ag.no_grad():
            raise KeyError
    assert enabled()


@pytest.mark.parametrize("libs", LIBS)
def test_decorators_with_and_without_parentheses(libs):
    lib, ag, enabled = libs
    x = lib.ones(2, requires_grad=True)

    @ag.no_grad()
    def f():
        return enabled(), x * 2

    @ag.no_grad
    def f2():
        return enabled()

    @ag.enable_grad()
    def g():
        return enabled(), _records(lib, x)

    mode, y = f()
    assert mode is False and not y.requires_grad
    assert f2() is False
    assert f.__name__ == "f"  # functools.wraps
    with ag.no_grad():
        assert g() == (True, True)
        assert not enabled()


@pytest.mark.parametrize("libs", LIBS)
def test_set_grad_enabled_call_context_decorator(libs):
    lib, ag, enabled = libs
    x = lib.ones(2, requires_grad=True)
    ag.set_grad_enabled(False)  # a plain call takes effect at once
    try:
        assert not enabled() and not _records(lib, x)
    finally:
        ag.set_grad_enabled(True)
    assert enabled()
    with ag.set_grad_enabled(False):
        assert not enabled()
        with ag.set_grad_enabled(True):
            assert enabled()
        assert not enabled()
    assert enabled()

    @ag.set_grad_enabled(False)
    def f():
        return enabled()

    assert enabled()  # decorating changes nothing
    assert f() is False
    assert enabled()


@pytest.mark.parametrize("libs", LIBS)
def test_set_grad_enabled_rejects_non_bool(libs):
    lib, ag, enabled = libs
    with pytest.raises(TypeError):
        ag.set_grad_enabled(1)
    assert enabled()


@pytest.mark.parametrize("libs", LIBS)
def test_inference_mode(libs):
    lib, ag, enabled = libs
    inference = torch.is_inference_mode_enabled if lib is torch else ea.is_inference_mode_enabled
    x = lib.ones(2, requires_grad=True)
    with ag.inference_mode():
        assert inference() and not enabled() and not _records(lib, x)
    assert not inference() and enabled()
    with ag.inference_mode(False):
        assert not inference() and _records(lib, x)

    @ag.inference_mode
    def f():
        return inference(), _records(lib, x)

    @ag.inference_mode()
    def g():
        return inference()

    assert f() == (True, False)
    assert g() is True
    assert not inference()


@pytest.mark.parametrize("libs", LIBS)
def test_is_grad_enabled_exports(libs):
    lib, ag, enabled = libs
    assert enabled() is True
    assert ea.grad_mode.is_grad_enabled is ea.is_grad_enabled


@pytest.mark.parametrize("libs", LIBS)
def test_grad_mode_is_thread_local(libs):
    lib, ag, enabled = libs
    x = lib.ones(2, requires_grad=True)
    seen = {}
    started, release = threading.Event(), threading.Event()

    def worker():
        seen["initial"] = enabled()
        seen["records"] = _records(lib, x)
        with ag.no_grad():
            started.set()
            release.wait(5)
            seen["inside"] = enabled()

    with ag.no_grad():
        th = threading.Thread(target=worker)
        th.start()
        started.wait(5)
        # the other thread's no_grad is not visible here either
        with ag.enable_grad():
            assert enabled()
        release.set()
        th.join()
        assert not enabled()
    assert seen == {"initial": True, "records": True, "inside": False}
    assert enabled()


@pytest.mark.parametrize("libs", LIBS)
def test_decorated_generator_mode_inside(libs):
    lib, ag, enabled = libs

    @ag.no_grad()
    def gen():
        got = yield enabled()
        yield enabled(), got
        return "done"

    g = gen()
    assert next(g) is False
    assert g.send(5) == (False, 5)
    with pytest.raises(StopIteration) as stop:
        next(g)
    assert stop.value.value == "done"
    assert enabled()


@pytest.mark.parametrize("libs", LIBS)
def test_decorated_generator_enable_grad_inside_no_grad(libs):
    lib, ag, enabled = libs

    @ag.enable_grad()
    def gen():
        for _ in range(2):
            yield enabled()

    with ag.no_grad():
        assert list(gen()) == [True, True]
        assert not enabled()


@pytest.mark.parametrize("libs", LIBS[1:])
def test_decorated_generator_does_not_leak_mode_to_caller(libs):
    lib, ag, enabled = libs

    @ag.no_grad()
    def gen():
        yield 1
        yield 2

    g = gen()
    try:
        next(g)
        assert enabled()  # torch: True (the mode is set only while the generator runs)
        next(g)
        assert enabled()
    finally:
        g.close()
        ea.set_grad_enabled(True)


def test_decorated_generator_does_not_leak_mode_to_caller_torch():
    @torch.no_grad()
    def gen():
        yield 1

    g = gen()
    next(g)
    assert torch.is_grad_enabled()
    g.close()


def test_decorated_generator_forwards_throw_and_close():
    log = []

    @ea.no_grad()
    def gen():
        try:
            yield 1
        except ValueError:
            log.append(("caught", ea.is_grad_enabled()))
            yield 2
        finally:
            log.append("finally")

    g = gen()
    try:
        next(g)
        assert g.throw(ValueError("x")) == 2
        g.close()
        assert log == [("caught", False), "finally"]
    finally:
        g.close()
        ea.set_grad_enabled(True)


@pytest.mark.parametrize("libs", LIBS)
def test_decorating_a_class_is_refused(libs):
    lib, ag, enabled = libs
    if lib is torch:
        with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):

            @ag.no_grad()
            class C:
                pass

        return
    with pytest.raises(TypeError, match="decorates functions, not classes"):

        @ag.no_grad()
        class D:
            pass
