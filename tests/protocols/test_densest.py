"""Densest subgraph: the exact solver against enumeration, the interval [k_max/2, k_max] around rho*."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from ldpgraph.graph import from_edge_array, from_networkx
from ldpgraph.protocols.kcore.densest import densest_from_cores, exact_densest_subgraph
from ldpgraph.protocols.kcore.reference import exact_core_numbers


def _brute_densest(graph) -> float:
    e = graph.edges()
    best = 0.0
    for size in range(1, graph.n_nodes + 1):
        for s in itertools.combinations(range(graph.n_nodes), size):
            mask = np.zeros(graph.n_nodes, dtype=bool)
            mask[list(s)] = True
            best = max(best, int(np.count_nonzero(mask[e[:, 0]] & mask[e[:, 1]])) / size)
    return best


@pytest.mark.parametrize("seed", range(6))
def test_exact_densest_matches_enumeration_and_lies_in_the_core_interval(seed):
    g = from_networkx(nx.gnp_random_graph(10, 0.2 + 0.1 * seed, seed=seed))
    if g.n_edges == 0:
        pytest.skip("no edges")
    rho, nodes = exact_densest_subgraph(g)
    assert math.isclose(rho, _brute_densest(g), rel_tol=1e-12)
    e = g.edges()
    mask = np.zeros(g.n_nodes, dtype=bool)
    mask[nodes] = True
    assert math.isclose(np.count_nonzero(mask[e[:, 0]] & mask[e[:, 1]]) / len(nodes), rho, rel_tol=1e-12)
    core = exact_core_numbers(g)
    est = densest_from_cores(core)
    assert est.upper == core.max()  # the robust degeneracy is the degeneracy for exact core numbers
    assert est.lower <= rho + 1e-12 <= est.upper + 2e-12
    assert max(est.density / rho, rho / est.density) <= math.sqrt(2) + 1e-12


def test_the_interval_holds_on_karate_and_is_tight_on_a_clique():
    kg = nx.karate_club_graph()
    g = from_edge_array(np.array(kg.edges()), n_nodes=34)
    rho, _ = exact_densest_subgraph(g)
    est = densest_from_cores(exact_core_numbers(g))
    assert est.lower <= rho <= est.upper
    k6 = from_networkx(nx.complete_graph(6))
    assert exact_densest_subgraph(k6)[0] == densest_from_cores(exact_core_numbers(k6)).lower == 2.5


def test_a_few_over_estimated_nodes_do_not_move_the_robust_degeneracy():
    core = np.array([5.0] * 6 + [1.0] * 20)  # a 5-core of 6 nodes
    assert densest_from_cores(core).upper == 5.0
    assert densest_from_cores(np.concatenate([core, [90.0, 70.0, 50.0]])).upper == 5.0
    assert densest_from_cores(np.concatenate([core, [9.0] * 10])).upper == 9.0  # ten nodes at 9: a 9-core could exist


def test_bad_core_numbers_are_refused():
    for bad in ([], [1.0, -1.0], [np.nan]):
        with pytest.raises(ValueError, match="core_numbers"):
            densest_from_cores(bad)
