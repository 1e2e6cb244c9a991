r"""Warner's randomized response on the adjacency bits of a graph (edge-LDP, one round).

Node ``u`` holds the bits :math:`a_{uv}` towards its *lower-indexed* nodes ``v < u``; it
reports each of them through randomized response (RR) at :math:`\varepsilon`: the true bit
with probability :math:`p = e^\varepsilon / (1 + e^\varepsilon)`, the flipped bit with
probability :math:`q = 1 - p = 1 / (1 + e^\varepsilon)`. Every pair is reported once, by its
higher-indexed node. The curator assembles the reports into the *noisy graph*.

:func:`randomized_response_graph` simulates that round for a whole graph at once without any
loop over the :math:`\binom n2` pairs: the true edges are thinned binomially, and the flipped
non-edges are drawn as a count and then as positions (see its Notes).
:func:`noisy_lower_pairs` is the same draw for arbitrary report probabilities (one per class
of pair), returning the reported pairs instead of a matrix.

Privacy
-------
A node's release is a vector of independent RR bits, one per lower pair. Neighbouring graphs
differ in one edge :math:`\{u, v\}`, ``u > v``, which changes exactly one bit of one node's
release (node ``u``'s). For that bit and any reported value ``b``,
:math:`P[b \mid a] / P[b \mid 1 - a] \in \{p/q, q/p\} = \{e^{\pm\varepsilon}\}`, and the other
bits have the same law under both graphs, so each node's release is
:math:`\varepsilon`-edge-LDP.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import DTypeLike, NDArray

from .._validation import check_epsilon, check_nonnegative_int, check_rng
from ..graph.core import Graph

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = [
    "DEFAULT_MAX_BYTES",
    "TWO_ROUND_PROTOCOLS",
    "keep_probability",
    "flip_probability",
    "noisy_graph_bits",
    "expected_noisy_edges",
    "noisy_graph_bytes",
    "lower_edge_pairs",
    "upper_pairs",
    "pair_index",
    "pair_from_index",
    "pack_pairs",
    "unpack_pairs",
    "noisy_lower_pairs",
    "randomized_response_graph",
    "pairs_to_csr",
]

#: Default memory limit of :func:`randomized_response_graph` (bytes): 2 GiB.
DEFAULT_MAX_BYTES = 2 << 30

#: Protocols that never assemble the whole noisy graph (named in the out-of-memory message).
TWO_ROUND_PROTOCOLS = ("two-round-triangles-dlap", "two-round-triangles-laplace", "arr-triangles")

# Extra draws requested per missing flipped pair in the rejection loop (duplicates, true edges).
_DRAW_MARGIN = 1.05
# Deduplicate with a one-byte-per-pair bitmap when the pairs number at most this many, or at
# most _BITMAP_FACTOR times the reports (else by sorting the draws).
_BITMAP_MIN_PAIRS = 1 << 27
_BITMAP_FACTOR = 16


def keep_probability(epsilon: float) -> float:
    r"""Probability :math:`p = e^\varepsilon / (1 + e^\varepsilon)` that RR reports the true bit.

    Examples
    --------
    >>> round(keep_probability(1.0), 6)
    0.731059
    """
    eps = check_epsilon(epsilon)
    return 1.0 / (1.0 + math.exp(-eps))


def flip_probability(epsilon: float) -> float:
    r"""Probability :math:`q = 1 / (1 + e^\varepsilon)` that RR reports the flipped bit.

    Computed as :math:`e^{-\varepsilon}/(1 + e^{-\varepsilon})` (not as ``1 - p``): full relative
    precision at large eps, no overflow.

    Examples
    --------
    >>> round(flip_probability(1.0), 6)
    0.268941
    """
    t = math.exp(-check_epsilon(epsilon))
    return t / (1.0 + t)


def expected_noisy_edges(n_nodes: int, n_edges: int, epsilon: float) -> float:
    r"""Expected number of edges of the noisy graph: :math:`p\,m + q\,(\binom n2 - m)`.

    Examples
    --------
    >>> expected_noisy_edges(4, 2, 1.0) == 2 * keep_probability(1.0) + 4 * flip_probability(1.0)
    True
    """
    n = check_nonnegative_int(n_nodes, "n_nodes")
    m = check_nonnegative_int(n_edges, "n_edges")
    pairs = n * (n - 1) // 2
    if m > pairs:
        raise ValueError(f"n_edges must be <= n_nodes (n_nodes - 1) / 2 = {pairs}, got {m}")
    return keep_probability(epsilon) * m + flip_probability(epsilon) * (pairs - m)


def noisy_graph_bytes(
    n_nodes: int,
    n_edges: int,
    epsilon: float,
    *,
    symmetric: bool = True,
    dtype: DTypeLike = np.float64,
) -> int:
    """Estimated peak memory (bytes) of :func:`randomized_response_graph` for these sizes.

    The CSR result (one value and one index per stored entry, twice the noisy edges when
    ``symmetric``) plus the int64 pair indices of the draw (about three per noisy edge).

    Examples
    --------
    >>> noisy_graph_bytes(4039, 88234, 1.0) < 2**30
    True
    """
    e = expected_noisy_edges(n_nodes, n_edges, epsilon)
    n = int(n_nodes)
    index_bytes = 4 if 2 * e < 2**31 - 1 and n < 2**31 - 1 else 8
    per_entry = np.dtype(dtype).itemsize + index_bytes
    stored = (2.0 if symmetric else 1.0) * e
    return int(stored * per_entry + 3 * 8 * e + 8 * (n + 1))


@functools.lru_cache(maxsize=256)
def upper_pairs(n: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """``np.triu_indices(n, k=1)``, computed once per ``n`` (read-only): the pairs ``a < b`` of a
    node's ``n`` neighbours, which a per-node release enumerates node after node.

    Examples
    --------
    >>> [a.tolist() for a in upper_pairs(3)]
    [[0, 0, 1], [1, 2, 2]]
    """
    a, b = np.triu_indices(int(n), k=1)
    a.setflags(write=False)
    b.setflags(write=False)
    return a, b


def pair_index(rows: NDArray[np.int64], cols: NDArray[np.int64]) -> NDArray[np.int64]:
    r"""Index of the lower pair ``(u, v)``, ``u > v``, in row-major order: :math:`u(u-1)/2 + v`.

    Sorting pair indices sorts the pairs by ``(u, v)``, i.e. into lower-triangle CSR order.

    Examples
    --------
    >>> pair_index(np.array([1, 2, 2]), np.array([0, 0, 1])).tolist()
    [0, 1, 2]
    """
    u = np.asarray(rows, dtype=np.int64)
    return u * (u - 1) // 2 + np.asarray(cols, dtype=np.int64)


def pair_from_index(index: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Inverse of :func:`pair_index`: the rows ``u`` and columns ``v < u`` of pair indices.

    Examples
    --------
    >>> [a.tolist() for a in pair_from_index(np.arange(6))]
    [[1, 2, 2, 3, 3, 3], [0, 0, 1, 0, 1, 2]]
    """
    i = np.asarray(index, dtype=np.int64)
    u = ((1.0 + np.sqrt(1.0 + 8.0 * i.astype(np.float64))) / 2.0).astype(np.int64)
    # correct the float estimate by at most one step either way
    u -= (u * (u - 1) // 2 > i).astype(np.int64)
    u += ((u + 1) * u // 2 <= i).astype(np.int64)
    return u, i - u * (u - 1) // 2


def noisy_graph_bits(n_nodes: int, n_noisy_edges: float) -> float:
    r"""Bits a node downloads for a broadcast noisy graph, as the deployed file carries it: the shorter of
    an edge list (two ids of :math:`\lceil\log_2 n\rceil` bits per edge) and the packed lower-triangle
    bits, :math:`\binom n2` (:func:`pack_pairs`; the broadcast writer picks the shorter body).

    >>> noisy_graph_bits(4039, 3.1e6) == 4039 * 4038 / 2   # Facebook at eps 1: packed
    True
    >>> noisy_graph_bits(10**6, 1e5)                       # sparse: the edge list
    4000000.0
    """
    id_bits = math.ceil(math.log2(max(int(n_nodes), 2)))
    return float(min(float(n_noisy_edges) * 2 * id_bits, n_nodes * (n_nodes - 1) / 2))


#: pairs (or bytes) handled at once by :func:`pack_pairs` and :func:`unpack_pairs`
_BLOCK = 1 << 22


def pack_pairs(index: Any, n_pairs: int) -> NDArray[np.uint8]:
    r"""The pairs ``index`` (pair indices, :func:`pair_index`) as packed bits: bit i of the result
    (most significant first in each byte, :func:`numpy.packbits`) is 1 iff pair i is in ``index``.

    With ``n_pairs`` :math:`=\binom n2` this is the lower triangle of the adjacency matrix row by
    row (pair (j, k), j < k, at bit :math:`\binom k2 + j`) in :math:`\lceil\binom n2/8\rceil`
    bytes, the padding bits of the last byte 0.

    >>> pack_pairs([0, 2, 8], 9).tolist()
    [160, 128]
    """
    idx = np.asarray(index, dtype=np.int64)
    n_pairs = int(n_pairs)
    if idx.size and (idx.min() < 0 or idx.max() >= n_pairs):
        raise ValueError(f"pair indices must lie in [0, {n_pairs}), got {int(idx.min())}..{int(idx.max())}")
    out = np.zeros((n_pairs + 7) // 8, dtype=np.uint8)  # set bit by bit, in blocks: no byte per pair
    for lo in range(0, idx.size, _BLOCK):
        part = idx[lo:lo + _BLOCK]
        np.bitwise_or.at(out, part >> 3, (np.uint8(128) >> (part & 7).astype(np.uint8)))
    return out


def unpack_pairs(body: Any, n_pairs: int) -> NDArray[np.int64]:
    """The sorted pair indices below ``n_pairs`` whose bit is 1 in ``body`` (:func:`pack_pairs`'s
    inverse; the bits from ``n_pairs`` on are ignored).

    >>> unpack_pairs(pack_pairs([0, 2, 8], 9), 9).tolist()
    [0, 2, 8]
    """
    body = np.asarray(body, dtype=np.uint8).ravel()
    n_pairs = int(n_pairs)
    starts = range(0, min(body.size * 8, n_pairs), 8 * _BLOCK)

    def bits(lo: int) -> NDArray[np.uint8]:  # in blocks: no byte per pair
        return np.unpackbits(body[lo // 8:lo // 8 + _BLOCK], count=min(8 * _BLOCK, n_pairs - lo))

    # counted first, then written into the result: no second copy of the pairs
    out = np.empty(sum(int(np.count_nonzero(bits(lo))) for lo in starts), dtype=np.int64)
    at = 0
    for lo in starts:
        part = np.flatnonzero(bits(lo))
        out[at:at + part.size] = part
        out[at:at + part.size] += lo
        at += part.size
    return out


def lower_edge_pairs(graph: Any) -> tuple[int, NDArray[np.int64], NDArray[np.int64]]:
    """``(n, rows, cols)`` of the true edges as lower pairs ``rows > cols``, in CSR order.

    ``graph`` is an ldpgraph :class:`~ldpgraph.graph.Graph` or a square scipy sparse
    adjacency (symmetric; entries on and above the diagonal are ignored).

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> n, r, c = lower_edge_pairs(from_edge_array([[0, 1], [1, 2]]))
    >>> n, r.tolist(), c.tolist()
    (3, [1, 2], [0, 1])
    """
    import scipy.sparse as sp  # deferred: slow to import

    if isinstance(graph, Graph):
        n = graph.n_nodes
        rows = np.repeat(np.arange(n, dtype=np.int64), graph.degrees)
        cols = graph.indices
        low = cols < rows
        return n, rows[low], cols[low].astype(np.int64, copy=False)
    if sp.issparse(graph):
        if graph.ndim != 2 or graph.shape[0] != graph.shape[1]:
            raise ValueError(f"graph must be a square adjacency matrix, got shape {graph.shape}")
        low = sp.tril(graph, k=-1, format="csr")
        low.eliminate_zeros()
        low.sort_indices()
        n = int(graph.shape[0])
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(low.indptr))
        return n, rows, low.indices.astype(np.int64)
    raise TypeError(
        f"graph must be an ldpgraph Graph or a scipy sparse adjacency matrix, got {type(graph).__name__}"
    )


def noisy_lower_pairs(
    graph: Any,
    p_edge: float,
    p_non_edge: float,
    *,
    rng: Any = None,
) -> tuple[int, NDArray[np.int64]]:
    r"""Draw which lower pairs are reported as edges; return ``(n, sorted pair indices)``.

    Every lower pair ``(u, v)``, ``u > v``, is reported independently, with probability
    ``p_edge`` if it is an edge of ``graph`` and ``p_non_edge`` otherwise. RR at eps is
    ``p_edge = p``, ``p_non_edge = q``; a sampled variant (each report kept with
    probability mu) is ``mu p``, ``mu q``.

    Parameters
    ----------
    graph : Graph or scipy sparse matrix
        See :func:`lower_edge_pairs`.
    p_edge, p_non_edge : float
        Report probabilities, in [0, 1].
    rng : Generator, seed or None

    Returns
    -------
    n : int
        Number of nodes.
    index : ndarray of int64
        Sorted :func:`pair_index` of the reported pairs (:func:`pair_from_index` maps back).

    Notes
    -----
    With :math:`m` true edges among the :math:`N = \binom n2` pairs:

    1. true edges: one uniform per edge, kept where it is below ``p_edge`` (binomial thinning);
    2. non-edges: the number reported is :math:`K \sim \mathrm{Bin}(N - m, p_0)`, and given
       :math:`K` the reported set is a uniform :math:`K`-subset of the non-edges. It is drawn
       by sampling pair indices uniformly from :math:`[0, N)`, rejecting true edges, and
       keeping the distinct values; rounds repeat until at least :math:`K` distinct non-edges
       are held, and then a uniform :math:`K`-subset of them is kept. The draws are i.i.d.
       uniform on the non-edges after rejection, so given its size the set of distinct values
       seen is a uniform subset (exchangeability), and a uniform subset of it is a uniform
       :math:`K`-subset of the non-edges.

    Together this is exactly the law of independent Bernoulli reports, at a cost of
    :math:`O((m + K)\log(m + K))` instead of :math:`O(N)`. Since :math:`p_0 \le 1/2` for RR,
    at most :math:`-N\ln(1 - p_0) \le 0.7 N` draws are needed in expectation.

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2]])
    >>> noisy_lower_pairs(g, 1.0, 0.0, rng=0)[1].tolist()   # no noise: the true lower pairs
    [0, 2]
    """
    p1 = _check_probability(p_edge, "p_edge")
    p0 = _check_probability(p_non_edge, "p_non_edge")
    gen = check_rng(rng)
    n, rows, cols = lower_edge_pairs(graph)
    edges = pair_index(rows, cols)  # sorted: CSR order is pair-index order
    n_pairs = n * (n - 1) // 2
    kept = edges[gen.random(edges.size) < p1] if p1 < 1.0 else edges
    n_free = n_pairs - edges.size
    k = int(gen.binomial(n_free, p0)) if n_free > 0 and p0 > 0 else 0
    if k == 0:
        return n, kept
    if n_pairs <= max(_BITMAP_MIN_PAIRS, _BITMAP_FACTOR * (kept.size + k)):
        return n, _uniform_non_edges_bitmap(edges, kept, n_pairs, k, gen)
    flipped = _uniform_non_edges_sorted(edges, n_pairs, k, gen)
    out = np.concatenate([kept, flipped])
    out.sort()
    return n, out


def randomized_response_graph(
    graph: Any,
    epsilon: float,
    *,
    rng: Any = None,
    symmetric: bool = True,
    dtype: DTypeLike = np.float64,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
) -> sp.csr_array:
    r"""The noisy graph of one round of randomized response at ``epsilon`` (Warner 1965).

    Each pair ``u > v`` is reported once, by ``u``: its true adjacency bit with probability
    :math:`p = e^\varepsilon/(1+e^\varepsilon)`, else the flipped bit.

    Parameters
    ----------
    graph : Graph or scipy sparse matrix
        The true graph (see :func:`lower_edge_pairs`).
    epsilon : float
        Privacy parameter of every reported bit. Must be in (0, inf).
    rng : Generator, seed or None
    symmetric : bool, default True
        True: the symmetric adjacency of the noisy graph (both ``(u, v)`` and ``(v, u)``
        stored). False: its strictly lower triangle only (entries ``(u, v)`` with ``u > v``,
        i.e. exactly what the nodes report).
    dtype : dtype, default float64
        Value type of the stored ones (float64 keeps sparse and dense products exact up to
        :math:`2^{53}`; small integer types overflow in products).
    max_bytes : int or None, default 2 GiB
        Refuse (``MemoryError``) when :func:`noisy_graph_bytes` exceeds this; None: no limit.

    Returns
    -------
    scipy.sparse.csr_array, shape (n, n)
        Sorted indices, no explicit zeros, no diagonal.

    Raises
    ------
    MemoryError
        If the noisy graph would not fit in ``max_bytes`` (at small eps it has about
        :math:`q\binom n2` edges: dense however sparse the input). The message names the
        two-round protocols, which never assemble it.

    Notes
    -----
    The draw is :func:`noisy_lower_pairs` with ``p_edge = p`` and ``p_non_edge = q``; see
    there for why it has exactly the law of independent RR bits. Privacy: see the module
    docstring (each node's release is eps-edge-LDP).

    Examples
    --------
    >>> from ldpgraph.graph import from_edge_array
    >>> g = from_edge_array([[0, 1], [1, 2], [0, 2]])
    >>> a = randomized_response_graph(g, 50.0, rng=0)   # eps = 50: no flip in practice
    >>> a.toarray().astype(int).tolist()
    [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    >>> randomized_response_graph(g, 50.0, rng=0, symmetric=False).nnz
    3
    """
    eps = check_epsilon(epsilon)
    n, rows, cols = lower_edge_pairs(graph)
    if max_bytes is not None:
        limit = check_nonnegative_int(max_bytes, "max_bytes")
        need = noisy_graph_bytes(n, rows.size, eps, symmetric=symmetric, dtype=dtype)
        if need > limit:
            raise MemoryError(
                f"the randomized-response graph of {n} nodes at epsilon={eps:g} would have about "
                f"{expected_noisy_edges(n, rows.size, eps):.3g} edges and need about "
                f"{need / 2**30:.2f} GiB (> max_bytes = {limit / 2**30:.2f} GiB); use a two-round "
                f"protocol ({', '.join(repr(x) for x in TWO_ROUND_PROTOCOLS)}), which never "
                "assembles the noisy graph, or a larger epsilon, or raise max_bytes"
            )
    _, index = noisy_lower_pairs(graph, keep_probability(eps), flip_probability(eps), rng=rng)
    return pairs_to_csr(n, index, symmetric=symmetric, dtype=dtype)


def pairs_to_csr(
    n: int, index: NDArray[np.int64], *, symmetric: bool = True, dtype: DTypeLike = np.float64
) -> sp.csr_array:
    """CSR adjacency of the sorted lower pairs ``index`` (see :func:`randomized_response_graph`)."""
    import scipy.sparse as sp  # deferred: slow to import

    u, v = pair_from_index(index)
    idx_dtype = np.int32 if max(n, 2 * index.size) < 2**31 - 1 else np.int64
    indptr = np.zeros(n + 1, dtype=idx_dtype)
    np.cumsum(np.bincount(u, minlength=n), out=indptr[1:])
    low = sp.csr_array((np.ones(index.size, dtype=dtype), v.astype(idx_dtype), indptr), shape=(n, n))
    low.has_sorted_indices = True
    if not symmetric:
        return low
    # row r of the symmetric matrix = its lower columns (< r, sorted) then its upper columns
    # (> r, sorted) = column r of the lower triangle, which the CSC form lists in order
    col = low.tocsc()
    col.sort_indices()
    e = index.size
    low_len = np.diff(low.indptr)
    up_len = np.diff(col.indptr)
    indptr = (low.indptr.astype(np.int64) + col.indptr.astype(np.int64)).astype(idx_dtype)
    indices = np.empty(2 * e, dtype=idx_dtype)
    start = indptr[:-1].astype(np.int64)
    shift_low = np.repeat(start - low.indptr[:-1], low_len)
    indices[np.arange(e, dtype=np.int64) + shift_low] = low.indices
    shift_up = np.repeat(start + low_len - col.indptr[:-1], up_len)
    indices[np.arange(e, dtype=np.int64) + shift_up] = col.indices
    out = sp.csr_array((np.ones(2 * e, dtype=dtype), indices, indptr), shape=(n, n))
    out.has_sorted_indices = True
    return out


# ---------------------------------------------------------------------------------------------


def _uniform_non_edges_sorted(
    edges: NDArray[np.int64], n_pairs: int, k: int, gen: np.random.Generator
) -> NDArray[np.int64]:
    """A uniform k-subset of ``[0, n_pairs)`` minus the sorted ``edges``; dedup by sorting."""
    n_free = n_pairs - edges.size
    held = np.empty(0, dtype=np.int64)
    while held.size < k:
        draw = _draw_non_edges(edges, n_pairs, k - held.size, (n_free - held.size) / n_pairs, gen)
        both = np.concatenate([held, draw])
        both.sort()
        held = both[np.r_[True, both[1:] != both[:-1]]] if both.size else both
    return np.sort(_drop_uniform(held, held.size - k, gen))


def _uniform_non_edges_bitmap(
    edges: NDArray[np.int64],
    kept: NDArray[np.int64],
    n_pairs: int,
    k: int,
    gen: np.random.Generator,
) -> NDArray[np.int64]:
    """Sorted union of ``kept`` and a uniform k-subset of the non-edges; dedup by a bitmap.

    One byte per pair: used where the pairs are not many more than the reports.
    """
    seen = np.zeros(n_pairs, dtype=np.bool_)
    n_free = n_pairs - edges.size
    held = 0
    while held < k:
        # draws landing on a true edge are rejected by clearing the edges afterwards
        size = int((k - held) / ((n_free - held) / n_pairs) * _DRAW_MARGIN) + 16
        seen[gen.integers(0, n_pairs, size=size, dtype=np.int64)] = True
        seen[edges] = False
        held = int(np.count_nonzero(seen))
    flipped = np.flatnonzero(seen)
    excess = flipped.size - k
    if excess:
        seen[flipped[gen.choice(flipped.size, size=excess, replace=False)]] = False
    seen[kept] = True
    return np.flatnonzero(seen).astype(np.int64, copy=False)


def _draw_non_edges(
    edges: NDArray[np.int64], n_pairs: int, missing: int, rate: float, gen: np.random.Generator
) -> NDArray[np.int64]:
    """Uniform draws on ``[0, n_pairs)`` with the true edges rejected (enough for ``missing``)."""
    size = int(missing / rate * _DRAW_MARGIN) + 16
    draw = gen.integers(0, n_pairs, size=size, dtype=np.int64)
    if edges.size:
        pos = np.searchsorted(edges, draw)
        pos[pos == edges.size] = 0
        draw = draw[edges[pos] != draw]
    return draw


def _drop_uniform(held: NDArray[np.int64], excess: int, gen: np.random.Generator) -> NDArray[np.int64]:
    """``held`` without a uniform random subset of ``excess`` of its entries."""
    if excess <= 0:
        return held
    keep = np.ones(held.size, dtype=np.bool_)
    keep[gen.choice(held.size, size=excess, replace=False)] = False
    return held[keep]


def _check_probability(x: Any, name: str) -> float:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__} {x!r}")
    v = float(x)
    if not (0.0 <= v <= 1.0):
        raise ValueError(f"{name} must be in [0, 1], got {x!r}")
    return v
