"""The conformance kit of Ember's ``autograd`` slot: a pytest plugin, enabled explicitly.

    python -m pytest -p ember_autograd.conformance [--autograd-provider=MODULE]
                                                   [--autograd-xfail=FILE]

Run from any directory: the plugin adds one aggregate test class,
``TestAutogradConformance``, to whatever else pytest collects there (nothing else in an
empty directory; the package's own tests when run from ``packages/autograd``). Its tests
check the semantics that make an implementation a drop-in ``ember.autograd``: gradient
values against hand-computed NumPy values, accumulation, ``retain_graph`` and
``create_graph``, the in-place rules and their errors, the grad modes (thread-local, as
context managers and decorators), hooks, ``retain_grad``, ``Function``, broadcasting,
views, forward mode, ``gradcheck``.

Options:

``--autograd-provider=MODULE``
    The implementation under test: an importable module exposing the autograd interface
    (``grad``, ``backward``, ``no_grad``, ``enable_grad``, ``set_grad_enabled``,
    ``inference_mode``, ``is_grad_enabled``, ``Function``, ``gradcheck``, ``forward_ad``,
    ...) and ``INTERFACE_VERSION``. Importing it must install it as the tensor core's
    autograd provider (``ember_tensor._set_autograd_hook``) and give ``Tensor`` its
    autograd methods (``backward``, ``register_hook``, ``retain_grad``). Default:
    ``ember_autograd``. (This plugin lives in ``ember_autograd``, so ``ember_autograd`` is
    imported first; the provider under test is imported after it and replaces its hook.)

``--autograd-xfail=FILE``
    Expected failures. Every non-blank line that does not start with ``#`` reads
    ``<test id> : <reason>``, where the test id is ``TestAutogradConformance::test_name``
    (with ``[param]`` for a parametrized one; the full node id is accepted too). A line
    without a reason, or naming a test the kit does not have, is a usage error. Each listed
    test is marked ``xfail(strict=True)`` with its reason: it must fail, and a fix that
    makes it pass is reported (as a failure) until its line is removed. The terminal
    summary counts the kit's outcomes and lists the expected failures.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor.conformance_kit import define_kit

KIT_NODEID = "ember_autograd.conformance"
CLASS_NAME = "TestAutogradConformance"
INTERFACE_VERSION = 1

# the names a provider must expose (its module's attributes)
INTERFACE_NAMES = (
    "backward",
    "grad",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "inference_mode",
    "Function",
    "gradcheck",
    "gradgradcheck",
    "forward_ad",
    "functional",
    "detect_anomaly",
    "set_detect_anomaly",
)


# --------------------------------------------------------------------------------------
# The plugin (its plumbing: ember_tensor.conformance_kit)

# the pytest plugin: its hooks come from ember_tensor.conformance_kit
_KIT = define_kit(globals(), component="autograd", class_name=CLASS_NAME,
                  default_provider="ember_autograd")


# --------------------------------------------------------------------------------------
# Helpers of the tests


def _t(values, requires_grad: bool = False):
    """A float64 tensor of ``values`` (float64: exact enough for tight comparisons)."""
    return et.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def _np(t) -> np.ndarray:
    return np.array(t.detach().numpy())


def _close(actual, expected, what: str, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    assert actual is not None, f"{what}: got None"
    got = _np(actual)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, expected {expected.shape}"
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=what)


X0 = np.array([0.5, -1.25, 2.0])
Y0 = np.array([1.5, 0.75, -0.5])


# --------------------------------------------------------------------------------------
# The aggregate test class


class TestAutogradConformance:
    """What an ``autograd`` provider must do. ``self.ag`` is the provider under test."""

    @pytest.fixture(autouse=True)
    def _provider(self, request: pytest.FixtureRequest):
        self.ag = request.config.stash[_KIT].provider
        # every test starts in the default grad mode and leaves it so
        assert self.ag.is_grad_enabled(), "grad mode is off at the start of a test"
        yield
        assert self.ag.is_grad_enabled(), "the test left grad mode off"

    # -- the interface -------------------------------------------------------------------

    @pytest.mark.parametrize("name", INTERFACE_NAMES)
    def test_interface_name(self, name: str) -> None:
        assert hasattr(self.ag, name), f"the provider has no {name!r}"

    def test_interface_version(self) -> None:
        assert getattr(self.ag, "INTERFACE_VERSION", None) == INTERFACE_VERSION

    def test_tensor_methods(self) -> None:
        for name in ("backward", "register_hook", "retain_grad"):
            assert callable(getattr(et.Tensor, name, None)), f"Tensor.{name} is missing"

    # -- values --------------------------------------------------------------------------

    def test_backward_values(self) -> None:
        x, y = _t(X0, True), _t(Y0, True)
        z = (x * y + et.sin(x) * et.exp(y) - x / y).sum()
        assert z.requires_grad and z.grad_fn is not None
        z.backward()
        _close(x.grad, Y0 + np.cos(X0) * np.exp(Y0) - 1 / Y0, "d/dx")
        _close(y.grad, X0 + np.sin(X0) * np.exp(Y0) + X0 / Y0**2, "d/dy")
        assert x.is_leaf and x.grad_fn is None and not x.grad.requires_grad

    def test_backward_with_gradient_argument(self) -> None:
        x = _t(X0, True)
        v = np.array([1.0, -2.0, 0.5])
        (x * x).backward(_t(v))  # a vector-Jacobian product
        _close(x.grad, 2 * X0 * v, "x.grad")

    def test_backward_function(self) -> None:
        x, y = _t(X0, True), _t(Y0, True)
        self.ag.backward([(x * y).sum(), (x * x).sum()])
        _close(x.grad, Y0 + 2 * X0, "x.grad")
        _close(y.grad, X0, "y.grad")

    def test_backward_nonscalar_needs_gradient(self) -> None:
        x = _t(X0, True)
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
            (x * 2).backward()

    def test_matmul_relu_values(self) -> None:
        rng = np.random.default_rng(0)
        a0, w0 = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
        a, w = _t(a0, True), _t(w0, True)
        h = et.relu(a @ w)
        (h * h).sum().backward()
        pre = a0 @ w0
        g = 2 * np.maximum(pre, 0) * (pre > 0)
        _close(a.grad, g @ w0.T, "d/da")
        _close(w.grad, a0.T @ g, "d/dw")

    def test_grad_values_leave_dot_grad_untouched(self) -> None:
        x, y = _t(X0, True), _t(Y0, True)
        gx, gy = self.ag.grad((x * x * y).sum(), (x, y))
        _close(gx, 2 * X0 * Y0, "d/dx")
        _close(gy, X0 * X0, "d/dy")
        assert x.grad is None and y.grad is None
        assert not gx.requires_grad

    def test_grad_allow_unused(self) -> None:
        x, y = _t(X0, True), _t(Y0, True)
        with pytest.raises(RuntimeError):
            self.ag.grad((x * 2).sum(), (x, y))
        gx, gy = self.ag.grad((x * 2).sum(), (x, y), allow_unused=True)
        _close(gx, np.full(3, 2.0), "d/dx")
        assert gy is None

    def test_broadcasting_reduction(self) -> None:
        a0, b0 = X0.reshape(3, 1), np.array([1.0, 2.0, -1.0, 0.5])
        a, b = _t(a0, True), _t(b0, True)
        c = _t([[1.0], [10.0], [100.0]], True)
        (a * b + c).sum().backward()
        _close(a.grad, np.full((3, 1), b0.sum()), "grad of the (3, 1) operand")
        _close(b.grad, np.full(4, a0.sum()), "grad of the (4,) operand")
        _close(c.grad, np.full((3, 1), 4.0), "grad of the (3, 1) addend")

    def test_integer_outputs_do_not_require_grad(self) -> None:
        x = _t(X0, True)
        for what, out in (
            ("argmax", x.argmax()),
            ("comparison", x > 0),
            ("to(int64)", x.to(et.int64)),
        ):
            assert not out.requires_grad, f"{what} requires grad"
            assert out.grad_fn is None, f"{what} has a grad_fn"

    def test_detach(self) -> None:
        x = _t(X0, True)
        y = x * 2
        d = y.detach()
        assert not d.requires_grad and d.grad_fn is None
        assert d.data_ptr() == y.data_ptr(), "detach() must share storage"
        (y * d).sum().backward()
        _close(x.grad, 2 * (2 * X0), "only the attached factor is differentiated")

    # -- accumulation and graph lifetime --------------------------------------------------

    def test_accumulation(self) -> None:
        x = _t(X0, True)
        (x * x).sum().backward()
        (x * 3).sum().backward()
        _close(x.grad, 2 * X0 + 3, "accumulated x.grad")
        x.grad = None
        (x * 3).sum().backward()
        _close(x.grad, np.full(3, 3.0), "x.grad after reset")

    def test_retain_graph(self) -> None:
        x = _t(X0, True)
        y = (x * x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        _close(x.grad, 2 * 3 * X0**2, "two backward passes")
        with pytest.raises(
            RuntimeError, match="Trying to backward through the graph a second time"
        ):
            y.backward()

    def test_create_graph_second_derivative(self) -> None:
        x = _t(2.0, True)
        y = x * x * x
        (g,) = self.ag.grad(y, x, create_graph=True)
        _close(g, 12.0, "d/dx x^3 at 2")
        assert g.requires_grad, "create_graph=True: the gradient must require grad"
        (gg,) = self.ag.grad(g, x)
        _close(gg, 12.0, "d2/dx2 x^3 at 2")
        # backward with create_graph keeps the graph of x.grad
        x2 = _t(2.0, True)
        (x2 * x2 * x2).backward(create_graph=True)
        assert x2.grad.requires_grad
        (ggg,) = self.ag.grad(x2.grad, x2)
        _close(ggg, 12.0, "d/dx of x.grad")

    # -- in-place rules ------------------------------------------------------------------

    def test_leaf_inplace_error(self) -> None:
        x = _t(X0, True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            x.add_(1)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            x.mul_(2)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            x[1:].mul_(2)  # a view of the leaf
        with self.ag.no_grad():
            x.add_(1)  # allowed without grad mode (an optimizer step)
            x[0:1].mul_(2)
        _close(x, (X0 + 1) * np.array([2.0, 1.0, 1.0]), "x after the updates under no_grad")
        assert x.requires_grad and x.is_leaf
        (x * x).sum().backward()
        _close(x.grad, 2 * (X0 + 1) * np.array([2.0, 1.0, 1.0]), "x.grad after the updates")

    def test_saved_tensor_modified_error(self) -> None:
        x = _t(X0, True)
        a = x * 1
        b = a * a  # saves a
        a.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            b.sum().backward()

    def test_inplace_on_non_leaf(self) -> None:
        x = _t(X0, True)
        y = x * 2
        y.mul_(y)  # y = (2x)^2
        y.add_(1)
        y.sum().backward()
        _close(x.grad, 8 * X0, "d/dx (2x)^2 + 1")

    def test_views_and_inplace(self) -> None:
        x = _t(X0, True)
        y = x * 1
        v = y[1:]
        v.mul_(2)  # a write into a view changes the base's history
        _close(y, X0 * np.array([1.0, 2.0, 2.0]), "base after the write")
        y.sum().backward(retain_graph=True)
        _close(x.grad, [1.0, 2.0, 2.0], "grad through the base")
        x.grad = None
        v.sum().backward()
        _close(x.grad, [0.0, 2.0, 2.0], "grad through the view")

    def test_setitem_with_grad_value(self) -> None:
        x, w = _t(X0, True), _t([5.0], True)
        y = x * 1
        y[0:1] = w * 3
        (y * y).sum().backward()
        expected = X0.copy()
        expected[0] = 15.0
        _close(x.grad, np.array([0.0, 2 * expected[1], 2 * expected[2]]), "x.grad")
        _close(w.grad, [2 * 15.0 * 3], "w.grad")

    # -- grad modes ----------------------------------------------------------------------

    def test_no_grad_context(self) -> None:
        x = _t(X0, True)
        with self.ag.no_grad():
            assert not self.ag.is_grad_enabled()
            y = x * 2
        assert self.ag.is_grad_enabled()
        assert not y.requires_grad and y.grad_fn is None

    def test_no_grad_decorator(self) -> None:
        x = _t(X0, True)

        @self.ag.no_grad()
        def twice(t):
            """doc"""
            return t * 2

        @self.ag.no_grad
        def thrice(t):
            return t * 3

        assert not twice(x).requires_grad
        assert not thrice(x).requires_grad
        assert twice.__name__ == "twice" and twice.__doc__ == "doc"
        assert self.ag.is_grad_enabled()

    def test_enable_grad(self) -> None:
        x = _t(X0, True)

        @self.ag.enable_grad()
        def f(t):
            return t * 2

        with self.ag.no_grad():
            with self.ag.enable_grad():
                assert self.ag.is_grad_enabled()
                y = x * 2
            assert not self.ag.is_grad_enabled()
            z = f(x)
        assert y.requires_grad and z.requires_grad

    def test_set_grad_enabled(self) -> None:
        x = _t(X0, True)
        with self.ag.set_grad_enabled(False):
            assert not (x * 2).requires_grad
        assert self.ag.is_grad_enabled()
        self.ag.set_grad_enabled(False)  # as a function
        try:
            assert not self.ag.is_grad_enabled()
            assert not (x * 2).requires_grad
        finally:
            self.ag.set_grad_enabled(True)
        assert (x * 2).requires_grad

        @self.ag.set_grad_enabled(False)
        def f(t):
            return t * 2

        assert self.ag.is_grad_enabled(), "decorating must not change the mode"
        assert not f(x).requires_grad
        assert self.ag.is_grad_enabled()

    def test_inference_mode(self) -> None:
        x = _t(X0, True)
        with self.ag.inference_mode():
            assert not self.ag.is_grad_enabled()
            y = x * 2
        assert not y.requires_grad
        with self.ag.inference_mode(False):
            assert (x * 2).requires_grad

    def test_grad_mode_restored_after_exception(self) -> None:
        with pytest.raises(ValueError):
            with self.ag.no_grad():
                raise ValueError("inside")
        assert self.ag.is_grad_enabled()

    def test_grad_mode_is_thread_local(self) -> None:
        x = _t(X0, True)
        seen: dict[str, bool] = {}

        def other_thread():
            seen["enabled"] = self.ag.is_grad_enabled()
            seen["records"] = (x * 2).requires_grad

        with self.ag.no_grad():
            t = threading.Thread(target=other_thread)
            t.start()
            t.join()
        assert seen == {"enabled": True, "records": True}, seen

        entered, release = threading.Event(), threading.Event()

        def no_grad_thread():
            with self.ag.no_grad():
                entered.set()
                release.wait(10)

        t = threading.Thread(target=no_grad_thread)
        t.start()
        try:
            assert entered.wait(10)
            assert self.ag.is_grad_enabled(), "another thread's no_grad leaked into this one"
            assert (x * 2).requires_grad
        finally:
            release.set()
            t.join()

    # -- hooks and retain_grad ------------------------------------------------------------

    def test_hook_on_leaf(self) -> None:
        x = _t(X0, True)
        handle = x.register_hook(lambda g: g * 2)
        (x * 3).sum().backward()
        _close(x.grad, np.full(3, 6.0), "x.grad with a doubling hook")
        handle.remove()
        (x * 3).sum().backward()
        _close(x.grad, np.full(3, 9.0), "x.grad after removing the hook")

    def test_hook_on_intermediate(self) -> None:
        x = _t(X0, True)
        y = x * 3
        seen = []
        y.register_hook(lambda g: seen.append(_np(g)))
        y.register_hook(lambda g: g * 0.5)
        (y * y).sum().backward()
        assert len(seen) == 1
        np.testing.assert_allclose(seen[0], 2 * 3 * X0, err_msg="hook saw d/dy")
        _close(x.grad, 0.5 * 2 * 3 * X0 * 3, "x.grad after the halving hook")

    def test_hook_needs_requires_grad(self) -> None:
        with pytest.raises(RuntimeError):
            _t(X0).register_hook(lambda g: g)

    def test_post_accumulate_grad_hook(self) -> None:
        # what DistributedDataParallel launches its gradient buckets from
        x = _t(X0, True)
        seen = []
        handle = x.register_post_accumulate_grad_hook(lambda p: seen.append(_np(p.grad)))
        (x * 3).sum().backward()
        (x * 2).sum().backward()
        assert len(seen) == 2, "the hook runs once per backward, after accumulation"
        np.testing.assert_allclose(seen[1], np.full(3, 5.0), err_msg="hook saw the sum")
        handle.remove()
        (x * 2).sum().backward()
        assert len(seen) == 2, "the hook ran after its handle was removed"
        with pytest.raises(RuntimeError):
            (x * 2).register_post_accumulate_grad_hook(lambda p: None)

    def test_graph_reaches_the_leaves(self) -> None:
        # grad_fn.next_functions down to AccumulateGrad nodes and their .variable (PyTorch's
        # graph API): how DistributedDataParallel finds the parameters a forward used
        x, y, unused = _t(X0, True), _t(Y0, True), _t(Y0, True)
        out = (x * y).sum() + x.exp().sum()
        seen, stack, leaves = set(), [out.grad_fn], []
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if getattr(node, "variable", None) is not None:
                leaves.append(node.variable)
            stack.extend(nxt for nxt, _ in node.next_functions)
        assert {id(v) for v in leaves} == {id(x), id(y)}, \
            f"leaves reached: {len(leaves)} tensors (expected x and y, not unused)"
        assert all(v is x or v is y for v in leaves)
        assert unused.grad_fn is None and x.grad_fn is None

    def test_retain_grad(self) -> None:
        x = _t(X0, True)
        y = x * 2
        y.retain_grad()
        assert y.retains_grad
        (y * y).sum().backward()
        _close(y.grad, 2 * 2 * X0, "y.grad (retained)")
        _close(x.grad, 2 * 2 * X0 * 2, "x.grad")

    # -- Function ------------------------------------------------------------------------

    def _cube(self, factor: int = 3):
        """A Function computing x^3 whose backward is ``grad * factor * x^2`` (right for the
        default factor of 3, wrong for any other)."""

        class Cube(self.ag.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x * x

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * factor * x * x

        return Cube

    def test_custom_function(self) -> None:
        Cube = self._cube()
        x = _t(X0, True)
        y = Cube.apply(x)
        assert y.requires_grad and y.grad_fn is not None
        _close(y, X0**3, "forward")
        y.sum().backward()
        _close(x.grad, 3 * X0**2, "backward of Cube")

    def test_custom_function_non_tensor_argument(self) -> None:
        class Scale(self.ag.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.k = k
                return x * k

            @staticmethod
            def backward(ctx, grad):
                return grad * ctx.k, None

        x = _t(X0, True)
        Scale.apply(x, 2.5).sum().backward()
        _close(x.grad, np.full(3, 2.5), "backward of Scale")

    def test_custom_function_saved_tensor_modified(self) -> None:
        Cube = self._cube()
        x = _t(X0, True)
        a = x * 1
        y = Cube.apply(a)
        a.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()

    # -- forward mode --------------------------------------------------------------------

    def test_forward_ad_jvp(self) -> None:
        fwAD = self.ag.forward_ad
        x, v = _t(X0), _t([1.0, 0.5, -1.0])
        with fwAD.dual_level():
            d = fwAD.make_dual(x, v)
            y = d * et.sin(d) + d * 2
            primal, tangent = fwAD.unpack_dual(y)
            unpacked = fwAD.unpack_dual(y)
            assert unpacked.primal is not None and unpacked.tangent is not None
        _close(primal, X0 * np.sin(X0) + 2 * X0, "primal")
        _close(
            tangent,
            (np.sin(X0) + X0 * np.cos(X0) + 2) * np.array([1.0, 0.5, -1.0]),
            "tangent (jvp)",
        )

    def test_forward_ad_no_tangent(self) -> None:
        fwAD = self.ag.forward_ad
        with fwAD.dual_level():
            primal, tangent = fwAD.unpack_dual(_t(X0) * 2)
        assert tangent is None
        _close(primal, 2 * X0, "primal of a plain tensor")

    # -- gradcheck -----------------------------------------------------------------------

    def test_gradcheck_passes(self) -> None:
        x = _t(X0, True)
        y = _t(Y0, True)
        assert self.ag.gradcheck(lambda a, b: a * et.sin(b) + a * a, (x, y)) is True

    def test_gradcheck_fails_on_a_wrong_derivative(self) -> None:
        WrongCube = self._cube(factor=2)  # should be 3 x^2
        x = _t(X0, True)
        with pytest.raises(RuntimeError):
            self.ag.gradcheck(WrongCube.apply, (x,))
        assert self.ag.gradcheck(WrongCube.apply, (x,), raise_exception=False) is False

    def test_gradgradcheck_passes(self) -> None:
        x = _t(X0, True)
        assert self.ag.gradgradcheck(lambda a: a * a * et.sin(a), (x,)) is True

    # -- functional ----------------------------------------------------------------------

    def test_functional_jacobian_and_vjp(self) -> None:
        F = self.ag.functional
        x = _t(X0)
        jac = F.jacobian(lambda a: a * a * a, x)
        _close(jac, np.diag(3 * X0**2), "jacobian of x^3")
        out, vjp = F.vjp(lambda a: (a * a).sum(), x)
        _close(out, (X0 * X0).sum(), "vjp output")
        _close(vjp, 2 * X0, "vjp")
        assert not x.requires_grad and x.grad is None

    # -- numerics smoke ------------------------------------------------------------------

    def test_float32_gradients_keep_dtype(self) -> None:
        x = et.tensor([1.0, 2.0], dtype=et.float32, requires_grad=True)
        (x * x).sum().backward()
        assert x.grad.dtype == et.float32
        assert tuple(x.grad.shape) == (2,)
        assert math.isclose(x.grad[1].item(), 4.0)
