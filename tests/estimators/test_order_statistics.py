"""Tests for ldpgraph.estimators.order_statistics.

References used here, none of them the code under test:
- ``debias_nd``: the brute-force operator (2) over all 3^n shifts, in float64;
- ``_exact_operator``: the same sum in exact rational arithmetic at the float value of c
  (the weights are integers up to a common power of two, so there is no rounding at all);
- ``exact_expectation_nd``: E[g(x + eta)] summed over the DLap pmf (tail < 1e-15).

Why two brute-force references: the weights of (2) are alternating and as large as
(1+2c)^n (2e10 for n = 8 at epsilon = 0.3), so the float64 brute force carries an absolute
rounding error up to N u sum_xi |f(y+xi) w_xi| (N = 3^n terms, u = 2^-53; a rigorous bound
for a dot product). Against it we allow 1e-9 relative plus that bound. Against the exact value
we require 1e-12 relative to the scale max(1, |exact|, |H1|, |G0|), where H1 and G0 (the exact
weights the estimate puts on s+1 and s-1, computed exactly as the operator applied to the
indicators [x_(k) >= s+1] and [x_(k) <= s-1]) are what the fast form subtracts: their
difference can cancel (7 tied reports at epsilon 0.3: H1 = G0 = 1e9, g = s exactly), and an
error of 1e-16 of the weights is the best any float64 evaluation of g = s + H1 - G0 attains.
This tests that the fast form is stable, which the float64 brute force is not.
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from dlap_exact import exact_expectation_nd

import ldpgraph.estimators.order_statistics as os_mod
from ldpgraph._validation import dlap_c
from ldpgraph.estimators.operator import debias_nd
from ldpgraph.estimators.order_statistics import (
    HighVarianceWarning,
    maximum,
    median,
    minimum,
    order_statistic,
    order_statistic_variance,
)

EPSILONS = [0.3, 1.0, 2.0, 5.0]
U = 2.0**-53


def _cube(n):
    return np.array(list(itertools.product([-1, 0, 1], repeat=n)), dtype=np.int64).reshape(-1, n)


def _exact_operator(f, y, c):
    """Operator (2) in exact rational arithmetic (f integer valued), as a Fraction."""
    y = np.asarray(y, dtype=np.int64)
    n = y.shape[-1]
    xi = _cube(n)
    vals = np.asarray(f(y + xi)).astype(np.int64)
    zeros = (xi == 0).sum(axis=1)
    cc = Fraction(c)
    a0, a1 = 1 + 2 * cc, -cc
    return sum(
        (a0**z * a1 ** (n - z) * int(vals[zeros == z].sum()) for z in range(n + 1)),
        Fraction(0),
    )


def _weight_scale(y, k, c):
    """max(1, |H1|, |G0|) for the k-th order statistic, computed exactly."""
    s = np.sort(y)[k]
    h1 = _exact_operator(lambda z: (np.sort(z, axis=-1)[..., k] >= s + 1).astype(np.int64), y, c)
    g0 = _exact_operator(lambda z: (np.sort(z, axis=-1)[..., k] <= s - 1).astype(np.int64), y, c)
    return max(1.0, abs(float(h1)), abs(float(g0)))


def _bruteforce_bound(f, y, c):
    """Rigorous rounding-error bound N u sum |f(y+xi) w_xi| of the float64 brute force."""
    n = len(y)
    xi = _cube(n)
    w = np.prod(np.where(xi == 0, 1 + 2 * c, c), axis=1)
    return xi.shape[0] * U * float(np.abs(np.asarray(f(np.asarray(y) + xi), dtype=float)) @ w)


def _kth(k):
    return lambda z: np.sort(z, axis=-1)[..., k]


def _random_cases(seed, count, nmax=8):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(1, nmax + 1))
        lo = int(rng.integers(-6, 2))
        y = rng.integers(lo, lo + int(rng.integers(1, 5)), size=n)  # narrow range: many ties
        yield y, int(rng.integers(0, n)), EPSILONS[int(rng.integers(len(EPSILONS)))]


# ---------------------------------------------------------------------------------------------
# fast form == brute force


@pytest.mark.parametrize("seed", range(4))
def test_order_statistic_matches_bruteforce(seed):
    for y, k, eps in _random_cases(seed, 25):
        c = dlap_c(eps)
        f = _kth(k)
        got = float(order_statistic(y, k, eps, warn_above=None))
        exact = float(_exact_operator(f, y, c))
        scale = max(abs(exact), _weight_scale(y, k, c))
        assert abs(got - exact) <= 1e-12 * scale, (y, k, eps, got, exact)
        brute = float(debias_nd(f, y, eps))
        assert abs(got - brute) <= 1e-9 * abs(brute) + _bruteforce_bound(f, y, c), (y, k, eps)


@pytest.mark.parametrize("seed", range(3))
def test_min_max_median_match_bruteforce(seed):
    for y, _, eps in _random_cases(100 + seed, 25):
        c = dlap_c(eps)
        n = y.size
        for fast, f in [
            (maximum, lambda z: z.max(axis=-1)),
            (minimum, lambda z: z.min(axis=-1)),
        ]:
            got = float(fast(y, eps, warn_above=None))
            exact = float(_exact_operator(f, y, c))
            k = n - 1 if fast is maximum else 0
            scale = max(abs(exact), _weight_scale(y, k, c))
            assert abs(got - exact) <= 1e-12 * scale, (fast.__name__, y, eps)
        # median: 2 * median is integer valued, so it also has an exact reference. For even n it
        # is the mean of two order-statistic estimates which can be huge and of opposite signs
        # (8 tied reports at epsilon 0.3: +-2.2e10 summing to -2): the attainable accuracy is
        # relative to their weights, not to the median's size.
        got = float(median(y, eps, warn_above=None))
        lo, hi = (n - 1) // 2, n // 2
        exact = float(_exact_operator(lambda z, lo=lo, hi=hi: _kth(lo)(z) + _kth(hi)(z), y, c)) / 2
        scale = max(abs(exact), *(_weight_scale(y, k, c) for k in (lo, hi)))
        assert abs(got - exact) <= 1e-12 * scale, (y, eps, got, exact)
        brute = float(debias_nd(lambda z: np.median(z, axis=-1), y, eps))
        bound = _bruteforce_bound(lambda z: np.median(z, axis=-1), y, c)
        assert abs(got - brute) <= 1e-9 * abs(brute) + bound


def test_symmetric_tie_block_is_exact():
    # n odd, all reports tied, k the middle: H1 = G0 by symmetry, so g = s exactly.
    for n in (3, 7, 101):
        for eps in (0.3, 2.0):
            assert order_statistic(np.full(n, -4), n // 2, eps, warn_above=None) == -4.0


def test_extremes_are_extreme_order_statistics():
    rng = np.random.default_rng(5)
    y = rng.integers(-3, 3, size=(50, 12))
    for eps in EPSILONS:
        np.testing.assert_allclose(
            maximum(y, eps, warn_above=None), order_statistic(y, -1, eps, warn_above=None), rtol=1e-12
        )
        np.testing.assert_allclose(
            minimum(y, eps, warn_above=None), order_statistic(y, 0, eps, warn_above=None), rtol=1e-12
        )


def test_max_closed_form_by_hand():
    # M = 5, a = 2 reports at 5, b = 1 report at 4: g = 6 - (1+c)^2 - c^2 (1+c)
    c = dlap_c(1.0)
    expected = 6 - (1 + c) ** 2 - c**2 * (1 + c)
    assert float(maximum([5, 4, 5, 0], 1.0)) == pytest.approx(expected, rel=1e-14)
    # minimum mirrors it: min = 0 (a = 2), one report at 1
    assert float(minimum([0, 1, 0, 7], 1.0)) == pytest.approx(-(expected - 6) - 1, rel=1e-14)


# ---------------------------------------------------------------------------------------------
# exact unbiasedness: E over the noise law


@pytest.mark.parametrize(
    ("x", "eps"),
    [([4], 0.3), ([2, 2], 0.3), ([0, 1], 1.0), ([3, -1], 2.0), ([1, 1, 2], 1.5), ([5, 0, 5], 2.0)],
)
def test_exact_unbiasedness(x, eps):
    x = np.asarray(x)
    n = x.size
    for k in range(n):
        truth = float(np.sort(x)[k])

        def g(z, k=k):
            return order_statistic(z, k, eps, warn_above=None)

        assert exact_expectation_nd(g, x, eps) == pytest.approx(truth, abs=1e-9)
        # the variance estimate is unbiased for E[g^2] - truth^2
        ev = exact_expectation_nd(lambda z, k=k: order_statistic_variance(z, k, eps), x, eps)
        eg2 = exact_expectation_nd(lambda z, g=g: g(z) ** 2, x, eps)
        assert ev == pytest.approx(eg2 - truth**2, rel=1e-9, abs=1e-9)
    m = exact_expectation_nd(lambda z: median(z, eps, warn_above=None), x, eps)
    assert m == pytest.approx(float(np.median(x)), abs=1e-9)


def test_variance_single_report_is_noise_variance():
    p = math.exp(-0.7)
    np.testing.assert_allclose(order_statistic_variance([[3], [-8]], 0, 0.7), 2 * p / (1 - p) ** 2)


# ---------------------------------------------------------------------------------------------
# large n


def test_separated_values_give_plain_order_statistic_exactly():
    # If the k-th smallest report s is unique and no report equals s - 1 or s + 1, the weights on
    # s-1 and s+1 are both -c and cancel: g = s exactly. Reports elsewhere may tie arbitrarily.
    rng = np.random.default_rng(0)
    n = 10_000
    y = 3 * rng.permutation(n)  # all gaps 3
    for k in (0, 17, n // 2, n - 1):
        for eps in (0.01, 0.3, 2.0):
            assert order_statistic(y, k, eps) == np.sort(y)[k]
    assert median(np.append(y, 3 * n + 3), 0.01) == np.median(np.append(y, 3 * n + 3))
    far = np.concatenate([np.full(5000, -7), [4], np.full(4999, 9)])
    assert order_statistic(far, 5000, 0.05) == 4.0
    assert maximum(far, 0.05, warn_above=None) != 9.0  # the top has 4999 ties: not the plain maximum


def test_large_n_depends_only_on_neighbourhood():
    # g depends on y only through s, the counts at s-1, s, s+1 and r = k + 1 - #{y <= s-1}:
    # dropping m reports <= s - 2 (and k -> k - m) and any reports >= s + 2 leaves it unchanged,
    # which reduces a 10^4 problem to one of 6 reports that the exact brute force can check.
    rng = np.random.default_rng(1)
    core = np.array([10, 10, 11, 11, 9, 12])
    below = rng.integers(-50, 8, size=6000)  # all <= min(core) - 2
    above = rng.integers(14, 90, size=3994)
    y = rng.permutation(np.concatenate([below, core, above]))
    for k_core in range(core.size):
        for eps in (0.3, 2.0):
            c = dlap_c(eps)
            big = order_statistic(y, below.size + k_core, eps, warn_above=None)
            small = order_statistic(core, k_core, eps, warn_above=None)
            assert big == small
            exact = float(_exact_operator(_kth(k_core), core, c))
            assert abs(float(small) - exact) <= 1e-12 * max(1, abs(exact))


def test_vectorized_over_leading_axes():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 5, size=(2, 3, 7))
    out = order_statistic(y, 3, 1.0, warn_above=None)
    assert out.shape == (2, 3)
    for idx in np.ndindex(2, 3):
        assert out[idx] == order_statistic(y[idx], 3, 1.0, warn_above=None)
    assert maximum(y, 1.0, warn_above=None).shape == (2, 3)
    assert median(y[0, 0], 1.0, warn_above=None).shape == ()


def test_sensitivity_enters_through_epsilon_over_sensitivity():
    y = [3, 4, 4, 6]
    assert order_statistic(y, 1, 1.0, 2.0, warn_above=None) == pytest.approx(
        order_statistic(y, 1, 0.5, warn_above=None), rel=1e-13
    )


# ---------------------------------------------------------------------------------------------
# variance warnings, overflow, FFT path


def test_high_variance_warning_on_ties():
    with pytest.warns(HighVarianceWarning, match=r"magnitude up to .*times the weight 1 \+ 2c"):
        maximum([7, 7, 7, 7, 7], 0.1)
    with pytest.warns(HighVarianceWarning, match="magnitude"):
        median(np.full(101, 3), 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        maximum([7, 7, 7, 7, 7], 0.1, warn_above=None)
        order_statistic(3 * np.arange(100), 50, 0.1)  # isolated: weights 1+2c, -c


def test_overflow_returns_signed_infinity_with_warning():
    # a = 1000 reports at the top: H1 = 1 - (1+c)^a dominates G0 = c^a: the estimate is -inf.
    with pytest.warns(HighVarianceWarning, match=r"10\^"):
        out = maximum(np.full(1000, 5), 0.1)
    assert np.isneginf(out)
    with pytest.warns(HighVarianceWarning):
        out = minimum(np.full(1000, 5), 0.1)
    assert np.isposinf(out)


def test_median_of_two_overflowing_halves():
    # both middle order statistics exceed the float range with opposite signs: the mean's sign
    # is lost -> nan (or inf), never a RuntimeWarning (those are errors in the test run)
    with pytest.warns(HighVarianceWarning):
        out = median(np.full(2000, 5), 0.1)
    assert not np.isfinite(out)


def test_fft_path(monkeypatch):
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, size=2000)
    direct = order_statistic(y, 700, 8.0, warn_above=None)
    monkeypatch.setattr(os_mod, "_DIRECT_CONVOLUTION_MAX", 0)
    assert order_statistic(y, 700, 8.0, warn_above=None) == pytest.approx(float(direct), abs=1e-9)
    # weights ~10^181 (eps = 2): the FFT of the tilted pmfs keeps relative accuracy at the
    # threshold (it used to return nan here); tests/estimators/test_order_statistics_ties.py
    # checks both paths against exact rationals.
    monkeypatch.setattr(os_mod, "_DIRECT_CONVOLUTION_MAX", 400_000_000)
    direct = float(order_statistic(y, 700, 2.0, warn_above=None))
    monkeypatch.setattr(os_mod, "_DIRECT_CONVOLUTION_MAX", 0)
    assert float(order_statistic(y, 700, 2.0, warn_above=None)) == pytest.approx(direct, rel=1e-9)


# ---------------------------------------------------------------------------------------------
# bad inputs


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda: maximum([1.5, 2], 1.0), ValueError, "not an integer"),
        (lambda: maximum([True, False], 1.0), TypeError, "booleans"),
        (lambda: maximum(np.zeros((3, 0), dtype=int), 1.0), ValueError, "number of reports"),
        (lambda: minimum(4, 1.0), ValueError, "dimension"),
        (lambda: maximum([1, 2], 0.0), ValueError, "epsilon"),
        (lambda: maximum([1, 2], 1.0, -1), ValueError, "sensitivity"),
        (lambda: maximum([1, 2], 1.0, warn_above=0), ValueError, "warn_above"),
        (lambda: order_statistic([1, 2], 2, 1.0), ValueError, r"k must be .*\[-2, 1\]"),
        (lambda: order_statistic([1, 2], -3, 1.0), ValueError, "k must be"),
        (lambda: order_statistic([1, 2], 0.5, 1.0), TypeError, "k must be an integer"),
        (lambda: order_statistic_variance([1, 2], 5, 1.0), ValueError, "k must be"),
        (lambda: median([1, np.nan], 1.0), ValueError, "finite"),
    ],
)
def test_bad_inputs(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
