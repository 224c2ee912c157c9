"""The Optimizer contract, checked against PyTorch 2.13: parameter groups, defaults, errors
and warnings, repr, zero_grad, step with a closure, hooks, state_dict/load_state_dict."""

from __future__ import annotations

import contextlib
import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import ember_optim
import ember_tensor as et
from ember_optim import _fused
from optim_testing import Pair, assert_close, clone_tree, ember_from, np_of, torch_from

NAMES = ["SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad",
         "Adadelta", "LBFGS"]


def both(name, *args, **kwargs):
    """The same optimizer built by both libraries on one fresh parameter."""
    e = getattr(ember_optim, name)([et.zeros(2)], *args, **kwargs)
    t = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], *args, **kwargs)
    return e, t


def torch_error(name, kwargs):
    try:
        getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kwargs)
    except Exception as exc:  # noqa: BLE001
        return exc
    raise AssertionError(f"torch accepted {name}({kwargs})")


# -- construction errors: the same type and message as PyTorch --------------------------

BAD_ARGS = [(name, {"lr": -0.1}) for name in NAMES] + [
    ("SGD", {"momentum": -0.5}),
    ("SGD", {"weight_decay": -1e-4}),
    ("SGD", {"nesterov": True}),
    ("SGD", {"nesterov": True, "momentum": 0.9, "dampening": 0.1}),
    ("Adam", {"eps": -1.0}),
    ("Adam", {"betas": (1.0, 0.999)}),
    ("Adam", {"betas": (0.9, -0.1)}),
    ("Adam", {"weight_decay": -0.1}),
    ("Adam", {"betas": (0, 0.999)}),  # an int beta: PyTorch insists on floats
    ("AdamW", {"betas": (0.9, 1.5)}),
    ("Adamax", {"eps": -1e-8}),
    ("Adamax", {"betas": (-0.1, 0.9)}),
    ("Adamax", {"weight_decay": -2}),
    ("NAdam", {"momentum_decay": -0.1}),
    ("NAdam", {"betas": (0.9, 1.0)}),
    ("NAdam", {"eps": -1.0}),
    ("RAdam", {"weight_decay": -1.0}),
    ("RAdam", {"betas": (1.1, 0.9)}),
    ("RMSprop", {"alpha": -0.9}),
    ("RMSprop", {"momentum": -0.9}),
    ("RMSprop", {"eps": -1e-8}),
    ("RMSprop", {"weight_decay": -1.0}),
    ("Adagrad", {"lr_decay": -1.0}),
    ("Adagrad", {"initial_accumulator_value": -0.5}),
    ("Adagrad", {"eps": -1.0}),
    ("Adagrad", {"weight_decay": -0.5}),
    ("Adadelta", {"rho": 1.5}),
    ("Adadelta", {"eps": -1.0}),
    ("Adadelta", {"weight_decay": -1.0}),
    ("SGD", {"fused": True, "foreach": True}),
    ("Adam", {"fused": True, "foreach": True}),
]


@pytest.mark.parametrize(("name", "kwargs"), BAD_ARGS,
                         ids=[f"{n}-{k}" for n, k in BAD_ARGS])
def test_invalid_hyperparameters(name, kwargs) -> None:
    expected = torch_error(name, kwargs)
    with pytest.raises(type(expected)) as info:
        getattr(ember_optim, name)([et.zeros(1)], **kwargs)
    assert str(info.value) == str(expected)


def test_negative_learning_rate_message() -> None:
    with pytest.raises(ValueError, match=r"^Invalid learning rate: -0.1$"):
        ember_optim.SGD([et.zeros(1)], lr=-0.1)


@pytest.mark.parametrize(
    ("params", "error", "message"),
    [
        (et.zeros(2), TypeError, "params argument given to the optimizer should be an "
                                 "iterable of Tensors or dicts, but got ember_tensor.Tensor"),
        ([], ValueError, "optimizer got an empty parameter list"),
        ([{"params": {et.zeros(1)}}], TypeError,
         "optimizer parameters need to be organized in ordered collections"),
        ([et.zeros(1), 3], TypeError, "optimizer can only optimize Tensors, but one of the "
                                      "params is int"),
        ([{"params": et.zeros(1)}, 5], TypeError, "param_group must be a dict, but got "
                                                  "<class 'int'>"),
    ],
    ids=["tensor", "empty", "set", "not-a-tensor", "not-a-dict"],
)
def test_bad_params(params, error, message) -> None:
    with pytest.raises(error) as info:
        ember_optim.SGD(params, lr=0.1)
    assert str(info.value).startswith(message)


def test_non_leaf_tensor() -> None:
    pytest.importorskip("ember_autograd")  # x * 2 has a history only with a provider
    x = et.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"^can't optimize a non-leaf Tensor$"):
        ember_optim.SGD([x * 2], lr=0.1)
    t = torch.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"^can't optimize a non-leaf Tensor$"):
        torch.optim.SGD([t * 2], lr=0.1)


def test_parameter_in_two_groups() -> None:
    p = et.zeros(1)
    message = "some parameters appear in more than one parameter group"
    with pytest.raises(ValueError, match=f"^{message}$"):
        ember_optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    opt = ember_optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match=f"^{message}$"):
        opt.add_param_group({"params": p})


def test_duplicate_parameter_in_a_group_warns() -> None:
    p = et.zeros(1)
    with pytest.warns(UserWarning) as record:
        ember_optim.SGD([p, p], lr=0.1)
    t = torch.zeros(1, requires_grad=True)
    with pytest.warns(UserWarning) as torch_record:
        torch.optim.SGD([t, t], lr=0.1)
    assert str(record[0].message) == str(torch_record[0].message)
    assert record[0].filename == __file__  # attributed to the caller


def test_required_option() -> None:
    class Custom(ember_optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": ember_optim.optimizer.required, "k": 1})

    with pytest.raises(ValueError, match="parameter group didn't specify a value of required "
                                         "optimization parameter lr"):
        Custom([et.zeros(1)])
    opt = Custom([{"params": [et.zeros(1)], "lr": 0.5}])
    assert opt.param_groups[0]["lr"] == 0.5 and opt.param_groups[0]["k"] == 1
    assert repr(ember_optim.optimizer.required) == "<required parameter>"


# -- param groups ------------------------------------------------------------------------


def test_param_groups_from_any_iterable_and_defaults_filled_in() -> None:
    a, b, c = et.zeros(1), et.zeros(2), et.zeros(3)
    opt = ember_optim.SGD((p for p in [a, b]), lr=0.1, momentum=0.9)
    assert len(opt.param_groups) == 1 and opt.param_groups[0]["params"] == [a, b]
    opt = ember_optim.Adam([{"params": [a]}, {"params": (b,), "lr": 0.5}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["betas"] == (0.9, 0.999)
    opt.add_param_group({"params": c, "weight_decay": 0.3})
    group = opt.param_groups[2]
    assert group["params"] == [c] and group["weight_decay"] == 0.3 and group["lr"] == 0.1
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([c])


def test_named_parameters() -> None:
    a, b = et.zeros(1), et.zeros(2)
    opt = ember_optim.SGD([("w", a), ("b", b)], lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["w", "b"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]
    with pytest.raises(ValueError, match="all optimizer param groups should be with/without "
                                         "names. cannot add param group without names"):
        opt.add_param_group({"params": [et.zeros(1)]})
    with pytest.raises(ValueError, match="Some param names are missing"):
        ember_optim.SGD([("w", et.zeros(1)), et.zeros(1)], lr=0.1)


# -- repr ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_repr_is_pytorchs(name) -> None:
    e, t = both(name)
    assert repr(e) == repr(t)


def test_repr_of_several_groups() -> None:
    groups = lambda p: [{"params": [p[0]]}, {"params": [p[1]], "lr": 0.5, "momentum": 0.9}]  # noqa: E731
    e = ember_optim.SGD(groups([et.zeros(1), et.zeros(1)]), lr=0.1)
    t = torch.optim.SGD(groups([torch.zeros(1, requires_grad=True) for _ in range(2)]), lr=0.1)
    assert repr(e) == repr(t)
    assert repr(e).startswith("SGD (\nParameter Group 0\n    dampening: 0\n")


# -- zero_grad, step, closure ----------------------------------------------------------------


def test_zero_grad() -> None:
    p, q = et.ones(2), et.ones(3)
    opt = ember_optim.SGD([p, q], lr=0.1)
    p.grad = et.ones(2)
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and p.grad.tolist() == [0.0, 0.0] and q.grad is None
    opt.zero_grad()
    assert p.grad is None


def test_step_with_closure_returns_the_loss() -> None:
    p = et.tensor([1.0, 2.0])
    opt = ember_optim.Adam([p], lr=0.1)
    calls = []

    def closure():
        calls.append(1)
        p.grad = p.mul(2.0)
        return (p * p).sum()

    loss = opt.step(closure)
    assert calls == [1] and loss.item() == 5.0
    assert opt.step() is None


def test_step_runs_under_no_grad_and_closure_under_enable_grad() -> None:
    import ember_autograd as ag

    w = et.tensor([1.0, -1.0], requires_grad=True)
    opt = ember_optim.SGD([w], lr=0.1, momentum=0.9)
    modes = []

    def closure():
        modes.append(ag.is_grad_enabled())
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    opt.register_step_post_hook(lambda *a: modes.append(ag.is_grad_enabled()))
    with ag.no_grad():
        loss = opt.step(closure)
    assert modes == [True, False]
    assert loss.requires_grad is False or loss.grad_fn is not None
    assert w.requires_grad and w.is_leaf and w.grad_fn is None
    np.testing.assert_allclose(np_of(w), [0.8, -0.8], rtol=1e-6)
    assert not opt.state[w]["momentum_buffer"].requires_grad


def test_differentiable_is_refused() -> None:
    with pytest.raises(NotImplementedError, match=r"Adam\(differentiable=True\) is not "
                                                  "supported"):
        ember_optim.Adam([et.zeros(1)], differentiable=True)


@pytest.mark.parametrize(("name", "missing", "scalars"), [
    ("NAdam", "decoupled_weight_decay", ("step", "mu_product")),
    ("Adam", "fused", ("step",)),
    ("SGD", "nesterov", ()),
])
def test_setstate_upgrades_older_pickles(name, missing, scalars) -> None:
    """An optimizer pickled by an older version (an option missing from its groups, scalar
    state as plain numbers) comes back with the defaults and 0-d tensors."""
    p = et.ones(2)
    p.grad = et.ones(2)
    opt = getattr(ember_optim, name)([p], lr=0.1, **({"momentum": 0.9} if name == "SGD" else {}))
    opt.step()
    old = pickle.loads(pickle.dumps(opt.__getstate__()))
    old["param_groups"][0].pop(missing)
    (p_state,) = old["state"].values()
    for key in scalars:
        p_state[key] = float(p_state[key])
    again = getattr(ember_optim, name).__new__(getattr(ember_optim, name))
    again.__setstate__(old)
    assert again.param_groups[0][missing] == type(opt)._setstate_defaults[missing]
    (p_state,) = again.state.values()
    for key in scalars:
        assert isinstance(p_state[key], et.Tensor) and p_state[key].dim() == 0
        assert float(p_state[key]) == float(opt.state[p][key])


def test_copy_and_pickle() -> None:
    pair = Pair("Adam", dict(lr=0.01), "float64")
    pair.step(3)
    clone = copy.deepcopy(pair.ember)
    assert repr(clone) == repr(pair.ember)
    assert clone.state_dict()["param_groups"] == pair.ember.state_dict()["param_groups"]
    again = pickle.loads(pickle.dumps(pair.ember))
    assert type(again) is ember_optim.Adam
    assert again.step.__func__ is not None and len(again.state) == len(pair.ember.state)


# -- fused and foreach -------------------------------------------------------------------------


@contextlib.contextmanager
def fused_kernel_as(algorithm, kernel):
    """Registers ``kernel`` (None: no kernel) for ``algorithm`` for the block's duration."""
    old = _fused._KERNELS.pop(algorithm, None)
    if kernel is not None:
        _fused.register_fused_kernel(algorithm, kernel)
    try:
        yield
    finally:
        _fused._KERNELS.pop(algorithm, None)
        if old is not None:
            _fused._KERNELS[algorithm] = old


@pytest.mark.parametrize("name", ["Adagrad", "Lion"])
def test_fused_is_not_available_yet(name) -> None:
    with pytest.raises(NotImplementedError,
                       match=f"^fused=True is not available yet for {name}: ") as info:
        getattr(ember_optim, name)([et.zeros(1)], fused=True)
    assert isinstance(info.value, RuntimeError)


def test_fused_kernel_seam() -> None:
    """A registered kernel runs for fused=True, with the functional form's arguments."""
    calls = []

    def kernel(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, **kw):
        calls.append(sorted(kw))
        from ember_optim.adam import _multi_tensor_adam

        _multi_tensor_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                           state_steps, **kw)

    with fused_kernel_as("adam", kernel):
        pair = Pair("Adam", dict(lr=0.01), "float32", ember_kwargs={"fused": True})
        pair.step(5)
    pair.assert_params_close("fused seam")
    assert len(calls) == 5
    assert calls[0] == ["amsgrad", "beta1", "beta2", "decoupled_weight_decay", "eps", "lr",
                        "maximize", "weight_decay"]
    with fused_kernel_as("adam", None), pytest.raises(
            NotImplementedError, match="fused=True is not available yet for Adam"):
        pair.ember.step()


def test_foreach_default_and_argument() -> None:
    for name in ["SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad",
                 "Adadelta", "Lion"]:
        opt = getattr(ember_optim, name)([et.zeros(1)])
        assert opt.defaults["foreach"] is None
        opt = getattr(ember_optim, name)([et.zeros(1)], foreach=True)
        assert opt.param_groups[0]["foreach"] is True


# -- hooks ------------------------------------------------------------------------------------


def test_step_hooks() -> None:
    p = et.ones(1)
    p.grad = et.ones(1)
    opt = ember_optim.SGD([p], lr=0.1)
    log = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", o is opt, a, k)))
    h2 = opt.register_step_post_hook(lambda o, a, k: log.append(("post", o is opt)))
    g1 = ember_optim.register_optimizer_step_pre_hook(lambda o, a, k: log.append("gpre"))
    g2 = ember_optim.register_optimizer_step_post_hook(lambda o, a, k: log.append("gpost"))
    try:
        opt.step()
    finally:
        g1.remove()
        g2.remove()
    assert log == ["gpre", ("pre", True, (opt,), {}), ("post", True), "gpost"]
    log.clear()
    h1.remove()
    with h2:
        opt.step()
    opt.step()
    assert log == [("post", True)]


def test_step_pre_hook_replaces_arguments() -> None:
    p = et.ones(1)
    p.grad = et.ones(1)
    opt = ember_optim.SGD([p], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: ((o,), {"closure": lambda: 42.0}))
    assert opt.step() == 42.0
    bad = ember_optim.SGD([et.ones(1)], lr=0.1)
    bad.register_step_pre_hook(lambda o, a, k: 3)
    with pytest.raises(RuntimeError, match="must return None or a tuple of "
                                           r"\(new_args, new_kwargs\), but got 3."):
        bad.step()


def test_subclass_step_gets_hooks() -> None:
    class Halve(ember_optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {})

        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    p.mul_(0.5)

    p = et.ones(1)
    opt = Halve([p])
    seen = []
    opt.register_step_post_hook(lambda *a: seen.append(p.item()))
    opt.step()
    assert seen == [0.5]


def test_state_dict_hooks() -> None:
    pair = Pair("SGD", dict(lr=0.1, momentum=0.9), "float64")
    pair.step(2)
    opt = pair.ember
    log = []
    opt.register_state_dict_pre_hook(lambda o: log.append("pre"))
    opt.register_state_dict_pre_hook(lambda o: log.append("pre0"), prepend=True)

    def post(o, sd):
        log.append("post")
        sd = dict(sd)
        sd["extra"] = 1
        return sd

    opt.register_state_dict_post_hook(post)
    sd = opt.state_dict()
    assert log == ["pre0", "pre", "post"] and sd["extra"] == 1
    log.clear()

    def load_pre(o, sd):
        log.append("load_pre")
        sd = dict(sd)
        sd.pop("extra")
        return sd

    opt.register_load_state_dict_pre_hook(load_pre)
    opt.register_load_state_dict_post_hook(lambda o: log.append("load_post"))
    opt.load_state_dict(sd)
    assert log == ["load_pre", "load_post"]


# -- state_dict ----------------------------------------------------------------------------


def state_structure(sd):
    """The state_dict's structure: group options (params as ids), state keys per id."""
    groups = [{k: (v if k == "params" else type(v).__name__) for k, v in g.items()}
              for g in sd["param_groups"]]
    state = {k: sorted(v) for k, v in sd["state"].items()}
    return groups, state


@pytest.mark.parametrize(("name", "kwargs"), [
    ("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(amsgrad=True)), ("AdamW", {}),
    ("Adamax", {}), ("NAdam", {}), ("RAdam", {}), ("RMSprop", dict(centered=True,
                                                                   momentum=0.5)),
    ("Adagrad", {}), ("Adadelta", {})])
def test_state_dict_layout_is_pytorchs(name, kwargs) -> None:
    groups = [((0, 2), {"lr": 0.03}), ((1, 3), {})]
    pair = Pair(name, kwargs, "float32", groups=groups)
    pair.step(3, skip_every=2)
    esd, tsd = pair.ember.state_dict(), pair.torch.state_dict()
    assert state_structure(esd) == state_structure(tsd)
    assert [{k: v for k, v in g.items()} for g in esd["param_groups"]] == tsd["param_groups"]
    for pid, tstate in tsd["state"].items():
        for key, tv in tstate.items():
            ev = esd["state"][pid][key]
            if isinstance(tv, torch.Tensor):
                assert tuple(ev.shape) == tuple(tv.shape), key
                assert str(ev.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], key
                assert_close(ev, tv, "float32", key)
            else:
                assert ev == tv


def test_state_dict_round_trip_is_exact() -> None:
    pair = Pair("Adam", dict(lr=0.01, amsgrad=True), "float32")
    pair.step(5)
    sd = clone_tree(pair.ember.state_dict())  # as a checkpoint would: no shared tensors
    params = [ember_from(np_of(p)) for p in pair.ember_params]
    fresh = ember_optim.Adam(params, lr=0.5)
    fresh.load_state_dict(sd)
    again = fresh.state_dict()
    assert again["param_groups"] == sd["param_groups"]
    assert fresh.param_groups[0]["lr"] == 0.01
    assert list(again["state"]) == list(sd["state"])
    for pid in sd["state"]:
        for key, value in sd["state"][pid].items():
            np.testing.assert_array_equal(np_of(again["state"][pid][key]), np_of(value))
    # continuing from the loaded state equals continuing the original
    g = [np.full(tuple(p.shape), 0.3, dtype="float32") for p in params]
    for opt, ps in ((pair.ember, pair.ember_params), (fresh, params)):
        for p, gi in zip(ps, g):
            p.grad = ember_from(gi)
        opt.step()
    for a, b in zip(pair.ember_params, params):
        np.testing.assert_array_equal(np_of(a), np_of(b))


def test_state_dict_ids_count_a_repeated_parameter_once() -> None:
    p, q = et.zeros(1), et.zeros(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = ember_optim.SGD([p, q, p], lr=0.1)
        t = torch.optim.SGD([torch.zeros(1, requires_grad=True)] * 1
                            + [torch.zeros(1, requires_grad=True)], lr=0.1)
    assert opt.state_dict()["param_groups"][0]["params"] == [0, 1, 0]
    assert t.state_dict()["param_groups"][0]["params"] == [0, 1]


def test_load_state_dict_errors() -> None:
    opt = ember_optim.SGD([{"params": [et.zeros(1)]}, {"params": [et.zeros(1)]}], lr=0.1)
    one_group = ember_optim.SGD([et.zeros(1), et.zeros(1)], lr=0.1)
    with pytest.raises(ValueError, match="^loaded state dict has a different number of "
                                         "parameter groups$"):
        opt.load_state_dict(one_group.state_dict())
    bigger = ember_optim.SGD([{"params": [et.zeros(1), et.zeros(1)]},
                              {"params": [et.zeros(1)]}], lr=0.1)
    with pytest.raises(ValueError, match="^loaded state dict contains a parameter group that "
                                         "doesn't match the size of optimizer's group$"):
        opt.load_state_dict(bigger.state_dict())
    # and torch's messages are the same
    t = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    t2 = torch.optim.SGD([{"params": [torch.zeros(1, requires_grad=True)]},
                          {"params": [torch.zeros(1, requires_grad=True)]}], lr=0.1)
    with pytest.raises(ValueError, match="^loaded state dict has a different number"):
        t.load_state_dict(t2.state_dict())


def test_load_state_dict_casts_state_to_the_parameter_dtype_except_step() -> None:
    p64 = ember_from(np.ones(3))
    opt64 = ember_optim.Adam([p64])
    p64.grad = ember_from(np.full(3, 0.5))
    opt64.step()
    sd = opt64.state_dict()
    assert sd["state"][0]["exp_avg"].dtype == et.float64
    p32 = et.ones(3)
    opt32 = ember_optim.Adam([p32])
    opt32.load_state_dict(sd)
    state = opt32.state[p32]
    assert state["exp_avg"].dtype == et.float32 and state["exp_avg_sq"].dtype == et.float32
    assert state["step"].dtype == et.float32 and state["step"] is sd["state"][0]["step"]
    # an integer parameter keeps the state's dtype (only floating parameters cast)
    pi = et.zeros(3, dtype=et.int64)
    opti = ember_optim.Adam([pi])
    opti.load_state_dict(sd)
    assert opti.state[pi]["exp_avg"].dtype == et.float64


def test_loading_a_torch_state_dict_continues_like_torch() -> None:
    """A torch state_dict, its tensors converted through NumPy, loads into the ember
    optimizer: the layouts are the same, and training continues identically."""
    pair = Pair("Adam", dict(lr=0.01, amsgrad=True), "float64")
    pair.step(10)
    tsd = pair.torch.state_dict()
    converted = {
        "state": {k: {n: ember_from(np_of(v)) if isinstance(v, torch.Tensor) else v
                      for n, v in s.items()} for k, s in tsd["state"].items()},
        "param_groups": copy.deepcopy(tsd["param_groups"]),
    }
    for e, t in zip(pair.ember_params, pair.torch_params):
        e.copy_(ember_from(np_of(t)))
    pair.ember.load_state_dict(converted)
    pair.step(10)
    pair.assert_params_close("after loading torch's state")


def test_unknown_state_keys_are_kept() -> None:
    opt = ember_optim.SGD([et.zeros(1)], lr=0.1)
    sd = opt.state_dict()
    sd["state"]["global"] = {"count": 3}
    opt.load_state_dict(sd)
    assert opt.state["global"] == {"count": 3}
    assert opt.state_dict()["state"]["global"] == {"count": 3}


def test_torch_state_dict_of_adam_has_the_same_group_keys() -> None:
    e, t = both("Adam")
    assert list(e.state_dict()["param_groups"][0]) == list(t.state_dict()["param_groups"][0])
    assert torch_from(np.zeros(1)).dtype == torch.float64  # the helper keeps float64
