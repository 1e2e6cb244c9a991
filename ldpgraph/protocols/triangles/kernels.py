r"""Triangle counting under edge-LDP: one-round randomized response and two-round protocols.

=================================== ==========================================================
protocol                            rounds (node side) / curator
=================================== ==========================================================
``rr-triangles``                    RR at eps on the lower adjacency bits; curator: unbiased
                                    estimate from the triple classes of the noisy graph
                                    (Imola, Murakami, Chaudhuri 2021, "empirical estimation")
``two-round-triangles-laplace``     Local2Rounds (same paper): RR at eps1; node v releases
                                    w_v + Lap(d_max / eps2); curator sums, divides by p - q
``two-round-triangles-dlap`` (ours) RR at eps1; node v releases the randomized rounding of
                                    w_v plus DLap at sensitivity D - 1 (D = bound on the
                                    *lower* degree); curator sums, divides by p - q
=================================== ==========================================================

Notation: :math:`p = e^{\varepsilon_1}/(1+e^{\varepsilon_1})`, :math:`q = 1 - p`; ``b`` the
noisy (RR) bits; a node's *lower* neighbours are those of smaller index, :math:`d^-_v` their
number; :math:`w_v = \sum_{j<k,\ j,k\in N^-(v)} (b_{jk} - q)`, whose mean is
:math:`(p - q)\,T^-_v` with :math:`T^-_v` the triangles in which v is the highest node, so
:math:`\sum_v w_v / (p - q)` is unbiased for :math:`T = \sum_v T^-_v`.

Every function here takes the true graph (an ldpgraph :class:`~ldpgraph.graph.Graph`): the
simulation of a protocol is what the nodes would compute from their own neighbour lists.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._validation import check_epsilon, check_nonnegative_int, check_rng
from ...graph.core import Graph
from ...graph.statistics import (
    adjacency_triangle_count,
    triple_class_counts,
    two_star_count,
)
from ...mechanisms import DiscreteLaplace, Laplace
from ..randomized_response import (
    DEFAULT_MAX_BYTES,
    TWO_ROUND_PROTOCOLS,
    expected_noisy_edges,
    flip_probability,
    keep_probability,
    lower_edge_pairs,
    noisy_lower_pairs,
    pair_from_index,
    pair_index,
    pairs_to_csr,
)

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = [
    "rr_triangle_estimate",
    "rr_triangle_variance",
    "noisy_triple_classes",
    "common_neighbour_square_sum",
    "lower_common_neighbour_square_sum",
    "LowerWedges",
    "lower_wedges",
    "wedge_memory_check",
    "local2rounds_release",
    "two_round_dlap_release",
    "two_round_variance",
    "rounding_variance",
    "rr_memory_check",
    "rr_max_nodes",
    "RR_SIZE_LIMIT_WHY",
    "simulate_rr_triangles",
    "simulate_two_round",
    "two_round_moments",
    "rr_triangles_influence_bound",
    "dlap_triangles_influence_bound",
    "dlap_round1_influence_bound",
]

# Dense BLAS triangle counting holds the n x n float32 lower triangle: used up to this many nodes
# (every count it forms is an integer below 2^24, so float32 arithmetic is exact, see
# _dense_triangles).
_DENSE_MAX_NODES = 16_384
# Cost of one 2-path of the sparse kernel in dense multiply-adds (measured on Facebook at
# eps = 2, one core: 0.83 s for 5.3e8 wedges against 0.30 s for n^3/6 multiply-adds, i.e.
# about 58; see scripts/bench_triangles.py --kernels). Dense when its n^3/6 costs less.
_SPARSE_DENSE_COST = 64
# Column block of the dense kernel: one float32 GEMM per block.
_DENSE_BLOCK = 512
# Work (products) per block of the sparse Gram products.
_GRAM_BLOCK_WORK = 1 << 23


# ============================================================================ rr-triangles


def rr_triangle_estimate(classes: tuple[int, int, int, int], epsilon: float) -> float:
    r"""Unbiased triangle estimate from the triple classes of a randomized-response graph.

    Parameters
    ----------
    classes : tuple of 4 ints
        ``(m0, m1, m2, m3)``: numbers of node triples with 0, 1, 2, 3 noisy edges
        (:func:`noisy_triple_classes`, or :func:`~ldpgraph.graph.triple_class_counts` of the
        noisy graph).
    epsilon : float
        The RR parameter. Must be in (0, inf).

    Returns
    -------
    float

    Notes
    -----
    .. math:: \hat T = \frac{e^{3\varepsilon} m_3 - e^{2\varepsilon} m_2
                            + e^{\varepsilon} m_1 - m_0}{(e^\varepsilon - 1)^3}

    (Imola, Murakami, Chaudhuri 2021). **Unbiasedness.** Each noisy bit gives the unbiased
    :math:`z_e = (b_e - q)/(p - q)` of the true bit :math:`a_e` (:math:`E b_e = q + (p-q)a_e`),
    and the bits of distinct pairs are independent, so
    :math:`E\prod_{e\in\tau} z_e = \prod_{e\in\tau} a_e` for each triple :math:`\tau`, and
    :math:`\sum_\tau \prod_{e\in\tau} z_e` is unbiased for :math:`T`. A triple with
    :math:`k` noisy edges contributes :math:`p^k(-q)^{3-k}/(p-q)^3
    = (-1)^{3-k} e^{k\varepsilon}/(e^\varepsilon - 1)^3`: the formula above.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array, triple_class_counts
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> round(rr_triangle_estimate(triple_class_counts(g), 40.0), 9)  # eps -> inf: the truth
    1.0
    """
    eps = check_epsilon(epsilon)
    if len(classes) != 4:
        raise ValueError(f"classes must be (m0, m1, m2, m3), got {len(classes)} values")
    m0, m1, m2, m3 = (check_nonnegative_int(c, f"classes[{i}]") for i, c in enumerate(classes))
    # divide each power by (e^eps - 1)^3 first: no overflow, and the terms are O(1) x counts
    r = 1.0 / -math.expm1(-eps)  # e^eps / (e^eps - 1)
    s = 1.0 / math.expm1(eps)  # 1 / (e^eps - 1)
    return r**3 * m3 - r * r * s * m2 + r * s * s * m1 - s**3 * m0


def rr_triangle_variance(graph: Graph, epsilon: float) -> float:
    r"""Exact variance of the ``rr-triangles`` estimate on ``graph`` at ``epsilon``.

    Notes
    -----
    With :math:`z_e = a_e + \xi_e`, :math:`\sigma^2 = \operatorname{Var} z_e
    = pq/(p-q)^2 = e^\varepsilon/(e^\varepsilon - 1)^2` (the same for edges and non-edges) and
    :math:`\hat T = \sum_\tau \prod_{e\in\tau} z_e`:

    - a triple with :math:`k` true edges: :math:`\operatorname{Var}\prod z_e
      = (1+\sigma^2)^k\sigma^{2(3-k)} - [k = 3]` (as :math:`E z_e^2 = a_e + \sigma^2`);
    - two distinct triples share at most one pair (two shared pairs span the same three
      nodes); sharing pair :math:`e = \{i,j\}`, with other pairs :math:`f_1,f_2,g_1,g_2`:
      :math:`\operatorname{Cov} = \sigma^2 a_{f_1}a_{f_2}a_{g_1}a_{g_2}`, non-zero iff both third
      nodes are common neighbours of i and j;
    - triples sharing nothing are independent.

    Hence, with :math:`n_k` the triples with :math:`k` true edges and :math:`c_{ij}` the
    common neighbours of :math:`i \ne j`,

    .. math:: \operatorname{Var}\hat T = \sum_{k=0}^3 n_k (1+\sigma^2)^k \sigma^{2(3-k)} - T
              + \sigma^2 \sum_{i<j} c_{ij}(c_{ij} - 1),

    and :math:`\sum_{i<j} c_{ij}(c_{ij}-1) = \tfrac12\sum_{i\ne j} c_{ij}^2 - S_2`
    (:func:`common_neighbour_square_sum`; it is four times the number of 4-cycles).

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> rr_triangle_variance(g, 50.0) < 1e-15
    True
    """
    g = _check_graph(graph)
    eps = check_epsilon(epsilon)
    s2 = math.exp(eps) / math.expm1(eps) ** 2 if eps < 700 else 0.0
    n_k = triple_class_counts(g)
    q_pairs = common_neighbour_square_sum(g) // 2 - two_star_count(g)
    total = math.fsum(n_k[k] * (1.0 + s2) ** k * s2 ** (3 - k) for k in range(4))
    return total - n_k[3] + s2 * q_pairs


def common_neighbour_square_sum(graph: Graph) -> int:
    r""":math:`\sum_{i \ne j} c_{ij}^2` with :math:`c_{ij} = (A^2)_{ij}` the common neighbours.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> common_neighbour_square_sum(from_edge_array([[0, 1], [1, 2], [2, 3], [3, 0]]))  # 4-cycle
    16
    """
    g = _check_graph(graph)
    return _gram_offdiag_square_sum(_adjacency(g))


def lower_common_neighbour_square_sum(graph: Graph) -> int:
    r""":math:`\sum_{j<k} (c^+_{jk})^2`, :math:`c^+_{jk}` = common neighbours of higher index than both.

    :math:`c^+ = L^\top L` with :math:`L_{vj} = a_{vj}[j < v]`.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> lower_common_neighbour_square_sum(from_edge_array([[0, 2], [1, 2], [0, 3], [1, 3]]))
    4
    """
    import scipy.sparse as sp  # deferred: slow to import

    g = _check_graph(graph)
    return _gram_offdiag_square_sum(sp.tril(_adjacency(g), k=-1, format="csr")) // 2


def noisy_triple_classes(
    n: int, index: NDArray[np.int64], *, method: str = "auto"
) -> tuple[int, int, int, int]:
    r"""Triple classes ``(m0, m1, m2, m3)`` of the graph on ``n`` nodes with lower pairs ``index``.

    ``method``: ``"dense"`` (blocked float32 BLAS product :math:`T = \langle L^\top L, L\rangle`
    of the strict lower triangle L, :math:`n^3/6` multiply-adds, exact: see the Notes),
    ``"sparse"`` (the oriented sparse kernel of :func:`~ldpgraph.graph.triangle_count`) or
    ``"auto"`` (dense when its :math:`n^3/6` multiply-adds cost less than the sparse kernel's
    2-paths, see ``_SPARSE_DENSE_COST``, and :math:`n \le 16384`).

    Notes
    -----
    Only the triangle count :math:`m_3` needs a product; with :math:`m` edges, degrees
    :math:`d_i` and :math:`W = \sum_i \binom{d_i}2` wedges, :math:`m_2 = W - 3m_3`,
    :math:`m_1 = m(n-2) - 2m_2 - 3m_3` (each edge lies in n - 2 triples) and
    :math:`m_0 = \binom n3 - m_1 - m_2 - m_3`.

    **Dense kernel.** With :math:`L_{ij} = a_{ij}[i > j]`, :math:`(L^\top L)_{jk}` counts the
    common neighbours i of j and k above both, so :math:`T = \sum_{j > k} a_{jk}
    (L^\top L)_{jk}` counts every triangle once, at its two lowest nodes. Only the blocks
    :math:`J \ge K` of :math:`L^\top L` are formed, and rows :math:`i < \min J` of the
    column block J of L vanish: :math:`n^3/6` multiply-adds instead of the :math:`n^3/2` of
    ``syrk``. **Exactness.** Every partial sum of a float32 dot product here is an integer in
    :math:`[0, n]`, :math:`n \le 16384 < 2^{24}`: exactly representable, so every float32
    addition and fused multiply-add is exact whatever the order BLAS uses. The products
    :math:`a_{jk}(L^\top L)_{jk} \le n` are summed in float64, with partial sums at most
    :math:`n \cdot \binom n2 < n^3 \le 2^{42} < 2^{53}`: exact too.

    Examples
    --------
    >>> noisy_triple_classes(4, pair_index(np.array([1, 2, 2, 3]), np.array([0, 0, 1, 2])))
    (0, 1, 2, 1)
    """
    n = check_nonnegative_int(n, "n")
    u, v = pair_from_index(index)
    deg = np.bincount(u, minlength=n) + np.bincount(v, minlength=n)
    wedges = int(np.dot(deg, deg - 1)) // 2
    if method == "auto":
        dense_ok = n <= _DENSE_MAX_NODES
        method = "dense" if dense_ok and 6 * _SPARSE_DENSE_COST * wedges >= n**3 else "sparse"
    if method == "dense":
        m3 = _dense_triangles(n, u, v)
    elif method == "sparse":
        m3 = adjacency_triangle_count(pairs_to_csr(n, index))
    else:
        raise ValueError(f"method must be 'auto', 'dense' or 'sparse', got {method!r}")
    m = int(index.size)
    m2 = wedges - 3 * m3
    m1 = m * (n - 2) - 2 * m2 - 3 * m3 if n >= 2 else 0
    m0 = math.comb(n, 3) - m1 - m2 - m3
    return m0, m1, m2, m3


#: Why ``rr-triangles`` has no simulator at scale (``ldpgraph methods`` and the refusal say it).
RR_SIZE_LIMIT_WHY = (
    "its estimate reads the noisy graph's triangle count, a sum over all n^3/6 triples of products of "
    "three noisy bits shared between triples: no sum of independent parts (as the two-round local "
    "counts are, each pair's bit entering linearly), so no exact sampler of its law short of drawing "
    "the noisy graph (about q n^2/2 edges, q = 1/(1 + e^eps): 1.3e11 at 10^6 nodes, eps 1) and "
    "counting its triangles"
)


def rr_max_nodes(epsilon: float, max_bytes: int = DEFAULT_MAX_BYTES) -> int:
    """The most nodes whose ``rr-triangles`` noisy graph fits in ``max_bytes`` (a sparse graph's own edges
    aside; :func:`rr_memory_check`): about 18,000 at ε = 1 with the default 2 GiB.

    >>> rr_max_nodes(1.0)
    18240
    """
    q = flip_probability(check_epsilon(epsilon))
    sparse = int(math.isqrt(int(2 * max_bytes / (48 * q)))) if q > 0 else 2**62
    dense = min(_DENSE_MAX_NODES, int(math.isqrt(max_bytes // 8)))
    return max(sparse, dense)


def rr_memory_check(graph: Graph, epsilon: float, max_bytes: int | None) -> None:
    """Refuse (MemoryError naming the size limit, why, and the two-round protocols) when the RR graph will
    not fit."""
    if max_bytes is None:
        return
    n, m = graph.n_nodes, graph.n_edges
    e = expected_noisy_edges(n, m, epsilon)
    need = int(3 * 8 * e + 2 * 12 * e)
    if n <= _DENSE_MAX_NODES:
        need = min(need, 8 * n * n + int(3 * 8 * e))
    if need > max_bytes:
        raise MemoryError(
            f"rr-triangles on {n} nodes at epsilon={epsilon:g}: the randomized-response graph would "
            f"have about {e:.3g} edges and counting its triangles needs about {need / 2**30:.2f} GiB "
            f"(> max_bytes = {max_bytes / 2**30:.2f} GiB): rr-triangles is simulated up to about "
            f"{rr_max_nodes(epsilon, max_bytes):,} nodes at this epsilon, because {RR_SIZE_LIMIT_WHY}; use a "
            f"two-round protocol ({', '.join(repr(x) for x in TWO_ROUND_PROTOCOLS)}), which never assembles "
            "the noisy graph, or a larger epsilon"
        )


def simulate_rr_triangles(
    graph: Graph,
    epsilon: float,
    n_trials: int = 1,
    *,
    rng: Any = None,
    method: str = "auto",
    max_bytes: int | None = DEFAULT_MAX_BYTES,
) -> NDArray[np.float64]:
    """Estimates of ``n_trials`` independent runs of ``rr-triangles`` (one noisy graph each).

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])
    >>> simulate_rr_triangles(g, 40.0, 2, rng=0).round(6).tolist()
    [1.0, 1.0]
    """
    g = _check_graph(graph)
    eps = check_epsilon(epsilon)
    n_trials = check_nonnegative_int(n_trials, "n_trials", minimum=1)
    rr_memory_check(g, eps, max_bytes)
    gen = check_rng(rng)
    p, q = keep_probability(eps), flip_probability(eps)
    out = np.empty(n_trials)
    for t in range(n_trials):
        n, index = noisy_lower_pairs(g, p, q, rng=gen)
        out[t] = rr_triangle_estimate(noisy_triple_classes(n, index, method=method), eps)
    return out


# ============================================================================ two rounds


@dataclass(frozen=True, eq=False)
class LowerWedges:
    """The lower wedges ``(v; j < k < v)`` of a graph: what round 2 of a two-round protocol sums.

    Attributes
    ----------
    node : ndarray of int64, shape (W,)
        The wedge's centre v (the highest of the three).
    pos_j, pos_k : ndarray of int64, shape (W,)
        Positions of j and k in ``graph.indices`` (v's row), for projection masks.
    pair : ndarray of int64, shape (W,)
        Index into ``pairs`` of the closing pair (k, j).
    pairs : ndarray of int64, shape (P,)
        Sorted distinct :func:`~ldpgraph.protocols.randomized_response.pair_index` of the
        closing pairs.
    pair_is_edge : ndarray of bool, shape (P,)
        Whether each closing pair is an edge (the wedge is then a triangle).
    lower_degrees : ndarray of int64, shape (n,)
    """

    node: NDArray[np.int64]
    pos_j: NDArray[np.int64]
    pos_k: NDArray[np.int64]
    pair: NDArray[np.int64]
    pairs: NDArray[np.int64]
    pair_is_edge: NDArray[np.bool_]
    lower_degrees: NDArray[np.int64]


#: Peak bytes per lower wedge while :func:`lower_wedges` enumerates them and a two-round
#: protocol keeps them (measured: ~100 on Facebook's 2.6 M wedges).
BYTES_PER_WEDGE = 104


def wedge_memory_check(
    graph: Graph, max_bytes: int | None, *, method: str = "two-round-triangles",
    bytes_per_wedge: int = BYTES_PER_WEDGE,
) -> None:
    """Refuse (MemoryError) when the lower wedges of ``graph`` would not fit in ``max_bytes``.

    A two-round protocol holds :math:`\\sum_v \\binom{d^-_v}{2}` lower wedges
    (``bytes_per_wedge`` each) and 64 bytes per adjacency entry; the count is computed from the
    lower degrees before anything is enumerated. ``max_bytes=None`` checks nothing.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> wedge_memory_check(from_edge_array([[0, 1], [1, 2], [0, 2]]), 10**6)
    >>> try:
    ...     wedge_memory_check(from_edge_array([[0, 1], [1, 2], [0, 2]]), 10)
    ... except MemoryError as err:
    ...     print(str(err)[:75])
    two-round-triangles on 3 nodes: its 1 lower wedges need about 488 bytes (>
    """
    g = _check_graph(graph)
    if max_bytes is None:
        return
    limit = check_nonnegative_int(max_bytes, "max_bytes")
    rows = np.repeat(np.arange(g.n_nodes, dtype=np.int64), g.degrees)
    dl = np.bincount(rows[g.indices < rows], minlength=g.n_nodes).astype(np.int64)
    wedges = int(np.dot(dl, dl - 1)) // 2
    need = bytes_per_wedge * wedges + 64 * g.indices.size
    if need > limit:
        raise MemoryError(
            f"{method} on {g.n_nodes} nodes: its {wedges} lower wedges need about "
            f"{_fmt_bytes(need)} (> max_bytes = {_fmt_bytes(limit)}); pass a larger max_bytes or "
            "use a sample of the graph"
        )


def _fmt_bytes(x: int) -> str:
    return f"{x} bytes" if x < 2**20 else f"{x / 2**30:.3g} GiB"


def lower_wedges(graph: Graph) -> LowerWedges:
    """Enumerate the lower wedges of ``graph`` (vectorized; :math:`\\sum_v \\binom{d^-_v}{2}` of them).

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> w = lower_wedges(from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]]))
    >>> w.node.tolist(), w.pair_is_edge[w.pair].tolist()
    ([2], [True])
    """
    g = _check_graph(graph)
    n = g.n_nodes
    rows = np.repeat(np.arange(n, dtype=np.int64), g.degrees)
    pos = np.arange(g.indices.size, dtype=np.int64)
    low = g.indices < rows
    lpos, lrow = pos[low], rows[low]
    dl = np.bincount(lrow, minlength=n).astype(np.int64)
    # lower neighbours come first in each (sorted) row: they occupy indptr[v] .. indptr[v] + dl[v]
    row_end = g.indptr[:-1][lrow] + dl[lrow]
    after = row_end - lpos - 1  # later lower neighbours of the same row
    total = int(after.sum())
    first = np.repeat(lpos, after)
    starts = np.cumsum(after) - after
    offset = np.arange(total, dtype=np.int64) - np.repeat(starts, after)
    second = first + 1 + offset
    node = rows[first]
    j, k = g.indices[first], g.indices[second]
    pidx = pair_index(k, j)
    pairs, inv = _unique_inverse(pidx)
    # closing pair is an edge iff j is a neighbour of k: look the pair up among the true edges
    _, er, ec = lower_edge_pairs(g)
    edges = pair_index(er, ec)
    loc = np.searchsorted(edges, pairs)
    loc[loc == edges.size] = 0
    is_edge = edges[loc] == pairs if edges.size else np.zeros(pairs.size, dtype=bool)
    return LowerWedges(node, first, second, inv, pairs, is_edge, dl)


def local2rounds_release(
    node: int,
    neighbours: ArrayLike,
    noisy_bit: Any,
    epsilon2: float,
    d_max: int,
    q: float,
    *,
    size: int = 1,
    rng: Any = None,
) -> NDArray[np.float64]:
    r"""Round 2 of Local2Rounds at one node (``size`` runs): w_v + Lap(d_max / eps2).

    Parameters
    ----------
    node : int
        The node's index v.
    neighbours : array_like of int
        Its whole neighbour list; it is projected to a uniform random subset of ``d_max``
        neighbours when longer (Imola et al.'s GraphProjection), and :math:`w_v` sums over the
        pairs of kept neighbours below v.
    noisy_bit : callable
        ``noisy_bit(j, k)``: the broadcast RR bits of the pairs ``j < k`` (vectorized, 0/1).
    epsilon2 : float
        Budget of this round.
    d_max : int
        The degree bound; the Laplace scale is ``d_max / epsilon2``.
    q : float
        Flip probability of round 1.

    Notes
    -----
    Imola et al. (2021) prove sensitivity :math:`d_{max}` for :math:`w_v` of a projected list
    (the argument of :func:`two_round_dlap_release` gives :math:`d_{max} - 1`).

    Examples
    --------
    >>> rel = local2rounds_release(3, [0, 1, 2], lambda j, k: np.ones(j.shape), 1.0, 3, 0.25,
    ...                            size=4, rng=0)
    >>> rel.shape
    (4,)
    """
    gen = check_rng(rng)
    kept, lower = _projected_lower(node, neighbours, d_max, size, gen, lower_only=False)
    w = _wedge_sums(lower, kept, noisy_bit, q)
    mech = Laplace(epsilon=epsilon2, sensitivity=check_nonnegative_int(d_max, "d_max", minimum=1))
    return w + mech.sample(size, rng=gen)


def two_round_dlap_release(
    node: int,
    neighbours: ArrayLike,
    noisy_bit: Any,
    epsilon2: float,
    bound: int,
    q: float,
    *,
    size: int = 1,
    rng: Any = None,
) -> NDArray[np.int64]:
    r"""Round 2 of ``two-round-triangles-dlap`` at one node, ``size`` runs: an integer, eps2-edge-LDP.

    The node projects its *lower* neighbour list to a uniform random subset of at most
    ``bound`` = D entries, computes :math:`w_v = t_v - q s_v` over the kept pairs, and releases

    .. math:: r_v = \lfloor w_v + U \rfloor + \eta,\quad U \sim U[0,1),\quad
              \eta \sim \mathrm{DLap}(e^{-\varepsilon_2/(D-1)})

    (sensitivity 1 when D = 1, where :math:`w_v = 0`).

    Notes
    -----
    **Unbiased.** :math:`E\lfloor x + U\rfloor = x` for every real x, and E η = 0.

    **Sensitivity D - 1 (tight).** Neighbouring lists differ in one lower neighbour l (an
    edge to a higher node does not enter :math:`w_v`). Couple the projections of both lists
    through one random order of the node ids (keep the first D in that order): each is a
    uniform D-subset, and under the coupling either (i) nothing is projected away but l is
    added, or (ii) the D-th element l' is swapped for l.

    (i) :math:`w` changes by :math:`\sum_{j\in S}(b_{jl} - q)` over the :math:`|S| \le D-1`
        other kept lower neighbours: in :math:`[-q(D-1), (1-q)(D-1)]`.
    (ii) :math:`s_v = \binom D2` is unchanged and :math:`w` changes by
         :math:`\sum_{j\in S}(b_{jl} - b_{jl'})`, :math:`|S| = D - 1`: in
         :math:`[-(D-1), D-1]`, attained when :math:`b_{jl} = 1, b_{jl'} = 0` for all j.

    So :math:`|w - w'| \le D - 1`. Randomized rounding with a shared U gives
    :math:`\lfloor w + U\rfloor - \lfloor w' + U\rfloor \in \{\lfloor w-w'\rfloor,
    \lceil w-w'\rceil\}`, of magnitude at most :math:`\lceil |w - w'| \rceil \le D - 1`
    (an integer): rounding costs no sensitivity. For each fixed order and U the two integer
    releases are DLap-shifted by at most D - 1, so their probability ratio is at most
    :math:`e^{\varepsilon_2}`; the releases are mixtures over the same order and U with
    equal weights, and a mixture of pointwise-bounded ratios keeps the bound: the release is
    :math:`\varepsilon_2`-DP. With round 1 (RR at :math:`\varepsilon_1`) each node is
    :math:`(\varepsilon_1 + \varepsilon_2)`-edge-LDP by sequential composition (round 2
    reads the broadcast RR bits, a post-processing of round 1 of other nodes, as an
    auxiliary input). Local2Rounds calibrates to :math:`d_{max}` (total degree); D bounds the
    lower degree, :math:`D \le d_{max}`, often far below it (Facebook: 251 against 1045).

    Examples
    --------
    >>> rel = two_round_dlap_release(3, [0, 1, 2], lambda j, k: np.ones(j.shape), 1.0, 3, 0.25,
    ...                              size=4, rng=0)
    >>> rel.dtype, rel.shape
    (dtype('int64'), (4,))
    """
    gen = check_rng(rng)
    d = check_nonnegative_int(bound, "bound", minimum=1)
    kept, lower = _projected_lower(node, neighbours, d, size, gen, lower_only=True)
    w = _wedge_sums(lower, kept, noisy_bit, q)
    rounded = np.floor(w + gen.random(size)).astype(np.int64)
    mech = DiscreteLaplace(epsilon=epsilon2, sensitivity=_dlap_sensitivity(d))
    return rounded + mech.sample(size, rng=gen)


def rounding_variance(graph: Graph, q: float) -> float:
    r""":math:`\sum_v f_v(1 - f_v)`, :math:`f_v = \{-q\binom{d^-_v}{2}\}`: the rounding variance.

    :math:`w_v = t_v - q s_v` with :math:`t_v` an integer, so the fractional part of
    :math:`w_v` is that of :math:`-q s_v`, fixed by the graph; rounding adds
    :math:`f_v(1-f_v)` of variance, independently across nodes.
    """
    g = _check_graph(graph)
    n = g.n_nodes
    rows = np.repeat(np.arange(n, dtype=np.int64), g.degrees)
    dl = np.bincount(rows[g.indices < rows], minlength=n).astype(np.float64)
    x = -q * (dl * (dl - 1) / 2)
    f = x - np.floor(x)
    return float(math.fsum(f * (1 - f)))


def two_round_variance(
    graph: Graph,
    epsilon1: float,
    noise_variance: float,
    *,
    rounding: bool = False,
) -> float:
    r"""Exact variance of a two-round estimate :math:`\sum_v (w_v + \text{noise}_v)/(p-q)`.

    For a bound at or above the (lower) degrees, so that no projection is active.

    Notes
    -----
    :math:`\sum_v w_v = \sum_{j<k} c^+_{jk}(b_{jk} - q)` with :math:`c^+_{jk}` the common
    neighbours above both, and the bits are independent with variance :math:`pq` whatever
    the true bit, so

    .. math:: \operatorname{Var}\hat T = \frac{pq\sum_{j<k}(c^+_{jk})^2
              + [\text{rounding}]\sum_v f_v(1-f_v) + n\,\sigma^2_{noise}}{(p-q)^2},

    the rounding (:func:`rounding_variance`) and the noises being independent of the bits
    and of each other (law of total variance).
    """
    g = _check_graph(graph)
    p, q = keep_probability(epsilon1), flip_probability(epsilon1)
    var = p * q * lower_common_neighbour_square_sum(g)
    if rounding:
        var += rounding_variance(g, q)
    var += g.n_nodes * noise_variance
    return var / (p - q) ** 2


def simulate_two_round(
    graph: Graph,
    eps1: float,
    eps2: float,
    n_trials: int = 1,
    *,
    noise: str = "dlap",
    eps0: float | None = None,
    rng: Any = None,
    bound: int | None = None,
    wedges: LowerWedges | None = None,
) -> NDArray[np.float64]:
    r"""Estimates of ``n_trials`` runs of a two-round triangle protocol (vectorized per trial).

    Parameters
    ----------
    graph : Graph
    eps1, eps2 : float
        The budgets of round 1 (RR) and round 2 (the local count), as the protocol's plan gives
        them (:class:`~ldpgraph.protocols.triangles.two_round.TwoRoundTrianglesDLap`).
    noise : {"dlap", "laplace"}
        ``"laplace"``: Local2Rounds as published (projection of the whole neighbour list to
        d_max, ``w_v + Lap(d_max/eps2)``); ``"dlap"``: ours (projection of the lower list to
        D, rounded ``w_v`` + DLap at sensitivity D - 1, :func:`two_round_dlap_release`).
    eps0 : float, optional
        None: the bound is public (``bound``, default the true maximum: total degree for
        Laplace, lower degree for DLap, as in Imola et al.'s experiments). Else the private
        bound's budget: every node releases its degree (Laplace: ``d_v + Lap(1/eps0)``; DLap:
        its lower degree ``+ DLap(e^-eps0)``) and the bound is the largest release (floored, >= 1).
    bound : int, optional
        A public bound (d_max for Laplace, D for DLap) instead of the true maximum; nodes
        above it are projected. Not with ``eps0``.
    wedges : LowerWedges, optional
        :func:`lower_wedges` of the graph, if already computed.

    Notes
    -----
    Round 1 is simulated only on the pairs that close a lower wedge: ``sum_v w_v`` depends
    on no other RR bit, so this has exactly the law of the full protocol's estimate. Of a
    node that is not projected, :math:`w_v = t_v - q s_v` enters the estimate only through
    :math:`\sum_v t_v = \sum_{j<k} c_{jk} b_{jk}` over the pairs (:math:`c_{jk}` the lower
    wedges it closes at such nodes), and, for DLap, through the rounding
    :math:`\lfloor t_v - q s_v + U_v\rfloor = t_v + \lfloor U_v - q s_v\rfloor` (:math:`t_v` is
    an integer). So the pairs that close no wedge at a projected node are drawn by groups of
    equal :math:`(c_{jk}, a_{jk})`: the sum of a group's independent Bernoulli bits is a
    binomial, and the estimate is :math:`\sum_{\text{groups}} c\,\mathrm{Bin}(N, p_a)` plus
    the individually drawn bits of the other pairs; the law is that of independent bits on
    every pair. The projected nodes (at most a few, where the bound is near the maximum)
    are simulated wedge by wedge. A trial costs :math:`O(n)` plus the wedges of its
    projected nodes.
    """
    g = _check_graph(graph)
    eps1, eps2 = check_epsilon(eps1), check_epsilon(eps2)
    private_bound = eps0 is not None
    eps0 = check_epsilon(eps0) if private_bound else 0.0
    n_trials = check_nonnegative_int(n_trials, "n_trials", minimum=1)
    if noise not in ("dlap", "laplace"):
        raise ValueError(f"noise must be 'dlap' or 'laplace', got {noise!r}")
    gen = check_rng(rng)
    w = lower_wedges(g) if wedges is None else wedges
    p, q = keep_probability(eps1), flip_probability(eps1)
    n = g.n_nodes
    prob = np.where(w.pair_is_edge, p, q)
    degrees = g.degrees if noise == "laplace" else w.lower_degrees
    true_bound = max(int(degrees.max()) if n else 1, 1)
    public = _public_bound(bound, private_bound, true_bound)
    _, _, group_size, group_c, group_edge, s_all, _ = _wedge_groups(w)
    group_p = np.where(group_edge, p, q)
    offset = -q * s_all  # w_v - t_v, fixed by the graph
    node_order = np.argsort(-degrees, kind="stable")
    sorted_deg = degrees[node_order]
    out = np.empty(n_trials)
    for t in range(n_trials):
        if private_bound:
            if noise == "laplace":
                noisy = degrees + gen.laplace(0.0, 1.0 / eps0, size=n)
                cur = max(int(np.floor(noisy.max())), 1)
            else:
                noisy = degrees + DiscreteLaplace(epsilon=eps0).sample(n, rng=gen)
                cur = max(int(noisy.max()), 1)
        else:
            cur = public
        # projected nodes (list longer than the bound) and their lower wedges
        proj = node_order[: int(np.searchsorted(-sorted_deg, -cur, side="left"))]
        if proj.size == 0:
            t_rest = float(np.dot(group_c, gen.binomial(group_size, group_p)))
            w_p = np.zeros(0)
            free: Any = slice(None)
        else:
            t_rest, w_p = _projected_trial(g, w, proj, cur, noise, prob, group_p, q, gen)
            free = np.ones(n, dtype=bool)
            free[proj] = False
        if noise == "laplace":
            parts = [t_rest, float(offset[free].sum()), *w_p.tolist()]
            parts += gen.laplace(0.0, cur / eps2, size=n).tolist()
        else:
            mech = DiscreteLaplace(epsilon=eps2, sensitivity=_dlap_sensitivity(cur))
            u = gen.random(n)
            # floor(t_v - q s_v + U) = t_v + floor(U - q s_v) for the integer t_v
            rounded = np.floor(u[free] + offset[free]).sum() + np.floor(w_p + u[proj]).sum()
            parts = [t_rest, float(rounded), float(mech.sample(n, rng=gen).sum())]
        out[t] = math.fsum(parts) / (p - q)
    return out


def _projection_keep(
    g: Graph, w: LowerWedges, bound: int, *, lower_only: bool, gen: np.random.Generator
) -> NDArray[np.bool_]:
    """Mask over ``g.indices``: a uniform random ``bound``-subset of each over-long row.

    ``lower_only``: project the lower part of each row (lower degree above the bound);
    else the whole row (degree above the bound).
    """
    keep = np.ones(g.indices.size, dtype=bool)
    lengths = w.lower_degrees if lower_only else g.degrees
    over = np.flatnonzero(lengths > bound)
    if over.size == 0:
        return keep
    starts = g.indptr[:-1][over]
    lens = lengths[over]
    rows = np.repeat(np.arange(over.size), lens)
    pos = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
    order = np.lexsort((gen.random(pos.size), rows))
    rank = np.arange(pos.size) - np.repeat(np.cumsum(lens) - lens, lens)
    keep[pos[order][rank >= bound]] = False
    return keep


def two_round_moments(
    graph: Graph,
    eps1: float,
    eps2: float,
    *,
    noise: str = "dlap",
    eps0: float | None = None,
    bound: int | None = None,
    wedges: LowerWedges | None = None,
) -> tuple[float, float]:
    r"""Exact mean and variance of the estimate of :func:`simulate_two_round` (same parameters).

        Returns
        -------
        (mean, variance) : tuple of float
            The mean is the triangle count when the bound is public (no projection).

        Notes
        -----
        Condition on the bound D (fixed when public). A node whose projected list has length
        :math:`L_v > D` keeps a uniform D-subset; a lower wedge at v survives with probability
        :math:`\pi_v = (D)_2/(L_v)_2` (falling factorials; :math:`\pi_v = 1` if
        :math:`L_v \le D`). With :math:`X_\omega` the survival of wedge :math:`\omega`, closing
        pair bit :math:`b_\omega` and :math:`Y = \sum_\omega X_\omega (b_\omega - q)`:

        - :math:`E[Y] = (p-q)\sum_v \pi_v T^-_v`;
        - :math:`E\operatorname{Var}(Y\mid X) = pq\sum_{j<k}\big[(\sum_{\omega\ni jk}\pi_\omega)^2
          + \sum_{\omega
    i jk}\pi_\omega(1-\pi_\omega)\big]` (projections independent across
          nodes);
        - :math:`\operatorname{Var}E[Y\mid X] = (p-q)^2\sum_v \big[T^-_v(\pi_2 - \pi_2^2)
          + h_v(\pi_3 - \pi_2^2) + (T^{-2}_v - T^-_v - h_v)(\pi_4 - \pi_2^2)\big]`, over pairs of
          triangles at v that share two, one or no lower neighbour, :math:`\pi_r = (D)_r/(L_v)_r`,
          :math:`h_v = \sum_x \eta_x(\eta_x - 1)` with :math:`\eta_x` the triangles at v through x;
        - the rounding (DLap) :math:`\sum_v f_v(1-f_v)`, :math:`f_v = \{-q\binom{\min(d^-_v, D)}2\}`,
          and the noises :math:`n\sigma^2(D)`, are independent of the rest.

        Dividing by :math:`(p-q)^2` gives the conditional variance; the private bound's law is
        exact (:math:`P[D \le x] = \prod_v F(x - L_v)` for the noisy maximum) and the mixture
        over D is summed where its mass exceeds 1e-16.
    """
    g = _check_graph(graph)
    eps1, eps2 = check_epsilon(eps1), check_epsilon(eps2)
    private_bound = eps0 is not None
    eps0 = check_epsilon(eps0) if private_bound else 0.0
    if noise not in ("dlap", "laplace"):
        raise ValueError(f"noise must be 'dlap' or 'laplace', got {noise!r}")
    w = lower_wedges(g) if wedges is None else wedges
    p, q = keep_probability(eps1), flip_probability(eps1)
    n = g.n_nodes
    lengths = (g.degrees if noise == "laplace" else w.lower_degrees).astype(np.int64)
    true_bound = max(int(lengths.max()) if n else 1, 1)
    public = _public_bound(bound, private_bound, true_bound)
    tri_w = w.pair_is_edge[w.pair]
    t_v = np.bincount(w.node[tri_w], minlength=n).astype(np.float64)
    c_plus = np.bincount(w.pair, minlength=w.pairs.size).astype(np.float64)
    base_pairs = float(np.dot(c_plus, c_plus))
    # triangles at v through each lower neighbour x (keyed by the CSR position of x in v's row)
    eta = np.bincount(np.concatenate([w.pos_j[tri_w], w.pos_k[tri_w]]), minlength=g.indices.size)
    rows = np.repeat(np.arange(n, dtype=np.int64), g.degrees)
    h_v = np.bincount(rows, weights=eta * (eta - 1.0), minlength=n)
    dl = w.lower_degrees.astype(np.float64)

    def noise_var(bound: int) -> float:
        if noise == "laplace":
            return 2.0 * (bound / eps2) ** 2
        return DiscreteLaplace(epsilon=eps2, sensitivity=_dlap_sensitivity(bound)).variance

    def rounding(kept_lower: NDArray[np.float64]) -> float:
        x = -q * (kept_lower * (kept_lower - 1) / 2)
        f = x - np.floor(x)
        return float(math.fsum(f * (1 - f)))

    round_full = rounding(dl) if noise == "dlap" else 0.0
    total_t = float(t_v.sum())

    # nodes and wedges in decreasing order of L: those projected at bound D form a prefix
    node_order = np.argsort(-lengths, kind="stable")
    sorted_len = lengths[node_order]
    wedge_perm = np.argsort(-lengths[w.node], kind="stable")
    wedge_len = lengths[w.node][wedge_perm]
    wedge_node, wedge_pair = w.node[wedge_perm], w.pair[wedge_perm]

    def conditional(bound: int) -> tuple[float, float]:
        if bound >= true_bound:
            var = pq_base + round_full + n * noise_var(bound)
            return total_t, var / (p - q) ** 2
        aff = node_order[: int(np.searchsorted(-sorted_len, -bound, side="left"))]
        lv = lengths[aff].astype(np.float64)
        dd = float(bound)
        pi2 = dd * (dd - 1) / (lv * (lv - 1))
        # (D)_r/(L)_r; where L < r (or D < r) no r distinct neighbours exist: 0
        pi3 = np.divide(pi2 * max(dd - 2, 0.0), lv - 2, out=np.zeros_like(lv), where=lv > 2)
        pi4 = np.divide(pi3 * max(dd - 3, 0.0), lv - 3, out=np.zeros_like(lv), where=lv > 3)
        pi = np.ones(n)
        pi[aff] = pi2
        mean = float(np.dot(pi, t_v))
        n_aff = int(np.searchsorted(-wedge_len, -bound, side="left"))
        pw = pi[wedge_node[:n_aff]]
        if 8 * n_aff < c_plus.size:  # few projected wedges: reduce to their pairs
            uniq, inv = _unique_inverse(wedge_pair[:n_aff])
            delta = np.bincount(inv, weights=1.0 - pw, minlength=uniq.size)
            cp = c_plus[uniq]
        else:  # many: w.pair indexes the pairs already
            delta = np.bincount(wedge_pair[:n_aff], weights=1.0 - pw, minlength=c_plus.size)
            cp = c_plus
        pairs_sq = base_pairs - float(np.dot(2.0 * cp - delta, delta))
        e_var = p * q * (pairs_sq + float(np.sum(pw * (1.0 - pw))))
        tv, hv = t_v[aff], h_v[aff]
        v_mean = (p - q) ** 2 * float(
            np.sum(tv * (pi2 - pi2**2) + hv * (pi3 - pi2**2) + (tv * tv - tv - hv) * (pi4 - pi2**2))
        )
        rnd = rounding(np.minimum(dl, dd)) if noise == "dlap" else 0.0
        var = e_var + v_mean + rnd + n * noise_var(bound)
        return mean, var / (p - q) ** 2

    pq_base = p * q * base_pairs
    if not private_bound:
        return conditional(public)
    support, probs = _bound_law(lengths, eps0, noise)
    m1 = m2 = 0.0
    for bound, pr in zip(support.tolist(), probs.tolist(), strict=True):
        mean_d, var_d = conditional(int(bound))
        m1 += pr * mean_d
        m2 += pr * (var_d + mean_d * mean_d)
    return m1, max(m2 - m1 * m1, 0.0)


def _bound_law(lengths: NDArray[np.int64], eps0: float, noise: str) -> tuple[NDArray, NDArray]:
    """Support and pmf (mass > 1e-16) of the private bound D = max(noisy max, 1)."""
    top = int(lengths.max()) if lengths.size else 0
    n = max(lengths.size, 1)
    lo = max(top - int(40.0 / eps0) - 2, 0)
    hi = top + int((math.log(n) + 40.0) / eps0) + 2
    x = np.arange(lo, hi + 1, dtype=np.float64)
    values, counts = np.unique(lengths, return_counts=True)
    # log P[max < x + 1] (Laplace, D = floor) or log P[max <= x] (DLap, integer releases)
    shift = 1.0 if noise == "laplace" else 0.0
    log_cdf = np.zeros(x.size)
    pz = math.exp(-eps0)
    for val, cnt in zip(values.tolist(), counts.tolist(), strict=True):
        z = x + shift - val
        neg = z < 0
        lc = np.empty(x.size)
        if noise == "laplace":  # P[L < z]
            lc[neg] = math.log(0.5) + eps0 * z[neg]
            lc[~neg] = np.log1p(-0.5 * np.exp(-eps0 * z[~neg]))
        else:  # P[eta <= z], z integer
            lc[neg] = eps0 * z[neg] - math.log1p(pz)
            lc[~neg] = np.log1p(-np.exp(-eps0 * (z[~neg] + 1.0)) / (1.0 + pz))
        log_cdf += cnt * lc
    cdf = np.exp(log_cdf)
    pmf = np.diff(np.r_[0.0, cdf])
    pmf[-1] += 1.0 - cdf[-1]
    # D = max(., 1): the mass at values <= 1 goes to 1
    d = np.maximum(x.astype(np.int64), 1)
    keep = pmf > 1e-16
    dd, pp = d[keep], pmf[keep]
    uniq, inv = np.unique(dd, return_inverse=True)
    return uniq, np.bincount(inv, weights=pp)


# ---------------------------------------------------------------------------------------------


def _projected_trial(
    g: Graph,
    w: LowerWedges,
    proj: NDArray[np.int64],
    bound: int,
    noise: str,
    prob: NDArray[np.float64],
    group_p: NDArray[np.float64],
    q: float,
    gen: np.random.Generator,
) -> tuple[float, NDArray[np.float64]]:
    """One trial with the nodes ``proj`` projected: ``(sum of t_v over the others, w_v of proj)``.

    The pairs closing a wedge at a projected node get individual bits, the others their
    group's binomial (see :func:`simulate_two_round`).
    """
    c_plus, group_of, group_size, group_c, _, _, wedge_start = _wedge_groups(w)
    lens = wedge_start[proj + 1] - wedge_start[proj]
    first = wedge_start[proj] - np.cumsum(lens) + lens
    wp = np.repeat(first, lens) + np.arange(int(lens.sum()), dtype=np.int64)
    if 4 * wp.size > w.pair.size:  # most wedges projected: every pair its own bit, no sort
        touched, inv = np.arange(w.pairs.size), w.pair[wp]
    else:
        touched, inv = _unique_inverse(w.pair[wp])
    bits = gen.random(touched.size) < prob[touched]
    rest = group_size - np.bincount(group_of[touched], minlength=group_size.size)
    c_rest = c_plus[touched] - np.bincount(inv, minlength=touched.size)
    t_rest = float(np.dot(group_c, gen.binomial(rest, group_p))) + float(np.dot(c_rest, bits))
    keep = _projection_keep(g, w, bound, lower_only=noise == "dlap", gen=gen)
    alive = keep[w.pos_j[wp]] & keep[w.pos_k[wp]]
    local = np.repeat(np.arange(proj.size), lens)
    t_p = np.bincount(local, weights=alive & bits[inv], minlength=proj.size)
    return t_rest, t_p - q * np.bincount(local, weights=alive, minlength=proj.size)


def _wedge_groups(w: LowerWedges) -> tuple[NDArray, ...]:
    """Per-graph tables of :func:`simulate_two_round`, cached while ``w`` lives.

    ``(c_plus, group_of, group_size, group_c, group_edge, s_all, wedge_start)``: wedges closing
    each pair; the pairs grouped by (c+, edge or not), whose bits enter only through
    c * (their sum); lower wedges per node; start of each node's wedges (``w.node`` is sorted).
    """
    cached = _WEDGE_GROUPS.get(w)
    if cached is None:
        n = w.lower_degrees.size
        c_plus = np.bincount(w.pair, minlength=w.pairs.size)
        groups, group_of = _unique_inverse(2 * c_plus + w.pair_is_edge)
        group_size = np.bincount(group_of, minlength=groups.size)
        s_all = np.bincount(w.node, minlength=n)  # C(d_v^-, 2)
        wedge_start = np.searchsorted(w.node, np.arange(n + 1))
        cached = (c_plus, group_of, group_size, (groups // 2).astype(np.float64), groups % 2 == 1,
                  s_all, wedge_start)
        _WEDGE_GROUPS[w] = cached
    return cached


_WEDGE_GROUPS: weakref.WeakKeyDictionary[LowerWedges, tuple[NDArray, ...]] = weakref.WeakKeyDictionary()


def _public_bound(bound: Any, private_bound: bool, true_bound: int) -> int:
    if bound is None:
        return true_bound
    if private_bound:
        raise ValueError("bound is a public bound: pass it or eps0 (a private bound), not both")
    return check_nonnegative_int(bound, "bound", minimum=1)


def _unique_inverse(x: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Sorted distinct values and the inverse map, by sorting (numpy's hash path is slow here)."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    new = np.r_[True, xs[1:] != xs[:-1]] if xs.size else np.zeros(0, dtype=bool)
    inv = np.empty(x.size, dtype=np.int64)
    inv[order] = np.cumsum(new) - 1
    return xs[new], inv


def _dlap_sensitivity(bound: int) -> int:
    """Sensitivity D - 1 of the rounded w_v (at least 1, so that DLap is defined)."""
    return max(int(bound) - 1, 1)


def _projected_lower(
    node: int, neighbours: ArrayLike, bound: int, size: int, gen: np.random.Generator, *, lower_only: bool
) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
    """``(kept, lower)``: the lower neighbours and, per run, which survive the projection.

    ``kept`` has shape (size, len(lower)). The projection keeps a uniform random ``bound``-subset
    of the lower list (``lower_only``) or of the whole list (then the lower ones among it).
    """
    v = check_nonnegative_int(node, "node")
    nb = np.unique(np.asarray(neighbours, dtype=np.int64))
    if nb.size and (nb.min() < 0 or np.any(nb == v)):
        raise ValueError(f"neighbours must be node ids >= 0 other than node {v}, got {nb.tolist()}")
    size = check_nonnegative_int(size, "size", minimum=1)
    pool = nb[nb < v] if lower_only else nb
    if pool.size > bound:
        ranks = np.argsort(np.argsort(gen.random((size, pool.size)), axis=1), axis=1)
        keep_pool = ranks < bound
    else:
        keep_pool = np.ones((size, pool.size), dtype=bool)
    is_lower = pool < v
    return keep_pool[:, is_lower], pool[is_lower]


def _wedge_sums(
    lower: NDArray[np.int64], kept: NDArray[np.bool_], noisy_bit: Any, q: float
) -> NDArray[np.float64]:
    """Per run, w = sum over kept pairs j < k of (noisy_bit(j, k) - q)."""
    if lower.size < 2:
        return np.zeros(kept.shape[0])
    a, b = np.triu_indices(lower.size, k=1)
    bits = np.asarray(noisy_bit(lower[a], lower[b]), dtype=np.float64)  # lower is sorted: a < b
    both = kept[:, a] & kept[:, b]
    return both @ bits - q * both.sum(axis=1)


def _dense_triangles(n: int, u: NDArray[np.int64], v: NDArray[np.int64]) -> int:
    r"""Triangles of the graph with lower pairs ``u > v``: :math:`\langle L^\top L, L\rangle` by blocks.

    Exact (float32 partial sums are integers below 2^24): see :func:`noisy_triple_classes`.
    """
    if n > _DENSE_MAX_NODES:
        raise ValueError(f"the dense kernel is exact up to n = {_DENSE_MAX_NODES} nodes, got n = {n}")
    low = np.zeros((n, n), dtype=np.float32)
    low[u, v] = 1.0
    total = 0.0
    for start in range(0, n, _DENSE_BLOCK):
        stop = min(n, start + _DENSE_BLOCK)
        # rows i < start of columns start..stop are zero (L_ij = 0 for i <= j): skip them
        gram = low[start:, start:stop].T @ low[start:, :stop]  # (L^T L)[start:stop, :stop]
        total += float(np.multiply(gram, low[start:stop, :stop]).sum(dtype=np.float64))
    return int(total)


def _adjacency(g: Graph) -> sp.csr_array:
    import scipy.sparse as sp  # deferred: slow to import

    data = np.ones(g.indices.size, dtype=np.int64)
    return sp.csr_array((data, g.indices, g.indptr), shape=(g.n_nodes, g.n_nodes))


def _gram_offdiag_square_sum(x: sp.csr_array) -> int:
    r""":math:`\sum_{j \ne k} ((X^\top X)_{jk})^2` for a 0/1 sparse X, exactly, in column blocks."""
    import scipy.sparse as sp  # deferred: slow to import

    x = sp.csr_array(x, dtype=np.int64)
    xc = sp.csc_array(x)
    row_len = np.diff(x.indptr).astype(np.int64)
    work = np.cumsum(xc.T @ row_len) if x.shape[1] else np.zeros(0, dtype=np.int64)
    ncol = x.shape[1]
    total = 0
    start = 0
    while start < ncol:
        limit = (work[start - 1] if start else 0) + _GRAM_BLOCK_WORK
        stop = max(int(np.searchsorted(work, limit, side="right")), start + 1)
        stop = min(stop, ncol)
        block = sp.csr_array(xc[:, start:stop].T) @ x  # rows start..stop of X^T X
        block = sp.coo_array(block)
        off = block.row + start != block.col
        total += int(np.dot(block.data[off], block.data[off]))
        start = stop
    return total


def _check_graph(graph: Any) -> Graph:
    if not isinstance(graph, Graph):
        raise TypeError(
            f"graph must be an ldpgraph Graph (triangle protocols need the adjacency), got "
            f"{type(graph).__name__}"
        )
    return graph


# ============================================================================ poisoning: one node's influence


def rr_triangles_influence_bound(n_nodes: int, epsilon: float) -> float:
    r"""How far one node's round-1 bits alone move the ``rr-triangles`` estimate: C(n-1, 2) p^2/(p-q)^3.

    Notes
    -----
    :math:`\hat T = \sum_\tau \prod_{e\in\tau} z_e`, :math:`z = (b - q)/(p - q) \in
    \{p/(p-q), -q/(p-q)\}`, :math:`|z| \le z_1 = p/(p-q)`. Node v sends exactly the bits of the
    pairs (v, j), j < v (the rows are structural: one row per noisy 1, partners below v); they
    lie in the triples {v, j, k} with min(j, k) < v, at most C(n-1, 2). In such a triple v sets
    one factor (change at most :math:`(z_1 - z_0)z_1^2 = z_1^2/(p-q)`) or two (the product of
    two lies in :math:`\{z_1^2, z_1z_0, z_0^2\}`, spread :math:`z_1(z_1 - z_0)`, times
    :math:`|z_c| \le z_1`): each triple moves by at most :math:`z_1^2/(p - q)`.

    >>> round(rr_triangles_influence_bound(10, 1.0), 3)
    194.962
    """
    n = check_nonnegative_int(n_nodes, "n_nodes", minimum=1)
    eps = check_epsilon(epsilon)
    p, q = keep_probability(eps), flip_probability(eps)
    return math.comb(n - 1, 2) * p * p / (p - q) ** 3


def dlap_triangles_influence_bound(lo: int, hi: int, epsilon_rr: float) -> float:
    r"""How far one node's ``local_count`` row alone moves the ``two-round-triangles-dlap`` estimate.

    Notes
    -----
    :math:`\hat T = \sum_v r_v/(p - q)`: replacing one clipped :math:`r_v \in [L, U]` by another
    changes one term, by at most :math:`(U - L)/(p - q)`, attained at the ends (tight).

    >>> round(dlap_triangles_influence_bound(-30, 33, 1.0), 3)
    136.329
    """
    eps = check_epsilon(epsilon_rr, "epsilon_rr")
    if hi < lo:
        raise ValueError(f"the admissible range must have lo <= hi, got [{lo}, {hi}]")
    return (int(hi) - int(lo)) / (keep_probability(eps) - flip_probability(eps))


def dlap_round1_influence_bound(n_nodes: int, bound: int, epsilon_rr: float) -> float:
    r"""How far one node's round-1 bits move the other nodes' part of the two-round estimate.

    Notes
    -----
    Node v's bits are those of the pairs (v, j), j < v. Such a pair enters :math:`w_u` only for
    u > v with v and j both among u's kept lower neighbours: at most D - 1 pairs per u, each
    changing :math:`w_u` by an integer of magnitude <= 1. For the same node randomness (the
    projection does not depend on the bits) :math:`\lfloor w_u + \Delta + U\rfloor =
    \lfloor w_u + U\rfloor + \Delta` for an integer :math:`\Delta`, and the noise is the same, so
    :math:`\sum_{u \ne v} r_u` moves by at most (D - 1)(n - 1 - v) <= (D - 1)(n - 1), and the
    estimate by at most :math:`(D-1)(n-1)/(p-q)`; with its own clipped round-2 row, add
    :func:`dlap_triangles_influence_bound`.

    >>> round(dlap_round1_influence_bound(10, 3, 1.0), 3)
    38.951
    """
    n = check_nonnegative_int(n_nodes, "n_nodes", minimum=1)
    d = check_nonnegative_int(bound, "bound", minimum=1)
    eps = check_epsilon(epsilon_rr, "epsilon_rr")
    return (d - 1) * (n - 1) / (keep_probability(eps) - flip_probability(eps))


# ============================================================================ at scale: no wedge table


#: Wedges per block of centres of the streamed simulators (about 80 bytes each while a block lives).
_STREAM_BLOCK_WEDGES = 1 << 22
#: Work (products) per block of the pattern counts' sparse Gram product.
_PATTERN_BLOCK_WORK = 1 << 23
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@dataclass(eq=False)
class WedgePatterns:
    r"""What the law of a two-round estimate needs of a graph, without a table of its wedges.

    Attributes
    ----------
    lower_degrees : ndarray of int64, shape (n,)
    group_c, group_size, group_edge : ndarray, shape (G,)
        The closing pairs :math:`j < k` of the lower wedges grouped by :math:`(c^+_{jk}, a_{jk})`:
        :math:`c^+_{jk}` the lower wedges closing the pair (its common neighbours above both,
        :math:`(L^\top L)_{jk}`), ``group_size`` the pairs of each group, ``group_edge`` whether
        they are edges.
    n_wedges : int
        :math:`\sum_v \binom{d^-_v}2`.
    """

    graph: Graph = field(repr=False)
    lower_degrees: NDArray[np.int64]
    n_wedges: int
    #: ``(group_c, group_size, group_edge)`` once computed (:attr:`group_c` computes them)
    groups: tuple[NDArray, NDArray, NDArray] | None = field(default=None, repr=False)
    #: per block of centres (``_stream_blocks``), whether each wedge's closing pair is an edge
    #: (filled on the first streamed trial, or by :func:`_wedge_edges`)
    wedge_edge: list[NDArray[np.bool_]] | None = field(default=None, repr=False)

    def _groups(self) -> tuple[NDArray, NDArray, NDArray]:
        if self.groups is None:
            self.groups = _pattern_groups(self.graph, self.lower_degrees)
        return self.groups

    @property
    def group_c(self) -> NDArray[np.float64]:
        return self._groups()[0]

    @property
    def group_size(self) -> NDArray[np.int64]:
        return self._groups()[1]

    @property
    def group_edge(self) -> NDArray[np.bool_]:
        return self._groups()[2]

    @property
    def triangles(self) -> float:
        return float(np.dot(self.group_c, self.group_size * self.group_edge))

    @property
    def c_square_sum(self) -> float:
        r""":math:`\sum_{j<k} (c^+_{jk})^2`."""
        return float(np.dot(self.group_c * self.group_c, self.group_size))


def wedge_patterns(graph: Graph, *, groups: bool = True) -> WedgePatterns:
    r"""The :class:`WedgePatterns` of ``graph``: sparse products in column blocks, memory bounded.

    ``groups=False``: the lower degrees only now, the groups on first use (a simulator that streams
    every trial, as ``arr-triangles`` with clipping, never needs them).

    Rows ``J`` of :math:`L^\top L` (:math:`L_{vj} = a_{vj}[j < v]`) are formed one block at a time
    (about ``_PATTERN_BLOCK_WORK`` products each); their entries above the diagonal are the
    :math:`c^+_{jk}` of the pairs :math:`j < k` with a lower wedge, those also in :math:`A_J` the
    edges among them. Only the histogram of :math:`(c^+, a)` is kept.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> pt = wedge_patterns(from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3], [1, 3], [0, 3]]))  # K4
    >>> pt.group_c.tolist(), pt.group_size.tolist(), pt.group_edge.tolist(), pt.n_wedges, pt.triangles
    ([1.0, 2.0], [2, 1], [True, True], 4, 4.0)
    """
    g = _check_graph(graph)
    rows = np.repeat(np.arange(g.n_nodes, dtype=np.int64), g.degrees)
    dl = np.bincount(rows[g.indices < rows], minlength=g.n_nodes).astype(np.int64)
    pt = WedgePatterns(g, dl, int(np.dot(dl, dl - 1)) // 2)
    if groups:
        pt._groups()
    return pt


def _pattern_groups(g: Graph, dl: NDArray[np.int64]) -> tuple[NDArray, NDArray, NDArray]:
    """``(group_c, group_size, group_edge)`` of :class:`WedgePatterns` (see :func:`wedge_patterns`)."""
    import scipy.sparse as sp  # deferred: slow to import

    n = g.n_nodes
    low = sp.tril(_adjacency(g), k=-1, format="csr")
    lowc = sp.csc_array(low)
    # products of the rows j of L^T L: sum over the v above j of d^-_v
    work = np.cumsum(lowc.T @ dl) if n else np.zeros(0, dtype=np.int64)
    # the true edges j < k as keys j * n + k, sorted (row-major upper triangle of the sorted CSR)
    rows = np.repeat(np.arange(n, dtype=np.int64), g.degrees)
    up = g.indices > rows
    edge_keys = rows[up] * n + g.indices[up]
    edge_ptr = np.r_[0, np.cumsum(np.bincount(rows[up], minlength=n))]
    del rows, up
    hist_all = np.zeros(1, dtype=np.int64)
    hist_edge = np.zeros(1, dtype=np.int64)
    start = 0
    while start < n:
        limit = (work[start - 1] if start else 0) + _PATTERN_BLOCK_WORK
        stop = min(max(int(np.searchsorted(work, limit, side="right")), start + 1), n)
        block = sp.csr_array(lowc[:, start:stop].T) @ low  # rows start..stop of L^T L
        brow = np.repeat(np.arange(start, stop, dtype=np.int64), np.diff(block.indptr))
        above = block.indices > brow  # k > j: each pair once, no diagonal
        vals = block.data[above].astype(np.int64)
        keys = brow[above] * n + block.indices[above]
        del block, brow, above
        hist_all = _add_hist(hist_all, vals)
        ek = edge_keys[edge_ptr[start] : edge_ptr[stop]]
        if ek.size:
            loc = np.searchsorted(ek, keys)
            loc[loc == ek.size] = 0
            hist_edge = _add_hist(hist_edge, vals[ek[loc] == keys])
        start = stop
    hist_non = hist_all - np.pad(hist_edge, (0, hist_all.size - hist_edge.size))
    cs, sizes, edges = [], [], []
    for hist, is_edge in ((hist_non, False), (hist_edge, True)):
        c = np.flatnonzero(hist[1:]) + 1
        cs.append(c)
        sizes.append(hist[c])
        edges.append(np.full(c.size, is_edge))
    return np.concatenate(cs).astype(np.float64), np.concatenate(sizes), np.concatenate(edges)


def _add_hist(hist: NDArray[np.int64], values: NDArray[np.int64]) -> NDArray[np.int64]:
    add = np.bincount(values, minlength=hist.size)
    if add.size > hist.size:
        hist = np.pad(hist, (0, add.size - hist.size))
    return hist + add


def _stream_blocks(dl: NDArray[np.int64]) -> list[tuple[int, int]]:
    """Ranges ``[v0, v1)`` of centres with about ``_STREAM_BLOCK_WEDGES`` lower wedges each."""
    n = dl.size
    cum = np.cumsum(dl * (dl - 1) // 2)
    out, start = [], 0
    while start < n:
        limit = (cum[start - 1] if start else 0) + _STREAM_BLOCK_WEDGES
        stop = min(max(int(np.searchsorted(cum, limit, side="right")), start + 1), n)
        out.append((start, stop))
        start = stop
    return out


def _block_wedges(g: Graph, dl: NDArray[np.int64], v0: int, v1: int) -> tuple[NDArray[np.int64], ...]:
    """``(node, pos_j, pos_k)`` of the lower wedges centred at ``v0 .. v1 - 1``, in centre order
    (positions in ``g.indices``; as :func:`lower_wedges`)."""
    d = dl[v0:v1]
    lens = d * (d - 1) // 2
    if int(lens.sum()) == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z
    base = g.indptr[v0:v1].astype(np.int64)
    # lower positions of the block: node-major, each row's lower part first
    lrow = np.repeat(np.arange(v0, v1, dtype=np.int64), d)
    lpos = np.repeat(base - (np.cumsum(d) - d), d) + np.arange(int(d.sum()), dtype=np.int64)
    after = np.repeat(base + d, d) - lpos - 1
    total = int(after.sum())
    first = np.repeat(lpos, after)
    starts = np.cumsum(after) - after
    second = first + 1 + np.arange(total, dtype=np.int64) - np.repeat(starts, after)
    return np.repeat(lrow, after), first, second


def _pair_uniforms(keys: NDArray[np.int64], seed: np.uint64) -> NDArray[np.float64]:
    """One uniform in [0, 1) per pair key: SplitMix64 at position ``key`` of the stream ``seed``.

    The same key gives the same uniform within a trial (a pair's bit is shared by every wedge it
    closes), distinct keys give SplitMix64's outputs at distinct positions (a generator that passes
    BigCrush), and each trial draws a fresh 64-bit ``seed`` from the trial's generator.
    """
    with np.errstate(over="ignore"):
        z = keys.astype(np.uint64) * _GOLDEN + seed
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
        z ^= z >> np.uint64(31)
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 2**53)


def _wedge_edges(g: Graph, pt: WedgePatterns) -> list[NDArray[np.bool_]]:
    """Per block of :func:`_stream_blocks`: whether each wedge's closing pair is an edge (cached)."""
    if pt.wedge_edge is None:
        dl = pt.lower_degrees
        out = []
        for v0, v1 in _stream_blocks(dl):
            _, pj, pk = _block_wedges(g, dl, v0, v1)
            # is j among the lower neighbours of k (the sorted start of k's row)? binary search there
            j, k = g.indices[pj], g.indices[pk]
            found = _in_rows(g, g.indptr[k], g.indptr[k] + dl[k], j)
            out.append(found)
        pt.wedge_edge = out
    return pt.wedge_edge


def streamed_wedge_bits(
    g: Graph, pt: WedgePatterns, p_edge: float, p_non: float, gen: np.random.Generator
) -> Any:
    r"""Per block of centres: ``(v0, v1, node, pos_j, pos_k, bit)`` of every lower wedge, one trial.

    ``bit`` is the noisy bit of the wedge's closing pair (1 with probability ``p_edge`` on an edge,
    ``p_non`` else), drawn once per pair and trial (:func:`_pair_uniforms`): the wedges of different
    centres closing the same pair read the same bit, bits of distinct pairs are independent --
    the law of round 1 on the pairs the local counts read. Memory: one block of wedges.
    """
    seed = np.uint64(int(gen.integers(0, 2**63)) * 2 + 1)
    edges = _wedge_edges(g, pt)
    for (v0, v1), is_edge in zip(_stream_blocks(pt.lower_degrees), edges, strict=True):
        node, pj, pk = _block_wedges(g, pt.lower_degrees, v0, v1)
        u = _pair_uniforms(pair_index(g.indices[pk], g.indices[pj]), seed)
        yield v0, v1, node, pj, pk, u < np.where(is_edge, p_edge, p_non)


#: The most wedges at projected nodes (and candidate apexes of their pairs) a trial handles pair by
#: pair (:func:`_few_projected`); beyond, it streams every wedge.
_FEW_PROJECTED_WEDGES = 1 << 22
_FEW_PROJECTED_WORK = 1 << 25


def _wedges_of(g: Graph, dl: NDArray[np.int64], nodes: NDArray[np.int64]) -> tuple[NDArray[np.int64], ...]:
    """``(node, pos_j, pos_k)`` of the lower wedges centred at ``nodes`` (any node ids, in that order)."""
    d = dl[nodes]
    if int(np.dot(d, d - 1)) == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z
    base = g.indptr[nodes].astype(np.int64)
    lrow = np.repeat(nodes.astype(np.int64), d)
    lpos = np.repeat(base - (np.cumsum(d) - d), d) + np.arange(int(d.sum()), dtype=np.int64)
    after = np.repeat(base + d, d) - lpos - 1
    first = np.repeat(lpos, after)
    starts = np.cumsum(after) - after
    second = first + 1 + np.arange(int(after.sum()), dtype=np.int64) - np.repeat(starts, after)
    return np.repeat(lrow, after), first, second


def _in_rows(
    g: Graph, lo: NDArray[np.int64], hi: NDArray[np.int64], x: NDArray[np.int64]
) -> NDArray[np.bool_]:
    """Whether ``x[i]`` is among ``g.indices[lo[i]:hi[i]]`` (a sorted stretch of a row): binary search."""
    lo, hi = lo.astype(np.int64), hi.astype(np.int64)
    end = hi.copy()
    top = max(int((hi - lo).max(initial=0)), 1)
    last = max(g.indices.size - 1, 0)
    for _ in range(top.bit_length()):
        mid = (lo + hi) >> 1
        right = (mid < hi) & (g.indices[np.minimum(mid, last)] < x)
        lo = np.where(right, mid + 1, lo)
        hi = np.where(right, hi, mid)
    return (lo < end) & (g.indices[np.minimum(lo, last)] == x)


def _few_projected(
    g: Graph, pt: WedgePatterns, proj: NDArray[np.int64], keep: NDArray[np.bool_], p: float, q: float,
    group_p: NDArray[np.float64], gen: np.random.Generator,
) -> tuple[float, NDArray[np.float64]] | None:
    r"""One trial's :math:`\sum_v t_v` and the kept pairs :math:`s_v` of the projected nodes ``proj``, pair by
    pair for the pairs their wedges close; None when those are too many (then stream every wedge).

    The pairs S closed by a wedge at a projected node get individual bits; each enters with weight
    :math:`c^+_{jk} - n_{jk} + \kappa_{jk}` (its wedges at unprojected nodes, plus those kept at projected
    ones); the other pairs of each :math:`(c^+, a)` group still enter as :math:`c\,\mathrm{Bin}(N - |S
    \cap \text{group}|, p_a)`. :math:`c^+_{jk}` of a pair of S: the neighbours v > k of k that are
    neighbours of j (a binary search in j's row per candidate).
    """
    dl = pt.lower_degrees
    d = dl[proj]
    if int(np.dot(d, d - 1)) // 2 > _FEW_PROJECTED_WEDGES:
        return None
    wn, wj, wk = _wedges_of(g, dl, proj)
    key = pair_index(g.indices[wk], g.indices[wj])
    uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
    j, k = g.indices[wj[first]].astype(np.int64), g.indices[wk[first]].astype(np.int64)
    up_lo = g.indptr[k] + dl[k]  # the neighbours above k: the end of k's sorted row
    cnt = g.indptr[k + 1] - up_lo
    if int(cnt.sum()) > _FEW_PROJECTED_WORK:
        return None
    pid = np.repeat(np.arange(uniq.size), cnt)
    cand = g.indices[np.repeat(up_lo - (np.cumsum(cnt) - cnt), cnt) + np.arange(int(cnt.sum()))]
    c_plus = np.bincount(pid, weights=_in_rows(g, g.indptr[j][pid], g.indptr[j + 1][pid], cand),
                         minlength=uniq.size)
    is_edge = _in_rows(g, g.indptr[k], g.indptr[k] + dl[k], j)
    n_p = np.bincount(inv, minlength=uniq.size)
    alive = keep[wj] & keep[wk]
    kept = np.bincount(inv, weights=alive, minlength=uniq.size)
    gkey = 2 * pt.group_c.astype(np.int64) + pt.group_edge
    order = np.argsort(gkey)
    gidx = order[np.searchsorted(gkey[order], 2 * c_plus.astype(np.int64) + is_edge)]
    rest = pt.group_size - np.bincount(gidx, minlength=gkey.size)
    bits = gen.random(uniq.size) < np.where(is_edge, p, q)
    t_sum = float(np.dot(pt.group_c, gen.binomial(rest, group_p))) + float(np.dot(bits, c_plus - n_p + kept))
    local = np.searchsorted(proj, wn)  # proj is sorted
    return t_sum, np.bincount(local, weights=alive, minlength=proj.size)


def simulate_two_round_scaled(
    graph: Graph,
    eps1: float,
    eps2: float,
    n_trials: int = 1,
    *,
    noise: str = "dlap",
    eps0: float | None = None,
    rng: Any = None,
    bound: int | None = None,
    patterns: WedgePatterns | None = None,
) -> NDArray[np.float64]:
    r""":func:`simulate_two_round` (same parameters and law) without the table of lower wedges.

    Notes
    -----
    **The law sampled.** Given the bound D, the estimate is :math:`\sum_v r_v/(p-q)`,
    :math:`r_v = \lfloor t_v - q s_v + U_v\rfloor + \eta_v` with :math:`t_v = \sum_{\omega \in
    W_v} b_{\omega}` over the kept lower wedges of v and :math:`s_v = |W_v|`. The noisy bits
    :math:`b_{jk}` are independent across pairs (Bernoulli(p) on an edge, q else) but each is
    shared by every centre whose kept wedges close on (j, k), so the local counts are dependent;
    the law of their *sum* is what the estimate needs.

    - *No node projected* (every list within the bound: always with the default public bound):
      :math:`t_v` is an integer, so :math:`\sum_v\lfloor t_v - q s_v + U_v\rfloor = \sum_{j<k}
      c^+_{jk} b_{jk} + \sum_v \lfloor U_v - q s_v\rfloor`, and the pairs of a group of equal
      :math:`(c^+, a)` enter only through the sum of their bits: a Binomial(N, p or q). So a trial
      is :math:`\sum_{\text{groups}} c\,\mathrm{Bin}(N, p_a)` (the cached :class:`WedgePatterns`),
      n uniforms and n noises: exactly the law of independent bits on every pair.
    - *Some node projected* (a bound below the longest list): the projections are drawn (a uniform
      D-subset of each over-long list, independent across nodes), then every lower wedge is
      streamed by blocks of centres with the bit of its closing pair drawn once per pair
      (:func:`streamed_wedge_bits`), and :math:`t_v, s_v` summed per centre: the law of the
      deployed protocol's local counts (each bit shared by the wedges closing its pair).

    Memory: the groups (at most twice the largest :math:`c^+`) and one block of wedges; time per
    trial :math:`O(G + n)` unprojected, O(wedges) projected.
    """
    g = _check_graph(graph)
    eps1, eps2 = check_epsilon(eps1), check_epsilon(eps2)
    private_bound = eps0 is not None
    eps0 = check_epsilon(eps0) if private_bound else 0.0
    n_trials = check_nonnegative_int(n_trials, "n_trials", minimum=1)
    if noise not in ("dlap", "laplace"):
        raise ValueError(f"noise must be 'dlap' or 'laplace', got {noise!r}")
    gen = check_rng(rng)
    pt = wedge_patterns(g) if patterns is None else patterns
    p, q = keep_probability(eps1), flip_probability(eps1)
    n = g.n_nodes
    dl = pt.lower_degrees
    degrees = g.degrees if noise == "laplace" else dl
    true_bound = max(int(degrees.max()) if n else 1, 1)
    public = _public_bound(bound, private_bound, true_bound)
    group_p = np.where(pt.group_edge, p, q)
    offset = -q * (dl * (dl - 1) // 2).astype(np.float64)
    out = np.empty(n_trials)
    for t in range(n_trials):
        if private_bound:
            if noise == "laplace":
                cur = max(int(np.floor((degrees + gen.laplace(0.0, 1.0 / eps0, size=n)).max())), 1)
            else:
                cur = max(int((degrees + DiscreteLaplace(epsilon=eps0).sample(n, rng=gen)).max()), 1)
        else:
            cur = public
        if cur >= true_bound:
            parts = [float(np.dot(pt.group_c, gen.binomial(pt.group_size, group_p)))]
            w_off = offset
        else:
            keep = _projection_keep(g, pt, cur, lower_only=noise == "dlap", gen=gen)
            proj = np.flatnonzero(degrees > cur)
            few = _few_projected(g, pt, proj, keep, p, q, group_p, gen)
            if few is not None:
                t_sum, s_proj = few
                parts = [t_sum]
                w_off = offset.copy()
                w_off[proj] = -q * s_proj
                proj = None
        if cur < true_bound and proj is not None:  # many projected wedges: stream them all
            t_v = np.zeros(n)
            s_v = np.zeros(n)
            for v0, v1, node, pj, pk, bit in streamed_wedge_bits(g, pt, p, q, gen):
                alive = keep[pj] & keep[pk]
                t_v[v0:v1] = np.bincount(node - v0, weights=alive & bit, minlength=v1 - v0)
                s_v[v0:v1] = np.bincount(node - v0, weights=alive, minlength=v1 - v0)
            parts = [float(t_v.sum())]
            w_off = -q * s_v  # floor(t_v - q s_v + U) = t_v + floor(U - q s_v)
        if noise == "laplace":
            parts += [float(w_off.sum()), *gen.laplace(0.0, cur / eps2, size=n).tolist()]
        else:
            mech = DiscreteLaplace(epsilon=eps2, sensitivity=_dlap_sensitivity(cur))
            parts += [float(np.floor(gen.random(n) + w_off).sum()), float(mech.sample(n, rng=gen).sum())]
        out[t] = math.fsum(parts) / (p - q)
    return out


def two_round_moments_scaled(
    graph: Graph, eps1: float, eps2: float, *, noise: str = "dlap", bound: int | None = None,
    patterns: WedgePatterns | None = None,
) -> tuple[float, float]:
    """:func:`two_round_moments` with a public bound at or above every list (nothing projected),
    from the :class:`WedgePatterns` (:func:`two_round_variance`'s formula); ValueError else."""
    g = _check_graph(graph)
    eps1, eps2 = check_epsilon(eps1), check_epsilon(eps2)
    pt = wedge_patterns(g) if patterns is None else patterns
    p, q = keep_probability(eps1), flip_probability(eps1)
    lengths = g.degrees if noise == "laplace" else pt.lower_degrees
    true_bound = max(int(lengths.max()) if lengths.size else 1, 1)
    d = _public_bound(bound, False, true_bound)
    if d < true_bound:
        raise ValueError(f"projected lists: bound {d} < the longest list {true_bound}")
    if noise == "laplace":
        var_noise, rnd = 2.0 * (d / eps2) ** 2, 0.0
    else:
        var_noise = DiscreteLaplace(epsilon=eps2, sensitivity=_dlap_sensitivity(d)).variance
        dl = pt.lower_degrees.astype(np.float64)
        x = -q * (dl * (dl - 1) / 2)
        f = x - np.floor(x)
        rnd = float(math.fsum(f * (1 - f)))
    var = p * q * pt.c_square_sum + rnd + g.n_nodes * var_noise
    return pt.triangles, var / (p - q) ** 2
