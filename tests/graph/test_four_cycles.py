"""Exact 4-cycle counts against brute force (all 4-node subsets) and networkx (karate)."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from ldpgraph.graph import from_edge_array, from_networkx
from ldpgraph.graph.cycles import four_cycle_count, local_four_cycle_counts


def _brute(n: int, edges: set[frozenset[int]]) -> tuple[int, list[int]]:
    """Every 4-subset and its three possible 4-cycles, checked edge by edge."""
    total, local = 0, [0] * n
    for a, b, c, d in itertools.combinations(range(n), 4):
        for cyc in ((a, b, c, d), (a, b, d, c), (a, c, b, d)):
            if all(frozenset((cyc[i], cyc[(i + 1) % 4])) in edges for i in range(4)):
                total += 1
                for v in cyc:
                    local[v] += 1
    return total, local


@pytest.mark.parametrize("seed", range(40))
def test_brute_force_random_graphs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 13))
    density = rng.uniform(0.1, 0.95)
    pairs = [(u, v) for u in range(n) for v in range(u) if rng.random() < density]
    g = from_edge_array(np.array(pairs, dtype=np.int64).reshape(-1, 2), n_nodes=n)
    total, local = _brute(n, {frozenset(p) for p in pairs})
    assert four_cycle_count(g) == total
    assert local_four_cycle_counts(g).tolist() == local


def test_karate_against_networkx() -> None:
    kg = nx.karate_club_graph()
    g = from_networkx(kg)
    square = nx.cycle_graph(4)
    matcher = nx.algorithms.isomorphism.GraphMatcher(kg, square)
    monos = sum(1 for _ in matcher.subgraph_monomorphisms_iter())
    assert monos % 8 == 0
    assert four_cycle_count(g) == monos // 8
    local = np.zeros(kg.number_of_nodes(), dtype=np.int64)
    for cycle in nx.simple_cycles(kg, length_bound=4):
        if len(cycle) == 4:
            local[cycle] += 1
    ids = list(g.node_ids)
    assert local_four_cycle_counts(g).tolist() == [int(local[v]) for v in ids]
    assert int(local.sum()) == 4 * four_cycle_count(g)


def test_empty_and_rejects_non_graph() -> None:
    assert four_cycle_count(from_edge_array(np.empty((0, 2), dtype=np.int64), n_nodes=3)) == 0
    with pytest.raises(TypeError, match="must be an ldpgraph Graph"):
        four_cycle_count([[0, 1]])
