r"""Exact (non-private) graph statistics: the ground truth that private estimates are scored on.

Degree statistics accept a :class:`~ldpgraph.graph.Graph` or an array of degrees. Sums of
binomials and powers of degrees are returned as exact Python integers: they overflow int64
quickly (:math:`\binom{10^7}{10} \approx 2.7 \cdot 10^{63}`) and float64 would round them.
They are computed per *distinct* degree value — a graph with :math:`m` edges has at most
about :math:`2\sqrt{m}` distinct degrees — so the exact big-integer arithmetic costs
:math:`O(\sqrt{m})` Python operations after one :math:`O(n)` counting pass.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ldpgraph._validation import check_integer_reports, check_nonnegative_int
from ldpgraph.graph.core import Graph, LoadReport
from ldpgraph.graph.degrees import Degrees
from ldpgraph.graph.load import graph_kind, load_graph

__all__ = [
    "degree_histogram",
    "max_degree",
    "kstar_counts",
    "degree_power_sum",
    "degree_moments",
    "degree_variance",
    "triangle_count",
    "local_triangle_counts",
    "two_star_count",
    "transitivity",
    "triple_class_counts",
    "adjacency_triangle_count",
]

GraphOrDegrees = Graph | ArrayLike

#: graph objects the statistics convert with load_graph (not paths: a statistic does not read files)
_OBJECT_KINDS = ("networkx", "igraph", "scipy.sparse", "DataFrame")

# Work (sum over oriented edges u -> v of outdeg(v)) per block of rows in the sparse product.
_TRIANGLE_BLOCK_WORK = 1 << 23


def degree_histogram(graph_or_degrees: GraphOrDegrees) -> NDArray[np.int64]:
    """Number of nodes of each degree: ``h[d] = #{v : d_v = d}`` for ``d = 0..max``.

    Examples
    --------
    >>> degree_histogram([0, 2, 2, 3]).tolist()
    [1, 0, 2, 1]
    """
    deg = _degrees(graph_or_degrees)
    return np.bincount(deg).astype(np.int64, copy=False)


def max_degree(graph_or_degrees: GraphOrDegrees) -> int:
    """Largest degree, as a Python int; ``ValueError`` for a graph without nodes.

    Examples
    --------
    >>> max_degree([3, 1, 4])
    4
    """
    deg = _degrees(graph_or_degrees)
    if deg.size == 0:
        raise ValueError("max_degree needs at least one node, got an empty graph")
    return int(deg.max())


def kstar_counts(graph_or_degrees: GraphOrDegrees, k: int) -> int:
    r"""Exact number of k-stars, :math:`S_k = \sum_v \binom{d_v}{k}`, as a Python int.

    A k-star is a node with k of its neighbours (unordered); ``S_1 = 2|E|``,
    ``S_2`` is the number of paths of length 2, ``S_0 = n``.

    Parameters
    ----------
    graph_or_degrees : Graph or array_like of int
        A graph, or its degrees (non-negative integers).
    k : int
        Star size, ``k >= 0``; any size works (``C(d, k) = 0`` for ``k > d``).

    Returns
    -------
    int
        Exact, whatever its size (no int64 overflow, no float rounding).

    Notes
    -----
    .. math:: S_k = \sum_v \binom{d_v}{k} = \sum_{d} h_d \binom{d}{k},

    with :math:`h_d` the number of nodes of degree :math:`d`. The second form runs over the
    distinct degrees only (found with ``np.bincount`` or ``np.unique``) and uses
    ``math.comb`` on Python integers, so it is exact and fast even for degrees of
    :math:`10^7` and :math:`k = 10`.

    Examples
    --------
    >>> kstar_counts([3, 1, 1, 1], 2)
    3
    >>> kstar_counts([10**7], 10) == math.comb(10**7, 10)
    True
    """
    deg = _degrees(graph_or_degrees)
    k = check_nonnegative_int(k, "k")
    values, counts = _distinct(deg)
    return sum(math.comb(d, k) * c for d, c in zip(values, counts, strict=True))


def degree_power_sum(graph_or_degrees: GraphOrDegrees, order: int) -> int:
    r"""Exact :math:`P_j = \sum_v d_v^{\,j}` as a Python int (``order`` = j >= 0).

    Examples
    --------
    >>> degree_power_sum([1, 2, 3], 2)
    14
    """
    deg = _degrees(graph_or_degrees)
    j = check_nonnegative_int(order, "order")
    values, counts = _distinct(deg)
    return sum(d**j * c for d, c in zip(values, counts, strict=True))


def degree_moments(
    graph_or_degrees: GraphOrDegrees,
    orders: int | Sequence[int] = (1, 2, 3, 4),
    *,
    central: bool = False,
) -> float | NDArray[np.float64]:
    r"""Raw or central moments of the degree distribution (population form, divided by n).

    Parameters
    ----------
    graph_or_degrees : Graph or array_like of int
    orders : int or sequence of int
        Moment orders ``j >= 0``.
    central : bool
        If true, moments about the mean degree.

    Returns
    -------
    float or ndarray of float64
        A float for a scalar ``orders``, else an array aligned with ``orders``.

    Notes
    -----
    Raw: :math:`\frac1n \sum_v d_v^{\,j}`. Central, with :math:`P_1 = \sum_v d_v`:

    .. math:: \frac1n \sum_v \Big(d_v - \frac{P_1}{n}\Big)^j
              = \frac{\sum_v (n d_v - P_1)^j}{n^{j+1}},

    a ratio of exact integers, so each returned float is the correctly rounded value.

    Examples
    --------
    >>> degree_moments([1, 2, 3], (1, 2)).tolist()
    [2.0, 4.666666666666667]
    >>> degree_moments([1, 2, 3], 2, central=True)
    0.6666666666666666
    """
    deg = _degrees(graph_or_degrees)
    scalar = not isinstance(orders, Sequence) and np.ndim(orders) == 0
    js = [check_nonnegative_int(j, "orders") for j in ([orders] if scalar else list(orders))]
    n = deg.size
    if n == 0:
        raise ValueError("degree moments need at least one node, got an empty graph")
    values, counts = _distinct(deg)
    p1 = sum(d * c for d, c in zip(values, counts, strict=True))
    out = []
    for j in js:
        if central:
            num = sum((n * d - p1) ** j * c for d, c in zip(values, counts, strict=True))
            out.append(num / n ** (j + 1))
        else:
            out.append(sum(d**j * c for d, c in zip(values, counts, strict=True)) / n)
    return out[0] if scalar else np.array(out, dtype=np.float64)


def degree_variance(graph_or_degrees: GraphOrDegrees) -> float:
    r"""Population variance of the degrees, :math:`\frac1n\sum_v (d_v - \bar d)^2`.

    Examples
    --------
    >>> degree_variance([1, 2, 3])
    0.6666666666666666
    """
    out = degree_moments(graph_or_degrees, 2, central=True)
    assert isinstance(out, float)
    return out


def triangle_count(graph: Graph, *, method: Literal["sparse", "igraph"] = "sparse") -> int:
    r"""Exact number of triangles of the graph, as a Python int.

    Parameters
    ----------
    graph : Graph
    method : {"sparse", "igraph"}
        ``"sparse"`` (default): oriented sparse product, integer arithmetic, memory bounded
        by processing rows in blocks. ``"igraph"``: ``len(igraph.Graph.list_triangles())``
        (lists every triangle, so memory grows with the count).

    Notes
    -----
    Orient every edge from the endpoint of lower (degree, index) rank to the higher one
    (matrix :math:`L`). Each triangle :math:`a < b < c` (in rank) is then counted exactly
    once, as the 2-path :math:`a \to b \to c` closed by :math:`a \to c`:

    .. math:: T = \sum_{a,c} (L L)_{ac} L_{ac}.

    With this orientation every out-degree is at most :math:`\sqrt{2m}`, so the work is
    :math:`O(m^{3/2})` (Chiba & Nishizeki 1985).

    Examples
    --------
    >>> from ldpgraph.graph.core import from_edge_array
    >>> triangle_count(from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]]))
    1
    """
    g = _graph(graph)
    if method == "igraph":
        return len(g.to_igraph().list_triangles())
    if method != "sparse":
        raise ValueError(f"method must be 'sparse' or 'igraph', got {method!r}")
    total = 0
    for low, _, _ in _triangle_blocks(g):
        total += int(low.sum())
    return total


def local_triangle_counts(graph: Graph) -> NDArray[np.int64]:
    r"""Number of triangles through each node, ``t[v]``; ``t.sum() == 3 * triangle_count``.

    Notes
    -----
    With the orientation of :func:`triangle_count`, node ``v`` is in each of its triangles
    as the lowest, the middle or the highest of the three:

    .. math:: t_v = \sum_c W_{vc} + \sum_a W_{av} + \sum_c M_{vc},\quad
              W = (L L) \circ L,\quad M = (L^\top L) \circ L.

    Examples
    --------
    >>> from ldpgraph.graph.core import from_edge_array
    >>> local_triangle_counts(from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]])).tolist()
    [1, 1, 1, 0]
    """
    g = _graph(graph)
    t = np.zeros(g.n_nodes, dtype=np.int64)
    lower = None
    for low, rows, oriented in _triangle_blocks(g):
        t[rows] += np.asarray(low.sum(axis=1)).ravel()  # v lowest
        t += np.asarray(low.sum(axis=0)).ravel()  # v highest
        if lower is None:
            lower = oriented.T.tocsr()
        mid = (lower[rows] @ oriented).multiply(oriented[rows])
        t[rows] += np.asarray(mid.sum(axis=1)).ravel()  # v middle
    return t


def two_star_count(graph_or_degrees: GraphOrDegrees) -> int:
    r"""Number of 2-stars (paths of length 2, "wedges"), :math:`S_2 = \sum_v \binom{d_v}{2}`.

    Examples
    --------
    >>> two_star_count([3, 1, 1, 1])
    3
    """
    return kstar_counts(graph_or_degrees, 2)


def transitivity(graph: Graph) -> float:
    r"""Global clustering coefficient :math:`3T / S_2` (0.0 for a graph without 2-stars).

    Notes
    -----
    The fraction of 2-paths that are closed: each triangle closes three of them. This is
    networkx's ``transitivity`` (which also returns 0 when there is no 2-path).

    Examples
    --------
    >>> from ldpgraph.graph.core import from_edge_array
    >>> transitivity(from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]]))
    0.6
    """
    g = _graph(graph)
    s2 = two_star_count(g)
    return 3 * triangle_count(g) / s2 if s2 else 0.0


def triple_class_counts(graph: Graph) -> tuple[int, int, int, int]:
    r"""Numbers of node triples with exactly 0, 1, 2 and 3 edges among their three pairs.

    Returns
    -------
    (n0, n1, n2, n3) : tuple of int
        Exact Python ints; they sum to :math:`\binom n3`.

    Notes
    -----
    With :math:`T` triangles, :math:`S_2` 2-stars and :math:`m` edges: :math:`n_3 = T`;
    a triple with two edges holds one 2-star and a triangle three, so
    :math:`n_2 = S_2 - 3T`; each edge lies in :math:`n - 2` triples, so
    :math:`\sum_k k\,n_k = m(n-2)` gives :math:`n_1 = m(n-2) - 2n_2 - 3n_3`; and
    :math:`n_0 = \binom n3 - n_1 - n_2 - n_3`.

    Examples
    --------
    >>> from ldpgraph.graph.core import from_edge_array
    >>> triple_class_counts(from_edge_array([[0, 1], [1, 2], [0, 2], [2, 3]]))
    (0, 1, 2, 1)
    """
    g = _graph(graph)
    n, m = g.n_nodes, g.n_edges
    n3 = triangle_count(g)
    n2 = two_star_count(g) - 3 * n3
    n1 = m * (n - 2) - 2 * n2 - 3 * n3 if n >= 2 else 0
    n0 = math.comb(n, 3) - n1 - n2 - n3
    return n0, n1, n2, n3


def adjacency_triangle_count(adjacency: Any) -> int:
    r"""Triangles of a symmetric 0/1 scipy sparse adjacency (no diagonal), by the sparse kernel.

    The same oriented, blocked product as :func:`triangle_count`, for matrices built inside
    the package (e.g. a randomized-response graph); the matrix is trusted to be symmetric,
    with sorted indices and no diagonal.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> adjacency_triangle_count(sp.csr_array(np.ones((4, 4)) - np.eye(4)))
    4
    """
    import scipy.sparse as sp  # deferred: slow to import

    if not sp.issparse(adjacency):
        raise TypeError(f"adjacency must be a scipy sparse matrix, got {type(adjacency).__name__}")
    a = sp.csr_array(adjacency)
    a.sort_indices()
    n = int(a.shape[0])
    report = LoadReport("adjacency", a.nnz // 2, 0, 0, 0, a.nnz // 2, n, False)
    g = Graph._trusted(
        a.indptr.astype(np.int64), a.indices.astype(np.int64), np.arange(n, dtype=np.int64), report
    )
    return triangle_count(g)


# ---------------------------------------------------------------------------------------------


def _triangle_blocks(g: Graph) -> Any:
    """Yield ``((L[rows] @ L) * L[rows], rows, L)`` over slices of rows of bounded work."""
    n = g.n_nodes
    deg = g.degrees
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((np.arange(n), deg))] = np.arange(n, dtype=np.int64)
    rows = np.repeat(np.arange(n, dtype=np.int64), deg)
    cols = g.indices
    forward = rank[rows] < rank[cols]
    import scipy.sparse as sp  # deferred: slow to import

    oriented = sp.csr_array(
        (np.ones(int(forward.sum()), dtype=np.int64), (rows[forward], cols[forward])),
        shape=(n, n),
    )
    out_deg = np.diff(oriented.indptr).astype(np.int64)
    work = np.cumsum(oriented @ out_deg)  # 2-paths starting at each row, cumulated
    start = 0
    while start < n:
        limit = (work[start - 1] if start else 0) + _TRIANGLE_BLOCK_WORK
        stop = max(int(np.searchsorted(work, limit, side="right")), start + 1)
        block = slice(start, min(stop, n))
        part = oriented[block]
        yield (part @ oriented).multiply(part), block, oriented
        start = stop


def _graph(graph: Any) -> Graph:
    """An ldpgraph Graph, or a graph object :func:`~ldpgraph.graph.load_graph` reads (networkx,
    igraph, scipy.sparse, DataFrame) converted by it."""
    if graph_kind(graph) in _OBJECT_KINDS:
        graph = load_graph(graph)
    if not isinstance(graph, Graph):
        raise TypeError(f"graph must be an ldpgraph Graph or a networkx, igraph, scipy.sparse or DataFrame "
                        f"graph, got {type(graph).__name__}")
    return graph


def _degrees(graph_or_degrees: Any) -> NDArray[np.int64]:
    if isinstance(graph_or_degrees, Graph) or graph_kind(graph_or_degrees) in _OBJECT_KINDS:
        return _graph(graph_or_degrees).degrees
    if isinstance(graph_or_degrees, Degrees):
        return graph_or_degrees.degrees
    deg = check_integer_reports(graph_or_degrees, "degrees").ravel()
    if deg.size and deg.min() < 0:
        i = int(np.argmin(deg))
        raise ValueError(f"degrees must be >= 0, got degrees[{i}] = {deg[i]}")
    return deg


def _distinct(deg: NDArray[np.int64]) -> tuple[list[int], list[int]]:
    """Distinct degree values and their multiplicities, as Python ints."""
    if deg.size == 0:
        return [], []
    top = int(deg.max())
    if top <= max(4 * deg.size, 1 << 20):
        hist = np.bincount(deg)
        values = np.flatnonzero(hist)
        return values.tolist(), hist[values].tolist()
    values, counts = np.unique(deg, return_counts=True)
    return values.tolist(), counts.tolist()
