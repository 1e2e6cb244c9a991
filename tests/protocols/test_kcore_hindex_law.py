r"""kcore-hindex deployed (:mod:`ldpgraph.protocols.kcore.hindex_protocol`) against its fast simulator
(:func:`~ldpgraph.protocols.kcore.hindex.hindex_kcore`, the experiments' path): the same law.

The two differ only in where the noise comes from: the simulator draws every node's DLap from one
generator, the layer from each node's stream ``(seed, round, v)``. So the proof is in two parts:

1. **the same map** (exact): in a layer run, round 1's rows minus the degrees are exactly the nodes'
   round-1 stream draws, round 2's rows minus :func:`~ldpgraph.protocols.kcore.hindex.h_index_counts`
   of the broadcast's public values (the simulator's computation) are exactly the round-2 stream
   draws, and the estimate is :func:`~ldpgraph.protocols.kcore.hindex.hindex_read_out` of the two
   release vectors (the simulator's curator);
2. **the same noise law**: the simulator's ``dlap_noise`` and the streams' ``dlap`` both match the exact
   DLap(e^-ε) mass function (χ², α = 1e-3), i.i.d. over nodes in both.

Then a two-sample check end to end (Welch's z on the mean approximation factor and the KS test on
karate, α = 1e-3; also on the pooled value's error), which also shows power: the simulator at 0.8 ε
is rejected. And each round's
release, run by the layer's own code (a batch of copies of one node, each on its own stream), passes
the audit at its per-round ε.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from scipy import stats

from ldpgraph.audit import audit_neighbours
from ldpgraph.core import Seeded
from ldpgraph.graph import from_edge_array
from ldpgraph.protocols import registry
from ldpgraph.protocols.kcore.hindex import (
    h_index_counts,
    hindex_kcore,
    hindex_read_out,
    hindex_settings,
    public_values,
)
from ldpgraph.protocols.kcore.hindex_protocol import DEGREE, H_INDEX, HIndexBroadcast
from ldpgraph.protocols.kcore.reference import (
    _dlap_pmf,
    approximation_factors,
    dlap_noise,
    exact_core_numbers,
)
from ldpgraph.run import run_in_memory

Z = 3.29  # two-sided alpha = 1e-3


def _karate():
    kg = nx.karate_club_graph()
    return from_edge_array(np.array(kg.edges(), dtype=np.int64), n_nodes=kg.number_of_nodes())


@pytest.mark.parametrize(("eps", "public"), [(1.0, {}), (0.5, {"h_share": 0.6, "readout_power": 2.0})])
def test_layer_run_is_the_simulators_map_of_its_streams(eps, public):
    g = _karate()
    seed = 17
    run = run_in_memory("kcore-hindex", g, eps, sampler=seed, **public)
    plan = run.plan
    e0, e1 = plan.release(DEGREE).epsilon, plan.release(H_INDEX).epsilon
    assert math.isclose(e0 + e1, eps, rel_tol=1e-12) and run.n_rounds == 2
    n, deg = g.n_nodes, np.asarray(g.degrees, dtype=np.int64)
    s = Seeded(seed)
    z0 = run.results[0].degrees
    assert np.array_equal(z0 - deg, [int(s.stream(1, v).dlap(e0, 1.0, 1)[0]) for v in range(n)])
    assert np.array_equal(run.broadcasts[0].degrees, z0)
    z1 = run.results[1].values()[H_INDEX]
    h = h_index_counts(g, public_values([z0], [e0]))  # what the simulator computes from z0
    assert np.array_equal(z1 - h, [int(s.stream(2, v).dlap(e1, 1.0, 1)[0]) for v in range(n)])
    pooled, core = hindex_read_out([z0, z1], [e0, e1], plan.public["pool_c"], plan.public["readout_power"])
    assert np.array_equal(run.estimate.core_numbers, core) and np.array_equal(run.estimate.levels, pooled)


def _chi2_pvalue(draws: np.ndarray, eps: float) -> float:
    x, p = _dlap_pmf(eps)
    n = draws.size
    keep = p * n >= 5  # cells of expected count >= 5, the rest pooled
    obs = np.array([np.count_nonzero(draws == v) for v in x])
    exp, got = p[keep] * n, obs[keep]
    exp, got = np.append(exp, p[~keep].sum() * n), np.append(got, obs[~keep].sum())
    return float(stats.chisquare(got, exp * got.sum() / exp.sum()).pvalue)


@pytest.mark.parametrize("eps", [0.1, 0.95])  # the degree's and the h-index's share at eps 1
def test_both_noise_sources_are_the_exact_discrete_laplace(eps):
    n = 20_000
    fast = dlap_noise(np.random.default_rng(3), eps, n)
    s = Seeded(4)
    layer = np.array([int(s.stream(2, v).dlap(eps, 1.0, 1)[0]) for v in range(n)])
    assert _chi2_pvalue(fast, eps) > 1e-3 and _chi2_pvalue(layer, eps) > 1e-3
    # the same test sees a 25% error in epsilon
    assert _chi2_pvalue(fast, eps * 1.25) < 1e-3 and _chi2_pvalue(layer, eps * 1.25) < 1e-3


def _welch_z(x: np.ndarray, y: np.ndarray) -> float:
    return float((x.mean() - y.mean()) / math.sqrt(x.var(ddof=1) / x.size + y.var(ddof=1) / y.size))


def _measures(runs, k) -> np.ndarray:
    """Per run: the mean approximation factor, and the mean |pooled value - core number| (the pooled
    value's error, which the noise sets directly: the statistic with power)."""
    return np.array([(approximation_factors(r.core_numbers, k).mean(), np.abs(r.levels - k).mean())
                     for r in runs])


def test_fast_simulator_and_layer_agree_end_to_end_on_karate():
    """At eps 1: 1500 simulator runs against 300 layer runs, both measures (Welch z, KS)."""
    g = _karate()
    k = exact_core_numbers(g)
    fast = _measures((hindex_kcore(g, 1.0, rng=s) for s in range(1500)), k)
    layer = _measures((run_in_memory("kcore-hindex", g, 1.0, sampler=1000 + s).estimate for s in range(300)), k)
    for j in range(2):
        assert abs(_welch_z(fast[:, j], layer[:, j])) < Z
        assert stats.ks_2samp(fast[:, j], layer[:, j]).pvalue > 1e-3
    # power: the simulator at 0.8 of the budget (its settings kept) is told apart by the pooled error
    low = _measures((hindex_kcore(g, 0.8, rng=s, **hindex_settings(1.0)) for s in range(1500)), k)
    assert abs(_welch_z(low[:, 1], layer[:, 1])) > Z and stats.ks_2samp(low[:, 1], layer[:, 1]).pvalue < 1e-3


def _round_node(number: int, eps: float):
    """One node's release of round ``number``, ``size`` times, by the layer's code: copies of the node
    (ids after the neighbours), each on its own stream of a sampler seeded from ``rng``."""
    proto = registry.get("kcore-hindex")
    plan = proto.plan(eps, h_share=0.5)
    rnd = proto.rounds()[number - 1]

    def node(x, size, rng):
        seed = int(np.random.default_rng(rng).integers(2**62))
        x = np.asarray(x, dtype=np.int64)
        nb = np.arange(x.size, dtype=np.int64)
        if number == 1:  # x: the neighbour list's length is what round 1 reads
            rows = rnd.release(plan, np.arange(size), [nb] * size, None, Seeded(seed))
        else:  # x: the neighbours' noisy degrees in the broadcast
            b = HIndexBroadcast.build(plan.release(DEGREE).epsilon, np.r_[x, np.zeros(size, dtype=np.int64)])
            rows = rnd.release(plan, x.size + np.arange(size), [nb] * size, b, Seeded(seed))
        return rows["value"][rows["quantity"] == (DEGREE if number == 1 else H_INDEX)]

    return node, plan


def test_each_round_of_the_layer_is_private_at_its_epsilon():
    """eps = 1.6, h = 0.5: round 1 at 0.8, round 2 at 0.8, each audited on the layer's own release (a
    neighbour more); at half that epsilon the audit finds the violation (it can fail)."""
    node1, plan = _round_node(1, 1.6)
    e0, e1 = plan.release(DEGREE).epsilon, plan.release(H_INDEX).epsilon
    assert (e0, e1) == (0.8, 0.8)
    n = 40_000
    assert audit_neighbours(node1, [((0, 0, 0), (0, 0, 0, 0))], e0, n_samples=n, rng=1).passed
    assert audit_neighbours(node1, [((0, 0, 0), (0, 0, 0, 0))], e0 / 2, n_samples=n, rng=2).violation
    node2, _ = _round_node(2, 1.6)
    pairs = [((5, 1, 3), (5, 1, 3, 4)), ((3, 3), (3, 3, 3))]  # H: 2 -> 3, 2 -> 3
    assert audit_neighbours(node2, pairs, e1, n_samples=n, rng=3).passed
    assert audit_neighbours(node2, pairs[:1], e1 / 2, n_samples=n, rng=4).violation


def test_curator_refuses_rows_that_do_not_fit_the_plan():
    from ldpgraph.protocols.deploy_triangles import chunk_from_columns

    g = _karate()
    run = run_in_memory("kcore-hindex", g, 1.0, sampler=2)
    plan, (r1, r2) = run.plan, run.protocol.rounds()

    def fails(rnd, rows, broadcast, match, **options):
        acc = rnd.accumulator(plan, broadcast, **options)
        with pytest.raises(ValueError, match=match):
            acc.add(chunk_from_columns(rows))
            acc.result().values() if rnd is r2 else acc.result()

    rows = {c: v.copy() for c, v in run.rows[0].items()}
    fails(r1, {c: v[1:] for c, v in rows.items()}, None, "missing 1: 0", expected_nodes=34)
    fails(r1, {c: np.r_[v, v[:1]] for c, v in rows.items()}, None, "duplicate degree rows for node 0")
    bad = {c: v.copy() for c, v in rows.items()}
    bad["epsilon"][:] = 0.5
    fails(r1, bad, None, "released at epsilon 0.5")
    b = run.broadcasts[0]
    rows = {c: v.copy() for c, v in run.rows[1].items()}
    rows["value"][rows["quantity"] == "run_id"] += 1
    fails(r2, rows, b, "another run")
    rows = {c: v[2:] for c, v in run.rows[1].items()}  # node 0's rows missing
    fails(r2, rows, b, "sent no h_index row")
    other = HIndexBroadcast.build(0.5, b.degrees)
    with pytest.raises(ValueError, match="round-1 epsilon 0.5"):
        r2.accumulator(plan, other)
