"""ember_tensor.amp.autocast against torch.autocast on the CPU: the dtype each op gives inside
and outside a region, nesting, the decorator, errors and warnings, and gradients through the
casts."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor import amp

torch = pytest.importorskip("torch")

LOW = [("bfloat16", 1e-2), ("float16", 2e-3)]


def pair(shape=(4, 4), seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape).astype(np.float32)
    return a, b


def name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def test_defaults_and_state_functions():
    assert amp.get_autocast_dtype("cpu") == et.bfloat16
    assert amp.get_autocast_dtype("cuda") == et.float16
    assert not amp.is_autocast_enabled("cpu") and not amp.is_autocast_enabled("cuda")
    assert amp.is_autocast_cache_enabled()
    assert amp.is_autocast_available("cpu") and not amp.is_autocast_available("xla")


@pytest.mark.parametrize("low,tol", LOW)
def test_lower_precision_ops(low, tol):
    a, b = pair()
    x, y = et.tensor(a), et.tensor(b)
    dt = getattr(et, low)
    calls = {
        "mm": lambda: et.mm(x, y),
        "matmul": lambda: x @ y,
        "bmm": lambda: et.bmm(x.unsqueeze(0), y.unsqueeze(0)),
        "addmm": lambda: et.addmm(x, x, y),
        "linear": lambda: et.linear(x, y, x[0]),
        "method": lambda: x.mm(y),
    }
    for op, f in calls.items():
        ref = f()
        assert ref.dtype == et.float32, op
        with amp.autocast("cpu", dtype=dt):
            assert amp.is_autocast_enabled("cpu")
            assert amp.get_autocast_dtype("cpu") == dt
            got = f()
        assert got.dtype == dt, op
        np.testing.assert_allclose(
            got.float().numpy(), ref.numpy(), rtol=4 * tol, atol=8 * tol, err_msg=op
        )
        assert f().dtype == et.float32, op  # outside again


def test_fp32_and_unlisted_ops_on_cpu():
    a, _ = pair()
    xb = et.tensor(a).bfloat16()
    target = et.tensor([0, 1, 2, 3])
    with amp.autocast("cpu"):
        assert et.prod(xb).dtype == et.float32
        assert et.nll_loss(xb, target).dtype == et.float32
        # CUDA-only fp32 ops and unlisted ops run in their inputs' dtype on the CPU, as in torch
        assert et.exp(xb).dtype == et.bfloat16
        assert et.softmax(xb, 0).dtype == et.bfloat16
        assert (xb + xb).dtype == et.bfloat16
        # an explicit dtype= is not overridden
        assert et.prod(xb, dtype=et.float64).dtype == et.float64


def test_promote_ops():
    a, b = pair()
    x, yb = et.tensor(a), et.tensor(b).bfloat16()
    with amp.autocast("cpu"):
        assert et.cat([x, yb]).dtype == et.float32
        assert et.stack([yb, x]).dtype == et.float32
        assert et.cat([yb, yb]).dtype == et.bfloat16


def test_float64_out_and_inplace_are_not_autocast():
    a, b = pair()
    x, y = et.tensor(a), et.tensor(b)
    with amp.autocast("cpu"):
        assert et.mm(x.double(), y.double()).dtype == et.float64
        out = et.empty((4, 4))
        et.mm(x, y, out=out)
        assert out.dtype == et.float32
        z = et.tensor(a)
        z.addmm_(x, y)  # in-place: not autocast (float32 math)
        assert z.dtype == et.float32


def test_dtypes_match_torch_autocast_op_by_op():
    a, b = pair()
    idx = np.array([0, 1, 2, 3])
    calls = [
        ("mm", lambda m, p, q: m.mm(p, q)),
        ("matmul", lambda m, p, q: m.matmul(p, q)),
        ("bmm", lambda m, p, q: m.bmm(p.unsqueeze(0), q.unsqueeze(0))),
        ("addmm", lambda m, p, q: m.addmm(p, p, q)),
        ("linear", lambda m, p, q: (m.nn.functional.linear if m is torch else m.linear)(p, q)),
        ("prod", lambda m, p, q: m.prod(p)),
        ("sum", lambda m, p, q: m.sum(p)),
        ("exp", lambda m, p, q: m.exp(p)),
        ("log_softmax", lambda m, p, q: m.log_softmax(p, 1)),
        ("cumsum", lambda m, p, q: m.cumsum(p, 0)),
        ("pow", lambda m, p, q: m.pow(p, 2)),
        ("cat", lambda m, p, q: m.cat([p, q])),
        ("stack", lambda m, p, q: m.stack([p, q])),
        ("add", lambda m, p, q: p + q),
        ("relu", lambda m, p, q: m.relu(p)),
        ("where", lambda m, p, q: m.where(p > 0, p, q)),
        ("linalg_inv", lambda m, p, q: m.linalg.inv(p + 4 * m.eye(4, dtype=p.dtype))),
        (
            "nll_loss",
            lambda m, p, q: (m.nn.functional.nll_loss if m is torch else m.nll_loss)(
                p, m.tensor(idx)
            ),
        ),
    ]
    variants = [("float32", "float32"), ("bfloat16", "bfloat16"), ("float32", "bfloat16")]
    variants += [("float64", "float64")]
    for op, f in calls:
        for da, db in variants:
            tp = torch.tensor(a).to(getattr(torch, da))
            tq = torch.tensor(b).to(getattr(torch, db))
            ep = et.tensor(a).to(getattr(et, da))
            eq = et.tensor(b).to(getattr(et, db))
            try:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    want = name(f(torch, tp, tq).dtype)
            except RuntimeError:
                continue  # torch refuses the mix (e.g. mixed-dtype inv): nothing to compare
            with amp.autocast("cpu", dtype=et.bfloat16):
                got = name(f(et, ep, eq).dtype)
            assert got == want, (op, da, db)


def test_nesting_enabled_false_and_restore():
    a, b = pair()
    x, y = et.tensor(a), et.tensor(b)
    with amp.autocast("cpu"):
        assert et.mm(x, y).dtype == et.bfloat16
        with amp.autocast("cpu", enabled=False):
            assert not amp.is_autocast_enabled("cpu")
            assert et.mm(x, y).dtype == et.float32
            with amp.autocast("cpu", dtype=et.float16):
                assert et.mm(x, y).dtype == et.float16
            assert et.mm(x, y).dtype == et.float32
        assert amp.is_autocast_enabled("cpu")
        assert amp.get_autocast_dtype("cpu") == et.bfloat16
        # the other device type is untouched
        assert not amp.is_autocast_enabled("cuda")
    assert not amp.is_autocast_enabled("cpu")
    with pytest.raises(ZeroDivisionError):
        with amp.autocast("cpu", dtype=et.float16, cache_enabled=False):
            assert not amp.is_autocast_cache_enabled()
            raise ZeroDivisionError
    assert not amp.is_autocast_enabled("cpu")
    assert amp.get_autocast_dtype("cpu") == et.bfloat16
    assert amp.is_autocast_cache_enabled()


def test_decorator_and_reuse():
    a, b = pair()
    x, y = et.tensor(a), et.tensor(b)
    ac = amp.autocast("cpu")

    @ac
    def f(depth):
        r = et.mm(x, y)
        if depth:
            f(depth - 1)  # the same instance re-entered
        assert amp.is_autocast_enabled("cpu")
        return r

    assert f.__name__ == "f"
    assert f(2).dtype == et.bfloat16
    assert not amp.is_autocast_enabled("cpu")
    with ac:
        assert et.mm(x, y).dtype == et.bfloat16
    assert et.mm(x, y).dtype == et.float32


def test_errors_and_warnings():
    with pytest.raises(ValueError, match="device_type"):
        amp.autocast(1)
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'xla'"):
        amp.autocast("xla")
    with pytest.raises(RuntimeError):
        amp.is_autocast_enabled("xla")
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        ac = amp.autocast("cpu", dtype=et.float32)
    with ac:
        assert not amp.is_autocast_enabled("cpu")
    if not et.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            ac = amp.autocast("cuda")
        with ac:
            assert not amp.is_autocast_enabled("cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        amp.autocast("cpu", dtype=et.float16)


def test_gradients_through_autocast(autograd):
    a, b = pair()
    x = et.tensor(a, requires_grad=True)
    w = et.tensor(b, requires_grad=True)
    with amp.autocast("cpu"):
        h = et.mm(x, w)
        h2 = et.mm(h, w)  # w's cast is reused from the cache; both uses reach w.grad
    assert h.dtype == et.bfloat16
    h2.float().sum().backward()
    assert x.grad.dtype == et.float32 and w.grad.dtype == et.float32
    tx = torch.tensor(a, requires_grad=True)
    tw = torch.tensor(b, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        th2 = (tx @ tw) @ tw
    th2.float().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=3e-2, atol=0.3)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=3e-2, atol=0.3)


def test_small_mlp_matches_torch_cpu_autocast(autograd):
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((16, 8)).astype(np.float32)
    ys = rng.integers(0, 5, 16)
    w1 = (rng.standard_normal((32, 8)) * 0.3).astype(np.float32)
    b1 = (rng.standard_normal(32) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((5, 32)) * 0.3).astype(np.float32)
    b2 = (rng.standard_normal(5) * 0.1).astype(np.float32)

    ep = [et.tensor(p, requires_grad=True) for p in (w1, b1, w2, b2)]
    with amp.autocast("cpu", dtype=et.bfloat16):
        h = et.relu(et.linear(et.tensor(xs), ep[0], ep[1]))
        logits = et.linear(h, ep[2], ep[3])
        loss = et.nll_loss(et.log_softmax(logits, 1), et.tensor(ys))
    assert logits.dtype == et.bfloat16 and loss.dtype == et.float32
    loss.backward()

    tp = [torch.tensor(p, requires_grad=True) for p in (w1, b1, w2, b2)]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        th = torch.relu(torch.nn.functional.linear(torch.tensor(xs), tp[0], tp[1]))
        tlogits = torch.nn.functional.linear(th, tp[2], tp[3])
        tloss = torch.nn.functional.cross_entropy(tlogits, torch.tensor(ys))
    tloss.backward()

    assert abs(float(loss.item()) - float(tloss.item())) < 2e-2
    for e, t in zip(ep, tp):
        assert e.grad.dtype == et.float32
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=5e-2, atol=1e-2)


GEN = Path(__file__).resolve().parents[1] / "codegen" / "gen.py"
SCHEMA = """\
- name: twice
  signature: "(Tensor self, Tensor other) -> Tensor"
  variants: [function, method, inplace, out]
  dtypes: float
  doc: "2 * self * other."
  autocast: {AUTOCAST}
"""


@pytest.mark.skipif(not GEN.exists(), reason="needs the source tree (codegen/gen.py)")
def test_codegen_autocast_key(tmp_path):
    def gen(value):
        (tmp_path / "ops.yaml").write_text(SCHEMA.replace("{AUTOCAST}", value))
        out = tmp_path / "gen"
        proc = subprocess.run(
            [sys.executable, str(GEN), "--yaml", str(tmp_path / "ops.yaml"), "--out", str(out)],
            capture_output=True,
            text=True,
        )
        text = "".join(p.read_text() for p in out.glob("bind_ops_*.cpp")) if out.exists() else ""
        return proc, text

    proc, text = gen("{cuda: fp32}")
    assert proc.returncode == 0, proc.stderr
    plan = "autocast::Plan ac_(autocast::Policy::None, autocast::Policy::Fp32);"
    # function (out= only when out is None) and method; the in-place variant is not autocast
    assert text.count(plan) == 2 and "autocast::any_enabled() && !out" in text
    proc, text = gen("promote")
    assert "autocast::Plan ac_(autocast::Policy::Promote, autocast::Policy::Promote);" in text
    for bad, why in [("lowest", "autocast policy must be one of"), ("{tpu: fp32}", "mapping")]:
        proc, _ = gen(bad)
        assert proc.returncode != 0 and why in proc.stderr, proc.stderr


@pytest.mark.skipif(not et.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_policies_match_torch():
    a, b = pair()
    x, y = et.tensor(a, device="cuda"), et.tensor(b, device="cuda")
    xc = et.tensor(a)
    with amp.autocast("cuda"):
        assert et.mm(x, y).dtype == et.float16
        assert et.mm(xc, xc).dtype == et.float32  # CPU tensors: the CPU state (off) applies
        assert et.exp(x.half()).dtype == et.float32
        assert et.softmax(x.half(), 1).dtype == et.float32
        assert et.sum(x.half()).dtype == et.float32
        assert et.dot(x[0].half(), y[0]).dtype == et.float32
        assert (x.half() + x.half()).dtype == et.float16
    with amp.autocast("cuda", dtype=et.bfloat16):
        assert et.linear(x, y).dtype == et.bfloat16


def test_cast_cache_does_not_keep_no_grad_casts(autograd):
    a, b = pair()
    x = et.tensor(a)
    w = et.tensor(b, requires_grad=True)
    with amp.autocast("cpu"):
        with autograd.no_grad():
            et.mm(x, w)  # a cast of w without history: not cached
        y = et.mm(x, w)
    y.float().sum().backward()
    assert w.grad is not None and w.grad.dtype == et.float32
    want = a.sum(axis=0)[:, None].repeat(4, axis=1)
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=2e-2, atol=5e-2)
