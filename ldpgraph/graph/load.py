"""One entry point for every graph input: :func:`load_graph`."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ldpgraph.graph.convert import from_igraph, from_networkx, from_scipy_sparse
from ldpgraph.graph.core import Graph, from_edge_array
from ldpgraph.graph.edgelist import read_edgelist

__all__ = ["load_graph"]


def load_graph(source: Any, *, n_nodes: int | None = None) -> Graph:
    """Load a graph from a file, a networkx or igraph graph, or an integer edge array.

    Whatever the input, the result is a simple undirected :class:`~ldpgraph.graph.Graph`:
    directed input is symmetrised, self-loops and duplicate edges are dropped, node ids are
    relabelled to ``0..n-1``, and ``graph.report`` says what was read and dropped.

    Parameters
    ----------
    source : str, os.PathLike, networkx graph, igraph.Graph, Graph or array_like
        - path: a SNAP-style edge list, plain or gzip (see :func:`read_edgelist`);
        - networkx graph (any of the four classes): see :func:`from_networkx`;
        - ``igraph.Graph``: see :func:`from_igraph`;
        - a :class:`Graph`: returned as it is;
        - an ``(m, 2)`` integer array: see :func:`from_edge_array`.
    n_nodes : int, optional
        Only for edge arrays: the number of nodes, ids then being used as node indices.

    Returns
    -------
    Graph

    Examples
    --------
    >>> import numpy as np
    >>> load_graph(np.array([[0, 1], [1, 2]])).degrees.tolist()
    [1, 2, 1]
    """
    if isinstance(source, Graph):
        kind = "Graph"
    elif isinstance(source, (str, os.PathLike)):
        kind = "path"
    elif type(source).__module__.split(".")[0] == "networkx":
        kind = "networkx"
    elif type(source).__module__.split(".")[0] == "igraph":
        kind = "igraph"
    elif type(source).__module__.split(".")[0] == "scipy" and _is_sparse(source):
        kind = "scipy.sparse"
    elif isinstance(source, (np.ndarray, list, tuple)):
        kind = "array"
    else:
        raise TypeError(
            "source must be a path, a networkx or igraph graph, a Graph or an (m, 2) edge "
            f"array, got {type(source).__name__}"
        )
    if n_nodes is not None and kind != "array":
        raise ValueError(f"n_nodes applies to edge arrays only, got a {kind} source")
    if kind == "Graph":
        return source
    if kind == "path":
        return read_edgelist(source)
    if kind == "networkx":
        return from_networkx(source)
    if kind == "igraph":
        return from_igraph(source)
    if kind == "scipy.sparse":
        return from_scipy_sparse(source)
    return from_edge_array(source, n_nodes=n_nodes)


def _is_sparse(x: Any) -> bool:
    import scipy.sparse as sp

    return bool(sp.issparse(x))
