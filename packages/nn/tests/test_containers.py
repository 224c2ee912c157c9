"""Containers side by side with torch.nn: the same operations, the same keys, reprs and
errors."""

from __future__ import annotations

from collections import OrderedDict

import pytest
import torch

import ember_nn as nn
import ember_tensor as et
from nn_testing import torch_repr

LIBS = pytest.mark.parametrize("lib", ["ember", "torch"])


def libs(name: str):
    return (nn, et) if name == "ember" else (torch.nn, torch)


def names(container) -> list[str]:
    return [type(m).__name__ for m in container]


def sequential_story(name: str) -> list:
    N, T = libs(name)
    out = []
    s = N.Sequential(N.Linear(2, 3), N.ReLU(), N.Linear(3, 1))
    out.append((len(s), names(s), list(s._modules)))
    out.append((type(s[0]).__name__, type(s[-1]).__name__))
    sub = s[1:]
    out.append((type(sub).__name__, list(sub._modules), sub[0] is s[1]))
    out.append(names(s[::-1]))
    s.append(N.Tanh())
    s.insert(1, N.Sigmoid())
    s.insert(-1, N.Identity())
    out.append(names(s))
    s.extend([N.ELU(), N.GELU()])
    popped = s.pop(2)
    out.append((type(popped).__name__, names(s), list(s._modules)))
    del s[0]
    del s[1:3]
    out.append((names(s), list(s._modules)))
    s[0] = N.SiLU()
    out.append(names(s))
    doubled = s * 2
    out.append((names(doubled), list(doubled._modules)))
    out.append(names(2 * s))
    s2 = s + N.Sequential(N.ReLU())
    out.append(names(s2))
    s += N.Sequential(N.Softplus())
    out.append(names(s))
    s *= 2
    out.append(names(s))
    od = N.Sequential(OrderedDict([("first", N.ReLU()), ("second", N.Tanh())]))
    out.append((list(od._modules), type(od.first).__name__, list(od[1:]._modules)))
    out.append(repr(od))
    for bad in (lambda: s[100], lambda: s.insert(100, N.ReLU()), lambda: s + 3, lambda: s * 0,
                lambda: s * 1.5, lambda: s.insert(0, 3)):
        try:
            bad()
        except (IndexError, ValueError, TypeError, AssertionError) as exc:
            out.append(f"{type(exc).__name__}: {torch_repr(str(exc))}".replace("ember.nn."
                       "modules.container.", "").replace("ember_nn.modules.container.", "")
                       .replace("ember.nn.modules.module.", "").replace(
                           "ember_nn.modules.module.", ""))
    x = T.ones(2, 2)
    out.append(tuple(N.Sequential(N.Linear(2, 3), N.ReLU())(x).shape))
    out.append(repr(N.Sequential()))
    return out


def test_sequential_matches_torch() -> None:
    assert sequential_story("ember") == sequential_story("torch")


def modulelist_story(name: str) -> list:
    N, T = libs(name)
    out = []
    ml = N.ModuleList([N.Linear(2, 2), N.ReLU()])
    ml.append(N.Tanh())
    ml.extend([N.Sigmoid(), N.ReLU()])
    ml.insert(1, N.Identity())
    out.append((names(ml), list(ml._modules), len(ml)))
    out.append((type(ml[-1]).__name__, names(ml[1:4]), type(ml[1:4]).__name__))
    ml[0] = N.ELU()
    del ml[1]
    out.append((names(ml), list(ml._modules)))
    del ml[::2]
    out.append((names(ml), list(ml._modules)))
    out.append((type(ml.pop(0)).__name__, names(ml)))
    ml += [N.GELU()]
    out.append(names(ml + N.ModuleList([N.SiLU()])))
    out.append(len(list(N.ModuleList([N.Linear(1, 1), N.Linear(1, 1)]).parameters())))
    try:
        ml.extend(3)
    except TypeError as exc:
        out.append(str(exc))
    try:
        ml[10]
    except IndexError as exc:
        out.append(str(exc))
    out.append(repr(N.ModuleList()))
    rep = N.ModuleList([N.Linear(2, 2) for _ in range(3)] + [N.ReLU()]
                       + [N.Sequential(N.Linear(1, 1), N.ReLU()) for _ in range(2)])
    out.append(repr(rep))
    return out


def test_modulelist_matches_torch() -> None:
    assert modulelist_story("ember") == modulelist_story("torch")


def moduledict_story(name: str) -> list:
    N, T = libs(name)
    out = []
    md = N.ModuleDict({"b": N.ReLU(), "a": N.Tanh()})
    out.append(list(md.keys()))
    md["c"] = N.Linear(1, 1)
    md.update([("d", N.Identity())])
    md.update(N.ModuleDict({"e": N.ELU()}))
    out.append((list(md), "c" in md, "z" in md, len(md), names(md.values())))
    out.append([k for k, _ in md.items()])
    out.append(type(md.pop("a")).__name__)
    del md["b"]
    out.append(list(md))
    out.append(repr(md))
    for bad in (lambda: md.update(3), lambda: md.update([("x",)]), lambda: md.update([3])):
        try:
            bad()
        except (TypeError, ValueError) as exc:
            out.append(f"{type(exc).__name__}: {exc}")
    md.clear()
    out.append(len(md))
    return out


def test_moduledict_matches_torch() -> None:
    assert moduledict_story("ember") == moduledict_story("torch")


def parameterlist_story(name: str) -> list:
    N, T = libs(name)
    out = []
    pl = N.ParameterList([N.Parameter(T.ones(2, 3)), T.zeros(4)])  # a tensor gets wrapped
    pl.append(T.ones(1, dtype=T.float64))
    pl.extend([N.Parameter(T.ones(5))])
    pl.append("not a tensor")
    out.append((len(pl), [isinstance(p, N.Parameter) for p in pl]))
    out.append([n for n, _ in pl.named_parameters()])
    out.append(torch_repr(repr(pl)))
    out.append(len(pl[1:3]))
    pl[0] = T.ones(7)
    out.append((tuple(pl[0].shape), isinstance(pl[0], N.Parameter)))
    try:
        pl.extend(T.ones(2))
    except TypeError as exc:
        out.append(str(exc))
    try:
        pl()
    except RuntimeError as exc:
        out.append(str(exc))
    return out


def test_parameterlist_matches_torch() -> None:
    assert parameterlist_story("ember") == parameterlist_story("torch")


def parameterdict_story(name: str) -> list:
    N, T = libs(name)
    out = []
    pd = N.ParameterDict({"w": T.ones(2), "b": N.Parameter(T.zeros(3))})  # a dict: sorted
    out.append(list(pd))
    pd["v"] = T.ones(1, dtype=T.float64)
    pd.update([("u", T.ones(4))])
    pd.update(OrderedDict([("z", T.ones(1)), ("y", T.ones(1))]))  # ordered: kept
    out.append((list(pd), len(pd), "w" in pd, isinstance(pd["w"], N.Parameter)))
    out.append([n for n, _ in pd.named_parameters()])
    out.append(torch_repr(repr(pd)))
    out.append(list(reversed(pd)))
    out.append(tuple(pd.pop("w").shape))
    out.append(pd.popitem()[0])
    out.append(pd.get("nope", "default"))
    out.append(list(pd.setdefault("n", T.ones(1)).shape))
    out.append(list(pd.copy()))
    out.append(list(pd | N.ParameterDict({"q": T.ones(1)})))
    pd |= N.ParameterDict({"r": T.ones(1)})
    out.append(list(pd))
    out.append(list(pd.fromkeys(["k1", "k2"], T.ones(1))))
    try:
        N.ParameterDict()[3] = T.ones(1)
    except TypeError as exc:
        out.append(str(exc).split(" Open an issue")[0])
    del pd["b"]
    pd.clear()
    out.append(len(pd))
    return out


def test_parameterdict_matches_torch() -> None:
    assert parameterdict_story("ember") == parameterdict_story("torch")


@LIBS
def test_containers_register_parameters(lib: str) -> None:
    N, T = libs(lib)

    class Net(N.Module):
        def __init__(self):
            super().__init__()
            self.layers = N.ModuleList([N.Linear(2, 2), N.Linear(2, 2)])
            self.heads = N.ModuleDict({"a": N.Linear(2, 1)})
            self.extra = N.ParameterList([N.Parameter(T.ones(2))])
            self.gains = N.ParameterDict({"g": N.Parameter(T.ones(1))})

    assert [n for n, _ in Net().named_parameters()] == [
        "layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias",
        "heads.a.weight", "heads.a.bias", "extra.0", "gains.g",
    ]  # fmt: skip


def test_dir_hides_indices() -> None:
    for container in (nn.Sequential(nn.ReLU()), nn.ModuleList([nn.ReLU()]),
                      nn.ParameterList([nn.Parameter(et.ones(1))])):
        assert "0" not in dir(container)
