"""The scaled clustering counts (issue 34): hashed RR bits give, pair for pair, the counts of the noisy
graph those bits define (so the joint law over the nodes is the protocol's, with the pairs' bits
independent Bernoulli(q)); the flips themselves are Bernoulli(q) and independent across pairs."""

from __future__ import annotations

import numpy as np
import pytest

from ldpgraph.datasets import resolve_graph
from ldpgraph.protocols.clustering import kernels as k
from ldpgraph.protocols.randomized_response import pair_index


def _noisy_index_of(g, seed, q):
    """The noisy graph the hashed flips define: a_p XOR F_p over every pair p (sorted pair indices)."""
    n = g.n_nodes
    keys = np.arange(n * (n - 1) // 2, dtype=np.int64)
    rows = np.repeat(np.arange(n), g.degrees)
    lower = g.indices < rows
    a = np.zeros(keys.size, dtype=bool)
    a[pair_index(rows[lower], g.indices[lower])] = True
    return keys[a != k.pair_flips(keys, seed, q)]


@pytest.mark.parametrize("spec", ["ws:n=60,k=8,p=0.3", "ba:n=80,m=4", "er:n=70,p=0.15"])
@pytest.mark.parametrize("d_max", [None, 3, 6])
def test_hashed_counts_are_the_noisy_graph_counts(spec, d_max):
    g = resolve_graph(spec, rng=1)
    og = k.oriented_graph(g)
    bound = int(g.degrees.max()) if d_max is None else d_max
    for trial in range(3):
        ptr, idx = k._kept_neighbours(g, bound, True, np.random.default_rng(trial))
        seed_gen = np.random.default_rng(100 + trial)
        seed = k.flip_seed(np.random.default_rng(100 + trial))
        q = (0.1, 0.37, 0.5)[trial]
        got = k.clustering_pair_counts(g, og, ptr, idx, q, seed_gen)
        want = k.neighbour_pair_counts(ptr, idx, _noisy_index_of(g, seed, q), g.n_nodes)
        np.testing.assert_array_equal(got, want)


def test_oriented_triangles_are_the_local_triangle_counts():
    from ldpgraph.graph.statistics import local_triangle_counts

    g = resolve_graph("ba:n=3000,m=6", rng=2)
    np.testing.assert_array_equal(k.oriented_graph(g).triangles, local_triangle_counts(g))


def test_pair_flips_are_bernoulli_and_independent():
    """Mean q within 5 SE; neighbouring keys and two seeds uncorrelated (|r| < 5 SE)."""
    n, q = 2_000_000, 0.3
    keys = np.arange(n, dtype=np.int64) * 3 + 11
    f = k.pair_flips(keys, 12345, q).astype(float)
    se = np.sqrt(q * (1 - q) / n)
    assert abs(f.mean() - q) < 5 * se
    for other in (k.pair_flips(keys + 1, 12345, q), k.pair_flips(keys, 12346, q), np.roll(f, 1)):
        r = np.corrcoef(f, np.asarray(other, dtype=float))[0, 1]
        assert abs(r) < 5 / np.sqrt(n)


def test_projection_keeps_a_uniform_subset_of_the_projected_lists_only():
    """_kept_neighbours draws only for the nodes above d_max: each of their C(d, D) subsets equally
    likely (chi-square, 4000 draws), the other lists whole."""
    from itertools import combinations

    from ldpgraph.graph import from_edge_array

    g = from_edge_array([[0, j] for j in range(1, 6)] + [[1, 2], [3, 4]])  # node 0: degree 5
    subsets = {c: 0 for c in combinations(range(1, 6), 3)}
    gen = np.random.default_rng(5)
    draws = 4000
    for _ in range(draws):
        ptr, idx = k._kept_neighbours(g, 3, True, gen)
        subsets[tuple(idx[ptr[0]:ptr[1]].tolist())] += 1
        for v in range(1, g.n_nodes):
            assert idx[ptr[v]:ptr[v + 1]].tolist() == g.indices[g.indptr[v]:g.indptr[v + 1]].tolist()
    counts = np.array(list(subsets.values()), dtype=float)
    expected = draws / counts.size
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 33.7  # 9 degrees of freedom: P(chi2 > 33.7) ~ 1e-4
