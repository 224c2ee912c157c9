"""Interop of Ember tensors with real consumers of the array API standard: array-api-compat,
scikit-learn (``array_api_dispatch=True``) and SciPy (``SCIPY_ARRAY_API=1``).

SciPy reads ``SCIPY_ARRAY_API`` once, when it is first imported, and other test files of the
same pytest run import it without. So scikit-learn and SciPy run in a subprocess: this file,
run as a script (``python test_array_api_interop.py GROUP OUT FIRST``), computes the cases
of a group on Ember tensors and on NumPy arrays and pickles both results (with the type,
device and dtype of each Ember output) to OUT; one module-scoped fixture per group starts it
(again after a case that crashed the process), and one test per case compares.
array-api-compat needs no environment: it runs in-process.

An Ember output must be an ``ember_tensor.Tensor`` on the input's device with NumPy's dtype
where NumPy gives an array, and the same type (``float``) where NumPy gives a Python scalar.
"""

from __future__ import annotations

import math
import os
import pickle
import site
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import ember_tensor as et

# conftest's IS_TORCH, read here without importing conftest (and torch) into the worker
IS_TORCH = os.environ.get("EMBER_TEST_LIB") == "torch"
pytestmark = pytest.mark.skipif(IS_TORCH, reason="ember's array API namespace")

# ---------------------------------------------------------------------------------------------
# The cases (shared by the worker subprocess, which runs them, and the tests, which check)

# float64 results must agree closely; float32 ones within what reordered float32 sums and a
# different LAPACK give. atol is relative to the largest magnitude of the reference output.
TOLERANCES = {"float64": (1e-9, 1e-10), "float32": (1e-4, 2e-5)}


@dataclass(frozen=True)
class Case:
    name: str
    fn: Callable  # fn(A, dtype) -> {output name: value}; A makes an input from a NumPy array
    dtype: str
    # {output: axis}: the outputs' slices along axis are defined up to sign; the signs come
    # from the first output (PCA's components_ are rows, transform's columns)
    signs: dict = field(default_factory=dict)
    check_only: bool = False  # runs once, on Ember tensors; passes when it raises nothing
    # {output: dtype} where Ember's dtype rightly differs from NumPy's: results made from
    # integers or bools take the namespace's default float dtype (float32, as in PyTorch;
    # NumPy's is float64), and a NumPy-only path may compute in float64 where the array API
    # path keeps the input's dtype ("input" stands for the case's dtype)
    want_dtype: dict = field(default_factory=dict)
    xfail: str | None = None
    tol: float = 1.0  # scales TOLERANCES
    # False: scikit-learn runs without array_api_dispatch, so it converts Ember inputs with
    # np.asarray (through Tensor.__array__) and gives NumPy arrays, as for NumPy inputs
    dispatch: bool = True


CASES: dict[str, dict[str, Case]] = {"sklearn": {}, "scipy": {}}


def case(group, dtypes=("float64", "float32"), **kw):
    def register(fn):
        for dt in dtypes:
            name = f"{fn.__name__}[{dt}]"
            CASES[group][name] = Case(name, fn, dt, **kw)
        return fn

    return register


def _rng():
    return np.random.default_rng(12)


def _classification(dtype, n=90, d=6, k=3):
    """Three separated Gaussian classes (int64 labels)."""
    rng = _rng()
    y = np.arange(n) % k
    centers = rng.standard_normal((k, d)) * 2.0
    X = rng.standard_normal((n, d)) + centers[y]
    return X.astype(dtype), y.astype(np.int64)


def _regression(dtype, n=80, d=5):
    rng = _rng()
    X = rng.standard_normal((n, d)) * np.array([3.0, 1.0, 0.5, 2.0, 0.1])[:d]
    y = X @ np.array([1.5, -2.0, 0.3, 0.0, 4.0])[:d] + 0.1 * rng.standard_normal(n) + 1.0
    return X.astype(dtype), y.astype(dtype)


# ---- scikit-learn --------------------------------------------------------------------------


@case("sklearn", signs={"scalings_": 1, "transform": 1})
def lda_svd(A, dtype):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    X, y = _classification(dtype)
    m = LinearDiscriminantAnalysis(solver="svd").fit(A(X), A(y))
    return {
        "scalings_": m.scalings_, "transform": m.transform(A(X)), "predict": m.predict(A(X)),
        "predict_proba": m.predict_proba(A(X)), "decision_function": m.decision_function(A(X)),
        "coef_": m.coef_, "intercept_": m.intercept_, "means_": m.means_,
        "explained_variance_ratio_": m.explained_variance_ratio_, "classes_": m.classes_,
        "score": m.score(A(X), A(y)),
    }


@case("sklearn", dispatch=False)
def lda_eigen_without_dispatch(A, dtype):
    # the eigen solver has no array API support (only svd has)
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    X, y = _classification(dtype)
    m = LinearDiscriminantAnalysis(solver="eigen").fit(A(X), A(y))
    return {"coef_": m.coef_, "predict": m.predict(A(X)), "transform": m.transform(A(X))}


def _pca(A, dtype, **kw):
    from sklearn.decomposition import PCA

    X, _ = _regression(dtype)
    m = PCA(n_components=3, **kw).fit(A(X))
    Z = m.transform(A(X))
    return {
        "components_": m.components_, "transform": Z, "inverse_transform": m.inverse_transform(Z),
        "fit_transform": PCA(n_components=3, **kw).fit_transform(A(X)),
        "explained_variance_": m.explained_variance_,
        "explained_variance_ratio_": m.explained_variance_ratio_,
        "singular_values_": m.singular_values_, "mean_": m.mean_,
        "noise_variance_": m.noise_variance_,
    }


PCA_SIGNS = {"components_": 0, "transform": 1, "fit_transform": 1}


@case("sklearn", signs=PCA_SIGNS)
def pca_full(A, dtype):
    return _pca(A, dtype, svd_solver="full")


@case("sklearn", signs=PCA_SIGNS)
def pca_covariance_eigh(A, dtype):
    return _pca(A, dtype, svd_solver="covariance_eigh")


@case("sklearn", signs=PCA_SIGNS)
def pca_randomized(A, dtype):
    # array API support needs a normalizer made of array API operations (QR or none)
    return _pca(A, dtype, svd_solver="randomized", power_iteration_normalizer="QR",
                random_state=0)


@case("sklearn", signs=PCA_SIGNS)
def pca_whiten(A, dtype):
    return _pca(A, dtype, svd_solver="full", whiten=True)


@case("sklearn")
def ridge_svd(A, dtype):
    from sklearn.linear_model import Ridge

    X, y = _regression(dtype)
    m = Ridge(alpha=0.5, solver="svd").fit(A(X), A(y))
    Y2 = np.stack([y, 2.0 * y - 1.0], axis=1)
    m2 = Ridge(alpha=0.5, solver="svd").fit(A(X), A(Y2))
    return {"coef_": m.coef_, "intercept_": m.intercept_, "predict": m.predict(A(X)),
            "score": m.score(A(X), A(y)), "coef_2d": m2.coef_, "predict_2d": m2.predict(A(X))}


@case("sklearn")
def ridge_classifier_svd(A, dtype):
    from sklearn.linear_model import RidgeClassifier

    X, y = _classification(dtype)
    m = RidgeClassifier(solver="svd").fit(A(X), A(y))
    return {"decision_function": m.decision_function(A(X)), "predict": m.predict(A(X)),
            "coef_": m.coef_}


@case("sklearn")
def scalers(A, dtype):
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, Normalizer, StandardScaler

    X, _ = _regression(dtype)
    out = {}
    for cls in (StandardScaler, MinMaxScaler, MaxAbsScaler):
        m = cls().fit(A(X))
        Z = m.transform(A(X))
        out[cls.__name__] = Z
        out[cls.__name__ + ".inverse"] = m.inverse_transform(Z)
    out["StandardScaler.scale_"] = StandardScaler().fit(A(X)).scale_
    out["MinMaxScaler(-1, 2)"] = MinMaxScaler(feature_range=(-1, 2)).fit_transform(A(X))
    out["Normalizer"] = Normalizer().fit_transform(A(X))
    return out


@case("sklearn")
def kernel_centerer(A, dtype):
    from sklearn.preprocessing import KernelCenterer

    X, _ = _regression(dtype)
    K = X @ X.T
    m = KernelCenterer().fit(A(K))
    return {"transform": m.transform(A(K)), "K_fit_rows_": m.K_fit_rows_}


@case("sklearn")
def polynomial_features(A, dtype):
    from sklearn.preprocessing import PolynomialFeatures

    X, _ = _regression(dtype, n=10, d=3)
    return {"degree3": PolynomialFeatures(3).fit_transform(A(X)),
            "interaction_only": PolynomialFeatures(2, interaction_only=True).fit_transform(A(X))}


@case("sklearn")
def gaussian_nb(A, dtype):
    from sklearn.naive_bayes import GaussianNB

    X, y = _classification(dtype)
    m = GaussianNB().fit(A(X), A(y))
    return {"predict_proba": m.predict_proba(A(X)), "predict": m.predict(A(X)),
            "theta_": m.theta_, "var_": m.var_}


@case("sklearn", tol=5.0)
def logistic_regression_lbfgs(A, dtype):
    from sklearn.linear_model import LogisticRegression

    X, y = _classification(dtype)
    m = LogisticRegression(C=0.5).fit(A(X), A(y))
    return {"predict_proba": m.predict_proba(A(X)), "coef_": m.coef_}


@case("sklearn")
def nystroem(A, dtype):
    from sklearn.kernel_approximation import Nystroem

    X, _ = _regression(dtype)
    return {"rbf": Nystroem(n_components=12, random_state=0).fit_transform(A(X))}


@case("sklearn", dtypes=("int64",))
def label_encoder(A, dtype):
    from sklearn.preprocessing import LabelEncoder

    y = np.array([7, 3, 3, 9, 7, 1], dtype=np.int64)
    m = LabelEncoder().fit(A(y))
    return {"transform": m.transform(A(y)), "classes_": m.classes_,
            "inverse_transform": m.inverse_transform(A(np.array([0, 2, 3])))}


@case("sklearn")
def metrics_regression(A, dtype):
    from sklearn import metrics

    _, y = _regression(dtype)
    p = (0.9 * y + 0.2).astype(dtype)
    out = {}
    for f in (metrics.r2_score, metrics.mean_squared_error, metrics.mean_absolute_error,
              metrics.explained_variance_score, metrics.max_error,
              metrics.mean_absolute_percentage_error, metrics.d2_absolute_error_score):
        out[f.__name__] = f(A(y), A(p))
    out["mean_pinball_loss"] = metrics.mean_pinball_loss(A(y), A(p), alpha=0.3)
    out["r2_score(2 outputs)"] = metrics.r2_score(A(np.stack([y, p], 1)), A(np.stack([p, y], 1)),
                                                  multioutput="raw_values")
    return out


@case("sklearn", dtypes=("int64",), want_dtype={"recall_score(None)": "float32"})
def metrics_classification(A, dtype):
    from sklearn import metrics

    _, y = _classification("float64")
    p = np.roll(y, 1)
    proba = np.full((y.shape[0], 3), 0.2) + 0.4 * (y[:, None] == np.arange(3))
    return {
        "accuracy_score": metrics.accuracy_score(A(y), A(p)),
        "zero_one_loss": metrics.zero_one_loss(A(y), A(p)),
        "f1_score(macro)": metrics.f1_score(A(y), A(p), average="macro"),
        "precision_score(micro)": metrics.precision_score(A(y), A(p), average="micro"),
        "recall_score(None)": metrics.recall_score(A(y), A(p), average=None),
        "confusion_matrix": metrics.confusion_matrix(A(y), A(p)),
        "hamming_loss": metrics.hamming_loss(A(y), A(p)),
        "log_loss": metrics.log_loss(A(y), A(proba)),
    }


@case("sklearn", dtypes=("float64",))
def metrics_roc_curve(A, dtype):
    from sklearn import metrics

    rng = _rng()
    y = (rng.random(40) < 0.5).astype(np.int64)
    s = rng.random(40) + 0.3 * y
    fpr, tpr, thr = metrics.roc_curve(A(y), A(s), drop_intermediate=False)
    return {"fpr": fpr, "tpr": tpr, "thresholds": thr}


@case("sklearn", dtypes=("float64",),
      xfail="scikit-learn calls xp.diff(x, 2), but the standard's n is keyword-only")
def metrics_roc_auc_score(A, dtype):
    from sklearn import metrics

    rng = _rng()
    y = (rng.random(40) < 0.5).astype(np.int64)
    s = rng.random(40) + 0.3 * y
    return {"roc_auc_score": metrics.roc_auc_score(A(y), A(s))}


# NumPy inputs go through scipy.spatial.distance.cdist, which computes in float64
@case("sklearn", want_dtype={"manhattan_distances": "input"})
def pairwise(A, dtype):
    from sklearn.metrics import pairwise

    X, _ = _regression(dtype, n=20)
    Y = (X[:7] + 0.5).astype(dtype)  # no zero distances: ||x||^2 - 2 x.y + ||y||^2 cancels
    out = {}
    for f in (pairwise.euclidean_distances, pairwise.rbf_kernel, pairwise.cosine_similarity,
              pairwise.linear_kernel, pairwise.polynomial_kernel, pairwise.sigmoid_kernel,
              pairwise.manhattan_distances):
        out[f.__name__] = f(A(X), A(Y))
    return out


# scikit-learn's own conformance check (sklearn.utils.estimator_checks): fits with NumPy and
# with Ember inputs and compares the namespace, device, dtype, shape and values of fitted
# attributes and of every method's output
def _estimator_check(make, values=True):
    def fn(A, dtype):
        from sklearn.utils.estimator_checks import check_array_api_input

        est = make()
        check_array_api_input(type(est).__name__, est, "ember_tensor.array_api",
                              dtype_name=dtype, check_values=values)
        return {}

    return fn


def _sklearn_estimator_checks():
    def est(module, name, **kw):
        def make():
            import importlib

            return getattr(importlib.import_module(module), name)(**kw)

        return make

    specs = {
        "LinearDiscriminantAnalysis": est("sklearn.discriminant_analysis",
                                          "LinearDiscriminantAnalysis"),
        "PCA(full)": est("sklearn.decomposition", "PCA", n_components=2, svd_solver="full"),
        "PCA(covariance_eigh)": est("sklearn.decomposition", "PCA", n_components=2,
                                    svd_solver="covariance_eigh"),
        "PCA(randomized)": est("sklearn.decomposition", "PCA", n_components=2,
                               svd_solver="randomized", power_iteration_normalizer="QR",
                               random_state=0),
        "Ridge": est("sklearn.linear_model", "Ridge", solver="svd"),
        "RidgeClassifier": est("sklearn.linear_model", "RidgeClassifier", solver="svd"),
        "RidgeCV": est("sklearn.linear_model", "RidgeCV"),
        "StandardScaler": est("sklearn.preprocessing", "StandardScaler"),
        "MinMaxScaler": est("sklearn.preprocessing", "MinMaxScaler"),
        "MaxAbsScaler": est("sklearn.preprocessing", "MaxAbsScaler"),
        "Normalizer": est("sklearn.preprocessing", "Normalizer"),
        "Binarizer": est("sklearn.preprocessing", "Binarizer"),
        "KernelCenterer": est("sklearn.preprocessing", "KernelCenterer"),
        "PolynomialFeatures": est("sklearn.preprocessing", "PolynomialFeatures"),
        "Nystroem": est("sklearn.kernel_approximation", "Nystroem", n_components=10,
                        random_state=0),
        "LogisticRegression": est("sklearn.linear_model", "LogisticRegression"),
        "PoissonRegressor": est("sklearn.linear_model", "PoissonRegressor"),
        "GaussianNB": est("sklearn.naive_bayes", "GaussianNB"),
    }
    for label, make in specs.items():
        for dt in ("float64", "float32"):
            name = f"check_array_api_input[{label}-{dt}]"
            values = True
            if label == "GaussianNB" and dt == "float64":
                # score() is accuracy_score, which averages a bool array in the namespace's
                # default float dtype: float32 for Ember as for PyTorch, off by 3e-8 from
                # NumPy's float64 (scikit-learn's own test suite does not check values)
                values = False
            CASES["sklearn"][name] = Case(name, _estimator_check(make, values), dt,
                                          check_only=True)


_sklearn_estimator_checks()


# ---- SciPy ---------------------------------------------------------------------------------


@case("scipy")
def special(A, dtype):
    import scipy.special as sp

    v = (_rng().standard_normal(50) * 2).astype(dtype)
    p = _rng().uniform(0.02, 0.98, 30).astype(dtype)
    return {
        "erf": sp.erf(A(v)), "erfc": sp.erfc(A(v)), "log_ndtr": sp.log_ndtr(A(v)),
        "ndtr": sp.ndtr(A(v)), "ndtri": sp.ndtri(A(p)), "expit": sp.expit(A(v)),
        "logit": sp.logit(A(p)), "gammaln": sp.gammaln(A(np.abs(v) + 0.5)),
        "xlogy": sp.xlogy(A(p), A(p)), "entr": sp.entr(A(p)), "i0": sp.i0(A(v)),
    }


@case("scipy")
def special_reductions(A, dtype):
    import scipy.special as sp

    X = _rng().standard_normal((8, 5)).astype(dtype) * 3
    return {
        "logsumexp": sp.logsumexp(A(X)), "logsumexp(axis=1)": sp.logsumexp(A(X), axis=1),
        "logsumexp(b=)": sp.logsumexp(A(X), axis=0, b=A(np.abs(X))),
        "softmax": sp.softmax(A(X), axis=1), "log_softmax": sp.log_softmax(A(X), axis=0),
    }


@case("scipy", want_dtype={"rankdata": "float32"})
def stats(A, dtype):
    import scipy.stats as st

    X = (_rng().standard_normal((30, 4)) * [1.0, 2.0, 0.5, 3.0] + 1).astype(dtype)
    P = (np.abs(X) + 1).astype(dtype)
    return {
        "zscore": st.zscore(A(X), axis=0), "moment(3)": st.moment(A(X), order=3, axis=0),
        "skew": st.skew(A(X), axis=0), "kurtosis": st.kurtosis(A(X), axis=0),
        "sem": st.sem(A(X), axis=0), "variation": st.variation(A(P), axis=0),
        "gmean": st.gmean(A(P), axis=0), "hmean": st.hmean(A(P), axis=0),
        "pmean": st.pmean(A(P), 2.5, axis=0), "entropy": st.entropy(A(P[:, 0])),
        "trim_mean": st.trim_mean(A(X), 0.1, axis=0), "iqr": st.iqr(A(X), axis=0),
        "tvar": st.tvar(A(X[:, 0])), "circmean": st.circmean(A(X[:, 1])),
        "rankdata": st.rankdata(A(X[:, 0])),
    }


@case("scipy")
def stats_tests(A, dtype):
    import scipy.stats as st

    X = (_rng().standard_normal((40, 3)) + [0.0, 0.3, -0.2]).astype(dtype)
    return {
        "ttest_1samp": tuple(st.ttest_1samp(A(X), 0.0, axis=0)),
        "ttest_ind": tuple(st.ttest_ind(A(X[:20]), A(X[20:]), axis=0)),
        "skewtest": tuple(st.skewtest(A(X[:, 0]))),
        "jarque_bera": tuple(st.jarque_bera(A(X[:, 1]))),
        "describe.variance": st.describe(A(X), axis=0).variance,
        "pearsonr": tuple(st.pearsonr(A(X[:, 0]), A(X[:, 1]))),
    }


@case("scipy")
def cluster_vq(A, dtype):
    import scipy.cluster.vq as vq

    X = (_rng().standard_normal((25, 3)) * [1.0, 5.0, 0.2]).astype(dtype)
    return {"whiten": vq.whiten(A(X)), "vq.code": vq.vq(A(X), A(X[:4]))[0]}


@case("scipy")
def signal(A, dtype):
    import scipy.signal as sig

    v = _rng().standard_normal(60).astype(dtype)
    k = np.array([0.25, 0.5, 0.25, -0.1], dtype=dtype)
    return {
        "convolve": sig.convolve(A(v), A(k)), "convolve(same)": sig.convolve(A(v), A(k), "same"),
        "lfilter": sig.lfilter(A(np.array([1.0, 0.5], dtype)), A(np.array([1.0, -0.3], dtype)),
                               A(v)),
        "sosfilt": sig.sosfilt(A(np.array([[1.0, 0.5, 0.0, 1.0, -0.3, 0.0]], dtype)), A(v)),
        "detrend": sig.detrend(A(v)), "medfilt": sig.medfilt(A(v), 5),
    }


@case("scipy")
def signal_correlate(A, dtype):
    import scipy.signal as sig

    v = _rng().standard_normal(60).astype(dtype)
    return {"correlate": sig.correlate(A(v), A(v[:5]))}


@case("scipy")
def signal_savgol_filter(A, dtype):
    import scipy.signal as sig

    v = _rng().standard_normal(60).astype(dtype)
    return {"savgol_filter": sig.savgol_filter(A(v), 7, 2)}


@case("scipy")
def integrate(A, dtype):
    import scipy.integrate as si

    v = _rng().standard_normal(41).astype(dtype)
    # (simpson has no array API support in SciPy 1.17: NumPy out, whatever goes in)
    return {"trapezoid": si.trapezoid(A(v), dx=0.5),
            "cumulative_trapezoid": si.cumulative_trapezoid(A(v))}


@case("scipy")
def ndimage(A, dtype):
    import scipy.ndimage as nd

    X = _rng().standard_normal((12, 9)).astype(dtype)
    return {"gaussian_filter": nd.gaussian_filter(A(X), 1.0),
            "uniform_filter": nd.uniform_filter(A(X), 3),
            "median_filter": nd.median_filter(A(X), 3)}


@case("scipy")
def linalg_special_matrices(A, dtype):
    import scipy.linalg as sl

    X = _rng().standard_normal((4, 4)).astype(dtype)
    return {"block_diag": sl.block_diag(A(X[:2, :2]), A(X[2:, :3])), "fiedler": sl.fiedler(A(X[0]))}


@case("scipy")
def spatial_pdist(A, dtype):
    from scipy.spatial import distance

    X = _rng().standard_normal((10, 3)).astype(dtype)
    return {"pdist": distance.pdist(A(X))}


@case("scipy")
def fft_dct(A, dtype):
    import scipy.fft

    v = _rng().standard_normal(16).astype(dtype)
    return {"dct": scipy.fft.dct(A(v)), "idct": scipy.fft.idct(A(v), type=2, norm="ortho")}


@case("scipy", dtypes=("float64",))
def signal_fftconvolve(A, dtype):
    import scipy.signal as sig

    v = _rng().standard_normal(60).astype(dtype)
    return {"fftconvolve": sig.fftconvolve(A(v), A(v[:5]))}


# ---------------------------------------------------------------------------------------------
# The worker (subprocess side)


def _describe(v):
    """(kind, device, dtype, NumPy value) of one output."""
    if isinstance(v, et.Tensor):
        return ("Tensor", str(v.device), str(v.dtype).split(".")[-1], np.array(v.numpy()))
    if isinstance(v, (np.ndarray, np.generic)):  # NumPy's 0-d results are its scalars
        return ("ndarray", None, v.dtype.name, np.asarray(v))
    return (type(v).__name__, None, None, np.asarray(v))


def _flatten(out):
    flat = {}
    for k, v in out.items():
        if isinstance(v, tuple):
            flat.update({f"{k}[{i}]": x for i, x in enumerate(v)})
        else:
            flat[k] = v
    return flat


def _run_case(group, c):
    import contextlib

    ctx = contextlib.nullcontext
    if group == "sklearn" and c.dispatch:
        import sklearn

        def ctx():
            return sklearn.config_context(array_api_dispatch=True)

    def ember(a):
        return et.from_numpy(np.array(a, copy=True))

    t = time.perf_counter()
    with ctx():
        out_e = _flatten(c.fn(ember, c.dtype))
        described = {k: _describe(v) for k, v in out_e.items()}
    out_n = {} if c.check_only else _flatten(c.fn(lambda a: a, c.dtype))
    return {"ember": described, "numpy": {k: _describe(v) for k, v in out_n.items()},
            "input_device": str(et.tensor([0.0]).device), "seconds": time.perf_counter() - t}


def _worker(group, out, first):
    """Runs the group's cases from the first-th on; each result goes to OUT/<index>.pickle
    as soon as it is known, and OUT/current names the case in progress (so a crash costs
    only that case: the parent starts a new worker after it)."""
    import warnings

    warnings.simplefilter("ignore")
    out = Path(out)
    for i, c in enumerate(list(CASES[group].values())[first:], start=first):
        (out / "current").write_text(str(i))
        try:
            result = _run_case(group, c)
        except Exception:  # recorded; the test of this case shows it
            result = {"error": traceback.format_exc()}
        (out / f"{i}.pickle").write_bytes(pickle.dumps(result))


# ---------------------------------------------------------------------------------------------
# The tests (pytest side)


def _child_env():
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    # the subprocess must import this same ember_tensor: name its directory when it is not
    # where the interpreter finds it anyway (an installed package in site-packages)
    root = os.path.dirname(os.path.dirname(os.path.abspath(et.__file__)))
    sites = {os.path.abspath(p) for p in [*site.getsitepackages(), site.getusersitepackages()]}
    if root not in sites:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def _run_worker(group, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"interop_{group}")
    names = list(CASES[group])
    results = {}
    first = 0
    while first < len(names):
        proc = subprocess.run(
            [sys.executable, "-X", "faulthandler", str(Path(__file__).resolve()), group,
             str(out), str(first)],
            env=_child_env(), capture_output=True, text=True, timeout=600,
        )
        for i in range(first, len(names)):
            if (out / f"{i}.pickle").exists():
                results[names[i]] = pickle.loads((out / f"{i}.pickle").read_bytes())
        if proc.returncode == 0:
            break
        current = out / "current"
        if not current.exists() or int(current.read_text()) < first:
            pytest.fail(f"the {group} worker failed (exit {proc.returncode}) before any case:"
                        f"\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}")
        crashed = int(current.read_text())
        results[names[crashed]] = {"error": f"the worker process died (exit {proc.returncode}) "
                                            f"in this case:\n{proc.stderr[-8000:]}"}
        first = crashed + 1
    return results


@pytest.fixture(scope="module")
def sklearn_results(tmp_path_factory):
    pytest.importorskip("sklearn", minversion="1.9")
    return _run_worker("sklearn", tmp_path_factory)


@pytest.fixture(scope="module")
def scipy_results(tmp_path_factory):
    pytest.importorskip("scipy", minversion="1.17")
    return _run_worker("scipy", tmp_path_factory)


def _align_signs(c, ember, numpy):
    """Flips the Ember outputs' slices named in c.signs to the NumPy run's signs."""
    if not c.signs:
        return ember
    first = next(iter(c.signs))
    e, n = ember[first][3].astype(np.float64), numpy[first][3].astype(np.float64)
    ax = c.signs[first]
    signs = np.sign(np.sum(np.moveaxis(e, ax, 0).reshape(e.shape[ax], -1)
                           * np.moveaxis(n, ax, 0).reshape(n.shape[ax], -1), axis=1))
    signs[signs == 0] = 1
    ember = dict(ember)
    for key, axis in c.signs.items():
        kind, dev, dt, v = ember[key]
        shape = [1] * v.ndim
        shape[axis] = -1
        ember[key] = (kind, dev, dt, (v * signs.reshape(shape)).astype(v.dtype))
    return ember


def _check_case(results, group, name):
    c = CASES[group][name]
    r = results[name]
    if "error" in r:
        if c.xfail:
            pytest.xfail(f"{c.xfail}:\n{r['error'].strip().splitlines()[-1]}")
        pytest.fail(f"{name} raised on Ember tensors:\n{r['error']}")
    if c.check_only:
        return
    ember, numpy = r["ember"], r["numpy"]
    assert sorted(ember) == sorted(numpy)
    ember = _align_signs(c, ember, numpy)
    problems = []
    for key, (kind, dev, dt, value) in ember.items():
        n_kind, _, n_dt, ref = numpy[key]
        if key in c.want_dtype:
            n_dt = c.want_dtype[key].replace("input", c.dtype)
        if n_kind == "ndarray" and not c.dispatch:
            if (kind, dt) != ("ndarray", n_dt):
                problems.append(f"{key}: got {kind} of {dt}, want a NumPy array of {n_dt}")
                continue
        elif n_kind == "ndarray":
            if (kind, dev, dt) != ("Tensor", r["input_device"], n_dt):
                problems.append(f"{key}: got {kind} on {dev} of {dt}, want a Tensor on "
                                f"{r['input_device']} of {n_dt}")
                continue
        elif kind != n_kind:
            problems.append(f"{key}: got a {kind}, NumPy inputs give a {n_kind}")
            continue
        if value.shape != ref.shape:
            problems.append(f"{key}: shape {value.shape}, want {ref.shape}")
            continue
        if ref.dtype.kind in "biu":
            if not np.array_equal(value, ref):
                problems.append(f"{key}: {value} != {ref}")
            continue
        # float32 inputs or outputs: float32 tolerances
        rtol, atol = TOLERANCES["float32" if "float32" in (dt, c.dtype) else "float64"]
        rtol, atol = rtol * c.tol, atol * c.tol
        finite = np.abs(ref[np.isfinite(ref)])
        scale = float(np.max(finite)) if finite.size else 0.0
        try:
            np.testing.assert_allclose(value, ref, rtol=rtol, atol=atol * max(scale, 1.0),
                                       equal_nan=True)
        except AssertionError as e:
            problems.append(f"{key}: {e}")
    assert not problems, f"{name}: " + "\n".join(problems)


def _params(group):
    return [pytest.param(n, marks=pytest.mark.xfail(reason=c.xfail, strict=False))
            if c.xfail else n for n, c in CASES[group].items()]


@pytest.mark.parametrize("name", _params("sklearn"))
def test_sklearn(sklearn_results, name):
    _check_case(sklearn_results, "sklearn", name)


@pytest.mark.parametrize("name", _params("scipy"))
def test_scipy(scipy_results, name):
    _check_case(scipy_results, "scipy", name)


@pytest.mark.parametrize("op", ["__add__", "__mul__", "__eq__", "__radd__", "__rsub__"])
def test_binary_operator_with_ndarray(op):
    """scikit-learn code paths without array API support mix Ember tensors and NumPy arrays
    (LDA(solver='eigen') with dispatch on: priors_[i] * ndarray). The array becomes a tensor
    (as PyTorch converts it); this used to crash the process."""
    import ember_tensor as et

    got = getattr(et.tensor([0.5, 1.0], dtype=et.float64), op)(np.ones(2))
    want = getattr(np.array([0.5, 1.0]), op)(np.ones(2))
    assert isinstance(got, et.Tensor)
    np.testing.assert_array_equal(got.numpy(), want)


# ---- array-api-compat (in-process) ---------------------------------------------------------


def test_array_api_compat_recognises_ember_tensors():
    compat = pytest.importorskip("array_api_compat")
    import ember_tensor.array_api as xp

    x = et.from_numpy(np.arange(24.0).reshape(2, 3, 4))
    assert compat.is_array_api_obj(x)
    assert compat.array_namespace(x) is xp
    assert compat.array_namespace(x, et.ones(2, dtype=et.int64), 3.0, None) is xp
    for version in ("2021.12", "2022.12", "2023.12", "2024.12"):
        assert compat.array_namespace(x, api_version=version) is xp
    with pytest.raises(TypeError, match="Multiple namespaces"):
        compat.array_namespace(x, np.ones(2))
    assert not compat.is_numpy_array(x) and not compat.is_torch_array(x)
    assert compat.is_writeable_array(x) and not compat.is_lazy_array(x)
    assert compat.device(x) == x.device and str(compat.device(x)) == "cpu"
    assert compat.to_device(x, compat.device(x)) is x
    assert compat.to_device(x, "cpu") is x
    assert compat.size(x) == 24 and compat.size(et.ones(())) == 1
    assert compat.size(et.ones((3, 0))) == 0
    y = xp.sum(x, axis=(0, 2))
    assert compat.array_namespace(y) is xp and compat.device(y) == x.device
    np.testing.assert_array_equal(y.numpy(), np.arange(24.0).reshape(2, 3, 4).sum(axis=(0, 2)))


def test_array_api_compat_namespace_helpers_on_ember():
    """array-api-compat's generic helpers go through the namespace's own functions."""
    compat = pytest.importorskip("array_api_compat")
    xp = compat.array_namespace(et.ones(1))
    assert xp.__array_api_version__ == "2024.12"
    info = xp.__array_namespace_info__()
    assert info.default_device() == compat.device(et.ones(1))
    assert info.default_dtypes()["indexing"] == xp.int64


# ---- regressions found by the consumers (in-process) ---------------------------------------


def test_namespace_constants():
    """e, inf, nan, newaxis and pi (MinMaxScaler and MaxAbsScaler read xp.inf)."""
    import ember_tensor.array_api as xp

    assert xp.e == math.e and xp.pi == math.pi and type(xp.e) is float
    assert xp.inf == math.inf and type(xp.inf) is float and math.isnan(xp.nan)
    assert xp.newaxis is None
    x = xp.asarray([1.0, 2.0])
    assert x[xp.newaxis, :].shape == (1, 2) and x[:, xp.newaxis].shape == (2, 1)
    for name in ("e", "inf", "nan", "newaxis", "pi"):
        assert name in xp.__all__
    assert xp.all(xp.isinf(xp.full((2,), -xp.inf)))


# ---------------------------------------------------------------------------------------------

if __name__ == "__main__":  # the worker: python test_array_api_interop.py GROUP OUT FIRST
    _worker(sys.argv[1], sys.argv[2], int(sys.argv[3]))
