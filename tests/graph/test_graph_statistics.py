"""Exact statistics against brute force (networkx, itertools, Fractions, product formulas)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest

from ldpgraph.graph import (
    degree_histogram,
    degree_moments,
    degree_power_sum,
    degree_variance,
    from_edge_array,
    from_networkx,
    kstar_counts,
    local_triangle_counts,
    max_degree,
    statistics,
    triangle_count,
)


def random_graphs() -> list[nx.Graph]:
    out = [nx.Graph(), nx.empty_graph(3), nx.complete_graph(7), nx.star_graph(9)]
    for seed in range(4):
        out.append(nx.gnp_random_graph(25 + 5 * seed, 0.1 + 0.08 * seed, seed=seed))
    out.append(nx.barabasi_albert_graph(60, 4, seed=1))
    return out


def brute_kstars(g: nx.Graph, k: int) -> int:
    """Enumerate every (centre, k-subset of its neighbours)."""
    return sum(sum(1 for _ in itertools.combinations(g[v], k)) for v in g)


def falling_binomial(d: int, k: int) -> int:
    """C(d, k) from the product formula, independent of math.comb."""
    num = 1
    for i in range(k):
        num *= d - i
    return num // math.factorial(k) if d >= k else 0


@pytest.mark.parametrize("k", [0, 1, 2, 3, 4])
def test_kstars_against_enumeration(k: int) -> None:
    for nxg in random_graphs():
        g = from_networkx(nxg)
        want = brute_kstars(nxg, k)
        assert kstar_counts(g, k) == want
        assert kstar_counts([d for _, d in nxg.degree()], k) == want
        assert isinstance(kstar_counts(g, k), int)


def test_kstars_low_orders_have_closed_forms() -> None:
    nxg = nx.gnp_random_graph(80, 0.2, seed=7)
    g = from_networkx(nxg)
    assert kstar_counts(g, 0) == 80
    assert kstar_counts(g, 1) == 2 * nxg.number_of_edges()


def test_kstars_huge_degrees_exact() -> None:
    deg = np.array([10**7, 10**7, 10**7 - 1, 123456, 9, 3, 0], dtype=np.int64)
    for k in (2, 5, 10):
        want = sum(falling_binomial(int(d), k) for d in deg)
        got = kstar_counts(deg, k)
        assert got == want
        assert type(got) is int
    assert kstar_counts(deg, 10) > 2**200  # far beyond int64 and float64 precision
    assert kstar_counts(deg, 10) == 2 * math.comb(10**7, 10) + math.comb(10**7 - 1, 10) + (
        math.comb(123456, 10)
    )


def test_kstars_unique_path_for_sparse_huge_degrees() -> None:
    deg = np.array([2 * 10**9, 5, 5])  # max >> n: distinct values found with np.unique
    assert kstar_counts(deg, 3) == falling_binomial(2 * 10**9, 3) + 2 * 10


def test_degree_power_sums_and_moments_exact() -> None:
    rng = np.random.default_rng(2)
    deg = rng.integers(0, 10**6, size=501)
    deg[:3] = [10**7, 0, 10**7]
    n = deg.size
    fr = [Fraction(int(d)) for d in deg]
    mean = sum(fr) / n
    for j in range(6):
        p = degree_power_sum(deg, j)
        assert p == sum(int(d) ** j for d in deg)
    raw = degree_moments(deg, [0, 1, 2, 3, 4, 8])
    for j, got in zip([0, 1, 2, 3, 4, 8], raw, strict=True):
        assert got == float(sum(x**j for x in fr) / n)  # correctly rounded
    central = degree_moments(deg, (1, 2, 3, 4), central=True)
    for j, got in zip((1, 2, 3, 4), central, strict=True):
        assert got == float(sum((x - mean) ** j for x in fr) / n)
    assert degree_variance(deg) == float(sum((x - mean) ** 2 for x in fr) / n)
    assert degree_variance(deg) == pytest.approx(np.var(deg.astype(float)), rel=1e-12)
    assert isinstance(degree_moments(deg, 2), float)


def test_histogram_and_max() -> None:
    nxg = nx.barabasi_albert_graph(100, 3, seed=4)
    g = from_networkx(nxg)
    assert degree_histogram(g).tolist() == nx.degree_histogram(nxg)
    assert max_degree(g) == max(d for _, d in nxg.degree())
    assert degree_histogram([]).tolist() == []


def graphs_for_triangles() -> list[nx.Graph]:
    out = random_graphs()
    out.append(nx.powerlaw_cluster_graph(300, 5, 0.6, seed=3))
    nxg = nx.gnp_random_graph(40, 0.3, seed=9)
    nxg.add_nodes_from(range(40, 45))  # isolated nodes
    out.append(nxg)
    return out


@pytest.mark.parametrize("block_work", [1 << 23, 1, 50])
def test_triangles_against_networkx_and_igraph(block_work: int, monkeypatch) -> None:
    monkeypatch.setattr(statistics, "_TRIANGLE_BLOCK_WORK", block_work)
    for nxg in graphs_for_triangles():
        g = from_networkx(nxg)
        local = nx.triangles(nxg)
        want = sum(local.values()) // 3
        assert triangle_count(g) == want
        assert triangle_count(g, method="igraph") == want
        assert local_triangle_counts(g).tolist() == [local[v] for v in g.node_ids.tolist()]


def test_validation() -> None:
    with pytest.raises(ValueError, match=r"degrees must be >= 0, got degrees\[1\] = -2"):
        kstar_counts([3, -2], 2)
    with pytest.raises(ValueError, match="not an integer"):
        kstar_counts([1.5], 1)
    with pytest.raises(ValueError, match="k must be an integer >= 0"):
        kstar_counts([1, 2], -1)
    with pytest.raises(TypeError, match="k must be an integer"):
        kstar_counts([1, 2], 2.5)
    with pytest.raises(TypeError, match="graph must be an ldpgraph Graph"):
        triangle_count([1, 2])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="method must be"):
        triangle_count(from_edge_array([[0, 1]]), method="fast")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one node"):
        degree_moments([], 1)
    with pytest.raises(ValueError, match="at least one node"):
        max_degree(np.zeros(0, dtype=np.int64))
    with pytest.raises(ValueError, match="orders must be an integer >= 0"):
        degree_moments([1], (1, -1))
    assert kstar_counts([], 3) == 0


def test_graph_objects_are_converted_by_load_graph() -> None:
    """Issue 38: the exact statistics take a networkx, igraph, scipy.sparse or DataFrame graph too
    (converted by load_graph), and a Degrees; karate's counts checked against networkx's own."""
    import igraph as ig
    import pandas as pd

    from ldpgraph.graph import Degrees, four_cycle_count, transitivity

    G = nx.karate_club_graph()
    edges = list(G.edges())
    want_tri = sum(nx.triangles(G).values()) // 3
    for g in (G, ig.Graph(n=34, edges=edges), nx.to_scipy_sparse_array(G), pd.DataFrame(edges, columns=["a", "b"])):
        assert kstar_counts(g, 2) == sum(d * (d - 1) // 2 for _, d in G.degree()) == 528
        assert triangle_count(g) == want_tri == 45
        assert transitivity(g) == pytest.approx(nx.transitivity(G), rel=1e-12)
        assert four_cycle_count(g) == four_cycle_count(from_edge_array(edges))
    assert kstar_counts(Degrees([3, 1, 2, 2]), 2) == 5
