r"""Unbiased estimators of the empirical entropy and KL divergence of noisy histograms.

A histogram x in Z^n (last axis = bins) is released as y = x + eta with independent
DLap(p) noise on every bin, p = exp(-epsilon / sensitivity), c = p / (1-p)^2. The unique
unbiased (hence minimum-variance) estimate of any f(x) is the operator (2) of
:mod:`ldpgraph.estimators.operator`, a sum over 3^n points with alternating weights. For the
entropy and the KL divergence it collapses to O(n) work plus a handful of one-dimensional
integrals, as follows.

**Reduction to a function of N.** Extend the entropy to Z^n by

.. math::

    H(x) = \sum_i h(x_i, N),\quad N = \sum_j x_j,\qquad
    h(a, N) = [a \ge 1][N \ge 1]\Big(-\frac{a \ln a}{N} + a \frac{\ln N}{N}\Big)
            = -\frac{a}{N}\ln\frac{a}{N}.

Term i depends on x_i and N only. In (2) the noise shift xi_i enters both x_i and N, and the
other m = n-1 coordinates enter only through s = sum_{j != i} xi_j, whose weights are
w_m(s) = [z^s](alpha_0 + alpha_1 (z + 1/z))^m. So with the one-dimensional operator
T phi(N) = phi(N) - c (phi(N+1) - 2 phi(N) + phi(N-1)) acting on functions of N,

.. math::

    \hat H(y) = \sum_{\xi\in\{-1,0,1\}} \alpha_\xi \Big(-S_1(\xi)\, U(Y+\xi) + S_2(\xi)\, V(Y+\xi)\Big),
    \qquad S_1(\xi) = \sum_{i:\,y_i+\xi\ge1} a \ln a,\ S_2(\xi) = \sum_{i:\,y_i+\xi\ge1} a,

with a = y_i + xi, Y = sum_j y_j, U = T^m u, V = T^m v, u(N) = [N>=1]/N and
v(N) = [N>=1] ln N / N. Everything but a few values of T^m is an O(n) sum.

**Evaluating the three-point sum.** The sum over xi is F(0) - c delta^2 F(0) for
F(xi) = -S_1(xi) U(Y+xi) + S_2(xi) V(Y+xi), and c is large when epsilon is small (10^6 at
epsilon = 10^-3): the second difference is therefore never formed from the three values of F
(their rounding errors, about 1e-16 ln Y each, would be multiplied by c). It is expanded by
the product rule delta^2(AB) = A delta^2 B + B delta^2 A + A_+ B_+ + A_- B_- into differences
computed directly: those of a ln a per bin by log1p, those of U and V as T^m applied to the
differences of u and v (T^m commutes with shifts), each in closed form or in the integral
below with the density multiplied by e^{-x} - 1 or 4 sinh^2(x/2).

**Evaluating T^m stably.** Its weights w_m(s) reach (1 + 4c)^m in total (10^15170 for
n = 12,419 at epsilon = 0.5), so no sum over s is usable in floating point. Instead, with
u(N) = int_0^inf e^{-Nx} dx and v(N) = -int_0^inf (ln x + gamma) e^{-Nx} dx, and since
T e^{-Nx} = B(x) e^{-Nx} with B(x) = 1 - 4c sinh^2(x/2),

.. math::

    (T^m r)(K) = \int_0^\infty e^{-Kx} B(x)^m \rho(x)\, dx
    \qquad (r(N) = \int_0^\infty e^{-Nx}\rho(x)\,dx,\ K \ge m + 1),

exact as long as the window K-m..K+m of the finite sum stays in N >= 1. B decreases from 1 and
vanishes at x0 = epsilon/sensitivity; on [0, x0] the integrand has one sign and is computed by
tanh-sinh quadrature (to a few ulps; checked against multiprecision sums). Beyond x0,
|B|^m e^{-Kx} <= exp(psi(x)), psi(x) = -Kx + 2m ln(sinh(x/2)/sinh(x0/2)), a concave bound
whose maximum is -K x0 when m/K <= tanh(x0/2): that part is then provably negligible (it is
bounded rigorously and checked below 1e-20 of the result). Otherwise — the noisy total Y is
small compared with n (for epsilon = 0.5, below about 1.6 n) — the unique unbiased estimate
really is dominated by weights of size up to exp(max psi): it is computed exactly instead, by
the finite sum over s in floating point when that is well conditioned, or in multiprecision
(mpmath) arithmetic with enough bits, and a :class:`HighVarianceWarning` is emitted when the
estimate leaves the plausible range by orders of magnitude. When that exact sum would be too
costly, ValueError is raised rather than returning a wrong number.

**Known total.** If N is public the entropy is a separable sum of
h_N(x_i) = -(x_i/N) ln(x_i/N) [x_i >= 1] and the estimate is sum_i (1) applied to h_N (O(n)),
with second differences evaluated in a cancellation-free form.

**KL divergence.** See :func:`kl_divergence`: the same reduction on both histograms, O(n).

References
----------
Privacy by Postprocessing the Discrete Laplace Mechanism, NeurIPS 2026, arXiv 2605.06502.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    check_epsilon,
    check_integer_reports,
    check_nonnegative_int,
    check_positive_real,
    check_same_shape,
    check_sensitivity,
    dlap_c,
)
from .order_statistics import HIGH_VARIANCE_THRESHOLD, HighVarianceWarning

__all__ = [
    "entropy",
    "entropy_variance_estimate",
    "kl_divergence",
]

_EULER_GAMMA = 0.57721566490153286
_PSI2 = 1.0 - _EULER_GAMMA  # digamma(2)
_TRIGAMMA2 = math.pi**2 / 6.0 - 1.0  # trigamma(2)

# tanh-sinh rule on [0, 1]: x = expit(pi sinh s), s = k h. Step 1/32, |s| <= 4.5: 289 nodes;
# the integrands here (exp(-t) times a smooth bounded factor, log singularity at 0) are
# integrated to ~1e-16 relative already with step 1/16.
_TS_STEP = 1.0 / 32.0


@functools.cache
def _ts_rule() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Nodes and weights of the tanh-sinh rule (built on first use: scipy.special is slow to import)."""
    from scipy.special import expit

    s = np.arange(-4.5, 4.5 + _TS_STEP / 2, _TS_STEP)
    x = expit(np.pi * np.sinh(s))
    return x, _TS_STEP * np.pi * np.cosh(s) * x * expit(-np.pi * np.sinh(s))


# In t = K x the integrand carries exp(-t): beyond t = 60 it is below 1e-26 of the total.
_T_CUT = 60.0
# The part x > x0 is neglected only if rigorously below this fraction of the result.
_NEGLIGIBLE = 1e-20
# Direct float64 sums over the window are accepted when sum |w r| <= this times |sum w r|
# (rounding error <= (2m+1) u sum |w r|).
_DIRECT_MAX_CONDITION = 1e4
# ... and tried first, with a stricter condition, for windows of at most 2 * 64 + 1 points.
_DIRECT_FIRST_MAX_M = 64
_DIRECT_FIRST_CONDITION = 30.0
# Multiprecision fallback: refuse beyond this estimated run time (seconds).
_MP_BUDGET_SECONDS = 30.0

# Functions r(N) of the total ("kinds"), each times [N >= 1]: 'u' 1/N, 'v' ln N/N, 'u2' 1/N^2,
# 'v2' ln N/N^2, 'w2' ln^2 N/N^2, 'ln' ln N, 'ind' 1.


# --------------------------------------------------------------------------------------------
# the functions of N and their Laplace-transform densities
# --------------------------------------------------------------------------------------------


def _r_float(kind: str, N: NDArray[np.float64], logN: NDArray[np.float64]) -> NDArray[np.float64]:
    """r(N) for N >= 1 (no indicator)."""
    if kind == "u":
        return 1.0 / N
    if kind == "v":
        return logN / N
    if kind == "u2":
        return 1.0 / (N * N)
    if kind == "v2":
        return logN / (N * N)
    if kind == "w2":
        return logN * logN / (N * N)
    if kind == "ln":
        return logN
    return np.ones_like(N)


# Derived kinds: differences along N of a base kind r0 = [N >= 1] r, "d" + kind the forward
# difference r0(N+1) - r0(N) and "dd" + kind the second difference r0(N+1) - 2 r0(N) + r0(N-1).
# T^m commutes with shifts, so T^m of a difference is the difference of T^m r0; computing it
# directly avoids differencing nearly equal values (the operator (1) multiplies them by c).
_DIFF = {
    "du": ("u", 1), "dv": ("v", 1), "dind": ("ind", 1),
    "ddu": ("u", 2), "ddv": ("v", 2), "ddind": ("ind", 2),
}  # fmt: skip


def _r0_float(kind: str, N: NDArray[np.int64]) -> NDArray[np.float64]:
    """r0(N) = [N >= 1] r(N) for integer N of any sign, or a derived kind, without cancellation.

    Forward differences for N >= 1: u: -1/(N(N+1)); v: (N log1p(1/N) - ln N)/(N(N+1)).
    Second differences for N >= 2: u: 2/(N(N^2-1)); v: ln N * 2/(N(N^2-1))
    + (N log1p(-1/N^2) - log1p(2/(N-1)))/(N^2-1) (from ln(N+-1) = ln N + log1p(+-1/N)).
    Small N from the definition.
    """
    N = np.asarray(N, dtype=np.int64)
    if kind not in _DIFF:
        pos = N >= 1
        Nf = np.where(pos, N, 1).astype(np.float64)
        return np.where(pos, _r_float(kind, Nf, np.log(Nf)), 0.0)
    base, order = _DIFF[kind]
    if base == "ind":  # [N+1 >= 1] - [N >= 1] = [N = 0]; second difference [N = 0] - [N = 1]
        return (N == 0).astype(np.float64) - ((N == 1) if order == 2 else 0.0)
    if order == 1:
        pos = N >= 1
        Nf = np.where(pos, N, 1).astype(np.float64)
        inner = -1.0 if base == "u" else Nf * np.log1p(1.0 / Nf) - np.log(Nf)
        at0 = 1.0 if base == "u" else 0.0  # r(1) - r0(0)
        return np.where(pos, inner / (Nf * (Nf + 1.0)), np.where(N == 0, at0, 0.0))
    big = N >= 2
    Nb = np.where(big, N, 2).astype(np.float64)
    q = Nb * Nb - 1.0
    d2u = 2.0 / (Nb * q)
    if base == "u":
        val, at1, at0 = d2u, -1.5, 1.0  # N = 1: 1/2 - 2; N = 0: u(1)
    else:
        val = np.log(Nb) * d2u + (Nb * np.log1p(-1.0 / (Nb * Nb)) - np.log1p(2.0 / (Nb - 1.0))) / q
        at1, at0 = 0.5 * math.log(2.0), 0.0  # N = 1: v(2) - 2 v(1); N = 0: v(1)
    return np.where(big, val, np.where(N == 1, at1, np.where(N == 0, at0, 0.0)))


def _rho(kind: str, x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Density rho with r(N) = int_0^inf exp(-N x) rho(x) dx."""
    if kind == "u":
        return np.ones_like(x)
    lx = np.log(x)
    if kind == "v":
        return -(lx + _EULER_GAMMA)
    if kind == "u2":
        return x
    if kind == "v2":
        return x * (_PSI2 - lx)
    if kind == "w2":
        d = lx - _PSI2
        return x * (d * d - _TRIGAMMA2)
    raise AssertionError(kind)  # pragma: no cover


# --------------------------------------------------------------------------------------------
# T^m along N: quadrature (K >= m+1, boundary negligible), direct sums, multiprecision sums
# --------------------------------------------------------------------------------------------


def _log_boundary_bound(m: int, K: NDArray[np.float64], x0: float) -> NDArray[np.float64]:
    """log of a rigorous bound on int_{x0}^inf e^{-Kx} |B(x)|^m rho_bar(x) dx (K >= m+1 >= 2).

    rho_bar(x) = (1 + x)(2 + |ln x|)^2 + 1/x0 dominates |rho| of every kind on [x0, inf)
    (and the 1/x of the 'ln' kind). |B| <= exp(psi - (-Kx)), psi concave with psi(x0) = -K x0.
    """
    sh0 = math.log(math.sinh(x0 / 2.0))

    def psi(x):
        return -K * x + 2.0 * m * (np.log(np.sinh(x / 2.0)) - sh0)

    def rbar(x):
        return (1.0 + x) * (2.0 + np.abs(np.log(x))) ** 2 + 1.0 / x0

    xstar = 2.0 * np.arctanh(m / K)
    xm = np.maximum(x0, xstar)
    xt = 2.0 * np.arctanh(2.0 * m / (K + m))  # psi'(xt) = -(K - m)/2
    a = (K - m) / 2.0
    xs = np.maximum(x0, xt)
    span = np.maximum(xt - x0, 0.0)
    with np.errstate(divide="ignore"):
        head = psi(xm) + np.log(span) + np.log(np.maximum(rbar(np.full_like(K, x0)), rbar(xs)))
    tail = psi(xs) + np.log(rbar(xs)) + np.log(1 / a + 3 / a**2 + 6 / a**3 + 6 / a**4)
    return np.logaddexp(head, tail)


def _boundary_integrals(
    m: int, K: NDArray[np.float64], x0: float, kinds: Sequence[str]
) -> tuple[NDArray[np.float64], dict[str, NDArray[np.float64]], dict[str, NDArray[np.float64]]]:
    """int_{x0}^inf e^{-Kx} |B(x)|^m rho(x) dx (rho = 1/x for 'ln') as exp(L) * I, and the same
    with |rho|: returns (L, {kind: I}, {kind: I_abs}). K > m >= 1.

    phi(x) = -K x + m ln|B(x)|, |B| = sinh((x-x0)/2) sinh((x+x0)/2) / sinh^2(x0/2), is concave
    on (x0, inf), -> -inf at x0 and slope -> -(K-m) < 0: its maximum x_p is found by bisection on
    phi' (bracketed in closed form), the interval where phi > phi(x_p) - 90 by bisection, and the
    integral of exp(phi - phi(x_p)) rho over it by the tanh-sinh rule, whose nodes cluster at the
    ends: the integrand varies on the scale x0 next to x0, which 192-point Gauss-Legendre over
    the whole level set did not resolve (3e-7 relative error at m = 1, K = 10, epsilon = 1e-3).
    """
    lsh0 = 2.0 * math.log(math.sinh(x0 / 2.0))

    def phi(x, KK=K):
        return -KK * x + m * (np.log(np.sinh((x - x0) / 2.0)) + np.log(np.sinh((x + x0) / 2.0)) - lsh0)

    def dphi(x):
        return -K + 0.5 * m * (1.0 / np.tanh((x - x0) / 2.0) + 1.0 / np.tanh((x + x0) / 2.0))

    # Only the level set {phi > max - 90} is needed, and only roughly: 50 bisection steps.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        # phi'(x0 + u) > 0 for u < 2 atanh(m / 2K), < 0 for u > 2 atanh(m / K)
        lo = 2.0 * np.arctanh(m / (2.0 * K))
        hi = 2.0 * np.arctanh(m / K)
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            pos = dphi(x0 + mid) > 0
            lo, hi = np.where(pos, mid, lo), np.where(pos, hi, mid)
        xp = x0 + 0.5 * (lo + hi)
        top = phi(xp)
        level = top - 90.0
        # left end: log(x - x0) in [log(u_p) - 250, log(u_p)]
        llo = np.log(xp - x0) - 250.0
        lhi = np.log(xp - x0)
        for _ in range(50):
            mid = 0.5 * (llo + lhi)
            below = phi(x0 + np.exp(mid)) < level
            llo, lhi = np.where(below, mid, llo), np.where(below, lhi, mid)
        xl = x0 + np.exp(llo)
        # right end: doubling, then bisection
        step = np.maximum(xp - x0, 1.0 / K)
        for _ in range(200):
            more = phi(xp + step) >= level
            if not more.any():
                break
            step = np.where(more, 2.0 * step, step)
        rlo, rhi = xp, xp + step
        for _ in range(50):
            mid = 0.5 * (rlo + rhi)
            below = phi(mid) < level
            rlo, rhi = np.where(below, rlo, mid), np.where(below, mid, rhi)
        xr = rhi
        half = 0.5 * (xr - xl)
        ts_x, ts_w = _ts_rule()
        xs = xl[:, None] + (2.0 * half)[:, None] * ts_x[None, :]
        w = (2.0 * half)[:, None] * ts_w[None, :] * np.exp(phi(xs, K[:, None]) - top[:, None])
    signed, absolute = {}, {}
    for kind in kinds:
        rho = 1.0 / xs if kind == "ln" else _rho(kind, xs)
        signed[kind] = (w * rho).sum(axis=1)
        absolute[kind] = (w * np.abs(rho)).sum(axis=1)
    return top, signed, absolute


def _power_quadrature(
    m: int, K: NDArray[np.int64], c: float, kinds: Sequence[str], context: str
) -> tuple[dict[str, NDArray[np.float64]], NDArray[np.bool_]]:
    """T^m r at K >= m+1 (m >= 1) from the integral representation; also the validity mask.

    The part on [0, x0] by tanh-sinh; the part on (x0, inf) is skipped where its rigorous bound
    is below 1e-20 of the result, else computed by :func:`_boundary_integrals`. Invalid (left to
    the exact sums) where the two parts cancel by more than a factor 1e4.
    """
    Kf = K.astype(np.float64)
    x0 = 2.0 * math.asinh(1.0 / (2.0 * math.sqrt(c)))
    T = np.minimum(Kf * x0, _T_CUT)
    ts_x, ts_w = _ts_rule()
    t = T[:, None] * ts_x[None, :]
    wq = T[:, None] * ts_w[None, :]
    x = t / Kf[:, None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        logB = np.log1p(np.maximum(-4.0 * c * np.sinh(x / 2.0) ** 2, -1.0))
        mlogB = m * logB
        weight = wq * np.exp(-t)
        Bm = np.exp(mlogB)
    out: dict[str, NDArray[np.float64]] = {}
    log_bound = _log_boundary_bound(m, Kf, x0)
    need = np.zeros(K.shape, dtype=bool)
    ok = np.ones(K.shape, dtype=bool)
    derived = [kind for kind in kinds if kind in _DIFF]
    if derived:
        # differences multiply rho by g(x) = e^-x - 1 or 4 sinh^2(x/2), |g(x)| e^{-Kx} <= e^{-(K-1)x}:
        # the part beyond x0 is bounded as for K - 1 (the caller ensures K - 1 >= m + 1); where it is
        # not negligible these K are left to the exact sums
        log_bound_d = _log_boundary_bound(m, Kf - 1.0, x0)
        with np.errstate(over="ignore"):
            gfac = {1: np.expm1(-x), 2: 4.0 * np.sinh(x / 2.0) ** 2}
    for kind in derived:
        base, order = _DIFF[kind]
        if base == "ind":
            val = np.zeros_like(Kf)  # the window K-m-1..K+m+1 lies in N >= 1, where [N >= 1] is flat
        else:
            with np.errstate(invalid="ignore"):
                val = (weight * Bm * _rho(base, x) * gfac[order]).sum(axis=1) / Kf
            with np.errstate(divide="ignore"):
                ok &= log_bound_d < np.log(np.abs(val)) + math.log(_NEGLIGIBLE)
        out[kind] = val
    for kind in kinds:
        if kind in _DIFF:
            continue
        if kind == "ind":
            val = np.ones_like(Kf)
        elif kind == "ln":
            with np.errstate(invalid="ignore"):
                one_minus = -np.expm1(mlogB)
            one_minus = np.where(np.isfinite(mlogB), one_minus, 1.0)
            from scipy.special import exp1

            val = np.log(Kf) + (weight * one_minus / t).sum(axis=1) + exp1(Kf * x0)
        else:
            val = (weight * Bm * _rho(kind, x)).sum(axis=1) / Kf
        if kind != "ind":
            with np.errstate(divide="ignore"):
                need |= ~(log_bound < np.log(np.abs(val)) + math.log(_NEGLIGIBLE))
        out[kind] = val
    if need.any():
        idx = np.flatnonzero(need)
        bkinds = [k for k in kinds if k != "ind" and k not in _DIFF]
        top, signed, absolute = _boundary_integrals(m, Kf[idx], x0, bkinds)
        sign = -1.0 if m % 2 else 1.0
        for kind in bkinds:
            with np.errstate(divide="ignore"):
                lmag = top + np.log(np.abs(signed[kind]))
            if np.any(lmag > 700.0):
                raise ValueError(
                    f"{context}: the unbiased estimate is astronomically large, of order "
                    f"10^{float(np.max(lmag)) / math.log(10):.0f}, beyond float64: the noisy total "
                    f"({int(K[idx][np.argmax(lmag)])}) is small compared with the {m + 1} coordinates "
                    "that shift it, for this epsilon. Its variance is as large (DESIGN §4): merge sparse "
                    "bins, use a larger epsilon, or pass `total` when N is public."
                )
            with np.errstate(under="ignore"):
                p2 = np.exp(top) * signed[kind]
                p2abs = np.exp(top) * absolute[kind]
            p1 = out[kind][idx]
            total = p1 + (-sign if kind == "ln" else sign) * p2
            with np.errstate(divide="ignore", invalid="ignore"):
                scale = (np.abs(p1 - np.log(Kf[idx])) if kind == "ln" else np.abs(p1)) + p2abs
                ok[idx] &= np.isfinite(total) & (scale <= _DIRECT_MAX_CONDITION * np.abs(total))
            out[kind][idx] = total
    for kind in kinds:
        ok &= np.isfinite(out[kind])
    return out, ok


@functools.lru_cache(maxsize=32)
def _weights_float(m: int, c: float) -> tuple[NDArray[np.float64], float]:
    """|w_m(s)| for s = 0..m as (scaled array, log scale): |w_m(s)| = arr[s] * exp(log_scale).

    Positive trinomial coefficients of (a + b z + b/z)^m, a = 1 + 2c, b = c, by the recurrence
    b (m+1-s) T_{s-1} = a s T_s + b (s+1+m) T_{s+1} from T_m = b^m (all terms positive);
    w_m(s) = (-1)^s T_|s|.
    """
    a, b = 1.0 + 2.0 * c, c
    T = np.zeros(m + 2)
    T[m] = 1.0
    log_scale = m * math.log(b)
    for s in range(m, 0, -1):
        T[s - 1] = (a * s * T[s] + b * (s + 1 + m) * T[s + 1]) / (b * (m + 1 - s))
        if T[s - 1] > 1e250:
            T[s - 1 :] *= 1e-250
            log_scale += 250.0 * math.log(10.0)
    T = T[: m + 1]
    T.setflags(write=False)
    return T, log_scale


def _power_direct(
    m: int, K: NDArray[np.int64], c: float, kinds: Sequence[str], max_condition: float
) -> tuple[dict[str, NDArray[np.float64]], NDArray[np.bool_]]:
    """T^m r_0(K) = sum_s w_m(s) r_0(K+s) in float64, with a conditioning check."""
    out = {kind: np.zeros(K.shape) for kind in kinds}
    ok = np.zeros(K.shape, dtype=bool)
    if m * math.log(1.0 + 4.0 * c) > 690.0:
        return out, ok
    T, log_scale = _weights_float(m, c)
    scale = math.exp(log_scale)
    s = np.arange(-m, m + 1)
    w = (T[np.abs(s)] * scale) * np.where(s % 2 == 0, 1.0, -1.0)
    ok[:] = True
    chunk = max(1, 2_000_000 // (2 * m + 1))
    for start in range(0, K.size, chunk):
        Kc = K[start : start + chunk]
        N = Kc[:, None] + s[None, :]
        for kind in kinds:
            terms = _r0_float(kind, N) * w[None, :]
            val = terms.sum(axis=1)
            absum = np.abs(terms).sum(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                good = (absum == 0) | (absum <= max_condition * np.abs(val))
            ok[start : start + chunk] &= good & np.isfinite(val)
            out[kind][start : start + chunk] = val
    return out, ok


def _mp_seconds(bits: int, n_logs: int, n_mults: int) -> float:
    """Rough run time of the multiprecision sum (pure-Python mpmath)."""
    q = max(bits, 1000) / 5000.0
    return n_logs * 2e-3 * q**2.2 + n_mults * 2e-5 * q**1.6


def _power_mp(m: int, K: NDArray[np.int64], c: float, kinds: Sequence[str], context: str) -> dict:
    """T^m r_0(K) exactly (to double precision) in multiprecision arithmetic."""
    Ks = [int(k) for k in K]
    derived = any(kind in _DIFF for kind in kinds)
    # base values r0(N) are needed on N >= 1 within the window, one point wider for differences
    lo, hi = max(1, min(Ks) - m - derived), max(Ks) + m + derived
    need_log = any(_DIFF.get(k, (k,))[0] not in ("u", "u2", "ind") for k in kinds)
    bits = int(math.ceil(m * math.log2(1.0 + 4.0 * c))) + 3 * max(1, hi).bit_length() + 96
    n_logs = (hi - lo + 1) if (need_log and hi >= lo) else 0
    est = _mp_seconds(bits, n_logs, len(Ks) * (2 * m + 1) * len(kinds) + 3 * m)
    if est > _MP_BUDGET_SECONDS:
        raise ValueError(
            f"{context}: the unbiased estimate is dominated by weights of magnitude up to about "
            f"10^{m * math.log10(1.0 + 4.0 * c):.0f} (the noisy total, {min(Ks)}..{max(Ks)}, is small "
            f"compared with the {m + 1} coordinates that shift it); evaluating it exactly would take "
            f"{bits}-bit arithmetic for about {est:.0f} s, more than the {_MP_BUDGET_SECONDS:.0f} s allowed. "
            "Such an estimate has an astronomically large variance (DESIGN §4). Merge sparse bins, "
            "use a larger epsilon, or pass `total` when N is public."
        )
    try:
        import mpmath
    except ImportError as exc:  # pragma: no cover - mpmath ships with the test extras
        raise ImportError(f"{context}: this input needs multiprecision evaluation; install mpmath") from exc
    out = {kind: np.zeros(len(Ks)) for kind in kinds}
    if hi < lo:
        return out
    window = range(min(Ks) - m, max(Ks) + m + 1)
    for _attempt in range(4):
        with mpmath.workprec(bits):
            mc = mpmath.mpf(c)
            a, b = 1 + 2 * mc, mc
            T = [mpmath.mpf(0)] * (m + 2)
            T[m] = b**m
            for s in range(m, 0, -1):
                T[s - 1] = (a * s * T[s] + b * (s + 1 + m) * T[s + 1]) / (b * (m + 1 - s))
            w = {s: (T[abs(s)] if s % 2 == 0 else -T[abs(s)]) for s in range(-m, m + 1)}
            Ns = range(lo, hi + 1)
            logs = {N: mpmath.log(N) for N in Ns} if need_log else {}
            base_values: dict[str, dict[int, Any]] = {}
            for base in {_DIFF.get(kind, (kind,))[0] for kind in kinds}:
                r0 = {}
                for N in Ns:
                    if base == "u":
                        r0[N] = mpmath.mpf(1) / N
                    elif base == "v":
                        r0[N] = logs[N] / N
                    elif base == "u2":
                        r0[N] = mpmath.mpf(1) / (N * N)
                    elif base == "v2":
                        r0[N] = logs[N] / (N * N)
                    elif base == "w2":
                        r0[N] = logs[N] ** 2 / (N * N)
                    elif base == "ln":
                        r0[N] = logs[N]
                    else:
                        r0[N] = mpmath.mpf(1)
                base_values[base] = r0
            ok = True
            for kind in kinds:
                if kind in _DIFF:
                    base, order = _DIFF[kind]
                    r0 = base_values[base]
                    zero = mpmath.mpf(0)
                    r = {}
                    for N in window:
                        fwd = r0.get(N + 1, zero) - r0.get(N, zero)
                        r[N] = fwd if order == 1 else fwd - (r0.get(N, zero) - r0.get(N - 1, zero))
                else:
                    r = base_values[kind]
                for j, Kj in enumerate(Ks):
                    acc = mpmath.mpf(0)
                    big = mpmath.mpf(0)
                    for s in range(-m, m + 1):
                        if Kj + s not in r:  # r0 = 0 for N <= 0
                            continue
                        term = w[s] * r[Kj + s]
                        acc += term
                        big += abs(term)
                    # rounding error <= (2m+2) 2^-bits sum|terms|; want < 2^-70 |acc|
                    slack = bits - 70 - math.log2(2 * m + 2)
                    if big != 0 and (acc == 0 or mpmath.log(big / abs(acc), 2) > slack):
                        ok = False
                    out[kind][j] = float(acc)
        if ok:
            break
        bits *= 2
    return out


def _power(
    m: int, K: ArrayLike, c: float, kinds: Sequence[str], context: str
) -> dict[str, NDArray[np.float64]]:
    """(T^m r_0)(K) for every kind, r_0 = [N >= 1] r(N), elementwise over integer array K."""
    K = np.asarray(K, dtype=np.int64)
    flat = K.ravel()
    uniq, inverse = np.unique(flat, return_inverse=True)
    res = {kind: np.full(uniq.shape, np.nan) for kind in kinds}
    todo = np.ones(uniq.shape, dtype=bool)
    # T^m is the identity for m = 0; for m c < 1e-20 it moves r by at most ~4 m c max|r| on the
    # window (|T^m - I| <= (1 + 4c)^m - 1 in the sup norm), below 1e-19 max|r|.
    # derived kinds (differences) reach one point further on each side of the window
    reach = m + (1 if any(kind in _DIFF for kind in kinds) else 0)
    if m == 0 or m * c < 1e-20:
        for kind in kinds:
            res[kind] = _r0_float(kind, uniq)
        todo[:] = False
    else:
        empty = uniq + reach < 1  # whole window in N <= 0
        for kind in kinds:
            res[kind][empty] = 0.0
        todo &= ~empty
        if m <= _DIRECT_FIRST_MAX_M and todo.any():  # short windows: the finite sum, if well conditioned
            vals, ok = _power_direct(m, uniq[todo], c, kinds, max_condition=_DIRECT_FIRST_CONDITION)
            idx = np.flatnonzero(todo)[ok]
            for kind in kinds:
                res[kind][idx] = vals[kind][ok]
            todo[idx] = False
        sel = todo & (uniq >= reach + 1)
        if sel.any():
            vals, ok = _power_quadrature(m, uniq[sel], c, kinds, context)
            idx = np.flatnonzero(sel)[ok]
            for kind in kinds:
                res[kind][idx] = vals[kind][ok]
            todo[idx] = False
        if todo.any():
            vals, ok = _power_direct(m, uniq[todo], c, kinds, max_condition=_DIRECT_MAX_CONDITION)
            idx = np.flatnonzero(todo)[ok]
            for kind in kinds:
                res[kind][idx] = vals[kind][ok]
            todo[idx] = False
        if todo.any():
            idx = np.flatnonzero(todo)
            vals = _power_mp(m, uniq[idx], c, kinds, context)
            for kind in kinds:
                res[kind][idx] = vals[kind]
    return {kind: res[kind][inverse].reshape(K.shape) for kind in kinds}


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _histogram(y: ArrayLike, name: str) -> NDArray[np.int64]:
    yy = check_integer_reports(y, name, min_ndim=1)
    check_nonnegative_int(yy.shape[-1], f"{name}.shape[-1] (number of bins)", minimum=1)
    return yy


def _alphas(c: float) -> tuple[float, float, float]:
    """alpha_{-1}, alpha_0, alpha_{+1}."""
    return -c, 1.0 + 2.0 * c, -c


def _xlogx(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """a ln a for a >= 1, 0 otherwise."""
    pos = a >= 1
    return np.where(pos, np.where(pos, a, 1.0) * np.log(np.where(pos, a, 1.0)), 0.0)


def _bin_differences(yy: NDArray[np.int64]) -> dict[str, NDArray[np.float64]]:
    r"""Per-bin values and differences along y of phi_1(a) = [a >= 1] a ln a and phi_2(a) = [a >= 1] a.

    Keys "1", "1+", "1-", "1d2" (value, forward, backward and second difference of phi_1 at y)
    and the same for phi_2, each of shape yy.shape. Without cancellation: for y >= 1
    phi_1(y+1) - phi_1(y) = ln(y+1) + y log1p(1/y) and, for y >= 2,
    phi_1(y-1) - phi_1(y) = -(ln y + (y-1) log1p(1/(y-1))),
    phi_1(y+1) - 2 phi_1(y) + phi_1(y-1) = y log1p(-1/y^2) + log1p(2/(y-1)); small y from the
    definition (phi_1(1) = 0). phi_2 is piecewise linear: its differences are 0 or +-1.
    """
    y = yy.astype(np.float64)
    ge1, ge2 = yy >= 1, yy >= 2
    a1 = np.where(ge1, y, 1.0)
    a2 = np.where(ge2, y, 2.0)
    return {
        "1": np.where(ge1, a1 * np.log(a1), 0.0),
        "1+": np.where(ge1, np.log1p(a1) + a1 * np.log1p(1.0 / a1), 0.0),
        "1-": np.where(ge2, -(np.log(a2) + (a2 - 1.0) * np.log1p(1.0 / (a2 - 1.0))), 0.0),
        "1d2": np.where(ge2, a2 * np.log1p(-1.0 / (a2 * a2)) + np.log1p(2.0 / (a2 - 1.0)),
                        np.where(yy == 1, 2.0 * math.log(2.0), 0.0)),
        "2": np.where(ge1, y, 0.0),
        "2+": (yy >= 0).astype(np.float64),
        "2-": -ge1.astype(np.float64),
        "2d2": (yy == 0).astype(np.float64),
    }  # fmt: skip


def _debiased_product(a0: Any, ap: Any, am: Any, a2: Any, b0: Any, bp: Any, b2: Any, c: float) -> Any:
    r"""sum_xi alpha_xi A(xi) B(xi) = A_0 B_0 - c delta^2(AB), from values and differences.

    A_0, A_+ = A(1) - A(0), A_- = A(-1) - A(0), delta^2 A; B_0, B_+, delta^2 B (B_- = delta^2 B - B_+).
    The product rule delta^2(AB) = A_0 delta^2 B + B_0 delta^2 A + A_+ B_+ + A_- B_- never forms
    the differences of nearly equal values that the weights alpha = (-c, 1 + 2c, -c) multiply.
    """
    bm = b2 - bp
    return a0 * b0 - c * (a0 * b2 + b0 * a2 + ap * bp + am * bm)


def _entropy_parts(
    yy: NDArray[np.int64], c: float, context: str
) -> tuple[NDArray[np.float64], dict[str, NDArray[np.float64]], dict[str, NDArray[np.float64]]]:
    """(Ĥ, per-bin differences, T^{n-1} of u, v and their differences at the noisy total Y)."""
    n = yy.shape[-1]
    Y = yy.sum(axis=-1)
    P = _power(n - 1, Y, c, ("u", "v", "du", "dv", "ddu", "ddv"), context)
    d = _bin_differences(yy)
    S = {key: val.sum(axis=-1) for key, val in d.items()}
    with np.errstate(over="ignore", invalid="ignore"):
        H = -_debiased_product(S["1"], S["1+"], S["1-"], S["1d2"], P["u"], P["du"], P["ddu"], c)
        H = H + _debiased_product(S["2"], S["2+"], S["2-"], S["2d2"], P["v"], P["dv"], P["ddv"], c)
    return H, d, P


def _warn_if_wild(est: NDArray[np.float64], scale: NDArray[np.float64] | float, what: str) -> None:
    bad = np.abs(est) > HIGH_VARIANCE_THRESHOLD * scale
    if np.any(bad):
        worst = float(np.max(np.abs(est)[bad]))
        warnings.warn(
            f"{what}: the unbiased estimate ({worst:.3g}) is more than {HIGH_VARIANCE_THRESHOLD:g} times "
            "the range of the statistic: the noisy total is small compared with the number of bins, "
            "and the estimate is dominated by astronomically large weights (huge variance).",
            HighVarianceWarning,
            stacklevel=3,
        )


def _out(a: NDArray[np.float64], context: str) -> Any:
    """Return a 0-d result as a numpy scalar; refuse non-finite results (float64 overflow)."""
    if not np.all(np.isfinite(a)):
        raise ValueError(
            f"{context}: the unbiased estimate overflows float64: the noisy total is small compared "
            "with the number of bins for this epsilon, and the estimate is dominated by astronomically "
            "large weights (DESIGN §4). Merge sparse bins, use a larger epsilon, or pass `total` when N "
            "is public."
        )
    return a[()] if a.ndim == 0 else a


# --------------------------------------------------------------------------------------------
# entropy
# --------------------------------------------------------------------------------------------


def _h_known_total(y: NDArray[np.int64], N: int) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """h(y), forward and backward differences d+ = h(y+1)-h(y), d- = h(y)-h(y-1), and the
    second difference d+ - d-, for h(x) = -(x/N) ln(x/N) [x >= 1], without cancellation."""
    yf = y.astype(np.float64)
    lnN = math.log(N)

    def h(a):
        pos = a >= 1
        aa = np.where(pos, a, 1.0)
        return np.where(pos, aa / N * (lnN - np.log(aa)), 0.0)

    h0 = h(yf)
    big = yf >= 2
    yb = np.where(big, yf, 2.0)
    # for y >= 1: N d+ = ln N - ln(y+1) - y log1p(1/y); for y >= 2: N d- = ln N - ln y - (y-1) log1p(1/(y-1))
    ya = np.where(yf >= 1, yf, 1.0)
    dplus = np.where(yf >= 1, (lnN - np.log1p(ya) - ya * np.log1p(1.0 / ya)) / N, h(yf + 1) - h0)
    dminus = np.where(big, (lnN - np.log(yb) - (yb - 1) * np.log1p(1.0 / (yb - 1))) / N, h0 - h(yf - 1))
    # second difference of -x ln x / N for y >= 2: -(y log1p(-1/y^2) + log1p(2/(y-1))) / N
    d2 = np.where(big, -(yb * np.log1p(-1.0 / (yb * yb)) + np.log1p(2.0 / (yb - 1))) / N, dplus - dminus)
    return h0, dplus, dminus, d2


def entropy(
    y: ArrayLike,
    epsilon: float,
    total: int | None = None,
    sensitivity: float = 1,
) -> Any:
    r"""Unbiased estimate (in nats) of the entropy of a histogram from its noisy counts.

    Parameters
    ----------
    y : array_like of int, shape (..., n)
        Noisy counts y = x + DLap noise, bins on the last axis; leading axes are a batch.
    epsilon : float
        Privacy parameter of every count. Must be in (0, inf).
    total : int, optional
        The true total N = sum x, if public (an integer >= 1). The estimate is then the
        separable sum of debiased terms -(x_i/N) ln(x_i/N), treating N as a constant.
    sensitivity : float, default 1
        Sensitivity the counts were released with. Must be in (0, inf).

    Returns
    -------
    float64 or ndarray of float64, shape (...)
        Ĥ(y), with E[Ĥ(y)] = H(x) exactly.

    Raises
    ------
    TypeError, ValueError
        Invalid arguments (non-integer counts, epsilon <= 0, total < 1, ...).
    ValueError
        Without ``total``, when the noisy total is so small compared with n that the exact
        estimate needs more than ~30 s of multiprecision arithmetic; its variance is then
        astronomically large anyway (see Notes).

    Warns
    -----
    HighVarianceWarning
        When |Ĥ| exceeds 1000 max(1, ln n): the estimate is dominated by huge weights.

    Notes
    -----
    The function estimated, extended to all of Z^n:

    .. math:: H(x) = -\sum_{i:\,x_i \ge 1} \frac{x_i}{N}\ln\frac{x_i}{N}\ \ (N \ge 1),
              \qquad H(x) = 0\ \ (N \le 0),\qquad N = \sum_j x_j

    (or N = ``total``). Terms with x_i > N (possible off the true data) are kept as they are
    (negative). Without ``total`` the estimate is the operator (2), reduced to

    .. math:: \hat H = \sum_{\xi} \alpha_\xi\big(-S_1(\xi)\,(T^{n-1}u)(Y+\xi)
              + S_2(\xi)\,(T^{n-1}v)(Y+\xi)\big)

    (module docstring), O(n) plus six one-dimensional integrals; it is the unique unbiased
    estimator and has minimum variance. With ``total``, :math:`\hat H = \sum_i g(y_i)`,
    g = (1) applied to h_N. Unbiasedness: (2) (resp. (1)) is unbiased for any f with
    E|f(y)| < inf, and |H| grows at most like |x| log |x|.

    Accuracy (checked against 60-digit evaluations of the operator (2), epsilon from 1e-3 to 50,
    totals up to 1e7): when the noisy total Y exceeds n / tanh(epsilon / (2 sensitivity)), a few
    1e-16 relative for entropies of order 1. The floor is an absolute error of a few 1e-16 ln Y
    from F(0) (module docstring), whose terms -S_1 U and S_2 V, each about ln Y, cancel down to
    the entropy; it matters only when |Ĥ| is far below ln Y (one dominant bin). The c delta^2
    correction adds nothing noticeable at any epsilon, its second differences being computed
    directly (before, the three-point sum lost ~1e-8 relative at epsilon = 1e-3). Below that
    total, where Ĥ is dominated by large weights, the values of T^{n-1} come from quadrature,
    from float64 sums accepted only when well conditioned (error up to ~1e-12 relative), or from
    the exact sum in multiprecision. Time: O(n), about 1 ms for n = 12,419.

    Examples
    --------
    Noise-free limit (epsilon large) gives the plug-in entropy ln 2:

    >>> round(float(entropy([5, 5], epsilon=60.0)), 12)
    0.693147180560
    >>> round(float(entropy([5, 5], epsilon=60.0, total=10)), 12)
    0.693147180560

    A batch of two noisy histograms:

    >>> entropy([[30, 0, 12, 5], [28, 2, 10, 6]], epsilon=1.0).shape
    (2,)
    """
    eps = check_epsilon(epsilon)
    delta = check_sensitivity(sensitivity)
    yy = _histogram(y, "y")
    c = dlap_c(eps, delta)
    n = yy.shape[-1]
    if total is not None:
        N = check_nonnegative_int(total, "total", minimum=1)
        h0, _, _, d2 = _h_known_total(yy, N)
        return _out(np.sum(h0 - c * d2, axis=-1), "entropy")
    est = _entropy_no_total(yy, c)
    _warn_if_wild(est, max(1.0, math.log(n)), "entropy")
    return _out(est, "entropy")


def _entropy_no_total(yy: NDArray[np.int64], c: float, context: str = "entropy") -> NDArray[np.float64]:
    return _entropy_parts(yy, c, context)[0]


def entropy_variance_estimate(
    y: ArrayLike,
    epsilon: float,
    total: int | None = None,
    sensitivity: float = 1,
) -> Any:
    r"""Unbiased estimate of Var[Ĥ(y)] for Ĥ = :func:`entropy` (same arguments).

    Returns
    -------
    float64 or ndarray of float64, shape (...)

    Notes
    -----
    :math:`\hat V = \hat H(y)^2 - T[H^2](y)`, unbiased since E Ĥ² = Var Ĥ + H² and T[H²] is
    the unbiased estimate of H². Without ``total``,
    :math:`H^2 = \sum_{i,k} h(x_i,N)\,h(x_k,N)` with h = [x_i >= 1](phi_1(x_i) u(N) +
    phi_2(x_i) v(N)), phi_1(a) = -a ln a, phi_2(a) = a, so every pair is a product of
    functions of x_i, x_k and one of 1/N^2, ln N/N^2, ln^2 N/N^2 of N: diagonal pairs need
    T^{n-1} of those at Y + xi, off-diagonal pairs T^{n-2} at Y + xi + xi', and the pair sums
    are (sum_i)(sum_k) minus the diagonal: O(n). The estimate can be negative and carries the
    cancellation of Ĥ² - T[H²] (relative accuracy ~1e-16 Ĥ²/V̂ times a small factor).

    With ``total`` the terms are independent and, per count, the one-dimensional identity
    g² - T[h²] = c (d_+² + d_-²) + c² (Δ²h)² (d_± the one-sided differences of h) gives a
    non-negative estimate free of cancellation.

    Examples
    --------
    >>> v = entropy_variance_estimate([300, 200, 100, 50], epsilon=1.0)
    >>> bool(0 < v < 1e-3)
    True
    """
    eps = check_epsilon(epsilon)
    delta = check_sensitivity(sensitivity)
    yy = _histogram(y, "y")
    c = dlap_c(eps, delta)
    if total is not None:
        N = check_nonnegative_int(total, "total", minimum=1)
        _, dp, dm, d2 = _h_known_total(yy, N)
        return _out(np.sum(c * (dp * dp + dm * dm) + c * c * d2 * d2, axis=-1), "entropy_variance_estimate")
    g = _out(_entropy_no_total(yy, c), "entropy_variance_estimate")
    with np.errstate(over="ignore", invalid="ignore"):
        v = g * g - _square_operator(yy, c)
    return _out(v, "entropy_variance_estimate")


def _square_operator(yy: NDArray[np.int64], c: float) -> NDArray[np.float64]:
    """T[H^2](y) without total: pairs (i, i) with T^{n-1}, pairs (i, k != i) with T^{n-2}."""
    n = yy.shape[-1]
    Y = yy.sum(axis=-1)
    al = np.array(_alphas(c))
    kinds = ("u2", "v2", "w2")
    # phi_1 = -a ln a, phi_2 = a on a = y_i + xi >= 1; shape (..., n, 3)
    a = (yy[..., None] + np.array([-1, 0, 1])).astype(np.float64)
    phi1 = -_xlogx(a)
    phi2 = np.where(a >= 1, a, 0.0)
    # diagonal: sum_xi alpha_xi sum_i [phi1^2 U2 + 2 phi1 phi2 V2 + phi2^2 W2](Y + xi), m = n-1
    P1 = _power(n - 1, Y[..., None] + np.array([-1, 0, 1]), c, kinds, "entropy_variance_estimate")
    D11 = (phi1 * phi1).sum(axis=-2)
    D12 = (phi1 * phi2).sum(axis=-2)
    D22 = (phi2 * phi2).sum(axis=-2)
    total = ((D11 * P1["u2"] + 2.0 * D12 * P1["v2"] + D22 * P1["w2"]) * al).sum(axis=-1)
    if n >= 2:
        P2 = _power(n - 2, Y[..., None] + np.arange(-2, 3), c, kinds, "entropy_variance_estimate")
        F1 = phi1.sum(axis=-2)  # (..., 3)
        F2 = phi2.sum(axis=-2)
        for j in range(3):
            for k in range(3):
                sig = j + k  # index of Y + (j-1) + (k-1) in arange(-2, 3)
                c11 = F1[..., j] * F1[..., k] - (phi1[..., j] * phi1[..., k]).sum(axis=-1)
                c12 = F1[..., j] * F2[..., k] - (phi1[..., j] * phi2[..., k]).sum(axis=-1)
                c21 = F2[..., j] * F1[..., k] - (phi2[..., j] * phi1[..., k]).sum(axis=-1)
                c22 = F2[..., j] * F2[..., k] - (phi2[..., j] * phi2[..., k]).sum(axis=-1)
                total = total + al[j] * al[k] * (
                    c11 * P2["u2"][..., sig] + (c12 + c21) * P2["v2"][..., sig] + c22 * P2["w2"][..., sig]
                )
    return total


# --------------------------------------------------------------------------------------------
# KL divergence
# --------------------------------------------------------------------------------------------


def _lambda_differences(zz: NDArray[np.int64], log_pc: float) -> dict[str, NDArray[np.float64]]:
    """lambda(z) = ln z (z >= 1), ln(pseudo_count) (z <= 0), with its forward, backward and second
    differences along z, without cancellation (log1p for z >= 2, the definition below)."""
    z = zz.astype(np.float64)
    ge1, ge2 = zz >= 1, zz >= 2
    a1 = np.where(ge1, z, 1.0)
    a2 = np.where(ge2, z, 2.0)
    return {
        "0": np.where(ge1, np.log(a1), log_pc),
        "+": np.where(ge1, np.log1p(1.0 / a1), np.where(zz == 0, -log_pc, 0.0)),
        "-": np.where(ge2, -np.log1p(1.0 / (a2 - 1.0)), np.where(zz == 1, log_pc, 0.0)),
        "d2": np.where(ge2, np.log1p(-1.0 / (a2 * a2)),
                       np.where(zz == 1, math.log(2.0) + log_pc, np.where(zz == 0, -log_pc, 0.0))),
    }  # fmt: skip


def kl_divergence(
    y: ArrayLike,
    z: ArrayLike,
    epsilon: float,
    sensitivity: float = 1,
    *,
    epsilon_z: float | None = None,
    pseudo_count: float = 0.5,
) -> Any:
    r"""Unbiased estimate of KL(x || w) from noisy histograms y = x + noise, z = w + noise.

    Parameters
    ----------
    y, z : array_like of int, shape (..., n)
        Noisy counts of the two histograms (same shape, bins on the last axis), with
        independent DLap noise.
    epsilon : float
        Privacy parameter of the counts of y (and of z unless ``epsilon_z`` is given).
    sensitivity : float, default 1
        Sensitivity of every count. Must be in (0, inf).
    epsilon_z : float, optional
        Privacy parameter of the counts of z, if different.
    pseudo_count : float, default 0.5
        Count that replaces w_i <= 0 inside ln w_i when x_i >= 1 (see Notes). Must be > 0.

    Returns
    -------
    float64 or ndarray of float64, shape (...)

    Notes
    -----
    The function estimated, defined on all of Z^n x Z^n (N = sum x, M = sum w):

    .. math:: \mathrm{KL}(x\|w) = [N \ge 1][M \ge 1] \sum_{i:\,x_i\ge1}
              \frac{x_i}{N}\Big(\ln\frac{x_i}{N} - \lambda(w_i) + \ln M\Big),\qquad
              \lambda(w) = \ln w\ (w \ge 1),\ \ \ln(\texttt{pseudo\_count})\ (w \le 0).

    It equals the KL divergence whenever N, M >= 1 and w_i >= 1 wherever x_i >= 1; bins with
    x_i <= 0 contribute 0; where x_i >= 1 meets w_i <= 0 (true KL = +inf), the pseudo-count
    (1/2 by default, as in the Krichevsky–Trofimov add-1/2 rule) gives a large but finite term,
    which keeps E|KL(y, z)| finite so that an unbiased estimator exists; it is 0 when N <= 0
    or M <= 0, like the entropy. Expanding,

    .. math:: \mathrm{KL} = -H(x)[M\ge1] - \sum_i \underbrace{[x_i\ge1]\,x_i\,u(N)}_{p_i(x)}
              \underbrace{\lambda(w_i)[M\ge1]}_{q_i(w)} + \Big(\sum_i p_i(x)\Big)[M\ge1]\ln M,

    with u(N) = [N >= 1]/N. The noises of the two histograms are independent, so the operator
    (2) over all 2n coordinates factorises into the operator over x times that over w, and
    each factor reduces as for :func:`entropy`: with U = T^{n-1} u, the x-side estimates are
    Ĥ and P_i = sum_xi alpha_xi [y_i+xi >= 1](y_i+xi) U(Y+xi); the w-side ones are
    Q_i = sum_eta alpha_eta lambda(z_i+eta) (T^{n-1}[M>=1])(Z+eta), (T^n [M>=1])(Z) and
    (T^n [M>=1] ln M)(Z), where T^k[M>=1](K) = 1 exactly for K >= k+1. Hence

    .. math:: \widehat{\mathrm{KL}} = -\hat H\,(T^n 1)(Z) - \sum_i P_i Q_i
              + \Big(\sum_i P_i\Big)(T^n \ln)(Z),

    O(n) in all. (T^n ln)(Z) = ln Z + int_0^inf e^{-Zx} (1 - B(x)^n) / x dx by Frullani's
    integral. No variance estimate is offered: it would need the same pair expansion as
    :func:`entropy_variance_estimate` over four groups of functions (possible in O(n), not
    implemented).

    Accuracy: the three-point sums of Ĥ, P_i and Q_i are evaluated by the product rule from
    directly computed differences (see :func:`entropy`), so large noisy totals are fine at any
    epsilon (about 1e-15 relative at epsilon = 1e-3 and totals 1e7, against 60-digit
    references). When the noisy totals are small compared with n / tanh(epsilon/2) the three
    terms above are each far larger than their sum (P_i ~ c^(n-1), with opposite signs) and
    float64 keeps only about 16 - log10(max term / |estimate|) digits: e.g. 1e-4 relative for
    y = [8, 2], z = [5, 5] at epsilon = 1e-3 (where the estimate, -2.3e7, is meaningless anyway).

    Examples
    --------
    >>> round(float(kl_divergence([50, 50], [50, 50], epsilon=60.0)), 12)
    0.0
    >>> round(float(kl_divergence([80, 20], [50, 50], epsilon=60.0)), 10)  # 0.8 ln 1.6 + 0.2 ln 0.4
    0.192744757
    """
    eps = check_epsilon(epsilon)
    delta = check_sensitivity(sensitivity)
    eps_z = eps if epsilon_z is None else check_epsilon(epsilon_z, "epsilon_z")
    pc = check_positive_real(pseudo_count, "pseudo_count")
    yy = _histogram(y, "y")
    zz = _histogram(z, "z")
    check_same_shape(yy, zz, "y", "z")
    cx, cz = dlap_c(eps, delta), dlap_c(eps_z, delta)
    n = yy.shape[-1]
    # x side: Ĥ and P_i = sum_xi alpha_xi phi_2(y_i + xi) U(Y + xi), by the product rule
    H, d, Px = _entropy_parts(yy, cx, "kl_divergence")

    def at_bins(key: str) -> NDArray[np.float64]:
        return Px[key][..., None]

    with np.errstate(over="ignore", invalid="ignore"):
        Pi = _debiased_product(
            d["2"], d["2+"], d["2-"], d["2d2"], at_bins("u"), at_bins("du"), at_bins("ddu"), cx
        )
    # w side: Q_i = sum_eta alpha_eta lambda(z_i + eta) I(Z + eta), I = T^{n-1}[M >= 1]
    Z = zz.sum(axis=-1)
    ind = _power(n - 1, Z, cz, ("ind", "dind", "ddind"), "kl_divergence")
    Pn = _power(n, Z, cz, ("ind", "ln"), "kl_divergence")
    lam = _lambda_differences(zz, math.log(pc))
    with np.errstate(over="ignore", invalid="ignore"):
        Qi = _debiased_product(
            lam["0"], lam["+"], lam["-"], lam["d2"],
            ind["ind"][..., None], ind["dind"][..., None], ind["ddind"][..., None], cz,
        )  # fmt: skip
        est = -H * Pn["ind"] - (Pi * Qi).sum(axis=-1) + Pi.sum(axis=-1) * Pn["ln"]
    est = np.asarray(_out(est, "kl_divergence"))
    scale = max(1.0, math.log(n)) + np.log(np.maximum(np.abs(Z), 2)) + abs(math.log(pc))
    _warn_if_wild(est, scale, "kl_divergence")
    return _out(est, "kl_divergence")
