"""Exact triangle statistics (triangles, local triangles, 2-stars, transitivity, triple classes)
against networkx and brute force."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import pytest

from ldpgraph.graph import (
    from_networkx,
    local_triangle_counts,
    transitivity,
    triangle_count,
    triple_class_counts,
    two_star_count,
)

GRAPHS = [
    nx.gnp_random_graph(40, 0.3, seed=1),
    nx.barabasi_albert_graph(80, 4, seed=2),
    nx.complete_graph(7),
    nx.empty_graph(5),
    nx.path_graph(6),
    nx.karate_club_graph(),
]


@pytest.mark.parametrize("G", GRAPHS, ids=lambda G: f"n{G.number_of_nodes()}m{G.number_of_edges()}")
def test_against_networkx(G):
    g = from_networkx(G)
    tri = nx.triangles(G)
    assert triangle_count(g) == sum(tri.values()) // 3
    assert local_triangle_counts(g).tolist() == [tri[v] for v in sorted(G)]
    assert two_star_count(g) == sum(math.comb(d, 2) for _, d in G.degree())
    assert transitivity(g) == pytest.approx(nx.transitivity(G), rel=1e-12)


@pytest.mark.parametrize("G", GRAPHS[:4], ids=lambda G: f"n{G.number_of_nodes()}")
def test_triple_classes_brute_force(G):
    g = from_networkx(G)
    want = [0, 0, 0, 0]
    for a, b, c in itertools.combinations(sorted(G), 3):
        want[G.has_edge(a, b) + G.has_edge(b, c) + G.has_edge(a, c)] += 1
    assert list(triple_class_counts(g)) == want
