"""Tests of ldpgraph.estimators.symmetric: against the brute-force 3^n operator (float and exact
rational), exact unbiasedness and variances by summation over the DLap law and by Gauss-Laguerre
quadrature (exact for polynomials) for Laplace noise, brute-force subset formulas, large values."""

from __future__ import annotations

import importlib
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from dlap_exact import exact_expectation_nd

from ldpgraph._validation import dlap_c
from ldpgraph.estimators.operator import debias_nd
from ldpgraph.estimators.symmetric import (
    elementary_symmetric,
    elementary_symmetric_variance,
    elementary_symmetric_variance_estimate,
    sample_variance,
    sample_variance_variance,
    sample_variance_variance_estimate,
    square_of_sum,
    square_of_sum_variance,
    square_of_sum_variance_estimate,
    sum_of_products,
    sum_of_products_variance,
    sum_of_products_variance_estimate,
)

symmetric = importlib.import_module("ldpgraph.estimators.symmetric")

EPSILONS = [0.3, 1.0, 3.0]
NOISES = ["dlap", "laplace"]


# ---------------------------------------------------------------------------------------------
# references
# ---------------------------------------------------------------------------------------------


def esym_brute(z, r):
    """e_r over the last axis by enumerating index sets (float)."""
    z = np.asarray(z, dtype=np.float64)
    n = z.shape[-1]
    out = np.zeros(z.shape[:-1])
    for S in itertools.combinations(range(n), r):
        out = out + (np.prod(z[..., list(S)], axis=-1) if S else 1.0)
    return out


def esym_exact(v, r):
    return sum((math.prod(v[i] for i in S) for S in itertools.combinations(range(len(v)), r)), 0)


def debias_nd_exact(f, y, c):
    """Formula (2) in exact rational arithmetic for one row y (ints) and f on tuples."""
    C = Fraction(c)
    alpha = {0: 1 + 2 * C, -1: -C, 1: -C}
    total = Fraction(0)
    for xi in itertools.product((-1, 0, 1), repeat=len(y)):
        w = math.prod(alpha[s] for s in xi)
        total += w * f(tuple(int(a) + s for a, s in zip(y, xi, strict=True)))
    return total


def sigma2(noise, eps):
    return 2 * dlap_c(eps) if noise == "dlap" else 2 / eps**2


def mu4(noise, eps):
    c = dlap_c(eps)
    return 2 * c + 24 * c * c if noise == "dlap" else 24 / eps**4


def laguerre_expectation(h, x, b, n, nodes=16):
    """E[h(x + L)], L iid Lap(b) in n coordinates; exact for polynomials of degree < 2 nodes."""
    t, w = np.polynomial.laguerre.laggauss(nodes)
    z1 = np.concatenate([b * t, -b * t])
    w1 = np.concatenate([w, w]) / 2
    shifts = np.stack([g.ravel() for g in np.meshgrid(*([z1] * n), indexing="ij")], axis=-1)
    weights = np.ones(shifts.shape[0])
    for g in np.meshgrid(*([w1] * n), indexing="ij"):
        weights = weights * g.ravel()
    vals = np.asarray(h(np.asarray(x, dtype=float) + shifts), dtype=float)
    return math.fsum(vals * weights)


def expectation(noise, h, x, eps, tail=1e-30):
    if noise == "dlap":
        return exact_expectation_nd(h, x, eps, tail=tail)
    return laguerre_expectation(h, x, 1 / eps, len(x))


def assert_close(got, ref, scale=0.0, rtol=1e-9):
    got, ref = np.asarray(got, dtype=float), np.asarray(ref, dtype=float)
    tol = rtol * np.abs(ref) + 1e-13 * np.asarray(scale) + 1e-300
    bad = ~(np.abs(got - ref) <= tol)
    assert not bad.any(), f"max excess {np.max(np.abs(got - ref) - tol)}; got {got[bad]} ref {ref[bad]}"


def cube_scale(f, y, c):
    """(1+4c)^n max |f| over the cube around each row: error scale of the 3^n-point sum."""
    n = y.shape[-1]
    cube = np.array(list(itertools.product([-1, 0, 1], repeat=n)))
    return (1 + 4 * c) ** n * np.max(np.abs(f(y[:, None, :] + cube[None])), axis=1)


def reports(rng, n, rows=6):
    y = rng.integers(-6, 11, size=(rows, n))
    y[0, :] = y[0, 0]  # all tied
    y[1, 0] = -4  # negative
    return y


# ---------------------------------------------------------------------------------------------
# fast forms equal the brute-force operator
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("n", range(1, 7))
def test_elementary_symmetric_equals_debias_nd(eps, n):
    rng = np.random.default_rng(n)
    y = reports(rng, n)
    c = dlap_c(eps)
    for r in range(0, n + 2):
        f = lambda z, r=r: esym_brute(z, r)  # noqa: E731
        got = elementary_symmetric(y, r, eps)
        assert got.shape == (y.shape[0],)
        assert_close(got, debias_nd(f, y, eps), cube_scale(f, y, c))
        if n <= 4 or r == 2:
            exact = [float(debias_nd_exact(lambda v, r=r: esym_exact(v, r), row, c)) for row in y[:3]]
            assert_close(got[:3], exact, rtol=1e-14)
    np.testing.assert_array_equal(sum_of_products(y, eps), elementary_symmetric(y, 2, eps))


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("n", range(1, 7))
def test_square_of_sum_and_sample_variance_equal_debias_nd(eps, n):
    rng = np.random.default_rng(10 + n)
    y = reports(rng, n)
    c = dlap_c(eps)
    f = lambda z: np.asarray(z, dtype=float).sum(axis=-1) ** 2  # noqa: E731
    got = square_of_sum(y, eps)
    assert_close(got, debias_nd(f, y, eps), cube_scale(f, y, c))
    exact = [float(debias_nd_exact(lambda v: sum(v) ** 2, row, c)) for row in y[:2]]
    assert_close(got[:2], exact, f(y[:2]) + n * 2 * c)
    for ddof in range(0, min(n, 2)):
        f = lambda z, ddof=ddof: np.var(np.asarray(z, dtype=float), axis=-1, ddof=ddof)  # noqa: E731
        got = sample_variance(y, eps, ddof=ddof)
        assert_close(got, debias_nd(f, y, eps), cube_scale(f, y, c))

        def fx(v, ddof=ddof):
            m = Fraction(sum(v), len(v))
            return sum((Fraction(a) - m) ** 2 for a in v) / (len(v) - ddof)

        exact = [float(debias_nd_exact(fx, row, c)) for row in y[:2]]
        assert_close(got[:2], exact, np.abs(f(y[:2])) + 2 * c * n)


# ---------------------------------------------------------------------------------------------
# exact unbiasedness, exact variances, unbiased variance estimates
# ---------------------------------------------------------------------------------------------

CASES = [[3], [2, -1], [0, 5], [4, 4], [1, -2, 3]]


@pytest.mark.parametrize("noise", NOISES)
@pytest.mark.parametrize("x", CASES)
def test_unbiased(noise, x):
    eps = 1.0 if len(x) < 3 else 2.0
    xf = np.array(x, dtype=float)
    tail = 1e-20 if len(x) == 3 else 1e-30
    for r in range(0, len(x) + 1):
        got = expectation(noise, lambda z, r=r: elementary_symmetric(z, r, eps, noise=noise), x, eps, tail)
        scale = expectation(noise, lambda z, r=r: np.abs(esym_brute(z, r)), x, eps, tail)
        assert_close(got, esym_brute(xf, r), scale)
    got = expectation(noise, lambda z: square_of_sum(z, eps, noise=noise), x, eps, tail)
    assert_close(got, xf.sum() ** 2, xf.sum() ** 2 + 10 * len(x) * sigma2(noise, eps))
    for ddof in range(0, len(x)):
        got = expectation(
            noise, lambda z, ddof=ddof: sample_variance(z, eps, noise=noise, ddof=ddof), x, eps, tail
        )
        assert_close(got, np.var(xf, ddof=ddof), 10 * len(x) * sigma2(noise, eps) + np.var(xf))


@pytest.mark.parametrize("noise", NOISES)
@pytest.mark.parametrize("x", CASES[:4])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_variances_and_estimates_exact(noise, x, eps):
    xf = np.array(x, dtype=float)
    xi = np.array(x) if noise == "dlap" else xf
    n = len(x)
    for r in range(0, n + 1):
        e = esym_brute(xf, r)
        ref = expectation(
            noise, lambda z, r=r, e=e: (elementary_symmetric(z, r, eps, noise=noise) - e) ** 2, x, eps
        )
        assert_close(elementary_symmetric_variance(xi, r, eps, noise=noise), ref)
        est = expectation(
            noise, lambda z, r=r: elementary_symmetric_variance_estimate(z, r, eps, noise=noise), x, eps
        )
        assert_close(est, ref, ref + 1.0)
    S2 = xf.sum() ** 2
    ref = expectation(noise, lambda z: (square_of_sum(z, eps, noise=noise) - S2) ** 2, x, eps)
    assert_close(square_of_sum_variance(xi, eps, noise=noise), ref)
    est = expectation(noise, lambda z: square_of_sum_variance_estimate(z, eps, noise=noise), x, eps)
    assert_close(est, ref, ref)
    for ddof in range(0, n):
        v = np.var(xf, ddof=ddof)
        ref = expectation(
            noise,
            lambda z, ddof=ddof, v=v: (sample_variance(z, eps, noise=noise, ddof=ddof) - v) ** 2,
            x,
            eps,
        )
        assert_close(sample_variance_variance(xi, eps, noise=noise, ddof=ddof), ref)
        est = expectation(
            noise,
            lambda z, ddof=ddof: sample_variance_variance_estimate(z, eps, noise=noise, ddof=ddof),
            x,
            eps,
        )
        assert_close(est, ref, ref + 1.0)


@pytest.mark.parametrize("noise", NOISES)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 6])
def test_elementary_symmetric_variance_subset_formula(noise, n):
    """Var e_r(y) = sum over non-empty U, |U| <= r, of sigma^{2|U|} e_{r-|U|}(x without U)^2,
    evaluated exactly by enumerating U; the estimate at y = x is the same sum with -sigma^2, negated."""
    rng = np.random.default_rng(50 + n)
    eps = 0.8
    x = rng.integers(-5, 9, size=n)
    s2 = Fraction(sigma2(noise, eps))
    for r in range(0, n + 2):
        ref = Fraction(0)
        ref_est = Fraction(0)
        for u in range(1, min(r, n) + 1):
            for U in itertools.combinations(range(n), u):
                rest = [int(x[i]) for i in range(n) if i not in U]
                e2 = Fraction(esym_exact(rest, r - u)) ** 2
                ref += s2**u * e2
                ref_est -= (-s2) ** u * e2
        xin = x if noise == "dlap" else x.astype(float)
        assert_close(elementary_symmetric_variance(xin, r, eps, noise=noise), float(ref))
        assert_close(
            elementary_symmetric_variance_estimate(xin, r, eps, noise=noise), float(ref_est), abs(ref)
        )
    S = int(x.sum())
    closed = s2 * sum((S - int(v)) ** 2 for v in x) + s2 * s2 * Fraction(n * (n - 1), 2)
    assert_close(
        sum_of_products_variance(x if noise == "dlap" else x.astype(float), eps, noise=noise), float(closed)
    )
    closed_est = s2 * sum((S - int(v)) ** 2 for v in x) - s2 * s2 * Fraction(n * (n - 1), 2)
    assert_close(
        sum_of_products_variance_estimate(x if noise == "dlap" else x.astype(float), eps, noise=noise),
        float(closed_est),
        abs(closed),
    )


def test_blocked_product_trees(monkeypatch):
    """Long last axes are split into blocks; the result must not depend on the block size."""
    rng = np.random.default_rng(5)
    y = rng.integers(-3, 40, size=(4, 301))
    want = [elementary_symmetric(y, r, 1.0) for r in range(4)]
    want_v = [elementary_symmetric_variance(y, r, 1.0) for r in range(1, 4)]
    monkeypatch.setattr(symmetric, "_TREE_BUDGET", 37)
    for r in range(4):
        assert_close(elementary_symmetric(y, r, 1.0), want[r], rtol=1e-12)
    for r in range(1, 4):
        assert_close(elementary_symmetric_variance(y, r, 1.0), want_v[r - 1], rtol=1e-12)
    yf = y.astype(float)
    assert_close(want[1], yf.sum(axis=1), rtol=1e-15)
    assert_close(want[2], (yf.sum(axis=1) ** 2 - (yf**2).sum(axis=1)) / 2, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# large values
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps", [0.3, 3.0])
def test_large_values_exact(eps):
    x = np.array([10**7, 10**7 - 1, 9_999_989, 3, -(10**7) + 7])
    c = Fraction(dlap_c(eps))
    s2 = 2 * c
    m4 = 2 * c + 24 * c * c
    n = x.size
    xs = [int(v) for v in x]
    for r in range(0, n + 1):
        assert_close(elementary_symmetric(x, r, eps), float(esym_exact(xs, r)), rtol=1e-13)
    ref = Fraction(0)
    for u in range(1, 4):
        for U in itertools.combinations(range(n), u):
            ref += s2**u * Fraction(esym_exact([xs[i] for i in range(n) if i not in U], 3 - u)) ** 2
    assert_close(elementary_symmetric_variance(x, 3, eps), float(ref), rtol=1e-12)
    S = sum(xs)
    assert_close(square_of_sum(x, eps), float(S * S - n * s2), rtol=1e-13)
    ref = 4 * n * s2 * S * S + n * (m4 - s2 * s2) + 2 * n * (n - 1) * s2 * s2
    assert_close(square_of_sum_variance(x, eps), float(ref), rtol=1e-13)
    # nearly equal large values: the sample variance must not cancel
    z = np.array([10**7 + 1, 10**7 + 2, 10**7 + 2, 10**7 + 5])
    zs = [int(v) for v in z]
    mean = Fraction(sum(zs), len(zs))
    Q = sum((v - mean) ** 2 for v in zs)
    assert_close(sample_variance(z, eps, ddof=1), float((Q - 3 * s2) / 3), rtol=1e-12)
    K = (m4 - 3 * s2 * s2) * Fraction(9, 4) + 2 * s2 * s2 * 3
    assert_close(sample_variance_variance(z, eps, ddof=1), float((4 * s2 * Q + K) / 9), rtol=1e-12)


@pytest.mark.parametrize("noise", NOISES)
def test_order_beyond_n_is_zero_without_allocation(noise):
    """e_r = 0 for r > n: answered without the r + 1 (or (r+1)^2) coefficients (r = 10^12)."""
    y = np.array([[1, 2], [-3, 4]]) if noise == "dlap" else np.array([[1.5, 2.0], [-3.0, 4.25]])
    for r in (3, 10**12):
        for fn in (elementary_symmetric, elementary_symmetric_variance, elementary_symmetric_variance_estimate):
            out = fn(y, r, 1.0, noise=noise)
            assert out.shape == (2,) and out.tolist() == [0.0, 0.0], (fn.__name__, r)
    # r = n still goes through the product: e_2 = y_0 y_1
    assert elementary_symmetric(y, 2, 1.0, noise=noise).tolist() == [float(a * b) for a, b in y]
    assert elementary_symmetric(np.zeros((3, 0)), 0, 1.0).tolist() == [1.0, 1.0, 1.0]


# ---------------------------------------------------------------------------------------------
# bad inputs
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: elementary_symmetric([[1, 2]], -1, 1.0), ValueError, "r must be an integer >= 0"),
        (lambda: elementary_symmetric([[1, 2]], 1.5, 1.0), TypeError, "r must be an integer"),
        (lambda: elementary_symmetric([[1, 2]], 1, 0.0), ValueError, "epsilon"),
        (lambda: elementary_symmetric([[1, 2.5]], 1, 1.0), ValueError, r"y\[0, 1\] = 2.5 is not an integer"),
        (lambda: sum_of_products(5, 1.0), ValueError, "dimension"),
        (lambda: square_of_sum([[1, 2]], 1.0, noise="gauss"), ValueError, "noise must be one of"),
        (lambda: square_of_sum([[np.inf]], 1.0, noise="laplace"), ValueError, "not finite"),
        (lambda: sample_variance([[1, 2]], 1.0, ddof=2), ValueError, "ddof must be < n"),
        (lambda: sample_variance([[1, 2]], 1.0, ddof=-1), ValueError, "ddof"),
        (lambda: sample_variance_variance([[1.5, 2]], 1.0), ValueError, r"x\[0, 0\]"),
        (lambda: elementary_symmetric_variance([[1, 2]], 2, 1.0, -1), ValueError, "sensitivity"),
        (lambda: square_of_sum_variance_estimate([[1, 2]], 1.0, noise=None), TypeError, "noise"),
    ],
)
def test_bad_inputs(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
