"""Every op with a derivatives.yaml entry is exercised by a row of the gradient-check tables
(test_ops_grad_pointwise.py, test_ops_grad_shape.py, test_linalg_grad.py, and the complex
and FFT tables of test_complex_grad.py and test_fft_grad.py): the rows are run once more
under a hook that notes which ops they record."""

from __future__ import annotations

import ember_autograd as ea
import ember_tensor as et
import test_complex_grad as complex_grad
import test_fft_grad as fft_grad
import test_linalg_grad as linalg
import test_ops_grad_pointwise as pointwise
import test_ops_grad_shape as shape
from ember_autograd import codegen, recording


def _recorded_keys() -> set[str]:
    seen: set[str] = set()
    inner = et._get_autograd_hook()

    def spy(op, kind, args, result):
        seen.add(op)
        return inner(op, kind, args, result)

    et._set_autograd_hook(spy)
    try:
        for row in pointwise.ROWS:
            row.ember_fn()(*row.build(et))
        for row in shape.ROWS:
            shape.ember_fn(row[1])(*shape.build(row[2], et))
        for row in linalg.ROWS:
            linalg.ember_fn(row[1])(*linalg.build(row[2], et))
        z = lambda: et.tensor(complex_grad._complex((2, 3)), requires_grad=True)  # noqa: E731
        r = lambda: et.tensor(complex_grad._real((2, 3)), requires_grad=True)  # noqa: E731
        for table, make in ((complex_grad.UNARY, (z,)), (complex_grad.TO_REAL, (z,)),
                            (complex_grad.REDUCE_AND_SHAPE, (z,)),
                            (complex_grad.FROM_REAL, (r, r)), (complex_grad.BINARY, (z, z)),
                            (complex_grad.INDEX_WRITES, (z, z))):
            for fn in table.values():
                fn(et, *(m() for m in make))
        for fn in complex_grad.EIG.values():
            fn(et, et.tensor(complex_grad._real((4, 4)), requires_grad=True))
        for name in fft_grad.TRANSFORMS:
            x = z() if name not in fft_grad.REAL_ONLY else r()
            getattr(et.fft, name)(x)
        for fn in linalg.NOT_DIFFERENTIATED.values():
            fn(et, et.tensor(complex_grad._real((3, 3)) + 3 * et.eye(3, dtype=et.float64),
                             requires_grad=True))
    finally:
        et._set_autograd_hook(inner)
    return seen


def test_every_entry_is_checked_by_a_table_row():
    assert et._get_autograd_hook() is recording.hook
    _, entries, schema = codegen.generate(strict=True)
    seen = _recorded_keys()
    # integral casts never record (their results are not differentiable): their entries
    # exist so that the schema check passes, and test_ops_grad_pointwise checks them apart
    integral = {"int", "long", "short", "char", "byte", "bool"}
    missing = sorted(k for k in entries if k not in seen and k not in integral)
    assert not missing, f"ops without a gradient-check row: {missing}"
    assert ea.is_grad_enabled()
