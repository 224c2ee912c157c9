"""Divergence groups known and explained: ``(callable, kind) -> reason``.

A group found by the fuzzer that is not here fails the CI slice (``test_fuzz.py``). Each
entry says why the difference is accepted; where it is a documented difference the reason
names the section of ``docs/differences-from-pytorch.md``. Crashes, hangs and leaked
exceptions can never be listed: they are always failures. Documented differences that
``explain.py`` recognises call by call (``out=`` with the wrong shape, writes into
overlapping memory, negative slice steps) need no entry.
"""

from __future__ import annotations

_OUT_SUPERSET = (
    "ops.yaml declares an out= variant that PyTorch's Python API lacks; Ember accepts out= "
    "where PyTorch raises TypeError (a superset, not yet in differences-from-pytorch.md)"
)
_INTEGER_LOSS = (
    "Ember computes this loss for integer inputs, PyTorch's CPU kernel is not implemented "
    "for them (a superset, not yet in differences-from-pytorch.md)"
)

_NO_COMPLEX32 = ("no complex32, and no autograd through complex tensors yet "
                 "(differences-from-pytorch.md: Complex numbers)")
_GEEV_ORDER = ("eig's eigenvalue order and eigenvector phases are LAPACK's geev's, which differ "
               "between OpenBLAS's LAPACK (Ember) and MKL (PyTorch); both satisfy A V = V diag(L)")
_WINDOW_KEYWORDS = ("the window functions take alpha / beta as keywords without periodic; "
                    "PyTorch's parser asks for periodic before them (TypeError)")
_SIGN_NAN = "sign(NaN) is NaN (differences-from-pytorch.md: `sign` of NaN)"

KNOWN: dict[tuple[str, str], str] = {
    ("sign", "value-mismatch"): _SIGN_NAN,
    ("sign(out=)", "value-mismatch"): _SIGN_NAN,
    ("Tensor.sign", "value-mismatch"): _SIGN_NAN,
    ("Tensor.sign_", "value-mismatch"): _SIGN_NAN,
    # differences-from-pytorch.md, Complex numbers: no complex32 (float16 parts raise), and
    # autograd refuses an op making a complex result from inputs that require grad
    ("complex", "raises-only-in-ember"): _NO_COMPLEX32,
    ("view_as_complex", "raises-only-in-ember"): _NO_COMPLEX32,
    ("polar", "raises-only-in-ember"): _NO_COMPLEX32,
    # sgn of a real tensor is sign
    ("sgn", "value-mismatch"): _SIGN_NAN,
    ("sgn(out=)", "value-mismatch"): _SIGN_NAN,
    ("Tensor.sgn", "value-mismatch"): _SIGN_NAN,
    ("Tensor.sgn_", "value-mismatch"): _SIGN_NAN,
    ("relu(out=)", "raises-only-in-torch"): _OUT_SUPERSET,
    ("celu(out=)", "raises-only-in-torch"): _OUT_SUPERSET,
    ("F.kl_div", "raises-only-in-torch"): _INTEGER_LOSS,
    ("F.huber_loss", "raises-only-in-torch"): _INTEGER_LOSS,
    ("F.smooth_l1_loss", "raises-only-in-torch"): _INTEGER_LOSS,
    ("hamming_window", "raises-only-in-torch"): _WINDOW_KEYWORDS,
    ("kaiser_window", "raises-only-in-torch"): _WINDOW_KEYWORDS,
    ("linalg_eig", "value-mismatch"): _GEEV_ORDER,
    ("linalg_eigvals", "value-mismatch"): _GEEV_ORDER,
    ("linalg.eig", "value-mismatch"): _GEEV_ORDER,
    ("linalg.eigvals", "value-mismatch"): _GEEV_ORDER,
}
