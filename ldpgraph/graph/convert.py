"""Conversions from networkx, igraph and scipy.sparse objects into :class:`~ldpgraph.graph.Graph`.

networkx and igraph are imported lazily, inside the functions. No conversion loops over the
edges in Python: networkx adjacency dicts are read by ``np.fromiter`` (a C loop over the dict
keys; see :func:`from_networkx`), igraph's own
edge vectors and sorted edge indices are copied as arrays (see :func:`from_igraph`), and
scipy.sparse arrays are used as CSR arrays.
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

# networkx conversion: node positions and CSR entries in int32 below this many (else int64)
_INT32_LIMIT = 2**31
# integer labels spanning at most this many times their number are located through a dense table
_DENSE_SPAN = 8


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

    Raises
    ------
    TypeError
        If ``graph`` is not a networkx graph.
    ValueError
        If the adjacency of ``graph`` names a neighbour that is not a node, or is not symmetric
        for an undirected graph (a graph whose internal dicts were edited by hand).

    Notes
    -----
    networkx stores a graph as a dict of dicts, ``graph._adj[u][v]``, in node insertion order:
    the lengths of the inner dicts are the row lengths of a CSR form and their keys, chained,
    its column labels. The keys are read by one C-level pass (``np.fromiter`` over
    ``itertools.chain``); integer labels are located with numpy (an offset when consecutive, a
    dense table when they span at most ``_DENSE_SPAN`` times their number, else a numpy hash
    table), other labels through a dict. That pass is the floor: any Python-level visit of the
    keys costs about one cache miss per key object (a bare pass runs at about 10^7 keys/s on a
    graph of 10^6 edges here; ``scripts/bench_from_networkx.py`` measures it). CPython's dict
    tables are deliberately not read from memory (faster, but private to each CPython version,
    and unsafe if another thread changes the graph meanwhile).

    For an undirected simple ``nx.Graph`` the adjacency is symmetric and free of duplicates,
    so no dedupe is needed: the transpose of a symmetric pattern is itself, and scipy's
    counting-sort transpose (``csr_tocsc``, stable, O(m + n)) returns its rows sorted. The
    symmetry is checked by transposing once more (:math:`(A^T)^T` must equal :math:`A^T`).
    An undirected multigraph takes the same route on its distinct neighbours; its parallel
    edges are counted, for the report, from the lengths of the edge-key dicts. Directed graphs
    go through the general builder (symmetrise, dedupe).

    Examples
    --------
    >>> import networkx as nx
    >>> g = from_networkx(nx.DiGraph([(2, 1), (1, 2), (1, 3)]))
    >>> g.n_nodes, g.n_edges, g.report.reverse_duplicates_dropped, g.report.source_directed
    (3, 2, 1, True)
    >>> from_networkx(nx.Graph([("b", "a"), ("a", "a")])).report.self_loops_dropped
    1
    """
    import networkx as nx

    if not isinstance(graph, nx.Graph):
        raise TypeError(f"graph must be a networkx graph, got {type(graph).__name__}")
    source = f"networkx.{type(graph).__name__}"
    adj = graph._adj  # the dict of dicts networkx stores (documented for subclasses)
    labels = list(adj)
    n = len(labels)
    multi = bool(graph.is_multigraph())
    deg = np.fromiter(map(len, adj.values()), dtype=np.int64, count=n)
    nnz = int(deg.sum())
    node_ids, rank = _sorted_labels(labels)
    cols = _neighbour_positions(adj, labels, node_ids, rank, deg)
    relabelled = not _is_range(node_ids)
    directed = bool(graph.is_directed())
    mult = None
    if multi:  # adj[u][v] is a dict of parallel edges keyed by edge key: their numbers
        per = map(len, chain.from_iterable(nbrs.values() for nbrs in adj.values()))
        mult = np.fromiter(per, dtype=np.int64, count=nnz)
    if not directed:
        ptr = np.zeros(n + 1, dtype=cols.dtype)
        np.cumsum(deg, out=ptr[1:])
        built = _symmetric_csr(ptr, cols, n, rank)
        if built is not None:
            indptr, indices, n_loops = built
            n_edges = int(indices.size // 2)
            n_read = n_edges + n_loops
            if mult is not None:  # a pair {u, v} is listed at both ends, a loop once
                rows = np.repeat(np.arange(n, dtype=cols.dtype) if rank is None else rank, deg)
                n_loops = int(mult[rows == cols].sum())
                n_read = (int(mult.sum()) + n_loops) // 2
            report = _undirected_report(source, n_read, n_loops, n_edges, n, relabelled)
            return Graph._trusted(indptr, indices, node_ids, report)
        raise ValueError(
            f"graph is an undirected {source} whose adjacency is not symmetric (some v in "
            "graph._adj[u] without u in graph._adj[v]): its internal dicts were edited directly?"
        )
    # directed: the general builder (symmetrise, dedupe)
    rows = np.repeat(np.arange(n, dtype=cols.dtype) if rank is None else rank, deg)
    if mult is not None:  # one entry per parallel edge
        rows, cols = np.repeat(rows, mult), np.repeat(cols, mult)
    return _build_graph(
        rows, cols, n, node_ids, source=source, relabelled=relabelled, source_directed=directed
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


def _sorted_labels(labels: list[Any]) -> tuple[NDArray[Any], NDArray[np.integer] | None]:
    """The node labels in sorted order and the sorted position of each label, by insertion.

    Returns ``(node_ids, rank)``: ``rank[p]`` is the position in ``node_ids`` of ``labels[p]``,
    or None when the labels come sorted already (``rank`` would be ``0..n-1``). Labels that
    cannot be sorted keep their insertion order. ``rank`` is int32 below 2**31 labels.
    """
    n = len(labels)
    node_ids = _label_array(labels)
    itype = np.int32 if n < _INT32_LIMIT else np.int64
    if node_ids.dtype == np.int64:
        if n < 2 or bool((node_ids[1:] > node_ids[:-1]).all()):
            return node_ids, None
        lo, span = _span(node_ids)
        if span <= _DENSE_SPAN * n:  # no sort: a presence table over lo..hi
            at = node_ids - lo
            present = np.zeros(span, dtype=bool)
            present[at] = True
            position = np.cumsum(present, dtype=itype)
            position -= 1
            rank = position[at]
            del position, at
            sorted_ids = np.flatnonzero(present).astype(np.int64)
            sorted_ids += lo
            return sorted_ids, rank
        order = np.argsort(node_ids)  # distinct labels: any sort gives the same order
    else:
        try:
            order = np.array(sorted(range(n), key=labels.__getitem__), dtype=np.int64)
        except TypeError:  # incomparable labels: insertion order
            return node_ids, None
        if bool((order == np.arange(n)).all()):
            return node_ids, None
    rank = np.empty(n, dtype=itype)
    rank[order] = np.arange(n, dtype=itype)
    return node_ids[order], rank


def _neighbour_positions(
    adj: Any,
    labels: list[Any],
    node_ids: NDArray[Any],
    rank: NDArray[np.integer] | None,
    deg: NDArray[np.int64],
) -> NDArray[np.integer]:
    """Sorted positions of the neighbour labels ``chain(*adj.values())``.

    Integer labels are read by ``np.fromiter`` and located with numpy, other labels through
    one dict from label to position. Integer positions: an offset when the labels are
    consecutive, a dense table when they span at most ``_DENSE_SPAN`` times their number, else
    a numpy hash table (:func:`_index_of`). int32 when the positions and entries fit, else int64.
    """
    n = len(labels)
    nnz = int(deg.sum())
    itype = np.int32 if max(n, nnz) < _INT32_LIMIT else np.int64
    ints = node_ids.dtype == np.int64
    if ints:
        try:
            vals = np.fromiter(chain.from_iterable(adj.values()), dtype=np.int64, count=nnz)
        except (TypeError, ValueError, OverflowError):  # a key that only compares equal to a label
            vals = None
        if vals is not None:
            return _int_positions(vals, node_ids, itype)
    index = dict(zip(labels, range(n) if rank is None else rank.tolist(), strict=True))
    try:  # np.array of a list is faster here than np.fromiter of the map (measured)
        return np.array(list(map(index.__getitem__, chain.from_iterable(adj.values()))), dtype=itype)
    except KeyError as exc:
        _not_a_node(exc.args[0])
        raise  # pragma: no cover - _not_a_node raises


def _int_positions(vals: NDArray[np.int64], node_ids: NDArray[np.int64], itype: type) -> NDArray[np.integer]:
    """Positions of the integer labels ``vals`` in the sorted ``node_ids`` (ValueError if absent)."""
    n = int(node_ids.size)
    if not vals.size:
        return vals.astype(itype)
    lo, hi = int(node_ids[0]), int(node_ids[-1])  # vals is not empty: neither is node_ids
    if hi - lo == n - 1:  # consecutive labels lo..hi: the position is the offset
        if vals.min() < lo or vals.max() > hi:
            _not_a_node(int(vals[(vals < lo) | (vals > hi)][0]))
        return np.subtract(vals, lo, dtype=np.int64).astype(itype)
    if vals.min() < lo or vals.max() > hi:
        _not_a_node(int(vals[(vals < lo) | (vals > hi)][0]))
    _, span = _span(node_ids)
    if span <= _DENSE_SPAN * n:  # a table of positions over lo..hi
        table = np.full(span, -1, dtype=itype)
        table[node_ids - lo] = np.arange(n, dtype=itype)
        pos = table[vals - lo]
    else:
        pos = _lookup(_index_of(node_ids), vals)
    if (pos < 0).any():
        _not_a_node(int(vals[pos < 0][0]))
    return pos.astype(itype, copy=False)


def _span(ids: NDArray[np.int64]) -> tuple[int, int]:
    """``(lo, hi - lo + 1)`` of non-empty int64 ids, in Python integers (no overflow)."""
    lo, hi = int(ids.min()), int(ids.max())
    return lo, hi - lo + 1


def _index_of(keys: NDArray[np.int64]) -> tuple[int, NDArray[np.int64], NDArray[np.int64]]:
    """A hash table of the int64 ``keys`` (position ``i`` under key ``keys[i]``), for :func:`_lookup`.

    Open addressing with linear probing, built without a loop: a key's home slot is the top
    ``b`` bits of ``key * 0x9E3779B97F4A7C15`` (Fibonacci hashing, ``2**b >= 2 len(keys)``);
    sorted by home slot, key ``j`` takes slot ``max(home_j, slot_{j-1} + 1)``, i.e.
    ``cummax(home - j) + j``. The table has ``len(keys)`` spare slots at its end, so probes
    never wrap. Measured: about 3 times faster than ``np.searchsorted`` over sorted keys for
    4·10^6 look-ups among 5·10^5 keys here (the binary search misses the cache at each step).
    """
    n = int(keys.size)
    bits = max(1, (2 * n - 1).bit_length())
    home = _home_slots(keys, bits)
    order = np.argsort(home, kind="stable")
    home = home[order]
    step = np.arange(n, dtype=np.int64)
    home -= step
    slot = np.maximum.accumulate(home)
    slot += step
    table_keys = np.zeros((1 << bits) + n, dtype=np.int64)
    table_pos = np.full((1 << bits) + n, -1, dtype=np.int64)
    table_keys[slot] = keys[order]
    table_pos[slot] = order
    return bits, table_keys, table_pos


def _home_slots(keys: NDArray[np.int64], bits: int) -> NDArray[np.int64]:
    mixed = keys.view(np.uint64) * np.uint64(0x9E3779B97F4A7C15)  # wraps modulo 2**64
    mixed >>= np.uint64(64 - bits)
    return mixed.view(np.int64)


def _lookup(
    index: tuple[int, NDArray[np.int64], NDArray[np.int64]], queries: NDArray[np.int64], max_probes: int = 32
) -> NDArray[np.int64]:
    """Position of every query's key in the table of :func:`_index_of`, -1 where absent.

    One vectorised probe per round over the queries not yet resolved; after ``max_probes``
    rounds (long clusters: keys chosen to collide) the rest are found by a binary search.
    """
    bits, table_keys, table_pos = index
    out = np.full(queries.size, -1, dtype=np.int64)
    slot = _home_slots(queries, bits)
    todo = np.arange(queries.size, dtype=np.int64)
    q = queries
    for _ in range(max_probes):
        if not todo.size:
            return out
        pos = table_pos[slot]
        found = (table_keys[slot] == q) & (pos >= 0)
        out[todo[found]] = pos[found]
        going = ~found & (pos >= 0)  # an empty slot ends the probe: absent
        todo, slot, q = todo[going], slot[going] + 1, q[going]
    if todo.size:  # long clusters (keys chosen to collide): a binary search for the rest
        live = table_pos >= 0
        keys, pos = table_keys[live], table_pos[live]
        order = np.argsort(keys)
        keys, pos = keys[order], pos[order]
        at = np.minimum(np.searchsorted(keys, q), keys.size - 1)
        out[todo] = np.where(keys[at] == q, pos[at], -1)
    return out


def _not_a_node(label: Any) -> None:
    raise ValueError(
        f"graph's adjacency lists a neighbour {label!r} that is not a node of the graph "
        "(networkx's internal dicts were edited directly?)"
    )


def _symmetric_csr(
    ptr: NDArray[np.integer], cols: NDArray[np.integer], n: int, rank: NDArray[np.integer] | None
) -> tuple[NDArray[np.int64], NDArray[np.int64], int] | None:
    """CSR of a networkx adjacency known to be symmetric and duplicate-free, loops dropped.

    ``ptr`` and ``cols`` are the rows of the adjacency in insertion order, with the neighbours
    as sorted positions; ``rank`` maps insertion order to sorted position (None: the same).
    Returns ``(indptr, indices, n_loops)``, or None if the pattern is not symmetric.

    Each step is a counting-sort transpose (scipy's ``csr_tocsc``, stable): the transpose of
    the adjacency ``A`` lists, for every node, its neighbours' insertion positions in
    increasing order; mapped through ``rank`` it is ``A^T`` in sorted positions, whose own
    transpose ``S`` has sorted rows. ``S`` is the graph iff ``A`` is symmetric, which holds iff
    ``S`` equals its transpose (one more counting sort).
    """
    from scipy.sparse import _sparsetools as st  # deferred: slow to import

    itype = cols.dtype
    m = int(cols.size)
    data = np.zeros(m, dtype=np.int8)
    scratch = np.empty(m, dtype=np.int8)

    def transpose(
        p: NDArray[np.integer], c: NDArray[np.integer]
    ) -> tuple[NDArray[np.integer], NDArray[np.integer]]:
        tp, tc = np.empty(n + 1, dtype=itype), np.empty(m, dtype=itype)
        st.csr_tocsc(n, n, p, c, data, tp, tc, scratch)
        return tp, tc

    s_ptr, s_ind = transpose(ptr, cols)
    if rank is not None:  # s is A^T with insertion positions: map them, transpose back
        s_ptr, s_ind = transpose(s_ptr, rank[s_ind].astype(itype, copy=False))
    t_ptr, t_ind = transpose(s_ptr, s_ind)
    if not (np.array_equal(t_ptr, s_ptr) and np.array_equal(t_ind, s_ind)):
        return None
    del t_ptr, t_ind
    rows = np.repeat(np.arange(n, dtype=itype), np.diff(s_ptr))
    loops = np.flatnonzero(rows == s_ind)
    del rows
    if loops.size:
        s_ptr, s_ind = _drop_entries(s_ptr, s_ind, loops)
    return s_ptr.astype(np.int64), s_ind.astype(np.int64), int(loops.size)


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
    report = _undirected_report("igraph.Graph", m, n_loops, n_unique, n, relabelled)
    return Graph._trusted(indptr, indices, node_ids, report)


def _undirected_report(
    source: str, edges_read: int, self_loops: int, edges_kept: int, n_nodes: int, relabelled: bool
) -> LoadReport:
    """Report of an undirected graph object: whatever is neither a loop nor kept is a duplicate."""
    return LoadReport(
        source=source,
        edges_read=edges_read,
        self_loops_dropped=self_loops,
        duplicates_dropped=edges_read - self_loops - edges_kept,
        reverse_duplicates_dropped=0,
        edges_kept=edges_kept,
        n_nodes=n_nodes,
        relabelled=relabelled,
        source_directed=False,
    )


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
    if set(map(type, labels)) <= {int}:  # the common case, without a Python loop
        try:
            return np.fromiter(labels, dtype=np.int64, count=len(labels))
        except OverflowError:
            pass
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
