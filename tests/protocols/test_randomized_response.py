"""Randomized response on adjacency bits: exact law, layout of the result, validation."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from ldpgraph.graph import from_edge_array, from_networkx
from ldpgraph.protocols import randomized_response as rr
from ldpgraph.protocols.randomized_response import (
    expected_noisy_edges,
    flip_probability,
    keep_probability,
    noisy_lower_pairs,
    pair_from_index,
    pair_index,
    randomized_response_graph,
)

SMALL = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])  # 4 nodes, 6 pairs


@pytest.fixture(params=["bitmap", "sorted"])
def dedup(request, monkeypatch):
    """Run a test with each of the two deduplication paths of the non-edge draw."""
    if request.param == "sorted":
        monkeypatch.setattr(rr, "_BITMAP_MIN_PAIRS", 0)
        monkeypatch.setattr(rr, "_BITMAP_FACTOR", 0)
    return request.param


def test_probabilities():
    eps = 0.7
    assert keep_probability(eps) + flip_probability(eps) == pytest.approx(1.0, abs=1e-15)
    assert keep_probability(eps) / flip_probability(eps) == pytest.approx(math.exp(eps), rel=1e-14)
    assert flip_probability(40.0) == pytest.approx(math.exp(-40.0), rel=1e-14)  # not 1 - p


def test_pair_index_roundtrip():
    u, v = np.tril_indices(300, k=-1)
    idx = pair_index(u, v)
    order = np.lexsort((v, u))
    assert np.array_equal(idx[order], np.arange(idx.size))
    uu, vv = pair_from_index(idx)
    assert np.array_equal(uu, u) and np.array_equal(vv, v)
    big = np.array([10**12, 10**13 + 7, 2**50], dtype=np.int64)
    bu, bv = pair_from_index(big)
    assert np.array_equal(pair_index(bu, bv), big) and np.all((bv >= 0) & (bv < bu))


def test_layout_and_determinism(dedup):
    g = from_networkx(nx.gnp_random_graph(60, 0.2, seed=3))
    a = randomized_response_graph(g, 0.8, rng=5)
    assert isinstance(a, sp.csr_array) and a.shape == (60, 60) and a.dtype == np.float64
    assert a.has_sorted_indices and (abs(a - a.T)).nnz == 0 and a.diagonal().sum() == 0
    assert np.all(a.data == 1.0)
    low = randomized_response_graph(g, 0.8, rng=5, symmetric=False)
    assert (low != sp.tril(a, k=-1)).nnz == 0
    b = randomized_response_graph(g, 0.8, rng=5)
    assert (a != b).nnz == 0
    c = randomized_response_graph(g, 0.8, rng=6)
    assert (a != c).nnz > 0
    # a sparse adjacency input gives the same draw as the Graph
    adj = sp.csr_array(nx.to_scipy_sparse_array(nx.gnp_random_graph(60, 0.2, seed=3)))
    d = randomized_response_graph(adj, 0.8, rng=5)
    assert (a != d).nnz == 0


def test_exact_joint_law_chi_square(dedup):
    """All 2^6 noisy graphs of a 4-node graph, against the product of Bernoulli laws."""
    eps, draws = 0.6, 12_000
    p, q = keep_probability(eps), flip_probability(eps)
    pairs = [(u, v) for u in range(4) for v in range(u)]
    true = {(1, 0), (2, 1), (2, 0), (3, 2)}
    gen = np.random.default_rng(11)
    counts = np.zeros(64)
    for _ in range(draws):
        _, idx = noisy_lower_pairs(SMALL, p, q, rng=gen)
        code = int(np.sum(1 << idx))
        counts[code] += 1
    probs = np.empty(64)
    for code in range(64):
        pr = 1.0
        for bit, pair in enumerate(pairs):
            b = (code >> bit) & 1
            pb = p if pair in true else q
            pr *= pb if b else 1 - pb
        probs[code] = pr
    assert probs.sum() == pytest.approx(1.0)
    assert stats.chisquare(counts, draws * probs).pvalue > 1e-3


def test_noisy_edge_count_within_analytic_noise(dedup):
    g = from_networkx(nx.gnp_random_graph(400, 0.05, seed=1))
    eps = 1.0
    p, q = keep_probability(eps), flip_probability(eps)
    counts = [randomized_response_graph(g, eps, rng=s).nnz // 2 for s in range(20)]
    pairs = 400 * 399 // 2
    var = g.n_edges * p * q + (pairs - g.n_edges) * q * p
    assert abs(np.mean(counts) - expected_noisy_edges(400, g.n_edges, eps)) < 4 * math.sqrt(var / 20)
    assert np.var(counts, ddof=1) < 3 * var


def test_no_flips_and_all_flips():
    assert noisy_lower_pairs(SMALL, 1.0, 0.0, rng=0)[1].tolist() == [0, 1, 2, 5]
    assert noisy_lower_pairs(SMALL, 0.0, 1.0, rng=0)[1].tolist() == [3, 4]
    assert noisy_lower_pairs(from_edge_array(np.empty((0, 2), int), n_nodes=1), 0.5, 0.5, rng=0)[1].size == 0


def test_refuses_what_does_not_fit():
    g = from_edge_array([[0, 1]], n_nodes=20_000)
    with pytest.raises(MemoryError, match="two-round-triangles-dlap.*two-round-triangles-laplace"):
        randomized_response_graph(g, 1.0)
    with pytest.raises(MemoryError, match="max_bytes"):
        randomized_response_graph(SMALL, 1.0, max_bytes=10)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"epsilon": -1.0}, ValueError, "epsilon"),
        ({"epsilon": "1"}, TypeError, "epsilon"),
        ({"epsilon": 1.0, "rng": "x"}, TypeError, "rng"),
        ({"epsilon": 1.0, "max_bytes": -5}, ValueError, "max_bytes"),
    ],
)
def test_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        randomized_response_graph(SMALL, **kwargs)


def test_bad_graph_and_probabilities():
    with pytest.raises(TypeError, match="graph must be"):
        randomized_response_graph([[0, 1]], 1.0)
    with pytest.raises(ValueError, match="square"):
        randomized_response_graph(sp.csr_array(np.ones((2, 3))), 1.0)
    with pytest.raises(ValueError, match="p_edge must be in"):
        noisy_lower_pairs(SMALL, 1.5, 0.1)
    with pytest.raises(TypeError, match="p_non_edge"):
        noisy_lower_pairs(SMALL, 0.5, None)


def test_pairs_reported_once_by_higher_node():
    """Every reported pair is (u, v) with u > v, each at most once, within range."""
    g = from_networkx(nx.gnp_random_graph(50, 0.3, seed=2))
    u, v = pair_from_index(noisy_lower_pairs(g, 0.7, 0.3, rng=1)[1])
    assert np.all((0 <= v) & (v < u) & (u < 50))
    assert len(set(zip(u.tolist(), v.tolist(), strict=True))) == u.size
