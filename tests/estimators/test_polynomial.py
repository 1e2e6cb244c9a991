"""Tests of ldpgraph.estimators.polynomials: fast forms against the brute-force operator, exact
unbiasedness and exact variances by summation over the DLap law / integration against the
Laplace density, large values against exact rational and mpmath references, bad inputs."""

from __future__ import annotations

import importlib
import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from dlap_exact import exact_expectation, exact_expectation_nd
from numpy.polynomial import polynomial as P
from scipy import integrate

from ldpgraph._validation import dlap_c
from ldpgraph.estimators.operator import debias, debias_laplace, debias_nd
from ldpgraph.estimators.polynomials import (
    MAX_BINOMIAL_K,
    NOISES,
    binomial,
    binomial_variance,
    binomial_variance_estimate,
    binomials,
    monomial,
    monomial_variance,
    monomial_variance_estimate,
    polynomial,
    polynomial_variance,
    polynomial_variance_estimate,
    power,
    power_variance,
    power_variance_estimate,
    sum_binomials,
)

# The package re-exports the function ``polynomial``, which shadows the submodule attribute.
polynomial_module = importlib.import_module("ldpgraph.estimators.polynomials")

EPSILONS = [0.3, 1.0, 3.0]
TAIL = 1e-40  # DLap support truncation for polynomial integrands (tail * K^deg stays negligible)


# ---------------------------------------------------------------------------------------------
# reference helpers (independent of the code under test)
# ---------------------------------------------------------------------------------------------


def binom_coef(k):
    """Coefficients of C(z, k), lowest degree first."""
    return P.polyfromroots(np.arange(k)) / math.factorial(k) if k else np.array([1.0])


def binom_float(z, k):
    z = np.asarray(z, dtype=np.float64)
    out = np.ones_like(z)
    for i in range(k):
        out = out * (z - i)
    return out / math.factorial(k)


def binom_exact(y, k):
    return Fraction(math.prod(y - i for i in range(k)), math.factorial(k))


def stencil_exact(f, y, c):
    """The operator (1) in exact rational arithmetic."""
    C = Fraction(c)
    return f(y) - C * (f(y + 1) - 2 * f(y) + f(y - 1))


def stencil_scale(f, y, c):
    """Sum of the magnitudes of the terms of (1): the natural absolute-error scale."""
    return np.abs(f(y)) * (1 + 2 * c) + c * (np.abs(f(y + 1)) + np.abs(f(y - 1)))


def assert_close(got, ref, scale=0.0, rtol=1e-9):
    got, ref = np.asarray(got, dtype=float), np.asarray(ref, dtype=float)
    tol = rtol * np.abs(ref) + 1e-13 * np.asarray(scale) + 1e-300
    bad = ~(np.abs(got - ref) <= tol)
    assert not bad.any(), f"max excess {np.max(np.abs(got - ref) - tol)}; got {got[bad]} ref {ref[bad]}"


def laplace_expectation(h, x, b, scale=0.0):
    """E[h(x + L)], L ~ Lap(b), by adaptive quadrature against the density.

    ``scale`` (e.g. E|h|) sets the absolute accuracy asked for, 1e-14 * scale, where the
    integral cancels."""

    def integrand(z):
        return float(h(x + z)) * math.exp(-abs(z) / b) / (2 * b)

    kw = dict(epsabs=1e-14 * scale, epsrel=1e-12, limit=200)
    return integrate.quad(integrand, -np.inf, 0.0, **kw)[0] + integrate.quad(integrand, 0.0, np.inf, **kw)[0]


def laguerre_expectation(h, x, b, n, nodes=24):
    """E[h(x + L)] for a polynomial h of n coordinates, L iid Lap(b) (exact up to rounding for
    polynomials of degree < 2*nodes): L = +-b T, T ~ Exp(1), Gauss-Laguerre in every coordinate."""
    t, w = np.polynomial.laguerre.laggauss(nodes)
    z1 = np.concatenate([b * t, -b * t])
    w1 = np.concatenate([w, w]) / 2
    grids = np.meshgrid(*([z1] * n), indexing="ij")
    shifts = np.stack([g.ravel() for g in grids], axis=-1)
    weights = np.ones(shifts.shape[0])
    for g in np.meshgrid(*([w1] * n), indexing="ij"):
        weights = weights * g.ravel()
    vals = np.asarray(h(np.asarray(x, dtype=float) + shifts), dtype=float)
    return math.fsum(vals * weights)


rng_global = np.random.default_rng(20261129)


def small_reports(rng, size, lo=-8, hi=14):
    y = rng.integers(lo, hi, size=size)
    y.flat[0] = y.flat[-1]  # a tie
    y.flat[1] = -3  # a negative report
    return y


# ---------------------------------------------------------------------------------------------
# fast forms equal the brute-force operator
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("k", range(0, 9))
def test_binomial_equals_debias(eps, k):
    rng = np.random.default_rng(k + int(10 * eps))
    y = small_reports(rng, 40)
    c = dlap_c(eps)
    ref = debias(lambda z: binom_float(z, k), y, eps)
    scale = stencil_scale(lambda z: binom_float(z, k), y, c)
    assert_close(binomial(y, k, eps), ref, scale)
    # exact rational arithmetic, independent of float64 cancellation in the reference
    exact = [float(stencil_exact(lambda v: binom_exact(v, k), int(v), c)) for v in y]
    assert_close(binomial(y, k, eps), exact, scale)


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("k", range(0, 7))
def test_binomial_laplace_equals_debias_laplace(eps, k):
    rng = np.random.default_rng(100 + k)
    y = rng.uniform(-8, 14, size=30)
    coef = binom_coef(k)
    d2 = P.polyder(coef, 2) if k >= 2 else np.zeros(1)
    ref = debias_laplace(lambda z: P.polyval(z, coef), lambda z: P.polyval(z, d2), y, eps)
    b = 1 / eps
    scale = np.abs(P.polyval(y, coef)) + b * b * np.abs(P.polyval(y, d2))
    assert_close(binomial(y, k, eps, noise="laplace"), ref, scale)


@pytest.fixture(params=["histogram", "arithmetic"])
def sum_path(request, monkeypatch):
    """Run sum_binomials through both of its DLap code paths (bincount, falling factorials)."""
    if request.param == "arithmetic":
        monkeypatch.setattr(polynomial_module, "_HIST_MAX_RANGE", 0)
    return request.param


@pytest.mark.parametrize("noise", NOISES)
@pytest.mark.parametrize("sensitivity", [1, 2.5])
def test_binomials_and_sum_binomials_agree(noise, sensitivity, sum_path):
    rng = np.random.default_rng(7)
    y = small_reports(rng, (3, 50)) if noise == "dlap" else rng.uniform(-8, 14, size=(3, 50))
    ks = [4, 0, 2, 1, 3, 2, 6]
    many = binomials(y, ks, 0.7, sensitivity, noise=noise)
    assert many.shape == (len(ks), 3, 50)
    for j, k in enumerate(ks):
        np.testing.assert_array_equal(many[j], binomial(y, k, 0.7, sensitivity, noise=noise))
    sums = sum_binomials(y, ks, 0.7, sensitivity, noise=noise)
    assert sums.shape == (len(ks),)
    for j in range(len(ks)):
        terms = many[j].ravel()
        scale = np.abs(terms).sum() + np.abs(binom_float(y, ks[j])).sum()
        assert_close(sums[j], math.fsum(terms), scale, rtol=1e-11)


def test_chunk_boundaries_long_input(sum_path):
    """Inputs longer than one chunk: elementwise and summed forms against plain formulas."""
    rng = np.random.default_rng(3)
    y = rng.integers(-30, 300, size=3 * 65536 + 17)
    c = dlap_c(0.5)
    for k in (2, 3, 4, 5):
        plain = binom_float(y, k) - c * binom_float(y - 1, k - 2)
        got = binomial(y, k, 0.5)
        np.testing.assert_allclose(got, plain, rtol=1e-12, atol=1e-9 * c)
    sums = sum_binomials(y, [1, 2, 3, 4, 5], 0.5)
    np.testing.assert_allclose(sums, binomials(y, [1, 2, 3, 4, 5], 0.5).sum(axis=1), rtol=1e-12)
    yl = y + rng.uniform(-0.5, 0.5, size=y.size)
    np.testing.assert_allclose(
        sum_binomials(yl, [1, 2, 3, 4], 0.5, noise="laplace"),
        binomials(yl, [1, 2, 3, 4], 0.5, noise="laplace").sum(axis=1),
        rtol=1e-12,
    )


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("k", range(0, 9))
def test_power_equals_debias(eps, k):
    rng = np.random.default_rng(200 + k)
    y = small_reports(rng, 40)
    c = dlap_c(eps)
    f = lambda z: np.asarray(z, dtype=float) ** k  # noqa: E731
    assert_close(power(y, k, eps), debias(f, y, eps), stencil_scale(f, y, c))
    exact = [float(stencil_exact(lambda v: Fraction(v) ** k, int(v), c)) for v in y]
    assert_close(power(y, k, eps), exact, stencil_scale(f, y, c))
    yl = rng.uniform(-8, 14, size=30)
    d2 = (lambda z: k * (k - 1) * z ** (k - 2)) if k >= 2 else (lambda z: 0 * z)
    b = 1 / eps
    assert_close(
        power(yl, k, eps, noise="laplace"),
        debias_laplace(f, d2, yl, eps),
        np.abs(yl) ** k + b * b * np.abs(d2(yl)),
    )


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("seed", range(4))
def test_polynomial_equals_debias(eps, seed):
    rng = np.random.default_rng(300 + seed)
    coef = rng.normal(size=rng.integers(1, 8))
    y = small_reports(rng, 40)
    c = dlap_c(eps)
    f = lambda z: P.polyval(np.asarray(z, dtype=float), coef)  # noqa: E731
    absf = lambda z: P.polyval(np.abs(np.asarray(z, dtype=float)), np.abs(coef))  # noqa: E731
    assert_close(polynomial(coef, y, eps), debias(f, y, eps), stencil_scale(absf, y, c))
    yl = rng.uniform(-8, 14, size=30)
    d2 = P.polyder(coef, 2) if coef.size > 2 else np.zeros(1)
    b = 1 / eps
    assert_close(
        polynomial(coef, yl, eps, noise="laplace"),
        debias_laplace(f, lambda z: P.polyval(z, d2), yl, eps),
        absf(yl) + b * b * P.polyval(np.abs(yl), np.abs(d2)),
    )


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_monomial_equals_debias_nd(eps, n):
    rng = np.random.default_rng(400 + n)
    exps = rng.integers(0, 4, size=n)
    y = rng.integers(-6, 10, size=(12, n))
    y[0, :] = y[0, 0]  # ties within a row
    f = lambda z: np.prod(np.asarray(z, dtype=float) ** exps, axis=-1)  # noqa: E731
    c = dlap_c(eps)
    # absolute-error scale of the 3^n-point sum: (1+4c)^n max |f| over the cube
    cube = np.array(list(itertools.product([-1, 0, 1], repeat=n)))
    fmax = np.max(np.abs(f(y[:, None, :] + cube[None])), axis=1)
    assert_close(monomial(y, exps, eps), debias_nd(f, y, eps), (1 + 4 * c) ** n * fmax)


# ---------------------------------------------------------------------------------------------
# exact unbiasedness
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps", EPSILONS)
def test_binomial_power_polynomial_unbiased_dlap(eps):
    x = np.array([-4, -1, 0, 1, 2, 3, 7, 12])
    coef = np.array([0.5, -1.0, 2.0, 0.0, -0.25])
    for k in range(0, 7):
        g = exact_expectation(lambda z, k=k: binomial(z, k, eps), x, eps, tail=TAIL)
        scale = exact_expectation(lambda z, k=k: np.abs(binomial(z, k, eps)), x, eps, tail=TAIL)
        assert_close(g, [float(binom_exact(int(v), k)) for v in x], scale)
        g = exact_expectation(lambda z, k=k: power(z, k, eps), x, eps, tail=TAIL)
        scale = exact_expectation(lambda z, k=k: np.abs(power(z, k, eps)), x, eps, tail=TAIL)
        assert_close(g, x.astype(float) ** k, scale)
    g = exact_expectation(lambda z: polynomial(coef, z, eps), x, eps, tail=TAIL)
    assert_close(g, P.polyval(x, coef), exact_expectation(lambda z: np.abs(polynomial(coef, z, eps)), x, eps))


@pytest.mark.parametrize("eps", [0.5, 2.0])
@pytest.mark.parametrize("k", [0, 2, 3, 5])
def test_binomial_power_unbiased_laplace_quad(eps, k):
    b = 1 / eps
    for x in (-2.5, 1.3, 6.0):
        g = lambda z, k=k: binomial(np.array([z]), k, eps, noise="laplace")[0]  # noqa: E731
        scale = laplace_expectation(lambda z, g=g: abs(g(z)), x, b)
        assert_close(laplace_expectation(g, x, b, scale), float(P.polyval(x, binom_coef(k))), scale)
        g = lambda z, k=k: power(np.array([z]), k, eps, noise="laplace")[0]  # noqa: E731
        scale = laplace_expectation(lambda z, g=g: abs(g(z)), x, b)
        assert_close(laplace_expectation(g, x, b, scale), x**k, scale)


@pytest.mark.parametrize("noise", NOISES)
def test_monomial_unbiased(noise):
    eps = 1.5
    for x, exps in [([2, -1], [2, 3]), ([3, 0, -2], [1, 2, 2]), ([4], [4])]:
        truth = float(np.prod(np.array(x, dtype=float) ** np.array(exps)))
        g = lambda z, exps=exps: monomial(z, exps, eps, noise=noise)  # noqa: E731
        if noise == "dlap":
            got = exact_expectation_nd(g, x, eps, tail=1e-30)
            scale = exact_expectation_nd(lambda z, g=g: np.abs(g(z)), x, eps, tail=1e-30)
        else:
            got = laguerre_expectation(g, x, 1 / eps, len(x))
            scale = laguerre_expectation(lambda z, g=g: np.abs(g(z)), x, 1 / eps, len(x), nodes=40)
        assert_close(got, truth, scale)


# ---------------------------------------------------------------------------------------------
# exact variances and unbiased variance estimates
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("k", range(0, 6))
def test_binomial_variance_dlap_exact_sum(eps, k):
    x = np.array([-5, -1, 0, 1, 2, 4, 9])
    f = np.array([float(binom_exact(int(v), k)) for v in x])
    var = binomial_variance(x, k, eps)
    ref = np.array(
        [
            exact_expectation(lambda z, v=v, fv=fv: (binomial(z, k, eps) - fv) ** 2, v, eps, tail=TAIL)
            for v, fv in zip(x, f, strict=True)
        ]
    )
    assert_close(var, ref)
    est = exact_expectation(lambda z: binomial_variance_estimate(z, k, eps), x, eps, tail=TAIL)
    assert_close(est, ref)
    # the 1-D estimate is a sum of squares: never negative
    assert np.all(binomial_variance_estimate(np.arange(-30, 30), k, eps) >= 0)


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("k", range(0, 6))
def test_power_polynomial_variance_dlap_exact_sum(eps, k):
    x = np.array([-5, -1, 0, 1, 2, 4, 9])
    ref = np.array(
        [
            exact_expectation(lambda z, v=v: (power(z, k, eps) - float(v) ** k) ** 2, v, eps, tail=TAIL)
            for v in x
        ]
    )
    assert_close(power_variance(x, k, eps), ref)
    assert_close(exact_expectation(lambda z: power_variance_estimate(z, k, eps), x, eps, tail=TAIL), ref)
    coef = np.array([1.0, -2.0, 0.5, 0.25, -0.125, 0.0625][: k + 1])
    ref = np.array(
        [
            exact_expectation(
                lambda z, v=v: (polynomial(coef, z, eps) - P.polyval(v, coef)) ** 2, v, eps, tail=TAIL
            )
            for v in x
        ]
    )
    assert_close(polynomial_variance(coef, x, eps), ref)
    est = exact_expectation(lambda z: polynomial_variance_estimate(coef, z, eps), x, eps, tail=TAIL)
    assert_close(est, ref)


@pytest.mark.parametrize("eps", [0.5, 2.0])
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_variances_laplace_quad(eps, k):
    b = 1 / eps
    coef = binom_coef(k)
    for x in (-3.0, 0.4, 5.5):
        fx = float(P.polyval(x, coef))
        ref = laplace_expectation(
            lambda z, fx=fx: (binomial(np.array([z]), k, eps, noise="laplace")[0] - fx) ** 2, x, b
        )
        assert_close(binomial_variance(x, k, eps, noise="laplace"), ref)
        est = laplace_expectation(
            lambda z: binomial_variance_estimate(np.array([z]), k, eps, noise="laplace")[0], x, b
        )
        assert_close(est, ref)
        ref = laplace_expectation(
            lambda z, x=x: (power(np.array([z]), k, eps, noise="laplace")[0] - x**k) ** 2, x, b
        )
        assert_close(power_variance(x, k, eps, noise="laplace"), ref)
        est = laplace_expectation(
            lambda z: power_variance_estimate(np.array([z]), k, eps, noise="laplace")[0], x, b
        )
        assert_close(est, ref)


@pytest.mark.parametrize("noise", NOISES)
def test_monomial_variance_exact(noise):
    eps = 1.2
    for x, exps in [([2, -1], [2, 1]), ([3, 1], [1, 1]), ([0, 5], [3, 2]), ([-2], [3])]:
        truth = float(np.prod(np.array(x, dtype=float) ** np.array(exps)))
        sq = lambda z, exps=exps, truth=truth: (monomial(z, exps, eps, noise=noise) - truth) ** 2  # noqa: E731
        est = lambda z, exps=exps: monomial_variance_estimate(z, exps, eps, noise=noise)  # noqa: E731
        if noise == "dlap":
            ref = exact_expectation_nd(sq, x, eps, tail=TAIL)
            ref_est = exact_expectation_nd(est, x, eps, tail=TAIL)
        else:
            ref = laguerre_expectation(sq, x, 1 / eps, len(x))
            ref_est = laguerre_expectation(est, x, 1 / eps, len(x))
        xx = np.array(x, dtype=float if noise == "laplace" else np.int64)
        assert_close(monomial_variance(xx, exps, eps, noise=noise), ref)
        assert_close(ref_est, ref)


# ---------------------------------------------------------------------------------------------
# large values: exact rational / mpmath references
# ---------------------------------------------------------------------------------------------

mpmath.mp.dps = 60


def mp_linear_product(roots_shifted, scale):
    """Coefficients in eta of prod_r (r + eta) * scale, as mpf."""
    coef = [mpmath.mpf(1)]
    for r in roots_shifted:
        new = [mpmath.mpf(0)] * (len(coef) + 1)
        for j, a in enumerate(coef):
            new[j] += a * r
            new[j + 1] += a
        coef = new
    return [a * scale for a in coef]


def mp_power_taylor(x, k):
    return [mpmath.binomial(k, j) * mpmath.mpf(x) ** (k - j) for j in range(k + 1)]


def mp_dlap_moments(c, top):
    """Raw DLap moments from the pmf: mu_j = 2 (1-p)/(1+p) Li_{-j}(p), p from c = p/(1-p)^2."""
    cm = mpmath.mpf(c)
    p = ((2 * cm + 1) - mpmath.sqrt(4 * cm + 1)) / (2 * cm)
    mu = [mpmath.mpf(1)] + [mpmath.mpf(0)] * top
    for j in range(2, top + 1, 2):
        mu[j] = 2 * (1 - p) / (1 + p) * mpmath.polylog(-j, p)
    return mu


def mp_variance(series_of_g_minus_f, mu):
    a = series_of_g_minus_f
    return mpmath.fsum(a[i] * a[j] * mu[i + j] for i in range(len(a)) for j in range(len(a)))


def pad(a, n):
    return list(a) + [mpmath.mpf(0)] * (n - len(a))


def mp_dlap_g_minus_f(taylor_of_f_at, x, c):
    """eta-coefficients of g(x+eta) - f(x) with g = f - c (f(.+1) - 2f + f(.-1))."""
    f0, fp, fm = taylor_of_f_at(x), taylor_of_f_at(x + 1), taylor_of_f_at(x - 1)
    n = max(len(f0), len(fp), len(fm))
    f0, fp, fm = pad(f0, n), pad(fp, n), pad(fm, n)
    cm = mpmath.mpf(c)
    g = [f0[j] - cm * (fp[j] - 2 * f0[j] + fm[j]) for j in range(n)]
    g[0] -= f0[0]
    return g


@pytest.mark.parametrize("eps", [0.3, 1.0, 3.0])
@pytest.mark.parametrize("k", [2, 4, 7, 10])
def test_large_values_estimates_exact(eps, k):
    c = dlap_c(eps)
    y = np.array([10**7, 10**7 - 3, 123_457, -(10**7), -54_321, 2**40])
    exact = [float(stencil_exact(lambda v: binom_exact(v, k), int(v), c)) for v in y]
    got = binomial(y, k, eps)
    assert np.all(np.isfinite(got))
    assert_close(got, exact)
    assert_close(sum_binomials(y[:3], [k], eps), [math.fsum(exact[:3])], rtol=1e-12)
    exact = [float(stencil_exact(lambda v: Fraction(v) ** k, int(v), c)) for v in y]
    assert_close(power(y, k, eps), exact)
    # Laplace at large real values: y^k - b^2 k(k-1) y^{k-2} and C(y,k) - b^2 C''(y,k) in mpmath
    b = mpmath.mpf(1) / eps
    for v in (1e7 + 0.25, -3.5e6, 98765.5):
        ref = mpmath.mpf(v) ** k - b * b * k * (k - 1) * mpmath.mpf(v) ** (k - 2)
        assert_close(power(np.array([v]), k, eps, noise="laplace"), [float(ref)])
        t = mp_linear_product([mpmath.mpf(v) - i for i in range(k)], 1 / mpmath.factorial(k))
        ref = t[0] - b * b * 2 * t[2]
        assert_close(binomial(np.array([v]), k, eps, noise="laplace"), [float(ref)])


@pytest.mark.parametrize("eps", [0.3, 1.0, 3.0])
@pytest.mark.parametrize("k", [1, 2, 5, 10])
def test_large_values_variances_mpmath(eps, k):
    c = dlap_c(eps)
    mu = mp_dlap_moments(c, 2 * k + 2)
    xs = [10**7, 2_000_003, 31_415, -(10**7), 3, 0, -2]
    var = binomial_variance(np.array(xs), k, eps)
    pvar = power_variance(np.array(xs), k, eps)
    est = binomial_variance_estimate(np.array(xs), k, eps)
    assert np.all(np.isfinite(var)) and np.all(np.isfinite(pvar))
    for i, x in enumerate(xs):
        binom_at = lambda z: mp_linear_product([mpmath.mpf(z) - j for j in range(k)], 1 / mpmath.factorial(k))  # noqa: E731
        ref = mp_variance(mp_dlap_g_minus_f(binom_at, x, c), mu)
        assert_close(var[i], float(ref))
        ref = mp_variance(mp_dlap_g_minus_f(lambda z: mp_power_taylor(z, k), x, c), mu)
        assert_close(pvar[i], float(ref))
        # variance estimate at y = x: c[(f(y+1)-f(y))^2 + (f(y)-f(y-1))^2] + c^2 (second difference)^2
        f = lambda z: binom_exact(z, k)  # noqa: E731
        C = Fraction(c)
        ref = (
            C * ((f(x + 1) - f(x)) ** 2 + (f(x) - f(x - 1)) ** 2)
            + C * C * (f(x + 1) - 2 * f(x) + f(x - 1)) ** 2
        )
        assert_close(est[i], float(ref))
    # Laplace: raw moments (2m)! b^{2m}, g = f - b^2 f''
    b = mpmath.mpf(1) / eps
    mu = [mpmath.factorial(j) * b**j if j % 2 == 0 else mpmath.mpf(0) for j in range(2 * k + 2)]
    xs = [1e7 + 0.5, -2.5e6, 17.25]
    var = binomial_variance(np.array(xs), k, eps, noise="laplace")
    for i, x in enumerate(xs):
        t = mp_linear_product([mpmath.mpf(x) - j for j in range(k)], 1 / mpmath.factorial(k))
        a = [t[j] - b * b * (j + 1) * (j + 2) * (t[j + 2] if j + 2 < len(t) else 0) for j in range(len(t))]
        a[0] -= t[0]
        assert_close(var[i], float(mp_variance(a, mu)))


# ---------------------------------------------------------------------------------------------
# regressions: cancelling variances, intermediate overflow, huge Laplace reports
# ---------------------------------------------------------------------------------------------


def mp_direct_dlap_variance(g, x, eps, span):
    """Var g(x + eta) = sum_j P[eta = j] (g(x + j) - E g)^2 over |j| <= span, in 80 digits.

    Positive terms only (no cancellation); g maps an int to an mpf."""
    with mpmath.workdps(80):
        p = mpmath.exp(-mpmath.mpf(eps))
        w = [(1 - p) / (1 + p) * p ** abs(j) for j in range(-span, span + 1)]
        vals = [g(x + j) for j in range(-span, span + 1)]
        mean = mpmath.fsum(a * v for a, v in zip(w, vals, strict=True))
        return mpmath.fsum(a * (v - mean) ** 2 for a, v in zip(w, vals, strict=True))


@pytest.mark.parametrize(
    ("x", "k", "eps"),
    [(1, 5, 50.0), (3, 7, 20.0), (5, 10, 10.0), (2, 7, 30.0), (0, 3, 40.0), (4, 6, 5.0), (-1, 4, 30.0)],
)
def test_variances_at_the_roots_at_large_epsilon(x, k, eps):
    """x among the roots of C(., k): the terms of order c cancel and the variance is O(c^2).

    Regression: the float Taylor form returned negative variances here."""
    c = Fraction(dlap_c(eps))
    span = int(200 / eps) + 4 * k

    def g(z):
        return mpmath.mpf(binom_exact(z, k) - (c * binom_exact(z - 1, k - 2) if k >= 2 else 0))

    ref = mp_direct_dlap_variance(g, x, eps, span)
    got = float(binomial_variance([x], k, eps)[0])
    assert got >= 0.0
    assert_close(got, float(ref), rtol=1e-10)
    # the same polynomial through polynomial_variance (coefficients of C(z, k), exact integers * k!)
    coef = np.rint(binom_coef(k) * math.factorial(k))
    got = float(polynomial_variance(coef, [x], eps)[0])
    assert got >= 0.0
    assert_close(got, float(ref) * math.factorial(k) ** 2, rtol=1e-10)
    # the plug-in C(y, k)
    ref = mp_direct_dlap_variance(lambda z: mpmath.mpf(binom_exact(z, k)), x, eps, span)
    _, pvar = polynomial_module.binomial_plugin_moments([x], k, eps)
    assert pvar[0] >= 0.0
    assert_close(pvar[0], float(ref), rtol=1e-10)


@pytest.mark.parametrize(("x", "k"), [(1.5, 4), (2.0, 5), (0.5, 2)])
def test_laplace_variance_at_critical_points(x, k):
    """f'(x) = 0: the order b^2 term vanishes; compare with the Taylor form in 80 digits."""
    eps = 50.0
    with mpmath.workdps(80):
        b = mpmath.mpf(1) / eps
        mu = [mpmath.factorial(j) * b**j if j % 2 == 0 else mpmath.mpf(0) for j in range(2 * k + 2)]
        t = mp_linear_product([mpmath.mpf(x) - j for j in range(k)], 1 / mpmath.factorial(k))
        a = [t[j] - b * b * (j + 1) * (j + 2) * (t[j + 2] if j + 2 < len(t) else 0) for j in range(len(t))]
        a[0] = mpmath.mpf(0)
        lin = mpmath.fsum(a[i] * mu[i] for i in range(len(a)))
        ref = mp_variance(a, mu) - lin**2
    got = float(binomial_variance([x], k, eps, noise="laplace")[0])
    assert got >= 0.0
    assert_close(got, float(ref), rtol=1e-10)


def _exact_or_inf(q: Fraction) -> float:
    try:
        return float(q)
    except OverflowError:
        return math.inf if q > 0 else -math.inf


@pytest.mark.parametrize("k", [18, 19, 20, 50, 100, 170])
def test_binomial_large_k_no_intermediate_overflow(k, sum_path):
    """C(1e7, 50) ~ 3.3e285 is finite: so must the estimate be (the falling factorial is not)."""
    eps = 1.0
    c = Fraction(dlap_c(eps))
    ys = [10**7, -(10**7), 2_000_003, 123_457, -1, -171, 0, 5, 169, 2**53]

    def exact(y):
        return binom_exact(y, k) - c * binom_exact(y - 1, k - 2)

    refs = [_exact_or_inf(exact(y)) for y in ys]
    with np.errstate(over="ignore"):
        got = binomial(ys, k, eps)
    for y, g, r in zip(ys, got, refs, strict=True):
        if math.isinf(r):
            assert g == r, (y, g)
        else:
            assert math.isfinite(g) and abs(g - r) <= 1e-13 * k * abs(r), (y, g, r)
    # sums: both DLap paths, over the reports whose terms are finite
    fin = [y for y, r in zip(ys, refs, strict=True) if math.isfinite(r)]
    ref = _exact_or_inf(sum(exact(y) for y in fin))
    if math.isfinite(ref):
        got = sum_binomials(fin, [1, k], eps)[1]
        scale = sum(abs(r) for r in refs if math.isfinite(r))
        assert abs(got - ref) <= 1e-13 * k * scale, (got, ref)


def test_binomial_laplace_of_huge_reports():
    """C(y, k) - b^2 C''(y, k) is finite for |y| far beyond 1e154 at small k."""
    assert binomial([1e200], 1, 1.0, noise="laplace").tolist() == [1e200]
    assert binomial([1e200, -1e300], 0, 1.0, noise="laplace").tolist() == [1.0, 1.0]
    assert binomial_variance_estimate([1e200], 1, 2.0, noise="laplace").tolist() == [0.5]  # 2 b^2
    eps = 0.7
    B2 = Fraction(1 / eps) ** 2
    rng = np.random.default_rng(5)
    for k in (2, 3, 4, 7, 20, 60, 170):
        top = 300 / k  # C(y, k) ~ y^k / k! stays below ~1e300
        ys = list(rng.uniform(-1, 1, size=6) * 10.0 ** rng.uniform(0, top, size=6)) + [2.5, -170.0, 1e100]
        coef = [Fraction(1)]
        for i in range(k):  # coefficients of the falling factorial
            coef = [-i * coef[0]] + [coef[j - 1] - i * coef[j] for j in range(1, len(coef))] + [coef[-1]]
        with np.errstate(over="ignore"):
            got = binomial(ys, k, eps, noise="laplace")
            both = sum_binomials(ys[:-1], [k], eps, noise="laplace")[0]
        total = Fraction(0)
        for y, g in zip(ys, got, strict=True):
            Y = Fraction(y)
            f = sum(a * Y**j for j, a in enumerate(coef))
            f2 = sum(a * j * (j - 1) * Y ** (j - 2) for j, a in enumerate(coef) if j >= 2)
            ref = (f - B2 * f2) / math.factorial(k)
            r = _exact_or_inf(ref)
            if y != 1e100:
                total += ref
            if math.isinf(r):
                assert g == r, (k, y, g)
            else:
                cond = sum(abs(a) * abs(Y) ** j for j, a in enumerate(coef)) / math.factorial(k)
                assert abs(Fraction(g) - ref) <= Fraction(1e-14) * k * (abs(ref) + cond * Fraction(1e-3)), (k, y)
        if math.isfinite(_exact_or_inf(total)) and abs(_exact_or_inf(total)) < 1e300:
            assert both == pytest.approx(float(total), rel=1e-12, abs=1e-300), k


# ---------------------------------------------------------------------------------------------
# shapes, dtypes, bad inputs
# ---------------------------------------------------------------------------------------------


def test_shapes_and_dtypes():
    assert binomial(5, 2, 1.0).shape == ()
    assert binomial(np.zeros((2, 0), dtype=np.int64), 3, 1.0).shape == (2, 0)
    assert sum_binomials([], [1, 2], 1.0).tolist() == [0.0, 0.0]
    assert sum_binomials(np.array([7, 7, 7]), [0, 1, 7], 60.0).tolist() == [3.0, 21.0, 3.0]
    y8 = np.array([3, 200], dtype=np.uint8)
    np.testing.assert_array_equal(binomial(y8, 3, 1.0), binomial([3, 200], 3, 1.0))
    np.testing.assert_array_equal(binomial(np.array([3.0, -4.0]), 3, 1.0), binomial([3, -4], 3, 1.0))
    assert binomials([[1, 2]], [1, 2], 1.0).shape == (2, 1, 2)
    assert monomial(np.ones((2, 3, 4), dtype=int), [1, 0, 2, 1], 1.0).shape == (2, 3)
    assert binomial_variance(np.arange(6).reshape(2, 3), 3, 1.0).shape == (2, 3)
    assert monomial_variance(np.ones((2, 3, 4), dtype=int), [1, 0, 2, 1], 1.0).shape == (2, 3)
    # noise-free limit: the estimates are the truth
    np.testing.assert_allclose(binomial([0, 1, 4, 9], 3, 60.0), [0, 0, 4, 84], rtol=1e-15, atol=1e-20)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: binomial([1], 2, 1.0, noise="gauss"), ValueError, "noise must be one of"),
        (lambda: binomial([1], 2, 1.0, noise=1), TypeError, "noise"),
        (lambda: binomial([1], -1, 1.0), ValueError, "k must be an integer >= 0"),
        (lambda: binomial([1], 1.5, 1.0), TypeError, "k must be an integer"),
        (lambda: binomial([1], MAX_BINOMIAL_K + 1, 1.0), ValueError, "k must be an integer <= 170"),
        (lambda: binomial([1], 2, 0.0), ValueError, "epsilon"),
        (lambda: binomial([1], 2, 1.0, 0), ValueError, "sensitivity"),
        (lambda: binomial([1.5], 2, 1.0), ValueError, r"y\[0\] = 1.5 is not an integer"),
        (lambda: binomial(np.array([0, 2**60]), 2, 1.0), ValueError, r"y\[1\].*too large"),
        (lambda: binomial([np.nan], 2, 1.0, noise="laplace"), ValueError, "not finite"),
        (lambda: binomial(["a"], 2, 1.0), TypeError, "integers"),
        (lambda: binomials([1], [], 1.0), ValueError, "ks must contain"),
        (lambda: binomials([1], 3, 1.0), TypeError, "ks must be a 1-D sequence"),
        (lambda: sum_binomials([1], [1, -2], 1.0), ValueError, r"ks\[1\]"),
        (lambda: power([1], -2, 1.0), ValueError, "k must be"),
        (lambda: polynomial([], [1], 1.0), ValueError, "coefficients must be a non-empty"),
        (lambda: polynomial([1.0, np.inf], [1], 1.0), ValueError, r"coefficients\[1\]"),
        (lambda: polynomial(["a"], [1], 1.0), TypeError, "coefficients"),
        (lambda: polynomial([[1.0]], [1], 1.0), ValueError, "1-D"),
        (lambda: monomial([[1, 2]], [1], 1.0), ValueError, "one entry per coordinate"),
        (lambda: monomial([[1, 2]], [1, -1], 1.0), ValueError, r"exponents\[1\]"),
        (lambda: monomial(3, [1], 1.0), ValueError, "dimension"),
        (lambda: binomial_variance([1.5], 2, 1.0), ValueError, r"x\[0\]"),
        (lambda: binomial_variance_estimate([1], 2, 1.0, noise="DLap"), ValueError, "noise"),
        (lambda: polynomial_variance([1.0], [1], -1.0), ValueError, "epsilon"),
    ],
)
def test_bad_inputs(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize("k", range(2, 12))
def test_laplace_kernel_in_place_is_bitwise_the_jets_route(k):
    """The allocation-free Laplace rule gives the very bits of (f - b^2 f'') / k! from the jets."""
    import math

    from ldpgraph.estimators import polynomials as P

    rng = np.random.default_rng(k)
    y = np.concatenate([rng.laplace(50, 10, 3000), rng.normal(0, 1e6, 2000), rng.uniform(-3, 3, 1000),
                        [0.0, -0.0, 1.0, 2.0, 1e30, -1e30, 0.5 * (k - 1)]])
    y = y[np.abs(y) + k < 2.0 ** min(500, 1000 // k)]  # the unscaled range the kernel uses it on
    b2 = 2.0 / 0.7**2
    f, _, f2 = P._binomial_jets(y, k)
    ref = f2 * -b2
    ref += f
    ref *= 1.0 / math.factorial(k)
    out = np.empty_like(y)
    P._binomial_laplace_in_place(y, k, b2, 1.0 / math.factorial(k), out, [np.empty_like(y) for _ in range(7)])
    assert np.array_equal(np.signbit(out), np.signbit(ref)) and np.array_equal(out, ref)


def test_laplace_rule_on_a_piece_allocates_no_more_than_its_output():
    """Called on every 8,192-value piece of a simulated block, the Laplace rule keeps its
    temporaries in the thread's buffers: a fresh process (whose glibc mmap threshold has not
    grown) would otherwise map, fault in and unmap ~0.85 MB per call (issue 15)."""
    import tracemalloc

    y = np.random.default_rng(0).laplace(50, 10, 8192)
    binomial(y, 3, 1.0, noise="laplace")  # the buffers exist from now on
    tracemalloc.start()
    try:
        binomial(y, 3, 1.0, noise="laplace")
        _cur, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= 3 * y.nbytes  # the output and the float64 copy of the chunk, not ~13 arrays
