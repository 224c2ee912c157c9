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
_TIED_INDEX = ("the index of one of several equal values: PyTorch's is its quickselect's or "
               "sort's choice, Ember's the stable sort's "
               "(differences-from-pytorch.md: Sorting)")
_FMA = ("PyTorch's addcmul and lerp kernels are fused multiply-adds (a product beyond the "
        "dtype's range is not rounded to inf before the add); Ember's composites multiply, "
        "then add (differences-from-pytorch.md: Last bits of float32 math)")
_WELFORD_MEAN = ("var_mean/std_mean's mean is mean(): inf where the data hold inf; PyTorch's comes "
                 "from its Welford update, NaN there (inf - inf)")
_EX_NAN = ("a matrix the *_ex op fails on (info > 0): Ember's result is NaN there, PyTorch's "
           "whatever LAPACK left in its buffer (documented as undefined)")
_HISTC_16 = ("histc places float16/bfloat16 elements computing in float64; PyTorch computes the "
             "bin in the 16-bit type, where (x - min) * bins overflows for wide ranges "
             "(differences-from-pytorch.md: histc)")

_LSTSQ_RANK = ("lstsq of a matrix whose numerical rank sits at the rcond cut-off (entries near "
               "the float64 range's ends): which columns the pivoted QR keeps depends on the last "
               "bits of the factorisation, so PyTorch's own answer differs between machines")

KNOWN: dict[tuple[str, str], str] = {
    ("linalg.lstsq", "value-mismatch"): _LSTSQ_RANK,
    ("linalg.cholesky_ex", "value-mismatch"): _EX_NAN,
    ("linalg.inv_ex", "value-mismatch"): _EX_NAN,
    ("linalg.solve_ex", "value-mismatch"): _EX_NAN,
    ("std_mean", "value-mismatch"): _WELFORD_MEAN,
    ("var_mean", "value-mismatch"): _WELFORD_MEAN,
    ("addcmul", "value-mismatch"): _FMA,
    ("Tensor.addcmul", "value-mismatch"): _FMA,
    ("Tensor.addcmul_", "value-mismatch"): _FMA,
    ("addcmul(out=)", "value-mismatch"): _FMA,
    ("lerp", "value-mismatch"): _FMA,
    ("Tensor.lerp", "value-mismatch"): _FMA,
    ("Tensor.lerp_", "value-mismatch"): _FMA,
    ("lerp(out=)", "value-mismatch"): _FMA,
    # (the values are compared by the op registry and the OpInfo harness)
    ("kthvalue", "value-mismatch"): _TIED_INDEX,
    ("Tensor.kthvalue", "value-mismatch"): _TIED_INDEX,
    ("mode", "value-mismatch"): _TIED_INDEX,
    ("Tensor.mode", "value-mismatch"): _TIED_INDEX,
    ("linalg.cond", "value-mismatch"): "cond of a singular matrix divides by a smallest singular "
                                       "value made of rounding error (~1e-17): both libraries "
                                       "give ~1e17, not the same one",
    # torch.nansum(x, out=x) zero-fills out before it reads x (no overlap check): 0
    ("nansum(out=)", "value-mismatch"): "an out= that is the input: PyTorch's nansum clears "
                                        "out before reading it and returns 0; Ember's sums",
    ("nanmean(out=)", "value-mismatch"): "an out= that is the input: PyTorch's nanmean clears "
                                         "out before reading it and returns 0; Ember's averages",
    # torch 2.13: x = tensor([-2., -1., -1., .5], dtype=float16).reshape(2, 1, 2).expand(2, 2, 2)
    # x.median(-2) has 0.0081 where x.contiguous().median(-2) has 0.5 (a read past the data)
    ("median", "value-mismatch"): "PyTorch's median of an expanded (stride-0) float16 tensor "
                                  "reads wrong elements; Ember's agrees with its contiguous copy",
    ("Tensor.median", "value-mismatch"): "PyTorch's median of an expanded (stride-0) float16 "
                                         "tensor reads wrong elements; Ember's agrees with its "
                                         "contiguous copy",
    ("histc", "value-mismatch"): _HISTC_16,
    ("histc(out=)", "value-mismatch"): _HISTC_16,
    ("Tensor.histc", "value-mismatch"): _HISTC_16,
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
