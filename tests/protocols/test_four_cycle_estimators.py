"""4-cycle estimators: unbiasedness and variance exactly, by enumerating every RR outcome on tiny graphs.

On n = 5 nodes there are 10 pairs, so 1024 noisy graphs; each has probability
prod_e (p if the bit is kept else q). The estimator's exact mean and variance over them are
compared with the truth and the closed forms. The two-round sensitivity is checked against
a brute-force maximum over all neighbour lists of size <= d_max.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ldpgraph.graph import from_edge_array
from ldpgraph.graph.cycles import four_cycle_count, local_four_cycle_counts
from ldpgraph.protocols.four_cycles.kernels import (
    four_cycle_sensitivity,
    rr_four_cycle_estimate,
    rr_four_cycle_variance,
    rr_four_cycle_variance_estimate,
    two_round_rr_variance,
    z_matrix,
)
from ldpgraph.protocols.randomized_response import (
    flip_probability,
    keep_probability,
    pair_from_index,
    pair_index,
)

GRAPHS = {
    "square+chord": [[0, 1], [1, 2], [2, 3], [3, 0], [0, 2]],
    "k4+pendant": [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3], [3, 4]],
    "path": [[0, 1], [1, 2], [2, 3], [3, 4]],
    "k5": [[a, b] for a in range(5) for b in range(a)],
}


def _outcomes(g, eps):
    """Every noisy graph (sorted lower pair indices) with its probability."""
    n = g.n_nodes
    u, v = np.tril_indices(n, k=-1)
    all_idx = np.sort(pair_index(u.astype(np.int64), v.astype(np.int64)))
    pu, pv = pair_from_index(all_idx)
    a = np.zeros((n, n), dtype=bool)
    e = g.edges()
    a[e[:, 0], e[:, 1]] = a[e[:, 1], e[:, 0]] = True
    truth = a[pu, pv]
    p, q = keep_probability(eps), flip_probability(eps)
    for bits in itertools.product((False, True), repeat=all_idx.size):
        bits = np.array(bits)
        prob = math.prod(p if b == t else q for b, t in zip(bits, truth, strict=True))
        yield all_idx[bits], prob


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("eps", [0.7, 2.0])
def test_rr_estimate_exact_mean_and_variance(name, eps):
    g = from_edge_array(GRAPHS[name], n_nodes=5)
    vals, var_hats, probs = [], [], []
    for idx, prob in _outcomes(g, eps):
        vals.append(rr_four_cycle_estimate(5, idx, eps))
        var_hats.append(rr_four_cycle_variance_estimate(5, idx, eps))
        probs.append(prob)
    vals, var_hats, probs = np.array(vals), np.array(var_hats), np.array(probs)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    mean = float(probs @ vals)
    var = float(probs @ (vals - mean) ** 2)
    assert mean == pytest.approx(four_cycle_count(g), abs=1e-9 * max(1.0, np.abs(vals).max()))
    assert var == pytest.approx(rr_four_cycle_variance(g, eps), rel=1e-9)
    # the curator's variance estimate, from the noisy graph alone, is unbiased for it: exactly
    assert float(probs @ var_hats) == pytest.approx(var, rel=1e-9)
    assert np.ptp(var_hats) > 0.01 * var  # an estimate (it varies with the reports), not a constant


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_two_round_local_counts_exact_mean_and_variance(name):
    eps = 0.9
    g = from_edge_array(GRAPHS[name], n_nodes=5)
    nbrs = [g.neighbors(v) for v in range(5)]
    local = local_four_cycle_counts(g)
    s_vals, f_mean, probs = [], np.zeros(5), []
    for idx, prob in _outcomes(g, eps):
        z = z_matrix(5, idx, eps)
        f = np.array([sum(z[u, w] - 1.0 for u, w in itertools.combinations(nb, 2)) for nb in nbrs])
        f_mean += prob * f
        s_vals.append(f.sum())
        probs.append(prob)
    probs, s_vals = np.array(probs), np.array(s_vals)
    np.testing.assert_allclose(f_mean, local, atol=1e-9)  # each node's count: its 4-cycles
    mean = float(probs @ s_vals)
    assert mean == pytest.approx(4 * four_cycle_count(g), abs=1e-9)
    var = float(probs @ (s_vals - mean) ** 2)
    assert var == pytest.approx(two_round_rr_variance(g, eps), rel=1e-9)


def test_sensitivity_bounds_every_neighbouring_pair_of_lists():
    """|f(N) - f(N')| <= S for all lists N, N' = N + {l} of size <= d_max, with projection swaps."""
    rng = np.random.default_rng(5)
    n, eps = 6, 0.8
    for _ in range(5):
        idx = np.flatnonzero(rng.random(n * (n - 1) // 2) < 0.4).astype(np.int64)
        z = z_matrix(n, idx, eps)
        for d_max in (1, 2, 3):
            s = four_cycle_sensitivity(z, d_max)
            for v in range(n):
                others = [x for x in range(n) if x != v]

                def f(lst, z=z):
                    return sum(z[u, w] - 1.0 for u, w in itertools.combinations(lst, 2))

                worst = 0.0
                for size in range(d_max + 1):
                    for lst in itertools.combinations(others, size):
                        for l_new in others:
                            if l_new in lst:
                                continue
                            if size < d_max:  # added without projection
                                worst = max(worst, abs(f((*lst, l_new)) - f(lst)))
                            for l_old in lst:  # projection: l_new replaces l_old
                                swapped = tuple(x for x in lst if x != l_old) + (l_new,)
                                worst = max(worst, abs(f(swapped) - f(lst)))
                assert worst <= s + 1e-9


# ------------------------------------------------------------------------------ audit of round 2

N_AUDIT = 100_000


def _audit_setup():
    from ldpgraph.protocols.deploy_triangles import FOUR_CYCLE_PROTOCOL, TriangleBroadcast
    from ldpgraph.protocols.four_cycles.protocols import broadcast_sensitivity

    rng = np.random.default_rng(11)
    n = 9
    idx = np.flatnonzero(rng.random(n * (n - 1) // 2) < 0.5).astype(np.int64)
    b = TriangleBroadcast.build(FOUR_CYCLE_PROTOCOL, n, 0.5, 3, idx)
    return b, broadcast_sensitivity(b)


def _release_runs(b, eps, nb, size, rng, release=None):
    """``size`` independent releases of node 8 through the layer's code, on one seeded stream."""
    from ldpgraph.core import Seeded
    from ldpgraph.protocols.four_cycles.protocols import four_cycle_release

    stream = Seeded(int(np.random.default_rng(rng).integers(0, 2**62))).stream(2, 8)
    nb = np.array(nb, dtype=np.int64)
    if release is None:
        return four_cycle_release(8, nb, b, eps, stream, size=size)
    return np.array([release(8, nb, b, eps, stream) for _ in range(size)])


def test_audit_round_two_release_is_private_at_its_epsilon():
    from ldpgraph.audit import audit_neighbours

    b, s = _audit_setup()
    eps = 1.0

    def node(nb, size, rng):
        return _release_runs(b, eps, nb, size, rng)

    added = [((0, 1), (0, 1, 2)), ((4, 5), (4, 5, 7)), ((), (3,))]
    assert audit_neighbours(node, added, eps, n_samples=N_AUDIT, rng=1).passed
    swapped = [((0, 1, 3), (0, 1, 2, 3))]  # 4 > d_max = 3 neighbours: a projection swaps 2 in
    assert audit_neighbours(node, swapped, eps, n_samples=N_AUDIT // 5, rng=3).passed


def test_audit_catches_a_release_that_ignores_the_sensitivity():
    from ldpgraph.audit import audit_neighbours
    from ldpgraph.protocols.four_cycles.kernels import cached_z_and_sensitivity

    b, s = _audit_setup()
    z = cached_z_and_sensitivity(b.run_id, b.n_nodes, b.epsilon, b.bound, b.index)[0]
    # the pair whose change of f is largest, so that sensitivity 1 is far too small
    change = {l: abs(sum(z[l, w] - 1.0 for w in (0, 1))) for l in range(2, 8)}
    worst = max(change, key=change.get)
    assert change[worst] > 2.0

    def leaky(node, nb, bb, eps, stream):
        kept = nb
        f = sum(z[u, w] - 1.0 for u, w in itertools.combinations(kept.tolist(), 2))
        return math.floor(f + float(stream.uniform(1)[0])) + int(stream.dlap(eps, 1.0, 1)[0])

    def node(nb, size, rng):
        return _release_runs(b, 1.0, nb, size, rng, release=leaky)

    assert audit_neighbours(node, [((0, 1), (0, 1, worst))], 1.0, n_samples=20_000, rng=2).violation


def test_two_round_simulation_is_unbiased_within_4_se():
    """The simulated protocol (RR, local counts, rounding, DLap) averages to the truth (Monte-Carlo:
    the DLap scale follows the random S, so its variance has no closed form; its mean is exact)."""
    from ldpgraph.protocols.four_cycles.kernels import simulate_two_round_four_cycles

    g = from_edge_array(GRAPHS["k4+pendant"], n_nodes=5)
    est = simulate_two_round_four_cycles(g, 1.5, 1.5, 4, 1000, rng=7)
    se = est.std(ddof=1) / math.sqrt(est.size)
    assert abs(est.mean() - four_cycle_count(g)) <= 4 * se


@pytest.mark.parametrize("spec", ["ba:n=60,m=3", "ws:n=60,k=6,p=0.1"])
def test_rr_intervals_from_the_variance_estimate_cover(spec):
    """The curator's 95% interval C^ +- 1.96 sqrt(V^) (V^ from the noisy graph alone; none when
    V^ <= 0, counted as a miss) covers the true count in 95% +- 3 binomial sd (400 runs) at eps 1."""
    from ldpgraph.datasets import resolve_graph
    from ldpgraph.protocols.randomized_response import noisy_lower_pairs

    g = resolve_graph(spec, rng=0)
    truth, eps, trials = four_cycle_count(g), 1.0, 400
    gen = np.random.default_rng(1)
    p, q = keep_probability(eps), flip_probability(eps)
    hits = 0
    for _ in range(trials):
        n, idx = noisy_lower_pairs(g, p, q, rng=gen)
        est, var = rr_four_cycle_estimate(n, idx, eps), rr_four_cycle_variance_estimate(n, idx, eps)
        hits += var > 0 and abs(est - truth) <= 1.959964 * math.sqrt(var)
    assert abs(hits / trials - 0.95) <= 3 * math.sqrt(0.95 * 0.05 / trials), hits
