"""Triangle protocols: exact unbiasedness and variance by enumeration, node-side privacy audits,
Monte-Carlo against the analytic moments (small graphs here; Facebook in test_triangles_facebook)."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from ldpgraph.audit import audit_neighbours
from ldpgraph.graph import from_edge_array, from_networkx, triangle_count, triple_class_counts
from ldpgraph.mechanisms import DiscreteLaplace
from ldpgraph.protocols.randomized_response import (
    flip_probability,
    keep_probability,
    noisy_lower_pairs,
    pair_from_index,
    pair_index,
)
from ldpgraph.protocols.triangles.kernels import (
    common_neighbour_square_sum,
    local2rounds_release,
    lower_common_neighbour_square_sum,
    lower_wedges,
    noisy_triple_classes,
    rounding_variance,
    rr_memory_check,
    rr_triangle_estimate,
    rr_triangle_variance,
    simulate_rr_triangles,
    simulate_two_round,
    two_round_dlap_release,
    two_round_moments,
    two_round_variance,
)

N_AUDIT = 200_000

FIVE = {
    "K5": nx.complete_graph(5),
    "C5": nx.cycle_graph(5),
    "bowtie-ish": nx.Graph([(0, 1), (1, 2), (0, 2), (2, 3), (3, 4), (2, 4)]),
    "gnp": nx.gnp_random_graph(5, 0.5, seed=4),
    "star": nx.star_graph(4),
    "empty": nx.empty_graph(5),
}
PAIRS5 = [(u, v) for u in range(5) for v in range(u)]  # lower pairs, u > v


def _outcomes(G, eps):
    """All 2^10 RR outcomes of a 5-node graph: (probability, sorted pair indices)."""
    p, q = keep_probability(eps), flip_probability(eps)
    true = np.array([G.has_edge(u, v) for u, v in PAIRS5])
    idx = pair_index(np.array([u for u, _ in PAIRS5]), np.array([v for _, v in PAIRS5]))
    for bits in itertools.product([0, 1], repeat=10):
        b = np.array(bits, dtype=bool)
        prob = np.prod(np.where(true, np.where(b, p, q), np.where(b, q, p)))
        yield float(prob), np.sort(idx[b])


def _brute_classes(index, n):
    edges = set(index.tolist())
    out = [0, 0, 0, 0]
    for a, b, c in itertools.combinations(range(n), 3):
        k = sum(pair_index(np.array([y]), np.array([x]))[0] in edges for x, y in ((a, b), (b, c), (a, c)))
        out[k] += 1
    return tuple(out)


# ------------------------------------------------------------------------ exact: rr-triangles


@pytest.mark.parametrize("name", list(FIVE))
@pytest.mark.parametrize("eps", [0.5, 1.3])
def test_rr_unbiased_and_variance_by_enumeration(name, eps):
    G = FIVE[name]
    g = from_networkx(G)
    T = sum(nx.triangles(G).values()) // 3
    mean = second = total = 0.0
    for prob, idx in _outcomes(G, eps):
        est = rr_triangle_estimate(noisy_triple_classes(5, idx, method="dense"), eps)
        total += prob
        mean += prob * est
        second += prob * est * est
    assert total == pytest.approx(1.0, abs=1e-13)
    scale = (math.exp(eps) / math.expm1(eps)) ** 3 * 10  # size of the estimate's terms
    assert mean == pytest.approx(T, abs=1e-12 * scale)
    assert second - mean * mean == pytest.approx(rr_triangle_variance(g, eps), rel=1e-10)


def test_triple_class_kernels_against_brute_force():
    gen = np.random.default_rng(0)
    for eps in (0.3, 2.0):
        for _ in range(3):
            G = nx.gnp_random_graph(9, 0.4, seed=int(gen.integers(1000)))
            n, idx = noisy_lower_pairs(
                from_networkx(G), keep_probability(eps), flip_probability(eps), rng=gen
            )
            want = _brute_classes(idx, n)
            assert noisy_triple_classes(n, idx, method="dense") == want
            assert noisy_triple_classes(n, idx, method="sparse") == want
            assert noisy_triple_classes(n, idx) == want
    g = from_networkx(nx.gnp_random_graph(300, 0.2, seed=5))
    n, idx = noisy_lower_pairs(g, 0.8, 0.1, rng=1)
    assert noisy_triple_classes(n, idx, method="dense") == noisy_triple_classes(n, idx, method="sparse")


@pytest.mark.parametrize("block", [1, 7, 64, 299, 300])
def test_dense_kernel_blocks_against_numpy(monkeypatch, block):
    """The blocked lower-triangle product, for blocks that split n = 300 unevenly, against
    the integer trace tr(A^3) / 6 of the dense adjacency."""
    import ldpgraph.protocols.triangles.kernels as tri

    g = from_networkx(nx.gnp_random_graph(300, 0.2, seed=5))
    n, idx = noisy_lower_pairs(g, 0.8, 0.1, rng=1)
    u, v = pair_from_index(idx)
    a = np.zeros((n, n), dtype=np.int64)
    a[u, v] = a[v, u] = 1
    want = int(np.einsum("ij,jk,ki->", a, a, a)) // 6
    assert want > 1000
    monkeypatch.setattr(tri, "_DENSE_BLOCK", block)
    assert tri._dense_triangles(n, u, v) == want
    monkeypatch.setattr(tri, "_DENSE_MAX_NODES", 299)
    with pytest.raises(ValueError, match="dense kernel is exact up to n = 299"):
        tri._dense_triangles(n, u, v)
    with pytest.raises(ValueError, match="method"):
        noisy_triple_classes(n, idx, method="blas")


def test_graph_statistics_of_the_variances_brute_force():
    G = nx.gnp_random_graph(30, 0.3, seed=2)
    g = from_networkx(G)
    A = nx.to_numpy_array(G, nodelist=range(30), dtype=np.int64)
    C = A @ A
    off = ~np.eye(30, dtype=bool)
    assert common_neighbour_square_sum(g) == int((C[off] ** 2).sum())
    L = np.tril(A, -1)
    Cp = L.T @ L
    assert lower_common_neighbour_square_sum(g) == int((np.triu(Cp, 1) ** 2).sum())


def test_rr_estimate_validation_and_noise_free_limit():
    g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    assert rr_triangle_estimate(triple_class_counts(g), 60.0) == pytest.approx(1.0, abs=1e-9)
    with pytest.raises(ValueError, match="classes"):
        rr_triangle_estimate((1, 2, 3), 1.0)
    with pytest.raises(ValueError, match="classes\\[1\\]"):
        rr_triangle_estimate((1, -2, 3, 0), 1.0)
    with pytest.raises(TypeError, match="needs? the adjacency|ldpgraph Graph"):
        rr_triangle_variance([1, 2, 3], 1.0)


def test_rr_refuses_graphs_that_do_not_fit():
    g = from_edge_array([[0, 1]], n_nodes=40_000)
    with pytest.raises(MemoryError, match="two-round-triangles-dlap"):
        rr_memory_check(g, 1.0, 2 << 30)
    with pytest.raises(MemoryError, match="two-round"):
        simulate_rr_triangles(g, 0.5)
    # the refusal says the size limit and why (issue 34), as ldpgraph methods does
    from ldpgraph.protocols.triangles.kernels import rr_max_nodes

    limit = rr_max_nodes(1.0)
    assert 15_000 < limit < 25_000
    with pytest.raises(MemoryError, match=f"up to about {limit:,} nodes at this epsilon, because its estimate "
                                          "reads the noisy graph's triangle count"):
        rr_memory_check(g, 1.0, 2 << 30)
    rr_memory_check(from_edge_array([[0, 1]], n_nodes=limit - 200), 1.0, 2 << 30)  # fits
    with pytest.raises(MemoryError):
        rr_memory_check(from_edge_array([[0, 1]], n_nodes=limit + 200), 1.0, 2 << 30)
    import contextlib
    import io

    from ldpgraph.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["methods", "--stat", "triangles", "--quiet"])
    assert f"rr-triangles: simulated up to about {limit:,} nodes at epsilon 1" in out.getvalue()


# ------------------------------------------------------------------------ exact: two rounds


@pytest.mark.parametrize("name", ["K5", "bowtie-ish", "gnp", "C5"])
def test_two_round_unbiased_and_variance_by_enumeration(name):
    """E and Var of sum_v w_v over all 2^10 RR outcomes; rounding and noise add independently."""
    G = FIVE[name]
    g = from_networkx(G)
    eps1, eps2 = 0.7, 0.9
    p, q = keep_probability(eps1), flip_probability(eps1)
    T = sum(nx.triangles(G).values()) // 3
    lower = [[u for u in G[v] if u < v] for v in range(5)]
    mean = second = 0.0
    round_var = None
    for prob, idx in _outcomes(G, eps1):
        chosen = set(idx.tolist())
        ws = []
        for v in range(5):
            w = sum(
                (pair_index(np.array([k]), np.array([j]))[0] in chosen) - q
                for j, k in itertools.combinations(sorted(lower[v]), 2)
            )
            ws.append(w)
        est = sum(ws) / (p - q)
        mean += prob * est
        second += prob * est * est
        rv = sum((w - math.floor(w)) * (1 - (w - math.floor(w))) for w in ws)
        assert round_var is None or rv == pytest.approx(round_var, abs=1e-12)  # fixed by the graph
        round_var = rv
    assert mean == pytest.approx(T, abs=1e-12)
    assert round_var == pytest.approx(rounding_variance(g, q), abs=1e-12)
    dmax = int(g.degrees.max())
    dlo = max(int(lower_wedges(g).lower_degrees.max()), 1)
    lap = 2 * (dmax / eps2) ** 2
    dl = DiscreteLaplace(epsilon=eps2, sensitivity=max(dlo - 1, 1)).variance
    var_rr = second - mean * mean
    assert two_round_variance(g, eps1, lap) == pytest.approx(var_rr + 5 * lap / (p - q) ** 2, rel=1e-10)
    want = var_rr + (round_var + 5 * dl) / (p - q) ** 2
    assert two_round_variance(g, eps1, dl, rounding=True) == pytest.approx(want, rel=1e-10)
    # the moments used by the methods agree (public bound, split so that eps1 = 0.7)
    for noise, v in (("laplace", lap), ("dlap", dl)):
        eps = 1.6
        m, var = two_round_moments(g, eps1, eps - eps1, noise=noise)
        e2 = eps - eps1
        nv = (
            2 * (dmax / e2) ** 2
            if noise == "laplace"
            else DiscreteLaplace(epsilon=e2, sensitivity=max(dlo - 1, 1)).variance
        )
        assert m == T
        assert var == pytest.approx(two_round_variance(g, eps1, nv, rounding=noise == "dlap"), rel=1e-12)
        del v


def test_budget_split_is_the_plans():
    from ldpgraph.protocols.triangles.two_round import TwoRoundTrianglesDLap, TwoRoundTrianglesLaplace

    for proto in (TwoRoundTrianglesDLap(), TwoRoundTrianglesLaplace()):
        plan = proto.plan(2.0, d_max=3, shares={"rr": 0.25, "local_count": 0.75})
        assert plan.release_budget() == {"rr": 0.5, "local-count": 1.5}
        plan = proto.plan(1.0, private_bound=True, shares={"lower_degree": 0.2, "rr": 0.4, "local_count": 0.4})
        assert plan.release_budget() == pytest.approx({"rr": 0.4, "degree-bound": 0.2, "local-count": 0.4})
        with pytest.raises(ValueError, match="shares must be > 0"):
            proto.plan(1.0, d_max=3, shares={"rr": 1.0, "local_count": 0.0})
        with pytest.raises(ValueError, match="shares"):
            proto.plan(1.0, private_bound=True, shares={"rr": 0.5, "local_count": 0.5})


# ------------------------------------------------------------------- Monte-Carlo, small graphs


def _within(x, mean, var, k=4.0):
    return abs(x.mean() - mean) <= k * math.sqrt(var / x.size)


@pytest.mark.parametrize(
    "noise, kwargs",
    [
        ("laplace", {}),
        ("dlap", {}),
        ("laplace", {"bound": 9}),  # projection active: biased, exact moments still
        ("dlap", {"bound": 4}),
        ("laplace", {"eps0": 0.3 * 8.0}),
        ("dlap", {"eps0": 0.3 * 8.0}),
    ],
)
def test_two_round_monte_carlo_matches_exact_moments(noise, kwargs):
    g = from_networkx(nx.gnp_random_graph(50, 0.25, seed=3))
    eps, n = 8.0, 3000
    rest = eps - kwargs.get("eps0", 0.0)  # 0.4 of the rest on round 1
    x = simulate_two_round(g, 0.4 * rest, 0.6 * rest, n, noise=noise, rng=7, **kwargs)
    m, v = two_round_moments(g, 0.4 * rest, 0.6 * rest, noise=noise, **kwargs)
    assert _within(x, m, v)
    # variance: the sample variance's SE from the sample's fourth moment
    k4 = float(((x - x.mean()) ** 4).mean())
    se = math.sqrt(max(k4 - x.var() ** 2, 0.0) / n)
    assert abs(x.var(ddof=1) - v) <= 4 * se


@pytest.mark.parametrize("noise", ["laplace", "dlap"])
def test_two_round_few_projected_nodes_matches_exact_moments(noise):
    """A public bound just below the maximum: a few nodes are projected wedge by wedge, the
    other pairs are drawn by (c+, edge) groups (the path of a private bound near the max)."""
    g = from_networkx(nx.gnp_random_graph(50, 0.25, seed=3))
    lengths = g.degrees if noise == "laplace" else lower_wedges(g).lower_degrees
    bound = int(np.sort(lengths)[-3])  # the top two (or so) nodes are projected
    assert 1 <= int(np.sum(lengths > bound)) <= 5
    eps, n = 8.0, 4000
    x = simulate_two_round(g, 0.4 * eps, 0.6 * eps, n, noise=noise, rng=9, bound=bound)
    m, v = two_round_moments(g, 0.4 * eps, 0.6 * eps, noise=noise, bound=bound)
    assert m < triangle_count(g)  # the projection is active (biased)
    assert _within(x, m, v)
    k4 = float(((x - x.mean()) ** 4).mean())
    assert abs(x.var(ddof=1) - v) <= 4 * math.sqrt(max(k4 - x.var() ** 2, 0.0) / n)


def test_rr_monte_carlo_on_a_small_graph():
    g = from_networkx(nx.gnp_random_graph(60, 0.3, seed=1))
    T = triangle_count(g)
    for eps in (0.5, 2.0):
        x = simulate_rr_triangles(g, eps, 400, rng=int(eps * 10))
        v = rr_triangle_variance(g, eps)
        assert _within(x, T, v)
        k4 = float(((x - x.mean()) ** 4).mean())
        assert abs(x.var(ddof=1) - v) <= 4 * math.sqrt(max(k4 - x.var() ** 2, 0.0) / x.size)


def test_simulations_are_seeded():
    g = from_networkx(nx.gnp_random_graph(40, 0.3, seed=1))
    a = simulate_two_round(g, 0.5, 0.5, 3, noise="dlap", rng=3)
    assert np.array_equal(a, simulate_two_round(g, 0.5, 0.5, 3, noise="dlap", rng=3))
    assert not np.array_equal(a, simulate_two_round(g, 0.5, 0.5, 3, noise="dlap", rng=4))
    b = simulate_rr_triangles(g, 1.0, 2, rng=3)
    assert np.array_equal(b, simulate_rr_triangles(g, 1.0, 2, rng=3))
    with pytest.raises(ValueError, match="noise"):
        simulate_two_round(g, 0.5, 0.5, noise="gauss")
    with pytest.raises(ValueError, match="not both"):
        simulate_two_round(g, 0.5, 0.5, bound=3, eps0=0.1)


# ------------------------------------------------------------------------ privacy audits


def test_rr_node_release_is_private_and_miscalibration_is_caught():
    eps = 1.0

    def node(bits, size, rng, eps_used=eps):
        keep = keep_probability(eps_used)
        b = np.asarray(bits, dtype=bool)
        pr = np.where(b, keep, 1 - keep)
        return (rng.random((size, b.size)) < pr).astype(np.int64)

    pairs = [((1, 0, 1), (1, 1, 1)), ((0, 0, 0), (0, 0, 1))]
    assert audit_neighbours(node, pairs, eps, n_samples=N_AUDIT, rng=1).passed

    def leaky(bits, size, rng):  # keeps the true bit with the probability for 2 eps
        return node(bits, size, rng, eps_used=2 * eps)

    assert audit_neighbours(leaky, pairs, eps, n_samples=N_AUDIT, rng=2).violation


# broadcast RR bits chosen to attain the worst case: b_jl = 1 towards node 3, 0 towards node 4
def _bits(j, k):
    j, k = np.asarray(j), np.asarray(k)
    return np.where(k == 4, 0.0, 1.0)


def test_dlap_round_two_is_private_at_its_sensitivity():
    eps2, bound, q = 1.0, 4, 0.3
    node_id = 9

    def node(nb, size, rng):
        return two_round_dlap_release(node_id, list(nb), _bits, eps2, bound, q, size=size, rng=rng)

    pairs = [
        ((0, 1, 2), (0, 1, 2, 3)),  # case (i): adds l = 3, change 3 (1 - q)
        ((0, 1, 2, 4), (0, 1, 2, 3, 4)),  # case (ii): projection swaps in l = 3
        ((0, 1, 2, 3), (0, 1, 2, 3, 12)),  # an edge to a higher node changes nothing
    ]
    assert audit_neighbours(node, pairs, eps2, n_samples=N_AUDIT, rng=3).passed

    def forgets_bound(nb, size, rng):  # DLap at sensitivity 1: the change of w is up to D - 1 = 3
        gen = np.random.default_rng(rng)
        rel = two_round_dlap_release(node_id, list(nb), _bits, 100.0, bound, q, size=size, rng=gen)
        return rel + DiscreteLaplace(epsilon=eps2).sample(size, rng=gen)

    assert audit_neighbours(forgets_bound, pairs[:1], eps2, n_samples=N_AUDIT, rng=4).violation


def test_local2rounds_round_two_and_composition():
    eps1, eps2, dmax = 0.5, 1.0, 4
    p = keep_probability(eps1)

    def round2(nb, size, rng):
        return local2rounds_release(9, list(nb), _bits, eps2, dmax, 1 - p, size=size, rng=rng)

    pairs = [((0, 1, 2), (0, 1, 2, 3)), ((0, 1, 2, 4), (0, 1, 2, 3, 4))]
    assert audit_neighbours(round2, pairs, eps2, n_samples=N_AUDIT, rng=5).passed

    def composed(nb, size, rng):  # the node's whole release: its RR bits and its round 2
        gen = np.random.default_rng(rng)
        own = np.isin(np.arange(9), list(nb))[[3]]  # the bit towards node 3 (the one that changes)
        bits = (gen.random((size, 1)) < np.where(own, p, 1 - p)).astype(np.float64)
        return np.column_stack([bits, round2(nb, size, gen)])

    res = audit_neighbours(composed, pairs[:1], eps1 + eps2, n_samples=N_AUDIT, rng=6)
    assert res.passed


def test_two_round_streams_beyond_max_bytes_without_building_the_wedge_table():
    from ldpgraph.protocols.triangles.kernels import BYTES_PER_WEDGE, wedge_memory_check
    from ldpgraph.protocols.triangles.two_round import TwoRoundTrianglesDLap

    g = from_edge_array(np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]))  # K4: wedges 0+0+1+3
    need = BYTES_PER_WEDGE * 4 + 64 * 12
    wedge_memory_check(g, need)  # exactly fits
    with pytest.raises(MemoryError, match="two-round-triangles on 4 nodes: its 4 lower wedges"):
        wedge_memory_check(g, need - 1)
    proto = TwoRoundTrianglesDLap()
    plan = proto.plan(1.0, d_max=3)
    proto.max_bytes = need - 1  # the table would not fit: the scaled simulator (wedge patterns, streamed bits)
    assert not proto.uses_table(g)
    assert proto.simulate(g, plan, "triangles", 2, np.random.default_rng(0)).shape == (2,)
    assert "_wedge_cache" not in proto.__dict__ and proto.__dict__["_pattern_cache"]
    proto = TwoRoundTrianglesDLap()
    proto.max_bytes = need
    assert proto.uses_table(g)
    assert proto.simulate(g, plan, "triangles", 2, np.random.default_rng(0)).shape == (2,)
    assert proto.__dict__["_wedge_cache"]
