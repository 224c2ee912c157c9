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

_HUGE_CHUNKS = ("chunks near int64's end: PyTorch's ceil(size / chunks) overflows into 'split_size "
                "be non-negative, but got split_size=-1'; Ember computes it without the "
                "overflow and gives one chunk per element (differences-from-pytorch.md: Calls "
                "PyTorch answers wrongly)")
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
        "then add (differences-from-pytorch.md: Last bits of float32 and float64 math)")
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

_SPECIAL_DTYPES = ("Ember's special-function kernels take every dtype (float16 and bfloat16 "
                   "computed in double, integers and bool in the default float dtype); "
                   "PyTorch's CPU kernel of this one lacks some (NotImplementedError): a superset")
_SPECIAL_LIMITS = ("at +-inf Ember gives the limit (i0: inf, i1: +-inf), PyTorch NaN "
                   "(differences-from-pytorch.md: Special functions)")
_TRIGAMMA_POLES = ("at trigamma's poles (the non-positive integers) Ember gives inf, PyTorch "
                   "1 / sin^2 of a rounded pi x, a large finite number "
                   "(differences-from-pytorch.md: Special functions)")
_SPECIAL_ACCURACY = ("PyTorch's value is the less accurate one: Ember computes every dtype in "
                     "double, PyTorch's float32 kernels in float32 (airy_ai's phase, ndtr's tail, "
                     "igamma of subnormal or huge shapes), and its float64 Bessel j0/j1/y0/y1 "
                     "are off by ~3e-7 near x = 5.5; SciPy and mpmath agree with Ember "
                     "(test_special_kernels.py; differences-from-pytorch.md: Special functions)")
_UNIQUE_CONSECUTIVE_COUNTS = ("PyTorch's unique_consecutive ignores return_counts given by "
                              "position (its counts come back empty); Ember honours it")
_ZETA_TENSOR_FIRST = ("the op special_zeta takes a tensor first; ember.special.zeta, PyTorch's "
                      "public name, also takes a number there")

_COV_MUTATES = ("PyTorch's cov writes into a 0-d integer input (it centres a view of it in "
                "place); Ember leaves its input unchanged")

_TYPE_NAME = ("Tensor.type() names the legacy type in Ember's module ('ember.FloatTensor'); "
              "PyTorch's says 'torch.FloatTensor'")
_TENSORSOLVE_0D = ("PyTorch's linalg.tensorsolve of a 0-d tensor fails inside its C++ ('cannot "
                   "create std::vector larger than max_size()'); Ember solves the 1x1 system")

_MULTILABEL_HALF = ("PyTorch's CPU multilabel_margin_loss takes float32/float64 only (its CUDA "
                    "kernel takes float16/bfloat16 too); Ember's composite takes every float")

_GRID_CODES = ("Ember's grid samplers refuse interpolation or padding codes other than 0, 1, 2 "
               "(RuntimeError); PyTorch's kernels take any int unchecked")

_INDEX_CHECKS = ("Ember checks the indices (differences-from-pytorch.md: Indices PyTorch does not "
                 "check): PyTorch's take_along_dim reads outside its input for an index out of "
                 "range, and its unravel_index wraps such indices around the shape")
_INTEGER_HINGE = ("hinge_embedding_loss of integer inputs: PyTorch computes in the integer type "
                  "(1 - 5 wraps to 252 in uint8, and the mean of it is an error); Ember in the "
                  "default float dtype (a superset, as _INTEGER_LOSS)")

_MEDIAN_EXPANDED = ("PyTorch's median/nanmedian along a dim of an expanded (stride 0) tensor read "
                    "memory outside it (medians that are not among the values); Ember's are each "
                    "row's median (differences-from-pytorch.md: Sorting)")
_ISIN_NOT_UNIQUE = ("isin(assume_unique=True) of inputs that are not unique: undefined in both "
                    "(each library's sort-based algorithm answers differently)")

_SPARSE_CLASS = (
    "Ember's sparse COO tensors are their own class (ember.sparse.SparseCOOTensor), not "
    "Tensors of another layout, and have no dense dimensions (sparse_dim < dim): "
    "differences-from-pytorch.md, 'Sparse tensors are COO matrices for products'"
)

_INTEGER_WRAP = ("PyTorch computes this float result's intermediate steps in the integer input "
                 "type, where they wrap (or negates alpha=-2**63 in int64, or truncates an "
                 "int64 exponent to 32 bits); Ember's answer is the mathematical one "
                 "(differences-from-pytorch.md: Integer arithmetic inside float results)")
_SINGULAR = ("a singular or rank-deficient matrix: the parts of the factorisation it does not "
             "determine are LAPACK's (OpenBLAS in Ember, MKL in PyTorch) "
             "(differences-from-pytorch.md: Singular and rank-deficient matrices)")
_WIDER_TYPE = ("PyTorch computes this in the narrow type and overflows or rounds; Ember in a "
               "wider type (differences-from-pytorch.md: Statistics in a wider type)")
_TORCH_WRONG = ("PyTorch 2.13 returns a wrong result here (differences-from-pytorch.md: Calls "
                "PyTorch answers wrongly)")
_UNDEFINED = ("the call's result is undefined (decreasing bin edges, an overlapping "
              "destination view, NaN into an integer dtype): differences-from-pytorch.md: "
              "Undefined inputs")
_LAST_BITS = ("float32 transcendental functions differ in the last bit "
              "(differences-from-pytorch.md: Last bits of float32 and float64 math)")

_TORCH_INTERNAL_ERROR = ("PyTorch fails inside its own implementation on a call whose meaning is "
                         "clear (kron / take_along_dim view a non-contiguous intermediate, "
                         "index_put with a None index trips an internal assert or reads a mask "
                         "of undefined dtype); Ember computes it (differences-from-pytorch.md: "
                         "Calls PyTorch answers wrongly)")
_LU_NO_PIVOT = ("LU without pivoting on the CPU: PyTorch's CPU build has none (RuntimeError), "
                "Ember computes it (Doolittle, as PyTorch's CUDA build): a superset "
                "(differences-from-pytorch.md: Dtypes PyTorch's CPU kernels lack)")
_SCALAR_WHERE_OUT = ("where(cond, number, number, out=): PyTorch's out= overload takes tensors "
                     "only; Ember's one signature takes numbers in every variant "
                     "(differences-from-pytorch.md: Signatures)")
_ARRAY_COPY = ("Tensor.__array__(dtype, copy): NumPy 2's protocol passes copy; PyTorch's "
               "__array__ takes dtype only (a superset)")

_OVERFLOW = ("an input near the dtype's range: whether inf or NaN comes out depends on the order "
             "of the arithmetic (differences-from-pytorch.md: Infinities and NaN from overflow)")

_NO_MEMORY_FORMAT = ("Ember has no memory_format objects yet: a memory_format= argument is "
                     "accepted and not checked, PyTorch refuses a value that is not one "
                     "(differences-from-pytorch.md: Copies are contiguous)")

_SVD_NONFINITE = ("svd of a matrix with inf or NaN: Ember checks before LAPACK and raises "
                  "PyTorch's own error for it; PyTorch's MKL returns NaNs silently "
                  "(differences-from-pytorch.md: Singular and rank-deficient matrices)")


_NLL_PRIVATE = ("PyTorch's private binding torch._C._nn.nll_loss defaults reduction to 'none' and "
                "takes any other int as one; Ember's nll_loss op follows the schema: 'mean' by "
                "default, RuntimeError for a reduction that is not 0, 1 or 2")
_BOOL_KERNELS = ("Ember's kernels of this op have no bool dtype; PyTorch's answer a few bool calls "
                 "(a 0-d or single-step call that runs no kernel, a bool bound of a bool clamp, "
                 "a bool dtype= for cumsum): Ember refuses them as an unsupported dtype")
_MEDIAN_EMPTY_INT = ("the median of an integer tensor without elements: PyTorch returns an "
                     "arbitrary value (NaN converted to the integer type), Ember raises PyTorch's "
                     "overflow error for that conversion")
_INT32_PARAMS = ("PyTorch's pooling kernels hold sizes, strides and dilations as 32-bit ints "
                 "(RuntimeError beyond); Ember's as int64")
_INPLACE_RESIZE = ("PyTorch's addbmm_ resizes a self of another shape; Ember's in-place ops never "
                   "change self's shape (RuntimeError, as PyTorch's other in-place ops)")
_DLPACK_ARGS = ("from_dlpack / __dlpack__ given a tensor for copy or dl_device: Ember reads copy "
                "as Python truth (an ambiguous one is an error) and indexes dl_device; PyTorch "
                "passes them on unread or refuses the type")
_PRIVATE_EMPTY = ("a private op (_unsafe_masked_index) on a tensor without elements: PyTorch "
                  "clamps the indices into an empty dim, Ember checks them")
_NUMBER_OUT = ("a number given as out=: PyTorch's parser turns it into a 0-d tensor and resizes "
               "that; Ember refuses it (TypeError or RuntimeError)")
_CORE_UNBATCHED = ("the core ops adaptive_avg_pool2d / conv_transpose2d take batched or 3-d "
                   "input only; ember.nn.functional takes unbatched input as PyTorch's does")
_BOOL_SUPERSET = "Ember's kernel takes bool where PyTorch's CPU kernel does not (a superset)"
_AS_STRIDED_SCATTER = ("as_strided_scatter with a view reaching beyond self's storage: PyTorch "
                       "refuses it; Ember writes the view's positions that are elements of self")
_SPLIT_TENSOR = ("a float or multi-dim one-element tensor as a size: PyTorch's parser reads it "
                 "through __index__ in some places; Ember takes integer tensors of one element")

_EXPONENT_PRECISION = ("a Python-number exponent of a float32 result: PyTorch's kernel reads it as "
                       "a double (a subnormal 5e-324 stays non-zero), Ember at float32 (it is 0)")
_SUBNORMAL = ("a subnormal float32 operand: PyTorch's kernel (or its LAPACK) flushes it to zero "
              "or keeps it in a different step than Ember's, so a quotient or remainder of it "
              "differs (1e-7 / 1e-40: 1e33 or inf; fmod(1, 1e-40): NaN or the remainder)")
_OUT_KEPT_EMPTY = ("an out= without elements of another shape than an empty result: PyTorch "
                   "keeps out's shape, Ember resizes it to the result's (differences-from-"
                   "pytorch.md: `out=` with the wrong shape)")

_INDEX_EMPTY = ("index_add into a 1-d tensor without elements: PyTorch's kernel checks the "
                "indices, Ember's writes nothing and checks none (no element can be written)")
_OUT_IS_INPUT = ("out= that is also the (empty) input: PyTorch resizes out first and then reads "
                 "the resized tensor as the input; Ember computes from the input as given, then "
                 "writes (differences-from-pytorch.md: Writes into overlapping memory)")
_TENSORDOT_ONE = ("tensordot contracting a dim of size 1 with one of size 0: PyTorch's size check "
                  "lets a 1 pass (a broadcast); Ember wants equal sizes")
_FLAGS_BY_TRUTH = ("a flag or option given a value of another type (an int for requires_grad, a "
                   "float for check_errors, None for bernoulli's p, a tuple for a dtype): "
                   "PyTorch's parser refuses it, Ember reads it (by truth, or as its default)")
_EMPTY_WEIGHTS = ("a convolution or pooling with an empty weight or a kernel larger than the "
                  "input: PyTorch refuses it, Ember returns the empty result")

_LOW_PRECISION = ("Ember computes float16/bfloat16 here (in float32) where PyTorch's CPU kernel "
                  "takes float32/float64 only (a superset)")
_PROMOTES = ("operands of different dtypes: PyTorch's kernel wants one dtype (RuntimeError); "
             "Ember promotes them as its other binary ops do (a superset)")

_CAST_B = ("B of another dtype than A: solved in A's dtype, B cast to it, as PyTorch's "
           "linalg.solve_triangular does; PyTorch's cholesky_solve and triangular_solve refuse it")
_CAST_SOURCE = ("x[index] = value of another dtype: Ember casts value to x's dtype, as the other "
                "setitem forms (and index_put_ with accumulate=False in PyTorch's Python) do; "
                "PyTorch's advanced-index kernel refuses it")

_OUT_LEAF = ("out= that is a leaf requiring grad: Ember refuses the write for every op (its "
             "one rule); PyTorch refuses it only for ops with an autograd formula (histc has none)")
_BIG_ALPHA = ("alpha of 2**63 or more for an int64 op: PyTorch wraps it to int64, Ember raises "
              "PyTorch's overflow error (the value is not an int64)")
_SPARSE_DENSE = ("Ember's sparse tensors have no dense dimensions: values must be 1-d "
                 "(differences-from-pytorch.md: Sparse tensors are COO matrices for products)")

_SIZE_FORMS = ("a size given in a form PyTorch's parser refuses (an element that is a 0-d "
               "tensor or a NumPy number of another kind): Ember reads its value")

_INT_TO_HALF = ("a number beyond float16's range for a float16 fill (full, full_like, "
                "scalar_tensor): PyTorch's factories round it to inf, Ember raises the overflow "
                "error PyTorch's other ops raise for it (add's alpha, uniform_'s bounds)")

_CONSTANT_TOLERANCE = ("pinv's atol / rtol given as tensors that require grad: PyTorch refuses "
                       "them (not differentiable with respect to atol); Ember reads them as "
                       "constants")
_BCE_LOGITS_DTYPE = ("binary_cross_entropy_with_logits of mixed float dtypes: PyTorch's result has "
                     "the target's dtype (its kernel accumulates in place into (1 - target)); "
                     "Ember's the promoted dtype, as every other loss "
                     "(differences-from-pytorch.md: Calls PyTorch answers wrongly)")
_MATRIX_EXP_VIEW = ("matrix_exp of a non-contiguous batch: PyTorch fails inside its own kernel "
                    "('view size is not compatible'); Ember computes it "
                    "(differences-from-pytorch.md: Calls PyTorch answers wrongly)")
_NUMPY_AXES = ("tensordot's dims as [int, int] (NumPy's axes form: one dim of each), and "
               "histogramdd's bins as lists of edges (NumPy's form): Ember takes them, PyTorch's "
               "parser wants tuples of ints / tensors (a superset)")
_PAIR_ARG = ("im2col / col2im take one int for a pair argument (dilation=[2]), as F.unfold / "
             "F.fold do; PyTorch's internal op wants exactly two (a superset)")
_NON_FINITE_SVD = ("svd-based ops of a matrix holding inf: Ember refuses every non-finite input "
                   "with the error PyTorch raises for NaN; PyTorch's MKL LAPACK returns NaN for "
                   "some inf inputs (which it does depends on the LAPACK build)")
_ONE_WINDOW = ("unfold with a step whose stride product overflows int64: PyTorch's wrapped stride "
               "is negative (its as_strided error); Ember's result has one window and never "
               "uses that stride")
_BOOL_TENSORS_AS_INTS = ("a bool tensor as an int of a list: PyTorch's parser takes it for "
                         "int[] arguments (flip's dims, roll's shifts, as 0 / 1) but refuses it "
                         "for sizes (repeat, expand, ones: 'Expected scalar.isIntegral(false)'); "
                         "Ember takes it in both (True is 1), and refuses one of 2 or more dims "
                         "for roll")
_RETAIN_GRAPH_TENSOR = ("backward(retain_graph=tensor): PyTorch's engine refuses a tensor for the "
                        "flag; Ember reads its truth value (a superset)")
_CLAMP_OVERLOAD = ("clamp(x, number, max=0-d tensor): PyTorch's parser picks its Scalar overload "
                   "and reads the 0-d tensor as a number (x's dtype); Ember's one clamp promotes "
                   "with the tensor bound (differences-from-pytorch.md: Signatures: one signature "
                   "for PyTorch's overloads)")
_REDUCTION_ENUM = ("a reduction enum outside 0..2: PyTorch's kernel does not check it; Ember "
                   "raises")
_COV_LEAF_VIEW = ("cov of a 0-d input that requires grad: PyTorch writes in place into a view of "
                  "it inside its own composite and fails; Ember computes it")
_INTEGER_TENSOR_LIST = ("an int[] argument given as an integer tensor other than int64 "
                        "(tensor_split's indices): Ember takes any 1-d integer tensor "
                        "(differences-from-pytorch.md: Tensors as numbers and sizes)")
_ISIN_WRAP = ("isin(int tensor, a Python int beyond int64): PyTorch wraps the int to the tensor's "
              "dtype (2**63 matches 0); Ember raises the overflow error "
              "(differences-from-pytorch.md: Calls PyTorch answers wrongly)")

_ONE_ELEMENT_INT = ("a one-element integer tensor of 1 or more dims as an int argument: PyTorch's "
                    "parser takes it for some ops (tril's diagonal, eye's n, randint's high) and "
                    "refuses it for others (unsqueeze, diag, cumsum); Ember takes 0-d tensors only")

_VARARGS_NONE = ("a varargs int[] argument given by keyword as None (flip(x, dims=None), "
                 "x.permute(dims=None)) reads as not given, an empty list; PyTorch's parser "
                 "refuses None (TypeError)")

_STATISTICS_GRAD = ("batch_norm's running statistics given as tensors that require grad: "
                    "PyTorch refuses them (native_batch_norm is not differentiable with respect "
                    "to running_mean); Ember reads them as constants, as pinv's tolerances")

KNOWN: dict[tuple[str, str], str] = {
    ("Tensor.to_sparse", "structure-mismatch"): _SPARSE_CLASS,
    ("Tensor.to_sparse", "raises-only-in-ember"): _SPARSE_CLASS,
    ("F.multilabel_margin_loss", "raises-only-in-torch"): _MULTILABEL_HALF,
    ("grid_sampler", "raises-only-in-ember"): _GRID_CODES,
    ("grid_sampler_2d", "raises-only-in-ember"): _GRID_CODES,
    ("grid_sampler_3d", "raises-only-in-ember"): _GRID_CODES,
    ("Tensor.type", "structure-mismatch"): _TYPE_NAME,
    ("linalg.tensorsolve", "raises-only-in-torch"): _TENSORSOLVE_0D,
    ("Tensor.cov", "mutation-mismatch"): _COV_MUTATES,
    ("Tensor.polygamma_", "value-mismatch"): _TRIGAMMA_POLES,
    ("unique_consecutive", "structure-mismatch"): _UNIQUE_CONSECUTIVE_COUNTS,
    ("Tensor.i0", "value-mismatch"): _SPECIAL_LIMITS,
    ("Tensor.i0_", "value-mismatch"): _SPECIAL_LIMITS,
    ("Tensor.igamma", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("Tensor.igammac", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("Tensor.polygamma", "value-mismatch"): _TRIGAMMA_POLES,
    ("i0", "value-mismatch"): _SPECIAL_LIMITS,
    ("i0(out=)", "value-mismatch"): _SPECIAL_LIMITS,
    ("igamma", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("igamma(out=)", "value-mismatch"): _SPECIAL_ACCURACY,
    ("igammac", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("igammac", "value-mismatch"): _SPECIAL_ACCURACY,
    ("polygamma", "value-mismatch"): _TRIGAMMA_POLES,
    ("polygamma(out=)", "value-mismatch"): _TRIGAMMA_POLES,
    ("special_airy_ai", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_airy_ai", "value-mismatch"): _SPECIAL_ACCURACY,
    ("special_airy_ai(out=)", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_airy_ai(out=)", "value-mismatch"): _SPECIAL_ACCURACY,
    ("special_bessel_j0", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_bessel_j0", "value-mismatch"): _SPECIAL_ACCURACY,
    ("special_bessel_j0(out=)", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_bessel_j1", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_bessel_j1", "value-mismatch"): _SPECIAL_ACCURACY,
    ("special_bessel_j1(out=)", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_bessel_y0", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_bessel_y0(out=)", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_bessel_y1", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_bessel_y1(out=)", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_bessel_y1(out=)", "value-mismatch"): _SPECIAL_ACCURACY,
    ("special_erfcx", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_erfcx(out=)", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_i1", "value-mismatch"): _SPECIAL_LIMITS,
    ("special_log_ndtr", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_log_ndtr(out=)", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_modified_bessel_k0", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_modified_bessel_k0(out=)", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_modified_bessel_k1", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_modified_bessel_k1(out=)", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_ndtr(out=)", "value-mismatch"): _SPECIAL_ACCURACY,
    ("special_ndtri", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_ndtri(out=)", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_scaled_modified_bessel_k0", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_scaled_modified_bessel_k0(out=)", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_scaled_modified_bessel_k1", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_scaled_modified_bessel_k1(out=)", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_zeta", "raises-only-in-ember"): _ZETA_TENSOR_FIRST,
    ("special_zeta", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("special_zeta(out=)", "raises-only-in-torch"): _SPECIAL_DTYPES,
    ("unique_consecutive", "shape-mismatch"): _UNIQUE_CONSECUTIVE_COUNTS,
    ("unique_consecutive", "value-mismatch"): _UNIQUE_CONSECUTIVE_COUNTS,
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
    # torch 2.13: x = tensor([-2., -1., -1., .5], dtype=float16).reshape(2, 1, 2).expand(2, 2, 2)
    # x.median(-2) has 0.0081 where x.contiguous().median(-2) has 0.5 (a read past the data)
    ("median", "value-mismatch"): _MEDIAN_EXPANDED,
    ("nanmedian", "value-mismatch"): _MEDIAN_EXPANDED,
    ("Tensor.median", "value-mismatch"): _MEDIAN_EXPANDED,
    ("Tensor.nanmedian", "value-mismatch"): _MEDIAN_EXPANDED,
    ("isin", "value-mismatch"): _ISIN_NOT_UNIQUE,
    ("take_along_dim", "raises-only-in-ember"): _INDEX_CHECKS,
    ("Tensor.take_along_dim", "raises-only-in-ember"): _INDEX_CHECKS,
    ("unravel_index", "raises-only-in-ember"): _INDEX_CHECKS,
    ("F.hinge_embedding_loss", "raises-only-in-torch"): _INTEGER_HINGE,
    ("F.hinge_embedding_loss", "dtype-mismatch"): _INTEGER_HINGE,
    ("linalg_eig", "value-mismatch"): _GEEV_ORDER,
    ("linalg_eigvals", "value-mismatch"): _GEEV_ORDER,
    ("linalg.eig", "value-mismatch"): _GEEV_ORDER,
    ("linalg.eigvals", "value-mismatch"): _GEEV_ORDER,
    ("gradient", "value-mismatch"): _INTEGER_WRAP,
    ("cumulative_trapezoid", "value-mismatch"): _INTEGER_WRAP,
    ("allclose", "value-mismatch"): _INTEGER_WRAP,
    ("corrcoef", "value-mismatch"): _INTEGER_WRAP,
    ("Tensor.sub_", "value-mismatch"): _INTEGER_WRAP,
    ("Tensor.ldexp_", "value-mismatch"): _INTEGER_WRAP,
    ("Tensor.lu", "value-mismatch"): _SINGULAR,
    ("Tensor.qr", "value-mismatch"): _SINGULAR,
    ("qr", "value-mismatch"): _SINGULAR,
    ("Tensor.geqrf", "value-mismatch"): _SINGULAR,
    ("linalg_pinv", "value-mismatch"): _SINGULAR,
    ("Tensor.logdet", "value-mismatch"): _SINGULAR,
    ("F.group_norm", "value-mismatch"): _WIDER_TYPE,
    ("linalg.matrix_exp", "value-mismatch"): _WIDER_TYPE,
    ("F.pairwise_distance", "value-mismatch"): _WIDER_TYPE,
    ("gelu(out=)", "value-mismatch"): _TORCH_WRONG,
    ("slice_scatter", "value-mismatch"): _TORCH_WRONG,
    ("F.multilabel_margin_loss", "value-mismatch"): _TORCH_WRONG,
    ("conv2d", "shape-mismatch"): _TORCH_WRONG,
    ("linalg.lstsq", "shape-mismatch"): _TORCH_WRONG,
    ("pow#1", "value-mismatch"): _TORCH_WRONG,
    ("Tensor.histogram", "value-mismatch"): _UNDEFINED,
    ("as_strided_scatter", "value-mismatch"): _UNDEFINED,
    ("logspace", "value-mismatch"): _UNDEFINED,
    ("erf(out=)", "value-mismatch"): _LAST_BITS,
    ("Tensor.igamma", "value-mismatch"): _SPECIAL_ACCURACY,
    ("igamma", "value-mismatch"): _SPECIAL_ACCURACY,
    ("special_zeta", "value-mismatch"): ("zeta(s, q) for s beyond float32's integers (2**63): "
                                         "every term underflows and Ember gives the limit 0; "
                                         "PyTorch (as SciPy's Cephes) NaN "
                                         "(differences-from-pytorch.md: Special functions)"),
    ("special_bessel_j0(out=)", "value-mismatch"): _SPECIAL_ACCURACY,
    ("special_bessel_j1(out=)", "value-mismatch"): _SPECIAL_ACCURACY,
    ("special_bessel_y0", "value-mismatch"): _SPECIAL_ACCURACY,
    ("special_bessel_y0(out=)", "value-mismatch"): _SPECIAL_ACCURACY,
    ("special_bessel_y1", "value-mismatch"): _SPECIAL_ACCURACY,
    ("special_i0e(out=)", "value-mismatch"): _SPECIAL_ACCURACY,
    ("special_modified_bessel_k1(out=)", "value-mismatch"): _SPECIAL_ACCURACY,
    ("Tensor.fill_", "raises-only-in-ember"): ("fill_ / full of one float16 or bfloat16 element "
                                               "with a number beyond its range: PyTorch's "
                                               "one-element path skips the overflow check its "
                                               "kernel makes for more (inf vs the error); Ember "
                                               "checks at every size (differences-from-pytorch.md:"
                                               " Calls PyTorch answers wrongly)"),
    ("kron", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("Tensor.kron", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("take_along_dim", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("Tensor.take_along_dim", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("index_put", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("Tensor.index_put", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("Tensor.index_put_", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("lu", "raises-only-in-torch"): _LU_NO_PIVOT,
    ("Tensor.lu", "raises-only-in-torch"): _LU_NO_PIVOT,
    ("linalg.lu", "raises-only-in-torch"): _LU_NO_PIVOT,
    ("linalg.lu_factor", "raises-only-in-torch"): _LU_NO_PIVOT,
    ("linalg.lu_factor_ex", "raises-only-in-torch"): _LU_NO_PIVOT,
    ("where#1(out=)", "raises-only-in-torch"): _SCALAR_WHERE_OUT,
    ("Tensor.__array__", "raises-only-in-torch"): _ARRAY_COPY,
    ("matrix_exp", "value-mismatch"): _TORCH_WRONG,
    ("Tensor.matrix_exp", "value-mismatch"): _TORCH_WRONG,
    ("rsub", "value-mismatch"): _INTEGER_WRAP,
    ("special_scaled_modified_bessel_k0(out=)", "value-mismatch"): _SPECIAL_ACCURACY,
    ("special_scaled_modified_bessel_k1(out=)", "value-mismatch"): _SPECIAL_ACCURACY,
    ("special_i1(out=)", "value-mismatch"): _SPECIAL_ACCURACY,
    ("special_modified_bessel_k0(out=)", "value-mismatch"): _SPECIAL_ACCURACY,
    ("Tensor.igamma_", "value-mismatch"): _SPECIAL_ACCURACY,
    ("lu", "value-mismatch"): _SINGULAR,
    ("linalg.lu", "value-mismatch"): _SINGULAR,
    ("linalg.lu_factor_ex", "value-mismatch"): _SINGULAR,
    ("linalg_slogdet", "value-mismatch"): _SINGULAR,
    ("logdet", "value-mismatch"): _SINGULAR,
    ("pinverse", "value-mismatch"): _SINGULAR,
    ("Tensor.pinverse", "value-mismatch"): _SINGULAR,
    ("hardswish(out=)", "value-mismatch"): _OVERFLOW,
    ("F.linear", "value-mismatch"): _OVERFLOW,
    ("narrow_copy(out=)", "value-mismatch"): _TORCH_WRONG,
    ("Tensor.slice_scatter", "value-mismatch"): _TORCH_WRONG,
    ("histogram", "value-mismatch"): _UNDEFINED,
    ("Tensor.as_strided_scatter", "value-mismatch"): _UNDEFINED,
    ("put", "value-mismatch"): _UNDEFINED,
    ("Tensor.put", "value-mismatch"): _UNDEFINED,
    ("Tensor.put_", "value-mismatch"): _UNDEFINED,
    ("Tensor.cfloat", "raises-only-in-torch"): _NO_MEMORY_FORMAT,
    ("Tensor.cdouble", "raises-only-in-torch"): _NO_MEMORY_FORMAT,
    ("Tensor.is_contiguous", "raises-only-in-torch"): _NO_MEMORY_FORMAT,
    ("logsumexp", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("Tensor.logsumexp", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("logsumexp(out=)", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("svd", "raises-only-in-ember"): _SVD_NONFINITE,
    ("Tensor.svd", "raises-only-in-ember"): _SVD_NONFINITE,
    ("linalg_svd", "raises-only-in-ember"): _SVD_NONFINITE,
    ("linalg_svdvals", "raises-only-in-ember"): _SVD_NONFINITE,
    ("linalg_pinv", "raises-only-in-ember"): _SVD_NONFINITE,
    ("pinverse", "raises-only-in-ember"): _SVD_NONFINITE,
    ("Tensor.pinverse", "raises-only-in-ember"): _SVD_NONFINITE,
    ("linalg.cond", "raises-only-in-ember"): _SVD_NONFINITE,
    ("nll_loss", "shape-mismatch"): _NLL_PRIVATE,
    ("nll_loss", "value-mismatch"): _NLL_PRIVATE,
    ("nll_loss", "raises-only-in-ember"): _NLL_PRIVATE,
    ("clamp", "raises-only-in-ember"): _BOOL_KERNELS,
    ("clamp(out=)", "raises-only-in-ember"): _BOOL_KERNELS,
    ("Tensor.clamp", "raises-only-in-ember"): _BOOL_KERNELS,
    ("Tensor.clamp_", "raises-only-in-ember"): _BOOL_KERNELS,
    ("clip", "raises-only-in-ember"): _BOOL_KERNELS,
    ("Tensor.clip", "raises-only-in-ember"): _BOOL_KERNELS,
    ("clip(out=)", "raises-only-in-ember"): _BOOL_KERNELS,
    ("Tensor.clip_", "raises-only-in-ember"): _BOOL_KERNELS,
    ("cumsum", "raises-only-in-ember"): _BOOL_KERNELS,
    ("cumprod", "raises-only-in-ember"): _BOOL_KERNELS,
    ("cumsum(out=)", "raises-only-in-ember"): _BOOL_KERNELS,
    ("Tensor.cumsum", "raises-only-in-ember"): _BOOL_KERNELS,
    ("Tensor.cumprod", "raises-only-in-ember"): _BOOL_KERNELS,
    ("Tensor.cumsum_", "raises-only-in-ember"): _BOOL_KERNELS,
    ("Tensor.cumprod_", "raises-only-in-ember"): _BOOL_KERNELS,
    ("linspace", "raises-only-in-ember"): _BOOL_KERNELS,
    ("linspace(out=)", "raises-only-in-ember"): _BOOL_KERNELS,
    ("inner", "raises-only-in-ember"): _BOOL_KERNELS,
    ("Tensor.inner", "raises-only-in-ember"): _BOOL_KERNELS,
    ("median", "raises-only-in-ember"): _MEDIAN_EMPTY_INT,
    ("nanmedian", "raises-only-in-ember"): _MEDIAN_EMPTY_INT,
    ("Tensor.median", "raises-only-in-ember"): _MEDIAN_EMPTY_INT,
    ("Tensor.nanmedian", "raises-only-in-ember"): _MEDIAN_EMPTY_INT,
    ("max_pool2d_with_indices", "raises-only-in-torch"): _INT32_PARAMS,
    ("F.max_pool2d", "raises-only-in-torch"): _INT32_PARAMS,
    ("F.lp_pool2d", "raises-only-in-torch"): _INT32_PARAMS,
    ("F.max_pool2d_with_indices", "raises-only-in-torch"): _INT32_PARAMS,
    ("Tensor.addbmm_", "raises-only-in-ember"): _INPLACE_RESIZE,
    ("from_dlpack", "raises-only-in-ember"): _DLPACK_ARGS,
    ("Tensor.__dlpack__", "raises-only-in-ember"): _DLPACK_ARGS,
    ("Tensor.__dlpack__", "raises-only-in-torch"): _DLPACK_ARGS,
    ("_unsafe_masked_index", "raises-only-in-ember"): _PRIVATE_EMPTY,
    ("_unsafe_masked_index", "shape-mismatch"): _PRIVATE_EMPTY,
    ("F.normalize", "raises-only-in-ember"): _NUMBER_OUT,
    ("adaptive_avg_pool2d", "raises-only-in-ember"): _CORE_UNBATCHED,
    ("conv_transpose2d", "raises-only-in-ember"): _CORE_UNBATCHED,
    ("linalg.vecdot", "raises-only-in-ember"): _TORCH_WRONG,
    ("Tensor.diagonal_scatter", "value-mismatch"): _TORCH_WRONG,
    ("diagonal_scatter", "value-mismatch"): _TORCH_WRONG,
    ("cov", "mutation-mismatch"): _COV_MUTATES,
    ("isclose", "value-mismatch"): _INTEGER_WRAP,
    ("cov", "value-mismatch"): _INTEGER_WRAP,
    ("Tensor.cov", "value-mismatch"): _INTEGER_WRAP,
    ("Tensor.corrcoef", "value-mismatch"): _INTEGER_WRAP,
    ("ldexp", "value-mismatch"): _INTEGER_WRAP,
    ("Tensor.ldexp", "value-mismatch"): _INTEGER_WRAP,
    ("geqrf", "value-mismatch"): _OVERFLOW,
    ("linalg.lu_factor", "raises-only-in-ember"): _SINGULAR,
    ("linalg.solve_ex", "raises-only-in-ember"): _SINGULAR,
    ("linalg.ldl_factor", "raises-only-in-ember"): _SINGULAR,
    ("gelu_backward", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("gelu(out=)", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("linalg.tensorinv", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("ldexp(out=)", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("isin", "raises-only-in-torch"): _BOOL_SUPERSET,
    ("isin(out=)", "raises-only-in-torch"): _BOOL_SUPERSET,
    ("F.gaussian_nll_loss", "raises-only-in-torch"): _INTEGER_LOSS,
    ("Tensor.as_strided_scatter", "raises-only-in-torch"): _AS_STRIDED_SCATTER,
    ("Tensor.split#1", "raises-only-in-ember"): _SPLIT_TENSOR,
    ("Tensor.unsafe_split", "raises-only-in-ember"): _SPLIT_TENSOR,
    ("Tensor.hsplit", "raises-only-in-ember"): _SPLIT_TENSOR,
    ("triu_indices", "shape-mismatch"): _TORCH_WRONG,
    ("triu_indices", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("F.pixel_unshuffle", "shape-mismatch"): _TORCH_WRONG,
    ("Tensor.mean", "value-mismatch"): _OVERFLOW,
    ("Tensor.pow#1", "value-mismatch"): _EXPONENT_PRECISION,
    ("Tensor.triangular_solve", "value-mismatch"): _SUBNORMAL,
    ("fmod", "value-mismatch"): _SUBNORMAL,
    ("ldexp(out=)", "value-mismatch"): _INTEGER_WRAP,
    ("linalg.matrix_rank", "value-mismatch"): _SINGULAR,
    ("linspace(out=)", "shape-mismatch"): _OUT_KEPT_EMPTY,
    ("lu_unpack", "shape-mismatch"): _UNDEFINED,
    ("Tensor.hsplit", "structure-mismatch"): _SPLIT_TENSOR,
    ("gelu_backward", "value-mismatch"): _WIDER_TYPE,
    ("F.triplet_margin_loss", "value-mismatch"): _OVERFLOW,
    ("Tensor.atan2", "value-mismatch"): _OVERFLOW,
    ("Tensor.__rfloordiv__", "value-mismatch"): _OVERFLOW,
    ("Tensor.index_add", "raises-only-in-torch"): _INDEX_EMPTY,
    ("Tensor.index_add_", "raises-only-in-torch"): _INDEX_EMPTY,
    ("amax(out=)", "raises-only-in-torch"): _OUT_IS_INPUT,
    ("histc(out=)", "raises-only-in-torch"): _OUT_IS_INPUT,
    ("matmul(out=)", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("tensordot", "raises-only-in-ember"): _TENSORDOT_ONE,
    ("Tensor.histc", "raises-only-in-torch"): _HISTC_16,
    ("histc", "raises-only-in-torch"): _HISTC_16,
    ("as_strided_scatter", "raises-only-in-torch"): _AS_STRIDED_SCATTER,
    ("Tensor.new_tensor", "raises-only-in-torch"): _FLAGS_BY_TRUTH,
    ("Tensor.new_empty", "raises-only-in-torch"): _FLAGS_BY_TRUTH,
    ("Tensor.new_ones", "raises-only-in-torch"): _FLAGS_BY_TRUTH,
    ("Tensor.bernoulli#1", "raises-only-in-torch"): _FLAGS_BY_TRUTH,
    ("linalg.inv_ex", "raises-only-in-torch"): _FLAGS_BY_TRUTH,
    ("F.dropout", "raises-only-in-torch"): _FLAGS_BY_TRUTH,
    ("Tensor.type", "raises-only-in-torch"): _FLAGS_BY_TRUTH,
    ("Tensor.bernoulli_#2", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("Tensor.bernoulli_#3", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("native_batch_norm_backward", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("threshold_backward", "raises-only-in-torch"): _TORCH_INTERNAL_ERROR,
    ("F.conv_transpose2d", "raises-only-in-torch"): _EMPTY_WEIGHTS,
    ("conv2d", "raises-only-in-torch"): _EMPTY_WEIGHTS,
    ("F.avg_pool3d", "raises-only-in-torch"): _EMPTY_WEIGHTS,
    ("linalg_eigh", "raises-only-in-torch"): _SINGULAR,
    ("linalg_eigvalsh", "raises-only-in-torch"): _SINGULAR,
    ("linalg.lstsq", "raises-only-in-ember"): _SVD_NONFINITE,
    ("linalg.matrix_rank", "raises-only-in-torch"): _LOW_PRECISION,
    ("linalg.matrix_norm", "raises-only-in-torch"): _LOW_PRECISION,
    ("std#1(out=)", "raises-only-in-torch"): _LOW_PRECISION,
    ("var#1(out=)", "raises-only-in-torch"): _LOW_PRECISION,
    ("cdist", "raises-only-in-torch"): _PROMOTES,
    ("heaviside(out=)", "raises-only-in-torch"): _PROMOTES,
    ("baddbmm", "raises-only-in-torch"): _PROMOTES,
    ("baddbmm(out=)", "raises-only-in-torch"): _PROMOTES,
    ("Tensor.baddbmm_", "raises-only-in-torch"): _PROMOTES,
    ("addbmm", "raises-only-in-torch"): _PROMOTES,
    ("F.bilinear", "raises-only-in-torch"): _PROMOTES,
    ("cholesky_solve", "raises-only-in-torch"): _CAST_B,
    ("triangular_solve", "raises-only-in-torch"): _CAST_B,
    ("Tensor.triangular_solve", "raises-only-in-torch"): _CAST_B,
    ("Tensor.__setitem__", "raises-only-in-torch"): _CAST_SOURCE,
    ("Tensor.map_", "raises-only-in-torch"): _PROMOTES,
    ("histc(out=)", "raises-only-in-ember"): _OUT_LEAF,
    ("rsub", "raises-only-in-ember"): _BIG_ALPHA,
    ("sparse_coo_tensor", "raises-only-in-ember"): _SPARSE_DENSE,
    ("sparse_coo_tensor", "raises-only-in-torch"): _SIZE_FORMS,
    ("full_like", "raises-only-in-ember"): _INT_TO_HALF,
    ("scalar_tensor", "raises-only-in-ember"): _INT_TO_HALF,
    ("linalg_pinv", "raises-only-in-torch"): _CONSTANT_TOLERANCE,
    ("F.binary_cross_entropy_with_logits", "dtype-mismatch"): _BCE_LOGITS_DTYPE,
    ("Tensor.matrix_exp", "raises-only-in-torch"): _MATRIX_EXP_VIEW,
    ("matrix_exp", "raises-only-in-torch"): _MATRIX_EXP_VIEW,
    ("tensordot", "raises-only-in-torch"): _NUMPY_AXES,
    ("histogramdd", "raises-only-in-torch"): _NUMPY_AXES,
    ("im2col", "raises-only-in-torch"): _PAIR_ARG,
    ("linalg.matrix_rank", "raises-only-in-ember"): _NON_FINITE_SVD,
    ("Tensor.unfold", "raises-only-in-torch"): _ONE_WINDOW,
    ("unfold_copy", "raises-only-in-torch"): _ONE_WINDOW,
    ("Tensor.roll", "raises-only-in-ember"): _BOOL_TENSORS_AS_INTS,
    ("Tensor.repeat", "raises-only-in-torch"): _BOOL_TENSORS_AS_INTS,
    ("Tensor.expand", "raises-only-in-torch"): _BOOL_TENSORS_AS_INTS,
    ("ones", "raises-only-in-torch"): _BOOL_TENSORS_AS_INTS,
    ("Tensor.backward", "raises-only-in-torch"): _RETAIN_GRAPH_TENSOR,
    ("Tensor.clamp", "dtype-mismatch"): _CLAMP_OVERLOAD,
    ("binary_cross_entropy(out=)", "raises-only-in-ember"): _REDUCTION_ENUM,
    ("cov", "raises-only-in-torch"): _COV_LEAF_VIEW,
    ("tensor_split", "raises-only-in-torch"): _INTEGER_TENSOR_LIST,
    ("isin", "raises-only-in-ember"): _ISIN_WRAP,
    ("eye(out=)", "raises-only-in-ember"): _ONE_ELEMENT_INT,
    ("tril", "raises-only-in-ember"): _ONE_ELEMENT_INT,
    ("randint#1", "raises-only-in-ember"): _ONE_ELEMENT_INT,
    ("flip", "raises-only-in-torch"): _VARARGS_NONE,
    ("permute", "raises-only-in-torch"): _VARARGS_NONE,
    ("Tensor.permute", "raises-only-in-torch"): _VARARGS_NONE,
    ("F.batch_norm", "raises-only-in-torch"): _STATISTICS_GRAD,
    ("nanmean(out=)", "raises-only-in-torch"): "an out= that is the input: PyTorch's nanmean "
                                               "clears out before reading it (a shape error "
                                               "for an empty one); Ember averages the input",
    ("chunk", "raises-only-in-torch"): _HUGE_CHUNKS,
    ("Tensor.chunk", "raises-only-in-torch"): _HUGE_CHUNKS,
    ("unsafe_chunk", "raises-only-in-torch"): _HUGE_CHUNKS,
    ("Tensor.unsafe_chunk", "raises-only-in-torch"): _HUGE_CHUNKS,
}
