"""ember.compile / ember.compiler (the identity with a one-time notice), ember.jit (script and
trace return their argument; archives are NotImplementedError) and ember.accelerator
(PyTorch's device-agnostic API over CUDA), against torch where both can run here."""

from __future__ import annotations

import warnings

import pytest
import torch

import ember_tensor as et
from ember_tensor import compiler


def _double(x):
    return 2 * x


def test_compile_returns_the_callable_with_one_notice(monkeypatch):
    monkeypatch.setattr(compiler, "_noticed", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert et.compile(_double) is _double
        assert et.compile(_double, mode="reduce-overhead", fullgraph=True) is _double
        decorated = et.compile(dynamic=True)(_double)
    assert decorated is _double
    assert [str(w.message).split(";")[0] for w in caught] == [
        "ember.compile: Ember has no compiler yet"]
    assert et.compile(_double, disable=True) is _double


@pytest.mark.parametrize("call", [lambda lib: lib.compile(_double, mode="fastest"),
                                  lambda lib: lib.compile(3)])
def test_compile_errors_match_torch(call):
    with pytest.raises(Exception) as got:
        call(et)
    with pytest.raises(Exception) as want:
        call(torch)
    assert (type(got.value), str(got.value)) == (type(want.value), str(want.value))


def test_compiler_queries():
    assert et.compiler.is_compiling() is torch.compiler.is_compiling() is False
    assert et.compiler.disable(_double) is _double
    assert et.compiler.disable()(_double) is _double


def test_jit_script_and_trace_run_eagerly():
    x = et.ones(3)
    assert et.jit.script(_double) is _double
    assert et.jit.trace(_double, (x,)) is _double
    assert et.jit.ignore(_double) is _double and et.jit.ignore(drop=True)(_double) is _double
    assert et.jit.is_scripting() is torch.jit.is_scripting() is False
    assert et.jit.is_tracing() is False
    with pytest.raises(NotImplementedError, match="state_dict"):
        et.jit.save(_double, "unused.pt")
    with pytest.raises(NotImplementedError, match="state_dict"):
        et.jit.load("unused.pt")
    with pytest.raises(RuntimeError, match="function or a module"):
        et.jit.trace(3, (x,))


def test_accelerator_matches_torch_without_one():
    assert et.accelerator.is_available() == et.cuda.is_available()
    if et.cuda.is_available():
        assert et.accelerator.current_accelerator() == et.device("cuda")
        assert et.accelerator.device_count() == et.cuda.device_count()
        return
    assert et.accelerator.current_accelerator() is torch.accelerator.current_accelerator()
    assert et.accelerator.device_count() == torch.accelerator.device_count() == 0
    for name in ("current_device_index", "synchronize", "memory_allocated"):
        with pytest.raises(RuntimeError) as got:
            getattr(et.accelerator, name)()
        assert str(got.value) == "Cannot access accelerator device when none is available."
    with et.accelerator.device_index(None):
        pass
    et.accelerator.empty_cache()  # nothing to release, no error


def test_backend_flags_programs_ask_for():
    assert et.backends.mps.is_available() is et.backends.mps.is_built() is False
    assert torch.backends.mps.is_available() is False  # this machine: the same answer
    assert et.backends.openmp.is_available() is False
