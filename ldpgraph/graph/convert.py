"""Conversions from networkx, igraph and scipy.sparse objects into :class:`~ldpgraph.graph.Graph`.

networkx and igraph are imported lazily, inside the functions. No conversion loops over the
edges in Python: networkx adjacency dicts are read by ``np.fromiter`` (a C loop over the dict
keys), igraph's own edge vectors and sorted edge indices are copied as arrays (see
:func:`from_igraph`), and scipy.sparse arrays are used as CSR arrays.
"""

from __future__ import annotations

import ctypes
from itertools import chain
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ldpgraph.graph.core import (
    Graph,
    LoadReport,
    _build_graph,
    _drop_entries,
    _merge_rows,
    _repeats,
    _sorted_rows,
)

__all__ = ["from_networkx", "from_igraph", "from_scipy_sparse"]


def from_networkx(graph: Any) -> Graph:
    """Build a :class:`~ldpgraph.graph.Graph` from any networkx graph.

    Every node is kept, isolated ones included. Directed graphs are symmetrised (with a note in
    ``graph.report.notes`` giving the edges before and after) and multigraph parallel edges
    counted as duplicates; self-loops are dropped; all of it is counted in ``graph.report``.

    Parameters
    ----------
    graph : networkx.Graph, DiGraph, MultiGraph or MultiDiGraph

    Returns
    -------
    Graph
        Node ``i`` is the ``i``-th node label in sorted order (insertion order when the
        labels cannot be sorted); ``node_ids`` holds the labels (int64 when all are
        integers, else an object array).

    Examples
    --------
    >>> import networkx as nx
    >>> g = from_networkx(nx.DiGraph([(2, 1), (1, 2), (1, 3)]))
    >>> g.n_nodes, g.n_edges, g.report.reverse_duplicates_dropped, g.report.source_directed
    (3, 2, 1, True)
    """
    import networkx as nx

    if not isinstance(graph, nx.Graph):
        raise TypeError(f"graph must be a networkx graph, got {type(graph).__name__}")
    source = f"networkx.{type(graph).__name__}"
    labels = list(graph.nodes)
    n = len(labels)
    node_ids = _label_array(labels)
    # position of each label in sorted order (insertion order when labels are incomparable)
    if node_ids.dtype == np.int64:
        order = np.argsort(node_ids, kind="stable")
        node_ids = node_ids[order]
        identity = bool((np.diff(node_ids) > 0).all()) and _is_range(node_ids)
    else:
        try:
            order = np.array(sorted(range(n), key=labels.__getitem__), dtype=np.int64)
        except TypeError:
            order = np.arange(n, dtype=np.int64)
        node_ids = node_ids[order]
        identity = False
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n, dtype=np.int64)
    adj = graph._adj  # the dict of dicts networkx stores (documented for subclasses)

    def targets(it: Any) -> NDArray[np.int64]:
        # np.array of a list is about twice as fast as np.fromiter over the same iterator
        if identity:  # labels are exactly 0..n-1: the keys are the indices
            return np.array(list(it), dtype=np.int64)
        index = dict(zip(labels, rank.tolist(), strict=True))
        return np.array(list(map(index.__getitem__, it)), dtype=np.int64)

    if not graph.is_directed() and not graph.is_multigraph():
        # adjacency lists are symmetric and free of duplicates: CSR after one sort per row
        deg = np.fromiter(map(len, adj.values()), dtype=np.int64, count=n)
        cols = targets(chain.from_iterable(adj.values()))
        rows = np.repeat(rank, deg)
        return _from_symmetric_entries(rows, cols, n, node_ids, source=source)
    if graph.is_multigraph():
        # adj[u][v] is a dict of parallel edges keyed by edge key; one entry per parallel edge
        per = (len(keys) for nbrs in adj.values() for keys in nbrs.values())
        mult = np.fromiter(per, dtype=np.int64)
        deg = np.fromiter(map(len, adj.values()), dtype=np.int64, count=n)
        cols = np.repeat(targets(chain.from_iterable(adj.values())), mult)
        rows = np.repeat(np.repeat(rank, deg), mult)
    else:
        deg = np.fromiter(map(len, adj.values()), dtype=np.int64, count=n)
        cols = targets(chain.from_iterable(adj.values()))
        rows = np.repeat(rank, deg)
    if not graph.is_directed():  # each edge is listed at both ends, a loop once
        once = rows <= cols
        rows, cols = rows[once], cols[once]
    return _build_graph(
        rows,
        cols,
        n,
        node_ids,
        source=source,
        relabelled=not _is_range(node_ids),
        source_directed=bool(graph.is_directed()),
    )


def from_igraph(graph: Any) -> Graph:
    """Build a :class:`~ldpgraph.graph.Graph` from an igraph graph.

    Vertex ``i`` of the igraph graph becomes node ``i``; every vertex is kept, isolated
    ones included. Directed graphs are symmetrised (with a note giving the edges before and
    after), multi-edges counted as duplicates, self-loops dropped (see ``graph.report``).

    Parameters
    ----------
    graph : igraph.Graph

    Returns
    -------
    Graph
        ``node_ids`` holds the vertex attribute ``"name"`` when there is one (int64 when all
        names are integers, else an object array), else ``0..n-1``.

    Notes
    -----
    The edges are read from igraph's own arrays (its ``from``/``to`` edge vectors and, for an
    undirected graph, the edge orders ``ii``/``oi`` sorted by endpoint, which are the two
    halves of the CSR form with parallel edges side by side: no sort is needed) after checking
    that the in-memory layout is the one expected (vertex and edge counts, direction, vector
    bounds, and sample edges against ``graph.es``). If any check fails, ``graph.get_edgelist()``
    is used instead, which builds one Python tuple per edge and is some 20 times slower.

    Examples
    --------
    >>> import igraph as ig
    >>> g = from_igraph(ig.Graph(n=4, edges=[(0, 1), (1, 2), (2, 2)]))
    >>> g.degrees.tolist(), g.report.self_loops_dropped
    ([1, 2, 1, 0], 1)
    """
    import igraph as ig

    if not isinstance(graph, ig.Graph):
        raise TypeError(f"graph must be an igraph.Graph, got {type(graph).__name__}")
    n = graph.vcount()
    if "name" in graph.vs.attribute_names():
        node_ids = _label_array(graph.vs["name"])
    else:
        node_ids = np.arange(n, dtype=np.int64)
    relabelled = not _is_range(node_ids)
    directed = bool(graph.is_directed())
    vectors = _igraph_vectors(graph)
    if vectors is None:
        pairs = np.fromiter(
            chain.from_iterable(graph.get_edgelist()), dtype=np.int64, count=2 * graph.ecount()
        ).reshape(-1, 2)
        src, dst = pairs[:, 0], pairs[:, 1]
    else:
        src, dst, oi, ii, os_, is_ = vectors
        if not directed:
            return _undirected_igraph(src, dst, oi, ii, os_, is_, node_ids, relabelled=relabelled)
    return _build_graph(
        src,
        dst,
        n,
        node_ids,
        source="igraph.Graph",
        relabelled=relabelled,
        source_directed=directed,
    )


def from_scipy_sparse(matrix: Any, *, source: str | None = None) -> Graph:
    """Build a :class:`~ldpgraph.graph.Graph` from a square scipy.sparse adjacency matrix.

    Node ``i`` is row and column ``i``; every row is a node, isolated ones included. An entry
    ``A[i, j] != 0`` is an edge ``{i, j}`` whatever its value (weights are ignored; explicit
    zeros are not edges). A symmetric pattern is an undirected graph (each edge stored twice);
    any other pattern is taken as directed and symmetrised, with a note giving the edges before
    and after. Diagonal entries are self-loops, dropped and counted.

    Parameters
    ----------
    matrix : scipy.sparse array or matrix, shape (n, n)
    source : str, optional
        Description kept in the load report (default ``"scipy.sparse.<format>"``).

    Returns
    -------
    Graph

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> a = sp.csr_array(([1, 1, 5, 5], ([0, 1, 1, 2], [1, 0, 2, 1])), shape=(4, 4))
    >>> g = from_scipy_sparse(a)
    >>> g.degrees.tolist(), g.report.edges_read, g.report.source_directed
    ([1, 2, 1, 0], 2, False)
    >>> from_scipy_sparse(sp.csr_array(([1], ([0], [1])), shape=(2, 2))).report.source_directed
    True
    """
    import scipy.sparse as sp  # deferred: slow to import

    if not sp.issparse(matrix):
        raise TypeError(f"matrix must be a scipy.sparse array or matrix, got {type(matrix).__name__}")
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"matrix must be square (an adjacency matrix), got shape {matrix.shape}")
    name = source if source is not None else f"scipy.sparse.{matrix.format}"
    n = int(matrix.shape[0])
    a = sp.csr_array(matrix)  # no copy when already CSR
    if a.nnz and a.indices.dtype != a.indptr.dtype:  # pragma: no cover - defensive
        a = sp.csr_array((a.data, a.indices.astype(np.int64), a.indptr.astype(np.int64)), shape=a.shape)
    nonzero = np.asarray(a.data != 0)
    if a.has_canonical_format and nonzero.all():
        ptr, cols = np.asarray(a.indptr), np.asarray(a.indices)
    else:  # the pattern: explicit zeros out, rows sorted, duplicates merged
        pattern = sp.csr_array(
            (nonzero.astype(np.int8), a.indices, a.indptr), shape=a.shape, copy=True
        )
        pattern.eliminate_zeros()
        pattern.sum_duplicates()
        ptr, cols = pattern.indptr, pattern.indices
    rows = np.repeat(np.arange(n, dtype=ptr.dtype), np.diff(ptr))
    node_ids = np.arange(n, dtype=np.int64)
    # symmetric iff the lower half, transposed, is the upper half: one counting sort of half
    # the entries (stable, so the transposed rows come out sorted)
    lower = rows > cols
    upper = rows < cols
    t_ptr, t_cols = _sorted_rows(cols[lower], rows[lower], n, n, sort=False)
    del lower
    u_ptr = np.zeros(n + 1, dtype=t_ptr.dtype)
    np.cumsum(np.bincount(rows[upper], minlength=n), out=u_ptr[1:])
    if np.array_equal(t_ptr, u_ptr) and np.array_equal(t_cols, cols[upper]):
        loops = rows == cols
        n_loops = int(np.count_nonzero(loops))
        indptr = ptr.astype(np.int64)
        indices = cols.astype(np.int64)
        if n_loops:
            keep = ~loops
            indices = indices[keep]
            indptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.bincount(rows[keep], minlength=n), out=indptr[1:])
        n_edges = indices.size // 2
        report = LoadReport(
            source=name,
            edges_read=n_edges + n_loops,
            self_loops_dropped=n_loops,
            duplicates_dropped=0,
            reverse_duplicates_dropped=0,
            edges_kept=n_edges,
            n_nodes=n,
            relabelled=False,
            source_directed=False,
        )
        return Graph._trusted(indptr, indices, node_ids, report)
    return _build_graph(rows, cols, n, node_ids, source=name, relabelled=False, source_directed=True)


# ---------------------------------------------------------------------------------------------
# helpers


def _from_symmetric_entries(
    rows: NDArray[np.int64], cols: NDArray[np.int64], n: int, node_ids: NDArray[Any], *, source: str
) -> Graph:
    """Graph of a symmetric, duplicate-free entry list where each self-loop appears once."""
    loops = rows == cols
    n_loops = int(np.count_nonzero(loops))
    if n_loops:
        keep = ~loops
        rows, cols = rows[keep], cols[keep]
    ptr, ind = _sorted_rows(rows, cols, n, n)
    nnz = int(ind.size)
    report = LoadReport(
        source=source,
        edges_read=nnz // 2 + n_loops,
        self_loops_dropped=n_loops,
        duplicates_dropped=0,
        reverse_duplicates_dropped=0,
        edges_kept=nnz // 2,
        n_nodes=n,
        relabelled=not _is_range(node_ids),
        source_directed=False,
    )
    return Graph._trusted(ptr.astype(np.int64), ind.astype(np.int64), node_ids, report)


def _undirected_igraph(
    src: NDArray[np.int64],
    dst: NDArray[np.int64],
    oi: NDArray[np.int64],
    ii: NDArray[np.int64],
    os_: NDArray[np.int64],
    is_: NDArray[np.int64],
    node_ids: NDArray[Any],
    *,
    relabelled: bool,
) -> Graph:
    """Graph of an undirected igraph graph from its edge vectors and sorted edge orders.

    igraph stores an undirected edge with ``from >= to``; ``ii`` orders the edges by
    ``(to, from)`` and ``oi`` by ``(from, to)``, with row starts ``is`` and ``os``: these are
    the upper and lower halves of the CSR form, rows sorted, parallel edges side by side. Loops
    and repeats are dropped from both halves (neighbour comparison), which are then merged.
    """
    n = int(is_.size - 1)
    m = int(src.size)
    upper = src[ii]
    lower = dst[oi]
    drop_u = _repeats(is_, upper)
    drop_l = _repeats(os_, lower)
    loop_at = src[src == dst]  # the vertex of every self-loop
    n_loops = int(loop_at.size)
    if n_loops:  # loops are dropped whether repeated or not
        # the c loops of v are the first c entries of row v of the upper half (their column v
        # is the least there) and the last c of row v of the lower half (the greatest there)
        loop_at.sort()
        first = np.flatnonzero(np.concatenate(([True], loop_at[1:] != loop_at[:-1])))
        verts = loop_at[first]
        counts = np.diff(np.append(first, n_loops))
        within = np.arange(n_loops) - np.repeat(first, counts)
        drop_u = _union_positions(drop_u, np.repeat(is_[verts], counts) + within)
        drop_l = _union_positions(drop_l, np.repeat(os_[verts + 1] - counts, counts) + within)
    del loop_at
    ptr_u, upper = _drop_entries(is_, upper, drop_u)
    ptr_l, lower = _drop_entries(os_, lower, drop_l)
    indptr, indices = _merge_rows(ptr_l, lower, ptr_u, upper, n)
    n_unique = int(upper.size)
    report = LoadReport(
        source="igraph.Graph",
        edges_read=m,
        self_loops_dropped=n_loops,
        duplicates_dropped=m - n_loops - n_unique,
        reverse_duplicates_dropped=0,
        edges_kept=n_unique,
        n_nodes=n,
        relabelled=relabelled,
        source_directed=False,
    )
    return Graph._trusted(indptr, indices, node_ids, report)


def _union_positions(a: NDArray[np.intp], b: NDArray[np.intp]) -> NDArray[np.intp]:
    """Sorted distinct positions in ``a`` or ``b``."""
    both = np.concatenate((a, b))
    both.sort()
    return both[np.concatenate(([True], both[1:] != both[:-1]))] if both.size else both


def _igraph_vectors(graph: Any) -> tuple[NDArray[np.int64], ...] | None:
    """Read-only views of igraph's ``from, to, oi, ii, os, is`` vectors, or None if the layout is unexpected.

    The views share igraph's memory (no copy): use them only while ``graph`` is alive and
    unchanged, inside the conversion.

    ``igraph_t`` starts with ``n`` (64-bit), ``directed`` (padded to 8 bytes), then six
    ``igraph_vector_int_t`` of three pointers each (begin, end of storage, end of data) over
    64-bit integers.
    """
    try:
        address = graph._raw_pointer()
    except Exception:  # noqa: BLE001 - any failure means: use the slow, public route
        return None
    n, m = graph.vcount(), graph.ecount()
    words = (ctypes.c_uint64 * 20).from_address(address)
    if words[0] != n or (words[1] & 0xFF) != int(graph.is_directed()):
        return None
    out = []
    for k, size in enumerate((m, m, m, m, n + 1, n + 1)):
        begin, stor_end, end = words[2 + 3 * k], words[3 + 3 * k], words[4 + 3 * k]
        if not (begin and begin <= end <= stor_end) or end - begin != 8 * size:
            return None
        if size:
            arr = np.ctypeslib.as_array((ctypes.c_int64 * size).from_address(begin))
        else:
            arr = np.empty(0, dtype=np.int64)
        arr.setflags(write=False)
        out.append(arr)
    src, dst = out[0], out[1]
    for e in {0, m // 2, m - 1} if m else ():
        a, b = graph.es[e].tuple
        if (a, b) != ((int(src[e]), int(dst[e])) if graph.is_directed() else (int(dst[e]), int(src[e]))):
            return None
    if out[4][-1] != m or out[5][-1] != m:
        return None
    return tuple(out)


def _label_array(labels: list[Any]) -> NDArray[Any]:
    """int64 array of the labels when all are integers that fit, else an object array."""
    ints = all(
        isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) for x in labels
    )
    if ints and all(-(2**63) <= int(x) < 2**63 for x in labels):
        return np.array([int(x) for x in labels], dtype=np.int64)
    out = np.empty(len(labels), dtype=object)
    out[:] = labels
    return out


def _is_range(node_ids: NDArray[Any]) -> bool:
    return node_ids.dtype == np.int64 and np.array_equal(
        node_ids, np.arange(node_ids.size, dtype=np.int64)
    )
