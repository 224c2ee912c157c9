"""Fit the polynomials of the float32 special-function kernels and write their header.

The float32 kernels of the special functions (``special_float.h``) evaluate each function
as a polynomial in a variable ``t`` of the input, in straight-line code that vectorises.
This script fits those polynomials: for each piece below, it samples the target function
(computed by mpmath at 40 digits) at Chebyshev nodes of the piece's interval, fits a
Chebyshev series in ``s = (t - mid) / half`` (``|s| <= 1`` on the piece) by least squares
weighted for relative error, and checks the series as the kernel evaluates it: in float32
arithmetic, by Clenshaw's recurrence (stable where monomials of the same polynomial would
cancel), on 4,000 points of the interval.

It writes ``packages/tensor-core/src/ember/ops/elementwise/special_float_coeffs.h`` (a
generated file: change this script and run it again rather than edit the header)::

    python tools/fit_special_float.py          # write the header, print each fit's error
    python tools/fit_special_float.py --check  # exit 1 when the header is out of date

Needs numpy and mpmath.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import mpmath as mp
import numpy as np

mp.mp.dps = 40
HEADER = Path(__file__).resolve().parents[1] / (
    "packages/tensor-core/src/ember/ops/elementwise/special_float_coeffs.h")


@dataclass(frozen=True)
class Piece:
    """One polynomial: ``target(t)`` on ``[lo, hi]`` by a polynomial of ``degree`` in s."""

    name: str  # the C++ array is k<Name>
    doc: str  # what the polynomial approximates, as a C++ comment
    lo: float
    hi: float
    degree: int
    target: Callable[[mp.mpf], mp.mpf]
    relative: bool = True  # fit the relative error; else the error relative to max |target|
    wide: bool = False  # the kernel evaluates the series in double (float32 coefficients)
    horner: bool = False  # monomial coefficients in t, evaluated by Horner's rule (cheaper)


def _erfinv_over_y(w: mp.mpf) -> mp.mpf:
    """erfinv(y) / y for the y with w = -log(1 - y^2)."""
    # y is within exp(-w) of 1: keep the digits that tell it from 1
    with mp.workdps(40 + int(w / 2)):
        y = mp.sqrt(-mp.expm1(-w))
        return +(mp.erfinv(y) / y)


def _erfcx(x: mp.mpf) -> mp.mpf:
    return mp.exp(x * x) * mp.erfc(x)


_K_ERFCX = 2.0  # erfcx's variable: t = (x - K) / (x + K), which maps [0, inf) to [-1, 1)


def _erfcx_of_t(t: mp.mpf) -> mp.mpf:
    """erfcx(x) (x + K) / K: between 1 and 1 / (K sqrt(pi)), so float32 s costs no precision."""
    x = _K_ERFCX * (1 + t) / (1 - t)
    return _erfcx(x) * (x + _K_ERFCX) / _K_ERFCX


_T_NDTR = 3.0  # the normal tail's variable: t = K / (K + a), which maps [0, inf) to (0, 1]
_A_NDTR_MAX = 14.5  # Phi(-14.5) * 14.5 is below float32's smallest subnormal
# the fit's end: from Phi(-13.2) = 4.4e-40 on, the tail is a subnormal float with under 17
# significant bits, which the polynomial a little beyond its interval still gives
_A_NDTR_FIT = 13.2


def _normal_tail_of_t(t: mp.mpf) -> mp.mpf:
    """Phi(-a) exp(a^2 / 2) / t at a = K (1 - t) / t: between 1 / 2 and K / sqrt(2 pi)."""
    a = _T_NDTR * (1 - t) / t
    return mp.ncdf(-a) * mp.exp(a * a / 2) / t


# The small-argument pieces of the Bessel functions are scaled by polynomials (which keep
# them entire, so the series converge fast) to stay near 1 over [0, 8], where I0(x) e^-x
# falls to 0.14: the float32 rounding of s then costs little precision.
def _i0e_small(t: mp.mpf) -> mp.mpf:  # t = x in [0, 8]
    return mp.besseli(0, t) * mp.exp(-t) * (1 + t / 2)


def _i1e_small_over_x(t: mp.mpf) -> mp.mpf:  # I1(x) e^-x / x is even in x and finite at 0
    return mp.besseli(1, t) * mp.exp(-t) / t * (1 + t / 2) ** 2


def _i0e_large(t: mp.mpf) -> mp.mpf:  # t = 1 / x for x >= 8: I0(x) e^-x sqrt(x)
    x = 1 / t
    return mp.besseli(0, x) * mp.exp(-x) * mp.sqrt(x)


def _i1e_large(t: mp.mpf) -> mp.mpf:
    x = 1 / t
    return mp.besseli(1, x) * mp.exp(-x) * mp.sqrt(x)


def _k0_small(t: mp.mpf) -> mp.mpf:
    """K0(x) + log(x / 2) I0(x) at x = sqrt(t): entire in t (-gamma at 0)."""
    x = mp.sqrt(t)
    return mp.besselk(0, x) + mp.log(x / 2) * mp.besseli(0, x)


def _k1_small(t: mp.mpf) -> mp.mpf:
    """x K1(x) - x log(x / 2) I1(x) at x = sqrt(t): entire in t (1 at 0)."""
    x = mp.sqrt(t)
    return x * (mp.besselk(1, x) - mp.log(x / 2) * mp.besseli(1, x))


def _k_large(nu: int) -> Callable[[mp.mpf], mp.mpf]:
    def target(t: mp.mpf) -> mp.mpf:  # t = 1 / x: K_nu(x) e^x sqrt(x)
        x = 1 / t
        return mp.besselk(nu, x) * mp.exp(x) * mp.sqrt(x)

    return target


def _bessel_y0_rest(t: mp.mpf) -> mp.mpf:
    """Y0(x) - (2 / pi) log(x / 2) J0(x) at x = sqrt(t): entire in t."""
    x = mp.sqrt(t)
    return mp.bessely(0, x) - 2 / mp.pi * mp.log(x / 2) * mp.besselj(0, x)


def _bessel_y1_rest(t: mp.mpf) -> mp.mpf:
    """(Y1(x) - (2 / pi) (log(x / 2) J1(x) - 1 / x)) / x at x = sqrt(t): entire in t."""
    x = mp.sqrt(t)
    return (mp.bessely(1, x) - 2 / mp.pi * (mp.log(x / 2) * mp.besselj(1, x) - 1 / x)) / x


def _hankel_pq(nu: int, which: str) -> Callable[[mp.mpf], mp.mpf]:
    """P_nu(x), or Q_nu(x) x, at x = 1 / t: J_nu = sqrt(2 / (pi x)) (P cos chi - Q sin chi)
    and Y_nu = sqrt(2 / (pi x)) (P sin chi + Q cos chi) with chi = x - (2 nu + 1) pi / 4."""

    def target(t: mp.mpf) -> mp.mpf:
        if t < mp.mpf(10) ** -6:  # the first terms of the asymptotic series (error < 1e-24)
            mu = 4 * nu * nu
            if which == "P":
                return 1 - (mu - 1) * (mu - 9) / 128 * t * t
            return (mu - 1) / 8 - (mu - 1) * (mu - 9) * (mu - 25) / 3072 * t * t
        with mp.workdps(60):
            x = 1 / t
            chi = x - (2 * nu + 1) * mp.pi / 4
            j, y = mp.besselj(nu, x), mp.bessely(nu, x)
            scale = mp.sqrt(mp.pi * x / 2)
            if which == "P":
                return +(scale * (j * mp.cos(chi) + y * mp.sin(chi)))
            return +(scale * (y * mp.cos(chi) - j * mp.sin(chi)) * x)

    return target


def _lgamma_over_zeros(x: mp.mpf) -> mp.mpf:
    """log Gamma(x) / ((x - 1)(x - 2)): smooth across lgamma's zeros at 1 and 2."""
    return mp.loggamma(x) / ((x - 1) * (x - 2))


PIECES = [
    Piece("ErfinvCentral", "erfinv(y) / y as a function of w = -log(1 - y^2), w in [0, 6.25]",
          0.0, 6.25, 12, _erfinv_over_y),
    Piece("ErfinvTail", "erfinv(y) / y as a function of sqrt(w), sqrt(w) in [2.5, 4.5]",
          2.5, 4.5, 9, lambda s: _erfinv_over_y(s * s)),
    Piece("ErfinvFarTail", "erfinv(y) / y as a function of sqrt(w), sqrt(w) in [4.5, 10.5] "
          "(ndtri's tails)", 4.5, 10.5, 9, lambda s: _erfinv_over_y(s * s)),
    Piece("Erfcx", f"erfcx(x) (x + K) / K with K = {_K_ERFCX:g}, erfcx(x) = exp(x^2) erfc(x), "
          "as a function of t = (x - K) / (x + K), x in [0, 12]", -1.0,
          (12 - _K_ERFCX) / (12 + _K_ERFCX), 13, _erfcx_of_t),
    Piece("NormalTail", f"Phi(-a) exp(a^2 / 2) / t with t = K / (K + a), K = {_T_NDTR:g}, as "
          f"a function of t, a in [0, {_A_NDTR_FIT:g}]", _T_NDTR / (_T_NDTR + _A_NDTR_FIT), 1.0,
          8, _normal_tail_of_t, horner=True),
    Piece("ExpReducedF", "exp(r), |r| <= 0.45: the reduced argument of float32 exp (ln2 / 2) "
          "and the small corrections some kernels add to it", -0.45, 0.45, 6, mp.exp,
          horner=True),
    Piece("Exp2Reduced", "2^r, |r| <= 1/2: float32 exp2's reduced argument (AVX-512 kernel)",
          -0.5, 0.5, 6, lambda r: mp.mpf(2) ** r, horner=True),
    Piece("I0eSmall", "I0(x) exp(-x) (1 + x / 2), x in [0, 8]", 0.0, 8.0, 15, _i0e_small),
    Piece("I1eSmall", "I1(x) exp(-x) / x (1 + x / 2)^2, x in [0, 8]", 0.0, 8.0, 15,
          _i1e_small_over_x),
    Piece("I0eLarge", "I0(x) exp(-x) sqrt(x) as a function of 1 / x, x >= 8", 0.0, 0.125, 8,
          _i0e_large),
    Piece("I1eLarge", "I1(x) exp(-x) sqrt(x) as a function of 1 / x, x >= 8", 0.0, 0.125, 8,
          _i1e_large),
    Piece("LgammaCore", "log Gamma(x) / ((x - 1)(x - 2)), x in [0.5, 3]", 0.5, 3.0, 20,
          _lgamma_over_zeros),
    Piece("SinPi", "sin(pi r) / r as a function of r^2, |r| <= 0.5", 0.0, 0.25, 6,
          lambda u: mp.sinpi(mp.sqrt(u)) / mp.sqrt(u) if u > 0 else mp.pi),
    Piece("CosPi", "cos(pi r) as a function of r^2, |r| <= 0.5 (absolute error)", 0.0, 0.25, 7,
          lambda u: mp.cospi(mp.sqrt(u)), relative=False),
    Piece("AtanReduced", "atan(z) / z as a function of z^2, |z| <= tan(pi / 8)", 0.0,
          float(mp.tan(mp.pi / 8) ** 2) * 1.01, 6,
          lambda u: mp.atan(mp.sqrt(u)) / mp.sqrt(u) if u > 0 else mp.mpf(1), horner=True),
    Piece("AsinReduced", "asin(z) / z as a function of z^2, |z| <= 1 / 2", 0.0, 0.25, 7,
          lambda u: mp.asin(mp.sqrt(u)) / mp.sqrt(u) if u > 0 else mp.mpf(1), horner=True),
    Piece("K0Small", "K0(x) + log(x / 2) I0(x) as a function of x^2, x in [0, 2] (absolute "
          "error)", 0.0, 4.0, 8, _k0_small, relative=False),
    Piece("K1Small", "x K1(x) - x log(x / 2) I1(x) as a function of x^2, x in [0, 2] "
          "(absolute error)", 0.0, 4.0, 8, _k1_small, relative=False),
    Piece("J0Small", "J0(x) as a function of x^2, x in [0, 8] (absolute error)", 0.0, 64.0, 12,
          lambda t: mp.besselj(0, mp.sqrt(t)), relative=False, wide=True),
    Piece("J1Small", "J1(x) / x as a function of x^2, x in [0, 8] (absolute error)", 0.0, 64.0,
          12, lambda t: mp.besselj(1, mp.sqrt(t)) / mp.sqrt(t) if t > 0 else mp.mpf(0.5),
          relative=False, wide=True),
    Piece("Y0Small", "Y0(x) - (2 / pi) log(x / 2) J0(x) as a function of x^2, x in [0, 8] "
          "(absolute error)", 0.0, 64.0, 12, _bessel_y0_rest, relative=False, wide=True),
    Piece("Y1Small", "(Y1(x) - (2 / pi) (log(x / 2) J1(x) - 1 / x)) / x as a function of x^2, "
          "x in [0, 8] (absolute error)", 0.0, 64.0, 12, _bessel_y1_rest, relative=False,
          wide=True),
    Piece("P0", "P0(x) of J0 and Y0 (Hankel's asymptotic form) as a function of 1 / x, x >= 8",
          0.0, 0.125, 8, _hankel_pq(0, "P")),
    Piece("Q0", "Q0(x) x of J0 and Y0 as a function of 1 / x, x >= 8", 0.0, 0.125, 8,
          _hankel_pq(0, "Q")),
    Piece("P1", "P1(x) of J1 and Y1 as a function of 1 / x, x >= 8", 0.0, 0.125, 8,
          _hankel_pq(1, "P")),
    Piece("Q1", "Q1(x) x of J1 and Y1 as a function of 1 / x, x >= 8", 0.0, 0.125, 8,
          _hankel_pq(1, "Q")),
    Piece("K0eLarge", "K0(x) exp(x) sqrt(x) as a function of 1 / x, x >= 2", 0.0, 0.5, 14,
          _k_large(0)),
    Piece("K1eLarge", "K1(x) exp(x) sqrt(x) as a function of 1 / x, x >= 2", 0.0, 0.5, 14,
          _k_large(1)),
]


@dataclass(frozen=True)
class DoublePiece:
    """A float64 kernel's polynomial: the Chebyshev interpolant of ``target`` on ``[lo, hi]``
    of ``degree``, computed in mpmath (a float64 fit by least squares would stop near 1e-15
    relative) and written as monomial coefficients in s (Horner's rule: one fused multiply-add
    a term, and pieces of the same length can share one evaluation with their coefficients
    picked per element), rounded to double."""

    name: str
    doc: str
    lo: float
    hi: float
    degree: int
    target: Callable[[mp.mpf], mp.mpf]
    in_t: bool = False  # coefficients in t itself (a piece centred on 0): no scaling of t


def _erfcx_of_t_d(t: mp.mpf) -> mp.mpf:
    """erfcx(x) (x + K) / K at x = K (1 + t) / (1 - t) (the float64 kernels' variable)."""
    x = _K_ERFCX_D * (1 + t) / (1 - t)
    return _erfcx(x) * (x + _K_ERFCX_D) / _K_ERFCX_D


def _erf_over_x(t: mp.mpf) -> mp.mpf:
    """erf(x) / x at t = x^2 (2 / sqrt(pi) at 0)."""
    if t == 0:
        return 2 / mp.sqrt(mp.pi)
    return mp.erf(mp.sqrt(t)) / mp.sqrt(t)


_K_ERFCX_D = 3.0  # the float64 erfcx's variable: t = (x - K) / (x + K)
_X_ERFCX_D = 27.3  # erfc(27.3) is below double's smallest subnormal
_LN2_HALF = float(mp.log(2) / 2) * (1 + 1e-6)  # exp's reduced argument (a hair wider)
DOUBLE_PIECES = [
    DoublePiece("ExpReduced", "exp(r), r in [-ln2 / 2, ln2 / 2] (float64 exp and its family)",
                -_LN2_HALF, _LN2_HALF, 11, mp.exp, in_t=True),
    DoublePiece("ErfSmall", "erf(x) / x as a function of t = x^2, x in [0, 1] (float64 erf)",
                0.0, 1.0, 11, _erf_over_x),
    DoublePiece("ErfcxD", f"erfcx(x) (x + K) / K with K = {_K_ERFCX_D:g}, erfcx(x) = exp(x^2) "
                f"erfc(x), as a function of t = (x - K) / (x + K), x in [0, {_X_ERFCX_D:g}] "
                "(float64 erfc, erf, ndtr, gelu)", -1.0,
                (_X_ERFCX_D - _K_ERFCX_D) / (_X_ERFCX_D + _K_ERFCX_D), 22, _erfcx_of_t_d),
]


@dataclass(frozen=True)
class TablePiece:
    """A piecewise polynomial for the AVX-512 kernels that look coefficients up by a permute
    (ops/nn/gelu_avx512.cpp): ``target(a)`` on ``[0, end]`` cut into ``intervals``
    equal intervals (a power of two per unit, so that ``h = a - j / steps`` is exact), each a
    polynomial of ``degree`` in ``h`` (monomials, Horner's rule), fitted for relative error."""

    name: str
    doc: str
    end: float
    intervals: int  # 32: two registers of 16 floats per coefficient
    degree: int
    target: Callable[[mp.mpf], mp.mpf]


TABLE_PIECES = [
    TablePiece("NormalTailTable", "Phi(-a), the standard normal distribution's upper tail "
               "(exact GELU and its derivative)", 4.0, 32, 5, lambda a: mp.ncdf(-a)),
    TablePiece("NormalDensityTable", "phi(a) = exp(-a^2 / 2) / sqrt(2 pi), the standard normal "
               "density (GELU's derivative)", 4.0, 32, 5, mp.npdf),
]


def _chebyshev_to_monomial(coeffs: list[mp.mpf]) -> list[mp.mpf]:
    """The monomial coefficients (s^0 first) of sum_k coeffs[k] T_k(s), in mpmath."""
    out = [mp.mpf(0)] * len(coeffs)
    prev, cur = [mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]  # T_0, T_1
    for k, c in enumerate(coeffs):
        t_k = prev if k == 0 else cur
        for i, v in enumerate(t_k):
            out[i] += c * v
        if k >= 1:  # T_{k+1} = 2 s T_k - T_{k-1}
            nxt = [mp.mpf(0)] + [2 * v for v in cur]
            for i, v in enumerate(prev):
                nxt[i] -= v
            prev, cur = cur, nxt
    return out


def fit_double(piece: DoublePiece) -> tuple[list[float], float, float, float]:
    """(monomial coefficients in s, s^0 first; mid; half; max relative error of the double
    Horner evaluation on 4,001 points)."""
    mid, half = (piece.hi + piece.lo) / 2, (piece.hi - piece.lo) / 2
    n = piece.degree + 1
    nodes = [mp.cos(mp.pi * (j + mp.mpf(0.5)) / n) for j in range(n)]
    values = [piece.target(mid + half * u) for u in nodes]
    chebyshev = []
    for k in range(n):
        c = 2 * mp.fsum(v * mp.cos(k * mp.pi * (j + mp.mpf(0.5)) / n)
                        for j, v in enumerate(values)) / n
        chebyshev.append(c / 2 if k == 0 else c)
    monomial = _chebyshev_to_monomial(chebyshev)
    if piece.in_t:  # sum m_k (t / half)^k = sum (m_k / half^k) t^k
        assert mid == 0
        monomial = [m / mp.mpf(half) ** k for k, m in enumerate(monomial)]
        mid, half = 0.0, 1.0
    coeffs = [float(c) for c in monomial]
    tc = np.linspace(piece.lo, piece.hi, 4001)
    s = (tc - mid) * (1 / half)
    got = np.full_like(s, coeffs[-1])
    for c in coeffs[-2::-1]:
        got = got * s + c
    exact = np.array([float(piece.target(mp.mpf(float(t)))) for t in tc])
    return coeffs, mid, half, float(np.max(np.abs(got - exact) / np.abs(exact)))


def _limit(f: Callable[[mp.mpf], mp.mpf], t: float, lo: float, hi: float) -> mp.mpf:
    """f(t), or its limit where f is 0/0 (erfinv at w = 0, the zeros of lgamma, 1 / x = 0)."""
    try:
        v = f(mp.mpf(t))
        if mp.isfinite(v):
            return v
    except ZeroDivisionError:
        pass
    eps = mp.mpf(10) ** -25 * (hi - lo)
    side = eps if t < hi else -eps
    return f(mp.mpf(t) + side)


def fit(piece: Piece) -> tuple[np.ndarray, float, float, float]:
    """(Chebyshev coefficients in s, T_0 first; mid; half; max relative error in float32)."""
    mid, half = (piece.hi + piece.lo) / 2, (piece.hi - piece.lo) / 2
    n = 8 * (piece.degree + 1)
    s = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    t = mid + half * s
    g = np.array([float(_limit(piece.target, ti, piece.lo, piece.hi)) for ti in t])
    scale = np.abs(g) if piece.relative else np.full_like(g, np.max(np.abs(g)))
    basis = np.polynomial.chebyshev.chebvander(s, piece.degree) / scale[:, None]
    cheb, *_ = np.linalg.lstsq(basis, g / scale, rcond=None)
    if piece.horner:  # monomials in t itself (s = t: one operation less per evaluation)
        in_s = np.polynomial.Polynomial(np.polynomial.chebyshev.cheb2poly(cheb))
        cheb = in_s(np.polynomial.Polynomial([-mid / half, 1 / half])).coef
        mid, half = 0.0, 1.0
    coeffs = cheb.astype(np.float32)
    # the series as the kernel computes it: float32 s, float32 Clenshaw recurrence
    tc = np.linspace(piece.lo, piece.hi, 4001)
    sc = ((tc.astype(np.float32) - np.float32(mid)) * np.float32(1 / half)).astype(np.float32)
    if piece.wide:
        p = np.polynomial.chebyshev.chebval((tc - mid) / half, coeffs.astype(np.float64))
    elif piece.horner:
        p = horner(coeffs, sc)
    else:
        p = clenshaw(coeffs, sc)
    exact = np.array([float(_limit(piece.target, float(ti), piece.lo, piece.hi)) for ti in tc])
    scale = np.abs(exact) if piece.relative else np.max(np.abs(exact))
    err = float(np.max(np.abs(p.astype(np.float64) - exact) / scale))
    return coeffs, mid, half, err


def clenshaw(coeffs: np.ndarray, s: np.ndarray) -> np.ndarray:
    """sum_k coeffs[k] T_k(s) in float32, as special_float.h's chebyshev() computes it."""
    f32 = np.float32
    two_s = (s * f32(2)).astype(f32)
    b1 = np.zeros_like(s)
    b2 = np.zeros_like(s)
    for c in coeffs[:0:-1]:
        b1, b2 = (two_s * b1 + (c - b2)).astype(f32), b1
    return (s * b1 + (coeffs[0] - b2)).astype(f32)


def horner(coeffs: np.ndarray, s: np.ndarray) -> np.ndarray:
    """sum_k coeffs[k] s^k in float32, as special_float.h's horner() computes it."""
    p = np.full_like(s, coeffs[-1])
    for c in coeffs[-2::-1]:
        p = (p * s + c).astype(np.float32)
    return p


def _literal(v: float) -> str:
    """A C++ float literal of v (9 significant digits round-trip a float)."""
    text = f"{v:.9g}"
    return (text if "." in text or "e" in text else text + ".0") + "f"


def two_over_pi_chunks(count: int = 8, bits: int = 24) -> list[float]:
    """2 / pi as a sum of `count` doubles of `bits` bits each, chunk i holding the bits
    [bits i, bits (i + 1)) after the binary point: a float (24 bits) times a chunk is exact
    in double, which the argument reduction of the Bessel kernels needs."""
    with mp.workdps(120):
        scaled = mp.floor(2 / mp.pi * mp.mpf(2) ** (bits * count))
    value = int(scaled)
    chunks = []
    for i in range(count):
        shift = bits * (count - 1 - i)
        piece = (value >> shift) & ((1 << bits) - 1)
        chunks.append(float(mp.ldexp(piece, -bits * (i + 1))))
    return chunks


def fit_table(piece: TablePiece) -> tuple[np.ndarray, float]:
    """(coefficients [degree + 1][intervals], h^0 first; max relative error in float32)."""
    width = piece.end / piece.intervals
    n = 4 * (piece.degree + 1)
    nodes = (np.cos(np.pi * (np.arange(n) + 0.5) / n) + 1) * width / 2
    table = np.zeros((piece.degree + 1, piece.intervals), dtype=np.float32)
    worst = 0.0
    for j in range(piece.intervals):
        a0 = j * width
        g = np.array([float(piece.target(mp.mpf(a0) + mp.mpf(h))) for h in nodes])
        basis = np.vander(nodes, piece.degree + 1, increasing=True) / g[:, None]
        weights = np.ones(n)
        for _ in range(30):  # Lawson's reweighting: least squares towards the minimax fit
            root = np.sqrt(weights)
            coeffs, *_ = np.linalg.lstsq(basis * root[:, None], root, rcond=None)
            err = np.abs(basis @ coeffs - 1)
            weights = weights * err / err.sum() + 1e-300
            weights /= weights.sum()
        table[:, j] = coeffs.astype(np.float32)
        # as the kernel computes it: float32 a, h = a - j / steps exactly, Horner in float32
        a = (a0 + np.linspace(0, width, 201)[:-1]).astype(np.float32)
        h = (a - np.float32(a0)).astype(np.float32)
        got = horner(table[:, j], h).astype(np.float64)
        exact = np.array([float(piece.target(mp.mpf(float(v)))) for v in a])
        worst = max(worst, float(np.max(np.abs(got - exact) / exact)))
    return table, worst


def exp2_sixteenths() -> tuple[list[float], list[float]]:
    """2^(j / 16), j = 0 .. 15, as the nearest doubles and their remainders."""
    with mp.workdps(60):
        exact = [mp.mpf(2) ** (mp.mpf(j) / 16) for j in range(16)]
        hi = [float(v) for v in exact]
        return hi, [float(v - mp.mpf(h)) for v, h in zip(exact, hi)]


def render(results: list[tuple[Piece, np.ndarray, float, float, float]],
           double_results: list[tuple[DoublePiece, list[float], float, float, float]],
           table_results: list[tuple[TablePiece, np.ndarray, float]]) -> str:
    lines = [
        "// Generated by tools/fit_special_float.py: do not edit, change the script and run it.",
        "// The polynomials of the float32 special-function kernels (special_float.h): piece P is",
        "// kP[] (Chebyshev coefficients in s, T_0 first; monomial ones, s^0 first, for the",
        "// pieces marked Horner, whose s is t) with s = (t - kPMid) * kPScale,",
        "// |s| <= 1 on the piece; the comment gives the largest relative error of the float32",
        "// evaluation that the script measured (in double for the pieces marked wide). The",
        "// pieces marked double are float64 kernels' (monomial double coefficients, Horner's",
        "// rule).",
        "#pragma once",
        "",
        "namespace ember::special_float {",
        "",
    ]
    for piece, coeffs_, mid, half, err in results:
        coeffs = ", ".join(_literal(float(c)) for c in coeffs_)
        lines += [
            f"// {piece.doc}; degree {piece.degree}, error {err:.2g}"
            + (" (wide)" if piece.wide else "") + (" (Horner)" if piece.horner else ""),
            f"constexpr float k{piece.name}Mid = {_literal(mid)};",
            f"constexpr float k{piece.name}Scale = {_literal(1 / half)};",
            f"constexpr float k{piece.name}[] = {{{coeffs}}};",
            "",
        ]
    for piece, coeffs_, mid, half, err in double_results:
        coeffs = ", ".join(repr(float(c)) for c in coeffs_)
        lines += [
            f"// {piece.doc}; degree {piece.degree}, error {err:.2g} (double)",
            f"constexpr double k{piece.name}Mid = {mid!r};",
            f"constexpr double k{piece.name}Scale = {1 / half!r};",
            f"constexpr double k{piece.name}[] = {{{coeffs}}};",
            "",
        ]
    for piece, table, err in table_results:
        rows = ",\n".join("    {" + ", ".join(_literal(float(c)) for c in row) + "}"
                           for row in table)
        lines += [
            f"// {piece.doc}: on [0, {piece.end:g}] in {piece.intervals} intervals, each a "
            f"polynomial of degree {piece.degree}",
            f"// in h = a - j / k{piece.name}Steps (row k: h^k's coefficients); error {err:.2g}",
            f"constexpr float k{piece.name}End = {_literal(piece.end)};",
            f"constexpr int k{piece.name}Steps = {round(piece.intervals / piece.end)};",
            f"constexpr float k{piece.name}[{piece.degree + 1}][{piece.intervals}] = {{",
            rows,
            "};",
            "",
        ]
    hi, lo = exp2_sixteenths()
    lines += ["// 2^(j / 16) for j = 0 .. 15 as hi + lo, hi the nearest double (table-driven exp)",
              f"constexpr double kExp2Sixteenths[] = {{{', '.join(repr(v) for v in hi)}}};",
              f"constexpr double kExp2SixteenthsLo[] = {{{', '.join(repr(v) for v in lo)}}};",
              ""]
    chunks = ", ".join(f"{c!r}" for c in two_over_pi_chunks())
    lines += ["// 2 / pi in chunks of 24 bits (a float times a chunk is exact in double)",
              f"constexpr double kTwoOverPiChunks[] = {{{chunks}}};", ""]
    lines += [f"constexpr float kErfcxK = {_literal(_K_ERFCX)};",
              f"constexpr float kNormalTailK = {_literal(_T_NDTR)};",
              f"constexpr float kNormalTailMaxA = {_literal(_A_NDTR_MAX)};",
              f"constexpr double kErfcxKD = {_K_ERFCX_D!r};",
              f"constexpr double kErfcxMaxD = {_X_ERFCX_D!r};", "",
              "}  // namespace ember::special_float", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail when the header is out of date")
    args = parser.parse_args()
    results = []
    for piece in PIECES:
        coeffs, mid, half, err = fit(piece)
        print(f"{piece.name:16s} degree {piece.degree:2d}  max error {err:.2e}")
        results.append((piece, coeffs, mid, half, err))
    double_results = []
    for piece in DOUBLE_PIECES:
        coeffs, mid, half, err = fit_double(piece)
        print(f"{piece.name:16s} degree {piece.degree:2d}  max error {err:.2e} (double)")
        double_results.append((piece, coeffs, mid, half, err))
    table_results = []
    for piece in TABLE_PIECES:
        table, err = fit_table(piece)
        print(f"{piece.name:16s} degree {piece.degree:2d}  max error {err:.2e} "
              f"({piece.intervals} intervals)")
        table_results.append((piece, table, err))
    text = render(results, double_results, table_results)
    if args.check:
        current = HEADER.read_text() if HEADER.exists() else ""
        if current != text:
            print(f"{HEADER} is out of date: run tools/fit_special_float.py", file=sys.stderr)
            return 1
        return 0
    HEADER.write_text(text)
    print(f"wrote {HEADER}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
