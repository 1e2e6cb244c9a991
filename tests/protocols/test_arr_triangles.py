"""arr-triangles: exact unbiasedness and variance by enumeration (no clipping), the clipped count
(LP and Lipschitz), the clipping bounds, node-side privacy audits, mu = 1 equals the two-round
DLap protocol in law, Monte-Carlo against the analytic moments, and the clipping bias on
Facebook / Email-Enron."""

from __future__ import annotations

import itertools
import math

import mpmath
import networkx as nx
import numpy as np
import pytest
from scipy.optimize import linprog

from ldpgraph.audit import audit_neighbours
from ldpgraph.graph import from_networkx, triangle_count
from ldpgraph.mechanisms import DiscreteLaplace
from ldpgraph.protocols.randomized_response import (
    expected_noisy_edges,
    flip_probability,
    keep_probability,
    noisy_graph_bits,
)
from ldpgraph.protocols.triangles.arr_kernels import (
    DEFAULT_MU,
    arr_bits,
    arr_clipping_bias_bound,
    arr_count_release,
    arr_memory_check,
    arr_moments,
    arr_nonbinding_variance,
    arr_probabilities,
    arr_sensitivity,
    clipped_triangle_count,
    degree_margin,
    simulate_arr,
    triangle_clip_bound,
)
from ldpgraph.protocols.triangles.arr_protocol import ARRTrianglesProtocol
from ldpgraph.protocols.triangles.kernels import (
    lower_wedges,
    two_round_dlap_release,
    two_round_moments,
)
from ldpgraph.run.method import FLOAT_BITS, get_method


def _clipped(eps: float) -> tuple[float, float, float]:
    """``(eps0, eps1, eps2)`` of arr-triangles' plan (with clipping) at ``eps``."""
    plan = ARRTrianglesProtocol().plan(eps)
    return tuple(plan.release(q).epsilon for q in ("lower_degree", "rr_count", "local_count"))

N_AUDIT = 200_000

FIVE = {
    "K5": nx.complete_graph(5),
    "C5": nx.cycle_graph(5),
    "bowtie-ish": nx.Graph([(0, 1), (1, 2), (0, 2), (2, 3), (3, 4), (2, 4)]),
    "gnp": nx.gnp_random_graph(5, 0.6, seed=4),
    "empty": nx.empty_graph(5),
}
PAIRS5 = [(k, j) for k in range(5) for j in range(k)]  # lower pairs k > j


def _dlap_moments_by_summation(eps: float, sens: int) -> tuple[float, float]:
    """Mean and variance of DLap(e^{-eps/sens}) summed over its law (tail < 1e-15)."""
    p = math.exp(-eps / sens)
    k_max = int(math.log(1e-18) / math.log(p)) + 10
    k = np.arange(-k_max, k_max + 1, dtype=np.float64)
    pmf = (1 - p) / (1 + p) * p ** np.abs(k)
    assert 1.0 - pmf.sum() < 1e-15
    return float(np.dot(k, pmf)), float(np.dot(k * k, pmf))


def _enumerate_unclipped(G: nx.Graph, eps: float, mu: float) -> tuple[float, float]:
    """Exact mean and variance of the unclipped estimate: all 2^10 ARR outcomes, the rounding's
    law, the DLap law summed (independent of the package's moment code)."""
    eps1 = eps2 = eps / 2  # the unclipped split
    p, q = keep_probability(eps1), flip_probability(eps1)
    pe, pn = mu * p, mu * q
    lower = {v: sorted(u for u in G[v] if u < v) for v in range(5)}
    d_bound = max(max(len(x) for x in lower.values()), 1)
    noise_mean, noise_var = _dlap_moments_by_summation(eps2, max(d_bound - 1, 1))
    assert abs(noise_mean) < 1e-15
    true = {pair: G.has_edge(*pair) for pair in PAIRS5}
    m1 = m2 = 0.0
    total = 0.0
    for bits in itertools.product([0, 1], repeat=len(PAIRS5)):
        b = dict(zip(PAIRS5, bits, strict=True))
        prob = 1.0
        for pair, bit in b.items():
            r = pe if true[pair] else pn
            prob *= r if bit else 1 - r
        cond_mean = cond_var = 0.0
        for v in range(5):
            nb = lower[v]
            w = sum(b[(k, j)] for j, k in itertools.combinations(nb, 2)) - pn * math.comb(len(nb), 2)
            fl = math.floor(w)
            frac = w - fl
            cond_mean += fl * (1 - frac) + (fl + 1) * frac + noise_mean  # E floor(w + U) = w
            cond_var += frac * (1 - frac) + noise_var
        scale = pe - pn
        m1 += prob * cond_mean / scale
        m2 += prob * (cond_var + cond_mean**2) / scale**2
        total += prob
    assert total == pytest.approx(1.0, abs=1e-12)
    return m1, m2 - m1 * m1


# ------------------------------------------------------------------------ exact: no clipping


@pytest.mark.parametrize("name", list(FIVE))
@pytest.mark.parametrize("eps,mu", [(0.7, 0.3), (2.0, 1.0), (1.3, 0.05)])
def test_unclipped_unbiased_and_variance_by_enumeration(name, eps, mu):
    G = FIVE[name]
    mean, var = _enumerate_unclipped(G, eps, mu)
    t = triangle_count(from_networkx(G))
    assert mean == pytest.approx(t, rel=1e-9, abs=1e-9)
    a_mean, a_var = arr_moments(from_networkx(G), eps / 2, eps / 2, mu=mu)
    assert a_mean == t
    assert a_var == pytest.approx(var, rel=1e-9)


def test_mu_one_without_clipping_equals_two_round_dlap_moments():
    for G in (nx.karate_club_graph(), nx.les_miserables_graph(), nx.gnp_random_graph(60, 0.2, seed=3)):
        g = from_networkx(nx.convert_node_labels_to_integers(G))
        for eps in (0.5, 1.0, 2.0):
            m_a, v_a = arr_moments(g, eps / 2, eps / 2, mu=1.0)
            m_t, v_t = two_round_moments(g, eps / 2, eps / 2, noise="dlap")
            assert m_a == m_t
            assert v_a == pytest.approx(v_t, rel=1e-12)
    arr = get_method("arr-triangles").with_options(mu=1.0, clipping=False)
    two = get_method("two-round-triangles-dlap")
    for stat in ("triangles", "transitivity"):
        assert arr.budget(1.0, stat) == {
            ("arr" if k == "rr" else k): v for k, v in two.budget(1.0, stat).items()
        }
    plans = [m.plan(1.0, g) for m in (arr, two)]
    assert plans[0].release("local_count").sensitivity_of("local_count") == float(
        plans[1].public["d_max"] - 1) == plans[1].release("local_count").sensitivity_of("local_count")


def _release_pmf(w_values, eps2: float, sens: int, support: np.ndarray) -> np.ndarray:
    """Exact pmf of floor(w + U) + DLap, w uniform over ``w_values`` (the projections)."""
    mech = DiscreteLaplace(epsilon=eps2, sensitivity=sens)
    out = np.zeros(support.size)
    for w in w_values:
        fl = math.floor(w)
        frac = w - fl
        out += ((1 - frac) * mech.pmf(support - fl) + frac * mech.pmf(support - fl - 1)) / len(w_values)
    return out


def _bits_from(pairs: set[tuple[int, int]]):
    def noisy_bit(j, k):
        return np.array([(int(a), int(b)) in pairs for a, b in zip(np.ravel(j), np.ravel(k), strict=True)])

    return noisy_bit


def _chi2_ok(sample: np.ndarray, support: np.ndarray, pmf: np.ndarray) -> bool:
    """Pooled chi-square goodness of fit at level 1e-6 (cells with expected count >= 20)."""
    from scipy.stats import chi2

    n = sample.size
    counts = np.array([np.count_nonzero(sample == k) for k in support])
    assert counts.sum() >= n * (1 - 1e-3)  # the support holds the sample
    big = pmf * n >= 20
    obs = np.r_[counts[big], n - counts[big].sum()]
    exp = np.r_[pmf[big] * n, n * (1 - pmf[big].sum())]
    stat = float(np.sum((obs - exp) ** 2 / exp))
    return chi2.sf(stat, obs.size - 1) > 1e-6


def test_mu_one_release_law_equals_two_round_dlap_release():
    """Both node releases against the exact law (projection averaged over the 10 subsets)."""
    eps1, eps2, bound, node = 0.5, 1.0, 3, 9
    q = flip_probability(eps1)
    pairs = {(0, 1), (1, 2), (0, 3), (2, 4), (3, 4)}
    bit = _bits_from(pairs)
    nb = [0, 1, 2, 3, 4, 12]  # 5 lower neighbours, projected to 3; 12 is higher
    w_values = [
        sum((a, b) in pairs for a, b in itertools.combinations(s, 2)) - q * 3
        for s in itertools.combinations(range(5), 3)
    ]
    support = np.arange(-40, 44)
    pmf = _release_pmf(w_values, eps2, bound - 1, support)
    n = 100_000
    a = arr_count_release(node, nb, bit, eps2, bound, 1.0 * q, kappa=None, size=n, rng=1)
    b = two_round_dlap_release(node, nb, bit, eps2, bound, q, size=n, rng=2)
    assert _chi2_ok(a, support, pmf) and _chi2_ok(b, support, pmf)
    # and the check has power: a release at the wrong sensitivity fails it
    c = arr_count_release(node, nb, bit, eps2, bound, q, kappa=1, size=n, rng=3)
    assert not _chi2_ok(c, support, pmf)


# ------------------------------------------------------------------------ the clipped count


def _lp_value(n: int, u: np.ndarray, v: np.ndarray, kappa: int) -> float:
    if u.size == 0:
        return 0.0
    a = np.zeros((n, u.size))
    a[u, np.arange(u.size)] = 1
    a[v, np.arange(u.size)] = 1
    res = linprog(-np.ones(u.size), A_ub=a, b_ub=np.full(n, kappa), bounds=(0, 1), method="highs")
    return -res.fun


def test_clipped_count_is_the_lp_value_and_kappa_lipschitz():
    rng = np.random.default_rng(5)
    for _ in range(150):
        n = int(rng.integers(2, 10))
        dens = rng.uniform(0.2, 1.0)
        iu, ju = np.triu_indices(n, k=1)
        on = rng.random(iu.size) < dens
        u, v = iu[on], ju[on]
        kappa = int(rng.integers(0, 5))
        f = clipped_triangle_count(n, u, v, kappa)
        assert f == pytest.approx(_lp_value(n, u, v, kappa), abs=1e-7)
        assert 2 * f == int(2 * f)  # half-integral
        deg = np.bincount(u, minlength=n) + np.bincount(v, minlength=n)
        if deg.max(initial=0) <= kappa:
            assert f == u.size
        # node addition: vertex n joins with random edges; the value grows by 0 .. kappa
        new = np.flatnonzero(rng.random(n) < rng.uniform(0.3, 1.0))
        f2 = clipped_triangle_count(n + 1, np.r_[u, new], np.r_[v, np.full(new.size, n)], kappa)
        assert 0 <= f2 - f <= min(kappa, new.size) + 1e-12
        assert clipped_triangle_count(n, u, v, None) == u.size
    # a vertex joining a star's leaves can raise all their counts; truncating counts would jump
    assert clipped_triangle_count(4, [0, 0, 0], [1, 2, 3], 1) == 1.0
    with pytest.raises(ValueError, match="distinct vertices"):
        clipped_triangle_count(3, [0], [0], 1)
    with pytest.raises(ValueError, match="same length"):
        clipped_triangle_count(3, [0, 1], [2], 1)


def test_clip_bounds_are_exact():
    for dp in (0.05, 0.3, 0.9):
        bounds = np.array([1, 2, 3, 10, 57, 200])
        kap = triangle_clip_bound(bounds, dp, 1e-6)
        for d, k in zip(bounds.tolist(), kap.tolist(), strict=True):
            mpmath.mp.dps = 40
            pp = mpmath.mpf(dp)

            def sf(x, d=d, pp=pp):  # P[Bin(d - 1, dp) > x], exact
                return mpmath.fsum(
                    mpmath.binomial(d - 1, j) * pp**j * (1 - pp) ** (d - 1 - j) for j in range(x + 1, d)
                )

            assert sf(k) <= 1e-6
            assert k == 0 or sf(k - 1) > 1e-6
    for e0 in (0.05, 0.1, 0.2):
        a = degree_margin(e0, 1e-6)
        cdf = DiscreteLaplace(epsilon=e0).cdf
        assert cdf(-a - 1) <= 1e-6 < cdf(-a)
    assert arr_sensitivity([10], None, 0.3).tolist() == [9]
    assert arr_sensitivity([10], [100], 0.3).tolist() == [9]
    assert arr_sensitivity([10], [0], 0.3).tolist() == [3]  # ceil(0.3 * 9)


def test_clipped_bias_by_enumeration_is_downward_and_bounded():
    """K5-like neighbourhoods with kappa = 1: exact E over all ARR outcomes of the loss."""
    G = nx.complete_graph(5)
    eps1, mu = 1.0, 0.8
    pe, pn = arr_probabilities(eps1, mu)
    kappa = 1
    lower = {v: list(range(v)) for v in range(5)}
    loss = excess = 0.0
    for bits in itertools.product([0, 1], repeat=len(PAIRS5)):
        b = dict(zip(PAIRS5, bits, strict=True))
        prob = math.prod(
            (pe if G.has_edge(*pr) else pn) if x else 1 - (pe if G.has_edge(*pr) else pn)
            for pr, x in b.items()
        )
        for v in range(5):
            nb = lower[v]
            es = [(nb.index(j), nb.index(k)) for j, k in itertools.combinations(nb, 2) if b[(k, j)]]
            u = np.array([e[0] for e in es], dtype=np.int64)
            w = np.array([e[1] for e in es], dtype=np.int64)
            f = clipped_triangle_count(len(nb), u, w, kappa)
            loss += prob * (len(es) - f)
            deg = np.bincount(np.r_[u, w], minlength=len(nb))
            excess += prob * float(np.maximum(deg - kappa, 0).sum())
    assert 0 < loss <= excess


def test_sensitivity_bound_holds_under_the_coupling():
    """The proof's claim, checked directly: for random bits, lists, D, kappa and orders, the kept
    sets of neighbouring lists (first D in one random order) give |w - w'| <= Delta."""
    rng = np.random.default_rng(11)
    universe = 9
    iu, ju = np.triu_indices(universe, k=1)
    attained = 0
    for _ in range(3000):
        bits = rng.random(iu.size) < rng.uniform(0.05, 0.95)
        on = {(int(a), int(b)) for a, b, x in zip(iu, ju, bits, strict=True) if x}
        size = int(rng.integers(0, universe))
        perm = rng.permutation(universe)
        base, l_new = perm[:size], int(perm[size])
        bound = int(rng.integers(1, universe + 1))
        kappa = None if rng.random() < 0.2 else int(rng.integers(0, 6))
        mq = float(rng.uniform(0.0, 0.6))
        order = rng.permutation(universe)  # the coupling: keep the first D in this order

        def w_of(lst, bound=bound, order=order, on=on, kappa=kappa, mq=mq):
            kept = sorted(sorted(lst, key=order.__getitem__)[:bound])
            es = [(i, j) for i, j in itertools.combinations(range(len(kept)), 2) if (kept[i], kept[j]) in on]
            u = np.array([e[0] for e in es], dtype=np.int64)
            v = np.array([e[1] for e in es], dtype=np.int64)
            return clipped_triangle_count(len(kept), u, v, kappa) - mq * math.comb(len(kept), 2)

        delta = int(arr_sensitivity(bound, kappa, mq))
        diff = abs(w_of([*base.tolist(), l_new]) - w_of(base.tolist()))
        assert diff <= delta + 1e-9
        attained += diff > delta - 1.0
    assert attained > 50  # the bound is approached, so the check has teeth


# ------------------------------------------------------------------------ privacy audits


def test_arr_bits_are_private_and_miscalibration_is_caught():
    eps1, mu = 1.0, 0.3
    pairs = [((1, 0, 1), (1, 1, 1)), ((0, 0, 0), (0, 0, 1))]

    def node(bits, size, rng):
        return arr_bits(list(bits), eps1, mu, size=size, rng=rng)

    assert audit_neighbours(node, pairs, eps1, n_samples=N_AUDIT, rng=1).passed

    def leaky(bits, size, rng):  # RR at 2 eps1 before the sampling
        return arr_bits(list(bits), 2 * eps1, mu, size=size, rng=rng)

    assert audit_neighbours(leaky, pairs, eps1, n_samples=N_AUDIT, rng=2).violation
    pe, pn = arr_probabilities(eps1, mu)
    x = arr_bits([1, 0], eps1, mu, size=100_000, rng=3).mean(axis=0)
    se = math.sqrt(0.25 / 100_000)
    assert abs(x[0] - pe) < 5 * se and abs(x[1] - pn) < 5 * se


# broadcast ARR bits at the worst case: node 3 has a noisy edge to every other lower node
_STAR = _bits_from({(j, 3) for j in range(3)} | {(3, k) for k in range(4, 9)})


def test_clipped_round_two_is_private_at_its_sensitivity():
    eps2, bound, kappa, mq, node_id = 1.0, 6, 2, 0.05, 9
    assert int(arr_sensitivity(bound, kappa, mq)) == 2

    def node(nb, size, rng):
        return arr_count_release(node_id, list(nb), _STAR, eps2, bound, mq, kappa=kappa, size=size, rng=rng)

    pairs = [
        ((0, 1, 2, 4, 5), (0, 1, 2, 3, 4, 5)),  # case (i): adds l = 3, f grows by kappa
        ((0, 1, 2, 4, 5, 7), (0, 1, 2, 3, 4, 5, 7)),  # case (ii): projection swaps l = 3 in
        ((0, 1, 2, 3), (0, 1, 2, 3, 12)),  # an edge to a higher node changes nothing
    ]
    assert audit_neighbours(node, pairs, eps2, n_samples=N_AUDIT, rng=3).passed

    def half_sensitivity(nb, size, rng):  # DLap at ceil(kappa / 2) = 1: the change is ~kappa
        gen = np.random.default_rng(rng)
        rel = arr_count_release(node_id, list(nb), _STAR, 100.0, bound, mq, kappa=kappa, size=size, rng=gen)
        return rel + DiscreteLaplace(epsilon=eps2, sensitivity=1).sample(size, rng=gen)

    assert audit_neighbours(half_sensitivity, pairs[:1], eps2, n_samples=N_AUDIT, rng=4).violation


def test_composed_node_release_is_private():
    """Round 0 (lower degree + DLap), the changing ARR bit and round 2, at eps0 + eps1 + eps2."""
    eps0, eps1, eps2, mu = 0.2, 0.9, 0.9, 0.3
    pe, pn = arr_probabilities(eps1, mu)
    bound, kappa = 6, 2

    def composed(nb, size, rng):
        gen = np.random.default_rng(rng)
        lower = [x for x in nb if x < 9]
        deg = len(lower) + DiscreteLaplace(epsilon=eps0).sample(size, rng=gen)
        bit = (gen.random(size) < (pe if 3 in nb else pn)).astype(np.int64)
        count = arr_count_release(9, list(nb), _STAR, eps2, bound, pn, kappa=kappa, size=size, rng=gen)
        return np.column_stack([deg, bit, count])

    pairs = [((0, 1, 2, 4, 5), (0, 1, 2, 3, 4, 5))]
    assert audit_neighbours(composed, pairs, eps0 + eps1 + eps2, n_samples=N_AUDIT, rng=6).passed


# ------------------------------------------------------------------------ Monte-Carlo


def test_monte_carlo_unclipped_mean_and_variance():
    g = from_networkx(nx.gnp_random_graph(120, 0.2, seed=7))
    eps, mu, n = 1.5, 0.3, 3000
    x = simulate_arr(g, eps / 2, eps / 2, n, mu=mu, rng=8)
    mean, var = arr_moments(g, eps / 2, eps / 2, mu=mu)
    assert abs(x.mean() - mean) <= 4 * math.sqrt(var / n)
    s2 = x.var(ddof=1)
    m4 = float(np.mean((x - x.mean()) ** 4))
    se_var = math.sqrt(max(m4 - s2 * s2, 0.0) / n)
    assert abs(s2 - var) <= 4 * se_var


def test_monte_carlo_clipped_when_nothing_binds():
    """Private bounds drawn per node, per-node sensitivities; beta tiny: no clipping binds, so
    the mean is T and the variance arr_nonbinding_variance."""
    g = from_networkx(nx.gnp_random_graph(120, 0.2, seed=7))
    eps, mu, n = 1.5, 0.3, 1500
    eps0, eps1, eps2 = _clipped(eps)
    x, loss = simulate_arr(g, eps1, eps2, n, eps0=eps0, mu=mu, beta=1e-9, rng=9, return_loss=True)
    assert np.all(loss == 0)
    var = arr_nonbinding_variance(g, eps0, eps1, eps2, mu=mu, beta=1e-9)
    assert abs(x.mean() - triangle_count(g)) <= 4 * math.sqrt(var / n)
    s2 = x.var(ddof=1)
    m4 = float(np.mean((x - x.mean()) ** 4))
    assert abs(s2 - var) <= 4 * math.sqrt(max(m4 - s2 * s2, 0.0) / n)


def test_clipped_estimate_on_a_small_graph_within_its_bias_bound():
    g = from_networkx(nx.gnp_random_graph(150, 0.25, seed=9))
    eps, n = 2.0, 400
    p = get_method("arr-triangles").with_options(mu=0.3, beta=0.05)
    eps0, eps1, eps2 = _clipped(eps)
    x, loss = simulate_arr(g, eps1, eps2, n, eps0=eps0, mu=0.3, beta=0.05, rng=10, return_loss=True)
    edge, tri = arr_clipping_bias_bound(g, eps0, eps1, mu=0.3, beta=0.05)
    t = triangle_count(g)
    assert loss.mean() > 0  # clipping binds at this beta: the check below can fail
    assert loss.mean() - 4 * loss.std(ddof=1) / math.sqrt(n) <= edge + tri
    # the estimate's bias is the loss: E x = T - E loss
    assert abs(x.mean() - (t - loss.mean())) <= 4 * x.std(ddof=1) / math.sqrt(n)
    assert p.analytic_mean(g, "triangles", None, eps) is None


def _dataset(name: str):
    """Facebook ships with ldpgraph; Email-Enron from $LDPGRAPH_DATA, or skip with the reason."""
    from conftest import data_file

    from ldpgraph.datasets import resolve_graph

    return resolve_graph("facebook" if name == "facebook" else data_file("Email-Enron.txt.gz"))


@pytest.mark.parametrize("name", ["facebook", "email-enron"])
def test_clipping_bias_measured_on_real_graphs(name):
    g = _dataset(name)
    w = lower_wedges(g)
    for eps, beta in ((1.0, 1e-6), (1.0, 1e-3)):
        eps0, eps1, eps2 = _clipped(eps)
        _, loss = simulate_arr(g, eps1, eps2, 10, eps0=eps0, beta=beta, rng=12, wedges=w, return_loss=True)
        edge, tri = arr_clipping_bias_bound(g, eps0, eps1, beta=beta, wedges=w)
        se = loss.std(ddof=1) / math.sqrt(loss.size)
        assert loss.mean() - 4 * se <= edge + tri
        assert loss.mean() + 4 * se >= -1e-9  # downward bias


# ------------------------------------------------------------------------ protocol layer


def test_protocol_registration_budget_and_costs():
    p = get_method("arr-triangles")
    assert isinstance(p.protocol, ARRTrianglesProtocol) and p.needs == "adjacency" and not p.unbiased
    assert p.budget(1.0) == pytest.approx({"degree-bound": 0.1, "arr": 0.45, "local-count": 0.45})
    assert sum(p.budget(2.0, "transitivity").values()) == pytest.approx(2.0)
    g = from_networkx(nx.gnp_random_graph(200, 0.1, seed=2))
    up, down = p.communication(g, 1.0)
    two = get_method("two-round-triangles-dlap-private")
    up2, down2 = two.communication(g, 1.0)
    # same eps1 as the private two-round protocol, which also downloads its broadcast bound; both noisy
    # graphs are sent as the shorter of an edge list and the packed pairs: on 200 nodes both packed (the
    # same bits: sampling does not shrink a bit matrix); where the noise is sparse, both edge lists and
    # ARR downloads mu of two-round's
    noisy = expected_noisy_edges(200, g.n_edges, p.budget(1.0)["arr"])
    assert down == noisy_graph_bits(200, DEFAULT_MU * noisy) and down2 - FLOAT_BITS == noisy_graph_bits(200, noisy)
    assert down == down2 - FLOAT_BITS == 200 * 199 / 2
    big = from_networkx(nx.gnm_random_graph(3000, 6000, seed=2))  # sparse noise at a large epsilon
    assert p.communication(big, 12.0)[1] / (two.communication(big, 12.0)[1] - FLOAT_BITS) == pytest.approx(
        DEFAULT_MU, rel=1e-12)
    assert up == up2
    x = p.estimate_trials(g, "transitivity", None, 2.0, 3, rng=1)
    assert x.shape == (3,) and np.isfinite(x).all()
    u = p.with_options(clipping=False, mu=0.5)
    assert u.analytic_mean(g, "triangles", None, 1.0) == triangle_count(g)  # unbiased without clipping
    assert u.analytic_rmse(g, "triangles", None, 1.0) > 0
    with pytest.raises(TypeError, match="adjacency"):
        p.estimate_trials(g.degrees, "triangles", None, 1.0)


def test_bad_parameters_are_refused_with_their_name():
    g = from_networkx(nx.complete_graph(6))
    with pytest.raises(ValueError, match=r"mu must be in \(0, 1\], got 0"):
        get_method("arr-triangles").with_options(mu=0)
    with pytest.raises(ValueError, match="mu must be in"):
        simulate_arr(g, 0.5, 0.5, mu=1.5)
    with pytest.raises(TypeError, match="mu must be a"):
        get_method("arr-triangles").with_options(mu="big")
    with pytest.raises(ValueError, match="beta must be in"):
        get_method("arr-triangles").with_options(beta=1.0)
    with pytest.raises(ValueError, match="alpha"):
        simulate_arr(g, 0.45, 0.45, eps0=0.1, alpha=-1)
    with pytest.raises(ValueError, match="bound must be >= 1"):
        triangle_clip_bound([0], 0.1)
    with pytest.raises(TypeError, match="Graph"):
        simulate_arr(np.ones(3), 0.5, 0.5)
    with pytest.raises(MemoryError, match="lower wedges need about"):
        arr_memory_check(g, 100)
    small = get_method("arr-triangles")
    small.protocol.max_bytes = 100  # the table would not fit: the scaled simulator, no refusal
    assert not small.protocol.uses_table(g)
    assert np.isfinite(small.estimate_trials(g, "triangles", None, 1.0)).all()
