"""The histogram route of the curator against the per-report reference path (the former
implementation: per-report terms of the estimators, summed by math.fsum or numpy).

Reference values are computed here from ldpgraph.estimators on the full report arrays, never
from the curator. Sums taken by math.fsum in the reference must agree bit for bit (the
histogram route adds exact products and rounds once: the same correctly rounded sum); sums
the reference took in float64 (numpy) are checked against exact rational arithmetic instead.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import ldpgraph.protocols.curator as cur
from ldpgraph._validation import dlap_c
from ldpgraph.estimators import (
    HighVarianceWarning,
    binomial,
    binomial_variance_estimate,
    entropy,
    entropy_variance_estimate,
    maximum,
    order_statistic_variance,
    power,
    power_variance_estimate,
    profile,
    profile_variance,
    sample_variance_variance_estimate,
)
from ldpgraph.protocols import NodeReports, ReleasedValues, ReportHistogram, curator

_rng = np.random.default_rng(11)
_dlap = _rng.geometric(0.6, 5000) - _rng.geometric(0.6, 5000)
CASES = {
    "noisy_degrees": np.minimum(np.floor(5 * (_rng.pareto(2.2, 20_000) + 1)), 10**4).astype(np.int64)
    + (_rng.geometric(0.6, 20_000) - _rng.geometric(0.6, 20_000)),
    "negatives": _dlap - 3,
    "all_equal": np.full(3000, 17),
    "one_report": np.array([4]),
    "huge_degrees": np.array([2**53, 2**53 - 1, 2**52, 5, 0, -3]),
    "huge_negative": np.array([-(2**53), -(2**53) + 1, 7]),
    "distinct_1e6": _rng.permutation(np.arange(-(5 * 10**5), 5 * 10**5)),
}
EPS = 0.7


def _rep(y, eps=EPS):
    return NodeReports(released={"degree": ReleasedValues("degree", np.asarray(y), eps, 1.0)})


def _exact_int_sum(y, j=1):
    return sum(int(v) ** j for v in np.asarray(y).tolist())


@pytest.fixture(scope="module", params=list(CASES))
def case(request):
    y = CASES[request.param]
    return request.param, y, ReportHistogram.from_reports(y, EPS)


def test_kstars_equal_fsum_route_bit_for_bit(case):
    name, y, hist = case
    ks = (1, 2, 3) if name != "distinct_1e6" else (2,)
    many = curator.kstars_many(hist, ks)
    for k, est in zip(ks, many, strict=True):
        with np.errstate(over="ignore", invalid="ignore"):
            ref = math.fsum(binomial(y, k, EPS))
            ref_var = math.fsum(binomial_variance_estimate(y, k, EPS))
        assert est.value == ref
        assert est.variance_estimate == ref_var
        assert curator.kstars(_rep(y), k) == est  # NodeReports and histogram agree


def test_moments_equal_fsum_route_bit_for_bit(case):
    name, y, hist = case
    for j in (0, 1, 2) if name != "distinct_1e6" else (2,):
        with np.errstate(over="ignore", invalid="ignore"):
            ref = math.fsum(power(y, j, EPS))
            ref_var = math.fsum(power_variance_estimate(y, j, EPS))
        est = curator.degree_moment(hist, j)
        assert est.value == ref and est.variance_estimate == ref_var


def test_edges_mean_variance_are_correctly_rounded(case):
    _, y, hist = case
    n = y.size
    s1 = _exact_int_sum(y)
    s2v = Fraction(2.0 * dlap_c(EPS))  # Var(eta) as the float the estimators use
    assert curator.edge_count(hist).value == float(Fraction(s1, 2))
    assert curator.degree_mean(hist).value == float(Fraction(s1, n))
    # the old float route agrees to the stated bound
    ref_mean = float(np.mean(y, dtype=np.float64))
    assert curator.degree_mean(hist).value == pytest.approx(ref_mean, rel=1e-15, abs=0)
    if n >= 2:
        q = Fraction(_exact_int_sum(y, 2)) - Fraction(s1 * s1, n) - (n - 1) * s2v
        est = curator.degree_variance(hist)
        assert est.value == float(q / n)
        ref_var = float(sample_variance_variance_estimate(y, EPS))
        assert est.variance_estimate == pytest.approx(ref_var, rel=1e-12)


def test_histogram_equals_profile(case):
    _, y, hist = case
    est, se = curator.degree_histogram(hist, 40)
    np.testing.assert_array_equal(est, profile(y, EPS, 40))
    np.testing.assert_array_equal(se, np.sqrt(np.maximum(profile_variance(y, EPS, 40), 0.0)))


def test_max_degree_equals_order_statistics(case):
    _, y, hist = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)
        est = curator.max_degree(hist)
        assert est.value == float(maximum(y, EPS))
        ref = float(order_statistic_variance(y, y.size - 1, EPS))
    assert est.variance_estimate == ref or (math.isinf(ref) and est.variance_estimate == ref)


def test_max_degree_closed_form_for_huge_ties(monkeypatch):
    y = np.concatenate([np.full(40, 30), np.full(25, 29), np.arange(20)])
    for eps in (0.5, 3.0, 20.0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HighVarianceWarning)
            via_array = curator.max_degree(_rep(y, eps))
            monkeypatch.setattr(cur, "_MAX_TIES_AS_ARRAY", 10)
            closed = curator.max_degree(_rep(y, eps))
            monkeypatch.undo()
        assert closed.value == pytest.approx(via_array.value, rel=1e-12)
        assert closed.variance_estimate == pytest.approx(via_array.variance_estimate, rel=1e-9)
    monkeypatch.setattr(cur, "_MAX_TIES_AS_ARRAY", 0)
    with pytest.warns(HighVarianceWarning):
        curator.max_degree(_rep(np.full(100, 7), 0.01))


@pytest.mark.parametrize("name", ["noisy_degrees", "negatives", "all_equal", "one_report"])
def test_entropy_equals_estimator(name):
    y = CASES[name]
    hist = ReportHistogram.from_reports(y, EPS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HighVarianceWarning)
        try:
            ref = float(entropy(y, EPS)), float(entropy_variance_estimate(y, EPS))
        except ValueError as err:
            with pytest.raises(ValueError, match="overflows"):
                curator.degree_entropy(hist)
            return str(err)
        est = curator.degree_entropy(hist)
    # same estimator, summed in another order: agreement to rounding of the cancelling terms
    scale = max(1.0, math.log(max(2, int(np.abs(y).sum()))))
    assert est.value == pytest.approx(ref[0], rel=1e-12, abs=1e-13 * scale)
    assert est.variance_estimate == pytest.approx(ref[1], rel=1e-8, abs=1e-12 * scale**2)


def test_reports_beyond_2_53_are_refused_by_both_paths():
    y = np.array([1, 2**62, -(2**62)])
    with pytest.raises(ValueError, match="too large"):
        binomial(y, 2, EPS)
    for stat in (lambda r: curator.kstars(r, 2), curator.edge_count, curator.max_degree):
        with pytest.raises(ValueError, match="too large"):
            stat(_rep(y))


def test_exact_rational_sums_on_small_inputs():
    """k-star estimate vs the exact rational sum of the estimator's terms (c as its float)."""
    rng = np.random.default_rng(5)
    for trial in range(30):
        n = int(rng.integers(1, 60))
        y = rng.integers(-20, 200, size=n) if trial % 2 else rng.integers(0, 5, size=n)
        eps = float(rng.choice([0.1, 1.0, 5.0]))
        c = Fraction(dlap_c(eps))
        for k in (1, 2, 3, 4):
            exact = sum(
                (Fraction(math.prod(v - i for i in range(k)), math.factorial(k))
                 - c * Fraction(math.prod(v - 1 - i for i in range(k - 2)), math.factorial(k - 2))
                 if k >= 2 else Fraction(v))
                for v in y.tolist()
            )  # fmt: skip
            scale = sum(abs(float(b)) for b in binomial(y, k, eps)) + 1e-300
            got = curator.kstars(_rep(y, eps), k).value
            fsum_route = math.fsum(binomial(y, k, eps))
            assert got == fsum_route
            assert abs(Fraction(got) - exact) <= Fraction(4e-16) * Fraction(scale)


def test_curator_refuses_bare_arrays_and_wrong_sensitivity():
    with pytest.raises(TypeError, match="ReportHistogram.from_reports"):
        curator.kstars(np.array([1, 2]), 2)
    with pytest.raises(ValueError, match="sensitivity 1"):
        curator.kstars(ReportHistogram.from_reports([1, 2], 1.0, sensitivity=2.0), 2)
    rel = ReleasedValues("degree", np.array([1, 2]), 1.0, 1.0)
    assert curator.kstars(rel, 2) == curator.kstars(_rep([1, 2], 1.0), 2)
    for stat in (curator.degree_mean, curator.max_degree, curator.degree_entropy):
        with pytest.raises(ValueError, match="no nodes"):
            stat(ReportHistogram.empty(1.0))
    assert curator.kstars(ReportHistogram.empty(1.0), 2).value == 0.0
