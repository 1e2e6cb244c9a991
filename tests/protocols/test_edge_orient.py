"""EdgeOrient triangle counting: exact unbiasedness and variance, Monte-Carlo, bounds, audit."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from ldpgraph.audit import audit_neighbours
from ldpgraph.graph import from_edge_array
from ldpgraph.graph.statistics import triangle_count
from ldpgraph.protocols.edge_orient import (
    edge_orient_budget,
    edge_orient_trial,
    edge_orient_variance,
    local_bounds,
    orient_relabel,
    projection_probability,
    reference_edge_orient,
)
from ldpgraph.protocols.randomized_response import flip_probability, keep_probability
from ldpgraph.protocols.triangles import lower_wedges, two_round_dlap_release

TINY = [[0, 1], [0, 2], [1, 2], [1, 3], [2, 3], [0, 3], [3, 4], [2, 4], [4, 5]]  # K4 + a tail: 5 triangles


def _dlap_variance_by_sum(eps: float, sens: float) -> float:
    p = math.exp(-eps / sens)
    x = np.arange(-4000, 4001)
    pmf = (1 - p) / (1 + p) * p ** np.abs(x)
    return float(np.sum(pmf * x.astype(float) ** 2))


def test_orientation_counts_every_triangle_once():
    g = from_edge_array(TINY)
    for key in (g.degrees, np.arange(6), np.array([5, 1, 4, 0, 3, 2])):
        h = orient_relabel(g, key)
        w = lower_wedges(h)
        assert int(w.pair_is_edge[w.pair].sum()) == triangle_count(g) == 5


@pytest.mark.parametrize("eps_rr", [0.5, 2.0])
def test_unbiased_and_variance_by_exact_enumeration(eps_rr):
    """Sum over all 2^P outcomes of the RR bits that enter the estimate; the rounding's fractional
    parts are fixed; the DLap variance by summing its mass."""
    g = from_edge_array(TINY)
    h = orient_relabel(g, g.degrees)
    w = lower_wedges(h)
    p, q = keep_probability(eps_rr), flip_probability(eps_rr)
    prob = np.where(w.pair_is_edge, p, q)
    n = g.n_nodes
    mean = second = 0.0
    fracs = set()
    for bits in itertools.product((0, 1), repeat=w.pairs.size):
        b = np.array(bits)
        pr = float(np.prod(np.where(b == 1, prob, 1 - prob)))
        wv = np.bincount(w.node, weights=b[w.pair] - q, minlength=n)
        fracs.add(tuple(np.round(wv - np.floor(wv), 12)))
        t = wv.sum() / (p - q)
        mean += pr * t
        second += pr * t * t
    assert math.isclose(mean, 5.0, rel_tol=1e-12)
    assert len(fracs) == 1  # w_v - t_v is fixed by the graph: rounding adds f(1 - f), independent of the bits
    f = np.array(next(iter(fracs)))
    bounds = np.maximum(w.lower_degrees, 1) + 2
    eps_c = 0.7
    noise = sum(_dlap_variance_by_sum(eps_c, max(d - 1, 1)) for d in bounds)
    brute = (second - mean**2) + (float(np.sum(f * (1 - f))) + noise) / (p - q) ** 2
    assert math.isclose(edge_orient_variance(h, eps_rr, eps_c, bounds), brute, rel_tol=1e-9)


def test_monte_carlo_mean_and_variance_agree_with_the_analytic():
    kg = nx.karate_club_graph()
    g = from_edge_array(np.array(kg.edges()), n_nodes=34)
    h = orient_relabel(g, g.degrees)
    bounds = np.maximum(lower_wedges(h).lower_degrees, 1) + 1
    eps = 4.0
    e = edge_orient_budget(eps)
    var = edge_orient_variance(h, e["rr"], e["count"], bounds)
    n = 400
    gen = np.random.default_rng(12)
    x = np.array([edge_orient_trial(g, eps, oriented=h, bound_values=bounds, rng=gen).estimate for _ in range(n)])
    assert abs(x.mean() - triangle_count(g)) <= 4 * math.sqrt(var / n)
    # sample variance: its standard error is about var * sqrt(2 / (n - 1)) (near-normal sum)
    assert abs(x.var(ddof=1) - var) <= 4 * var * math.sqrt(2 / (n - 1))


def test_local_bounds_hold_with_the_stated_probability():
    m = np.full(200_000, 7)
    eps0, margin = 0.2, 3.0
    d = local_bounds(m, eps0, margin=margin, rng=13)
    frac, want = float(np.mean(m > d)), projection_probability(eps0, margin)
    assert abs(frac - want) <= 4 * math.sqrt(want * (1 - want) / m.size)
    g = local_bounds(m, eps0, bounds="global", rng=14)
    assert np.all(g == g[0]) and g[0] >= 7
    with pytest.raises(ValueError, match="bounds"):
        local_bounds(m, eps0, bounds="other")


def test_count_release_is_private_at_its_epsilon_with_a_local_bound():
    """The node's count against its own public bound: neighbouring out-lists (one out-neighbour more),
    with and without projection."""
    eps, q = 1.0, flip_probability(1.0)
    rng = np.random.default_rng(3)
    table = rng.random((10, 10)) < 0.5

    def bit(j, k):
        return table[j, k].astype(float)

    def node(out_list, size, gen):
        return two_round_dlap_release(10, list(out_list), bit, eps, 3, q, size=size, rng=gen)

    pairs = [((0, 1), (0, 1, 2)), ((0, 1, 2), (0, 1, 2, 3)), ((1, 2, 3), (1, 2, 3, 5))]
    assert audit_neighbours(node, pairs, eps, n_samples=60_000, rng=15).passed


def test_reference_counts_triangles_at_equal_levels_inconsistently():
    # the code orients an edge between equal levels by a fresh coin at each end and in each round:
    # nearly noiseless, a single triangle is counted 0 to 3 times
    g = from_edge_array([[0, 1], [1, 2], [0, 2]])
    vals = {round(reference_edge_orient(g, 200.0, rng=s)) for s in range(60)}
    assert len(vals - {1}) >= 1 and vals <= {0, 1, 2, 3}
