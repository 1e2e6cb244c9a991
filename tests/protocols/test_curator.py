"""Curator estimates from NodeReports: unbiasedness of values and of variance estimates (exact)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dlap_exact import exact_expectation_nd

from ldpgraph.graph import kstar_counts as exact_kstars
from ldpgraph.protocols import DegreeRandomizer, NodeReports, ReleasedValues, curator


def _reports(values, eps):
    vals = np.asarray(values, dtype=np.int64)
    return NodeReports(released={"degree": ReleasedValues("degree", vals, eps, 1.0)})


def _exact_mean(stat, x, eps, attr="value"):
    """E over the DLap noise of the curator's output, by summation over the truncated law."""

    def g(z):
        flat = z.reshape(-1, z.shape[-1])
        out = np.array([getattr(stat(_reports(row, eps)), attr) for row in flat])
        return out.reshape(z.shape[:-1])

    return exact_expectation_nd(g, np.asarray(x), eps)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_kstars_and_its_variance_estimate_are_unbiased(k):
    eps, x = 1.5, np.array([2, 5])
    stat = lambda r: curator.kstars(r, k)  # noqa: E731
    mean = _exact_mean(stat, x, eps)
    second = _exact_mean(lambda r: type("E", (), {"value": stat(r).value ** 2})(), x, eps)
    truth = exact_kstars(x, k)
    assert mean == pytest.approx(truth, rel=1e-9, abs=1e-9)
    true_var = second - truth**2
    assert _exact_mean(stat, x, eps, "variance_estimate") == pytest.approx(true_var, rel=1e-7)


def test_degree_variance_and_its_variance_estimate_are_unbiased():
    eps, x = 3.0, np.array([1, 4, 6])  # grid of 25^3 points: keeps the test fast
    truth = float(np.var(x))
    assert _exact_mean(curator.degree_variance, x, eps) == pytest.approx(truth, rel=1e-9)
    second = _exact_mean(lambda r: type("E", (), {"value": curator.degree_variance(r).value ** 2})(), x, eps)
    assert _exact_mean(curator.degree_variance, x, eps, "variance_estimate") == pytest.approx(
        second - truth**2, rel=1e-7
    )


def test_moments_mean_edges():
    eps, x = 1.0, np.array([0, 3])
    assert _exact_mean(lambda r: curator.degree_moment(r, 3), x, eps) == pytest.approx(27.0, rel=1e-9)
    est = curator.edge_count(_reports([3, 5], eps))
    assert est.value == 4.0
    p = math.exp(-eps)
    assert est.variance_estimate == pytest.approx(2 * (2 * p / (1 - p) ** 2) / 4)
    assert curator.degree_mean(_reports([3, 5], eps)).value == 4.0


def test_histogram_and_max_and_entropy_are_consistent_with_estimators():
    from ldpgraph.estimators.order_statistics import maximum
    from ldpgraph.estimators.profiles import profile

    y = np.array([0, 2, 2, 5, 9, 3])
    rep = _reports(y, 0.8)
    hist, se = curator.degree_histogram(rep, 10)
    np.testing.assert_allclose(hist, profile(y, 0.8, 10))
    assert hist.shape == se.shape == (11,)
    assert curator.max_degree(rep).value == pytest.approx(float(maximum(y, 0.8)))


def test_kstars_from_counts():
    rand = DegreeRandomizer(epsilon=2.0, kstar_counts=[2], d_max=5)
    rep = rand.randomize([1, 2, 7], rng=0)
    est = curator.kstars_from_counts(rep, 2)
    assert est.value == rep.kstar_counts(2).values.sum()
    assert est.variance_estimate == pytest.approx(3 * rep.kstar_counts(2).mechanism.variance)
    with pytest.raises(KeyError, match="no local 3-star"):
        curator.kstars_from_counts(rep, 3)


def test_errors():
    with pytest.raises(TypeError, match="NodeReports"):
        curator.kstars(np.array([1, 2]), 2)
    with pytest.raises(ValueError, match="k must be"):
        curator.kstars(_reports([1, 2], 1.0), 0)
    bad = NodeReports(released={"degree": ReleasedValues("degree", np.array([1, 2]), 1.0, 2.0)})
    with pytest.raises(ValueError, match="sensitivity 1"):
        curator.kstars(bad, 2)
    with pytest.raises(ValueError, match="at least 2"):
        curator.degree_variance(_reports([1], 1.0))


def test_facebook_estimates_are_within_their_standard_errors(facebook_path):
    from ldpgraph.graph import read_edgelist

    g = read_edgelist(facebook_path)
    rep = DegreeRandomizer(epsilon=1.0).randomize(g.degrees, rng=2026)
    for k in (1, 2, 3):
        est = curator.kstars(rep, k)
        assert abs(est.value - exact_kstars(g.degrees, k)) < 4 * est.std_error
    e = curator.edge_count(rep)
    assert abs(e.value - 88_234) < 4 * e.std_error
    v = curator.degree_variance(rep)
    assert abs(v.value - np.var(g.degrees)) < 4 * v.std_error
