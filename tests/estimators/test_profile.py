"""Tests for ldpgraph.estimators.profiles (profiles, histograms, partition functions).

References: ``debias`` (the 1-D operator applied report by report, then summed -- the
definition of the estimate of a separable sum), ``debias_nd`` (brute force over 3^n shifts),
and exact expectations over the DLap pmf (``dlap_exact``). The brute force has an absolute
rounding error up to N u sum |f w| (N = 3^n terms, u = 2^-53), allowed for in the tolerance.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from dlap_exact import exact_expectation, exact_expectation_nd

from ldpgraph._validation import dlap_c
from ldpgraph.estimators.operator import debias, debias_nd
from ldpgraph.estimators.order_statistics import HighVarianceWarning
from ldpgraph.estimators.profiles import (
    histogram,
    histogram_variance,
    partition_function,
    partition_function_variance,
    profile,
    profile_exact_variance,
    profile_variance,
)

EPSILONS = [0.3, 1.0, 2.0, 5.0]
U = 2.0**-53


def _bound(f, y, c):
    n = len(y)
    xi = np.array(list(itertools.product([-1, 0, 1], repeat=n)), dtype=np.int64).reshape(-1, n)
    w = np.prod(np.where(xi == 0, 1 + 2 * c, c), axis=1)
    return xi.shape[0] * U * float(np.abs(np.asarray(f(np.asarray(y) + xi), dtype=float)) @ w)


def _indicator(a, b):
    return lambda z: ((z >= a) & (z < b)).astype(np.float64)


# ---------------------------------------------------------------------------------------------
# profile


@pytest.mark.parametrize("eps", EPSILONS)
def test_profile_equals_per_report_operator(eps):
    rng = np.random.default_rng(int(10 * eps))
    y = rng.integers(-4, 9, size=(3, 40))
    got = profile(y, eps, max_count=7, min_count=-2)
    assert got.shape == (3, 10)
    ref = np.stack([debias(_indicator(k, k + 1), y, eps).sum(axis=-1) for k in range(-2, 8)], axis=-1)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * (1 + 2 * dlap_c(eps)))


def test_profile_equals_bruteforce_small_n():
    rng = np.random.default_rng(1)
    for _ in range(40):
        n = int(rng.integers(1, 7))
        eps = EPSILONS[int(rng.integers(len(EPSILONS)))]
        y = rng.integers(-2, 4, size=n)
        c = dlap_c(eps)
        got = profile(y, eps, max_count=4, min_count=-3)
        for j, k in enumerate(range(-3, 5)):

            def f(z, k=k):
                return (z == k).sum(axis=-1)

            brute = float(debias_nd(f, y, eps))
            assert abs(got[j] - brute) <= 1e-9 * abs(brute) + _bound(f, y, c), (y, k, eps)


@pytest.mark.parametrize(("x", "eps"), [([3], 0.3), ([0, 2], 1.0), ([1, 1, 4], 2.0)])
def test_profile_exactly_unbiased(x, eps):
    x = np.asarray(x)
    for j, k in enumerate(range(-1, 6)):
        e = exact_expectation_nd(lambda z, j=j: profile(z, eps, 5, min_count=-1)[..., j], x, eps)
        assert e == pytest.approx(float((x == k).sum()), abs=1e-10)


def test_profile_sums_to_n_over_full_range_and_truncation_formula():
    rng = np.random.default_rng(2)
    y = rng.integers(-5, 30, size=500)
    for eps in EPSILONS:
        c = dlap_c(eps)
        # every k where phi^_k can be non-zero: min(y) - 1 .. max(y) + 1
        full = profile(y, eps, int(y.max()) + 1, min_count=int(y.min()) - 1)
        assert full.sum() == pytest.approx(y.size, rel=1e-13, abs=1e-12 * c * y.size)
        # window [A, B]: #{A <= y <= B} + c (N_A - N_{A-1} + N_B - N_{B+1})
        a, b = 0, 20

        def cnt(v):
            return int((y == v).sum())

        expected = ((y >= a) & (y <= b)).sum() + c * (cnt(a) - cnt(a - 1) + cnt(b) - cnt(b + 1))
        assert profile(y, eps, b, min_count=a).sum() == pytest.approx(expected, rel=1e-12)


def test_profile_is_unit_bin_histogram():
    rng = np.random.default_rng(3)
    y = rng.integers(-3, 12, size=(2, 5, 30))
    for eps in (0.3, 2.0):
        np.testing.assert_allclose(
            histogram(y, eps, np.arange(-2, 11)), profile(y, eps, 9, min_count=-2), rtol=1e-12, atol=1e-11
        )
        np.testing.assert_allclose(
            histogram_variance(y, eps, np.arange(-2, 11)),
            profile_variance(y, eps, 9, min_count=-2),
            rtol=1e-12,
        )


def test_profile_variance_estimate_is_unbiased_for_exact_variance():
    for x, eps in [([2], 0.3), ([0, 1], 1.0), ([3, 3, 5], 2.0)]:
        x = np.asarray(x)
        exact = profile_exact_variance(x, eps, 6, min_count=-1)
        for j in range(exact.size):
            e = exact_expectation_nd(
                lambda z, j=j, eps=eps: profile_variance(z, eps, 6, min_count=-1)[..., j], x, eps
            )
            assert e == pytest.approx(exact[j], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("eps", [0.05, 0.7, 3.0])
def test_profile_exact_variance_against_pmf_sums(eps):
    # Var phi^_k = sum_i (E h_k(y_i)^2 - 1[x_i = k]), E by summing over the DLap pmf; x values
    # far outside the window exercise the closed-form tails of the geometric filters.
    x = np.array([-30, -3, 0, 0, 4, 5, 5, 5, 9, 60])
    c = dlap_c(eps)
    got = profile_exact_variance(x, eps, 8, min_count=-1)
    for j, k in enumerate(range(-1, 9)):

        def h2(z, k=k):
            return ((1 + 2 * c) * (z == k) - c * (z == k - 1) - c * (z == k + 1)) ** 2

        ref = exact_expectation(h2, x, eps).sum() - (x == k).sum()
        assert got[j] == pytest.approx(ref, rel=1e-10)
    # leading axes
    both = profile_exact_variance(np.stack([x, x[::-1]]), eps, 8, min_count=-1)
    np.testing.assert_allclose(both, np.stack([got, got]), rtol=1e-13)


# ---------------------------------------------------------------------------------------------
# histogram


def test_histogram_equals_per_report_operator():
    rng = np.random.default_rng(4)
    y = rng.integers(-6, 25, size=(4, 60))
    edges = [-np.inf, 0, 1, 2, 5, 6, 20, np.inf]
    for eps in EPSILONS:
        got = histogram(y, eps, edges)
        ref = np.stack(
            [debias(_indicator(a, b), y, eps).sum(-1) for a, b in zip(edges[:-1], edges[1:], strict=True)], -1
        )
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-11)
        np.testing.assert_allclose(got.sum(-1), 60, rtol=1e-13)  # bins cover Z: sum is n
        var = histogram_variance(y, eps, edges)
        ref_var = []
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            g = debias(_indicator(a, b), y, eps)
            ref_var.append((g * g - g).sum(-1))
        np.testing.assert_allclose(var, np.stack(ref_var, -1), rtol=1e-12, atol=1e-11)


def test_histogram_exactly_unbiased():
    edges = [-1, 1, 2, 6]
    for x, eps in [([1], 0.3), ([0, 5], 1.0), ([2, 1, 7], 2.0)]:
        x = np.asarray(x)
        for j, (a, b) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
            e = exact_expectation_nd(lambda z, j=j, eps=eps: histogram(z, eps, edges)[..., j], x, eps)
            assert e == pytest.approx(float(((x >= a) & (x < b)).sum()), abs=1e-10)


@pytest.mark.parametrize(
    ("bins", "exc", "match"),
    [
        ([3], ValueError, "at least 2"),
        ([[0, 1], [2, 3]], ValueError, "1-D"),
        ([0, 2, 2], ValueError, "strictly increasing"),
        ([0, 1.5, 3], ValueError, "integers"),
        ([0, np.inf, 5], ValueError, "only the first"),
        ([np.inf, 5], ValueError, "only the first"),
        ([0, np.nan], ValueError, "nan"),
        ([True, False], TypeError, "bins"),
        (["a", "b"], TypeError, "bins"),
    ],
)
def test_histogram_bad_bins(bins, exc, match):
    with pytest.raises(exc, match=match):
        histogram([1, 2], 1.0, bins)


# ---------------------------------------------------------------------------------------------
# partition function


@pytest.mark.parametrize(("t", "eps"), [(1.3, 1.0), (0.8, 1.0), (-1.2, 1.0), (2.0, 2.0), (1.05, 0.3)])
def test_partition_function_matches_operator_and_is_unbiased(t, eps):
    rng = np.random.default_rng(5)
    y = rng.integers(-5, 9, size=(2, 25))
    got = partition_function(y, t, eps)
    ref = debias(lambda z: np.float64(t) ** z, y, eps).sum(-1)
    np.testing.assert_allclose(got, ref, rtol=1e-11)
    y6 = y[0, :5]
    c = dlap_c(eps)
    brute = float(debias_nd(lambda z: (np.float64(t) ** z).sum(-1), y6, eps))
    bound = _bound(lambda z: (np.float64(t) ** z).sum(-1), y6, c)
    assert abs(float(partition_function(y6, t, eps)) - brute) <= 1e-9 * abs(brute) + bound
    # exact unbiasedness and unbiased variance estimate (need |ln|t|| < eps / 2)
    x = np.array([2, -1])
    z_true = float((np.float64(t) ** x).sum())
    assert exact_expectation_nd(lambda z: partition_function(z, t, eps), x, eps) == pytest.approx(
        z_true, rel=1e-9
    )
    # E[g^2] has terms ~ (p t^2)^|eta| that decay slower than the pmf (0.62^K at t = 1.3,
    # epsilon = 1): truncate the support at pmf tail 1e-40, where (p t^2)^K < 1e-12 here.
    e_g2 = exact_expectation_nd(lambda z: partition_function(z, t, eps) ** 2, x, eps, tail=1e-40)
    e_v = exact_expectation_nd(lambda z: partition_function_variance(z, t, eps), x, eps, tail=1e-40)
    assert e_v == pytest.approx(e_g2 - z_true**2, rel=1e-8, abs=1e-10)


def test_partition_function_vector_t_and_shapes():
    y = np.array([[0, 1, 2], [3, 3, -1]])
    ts = np.array([[0.9, 1.0], [1.1, -1.0]])
    out = partition_function(y, ts, 1.0)
    assert out.shape == (2, 2, 2)
    for idx in np.ndindex(2, 2):
        np.testing.assert_allclose(out[(slice(None),) + idx], partition_function(y, float(ts[idx]), 1.0))
    np.testing.assert_allclose(out[:, 0, 1], 3.0)  # t = 1: counts, no noise correction
    assert partition_function_variance(y, 1.0, 1.0).tolist() == [0.0, 0.0]


def test_partition_function_extreme_exponents():
    eps = 2.0
    c = dlap_c(eps)
    kappa = 1 - c * (2.0 - 1) ** 2 / 2.0
    # 2^-1050 underflows on its own; the overflow-safe path must still give kappa * 32
    assert float(partition_function([-1050, 5], 2.0, eps)) == pytest.approx(kappa * 32, rel=1e-12)
    # the true value exceeds the float range: inf, without a RuntimeWarning (errors in tests)
    assert np.isposinf(partition_function([2000, 3], 1.5, eps))
    assert float(partition_function([1000], 2.0, eps)) == pytest.approx(kappa * 2.0**1000, rel=1e-12)


def test_partition_function_conditions():
    with pytest.raises(ValueError, match=r"E\|t\^y\| is infinite.*\|t\| in \(0.367879, 2.71828\)"):
        partition_function([1, 2], 3.0, 1.0)
    with pytest.raises(ValueError, match="infinite"):
        partition_function([1, 2], -0.3, 1.0)  # 1/|t| too large
    with pytest.raises(ValueError, match="infinite"):
        partition_function([1, 2], math.e, 1.0)  # boundary: p |t| = 1
    with pytest.raises(ValueError, match="non-zero"):
        partition_function([1, 2], 0.0, 1.0)
    with pytest.raises(ValueError, match="finite"):
        partition_function([1, 2], np.inf, 1.0)
    with pytest.raises(TypeError, match="t must be real"):
        partition_function([1, 2], 1j, 1.0)
    # finite mean, infinite variance: a warning, and no variance estimate
    with pytest.warns(HighVarianceWarning, match="infinite variance"):
        partition_function([1, 2], 2.0, 1.0)
    with pytest.raises(ValueError, match="variance"):
        partition_function_variance([1, 2], 2.0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        partition_function([1, 2], 1.5, 1.0)  # ln 1.5 < 1/2: finite variance, no warning
    # sensitivity scales epsilon: t = 1.5 needs epsilon/sensitivity > ln 1.5
    with pytest.raises(ValueError, match="infinite"):
        partition_function([1, 2], 1.5, 1.0, sensitivity=3.0)


# ---------------------------------------------------------------------------------------------
# bad inputs


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda: profile([1, 2], 1.0, -1), ValueError, "max_count"),
        (lambda: profile([1, 2], 1.0, 3, min_count=4), ValueError, "max_count must be an integer >= 4"),
        (lambda: profile([1, 2], 1.0, 2.5), TypeError, "max_count"),
        (lambda: profile([1, 2], 1.0, 3, min_count=None), TypeError, "min_count"),
        (lambda: profile([1.5, 2], 1.0, 3), ValueError, "not an integer"),
        (lambda: profile(3, 1.0, 3), ValueError, "dimension"),
        (lambda: profile([1, 2], -1.0, 3), ValueError, "epsilon"),
        (lambda: profile_variance([1, 2], 1.0, 3, sensitivity=0), ValueError, "sensitivity"),
        (lambda: profile_exact_variance([0.5], 1.0, 3), ValueError, r"x\[0\]"),
        (lambda: partition_function([[1.5]], 1.0, 1.0), ValueError, "not an integer"),
    ],
)
def test_bad_inputs(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_empty_rows():
    assert profile(np.zeros((2, 0), dtype=int), 1.0, 2).tolist() == [[0.0] * 3] * 2
    assert partition_function(np.zeros((2, 0), dtype=int), 1.2, 1.0).tolist() == [0.0, 0.0]


def test_extreme_epsilons_stay_finite():
    # p = e^-800 underflows: no noise, zero variance, no overflow warnings (errors in tests)
    np.testing.assert_array_equal(profile_exact_variance([5, 100, -100], 800.0, 6, min_count=4), 0.0)
    np.testing.assert_array_equal(profile([5, 6], 800.0, 6, min_count=4), [0.0, 1.0, 1.0])
    # tiny epsilon: huge but finite, positive
    v = profile_exact_variance([5, 100, -100], 1e-3, 6, min_count=4)
    assert np.isfinite(v).all() and (v > 0).all()
