r"""Triangle counting through a low out-degree orientation (EdgeOrientΔ), as published and ours.

Orient every edge from the lower to the higher node of a public total order; every triangle
then has exactly one *source* (the node both others are out-neighbours of), and node v counts
the noisy edges among the pairs of its out-neighbours. With an order in which out-degrees are
small (a low out-degree orientation: by core number or by degree), the noise a node adds,
calibrated to the out-degree bound, is far below that of counting over all (or all lower)
neighbours.

``reference`` (Mundra, Papamanthou, Shun, Liu, PVLDB, arXiv 2506.20828,
``algorithms/triangle-counting-ldp.go``), what the code does, at ε_paper (the paper's LEDP
accounting, an edge's two endpoints together): levels from k-CoreD at ε_paper/4
(:func:`~ldpgraph.protocols.kcore.reference_kcore`); RR at ε' = ε_paper/4 on every pair
(reported by its lower id); each node's out-neighbours are those at a higher level, and
those at its *own* level each with a fresh fair coin (in each round anew; the paper orders
ties by id); :math:`\tilde d_{max} = \max_v(d^+_v + \mathrm{DLap}(e^{-\varepsilon'}))` (the paper
adds 12 log n / ε; the code does not); node v sums
:math:`(X_{jk}(e^{\varepsilon'}+1) - 1)/(e^{\varepsilon'}-1)` over the pairs of its first
:math:`\min(\tilde d_{max}, d^+_v)` out-neighbours by id and adds
:math:`\mathrm{Lap}(\tilde d_{max}/(\varepsilon'/2))`; the estimate is the sum. Two findings:
the ties by coin make the orientation inconsistent between rounds and endpoints (an edge at
equal levels is outgoing for both, one or neither end), so a triangle is counted 0 to 3
times; and each term lies in :math:`[-1/(e^{\varepsilon'}-1), e^{\varepsilon'}/(e^{\varepsilon'}-1)]`,
so one neighbour moves the local count by up to
:math:`(\tilde d_{max}-1)(e^{\varepsilon'}+1)/(e^{\varepsilon'}-1)`, not the
:math:`2\tilde d_{max}` the paper's proof assumes (terms in [0, 1]): at ε' = 1/4 the release
spends about 4 times its stated ε'/2.

``ours`` (:func:`edge_orient_trial`): round 1, each node releases its degree plus
:math:`\mathrm{DLap}(e^{-\varepsilon_o})` (the public order: noisy degree, ties by id, which
measured better than k-core levels at the same budget; nodes are relabelled so that
out-neighbours are the *lower* ids) and randomizes its pairs (RR at ε₁, as
``two-round-triangles-dlap``); round 2, its out-degree :math:`m_v` plus
:math:`\mathrm{DLap}(e^{-\varepsilon_0})`, from which the public bound :math:`D_v` of every node
(:func:`local_bounds`: its own noisy out-degree plus a margin, or the global maximum); round
3, the local count :math:`r_v = \lfloor w_v + U\rfloor + \mathrm{DLap}(e^{-\varepsilon_2/(D_v-1)})`,
:math:`w_v = \sum_{j<k \in O_v}(b_{jk} - q)` over its out-list projected to :math:`D_v`
(:func:`~ldpgraph.protocols.triangles.two_round_dlap_release`: sensitivity D - 1, proved
there; with a per-node public bound the same proof holds node by node);
:math:`\hat T = \sum_v r_v / (p - q)`. Given the order and bounds at or above every
out-degree, :math:`E\hat T = T` exactly (the RR correction and the release noise are unbiased)
and its variance is :func:`edge_orient_variance`; a node whose bound falls below its
out-degree (probability :func:`projection_probability` for local bounds) drops pairs: a
downward bias, counted in each trial (``n_projected``). Per-node bounds cut the noise from
:math:`n D^2` to :math:`\sum_v D_v^2`: most nodes have small out-degrees. An edge {u, v}
enters the degree releases of both ends and, given the public order, the out-degree, RR
bit and local count of one end only: ε_o + ε₀ + ε₁ + ε₂ per node, 2ε_o + ε₀ + ε₁ + ε₂ per
edge (the paper's accounting).

Examples
--------
>>> from ldpgraph.graph import from_edge_array
>>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
>>> h = orient_relabel(g, g.degrees)
>>> h.edges().tolist()  # node 2 (degree 3) is first, the pendant 3 last
[[0, 1], [0, 2], [0, 3], [1, 2]]
>>> float(simulate_edge_orient(g, 400.0, rng=0)[0])
1.0
>>> h.n_nodes, edge_orient_trial(g, 400.0, rng=0).n_projected
(4, 0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_epsilon, check_nonnegative_int, check_rng
from ..graph.core import Graph, from_edge_array
from .kcore import _dlap, _dlap_vector, reference_kcore
from .randomized_response import flip_probability, keep_probability
from .triangles import lower_common_neighbour_square_sum, lower_wedges, rounding_variance

__all__ = [
    "orient_relabel",
    "edge_orient_budget",
    "simulate_edge_orient",
    "edge_orient_trial",
    "EdgeOrientTrial",
    "local_bounds",
    "projection_probability",
    "edge_orient_variance",
    "reference_edge_orient",
]


def orient_relabel(graph: Graph, key: ArrayLike) -> Graph:
    """``graph`` relabelled by the public order: new id = rank in descending (key, id).

    A node's out-neighbours (higher key, ties by higher id) get lower new ids, so counting over
    the *lower* neighbours of the relabelled graph counts over the out-neighbours.
    """
    n = graph.n_nodes
    k = np.asarray(key)
    if k.shape != (n,):
        raise ValueError(f"key must have one value per node ({n}), got shape {k.shape}")
    order = np.lexsort((-np.arange(n), -k))
    new = np.empty(n, dtype=np.int64)
    new[order] = np.arange(n)
    return from_edge_array(new[graph.edges()], n_nodes=n)


def edge_orient_budget(epsilon: float, shares: dict[str, float] | None = None) -> dict[str, float]:
    """Per-node ε of each release: ``order`` (noisy degree), ``bound`` (out-degree), ``rr``, ``count``.

    >>> edge_orient_budget(1.0)
    {'order': 0.05, 'bound': 0.2, 'rr': 0.375, 'count': 0.375}
    """
    from ..core.plan import split_budget

    default = {"order": 0.05, "bound": 0.2, "rr": 0.375, "count": 0.375}
    s = default if shares is None else dict(shares)
    if sorted(s) != sorted(default):
        raise ValueError(f"shares of edge-orient: order=F,bound=F,rr=F,count=F, got {s}")
    return split_budget(check_epsilon(epsilon), s)


def local_bounds(out_degrees: ArrayLike, epsilon_bound: float, *, bounds: str = "local",
                 margin: float = 2.0, rng: Any = None) -> NDArray[np.int64]:
    r"""The public out-degree bounds from the noisy out-degrees
    :math:`\tilde m_v = m_v + \mathrm{DLap}(e^{-\varepsilon_0})`.

    ``"local"``: :math:`D_v = \max(1, \tilde m_v + c)`,
    :math:`c = \lceil \text{margin}/\varepsilon_0\rceil`;
    a node is projected (:math:`m_v > D_v`) with probability
    :math:`P[\eta \le -c-1] = e^{-\varepsilon_0(c+1)}/(1+e^{-\varepsilon_0})`
    (:func:`projection_probability`).
    ``"global"``: every :math:`D_v = D = \max(1, \max_v \tilde m_v)`, as ``two-round-triangles-dlap``'s
    private bound.

    >>> local_bounds([0, 3, 10], 100.0, margin=3.0, rng=0).tolist()  # c = 1 at eps0 = 100
    [1, 4, 11]
    """
    m = np.asarray(out_degrees, dtype=np.int64)
    eps0 = check_epsilon(epsilon_bound)
    noisy = m + _dlap(check_rng(rng), eps0, m.size)
    if bounds == "global":
        return np.full(m.size, max(int(noisy.max(initial=1)), 1), dtype=np.int64)
    if bounds != "local":
        raise ValueError(f"bounds must be 'local' or 'global', got {bounds!r}")
    return np.maximum(noisy + int(math.ceil(margin / eps0 - 1e-9)), 1)


def projection_probability(epsilon_bound: float, margin: float = 3.0) -> float:
    r""":math:`P[m_v > D_v]` for a local bound: :math:`e^{-\varepsilon_0(c+1)}/(1+e^{-\varepsilon_0})`.

    >>> round(projection_probability(0.2, 3.0), 5)  # c = 15
    0.02241
    """
    eps0 = check_epsilon(epsilon_bound)
    c = int(math.ceil(margin / eps0 - 1e-9))
    return math.exp(-eps0 * (c + 1)) / (1.0 + math.exp(-eps0))


@dataclass(frozen=True)
class EdgeOrientTrial:
    """One run: the estimate, the bounds, and how many nodes were projected (biased: 0 is exact)."""

    estimate: float
    bounds: NDArray[np.int64]
    n_projected: int
    oriented: Graph


def edge_orient_trial(graph: Graph, epsilon: float, *, shares: dict[str, float] | None = None,
                      bounds: str = "local", margin: float = 2.0, oriented: Graph | None = None,
                      bound_values: ArrayLike | None = None, rng: Any = None) -> EdgeOrientTrial:
    r"""One run of our EdgeOrientΔ (module docstring) at per-node budget ``epsilon``.

    ``oriented`` / ``bound_values``: a fixed order (the relabelled graph) and fixed bounds, to
    study the estimate given them (the tests' exact checks); by default both are drawn.
    Only the pairs that close an out-wedge get an RR bit: no other bit enters the estimate,
    so the law is that of the full protocol.
    """
    eps = edge_orient_budget(epsilon, shares)
    gen = check_rng(rng)
    n = graph.n_nodes
    if oriented is None:
        oriented = orient_relabel(graph, graph.degrees + _dlap(gen, eps["order"], n))
    w = lower_wedges(oriented)
    m = w.lower_degrees
    if bound_values is None:
        bound = local_bounds(m, eps["bound"], bounds=bounds, margin=margin, rng=gen)
    else:
        bound = np.asarray(bound_values, dtype=np.int64)
    p, q = keep_probability(eps["rr"]), flip_probability(eps["rr"])
    bits = gen.random(w.pairs.size) < np.where(w.pair_is_edge, p, q)
    alive: Any = True
    over = np.flatnonzero(m > bound)
    if over.size:  # a uniform D_v-subset of each longer out-list (lower ids come first in a row)
        keep = np.ones(oriented.indices.size, dtype=bool)
        for v in over.tolist():
            start = int(oriented.indptr[v])
            drop = gen.choice(int(m[v]), size=int(m[v] - bound[v]), replace=False)
            keep[start + drop] = False
        alive = keep[w.pos_j] & keep[w.pos_k]
    wv = np.bincount(w.node, weights=alive * (bits[w.pair] - q), minlength=n)
    noise = _dlap_vector(gen, eps["count"] / np.maximum(bound - 1, 1))
    r = np.floor(wv + gen.random(n)) + noise
    return EdgeOrientTrial(math.fsum(r.tolist()) / (p - q), bound, int(over.size), oriented)


def simulate_edge_orient(graph: Graph, epsilon: float, n_trials: int = 1, *,
                         shares: dict[str, float] | None = None, bounds: str = "local", margin: float = 2.0,
                         rng: Any = None) -> NDArray[np.float64]:
    """Estimates of ``n_trials`` independent runs (:func:`edge_orient_trial`)."""
    n_trials = check_nonnegative_int(n_trials, "n_trials", minimum=1)
    gen = check_rng(rng)
    return np.array([edge_orient_trial(graph, epsilon, shares=shares, bounds=bounds, margin=margin,
                                       rng=gen).estimate for _ in range(n_trials)])


def edge_orient_variance(oriented: Graph, epsilon_rr: float, epsilon_count: float,
                         bounds: ArrayLike) -> float:
    r"""Exact variance of :math:`\hat T` given the order (``oriented``: relabelled by
    :func:`orient_relabel`) and bounds :math:`D_v` at or above the out-degrees.

    .. math:: \operatorname{Var}\hat T = \frac{pq\sum_{j<k} c_{jk}^2 + \sum_v f_v(1-f_v)
              + \sum_v \sigma^2(D_v - 1)}{(p-q)^2}

    with :math:`c_{jk}` the sources of the pair (its common in-neighbours in the orientation),
    :math:`f_v` the fixed fractional part of :math:`w_v = t_v - q\binom{m_v}{2}` (:math:`t_v` an
    integer) and :math:`\sigma^2(\Delta)` the variance of DLap(e^{-ε₂/Δ}): the bits are independent
    with variance pq whatever the true bit, the rounding and the noises independent of them.
    """
    d = np.asarray(bounds, dtype=np.int64)
    w = lower_wedges(oriented)
    if d.shape != w.lower_degrees.shape or np.any(w.lower_degrees > d):
        raise ValueError("bounds must be one per node and at or above every out-degree (a projection "
                         "makes the estimate biased and this variance does not apply)")
    p, q = keep_probability(epsilon_rr), flip_probability(epsilon_rr)
    sens = np.maximum(d - 1, 1).astype(np.float64)
    pn = np.exp(-check_epsilon(epsilon_count) / sens)
    noise = math.fsum((2.0 * pn / (1.0 - pn) ** 2).tolist())  # Var DLap(p) = 2p / (1 - p)^2
    var = p * q * lower_common_neighbour_square_sum(oriented) + rounding_variance(oriented, q) + noise
    return var / (p - q) ** 2


# ---------------------------------------------------------------------------- reference


def _pair_keys(n: int, j: NDArray[np.int64], k: NDArray[np.int64]) -> NDArray[np.int64]:
    lo, hi = np.minimum(j, k), np.maximum(j, k)
    return lo * n + hi


def reference_edge_orient(graph: Graph, epsilon_paper: float, *, psi: float = 0.5, rng: Any = None
                          ) -> float:
    """One run of EdgeOrientΔ as the authors' code runs it (module docstring), at ε_paper."""
    eps = check_epsilon(epsilon_paper)
    gen = check_rng(rng)
    n = graph.n_nodes
    e4 = eps / 4.0
    # k-CoreD(eps/4): a node spends (eps/4)/2, reference_kcore takes that per-node budget
    levels = reference_kcore(graph, e4 / 2.0, psi=psi, rng=gen).levels
    ptr = np.asarray(graph.indptr, dtype=np.int64)
    nbr = np.asarray(graph.indices, dtype=np.int64)
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))

    def out_mask() -> NDArray[np.bool_]:  # higher level, or the same level and a fresh fair coin
        lv_s, lv_d = levels[src], levels[nbr]
        return (lv_d > lv_s) | ((lv_d == lv_s) & (gen.random(src.size) <= 0.5))

    out_deg = np.bincount(src[out_mask()], minlength=n)
    noisy_max = float(np.max(out_deg + _dlap(gen, e4, n), initial=0))
    keep = out_mask()  # the counting round flips its own coins
    # each node's out-list sorted by id (CSR rows are), truncated to its first min(d~max, d+_v)
    rank = np.cumsum(keep) - 1
    first = np.concatenate([[0], np.cumsum(np.bincount(src[keep], minlength=n))])[:-1]
    pos_in_row = rank - first[src]
    cut = int(math.floor(min(max(noisy_max, 0.0), float(n))))
    sel = keep & (pos_in_row < cut)
    lists_src, lists_dst = src[sel], nbr[sel]
    lens = np.bincount(lists_src, minlength=n)
    starts = np.concatenate([[0], np.cumsum(lens)])
    pj, pk, owner = [], [], []
    for v in np.flatnonzero(lens >= 2).tolist():
        row = lists_dst[starts[v]:starts[v + 1]]
        a, b = np.triu_indices(row.size, k=1)
        pj.append(row[a])
        pk.append(row[b])
        owner.append(np.full(a.size, v))
    if not pj:
        total = 0.0
    else:
        j, k, who = np.concatenate(pj), np.concatenate(pk), np.concatenate(owner)
        keys = _pair_keys(n, j, k)
        uniq, inv = np.unique(keys, return_inverse=True)
        edges = graph.edges()
        edge_keys = np.sort(_pair_keys(n, edges[:, 0], edges[:, 1]))
        at = np.searchsorted(edge_keys, uniq)
        is_edge = (at < edge_keys.size) & (edge_keys[np.minimum(at, edge_keys.size - 1)] == uniq)
        flip = gen.random(uniq.size) < 1.0 / (math.exp(e4) + 1.0)
        x = (is_edge ^ flip).astype(np.float64)
        term = (x * (math.exp(e4) + 1.0) - 1.0) / (math.exp(e4) - 1.0)
        total = math.fsum(np.bincount(who, weights=term[inv], minlength=n).tolist())
    scale = max(noisy_max, 0.0) / (e4 / 2.0)  # Laplace at (eps/4)/2 with sensitivity d~max (the code)
    noise = gen.laplace(0.0, scale, n) if scale > 0 else np.zeros(n)
    return total + math.fsum(noise.tolist())

