"""Transitivity 3T/S2: the unbiased 2-star estimate (exact law), the ratio and its delta-method SE."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from ldpgraph.graph import from_networkx, transitivity, triangle_count, two_star_count
from ldpgraph.mechanisms import DiscreteLaplace
from ldpgraph.protocols.triangles.transitivity import (
    transitivity_budget,
    transitivity_delta_variance,
    transitivity_estimate,
    two_star_estimate,
    two_star_variance,
)


def test_two_star_estimate_exact_over_the_noise_law():
    """E and Var of g(d + eta) summed over the DLap law truncated where the tail is < 1e-15."""
    eps = 0.8
    mech = DiscreteLaplace(epsilon=eps)
    z = np.arange(-80, 81)
    w = mech.pmf(z)
    assert 1 - w.sum() < 1e-15
    for d in (0, 1, 2, 7):
        vals = np.array([two_star_estimate([d + int(k)], eps) for k in z])
        mean = float(np.dot(w, vals))
        assert mean == pytest.approx(math.comb(d, 2), abs=1e-9)
        assert float(np.dot(w, (vals - mean) ** 2)) == pytest.approx(two_star_variance([d], eps), rel=1e-9)


def test_ratio_clip_and_budget():
    assert transitivity_estimate(np.array([1.0, 2.0]), np.array([6.0, 0.0])).tolist()[0] == 0.5
    assert math.isnan(transitivity_estimate(1.0, -3.0))
    assert transitivity_estimate(-1.0, 3.0, clip=True) == 0.0
    assert transitivity_budget(2.0, 0.25) == (0.5, 1.5)
    with pytest.raises(ValueError, match="degree_share"):
        transitivity_budget(1.0, 1.0)
    assert math.isnan(transitivity_delta_variance(1.0, 0.0, 1.0, 1.0))


def test_delta_method_against_monte_carlo():
    """The protocol's simulation of transitivity (the plan's degree release, 0.1 of the budget) against
    its delta-method moments."""
    from ldpgraph.protocols.triangles.two_round import TwoRoundTrianglesDLap, max_lower_degree

    g = from_networkx(nx.gnp_random_graph(120, 0.2, seed=8))
    proto = TwoRoundTrianglesDLap()
    plan = proto.plan(4.0, d_max=max_lower_degree(g), **proto.statistic_public("transitivity"))
    assert plan.release_budget() == {"rr": 1.8, "local-count": 1.8, "degree": 0.4}
    n = 2000
    tau = proto.simulate(g, plan, "transitivity", n, np.random.default_rng(3))
    mean, var = proto.moments(g, plan, "transitivity")
    _, var_t = proto.moments(g, proto.plan(3.6, d_max=max_lower_degree(g)), "triangles")
    assert mean == pytest.approx(transitivity(g), rel=1e-12)
    assert var == pytest.approx(transitivity_delta_variance(
        triangle_count(g), two_star_count(g), var_t, two_star_variance(g.degrees, 0.4)), rel=1e-12)
    assert abs(tau.mean() - transitivity(g)) < 4 * math.sqrt(var / n) + 1e-3 * transitivity(g)
    assert tau.var(ddof=1) == pytest.approx(var, rel=4 * math.sqrt(2 / n) + 0.02)
