"""kcore-svt-degree: noise-free exactness, the interval, privacy audit of a node's transcript."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from ldpgraph.audit import audit_neighbours
from ldpgraph.graph import from_edge_array
from ldpgraph.protocols.kcore import exact_core_numbers, svt_thresholds
from ldpgraph.protocols.kcore_degree import (
    degree_svt_budget,
    degree_svt_interval,
    degree_svt_kcore,
    degree_svt_node_release,
    gate_counts,
    gate_lower_end,
    gate_node_release,
)
from ldpgraph.protocols.kcore_methods import KCoreMethod


def _karate():
    kg = nx.karate_club_graph()
    return from_edge_array(np.array(kg.edges(), dtype=np.int64), n_nodes=kg.number_of_nodes())


def test_without_noise_and_with_full_groups_it_peels_to_the_exact_core_numbers():
    """At huge epsilon the slack is 0 and the noisy degree is the degree; with L = 8 levels per
    group each group peels to its k_g-core, and psi = 1/2 gives consecutive thresholds 1..5 up
    to karate's degeneracy 4: the interval closes on the core number."""
    g = _karate()
    run = degree_svt_kcore(g, 1e4, levels_per_group=8, rng=0)
    assert np.allclose(run.core_numbers, exact_core_numbers(g), atol=1e-2)


def test_interval_from_the_degree_and_the_failed_group():
    ks = svt_thresholds(0.5, 100)  # [1, 2, 3, 4, 5, 8, 11, 17, ...]
    n = 100
    # failed in group 5 (k = 8): core <= 7 (+ slack 2); noisy degree 50 at eps 1 -> lo = 50 - ln 100
    lo, hi = degree_svt_interval([5], [50], ks, 1, 1.0, 2, n)
    assert hi[0] == 9.0 and lo[0] == 9.0  # lo is clipped to hi
    # capped by its noisy degree 3 at eps 0.5: hi = 3 + 2/0.5 = 7, lo = max(1, 3 - ln(100)/0.5) = 1
    lo, hi = degree_svt_interval([7], [3], ks, 1, 0.5, 2, n)
    assert hi[0] == 7.0 and lo[0] == 1.0
    # a noisy degree below 1 is clipped to 1 first (every node of core >= 1 has degree >= 1)
    lo, hi = degree_svt_interval([7], [-5], ks, 1, 1.0, 0, n)
    assert hi[0] == 3.0 and lo[0] == 1.0
    assert degree_svt_budget(2.0, 0.5) == {"degree": 1.0, "svt-threshold": 0.5, "svt-levels": 0.5}
    with pytest.raises(ValueError, match="degree_share"):
        degree_svt_budget(1.0, 1.0)
    with pytest.raises(ValueError, match="slack"):
        degree_svt_kcore(_karate(), 1.0, slack=-1.0)


def test_lower_constant_of_the_read_out():
    """c_lo replaces ln n in lo = max(1, min(d~ - c_lo/eps_d, hi)); c_lo = inf gives lo = 1, so the
    estimate is sqrt(hi); the read-out changes no release (same levels, same rounds)."""
    ks = svt_thresholds(0.5, 100)
    n = 100
    assert ks[8] == 26  # round(1.5 ** 8)
    lo, hi = degree_svt_interval([8], [30], ks, 1, 0.5, 3, n, c_hi=1.0, c_lo=4.0)
    assert hi[0] == 28.0 and lo[0] == 22.0  # min(30 + 1/0.5, 26 - 1 + 3); 30 - 4/0.5
    lo_default, _ = degree_svt_interval([8], [30], ks, 1, 0.5, 3, n, c_hi=1.0)
    assert lo_default[0] == max(1.0, 30 - math.log(n) / 0.5)
    lo, hi = degree_svt_interval([8, 0], [30, -4], ks, 1, 0.5, 3, n, c_hi=1.0, c_lo=math.inf)
    assert lo.tolist() == [1.0, 1.0] and hi.tolist() == [28.0, 3.0]  # k_0 - 1 + 3
    with pytest.raises(ValueError, match="c_lo"):
        degree_svt_interval([8], [30], ks, 1, 0.5, 3, n, c_lo=-1.0)
    g = _karate()
    a = degree_svt_kcore(g, 1.0, rng=5)
    b = degree_svt_kcore(g, 1.0, rng=5, c_lo=math.inf)
    assert a.levels.tolist() == b.levels.tolist() and a.rounds == b.rounds
    assert np.all(b.core_numbers <= a.core_numbers + 1e-12)  # lo = 1 is the smallest lower end
    assert np.all(b.core_numbers >= 1.0)


def test_node_transcript_is_private_at_its_total_epsilon():
    """(noisy degree, moves) over neighbouring lists: one more neighbour raises the degree by 1
    and each count by 0 or 1. eps = 2: degree 1.4, threshold 0.3, queries 0.3 (slack 0)."""
    ks = np.array([1, 2, 3, 4])
    eps = 2.0

    def node(x, size, rng):
        out = degree_svt_node_release(x[0], np.array(x[1:]), ks, eps, slack=0.0, size=size, rng=rng)
        return out[:, 0] * 16 + out[:, 1]  # one integer per transcript (moves <= 4 < 16)

    pairs = [((3, 2, 2, 3, 3), (4, 3, 3, 4, 4)), ((3, 2, 2, 3, 3), (4, 2, 3, 3, 4)),
             ((1, 1, 0, 0, 0), (2, 1, 1, 0, 0))]
    assert audit_neighbours(node, pairs, eps, n_samples=100_000, rng=3).passed
    # the degree alone spends 1.4: audited at 0.7 the leak is seen
    assert audit_neighbours(node, pairs[:1], eps * 0.35, n_samples=100_000, rng=4).violation


def test_method_records_and_details():
    g = _karate()
    m = KCoreMethod("kcore-svt-degree")
    assert math.isclose(sum(m.budget(1.0).values()), 1.0)
    d = m.trial_details(g, 1e4, rng=0)  # one level per group (the method's L): rounds <= groups
    run = degree_svt_kcore(g, 1e4, rng=0, max_degree=int(g.degrees.max()))
    assert d["rounds"] == run.rounds <= len(svt_thresholds(0.5, int(g.degrees.max())))
    assert d["max_approximation_factor"] == pytest.approx(
        np.max(np.maximum(run.core_numbers / exact_core_numbers(g), exact_core_numbers(g) / run.core_numbers)))
    a, b = degree_svt_kcore(g, 1.0, rng=7), degree_svt_kcore(g, 1.0, rng=7)
    assert a.levels.tolist() == b.levels.tolist()


def test_gate_count_bounds_the_core_number():
    """k(v) <= #{w in N(v): k(w) >= k(v)} on karate and on random graphs (exact cores), and the
    count at a lower threshold is larger; so the gate, fed exact values, never lowers lo = k."""
    graphs = [_karate()]
    for seed in range(3):
        h = nx.gnm_random_graph(60, 240, seed=seed)
        graphs.append(from_edge_array(np.array(h.edges(), dtype=np.int64), n_nodes=60))
    for g in graphs:
        k = exact_core_numbers(g)
        assert np.all(gate_counts(g, k, k) >= k)
        theta = np.maximum(np.floor(k / 1.5), 1)
        c = gate_counts(g, k, theta)
        assert np.all(c >= gate_counts(g, k, k))
        keep = k >= 1
        lo = gate_lower_end(k[keep].astype(float), c[keep], 1.0)
        assert np.array_equal(lo, np.maximum(k[keep], 1).astype(float))
    with pytest.raises(ValueError, match="one entry per node"):
        gate_counts(_karate(), np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="tau"):
        gate_lower_end([2.0], [1], 1.0, tau=0.5)


def test_gate_lowers_only_the_lower_end():
    lo = np.array([40.0, 40.0, 3.0, 1.0])
    out = gate_lower_end(lo, [30, 2, -5, 9], 0.5, tau=1.5, margin=1.0)  # counts - 2
    assert out.tolist() == [40.0, 1.0, 1.0, 1.0]  # 1.5 * 28 = 42 > 40; 1.5 * 0; max(., 1)
    assert np.all(out <= lo) and np.all(out >= 1.0)


def test_gate_release_is_private_at_its_epsilon():
    """The count over the public values, plus DLap: one neighbour more (a value above or below
    the threshold) moves it by 0 or 1."""
    eps = 0.8

    def node(x, size, rng):
        return gate_node_release(np.array(x, dtype=float), 3.0, eps, size=size, rng=rng)

    pairs = [((5.0, 1.0, 3.0), (5.0, 1.0, 3.0, 4.0)), ((1.0,), (1.0, 2.0)), ((), (9.0,))]
    assert audit_neighbours(node, pairs, eps, n_samples=100_000, rng=5).passed
    assert audit_neighbours(node, pairs[:1], eps / 2.5, n_samples=100_000, rng=6).violation


def test_gated_run_exact_at_huge_epsilon_and_budget():
    """At eps = 1e4 (no noise, slack 0) with full groups the gate keeps the exact core numbers:
    lo = hi = k(v) and k(v) of v's neighbours have x >= k(v) >= theta."""
    g = _karate()
    run = degree_svt_kcore(g, 1e4, levels_per_group=8, gate_share=0.2, rng=0)
    plain = degree_svt_kcore(g, 1e4, levels_per_group=8, rng=0)
    assert np.allclose(run.core_numbers, exact_core_numbers(g), atol=1e-2)
    assert run.rounds == plain.rounds + 1
    b = degree_svt_budget(1.0, 0.65, 0.2)
    assert math.isclose(sum(b.values()), 1.0) and b["gate"] == 0.2
    with pytest.raises(ValueError, match="gate_share"):
        degree_svt_budget(1.0, 0.7, 0.35)
    with pytest.raises(ValueError, match="floor"):
        degree_svt_kcore(g, 1.0, floor=0.5)
    assert np.all(degree_svt_kcore(g, 0.5, gate_share=0.2, floor=2.0, rng=1).core_numbers >= 2.0)


def test_registered_gate_method_is_the_max_first_setting():
    """``kcore-svt-gate`` (``ldpgraph estimate --stat core_numbers``) runs degree_svt_kcore with GATE_MAX_FIRST:
    the same core numbers for the same generator, its printed budget is that run's, the gate a round."""
    from ldpgraph.protocols.kcore_degree import GATE_MAX_FIRST
    from ldpgraph.registry import get_method, method_names

    g = _karate()
    method = get_method("kcore-svt-gate")
    assert "kcore-svt-gate" in method_names("core_numbers")
    got = method.run(g, 1.5, np.random.default_rng(3))
    want = degree_svt_kcore(g, 1.5, max_degree=int(g.degrees.max()), rng=np.random.default_rng(3),
                            **GATE_MAX_FIRST)
    assert np.array_equal(got.core_numbers, want.core_numbers) and got.rounds == want.rounds
    budget = method.budget(1.5)
    assert budget == degree_svt_budget(1.5, GATE_MAX_FIRST["degree_share"], GATE_MAX_FIRST["gate_share"])
    assert math.isclose(sum(budget.values()), 1.5)
    assert method.deployed_as is None and "simulation only" in method.not_deployable
