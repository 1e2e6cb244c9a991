"""kcore-hindex: the h-index's sensitivity (enumeration), the node's releases (audit), the pooling,
the read-out's minimiser (brute force), noise-free exactness, the registered method."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from ldpgraph.audit import audit_neighbours
from ldpgraph.graph import from_edge_array
from ldpgraph.protocols.kcore.hindex import (
    HINDEX_DEFAULTS,
    HINDEX_SCHEDULE,
    _posterior_optimum,
    eb_core_estimate,
    h_index,
    h_index_counts,
    hindex_budget,
    hindex_kcore,
    hindex_node_release,
    hindex_pooled,
    hindex_settings,
    pool_releases,
)
from ldpgraph.protocols.kcore.reference import approximation_factors, dlap_noise, exact_core_numbers


def _karate():
    kg = nx.karate_club_graph()
    return from_edge_array(np.array(kg.edges(), dtype=np.int64), n_nodes=kg.number_of_nodes())


def _h_by_definition(values) -> int:
    return max(h for h in range(len(values) + 1) if sum(v >= h for v in values) >= h)


def test_h_index_has_sensitivity_one_by_enumeration():
    """Every multiset of up to 5 values in {0, 0.5, ..., 5} and every added value y: H(S + y) - H(S)
    is 0 or 1 (the privacy proof's claim), and H matches its definition."""
    vals = np.arange(0, 5.5, 0.5)
    seen = set()
    for size in range(6):
        for s in itertools.combinations_with_replacement(vals.tolist(), size):
            h = h_index(s)
            assert h == _h_by_definition(s)
            for y in vals.tolist():
                step = h_index((*s, y)) - h
                assert step in (0, 1)
                seen.add(step)
    assert seen == {0, 1}


def test_h_index_counts_is_the_h_index_of_each_neighbourhood():
    g = _karate()
    x = np.random.default_rng(0).integers(0, 12, g.n_nodes).astype(float)
    ptr, idx = np.asarray(g.indptr), np.asarray(g.indices)
    want = [h_index(x[idx[ptr[v]:ptr[v + 1]]]) for v in range(g.n_nodes)]
    assert h_index_counts(g, x).tolist() == want
    with pytest.raises(ValueError, match="one entry per node"):
        h_index_counts(g, x[:3])


def test_h_index_counts_on_random_graphs_and_fractional_values():
    """The per-node histograms (issue 34) against the sort in h_index: isolated nodes, values above
    the degree, negative, fractional and rounded pooled values (2.9999999999 counts as 2)."""
    rng = np.random.default_rng(7)
    for t in range(150):
        n = int(rng.integers(1, 40))
        e = rng.integers(0, n, size=(int(rng.integers(0, 200)), 2))
        g = from_edge_array(e[e[:, 0] != e[:, 1]].reshape(-1, 2), n_nodes=n)
        x = [rng.integers(-3, 40, n).astype(float), rng.random(n) * 15, np.round(rng.random(n) * 6, 9),
             np.full(n, 3.0) - 1e-10][t % 4]
        ptr, idx = np.asarray(g.indptr), np.asarray(g.indices)
        want = [h_index(x[idx[ptr[v]:ptr[v + 1]]]) for v in range(n)]
        assert h_index_counts(g, x).tolist() == want


def test_h_index_release_is_private_at_its_epsilon():
    """H of the public neighbour values plus DLap: one neighbour more moves H by 0 or 1."""
    eps = 0.8

    def node(x, size, rng):
        return hindex_node_release(np.array(x, dtype=float), eps, size=size, rng=rng)

    pairs = [((5.0, 1.0, 3.0), (5.0, 1.0, 3.0, 4.0)), ((1.0,), (1.0, 2.0)), ((), (9.0,)),
             ((3.0, 3.0), (3.0, 3.0, 3.0))]
    assert audit_neighbours(node, pairs, eps, n_samples=100_000, rng=5).passed
    assert audit_neighbours(node, pairs[:1], eps / 2.5, n_samples=100_000, rng=6).violation


def test_node_transcript_is_private_at_the_total_epsilon():
    """(noisy degree, noisy h-index) of one node given the public values of its neighbours:
    eps = 1.5, the degree 0.5 and the h-index 1; the sum is audited, the h-index's share alone leaks."""
    eps = 1.5
    b = hindex_budget(eps, 1, 2 / 3)

    def node(x, size, rng):
        gen = np.random.default_rng(rng)
        d = len(x) + dlap_noise(gen, b["degree"], size)
        h = hindex_node_release(np.array(x, dtype=float), b["h-index 1"], size=size, rng=gen)
        return (d + 500) * 1000 + (h + 500)  # one integer per transcript

    pairs = [((4.0, 4.0, 1.0), (4.0, 4.0, 1.0, 4.0)), ((2.0,), (2.0, 2.0))]
    assert audit_neighbours(node, pairs, eps, n_samples=100_000, rng=7).passed
    assert audit_neighbours(node, pairs[:1], b["h-index 1"], n_samples=100_000, rng=8).violation


def test_pooling_joins_only_values_not_far_above():
    m, eff = pool_releases([[10, 40, 3], [11, 3, 9]], [1.0, 1.0], c=3.0)
    assert m.tolist() == [10.5, 3.0, 6.0]  # 40 - 3 > 3 sqrt(2 + 2): apart; 3 below 9: joined
    assert np.allclose(eff, [math.sqrt(2), 1.0, math.sqrt(2)])
    m, eff = pool_releases([[40], [3]], [1.0, 2.0], c=math.inf)  # all joined: weights eps^2
    assert m.tolist() == [(40 * 1 + 3 * 4) / 5] and np.allclose(eff, math.sqrt(5))
    with pytest.raises(ValueError, match="one epsilon per release"):
        pool_releases([[1]], [1.0, 2.0])


@pytest.mark.parametrize("power", [1.0, 2.5, 4.0])
def test_read_out_is_the_exact_minimiser_of_the_posterior_risk(power):
    """Against a brute-force search of E[max(x/q, q/x)^p | m] over a fine grid of x, with the same
    prior (the EM run repeated here)."""
    rng = np.random.default_rng(1)
    m = np.concatenate([rng.normal(10, 5, 300), rng.normal(2, 1, 100)])
    grid = np.arange(1.0, 40.0)
    x = _posterior_optimum(m, 0.3, grid, 50, power)
    zb, first, cnt = np.unique(np.round(m * 2) / 2, return_index=True, return_counts=True)
    lik = np.exp(-0.3 * np.abs(zb[:, None] - grid))
    pi = np.full(grid.size, 1 / grid.size)
    for _ in range(50):
        post = lik * pi
        post /= post.sum(1, keepdims=True)
        pi = (cnt[:, None] * post).sum(0) / cnt.sum()
    post = lik * pi
    post /= post.sum(1, keepdims=True)
    cand = np.linspace(1.0, 45.0, 88_001)  # step 5e-4
    for i in range(0, zb.size, 7):
        risk = (post[i][None, :] * np.maximum(cand[:, None] / grid, grid / cand[:, None]) ** power).sum(1)
        assert abs(cand[risk.argmin()] - x[first[i]]) < 1e-3
    with pytest.raises(ValueError, match="power"):
        eb_core_estimate([1.0], [1.0], power=0.0)


def test_noise_free_run_is_the_h_index_iteration_and_converges_to_the_cores():
    """At eps = 1e5 the pooled value is the last h-index (the degree joins only where it equals it)
    and the read-out returns it: one step gives H(degrees) >= k; six steps the exact cores."""
    g = _karate()
    k = exact_core_numbers(g)
    one = hindex_kcore(g, 1e5, rng=0)
    h1 = h_index_counts(g, g.degrees)
    assert np.allclose(one.core_numbers, h1) and np.all(h1 >= k) and one.rounds == 2
    six = hindex_kcore(g, 1e5, steps=6, rng=0)
    assert np.allclose(six.core_numbers, k) and six.rounds == 7
    m, eff = hindex_pooled(g, 1e5, rng=0)
    assert np.array_equal(m, h1)


def test_monte_carlo_on_karate_beats_the_degree_at_the_same_budget():
    """At eps = 2 per node on karate (no tuning there): the mean factor of kcore-hindex over 200 seeded
    runs is below that of reading the noisy degree at the whole budget (a core number is at most the
    degree; karate's hub has degree 17 and core 4). Both means have SE < 0.02; the gap is > 0.1."""
    g = _karate()
    k = exact_core_numbers(g)
    ours = [approximation_factors(hindex_kcore(g, 2.0, rng=s).core_numbers, k).mean() for s in range(200)]
    gen = np.random.default_rng(0)
    deg = [approximation_factors(np.maximum(g.degrees + dlap_noise(gen, 2.0, g.n_nodes), 1), k).mean()
           for _ in range(200)]
    assert np.std(ours) / math.sqrt(200) < 0.02 and np.std(deg) / math.sqrt(200) < 0.02
    assert np.mean(ours) + 0.1 < np.mean(deg)


def test_schedule_is_the_selections_choice_at_its_points_and_log_linear_between():
    for eps, (h, p) in HINDEX_SCHEDULE.items():
        assert hindex_settings(eps) == {"h_share": h, "power": p}
    mid = hindex_settings(math.sqrt(0.5 * 1.0))  # halfway in log between 0.5 and 1
    (h0, p0), (h1, p1) = HINDEX_SCHEDULE[0.5], HINDEX_SCHEDULE[1.0]
    assert mid == pytest.approx({"h_share": (h0 + h1) / 2, "power": (p0 + p1) / 2})
    assert hindex_settings(1e-3) == hindex_settings(0.25) and hindex_settings(50.0) == hindex_settings(1.0)


def test_registered_method_runs_the_defaults():
    from ldpgraph.run.method import get_method, method_names

    assert "kcore-hindex" in method_names()
    m = get_method("kcore-hindex")
    g = _karate()
    b = m.budget(1.0)
    assert math.isclose(sum(b.values()), 1.0)
    assert list(b.values()) == list(hindex_budget(1.0, 1, hindex_settings(1.0)["h_share"]).values())
    d = m.trial_details(g, 1.0, rng=np.random.default_rng(3))
    run = hindex_kcore(g, 1.0, rng=np.random.default_rng(3), **HINDEX_DEFAULTS)
    same = hindex_kcore(g, 1.0, rng=np.random.default_rng(3), h_share=HINDEX_SCHEDULE[1.0][0],
                        power=HINDEX_SCHEDULE[1.0][1])
    assert np.array_equal(run.core_numbers, same.core_numbers)
    assert d["rounds"] == 2 and d["max_approximation_factor"] == pytest.approx(
        approximation_factors(run.core_numbers, exact_core_numbers(g)).max())
    # a trial (the protocol's simulate hook) is that run, recorded by its mean factor
    trial = m.estimate_trials(g, "core_numbers", None, 1.0, 1, rng=np.random.default_rng(3))[0]
    assert trial == pytest.approx(approximation_factors(run.core_numbers, exact_core_numbers(g)).mean())
    with pytest.raises(ValueError, match="h_share"):
        hindex_budget(1.0, 1, 1.0)
    assert m.communication(g, 1.0)[0] > 0
