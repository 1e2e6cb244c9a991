"""Confidence intervals of curator estimates: exact coverage of the max-degree interval on tiny
inputs (summation over the DLap law), Monte-Carlo coverage on Facebook degrees (vectorized)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from dlap_exact import dlap_support

import ldpgraph.protocols.curator as cur
from ldpgraph.estimators import (
    binomial,
    binomial_variance_estimate,
    sample_variance,
    sample_variance_variance_estimate,
)
from ldpgraph.graph import kstar_counts as exact_kstars
from ldpgraph.mechanisms import DiscreteLaplace
from ldpgraph.protocols import DegreeRandomizer, ReportHistogram, curator


def _max_intervals(Y, eps, level):
    """Vectorized max_degree_interval over rows of Y (same offsets as the curator's)."""
    n = Y.shape[-1]
    t_u, window, t_l = cur._max_interval_offsets(n, math.exp(-eps), level)
    M = Y.max(axis=-1)
    m = np.count_nonzero(Y >= (M - window)[..., None], axis=-1)
    tl = {int(v): t_l(int(v)) for v in np.unique(m)}
    lo = M - np.vectorize(tl.__getitem__)(m)
    return lo, M + t_u


def test_vectorized_helper_matches_the_public_function():
    rng = np.random.default_rng(0)
    Y = rng.integers(0, 30, size=(40, 9))
    Y[::3, :4] = 29  # ties at the top
    for eps, level in ((0.3, 0.9), (1.0, 0.95), (4.0, 0.99)):
        lo, hi = _max_intervals(Y, eps, level)
        for i in range(Y.shape[0]):
            h = ReportHistogram.from_reports(Y[i], eps)
            assert curator.max_degree_interval(h, level) == (float(lo[i]), float(hi[i]))


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.5])
@pytest.mark.parametrize("x", [[7], [7, 7], [7, 6], [7, 0], [3, 3, 3], [9, 8, 2]])
@pytest.mark.parametrize("level", [0.8, 0.95])
def test_max_interval_covers_at_least_nominal_exactly(x, eps, level):
    """Coverage summed over the DLap law (tail below 1e-12): >= level, for any x."""
    k, pmf = dlap_support(eps, tail=1e-12)
    x = np.asarray(x)
    n = x.size
    if n == 3 and eps < 1:
        k, pmf = dlap_support(eps, tail=1e-7)  # keep 3-D grids small
    grids = np.meshgrid(*([k] * n), indexing="ij")
    noise = np.stack([g.ravel() for g in grids], axis=-1)
    w = np.prod(pmf[noise + k[-1]], axis=-1)
    lo, hi = _max_intervals(x + noise, eps, level)
    D = x.max()
    coverage = float(np.sum(w * ((lo <= D) & (D <= hi))))
    missing_mass = 1.0 - float(w.sum())
    assert coverage >= level - missing_mass - 1e-12


def test_single_node_interval_is_the_exact_dlap_quantile():
    """n = 1: [y - t, y + t] with t the least integer with P[eta > t] <= alpha/2."""
    eps, level = 1.0, 0.9
    p = math.exp(-eps)
    lo, hi = curator.max_degree_interval(ReportHistogram.from_reports([50], eps), level)
    t = hi - 50
    assert lo == 50 - t
    assert p ** (t + 1) / (1 + p) <= 0.05 < p**t / (1 + p)


def test_interval_api_and_errors():
    rep = DegreeRandomizer(epsilon=1.0).randomize([3, 9, 4, 4], rng=1)
    est = curator.kstars(rep, 2)
    lo, hi = est.interval(0.9)
    assert lo < est.value < hi and est.confidence_interval(0.9) == (lo, hi)
    assert hi - est.value == pytest.approx(1.6448536269514722 * est.std_error)
    assert est.interval(0.99)[1] > hi
    mx = curator.max_degree(rep)
    assert mx.interval_method == "dlap-max"
    assert pickle.loads(pickle.dumps(mx)).interval(0.9) == mx.interval(0.9)
    assert curator.edge_count(rep).interval_method == "normal-exact-variance"
    for bad in (0.0, 1.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="level must be in"):
            est.interval(bad)
    with pytest.raises(TypeError, match="level must be a real number"):
        est.interval("0.95")
    with pytest.raises(ValueError, match="no standard error"):
        curator.Estimate(1.0, None, None, "x").interval()


TRIALS = 4000


@pytest.fixture(scope="module")
def facebook_degrees(facebook_path_module):
    from ldpgraph.graph import read_edgelist

    return read_edgelist(facebook_path_module).degrees


@pytest.fixture(scope="module")
def facebook_path_module():
    from conftest import data_file

    return data_file("facebook_combined.txt.gz")


def _coverage(lo, hi, truth):
    return float(np.mean((lo <= truth) & (truth <= hi)))


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_monte_carlo_coverage_on_facebook(facebook_degrees, eps):
    """Normal intervals within 1.5% of nominal (MC sd of a 95% coverage over 4000 trials is
    0.34%); the max-degree interval at least nominal."""
    d = facebook_degrees
    level = 0.95
    Y = DiscreteLaplace(epsilon=eps).randomize(np.broadcast_to(d, (TRIALS, d.size)), rng=2026)
    cover = {}
    for k in (2, 3):
        val = binomial(Y, k, eps).sum(axis=1)
        se = np.sqrt(np.maximum(binomial_variance_estimate(Y, k, eps).sum(axis=1), 0))
        cover[f"kstars_{k}"] = _coverage(*cur.normal_interval(val, se, level), exact_kstars(d, k))
    sd_edges = math.sqrt(d.size * DiscreteLaplace(epsilon=eps).variance) / 2
    cover["edges"] = _coverage(*cur.normal_interval(Y.sum(axis=1) / 2, sd_edges, level), d.sum() / 2)
    val = sample_variance(Y, eps)
    se = np.sqrt(np.maximum(sample_variance_variance_estimate(Y, eps), 0))
    cover["variance"] = _coverage(*cur.normal_interval(val, se, level), np.var(d))
    for name, c in cover.items():
        assert abs(c - level) <= 0.015, (name, c)
    lo, hi = _max_intervals(Y, eps, level)
    assert _coverage(lo, hi, d.max()) >= level
    # the curator's Estimate.interval is the vectorized rule on each trial
    for i in range(3):
        rep = DegreeRandomizer(epsilon=eps).randomize(d, rng=i)
        y = rep.degrees.values
        lo1, hi1 = _max_intervals(y[None], eps, level)
        assert curator.max_degree(rep).interval(level) == (float(lo1[0]), float(hi1[0]))
