"""The internal graph form: a simple undirected graph in CSR form, plus a report of the load.

Every input (edge-list file, networkx graph, igraph graph, integer edge array) is turned into
one light, read-only :class:`Graph`: nodes ``0..n-1``, sorted neighbour lists in compressed
sparse row (CSR) arrays, the original node labels, and a :class:`LoadReport` that says what
was read and what was dropped (self-loops, duplicate edges, reverse duplicates from
symmetrising a directed input).

The builders here work on integer arrays only; file parsing lives in
:mod:`ldpgraph.graph.edgelist`, conversions from networkx and igraph in
:mod:`ldpgraph.graph.convert`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ldpgraph._cores import usable_cores as _usable_cores
from ldpgraph._validation import check_nonnegative_int

__all__ = ["Graph", "LoadReport", "from_edge_array"]

# Ids are relabelled through a dense lookup table when the largest id is below this many
# times the number of id occurrences (else through np.unique, which sorts).
_DENSE_FACTOR = 4
_DENSE_MIN = 1 << 16
# Weight of an edge given as (u, v) with u > v when counting directions; (u, v) with u < v
# weighs 1. One int64 sum then holds both counts (each below 2**32).
_REVERSE_WEIGHT = 1 << 32
# The build works in int32 (half the memory of int64) below this many nodes: 2 * hi + 1 < 2**31.
_INT32_NODES = 1 << 30
# Counting sorts over more keys than this go in two passes (high bits, then low bits in each of
# at most 2**_SORT_BUCKET_BITS buckets): see _bucket_shift.
_SORT_DIRECT = 1 << 16
_SORT_BUCKET_BITS = 6
# Below this many edges, while scipy.sparse is not imported, the build sorts int64 keys with
# numpy instead (see _numpy_build; measured by scripts/bench_graph_io.py --small).
_SMALL_EDGES = 1 << 19
# Entries above which the second pass of a counting sort runs in two threads (_sort_buckets).
_PARALLEL_SORT = 1 << 21
# Entries renumbered or compacted at a time (bounded temporaries): _graph_on_range, _drop_entries_into.
_MAP_CHUNK = 1 << 20


@dataclass(frozen=True)
class LoadReport:
    """What was read and what was dropped while building a :class:`Graph`.

    Attributes
    ----------
    source : str
        File name, or a description of the in-memory input (``"networkx.DiGraph"``, ...).
    edges_read : int
        Edges in the input: edge lines of a text file (comment and blank lines excluded),
        edges of a networkx or igraph graph (every parallel edge of a multigraph counts),
        rows of an edge array.
    self_loops_dropped : int
        Input edges ``(v, v)``. Their nodes are kept (with whatever other edges they have).
    duplicates_dropped : int
        Input edges dropped because the same undirected edge was already present, whether it
        was repeated in the same direction or given in the reverse direction.
        ``edges_read = edges_kept + self_loops_dropped + duplicates_dropped``.
    reverse_duplicates_dropped : int
        The part of ``duplicates_dropped`` due to symmetrising: the number of undirected
        edges given in both directions (``u v`` and ``v u``), one per such edge.
    edges_kept : int
        Undirected edges of the graph.
    n_nodes : int
        Nodes of the graph.
    relabelled : bool
        True when the original node ids were not exactly ``0..n_nodes-1`` in order, so
        ``Graph.node_ids`` is needed to map back.
    lines_read : int or None
        For text input, every line read, comment and blank lines included; else None.
    lines_skipped : int or None
        For text input, the comment and blank lines skipped; else None. The edge lines are
        ``lines_read - lines_skipped == edges_read``.
    source_directed : bool or None
        Whether the input was a directed graph object; None where the input does not say
        (files, arrays).
    notes : tuple of str
        One-line notes on what was done beyond the plain reading: a symmetrised directed
        input (edges before and after), edges given in both directions, extra columns ignored,
        a header line taken as column names, node names read as text.
    """

    source: str
    edges_read: int
    self_loops_dropped: int
    duplicates_dropped: int
    reverse_duplicates_dropped: int
    edges_kept: int
    n_nodes: int
    relabelled: bool
    lines_read: int | None = None
    lines_skipped: int | None = None
    source_directed: bool | None = None
    notes: tuple[str, ...] = ()

    @property
    def repeated_duplicates_dropped(self) -> int:
        """Duplicates not explained by symmetrising (same edge repeated, multigraph edges)."""
        return self.duplicates_dropped - self.reverse_duplicates_dropped


class Graph:
    r"""A simple undirected graph on nodes ``0..n-1`` in read-only CSR form.

    Build it with :func:`ldpgraph.graph.load_graph`, :func:`read_edgelist`,
    :func:`from_edge_array`, :func:`from_networkx` or :func:`from_igraph`. The constructor
    takes CSR arrays directly and checks them fully (symmetry included, which sorts).

    Parameters
    ----------
    indptr : array_like of int, shape (n + 1,)
        Row pointers: the neighbours of ``v`` are ``indices[indptr[v]:indptr[v + 1]]``.
    indices : array_like of int, shape (2 m,)
        Neighbour lists, strictly increasing within each row, no self-loops, symmetric.
    node_ids : array_like, shape (n,), optional
        Original label of each node; default ``0..n-1``.
    report : LoadReport, optional
        How the graph was loaded; a report describing the CSR input by default.

    Attributes
    ----------
    n_nodes, n_edges : int
    indptr, indices, degrees : ndarray of int64 (read-only)
    node_ids : ndarray (read-only), int64 unless the labels were not integers
    report : LoadReport

    Notes
    -----
    Each undirected edge :math:`\{u, v\}` is stored twice, as ``v`` in the row of ``u`` and
    ``u`` in the row of ``v``; ``degrees[v] = indptr[v+1] - indptr[v]`` and
    :math:`\sum_v d_v = 2m`.

    Examples
    --------
    >>> g = Graph([0, 2, 3, 4], [1, 2, 0, 0])
    >>> g.n_nodes, g.n_edges, g.degrees.tolist()
    (3, 2, [2, 1, 1])
    >>> g.edges().tolist()
    [[0, 1], [0, 2]]
    """

    __slots__ = ("_indptr", "_indices", "_degrees", "_node_ids", "_report")

    def __init__(
        self,
        indptr: ArrayLike,
        indices: ArrayLike,
        *,
        node_ids: ArrayLike | None = None,
        report: LoadReport | None = None,
    ) -> None:
        ptr = _int_array(indptr, "indptr").copy()  # copies: the caller's arrays stay writable
        idx = _int_array(indices, "indices").copy()
        _check_csr(ptr, idx)
        n = ptr.size - 1
        ids = _check_node_ids(node_ids, n)
        if report is None:
            report = LoadReport(
                source="CSR arrays",
                edges_read=idx.size // 2,
                self_loops_dropped=0,
                duplicates_dropped=0,
                reverse_duplicates_dropped=0,
                edges_kept=idx.size // 2,
                n_nodes=n,
                relabelled=False,
            )
        elif not isinstance(report, LoadReport):
            raise TypeError(f"report must be a LoadReport, got {type(report).__name__}")
        self._set(ptr, idx, ids, report)

    def _set(
        self,
        indptr: NDArray[np.int64],
        indices: NDArray[np.int64],
        node_ids: NDArray[Any],
        report: LoadReport,
    ) -> None:
        degrees = np.diff(indptr)
        for arr in (indptr, indices, degrees, node_ids):
            arr.setflags(write=False)
        self._indptr = indptr
        self._indices = indices
        self._degrees = degrees
        self._node_ids = node_ids
        self._report = report

    @classmethod
    def _trusted(
        cls,
        indptr: NDArray[np.int64],
        indices: NDArray[np.int64],
        node_ids: NDArray[Any],
        report: LoadReport,
    ) -> Graph:
        """Wrap CSR arrays built by this package without re-checking them."""
        g = cls.__new__(cls)
        g._set(indptr, indices, node_ids, report)
        return g

    @property
    def n_nodes(self) -> int:
        """Number of nodes, isolated ones included."""
        return int(self._indptr.size - 1)

    @property
    def n_edges(self) -> int:
        """Number of undirected edges."""
        return int(self._indices.size // 2)

    @property
    def indptr(self) -> NDArray[np.int64]:
        """CSR row pointers, shape ``(n_nodes + 1,)``."""
        return self._indptr

    @property
    def indices(self) -> NDArray[np.int64]:
        """CSR neighbour lists (sorted within each row), shape ``(2 * n_edges,)``."""
        return self._indices

    @property
    def degrees(self) -> NDArray[np.int64]:
        """Degree of every node, shape ``(n_nodes,)``."""
        return self._degrees

    @property
    def node_ids(self) -> NDArray[Any]:
        """Original label of every node (``node_ids[v]`` is the label of node ``v``)."""
        return self._node_ids

    @property
    def report(self) -> LoadReport:
        """How the graph was loaded."""
        return self._report

    def by_label(self, values: ArrayLike) -> dict[Any, Any]:
        """One value per node, ``values[v]`` for node ``v``, as ``{label: value}`` by the graph's
        original labels (:attr:`node_ids`: a networkx graph's nodes, a file's ids or names).

        >>> g = from_edge_array([[10, 20], [20, 30]])
        >>> g.by_label([1.0, 2.0, 1.0])
        {10: 1.0, 20: 2.0, 30: 1.0}
        """
        vals = np.asarray(values)
        if vals.shape != (self.n_nodes,):
            raise ValueError(f"values must hold one value per node, shape ({self.n_nodes},), "
                             f"got shape {vals.shape}")
        return dict(zip(self._node_ids.tolist(), vals.tolist(), strict=True))

    def to_series(self, values: ArrayLike, name: str | None = None) -> Any:
        """:meth:`by_label` as a pandas Series indexed by the labels (pandas comes with
        ``pip install "ldpgraph[notebook]"``)."""
        from ldpgraph.tables import node_series

        return node_series(self.by_label(values), name)

    def neighbors(self, v: int) -> NDArray[np.int64]:
        """Sorted neighbours of node ``v`` (a read-only view)."""
        n = self.n_nodes
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"v must be an integer node index, got {type(v).__name__}")
        if not 0 <= int(v) < n:
            raise ValueError(f"v must be a node index in [0, {n}), got {v}")
        return self._indices[self._indptr[v] : self._indptr[v + 1]]

    def edges(self) -> NDArray[np.int64]:
        """Edges as an ``(n_edges, 2)`` array of pairs ``u < v``, sorted lexicographically."""
        rows = np.repeat(np.arange(self.n_nodes, dtype=np.int64), self._degrees)
        upper = self._indices > rows
        return np.column_stack((rows[upper], self._indices[upper]))

    def to_networkx(self, *, original_labels: bool = False) -> Any:
        """Return a ``networkx.Graph`` with every node (isolated ones included).

        Nodes are ``0..n-1``, or the original labels when ``original_labels`` is true.
        """
        import networkx as nx

        g = nx.Graph()
        e = self.edges()
        if original_labels:
            labels = self._node_ids.tolist()
            g.add_nodes_from(labels)
            g.add_edges_from((labels[a], labels[b]) for a, b in e.tolist())
        else:
            g.add_nodes_from(range(self.n_nodes))
            g.add_edges_from(e.tolist())
        return g

    def to_igraph(self) -> Any:
        """Return an undirected ``igraph.Graph`` on vertices ``0..n-1`` (labels not attached)."""
        import igraph as ig

        return ig.Graph(n=self.n_nodes, edges=self.edges().tolist(), directed=False)

    def __repr__(self) -> str:
        return f"Graph(n_nodes={self.n_nodes}, n_edges={self.n_edges}, source={self._report.source!r})"


def from_edge_array(
    edges: ArrayLike,
    *,
    n_nodes: int | None = None,
    source: str = "edge array",
) -> Graph:
    """Build a :class:`Graph` from an ``(m, 2)`` array of integer node ids.

    Each row is an edge; the direction of a row is ignored (directed input is symmetrised).
    Self-loops and duplicates are dropped and counted in ``graph.report``.

    Parameters
    ----------
    edges : array_like of int, shape (m, 2)
        Node ids. Any int64 values when ``n_nodes`` is None; they are relabelled to
        ``0..n-1`` in increasing order of id and kept in ``graph.node_ids``.
    n_nodes : int, optional
        If given, ids must lie in ``[0, n_nodes)`` and are used as node indices as they are;
        nodes that appear in no edge are kept as isolated nodes.
    source : str
        Description stored in the load report.

    Returns
    -------
    Graph

    Examples
    --------
    >>> g = from_edge_array([[10, 30], [30, 10], [20, 20]])
    >>> g.n_nodes, g.n_edges, g.node_ids.tolist()
    (3, 1, [10, 20, 30])
    >>> g.report.reverse_duplicates_dropped, g.report.self_loops_dropped
    (1, 1)
    >>> from_edge_array([[0, 1]], n_nodes=3).degrees.tolist()
    [1, 1, 0]
    """
    arr = _int_array(edges, "edges", ndim=2)
    if arr.shape[1] != 2:
        raise ValueError(f"edges must have shape (m, 2), got {arr.shape}")
    if n_nodes is None:
        return _graph_from_id_pairs(arr, source=source)
    n = check_nonnegative_int(n_nodes, "n_nodes")
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        bad = np.flatnonzero(((arr < 0) | (arr >= n)).any(axis=1))[0]
        raise ValueError(
            f"edges[{bad}] = {arr[bad].tolist()} has a node id outside [0, n_nodes) = [0, {n})"
        )
    return _build_graph(
        arr[:, 0],
        arr[:, 1],
        n,
        np.arange(n, dtype=np.int64),
        source=source,
        relabelled=False,
    )


# ---------------------------------------------------------------------------------------------
# builders (private; used by edgelist and convert)


def _graph_from_id_pairs(
    pairs: NDArray[np.int64],
    *,
    source: str,
    lines_total: int | None = None,
    source_directed: bool | None = None,
    notes: tuple[str, ...] = (),
) -> Graph:
    """Relabel arbitrary int64 ids of an ``(m, 2)`` array to ``0..n-1`` and build the graph."""
    return _graph_from_ids(
        pairs[:, 0],
        pairs[:, 1],
        source=source,
        lines_total=lines_total,
        source_directed=source_directed,
        notes=notes,
    )


def _graph_from_ids(
    u: NDArray[np.integer],
    v: NDArray[np.integer],
    *,
    source: str,
    lines_total: int | None = None,
    source_directed: bool | None = None,
    notes: tuple[str, ...] = (),
) -> Graph:
    """Relabel the integer ids of two columns to ``0..n-1`` (increasing id) and build the graph."""
    return _graph_from_owned_ids(
        [u, v], source=source, lines_total=lines_total, source_directed=source_directed, notes=notes
    )


def _graph_from_owned_ids(
    cols: list[NDArray[np.integer]],
    *,
    source: str,
    lines_total: int | None = None,
    source_directed: bool | None = None,
    notes: tuple[str, ...] = (),
) -> Graph:
    """:func:`_graph_from_ids` of ``cols = [u, v]``, which it empties.

    A caller that passes its only references to the columns lets each be freed as soon as the
    relabelling and the build are done with it (the build's peak then no longer includes them).
    Ids spanning a range ``lo..hi`` no longer than the edge count are not relabelled first: the
    graph is built on the ``hi - lo + 1`` nodes of the range (see :func:`_graph_on_range`).
    """
    m = int(cols[0].size)
    if m:
        lo = min(int(cols[0].min()), int(cols[1].min()))
        hi = max(int(cols[0].max()), int(cols[1].max()))
        if hi - lo < m:
            return _graph_on_range(cols, lo, hi, source=source, lines_total=lines_total,
                                   source_directed=source_directed, notes=notes)
    node_ids, relabelled = _relabel_columns(cols)
    return _build_owned(
        cols,
        node_ids.size,
        node_ids,
        source=source,
        relabelled=relabelled,
        lines_total=lines_total,
        source_directed=source_directed,
        notes=notes,
    )


def _graph_on_range(
    cols: list[NDArray[np.integer]],
    lo: int,
    hi: int,
    *,
    source: str,
    lines_total: int | None,
    source_directed: bool | None,
    notes: tuple[str, ...],
) -> Graph:
    """:func:`_graph_from_owned_ids` of ids in ``lo..hi``: built on every id of the range, then
    the ids that occur nowhere dropped.

    Node ``i`` of the build is the id ``lo + i``. An id occurs in the input iff its node has an
    edge in the graph or a self-loop, so the absent ones are found from the degrees and the
    self-loops, without the presence table of :func:`_relabel_columns` (two ``np.bincount``
    passes over the ids). When some are absent, their empty rows are dropped and the indices
    renumbered by the (increasing) map of the kept nodes, which keeps every row sorted.
    """
    span = hi - lo + 1
    m_read = int(cols[0].size)
    if lo != 0 and (lo < -(2**31) or hi >= 2**31):  # the build narrows the ids before the offset
        u, v = cols
        cols[:] = [np.subtract(u, lo, dtype=np.int64), np.subtract(v, lo, dtype=np.int64)]
        del u, v
        lo_shift = 0
    else:
        lo_shift = lo
    loop_nodes: list[NDArray[np.integer]] = []
    indptr, indices, n_loops, n_both = _simple_csr(cols, span, offset=lo_shift, loop_nodes=loop_nodes)
    present = np.not_equal(indptr[1:], indptr[:-1])
    for nodes in loop_nodes:
        present[nodes] = True
    if present.all():
        node_ids = np.arange(lo, hi + 1, dtype=np.int64)
        relabelled = lo != 0
    else:
        kept = np.flatnonzero(present)
        mapping = np.zeros(span, dtype=np.int64)
        mapping[kept] = np.arange(kept.size, dtype=np.int64)
        for s in range(0, indices.size, _MAP_CHUNK):  # in place, a chunk at a time
            indices[s : s + _MAP_CHUNK] = mapping[indices[s : s + _MAP_CHUNK]]
        del mapping
        indptr = indptr[np.concatenate(([0], kept + 1))]
        node_ids = kept.astype(np.int64)
        node_ids += lo
        relabelled = True
    del present
    return _graph_of(indptr, indices, n_loops, n_both, m_read, node_ids, source=source,
                     relabelled=relabelled, lines_total=lines_total, source_directed=source_directed,
                     notes=notes)


def _relabel_columns(cols: list[NDArray[np.integer]]) -> tuple[NDArray[np.int64], bool]:
    """Replace the two columns of ``cols`` by their ids mapped to ``0..n-1`` (increasing id).

    Returns the sorted distinct ids and whether they differ from ``0..n-1``. The input arrays
    are not modified; each is replaced in ``cols`` as soon as its new column exists, and new
    columns are int32 when ``n < 2**31``. Ids spanning a range at most a few times the number
    of occurrences go through a presence table (``np.bincount``, O(m + range)); others through
    one sort of all ids and a neighbour comparison, then a binary search (``np.unique`` is far
    slower on numpy 2.4).
    """
    u, v = cols
    if u.size == 0:
        return np.zeros(0, dtype=np.int64), False
    lo = min(int(u.min()), int(v.min()))
    hi = max(int(u.max()), int(v.max()))
    del u, v
    span = hi - lo + 1
    if span <= max(_DENSE_FACTOR * 2 * cols[0].size, _DENSE_MIN):
        if lo != 0:
            for i in range(2):
                cols[i] = cols[i] - lo
        present = np.bincount(cols[0], minlength=span).astype(bool)
        present |= np.bincount(cols[1], minlength=span).astype(bool)
        if present.all():  # ids are exactly lo..hi
            return np.arange(lo, hi + 1, dtype=np.int64), lo != 0
        mapping = np.cumsum(present, dtype=np.int32 if span < 2**31 else np.int64)
        mapping -= 1
        node_ids = np.flatnonzero(present).astype(np.int64)
        node_ids += lo
        del present
        for i in range(2):
            cols[i] = mapping[cols[i]]
        return node_ids, True
    ids = np.concatenate(cols).astype(np.int64, copy=False)
    ids.sort()
    first = np.empty(ids.size, dtype=bool)
    first[:1] = True
    np.not_equal(ids[1:], ids[:-1], out=first[1:])
    node_ids = ids[first]
    del ids, first
    narrow = node_ids.size < 2**31
    for i in range(2):
        pos = np.searchsorted(node_ids, cols[i])
        cols[i] = pos.astype(np.int32) if narrow else pos
        del pos
    return node_ids, True


def _build_graph(
    u: NDArray[np.integer],
    v: NDArray[np.integer],
    n: int,
    node_ids: NDArray[Any],
    *,
    source: str,
    relabelled: bool,
    lines_total: int | None = None,
    source_directed: bool | None = None,
    notes: tuple[str, ...] = (),
    edges_read: int | None = None,
) -> Graph:
    """Symmetrise, drop self-loops and duplicates, and build the CSR graph (see :func:`_build_owned`).

    ``u`` and ``v`` hold node indices in ``[0, n)`` (checked by the caller).
    """
    return _build_owned(
        [u, v],
        n,
        node_ids,
        source=source,
        relabelled=relabelled,
        lines_total=lines_total,
        source_directed=source_directed,
        notes=notes,
        edges_read=edges_read,
    )


def _build_owned(
    cols: list[NDArray[np.integer]],
    n: int,
    node_ids: NDArray[Any],
    *,
    source: str,
    relabelled: bool,
    lines_total: int | None = None,
    source_directed: bool | None = None,
    notes: tuple[str, ...] = (),
    edges_read: int | None = None,
) -> Graph:
    """Symmetrise, drop self-loops and duplicates, and build the CSR graph of ``cols = [u, v]``.

    ``u`` and ``v`` hold node indices in ``[0, n)`` (checked by the caller); ``cols`` is
    emptied, so that columns passed with their only references are freed once the build's
    first step has read them (before the output is allocated).

    Notes
    -----
    Kernels (each measured, see ``scripts/bench_graph_io.py``): the column of every edge
    ``{lo < hi}`` is stored as ``2 hi + d`` with ``d = 1`` when it was given as ``hi lo``, in
    int32 when ``n < 2**30`` (and ``2 m < 2**31``); a self-loop gets the column ``2 n``. Two
    stable counting sorts (by column, then by row; O(m + n) each, through scipy's public
    ``csr_array.tocsc``, see :func:`_counting_transpose`) sort the entries by ``(lo, hi, d)``
    with the self-loops last (cut off), so duplicates are removed by a neighbour comparison and
    an edge given in both directions is a group with a step ``2 hi -> 2 hi + 1``. The lower
    half of the symmetric CSR is the transpose (one more counting sort) and the two halves,
    disjoint and sorted in every row, are merged in one pass (:func:`_merge_rows`, numpy
    scatters). A counting sort over more than ``2**16`` keys runs in two passes, by the high
    bits of the key into at most 64 buckets, then every bucket by the low bits
    (:func:`_bucket_shift`): one pass over 10^6 counters scatters each entry to a random place
    of the whole output and took 2-3 times as long here. In int32, the upper half, the lower
    half and the merged rows are written inside the int64 output buffer, which is then widened
    in place (:func:`_widen_in_place`); scipy allocates the counting sorts' outputs. No general
    sort of the
    m keys is done (``np.sort`` of 10^7 uint64 keys alone costs more than all of the above).
    """
    m_read = int(cols[0].size)
    indptr, indices, n_loops, n_both = _simple_csr(cols, n)
    return _graph_of(indptr, indices, n_loops, n_both, m_read, node_ids, source=source,
                     relabelled=relabelled, lines_total=lines_total, source_directed=source_directed,
                     notes=notes, edges_read=edges_read)


def _graph_of(
    indptr: NDArray[np.int64],
    indices: NDArray[np.int64],
    n_loops: int,
    n_both: int,
    m_read: int,
    node_ids: NDArray[Any],
    *,
    source: str,
    relabelled: bool,
    lines_total: int | None = None,
    source_directed: bool | None = None,
    notes: tuple[str, ...] = (),
    edges_read: int | None = None,
) -> Graph:
    """The :class:`Graph` of a finished build of ``m_read`` edges, with its load report."""
    n = int(indptr.size - 1)
    n_unique = int(indices.size // 2)
    n_dup = m_read - n_loops - n_unique
    all_notes = list(notes)
    if source_directed:
        all_notes.append(
            f"directed input symmetrised: {m_read:,} directed edges -> {n_unique:,} undirected "
            f"edges ({n_both:,} given in both directions)"
        )
    elif n_both:
        all_notes.append(
            f"{n_both:,} edges are given in both directions (u v and v u): the input is read as "
            f"undirected, {m_read:,} edges in -> {n_unique:,} undirected edges"
        )
    report = LoadReport(
        source=source,
        edges_read=m_read if edges_read is None else edges_read,
        self_loops_dropped=n_loops,
        duplicates_dropped=n_dup,
        reverse_duplicates_dropped=n_both,
        edges_kept=n_unique,
        n_nodes=n,
        relabelled=relabelled,
        lines_read=lines_total,
        lines_skipped=None if lines_total is None else lines_total - m_read,
        source_directed=source_directed,
        notes=tuple(all_notes),
    )
    return Graph._trusted(indptr, indices, node_ids, report)


def _sorted_rows(
    rows: NDArray[np.integer],
    cols: NDArray[np.integer],
    n_rows: int,
    n_cols: int,
    *,
    sort: bool = True,
) -> tuple[NDArray[np.integer], NDArray[np.integer]]:
    """CSR ``(indptr, indices)`` of the entries, rows in order, columns sorted within each row.

    Duplicates are kept (side by side). A stable counting sort by row (:func:`_counting_transpose`
    of the one-row matrix whose columns are ``rows``, carrying ``cols``); with ``sort`` it is
    preceded by one by column (least significant first), so the columns of a row come out
    increasing. With ``sort=False`` the columns of a row keep their input order (sorted already
    when the entries come sorted by column). ``rows`` and ``cols`` must lie in ``[0, n_rows)``
    and ``[0, n_cols)``: checked, a ValueError otherwise.
    """
    itype = rows.dtype
    nnz = int(rows.size)
    one_row = np.array([0, nnz], dtype=itype)
    if not sort:
        ptr, _, ind = _counting_transpose(one_row, rows, cols, n_rows, itype)
        return ptr, ind
    _check_entries(cols, n_cols, "column")
    ptr_c, _, rows_c = _counting_transpose(one_row, cols, rows, n_cols, itype)
    ptr, ind = _transpose(ptr_c, rows_c, n_rows, itype)  # stable: columns increase in a row
    return ptr, ind


def _check_entries(ind: NDArray[np.integer], bound: int, what: str) -> None:
    """ValueError unless every value of ``ind`` lies in ``[0, bound)``."""
    if ind.size and (int(ind.min()) < 0 or int(ind.max()) >= bound):
        bad = ind[(ind < 0) | (ind >= bound)][0]
        raise ValueError(f"{what} index {int(bad)} is outside [0, {bound}): the input is not a valid "
                         f"matrix of {bound} {what}s")


def _counting_transpose(
    ptr: NDArray[np.integer],
    ind: NDArray[np.integer],
    data: NDArray[Any] | None,
    n_cols: int,
    itype: type,
) -> tuple[NDArray[np.integer], NDArray[np.integer], NDArray[Any] | None]:
    """CSC form ``(indptr, indices, data)`` of the CSR ``(ptr, ind, data)`` with ``n_cols`` columns.

    A stable counting sort by column, O(m + n): every column lists its rows in increasing order
    and ``data`` rides along (None: nothing carried, None returned). It goes through scipy's
    public ``csr_array.tocsc``, whose C kernel trusts its input; so the input is checked first
    (one-dimensional, lengths, ``ptr`` starting at 0, non-decreasing and ending at ``len(ind)``,
    every index in ``[0, n_cols)``) and a ValueError raised if anything is wrong. Index arrays
    are returned in ``itype``.
    """
    import scipy.sparse as sp  # deferred: slow to import

    ptr = np.asarray(ptr)
    ind = np.asarray(ind)
    m = int(ind.size)
    n_rows = int(ptr.size) - 1
    integer = ptr.dtype.kind in "iu" and ind.dtype.kind in "iu"
    if ptr.ndim != 1 or ind.ndim != 1 or n_rows < 0 or not integer:
        raise ValueError("a CSR form needs one-dimensional integer row pointers and indices")
    if int(ptr[0]) != 0 or int(ptr[-1]) != m:
        raise ValueError(f"CSR row pointers must run from 0 to the number of entries {m}, "
                         f"got {int(ptr[0])} to {int(ptr[-1])}")
    if n_rows > 1 and bool(np.any(ptr[1:] < ptr[:-1])):
        raise ValueError("CSR row pointers must be non-decreasing")
    _check_entries(ind, n_cols, "column")
    carried = np.zeros(m, dtype=np.int8) if data is None else np.asarray(data)
    if carried.shape != (m,):
        raise ValueError(f"CSR data must have one value per entry ({m}), got shape {carried.shape}")
    t = sp.csr_array((carried, ind, ptr), shape=(n_rows, n_cols), copy=False).tocsc()
    out_data = None if data is None else t.data
    return t.indptr.astype(itype, copy=False), t.indices.astype(itype, copy=False), out_data


def _simple_csr(
    cols: list[NDArray[np.integer]],
    n: int,
    *,
    offset: int = 0,
    loop_nodes: list[NDArray[np.integer]] | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64], int, int]:
    """CSR ``(indptr, indices)`` of the simple undirected graph of the edges ``(u[i], v[i])``.

    ``cols = [u, v]`` is emptied: the columns are dropped once read (the first step); the
    arrays themselves are not modified. The nodes are ``u - offset`` and ``v - offset``, in
    ``[0, n)`` (``u`` and ``v`` must fit int32 when ``n < 2**30`` and ``offset`` is not 0);
    ``loop_nodes``, if given, receives the nodes of the self-loops (one array, repeats kept).

    Returns the CSR arrays (int64), the number of self-loops dropped and the number of
    undirected edges given in both directions. See :func:`_build_owned` for the kernels.
    """
    u, v = cols
    cols.clear()
    m = int(u.size)
    if _numpy_build(m, n):
        return _simple_csr_sorted(u, v, n, offset=offset, loop_nodes=loop_nodes)
    # 2 n (the sentinel of the self-loops) and 2 m (the merged row pointers) fit the index type
    narrow = n < _INT32_NODES and 2 * m < 2**31
    itype = np.int32 if narrow else np.int64
    lo = np.empty(m, dtype=itype)
    col = np.empty(m, dtype=itype)
    loops = np.empty(m, dtype=bool)
    _in_halves(partial(_edge_keys, u, v, offset, lo, col, loops), m)
    del u, v
    n_loops = int(np.count_nonzero(loops))
    if n_loops and loop_nodes is not None:
        loop_nodes.append(lo[loops])
    if n_loops:  # self-loops get the column 2 n: sorted last, then cut off
        np.copyto(col, 2 * n, where=loops)
    del loops
    pair = [col, lo]
    del col, lo
    # two stable counting sorts (LSD): by column 2 hi + d, then by row lo
    ptr_c, rows_c = _sort_by_key(pair, 2 * n + (1 if n_loops else 0), itype)
    ptr, ind = _transpose(ptr_c[: 2 * n + 1], rows_c, n, itype)  # ptr_c[2 n] = m - n_loops
    del ptr_c, rows_c
    # duplicates: equal neighbours 2 hi + d >> 1 inside a row, directions in order (0 then 1)
    dropped = _repeats(ptr, ind >> 1)
    # one 0 -> 1 step of the direction bit inside a group iff it was given both ways
    n_both = int(np.count_nonzero((ind[dropped - 1] & 1 == 0) & (ind[dropped] & 1 == 1)))
    ind >>= 1
    mu = int(ind.size - dropped.size)
    if narrow:  # the halves and the merged int32 CSR live in the int64 output buffer
        buf = np.empty(2 * mu, dtype=np.int64)
        slots = buf.view(np.int32)
        upper, lower, merged = slots[:mu], slots[mu : 2 * mu], slots[2 * mu :]
        work = (lower, slots[2 * mu : 3 * mu], slots[3 * mu :])  # the transpose's scratch
    else:
        upper, lower, merged, work = np.empty(mu, dtype=itype), None, None, None
    ptr = _drop_entries_into(ptr, ind, dropped, upper)
    del ind, dropped
    # lower half = transpose (counting sorts), then both halves merged row by row
    ptr_l, lower = _transpose(ptr, upper, n, itype, out=lower, work=work)
    del work
    indptr, indices = _merge_rows(ptr_l, lower, ptr, upper, n, out=merged)
    del ptr_l, lower, ptr, upper, merged
    if narrow:
        indices = _widen_in_place(buf)
    return indptr.astype(np.int64, copy=False), indices.astype(np.int64, copy=False), n_loops, n_both


def _edge_keys(
    u: NDArray[np.integer], v: NDArray[np.integer], offset: int,
    lo: NDArray[np.integer], col: NDArray[np.integer], loops: NDArray[np.bool_], a: int, b: int,
) -> None:
    """Entries ``a..b-1`` of the build's keys: ``lo = min - offset``, ``col = 2 (max - offset) +
    [u > v]`` and ``loops = [u == v]`` (numpy's ufuncs release the GIL: two threads can share it)."""
    uu, vv, low, high = u[a:b], v[a:b], lo[a:b], col[a:b]
    np.minimum(uu, vv, out=low, casting="unsafe")  # values < n fit the index type
    np.maximum(uu, vv, out=high, casting="unsafe")
    if offset:
        low -= offset
        high -= offset
    high <<= 1
    high |= np.greater(uu, vv)
    np.equal(uu, vv, out=loops[a:b])


def _numpy_build(m: int, n: int) -> bool:
    """Whether :func:`_simple_csr` builds ``m`` edges on ``n`` nodes by numpy sorts alone.

    The numpy build is about 6 times slower than the counting sorts (measured from 2**12 to
    2**22 edges) but needs no scipy.sparse, whose import costs about 0.1 s: below
    ``_SMALL_EDGES`` edges (where the difference is below that) it is used while
    scipy.sparse is not imported yet, e.g. for the Facebook graph at start-up.
    """
    return m < _SMALL_EDGES and n < 2**31 and "scipy.sparse" not in sys.modules


def _simple_csr_sorted(
    u: NDArray[np.integer],
    v: NDArray[np.integer],
    n: int,
    *,
    offset: int = 0,
    loop_nodes: list[NDArray[np.integer]] | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64], int, int]:
    """:func:`_simple_csr` by two numpy sorts of int64 keys, without scipy (small inputs).

    Every edge ``{lo < hi}`` given as ``(a, b)`` is the key ``2 (lo n + hi) + [a > b]`` (below
    ``2 n**2 < 2**63`` for ``n < 2**31``); after a sort, duplicates are the repeats of
    ``key >> 1`` and an edge given both ways a step of the direction bit from 0 to 1 inside a
    group, as in the counting-sort build. The symmetric CSR is one more sort of the kept
    ``lo n + hi`` with their reverses ``hi n + lo``. Same arrays and counts as
    :func:`_simple_csr`, which imports scipy.sparse (about 0.1 s) and wins from about
    ``_SMALL_EDGES`` edges on.
    """
    lo = np.minimum(u, v).astype(np.int64)
    hi = np.maximum(u, v).astype(np.int64)
    lo -= offset
    hi -= offset
    loops = np.equal(u, v)
    n_loops = int(np.count_nonzero(loops))
    if n_loops and loop_nodes is not None:
        loop_nodes.append(lo[loops])
    key = lo * n
    key += hi
    key <<= 1
    key |= np.greater(u, v)
    del lo, hi
    if n_loops:
        key = key[~loops]
    del loops
    key.sort()
    pair = key >> 1
    repeat = np.equal(pair[1:], pair[:-1])
    n_both = int(np.count_nonzero(repeat & (key[:-1] & 1 == 0) & (key[1:] & 1 == 1)))
    del key
    first = np.ones(pair.size, dtype=bool)
    first[1:] = ~repeat
    pair = pair[first]
    del repeat, first
    row, col = np.divmod(pair, n) if n else (pair, pair)
    both = np.concatenate((pair, col * n + row))
    del pair, row, col
    both.sort()
    rows, indices = np.divmod(both, n) if n else (both, both)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return indptr, indices, n_loops, n_both


def _bucket_shift(n_keys: int) -> int | None:
    """Bits of a key below its bucket in a two-pass counting sort, or None for one pass.

    Up to ``_SORT_DIRECT`` keys one counting sort's counters stay in cache. Above, the keys'
    high bits (at most ``2**_SORT_BUCKET_BITS`` buckets) are sorted first and every bucket then
    by its low bits: two passes that each write to few places at a time, where one pass over
    ``n_keys`` counters scatters every entry to a random place of the whole output.
    """
    if n_keys <= _SORT_DIRECT:
        return None
    return max(int(n_keys - 1).bit_length() - _SORT_BUCKET_BITS, 0)


def _sort_by_key(
    pair: list[NDArray[np.integer]],
    n_keys: int,
    itype: type,
) -> tuple[NDArray[np.integer], NDArray[np.integer]]:
    """Stable counting sort of ``values`` by ``keys`` in ``[0, n_keys)``, ``pair = [keys, values]``.

    Returns ``(ptr, out)``: ``out[ptr[k]:ptr[k + 1]]`` are the values of key ``k`` in input
    order. ``pair`` is emptied (its arrays freed after the first pass if it held the only
    references); both arrays have the index type ``itype``. The values must be non-negative.
    In two passes (:func:`_bucket_shift`) when the keys and values fit int32: the first carries
    each key with its value packed in one int64 (key in the high half).
    """
    keys, values = pair
    pair.clear()
    m = int(keys.size)
    one_row = np.array([0, m], dtype=itype)
    shift = _bucket_shift(n_keys)
    if shift is None or m == 0 or np.dtype(itype) != np.int32:
        ptr, _, out = _counting_transpose(one_row, keys, values, n_keys, itype)
        return ptr, out.astype(itype, copy=False)
    _check_entries(keys, n_keys, "key")
    n_buckets = ((n_keys - 1) >> shift) + 1
    packed = keys.astype(np.int64)
    packed <<= 32
    packed |= values.astype(np.int64, copy=False)
    high = np.right_shift(keys, shift)
    del keys, values
    ptr1, _, packed1 = _counting_transpose(one_row, high, packed, n_buckets, itype)
    del high, packed
    keys1 = (packed1 >> 32).astype(itype)
    values1 = packed1.astype(itype)  # the low half (values < 2**31)
    del packed1
    ptr = np.empty(n_keys + 1, dtype=itype)
    out = np.empty(m, dtype=itype)
    _sort_buckets(ptr1, keys1, values1, shift, n_keys, ptr, out)
    return ptr, out


def _transpose(
    ptr: NDArray[np.integer],
    ind: NDArray[np.integer],
    n_cols: int,
    itype: type,
    *,
    out: NDArray[np.integer] | None = None,
    work: tuple[NDArray[np.integer], ...] | None = None,
) -> tuple[NDArray[np.integer], NDArray[np.integer]]:
    """CSR of the transpose of the CSR ``(ptr, ind)`` (``ptr[-1]`` entries, columns below ``n_cols``).

    The rows of the output list their columns (the input's rows) in increasing order: a stable
    counting sort by column (:func:`_counting_transpose`, input checked), in two passes for many
    columns (see :func:`_bucket_shift`). ``out`` receives the indices; ``work``'s first array,
    of the entry count, serves as the scratch of the first pass (it may be ``out``: it is free
    before ``out`` is written).
    """
    m = int(ptr[-1])
    ind = ind[:m]
    shift = _bucket_shift(n_cols)
    if shift is None or m == 0:
        ptr_t, ind_t, _ = _counting_transpose(ptr, ind, None, n_cols, itype)
        if out is None:
            return ptr_t, ind_t
        out[...] = ind_t
        return ptr_t, out
    _check_entries(ind, n_cols, "column")
    n_buckets = ((n_cols - 1) >> shift) + 1
    high = work[0] if work is not None else np.empty(m, dtype=itype)
    np.right_shift(ind, shift, out=high)
    ptr1, rows1, cols1 = _counting_transpose(ptr, high, ind, n_buckets, itype)  # columns ride as data
    del high
    cols1 = cols1.astype(itype, copy=False)
    ptr_t = np.empty(n_cols + 1, dtype=itype)
    out = np.empty(m, dtype=itype) if out is None else out
    _sort_buckets(ptr1, cols1, rows1, shift, n_cols, ptr_t, out)
    return ptr_t, out


def _sort_buckets(
    ptr1: NDArray[np.integer],
    keys: NDArray[np.integer],
    values: NDArray[np.integer],
    shift: int,
    n_keys: int,
    ptr: NDArray[np.integer],
    out: NDArray[np.integer],
) -> None:
    """Second pass: sort each bucket ``ptr1[b]:ptr1[b + 1]`` stably by the keys' low ``shift`` bits.

    Writes the values into ``out`` and the row pointers of all ``n_keys`` keys into ``ptr``.
    """
    width = 1 << shift
    starts = ptr1.tolist()
    n_buckets = len(starts) - 1
    itype = ptr.dtype.type

    def sort(first: int, stop: int) -> None:  # buckets first..stop-1, with their own scratch
        largest = max((starts[b + 1] - starts[b] for b in range(first, stop)), default=0)
        low = np.empty(largest, dtype=keys.dtype)
        for b in range(first, stop):
            s, e = starts[b], starts[b + 1]
            base = b << shift
            w = min(width, n_keys - base)
            c = e - s
            np.bitwise_and(keys[s:e], width - 1, out=low[:c])
            one_row = np.array([0, c], dtype=itype)
            local, _, vals = _counting_transpose(one_row, low[:c], values[s:e], w, itype)
            out[s:e] = vals
            np.add(local[:w], s, out=ptr[base : base + w])

    # The buckets write disjoint parts of out and ptr, and scipy's kernel releases the GIL: on
    # two cores, a thread sorts the buckets of the second half of the entries (1.9x measured).
    _in_halves(sort, n_buckets, starts[-1], ptr1)
    ptr[n_keys] = starts[-1]


def _in_halves(work: Any, n_parts: int, n_entries: int | None = None, starts: Any = None) -> None:
    """``work(0, n_parts)``, or ``work(0, h)`` and ``work(h, n_parts)`` in two threads.

    Two threads when the parts hold at least ``_PARALLEL_SORT`` entries (``n_entries``, by
    default ``n_parts``: one entry per part), there are two parts or more and two cores are
    usable; ``work`` must release the GIL and the two calls must write disjoint places. ``h``
    splits the entries in halves: part ``i`` starts at entry ``starts[i]`` (``n_parts + 1``
    values), by default at ``i``.
    """
    n_entries = n_parts if n_entries is None else n_entries
    if n_entries < _PARALLEL_SORT or n_parts < 2 or _usable_cores() < 2:
        work(0, n_parts)
        return
    h = n_parts // 2 if starts is None else int(np.searchsorted(starts, n_entries // 2))
    h = min(max(h, 1), n_parts - 1)
    _in_two_threads(lambda: work(0, h), lambda: work(h, n_parts))


def _in_two_threads(first: Any, second: Any) -> None:
    """Run ``second()`` in a new thread while this one runs ``first()``; re-raise an error of either."""
    import threading

    failed: list[BaseException] = []

    def run() -> None:
        try:
            second()
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
            failed.append(exc)

    helper = threading.Thread(target=run, name="ldpgraph-build", daemon=True)
    helper.start()
    try:
        first()
    finally:
        helper.join()
    if failed:
        raise failed[0]


def _drop_entries_into(
    ptr: NDArray[np.integer],
    ind: NDArray[np.integer],
    dropped: NDArray[np.intp],
    out: NDArray[np.integer],
) -> NDArray[np.integer]:
    """:func:`_drop_entries` writing the kept entries into ``out``; returns the new row pointers."""
    if not dropped.size:
        out[...] = ind
        return ptr
    keep = np.ones(ind.size, dtype=bool)
    keep[dropped] = False
    pos = 0
    for s in range(0, ind.size, _MAP_CHUNK):  # a chunk at a time: np.compress makes an index array
        part = ind[s : s + _MAP_CHUNK][keep[s : s + _MAP_CHUNK]]
        out[pos : pos + part.size] = part
        pos += part.size
    return ptr - np.searchsorted(dropped, ptr).astype(ptr.dtype, copy=False)


def _repeats(ptr: NDArray[np.integer], ind: NDArray[np.integer]) -> NDArray[np.intp]:
    """Sorted positions of the CSR entries equal to the entry before them in the same row."""
    same = np.equal(ind[1:], ind[:-1])
    starts = ptr[1:-1]
    starts = starts[(starts > 0) & (starts < ind.size)]
    same[starts - 1] = False  # a row's first entry never continues the previous row
    dropped = np.flatnonzero(same)
    dropped += 1
    return dropped


def _drop_entries(
    ptr: NDArray[np.integer], ind: NDArray[np.integer], dropped: NDArray[np.intp]
) -> tuple[NDArray[np.integer], NDArray[np.integer]]:
    """CSR without the entries at the sorted positions ``dropped`` (the inputs when none)."""
    if not dropped.size:
        return ptr, ind
    out = np.empty(ind.size - dropped.size, dtype=ind.dtype)
    return _drop_entries_into(ptr, ind, dropped, out), out


def _merge_rows(
    ptr_l: NDArray[np.integer],
    lower: NDArray[np.integer],
    ptr_u: NDArray[np.integer],
    upper: NDArray[np.integer],
    n: int,
    *,
    out: NDArray[np.integer] | None = None,
) -> tuple[NDArray[np.integer], NDArray[np.integer]]:
    """CSR whose row ``r`` is row ``r`` of ``lower`` followed by row ``r`` of ``upper``.

    For the two halves of a symmetric pattern (every column of ``lower`` below every column of
    ``upper`` in the same row) the rows come out sorted. Two numpy scatters: the entry at
    position ``p`` of ``lower``, in row ``r``, goes to ``p + ptr_u[r]``; the entry at position
    ``p`` of ``upper``, in row ``r``, to ``p + ptr_l[r + 1]``. In the index type of the inputs
    (kept in the output); ``out``, if given, receives the indices (contiguous, the index type,
    the size of both).
    """
    itype = ptr_l.dtype
    if ptr_l.shape != (n + 1,) or ptr_u.shape != (n + 1,):
        raise ValueError(f"row pointers must have {n + 1} values")
    if int(ptr_l[-1]) != lower.size or int(ptr_u[-1]) != upper.size:
        raise ValueError("row pointers must end at the number of entries")
    indptr = np.add(ptr_l, ptr_u, dtype=itype)
    indices = np.empty(lower.size + upper.size, dtype=itype) if out is None else out
    for half, ptr, shift in ((lower, ptr_l, ptr_u[:-1]), (upper, ptr_u, ptr_l[1:])):
        pos = np.arange(half.size, dtype=itype)
        pos += np.repeat(shift.astype(itype, copy=False), np.diff(ptr))
        indices[pos] = half
        del pos
    return indptr, indices


def _widen_in_place(buf: NDArray[np.int64]) -> NDArray[np.int64]:
    """Widen the int32 values held in the second half of ``buf``'s bytes to int64 over ``buf``.

    With ``k = buf.size``, ``buf.view(np.int32)[k:]`` holds k int32 values; afterwards
    ``buf[i]`` is value ``i``. Element ``i`` is written over bytes ``[8 i, 8 i + 8)`` and read
    from byte ``4 k + 4 i``, so a chunk ``[a, b)`` with ``b <= k / 2 + a / 2`` writes only
    bytes of values already read; the chunks halve the rest each time (about log2 k of them),
    and numpy copies the last one or two overlapping values through a temporary.
    """
    k = int(buf.size)
    src = buf.view(np.int32)[k:]
    a = 0
    while a < k:
        b = max(min(k, (k + a) // 2), a + 1)  # b <= (k + a) / 2, at least one value
        np.copyto(buf[a:b], src[a:b])
        a = b
    return buf


# ---------------------------------------------------------------------------------------------
# validation helpers


def _int_array(x: ArrayLike, name: str, ndim: int = 1) -> NDArray[np.int64]:
    arr = np.asarray(x)
    # an empty array holds no ids whatever its dtype ([] gives float64), except that booleans and
    # complex numbers (cast with a ComplexWarning) are refused even when empty
    if arr.dtype.kind in "bc" or (arr.dtype.kind not in "iu" and arr.size > 0):
        raise TypeError(f"{name} must be an array of integers, got dtype {arr.dtype}")
    if arr.size == 0 and ndim == 2 and arr.ndim == 1:
        arr = arr.reshape(0, 2)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    if arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name} has values above 2**63 - 1, which do not fit int64")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _check_csr(ptr: NDArray[np.int64], idx: NDArray[np.int64]) -> None:
    if ptr.size == 0 or ptr[0] != 0:
        raise ValueError("indptr must be non-empty and start at 0")
    if ptr[-1] != idx.size:
        raise ValueError(f"indptr[-1] = {ptr[-1]} must equal len(indices) = {idx.size}")
    deg = np.diff(ptr)
    if (deg < 0).any():
        raise ValueError("indptr must be non-decreasing")
    n = ptr.size - 1
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"indices must lie in [0, {n})")
    rows = np.repeat(np.arange(n, dtype=np.int64), deg)
    if (rows == idx).any():
        raise ValueError("the graph must have no self-loops")
    same_row = rows[1:] == rows[:-1]
    if (idx[1:][same_row] <= idx[:-1][same_row]).any():
        raise ValueError("neighbour lists must be strictly increasing within each row")
    forward = rows * n + idx
    backward = np.sort(idx * n + rows)
    if not np.array_equal(forward, backward):
        raise ValueError("the adjacency must be symmetric (each edge stored in both rows)")


def _check_node_ids(node_ids: ArrayLike | None, n: int) -> NDArray[Any]:
    if node_ids is None:
        return np.arange(n, dtype=np.int64)
    ids = np.asarray(node_ids)
    if ids.shape != (n,):
        raise ValueError(f"node_ids must have shape ({n},), got {ids.shape}")
    return ids.copy()
