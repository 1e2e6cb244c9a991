"""k-core decomposition under LEDP: truth, the reference's level structure, the methods' records, privacy audit."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from ldpgraph.audit import audit_neighbours
from ldpgraph.datasets import load_dataset
from ldpgraph.graph import from_edge_array
from ldpgraph.protocols.kcore.reference import (
    approximation_factors,
    core_sizes,
    exact_core_numbers,
    reference_degree_bias,
    reference_kcore,
    reference_parameters,
)
from ldpgraph.run.method import get_method


def _karate():
    kg = nx.karate_club_graph()
    return from_edge_array(np.array(kg.edges(), dtype=np.int64), n_nodes=kg.number_of_nodes()), kg


@pytest.fixture(scope="module")
def facebook():
    return load_dataset("facebook")


def test_truth_is_networkx_core_number():
    g, kg = _karate()
    want = nx.core_number(kg)
    assert exact_core_numbers(g).tolist() == [want[v] for v in range(kg.number_of_nodes())]


def test_truth_is_igraph_coreness_on_random_and_structured_graphs(monkeypatch):
    """The peeling on the CSR (issue 34: no igraph) against igraph's coreness: random graphs of every
    density, a tree, a long path (node by node in Python), a lattice; with the Python path off
    (every frontier a numpy sweep) and always on."""
    import igraph as ig

    from ldpgraph.graph import from_igraph
    from ldpgraph.protocols.kcore import reference

    rng = np.random.default_rng(11)
    graphs = []
    for _ in range(60):
        n = int(rng.integers(1, 80))
        e = rng.integers(0, n, size=(int(rng.integers(0, 6 * n)), 2))
        graphs.append(from_edge_array(e[e[:, 0] != e[:, 1]].reshape(-1, 2), n_nodes=n))
    graphs += [from_igraph(h) for h in (ig.Graph.Barabasi(3000, 4), ig.Graph.Tree(2000, 3),
                                        ig.Graph.Lattice([40, 40], circular=False),
                                        ig.Graph.Erdos_Renyi(2000, m=12000), ig.Graph.Full(12))]
    graphs.append(from_edge_array(np.c_[np.arange(4999), np.arange(1, 5000)]))
    for small in (0, 10**9, reference._SMALL_FRONTIER):
        monkeypatch.setattr(reference, "_SMALL_FRONTIER", small)
        for g in graphs:
            assert exact_core_numbers(g).tolist() == g.to_igraph().coreness()


def test_core_sizes_match_networkx_k_cores():
    g, kg = _karate()
    sizes = core_sizes(exact_core_numbers(g))
    assert sizes == {k: nx.k_core(kg, k).number_of_nodes() for k in range(1, 5)}


def test_approximation_factor_is_symmetric_and_skips_core_zero():
    assert approximation_factors([4.0, 0.5, 7.0], [2, 2, 0]).tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match="shape"):
        approximation_factors([1.0], [1, 2])


def test_reference_levels_and_estimates_follow_the_code(facebook):
    run = reference_kcore(facebook, 50.0, rng=5)
    par = reference_parameters(facebook.n_nodes)
    assert run.rounds == min(par["max_rounds"], int(run.caps.max()))
    assert np.all(run.levels <= np.minimum(run.caps, run.rounds))  # a node stops at its cap
    power = np.log(run.core_numbers / 2.5) / math.log(1.5)  # (2 + 1/2) 1.5^j, j integer >= 0
    assert np.allclose(power, np.round(power)) and power.min() >= 0


def _reference_levels_round_by_round(graph, epsilon, rng, noise=True):
    """reference_kcore's levels as before issue 34: U_v(r) recounted over every CSR entry each round."""
    from ldpgraph.protocols.kcore.reference import dlap_noise, dlap_noise_per_node, same_level_counts

    gen, n, psi = np.random.default_rng(rng), graph.n_nodes, 0.5
    par = reference_parameters(n, psi)
    big_l, eps1, eps2 = par["levels_per_group"], 2 * epsilon * 0.8, 2 * epsilon * 0.2
    noisy = np.asarray(graph.degrees, dtype=np.int64).copy()
    if noise:
        noisy = noisy + dlap_noise(gen, eps1 / 2.0, n)
        noisy = noisy - np.minimum(reference_degree_bias(eps1), noisy).astype(np.int64) + 1
    with np.errstate(divide="ignore"):
        log2 = np.where(noisy > 0, np.log2(np.maximum(noisy, 1)), -np.inf)
    caps = np.maximum((np.ceil(log2) * big_l).astype(np.int64) + 1, 0)
    src = np.repeat(np.arange(n), graph.degrees)
    levels, alive = np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool)
    for r in range(int(min(par["max_rounds"], int(caps.max(initial=0))))):
        alive &= caps != r
        act = np.flatnonzero(alive & (levels == r))
        if act.size == 0:
            continue
        u = same_level_counts(src, np.asarray(graph.indices), levels, r, n)[act]
        if noise:
            s = eps2 / (2.0 * caps[act])
            extra = np.floor(3.0 * (2.0 * np.exp(s)) / (np.exp(2.0 * s) - 1.0) ** 3)
            u = u + dlap_noise_per_node(gen, s) + np.minimum(extra, 2.0**62).astype(np.int64)
        move = u > int((1.0 + psi) ** math.floor(r / big_l))
        levels[act[move]] += 1
        alive[act[~move]] = False
    return levels


def test_reference_levels_by_update_equal_the_recount_each_round(facebook):
    """Issue 34: U_v(r) kept up to date as nodes stop climbing (each row read once) gives the levels
    of the recount over every edge in every round, draw for draw."""
    from ldpgraph.datasets import resolve_graph

    graphs = [facebook, resolve_graph("ba:n=2000,m=4", rng=1), _karate()[0]]
    for g in graphs:
        for seed, eps, noise in ((0, 0.5, True), (1, 8.0, True), (2, 50.0, True), (3, 1.0, False)):
            got = reference_kcore(g, eps, noise=noise, rng=seed).levels
            assert np.array_equal(got, _reference_levels_round_by_round(g, eps, seed, noise))


def test_reference_bias_sends_every_node_to_its_cap_at_small_epsilon(facebook):
    # the code's bias B = floor(6 e^s / (e^{2s} - 1)^3) is ~10^6 for s ~ 1e-2: no node ever fails
    run = reference_kcore(facebook, 0.5, rng=6)
    assert np.all(run.levels == np.minimum(run.caps, run.rounds))


def test_method_records_and_details():
    g, _ = _karate()
    m = get_method("kcore-hindex")
    est = m.estimate_trials(g, "core_numbers", None, 1e4, 2, rng=0)
    d = m.trial_details(g, 1e4, rng=0)
    assert est[0] == d["mean_approximation_factor"] and d["degeneracy"] == 4.0 and d["rounds"] == 2
    assert set(d["true_kcore_sizes"]) == {"1", "2", "3", "4"} and d["per_node"].shape == (34,)
    ref = get_method("kcore-reference")
    assert math.isclose(sum(ref.budget(1.0).values()), 1.0) and ref.not_deployable
    r = ref.trial_details(g, 1.0, rng=0)
    assert r["rounds"] == reference_kcore(g, 1.0, rng=0).rounds + 1  # the degree round counted
    assert ref.estimate_trials(g, "core_numbers", None, 1.0, 1, rng=0)[0] == r["mean_approximation_factor"]
    with pytest.raises(ValueError, match="kcore-svt was removed in issue 33.*use kcore-hindex"):
        get_method("kcore-svt")


def test_reference_level_move_is_private_at_its_per_round_epsilon():
    """One round of the reference at a node: U + DLap(e^-s) + B > threshold, s = eps2 / (2 t_v)."""
    from ldpgraph.protocols.kcore.reference import dlap_noise_per_node

    s, bias, thr = 0.3, 2, 5

    def node(u, size, rng):
        return (u + dlap_noise_per_node(rng, np.full(size, s)) + bias > thr).astype(np.int64)

    assert audit_neighbours(node, [(3, 4), (4, 5)], s, n_samples=300_000, rng=16).passed
    assert audit_neighbours(node, [(3, 4)], s / 2, n_samples=100_000, rng=17).violation


def test_reference_degree_bias_uses_eps1_as_the_go_code_does():
    """kcore-ldp.go: ``bias_factor * 2e^lambda / (e^{2 lambda} - 1)`` with lambda = eps * factor
    (the noise alone takes lambda / 2). At eps_paper = 1, f = 4/5, b = 8: 16 e^0.8 / (e^1.6 - 1)."""
    e08, e16 = 2.225540928492468, 4.953032424395115
    assert reference_degree_bias(0.8, 8) == pytest.approx(16 * e08 / (e16 - 1), rel=1e-12)
    assert reference_degree_bias(0.8, 8) == pytest.approx(9.0079, abs=1e-4)
