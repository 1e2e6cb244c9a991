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
from ldpgraph.protocols.orientation.kernels import (
    count_sensitivity,
    edge_orient_budget,
    edge_orient_mean,
    edge_orient_trial,
    edge_orient_variance,
    local_bounds,
    orient_relabel,
    projection_probability,
    reference_edge_orient,
    scale_factors,
)
from ldpgraph.protocols.randomized_response import flip_probability, keep_probability
from ldpgraph.protocols.triangles.kernels import lower_wedges

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


def _rounding_variance_by_sum(x: float) -> float:
    """Var floor(x + U) over U ~ U[0, 1): the two values floor(x) and floor(x) + 1."""
    f = x - math.floor(x)
    return f * (1 - f)


@pytest.mark.parametrize(("eps_rr", "scaled"), [(0.5, False), (2.0, False), (0.5, True), (2.0, True)])
def test_mean_and_variance_by_exact_enumeration(eps_rr, scaled):
    """Sum over all 2^P outcomes of the RR bits that enter the estimate: the mean (T when no node is
    scaled, else sum_v alpha_v t_v) and the variance, the rounding's variance at each outcome's value,
    the DLap variance by summing its mass at each node's sensitivity."""
    g = from_edge_array(TINY)
    h = orient_relabel(g, g.degrees)
    w = lower_wedges(h)
    m = w.lower_degrees
    bounds = np.where(m >= 3, m - 1, np.maximum(m, 1)) if scaled else np.maximum(m, 1) + 2
    alpha = scale_factors(m, bounds)
    assert (np.any(alpha < 1) and np.all(alpha > 0)) == scaled  # TINY's out-degrees: up to 3
    p, q = keep_probability(eps_rr), flip_probability(eps_rr)
    prob = np.where(w.pair_is_edge, p, q)
    n = g.n_nodes
    mean = second = rounding = 0.0
    for bits in itertools.product((0, 1), repeat=w.pairs.size):
        b = np.array(bits)
        pr = float(np.prod(np.where(b == 1, prob, 1 - prob)))
        wv = alpha * np.bincount(w.node, weights=b[w.pair] - q, minlength=n)
        t = wv.sum() / (p - q)
        mean += pr * t
        second += pr * t * t
        rounding += pr * sum(_rounding_variance_by_sum(x) for x in wv.tolist())
    t_v = np.bincount(w.node[w.pair_is_edge[w.pair]], minlength=n)
    assert math.isclose(mean, float(np.sum(alpha * t_v)), rel_tol=1e-12)
    assert math.isclose(mean, edge_orient_mean(h, bounds), rel_tol=1e-12)
    assert math.isclose(mean, 5.0, rel_tol=1e-12) != scaled
    eps_c = 0.7
    noise = sum(_dlap_variance_by_sum(eps_c, float(s)) for s in count_sensitivity(bounds, p))
    brute = (second - mean**2) + (rounding + noise) / (p - q) ** 2
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
    d = local_bounds(m, eps0, margin=margin, rng=13)  # a node is scaled down when m > D
    frac, want = float(np.mean(m > d)), projection_probability(eps0, margin)
    assert abs(frac - want) <= 4 * math.sqrt(want * (1 - want) / m.size)
    g = local_bounds(m, eps0, bounds="global", rng=14)
    assert np.all(g == g[0]) and g[0] >= 7
    with pytest.raises(ValueError, match="bounds"):
        local_bounds(m, eps0, bounds="other")


@pytest.mark.parametrize("p", [0.5, 0.6, 0.73, 0.95])
def test_count_sensitivity_is_the_largest_change_over_every_neighbouring_pair(p):
    """Brute force over every public bit pattern and out-list on 7 candidate nodes, bound D = 4: the
    scaled count f(N) = alpha(|N|) W(N) moves by at most (1+p)/2 (D - 1) when one out-neighbour is
    added, and that bound is attained (the proof's extremes); the ceiling is the row's sensitivity."""
    q, d, k = 1 - p, 4, 7
    pairs = list(itertools.combinations(range(k), 2))
    rng = np.random.default_rng(5)
    patterns = [np.ones(len(pairs)), np.zeros(len(pairs))] + [rng.random(len(pairs)) < 0.5 for _ in range(60)]

    def f(out, b):
        sub = [i for i, (j, l) in enumerate(pairs) if j in out and l in out]
        return float(scale_factors([len(out)], [d])[0]) * float(np.sum(b[sub] - q))

    worst = 0.0
    for b in patterns:
        for size in range(k):
            for out in itertools.combinations(range(k), size):
                for extra in set(range(k)) - set(out):
                    worst = max(worst, abs(f(set(out) | {extra}, b) - f(set(out), b)))
    # the extremes need all-one bits inside N and all-zero bits to the new node (or the reverse)
    half = np.array([0.0 if 6 in pair else 1.0 for pair in pairs])
    for out in itertools.combinations(range(6), 5):
        worst = max(worst, abs(f(set(out) | {6}, half) - f(set(out), half)))
    assert worst <= (1 + p) / 2 * (d - 1) + 1e-12
    assert worst >= (1 + p) / 2 * (d - 1) * 5 / 6 - 1e-12  # attained as |N| grows: (D-1)/m (m p + m q/2)
    assert count_sensitivity([d], p)[0] == math.ceil((1 + p) / 2 * (d - 1))


def test_count_release_is_private_at_its_epsilon_with_a_local_bound():
    """The node's scaled count against its own public bound D = 3: neighbouring out-lists (one
    out-neighbour more), below, at and beyond the bound; half the noise is refuted."""
    eps = 1.0
    p, q = keep_probability(1.5), flip_probability(1.5)
    rng = np.random.default_rng(3)
    table = rng.random((10, 10)) < 0.5
    table[:, 9] = table[9, :] = False
    table[:9, :9] = True  # out-lists inside 0..8 are complete, the node 9 links to none: the extreme

    def node_at(scale):
        def node(out_list, size, gen):
            out = np.array(out_list)
            a, b = np.triu_indices(out.size, k=1)
            w = float(np.sum(table[out[a], out[b]] - q)) * float(scale_factors([out.size], [3])[0])
            sens = float(count_sensitivity([3], p)[0])
            pn = math.exp(-scale * eps / sens)
            noise = gen.geometric(1 - pn, size) - gen.geometric(1 - pn, size)
            return np.floor(w + gen.random(size)).astype(np.int64) + noise
        return node

    pairs = [((0, 1), (0, 1, 2)), ((0, 1, 2), (0, 1, 2, 9)), ((1, 2, 3), (1, 2, 3, 5))]
    assert audit_neighbours(node_at(1.0), pairs, eps, n_samples=60_000, rng=15).passed
    assert audit_neighbours(node_at(2.0), pairs, eps, n_samples=60_000, rng=16).violation


def test_reference_counts_triangles_at_equal_levels_inconsistently():
    # the code orients an edge between equal levels by a fresh coin at each end and in each round:
    # nearly noiseless, a single triangle is counted 0 to 3 times
    g = from_edge_array([[0, 1], [1, 2], [0, 2]])
    vals = {round(reference_edge_orient(g, 200.0, rng=s)) for s in range(60)}
    assert len(vals - {1}) >= 1 and vals <= {0, 1, 2, 3}


def _trial_by_lower_wedges(graph, epsilon, rng):
    """edge_orient_trial as it was before issue 34 (the relabelled graph, lower_wedges' table of
    wedges, distinct pairs and inverse map): the same draws in the same order."""
    from ldpgraph.protocols.kcore.reference import dlap_noise, dlap_noise_per_node

    eps = edge_orient_budget(epsilon)
    gen = np.random.default_rng(rng)
    n = graph.n_nodes
    h = orient_relabel(graph, graph.degrees + dlap_noise(gen, eps["order"], n))
    w = lower_wedges(h)
    m = w.lower_degrees
    bound = local_bounds(m, eps["bound"], rng=gen)
    p, q = keep_probability(eps["rr"]), flip_probability(eps["rr"])
    bits = gen.random(w.pairs.size) < np.where(w.pair_is_edge, p, q)
    ones = np.bincount(w.node[bits[w.pair]], minlength=n)
    wv = ones - q * (m * (m - 1) // 2)
    a = eps["count"] / count_sensitivity(bound, p)
    noise = dlap_noise_per_node(gen, a)
    rounded = np.floor(scale_factors(m, bound) * wv + gen.random(n))
    return math.fsum((rounded + noise).tolist()) / (p - q), bound, h


@pytest.mark.parametrize(("block", "pack_bits", "buffer"), [(1 << 16, 62, 1 << 22), (7, 62, 50), (5, 10, 3)])
def test_trial_draws_the_same_bits_as_the_wedge_table(monkeypatch, block, pack_bits, buffer):
    """The one-word-per-wedge trial (issue 34) against the table of lower wedges it replaced: for the
    same seed the same order, bounds, bits, rounding and noise, so the same estimate (equal in law a
    fortiori); also with tiny blocks (pairs cut at block ends), a tiny buffer of owners and the wide path
    (argsort)."""
    from ldpgraph.datasets import resolve_graph
    from ldpgraph.protocols.orientation import kernels

    monkeypatch.setattr(kernels, "_WEDGE_BLOCK", block)
    monkeypatch.setattr(kernels, "_PACK_BITS", pack_bits)
    monkeypatch.setattr(kernels, "_OWNER_BUFFER", buffer)
    for spec, eps in (("ba:n=400,m=4", 2.0), ("er:n=300,p=0.05", 0.5)):
        g = resolve_graph(spec, rng=3)
        for seed in range(3):
            got = edge_orient_trial(g, eps, rng=seed)
            want, bound, h = _trial_by_lower_wedges(g, eps, seed)
            assert got.estimate == pytest.approx(want, rel=1e-12, abs=1e-9)
            assert np.array_equal(got.bounds, bound)
            assert np.array_equal(got.oriented.indices, h.indices)
    g = from_edge_array(TINY)
    assert edge_orient_trial(g, 400.0, oriented=orient_relabel(g, g.degrees), rng=0).estimate == 5.0
    assert edge_orient_trial(from_edge_array(np.zeros((0, 2), int), n_nodes=3), 1.0, rng=0).n_scaled == 0


def _reference_by_node_loop(graph, epsilon_paper, rng):
    """reference_edge_orient as before issue 34 (a Python loop over the nodes, np.unique of the pairs),
    the signal without the Laplace noise."""
    from ldpgraph.protocols.kcore.reference import dlap_noise, reference_kcore

    gen, n, e4 = np.random.default_rng(rng), graph.n_nodes, epsilon_paper / 4.0
    levels = reference_kcore(graph, e4 / 2.0, rng=gen).levels
    ptr, nbr = np.asarray(graph.indptr), np.asarray(graph.indices)
    src = np.repeat(np.arange(n), np.diff(ptr))

    def out_mask():
        lv_s, lv_d = levels[src], levels[nbr]
        return (lv_d > lv_s) | ((lv_d == lv_s) & (gen.random(src.size) <= 0.5))

    out_deg = np.bincount(src[out_mask()], minlength=n)
    noisy_max = float(np.max(out_deg + dlap_noise(gen, e4, n), initial=0))
    keep = out_mask()
    first = np.concatenate([[0], np.cumsum(np.bincount(src[keep], minlength=n))])[:-1]
    sel = keep & (np.cumsum(keep) - 1 - first[src] < int(math.floor(min(max(noisy_max, 0.0), float(n)))))
    lists_src, lists_dst = src[sel], nbr[sel]
    lens = np.bincount(lists_src, minlength=n)
    starts = np.concatenate([[0], np.cumsum(lens)])
    keys, who = [], []
    for v in np.flatnonzero(lens >= 2).tolist():
        row = lists_dst[starts[v]:starts[v + 1]]
        a, b = np.triu_indices(row.size, k=1)
        keys.append(np.minimum(row[a], row[b]) * n + np.maximum(row[a], row[b]))
        who.append(np.full(a.size, v))
    if not keys:
        return 0.0
    uniq, inv = np.unique(np.concatenate(keys), return_inverse=True)
    e = graph.edges()
    edge_keys = set((np.minimum(e[:, 0], e[:, 1]) * n + np.maximum(e[:, 0], e[:, 1])).tolist())
    is_edge = np.array([k in edge_keys for k in uniq.tolist()])
    x = (is_edge ^ (gen.random(uniq.size) < 1.0 / (math.exp(e4) + 1.0))).astype(np.float64)
    term = (x * (math.exp(e4) + 1.0) - 1.0) / (math.exp(e4) - 1.0)
    return math.fsum(np.bincount(np.concatenate(who), weights=term[inv], minlength=n).tolist())


@pytest.mark.parametrize("block", [1 << 22, 7])
def test_reference_pairs_in_blocks_draw_what_the_node_loop_drew(monkeypatch, block):
    """Issue 34: the reference's pairs enumerated in blocks and sorted in place (no loop over the nodes)
    give the signal of the loop it replaced, flip for flip."""
    from ldpgraph.datasets import resolve_graph
    from ldpgraph.protocols.orientation import kernels

    monkeypatch.setattr(kernels, "_WEDGE_BLOCK", block)
    for spec in ("ba:n=500,m=4", "er:n=300,p=0.05"):
        g = resolve_graph(spec, rng=5)
        for seed, eps in ((0, 0.5), (1, 2.0), (2, 40.0)):
            got = reference_edge_orient(g, eps, rng=seed, parts=True)[1]
            assert got == pytest.approx(_reference_by_node_loop(g, eps, seed), rel=1e-10, abs=1e-8)
