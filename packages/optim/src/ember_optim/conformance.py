"""The conformance kit of Ember's ``optim`` slot: a pytest plugin, enabled explicitly.

    python -m pytest -p ember_optim.conformance [--optim-provider=MODULE] [--optim-xfail=FILE]

Run from any directory: the plugin adds one aggregate test class, ``TestOptimConformance``,
to whatever else pytest collects there (nothing else in an empty directory; the package's
own tests when run from ``packages/optim``). Its tests check the Optimizer protocol that
makes an implementation a drop-in ``ember.optim``: parameter groups (any iterable of
tensors or of dicts, defaults filled in, ``add_param_group``, the errors), per-parameter
``state``, ``state_dict``/``load_state_dict`` (PyTorch's layout with integer ids, an exact
round trip, the errors on mismatched groups, dtype casting), ``zero_grad``, ``step`` with
and without a closure, step and state-dict hooks, the repr layout, the updates of SGD,
Adam, AdamW and RMSprop against NumPy, LBFGS on a quadratic, and the basic schedulers of
``lr_scheduler``.

Options:

``--optim-provider=MODULE``
    The implementation under test: an importable module exposing the optim interface
    (``Optimizer``, ``SGD``, ``Adam``, ``AdamW``, ..., ``LBFGS``, ``lr_scheduler``,
    ``register_optimizer_step_pre_hook``, ...) and ``INTERFACE_VERSION``. It works on
    ``ember_tensor`` tensors. Default: ``ember_optim``.

``--optim-xfail=FILE``
    Expected failures. Every non-blank line that does not start with ``#`` reads
    ``<test id> : <reason>``, where the test id is ``TestOptimConformance::test_name``
    (with ``[param]`` for a parametrized one; the full node id is accepted too). A line
    without a reason, or naming a test the kit does not have, is a usage error. Each
    listed test is marked ``xfail(strict=True)`` with its reason: it must fail, and a fix
    that makes it pass is reported (as a failure) until its line is removed. The terminal
    summary counts the kit's outcomes and lists the expected failures.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor.conformance_kit import define_kit

KIT_NODEID = "ember_optim.conformance"
CLASS_NAME = "TestOptimConformance"
INTERFACE_VERSION = 1

# the names a provider must expose (its module's attributes)
INTERFACE_NAMES = (
    "Optimizer",
    "SGD",
    "Adam",
    "AdamW",
    "Adamax",
    "NAdam",
    "RAdam",
    "RMSprop",
    "Adagrad",
    "Adadelta",
    "LBFGS",
    "lr_scheduler",
    "register_optimizer_step_pre_hook",
    "register_optimizer_step_post_hook",
)

# the names its lr_scheduler module must expose
SCHEDULER_NAMES = (
    "LRScheduler",
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "SequentialLR",
    "CosineAnnealingLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
    "CyclicLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "PolynomialLR",
)


# --------------------------------------------------------------------------------------
# The plugin (its plumbing: ember_tensor.conformance_kit)

# the pytest plugin: its hooks come from ember_tensor.conformance_kit
_KIT = define_kit(globals(), component="optim", class_name=CLASS_NAME,
                  default_provider="ember_optim")


# --------------------------------------------------------------------------------------
# Helpers of the tests


def _np(t) -> np.ndarray:
    return np.array(t.detach().numpy())


def _t(values):
    return et.tensor(np.asarray(values, dtype=np.float64))


def _close(actual, expected, what: str, rtol: float = 1e-12, atol: float = 1e-14) -> None:
    assert actual is not None, f"{what}: got None"
    got = _np(actual)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, expected {expected.shape}"
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=what)


_X0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
_B0 = np.array([0.1, -0.2])


def _grads(k: int):
    """The gradients of step k (deterministic, no RNG)."""
    g = np.sin(np.arange(6.0).reshape(2, 3) + k) * (1 + 0.1 * k)
    return g, np.cos(np.arange(2.0) * 1.7 + k)


# --------------------------------------------------------------------------------------
# The aggregate test class


class TestOptimConformance:
    """What an ``optim`` provider must do. ``self.optim`` is the provider under test."""

    @pytest.fixture(autouse=True)
    def _provider(self, request: pytest.FixtureRequest):
        self.optim = request.config.stash[_KIT].provider

    def _params(self):
        return [_t(_X0), _t(_B0)]

    def _run(self, opt, params, steps: int, start: int = 0) -> None:
        for k in range(start, start + steps):
            gw, gb = _grads(k)
            params[0].grad = _t(gw)
            params[1].grad = _t(gb)
            opt.step()

    # -- the interface -------------------------------------------------------------------

    @pytest.mark.parametrize("name", INTERFACE_NAMES)
    def test_interface_name(self, name: str) -> None:
        assert hasattr(self.optim, name), f"the provider has no {name!r}"

    @pytest.mark.parametrize("name", SCHEDULER_NAMES)
    def test_scheduler_name(self, name: str) -> None:
        assert hasattr(self.optim.lr_scheduler, name), f"lr_scheduler has no {name!r}"

    def test_interface_version(self) -> None:
        assert getattr(self.optim, "INTERFACE_VERSION", None) == INTERFACE_VERSION

    def test_algorithms_are_optimizers(self) -> None:
        for name in INTERFACE_NAMES[1:11]:
            cls = getattr(self.optim, name)
            assert issubclass(cls, self.optim.Optimizer), name
            opt = cls(self._params())
            assert isinstance(opt.defaults, dict) and "lr" in opt.defaults, name
            assert opt.defaults.get("foreach", None) is None, name

    # -- param groups --------------------------------------------------------------------

    def test_param_groups(self) -> None:
        a, b, c = et.zeros(2), et.zeros(3), et.zeros(1)
        opt = self.optim.SGD(iter([a, b]), lr=0.1, momentum=0.9)
        (group,) = opt.param_groups
        assert group["params"] == [a, b]
        assert group["lr"] == 0.1 and group["momentum"] == 0.9 and group["nesterov"] is False
        opt = self.optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1)
        assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
        assert opt.param_groups[1]["params"] == [b]
        opt.add_param_group({"params": [c], "momentum": 0.3})
        assert opt.param_groups[2]["momentum"] == 0.3 and opt.param_groups[2]["lr"] == 0.1
        assert len(opt.state) == 0

    def test_param_group_errors(self) -> None:
        p = et.zeros(2)
        with pytest.raises(ValueError, match="^Invalid learning rate: -0.1$"):
            self.optim.SGD([p], lr=-0.1)
        with pytest.raises(ValueError, match="^Invalid beta parameter at index 0: 1.0$"):
            self.optim.Adam([p], betas=(1.0, 0.999))
        with pytest.raises(ValueError, match="^Invalid epsilon value: -1.0$"):
            self.optim.Adam([p], eps=-1.0)
        with pytest.raises(ValueError, match="^optimizer got an empty parameter list$"):
            self.optim.SGD([], lr=0.1)
        with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
            self.optim.SGD(p, lr=0.1)
        with pytest.raises(TypeError, match="optimizer can only optimize Tensors"):
            self.optim.SGD([p, 1.0], lr=0.1)
        with pytest.raises(TypeError, match="ordered collections"):
            self.optim.SGD([{"params": {p}}], lr=0.1)
        with pytest.raises(ValueError, match="^some parameters appear in more than one "
                                             "parameter group$"):
            self.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
        with pytest.warns(UserWarning, match="duplicate parameters"):
            self.optim.SGD([p, p], lr=0.1)

    def test_non_leaf_tensor(self) -> None:
        try:
            import ember_autograd  # noqa: F401  (requires_grad needs an autograd provider)
        except ImportError:
            pytest.skip("no autograd provider installed")
        x = et.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match="^can't optimize a non-leaf Tensor$"):
            self.optim.SGD([x * 2], lr=0.1)

    def test_repr_layout(self) -> None:
        opt = self.optim.SGD([{"params": [et.zeros(1)]},
                              {"params": [et.zeros(1)], "lr": 0.5}], lr=0.1)
        lines = repr(opt).split("\n")
        assert lines[0] == "SGD (" and lines[-1] == ")"
        assert lines[1] == "Parameter Group 0"
        keys = [line.split(":")[0].strip() for line in lines[2:] if line.startswith("    ")]
        assert keys[: len(keys) // 2] == sorted(keys[: len(keys) // 2])
        assert "    lr: 0.1" in lines and "    lr: 0.5" in lines
        assert "Parameter Group 1" in lines
        assert not any("params" in line for line in lines)

    # -- zero_grad and step --------------------------------------------------------------

    def test_zero_grad(self) -> None:
        p, q = et.ones(2), et.ones(2)
        opt = self.optim.SGD([p, q], lr=0.1)
        p.grad = et.ones(2)
        grad = p.grad
        opt.zero_grad(set_to_none=False)
        assert p.grad is grad and p.grad.tolist() == [0.0, 0.0] and q.grad is None
        opt.zero_grad()
        assert p.grad is None

    def test_step_skips_parameters_without_grad(self) -> None:
        p, q = _t([1.0, 2.0]), _t([3.0])
        opt = self.optim.Adam([p, q], lr=0.1)
        p.grad = _t([1.0, 1.0])
        opt.step()
        assert q.tolist() == [3.0] and q not in opt.state and p in opt.state
        assert p.tolist() != [1.0, 2.0]

    def test_step_with_closure(self) -> None:
        p = _t([1.0, -2.0])
        opt = self.optim.SGD([p], lr=0.25)
        calls = []

        def closure():
            calls.append(1)
            p.grad = p.mul(2.0)
            return float((_np(p) ** 2).sum())

        assert opt.step(closure) == 5.0
        assert calls == [1]
        _close(p, [0.5, -1.0], "p after a closure step")
        assert opt.step() is None

    def test_lbfgs_with_closure(self) -> None:
        target = np.array([1.0, -2.0, 0.5])
        x = _t(np.zeros(3))
        opt = self.optim.LBFGS([x], line_search_fn="strong_wolfe")

        def closure():
            diff = _np(x) - target
            x.grad = _t(2 * diff * np.array([1.0, 10.0, 100.0]))
            return float((diff**2 * np.array([1.0, 10.0, 100.0])).sum())

        opt.step(closure)
        _close(x, target, "LBFGS minimiser", rtol=1e-6, atol=1e-8)

    # -- the updates ---------------------------------------------------------------------

    def test_sgd_momentum_values(self) -> None:
        params = self._params()
        opt = self.optim.SGD(params, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01,
                             nesterov=False)
        self._run(opt, params, 5)
        x, b = _X0.copy(), _B0.copy()
        bufs = [None, None]
        for k in range(5):
            for i, (p, g) in enumerate(zip((x, b), _grads(k))):
                g = g + 0.01 * p
                bufs[i] = g.copy() if bufs[i] is None else 0.9 * bufs[i] + 0.9 * g
                p -= 0.1 * bufs[i]
        _close(params[0], x, "SGD weight", rtol=1e-12)
        _close(params[1], b, "SGD bias", rtol=1e-12)
        _close(opt.state[params[0]]["momentum_buffer"], bufs[0], "momentum_buffer")

    def _adam_reference(self, steps, lr, betas, eps, wd, amsgrad, decoupled):
        out = []
        for p, k_grad in ((_X0.copy(), 0), (_B0.copy(), 1)):
            m, v, vmax = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
            for k in range(steps):
                g = _grads(k)[k_grad]
                t = k + 1
                if wd and decoupled:
                    p = p * (1 - lr * wd)
                elif wd:
                    g = g + wd * p
                m = betas[0] * m + (1 - betas[0]) * g
                v = betas[1] * v + (1 - betas[1]) * g * g
                vmax = np.maximum(vmax, v)
                vv = vmax if amsgrad else v
                denom = np.sqrt(vv) / math.sqrt(1 - betas[1] ** t) + eps
                p = p - lr / (1 - betas[0] ** t) * m / denom
            out.append((p, m, v))
        return out

    @pytest.mark.parametrize("variant", ["Adam", "Adam-amsgrad", "AdamW"])
    def test_adam_values(self, variant: str) -> None:
        params = self._params()
        if variant == "AdamW":
            opt = self.optim.AdamW(params, lr=0.05, weight_decay=0.1)
            ref = self._adam_reference(8, 0.05, (0.9, 0.999), 1e-8, 0.1, False, True)
        else:
            amsgrad = variant.endswith("amsgrad")
            opt = self.optim.Adam(params, lr=0.05, weight_decay=0.1, amsgrad=amsgrad)
            ref = self._adam_reference(8, 0.05, (0.9, 0.999), 1e-8, 0.1, amsgrad, False)
        self._run(opt, params, 8)
        for p, (want, m, v) in zip(params, ref):
            _close(p, want, f"{variant} parameter", rtol=1e-10, atol=1e-12)
            state = opt.state[p]
            _close(state["exp_avg"], m, "exp_avg", rtol=1e-10)
            _close(state["exp_avg_sq"], v, "exp_avg_sq", rtol=1e-10)
            step = state["step"]
            assert isinstance(step, et.Tensor) and step.item() == 8.0

    def test_rmsprop_values(self) -> None:
        params = self._params()
        opt = self.optim.RMSprop(params, lr=0.01, alpha=0.9, centered=True, momentum=0.5)
        self._run(opt, params, 6)
        for p0, p, k_grad in ((_X0, params[0], 0), (_B0, params[1], 1)):
            x = p0.copy()
            v, a, buf = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
            for k in range(6):
                g = _grads(k)[k_grad]
                v = 0.9 * v + 0.1 * g * g
                a = 0.9 * a + 0.1 * g
                buf = 0.5 * buf + g / (np.sqrt(v - a * a) + 1e-8)
                x = x - 0.01 * buf
            _close(p, x, "RMSprop parameter", rtol=1e-9, atol=1e-11)

    # -- state_dict ----------------------------------------------------------------------

    def test_state_dict_layout(self) -> None:
        params = self._params()
        extra = _t([1.0])
        opt = self.optim.Adam([{"params": params}, {"params": [extra], "lr": 0.5}], lr=0.1)
        self._run(opt, params, 2)
        sd = opt.state_dict()
        assert set(sd) == {"state", "param_groups"}
        assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
        assert sd["param_groups"][1]["lr"] == 0.5
        assert sd["param_groups"][0]["betas"] == (0.9, 0.999)
        assert sorted(sd["state"]) == [0, 1]  # the extra parameter never had a gradient
        assert sorted(sd["state"][0]) == ["exp_avg", "exp_avg_sq", "step"]
        assert sd["state"][0]["exp_avg"] is opt.state[params[0]]["exp_avg"]

    def test_state_dict_round_trip(self) -> None:
        params = self._params()
        opt = self.optim.Adam(params, lr=0.05, amsgrad=True)
        self._run(opt, params, 3)
        sd = opt.state_dict()
        saved = {
            "state": {k: {n: (v.clone() if isinstance(v, et.Tensor) else v)
                          for n, v in s.items()} for k, s in sd["state"].items()},
            "param_groups": [dict(g) for g in sd["param_groups"]],
        }
        copies = [p.clone() for p in params]
        fresh = self.optim.Adam(copies, lr=1.0)
        fresh.load_state_dict(saved)
        assert fresh.param_groups[0]["lr"] == 0.05 and fresh.param_groups[0]["amsgrad"]
        assert fresh.param_groups[0]["params"] == copies
        again = fresh.state_dict()
        assert again["param_groups"] == sd["param_groups"]
        for pid, state in sd["state"].items():
            for key, value in state.items():
                np.testing.assert_array_equal(_np(again["state"][pid][key]), _np(value))
        self._run(opt, params, 3, start=3)
        self._run(fresh, copies, 3, start=3)
        for a, b in zip(params, copies):
            np.testing.assert_array_equal(_np(a), _np(b))

    def test_load_state_dict_errors(self) -> None:
        two = self.optim.SGD([{"params": [et.zeros(1)]}, {"params": [et.zeros(1)]}], lr=0.1)
        one = self.optim.SGD([et.zeros(1), et.zeros(1)], lr=0.1)
        with pytest.raises(ValueError, match="^loaded state dict has a different number of "
                                             "parameter groups$"):
            two.load_state_dict(one.state_dict())
        bigger = self.optim.SGD([{"params": [et.zeros(1), et.zeros(1)]},
                                 {"params": [et.zeros(1)]}], lr=0.1)
        with pytest.raises(ValueError, match="^loaded state dict contains a parameter group "
                                             "that doesn't match the size of optimizer's "
                                             "group$"):
            two.load_state_dict(bigger.state_dict())

    def test_load_state_dict_casts_to_the_parameter_dtype(self) -> None:
        p64 = _t([1.0, 2.0])
        opt = self.optim.Adam([p64])
        p64.grad = _t([0.5, 0.5])
        opt.step()
        p32 = et.ones(2)
        opt32 = self.optim.Adam([p32])
        opt32.load_state_dict(opt.state_dict())
        state = opt32.state[p32]
        assert state["exp_avg"].dtype == et.float32
        assert state["step"].dtype == opt.state[p64]["step"].dtype

    # -- hooks ---------------------------------------------------------------------------

    def test_step_hooks(self) -> None:
        p = _t([1.0])
        p.grad = _t([1.0])
        opt = self.optim.SGD([p], lr=0.1)
        log = []
        pre = opt.register_step_pre_hook(lambda o, args, kwargs: log.append(("pre", o is opt)))
        post = opt.register_step_post_hook(lambda o, args, kwargs: log.append("post"))
        glob = self.optim.register_optimizer_step_pre_hook(lambda o, a, k: log.append("global"))
        try:
            opt.step()
        finally:
            glob.remove()
        assert log == ["global", ("pre", True), "post"]
        pre.remove()
        post.remove()
        log.clear()
        opt.step()
        assert log == []
        opt.register_step_pre_hook(lambda o, args, kwargs: (args, {"closure": lambda: 7.0}))
        assert opt.step() == 7.0

    def test_state_dict_hooks(self) -> None:
        opt = self.optim.SGD([et.zeros(1)], lr=0.1)
        log = []
        opt.register_state_dict_pre_hook(lambda o: log.append("pre"))
        opt.register_state_dict_post_hook(lambda o, sd: {**sd, "tag": 1})
        opt.register_load_state_dict_pre_hook(
            lambda o, sd: {k: v for k, v in sd.items() if k != "tag"})
        opt.register_load_state_dict_post_hook(lambda o: log.append("loaded"))
        sd = opt.state_dict()
        assert sd["tag"] == 1 and log == ["pre"]
        opt.load_state_dict(sd)
        assert log == ["pre", "loaded"]

    # -- lr_scheduler --------------------------------------------------------------------

    def test_step_lr_and_lambda_lr(self) -> None:
        lrs = self.optim.lr_scheduler
        opt = self.optim.SGD([et.zeros(1)], lr=1.0)
        step = lrs.StepLR(opt, step_size=2, gamma=0.5)
        seen = [step.get_last_lr()]
        for _ in range(5):
            opt.step()
            step.step()
            seen.append(step.get_last_lr())
        assert seen == [[1.0], [1.0], [0.5], [0.5], [0.25], [0.25]]
        assert opt.param_groups[0]["initial_lr"] == 1.0
        opt2 = self.optim.Adam([et.zeros(1)], lr=0.1)
        lam = lrs.LambdaLR(opt2, lambda epoch: 1.0 / (epoch + 1))
        opt2.step()
        lam.step()
        assert lam.get_last_lr() == [0.05]
        state = step.state_dict()
        assert "optimizer" not in state and state["last_epoch"] == 5

    def test_scheduler_warns_when_called_before_optimizer_step(self) -> None:
        lrs = self.optim.lr_scheduler
        opt = self.optim.SGD([et.zeros(1)], lr=1.0)
        sched = lrs.ExponentialLR(opt, gamma=0.5)
        with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
            sched.step()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            opt.step()
            sched.step()
        assert sched.get_last_lr() == [0.25]
